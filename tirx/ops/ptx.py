"""PTX ops: inline PTX (``T.ptx.asm``), cluster shared-memory addressing, mbarriers,
fences, elect and register-allocation hints, as one named op per variant (the names
kernels used before the PTX instruction table; their templates are unchanged). The
instruction table's opcodes (``T.ptx.fence``, ``T.ptx.mbarrier``, ...) are declared in
tirx/ops/ptx_rows.py; this module holds the CPU semantics both share.

An op declared with ``cuda=PTX(template)`` needs no backend code: the one inline-asm
emitter (tirx/codegen/asm.py) fills the template; its language is documented there.
"""

from __future__ import annotations

from typing import Any

from ..ir.op import PTX, CExpr, NoInterp, declare
from ..ir.types import PointerType, bool_, uint32, uint64, void
from .cuda import _i_in_launch

__all__: list[str] = []

_NO_CPU_PTX = NoInterp("inline PTX (TMA, wgmma, mbarriers, ...) has no CPU meaning")

declare(
    "ptx.asm",
    "s *x?",
    "ty",
    pure=False,
    device_only=True,
    doc="generic inline PTX: template string then operands; any new instruction needs no new op",
    cuda=PTX(None),
    interp=_NO_CPU_PTX,
)


# --------------------------------------------------------------------------- cluster shared memory
def _mapped_ptr(args):
    t = args[0].ty
    return t if isinstance(t, PointerType) else uint64


def _c_mapa(as_pointer: bool):
    def lower(cg: Any, c: Any) -> str:
        x, rank = c.args
        xs = f"(uint64_t){cg.wrap(x, 15)}"  # a generic address, from a pointer or a raw uint64
        stmt = (
            f'asm volatile("mapa.u64 %0, %1, %2;" : "=l"(tirx_r) : "l"({xs}), '
            f'"r"((unsigned){cg.wrap(rank, 15)}))'
        )
        conv = f"({cg.ctype(c.ty)})tirx_r" if as_pointer and isinstance(c.ty, PointerType) else "tirx_r"
        return f"[&]() {{ uint64_t tirx_r; {stmt}; return {conv}; }}()"

    return lower


def _i_mapa(fc: Any, call: Any):
    from ..interp.semantics import BLOCK, InterpError, PtrVal, need_launch

    name = call.op.name
    fp, fr = fc.expr(call.args[0]), fc.expr(call.args[1])

    def ev(c):
        need_launch(c, name)
        p, r = fp(c), fr(c)
        if not isinstance(p, PtrVal) or p.mem.per != BLOCK:
            raise InterpError(f"T.{name} takes a pointer into shared memory (e.g. buf.ptr_to([0]))")
        return PtrVal(p.mem, p.off, r)

    return ev


declare(
    "ptx.map_shared_rank", "x i", uint64, pure=True, device_only=True,
    doc="mapa: the address of the same shared location in CTA `rank` of the cluster (raw uint64)",
    cuda=_c_mapa(False), interp=_i_mapa,
)  # fmt: skip
# T.ptx.mapa(p, rank) (the pointer-typed form) is the bare row of the mapa opcode of the PTX
# instruction table (tirx/ops/ptx_rows.py), next to TIRx's mapa.shared::cluster.u64 forms
declare(
    "ptx.cvta_to_shared", "p", uint32, device_only=True, doc="32-bit shared-window address of a pointer",
    cuda=CExpr("((unsigned)__cvta_generic_to_shared({0}))"),
    interp=NoInterp("raw shared-window addresses are not modelled"),
)  # fmt: skip


# --------------------------------------------------------------------------- template ops
def _i_elect_sync(fc: Any, call: Any):
    """The lowest active lane of each warp is elected."""
    import numpy as np

    from ..interp.semantics import need_launch

    name = call.op.name

    def ev(c):
        L = need_launch(c, name)
        lane = L.get("tid") % 32
        first = np.full(c.N, False)
        act = np.flatnonzero(c.mask)
        if act.size:
            warp = (L.get("lane") - lane)[act]
            keep = np.ones(act.size, dtype=bool)
            keep[1:] = warp[1:] != warp[:-1]
            first[act[keep]] = True
        return first

    return ev


def _ptx(name: str, args: str, result, template: str, doc: str, interp: Any = None) -> None:
    declare(name, args, result, pure=False, device_only=True, doc=doc, cuda=PTX(template), interp=interp)


_ptx(
    "ptx.mbarrier_init", "p i", void, "mbarrier.init.shared::cta.b64 [{0:smem}], {1};",
    "init an mbarrier with an arrival count",
)  # fmt: skip
_ptx(
    "ptx.mbarrier_arrive", "p", uint64, "mbarrier.arrive.shared::cta.b64 {out}, [{0:smem}];",
    "arrive; returns the state",
)  # fmt: skip
_ptx(
    "ptx.mbarrier_arrive_expect_tx", "p i", uint64,
    "mbarrier.arrive.expect_tx.shared::cta.b64 {out}, [{0:smem}], {1};", "arrive and expect tx bytes",
)  # fmt: skip
_ptx(
    "ptx.mbarrier_expect_tx", "p i", void, "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{0:smem}], {1};",
    "expect tx bytes",
)  # fmt: skip
_ptx(
    "ptx.mbarrier_try_wait_parity", "p i", bool_,
    "{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [{0:smem}], {1}; selp.u32 {out}, 1, 0, p; }}",
    "try to wait for the phase with the given parity; true when it completed",
)  # fmt: skip
_ptx(
    "ptx.mbarrier_try_wait_parity_u32", "i i", bool_,
    "{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [{0}], {1}; selp.u32 {out}, 1, 0, p; }}",
    "try_wait.parity on an mbarrier given by its 32-bit shared address",
)  # fmt: skip
_ptx(
    "ptx.mbarrier_arrive_cluster", "i i", void,
    "{{ .reg .b32 a; mapa.shared::cluster.u32 a, {0}, {1}; mbarrier.arrive.shared::cluster.b64 _, [a]; }}",
    "arrive on the mbarrier at the same shared address (u32) in CTA `rank` of the cluster",
)  # fmt: skip
_ptx(
    "ptx.fence_proxy_async", "", void, "fence.proxy.async.shared::cta;",
    "order generic-proxy smem writes before async-proxy reads", _i_in_launch,
)  # fmt: skip
_ptx(
    "ptx.fence_mbarrier_init", "", void, "fence.mbarrier_init.release.cluster;",
    "make mbarrier inits visible to the cluster", _i_in_launch,
)  # fmt: skip
_ptx(
    "ptx.setmaxnreg_inc", "n", void, "setmaxnreg.inc.sync.aligned.u32 {0:imm};",
    "raise the warpgroup's register cap", _i_in_launch,
)  # fmt: skip
_ptx(
    "ptx.setmaxnreg_dec", "n", void, "setmaxnreg.dec.sync.aligned.u32 {0:imm};",
    "lower the warpgroup's register cap", _i_in_launch,
)  # fmt: skip
# T.ptx.elect_sync() is the bare row of the elect_sync opcode (tirx/ops/ptx_rows.py)
