"""Declarations of the built-in ops (math, pointers, CUDA thread model, PTX).

This file is the op table's content; nothing else lists ops. Backends attach
handlers by name with ``tirx.ir.op.register_handler``.
"""

from __future__ import annotations

from .expr import BufferLoad
from .op import _mark_builtin, declare
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
# extra={"nonneg": True} (kept for handlers reading it) also sets the ``nonneg`` trait
NONNEG = {"nonneg": True}
declare("popcount", "i", "arg0", extra=NONNEG)
declare("clz", "i", "arg0", extra=NONNEG)
declare(
    "if_then_else",
    "b x x",
    lambda a: a[1].ty,
    doc="lazy select: only the taken arm is evaluated",
    select=True,
    lazy_args=(1, 2),
    pointer_from=(1, 2),
)


# ---------------------------------------------------------------- pointers and bits
def _address_of(args):
    a = args[0]
    if not isinstance(a, BufferLoad):
        raise TypeError("T.address_of takes a buffer element, e.g. T.address_of(A[i])")
    return PointerType(a.buffer.dtype, a.buffer.scope)


declare(
    "address_of",
    "x",
    _address_of,
    doc="pointer to a buffer element, typed as the buffer's dtype",
    takes_address=True,
)
declare("reinterpret", "x", "ty", doc="reinterpret the bits (or pointer) as ty", bitcast=True)
declare("call_extern", "s *x?", "ty", pure=False, doc="call an external C/CUDA function by name")
declare("call_pure_extern", "s *x?", "ty", doc="call an external side-effect-free function by name")
declare(
    "ptr_byte_offset",
    "p i",
    "arg0",
    doc="advance a pointer by a byte offset, keeping its type",
    pointer_from=(0,),
)
declare(
    "is_aligned",
    "p n",
    bool_,
    doc="whether a pointer's address is a multiple of n bytes (chooses a vector path at run time)",
)


# ---------------------------------------------------------------- CUDA thread model
# ``range(axis, dim)``: value range from the launch dimension ranges ``dim("block.x")`` etc.
def _index_in(scope: str):
    return lambda ax, dim: (0, dim(f"{scope}.{ax}")[1] - 1)


def _extent_of(scope: str):
    return lambda ax, dim: tuple(dim(f"{scope}.{ax}"))


def _axis(name: str, doc: str, launch: tuple[str, str], rng):
    declare(name, "s", int32, device_only=True, doc=doc, extra=NONNEG, launch=launch, range=rng)


_axis("cuda.thread_idx", "threadIdx.<axis>", ("idx", "block"), _index_in("block"))
_axis("cuda.block_idx", "blockIdx.<axis>", ("idx", "grid"), _index_in("grid"))
_axis("cuda.block_dim", "blockDim.<axis>", ("dim", "block"), _extent_of("block"))
_axis("cuda.grid_dim", "gridDim.<axis>", ("dim", "grid"), _extent_of("grid"))
_axis("cuda.cluster_idx", "cluster index in the grid", ("idx", "cluster_grid"), _index_in("grid"))
_axis("cuda.cluster_dim", "cluster shape", ("dim", "cluster"), _extent_of("cluster"))
_axis("cuda.block_idx_in_cluster", "block index within the cluster", ("idx", "cluster"), _index_in("cluster"))
declare("cuda.lane_id", "", int32, device_only=True, doc="threadIdx.x % 32", extra=NONNEG, range=(0, 31))
declare(
    "cuda.warp_id", "", int32, device_only=True, doc="threadIdx.x / 32 (warp-uniform)", extra=NONNEG,
    range=lambda ax, dim: (0, (dim("block.x")[1] - 1) >> 5),
)  # fmt: skip
declare(
    "cuda.cta_rank", "", int32, device_only=True, doc="rank of this block in its cluster", extra=NONNEG,
    range=lambda ax, dim: (0, dim("cluster.size")[1] - 1),
)  # fmt: skip
declare("cuda.cta_sync", "", void, pure=False, device_only=True, doc="__syncthreads()", convergent=True)
declare("cuda.warp_sync", "", void, pure=False, device_only=True, doc="__syncwarp()", convergent=True)
declare(
    "cuda.cluster_sync", "", void, pure=False, device_only=True, doc="cluster-wide barrier", convergent=True
)
declare("cuda.threadfence", "", void, pure=False, device_only=True, doc="__threadfence()")

