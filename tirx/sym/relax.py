"""``Analyzer.int_set``: the interval an integer expression covers while some variables range
over their domains.

The expression is taken in normal form; a term that is a domain variable times a coefficient
contributes the matching end of the variable's domain (``x * 4 + 1`` over ``x`` in ``[0, n]``
is ``[1, n * 4 + 1]``), a term that uses no domain variable stays as it is (a point), and
any other term contributes its constant bounds with the domain variables at their constant
bounds. An end that cannot be bounded is ``neg_inf()`` / ``pos_inf()``.
"""

from __future__ import annotations

from typing import Any

from tirx.ir import PrimExpr, Var
from tirx.ir import fold as _fold
from tirx.ir.bounds import UNBOUNDED, dtype_range
from tirx.ir.visitor import collect_vars

from .canonical import Mono, NoFit, Sum, is_index_type
from .engine import Engine
from .int_set import IntervalSet, neg_inf, pos_inf
from .state import ConstBounds, State

__all__ = ["relax"]

Domain = tuple[PrimExpr, PrimExpr]  # inclusive ends, neg_inf() / pos_inf() for none


def relax(e: PrimExpr, state: State, dom: dict[Var, Domain]) -> IntervalSet:
    if not is_index_type(e.ty):
        return IntervalSet(neg_inf(), pos_inf())
    eng = Engine(state)
    s = eng.sum_of(e)
    lo: Sum | None = Sum(s.ty, {}, s.const)
    hi: Sum | None = Sum(s.ty, {}, s.const)
    loose: Sum = Sum(s.ty)  # terms bounded by constants
    for m, k in s.terms.items():
        v = eng.atoms.exprs[m[0]] if len(m) == 1 else None
        if type(v) is Var and v in dom:
            a, b = dom[v]
            lo = _add_end(eng, lo, a if k > 0 else b, k, s.ty)
            hi = _add_end(eng, hi, b if k > 0 else a, k, s.ty)
        elif not _uses(eng, m, dom):
            lo = None if lo is None else lo.plus(Sum(s.ty, {m: k}))
            hi = None if hi is None else hi.plus(Sum(s.ty, {m: k}))
        else:
            loose = loose.plus(Sum(s.ty, {m: k}))
    if loose.terms:
        clo, chi = _const_bounds(eng, loose, state, dom)
        lo = None if lo is None or clo <= -UNBOUNDED else lo.add_const(clo)
        hi = None if hi is None or chi >= UNBOUNDED else hi.add_const(chi)
    return IntervalSet(_end(eng, lo, neg_inf()), _end(eng, hi, pos_inf()))


def _add_end(eng: Engine, acc: Sum | None, end: PrimExpr, k: int, ty: Any) -> Sum | None:
    if acc is None or end is neg_inf() or end is pos_inf():
        return None
    if end.ty != ty:
        end = _fold.cast(ty, end)
    return acc.plus(eng.sum_of(end), k)


def _uses(eng: Engine, m: Mono, dom: dict[Var, Domain]) -> bool:
    return any(v in dom for a in set(m) for v in collect_vars(eng.atoms.exprs[a]))


def _const_bounds(eng: Engine, s: Sum, state: State, dom: dict[Var, Domain]) -> tuple[int, int]:
    """Bounds of ``s`` with each domain variable it uses at the constant bounds of its domain."""
    used = {v for m in s.terms for a in set(m) for v in collect_vars(eng.atoms.exprs[a])}
    ranges = dict(state.ranges)
    for v, (a, b) in dom.items():
        if v not in used:
            continue
        ty: Any = v.ty
        full = dtype_range(ty)
        assert full is not None  # a domain variable of an integer expression
        lo = full[0] if a is neg_inf() else eng.bound(eng.sum_of(_fold.cast(ty, a)))[0]
        hi = full[1] if b is pos_inf() else eng.bound(eng.sum_of(_fold.cast(ty, b)))[1]
        ranges[v] = (max(lo, full[0]), min(hi, full[1]))
    bounds = ConstBounds(ranges)
    total_lo = total_hi = 0
    for m, k in s.terms.items():
        r = bounds(eng.build(Sum(s.ty, {m: 1})))
        assert r is not None  # an integer term
        if k > 0:
            total_lo, total_hi = total_lo + k * r[0], total_hi + k * r[1]
        else:
            total_lo, total_hi = total_lo + k * r[1], total_hi + k * r[0]
    return total_lo, total_hi


def _end(eng: Engine, s: Sum | None, inf: Var) -> PrimExpr:
    if s is None:
        return inf
    try:
        r = eng.build(s)
    except NoFit:
        return inf
    return r
