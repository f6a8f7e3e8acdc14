"""Builder-time constant folding, as TIRx (apache-tvm-tirx 0.1.0a4) folds while it builds.

The Python frontend folds every operator node it builds (``0 + k`` with ``k = 0`` is ``k``),
exactly where TIRx does and no further: ``fold(e)`` looks at ``e``'s top node only (its
operands were folded when they were built). Rules, learned by experiment with TIRx:

* ``+ - *`` of two integer constants fold when the exact result fits the dtype (no
  wrap-around: ``T.int32(2147483647) + 1`` stays an ``Add``); ``x + 0``, ``0 + x``,
  ``x - 0``, ``x * 1``, ``1 * x`` are ``x``; ``x * 0`` and ``0 * x`` are the zero constant
  (ints and floats alike). ``0 - x`` stays.
* floats fold for float32 (computed in float32, not when a finite result overflows) and
  float64 only; other float widths keep the node (the identities above still apply).
* ``truncdiv`` (``Div``) / ``floordiv`` of integer constants fold with their own rounding,
  ``0 / x`` is ``0``, ``x / 1`` is ``x``; a constant divisor of 0 is an error. ``truncmod`` /
  ``floormod`` fold only for int32/int64 (and uint64; ``floormod`` also any uint);
  ``x % 1`` is ``0``, ``0 % x`` is ``0``.
* ``min`` / ``max`` of two constants fold (a NaN first operand wins); ``min(x, x)`` is ``x``
  for the very same node.
* comparisons of two constants are a ``bool`` constant.
* where TIRx folds two float constants, the result is what the program computes (TIRx folds
  the unrounded literals: ``T.float16(0.0) == T.float16(1e-08)`` would be False, the program
  says True): each operand rounded to its dtype, then the dtype's arithmetic, through
  ``tirx.ir.numerics`` (the interpreter's own rules). TIRx's node is kept where it stands for
  that value, so the text prints what TIRx prints; otherwise the computed constant, or no fold
  where the program's result is a NaN and TIRx's is not. ``T.cast`` of a constant likewise.
* ``& | ^ << >>`` fold two int32/int64 constants (``<<`` only when the result fits);
  ``x << 0`` and ``x >> 0`` are ``x``; an int32/int64 shift by a constant outside
  ``[0, bits)`` is an error.
* ``and`` / ``or`` / ``not``, ``~``, ``Select`` never fold.

The text loader does not fold (text is read as written); the printer writes a node that
would fold as its explicit constructor (``T.Add(x, 0)``), so printed text rebuilds the same
IR through either front end.

**A Python number beside an IR value** (the second half of this module), as TIRx combines
them: both front ends (the Python frontend, in a kernel and through the Python operators of
``tirx.ir.expr`` in host code or a plain helper, and the text loader) build a binary operator
with a Python operand through ``combine``; the rules, learned by experiment with TIRx
(``tests/data/tirx_golden/literals.json``, ``tools/tirx_oracle/golden_literals.py``):

* the literal is a constant of its own dtype first: ``bool`` -> ``bool``, ``int`` -> ``int32``
  (``int64`` when it does not fit; past ``int64`` an error), ``float`` -> ``float32``;
* then both operands take one dtype (TIRx's ``BinaryOpMatchTypes``): a scalar next to a vector
  is broadcast; of two IEEE floats the narrower widens, an IEEE float wins over anything else
  (``int8 + 1.0`` is ``float32``, ``float16 + 1.0`` too); else ``bfloat16``, else a minifloat
  wins (``float8 + 1`` casts the 1); of two integers the narrower widens (``int8 + 1`` is
  ``int32``; ``bool`` is a 1-bit unsigned), and at equal width the unsigned one wins;
* the side that changes dtype is cast, and a cast of a constant folds where TIRx's ``cast``
  folds it (``fold_cast``: not to ``float64`` nor to a minifloat: ``float64 + 1`` is
  ``x + T.Cast("float64", 1)``);
* ``& | ^ << >>`` differ: an ``int`` literal is made in the other operand's dtype directly,
  after wrapping to 32 bits (``x & 2**32 + 5`` is ``x & 5``; a value the dtype cannot hold is
  an error); ``& | ^`` take integer or bool operands, ``<< >>`` integers only;
* ``//`` and ``%`` take integer operands only (checked before the dtypes are matched, so a bool
  operand is refused too);
* the Python operator ``/`` refuses two signed-integer operands (a Python int or bool counts):
  ``truncdiv`` / ``floordiv`` say which division is meant (``check_true_div``);
* then the node, which the Python frontend and the Python operators fold (``fold``).

**Two IR values** combine the same way (``combine`` with no number: dtypes matched, ``//``,
``%`` and the bitwise operators checked), in a kernel and through the Python operators, and the
node folds (a plain helper's ``x * T.float32(1)`` is ``x``, ``T.int32(2) + T.int32(3)`` is
``5``, ``==`` of two constants a ``bool`` constant): every case of a grid of dtypes, operators
and operand kinds against TIRx is in ``tests/data/tirx_golden/operators.json``
(``tools/tirx_oracle/golden_operators.py``). ``-x`` is ``x * T.<dtype>(-1)``, folded (``neg``).
Only the node constructors and ``binop`` keep one dtype (a ``TypeError`` naming both);
``T.if_then_else`` converts each literal on its own (its op declares ``own_literals``;
``select_arms``). This module imports
only ``tirx.ir``; ``tirx.ir.expr`` reaches ``combine`` through the module it registers.
"""