# warp-level data exchange (full mask, width 32): value, lane/offset
for _n, _d in (
    ("cuda.shfl_sync", "value from lane"),
    ("cuda.shfl_xor_sync", "value from lane ^ mask"),
    ("cuda.shfl_down_sync", "value from lane + delta"),
    ("cuda.shfl_up_sync", "value from lane - delta"),
):
    declare(_n, "x i", "arg0", pure=False, device_only=True, doc=_d, convergent=True)
for _n in ("cuda.warp_sum", "cuda.warp_max", "cuda.warp_min"):
    declare(
        _n,
        "x",
        "arg0",
        pure=False,
        device_only=True,
        doc="reduction over the 32 lanes of a warp",
        convergent=True,
    )

# atomics on a pointer to an element (T.address_of(A[i])); return the old value
for _n in ("cuda.atomic_add", "cuda.atomic_max", "cuda.atomic_min", "cuda.atomic_exch"):
    declare(
        _n,
        "p x",
        lambda a: a[1].ty,
        pure=False,
        device_only=True,
        doc="atomic read-modify-write; returns the old value",
        atomic=0,
    )
declare("cuda.atomic_cas", "p x x", lambda a: a[1].ty, pure=False, device_only=True, atomic=0)


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
declare(
    "ptx.mapa",
    "x i",
    _mapped_ptr,
    device_only=True,
    doc="mapa.shared::cluster in its printed positional form",
    pointer_from=(0,),
)
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


# ---------------------------------------------------------------- typed PTX (template-driven)
# Each op below is one declaration: ``extra["ptx"]`` is an inline-PTX template in the
# language of ``T.ptx.asm`` ({i} operand, {i:smem} shared address, {i:imm} literal,
# {out} result; see tirx/codegen/ops_cuda.py). Backends need no per-op code.
def _ptx(name: str, args: str, result, template: str, doc: str, pure: bool = False):
    declare(name, args, result, pure=pure, device_only=True, doc=doc, extra={"ptx": template})


_ptx(
    "ptx.mbarrier_init",
    "p i",
    void,
    "mbarrier.init.shared::cta.b64 [{0:smem}], {1};",
    "init an mbarrier with an arrival count",
)
_ptx(
    "ptx.mbarrier_arrive",
    "p",
    uint64,
    "mbarrier.arrive.shared::cta.b64 {out}, [{0:smem}];",
    "arrive; returns the state",
)
_ptx(
    "ptx.mbarrier_arrive_expect_tx", "p i", uint64,
    "mbarrier.arrive.expect_tx.shared::cta.b64 {out}, [{0:smem}], {1};", "arrive and expect tx bytes",
)  # fmt: skip
_ptx(
    "ptx.mbarrier_expect_tx",
    "p i",
    void,
    "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{0:smem}], {1};",
    "expect tx bytes",
)
_ptx(
    "ptx.mbarrier_try_wait_parity", "p i", bool_,
    "{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [{0:smem}], {1}; selp.u32 {out}, 1, 0, p; }}",
    "try to wait for the phase with the given parity; true when it completed",
)  # fmt: skip
_ptx(
    "ptx.fence_proxy_async",
    "",
    void,
    "fence.proxy.async.shared::cta;",
    "order generic-proxy smem writes before async-proxy reads",
)
_ptx(
    "ptx.fence_mbarrier_init",
    "",
    void,
    "fence.mbarrier_init.release.cluster;",
    "make mbarrier inits visible to the cluster",
)
_ptx("ptx.wgmma_fence", "", void, "wgmma.fence.sync.aligned;", "wgmma.fence")
_ptx("ptx.wgmma_commit_group", "", void, "wgmma.commit_group.sync.aligned;", "wgmma.commit_group")
_ptx("ptx.wgmma_wait_group", "n", void, "wgmma.wait_group.sync.aligned {0:imm};", "wgmma.wait_group N")
_ptx(
    "ptx.setmaxnreg_inc",
    "n",
    void,
    "setmaxnreg.inc.sync.aligned.u32 {0:imm};",
    "raise the warpgroup's register cap",
)
_ptx(
    "ptx.setmaxnreg_dec",
    "n",
    void,
    "setmaxnreg.dec.sync.aligned.u32 {0:imm};",
    "lower the warpgroup's register cap",
)
_ptx(
    "ptx.elect_sync", "", bool_, "{{ .reg .pred p; elect.sync _|p, 0xffffffff; selp.u32 {out}, 1, 0, p; }}",
    "true in exactly one lane of the warp",
)  # fmt: skip

