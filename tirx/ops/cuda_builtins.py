"""CUDA device builtins under TIRx's names (``T.cuda.*``): warpgroup and linear thread
indices, votes and block-wide predicates, bit casts, ``ffs``, timing and sleeping (``T.cuda.thread_fence`` is in ``cuda.py``).

Result types follow what TIRx builds (``T.cuda.syncthreads_and`` is int64,
``T.cuda.ballot_sync`` uint32, ``T.cuda.clock64`` uint64), so its printed text loads to the
same IR.
"""

from __future__ import annotations

from typing import Any

from ..errors import OpError
from ..ir.expr import StringImm
from ..ir.op import PTX, CExpr, Helper, NoInterp, declare
from ..ir.types import PrimType, float32, int32, int64, prim, uint32, uint64, void
from .cuda import CLUSTER, _i_cta_rank, _i_in_launch, block_threads, linear_tid, warp_index
from .ptx import _i_elect_sync

__all__: list[str] = []


# --------------------------------------------------------------------------- thread indices
def _i_tid(fn):
    """Interpreter value from the linear thread index in the block (``tid``)."""

    def compile_call(fc: Any, call: Any):
        import numpy as np

        from tirx.ops.semantics import need_launch

        name = call.op.name
        return lambda c: fn(need_launch(c, name).get("tid").astype(np.int32)).astype(np.int32)

    return compile_call