from __future__ import annotations

import math
import operator
import struct
import sys
from typing import Any
from typing import cast as cast_type

from . import expr as _e
from .arith import wrap_bits
from .expr import (
    BitAnd,
    BitOr,
    BitXor,
    Broadcast,
    Cast,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    PrimExpr,
    Shl,
    Shr,
    convert,
)
from .types import PrimType, bool_, float32, int32, int64

__all__ = [
    "RAW_NAMES",
    "bad_shift",
    "cast",
    "check_true_div",
    "combine",
    "fold",
    "fold_cast",
    "fold_constants",
    "is_number",
    "literal",
    "match",
    "neg",
    "select_arms",
    "would_fold",
]

#: TIRx's explicit constructor name of each operator node (never folds)
RAW_NAMES: dict[type, str] = {
    _e.Add: "Add", _e.Sub: "Sub", _e.Mul: "Mul", _e.Div: "Div", _e.Mod: "Mod",
    _e.FloorDiv: "FloorDiv", _e.FloorMod: "FloorMod", _e.Min: "Min", _e.Max: "Max",
    _e.EQ: "EQ", _e.NE: "NE", _e.LT: "LT", _e.LE: "LE", _e.GT: "GT", _e.GE: "GE",
    _e.BitAnd: "BitwiseAnd", _e.BitOr: "BitwiseOr", _e.BitXor: "BitwiseXor",
    _e.Shl: "LShift", _e.Shr: "RShift",
}  # fmt: skip

_F32_MAX = 3.4028234663852886e38
_IntImm, _FloatImm = _e.IntImm, _e.FloatImm


def _fits(v: int, t: Any) -> bool:
    if type(t) is not PrimType or t.lanes != 1:
        return False
    if t.kind == "uint":
        return 0 <= v < (1 << t.bits)
    if t.kind == "bool" or (t.kind == "int" and t.bits == 1):
        return v in (0, 1)
    if t.kind == "int":
        return -(1 << (t.bits - 1)) <= v < (1 << (t.bits - 1))
    return False


def _index(t: Any) -> bool:
    return type(t) is PrimType and t.kind == "int" and t.bits in (32, 64) and t.lanes == 1


