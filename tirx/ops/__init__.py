"""The built-in ops, declared by family: each declaration holds the op's signature, traits,
doc line, CUDA lowering and interpreter semantics (``tirx.ir.op.declare``).

- ``math``: elementwise functions, float predicates, bit counts, ``if_then_else``
- ``memory``: ``address_of``, ``reinterpret``, ``ptr_byte_offset``, ``is_aligned``, extern calls
- ``cuda``: thread/block/cluster indices, barriers, warp shuffles and reductions, atomics
- ``cuda_builtins``: CUDA builtins under TIRx's names (warpgroup ids, votes, bit casts, clock)
- ``cuda_convert``: TIRx's packed conversions (``float22half2``, ...) and ``fadd2_rn``/``fmul2_rn``
- ``cuda_timers``, ``cuda_iket``, ``cuda_waits`` (``grid_sync``, ``wait_until``), ``cuda_func_call``,
  ``cuda_mma`` (``mma_fill``/``mma_store``/``bmma_sync``): TIRx's profiler timers, IKET annotations,
  waits, source-carrying calls and accumulator-fragment helpers; ``cuda_legacy``: ``T.ptx_legacy.*``,
  ``T.s_tir.cp_async_raw``
- ``hints``: ``likely`` and ``assume``
- ``gpu_generic``: TIRx's ``T.gpu_*`` ops (masked warp shuffles, storage sync, WMMA), ``undef``,
  ``assume_always``/``assume_aligned`` and other annotations
- ``ptx``: inline PTX, ``mapa``, mbarriers, fences, ``elect_sync``
- ``hopper``: TMA and wgmma
- ``nki``: TIRx's NKI (Trainium) instruction names (load, print, round-trip; not compiled)
- ``nvshmem``: NVSHMEM device ops (``T.nvshmem.*``: PE queries, put/get, signals, barrier)
- ``calls`` (packed, LLVM, SPIR-V calls) and ``host_runtime`` (stack, workspace, ABI fields):
  TIRx's host/LLVM-side ops, which CUDA codegen refuses by name
- ``vector``: LLVM vector ops under TIRx's names (``masked_load``, ``vector_low``, ``vscale``, ...)
- ``ptx_rows``: the PTX instruction table's opcodes (``T.ptx.fence``, ``T.ptx.mbarrier``, ...;
  mechanism in ``ptx_table``); ``ptx_rows_memory`` (ld, st, atom, red, st.async, ldmatrix, ...),
  ``ptx_rows_arith`` (arithmetic, bits, setp/selp, mov, cvt), ``ptx_rows_warp`` (bar, barrier,
  vote.sync, redux.sync, ...), ``ptx_rows_mma`` (mma.sync), ``ptx_rows_multimem`` (multimem.*),
  ``ptx_rows_sm100`` (tensormap.replace, st.bulk, clusterlaunchcontrol, ...), ``ptx_rows_tcgen05``
  (tcgen05, sm_100a); ``ptx_operands`` (T.ptx.addr/pred/SINK)
- ``tcgen05``: tcgen05 descriptor encoders and TMEM addresses (``T.cuda.tcgen05_*``)

These modules import only ``tirx.ir`` at import time (backend helpers are imported when a
kernel is compiled). ``import tirx`` does not import them: the op table loads this package on
its first use (``tirx.ir.op.register_loader``). Their interpreter semantics are written
against ``tirx.ops.semantics`` (numpy; imported inside the handlers), which the interpreter
builds on. docs/contributing.md shows how to add one.
"""

from __future__ import annotations

from ..ir.op import _mark_builtin
from . import (
    calls,
    cuda,
    cuda_builtins,
    cuda_convert,
    cuda_func_call,
    cuda_iket,
    cuda_legacy,
    cuda_mma,
    cuda_tensormap,
    cuda_timers,
    cuda_waits,
    cuda_wgmma_names,
    gpu_generic,
    hints,
    hopper,
    host_runtime,
    math,
    memory,
    nki,
    nvshmem,
    ptx,
    ptx_operands,
    ptx_rows,
    ptx_rows_arith,
    ptx_rows_memory,
    ptx_rows_mma,
    ptx_rows_multimem,
    ptx_rows_sm100,
    ptx_rows_tcgen05,
    ptx_rows_warp,
    tcgen05,
    vector,
)

__all__ = [
    "calls",
    "cuda",
    "cuda_builtins",
    "cuda_convert",
    "cuda_func_call",
    "cuda_iket",
    "cuda_legacy",
    "cuda_mma",
    "cuda_tensormap",
    "cuda_timers",
    "cuda_waits",
    "cuda_wgmma_names",
    "gpu_generic",
    "hints",
    "hopper",
    "host_runtime",
    "math",
    "memory",
    "nki",
    "nvshmem",
    "ptx",
    "ptx_operands",
    "ptx_rows",
    "ptx_rows_arith",
    "ptx_rows_memory",
    "ptx_rows_mma",
    "ptx_rows_multimem",
    "ptx_rows_sm100",
    "ptx_rows_tcgen05",
    "ptx_rows_warp",
    "tcgen05",
    "vector",
]

_mark_builtin()