for _n, _c, _fn, _rng, _d in (
    ("cuda.warpgroup_id", lambda cg, c: f"({warp_index(cg)} >> 2)", lambda t: t // 128,
     lambda ax, dim: (0, (block_threads(dim) - 1) >> 7), "warpgroup index in the block (warp-uniform)"),
    ("cuda.warp_in_warpgroup", lambda cg, c: f"({warp_index(cg)} & 3)", lambda t: (t // 32) % 4, (0, 3),
     "warp index within its warpgroup (warp-uniform)"),
    ("cuda.thread_in_warpgroup", lambda cg, c: f"({linear_tid(cg)} & 127)", lambda t: t % 128, (0, 127),
     "thread index within its warpgroup of 128"),
    ("cuda.linear_thread_id", lambda cg, c: linear_tid(cg), lambda t: t, lambda ax, dim: (0, block_threads(dim) - 1),
     "x + y * blockDim.x + z * blockDim.x * blockDim.y"),
    ("cuda.thread_rank", lambda cg, c: linear_tid(cg), lambda t: t, lambda ax, dim: (0, block_threads(dim) - 1),
     "the thread's rank in its block (cooperative groups' thread_rank)"),
):  # fmt: skip
    declare(_n, "", int32, device_only=True, doc=_d, nonneg=True, range=_rng, cuda=_c, interp=_i_tid(_fn))


# --------------------------------------------------------------------------- votes
def _warp_masks(c: Any, name: str, fm: Any) -> tuple:
    """(lane in the warp, warp index, 32-bit mask) of each thread of a ``*_sync`` call; a
    mask that leaves out the calling lane is an error (undefined in CUDA, an illegal
    instruction on an H200)."""
    import numpy as np

    from tirx.ops.semantics import InterpError, full, need_launch

    L = need_launch(c, name)
    lane = (L.get("tid") % 32).astype(np.int64)
    warp = L.get("warp")
    m = full(fm(c), c.N).astype(np.uint64) & np.uint64(0xFFFFFFFF)
    outside = c.mask & (((m >> lane.astype(np.uint64)) & np.uint64(1)) == 0)
    if outside.any():
        k = int(np.flatnonzero(outside)[0])
        raise InterpError(f"T.{name}: the mask of {c.describe(k)} does not include its own lane")
    return lane, warp, m


def _i_vote(kind: str):
    """``ballot_sync`` / ``any_sync`` over the lanes of each warp named by the mask."""

    def compile_call(fc: Any, call: Any):
        import numpy as np

        from tirx.ops.semantics import full

        name = call.op.name
        fm, fp = fc.expr(call.args[0]), fc.expr(call.args[1])

        def ev(c):
            lane, warp, m = _warp_masks(c, name, fm)
            lane = lane.astype(np.uint64)
            p = full(fp(c), c.N).astype(bool) & (((m >> lane) & 1) == 1) & c.mask
            bits = np.where(p, np.uint64(1) << lane, np.uint64(0))
            acc = np.zeros(int(warp.max()) + 1 if warp.size else 1, dtype=np.uint64)
            np.bitwise_or.at(acc, warp, bits)
            r = acc[warp]
            if kind == "ballot":
                return r.astype(np.uint32)
            return (r != 0).astype(np.int32)

        return ev

    return compile_call


declare(
    "cuda.ballot_sync", "i i", uint32, pure=False, device_only=True, convergent=True, params="mask pred",
    doc="bit i set when lane i of the mask has a true (nonzero) predicate (__ballot_sync; TIRx: int pred)",
    cuda=CExpr("__ballot_sync((unsigned){0:p}, {1})"), interp=_i_vote("ballot"),
)  # fmt: skip
declare(
    "cuda.any_sync", "i i", int32, pure=False, device_only=True, convergent=True, params="mask pred",
    doc="nonzero when any lane of the mask has a true predicate (__any_sync)",
    cuda=CExpr("__any_sync((unsigned){0:p}, {1})"), interp=_i_vote("any"),
)  # fmt: skip


def _i_sync_pred(kind: str):
    """``__syncthreads_and/or``: a block barrier, then the predicate reduced over the block."""

    def compile_call(fc: Any, call: Any):
        import numpy as np

        from tirx.ops.semantics import block_barrier, full, need_launch

        name = call.op.name
        fp = fc.expr(call.args[0])

        def ev(c):
            block_barrier(c, f"T.{name}")
            L = need_launch(c, name)
            p = full(fp(c), c.N).astype(bool)
            bl = L.get("bl")
            act = c.mask
            hits = np.zeros(int(bl.max()) + 1 if bl.size else 1, dtype=bool)
            if kind == "and":
                np.logical_or.at(hits, bl[act], ~p[act])
                return (~hits[bl]).astype(np.int64)
            np.logical_or.at(hits, bl[act], p[act])
            return hits[bl].astype(np.int64)

        return ev

    return compile_call


for _k in ("and", "or"):
    declare(
        f"cuda.syncthreads_{_k}", "i", int64, pure=False, device_only=True, convergent=True, params="cond",
        doc=f"__syncthreads() and the {_k.upper()} of the predicate over the block's threads (a bool or an "
        "integer, nonzero is true, as TIRx takes it)",
        cuda=CExpr(f"((int64_t)__syncthreads_{_k}((int){{0:p}}))"), interp=_i_sync_pred(_k),
    )  # fmt: skip


# --------------------------------------------------------------------------- bits
def _i_bitcast(to: str):
    def compile_call(fc: Any, call: Any):
        import numpy as np

        src = call.args[0].ty
        want = "float32" if to == "uint32" else "uint32"
        if not (isinstance(src, PrimType) and src.base == want and src.lanes == 1):
            raise OpError(f"T.{call.op.name} takes a {want} scalar, got {src}")
        fa = fc.expr(call.args[0])
        sd, dd = np.dtype(want), np.dtype(to)
        return lambda c: np.ascontiguousarray(fa(c), dtype=sd).view(dd).copy()

    return compile_call


def _c_bitcast(fn: str, want: str):
    def lower(cg: Any, c: Any) -> str:
        t = c.args[0].ty
        if not (isinstance(t, PrimType) and t.base == want and t.lanes == 1):
            raise cg.error(f"T.{c.op.name} takes a {want} scalar, got {t}", c)
        return f"{fn}({cg.expr(c.args[0])})"

    return lower


declare(
    "cuda.float_as_uint", "f", uint32, doc="the bits of a float32 (__float_as_uint)", params="x",
    cuda=_c_bitcast("__float_as_uint", "float32"), interp=_i_bitcast("uint32"),
)  # fmt: skip
declare(
    "cuda.uint_as_float", "i", float32, doc="a float32 from its bits (__uint_as_float)", params="bits",
    cuda=_c_bitcast("__uint_as_float", "uint32"), interp=_i_bitcast("float32"),
)  # fmt: skip


def _i_ffs(fc: Any, call: Any):
    import numpy as np

    fa = fc.expr(call.args[0])

    def ev(c):
        x = np.asarray(fa(c)).astype(np.uint32)
        low = x & (~x + np.uint32(1))  # the lowest set bit
        pos = np.log2(np.maximum(low, 1).astype(np.float64)).astype(np.int32) + 1
        return np.where(x == 0, 0, pos).astype(np.int32)

    return ev


declare(
    "cuda.ffs_u32", "i", int32, doc="1 + the index of the lowest set bit of a uint32, 0 for 0 (__ffs)",
    params="value",
    nonneg=True, range=(0, 32), cuda=CExpr("__ffs((int)(unsigned){0:p})"), interp=_i_ffs,
)  # fmt: skip


# --------------------------------------------------------------------------- time
declare(
    "cuda.clock64", "", uint64, pure=False, device_only=True, doc="the SM's 64-bit cycle counter",
    cuda=CExpr("((uint64_t)clock64())"), interp=NoInterp("a cycle counter has no CPU meaning"),
)  # fmt: skip
declare(
    "cuda.nano_sleep", "i", void, pure=False, device_only=True, doc="sleep about n nanoseconds (__nanosleep)",
    params="time",
    cuda=CExpr("__nanosleep((unsigned){0:p})"), interp=_i_in_launch,
)  # fmt: skip


# --------------------------------------------------------------------------- cluster, election
declare(
    "cuda.cta_pair_id", "", int32, device_only=True, nonneg=True, range=(0, 1),
    doc="the block's index in its CTA pair of the cluster (cluster rank & 1)",
    cuda=CExpr("((int)(tirx_sreg_cluster_ctarank() & 1u))", helpers=(CLUSTER,)),
    interp=lambda fc, call: (lambda f: lambda c: f(c) & 1)(_i_cta_rank(fc, call)),
)  # fmt: skip


def _i_elect_u32(fc: Any, call: Any):
    """The full warp's lowest active lane; with ``membermask``, the lowest lane of the mask (every
    lane the mask names must take part, and each caller must be in its mask: ``_warp_masks``)."""
    import numpy as np

    if not call.args:
        f = _i_elect_sync(fc, call)
        return lambda c: f(c).astype(np.uint32)
    from tirx.ops.semantics import InterpError

    name = call.op.name
    fm = fc.expr(call.args[0])

    def ev(c):
        lane, warp, m = _warp_masks(c, name, fm)
        n = int(warp.max()) + 1 if warp.size else 1
        act = np.zeros((n, 32), dtype=bool)
        act[warp[c.mask], lane[c.mask]] = True
        bits = ((m[:, None] >> np.arange(32, dtype=np.uint64)) & np.uint64(1)).astype(bool)  # [N, 32]
        absent = c.mask & (bits & ~act[warp]).any(axis=1)
        if absent.any():
            k = int(np.flatnonzero(absent)[0])
            raise InterpError(f"T.{name}: the mask of {c.describe(k)} names a lane that does not take part")
        lowest = np.argmax(bits, axis=1)  # the mask's lowest lane (it holds the caller: not empty)
        return ((lane == lowest) & c.mask).astype(np.uint32)

    return ev


declare(
    "cuda.elect_sync", "i?", uint32, params="membermask", pure=False, device_only=True, convergent=True,
    doc="1 in exactly one lane of the warp (elect.sync over the lanes of `membermask`, default the full "
    "warp: its lowest active lane), 0 in the others",
    cuda=PTX(
        "{{ .reg .pred p; elect.sync _|p, 0xffffffff; selp.u32 {out}, 1, 0, p; }}",
        by_arity=((1, "{{ .reg .pred p; elect.sync _|p, {0}; selp.u32 {out}, 1, 0, p; }}"),),
    ),
    interp=_i_elect_u32,
)  # fmt: skip


# --------------------------------------------------------------------------- warp reductions (u32)
def _i_reduce_sync(kind: str):
    """``__reduce_add_sync`` / ``__reduce_min_sync`` over the lanes of each warp in the mask."""

    def compile_call(fc: Any, call: Any):
        import numpy as np

        from tirx.ops.semantics import InterpError, full

        name = call.op.name
        fm, fv = fc.expr(call.args[0]), fc.expr(call.args[1])

        def ev(c):
            lane, warp, m = _warp_masks(c, name, fm)
            bits = ((m[:, None] >> np.arange(32, dtype=np.uint64)) & np.uint64(1)).astype(bool)  # [N, 32]
            n = int(warp.max()) + 1 if warp.size else 1
            act = np.zeros((n, 32), dtype=bool)
            act[warp[c.mask], lane[c.mask]] = True
            live = c.mask
            absent = live & (bits & ~act[warp]).any(axis=1)
            if absent.any():  # every lane a mask names must take part
                k = int(np.flatnonzero(absent)[0])
                raise InterpError(
                    f"T.{name}: the mask of {c.describe(k)} names a lane that does not take part"
                )
            v = full(fv(c), c.N).astype(np.uint64) & np.uint64(0xFFFFFFFF)
            vals = np.zeros((n, 32), dtype=np.uint64)
            vals[warp[live], lane[live]] = v[live]
            mine = vals[warp]  # [N, 32]: the values of each lane's warp
            if kind == "add":
                r = np.where(bits, mine, np.uint64(0)).sum(axis=1, dtype=np.uint64)
            else:
                r = np.where(bits, mine, np.uint64(0xFFFFFFFF)).min(axis=1)
            return (r & np.uint64(0xFFFFFFFF)).astype(np.uint32)

        return ev

    return compile_call


for _k in ("add", "min"):
    declare(
        f"cuda.reduce_{_k}_sync_u32", "i i", uint32, pure=False, device_only=True, convergent=True,
        params="mask value", doc=f"the {_k} of `value` over the warp's lanes in `mask` (__reduce_{_k}_sync)",
        cuda=CExpr(f"__reduce_{_k}_sync((unsigned){{0:p}}, (unsigned){{1:p}})"), interp=_i_reduce_sync(_k),
    )  # fmt: skip


# --------------------------------------------------------------------------- float conversions
def _typed(want: str, body: str, helper: Helper | None = None):
    """A lowering that checks the argument dtypes (TIRx's builtins take one type each)."""

    def lower(cg: Any, c: Any) -> str:
        for a in c.args:
            if not (isinstance(a.ty, PrimType) and a.ty.base == want and a.ty.lanes == 1):
                raise cg.error(f"T.{c.op.name} takes {want} scalars, got {a.ty}", c)
        if helper is not None:
            cg.need(helper)
        return body.format(*(cg.expr(a) for a in c.args))

    return lower


def _i_typed(want: str, fn):
    def compile_call(fc: Any, call: Any):
        for a in call.args:
            if not (isinstance(a.ty, PrimType) and a.ty.base == want and a.ty.lanes == 1):
                raise OpError(f"T.{call.op.name} takes {want} scalars, got {a.ty}")
        fs = [fc.expr(a) for a in call.args]
        return lambda c: fn(*(f(c) for f in fs))

    return compile_call


def _to_f32(x: Any) -> Any:
    import numpy as np

    return np.asarray(x, dtype=np.float32)  # half values are held exactly in float16/float32


declare(
    "cuda.half2float", "f", float32, doc="a float16 widened to float32 (__half2float, exact)",
    params="src", cuda=_typed("float16", "__half2float({0})"), interp=_i_typed("float16", _to_f32),
)  # fmt: skip
declare(
    "cuda.bfloat162float", "f", float32, doc="a bfloat16 widened to float32 (__bfloat162float, exact)",
    params="src", cuda=_typed("bfloat16", "__bfloat162float({0})"), interp=_i_typed("bfloat16", _to_f32),
)  # fmt: skip


def _fdividef(x: Any, y: Any) -> Any:
    """__fdividef's documented results: x / y, but 0 (NaN for an infinite x) when
    2^126 < |y| < 2^128."""
    import numpy as np

    x = np.asarray(x, dtype=np.float32)
    y = np.asarray(y, dtype=np.float32)
    with np.errstate(all="ignore"):
        r = (x / y).astype(np.float32)
    big = (np.abs(y) > np.float32(2.0**126)) & np.isfinite(y)
    return np.where(big, np.where(np.isinf(x), np.float32("nan"), np.float32(0)), r).astype(np.float32)


declare(
    "cuda.fdividef", "f f", float32, params="x y",
    doc="fast float32 division (__fdividef: 2 ulp for 2^-126 <= |y| <= 2^126, 0 above)",
    cuda=_typed("float32", "__fdividef({0}, {1})"), interp=_i_typed("float32", _fdividef),
)  # fmt: skip


# --------------------------------------------------------------------------- packed float2 / bf16x2
def _i_make_float2(x: Any, y: Any) -> Any:
    import numpy as np

    lo = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    hi = np.asarray(y, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return (hi << np.uint64(32)) | lo


def _i_float2_half(shift: int):
    def ev(p: Any) -> Any:
        import numpy as np

        bits = (np.asarray(p, dtype=np.uint64) >> np.uint64(shift)) & np.uint64(0xFFFFFFFF)
        return bits.astype(np.uint32).view(np.float32)

    return ev


declare(
    "cuda.make_float2", "f f", uint64, params="x y",
    doc="a float2 (x in the low word, y in the high word) packed in a uint64",
    cuda=_typed("float32", "(((uint64_t)__float_as_uint({1}) << 32) | (uint64_t)__float_as_uint({0}))"),
    interp=_i_typed("float32", _i_make_float2),
)  # fmt: skip
for _n, _sh in (("x", 0), ("y", 32)):
    declare(
        f"cuda.float2_{_n}", "i", float32, params="packed",
        doc=f"the .{_n} of a float2 packed in a uint64 (T.cuda.make_float2)",
        cuda=_typed("uint64", f"__uint_as_float((unsigned)(({{0}}) >> {_sh}))"),
        interp=_i_typed("uint64", _i_float2_half(_sh)),
    )  # fmt: skip


def _i_hminmax2(kind: str):
    """``__hmax2`` / ``__hmin2`` on two bfloat16 pairs packed in uint32s: a NaN operand gives
    the other one, two NaNs the canonical NaN (0x7fff), and +0 > -0."""

    def ev(a: Any, b: Any) -> Any:
        import numpy as np

        a = np.asarray(a, dtype=np.uint32)
        b = np.asarray(b, dtype=np.uint32)
        out = np.zeros(np.broadcast(a, b).shape, dtype=np.uint32)
        for sh in (0, 16):
            ha = (a >> np.uint32(sh)) & np.uint32(0xFFFF)
            hb = (b >> np.uint32(sh)) & np.uint32(0xFFFF)
            fa = (ha << np.uint32(16)).view(np.float32)
            fb = (hb << np.uint32(16)).view(np.float32)
            na, nb = np.isnan(fa), np.isnan(fb)
            if kind == "max":
                a_wins = (fa > fb) | ((fa == fb) & (ha == 0) & (hb == 0x8000))
            else:
                a_wins = (fa < fb) | ((fa == fb) & (ha == 0x8000) & (hb == 0))
            a_wins = a_wins | (fa == fb) & ~((ha == 0) | (ha == 0x8000))  # equal: either bit pattern
            r = np.where(a_wins, ha, hb)
            r = np.where(na & ~nb, hb, np.where(nb & ~na, ha, r))
            r = np.where(na & nb, np.uint32(0x7FFF), r)
            out |= (r.astype(np.uint32) & np.uint32(0xFFFF)) << np.uint32(sh)
        return out

    return ev


BF16X2 = Helper(
    "tirx_bf16x2_minmax",
    """\
// __hmax2 / __hmin2 on two bfloat16 pairs packed in 32-bit words
#include <cuda_bf16.h>
__device__ __forceinline__ unsigned tirx_hmax2(unsigned a, unsigned b) {
  __nv_bfloat162 x = *reinterpret_cast<__nv_bfloat162*>(&a), y = *reinterpret_cast<__nv_bfloat162*>(&b);
  __nv_bfloat162 r = __hmax2(x, y);
  return *reinterpret_cast<unsigned*>(&r);
}
__device__ __forceinline__ unsigned tirx_hmin2(unsigned a, unsigned b) {
  __nv_bfloat162 x = *reinterpret_cast<__nv_bfloat162*>(&a), y = *reinterpret_cast<__nv_bfloat162*>(&b);
  __nv_bfloat162 r = __hmin2(x, y);
  return *reinterpret_cast<unsigned*>(&r);
}""",
)
for _k in ("max", "min"):
    declare(
        f"cuda.h{_k}2", "i i", uint32, params="a b",
        doc=f"the lane-wise {_k} of two bfloat16 pairs packed in uint32s (__h{_k}2)",
        cuda=_typed("uint32", f"tirx_h{_k}2({{0}}, {{1}})", BF16X2),
        interp=_i_typed("uint32", _i_hminmax2(_k)),
    )  # fmt: skip

declare(
    "cuda.smem_addr_from_uint64", "i", uint32, params="cluster_addr",
    doc="the 32-bit shared-window address held in the low word of a 64-bit one",
    cuda=_typed("uint64", "((unsigned)({0}))"),
    interp=_i_typed("uint64", lambda x: __import__("numpy").asarray(x, dtype="uint64").astype("uint32")),
)  # fmt: skip


# --------------------------------------------------------------------------- waits, barriers, traps
MBARRIER_WAIT = Helper(
    "tirx_mbarrier_wait",
    """\
// spin on mbarrier.try_wait.parity until the phase with the given parity completed
__device__ __forceinline__ void tirx_mbarrier_wait(unsigned addr, unsigned phase) {
  unsigned done;
  do {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2; "
                 "selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(addr), "r"(phase) : "memory");
  } while (!done);
}
__device__ __forceinline__ void tirx_mbarrier_wait_acquire_cluster(unsigned addr, unsigned phase) {
  unsigned done;
  do {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; "
                 "selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(addr), "r"(phase) : "memory");
  } while (!done);
}""",
)
for _n in ("mbarrier_wait", "mbarrier_wait_acquire_cluster"):
    declare(
        f"cuda.{_n}", "p i", void, pure=False, device_only=True, params="bar phase",
        doc="wait until the mbarrier's phase with the given parity completed (acquire, "
        + ("CTA" if _n == "mbarrier_wait" else "cluster") + " scope)",
        cuda=CExpr(f"tirx_{_n}((unsigned)__cvta_generic_to_shared({{0}}), (unsigned){{1:p}})",
                   helpers=(MBARRIER_WAIT,)),
        interp=NoInterp("mbarrier pipelines have no CPU model (they need the cuda target)"),
    )  # fmt: skip

declare(
    "cuda.warpgroup_sync", "i", void, pure=False, device_only=True, convergent=True, params="bar_no",
    doc="named barrier `bar_no` over the 128 threads of a warpgroup (bar.sync bar_no, 128)",
    cuda=CExpr('asm volatile("bar.sync %0, 128;" :: "r"((int){0:p}) : "memory")'),
    interp=NoInterp("named barriers are not modelled (the interpreter has one barrier per block)"),
)  # fmt: skip


def _i_trap(fc: Any, call: Any):
    from tirx.ops.semantics import require_true

    msg = f"T.{call.op.name}: the condition is false in {{thread}} (the GPU traps)"
    fp = fc.expr(call.args[0])

    def ev(c):
        require_true(c, fp(c), msg)

    return ev


declare(
    "cuda.trap_when_assert_failed", "b", void, pure=False, device_only=True, params="cond",
    doc="trap (abort the kernel) when the condition is false",
    cuda=CExpr("((void)((bool)({0}) ? 0 : (__trap(), 0)))"), interp=_i_trap,
)  # fmt: skip


# --------------------------------------------------------------------------- TIRx's T.gpu_* names
def _i_dp4a(fc: Any, call: Any):
    import numpy as np

    for a in call.args:
        if not (isinstance(a.ty, PrimType) and a.ty.base == "int32" and a.ty.lanes == 1):
            raise OpError(f"T.{call.op.name} takes int32 scalars (four packed int8 lanes), got {a.ty}")
    fa, fb, fc_ = (fc.expr(a) for a in call.args)

    def ev(c):
        a = np.ascontiguousarray(np.asarray(fa(c), dtype=np.int32)[..., None]).view(np.int8).astype(np.int64)
        b = np.ascontiguousarray(np.asarray(fb(c), dtype=np.int32)[..., None]).view(np.int8).astype(np.int64)
        s = (a * b).sum(axis=-1) + np.asarray(fc_(c), dtype=np.int64)
        return ((s + 2**31) % 2**32 - 2**31).astype(np.int32)  # wraps as the int32 add does

    return ev


declare(
    "gpu_dp4a", "i i i?", int32, params="vec1 vec2 acc", defaults={2: 0},
    doc="the dot product of two int8x4 vectors packed in int32s, plus acc (__dp4a)",
    cuda=_typed("int32", "__dp4a({0}, {1}, {2})"), interp=_i_dp4a,
)  # fmt: skip


def _i_activemask(fc: Any, call: Any):
    import numpy as np

    from tirx.ops.semantics import need_launch

    name = call.op.name

    def ev(c):
        L = need_launch(c, name)
        lane = (L.get("tid") % 32).astype(np.uint64)
        warp = L.get("warp")
        bits = np.where(c.mask, np.uint64(1) << lane, np.uint64(0))
        acc = np.zeros(int(warp.max()) + 1 if warp.size else 1, dtype=np.uint64)
        np.bitwise_or.at(acc, warp, bits)
        return acc[warp].astype(np.uint32)

    return ev


for _name in ("gpu_warp_activemask", "cuda.__activemask"):  # TIRx's generic name and its T.cuda one
    declare(
        _name, "", uint32, pure=False, device_only=True,
        doc="the lanes of the warp executing this call (__activemask)",
        cuda=CExpr("__activemask()"), interp=_i_activemask,
    )  # fmt: skip


# --------------------------------------------------------------------------- packed conversions
def _bf16_rn_bits(x: Any) -> Any:
    """float32 -> bfloat16 bits as cvt.rn.bf16(x2).f32 gives them: nearest even, NaN -> 0x7fff."""
    import numpy as np

    x = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    u = x.view(np.uint32)
    r = ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)) & np.uint32(0xFFFF)
    return np.where(np.isnan(x), np.uint32(0x7FFF), r).astype(np.uint32)


