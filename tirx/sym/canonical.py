"""Integer expressions as a sum of monomials plus a constant: the analyzer's normal form.

``x * 3 + y - x`` and ``y + x * 2`` are the same ``Sum`` (``{x: 2, y: 1}``), so their difference
is the constant 0: that is how the analyzer cancels terms, proves equalities and reads off the
bounds of a difference. A monomial is a product of *atoms*: the variables and every
sub-expression the form does not look into (``x // 4``, ``T.min(a, b)``, a load, a call).

Atoms are hash-consed per analysis (``Atoms``): structurally equal atoms get one id, and ids
are handed out in order of first appearance, which is also the order factors print in
(``z * y * x`` stays as written). ``Sum`` itself is plain arithmetic on dicts; turning one back
into IR (``Atoms.build``) orders terms as TIRx does: larger coefficients first, a ``//`` before
a plain term before a ``%`` at equal coefficient, a ``min`` / ``max`` before other terms, then
first appearance, with the negative terms subtracted at the end (``y + 3 - x * 2``; a lone
negative term is ``x * -3``).
"""

from __future__ import annotations

from typing import Any

from tirx.ir import Add, FloorDiv, FloorMod, IntImm, Max, Min, Mul, PrimExpr, PrimType, Sub, Var
from tirx.ir.arith import int_range
from tirx.ir.node import NODE, SEQ, VALUE, Node

__all__ = ["Atoms", "Mono", "NoFit", "Sum", "is_index_type"]

Mono = tuple[int, ...]  # the atom ids of a monomial, sorted (a repeated id is a power)

_INF = 1 << 64  # the "upper factor" of an atom that is not a remainder (sorts last)


def is_index_type(t: Any) -> bool:
    """Whether the normal form applies to values of dtype ``t``: scalar signed integers, whose
    arithmetic the analyzer treats as exact (as TIRx's does: index arithmetic does not overflow)."""
    return type(t) is PrimType and t.kind == "int" and t.lanes == 1


class NoFit(Exception):
    """A coefficient or constant of a result does not fit its dtype (the caller keeps the node)."""


class Sum:
    """``sum(coeff * monomial) + const`` over one dtype; never mutated once built."""

    __slots__ = ("const", "terms", "ty")

    def __init__(self, ty: Any, terms: dict[Mono, int] | None = None, const: int = 0) -> None:
        self.ty: PrimType = ty
        self.terms: dict[Mono, int] = terms if terms is not None else {}
        self.const = const

    @staticmethod
    def of_atom(ty: Any, aid: int) -> Sum:
        return Sum(ty, {(aid,): 1})

    def is_const(self) -> bool:
        return not self.terms

    def is_zero(self) -> bool:
        return not self.terms and self.const == 0

    def plus(self, other: Sum, scale: int = 1) -> Sum:
        """``self + scale * other``."""
        terms = dict(self.terms)
        for m, k in other.terms.items():
            v = terms.get(m, 0) + scale * k
            if v:
                terms[m] = v
            else:
                terms.pop(m, None)
        return Sum(self.ty, terms, self.const + scale * other.const)

    def minus(self, other: Sum) -> Sum:
        return self.plus(other, -1)

    def add_const(self, c: int) -> Sum:
        return Sum(self.ty, dict(self.terms), self.const + c)

    def scaled(self, k: int) -> Sum:
        if k == 0:
            return Sum(self.ty)
        return Sum(self.ty, {m: v * k for m, v in self.terms.items()}, self.const * k)

    def single(self) -> tuple[Mono, int] | None:
        """``(monomial, coeff)`` when this is one term and no constant."""
        if len(self.terms) == 1 and self.const == 0:
            return next(iter(self.terms.items()))
        return None

    def times(self, other: Sum) -> Sum | None:
        """The product when it is again a sum of monomials without expanding a sum: one side
        constant, or both a single term; else None (the caller keeps the product as an atom)."""
        if other.is_const():
            return self.scaled(other.const)
        if self.is_const():
            return other.scaled(self.const)
        a, b = self.single(), other.single()
        if a is None or b is None:
            return None
        return Sum(self.ty, {tuple(sorted(a[0] + b[0])): a[1] * b[1]})

    def expanded_times(self, other: Sum, limit: int = 64) -> Sum | None:
        """The fully distributed product (for proofs only), or None past ``limit`` terms."""
        if (len(self.terms) + 1) * (len(other.terms) + 1) > limit:
            return None
        out = Sum(self.ty, {}, self.const * other.const)
        for ma, ka in [*self.terms.items(), ((), self.const)]:
            for mb, kb in [*other.terms.items(), ((), other.const)]:
                if not ma and not mb:
                    continue
                out = out.plus(Sum(self.ty, {tuple(sorted(ma + mb)): ka * kb}))
        return out

    def coeff_gcd(self) -> int:
        """The gcd of the term coefficients (0 for a constant)."""
        from math import gcd

        g = 0
        for k in self.terms.values():
            g = gcd(g, k)
        return g

    def __repr__(self) -> str:  # for debugging
        return f"Sum({self.terms!r} + {self.const}, {self.ty})"


