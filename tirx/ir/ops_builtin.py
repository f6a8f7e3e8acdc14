"""Declarations of the built-in ops (math, pointers, CUDA thread model, PTX).

This file is the op table's content; nothing else lists ops. Backends attach
handlers by name with ``tirx.ir.op.register_handler``.
"""

from __future__ import annotations

from .expr import BufferLoad
from .op import declare
from .types import PointerType, PrimType, bool_, int32, uint32, uint64, void

# ---------------------------------------------------------------- math (pure, arg0-typed)
for _n in (
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "tanh", "sin", "cos",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "erf", "sigmoid", "fabs", "abs", "floor", "ceil",
    "round", "trunc", "nearbyint",
):  # fmt: skip
    declare(_n, "x", "arg0", doc=f"elementwise {_n}")
declare("pow", "x x", "arg0")
declare("atan2", "x x", "arg0")
declare("fmod", "x x", "arg0")
declare("fma", "x x x", "arg0", doc="fused multiply-add a*b+c")
declare("isnan", "x", "bool0")
declare("isinf", "x", "bool0")
declare("isfinite", "x", "bool0")
declare("popcount", "i", "arg0")
declare("clz", "i", "arg0")
declare("if_then_else", "b x x", lambda a: a[1].ty, doc="lazy select: only the taken arm is evaluated")


# ---------------------------------------------------------------- pointers and bits
def _address_of(args):
    a = args[0]
    if not isinstance(a, BufferLoad):
        raise TypeError("T.address_of takes a buffer element, e.g. T.address_of(A[i])")
    return PointerType(a.buffer.dtype, a.buffer.scope)


declare("address_of", "x", _address_of, doc="pointer to a buffer element, typed as the buffer's dtype")
declare("reinterpret", "x", "ty", doc="reinterpret the bits (or pointer) as ty")
declare("call_extern", "s *x?", "ty", pure=False, doc="call an external C/CUDA function by name")
declare("call_pure_extern", "s *x?", "ty", doc="call an external side-effect-free function by name")
declare("ptr_byte_offset", "p i", "arg0", doc="advance a pointer by a byte offset, keeping its type")


# ---------------------------------------------------------------- CUDA thread model
def _axis(name: str, doc: str):
    declare(name, "s", int32, device_only=True, doc=doc)


_axis("cuda.thread_idx", "threadIdx.<axis>")
_axis("cuda.block_idx", "blockIdx.<axis>")
_axis("cuda.block_dim", "blockDim.<axis>")
_axis("cuda.grid_dim", "gridDim.<axis>")
_axis("cuda.cluster_idx", "cluster index in the grid")
_axis("cuda.cluster_dim", "cluster shape")
_axis("cuda.block_idx_in_cluster", "block index within the cluster")
declare("cuda.lane_id", "", int32, device_only=True, doc="threadIdx.x % 32")
declare("cuda.warp_id", "", int32, device_only=True, doc="threadIdx.x / 32 (warp-uniform)")
declare("cuda.cta_rank", "", int32, device_only=True, doc="rank of this block in its cluster")
declare("cuda.cta_sync", "", void, pure=False, device_only=True, doc="__syncthreads()")
declare("cuda.warp_sync", "", void, pure=False, device_only=True, doc="__syncwarp()")
declare("cuda.cluster_sync", "", void, pure=False, device_only=True, doc="cluster-wide barrier")
declare("cuda.threadfence", "", void, pure=False, device_only=True, doc="__threadfence()")

# warp-level data exchange (full mask, width 32): value, lane/offset
for _n, _d in (
    ("cuda.shfl_sync", "value from lane"),
    ("cuda.shfl_xor_sync", "value from lane ^ mask"),
    ("cuda.shfl_down_sync", "value from lane + delta"),
    ("cuda.shfl_up_sync", "value from lane - delta"),
):
    declare(_n, "x i", "arg0", pure=False, device_only=True, doc=_d)
for _n in ("cuda.warp_sum", "cuda.warp_max", "cuda.warp_min"):
    declare(_n, "x", "arg0", pure=False, device_only=True, doc="reduction over the 32 lanes of a warp")

# atomics on a pointer to an element (T.address_of(A[i])); return the old value
for _n in ("cuda.atomic_add", "cuda.atomic_max", "cuda.atomic_min", "cuda.atomic_exch"):
    declare(
        _n,
        "p x",
        lambda a: a[1].ty,
        pure=False,
        device_only=True,
        doc="atomic read-modify-write; returns the old value",
    )
declare("cuda.atomic_cas", "p x x", lambda a: a[1].ty, pure=False, device_only=True)


# ---------------------------------------------------------------- PTX
def _mapped_ptr(args):
    t = args[0].ty
    return t if isinstance(t, PointerType) else uint64


declare(
    "ptx.map_shared_rank",
    "x i",
    uint64,
    pure=True,
    device_only=True,
    doc="mapa: the address of the same shared location in CTA `rank` of the cluster (raw uint64)",
)
declare("ptx.mapa", "x i", _mapped_ptr, device_only=True, doc="mapa.shared::cluster in its printed positional form")
declare(
    "ptx.asm",
    "s *x?",
    "ty",
    pure=False,
    device_only=True,
    doc="generic inline PTX: template string then operands; any new instruction needs no new op",
)
declare("ptx.cvta_to_shared", "p", uint32, device_only=True, doc="32-bit shared-window address of a pointer")

_ = (PrimType, bool_)
