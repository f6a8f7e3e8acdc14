"""``T``'s arithmetic helpers that are plain functions over expressions (``T.ceildiv``,
``T.bitwise_and``, ``T.shift_left``, ...), folding Python numbers as the frontend's operators
do. Both front ends call them: the frontend as ``T.<name>``, the text parser by name (they build
IR from the parsed values and run no user code); the printer never writes them."""

from __future__ import annotations

from typing import Any

from ..ir import expr as _x
from ..ir.expr import PrimExpr, convert
from ..ir.fold import combine

__all__ = ["HELPERS"]


def _e(x: Any) -> Any:
    """A mutable scalar or a meta value as its expression; anything else as it is."""
    f = getattr(x, "__tirx_expr__", None)
    return f() if f is not None and not isinstance(x, PrimExpr) else x


def ceildiv(a: Any, b: Any) -> Any:
    """``(a + b - 1) // b``; plain Python ints fold."""
    a, b = _e(a), _e(b)
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    return combine(_x.FloorDiv, combine(_x.Sub, combine(_x.Add, a, b), 1), b)


def bitwise_and(a: Any, b: Any) -> PrimExpr:
    return combine(_x.BitAnd, _e(a), _e(b))


def bitwise_or(a: Any, b: Any) -> PrimExpr:
    return combine(_x.BitOr, _e(a), _e(b))


def bitwise_xor(a: Any, b: Any) -> PrimExpr:
    return combine(_x.BitXor, _e(a), _e(b))


def bitwise_not(a: Any) -> PrimExpr:
    return ~convert(_e(a))


def shift_left(a: Any, b: Any) -> PrimExpr:
    return combine(_x.Shl, _e(a), _e(b))


def shift_right(a: Any, b: Any) -> PrimExpr:
    return combine(_x.Shr, _e(a), _e(b))


#: the helpers by their ``T`` name
HELPERS = {
    f.__name__: f
    for f in (ceildiv, bitwise_and, bitwise_or, bitwise_xor, bitwise_not, shift_left, shift_right)
}
