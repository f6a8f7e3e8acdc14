"""What an analyzer knows at one point, and the two analyses that read it without simplifying:
constant bounds (``tirx.ir.bounds``) and modular sets.

A ``State`` is built from a constraint list one constraint at a time (``tirx.sym.analyzer``)
and never changed after: a variable's constant range, the value it is bound to, its symbolic
domain (for ``int_set``), and the known inequalities, each kept as an expression ``d`` that
is known to be ``>= 0`` (``i < n`` is ``n - i - 1``), and other known-true conditions.

Bounds are the IR's own interval analysis in its ``exact`` mode (unbounded integers: the
analyzer assumes, as TIRx's does, that index arithmetic does not overflow its dtype), with a
value it cannot bound (a load, a call) ranging over its dtype.
"""

from __future__ import annotations

import math
from typing import Any

from tirx.ir import (
    Add,
    Call,
    Cast,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mul,
    Op,
    PrimExpr,
    PrimType,
    Select,
    Shl,
    Sub,
    Var,
)
from tirx.ir.bounds import UNBOUNDED, Bounds, dtype_range

__all__ = ["ConstBounds", "State", "modular_set"]


class ConstBounds(Bounds):
    """``Bounds(exact=True)`` whose unboundable values range over their dtype."""

    def __init__(self, ranges: dict) -> None:
        super().__init__(ranges, exact=True)

    def _bound(self, e: Any) -> tuple[int, int]:
        lo, hi = super()._bound(e)
        if lo <= -UNBOUNDED or hi >= UNBOUNDED:
            full = dtype_range(e.ty)
            assert full is not None  # Bounds only bounds integer scalars
            lo, hi = max(lo, full[0]), min(hi, full[1])
        return lo, hi


class State:
    """The facts in force at one point (see the module docstring). Copy, then extend."""

    __slots__ = ("_bounds", "bindings", "domains", "linear", "literal", "modular", "ranges")

    def __init__(self) -> None:
        self.ranges: dict[Var, tuple[int, int]] = {}
        self.bindings: dict[Var, PrimExpr] = {}
        self.domains: dict[Var, tuple[PrimExpr, PrimExpr]] = {}  # inclusive symbolic [min, max]
        self.modular: dict[Var, tuple[int, int]] = {}
        self.linear: tuple[PrimExpr, ...] = ()  # each known to be >= 0
        self.literal: tuple[PrimExpr, ...] = ()  # known true (simplified)
        self._bounds: ConstBounds | None = None

    def copy(self) -> State:
        s = State()
        s.ranges = dict(self.ranges)
        s.bindings = dict(self.bindings)
        s.domains = dict(self.domains)
        s.modular = dict(self.modular)
        s.linear = self.linear
        s.literal = self.literal
        return s

    @property
    def bounds(self) -> ConstBounds:
        """The interval analysis over this state's variable ranges (made once, memoizing)."""
        b = self._bounds
        if b is None:
            b = self._bounds = ConstBounds(self.ranges)
        return b

    def set_range(self, v: Var, lo: int, hi: int) -> None:
        """Narrow ``v`` to ``[lo, hi]`` (ignored when that would leave nothing)."""
        full = dtype_range(v.ty)
        if full is None:
            return
        old = self.ranges.get(v, full)
        lo, hi = max(lo, old[0]), min(hi, old[1])
        if lo <= hi and (lo, hi) != self.ranges.get(v):
            self.ranges[v] = (lo, hi)
            self._bounds = None


# ---------------------------------------------------------------------- modular sets
def _norm(c: int, b: int) -> tuple[int, int]:
    c = abs(c)
    return (c, b % c) if c else (0, b)


def _add(x: tuple[int, int], y: tuple[int, int], sign: int = 1) -> tuple[int, int]:
    return _norm(math.gcd(x[0], y[0]), x[1] + sign * y[1])


def _mul(x: tuple[int, int], y: tuple[int, int]) -> tuple[int, int]:
    (c1, b1), (c2, b2) = x, y
    return _norm(math.gcd(c1 * c2, c1 * b2, c2 * b1), b1 * b2)


def _union(x: tuple[int, int], y: tuple[int, int]) -> tuple[int, int]:
    return _norm(math.gcd(x[0], y[0], x[1] - y[1]), x[1])


_UNKNOWN = (1, 0)


def modular_set(e: Any, state: State) -> tuple[int, int]:
    """``(coeff, base)``: every value of integer expression ``e`` is ``coeff * k + base``."""
    return _Modular(state).of(e)


class _Modular:
    __slots__ = ("_active", "_memo", "state")

    def __init__(self, state: State) -> None:
        self.state = state
        self._memo: dict[int, tuple[int, int]] = {}
        self._active: set[int] = set()  # bindings being expanded (a binding loop is no fact)

    def of(self, e: Any) -> tuple[int, int]:
        r = self._memo.get(id(e))
        if r is None:
            r = self._memo[id(e)] = self._rule(e)
        return r

    def _rule(self, e: Any) -> tuple[int, int]:
        t = type(e)
        if t is IntImm:
            return (0, e.value)
        if not (isinstance(e.ty, PrimType) and e.ty.is_int and e.ty.lanes == 1):
            return _UNKNOWN
        if t is Var:
            return self._var(e)
        if t is Add or t is Sub:
            return _add(self.of(e.a), self.of(e.b), 1 if t is Add else -1)
        if t is Mul:
            return _mul(self.of(e.a), self.of(e.b))
        if t is Shl and type(e.b) is IntImm and 0 <= e.b.value < 64:
            return _mul(self.of(e.a), (0, 1 << e.b.value))
        if (t is FloorDiv or t is FloorMod) and type(e.b) is IntImm and e.b.value > 0:
            c, (ca, ba) = e.b.value, self.of(e.a)
            if t is FloorMod:
                return (0, ba % c) if ca % c == 0 else _norm(math.gcd(ca, c), ba)
            return _norm(ca // c, ba // c) if ca % c == 0 else _UNKNOWN
        if t is Min or t is Max:
            return _union(self.of(e.a), self.of(e.b))
        if t is Select:
            return _union(self.of(e.true_value), self.of(e.false_value))
        if t is Call and isinstance(e.op, Op) and e.op.traits.select:
            return _union(self.of(e.args[1]), self.of(e.args[2]))
        if t is Cast and isinstance(e.value.ty, PrimType) and e.value.ty.is_int:
            return self.of(e.value)
        if t is Let:
            self._memo[id(e.var)] = self.of(e.value)
            return self.of(e.body)
        return _UNKNOWN

    def _var(self, v: Var) -> tuple[int, int]:
        r = self.state.ranges.get(v)
        if r is not None and r[0] == r[1]:
            return (0, r[0])
        b = self.state.bindings.get(v)
        if b is not None and id(v) not in self._active:
            self._active.add(id(v))
            try:
                return self.of(b)
            finally:
                self._active.discard(id(v))
        return self.state.modular.get(v, _UNKNOWN)
