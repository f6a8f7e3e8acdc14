"""PTX ops outside the instruction table: inline PTX (``T.ptx.asm``), the remote mbarrier
arrive (two instructions), and the CPU semantics the table's value rows share (``mapa``,
``elect_sync``).

The instruction table's opcodes (``T.ptx.fence``, ``T.ptx.mbarrier``, ...) are declared in
tirx/ops/ptx_rows.py, with the named forms kernels used before the table
(``T.ptx.mbarrier_init``, ``T.ptx.fence_proxy_async``, ...) as aliases of its rows. An op
declared with ``cuda=PTX(template)`` needs no backend code: the one inline-asm emitter
(tirx/codegen/asm.py) fills the template; its language is documented there.
"""

from __future__ import annotations

from typing import Any

from ..ir.op import PTX, NoInterp, declare
from ..ir.types import PointerType, uint64, void

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
    from tirx.ops.semantics import BLOCK, InterpError, PtrVal, need_launch

    name = call.op.name
    fp, fr = fc.expr(call.args[0]), fc.expr(call.args[1])

    def ev(c):
        need_launch(c, name)
        p, r = fp(c), fr(c)
        if not isinstance(p, PtrVal) or p.mem.per != BLOCK:
            raise InterpError(f"T.{name} takes a pointer into shared memory (e.g. buf.ptr_to([0]))")
        return PtrVal(p.mem, p.off, r)

    return ev


# T.ptx.mapa(p, rank) (the pointer-typed form) is the bare row of the mapa opcode of the PTX
# instruction table (tirx/ops/ptx_rows.py), next to TIRx's mapa.shared::cluster.u64 forms;
# T.ptx.map_shared_rank and T.ptx.cvta_to_shared are aliases declared there.


# --------------------------------------------------------------------------- template ops
def _i_elect_sync(fc: Any, call: Any):
    """The lowest active lane of each warp is elected."""
    import numpy as np

    from tirx.ops.semantics import need_launch

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
    "ptx.mbarrier_arrive_cluster", "i i", void,
    "{{ .reg .b32 a; mapa.shared::cluster.u32 a, {0}, {1}; mbarrier.arrive.shared::cluster.b64 _, [a]; }}",
    "arrive on the mbarrier at the same shared address (u32) in CTA `rank` of the cluster",
)  # fmt: skip
# the named forms kernels used before the PTX table (T.ptx.mbarrier_init, T.ptx.fence_proxy_async,
# T.ptx.setmaxnreg_inc, ...) are aliases of its rows (tirx/ops/ptx_rows.py); arrive_cluster is two
# instructions (mapa + a remote arrive), not a form of one.
# T.ptx.elect_sync() is the bare row of the elect_sync opcode (tirx/ops/ptx_rows.py)
