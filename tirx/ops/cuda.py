"""CUDA thread-model ops: thread/block/cluster indices and extents, barriers, warp
shuffles and reductions, and atomics.

Launch indices and extents declare their value ranges (``range=``) from the launch
dimensions, so bounds analysis, codegen and the interpreter know them without their names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from ..errors import OpError
from ..ir.expr import Cast, IntImm, StringImm
from ..ir.op import CExpr, Helper, NoInterp, alias, declare, find, get
from ..ir.types import PrimType, int32, void

__all__: list[str] = []


def _zero():
    """The value of a void op on the interpreter (one uniform lane)."""
    import numpy as np

    return np.zeros(1, dtype=np.int32)


# --------------------------------------------------------------------------- helpers (C++)
CLUSTER = Helper(
    "tirx_cluster",
    """\
// cluster special registers and barriers (sm_90)
__device__ __forceinline__ unsigned tirx_sreg_cluster_ctarank() {
  unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r;
}
#define TIRX_SREG(NAME, REG) \\
  __device__ __forceinline__ unsigned NAME() { unsigned r; asm volatile("mov.u32 %0, " REG ";" : "=r"(r)); return r; }
TIRX_SREG(tirx_clusterid_x, "%%clusterid.x") TIRX_SREG(tirx_clusterid_y, "%%clusterid.y")
TIRX_SREG(tirx_clusterid_z, "%%clusterid.z") TIRX_SREG(tirx_nclusterid_x, "%%nclusterid.x")
TIRX_SREG(tirx_nclusterid_y, "%%nclusterid.y") TIRX_SREG(tirx_nclusterid_z, "%%nclusterid.z")
TIRX_SREG(tirx_cluster_ctaid_x, "%%cluster_ctaid.x") TIRX_SREG(tirx_cluster_ctaid_y, "%%cluster_ctaid.y")
TIRX_SREG(tirx_cluster_ctaid_z, "%%cluster_ctaid.z") TIRX_SREG(tirx_cluster_nctaid_x, "%%cluster_nctaid.x")
TIRX_SREG(tirx_cluster_nctaid_y, "%%cluster_nctaid.y") TIRX_SREG(tirx_cluster_nctaid_z, "%%cluster_nctaid.z")
__device__ __forceinline__ void tirx_cluster_sync() {
  asm volatile("barrier.cluster.arrive.aligned;\\n\\tbarrier.cluster.wait.aligned;" ::: "memory");
}""",
)

MAX2 = Helper(
    "tirx_max2",
    """\
