"""The values the analyzer answers with: constant bounds, modular sets, comparison results.

They are small immutable values (not IR nodes): a pass reads their fields and drops them.
The names, fields and enum values are TIRx's (``tvm_tirx.sym``), so ported code reads them
unchanged.
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = ["CompareResult", "ConstIntBound", "ModularSet", "ProofStrength"]


class ProofStrength(enum.IntEnum):
    """How hard ``Analyzer.can_prove`` tries: ``SYMBOLIC_BOUND`` also combines pairs of the
    known inequalities (slower, proves more)."""

    DEFAULT = 0
    SYMBOLIC_BOUND = 1


class CompareResult(enum.IntEnum):
    """What ``Analyzer.try_compare(a, b)`` could prove about ``a`` against ``b``."""

    INCONSISTENT = 0
    EQ = 1
    LT = 2
    LE = 3
    GT = 4
    GE = 5
    NE = 6
    UNKNOWN = 7


def _need_int(api: str, arg: str, v: Any) -> int:
    if type(v) is not int:
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise TypeError(f"{api}: {arg} must be an int, got {type(v).__name__}")
        v = v.__index__()
    return v


class _Value:
    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._fields)

    def __hash__(self) -> int:
        return hash((type(self).__name__, *(getattr(self, f) for f in self._fields)))

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)}" for f in self._fields)
        return f"sym.{type(self).__name__}({inner})"


class ConstIntBound(_Value):
    """Every value of an expression lies in ``[min_value, max_value]``; ``POS_INF`` /
    ``NEG_INF`` stand for no bound on that side."""

    __slots__ = ("max_value", "min_value")
    _fields = ("min_value", "max_value")
    POS_INF = (1 << 63) - 1
    NEG_INF = -POS_INF
    min_value: int
    max_value: int

    def __init__(self, min_value: Any, max_value: Any) -> None:
        lo = _need_int("ConstIntBound", "min_value", min_value)
        hi = _need_int("ConstIntBound", "max_value", max_value)
        object.__setattr__(self, "min_value", max(lo, self.NEG_INF))
        object.__setattr__(self, "max_value", min(hi, self.POS_INF))


class ModularSet(_Value):
    """Every value of an expression is ``coeff * k + base`` for some integer ``k`` (``coeff``
    0: exactly ``base``; ``coeff`` 1: nothing known)."""

    __slots__ = ("base", "coeff")
    _fields = ("coeff", "base")
    coeff: int
    base: int

    def __init__(self, coeff: Any, base: Any) -> None:
        c = abs(_need_int("ModularSet", "coeff", coeff))
        b = _need_int("ModularSet", "base", base)
        object.__setattr__(self, "coeff", c)
        object.__setattr__(self, "base", b % c if c else b)
