"""TIRx's ``tvm_tirx.tirx.analysis`` functions that tirx's IR answers, for passes ported from TIRx.

``check_well_formed`` is tirx's verifier (``tirx.ir.verify``: every variable defined before
its use, buffers and calls valid); ``undefined_vars`` lists the variables a statement or
expression uses without defining them (a loop's, a ``Bind``'s, a ``Let``'s or an allocation's
own variables are defined inside it), in the order they are first used;
``detect_linear_equation`` reads an expression's coefficients off ``tirx.sym``'s normal form.
TIRx's other analyses (``detect_clip_bound``, ``verify_memory``, ...) are not served: an
unknown name is an ``AttributeError`` that says so.
"""

from __future__ import annotations

from typing import Any

from tirx.ir import Function, Module, PrimExpr, Stmt, Var
from tirx.ir.verify import raise_errors, verify_well_formed

__all__ = ["check_well_formed", "detect_linear_equation", "undefined_vars"]


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
    if defs is None:
        defs = ()
    if isinstance(defs, (str, bytes)) or not hasattr(defs, "__iter__"):
        raise TypeError(f"undefined_vars: defs must be a list of Vars, got {type(defs).__name__}")
    defined: set[int] = set()
    for i, v in enumerate(defs):
        if not isinstance(v, Var):
            raise TypeError(f"undefined_vars: defs[{i}] must be a Var, got {type(v).__name__}")
        defined.add(id(v))
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
    if isinstance(var_list, (str, bytes)) or not hasattr(var_list, "__iter__"):
        raise TypeError(
            f"detect_linear_equation: var_list must be a list of Vars, got {type(var_list).__name__}"
        )
    vs = list(var_list)
    for i, v in enumerate(vs):
        if not isinstance(v, Var):
            raise TypeError(f"detect_linear_equation: var_list[{i}] must be a Var, got {type(v).__name__}")
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
