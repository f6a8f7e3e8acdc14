"""numpy representations of tirx dtypes: value and storage dtypes, bit patterns in memory.

A value of a tirx dtype lives in a numpy array of its *value* dtype; in memory it uses its
*storage* dtype. They differ for bfloat16 and float8 (float32 values that are exactly
representable in the narrow type, stored as their 16- or 8-bit patterns).
"""

from __future__ import annotations

import math

import numpy as np

from tirx.ir.arith import int_range
from tirx.ir.minifloat import FORMATS as MINIFLOATS
from tirx.ir.minifloat import decode as _mf_decode
from tirx.ir.minifloat import to_bits as _mf_bits

# the values of dtypes (rounding, casts, min/max) are the IR's, shared with constant folding
from tirx.ir.numerics import (  # noqa: F401
    _F8,
    _NP,
    _f8_table,
    _round_to_odd_f64,
    _to_f32_odd,
    bf16_bits_to_f32,
    cast,
    f32_to_bf16_bits,
    fmax,
    fmin,
    make_const,
    needs_rounding,
    round_bf16,
    round_f8,
    round_to,
)
from tirx.ir.types import SUBBYTE_INTS, PrimType
from tirx.ops.semantics.errors import InterpError
from tirx.ops.semantics.nan import bf16_storage, f8_nan_codes, f8_nan_values

_STORE = dict(_NP, bfloat16=np.uint16, float8_e4m3fn=np.uint8, float8_e5m2=np.uint8)
# the other minifloats (tirx/ir/minifloat.py): float32 values, one uint8 code per element
for _n in MINIFLOATS:
    _STORE[_n] = np.uint8


def _unsupported(t: PrimType, what: str) -> InterpError:
    if t.base in SUBBYTE_INTS:
        return InterpError(
            f"the interpreter cannot {what} dtype {t}: integers narrower than a byte are not modelled "
            "(keep them packed in uint8 / uint32 and take them apart with shifts and masks)"
        )
    return InterpError(f"the interpreter cannot {what} dtype {t}")


def value_np(t: PrimType) -> np.dtype:
    """The numpy dtype holding values of ``t`` (per element)."""
    try:
        return np.dtype(_NP[t.base])
    except KeyError:
        raise _unsupported(t, "compute with") from None


def storage_np(t: PrimType) -> np.dtype:
    """The numpy dtype holding ``t`` in memory (per element)."""
    try:
        return np.dtype(_STORE[t.base])
    except KeyError:
        raise _unsupported(t, "store") from None


def f8_to_bits(x: np.ndarray, base: str) -> np.ndarray:
    _, pos, _ = _f8_table(base)
    x = np.asarray(x, dtype=np.float32)
    ax = np.abs(x).astype(np.float64)
    code = np.searchsorted(pos, ax).astype(np.uint8)
    code = np.where(np.signbit(x), code | np.uint8(0x80), code).astype(np.uint8)
    nan = np.isnan(x)
    if nan.any():  # a NaN's code from its value's bits (tirx/ops/semantics/nan.py)
        code = np.where(nan, f8_nan_codes(x, base), code)
    return code.astype(np.uint8)


_F8_VALUES: dict = {}


def f8_from_bits(b: np.ndarray, base: str) -> np.ndarray:
    vals = _F8_VALUES.get(base)
    if vals is None:  # each NaN code a NaN value that stores back as that code
        vals = _F8_VALUES[base] = f8_nan_values(_f8_table(base)[0], base)
    return vals[np.asarray(b, dtype=np.uint8)]


def to_storage(x: np.ndarray, t: PrimType) -> np.ndarray:
    if t.base == "bfloat16":
        return bf16_storage(x)  # a NaN's bits kept (tirx/ops/semantics/nan.py)
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
