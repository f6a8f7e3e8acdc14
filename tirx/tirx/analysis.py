"""TIRx's ``tvm_tirx.tirx.analysis`` functions that tirx's IR answers, for passes ported from TIRx.

``check_well_formed`` is tirx's verifier (``tirx.ir.verify``: every variable defined before
its use, buffers and calls valid); ``undefined_vars`` lists the variables a statement or
expression uses without defining them (a loop's, a ``Bind``'s, a ``Let``'s or an allocation's
own variables are defined inside it), in the order they are first used;
``detect_linear_equation`` reads an expression's coefficients off ``tirx.sym``'s normal form,
``detect_clip_bound`` the bounds a condition puts on variables. TIRx's other analyses
(``verify_memory``, ...) are not served: an
unknown name is an ``AttributeError`` that says so.
"""

from __future__ import annotations

from typing import Any

from tirx.ir import Function, Module, PrimExpr, Stmt, Var
from tirx.ir.verify import raise_errors, verify_well_formed

__all__ = ["check_well_formed", "detect_clip_bound", "detect_linear_equation", "undefined_vars"]


def check_well_formed(obj: Any, assert_mode: bool = True) -> bool:
    """Whether ``obj`` (a function or a module) is well formed: True, or with ``assert_mode``
    a ``tirx.DiagnosticError`` (a ``RuntimeError``, as TIRx raises) listing the problems, else
    False."""
    if not isinstance(obj, (Function, Module)):
        raise TypeError(f"check_well_formed: obj must be a Function or a Module, got {type(obj).__name__}")
    errors = verify_well_formed(obj)
    if not errors:
        return True
    if assert_mode:
        raise_errors(errors)
    return False


def undefined_vars(node: Any, defs: Any = None) -> list[Var]:
    """The variables ``node`` (a statement or an expression) uses and does not define, each
    once, in the order of first use; ``defs`` (variables) count as defined."""
    from tirx import ffi

    if not isinstance(node, (Stmt, PrimExpr)):
        raise TypeError(f"undefined_vars: node must be a Stmt or a PrimExpr, got {type(node).__name__}")
    defined = {id(v) for v in _var_list("undefined_vars", () if defs is None else defs, "defs")}
    out: list[Var] = []
    seen: set[int] = set()

    def on_var(v: Var, region: Any) -> None:
        if region != ffi.DefRegionKind.NONE:
            defined.add(id(v))
        elif id(v) not in defined and id(v) not in seen:
            seen.add(id(v))
            out.append(v)

    ffi.structural_walk(node, with_def_region_kind=[(Var, on_var)], order="pre")
    return out


def detect_linear_equation(expr: Any, var_list: Any) -> list[PrimExpr]:
    """``[c_0, ..., c_{n-1}, base]`` with ``expr == sum(var_list[i] * c_i) + base`` and no
    ``c_i`` or ``base`` using a variable of ``var_list``, read off ``tirx.sym``'s normal form
    (a coefficient may be symbolic: ``x * y + 3`` over ``[x]`` is ``[y, 3]``); ``[]`` when
    ``expr`` is not linear in them (``x * x``, ``x // 4``, a product of two of them)."""
    from tirx.ir import collect_vars, deep
    from tirx.sym.canonical import NoFit, Sum, is_index_type
    from tirx.sym.engine import Engine
    from tirx.sym.state import State

    if not isinstance(expr, PrimExpr):
        raise TypeError(f"detect_linear_equation: expr must be a PrimExpr, got {type(expr).__name__}")
    vs = _var_list("detect_linear_equation", var_list)
    if not is_index_type(expr.ty):
        return []
    eng = Engine(State())
    total = deep.call(eng.sum_of, expr)
    slot = {eng.atoms.id_of(v): i for i, v in enumerate(vs)}
    listed = set(vs)
    coeffs: list[dict] = [{} for _ in vs]
    consts = [0] * len(vs)
    rest: dict = {}
    for mono, k in total.terms.items():
        hits = [a for a in mono if a in slot]
        if len(hits) > 1:
            return []  # x * x, x * y: not linear
        if not hits:
            if any(v in listed for a in mono for v in collect_vars(eng.atoms.exprs[a])):
                return []  # a listed variable inside an atom (x // 4, a load at x)
            rest[mono] = k
            continue
        i = slot[hits[0]]
        other = tuple(a for a in mono if a != hits[0])
        if any(v in listed for a in other for v in collect_vars(eng.atoms.exprs[a])):
            return []
        if other:
            coeffs[i][other] = coeffs[i].get(other, 0) + k
        else:
            consts[i] += k
    try:
        out = [eng.build(Sum(total.ty, c, k)) for c, k in zip(coeffs, consts)]
        return [*out, eng.build(Sum(total.ty, rest, total.const))]
    except NoFit:
        return []