def _f32(x: float) -> float:
    """``x`` rounded to float32 (to nearest even; past the range to +-inf, as C)."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:  # struct refuses a finite value past float32's largest
        # within half an ulp (2**103) of the largest it rounds down to it; a tie goes to inf
        return math.copysign(_F32_MAX if abs(x) < _F32_MAX + 2.0**103 else math.inf, x)


def _int(e: Any, v: int) -> _e.IntImm:
    return _IntImm(v, e.ty, span=e.span)


def _float(t: Any, op: Any, x: float, y: float, span: Any) -> Any:
    """``x op y`` in float32 / float64, or None (other widths; a float32 overflow)."""
    if t.bits == 32:
        x, y = _f32(x), _f32(y)
        r = op(x, y)
        if math.isfinite(r) and abs(r) > _F32_MAX:
            return None
        return _FloatImm(_f32(r), t, span=span)
    if t.bits == 64:
        return _FloatImm(op(x, y), t, span=span)
    return None


def _tdiv(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _tmod(x: int, y: int) -> int:
    return x - y * _tdiv(x, y)


def _div0(b: Any) -> None:
    if b.value == 0:
        raise ZeroDivisionError("Divide by zero")


def _arith(pyop: Any, fop: Any, left_id: int | None, right_id: int, absorb: bool) -> Any:
    """``+ - *``: two int constants fold when the result fits the dtype; two float constants
    fold in the dtype's arithmetic (kept when float32/float64 would overflow); then the
    identities (``0 + x``, ``x - 0``, ``1 * x``, ...) and, for ``*``, a zero operand."""

    def fold_it(e: Any, a: Any, b: Any, pa: bool, pb: bool, fa: bool, fb: bool) -> Any:
        if pa and pb:
            v = pyop(a.value, b.value)
            return _int(e, v) if _fits(v, e.ty) else e
        if fa and fb:
            r = _float(e.ty, fop, a.value, b.value, e.span)
            if r is not None:
                return r
            if e.ty.bits in (32, 64):
                return e
        if pa or fa:
            if left_id is not None and a.value == left_id:
                return b
            if absorb and a.value == 0:
                return a
        if pb or fb:
            if b.value == right_id:
                return a
            if absorb and b.value == 0:
                return b
        return e

    return fold_it


_add = _arith(int.__add__, float.__add__, 0, 0, False)
_sub = _arith(int.__sub__, float.__sub__, None, 0, False)
_mul = _arith(int.__mul__, float.__mul__, 1, 1, True)


def _division(intop: Any, floats: bool) -> Any:
    """``/`` (truncating for ints, ``floats``: float constants fold too) and ``//``: two
    constants fold (a zero divisor is an error), ``0 / x`` is 0, ``x / 1`` is x."""

    def fold_it(e: Any, a: Any, b: Any, pa: bool, pb: bool, fa: bool, fb: bool) -> Any:
        if pa and pb:
            _div0(b)
            v = intop(a.value, b.value)
            return _int(e, v) if _fits(v, e.ty) else e
        if floats and fa and fb:
            _div0(b)
            r = _float(e.ty, float.__truediv__, a.value, b.value, e.span)
            if r is not None:
                return r
            if e.ty.bits in (32, 64):
                return e
        if not floats and (fa or fb):
            return e  # TIRx has no float floordiv; tirx keeps the node
        if (pa or fa) and a.value == 0:
            return a
        if pb or fb:
            if b.value == 1:
                return a
            _div0(b)
        return e

    return fold_it


_div = _division(_tdiv, True)
_floordiv = _division(int.__floordiv__, False)


def _mod(floor: bool) -> Any:
    def f(e: Any, a: Any, b: Any, pa: bool, pb: bool, fa: bool, fb: bool) -> Any:
        t = a.ty
        if _index(t) and _index(b.ty):
            if pa and pb:
                _div0(b)
                v = a.value % b.value if floor else _tmod(a.value, b.value)
                return _int(e, v) if _fits(v, e.ty) else e
            if pa and a.value == 0:
                return a
            if pb:
                if b.value == 1:
                    return _IntImm(0, e.ty, span=e.span)
                _div0(b)
            return e
        if pa and pb and (t.bits >= 64 or (floor and t.kind == "uint")):
            _div0(b)
            v = a.value % b.value if floor else _tmod(a.value, b.value)
            return _int(e, v) if _fits(v, e.ty) else e
        return e

    return f


def _minmax(is_min: bool) -> Any:
    def f(e: Any, a: Any, b: Any, pa: bool, pb: bool, fa: bool, fb: bool) -> Any:
        if pa and pb:
            return _int(e, min(a.value, b.value) if is_min else max(a.value, b.value))
        if fa and fb:
            x, y = a.value, b.value
            return a if x != x or (x < y if is_min else x > y) else b
        if a is b:
            return a
        return e

    return f


def _cmp(py: Any) -> Any:
    def f(e: Any, a: Any, b: Any, pa: bool, pb: bool, fa: bool, fb: bool) -> Any:
        if (pa and pb) or (fa and fb):
            return _IntImm(int(py(a.value, b.value)), e.ty, span=e.span)
        return e

    return f


def _bitwise(py: Any, zero_is_identity: bool = False) -> Any:
    def f(e: Any, a: Any, b: Any, pa: bool, pb: bool, fa: bool, fb: bool) -> Any:
        if not (_index(a.ty) and _index(b.ty)):
            return e
        if pb and (py is _shl or py is _shr) and not 0 <= b.value < a.ty.bits:
            # TIRx checks a constant shift amount of an int32 / int64 shift, constant or not
            raise ValueError(
                f"shift amount {b.value} must be non-negative and less than {a.ty.bits} for {a.ty}"
            )
        if pa and pb:
            v = py(a.value, b.value)
            return _int(e, v) if _fits(v, e.ty) else e
        if zero_is_identity and pb and b.value == 0:
            return a
        return e

    return f


def _shl(x: int, y: int) -> int:
    return x << y


def _shr(x: int, y: int) -> int:
    return x >> y


_RULES: dict[type, Any] = {
    _e.Add: _add, _e.Sub: _sub, _e.Mul: _mul, _e.Div: _div, _e.FloorDiv: _floordiv,
    _e.Mod: _mod(False), _e.FloorMod: _mod(True), _e.Min: _minmax(True), _e.Max: _minmax(False),
    _e.EQ: _cmp(operator.eq), _e.NE: _cmp(operator.ne), _e.LT: _cmp(operator.lt),
    _e.LE: _cmp(operator.le), _e.GT: _cmp(operator.gt), _e.GE: _cmp(operator.ge),
    _e.BitAnd: _bitwise(int.__and__), _e.BitOr: _bitwise(int.__or__), _e.BitXor: _bitwise(int.__xor__),
    _e.Shl: _bitwise(_shl, True), _e.Shr: _bitwise(_shr, True),
}  # fmt: skip


#: node -> (left, right) constant values that fold with a non-constant other operand (the
#: identities, zeros and zero divisors of the rules above); other single constants never do
_ONE_CONST: dict[type, tuple[tuple, tuple]] = {
    _e.Add: ((0,), (0,)), _e.Sub: ((), (0,)), _e.Mul: ((0, 1), (0, 1)),
    _e.Div: ((0,), (0, 1)), _e.FloorDiv: ((0,), (0, 1)), _e.Mod: ((0,), (0, 1)), _e.FloorMod: ((0,), (0, 1)),
    _e.Shl: ((), (0,)), _e.Shr: ((), (0,)),
}  # fmt: skip


def fold(e: Any) -> Any:
    """``e`` with its top node folded as TIRx folds it while building (``e`` itself if not)."""
    rule = _RULES.get(type(e))
    if rule is None:
        return e
    a, b = e.a, e.b
    ta, tb = type(a), type(b)
    fa, fb = ta is _FloatImm, tb is _FloatImm
    r = rule(e, a, b, ta is _IntImm, tb is _IntImm, fa, fb)
    if fa and fb and r is not e:
        return _as_computed(e, r)
    return r


#: the float folds checked against the program's arithmetic (tirx.ir.numerics op names)
_FLOAT_OPS = {_e.Add: "add", _e.Sub: "sub", _e.Mul: "mul", _e.Div: "div", _e.Min: "min", _e.Max: "max"}
_CMP_OPS = {_e.EQ: "eq", _e.NE: "ne", _e.LT: "lt", _e.LE: "le", _e.GT: "gt", _e.GE: "ge"}


def _numerics() -> Any:
    """tirx.ir.numerics, imported on first use (it imports numpy; ``import tirx`` stays light)."""
    from . import numerics

    return numerics


def _is_nan(c: Any) -> bool:
    return type(c) is _FloatImm and c.value != c.value


def _as_computed(e: Any, r: Any) -> Any:
    """TIRx folded the two float constants of ``e`` to ``r``: ``r`` where it stands for what
    the program computes (bit for bit), else the computed constant; ``e`` where the program's
    result is a NaN TIRx does not give (a NaN is never made here, only kept)."""
    a, b = e.a, e.b
    if a.ty != b.ty:
        return e
    N = _numerics()
    cmp = _CMP_OPS.get(type(e))
    if cmp is not None:
        v = N.fold_compare(cmp, a.value, b.value, a.ty)
        if v is None:
            return e
        return r if type(r) is _IntImm and r.value == int(v) else _IntImm(int(v), e.ty, span=e.span)
    op = _FLOAT_OPS.get(type(e))
    v = None if op is None else N.fold_float_op(op, a.value, b.value, a.ty)
    if v is None:  # a NaN (or not computable): keep TIRx's NaN, never fold to one
        return r if _is_nan(r) and op is not None else e
    return _same_float(r, v, e)


def _same_float(r: Any, v: float, e: Any) -> Any:
    """``r`` if it is a float constant of ``e``'s dtype standing for ``v``, else ``v``'s constant."""
    N = _numerics()
    if type(r) is _FloatImm and r.ty == e.ty and N.float_bits(r.value, e.ty) == N.float_bits(v, e.ty):
        return r
    return _FloatImm(v, e.ty, span=e.span)


def bad_shift(e: Any) -> bool:
    """An int32 / int64 shift by a constant outside ``[0, bits)``: TIRx refuses to build it
    (``fold`` raises), so the printer writes its explicit constructor."""
    if type(e) is not _e.Shl and type(e) is not _e.Shr:
        return False
    b, t = e.b, e.a.ty
    return (
        type(b) is _IntImm
        and type(t) is PrimType
        and _index(t)
        and _index(b.ty)
        and not 0 <= b.value < t.bits
    )


def would_fold(e: Any) -> bool:
    """Whether the frontend would not rebuild ``e`` from its infix spelling (the printer then
    writes the explicit constructor). A divisor-0 constant counts: the infix form is rejected.
    ``min(a, a)`` folds only for a var: other operands reparse as two distinct nodes."""
    a, b = e.a, e.b
    ta, tb = type(a), type(b)
    ca, cb = ta is _IntImm or ta is _FloatImm, tb is _IntImm or tb is _FloatImm
    if bad_shift(e):
        return True
    if not (ca and cb) and a is not b:
        # with one constant operand, only the values of _ONE_CONST can fold (an identity, a
        # zero, a zero divisor): the common case (x + 1, n - 1, i * 4) needs no rule call
        left, right = _ONE_CONST.get(type(e), ((), ()))
        if not (ca and a.value in left) and not (cb and b.value in right):
            return False
    try:
        r = fold(e)
    except (ZeroDivisionError, ValueError):
        return True
    if r is e:
        return False
    if (type(e) is _e.Min or type(e) is _e.Max) and e.a is e.b and type(e.a) not in (_IntImm, _FloatImm):
        return type(e.a) is _e.Var
    return True


#: the largest finite value of the float dtypes TIRx's ``cast`` folds a constant to
_FOLD_MAX = {("float", 16): 65504.0, ("float", 32): _F32_MAX, ("bfloat", 16): 3.3895313892515355e38}


def fold_cast(e: Any) -> Any:
    """``T.cast`` of a constant where TIRx folds it (its ``cast``, also behind the dtype
    matching of a literal: ``tirx.ir.literals``): int -> int when the value fits, float ->
    int when the literal is finite and fits, int/float -> float16 / bfloat16 / float32 when the
    value is within the dtype's finite range (an int to bfloat16 only when a double holds it
    exactly), int/float -> bool when the value is exactly 0 or 1; anything else (to float64, to
    a minifloat, other values to bool, vectors) stays a ``Cast``.
    TIRx keeps an int's value for float16/bfloat16 and rounds it to float32 for float32; a
    float rounds to float32. The folded value is the program's (the operand rounded to its
    dtype, ints converted with one rounding); TIRx's literal is kept where it stands for that
    value."""
    if type(e) is not _e.Cast:
        return e
    v, t = e.value, e.ty
    if type(t) is not PrimType or t.lanes != 1 or type(v.ty) is not PrimType:
        return e
    if t.kind == "bool":  # TIRx folds a constant that is exactly 0 or 1 (a 1-bit value)
        # (a minifloat's literal need not be its value: e8m0 has no 0)
        x = None
        if isinstance(v, _IntImm) or (isinstance(v, _FloatImm) and not v.ty.is_minifloat):
            x = v.value
        return _IntImm(int(x), t, span=e.span) if x in (0, 1) else e
    if type(v) is _IntImm:
        if t.kind in ("int", "uint"):
            return _IntImm(v.value, t, span=e.span) if _fits(v.value, t) else e
        hi = _FOLD_MAX.get((t.kind, t.bits))
        if hi is None:
            return e
        x = float(v.value)
        if t.bits == 32:
            x = _f32(x)
        elif abs(x) > hi or (t.kind == "bfloat" and x != v.value):
            return e
        return _cast_checked(e, _FloatImm(x, t, span=e.span))
    if type(v) is _FloatImm:
        x = v.value
        if t.kind in ("int", "uint"):
            if not math.isfinite(x) or not _fits(int(x), t):
                return e
            return _cast_checked(e, None)
        hi = _FOLD_MAX.get((t.kind, t.bits))
        if hi is not None:
            if math.isfinite(x) and abs(x) > hi:
                return e
            return _cast_checked(e, _FloatImm(_f32(x), t, span=e.span))
    return e


def _cast_checked(e: Any, r: Any) -> Any:
    """The cast ``e`` folded to what the program computes (``r``, TIRx's float literal, where
    it stands for that; for an integer result ``r`` is None); ``e`` if it is a NaN."""
    v = _numerics().fold_cast(e.value.value, e.value.ty, e.ty)
    if v is None:
        return r if _is_nan(r) else e
    if not e.ty.is_float:
        return _IntImm(int(v), e.ty, span=e.span)
    return _same_float(r, float(v), e)


# ------------------------------------------------------------------ Python numbers beside IR values
_BITWISE = (BitAnd, BitOr, BitXor, Shl, Shr)
_SHIFTS = (Shl, Shr)
_INT_ONLY = (FloorDiv, FloorMod)
#: the operators ``combine`` checks beyond matching dtypes (two IR values of one dtype need only
#: the node otherwise: the Python operators' fast path)
CHECKED = frozenset((*_BITWISE, *_INT_ONLY))
_MINIFLOATS = ("float8", "float6", "float4")


def is_number(x: Any) -> bool:
    """A Python ``bool``, ``int`` (or an ``int`` subclass such as an ``IntEnum`` member:
    ``T.CallEffectKind.Pure``) or ``float`` (not a numpy scalar)."""
    t = type(x)
    return t is int or t is float or t is bool or isinstance(x, int)


def literal(x: Any, span: Any = None) -> PrimExpr:
    """The constant TIRx makes of a Python number on its own: ``bool``, ``int32`` (``int64``
    past it) or ``float32``."""
    t = type(x)
    if t is bool:
        return IntImm(int(x), bool_, span=span)
    if t is not int and isinstance(x, int):  # an IntEnum member: its value
        x, t = int(x), int
    if t is int:
        if -(1 << 31) <= x < 1 << 31:
            return IntImm(x, int32, span=span)
        if -(1 << 63) <= x < 1 << 63:
            return IntImm(x, int64, span=span)
        raise TypeError(f"the integer {x} does not fit in int64")
    if t is float:
        return FloatImm(x, float32, span=span)
    raise TypeError(f"expected a Python number, got {type(x).__name__}")


def _int_kind(t: Any) -> str | None:
    """The integer kind of a dtype: "int" or "uint" (``bool`` is a 1-bit unsigned), else None."""
    if type(t) is not PrimType:
        return None
    k = t.kind
    if k == "int" or k == "uint":
        return k
    if k == "bool":
        return "uint"
    return None


def _bits(t: PrimType) -> int:
    return 1 if t.kind == "bool" else t.bits


def cast(t: PrimType, v: PrimExpr, span: Any = None) -> PrimExpr:
    """``v`` as dtype ``t`` the way TIRx's ``cast`` builds it: nothing for the same dtype, a
    folded constant where TIRx folds one (``fold_cast``), a broadcast of the cast element for
    a broadcast, else a ``Cast``."""
    if v.ty == t:
        return v
    if t.lanes == 1:
        c = Cast(t, v, span=span)
        return fold_cast(c) if type(v) is IntImm or type(v) is FloatImm else c
    if type(v) is Broadcast:
        return Broadcast(cast(t.element, v.value, span), t.lanes, span=span)
    return Cast(t, v, span=span)


_e._FOLD_CAST = cast  # PrimExpr.astype folds a constant as TIRx's astype does


def fold_constants(e: Any) -> Any:
    """``e`` as an ``IntImm`` / ``FloatImm`` when every leaf is a constant, folded node by node
    with ``fold`` (``A.shape[0] * 2 == A.shape[1]``; ``and`` / ``or`` / ``not`` of constants,
    which ``fold`` leaves to Simplify, as booleans), else None: ``T.constexpr``'s value."""
    t = type(e)
    if t is _IntImm or t is _FloatImm:
        return e
    r: Any
    if isinstance(e, _e.BinaryOp):
        a, b = fold_constants(e.a), fold_constants(e.b)
        if a is None or b is None:
            return None
        if t is _e.And or t is _e.Or:
            both = bool(a.value) and bool(b.value)
            r = _IntImm(int(both if t is _e.And else bool(a.value) or bool(b.value)), bool_)
        else:
            r = fold(t(a, b))
    elif t is _e.Not:
        a = fold_constants(e.a)
        r = None if type(a) is not _IntImm else _IntImm(0 if a.value else 1, bool_)
    else:
        return None
    return r if type(r) is _IntImm or type(r) is _FloatImm else None


