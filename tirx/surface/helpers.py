"""``T``'s helpers that are plain functions over expressions: arithmetic (``T.ceildiv``,
``T.bitwise_and``, ``T.shift_left``, ...: folding Python numbers as the frontend's operators
do), constants (``T.max_value``, ``T.infinity``, ``T.IntImm`` / ``T.FloatImm``'s builders), the
logical ones (``T.logical_and`` ...) and the conditional expression's select. Both front ends
call them: the frontend as ``T.<name>``, the text parser by name (they build IR from the parsed
values and run no user code); the printer never writes them."""

from __future__ import annotations

from typing import Any, cast

from ..ir import expr as _x
from ..ir import op as _op
from ..ir.expr import PrimExpr, convert
from ..ir.fold import combine, is_number, literal, match
from ..ir.types import PrimType

__all__ = ["HELPERS"]


def _e(x: Any) -> Any:
    """A mutable scalar or a meta value as its expression; anything else as it is."""
    f = getattr(x, "__tirx_expr__", None)
    return f() if f is not None and not isinstance(x, PrimExpr) else x


def ceildiv(a: Any, b: Any) -> Any:
    """``(a + b - 1) // b``; plain Python ints fold."""
    a, b = _e(a), _e(b)
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    return combine(_x.FloorDiv, combine(_x.Sub, combine(_x.Add, a, b), 1), b)


def bitwise_and(a: Any, b: Any) -> PrimExpr:
    return combine(_x.BitAnd, _e(a), _e(b))


def bitwise_or(a: Any, b: Any) -> PrimExpr:
    return combine(_x.BitOr, _e(a), _e(b))


def bitwise_xor(a: Any, b: Any) -> PrimExpr:
    return combine(_x.BitXor, _e(a), _e(b))


def bitwise_not(a: Any) -> PrimExpr:
    return ~convert(_e(a))


def shift_left(a: Any, b: Any) -> PrimExpr:
    return combine(_x.Shl, _e(a), _e(b))


def shift_right(a: Any, b: Any) -> PrimExpr:
    return combine(_x.Shr, _e(a), _e(b))


#: the helpers by their ``T`` name
def limits(dtype: Any) -> tuple:
    """``(lowest, highest)`` finite value of a scalar dtype (a float format's largest finite
    value; bfloat16's own, 0x7F7F)."""
    from ..ir.types import as_prim

    t = as_prim(dtype)
    if t.is_minifloat:
        from ..ir.types import MINIFLOAT_LIMITS

        hi, lo = MINIFLOAT_LIMITS[t.base]
        return lo, hi
    if t.is_float:
        if t.bits == 16 and t.kind == "float":
            return -65504.0, 65504.0
        if t.kind == "bfloat":  # bf16's own largest, 0x7F7F (float32's rounds to inf in bf16)
            return -3.3895313892515355e38, 3.3895313892515355e38
        return (
            (-3.4028234663852886e38, 3.4028234663852886e38)
            if t.bits <= 32
            else (-1.7976931348623157e308, 1.7976931348623157e308)
        )
    if t.is_bool:
        return 0, 1
    from ..ir.expr import int_range

    return int_range(t)


def lazy_select(c: Any, a: Any, b: Any, span: Any = None) -> PrimExpr:
    """``a if c else b`` on an IR condition: TIRx's ``T.if_then_else`` (both arms are built),
    the op with the ``select`` trait."""
    na, nb = is_number(a), is_number(b)
    if (na or nb) and not (na and nb) and isinstance(b if na else a, PrimExpr):
        # a number beside an expression: the literal TIRx makes of it (``0.5``: float32)
        if na:
            a = literal(a, span)
        else:
            b = literal(b, span)
    if isinstance(a, PrimExpr):
        b = convert(b, a)
    else:
        b = convert(b)
        a = convert(a, b)
    if isinstance(a.ty, PrimType) and isinstance(b.ty, PrimType) and a.ty != b.ty:
        # two arms of different dtypes meet as a binary operator's operands do (``A[i] if c else
        # B[i]``, int32 and float32: both float32; ``A[i] if c else 0.5`` too), as TIRx builds a
        # conditional expression
        a, b = match(a, b, span)
    return _op.find(select=True)(to_bool_expr(c), a, b, span=span)


