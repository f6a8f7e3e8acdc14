"""Sets of integers with symbolic ends: the domains ``Analyzer.int_set`` relaxes variables over
and the intervals it answers with.

An ``IntervalSet`` is ``[min_value, max_value]`` with expression ends (``n``, ``n * 4 - 1``);
an end that is not bounded is the variable ``pos_inf()`` / ``neg_inf()``, as in TIRx.
"""

from __future__ import annotations

from typing import Any

from tirx.ir import IntImm, PrimExpr, PrimType, Var, convert
from tirx.ir.types import int64

__all__ = ["IntSet", "IntervalSet", "neg_inf", "pos_inf"]

_POS_INF = Var("pos_inf", int64)
_NEG_INF = Var("neg_inf", int64)


def pos_inf() -> Var:
    """The symbolic positive infinity (the upper end of an unbounded interval)."""
    return _POS_INF


def neg_inf() -> Var:
    """The symbolic negative infinity (the lower end of an unbounded interval)."""
    return _NEG_INF


def _end(api: str, arg: str, v: Any) -> PrimExpr:
    if isinstance(v, PrimExpr):
        if v is _POS_INF or v is _NEG_INF:
            return v
        if not (isinstance(v.ty, PrimType) and v.ty.is_int and v.ty.lanes == 1):
            raise TypeError(f"{api}: {arg} must be a scalar integer expression, got dtype {v.ty}")
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return convert(v)
    raise TypeError(f"{api}: {arg} must be an int or an integer PrimExpr, got {type(v).__name__}")


class IntSet:
    """A set of integers in one dimension."""

    __slots__ = ()

    def is_nothing(self) -> bool:
        """Whether the set is empty."""
        raise NotImplementedError

    def is_everything(self) -> bool:
        """Whether the set holds every integer."""
        raise NotImplementedError

    @staticmethod
    def single_point(point: Any) -> IntervalSet:
        """The set holding just ``point``."""
        p = _end("IntSet.single_point", "point", point)
        return IntervalSet(p, p)


class IntervalSet(IntSet):
    """The integers from ``min_value`` to ``max_value``, both included."""

    __slots__ = ("max_value", "min_value")
    min_value: PrimExpr
    max_value: PrimExpr

    def __init__(self, min_value: Any, max_value: Any) -> None:
        object.__setattr__(self, "min_value", _end("IntervalSet", "min_value", min_value))
        object.__setattr__(self, "max_value", _end("IntervalSet", "max_value", max_value))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("IntervalSet is immutable")

    def is_nothing(self) -> bool:
        lo, hi = self.min_value, self.max_value
        return type(lo) is IntImm and type(hi) is IntImm and lo.value > hi.value

    def is_everything(self) -> bool:
        return self.min_value is _NEG_INF and self.max_value is _POS_INF

    def __repr__(self) -> str:
        return f"sym.IntervalSet(min_value={self.min_value}, max_value={self.max_value})"