def _describe(x: Any) -> str:
    return f"dtype {x.ty}" if isinstance(x, PrimExpr) else f"the {type(x).__name__} {x!r}"


def match(a: PrimExpr, b: PrimExpr, span: Any = None) -> tuple[PrimExpr, PrimExpr]:
    """``a`` and ``b`` in one dtype, as TIRx's ``BinaryOpMatchTypes`` makes them."""
    at, bt = a.ty, b.ty
    if at == bt:
        return a, b
    if type(at) is not PrimType or type(bt) is not PrimType:
        raise TypeError(f"cannot combine dtypes {at} and {bt}")
    if at.lanes == 1 and bt.lanes != 1:
        a = Broadcast(a, bt.lanes, span=span)
    elif bt.lanes == 1 and at.lanes != 1:
        b = Broadcast(b, at.lanes, span=span)
    elif at.lanes != bt.lanes:
        raise TypeError(f"cannot combine dtypes {at} and {bt}: the lane counts differ")
    at, bt = cast_type(PrimType, a.ty), cast_type(PrimType, b.ty)
    if at == bt:
        return a, b
    ea, eb = at.element, bt.element
    fa, fb = ea.kind == "float", eb.kind == "float"
    if fa and fb:
        return (cast(bt, a, span), b) if ea.bits < eb.bits else (a, cast(at, b, span))
    if fb or (not fa and (eb.kind == "bfloat" or (ea.kind != "bfloat" and eb.kind in _MINIFLOATS))):
        return cast(bt, a, span), b
    if fa or ea.kind == "bfloat" or ea.kind in _MINIFLOATS:
        return a, cast(at, b, span)
    ka, kb = _int_kind(ea), _int_kind(eb)
    if ka is None or kb is None:
        raise TypeError(f"cannot combine dtypes {at} and {bt}")
    na, nb = _bits(ea), _bits(eb)
    if na < nb or (na == nb and ka != kb and kb == "uint"):
        return cast(bt, a, span), b
    return a, cast(at, b, span)


