"""numpy representations of tirx dtypes, bfloat16 rounding and CUDA-exact casts.

A value of a tirx dtype lives in a numpy array of its *value* dtype; in memory it uses its
*storage* dtype. They differ for bfloat16 and float8 (float32 values that are exactly
representable in the narrow type, stored as their 16- or 8-bit patterns).
"""

from __future__ import annotations

import math

import numpy as np

from ..ir.arith import int_range
from ..ir.types import PrimType
from .errors import InterpError
from .minifloat import FORMATS as MINIFLOATS
from .minifloat import decode as _mf_decode
from .minifloat import round_to_format as _mf_round
from .minifloat import to_bits as _mf_bits

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
_STORE = dict(_NP, bfloat16=np.uint16, float8_e4m3fn=np.uint8, float8_e5m2=np.uint8)
# the other minifloats (tirx/interp/minifloat.py): float32 values, one uint8 code per element
for _n in MINIFLOATS:
    _NP.setdefault(_n, np.float32)
    _STORE.setdefault(_n, np.uint8)


def value_np(t: PrimType) -> np.dtype:
    """The numpy dtype holding values of ``t`` (per element)."""
    try:
        return np.dtype(_NP[t.base])
    except KeyError:
        raise InterpError(
            f"the interpreter cannot compute with dtype {t} (float8 is not supported)"
        ) from None


def storage_np(t: PrimType) -> np.dtype:
    """The numpy dtype holding ``t`` in memory (per element)."""
    try:
        return np.dtype(_STORE[t.base])
    except KeyError:
        raise InterpError(f"the interpreter cannot store dtype {t} (float8 is not supported)") from None


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


def f8_to_bits(x: np.ndarray, base: str) -> np.ndarray:
    _, pos, _ = _f8_table(base)
    x = np.asarray(x, dtype=np.float32)
    ax = np.abs(x).astype(np.float64)
    code = np.searchsorted(pos, ax).astype(np.uint8)
    code = np.where(np.signbit(x), code | np.uint8(0x80), code).astype(np.uint8)
    return np.where(np.isnan(x), np.uint8(0x7F), code).astype(np.uint8)


def f8_from_bits(b: np.ndarray, base: str) -> np.ndarray:
    vals, _, _ = _f8_table(base)
    return vals[np.asarray(b, dtype=np.uint8)]


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


def to_storage(x: np.ndarray, t: PrimType) -> np.ndarray:
    if t.base == "bfloat16":
        return f32_to_bf16_bits(x)
    if t.is_minifloat:
        return f8_to_bits(x, t.base) if t.base in _F8 else _mf_bits(x, t.base)
    return x


def from_storage(x: np.ndarray, t: PrimType) -> np.ndarray:
    if t.base == "bfloat16":
        return bf16_bits_to_f32(x)
    if t.is_minifloat:
        return f8_from_bits(x, t.base) if t.base in _F8 else _mf_decode(x, t.base)
    return x


int_bounds = int_range  # one definition: tirx.ir.arith


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


def fused_mul_add(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``a * b + c`` rounded once to the arguments' dtype (float32 or float64), as CUDA's
    ``fmaf``/``fma``."""
    if a.dtype != np.float64:
        dt = a.dtype
        p = a.astype(np.float64) * b.astype(np.float64)  # exact: 2 x 24 bits fit in 53
        c64 = c.astype(np.float64)
        s = p + c64
        bb = s - p
        err = (p - (s - bb)) + (c64 - bb)  # s + err == p + c exactly (TwoSum)
        return _round_to_odd_f64(s, err).astype(dt)
    r = a * b + c
    a, b, c, r = np.broadcast_arrays(a, b, c, r)
    fin_ab = np.isfinite(a) & np.isfinite(b)
    if (fin_ab & np.isinf(c)).any():  # a finite product (even past float64's range) + inf
        r = np.where(fin_ab & np.isinf(c), c, r)
    exact = np.isfinite(a) & np.isfinite(b) & np.isfinite(c) & (a != 0) & (b != 0) & (c != 0)
    if not exact.any():
        return r
    from fractions import Fraction

    r = r.copy()
    for k in zip(*np.nonzero(exact)):  # float64 has no wider type: exact rationals, rounded once
        v = Fraction(float(a[k])) * Fraction(float(b[k])) + Fraction(float(c[k]))
        try:
            r[k] = float(v)
        except OverflowError:
            r[k] = math.inf if v > 0 else -math.inf
    return r


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
    dn = value_np(d)
    if s.is_float and d.is_int:
        lo, hi = int_bounds(d)
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
    """A uniform value (shape (1,), or (1, lanes) for vectors) of dtype ``t``."""
    el = t.element
    if el.kind == "bfloat":
        a = round_bf16(np.array([value], dtype=np.float32))
    elif el.is_minifloat:
        a = round_to(np.array([value], dtype=np.float64), el)
    else:
        a = np.array([value], dtype=value_np(el))
    if t.lanes > 1:
        a = np.repeat(a[:, None], t.lanes, axis=1)
    return a
