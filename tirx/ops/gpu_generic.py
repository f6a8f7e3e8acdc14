"""TIRx's target-generic GPU ops (``T.gpu_*``) and compiler annotations under TIRx's names:
warp shuffles with a mask and a lane-group width, ``gpu_storage_sync``, thread-invariance and
loop-partition markers, ``gpu_thread_return``, ``undef``, the ``assume_*`` facts, pointer
arithmetic on handles, and the ops TIRx keeps for analyses and transforms (thread filters,
WMMA fragments, ``prefetch``, ``kernel_replace_point``). Those last ones TIRx's own CUDA
backend does not lower either; they resolve, build, print and round-trip, and CUDA codegen
gives a located "not supported by the CUDA backend" error naming them."""

from __future__ import annotations

from typing import Any

from ..ir.expr import IntImm, StringImm
from ..ir.op import CExpr, NoInterp, declare
from ..ir.types import PointerType, PrimType, bool_, int32, void
from .memory import i_byte_offset  # the same pointer arithmetic as T.ptr_byte_offset

__all__ = ["not_on_cuda"]

HANDLE = PointerType(void)


def not_on_cuda(why: str):
    """A CUDA lowering that refuses the op: a located error naming it and saying ``why``
    (an LLVM/SPIR-V/host-runtime op, or a marker a transform must remove first)."""

    def lower(cg: Any, c: Any) -> str:
        raise cg.error(f"T.{c.op.name} is not supported by the CUDA backend ({why})", c)

    lower.refuses = why  # type: ignore[attr-defined]  # read by tests: nothing to compare on a GPU
    return lower


def _zero():
    import numpy as np

    return np.zeros(1, dtype=np.int32)


# --------------------------------------------------------------------------- warp shuffles
_SHFL = {  # op -> (CUDA function, mode, name of the lane argument)
    "gpu_warp_shuffle": ("__shfl_sync", "idx", "warp_id", "value from lane warp_id of the lane group"),
    "gpu_warp_shuffle_down": ("__shfl_down_sync", "down", "offset", "value from lane + offset in the group"),
    "gpu_warp_shuffle_up": ("__shfl_up_sync", "up", "offset", "value from lane - offset in the group"),
    "gpu_warp_shuffle_xor": ("__shfl_xor_sync", "xor", "lane_mask", "value from lane ^ lane_mask"),
}


#: the lane argument's name in TIRx's T.cuda.__shfl_*_sync, by mode
_CUDA_LANE = {"idx": "lane", "down": "delta", "up": "delta", "xor": "lane_mask"}


def _c_warp_shuffle(fn: str):
    def lower(cg: Any, c: Any) -> str:
        mask, v, lane, width = c.args[:4]
        t = v.ty
        if not isinstance(t, PrimType) or t.lanes != 1:
            raise cg.error(f"T.{c.op.name}: the CUDA backend shuffles scalars only, got {t}", c)
        m, ln, w = f"(unsigned){cg.wrap(mask, 15)}", cg.expr(lane), cg.expr(width)
        if t.is_bool or (t.is_int and t.bits < 32):
            return f"(({cg.c_scalar(t.base)}){fn}({m}, (int){cg.wrap(v, 15)}, {ln}, {w}))"
        return f"{fn}({m}, {cg.expr(v)}, {ln}, {w})"

    return lower


def shuffle_source(mode: str, lane: Any, b: Any, width: int) -> Any:
    """The source lane of each lane (numpy arrays of lane-in-warp and the lane/offset/mask
    argument) as PTX's ``shfl.sync`` computes it for CUDA's ``width``: a lane reading outside
    its group of ``width`` lanes (``up``/``down``/``xor``) keeps its own value."""
    import numpy as np

    b = np.asarray(b, dtype=np.int64) & 31
    seg = (32 - width) & 31  # the bits naming the lane group
    lo = lane & seg
    hi = lo | (0 if mode == "up" else (31 & ~seg))
    if mode == "idx":
        j, ok = lo | (b & ~seg & 31), True
    elif mode == "up":
        j = lane - b
        ok = j >= hi
    elif mode == "down":
        j = lane + b
        ok = j <= hi
    else:
        j = lane ^ b
        ok = j <= hi
    return np.where(ok, j, lane)