def detect_clip_bound(cond: Any, var_list: Any) -> list[Any]:
    """``[min_0, max_0, min_1, max_1, ...]``: the inclusive bounds ``cond`` (comparisons joined by
    ``and``) puts on each variable of ``var_list``, None where it puts none; ``[]`` when a part
    is not a comparison linear in one listed variable (``or``, ``x * x < 10``). A bound may be
    symbolic (``x >= y`` gives ``y``); two bounds on one side give their ``max`` / ``min``."""
    from tirx.ir import EQ, GE, GT, LE, LT, And, IntImm, Max, Min, Sub

    if not isinstance(cond, PrimExpr):
        raise TypeError(f"detect_clip_bound: cond must be a PrimExpr, got {type(cond).__name__}")
    vs = _var_list("detect_clip_bound", var_list)
    parts, todo = [], [cond]
    while todo:
        c = todo.pop()
        if isinstance(c, And):
            todo += [c.b, c.a]
        else:
            parts.append(c)
    lo: list[Any] = [None] * len(vs)
    hi: list[Any] = [None] * len(vs)

    def tighten(bounds: list, i: int, v: Any, pick: type) -> None:
        old = bounds[i]
        if old is None:
            bounds[i] = v
        elif isinstance(old, IntImm) and isinstance(v, IntImm):
            bounds[i] = IntImm((max if pick is Max else min)(old.value, v.value), old.ty)
        else:
            bounds[i] = pick(old, v)

    for c in parts:
        if not isinstance(c, (LT, LE, GT, GE, EQ)) or c.a.ty != c.b.ty:
            return []
        lin = detect_linear_equation(Sub(c.a, c.b), vs)  # c.a - c.b == sum(k_i * v_i) + r
        if not lin:
            return []
        ks, r = lin[:-1], lin[-1]
        hit = [i for i, k in enumerate(ks) if not (isinstance(k, IntImm) and k.value == 0)]
        if not hit:
            continue  # no listed variable: nothing to bound
        kv = ks[hit[0]]
        if len(hit) > 1 or not isinstance(kv, IntImm):
            return []
        i, k = hit[0], kv.value
        # k * v + r  (op)  0, as  k * v >= a  and / or  k * v <= b
        at_least = {GE: 0, GT: 1, EQ: 0}.get(type(c))
        at_most = {LE: 0, LT: -1, EQ: 0}.get(type(c))
        for off, is_low in ((at_least, True), (at_most, False)):
            if off is None:
                continue
            if isinstance(r, IntImm):
                edge = -r.value + off
                q = -((-edge) // k) if (is_low == (k > 0)) else edge // k  # ceil for a lower bound
                bound: Any = IntImm(q, r.ty)
            elif abs(k) == 1:  # v (op) off - r, or with -v: v (op) r - off
                from tirx.sym import Analyzer

                bound = Analyzer().simplify((off - r) if k == 1 else (r - off))
            else:
                return []  # a symbolic bound over a scaled variable: not divided here
            if is_low == (k > 0):
                tighten(lo, i, bound, Max)
            else:
                tighten(hi, i, bound, Min)
    return [b for i in range(len(vs)) for b in (lo[i], hi[i])]


def _var_list(api: str, var_list: Any, arg: str = "var_list") -> list[Var]:
    """``var_list`` (any iterable of Vars, not a string) as a list, or a TypeError naming ``arg``."""
    if isinstance(var_list, (str, bytes)) or not hasattr(var_list, "__iter__"):
        raise TypeError(f"{api}: {arg} must be a list of Vars, got {type(var_list).__name__}")
    vs = list(var_list)
    for i, v in enumerate(vs):
        if not isinstance(v, Var):
            raise TypeError(f"{api}: {arg}[{i}] must be a Var, got {type(v).__name__}")
    return vs