# ---------------------------------------------------------------- Hopper: TMA and wgmma (issue 8)
# Template ops (no handler code): TMA copies address shared memory by 32-bit shared-window
# addresses (``T.ptx.cvta_to_shared``), so kernels can align their tiles at run time.
_ptx(
    "ptx.tma_load_2d", "i p i i p", void,
    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
    "[{0}], [{1}, {{{2}, {3}}}], [{4:smem}];",
    "TMA tile load: smem addr (u32), tensor map (generic address), inner coord, outer coord, mbarrier",
)  # fmt: skip
_ptx(
    "ptx.tma_load_2d_multicast", "i p i i p i", void,
    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
    "[{0}], [{1}, {{{2}, {3}}}], [{4:smem}], {5};",
    "TMA tile load multicast to the cluster's CTAs in the u16 mask (same smem offsets and mbarrier in each)",
)  # fmt: skip
_ptx(
    "ptx.tma_load_3d", "i p i i i p", void,
    "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
    "[{0}], [{1}, {{{2}, {3}, {4}}}], [{5:smem}];",
    "TMA 3-d tile load: smem addr (u32), tensor map, coords (innermost first), mbarrier",
)  # fmt: skip
_ptx(
    "ptx.tma_store_2d", "p i i i", void,
    "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [{0}, {{{1}, {2}}}], [{3}];",
    "TMA tile store: tensor map, inner coord, outer coord, smem addr (u32); completes a bulk group",
)  # fmt: skip
_ptx("ptx.tma_store_commit", "", void, "cp.async.bulk.commit_group;", "commit the TMA stores issued so far")
_ptx(
    "ptx.tma_store_wait",
    "n",
    void,
    "cp.async.bulk.wait_group.read {0:imm};",
    "wait until N store groups remain",
)
_ptx("ptx.prefetch_tensormap", "p", void, "prefetch.tensormap [{0}];", "prefetch a TMA descriptor")
_ptx(
    "ptx.mbarrier_try_wait_parity_u32", "i i", bool_,
    "{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [{0}], {1}; selp.u32 {out}, 1, 0, p; }}",
    "try_wait.parity on an mbarrier given by its 32-bit shared address",
)  # fmt: skip
_ptx(
    "ptx.mbarrier_arrive_cluster", "i i", void,
    "{{ .reg .b32 a; mapa.shared::cluster.u32 a, {0}, {1}; "
    "mbarrier.arrive.shared::cluster.b64 _, [a]; }}",
    "arrive on the mbarrier at the same shared address (u32) in CTA `rank` of the cluster",
)  # fmt: skip
declare(
    "ptx.wgmma_mma_async", "s s p i i i", void, pure=False, device_only=True,
    doc="wgmma.mma_async (shape e.g. 'm64n256k16', input dtype 'f16'|'bf16', &acc[0] of a local float32 "
    "accumulator array, smem descriptor A, smem descriptor B, scale-d 0/1); fp32 accumulate",
)  # fmt: skip

_mark_builtin()
