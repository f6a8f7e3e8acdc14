"""What the parts of the CUDA emitter share: located errors, the C scalar names, text safe in a
comment and index arithmetic. ``cuda.py`` and its mixins (``cuda_expr.py``, ``cuda_stmt.py``,
``cuda_buffer.py``) import it, so that no mixin imports ``cuda.py`` (no import cycle)."""

from __future__ import annotations

from typing import Any, cast

from ..errors import DiagnosticError
from ..ir import Add, And, Broadcast, Cast, IntImm, Mul, Or, PrimExpr, PrimType, Ramp
from ..ir.arith import wrap
from ..ir.operators import C_PREC_PRIMARY

# --------------------------------------------------------------------------- types
_C_SCALAR = {
    "bool": "bool",
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "int64": "int64_t",
    "uint8": "unsigned char",
    "uint16": "unsigned short",
    "uint32": "unsigned int",
    "uint64": "uint64_t",
    "float16": "half",
    "bfloat16": "__nv_bfloat16",
    "float32": "float",
    "float64": "double",
    "float8_e4m3fn": "__nv_fp8_e4m3",
    "float8_e5m2": "__nv_fp8_e5m2",
    "float8_e8m0fnu": "__nv_fp8_e8m0",
    "float6_e2m3fn": "__nv_fp6_e2m3",
    "float6_e3m2fn": "__nv_fp6_e3m2",
    "float4_e2m1fn": "__nv_fp4_e2m1",  # one element per byte, as tirx lays every minifloat out
}
_PREC_PRIMARY = C_PREC_PRIMARY


def _error(msg: str, node: Any = None) -> DiagnosticError:
    span = getattr(node, "span", None)
    if span is not None:
        inner = getattr(span, "innermost", span)
        return DiagnosticError(f"{inner}: error: {msg}", span=span)
    return DiagnosticError(msg)


def _wide_int(t: Any) -> bool:
    """32/64-bit scalar integers (C++ computes them in their own type)."""
    return isinstance(t, PrimType) and t.is_int and t.lanes == 1 and t.bits >= 32


def _is_int32(t: Any) -> bool:
    return isinstance(t, PrimType) and t.kind == "int" and t.bits == 32 and t.lanes == 1


def _comment(s: Any) -> str:
    """Text safe inside a ``//`` comment: no line break can end the comment and no trailing
    backslash can splice the next line into it (names and source paths come from users)."""
    s = str(s)
    if s.isascii() and s.isprintable() and "\\" not in s:
        return s
    out = []
    for ch in s:
        o = ord(ch)
        if ch == "\\" or o < 32 or o >= 127:
            out.append(f"\\x{o:02x}" if o < 256 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}")
        else:
            out.append(ch)
    return "".join(out)


def _add(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    if isinstance(b, IntImm) and b.value == 0:
        return a
    if isinstance(a, IntImm) and a.value == 0:
        return b
    if isinstance(a, IntImm) and isinstance(b, IntImm) and a.ty == b.ty:
        return IntImm(wrap(a.value + b.value, a.ty), a.ty)  # the IR's wrapping sum
    return _coerce(Add, a, b)


def _widen(x: PrimExpr, wide: Any) -> PrimExpr:
    """``x`` (an index) in the wider integer type ``wide``: a ramp stays a ramp of widened base
    and stride (so ``A[i64, T.Ramp(c, 1, 8)]`` is one vector access, not a gather); the lanes
    of an address never wrap (an index past int32 is out of bounds either way)."""
    lanes = cast(PrimType, x.ty).lanes
    if isinstance(x, Ramp):
        return Ramp(_widen(x.base, wide), _widen(x.stride, wide), lanes)
    if isinstance(x, Broadcast):
        return Broadcast(_widen(x.value, wide), lanes)
    if isinstance(x, IntImm):
        return IntImm(x.value, wide)
    return Cast(wide.with_lanes(lanes), x)


def _coerce(cls, a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """Index arithmetic across int dtypes: widen to the wider one (int64 beats int32)."""
    ta, tb = a.ty, b.ty
    if ta == tb:
        return cls(a, b)
    if isinstance(ta, PrimType) and isinstance(tb, PrimType):
        if ta.lanes > 1 or tb.lanes > 1:
            # vector index times a scalar stride
            el_a, el_b = ta.element, tb.element
            wide = el_a if el_a.bits >= el_b.bits else el_b
            lanes = max(ta.lanes, tb.lanes)
            a2 = a if el_a == wide else _widen(a, wide)
            b2 = b if el_b == wide else _widen(b, wide)
            if cast(PrimType, a2.ty).lanes == 1:
                a2 = Broadcast(a2, lanes)
            if cast(PrimType, b2.ty).lanes == 1:
                b2 = Broadcast(b2, lanes)
            if isinstance(a2, Ramp) and isinstance(b2, Broadcast) and cls is Mul:
                return Ramp(Mul(a2.base, b2.value), Mul(a2.stride, b2.value), lanes)
            if isinstance(a2, Ramp) and isinstance(b2, Broadcast) and cls is Add:
                return Ramp(Add(a2.base, b2.value), a2.stride, lanes)
            if isinstance(b2, Ramp) and isinstance(a2, Broadcast) and cls is Add:
                return Ramp(Add(a2.value, b2.base), b2.stride, lanes)
            return cls(a2, b2)
        wide = ta if ta.bits >= tb.bits else tb
        if isinstance(a, IntImm):
            a = IntImm(a.value, wide)
        elif ta != wide:
            a = Cast(wide, a)
        if isinstance(b, IntImm):
            b = IntImm(b.value, wide)
        elif tb != wide:
            b = Cast(wide, b)
        return cls(a, b)
    return cls(a, b)


def fold_bool_terms(e: PrimExpr) -> PrimExpr:
    """``e`` with its host-decided ``T.bool`` terms folded away: ``T.And(T.bool(True), c)`` is
    ``c``, ``T.And(T.bool(False), c)`` is false, ``T.Or`` alike. TIRx's ``and`` / ``or`` keep a
    Python value as such a term (``flag and tx < 5``), and the IR keeps it so that it stays
    TIRx's; the CUDA needs neither the constant nor a branch it decides. The rule is Simplify's
    (``fold_expr``: a term with an effect is kept), applied to the ``And`` / ``Or`` nodes only."""
    if not isinstance(e, (And, Or)) or not isinstance(e.ty, PrimType) or e.ty.lanes != 1:
        return e
    from ..passes.simplify import fold_expr

    a, b = fold_bool_terms(e.a), fold_bool_terms(e.b)
    return fold_expr(e if a is e.a and b is e.b else type(e)(a, b, span=e.span))