def _bitwise_literal(x: Any, other: PrimExpr, name: str, span: Any) -> PrimExpr:
    """An ``int`` beside ``& | ^ << >>``: a constant of the other operand's dtype. A value that
    dtype holds is kept (``x & 0xFFFFFFFF`` of an int64 ``x`` masks its low 32 bits, as the
    Python says; TIRx wraps every such literal to 32 bits, making that ``x & -1``); one it
    does not hold is wrapped to 32 bits as TIRx does where the dtype is at most 32 bits wide
    (the same bits: int32 ``x & 0xFFFFFFFF`` is ``x & -1``), else an error. Other numbers as
    ``literal``."""
    if type(x) is not int:
        return literal(x, span)
    t = other.ty
    if type(t) is not PrimType or _int_kind(t) is None:
        raise TypeError(f"{name}: operands must be integers, got {_describe(other)} and the int {x}")
    el = t.element
    big = el.kind == "uint" and el.bits == 64
    if not -(1 << 63) <= x < (1 << 64 if big else 1 << 63):
        raise TypeError(f"{name}: the integer {x} does not fit in {'uint64' if big else 'int64'}")

    def holds(v: int) -> bool:
        if el.kind == "bool":
            return v in (0, 1)
        if el.kind == "uint":
            return 0 <= v < 1 << el.bits
        return -(1 << (el.bits - 1)) <= v < 1 << (el.bits - 1)

    v = x if holds(x) or el.bits > 32 else wrap_bits(x, 32, True)
    ok = holds(v)
    if not ok:
        what = f"{x} (wrapped to 32 bits: {v})" if v != x else str(x)
        raise ValueError(f"{name}: the literal {what} does not fit in {el}, the dtype of the other operand")
    c = IntImm(v, el, span=span)
    return c if t.lanes == 1 else Broadcast(c, t.lanes, span=span)


