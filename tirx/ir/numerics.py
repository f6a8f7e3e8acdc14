"""The values of tirx dtypes as the program computes them, in numpy: rounding to every float
dtype (bfloat16, float8/6/4 included), CUDA-exact casts and IEEE min/max.

One rule for everyone: the interpreter computes with these (``tirx.ops.semantics.dtypes``
re-exports them) and constant folding (``tirx.ir.fold``, ``passes/simplify.py``) folds through them, so a
folded constant is bit for bit what the unfolded program computes. A value of a dtype lives in
a numpy array of its *value* dtype: bfloat16 and the minifloats are float32 values exactly
representable in the narrow type. This module imports numpy: load it lazily from the IR.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .arith import int_range
from .minifloat import FORMATS as MINIFLOATS
from .minifloat import round_to_format as _mf_round
from .types import PrimType

__all__ = [
    "cast", "fmax", "fmin", "make_const", "needs_rounding", "round_bf16", "round_f8", "round_to",
    "value_dtype",
]  # fmt: skip

_NP = {
    "bool": np.bool_,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
    "bfloat16": np.float32,
    "float8_e4m3fn": np.float32,
    "float8_e5m2": np.float32,
}
for _n in MINIFLOATS:  # the other minifloats (tirx/ir/minifloat.py): float32 values
    _NP.setdefault(_n, np.float32)


def value_dtype(t: PrimType) -> np.dtype | None:
    """The numpy dtype holding values of ``t`` (per element); None for a dtype without one."""
    n = _NP.get(t.base)
    return None if n is None else np.dtype(n)


def round_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), returned as float32."""
    x = np.asarray(x, dtype=np.float32)
    return bf16_bits_to_f32(f32_to_bf16_bits(x))


def f32_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bit patterns (uint16), round-to-nearest-even; NaN stays NaN."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    u = x.view(np.uint32)
    lsb = (u >> np.uint32(16)) & np.uint32(1)
    r = ((u + np.uint32(0x7FFF) + lsb) >> np.uint32(16)).astype(np.uint16)
    nan = np.isnan(x)
    if nan.any():
        r = np.where(nan, ((u >> np.uint32(16)) | np.uint32(0x40)).astype(np.uint16), r)
    return r


def bf16_bits_to_f32(b: np.ndarray) -> np.ndarray:
    b = np.ascontiguousarray(b)
    return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)


# float8: (exponent bits, mantissa bits, has inf). e4m3fn has no infinities (S.1111.111 is
# NaN, the largest finite is 448); e5m2 is IEEE-like (the top byte of a float16).
_F8 = {"float8_e4m3fn": (4, 3, False), "float8_e5m2": (5, 2, True)}
_F8_TABLES: dict = {}


def _f8_table(base: str) -> tuple[np.ndarray, np.ndarray, float]:
    """(value of each of the 256 codes, sorted non-negative finite values, largest finite)."""
    t = _F8_TABLES.get(base)
    if t is None:
        eb, mb, has_inf = _F8[base]
        bias = (1 << (eb - 1)) - 1
        vals = np.empty(256, dtype=np.float64)
        for code in range(256):
            sgn = -1.0 if code & 0x80 else 1.0
            e = (code >> mb) & ((1 << eb) - 1)
            m = code & ((1 << mb) - 1)
            if has_inf and e == (1 << eb) - 1:
                vals[code] = sgn * np.inf if m == 0 else np.nan
            elif not has_inf and e == (1 << eb) - 1 and m == (1 << mb) - 1:
                vals[code] = np.nan
            elif e == 0:
                vals[code] = sgn * m * 2.0 ** (1 - bias - mb)
            else:
                vals[code] = sgn * (1 + m / (1 << mb)) * 2.0 ** (e - bias)
        pos = vals[:128]
        fin = np.isfinite(pos)
        t = _F8_TABLES[base] = (vals.astype(np.float32), pos[fin], float(pos[fin].max()))
    return t