def _i_bf16x2_to_float2(p: Any) -> Any:
    import numpy as np

    p = np.asarray(p, dtype=np.uint32).astype(np.uint64)
    lo = (p & np.uint64(0xFFFF)) << np.uint64(16)
    hi = ((p >> np.uint64(16)) & np.uint64(0xFFFF)) << np.uint64(16)
    return (hi << np.uint64(32)) | lo


def _i_float2_to_bf16x2(x: Any, y: Any) -> Any:
    import numpy as np

    return (_bf16_rn_bits(x) | (_bf16_rn_bits(y) << np.uint32(16))).astype(np.uint32)


def _i_float2_to_f16x2(x: Any, y: Any) -> Any:
    import numpy as np

    def bits(v: Any) -> Any:  # numpy's float16 cast rounds to nearest even, as __float22half2_rn
        return np.asarray(v, dtype=np.float32).astype(np.float16).view(np.uint16).astype(np.uint32)

    return (bits(x) | (bits(y) << np.uint32(16))).astype(np.uint32)


def _i_packed_float2_to_bf16x2(p: Any) -> Any:
    return _i_float2_to_bf16x2(_i_float2_half(0)(p), _i_float2_half(32)(p))


def _i_fp8x4(*xs: Any) -> Any:
    import numpy as np

    from ..ir.minifloat import encode

    out = np.uint32(0)
    for k, x in enumerate(xs):
        out = out | (
            encode(np.asarray(x, dtype=np.float32), "float8_e4m3fn").astype(np.uint32) << np.uint32(8 * k)
        )
    return np.asarray(out, dtype=np.uint32)