class Atoms:
    """Hash-consing of the atoms of one analysis, and building IR back from sums."""

    __slots__ = ("_ids", "_keep", "_memo", "display", "exprs", "order")

    def __init__(self) -> None:
        self._ids: dict[tuple, int] = {}
        self._memo: dict[int, int] = {}  # id(node) -> atom id (the node kept alive in _keep)
        self._keep: list[Any] = []
        self.exprs: list[PrimExpr] = []  # atom id -> the first node met with that structure
        self.order: list[tuple[int, int]] = []  # atom id -> (lower factor, upper factor)
        self.display: dict[Mono, Mono] = {}  # a monomial -> its factors in the order first written

    def id_of(self, e: PrimExpr) -> int:
        """The id of ``e``'s structure (the same for every structurally equal node)."""
        m = self._memo.get(id(e))
        if m is not None:
            return m
        key = self._key(e)
        i = self._ids.get(key)
        if i is None:
            i = len(self.exprs)
            self._ids[key] = i
            self.exprs.append(e)
            self.order.append(_factors(e))
        self._memo[id(e)] = i
        self._keep.append(e)
        return i

    def _obj(self, v: Any) -> tuple:
        self._keep.append(v)
        return ("o", id(v))

    def _key(self, e: Any) -> tuple:
        t = type(e)
        if t is IntImm:
            return ("c", e.ty, e.value)
        if t is Var:
            return self._obj(e)
        key: list[Any] = [t]
        for name, kind in t._sfields:
            v = getattr(e, name)
            if kind == VALUE and not isinstance(v, Node):
                try:
                    hash(v)
                except TypeError:
                    v = self._obj(v)
                key.append(v)
            elif kind == NODE:
                key.append(None if v is None else self.id_of(v) if isinstance(v, PrimExpr) else self._obj(v))
            elif kind == SEQ and type(v) is tuple:
                key.append(tuple(self.id_of(x) if isinstance(x, PrimExpr) else self._obj(x) for x in v))
            else:  # buffers, definitions, attributes: by identity
                key.append(self._obj(v))
        return tuple(key)

    # ------------------------------------------------------------------ back to IR
    def build(self, s: Sum) -> PrimExpr:
        """``s`` as an expression in TIRx's canonical term order (see the module docstring)."""
        ty = s.ty
        lo, hi = int_range(ty)

        def imm(v: int) -> IntImm:
            if not lo <= v <= hi:
                raise NoFit
            return IntImm(v, ty)

        items = sorted(s.terms.items(), key=self._sort_key)
        if len(items) == 1 and items[0][1] < 0 and s.const == 0:
            return self.monomial(*items[0], imm)  # one negative term: ``x * -3``
        res: PrimExpr | None = None
        for m, k in items:
            if k > 0:
                t = self.monomial(m, k, imm)
                res = t if res is None else Add(res, t)
        if s.const > 0:
            res = imm(s.const) if res is None else Add(res, imm(s.const))
        for m, k in items:
            if k < 0:
                t = self.monomial(m, -k, imm)
                res = Sub(imm(0) if res is None else res, t)
        if s.const < 0:
            res = imm(s.const) if res is None else Sub(res, imm(-s.const))
        return imm(0) if res is None else res

    def monomial(self, m: Mono, k: int, imm: Any) -> PrimExpr:
        """``k * m``, its factors in the order they were first multiplied."""
        m = self.display.get(m, m)
        out: PrimExpr = self.exprs[m[0]]
        for a in m[1:]:
            out = Mul(out, self.exprs[a])
        return out if k == 1 else Mul(out, imm(k))

    def _sort_key(self, item: tuple[Mono, int]) -> tuple[int, int, int, int]:
        m, k = item
        low, up = self.order[m[0]] if len(m) == 1 else (1, _INF)
        rank = 0 if len(m) == 1 and type(self.exprs[m[0]]) in (Min, Max) else 1
        return (-k, -low, -up, rank)


def _factors(e: Any) -> tuple[int, int]:
    """TIRx's tie-break between terms of one coefficient: ``x // c`` has lower factor ``c``,
    ``x % c`` upper factor ``c``; anything else (1, infinity)."""
    if type(e) is FloorDiv and type(e.b) is IntImm and e.b.value > 0:
        return (e.b.value, _INF)
    if type(e) is FloorMod and type(e.b) is IntImm and e.b.value > 0:
        return (1, e.b.value)
    return (1, _INF)
