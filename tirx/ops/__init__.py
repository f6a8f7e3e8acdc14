"""The built-in ops, declared by family: each declaration holds the op's signature, traits,
doc line, CUDA lowering and interpreter semantics (``tirx.ir.op.declare``).

- ``math``: elementwise functions, float predicates, bit counts, ``if_then_else``
- ``memory``: ``address_of``, ``reinterpret``, ``ptr_byte_offset``, ``is_aligned``, extern calls
- ``cuda``: thread/block/cluster indices, barriers, warp shuffles and reductions, atomics
- ``cuda_builtins``: CUDA builtins under TIRx's names (warpgroup ids, votes, bit casts, clock)
- ``hints``: ``likely`` and ``assume``
- ``ptx``: inline PTX, ``mapa``, mbarriers, fences, ``elect_sync``
- ``hopper``: TMA and wgmma
- ``ptx_rows``: the PTX instruction table's opcodes (``T.ptx.fence``, ``T.ptx.mbarrier``, ...;
  mechanism in ``ptx_table``); ``ptx_rows_memory`` (ld, st, atom, red, st.async, ldmatrix, ...),
  ``ptx_rows_arith`` (arithmetic, bits, setp/selp, mov, cvt), ``ptx_rows_warp`` (bar, barrier,
  vote.sync, redux.sync, ...), ``ptx_rows_mma`` (mma.sync)

These modules import only ``tirx.ir`` at import time (backend helpers are imported when a
kernel is compiled), so ``import tirx`` stays light. docs/contributing.md shows how to add one.
"""

from __future__ import annotations

from ..ir.op import _mark_builtin
from . import (
    cuda,
    cuda_builtins,
    hints,
    hopper,
    math,
    memory,
    ptx,
    ptx_rows,
    ptx_rows_arith,
    ptx_rows_memory,
    ptx_rows_mma,
    ptx_rows_warp,
)

__all__ = [
    "cuda",
    "cuda_builtins",
    "hints",
    "hopper",
    "math",
    "memory",
    "ptx",
    "ptx_rows",
    "ptx_rows_arith",
    "ptx_rows_memory",
    "ptx_rows_mma",
    "ptx_rows_warp",
]

_mark_builtin()
