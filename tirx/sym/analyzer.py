"""``Analyzer``: TIRx's symbolic integer analyzer (``tvm_tirx.sym.Analyzer``) over tirx IR.

An analyzer holds the facts of one point of a program (``sync_constraint_context``: the loop
ranges, guards and bindings a constraint-aware walk hands its callback) and answers questions
about expressions there: simplify them, bound them, prove comparisons. It reasons about
integers as TIRx's does: index arithmetic is taken not to overflow its dtype. What it proves
holds for every value the facts allow; what it cannot prove it says it cannot (``False``,
``UNKNOWN``, an unchanged node), never a guess.

Every query runs through ``tirx.ir.deep``, so deeply nested expressions never raise
``RecursionError``.
"""

from __future__ import annotations

from typing import Any

from tirx.ir import EQ, IntImm, PrimExpr, PrimType, Var, convert, deep
from tirx.ir import fold as _fold

from .canonical import NoFit, Sum, is_index_type
from .constraint import Constraint, ConstraintContext
from .engine import Budget, Engine
from .int_set import IntervalSet, IntSet
from .premises import extend
from .relax import Domain, relax
from .state import State, modular_set
from .values import CompareResult, ConstIntBound, ModularSet, ProofStrength

__all__ = ["Analyzer"]


def _expr(api: str, arg: str, v: Any) -> PrimExpr:
    if isinstance(v, PrimExpr):
        return v
    if isinstance(v, (bool, int)):
        return convert(v)
    raise TypeError(f"Analyzer.{api}: {arg} must be a PrimExpr, got {type(v).__name__}")


def _steps(api: str, arg: str, v: Any) -> int:
    if type(v) is not int:
        raise TypeError(f"Analyzer.{api}: {arg} must be an int, got {type(v).__name__}")
    return v


