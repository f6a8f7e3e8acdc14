"""The interpreter's errors under their public module name; defined with the op semantics
(tirx/ops/semantics/errors.py), which raise them below the interpreter."""

from __future__ import annotations

from tirx.ops.semantics.errors import (
    BarrierError,
    DivisionByZeroError,
    InterpError,
    LimitError,
    MisalignedError,
    OutOfBoundsError,
    RaceError,
)

__all__ = [
    "BarrierError", "DivisionByZeroError", "InterpError", "LimitError", "MisalignedError", "OutOfBoundsError",
    "RaceError",
]  # fmt: skip