def round_f8(x: np.ndarray, base: str) -> np.ndarray:
    """Round to the nearest float8 value (ties to even), saturating to the largest finite
    value (CUDA's ``__NV_SATFINITE`` conversion); NaN stays NaN. Returned as float32."""
    eb, mb, _ = _F8[base]
    bias = (1 << (eb - 1)) - 1
    _, _, fmax = _f8_table(base)
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    with np.errstate(all="ignore"):
        e = np.floor(np.log2(np.where(ax > 0, ax, 1.0)))
        e = np.maximum(e, 1 - bias)
        q = np.exp2(e - mb)
        r = np.rint(x / q) * q
    r = np.where(np.isinf(x), np.sign(x) * fmax, r)
    r = np.clip(r, -fmax, fmax)
    r = np.where(np.isnan(x), np.nan, r)
    return r.astype(np.float32)


def round_to(x: np.ndarray, t: PrimType) -> np.ndarray:
    """Round float32 results to ``t`` where ``t`` is narrower than its value dtype."""
    k = t.kind
    if k == "bfloat":
        return round_bf16(x)
    if t.is_minifloat:
        return round_f8(x, t.base) if t.base in _F8 else _mf_round(x, t.base)
    return x


def needs_rounding(t: PrimType) -> bool:
    return t.kind == "bfloat" or t.is_minifloat


