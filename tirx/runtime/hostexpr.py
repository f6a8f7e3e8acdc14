"""IR expressions evaluated on the host (launch configuration, host bindings, shape checks).

``to_python(e, names)`` prints an integer/bool expression as Python source, with IR
semantics: ``//`` and ``%`` floor (FloorDiv/FloorMod), ``Div``/``Mod`` on integers
truncate (``_tdiv``/``_tmod``).
"""

from __future__ import annotations

from typing import Any

from ..ir import (
    And,
    BitNot,
    Call,
    Cast,
    Div,
    FloatImm,
    IntImm,
    Max,
    Min,
    Mod,
    Not,
    Or,
    PointerType,
    PrimType,
    Select,
    Var,
)
from ..ir.arith import trunc_div, trunc_mod, wrap_bits
from ..ir.operators import OPERATORS

__all__ = ["HOST_GLOBALS", "HostExprError", "to_python"]


class HostExprError(ValueError):
    pass


def _tdiv(a: int | float, b: int | float) -> int | float:
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    return trunc_div(a, b)


HOST_GLOBALS = {"_tdiv": _tdiv, "_tmod": trunc_mod, "_wrap": wrap_bits}

# infix nodes whose Python operator computes them (from tirx/ir/operators.py); Div (truncating
# for integers), Mod, Min, Max, And, Or and the unary nodes are spelled below
_OPS = {
    o.node: o.text
    for o in OPERATORS
    if o.py_func is not None and not o.unary and o.kind != "logic" and o.node is not Div
}


def _address(t: Any) -> bool:
    """A pointer type, or a 64-bit integer (an address held as an integer)."""
    return isinstance(t, PointerType) or (
        isinstance(t, PrimType) and t.is_int and t.bits == 64 and t.lanes == 1
    )


def _pointer_source(e: Any) -> Any:
    """The operand of ``T.reinterpret(p, ty=T.Ptr(...))`` or of a cast between pointer types,
    and of a reinterpret between a pointer and a 64-bit integer: the same address on the
    host. None for anything else."""
    t = getattr(e, "ty", None)
    if isinstance(e, Cast) and isinstance(t, PointerType):
        src = e.value
    elif (
        isinstance(e, Call) and getattr(getattr(e.op, "traits", None), "bitcast", False) and len(e.args) == 1
    ):
        src = e.args[0]
    else:
        return None
    st = getattr(src, "ty", None)
    if _address(t) and _address(st) and (isinstance(t, PointerType) or isinstance(st, PointerType)):
        return src
    return None


def to_python(e: Any, names: dict) -> str:
    if isinstance(e, Var):
        n = names.get(e)
        if n is None:
            raise HostExprError(
                f"{e.name} is not known on the host (only parameters, shapes and host bindings are)"
            )
        return n
    if isinstance(e, IntImm):
        return repr(bool(e.value)) if e.ty.is_bool else repr(e.value)
    if isinstance(e, FloatImm):
        return (
            repr(e.value)
            if e.value == e.value and abs(e.value) != float("inf")
            else f"float({str(e.value)!r})"
        )
    op = _OPS.get(type(e))
    if op is not None:
        return f"({to_python(e.a, names)} {op} {to_python(e.b, names)})"
    if isinstance(e, Div):
        if isinstance(e.ty, PrimType) and e.ty.is_float:
            return f"({to_python(e.a, names)} / {to_python(e.b, names)})"
        return f"_tdiv({to_python(e.a, names)}, {to_python(e.b, names)})"
    if isinstance(e, Mod):
        return f"_tmod({to_python(e.a, names)}, {to_python(e.b, names)})"
    if isinstance(e, Min):
        return f"min({to_python(e.a, names)}, {to_python(e.b, names)})"
    if isinstance(e, Max):
        return f"max({to_python(e.a, names)}, {to_python(e.b, names)})"
    if isinstance(e, And):
        return f"({to_python(e.a, names)} and {to_python(e.b, names)})"
    if isinstance(e, Or):
        return f"({to_python(e.a, names)} or {to_python(e.b, names)})"
    if isinstance(e, Not):
        return f"(not {to_python(e.a, names)})"
    if isinstance(e, BitNot):
        return f"(~{to_python(e.a, names)})"
    if isinstance(e, Select):
        return f"({to_python(e.true_value, names)} if {to_python(e.cond, names)} else {to_python(e.false_value, names)})"
    if isinstance(e, Cast) and isinstance(e.ty, PrimType):
        inner = to_python(e.value, names)
        t = e.ty
        if t.is_bool:
            return f"bool({inner})"
        if t.is_float:
            return f"float({inner})"
        return f"_wrap(int({inner}), {t.bits}, {t.kind == 'int'})"
    src = _pointer_source(e)
    if src is not None:  # an address seen as another pointer (or integer) type: the same value
        return to_python(src, names)
    if isinstance(e, Call) and getattr(getattr(e.op, "traits", None), "select", False):
        c, a, b = e.args
        return f"({to_python(a, names)} if {to_python(c, names)} else {to_python(b, names)})"
    what = f"T.{e.op.name}" if isinstance(e, Call) and hasattr(e.op, "name") else type(e).__name__
    raise HostExprError(f"cannot evaluate {what} on the host")
