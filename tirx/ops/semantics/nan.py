"""NaN results as NVIDIA hardware gives them: the interpreter's one place for NaN bits.

The rules (measured on the H200 by ``tools/probes/nan_bits.py``; the table is
docs/data/nan_bits_h200.json, the rules in words docs/interp.md "NaN bits"): float16,
bfloat16, float32 (and float8) arithmetic, math functions and casts among them give the
canonical NaN (all payload bits set) whatever NaNs went in; float64 propagates an operand's
NaN, quieted, by per-op operand priority, and makes ``0xfff8000000000000`` from numbers on
any host (numpy would give the host CPU's). A copy keeps a NaN's bits.

Callers (tirx/interp/engine_expr.py, tirx/ops/math.py, the storage conversions of
tirx/ops/semantics/dtypes.py) pass the result and, for float64, the operands; each fix-up is one
``isnan`` pass over the result when it holds no NaN, so ordinary arithmetic pays little.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tirx.ir.numerics import f32_to_bf16_bits
from tirx.ir.types import PrimType

__all__ = [
    "CANONICAL",
    "F64_DEFAULT",
    "bf16_storage",
    "binary",
    "call",
    "cast",
    "f8_nan_codes",
    "f8_nan_values",
    "fma_order",
]

#: the canonical NaN bits per dtype, and the float64 NaN made from numbers
CANONICAL = {"float16": 0x7FFF, "bfloat16": 0x7FFF, "float32": 0x7FFFFFFF}
F64_DEFAULT = 0xFFF8000000000000
_F64_QUIET = np.uint64(1 << 51)
_F16_QUIET = np.uint16(1 << 9)
# the canonical NaN as a value of the dtype's numpy value dtype (bfloat16: a float32 that is
# exactly the bfloat16 0x7fff, so rounding to bfloat16 keeps it)
_VALUE = {
    "float16": np.array([0x7FFF], np.uint16).view(np.float16)[0],
    "bfloat16": np.array([0x7FFF0000], np.uint32).view(np.float32)[0],
    "float32": np.array([0x7FFFFFFF], np.uint32).view(np.float32)[0],
    # float8 values are float32s; this one is stored as code 0x7f, the GPU's NaN for both
    "float8_e4m3fn": np.array([0x7FE00000], np.uint32).view(np.float32)[0],
    "float8_e5m2": np.array([0x7FE00000], np.uint32).view(np.float32)[0],
}
# which operand's NaN a float64 op keeps, by priority (indices into its operands)
_SECOND = (1, 0)
_FIRST = (0, 1)


def canonical(r: np.ndarray, base: str) -> np.ndarray:
    """``r`` with every NaN replaced by ``base``'s canonical NaN (float16/bfloat16/float32)."""
    nan = np.isnan(r)
    if not nan.any():
        return r
    return np.where(nan, _VALUE[base], r)


def _f64(r: np.ndarray, operands: Sequence[np.ndarray], order: Sequence[int]) -> np.ndarray:
    """``r`` (float64) with each NaN the first NaN operand in ``order``, quieted, else
    ``F64_DEFAULT``."""
    nan = np.isnan(r)
    if not nan.any():
        return r
    bits = np.full(r.shape, F64_DEFAULT, np.uint64)
    for k in reversed(order):  # the first in order is written last: it wins
        a = operands[k]
        if not (isinstance(a, np.ndarray) and a.dtype == np.float64):
            continue
        a = np.broadcast_to(a, r.shape)
        bits = np.where(np.isnan(a), a.view(np.uint64) | _F64_QUIET, bits)
    return np.where(nan, bits.view(np.float64), r)


def _fix(
    t: PrimType, order: Sequence[int]
) -> Callable[[np.ndarray, Sequence[np.ndarray]], np.ndarray] | None:
    base = t.element.base
    if base in _VALUE:
        return lambda r, xs: canonical(r, base)
    if base == "float64":
        return lambda r, xs: _f64(r, xs, order)
    return None  # the minifloats: rounding makes their one NaN code


# binary IR ops (tirx/interp/engine_expr.py _arith) whose float64 NaN is the second operand's
_SECOND_OPS = frozenset(("add", "sub", "mul", "min", "max", "mod"))


def binary(fn: Callable, t: PrimType, op: str, rnd: Callable | None = None) -> Callable:
    """``fn(a, b)`` (a binary IR op ``op`` on float dtype ``t``), rounded by ``rnd`` (narrow
    types computed in float32), with the GPU's NaN bits."""
    fix = _fix(t, _SECOND if op in _SECOND_OPS else _FIRST)
    if fix is None:
        return fn if rnd is None else (lambda a, b: rnd(fn(a, b)))
    if rnd is None:
        return lambda a, b: fix(fn(a, b), (a, b))
    return lambda a, b: fix(rnd(fn(a, b)), (a, b))


# math functions (tirx/ops/math.py) with their own float64 NaN rule
_FMA = (1, 0, 2)


def fma_order(b_is_c: bool) -> tuple[int, ...]:
    """Which NaN a float64 ``fma(a, b, c)`` keeps: measured ``fma(x, y, x)`` and
    ``fma(y, x, x)`` both keep ``y``, ``fma(x, x, y)`` keeps ``x``: the multiplicand that is not
    the addend, then the other, then the addend (three distinct NaNs: not measured)."""
    return (0, 1, 2) if b_is_c else (1, 0, 2)


