"""How a constraint becomes facts of a ``State`` (``Analyzer.sync_constraint_context``).

- ``RangeConstraint(v, [begin, begin + extent))``: ``v``'s constant range (from the bounds of
  both ends), its symbolic domain for ``int_set``, and, where an end is not constant, the
  inequalities ``v - begin >= 0`` and ``begin + extent - 1 - v >= 0``;
- ``BindingConstraint(v, value)``: ``v`` is replaced by ``value`` when simplifying, and takes
  its bounds;
- ``PredicateConstraint(c)``: ``c`` simplified and split at ``and``; a comparison of index
  values becomes inequalities (``==`` two), ``v % c == k`` a modular fact of ``v``, anything
  else a condition known true as written. After each predicate, the inequalities that have
  a variable term narrow that variable's constant range (``x >= 5`` makes ``max(x, 1)`` ``x``).
"""

from __future__ import annotations

from typing import Any

from tirx.ir import EQ, LE, LT, NE, And, FloorMod, IntImm, PrimExpr, PrimType, Var

from .canonical import NoFit, Sum, is_index_type
from .constraint import BindingConstraint, Constraint, PredicateConstraint, RangeConstraint
from .engine import Engine
from .state import State

__all__ = ["extend"]

_NARROW_ROUNDS = 2


def extend(state: State, c: Constraint) -> State:
    """A new state: ``state`` and what ``c`` adds."""
    s = state.copy()
    if isinstance(c, RangeConstraint):
        _range(s, c)
    elif isinstance(c, BindingConstraint):
        _binding(s, c)
    elif isinstance(c, PredicateConstraint):
        _predicate(s, c.condition)
    return s


def _range(s: State, c: RangeConstraint) -> None:
    v, begin, extent = c.var, c.range.begin, c.range.extent
    if not is_index_type(v.ty) or begin.ty != v.ty or extent.ty != v.ty:
        return
    eng = Engine(s)
    lo_s = eng.sum_of(begin)
    hi_s = lo_s.plus(eng.sum_of(extent)).add_const(-1)
    lo, hi = eng.bound(lo_s)[0], eng.bound(hi_s)[1]
    try:
        s.domains[v] = (eng.build(lo_s), eng.build(hi_s))
        if not lo_s.is_const():
            s.linear += (eng.build(Sum.of_atom(v.ty, eng.atoms.id_of(v)).minus(lo_s)),)
        if not hi_s.is_const():
            s.linear += (eng.build(hi_s.minus(Sum.of_atom(v.ty, eng.atoms.id_of(v)))),)
    except NoFit:
        pass
    s.set_range(v, lo, hi)


def _binding(s: State, c: BindingConstraint) -> None:
    v, value = c.var, c.value
    if value.ty != v.ty:
        return
    s.bindings[v] = value
    if is_index_type(v.ty):
        eng = Engine(s)
        # the binding is not followed while bounding its own value (a loop is no fact)
        del s.bindings[v]
        lo, hi = eng.bound(eng.sum_of(value))
        s.bindings[v] = value
        s.set_range(v, lo, hi)


def _predicate(s: State, cond: PrimExpr) -> None:
    eng = Engine(s)
    if isinstance(cond.ty, PrimType) and not cond.ty.is_bool:
        if not cond.ty.is_int:
            return
        cond = NE(cond, IntImm(0, cond.ty))
    todo: list[Any] = [eng.simplify(cond)]
    added = False
    while todo:
        x = todo.pop()
        if type(x) is And:
            todo += (x.b, x.a)
            continue
        if type(x) is IntImm:
            continue  # true: nothing to add; false: an unreachable point, any facts will do
        s.literal += (x,)
        if type(x) in (LT, LE, EQ) and is_index_type(x.a.ty):
            d = eng.sum_of(x.b).minus(eng.sum_of(x.a))
            facts = [d.add_const(-1)] if type(x) is LT else [d] if type(x) is LE else [d, d.scaled(-1)]
            try:
                s.linear += tuple(eng.build(f) for f in facts)
            except NoFit:
                continue
            added = True
            _modular(s, x)
    if added:
        _narrow(s)


def _modular(s: State, x: Any) -> None:
    """``v % c == k`` (a variable, constants): every value of ``v`` is ``c * n + k``."""
    if type(x) is not EQ:
        return
    a, b = x.a, x.b
    if type(a) is IntImm:
        a, b = b, a
    if (
        type(a) is FloorMod
        and type(a.a) is Var
        and type(a.b) is IntImm
        and type(b) is IntImm
        and a.b.value > 0
    ):
        s.modular[a.a] = (a.b.value, b.value % a.b.value)


def _narrow(s: State) -> None:
    """Tighten the constant range of each variable that is a term of a known inequality."""
    for _ in range(_NARROW_ROUNDS):
        eng = Engine(s)
        eng.use_facts = False
        changed = False
        for d in s.linear:
            f = eng.sum_of(d)
            for m, k in f.terms.items():
                v = eng.atoms.exprs[m[0]] if len(m) == 1 else None
                if type(v) is not Var:
                    continue
                rhi = eng.bound(f.minus(Sum(f.ty, {m: k})))[1]  # k*v + rest >= 0
                before = s.ranges.get(v)
                if k > 0:
                    s.set_range(v, -(rhi // k), 1 << 256)  # v >= ceil(-rest_max / k)
                else:
                    s.set_range(v, -(1 << 256), rhi // -k)  # v <= rest_max / -k
                changed |= s.ranges.get(v) != before
        if not changed:
            break