def to_bool_expr(x: Any) -> PrimExpr:
    e = convert(x)
    if not (isinstance(e.ty, PrimType) and e.ty.is_bool):
        raise TypeError(f"expected a bool expression, got dtype {e.ty}")
    return e


def _dtype_arg(fname: str, dtype: Any, ty: Any) -> Any:
    """``f(dtype)`` (tirx, TVM) or ``f(ty=dtype)`` (TIRx's keyword): exactly one of them."""
    if (dtype is None) == (ty is None):
        raise TypeError(f"T.{fname}() takes the dtype once: T.{fname}(dtype) or T.{fname}(ty=dtype)")
    return dtype if ty is None else ty


def max_value(dtype: Any = None, *, ty: Any = None) -> PrimExpr:
    """The largest finite value of ``dtype``."""
    from ..ir.types import as_prim

    dtype = _dtype_arg("max_value", dtype, ty)
    return _x.const(limits(dtype)[1], as_prim(dtype))


def min_value(dtype: Any = None, *, ty: Any = None) -> PrimExpr:
    """The smallest finite value of ``dtype``."""
    from ..ir.types import as_prim

    dtype = _dtype_arg("min_value", dtype, ty)
    return _x.const(limits(dtype)[0], as_prim(dtype))


def infinity(dtype: Any = None, *, ty: Any = None) -> PrimExpr:
    """``+inf`` of a float dtype."""
    from ..ir.types import as_prim

    dtype = _dtype_arg("infinity", dtype, ty)
    return _x.const(float("inf"), as_prim(dtype))


def conjoin(cls: Any, exprs: list, span: Any = None) -> Any:
    """``cls`` (``And`` / ``Or``) of IR ``exprs`` left to right, no constant folded: TIRx's
    ``T.logical_and`` / ``T.logical_or`` and its comparison chains (``bool_chain`` is the
    frontend's ``and`` / ``or``, which decides host values while parsing)."""
    out = exprs[0]
    for x in exprs[1:]:
        out = cls(out, x, span=span)
    return out


def _logical(cls: Any, name: str, values: tuple) -> Any:
    if not values:
        raise TypeError(f"T.{name} takes at least one value")
    return conjoin(cls, [convert(_e(v)) for v in values])


def logical_and(*values: Any) -> PrimExpr:
    """``a and b and ...`` (left to right; one value is itself), as TIRx's."""
    return _logical(_x.And, "logical_and", values)


def logical_or(*values: Any) -> PrimExpr:
    """``a or b or ...`` (left to right; one value is itself), as TIRx's."""
    return _logical(_x.Or, "logical_or", values)


def logical_not(a: Any) -> PrimExpr:
    return _x.Not(convert(_e(a)))


def _number(x: Any, what: str, kinds: tuple) -> Any:
    x = _e(x)
    if isinstance(x, (_x.IntImm, _x.FloatImm)):
        x = x.value
    if type(x) not in kinds:
        raise TypeError(
            f"{what}: value must be {'a number' if float in kinds else 'an int'}, got {type(x).__name__}"
        )
    return x


def int_imm(ty: Any, value: Any, span: Any = None) -> Any:
    """``T.IntImm(ty, value)``: an integer (or bool) constant; ValueError when it does not fit."""
    from ..ir.types import as_type

    v = _number(value, "T.IntImm", (int, bool))
    # (the node refuses a dtype that is not an integer or bool type)
    return _x.IntImm(int(v), cast(PrimType, as_type(ty, "T.IntImm ty")), span=span)


def float_imm(ty: Any, value: Any, span: Any = None) -> Any:
    """``T.FloatImm(ty, value)``: a float constant of a float dtype."""
    from ..ir.types import as_type

    v = _number(value, "T.FloatImm", (int, float))
    # (the node refuses a dtype that is not a float type)
    return _x.FloatImm(float(v), cast(PrimType, as_type(ty, "T.FloatImm ty")), span=span)


HELPERS = {
    f.__name__: f
    for f in (ceildiv, bitwise_and, bitwise_or, bitwise_xor, bitwise_not, shift_left, shift_right, max_value,
              min_value, infinity, logical_and, logical_or, logical_not)
}  # fmt: skip
HELPERS["IntImm"], HELPERS["FloatImm"] = int_imm, float_imm