class Analyzer:
    """Simplifies and bounds integer expressions under the facts it was synchronized with."""

    __slots__ = ("_max_steps", "_stack", "_state")

    def __init__(self) -> None:
        self._stack: list[tuple[Constraint, State]] = []  # the synced constraints, each with its state
        self._state = State()
        self._max_steps = 0

    # ------------------------------------------------------------------ facts
    def sync_constraint_context(self, context: ConstraintContext) -> None:
        """Take the facts of ``context`` (and drop those of the context synced before that it
        lacks). Facts appended to ``context`` later count only after another call; a repeated
        call for an unchanged context costs a walk of its entries."""
        if not isinstance(context, ConstraintContext):
            raise TypeError(
                f"Analyzer.sync_constraint_context: context must be a ConstraintContext, got {type(context).__name__}"
            )
        entries = list(context)
        keep = 0
        while keep < len(entries) and keep < len(self._stack) and self._stack[keep][0] is entries[keep]:
            keep += 1
        del self._stack[keep:]
        state = self._stack[-1][1] if self._stack else State()
        for c in entries[keep:]:
            state = deep.call(extend, state, c)
            self._stack.append((c, state))
        self._state = state

    def clone(self) -> Analyzer:
        """An analyzer with the same facts and settings; later syncs of either leave the other be."""
        a = Analyzer()
        a._stack = list(self._stack)  # states are never changed once built: sharing is safe
        a._state = self._state
        a._max_steps = self._max_steps
        return a

    def set_maximum_rewrite_steps(self, maximum: int) -> None:
        """Make a simplification that rewrites more than ``maximum`` nodes raise ``RuntimeError``
        (0 or less: no limit)."""
        self._max_steps = _steps("set_maximum_rewrite_steps", "maximum", maximum)

    def _engine(self, **kw: Any) -> Engine:
        return Engine(self._state, budget=Budget(self._max_steps), **kw)

    # ------------------------------------------------------------------ simplification
    def simplify(self, expr: Any, steps: int = 2) -> PrimExpr:
        """``expr`` simplified: ``rewrite_simplify`` then ``canonical_simplify``, alternating for
        ``steps`` steps (2: one of each)."""
        e = _expr("simplify", "expr", expr)
        n = _steps("simplify", "steps", steps)
        if n < 0:
            raise ValueError(f"Analyzer.simplify: steps must be >= 0, got {n}")
        for i in range(n):
            e = deep.call(self._run, e, i % 2 == 1)
        return e

    def rewrite_simplify(self, expr: Any) -> PrimExpr:
        """``expr`` with constants folded and what the facts decide decided, each ``+ - *`` node
        keeping its place (no terms regrouped)."""
        return deep.call(self._run, _expr("rewrite_simplify", "expr", expr), False)

    def canonical_simplify(self, expr: Any) -> PrimExpr:
        """``expr`` with integer arithmetic in normal form: like terms collected
        (``(x + y) * 2 - y * 2`` is ``x * 2``), divisions and remainders split where they can
        be, and what the facts decide decided."""
        return deep.call(self._run, _expr("canonical_simplify", "expr", expr), True)

    def _run(self, e: PrimExpr, canonical: bool) -> PrimExpr:
        return self._engine(canonical=canonical).simplify(e)

    # ------------------------------------------------------------------ bounds
    def const_int_bound(self, expr: Any) -> ConstIntBound:
        """Constant bounds of every value ``expr`` takes (of the expression as written: bound
        a simplified expression for tighter ones)."""
        e = _expr("const_int_bound", "expr", expr)
        r = deep.call(self._state.bounds, e) if _scalar_int(e) else None
        if r is None:
            return ConstIntBound(ConstIntBound.NEG_INF, ConstIntBound.POS_INF)
        return ConstIntBound(*r)

    def const_int_bound_is_bound(self, var: Any) -> bool:
        """Whether the facts give ``var`` a range (a loop range, a guard, a binding)."""
        if not isinstance(var, Var):
            raise TypeError(f"Analyzer.const_int_bound_is_bound: var must be a Var, got {type(var).__name__}")
        return var in self._state.ranges

    def modular_set(self, expr: Any) -> ModularSet:
        """``ModularSet(coeff, base)``: every value of ``expr`` is ``coeff * k + base``."""
        e = _expr("modular_set", "expr", expr)
        return ModularSet(*deep.call(modular_set, e, self._state))

    def int_set(self, expr: Any, dom_map: Any = None) -> IntSet:
        """The interval ``expr`` covers while each variable of ``dom_map`` (``{Var: IntervalSet
        or range}``) ranges over its domain; without ``dom_map``, the variables with a range
        in the facts range over it."""
        e = _expr("int_set", "expr", expr)
        dom = self._state.domains if dom_map is None else _domains(dom_map)
        return deep.call(relax, e, self._state, dom)

    # ------------------------------------------------------------------ proofs
    def can_prove(self, expr: Any, strength: Any = ProofStrength.DEFAULT) -> bool:
        """Whether ``expr`` is true for every value the facts allow (``False``: not proven)."""
        e = _expr("can_prove", "expr", expr)
        s = _strength(strength)
        r = deep.call(self._prove, e, s)
        return type(r) is IntImm and r.value != 0

    def _prove(self, e: PrimExpr, strength: int) -> PrimExpr:
        eng = self._engine(strength=strength)
        if isinstance(e.ty, PrimType) and not e.ty.is_bool:
            return eng._bool_of(e)
        return eng.simplify(e)

    def can_prove_equal(self, lhs: Any, rhs: Any) -> bool:
        """Whether ``lhs == rhs`` for every value the facts allow."""
        a, b = _expr("can_prove_equal", "lhs", lhs), _expr("can_prove_equal", "rhs", rhs)
        return deep.call(self._equal, a, b)

    def _equal(self, a: PrimExpr, b: PrimExpr) -> bool:
        if a.ty != b.ty:
            try:
                a, b = _fold.match(a, b)
            except TypeError:
                return False
        if not is_index_type(a.ty):
            return self.can_prove(EQ(a, b))
        for expand in (False, True):
            eng = self._engine(expand=expand)
            try:
                if eng.decide(EQ, eng.sum_of(a), eng.sum_of(b)):
                    return True
            except NoFit:
                return False
        return False

    def try_compare(self, lhs: Any, rhs: Any) -> CompareResult:
        """The most specific relation of ``lhs`` to ``rhs`` that the facts prove."""
        a, b = _expr("try_compare", "lhs", lhs), _expr("try_compare", "rhs", rhs)
        return deep.call(self._compare, a, b)

    def _compare(self, a: PrimExpr, b: PrimExpr) -> CompareResult:
        if a.ty != b.ty:
            try:
                a, b = _fold.match(a, b)
            except TypeError:
                return CompareResult.UNKNOWN
        if not is_index_type(a.ty):
            return CompareResult.UNKNOWN
        eng = self._engine()
        d = eng.sum_of(a).minus(eng.sum_of(b))
        ge, le = eng.nonneg(d, True), eng.nonneg(d.scaled(-1), True)
        if ge and le:
            return CompareResult.EQ
        if eng.nonneg(d.scaled(-1).add_const(-1), True):
            return CompareResult.LT
        if eng.nonneg(d.add_const(-1), True):
            return CompareResult.GT
        if le:
            return CompareResult.LE
        if ge:
            return CompareResult.GE
        if eng.decide(EQ, d, Sum(d.ty)) is False:
            return CompareResult.NE
        return CompareResult.UNKNOWN

    # ------------------------------------------------------------------ no Z3 here
    @property
    def is_z3_enabled(self) -> bool:
        """False: tirx has no Z3 backend (TIRx's without ``USE_Z3``)."""
        return False

    def get_smtlib2(self, expr: Any = None) -> str:
        raise RuntimeError("tirx.sym: the Z3 backend is not available (Analyzer.is_z3_enabled is False)")

    def get_z3_stats(self) -> str:
        raise RuntimeError("tirx.sym: the Z3 backend is not available (Analyzer.is_z3_enabled is False)")

    def set_z3_timeout_ms(self, timeout_ms: int) -> None:
        raise RuntimeError("tirx.sym: the Z3 backend is not available (Analyzer.is_z3_enabled is False)")

    def set_z3_rlimit(self, rlimit: int) -> None:
        raise RuntimeError("tirx.sym: the Z3 backend is not available (Analyzer.is_z3_enabled is False)")

    def __repr__(self) -> str:
        return f"<tirx.sym.Analyzer with {len(self._stack)} constraints>"