def call(
    r: np.ndarray, xs: Sequence[np.ndarray], t: PrimType, name: str, order: Sequence[int] | None = None
) -> np.ndarray:
    """The result ``r`` of the math function ``name`` on ``xs`` (result dtype ``t``) with the
    GPU's NaN bits; ``order``: fma's (``fma_order``). float64 functions of two arguments keep
    the second one's NaN (measured: pow, fmod). ``copysign`` is a bit operation: it keeps its
    NaN (not measured)."""
    base = t.element.base
    if base in _VALUE:
        return r if name == "copysign" else canonical(r, base)
    if base != "float64" or name == "copysign":
        return r
    if name in ("fabs", "abs"):
        nan = np.isnan(r)
        if not nan.any():
            return r
        x = np.broadcast_to(xs[0], r.shape)
        return np.where(nan, (x.view(np.uint64) | _F64_QUIET).view(np.float64), r)
    if name == "fma":
        return _f64(r, xs, order or _FMA)
    return _f64(r, xs, _SECOND if len(xs) == 2 else (0,))


def _quiet_f16(r: np.ndarray) -> np.ndarray:
    nan = np.isnan(r)
    if not nan.any():
        return r
    return np.where(nan, (r.view(np.uint16) | _F16_QUIET).view(np.float16), r)


def _to_f64_canonical(r: np.ndarray) -> np.ndarray:
    nan = np.isnan(r)
    if not nan.any():
        return r
    return np.where(nan, np.array([0x7FFFFFFFE0000000], np.uint64).view(np.float64)[0], r)


_HALF = ("float16", "bfloat16", "float32")
_F8 = ("float8_e4m3fn", "float8_e5m2")
_F8_NAN = np.array([0x7FE00000], np.uint32).view(np.float32)[0]  # stored as code 0x7f


def _f8_nan(r: np.ndarray) -> np.ndarray:
    nan = np.isnan(r)
    return np.where(nan, _F8_NAN, r) if nan.any() else r


def _f64_to_f8(d: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """float64 -> float8 keeps the sign (e4m3: S.1111.111) and, for e5m2, the payload's top
    bits quieted (as float64 -> float16 does, then the top byte)."""

    def fix(r: np.ndarray, x: np.ndarray) -> np.ndarray:
        nan = np.isnan(r)
        if not nan.any():
            return r
        u = np.broadcast_to(x, r.shape).view(np.uint64)
        sign = ((u >> np.uint64(32)) & np.uint64(0x80000000)).astype(np.uint32)
        if d == "float8_e4m3fn":
            v = sign | np.uint32(0x7FE00000)
        else:
            top = ((u >> np.uint64(50)) & np.uint64(3)).astype(np.uint32) | np.uint32(2)
            v = sign | np.uint32(0x7F800000) | (top << np.uint32(21))
        return np.where(nan, v.view(np.float32), r)

    return fix


def cast(src: PrimType, dst: PrimType) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
    """The NaN fix-up ``fix(result, operand)`` of a cast ``src`` -> ``dst`` (None: the numpy
    conversion already gives the GPU's bits)."""
    s, d = src.element.base, dst.element.base
    if s == d:
        return None
    if s in _F8 and d in (*_HALF, "float64"):
        return (lambda r, x: _to_f64_canonical(r)) if d == "float64" else (lambda r, x: canonical(r, d))
    if d in _F8:
        return _f64_to_f8(d) if s == "float64" else (lambda r, x: _f8_nan(r))
    if d in _HALF and s in _HALF and not (s == "bfloat16" and d == "float32"):
        return lambda r, x: canonical(r, d)  # bfloat16 -> float32 is a shift: bits kept
    if s == "float16" and d == "float64":
        return lambda r, x: _to_f64_canonical(r)  # through float32's canonical NaN
    if s == "float64" and d == "float16":
        return lambda r, x: _quiet_f16(r)
    return None


def f8_nan_codes(x: np.ndarray, base: str) -> np.ndarray:
    """The float8 codes of NaN values (float32 arrays): e4m3 S.1111.111, e5m2 the sign and the
    top two payload bits (the value encoding of ``f8_nan_values``)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    sign = ((u >> np.uint32(24)) & np.uint32(0x80)).astype(np.uint8)
    if base == "float8_e4m3fn":
        return sign | np.uint8(0x7F)
    top = ((u >> np.uint32(21)) & np.uint32(3)).astype(np.uint8)
    return sign | np.uint8(0x7C) | np.where(top == 0, np.uint8(2), top).astype(np.uint8)


def f8_nan_values(vals: np.ndarray, base: str) -> np.ndarray:
    """The 256 values of a float8 code table with each NaN code as a float32 NaN carrying it,
    so a copy stores the very code back."""
    vals = vals.copy()
    codes = np.arange(256, dtype=np.uint32)
    nan = np.isnan(vals)
    sign = (codes & np.uint32(0x80)) << np.uint32(24)
    if base == "float8_e4m3fn":
        bits = sign | np.uint32(0x7FE00000)
    else:
        bits = sign | np.uint32(0x7F800000) | ((codes & np.uint32(3)) << np.uint32(21))
    vals.view(np.uint32)[nan] = bits[nan]
    return vals


def bf16_storage(x: np.ndarray) -> np.ndarray:
    """bfloat16 values (float32 arrays) as their 16-bit patterns, a NaN bit for bit (a
    signalling NaN too: a GPU copy keeps it; rounding to bits would quiet it)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    r = f32_to_bf16_bits(x)
    nan = np.isnan(x)
    if nan.any():
        hi = (x.view(np.uint32) >> np.uint32(16)).astype(np.uint16)
        r = np.where(nan & ((hi & np.uint16(0x7F)) != 0), hi, r)
    return r
