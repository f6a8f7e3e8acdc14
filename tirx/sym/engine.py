"""The simplifier and prover behind ``tirx.sym.Analyzer``: one ``Engine`` per query.

Integer expressions (scalar signed ints) go through the normal form of ``tirx.sym.canonical``:
sums are collected term by term, and the operations that do not stay linear are decided where
the facts allow and kept as atoms where they do not:

- ``a // c`` and ``a % c`` (a positive constant ``c``): the terms of ``a`` whose coefficient
  ``c`` divides come out of the division (``(x * 4 + y) // 4`` is ``x + y // 4``), a common
  factor of what is left and ``c`` is cancelled, and what is left is decided when its bounds
  fall in one multiple of ``c`` (``i % 16`` is ``i`` for ``i`` in ``[0, 16)``);
  ``(x // a) // b`` is ``x // (a * b)``, ``x % c + x // c * c`` is ``x``;
- ``min`` / ``max`` / ``select`` pick an operand when the difference has a known sign or the
  condition is decided; what both sides add moves out (``min(x + 1, y + 1)``);
- comparisons are decided from the bounds of the difference of their sides and the known
  inequalities; undecided ones keep TIRx's spelling (``x < 4`` for ``x * 2 < 7``);
- ``not`` is pushed into comparisons, ``and`` and ``or``.

A sum is nonnegative when its interval bound (its terms bounded one by one, through
``tirx.sym.state``) is, or when it is once a multiple of one known inequality ``d >= 0`` is
taken off; comparisons chain two such facts, and ``strength`` 1 tries any two everywhere.
Everything recurses over the expression: callers run an engine through ``tirx.ir.deep``, so
deep IR never raises ``RecursionError``. Memos are keyed by node identity, so a shared
subexpression (a DAG) is simplified once.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

import attrs

from tirx.ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BinaryOp,
    Call,
    Cast,
    Div,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Op,
    Or,
    PrimExpr,
    PrimType,
    Select,
    Sub,
    Var,
)
from tirx.ir import fold as _fold
from tirx.ir.arith import int_range, trunc_div, trunc_mod
from tirx.ir.functor import rebuild
from tirx.ir.node import NODE, SEQ
from tirx.ir.visitor import map_tuple

from .canonical import Atoms, Mono, NoFit, Sum, is_index_type
from .state import State

__all__ = ["Budget", "Engine"]

_CMP = (EQ, NE, LT, LE, GT, GE)
#: a comparison's negation: (class, whether its operands swap): not a < b is b <= a
_NEGATED: dict[type, tuple[type, bool]] = {
    LT: (LE, True), LE: (LT, True), GT: (LE, False), GE: (LT, False), EQ: (NE, False), NE: (EQ, False)
}  # fmt: skip
_BOOL = PrimType("bool")


class Budget:
    """``Analyzer.set_maximum_rewrite_steps``: a positive limit on the nodes one query
    rewrites; past it the query raises ``RuntimeError`` (a guard against slow inputs)."""

    __slots__ = ("limit", "used")

    def __init__(self, limit: int = 0) -> None:
        self.limit = limit
        self.used = 0

    def step(self) -> None:
        self.used += 1
        if 0 < self.limit < self.used:
            raise RuntimeError(
                f"tirx.sym: simplification took more than {self.limit} rewrite steps "
                "(Analyzer.set_maximum_rewrite_steps)"
            )


def _true(v: bool) -> IntImm:
    return IntImm(int(v), _BOOL)


class Engine:
    """One query over one ``State``: ``simplify`` an expression, ``sum_of`` an integer one,
    ``nonneg`` / ``bound`` of a sum. ``canonical=False`` keeps the shape of ``+ - *`` nodes
    (``rewrite_simplify``); ``expand`` distributes products (equality proofs only)."""

    def __init__(
        self,
        state: State,
        *,
        canonical: bool = True,
        expand: bool = False,
        strength: int = 0,
        budget: Budget | None = None,
    ) -> None:
        self.state = state
        self.atoms = Atoms()
        self.canonical = canonical
        self.expand = expand
        self.strength = strength
        self.budget = budget or Budget()
        self.use_facts = True
        self._sums: dict[int, Sum] = {}
        self._exprs: dict[int, PrimExpr] = {}
        self._keep: list[Any] = []  # keys of the memos above are ids: keep their nodes alive
        self._subst: dict[Var, PrimExpr] = {}  # Let variables bound to a constant or a variable
        self._expanding: set[int] = set()  # bindings being substituted (a loop is not followed)
        self._facts: list[Sum] | None = None
        self._literal: set[int] | None = None
        self._atom_bounds: dict[int, tuple[int, int]] = {}
        self._divmod: dict[int, tuple[type, Sum, int]] = {}  # atom id -> (FloorDiv|FloorMod, inner, c)
        self._negs: dict[int, PrimExpr] = {}  # id(simplified condition) -> its negation

    # ================================================================ entry points
    def simplify(self, e: PrimExpr) -> PrimExpr:
        r = self._exprs.get(id(e))
        if r is None:
            self.budget.step()
            r = self._simplify(e)
            self._exprs[id(e)] = r
            self._keep.append(e)
        return r

    def sum_of(self, e: PrimExpr) -> Sum:
        """The normal form of a scalar signed-integer expression."""
        s = self._sums.get(id(e))
        if s is None:
            self.budget.step()
            fn = _SUM_RULES.get(type(e))
            s = fn(self, e) if fn is not None else self._atom(self._generic(e))
            self._sums[id(e)] = s
            self._keep.append(e)
        return s

    def build(self, s: Sum) -> PrimExpr:
        return self.atoms.build(s)

    # ================================================================ dispatch
    def _simplify(self, e: PrimExpr) -> PrimExpr:
        t = e.ty
        if is_index_type(t):
            return self._int_expr(e)
        if type(t) is PrimType and t.is_bool and t.lanes == 1:
            return self._bool(e)
        if type(e) is Call and isinstance(e.op, Op) and e.op.traits.select:
            return self._select_call(e)
        return self._generic(e)

    def _int_expr(self, e: PrimExpr) -> PrimExpr:
        try:
            s = self.sum_of(e)
            if self.canonical or type(e) not in (Add, Sub, Mul) or s.is_const():
                return self.build(s)
        except NoFit:
            return self._generic(e)
        # rewrite_simplify: the node keeps its shape, with its operands simplified
        node: Any = e
        a, b = self.simplify(node.a), self.simplify(node.b)
        return _merge_constants(_fold_node(type(node)(a, b)))

    def _generic(self, e: PrimExpr) -> PrimExpr:
        """``e`` with its expression children simplified and its own node folded as TIRx
        folds constants (``tirx.ir.fold``)."""

        def field(node: Any, kind: str, v: Any) -> Any:
            if kind == NODE and isinstance(v, PrimExpr):
                return self.simplify(v)
            if kind == SEQ and type(v) is tuple:
                return map_tuple(v, lambda x: self.simplify(x) if isinstance(x, PrimExpr) else x)
            return v

        r = rebuild(e, field)
        if isinstance(r, BinaryOp):
            r = _fold_node(r)
        elif type(r) is Not and type(r.a) is IntImm:
            r = _true(not r.a.value)
        elif type(r) is Cast:
            r = _fold.cast(r.ty, r.value) if isinstance(r.ty, PrimType) else r
        elif type(r) is Select and type(r.cond) is IntImm:
            r = r.true_value if r.cond.value else r.false_value
        return r

    def _select_call(self, e: Any) -> PrimExpr:
        """``T.if_then_else`` (the lazy select) of a non-index dtype."""
        c = self._bool_of(e.args[0])
        if type(c) is IntImm:
            arm = _fold.select_arms(e)[0 if c.value else 1]
            return self.simplify(arm)
        args = (c, self.simplify(e.args[1]), self.simplify(e.args[2]))
        return e if all(x is y for x, y in zip(args, e.args)) else attrs.evolve(e, args=args)

    # ================================================================ integer rules
    def _atom(self, e: PrimExpr) -> Sum:
        if type(e) is IntImm:
            return Sum(e.ty, {}, e.value)
        return Sum.of_atom(e.ty, self.atoms.id_of(e))

    def _s_IntImm(self, e: IntImm) -> Sum:
        return Sum(e.ty, {}, e.value)

    def _s_Var(self, v: Var) -> Sum:
        sub = self._subst.get(v)
        if sub is not None:
            return self.sum_of(sub)
        b = self.state.bindings.get(v)
        if b is not None and b.ty == v.ty and id(v) not in self._expanding:
            self._expanding.add(id(v))
            try:
                return self.sum_of(b)
            finally:
                self._expanding.discard(id(v))
        r = self.state.ranges.get(v)
        if r is not None and r[0] == r[1]:
            return Sum(v.ty, {}, r[0])
        return self._atom(v)

    def _s_Add(self, e: Any) -> Sum:
        return self._merge_divmod(self.sum_of(e.a).plus(self.sum_of(e.b)))

    def _s_Sub(self, e: Any) -> Sum:
        return self._merge_divmod(self.sum_of(e.a).minus(self.sum_of(e.b)))

    def _s_Mul(self, e: Any) -> Sum:
        a = self.sum_of(e.a)
        # a product of sums is a monomial of one atom per sum (``x * (y + 1)``); the left
        # one's atom is made first, so the factors print in the order written
        ma: tuple[Mono, int] | None = None if a.is_const() or self.expand else self._as_monomial(a)
        b = self.sum_of(e.b)
        r = a.times(b)
        if r is None and self.expand:
            r = a.expanded_times(b)
        if r is None:
            fa, fb = ma or self._as_monomial(a), self._as_monomial(b)
            r = Sum(a.ty, {tuple(sorted(fa[0] + fb[0])): fa[1] * fb[1]})
        elif a.is_const() or b.is_const() or len(r.terms) != 1:
            return r
        else:
            sa, sb = a.single(), b.single()
            assert sa is not None and sb is not None  # a product of two single terms
            fa, fb = sa, sb
        shown = self.atoms.display
        shown.setdefault(next(iter(r.terms)), shown.get(fa[0], fa[0]) + shown.get(fb[0], fb[0]))
        return r

    def _as_monomial(self, s: Sum) -> tuple[tuple[int, ...], int]:
        one = s.single()
        if one is not None:
            return one
        return (self.atoms.id_of(self.build(s)),), 1

    def _s_FloorDiv(self, e: Any) -> Sum:
        return self._floordiv(self.sum_of(e.a), self.sum_of(e.b))

    def _s_FloorMod(self, e: Any) -> Sum:
        return self._floormod(self.sum_of(e.a), self.sum_of(e.b))

    def _s_Div(self, e: Any) -> Sum:
        a, b = self.sum_of(e.a), self.sum_of(e.b)
        if a.is_const() and b.is_const() and b.const:
            return Sum(a.ty, {}, trunc_div(a.const, b.const))
        if b.is_const() and b.const > 0 and self.nonneg(a):
            return self._div_by(a, b.const)  # equal to floor division for a >= 0
        return self._atom(Div(self.build(a), self.build(b)))

    def _s_Mod(self, e: Any) -> Sum:
        a, b = self.sum_of(e.a), self.sum_of(e.b)
        if a.is_const() and b.is_const() and b.const:
            return Sum(a.ty, {}, trunc_mod(a.const, b.const))
        if b.is_const() and b.const > 0 and self.nonneg(a):
            return self._mod_by(a, b.const)
        return self._atom(Mod(self.build(a), self.build(b)))

    def _floordiv(self, a: Sum, b: Sum) -> Sum:
        if b.is_const():
            c = b.const
            if a.is_const() and c:
                return Sum(a.ty, {}, a.const // c)
            if c > 0:
                return self._div_by(a, c)
        elif self.nonneg(a) and self.nonneg(b.minus(a).add_const(-1)):
            return Sum(a.ty)  # 0 <= a < b
        elif a.minus(b).is_zero() and self._nonzero(b):
            return Sum(a.ty, {}, 1)
        return self._atom(FloorDiv(self.build(a), self.build(b)))

    def _floormod(self, a: Sum, b: Sum) -> Sum:
        if b.is_const():
            c = b.const
            if a.is_const() and c:
                return Sum(a.ty, {}, a.const % c)
            if c > 0:
                return self._mod_by(a, c)
        elif self.nonneg(a) and self.nonneg(b.minus(a).add_const(-1)):
            return a  # 0 <= a < b
        elif a.minus(b).is_zero() and self._nonzero(b):
            return Sum(a.ty)
        return self._atom(FloorMod(self.build(a), self.build(b)))

    def _div_by(self, a: Sum, c: int) -> Sum:
        """``a // c`` for a constant ``c > 0``: the terms ``c`` divides come out, the constant
        with them when ``c`` divides it too (TIRx's ``(x + 5) // 4`` stays)."""
        q, rest = Sum(a.ty), Sum(a.ty, {}, a.const)
        for m, k in a.terms.items():
            if k % c == 0:
                q.terms[m] = k // c
            else:
                rest.terms[m] = k
        if rest.is_const() or rest.const % c == 0:
            q.const, rest.const = divmod(rest.const, c)
            if rest.is_const():
                return q
        cancelled = self._cancel_gcd(rest, c)
        if cancelled is not None:  # (g*u + r) // (g*c') == u // c' for 0 <= r < g
            rest, c = cancelled
            if c == 1:
                return q.plus(rest)
        lo, hi = self.bound(rest)
        if lo // c == hi // c:
            return q.add_const(lo // c)
        one = rest.single()
        if one is not None and one[1] == 1 and len(one[0]) == 1:
            inner = self._divmod.get(one[0][0])
            if inner is not None and inner[0] is FloorDiv:  # (x // a) // c == x // (a * c)
                return q.plus(self._div_atom(inner[1], inner[2] * c))
        if self.nonneg(rest) and self.nonneg(rest.scaled(-1).add_const(c - 1)):
            return q
        return q.plus(self._div_atom(rest, c))

    @staticmethod
    def _cancel_gcd(rest: Sum, c: int) -> tuple[Sum, int] | None:
        """``rest`` and ``c`` divided by the gcd ``g`` of ``c`` and ``rest``'s coefficients, the
        constant dropped, when the constant lies in ``[0, g)`` (else None)."""
        g = math.gcd(c, rest.coeff_gcd())
        if g <= 1 or not 0 <= rest.const < g:
            return None
        return Sum(rest.ty, {m: k // g for m, k in rest.terms.items()}), c // g

    def _mod_by(self, a: Sum, c: int) -> Sum:
        """``a % c`` for a constant ``c > 0``: the constant and the coefficients reduced modulo
        ``c`` (a coefficient only from ``c`` up: TIRx's ``x * 2 % 3`` stays)."""
        rest = Sum(a.ty, {}, a.const % c)
        for m, k in a.terms.items():
            if k % c:
                rest.terms[m] = k
        if len(rest.terms) == 1:  # (x * 3) % 2 is x % 2
            rest.terms = {m: k % c for m, k in rest.terms.items()}
        if rest.is_const():
            return rest
        cancelled = self._cancel_gcd(rest, c)
        if cancelled is not None:  # (g*u + r) % (g*c') == g * (u % c') + r for 0 <= r < g
            inner, c2 = cancelled
            return self._mod_by(inner, c2).scaled(c // c2).add_const(rest.const)
        lo, hi = self.bound(rest)
        if lo // c == hi // c:
            return rest.add_const(-(lo // c) * c)
        one = rest.single()
        if one is not None and one[1] == 1 and len(one[0]) == 1:
            inner_dm = self._divmod.get(one[0][0])
            if inner_dm is not None and inner_dm[0] is FloorMod and inner_dm[2] % c == 0:  # (x % (k*c)) % c
                return self._mod_by(inner_dm[1], c)
            if inner_dm is not None and inner_dm[0] is FloorDiv:  # (x // a) % c is x % (a*c) // a
                return self._div_atom(self._mod_atom(inner_dm[1], inner_dm[2] * c), inner_dm[2])
        if self.nonneg(rest) and self.nonneg(rest.scaled(-1).add_const(c - 1)):
            return rest
        return self._mod_atom(rest, c)

    def _div_atom(self, inner: Sum, c: int) -> Sum:
        s = self._atom(FloorDiv(self.build(inner), IntImm(c, inner.ty)))
        self._divmod.setdefault(next(iter(s.terms))[0], (FloorDiv, inner, c))
        return s

    def _mod_atom(self, inner: Sum, c: int) -> Sum:
        s = self._atom(FloorMod(self.build(inner), IntImm(c, inner.ty)))
        self._divmod.setdefault(next(iter(s.terms))[0], (FloorMod, inner, c))
        return s

    def _merge_divmod(self, s: Sum) -> Sum:
        """``k * (x % c) + k * c * (x // c)`` is ``k * x``; ``k * x - k * c * (x // c)`` is
        ``k * (x % c)`` (when every term of ``x`` is there to take)."""
        if not self._divmod:
            return s
        for m in list(s.terms):
            info = self._divmod.get(m[0]) if len(m) == 1 else None
            k = s.terms.get(m)
            if info is None or k is None:
                continue
            cls, inner, c = info
            if cls is FloorMod:
                div = self._div_atom(inner, c)
                dm = next(iter(div.terms))
                if s.terms.get(dm) == k * c:
                    s = s.minus(Sum(s.ty, {m: k, dm: k * c})).plus(inner.scaled(k))
            elif k % c == 0:
                j = -k // c
                if inner.terms and all(s.terms.get(t) == j * v for t, v in inner.terms.items()):
                    s = (
                        s.minus(inner.scaled(j))
                        .minus(Sum(s.ty, {m: k}))
                        .plus(self._mod_atom(inner, c).scaled(j))
                    )
        return s

    def _s_Min(self, e: Any) -> Sum:
        return self._minmax(e, True)

    def _s_Max(self, e: Any) -> Sum:
        return self._minmax(e, False)

    def _minmax(self, e: Any, is_min: bool) -> Sum:
        a, b = self.sum_of(e.a), self.sum_of(e.b)
        if a.is_const() and b.is_const():
            return a if (a.const <= b.const) == is_min else b
        d = a.minus(b)
        if self.nonneg(d.scaled(-1)):  # a <= b
            return a if is_min else b
        if self.nonneg(d):
            return b if is_min else a
        nested = self._nested_minmax(a, b, is_min) or self._nested_minmax(b, a, is_min)
        if nested is not None:
            return nested
        # what both sides add moves out: min(x + 1, y + 1) is min(x, y) + 1, max(x + z, y + x)
        # is max(z, y) + x (a term only when both sides keep one)
        common = Sum(a.ty, {m: v for m, v in a.terms.items() if b.terms.get(m) == v})
        if len(common.terms) in (len(a.terms), len(b.terms)):
            common = Sum(a.ty)
        if a.const == b.const:
            common.const = a.const
        a, b = a.minus(common), b.minus(common)
        node = (Min if is_min else Max)(self.build(a), self.build(b))
        return common.plus(self._atom(node)) if common.terms else self._atom(node).add_const(common.const)

    def _nested_minmax(self, a: Sum, b: Sum, is_min: bool) -> Sum | None:
        """``min(x, min(x, y))`` is ``min(x, y)``; ``min(x, max(x, y))`` is ``x``."""
        one = b.single()
        if one is None or one[1] != 1 or len(one[0]) != 1:
            return None
        node: Any = self.atoms.exprs[one[0][0]]
        if type(node) is not Min and type(node) is not Max:
            return None
        try:
            ida = self.atoms.id_of(self.build(a))
        except NoFit:
            return None
        if ida not in (self.atoms.id_of(node.a), self.atoms.id_of(node.b)):
            return None
        return b if (type(node) is Min) == is_min else a

    def _s_Select(self, e: Any) -> Sum:
        return self._select(e.cond, e.true_value, e.false_value, lambda c, t, f: Select(c, t, f))

    def _s_Call(self, e: Any) -> Sum:
        if isinstance(e.op, Op) and e.op.traits.select:
            t, f = _fold.select_arms(e)
            return self._select(e.args[0], t, f, lambda c, t_, f_: attrs.evolve(e, args=(c, t_, f_)))
        return self._atom(self._generic(e))

    def _select(self, cond: PrimExpr, t: PrimExpr, f: PrimExpr, make: Callable[..., PrimExpr]) -> Sum:
        c = self._bool_of(cond)
        if type(c) is IntImm:
            return self.sum_of(t if c.value else f)
        st, sf = self.sum_of(t), self.sum_of(f)
        if st.minus(sf).is_zero():
            return st
        return self._atom(make(c, self.build(st), self.build(sf)))

    def _s_Cast(self, e: Any) -> Sum:
        v = self.simplify(e.value)
        r = _fold.cast(e.ty, v)
        if type(r) is IntImm or r is v:
            return self.sum_of(r)
        return self._atom(r)

    def _s_Let(self, e: Any) -> Sum:
        v = self.simplify(e.value)
        if type(v) is IntImm or type(v) is Var:
            self._subst[e.var] = v
            try:
                return self.sum_of(e.body)
            finally:
                del self._subst[e.var]
        return self._atom(Let(e.var, v, self.simplify(e.body)))

    # ================================================================ booleans
    def _bool_of(self, e: PrimExpr) -> PrimExpr:
        """A condition simplified; a non-bool scalar condition is ``e != 0``."""
        if isinstance(e.ty, PrimType) and not e.ty.is_bool:
            e = NE(e, IntImm(0, e.ty)) if e.ty.is_int else e
        return self.simplify(e)

    def _bool(self, e: PrimExpr) -> PrimExpr:
        t = type(e)
        if t is IntImm:
            return e
        if t in _CMP:
            r = self._cmp(e)
        elif t is And or t is Or:
            r = self._logic(e, t is And)
        elif t is Not:
            r = self._not(cast(Any, e).a)
        else:
            r = self._generic(e)
        return self._known(r)

    def _known(self, r: PrimExpr) -> PrimExpr:
        """``r`` decided by the known-true conditions that are literally it or its negation."""
        if type(r) is IntImm or not self.use_facts or not self.state.literal:
            return r
        lit = self._literal
        if lit is None:
            lit = self._literal = {self.atoms.id_of(x) for x in self.state.literal}
        if self.atoms.id_of(r) in lit:
            return _true(True)
        if type(r) is Not and self.atoms.id_of(r.a) in lit:
            return _true(False)
        return r

    def _cmp(self, e: Any) -> PrimExpr:
        cls = type(e)
        if not is_index_type(e.a.ty):
            return self._generic(e)
        a, b = self.sum_of(e.a), self.sum_of(e.b)
        if cls is GT:
            cls, a, b = LT, b, a
        elif cls is GE:
            cls, a, b = LE, b, a
        known = self.decide(cls, a, b)
        if known is not None:
            return _true(known)
        try:
            return self._spell_cmp(cls, a, b)
        except NoFit:
            return self._generic(e)

    def decide(self, cls: type, a: Sum, b: Sum) -> bool | None:
        """The truth of ``cls(a, b)`` (LT, LE, EQ or NE) where the facts decide it."""
        d = a.minus(b)
        if cls is LT:
            lt, ge = d.scaled(-1).add_const(-1), d
            return True if self.nonneg(lt, True) else False if self.nonneg(ge, True) else None
        if cls is LE:
            le, gt = d.scaled(-1), d.add_const(-1)
            return True if self.nonneg(le, True) else False if self.nonneg(gt, True) else None
        eq = self._decide_eq(d)
        return eq if eq is None or cls is EQ else not eq

    def _decide_eq(self, d: Sum) -> bool | None:
        if d.is_const():
            return d.const == 0
        g = d.coeff_gcd()
        if g > 1 and d.const % g:
            return False  # x * 2 == 3
        if self._nonzero(d, True):
            return False
        if self.nonneg(d, True) and self.nonneg(d.scaled(-1), True):
            return True
        return None

    def _nonzero(self, d: Sum, chain: bool = False) -> bool:
        return self.nonneg(d.add_const(-1), chain) or self.nonneg(d.scaled(-1).add_const(-1), chain)

    def _spell_cmp(self, cls: type, a: Sum, b: Sum) -> PrimExpr:
        """An undecided comparison as TIRx spells it:

        - one term against a constant is solved for the term (``x * 2 < 7`` is ``x < 4``,
          ``y // 8 > 1`` is ``15 < y``); a ``min`` / ``max`` side splits (``max(y, z) < x`` is
          ``y < x and z < x``);
        - ``==`` / ``!=`` against a constant move the constants right (``5 == x - y`` is
          ``x - y == 5``), and are otherwise kept as they are;
        - ``<`` / ``<=``: ``x < c - y`` is ``x + y < c`` (and the mirror), a constant side keeps
          the constant, else the constants meet on one side (``x <= z - 2`` is ``x + 2 <= z``,
          ``x - 7 <= y + 4`` is ``x <= y + 11``), ``x < y + 1`` is ``x <= y`` and ``x <= y - 1``
          is ``x < y``; ``x + y < x + z`` is ``y < z``; nothing else moves between the sides.
        """
        ty = a.ty
        if cls is EQ or cls is NE:
            if not a.terms:
                a, b = b, a
            if not b.terms:
                return cls(self.build(a.add_const(-a.const)), self.build(Sum(ty, {}, b.const - a.const)))
            return cls(self.build(a), self.build(b))
        d = a.minus(b)
        if (
            len(d.terms) == 1
            and not (a.terms and b.terms)
            and self._split_minmax(cls, a, b, probe=True) is None
        ):
            ((m, c),) = d.terms.items()
            x, k = Sum(ty, {m: 1}), -d.const  # c*m < k  /  c*m <= k
            if c > 0:
                return self._bounded(cls, x, (k - 1) // c + 1 if cls is LT else k // c, upper=True)
            c = -c  # -c*m < k  <=>  m > -k / c
            return self._bounded(cls, x, (-k) // c if cls is LT else -(k // c), upper=False)
        if a.terms and b.terms:
            a, b = _move_negatives(a, b)
        if not a.terms:
            lhs, rhs = Sum(ty, {}, a.const - b.const), b.add_const(-b.const)
        elif not b.terms:
            lhs, rhs = a.add_const(-a.const), Sum(ty, {}, b.const - a.const)
        else:
            k = b.const - a.const
            if k == 1 and cls is LT:
                cls, k = LE, 0
            elif k == -1 and cls is LE:
                cls, k = LT, 0
            a, b = a.add_const(-a.const), b.add_const(-b.const)
            if len(a.terms) == 2 and len(b.terms) == 2 and k == 0:  # x + y < x + z
                same = [m for m, v in a.terms.items() if b.terms.get(m) == v]
                if len(same) == 1:
                    t = Sum(ty, {same[0]: a.terms[same[0]]})
                    a, b = a.minus(t), b.minus(t)
            lhs, rhs = (a, b.add_const(k)) if k >= 0 else (a.add_const(-k), b)
        split = self._split_minmax(cls, lhs, rhs)
        return split if split is not None else cls(self.build(lhs), self.build(rhs))

    def _bounded(self, cls: type, x: Sum, bound: int, upper: bool) -> PrimExpr:
        """``x < bound`` / ``x <= bound`` (``upper``) or ``bound < x`` / ``bound <= x``, a
        ``e // c`` side turned into a bound of ``e``."""
        ((m, _),) = x.terms.items()
        inner = self._divmod.get(m[0]) if len(m) == 1 else None
        if inner is not None and inner[0] is FloorDiv:
            e, c = inner[1], inner[2]
            if upper:  # e // c < K  <=>  e < K*c ;  e // c <= K  <=>  e <= K*c + c - 1
                return self._spell_cmp(cls, e, Sum(e.ty, {}, bound * c if cls is LT else bound * c + c - 1))
            # K < e // c  <=>  (K+1)*c - 1 < e ;  K <= e // c  <=>  K*c <= e
            return self._spell_cmp(cls, Sum(e.ty, {}, (bound + 1) * c - 1 if cls is LT else bound * c), e)
        k = self.build(Sum(x.ty, {}, bound))
        return cls(self.build(x), k) if upper else cls(k, self.build(x))

    def _split_minmax(self, cls: type, lhs: Sum, rhs: Sum, probe: bool = False) -> PrimExpr | None:
        """``min(p, q) < r`` is ``p < r or q < r``, ``max`` an ``and``; on the right the other way
        (``probe``: only whether it applies, as ``_true(True)``)."""
        for side, other, left in ((lhs, rhs, True), (rhs, lhs, False)):
            one = side.single()
            if one is None or one[1] != 1 or len(one[0]) != 1:
                continue
            node: Any = self.atoms.exprs[one[0][0]]
            if type(node) is not Min and type(node) is not Max:
                continue
            if probe:
                return _true(True)
            o = self.build(other)
            parts = [cls(p, o) if left else cls(o, p) for p in (node.a, node.b)]
            is_and = (type(node) is Max) == left
            return self.simplify((And if is_and else Or)(*parts))
        return None

    def _logic(self, e: Any, is_and: bool) -> PrimExpr:
        a = self._bool_of(e.a)
        if type(a) is IntImm and bool(a.value) != is_and:
            return a  # false and ..., true or ...
        return self._combine(is_and, a, self._bool_of(e.b))

    def _combine(self, is_and: bool, a: PrimExpr, b: PrimExpr) -> PrimExpr:
        """``a and b`` / ``a or b`` of simplified conditions: constants absorbed, and two
        inequalities that cannot both hold (``x < 5 and x > 7``) or cannot both fail decided."""
        for x, y in ((a, b), (b, a)):
            if type(x) is IntImm:
                return y if bool(cast(Any, x).value) == is_and else x
        fa, fb = self._ineqs(a), self._ineqs(b)
        if fa and fb:
            if is_and and any(self._negative(x.plus(y)) for x in fa for y in fb):
                return _true(False)
            if not is_and and len(fa) == 1 and len(fb) == 1 and self.nonneg(fa[0].plus(fb[0]).add_const(1)):
                return _true(True)  # x < 5 or x > 3
        return (And if is_and else Or)(a, b)

    def _negative(self, s: Sum) -> bool:
        return self.nonneg(s.scaled(-1).add_const(-1))

    def _ineqs(self, c: Any) -> list[Sum] | None:
        """``c`` (a simplified comparison of index values) as sums known ``>= 0`` when it holds."""
        t = type(c)
        if t not in (LT, LE, EQ) or not is_index_type(c.a.ty):
            return None
        d = self.sum_of(c.b).minus(self.sum_of(c.a))
        if t is LT:
            return [d.add_const(-1)]
        if t is LE:
            return [d]
        return [d, d.scaled(-1)]

    def _not(self, x: PrimExpr) -> PrimExpr:
        return self._negate(self._bool_of(x))

    def _negate(self, a: Any) -> PrimExpr:
        """The negation of a simplified condition, pushed through ``and`` / ``or`` and into
        comparisons (``not x < y`` is ``y <= x``); memoized, so linear in the condition."""
        r = self._negs.get(id(a))
        if r is not None:
            return r
        t = type(a)
        flip = _NEGATED.get(t)
        if t is IntImm:
            r = _true(not a.value)
        elif t is Not:
            r = a.a
        elif flip is not None:
            r = flip[0](a.b, a.a) if flip[1] else flip[0](a.a, a.b)
        elif t is And or t is Or:
            r = self._combine(t is Or, self._negate(a.a), self._negate(a.b))
        else:
            r = Not(a)
        self._negs[id(a)] = r
        self._negs.setdefault(id(r), a)  # not not a is a: a second negation costs nothing
        self._keep += (a, r)
        return r

    # ================================================================ proofs
    def bound(self, s: Sum) -> tuple[int, int]:
        """An interval holding every value of ``s`` (its terms bounded one by one)."""
        lo = hi = s.const
        for m, k in s.terms.items():
            mlo, mhi = self._mono_bound(m)
            if k > 0:
                lo, hi = lo + k * mlo, hi + k * mhi
            else:
                lo, hi = lo + k * mhi, hi + k * mlo
        return lo, hi

    def _mono_bound(self, m: tuple[int, ...]) -> tuple[int, int]:
        out = (1, 1)
        i = 0
        while i < len(m):
            j = i
            while j < len(m) and m[j] == m[i]:
                j += 1
            out = _times(out, _power(self._atom_bound(m[i]), j - i))
            i = j
        return out

    def _atom_bound(self, aid: int) -> tuple[int, int]:
        r = self._atom_bounds.get(aid)
        if r is None:
            r = self.state.bounds(self.atoms.exprs[aid])
            assert r is not None  # atoms of sums are integer scalars
            self._atom_bounds[aid] = r
        return r

    def nonneg(self, s: Sum, chain: bool = False) -> bool:
        """Whether ``s >= 0`` follows from the bounds and the known inequalities: ``s`` less a
        multiple of one fact still nonnegative by bounds; with ``chain`` (comparisons) or
        ``strength`` 1 (everything), less two facts (``y < n`` and ``n <= i`` give ``y < i``).
        Chained facts must each share a term with what is left (``strength`` 1: any two)."""
        if self.bound(s)[0] >= 0:
            return True
        if not self.use_facts:
            return False
        facts = self._fact_sums()
        for f in facts:
            for k in _multipliers(s, f):
                if self.bound(s.minus(f.scaled(k)))[0] >= 0:
                    return True
        if self.strength >= 1:
            for i, f in enumerate(facts):
                for g in facts[i + 1 :]:
                    if self.bound(s.minus(f).minus(g))[0] >= 0:
                        return True
        elif chain:
            for f in facts:
                if not _shares(s, f):
                    continue
                r = s.minus(f)
                for g in facts:
                    if g is not f and _shares(r, g) and self.bound(r.minus(g))[0] >= 0:
                        return True
        return False

    def _fact_sums(self) -> list[Sum]:
        facts = self._facts
        if facts is None:
            self._facts = []  # a fact's own normal form is taken without the facts
            self.use_facts = False
            try:
                facts = self._facts = [self.sum_of(d) for d in self.state.linear]
            finally:
                self.use_facts = True
        return facts


_SUM_RULES: dict[type, Callable[[Engine, Any], Sum]] = {
    IntImm: Engine._s_IntImm,
    Var: Engine._s_Var,
    Add: Engine._s_Add,
    Sub: Engine._s_Sub,
    Mul: Engine._s_Mul,
    FloorDiv: Engine._s_FloorDiv,
    FloorMod: Engine._s_FloorMod,
    Div: Engine._s_Div,
    Mod: Engine._s_Mod,
    Min: Engine._s_Min,
    Max: Engine._s_Max,
    Select: Engine._s_Select,
    Call: Engine._s_Call,
    Cast: Engine._s_Cast,
    Let: Engine._s_Let,
}


def _move_negatives(a: Sum, b: Sum) -> tuple[Sum, Sum]:
    """TIRx's ``x < c - y`` is ``x + y < c`` and ``c - y < x`` is ``c < x + y``: a side that is a
    (nonzero) constant less some terms gives them to the other side."""
    if b.const and all(v < 0 for v in b.terms.values()):
        return a.minus(Sum(b.ty, dict(b.terms))), Sum(b.ty, {}, b.const)
    if a.const and all(v < 0 for v in a.terms.values()):
        return Sum(a.ty, {}, a.const), b.minus(Sum(a.ty, dict(a.terms)))
    return a, b


def _shares(s: Sum, f: Sum) -> bool:
    return any(m in s.terms for m in f.terms)


def _multipliers(s: Sum, f: Sum) -> list[int]:
    """How many times fact ``f`` to take off ``s``: once, or the ratio of a shared term."""
    out = [1]
    for m, k in f.terms.items():
        v = s.terms.get(m)
        if v is not None and v % k == 0 and v // k > 1:
            out.append(v // k)
            break
    return out


def _times(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    vs = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return min(vs), max(vs)


def _power(r: tuple[int, int], n: int) -> tuple[int, int]:
    if n == 1:
        return r
    lo, hi = r
    if n % 2 == 0:
        top = max(abs(lo), abs(hi)) ** n
        bottom = 0 if lo <= 0 <= hi else min(abs(lo), abs(hi)) ** n
        return bottom, top
    return lo**n, hi**n


def _fold_node(e: PrimExpr) -> PrimExpr:
    """TIRx's constant folding of one node (a division by a constant zero stays as it is)."""
    try:
        return _fold.fold(e)
    except (ZeroDivisionError, ValueError, TypeError):
        return e


def _merge_constants(e: Any) -> PrimExpr:
    """``(x + c1) + c2`` is ``x + (c1 + c2)`` (what ``rewrite_simplify`` does to a sum it keeps)."""
    inner: Any = getattr(e, "a", None)
    c2: Any = getattr(e, "b", None)
    if type(e) not in (Add, Sub) or type(c2) is not IntImm or type(inner) not in (Add, Sub):
        return e
    c1: Any = inner.b
    if type(c1) is not IntImm:
        return e
    c = (c1.value if type(inner) is Add else -c1.value) + (c2.value if type(e) is Add else -c2.value)
    hi = int_range(e.ty)[1]
    if c == 0:
        return inner.a
    if 0 < c <= hi:
        return Add(inner.a, IntImm(c, e.ty))
    if 0 < -c <= hi:
        return Sub(inner.a, IntImm(-c, e.ty))
    return e
