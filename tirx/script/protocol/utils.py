"""``T.utils``: ``frame_scope`` (enter several frames in one ``with``) and ``tensor_indices``."""

from __future__ import annotations

import contextlib
import operator
from typing import Any

from ...ir import Buffer, PrimExpr
from ...ir.expr import FloorDiv, FloorMod
from ..parser import apply_binop
from .frame import unwrap

__all__ = ["frame_scope", "tensor_indices"]


class _FrameScope:
    """Enters the frames in order and exits them in reverse; the ``with`` value is the tuple of
    what each frame's entry gave, or for one frame its value itself (as in TIRx)."""

    def __init__(self, frames: list):
        self.frames = list(frames)
        self.stack: contextlib.ExitStack | None = None

    def __enter__(self) -> tuple:
        stack = contextlib.ExitStack()
        try:
            vals = tuple(stack.enter_context(f) for f in self.frames)
        except BaseException:
            stack.close()
            raise
        self.stack = stack
        return vals[0] if len(vals) == 1 else vals

    def __exit__(self, *exc: Any) -> Any:
        stack, self.stack = self.stack, None
        assert stack is not None  # set by __enter__
        return stack.__exit__(*exc)


def frame_scope(frames: list) -> _FrameScope:
    """``with T.frame_scope([T.launch_thread(...), T.launch_thread(...)]) as (bx, tx):``."""
    for k, f in enumerate(frames):
        if not hasattr(f, "__enter__"):
            raise TypeError(f"frame_scope: frames[{k}] is a {type(f).__name__}, not a frame")
    return _FrameScope(frames)


def tensor_indices(tensor: Buffer, index: Any) -> list:
    """The coordinates of ``tensor`` for ``index``: a flat index is unraveled in row-major
    order (the outermost coordinate keeps the whole quotient, ``i // 6 // 5``); explicit
    coordinates (a list or tuple) pass through. Constants fold as the frontend folds them."""
    if not isinstance(tensor, Buffer):
        raise TypeError(f"tensor_indices: tensor must be a tensor, got {type(tensor).__name__}")
    if isinstance(index, (list, tuple)):
        if len(index) != len(tensor.shape):
            raise ValueError(
                f"tensor_indices: tensor {tensor.name} has rank {len(tensor.shape)}, got {len(index)} indices"
            )
        return [unwrap(x) for x in index]
    index = unwrap(index)
    if not isinstance(index, (int, PrimExpr)) or isinstance(index, bool):
        raise TypeError(f"tensor_indices: index must be an integer expression, got {index!r}")
    out: list = []
    rem = index
    for k in range(len(tensor.shape) - 1, 0, -1):
        d = tensor.shape[k]
        out.append(apply_binop(FloorMod, operator.mod, rem, d))
        rem = apply_binop(FloorDiv, operator.floordiv, rem, d)
    out.append(rem)
    out.reverse()
    return out
