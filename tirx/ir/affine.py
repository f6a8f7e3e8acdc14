"""A dimension written ``a * n + c``: how a dynamic variable that is never a whole dimension
of a tensor parameter is solved from one that is such an expression (TIRx's host code binds
``n`` of ``A: T.Tensor((n * 2,))`` so). The CUDA launcher and the interpreter both use it."""

from __future__ import annotations

from typing import Any

from .expr import Add, IntImm, Mul, Sub, Var

__all__ = ["affine_in", "affine_text"]


def affine_in(e: Any, v: Var) -> tuple[int, int] | None:
    """``e`` as ``a * v + c`` with integers ``a != 0`` and ``c`` (``n * 2``, ``batch + 1``,
    ``2 * (n - 1)``): how a dynamic dimension that is never a whole dimension of a tensor is
    solved from one that is such an expression (as TIRx's host code binds it); else None."""

    def go(x: Any) -> tuple[int, int] | None:
        if x is v:
            return 1, 0
        t = type(x)
        if t is IntImm:
            return 0, x.value
        if t is Add or t is Sub or t is Mul:
            lhs, rhs = go(x.a), go(x.b)
            if lhs is None or rhs is None:
                return None
            if t is Add:
                return lhs[0] + rhs[0], lhs[1] + rhs[1]
            if t is Sub:
                return lhs[0] - rhs[0], lhs[1] - rhs[1]
            if lhs[0] and rhs[0]:
                return None  # n * n
            return lhs[0] * rhs[1] + rhs[0] * lhs[1], lhs[1] * rhs[1]
        return None

    r = go(e)
    return r if r is not None and r[0] != 0 else None


def affine_text(a: int, name: str, c: int) -> str:
    """``a * n + c`` as a message writes it."""
    head = name if a == 1 else f"{a} * {name}"
    return head if c == 0 else f"{head} + {c}" if c > 0 else f"{head} - {-c}"
