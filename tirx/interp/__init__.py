"""tirx.interp — the CPU interpreter.

``tirx.interp.compile(f, **options)`` (and ``tirx.compile(f, target="interp")``) returns a
kernel called like the CUDA one with numpy arrays or CPU torch tensors. It runs the full
grid of blocks and threads vectorized with numpy (one lane per thread, masks for divergent
control flow), models shared/local memory, barriers, warp shuffles and atomics, rounds
float16/bfloat16 as the GPU does, and reports what a GPU hides: out-of-bounds accesses
(``OutOfBoundsError``), vector accesses the GPU would fault on as misaligned
(``MisalignedError``), shared-memory races and uninitialized shared reads (``RaceError``),
divergent barriers (``BarrierError``), integer division by zero (``DivisionByZeroError``), and
stops loops and runs past their budget
(``LimitError``) instead of hanging. See docs/interp.md.
"""

from __future__ import annotations

from .errors import (
    BarrierError,
    DivisionByZeroError,
    InterpError,
    LimitError,
    MisalignedError,
    OutOfBoundsError,
    RaceError,
)
from .kernel import Kernel, ModuleKernel, compile

__all__ = [
    "BarrierError",
    "DivisionByZeroError",
    "InterpError",
    "Kernel",
    "LimitError",
    "MisalignedError",
    "ModuleKernel",
    "OutOfBoundsError",
    "RaceError",
    "compile",
]
