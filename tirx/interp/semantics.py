"""What op implementations (``declare(interp=...)`` in ``tirx/ops``) are written against.

An interpreter implementation is ``impl(fc, call) -> ev``: ``fc`` compiles the call's
arguments (``fc.expr(arg)`` gives an evaluator), ``ev(ctx)`` returns one value per lane (a
numpy array, or a ``PtrVal``). This module gathers the names such code needs, so the op
files import one stable interface lazily (``tirx.ops`` must not import numpy at import).
"""

from __future__ import annotations

from . import dtypes
from .engine import _ATOMIC_T as ATOMIC_TAG
from .engine import _TB as TAG_BASE
from .engine import BLOCK, GLOBAL, _full, block_barrier, need_launch
from .engine import _race_arrays as race_arrays
from .errors import InterpError, OutOfBoundsError, RaceError
from .memory import PtrVal

full = _full  # broadcast a per-lane value (length 1 when uniform) to N lanes


def require_true(c, cond, message: str) -> None:
    """Raise ``InterpError`` naming the first active thread where ``cond`` is false:
    ``{thread}`` in ``message`` is replaced by that thread (assumptions, traps)."""
    import numpy as np

    bad = c.mask & ~full(cond, c.N).astype(bool)
    if bad.any():
        raise InterpError(message.format(thread=c.describe(int(np.flatnonzero(bad)[0]))))


__all__ = [
    "ATOMIC_TAG",
    "BLOCK",
    "GLOBAL",
    "TAG_BASE",
    "InterpError",
    "OutOfBoundsError",
    "PtrVal",
    "RaceError",
    "block_barrier",
    "dtypes",
    "full",
    "need_launch",
    "race_arrays",
    "require_true",
]
