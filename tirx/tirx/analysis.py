"""TIRx's ``tvm_tirx.tirx.analysis`` functions that tirx's IR answers, for passes ported from TIRx.

``check_well_formed`` is tirx's verifier (``tirx.ir.verify``: every variable defined before
its use, buffers and calls valid); ``undefined_vars`` lists the variables a statement or
expression uses without defining them (a loop's, a ``Bind``'s, a ``Let``'s or an allocation's
own variables are defined inside it), in the order they are first used. TIRx's other analyses
(``detect_linear_equation``, ``detect_clip_bound``, ``verify_memory``, ...) are not served: an
unknown name is an ``AttributeError`` that says so.
"""

from __future__ import annotations

from typing import Any

from tirx.ir import Function, Module, PrimExpr, Stmt, Var
from tirx.ir.verify import raise_errors, verify_well_formed

__all__ = ["check_well_formed", "undefined_vars"]


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