def _i_warp_shuffle(mode: str):
    def compile_call(fc: Any, call: Any):
        import numpy as np

        from tirx.ops.semantics import InterpError, full, need_launch

        name = call.op.name
        ws = call.args[4] if len(call.args) > 4 else IntImm(32)  # T.cuda.__shfl_*: CUDA's warp
        if not (isinstance(ws, IntImm) and ws.value == 32):
            raise InterpError(f"T.{name}: warp_size must be the literal 32 (CUDA warps), got {ws}")
        fm, fv, fl, fw = (fc.expr(a) for a in call.args[:4])

        def ev(c):
            L = need_launch(c, name)
            v, b = fv(c), full(fl(c), c.N)
            w = np.unique(full(fw(c), c.N)[c.mask]) if c.count else np.array([32])
            if len(w) != 1 or w[0] not in (1, 2, 4, 8, 16, 32):
                raise InterpError(f"T.{name}: width must be one power of two <= 32 for the warp, got {w}")
            tid = L.get("tid")
            lane = tid % 32
            me = L.get("lane")
            m = full(fm(c), c.N).astype(np.int64) & 0xFFFFFFFF
            outside = c.mask & (((m >> lane) & 1) == 0)
            if outside.any():
                k = int(np.flatnonzero(outside)[0])
                raise InterpError(f"T.{name}: the mask of {c.describe(k)} does not include its own lane")
            s = shuffle_source(mode, lane, b, int(w[0]))
            ok = (tid - lane + s) < L.T
            src = np.where(ok, me - lane + s, me)
            bad = c.mask & ~c.mask[src]
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                raise InterpError(
                    f"T.{name}: {c.describe(k)} reads from {c.describe(int(src[k]))}, which is not active "
                    "(warp shuffles need every source lane converged)"
                )
            if v.shape[0] == 1:
                return v
            return v[src]

        return ev

    return compile_call


for _n, (_fn, _mode, _lane, _doc) in _SHFL.items():
    declare(
        _n, "i x i i i", lambda a: a[1].ty, pure=False, device_only=True, convergent=True,
        params=f"mask value {_lane} width warp_size", doc=_doc,
        cuda=_c_warp_shuffle(_fn), interp=_i_warp_shuffle(_mode),
    )  # fmt: skip
    # TIRx's T.cuda.__shfl_*_sync(mask, var, lane, width): CUDA's intrinsic under its own name
    # (and TIRx's argument names: lane, delta, lane_mask)
    declare(
        f"cuda.{_fn}", "i x i i", lambda a: a[1].ty, pure=False, device_only=True, convergent=True,
        params=f"mask var {_CUDA_LANE[_mode]} width", doc=f"CUDA's {_fn}: {_doc}",
        cuda=_c_warp_shuffle(_fn), interp=_i_warp_shuffle(_mode),
    )  # fmt: skip


# --------------------------------------------------------------------------- storage sync
_SYNC_C = {"shared": "__syncthreads()", "shared.dyn": "__syncthreads()", "warp": "((void)0)"}


def _c_storage_sync(cg: Any, c: Any) -> str:
    s = c.args[0]
    got = _SYNC_C.get(s.value) if isinstance(s, StringImm) else None
    if got is None:
        raise cg.error(
            f"T.gpu_storage_sync({s}) is not supported by the CUDA backend (only shared and warp storage "
            "can be synchronized)",
            c,
        )
    return got


def _i_storage_sync(fc: Any, call: Any):
    from tirx.ops.semantics import InterpError, block_barrier, need_launch

    scope = call.args[0].value
    if scope not in _SYNC_C:
        raise InterpError(f"T.gpu_storage_sync({scope!r}): only shared and warp storage can be synchronized")
    zero = _zero()

    def ev(c):
        if scope == "warp":  # the interpreter runs a warp's lanes in lockstep
            need_launch(c, "gpu_storage_sync")
        else:
            block_barrier(c, "T.gpu_storage_sync")
        return zero

    return ev