# two helpers, so a kernel that only packs bfloat16 does not parse cuda_fp8.h (~15-20 ms of
# every NVRTC compile, issue #16)
CONVERT = Helper(
    "tirx_packed_convert",
    """\
// packed conversions between float2 (in a 64-bit word) and bfloat16x2 (in a 32-bit word)
#include <cuda_bf16.h>
__device__ __forceinline__ unsigned long long tirx_bf162_to_float2(unsigned p) {
  __nv_bfloat162 v = *reinterpret_cast<__nv_bfloat162*>(&p);
  float2 r = __bfloat1622float2(v);
  return ((unsigned long long)__float_as_uint(r.y) << 32) | __float_as_uint(r.x);
}
__device__ __forceinline__ unsigned tirx_float2_to_bf162(float x, float y) {
  __nv_bfloat162 r = __float22bfloat162_rn(make_float2(x, y));
  return *reinterpret_cast<unsigned*>(&r);
}""",
)
CONVERT_F16 = Helper(
    "tirx_packed_convert_f16",
    """\
// two float32 packed as float16x2 in a 32-bit word
#include <cuda_fp16.h>
__device__ __forceinline__ unsigned tirx_float2_to_f162(float x, float y) {
  __half2 r = __float22half2_rn(make_float2(x, y));
  return *reinterpret_cast<unsigned*>(&r);
}""",
)
CONVERT_FP8 = Helper(
    "tirx_packed_convert_fp8",
    """\
// four float32 packed as fp8x4 (e4m3) in a 32-bit word
#include <cuda_fp8.h>
__device__ __forceinline__ unsigned tirx_fp8x4_e4m3(float x, float y, float z, float w) {
  __nv_fp8x4_e4m3 r = __nv_fp8x4_e4m3(make_float4(x, y, z, w));
  return *reinterpret_cast<unsigned*>(&r);
}""",
)
declare(
    "cuda.bfloat1622float2", "i", uint64, params="packed",
    doc="two bfloat16 (a uint32) widened to a float2 packed in a uint64 (__bfloat1622float2)",
    cuda=_typed("uint32", "tirx_bf162_to_float2({0})", CONVERT), interp=_i_typed("uint32", _i_bf16x2_to_float2),
)  # fmt: skip
declare(
    "cuda.float22bfloat162_rn", "f f", uint32, params="v0 v1",
    doc="two float32 rounded (nearest even) to two bfloat16 packed in a uint32 (__float22bfloat162_rn)",
    cuda=_typed("float32", "tirx_float2_to_bf162({0}, {1})", CONVERT), interp=_i_typed("float32", _i_float2_to_bf16x2),
)  # fmt: skip
declare(
    "cuda.float22half2_rn", "f f", uint32, params="v0 v1",
    doc="two float32 rounded (nearest even) to two float16 packed in a uint32 (__float22half2_rn)",
    cuda=_typed("float32", "tirx_float2_to_f162({0}, {1})", CONVERT_F16), interp=_i_typed("float32", _i_float2_to_f16x2),
)  # fmt: skip
declare(
    "cuda.float22bfloat162_rn_from_float2", "i", uint32, params="packed",
    doc="a float2 packed in a uint64, rounded to two bfloat16 packed in a uint32",
    cuda=_typed("uint64", "tirx_float2_to_bf162(__uint_as_float((unsigned)({0})), __uint_as_float((unsigned)(({0}) >> 32)))",
                CONVERT),
    interp=_i_typed("uint64", _i_packed_float2_to_bf16x2),
)  # fmt: skip
declare(
    "cuda.fp8x4_e4m3_from_float4", "f f f f", uint32, params="x y z w",
    doc="four float32 as four float8_e4m3fn (nearest even, saturating) packed in a uint32, x lowest",
    cuda=_typed("float32", "tirx_fp8x4_e4m3({0}, {1}, {2}, {3})", CONVERT_FP8), interp=_i_typed("float32", _i_fp8x4),
)  # fmt: skip