def fmin(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE 754-2019 minimumNumber (``fminf``, PTX ``min.f32``): a NaN operand is ignored and
    -0.0 < +0.0 (numpy's ``fmin`` may return either zero)."""
    r = np.fmin(a, b)
    z = (a == 0) & (b == 0)
    return np.where(z, np.where(np.signbit(a), a, b), r) if z.any() else r


def fmax(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE 754-2019 maximumNumber (``fmaxf``): a NaN operand is ignored, +0.0 > -0.0."""
    r = np.fmax(a, b)
    z = (a == 0) & (b == 0)
    return np.where(z, np.where(np.signbit(a), b, a), r) if z.any() else r


def _round_to_odd_f64(s: np.ndarray, err: np.ndarray) -> np.ndarray:
    """``s`` (float64, the nearest value to ``s + err`` exactly) moved to the float64 neighbour
    with an odd last bit when it is inexact: rounding that to float32 (or any type with at
    least two fewer bits) then rounds the exact value correctly, once."""
    fix = (err != 0) & np.isfinite(s) & ((s.view(np.uint64) & np.uint64(1)) == 0)
    if not fix.any():
        return s
    return np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)


def _to_f32_odd(x: np.ndarray) -> np.ndarray:
    """``x`` (any int or float dtype) as float32 rounded to odd: rounding that to bfloat16
    then rounds ``x`` once (a plain float32 detour would round twice)."""
    if x.dtype.itemsize < 4 or x.dtype == np.float32:
        return x.astype(np.float32)  # exact in float32
    if x.dtype.kind in "iu" and x.dtype.itemsize == 8:
        hi = (x >> 32).astype(np.float64) * 4294967296.0  # both parts exact in float64
        lo = (x & 0xFFFFFFFF).astype(np.float64)
        s = hi + lo
        bb = s - hi
        x64 = _round_to_odd_f64(s, (hi - (s - bb)) + (lo - bb))
    else:
        x64 = x.astype(np.float64)
    y = x64.astype(np.float32)
    away = np.abs(y.astype(np.float64)) > np.abs(x64)
    y = np.where(away, np.nextafter(y, np.float32(0)), y).astype(np.float32)
    inexact = (y.astype(np.float64) != x64) & np.isfinite(x64)
    return (y.view(np.uint32) | inexact.astype(np.uint32)).view(np.float32)


def _value_np(t: PrimType) -> np.dtype:
    dt = value_dtype(t)
    if dt is None:
        raise ValueError(f"no numpy value dtype for dtype {t}")
    return dt


def cast(x: np.ndarray, src: PrimType, dst: PrimType) -> np.ndarray:
    """Convert values as CUDA does: float->int truncates and saturates (NaN -> 0), int->int
    wraps, to bool is ``!= 0``, to float rounds to nearest even."""
    s, d = src.element, dst.element
    if s == d:
        return x
    if d.is_bool:
        return x != 0
    if d.kind == "bfloat":
        return round_bf16(_to_f32_odd(np.asarray(x)))
    if d.is_minifloat:
        return round_to(np.asarray(x), d)
    dn = _value_np(d)
    if s.is_float and d.is_int:
        lo, hi = int_range(d)
        y = np.trunc(np.asarray(x, dtype=np.float64))
        nan = np.isnan(y)
        over = y >= float(hi)  # float(hi) may round up past hi for 64-bit types
        under = y <= float(lo)
        y = np.where(nan | over | under, 0.0, y)
        r = y.astype(dn)
        if over.any():
            r = np.where(over, dn.type(hi), r)
        if under.any():
            r = np.where(under, dn.type(lo), r)
        return r
    if s.is_bool:
        return x.astype(dn)
    return np.asarray(x).astype(dn)


def make_const(value, t: PrimType) -> np.ndarray:
    """A uniform value (shape (1,), or (1, lanes) for vectors) of dtype ``t``. A literal past
    the dtype's range is its inf (no warning: that is what the constant means)."""
    el = t.element
    with np.errstate(over="ignore"):
        if el.kind == "bfloat":
            a = round_bf16(np.array([value], dtype=np.float32))
        elif el.is_minifloat:
            a = round_to(np.array([value], dtype=np.float64), el)
        else:
            a = np.array([value], dtype=_value_np(el))
    if t.lanes > 1:
        a = np.repeat(a[:, None], t.lanes, axis=1)
    return a


# ------------------------------------------------------------------ constant folding
# One constant operation exactly as the interpreter evaluates the unfolded node (the same
# functions: operands made with make_const, so each is rounded to its dtype first, the result
# rounded to a narrow dtype with round_to, casts through cast). None: not folded (a NaN
# result, whose bits are the interpreter's and the GPU's business, or no numpy value dtype).

#: the float arithmetic ops, as tirx/interp/engine_expr.py evaluates them on float dtypes
_FLOAT_OPS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "min": fmin,
    "max": fmax,
}
_COMPARE_OPS = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal,
}  # fmt: skip


def _scalar_ok(t: object) -> bool:
    return type(t) is PrimType and t.lanes == 1 and t.base in _NP


def _float_result(r: np.ndarray) -> float | None:
    v = float(r.reshape(-1)[0])
    return None if v != v else v


def fold_float_op(op: str, a: float, b: float, t: PrimType) -> float | None:
    """``a op b`` (``op``: add sub mul div min max) of two constants of float dtype ``t``,
    bit for bit as the program computes it; None for a NaN result or an unknown op."""
    fn = _FLOAT_OPS.get(op)
    if fn is None or not _scalar_ok(t) or not t.is_float:
        return None
    with np.errstate(all="ignore"):
        r = fn(make_const(a, t), make_const(b, t))
        if needs_rounding(t):
            r = round_to(r, t)
    return _float_result(r)


def fold_compare(op: str, a: float, b: float, t: PrimType) -> bool | None:
    """``a op b`` (``op``: eq ne lt le gt ge) of two constants of dtype ``t``, each rounded to
    ``t`` first as the program holds it; None for an unknown op or dtype."""
    fn = _COMPARE_OPS.get(op)
    if fn is None or not _scalar_ok(t):
        return None
    with np.errstate(all="ignore"):
        return bool(fn(make_const(a, t), make_const(b, t)).reshape(-1)[0])


def fold_cast(value: float, src: PrimType, dst: PrimType) -> int | float | None:
    """The constant ``value`` of dtype ``src`` cast to ``dst``, as the program casts it (the
    value rounded to ``src`` first; integers convert to floats with one rounding; floats to
    integers truncate and saturate, NaN to 0); an int for bool/integer ``dst``, a float for a
    float ``dst``; None for a NaN result or a dtype without numpy values."""
    if not (_scalar_ok(src) and _scalar_ok(dst)):
        return None
    with np.errstate(all="ignore"):
        r = cast(make_const(value, src), src, dst)
    if dst.is_float:
        return _float_result(np.asarray(r))
    return int(np.asarray(r).reshape(-1)[0])


def float_bits(value: float, t: PrimType) -> bytes | None:
    """The bits a float constant ``value`` of dtype ``t`` stands for (its value rounded to
    ``t``, as the program holds it); two literals with equal bits are the same constant."""
    if not _scalar_ok(t) or not t.is_float:
        return None
    with np.errstate(all="ignore"):
        return make_const(value, t).tobytes()
