"""Shared pieces of the interpreter-vs-GPU op tests (tests/test_math_gpu.py,
tests/test_ops_generated.py): dtype lists, edge inputs, exact rounding to a float type,
ulp-aware comparison (NaN equals NaN), CUDA's documented ulp errors, and moving arrays to
and from a GPU through torch.

Kept out of the tests so each test file states only what it checks; nothing here imports
a CUDA module until a GPU is asked for.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from tirx.ops.semantics.dtypes import bf16_bits_to_f32

__all__ = [
    "CUDA_ULP_F32",
    "CUDA_ULP_F64",
    "EXACT_OPTS",
    "FLOATS",
    "INTS",
    "as_dtype",
    "compare",
    "fmt",
    "from_torch",
    "gpu",
    "gpu_tolerance",
    "np_dtype",
    "round_exact",
    "to_torch",
    "values",
]

FLOATS = ("float32", "float64", "float16", "bfloat16")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
#: NVRTC options for bit-exact comparisons: no fused multiply-add contraction
EXACT_OPTS = ("--fmad=false",)

# CUDA's documented maximum ulp error (float32 / float64), CUDA C++ Programming Guide,
# "Mathematical Functions"; ops not listed are exact (correctly rounded or integer-valued)
CUDA_ULP_F32 = {
    "exp": 2, "exp2": 2, "exp10": 2, "log": 1, "log2": 1, "log10": 2, "log1p": 1, "rsqrt": 2, "tanh": 2,
    "sin": 2, "cos": 2, "tan": 4, "asin": 2, "acos": 2, "atan": 2, "sinh": 3, "cosh": 2, "erf": 2,
    "sigmoid": 4, "pow": 4, "atan2": 3, "hypot": 3, "cuda.fdividef": 2, "asinh": 3, "acosh": 4, "atanh": 3,
}  # fmt: skip
CUDA_ULP_F64 = {
    "exp": 1, "exp2": 1, "exp10": 1, "log": 1, "log2": 1, "log10": 1, "log1p": 1, "rsqrt": 1, "tanh": 1,
    "sin": 2, "cos": 2, "tan": 2, "asin": 2, "acos": 2, "atan": 2, "sinh": 2, "cosh": 1, "erf": 2,
    "sigmoid": 3, "pow": 2, "atan2": 2, "hypot": 2, "asinh": 3, "acosh": 3, "atanh": 2,
}  # fmt: skip


def gpu_tolerance(op: str, dt: str) -> int:
    """Ulps of ``dt`` the interpreter and the GPU may differ by on ``op`` (0: bitwise): CUDA's
    documented error plus the interpreter's own (float32 and half types are the float64
    function rounded once, float64 numpy's within 2 ulps); half types compute the float32
    function and round, so 1 ulp of the half type."""
    if op not in CUDA_ULP_F32:
        return 0
    if dt == "float32":
        return CUDA_ULP_F32[op] + 1
    if dt == "float64":
        return CUDA_ULP_F64[op] + 2
    return 1


def np_dtype(dt: str) -> np.dtype:
    """The numpy storage dtype of a tirx dtype (bfloat16 is stored as its uint16 bits)."""
    if dt == "bool":
        return np.dtype(np.bool_)
    return np.dtype(np.uint16 if dt == "bfloat16" else dt)


_FORMATS = {"float16": (11, 15), "bfloat16": (8, 127), "float32": (24, 127), "float64": (53, 1023)}


def round_exact(v: float | int | Fraction, dt: str) -> float:
    """``v`` (exact: a float, an int or a fraction) rounded once to the float type ``dt``
    (ties to even, past the largest finite value to inf), as a Python float (reference)."""
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return v
    p, emax = _FORMATS[dt]
    a = abs(Fraction(v))
    neg = v < 0 or (isinstance(v, float) and math.copysign(1.0, v) < 0)
    if a == 0:
        return -0.0 if neg else 0.0
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    q = Fraction(2) ** (max(e, 1 - emax) - (p - 1))
    m = math.floor(a / q)
    r = a / q - m
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and m % 2):
        m += 1
    val = m * q
    if val >= Fraction(2) ** (emax + 1):
        return -math.inf if neg else math.inf
    return -float(val) if neg else float(val)


def bf16_bits(x64: np.ndarray) -> np.ndarray:
    """float64 -> bfloat16 bit patterns, rounded once to nearest even (reference)."""
    out = np.empty(x64.shape, np.uint16)
    for k, v in enumerate(x64.tolist()):
        if math.isnan(v):
            out[k] = 0x7FC0
        else:
            out[k] = np.array([round_exact(v, "bfloat16")], np.float32).view(np.uint32)[0] >> 16
    return out


def as_dtype(x64: np.ndarray, dt: str) -> np.ndarray:
    """float64 numbers stored as ``dt`` (rounded once; bfloat16 as bits)."""
    if dt == "bfloat16":
        return bf16_bits(x64)
    with np.errstate(all="ignore"):
        return x64.astype(dt)


def values(x: np.ndarray, dt: str) -> np.ndarray:
    """Stored arrays as float64 numbers (bfloat16 from its bit patterns)."""
    if dt == "bfloat16":
        return bf16_bits_to_f32(x).astype(np.float64)
    return x.astype(np.float64)


def _ordered(x: np.ndarray, dt: str) -> np.ndarray:
    """Float bits mapped to integers in numeric order (-0 and +0 one apart)."""
    width = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}[dt]
    u = x.view(f"uint{width}").astype(np.uint64).astype(object)
    top = 1 << (width - 1)
    return np.array([-(int(v) - top) - 1 if v & top else int(v) for v in u], dtype=object)


def compare(
    odt: str, want: np.ndarray, got: np.ndarray, tol: int, skip: np.ndarray | None = None
) -> list[tuple[int, int | None]]:
    """Indices where ``got`` differs from ``want`` beyond ``tol`` ulps of ``odt`` (NaN equals
    NaN, any payload; otherwise bitwise, so -0 differs from +0), each with its distance in
    ulps (None for a NaN/non-NaN or non-float mismatch). ``skip`` masks lanes out."""
    skip = np.zeros(want.shape, bool) if skip is None else skip
    if odt not in FLOATS:
        bad = (want != got) & ~skip
        return [(int(k), None) for k in np.flatnonzero(bad)]
    wv, gv = values(want, odt), values(got, odt)
    both_nan = np.isnan(wv) & np.isnan(gv)
    same = (want.view(f"uint{want.itemsize * 8}") == got.view(f"uint{got.itemsize * 8}")) | both_nan
    out: list[tuple[int, int | None]] = []
    cand = np.flatnonzero(~same & ~skip)
    if cand.size == 0:
        return out
    dist = np.abs(_ordered(want[cand], odt) - _ordered(got[cand], odt))
    for k, d in zip(cand, dist):
        nan_mismatch = np.isnan(wv[k]) != np.isnan(gv[k])
        if nan_mismatch or d > tol:
            out.append((int(k), None if nan_mismatch else int(d)))
    return out


def fmt(x: np.ndarray, k: int, dt: str) -> str:
    """Element ``k`` of a stored array, readable (floats also as bits)."""
    if dt == "bool" or x.dtype == np.bool_:
        return str(bool(x[k]))
    if dt in FLOATS:
        v = float(values(x[k : k + 1], dt)[0])
        return f"{v!r} (0x{int(x[k : k + 1].view(f'uint{x.itemsize * 8}')[0]):0{x.itemsize * 2}x})"
    return str(int(x[k]))


# ----------------------------------------------------------------------------- GPU
def gpu() -> tuple[Any, str | None]:
    """(torch, None) on a GPU host, else (None, why). Probes the driver before torch."""
    try:
        from ..runtime import driver as drv
    except ImportError as e:  # pragma: no cover
        return None, str(e)
    ok, why = drv.probe()
    if not ok:
        return None, f"no CUDA device: {why}"
    try:
        import torch
    except ImportError:
        return None, "no torch"
    if not torch.cuda.is_available():  # pragma: no cover
        return None, "torch sees no CUDA device"
    return torch, None


def to_torch(torch: Any, x: np.ndarray, dt: str) -> Any:
    """A stored numpy array on the GPU (bfloat16 from its bits)."""
    if dt == "bfloat16":
        return torch.from_numpy(x.view(np.int16).copy()).view(torch.bfloat16).cuda()
    return torch.from_numpy(x.copy()).cuda()


def from_torch(torch: Any, t: Any, dt: str) -> np.ndarray:
    """A GPU tensor back as a stored numpy array (bfloat16 as its bits)."""
    t = t.cpu()
    if dt == "bfloat16":
        return t.view(torch.int16).numpy().view(np.uint16)
    return t.numpy()
