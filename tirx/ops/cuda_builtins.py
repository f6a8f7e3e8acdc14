"""CUDA device builtins under TIRx's names (``T.cuda.*``): warpgroup and linear thread
indices, votes and block-wide predicates, bit casts, ``ffs``, timing and sleeping (``T.cuda.thread_fence`` is in ``cuda.py``).

Result types follow what TIRx builds (``T.cuda.syncthreads_and`` is int64,
``T.cuda.ballot_sync`` uint32, ``T.cuda.clock64`` uint64), so its printed text loads to the
same IR.
"""

from __future__ import annotations

from typing import Any

from ..errors import OpError
from ..ir.op import CExpr, NoInterp, declare
from ..ir.types import PrimType, float32, int32, int64, uint32, uint64, void
from .cuda import _i_in_launch

__all__: list[str] = []

_WARP_ID = "__shfl_sync(0xffffffffu, (int)threadIdx.x >> 5, 0)"
_LINEAR = "((int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)))"


# --------------------------------------------------------------------------- thread indices
def _i_tid(fn):
    """Interpreter value from the linear thread index in the block (``tid``)."""

    def compile_call(fc: Any, call: Any):
        import numpy as np

        from ..interp.semantics import need_launch

        name = call.op.name
        return lambda c: fn(need_launch(c, name).get("tid").astype(np.int32)).astype(np.int32)

    return compile_call


def _block_threads(dim) -> int:
    return dim("block.x")[1] * dim("block.y")[1] * dim("block.z")[1]


for _n, _c, _fn, _rng, _d in (
    ("cuda.warpgroup_id", f"({_WARP_ID} >> 2)", lambda t: t // 128,
     lambda ax, dim: (0, (_block_threads(dim) - 1) >> 7), "warpgroup index in the block (warp-uniform)"),
    ("cuda.warp_in_warpgroup", f"({_WARP_ID} & 3)", lambda t: (t // 32) % 4, (0, 3),
     "warp index within its warpgroup (warp-uniform)"),
    ("cuda.thread_in_warpgroup", "(" + _LINEAR + " & 127)", lambda t: t % 128, (0, 127),
     "thread index within its warpgroup of 128"),
    ("cuda.linear_thread_id", _LINEAR, lambda t: t, lambda ax, dim: (0, _block_threads(dim) - 1),
     "x + y * blockDim.x + z * blockDim.x * blockDim.y"),
    ("cuda.thread_rank", _LINEAR, lambda t: t, lambda ax, dim: (0, _block_threads(dim) - 1),
     "the thread's rank in its block (cooperative groups' thread_rank)"),
):  # fmt: skip
    declare(
        _n, "", int32, device_only=True, doc=_d, nonneg=True, range=_rng, cuda=CExpr(_c), interp=_i_tid(_fn)
    )


# --------------------------------------------------------------------------- votes
def _i_vote(kind: str):
    """``ballot_sync`` / ``any_sync`` over the lanes of each warp named by the mask."""

    def compile_call(fc: Any, call: Any):
        import numpy as np

        from ..interp.semantics import InterpError, full, need_launch

        name = call.op.name
        fm, fp = fc.expr(call.args[0]), fc.expr(call.args[1])

        def ev(c):
            L = need_launch(c, name)
            lane = (L.get("tid") % 32).astype(np.uint64)
            warp = (L.get("lane") - L.get("tid") % 32) // 32
            m = full(fm(c), c.N).astype(np.uint64) & np.uint64(0xFFFFFFFF)
            outside = c.mask & (((m >> lane) & 1) == 0)
            if outside.any():  # undefined in CUDA (seen as an illegal instruction on an H200)
                k = int(np.flatnonzero(outside)[0])
                raise InterpError(f"T.{name}: the mask of {c.describe(k)} does not include its own lane")
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
    "cuda.ballot_sync", "i b", uint32, pure=False, device_only=True, convergent=True,
    doc="bit i set when lane i of the mask has a true predicate (__ballot_sync)",
    cuda=CExpr("__ballot_sync((unsigned){0:p}, {1})"), interp=_i_vote("ballot"),
)  # fmt: skip
declare(
    "cuda.any_sync", "i b", int32, pure=False, device_only=True, convergent=True,
    doc="nonzero when any lane of the mask has a true predicate (__any_sync)",
    cuda=CExpr("__any_sync((unsigned){0:p}, {1})"), interp=_i_vote("any"),
)  # fmt: skip


def _i_sync_pred(kind: str):
    """``__syncthreads_and/or``: a block barrier, then the predicate reduced over the block."""

    def compile_call(fc: Any, call: Any):
        import numpy as np

        from ..interp.semantics import barrier, full, need_launch

        name = call.op.name
        fp = fc.expr(call.args[0])

        def ev(c):
            barrier(c, f"T.{name}")
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
        f"cuda.syncthreads_{_k}", "b", int64, pure=False, device_only=True, convergent=True,
        doc=f"__syncthreads() and the {_k.upper()} of the predicate over the block's threads",
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
    "cuda.float_as_uint", "f", uint32, doc="the bits of a float32 (__float_as_uint)",
    cuda=_c_bitcast("__float_as_uint", "float32"), interp=_i_bitcast("uint32"),
)  # fmt: skip
declare(
    "cuda.uint_as_float", "i", float32, doc="a float32 from its bits (__uint_as_float)",
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
    nonneg=True, range=(0, 32), cuda=CExpr("__ffs((int)(unsigned){0:p})"), interp=_i_ffs,
)  # fmt: skip


# --------------------------------------------------------------------------- time
declare(
    "cuda.clock64", "", uint64, pure=False, device_only=True, doc="the SM's 64-bit cycle counter",
    cuda=CExpr("((uint64_t)clock64())"), interp=NoInterp("a cycle counter has no CPU meaning"),
)  # fmt: skip
declare(
    "cuda.nano_sleep", "i", void, pure=False, device_only=True, doc="sleep about n nanoseconds (__nanosleep)",
    cuda=CExpr("__nanosleep((unsigned){0:p})"), interp=_i_in_launch,
)  # fmt: skip