# --------------------------------------------------------------------------- special registers
_SREGS = ("laneid", "warpid", "nwarpid", "smid", "nsmid", "gridid", "lanemask_eq", "lanemask_le",
          "lanemask_lt", "lanemask_ge", "lanemask_gt", "clock", "clock_hi", "globaltimer_lo",
          "globaltimer_hi", "total_smem_size", "dynamic_smem_size", "cluster_ctarank", "cluster_nctarank",
          "clock64", "globaltimer", "aggr_smem_size",
          *(f"{r}.{d}" for r in ("tid", "ntid", "ctaid", "nctaid", "clusterid", "nclusterid", "cluster_ctaid",
                                 "cluster_nctaid") for d in "xyz"),
          *(f"envreg{i}" for i in range(32)))  # fmt: skip


def _sreg_result(args: tuple) -> Any:
    """int32 / int64 for the real widths; TIRx's ``int<bits>`` for 8 and 16 (codegen refuses
    them), int64 for 128 (which tirx's IR has no type for)."""
    bits = getattr(args[0], "value", 32)
    return {8: prim("int8"), 16: prim("int16"), 32: int32}.get(bits, int64)


def _sreg_width(c: Any) -> str:
    """Why a ``T.cuda.mov_sreg`` of another width cannot run (codegen's and the interpreter's)."""
    return f"T.{c.op.name}: special registers are 32 or 64 bits wide, not {c.args[0].value}"