def _scalar_int(e: PrimExpr) -> bool:
    t = e.ty
    return isinstance(t, PrimType) and t.lanes == 1 and (t.is_int or t.is_bool)


def _strength(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"Analyzer.can_prove: strength must be a ProofStrength, got {type(v).__name__}")
    try:
        return int(ProofStrength(v))
    except ValueError:
        raise ValueError(f"Analyzer.can_prove: strength must be a ProofStrength, got {v!r}") from None


def _domains(dom_map: Any) -> dict[Var, Domain]:
    if not hasattr(dom_map, "items"):
        raise TypeError(
            f"Analyzer.int_set: dom_map must be a dict of Var to IntSet, got {type(dom_map).__name__}"
        )
    out: dict[Var, Domain] = {}
    for v, d in dom_map.items():
        if not isinstance(v, Var):
            raise TypeError(f"Analyzer.int_set: dom_map keys must be Vars, got {type(v).__name__}")
        if isinstance(d, IntervalSet):
            out[v] = (d.min_value, d.max_value)
        elif hasattr(d, "begin") and hasattr(d, "extent"):
            lo = _expr("int_set", "dom_map range begin", d.begin)
            out[v] = (lo, lo + _expr("int_set", "dom_map range extent", d.extent) - 1)
        else:
            raise TypeError(
                f"Analyzer.int_set: dom_map[{v.name}] must be an IntervalSet or a range, got {type(d).__name__}"
            )
    return out