// max/min of two values as the IR defines them: floats as fmaxf/fminf (a NaN operand is
// ignored, -0 < +0), half types through float
template <typename T> __device__ __forceinline__ T tirx_max2(T a, T b) { return a > b ? a : b; }
template <typename T> __device__ __forceinline__ T tirx_min2(T a, T b) { return a < b ? a : b; }
__device__ __forceinline__ float tirx_max2(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ float tirx_min2(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ double tirx_max2(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ double tirx_min2(double a, double b) { return fmin(a, b); }
#ifdef __CUDA_FP16_TYPES_EXIST__
__device__ __forceinline__ half tirx_max2(half a, half b) { return half(fmaxf(float(a), float(b))); }
__device__ __forceinline__ half tirx_min2(half a, half b) { return half(fminf(float(a), float(b))); }
#endif
#ifdef __CUDA_BF16_TYPES_EXIST__
__device__ __forceinline__ __nv_bfloat16 tirx_max2(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __nv_bfloat16(fmaxf(float(a), float(b)));
}
__device__ __forceinline__ __nv_bfloat16 tirx_min2(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __nv_bfloat16(fminf(float(a), float(b)));
}
#endif""",
)


ATOMICS = Helper(
    "tirx_atomics",
    """\
// atomics without a native CUDA overload, through compare-and-swap (float max/min: the
// value fmaxf/fminf gives, so NaN and signed zeros behave as in the interpreter)
__device__ __forceinline__ float tirx_atomic_max(float* p, float v) {
  int* ip = (int*)p;
  int old = *ip;
  for (;;) {  // store fmaxf(old, v), as the interpreter does (NaN in memory replaced, -0 < +0)
    int want = __float_as_int(fmaxf(__int_as_float(old), v));
    if (want == old) break;
    int prev = atomicCAS(ip, old, want);
    if (prev == old) break;
    old = prev;
  }
  return __int_as_float(old);
}
__device__ __forceinline__ float tirx_atomic_min(float* p, float v) {
  int* ip = (int*)p;
  int old = *ip;
  for (;;) {  // store fminf(old, v), as the interpreter does (NaN in memory replaced, -0 < +0)
    int want = __float_as_int(fminf(__int_as_float(old), v));
    if (want == old) break;
    int prev = atomicCAS(ip, old, want);
    if (prev == old) break;
    old = prev;
  }
  return __int_as_float(old);
}
template <typename T> __device__ __forceinline__ T tirx_atomic_max(T* p, T v) { return atomicMax(p, v); }
template <typename T> __device__ __forceinline__ T tirx_atomic_min(T* p, T v) { return atomicMin(p, v); }
__device__ __forceinline__ int64_t tirx_atomic_add(int64_t* p, int64_t v) {
  return (int64_t)atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
template <typename T> __device__ __forceinline__ T tirx_atomic_add(T* p, T v) { return atomicAdd(p, v); }""",
)


# --------------------------------------------------------------------------- launch indices
# ``range(axis, dim)``: value range from the launch dimension ranges ``dim("block.x")`` etc.
def _index_in(scope: str):
    return lambda ax, dim: (0, dim(f"{scope}.{ax}")[1] - 1)


def _extent_of(scope: str):
    return lambda ax, dim: tuple(dim(f"{scope}.{ax}"))


def _axis_arg(cg: Any, c: Any) -> str:
    a = c.args[0]
    if not isinstance(a, StringImm) or a.value not in ("x", "y", "z"):
        raise cg.error(f'T.{c.op.name} takes "x", "y" or "z"', c)
    return a.value


def _c_builtin_axis(var: str):
    def lower(cg: Any, c: Any) -> str:
        return f"((int){var}.{_axis_arg(cg, c)})"

    return lower


def _c_cluster_axis(prefix: str):
    def lower(cg: Any, c: Any) -> str:
        cg.need(CLUSTER)
        return f"((int)tirx_{prefix}_{_axis_arg(cg, c)}())"

    return lower


def _i_axis(key: str):
    """Interpreter value of a launch index/extent: ``key`` says which (t, b, bd, gd, cd, ci, bic)."""

    def compile_call(fc: Any, call: Any):
        import numpy as np

        from tirx.ops.semantics import need_launch

        name = call.op.name
        a = call.args[0]
        axis = a.value if isinstance(a, StringImm) else None
        if axis not in ("x", "y", "z"):
            raise OpError(f'T.{name}: axis must be "x", "y" or "z", got {axis!r}')
        i = "xyz".index(axis)

        def ev(c):
            L = need_launch(c, name)
            if key == "t":
                return L.get(f"t.{axis}")
            if key == "b":
                return L.get(f"b.{axis}")
            if key == "bd":
                return np.array([L.block[i]], dtype=np.int32)
            if key == "gd":
                return np.array([L.grid[i]], dtype=np.int32)
            if key == "cd":
                return np.array([L.cluster[i]], dtype=np.int32)
            b = L.get(f"b.{axis}")
            if key == "ci":
                return (b // np.int32(L.cluster[i])).astype(np.int32)
            return (b % np.int32(L.cluster[i])).astype(np.int32)  # index within the cluster

        return ev

    return compile_call


def _axis(name: str, doc: str, launch: tuple[str, str], rng, cuda, key: str) -> None:
    declare(
        name, "s", int32, device_only=True, doc=doc, nonneg=True, launch=launch, range=rng, params="axis",
        choices={0: ("x", "y", "z")}, cuda=cuda, interp=_i_axis(key),
    )  # fmt: skip


_axis(
    "cuda.thread_idx",
    "threadIdx.<axis>",
    ("idx", "block"),
    _index_in("block"),
    _c_builtin_axis("threadIdx"),
    "t",
)
_axis(
    "cuda.block_idx", "blockIdx.<axis>", ("idx", "grid"), _index_in("grid"), _c_builtin_axis("blockIdx"), "b"
)
_axis(
    "cuda.block_dim",
    "blockDim.<axis>",
    ("dim", "block"),
    _extent_of("block"),
    _c_builtin_axis("blockDim"),
    "bd",
)
_axis(
    "cuda.grid_dim", "gridDim.<axis>", ("dim", "grid"), _extent_of("grid"), _c_builtin_axis("gridDim"), "gd"
)
_axis(
    "cuda.cluster_id", "cluster index in the grid (%clusterid.<axis>)", ("idx", "cluster_grid"), _index_in("grid"),
    _c_cluster_axis("clusterid"), "ci",
)  # fmt: skip
_axis(
    "cuda.cluster_dim", "cluster shape", ("dim", "cluster"), _extent_of("cluster"),
    _c_cluster_axis("cluster_nctaid"), "cd",
)  # fmt: skip
_axis(
    "cuda.cluster_cta_id", "block index within the cluster (%cluster_ctaid.<axis>)", ("idx", "cluster"), _index_in("cluster"),
    _c_cluster_axis("cluster_ctaid"), "bic",
)  # fmt: skip

# the names tirx used before TIRx's (same ops)
alias("cuda.cluster_idx", "cuda.cluster_id", get("cuda.cluster_id"), doc="= T.cuda.cluster_id")
alias(
    "cuda.block_idx_in_cluster",
    "cuda.cluster_cta_id",
    get("cuda.cluster_cta_id"),
    doc="= T.cuda.cluster_cta_id",
)


def _i_lane_id(fc: Any, call: Any):
    import numpy as np

    from tirx.ops.semantics import need_launch

    name = call.op.name
    return lambda c: (need_launch(c, name).get("tid") % np.int32(32)).astype(np.int32)


def _i_warp_id(fc: Any, call: Any):
    import numpy as np

    from tirx.ops.semantics import need_launch

    name = call.op.name
    return lambda c: (need_launch(c, name).get("tid") // np.int32(32)).astype(np.int32)


def _c_cta_rank(cg: Any, c: Any) -> str:
    cg.need(CLUSTER)
    return "((int)tirx_sreg_cluster_ctarank())"


def _i_cta_rank(fc: Any, call: Any):
    import numpy as np

    from tirx.ops.semantics import need_launch

    name = call.op.name

    def ev(c):
        L = need_launch(c, name)
        cx, cy, _ = L.cluster
        bx, by, bz = (L.get(f"b.{a}") for a in "xyz")
        return ((bx % cx) + (by % cy) * cx + (bz % L.cluster[2]) * cx * cy).astype(np.int32)

    return ev


#: the thread's linear index in its block (warps are formed from it: lane = linear % 32)
LINEAR_TID = "((int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)))"


def linear_tid(cg: Any) -> str:
    """The linear thread index in the block, as C: ``threadIdx.x`` when the kernel's blocks are
    known to be one-dimensional, else the full form (a 16 x 2 x 2 block's lanes are not
    ``threadIdx.x % 32``)."""
    return "(int)threadIdx.x" if cg.block_is_1d() else LINEAR_TID


def warp_index(cg: Any) -> str:
    """The warp's index in the block, made warp-uniform for the compiler (lane 0's value)."""
    return f"__shfl_sync(0xffffffffu, {linear_tid(cg)} >> 5, 0)"


def block_threads(dim: Any) -> int:
    """Most threads a block of the launch ranges ``dim`` may have."""
    return dim("block.x")[1] * dim("block.y")[1] * dim("block.z")[1]


declare(
    "cuda.lane_id", "", int32, device_only=True, doc="the thread's lane in its warp (linear index % 32)",
    nonneg=True, range=(0, 31), cuda=lambda cg, c: f"({linear_tid(cg)} & 31)", interp=_i_lane_id,
)  # fmt: skip
declare(
    "cuda.warp_id", "", int32, device_only=True, doc="the warp's index in the block (linear index / 32; warp-uniform)",
    nonneg=True, range=lambda ax, dim: (0, (block_threads(dim) - 1) >> 5),
    cuda=lambda cg, c: warp_index(cg), interp=_i_warp_id,
)  # fmt: skip
declare(
    "cuda.cta_rank", "", int32, device_only=True, doc="rank of this block in its cluster", nonneg=True,
    range=lambda ax, dim: (0, dim("cluster.size")[1] - 1), cuda=_c_cta_rank, interp=_i_cta_rank,
)  # fmt: skip
declare(
    "cuda.cvta_generic_to_shared", "p", "uint32", device_only=True, shared_window=True, params="ptr",
    doc="the 32-bit shared-window address of a generic pointer to shared memory (TIRx's spelling; "
    "the PTX table converts shared-address operands to it)",
    cuda=CExpr("((unsigned)__cvta_generic_to_shared({0}))"),
    interp=NoInterp("raw shared-window addresses are not modelled"),
)  # fmt: skip


# --------------------------------------------------------------------------- barriers
def _i_cta_sync(fc: Any, call: Any):
    from tirx.ops.semantics import block_barrier

    zero = _zero()
    what = f"T.{call.op.name}"

    def ev(c):
        block_barrier(c, what)
        return zero

    return ev


def _i_cluster_sync(fc: Any, call: Any):
    from tirx.ops.semantics import block_barrier, need_launch

    zero = _zero()
    name = call.op.name

    def ev(c):
        need_launch(c, name)
        block_barrier(c, f"T.{name}")  # every block of a chunk runs in lockstep
        return zero

    return ev


def _i_in_launch(fc: Any, call: Any):
    """No effect on a lockstep CPU run, but only inside a launch (fences, hints)."""
    from tirx.ops.semantics import need_launch

    zero = _zero()
    name = call.op.name

    def ev(c):
        need_launch(c, name)
        return zero

    return ev


def _i_nothing(fc: Any, call: Any):
    zero = _zero()
    return lambda c: zero


declare(
    "cuda.cta_sync", "", void, pure=False, device_only=True, doc="__syncthreads()", convergent=True,
    cuda=CExpr("__syncthreads()"), interp=_i_cta_sync,
)  # fmt: skip
declare(
    "cuda.warp_sync", "", void, pure=False, device_only=True, doc="__syncwarp()", convergent=True,
    cuda=CExpr("__syncwarp()"), interp=_i_in_launch,
)  # fmt: skip
declare(
    "cuda.cluster_sync", "", void, pure=False, device_only=True, doc="cluster-wide barrier", convergent=True,
    cuda=CExpr("tirx_cluster_sync()", helpers=(CLUSTER,)), interp=_i_cluster_sync,
)  # fmt: skip
_FENCE_SCOPE = {"cta": "__threadfence_block()", "gpu": "__threadfence()", "sys": "__threadfence_system()"}


def _c_thread_fence(cg: Any, c: Any) -> str:
    return _FENCE_SCOPE[c.args[0].value] if c.args else "__threadfence()"


declare(
    "cuda.thread_fence", "s?", void, params="scope", choices={0: tuple(_FENCE_SCOPE)}, pure=False,
    device_only=True, doc='__threadfence() (TIRx\'s name); `scope` "cta" / "gpu" / "sys": '
    "__threadfence_block / __threadfence / __threadfence_system (TIRx takes the scope and emits __threadfence)",
    cuda=_c_thread_fence, interp=_i_nothing,
)  # fmt: skip


# --------------------------------------------------------------------------- warp shuffles
def _c_shfl(fn: str):
    def lower(cg: Any, c: Any) -> str:
        v, lane = c.args
        t = v.ty
        if not isinstance(t, PrimType) or t.lanes != 1:
            raise OpError(f"op T.{c.op.name}: the cuda backend shuffles scalars only, got {t}")
        if t.is_bool or (t.is_int and t.bits < 32):
            return f"(({cg.c_scalar(t.base)}){fn}(0xffffffffu, (int){cg.wrap(v, 15)}, {cg.expr(lane)}))"
        return f"{fn}(0xffffffffu, {cg.expr(v)}, {cg.expr(lane)})"

    return lower


def _src_check(c, src, what):
    """``src``: source lane per lane. Inactive source lanes are an error."""
    import numpy as np

    from tirx.ops.semantics import InterpError

    if c.count != c.N:
        bad = c.mask & ~c.mask[src]
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise InterpError(
                f"T.{what}: {c.describe(k)} reads from {c.describe(int(src[k]))}, which is not active "
                "(warp shuffles need every source lane converged)"
            )


def _i_shfl(mode: str):
    def compile_call(fc: Any, call: Any):
        import numpy as np

        from tirx.ops.semantics import need_launch

        name = call.op.name
        fv, fl = fc.expr(call.args[0]), fc.expr(call.args[1])

        def ev(c):
            L = need_launch(c, name)
            v, a = fv(c), fl(c)
            tid = L.get("tid")
            lane = tid % 32
            base = L.get("lane") - lane
            a = a.astype(np.int64) & 31  # shfl reads the low 5 bits of lane/delta/mask (PTX)
            if mode == "idx":
                s = a % 32
            elif mode == "xor":
                s = lane ^ a
            elif mode == "down":
                s = lane + a
            else:
                s = lane - a
            ok = (s >= 0) & (s < 32) & ((tid - lane + s) < L.T)
            src = np.where(ok, base + s, L.get("lane"))
            _src_check(c, src, name)
            if v.shape[0] == 1:
                return v
            return v[src]

        return ev

    return compile_call


for _n, _fn, _mode, _d in (
    ("cuda.shfl_sync", "__shfl_sync", "idx", "value from lane"),
    ("cuda.shfl_xor_sync", "__shfl_xor_sync", "xor", "value from lane ^ mask"),
    ("cuda.shfl_down_sync", "__shfl_down_sync", "down", "value from lane + delta"),
    ("cuda.shfl_up_sync", "__shfl_up_sync", "up", "value from lane - delta"),
):  # full mask, width 32: value, lane/offset
    declare(
        _n, "x i", "arg0", pure=False, device_only=True, doc=_d, convergent=True,
        cuda=_c_shfl(_fn), interp=_i_shfl(_mode),
    )  # fmt: skip


# --------------------------------------------------------------------------- warp reductions
def _reduce_args(call: Any, error: Any) -> tuple[str, int]:
    """``T.cuda.warp_reduce(value, op, width)``: the reduction and the lane-group width."""
    k, w = call.args[1], call.args[2]
    if not isinstance(k, StringImm) or k.value not in ("sum", "max", "min"):
        raise error(f'T.{call.op.name}: op must be "sum", "max" or "min"')
    if not isinstance(w, IntImm) or w.value not in (2, 4, 8, 16, 32):
        raise error(f"T.{call.op.name}: width must be an integer literal 2, 4, 8, 16 or 32")
    return k.value, w.value


def _i_warp_reduce():
    """Interpreter semantics of ``warp_reduce``'s butterfly reduction."""

    def compile_call(fc: Any, call: Any):
        import numpy as np

        from tirx.ops.semantics import InterpError, full, need_launch
        from tirx.ops.semantics import dtypes as D

        name = call.op.name
        how, width = _reduce_args(call, OpError)
        fv = fc.expr(call.args[0])
        t = call.ty
        is_f = t.is_float
        bf = D.needs_rounding(t.element)
        op: Callable[[Any, Any], Any]
        if how == "sum":
            op = np.add
        elif how == "max":
            op = D.fmax if is_f else np.maximum
        else:
            op = D.fmin if is_f else np.minimum

        def ev(c):
            L = need_launch(c, name)
            v = full(fv(c), c.N)
            if L.T % 32:
                raise InterpError(f"T.{name} in a block of {L.T} threads: the last warp is partial")
            lane_g = L.get("lane")
            lane = L.get("tid") % 32
            off = width // 2
            while off:
                src = lane_g - lane + (lane ^ off)
                if off == width // 2:
                    _src_check(c, src, name)
                v = op(v, v[src])
                if bf:
                    v = D.round_to(v, t.element)
                off //= 2
            return v

        return ev

    return compile_call


WARP_REDUCE_W = Helper(
    "tirx_warp_reduce_w",
    """\
// reductions over lane groups of W (a power of two <= 32) lanes of a warp
template <int W, typename T> __device__ __forceinline__ T tirx_warp_reduce_sum(T x) {
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) { T y = __shfl_xor_sync(0xffffffffu, x, o); x = x + y; }
  return x;
}
template <int W, typename T> __device__ __forceinline__ T tirx_warp_reduce_max(T x) {
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) { T y = __shfl_xor_sync(0xffffffffu, x, o); x = tirx_max2(x, y); }
  return x;
}
template <int W, typename T> __device__ __forceinline__ T tirx_warp_reduce_min(T x) {
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) { T y = __shfl_xor_sync(0xffffffffu, x, o); x = tirx_min2(x, y); }
  return x;
}""",
    deps=(MAX2,),
)


def _c_warp_reduce_w(cg: Any, c: Any) -> str:
    t = c.args[0].ty
    if not isinstance(t, PrimType) or t.lanes != 1 or t.is_bool:
        raise OpError(f"op T.{c.op.name}: the cuda backend reduces numeric scalars only, got {t}")
    how, width = _reduce_args(c, lambda m: cg.error(m, c))
    cg.need(WARP_REDUCE_W)
    return f"tirx_warp_reduce_{how}<{width}>({cg.expr(c.args[0])})"


declare(
    "cuda.warp_reduce", "x s n?", "arg0", pure=False, device_only=True,
    doc='butterfly reduction ("sum" | "max" | "min") over groups of `width` lanes (every lane gets its group\'s)',
    convergent=True, params="value op width", defaults={2: 32}, choices={1: ("sum", "max", "min"), 2: (2, 4, 8, 16, 32)},
    cuda=_c_warp_reduce_w, interp=_i_warp_reduce(),
)  # fmt: skip


def _warp_alias(how: str) -> Any:
    op = get("cuda.warp_reduce")

    def build(value: Any, width: Any = 32, *, span: Any = None) -> Any:
        return op(value, how, IntImm(width, int32) if type(width) is int else width, span=span)

    return build


for _k in ("sum", "max", "min"):  # TIRx builds (and prints) these as warp_reduce(x, "<op>", width)
    alias(f"cuda.warp_{_k}", "cuda.warp_reduce", _warp_alias(_k),
          f"{_k} over groups of `width` lanes of a warp (default 32; every lane gets its group's)")  # fmt: skip


# --------------------------------------------------------------------------- block reductions
CTA_REDUCE = Helper(
    "tirx_cta_reduce",
    """\
// CTA-wide reduction of NW warps: each warp reduces (butterfly), lane 0 of warp w writes
// s[w], warp 0 reduces the NW partials and writes s[0], every thread reads it
#define TIRX_CTA_REDUCE(HOW)                                                                          \\
  template <int NW, typename T> __device__ __forceinline__ T tirx_cta_reduce_##HOW(T v, T* s) {       \\
    v = tirx_warp_reduce_##HOW<32>(v);                                                               \\
    int t = (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));               \\
    if ((t & 31) == 0) s[t >> 5] = v;                                                                \\
    __syncthreads();                                                                                 \\
    if ((t >> 5) == 0) {                                                                             \\
      T w = s[(t & 31) < NW ? (t & 31) : 0];                                                         \\
      w = tirx_warp_reduce_##HOW<NW>(w);                                                             \\
      if (t == 0) s[0] = w;                                                                          \\
    }                                                                                                \\
    __syncthreads();                                                                                 \\
    T r = s[0];                                                                                      \\
    __syncthreads();                                                                                 \\
    return r;                                                                                        \\
  }
TIRX_CTA_REDUCE(sum)
TIRX_CTA_REDUCE(max)
TIRX_CTA_REDUCE(min)""",
    deps=(WARP_REDUCE_W,),
)


def _cta_args(call: Any, error: Any) -> tuple[str, int]:
    k, nw = call.args[1], call.args[2]
    if not isinstance(k, StringImm) or k.value not in ("sum", "max", "min"):
        raise error(f'T.{call.op.name}: op must be "sum", "max" or "min"')
    if not isinstance(nw, IntImm) or nw.value not in (1, 2, 4, 8, 16, 32):
        raise error(f"T.{call.op.name}: num_warps must be an integer literal 1, 2, 4, 8, 16 or 32")
    return k.value, nw.value


def _c_cta_reduce(cg: Any, c: Any) -> str:
    t, sp = c.args[0].ty, c.args[3].ty
    if not isinstance(t, PrimType) or t.lanes != 1 or t.is_bool:
        raise cg.error(f"T.{c.op.name}: reduces numeric scalars only, got {t}", c)
    if getattr(sp, "element", None) != t or not str(getattr(sp, "scope", "")).startswith("shared"):
        raise cg.error(
            f"T.{c.op.name}: scratch must be shared memory of the value's dtype ({t}), got {sp}", c
        )
    how, nw = _cta_args(c, lambda m: cg.error(m, c))
    cg.need(CTA_REDUCE)
    return f"tirx_cta_reduce_{how}<{nw}>({cg.expr(c.args[0])}, {cg.expr(c.args[3])})"


def _i_cta_reduce(fc: Any, call: Any):
    """The CUDA helper's order exactly: a butterfly in each warp, lane 0's values, a butterfly
    over the first ``num_warps`` partials; three block barriers. The interpreter does not write
    ``scratch`` (its contents after the call are the helper's business)."""
    import numpy as np

    from tirx.ops.semantics import InterpError, block_barrier, full, need_launch
    from tirx.ops.semantics import dtypes as D

    name = call.op.name
    how, nw = _cta_args(call, OpError)
    fv = fc.expr(call.args[0])
    fc.expr(call.args[3])
    t = call.ty
    bf = D.needs_rounding(t.element)
    op = np.add if how == "sum" else (D.fmax if t.is_float else np.maximum) if how == "max" else (
        D.fmin if t.is_float else np.minimum)  # fmt: skip

    def rnd(v):
        return D.round_to(v, t.element) if bf else v

    def ev(c):
        L = need_launch(c, name)
        if 32 * nw != L.T:
            raise InterpError(
                f"T.{name}: num_warps is {nw} but the block has {L.T} threads ({L.T / 32:g} warps)"
            )
        for _ in range(3):
            block_barrier(c, f"T.{name}")
        v = full(fv(c), c.N).reshape(L.nb, nw, 32)
        lane = np.arange(32)
        off = 16
        while off:
            v = rnd(op(v, v[:, :, lane ^ off]))
            off //= 2
        w = v[:, :, 0]  # [blocks, warps]: lane 0 of each warp
        j = np.arange(nw)
        off = nw // 2
        while off:
            w = rnd(op(w, w[:, j ^ off]))
            off //= 2
        return np.repeat(w[:, 0], L.T)

    return ev


declare(
    "cuda.cta_reduce", "x s n p", "arg0", pure=False, device_only=True, convergent=True,
    params="value op num_warps scratch", choices={1: ("sum", "max", "min"), 2: (1, 2, 4, 8, 16, 32)},
    doc="block-wide reduction (warp butterflies, then warp 0 over num_warps partials in shared `scratch`); "
    "every thread gets the result",
    cuda=_c_cta_reduce, interp=_i_cta_reduce,
)  # fmt: skip


def _cta_alias(how: str) -> Any:
    op = get("cuda.cta_reduce")

    def build(value: Any, num_warps: Any, scratch: Any, span: Any = None) -> Any:
        return op(value, how, num_warps, scratch, span=span)

    return build


for _k in ("sum", "max", "min"):  # TIRx's convenience wrappers of cta_reduce
    alias(
        f"cuda.cta_{_k}",
        "cuda.cta_reduce",
        _cta_alias(_k),
        doc=f'= T.cuda.cta_reduce(value, "{_k}", num_warps, scratch)',
    )


# --------------------------------------------------------------------------- atomics
_ATOMIC_TYPES = {
    "add": ("int32", "uint32", "uint64", "float32", "float64", "float16", "bfloat16"),
    "max": ("int32", "uint32", "uint64", "int64", "float32"),
    "min": ("int32", "uint32", "uint64", "int64", "float32"),
    "exch": ("int32", "uint32", "uint64", "float32"),
    "cas": ("int32", "uint32", "uint64", "uint16"),
}


def _same_width_ints(a: Any, b: Any) -> bool:
    return (
        isinstance(a, PrimType) and isinstance(b, PrimType) and a.is_int and b.is_int
        and a.bits == b.bits and a.lanes == b.lanes == 1
    )  # fmt: skip


#: the vector values an atomic add takes through a pointer to their first element (TIRx's
#: ``T.cuda.atomic_add(T.address_of(A[i, T.ramp(j, 1, 2)]), v)``): the packed forms every
#: memory space has (``atom.add.noftz.f16x2`` / ``.bf16x2``), one atomic for both lanes
_ATOMIC_PAIRS = {("float16", 2), ("bfloat16", 2)}


def _c_atomic(kind: str):
    def lower(cg: Any, c: Any) -> str:
        p, v = c.args[0], c.args[1]
        t = v.ty
        el = p.ty.element
        ps, vs = cg.expr(p), cg.expr(v)
        if kind == "add" and (t.base, t.lanes) in _ATOMIC_PAIRS and el == t.with_lanes(1):
            return f"atomicAdd(({cg.ctype(t)}*)({ps}), {vs})"
        if el != t:
            # an add / exchange / compare-and-swap of the other signedness of the element's width
            # is the same bit operation (TIRx's `atomic_add(&count[0], T.popcount(mask))`): done in
            # the element's type, the old value read back as the value's
            if not (kind in ("add", "exch", "cas") and _same_width_ints(el, t)):
                raise cg.error(f"T.{c.op.name}: pointer element {el} differs from value dtype {t}", c)
            same = attrs.evolve(c, args=(p, *(Cast(el, a) for a in c.args[1:])))
            return f"(({cg.ctype(t)}){lower(cg, same)})"
        if kind == "add" and t.base == "int64":
            cg.need(ATOMICS)
            return f"tirx_atomic_add({ps}, {vs})"
        if t.base not in _ATOMIC_TYPES[kind]:
            raise OpError(f"op T.{c.op.name}: the cuda backend has no {t} form")
        if kind == "add":
            return f"atomicAdd({ps}, {vs})"
        if kind in ("max", "min"):
            cg.need(ATOMICS)
            return f"tirx_atomic_{kind}({ps}, {vs})"
        if kind == "exch":
            return f"atomicExch({ps}, {vs})"
        return f"atomicCAS({ps}, {vs}, {cg.expr(c.args[2])})"

    return lower


def _i_atomic(kind: str, want_old: bool):
    """Interpreter semantics of an atomic: lanes apply in lane order; ``want_old`` False
    (the value unused) lets distinct-free adds/max/min go through numpy's ``ufunc.at``."""

    def compile_call(fc: Any, call: Any):
        import numpy as np

        from tirx.ops import semantics as S

        D = S.dtypes
        fp = fc.expr(call.args[0])
        fvs = [fc.expr(a) for a in call.args[1:]]
        t: PrimType = call.args[1].ty
        pair = t.lanes if kind == "add" and (t.base, t.lanes) in _ATOMIC_PAIRS else 1
        t = t.with_lanes(1) if pair > 1 else t  # a pair: two adds of its element, in lane order
        name = call.op.name
        races = fc.prog.check_races
        is_f = t.is_float
        if t.base not in _ATOMIC_TYPES[kind] and not (kind == "add" and t.base == "int64"):
            raise OpError(f"op T.{name}: no {t} form (the dtypes of the cuda backend)")

        # atom.add.f32 flushes subnormal inputs and results to sign-preserving zero (PTX ISA);
        # the f16/bf16 (.noftz) and f64 forms do not
        ftz = kind == "add" and t.base == "float32"

        def flush(x):
            return np.where(np.abs(x) < np.float32(1.1754944e-38), np.copysign(np.float32(0), x), x)

        def apply(old, v, cmp=None):
            if ftz:
                return flush(D.round_to(flush(old) + flush(v), t))
            if kind == "add":
                return D.round_to(old + v, t)
            if kind == "max":
                return D.fmax(old, v) if is_f else np.maximum(old, v)
            if kind == "min":
                return D.fmin(old, v) if is_f else np.minimum(old, v)
            if kind == "exch":
                return v
            return np.where(old == cmp, v, old)

        def ev(c):
            p = fp(c)
            if not isinstance(p, S.PtrVal):
                addr = find(takes_address=True).name
                raise S.InterpError(f"T.{name}: the first argument must be a pointer (T.{addr}(A[i]))")
            vals = [S.full(f(c), c.N) for f in fvs]
            if pair == 1:
                return one(c, p, vals)
            # the pair's two elements from the first lane's address on (a pointer to a ramp's
            # element, T.address_of(A[T.ramp(j, s, 2)]), is its first lane's, whatever the stride)
            size, off = D.storage_np(t).itemsize, p.off
            off = off[:, 0] if getattr(off, "ndim", 0) == 2 else off
            offs = [off + i * size for i in range(pair)]
            olds = [one(c, S.PtrVal(p.mem, o, p.rank), [v[:, i] for v in vals]) for i, o in enumerate(offs)]
            return np.stack(olds, axis=1)

        def one(c, p, vals):
            mem = p.mem
            view = mem.view(t)
            row = view.shape[1]
            itemsize = D.storage_np(t).itemsize
            off = p.off
            flat = np.full(1, off // itemsize, dtype=np.int64) if isinstance(off, int) else (off // itemsize)
            flat = S.full(flat, c.N)
            m = c.mask
            bad = ((flat < 0) | (flat >= row)) & m
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                raise S.OutOfBoundsError(
                    f"T.{name}: out-of-bounds atomic on {mem.kind} buffer {mem.name} at element {int(flat[k])} "
                    f"by {c.describe(k)}"
                )
            if mem.per == S.GLOBAL:
                units = 0
            elif mem.per == S.BLOCK:
                units = c.launch.get("bl").astype(np.int64) * row
            else:
                units = (c.lanes_arr() if view.shape[0] == c.N else 0) * row
            full = flat + units
            act = np.flatnonzero(m)
            idx = full[act]
            vs = [v[act] for v in vals]
            v1 = view.reshape(-1)
            if races and mem.per == S.BLOCK and c.launch is not None:
                wst, _rst = S.race_arrays(mem, t)
                unw = wst[idx] < 0
                if unw.any():
                    k = int(np.flatnonzero(unw)[0])
                    raise S.RaceError(
                        f"T.{name} on shared buffer {mem.name} at element {int(flat[act[k]])} that no thread "
                        f"wrote, by {c.describe(act[k])}"
                    )
            old = np.zeros(len(idx), dtype=D.value_np(t))
            uniq = len(idx) <= 1 or np.unique(idx).size == len(idx)
            if uniq:
                o = D.from_storage(v1[idx], t)
                old[:] = o
                v1[idx] = D.to_storage(apply(o, *vs) if kind != "cas" else apply(o, vs[1], vs[0]), t)
            elif kind == "add" and not is_f:
                order = np.argsort(idx, kind="stable")
                si, sv = idx[order], vs[0][order]
                cs = np.cumsum(sv, dtype=sv.dtype)
                excl = cs - sv
                start = np.ones(len(si), dtype=bool)
                start[1:] = si[1:] != si[:-1]
                gid = np.cumsum(start) - 1
                base = excl[start][gid]
                before = (excl - base).astype(sv.dtype)
                o = v1[si] + before
                res = np.empty_like(o)
                res[order] = o
                old[:] = res
                np.add.at(v1, idx, vs[0])
            elif kind in ("add", "max", "min") and not want_old and not D.needs_rounding(t) and not ftz:
                ufunc = {
                    "add": np.add,
                    "max": np.fmax if is_f else np.maximum,
                    "min": np.fmin if is_f else np.minimum,
                }[kind]
                ufunc.at(v1, idx, vs[0].astype(v1.dtype))
            else:  # serial in lane order
                for j in range(len(idx)):
                    o = D.from_storage(v1[idx[j : j + 1]], t)
                    old[j] = o[0]
                    args = [v[j : j + 1] for v in vs]
                    nv = apply(o, *args) if kind != "cas" else apply(o, args[1], args[0])
                    v1[idx[j : j + 1]] = D.to_storage(nv, t)
            if races and mem.per == S.BLOCK and c.launch is not None:
                wst[idx] = c.launch.epoch[c.launch.get("bl")[act]] * S.TAG_BASE + S.ATOMIC_TAG
            out = np.zeros(c.N, dtype=D.value_np(t))
            out[act] = old
            return out

        return ev

    return compile_call


# atomics on a pointer to an element (T.address_of(A[i])); return the old value
for _k in ("add", "max", "min", "exch"):
    declare(
        f"cuda.atomic_{_k}", "p x", lambda a: a[1].ty, pure=False, device_only=True, params="res_addr value",
        doc=f"atomic {_k}: read-modify-write; returns the old value", atomic=0,
        cuda=_c_atomic(_k), interp=_i_atomic(_k, True), interp_stmt=_i_atomic(_k, False),
    )  # fmt: skip
# TIRx's T.atomic_add (its own op next to T.cuda.atomic_add; both print as written)
declare(
    "atomic_add", "p x", lambda a: a[1].ty, pure=False, device_only=True, params="ptr value",
    doc="atomic add through a pointer to an element; returns the old value", atomic=0,
    cuda=_c_atomic("add"), interp=_i_atomic("add", True), interp_stmt=_i_atomic("add", False),
)  # fmt: skip
declare(
    "cuda.atomic_cas", "p x x", lambda a: a[1].ty, pure=False, device_only=True, params="ptr old_val new_val",
    doc="atomic compare-and-swap (ptr, compare, value); returns the old value", atomic=0,
    cuda=_c_atomic("cas"), interp=_i_atomic("cas", True), interp_stmt=_i_atomic("cas", False),
)  # fmt: skip