declare(
    "gpu_storage_sync", "s", void, pure=False, device_only=True, convergent=True, params="storage_scope",
    doc="synchronize the accesses to a storage scope: __syncthreads() for shared, nothing for warp",
    cuda=_c_storage_sync, interp=_i_storage_sync,
)  # fmt: skip


# --------------------------------------------------------------------------- markers on values
def _i_same(fc: Any, call: Any):
    return fc.expr(call.args[0])


declare(
    "gpu_thread_invariant", "b", bool_, params="cond",
    doc="the condition, marked as the same in every thread (an analysis hint)",
    cuda=CExpr("({0})"), interp=_i_same,
)  # fmt: skip
declare(
    "ignore_loop_partition", "b", bool_, params="predicate",
    doc="the predicate, marked as no target of loop partitioning",
    cuda=CExpr("({0})"), interp=_i_same,
)  # fmt: skip


def _i_undef(fc: Any, call: Any):
    import numpy as np

    from tirx.ops.semantics import dtypes as D

    t = call.ty
    z = D.from_storage(np.zeros(1, dtype=D.storage_np(t.element)), t) if isinstance(t, PrimType) else None
    if z is None:
        raise NotImplementedError(f"T.undef of type {t} on the interpreter")
    return lambda c: z


declare(
    "undef", "", lambda a: int32, typed_by_binding=True,
    doc="an initialized but arbitrary value (int32 unless ty= says; zero in CUDA and the interpreter)",
    cuda=CExpr("({ty}())"), interp=_i_undef,
)  # fmt: skip


# --------------------------------------------------------------------------- thread return
def _i_thread_return(fc: Any, call: Any):
    from tirx.ops.semantics import need_launch

    from ..ir.stmt import Return

    ret = fc.s_Return(Return(None, span=call.span))

    def ev(c):
        need_launch(c, "gpu_thread_return")
        ret(c)
        return _zero()

    return ev


declare(
    "gpu_thread_return", "", void, pure=False, device_only=True,
    doc="return from the kernel in this thread (CUDA's return;)",
    cuda=CExpr("return"), interp=_i_thread_return,
)  # fmt: skip


# --------------------------------------------------------------------------- facts
def _i_assume_always(fc: Any, call: Any):
    from tirx.ops.semantics import require_true

    f = fc.expr(call.args[0])

    def ev(c):
        require_true(c, f(c), "T.assume_always: the guaranteed predicate is false in {thread}")
        return _zero()

    return ev


declare(
    "assume_always", "b", void, pure=False, params="predicate",
    doc="a predicate guaranteed through its scope (no code; checked by the interpreter)",
    cuda=CExpr("((void)0)"), interp=_i_assume_always,
)  # fmt: skip


def _c_assume_aligned(cg: Any, c: Any) -> str:
    n = c.args[1]
    if not isinstance(n, IntImm) or n.value <= 0 or n.value & (n.value - 1) or n.value > 1 << 27:
        raise cg.error("T.assume_aligned: the alignment must be a power-of-two literal <= 2**27", c)
    return "((void)0)"


def _i_assume_aligned(fc: Any, call: Any):
    import numpy as np

    from tirx.ops.semantics import InterpError, PtrVal

    fp, n = fc.expr(call.args[0]), call.args[1]
    if not isinstance(n, IntImm) or n.value <= 0 or n.value & (n.value - 1) or n.value > 1 << 27:
        raise InterpError("T.assume_aligned: the alignment must be a power-of-two literal <= 2**27")
    m = min(n.value, 256) - 1  # allocations start 256-byte aligned

    def ev(c):
        p = fp(c)
        if not isinstance(p, PtrVal):
            raise InterpError("T.assume_aligned of a value that is not a pointer")
        off = np.asarray(p.off, dtype=np.int64)
        if n.value > 256 or ((off & m) != 0).any():
            raise InterpError(f"T.assume_aligned: the pointer is not {n.value}-byte aligned")
        return _zero()

    return ev