def _check_ints(name: str, a: PrimExpr, b: PrimExpr, given: tuple, bool_ok: bool) -> None:
    """``a`` and ``b`` (made of the operands ``given``) must be integers (or bools)."""
    for side, x, g in (("left", a, given[0]), ("right", b, given[1])):
        t = x.ty
        k = _int_kind(t.element) if isinstance(t, PrimType) else None
        if k is None or (not bool_ok and isinstance(t, PrimType) and t.element.kind == "bool"):
            want = "an integer or bool" if bool_ok else "an integer"
            raise TypeError(
                f"{name}: the {side} operand must be {want}, got {_describe(g)} "
                f"(operands: {_describe(given[0])} and {_describe(given[1])})"
            )


_NAMES = {BitAnd: "&", BitOr: "|", BitXor: "^", Shl: "<<", Shr: ">>", FloorDiv: "//", FloorMod: "%"}


def combine(cls: Any, a: Any, b: Any, span: Any = None) -> PrimExpr:
    """The node ``cls(a, b)`` TIRx builds when ``a`` or ``b`` is a Python number (not folded:
    the Python frontend and the Python operators fold it, the text loader does not)."""
    na, nb = is_number(a), is_number(b)
    if na and type(a) not in (int, float, bool):  # an IntEnum member: its value
        a = int(a)
    if nb and type(b) not in (int, float, bool):
        b = int(b)
    if not na:
        a = convert(a)
    if not nb:
        b = convert(b)
    given = (a, b)
    name = _NAMES.get(cls, cls.__name__)
    if cls in _BITWISE:
        if na and nb:
            a, b = literal(a, span), literal(b, span)
        elif na:
            a = _bitwise_literal(a, b, name, span)
        elif nb:
            b = _bitwise_literal(b, a, name, span)
            amount = b.value if isinstance(b, IntImm) else None
            if cls in _SHIFTS and amount is not None and amount != wrap_bits(amount, 32, True):
                # an amount kept past 32 bits (TIRx's wrap would have changed it) is past any width
                raise ValueError(f"{name}: the shift amount {amount} must be non-negative and less than {b.ty.bits}")
        _check_ints(name, a, b, given, cls not in _SHIFTS)
    else:
        if na:
            a = literal(a, span)
        if nb:
            b = literal(b, span)
        if cls in _INT_ONLY:
            _check_ints(name, a, b, given, False)
    a, b = match(a, b, span)
    return cls(a, b, span=span)