def _c_mov_sreg(cg: Any, c: Any) -> str:
    bits, reg = c.args[0].value, c.args[1].value.removeprefix("%")
    if bits not in (32, 64):  # TIRx's IR takes the other widths too; its CUDA refuses them alike
        raise cg.error(_sreg_width(c), c)
    if (bits == 64) != (reg in ("clock64", "globaltimer")):
        raise cg.error(
            f"T.{c.op.name}: %{reg} is a {64 if bits == 32 else 32}-bit register, not {bits}-bit", c
        )
    if bits == 64:
        return f'[&]() {{ unsigned long long r; asm volatile("mov.u64 %0, %%{reg};" : "=l"(r)); return (long long)r; }}()'
    return f'[&]() {{ unsigned r; asm volatile("mov.u32 %0, %%{reg};" : "=r"(r)); return (int)r; }}()'


def _i_mov_sreg(fc: Any, call: Any):
    import numpy as np

    from tirx.ops.semantics import need_launch

    name, reg = call.op.name, call.args[1].value.removeprefix("%")
    if call.args[0].value not in (32, 64):  # the same refusal as codegen's
        raise OpError(_sreg_width(call))
    if reg != "laneid":
        raise OpError(f"the interpreter cannot run T.{name}(..., {reg!r}): only %laneid is modelled")
    return lambda c: (need_launch(c, name).get("tid") % 32).astype(np.int32)


