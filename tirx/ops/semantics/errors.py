"""Errors the interpreter reports (the things a GPU silently hides)."""

from __future__ import annotations

__all__ = ["BarrierError", "InterpError", "LimitError", "OutOfBoundsError", "RaceError"]


class InterpError(RuntimeError):
    """A kernel did something the interpreter cannot run or that has no defined meaning."""


class OutOfBoundsError(IndexError):
    """A load or store outside its buffer; names the buffer, the index and the thread."""


class RaceError(InterpError):
    """A shared-memory data race or a read of shared memory no thread wrote."""


class BarrierError(InterpError):
    """A barrier (``T.cuda.cta_sync``) reached by only part of a block's threads."""


class LimitError(InterpError):
    """A loop past ``max_loop_iters`` or a run past its ``max_steps`` budget (instead of a
    hang); names the loop or launch's source location and the option that raises the limit."""