declare(
    "assume_aligned", "p n", void, pure=False, params="tensor alignment_bytes",
    doc="a fact: the pointer is aligned to alignment_bytes (no code; checked by the interpreter)",
    cuda=_c_assume_aligned, interp=_i_assume_aligned, alignment_fact=True,
)  # fmt: skip


# --------------------------------------------------------------------------- handles
declare(
    "handle_add_byte_offset", "p i", HANDLE, params="handle offset",
    host=lambda call, a: f"({a[0]} + {a[1]})",
    doc="an untyped handle offset bytes past a pointer",
    cuda=CExpr("((void*)((char*)({0}) + ({1})))"), interp=i_byte_offset,
)  # fmt: skip

_TRANSFORM = "a marker for TIRx's transforms, removed before code generation"
declare(
    "static_handle", "", HANDLE, pure=False, doc="a handle to static storage of the module (host runtime)",
    cuda=not_on_cuda("a host-runtime handle"), interp=NoInterp("a host-runtime handle"),
)  # fmt: skip
declare(
    "kernel_replace_point", "", void, pure=False,
    doc="where a transform replaces the generated kernel initialization",
    cuda=not_on_cuda(_TRANSFORM), interp=NoInterp(_TRANSFORM),
)  # fmt: skip
declare(
    "prefetch", "p i i i", void, pure=False, params="ptr rw locality cache_type",
    doc="prefetch hint (LLVM's llvm.prefetch: rw 0/1, locality 0..3, cache_type 0 instruction / 1 data)",
    cuda=not_on_cuda("LLVM's llvm.prefetch; CUDA has no such hint"), interp=NoInterp("an LLVM cache hint"),
)  # fmt: skip


# --------------------------------------------------------------------------- analysis-only thread sets
_ANALYSIS = "analysis metadata that must not reach code generation"
declare(
    "gpu_thread_filter", "x b", bool_, pure=False, params="var pred",
    doc="a thread-set filter: pred, collapsing var's active set when it holds",
    cuda=not_on_cuda("a thread-set filter TIRx lowers before code generation"),
    interp=NoInterp("a thread-set filter for TIRx's lowering"),
)  # fmt: skip
declare(
    "gpu_active_thread_selector", "x b", "arg0", params="var pred",
    doc="the value of var in the active domain for which pred is true (analysis only)",
    cuda=not_on_cuda(_ANALYSIS), interp=NoInterp(_ANALYSIS),
)  # fmt: skip


# --------------------------------------------------------------------------- WMMA fragments
_WMMA = "WMMA fragments; TIRx's CUDA backend does not lower them either (use T.ptx.mma)"
_NOWMMA = NoInterp("WMMA fragments are not modelled")
declare(
    "gpu_fill_fragment", "p n n n i x", void, pure=False, device_only=True, params="fragment m n k index value",
    doc="fill a WMMA fragment with a value", cuda=not_on_cuda(_WMMA), interp=_NOWMMA,
)  # fmt: skip
for _n, _d in (("gpu_load_matrix_sync", "load"), ("gpu_store_matrix_sync", "store")):
    declare(
        _n, "p n n n i p i s", void, pure=False, device_only=True, convergent=True,
        params="fragment m n k index buffer_ptr stride layout",
        doc=f"{_d} a WMMA fragment from/to memory (layout row_major or col_major)",
        cuda=not_on_cuda(_WMMA), interp=_NOWMMA,
    )  # fmt: skip
declare(
    "gpu_mma_sync", "p i p i p i p i", void, pure=False, device_only=True, convergent=True,
    params="fragment_d index_d fragment_a index_a fragment_b index_b fragment_c index_c",
    doc="D = A * B + C on WMMA fragments", cuda=not_on_cuda(_WMMA), interp=_NOWMMA,
)  # fmt: skip
