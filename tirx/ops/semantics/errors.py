"""Errors the interpreter reports (the things a GPU silently hides)."""

from __future__ import annotations

__all__ = [
    "BarrierError", "DivisionByZeroError", "InterpError", "LimitError", "MisalignedError", "OutOfBoundsError",
    "RaceError",
]  # fmt: skip


class InterpError(RuntimeError):
    """A kernel did something the interpreter cannot run or that has no defined meaning."""


class OutOfBoundsError(IndexError):
    """A load or store outside its buffer; names the buffer, the index and the thread."""


class MisalignedError(InterpError):
    """A vector access (a stride-1 ``T.Ramp`` index: one ``float4``-style load or store in the
    generated CUDA) whose first element is not aligned to the vector's width; the GPU faults
    with "misaligned address". Names the buffer, the element, the alignment and the thread."""


class DivisionByZeroError(InterpError):
    """An integer division or modulo by zero in a thread that uses its result: undefined in
    CUDA C++, and the GPU's value depends on the width and on how NVCC expanded the division
    (-1, all ones, the dividend, ... measured on an H100). Names the operation and the thread.
    A division in an arm of ``T.Select`` / ``T.if_then_else`` counts only where that arm is
    chosen, as the generated code evaluates it."""


class RaceError(InterpError):
    """A shared-memory data race or a read of shared memory no thread wrote."""


class BarrierError(InterpError):
    """A barrier (``T.cuda.cta_sync``) reached by only part of a block's threads."""


class LimitError(InterpError):
    """A loop past ``max_loop_iters`` or a run past its ``max_steps`` budget (instead of a
    hang); names the loop or launch's source location and the option that raises the limit."""