def neg(a: PrimExpr, span: Any = None) -> PrimExpr:
    """``-a`` as TIRx builds it, in a kernel and through the Python operator alike:
    ``a * T.<dtype>(-1)`` folded (``-T.int8(3)`` is ``T.int8(-3)``, ``-T.float32(2)`` is
    ``T.float32(-2.0)``, but a float16 constant stays ``T.float16(2.0) * T.float16(-1.0)``);
    an unsigned or bool value, which TIRx refuses to negate, is ``0 - a``."""
    t = a.ty
    if isinstance(t, PrimType) and (t.kind == "int" or t.is_float):
        return fold(_e.binop(_e.Mul, a, convert(-1, a), span=span))
    return fold(_e.binop(_e.Sub, convert(0, a), a, span=span))


def _signed_int(x: Any) -> bool:
    t = type(x)
    if t is int or t is bool:
        return True
    ty = getattr(x, "ty", None)
    return type(ty) is PrimType and ty.kind == "int"


def check_true_div(a: Any, b: Any) -> None:
    """The Python operator ``/`` refuses two signed-integer operands (a Python int or bool
    counts), as TIRx does: which integer division is meant must be said."""
    if _signed_int(a) and _signed_int(b):
        raise TypeError(
            f"'/' of two integers ({_describe(a)} and {_describe(b)}) is ambiguous: call T.truncdiv "
            "(C's division) or T.floordiv ('//'), or make one operand a float"
        )


def select_arms(call: Any) -> tuple[PrimExpr, PrimExpr]:
    """The two arms of a select op's call (``T.if_then_else``), each as the call's dtype: TIRx
    converts a literal arm on its own (``T.if_then_else(c, x_int8, 2.5)`` has a float32 arm
    and dtype int8), and the program casts the arm it takes to the result dtype. The backends
    read the arms through this; the IR keeps TIRx's arms."""
    t = call.ty
    a, b = call.args[1], call.args[2]
    if type(t) is PrimType:
        if a.ty != t and type(a.ty) is PrimType:
            a = Cast(t, a, span=a.span)
        if b.ty != t and type(b.ty) is PrimType:
            b = Cast(t, b, span=b.span)
    return a, b


_e._RULES = sys.modules[__name__]  # binop and the Python operators reach the literal rules through it