declare(
    "cuda.mov_sreg", "n s", _sreg_result, pure=False, device_only=True, params="bits reg_name",
    choices={0: (64, 8, 16, 128, 32), 1: (*_SREGS, *(f"%{r}" for r in _SREGS))},  # 32 last: the width the generated differential takes
    doc="read a PTX special register (mov.u32/u64 %<reg_name>; the name with or without its `%`, "
    "TIRx writes it with); int32 for 32 bits, int64 for 64 (8, 16 and 128 build, as in TIRx, and "
    "CUDA codegen refuses them)",
    cuda=_c_mov_sreg, interp=_i_mov_sreg,
)  # fmt: skip


# --------------------------------------------------------------------------- debugging, scheduling
def _c_printf(cg: Any, c: Any) -> str:
    fmt = c.args[0]
    if not isinstance(fmt, StringImm):
        raise cg.error(f"T.{c.op.name}: the format must be a string literal", c)
    lit = fmt.value.encode("unicode_escape").decode("ascii").replace('"', '\\"')
    rest = "".join(f", {cg.expr(a)}" for a in c.args[1:])
    return f'printf("{lit}"{rest})'


def _i_printf(fc: Any, call: Any):
    import sys

    import numpy as np

    from tirx.ops.semantics import full

    name = call.op.name
    fmt = call.args[0]
    if not isinstance(fmt, StringImm):
        raise OpError(f"T.{name}: the format must be a string literal")
    fs = [fc.expr(a) for a in call.args[1:]]
    text = fmt.value.replace("%u", "%d").replace("%lld", "%d").replace("%llu", "%d").replace("%ld", "%d")

    def ev(c):
        vals = [full(np.asarray(f(c)), c.N) for f in fs]
        for k in np.flatnonzero(c.mask):  # thread order (CUDA's order is unspecified)
            try:
                sys.stdout.write(text % tuple(v[k].item() for v in vals))
            except (TypeError, ValueError) as e:
                raise OpError(f"T.{name}: the format does not fit the arguments: {e}") from None
        return None

    return ev


declare(
    "cuda.printf", "s *x?", void, pure=False, device_only=True, params="fmt args",
    doc="device printf (each calling thread prints; the interpreter prints in thread order)",
    cuda=_c_printf, interp=_i_printf,
)  # fmt: skip


def _c_noop_barrier(cg: Any, c: Any) -> str:
    t = c.args[0].ty
    if not (isinstance(t, PrimType) and t.base == "float32" and t.lanes == 1):
        raise cg.error(f"T.{c.op.name} takes a float32 element (an accumulator register), got {t}", c)
    return cg.asm(c, "// tirx: register barrier {0:inout}", [c.args[0]], True)


declare(
    "cuda.wgmma_noop_barrier", "x", void, pure=False, device_only=True, params="reg",
    doc="an empty asm that reads and writes a register-held element: keeps the compiler from moving "
    "its accesses across (wgmma accumulators)",
    cuda=_c_noop_barrier, interp=_i_typed("float32", lambda x: None),
)  # fmt: skip
