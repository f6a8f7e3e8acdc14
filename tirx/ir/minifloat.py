"""Exact software encode/decode of the 4-, 6- and 8-bit float formats ("minifloats").

Each format is described by its field widths, exponent bias and special-value rule; the
256 (or fewer) code values are enumerated once into a table, so decoding is a lookup and
encoding is a search among the representable values (exact in float64: every value and
every midpoint between neighbours has a handful of significant bits).

Conversion rules (those of CUDA's ``__nv_fp8_*`` / ``__nv_fp6_*`` / ``__nv_fp4_*``
constructors, which the CUDA code generator emits; formats CUDA lacks follow the same rules):

- round to nearest, ties to even; finite values past the largest and +-inf saturate to
  +-largest (``__NV_SATFINITE``);
- NaN becomes the format's NaN; the 4- and 6-bit ``fn`` formats have no NaN and take
  +largest (as CUDA does);
- ``fnuz`` formats have no -0 (code 0x80 is their only NaN): a negative value that rounds to
  zero is +0;
- ``float8_e8m0fnu`` (exponent only, unsigned, no zero) takes ``|x|`` rounded *up* to a power
  of two within [2^-127, 2^127] in casts (``__nv_fp8_e8m0(float)`` is ``cvt.rp.satfinite``);
  ``encode(..., rounding="nearest")`` gives the round-to-nearest-even code as well.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["FORMATS", "Format", "decode", "encode", "fmt", "round_to_format", "to_bits"]


@dataclass(frozen=True)
class Format:
    """One minifloat format.

    ``specials``: ``"ieee"`` (the top exponent holds inf and NaNs), ``"fn"`` (only the
    all-ones codes are NaN, no inf), ``"fnuz"`` (code 0x80 is the only NaN: no inf, no -0),
    ``"none"`` (every code is a finite number), ``"fnu"`` (unsigned, all-ones is NaN).
    ``rounding`` is the cast's rounding: ``"nearest"`` (ties to even) or ``"up"``.
    """

    name: str
    ebits: int
    mbits: int
    bias: int
    specials: str
    signed: bool = True
    subnormals: bool = True
    rounding: str = "nearest"

    @property
    def nbits(self) -> int:
        return self.ebits + self.mbits + (1 if self.signed else 0)

    @property
    def sign_bit(self) -> int:
        return 1 << (self.ebits + self.mbits) if self.signed else 0

    @property
    def ncodes(self) -> int:
        return 1 << self.nbits


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("float8_e4m3fn", 4, 3, 7, "fn"),
        Format("float8_e4m3", 4, 3, 7, "ieee"),
        Format("float8_e5m2", 5, 2, 15, "ieee"),
        Format("float8_e3m4", 3, 4, 3, "ieee"),
        Format("float8_e4m3fnuz", 4, 3, 8, "fnuz"),
        Format("float8_e4m3b11fnuz", 4, 3, 11, "fnuz"),
        Format("float8_e5m2fnuz", 5, 2, 16, "fnuz"),
        Format("float8_e8m0fnu", 8, 0, 127, "fnu", signed=False, subnormals=False, rounding="up"),
        Format("float6_e2m3fn", 2, 3, 1, "none"),
        Format("float6_e3m2fn", 3, 2, 3, "none"),
        Format("float4_e2m1fn", 2, 1, 1, "none"),
    )
}


def fmt(name: str) -> Format:
    """The format of dtype ``name``; ValueError naming it when it is not a minifloat."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"dtype {name!r} is not a minifloat format (one of {sorted(FORMATS)})") from None


def _code_value(f: Format, code: int) -> float:
    neg = bool(code & f.sign_bit)
    mag = code & (f.sign_bit - 1) if f.signed else code
    e = mag >> f.mbits
    m = mag & ((1 << f.mbits) - 1)
    emax = (1 << f.ebits) - 1
    if f.specials == "ieee" and e == emax:
        v = float("inf") if m == 0 else float("nan")
    elif f.specials == "fn" and e == emax and m == (1 << f.mbits) - 1:
        v = float("nan")
    elif f.specials == "fnuz" and neg and mag == 0:
        return float("nan")
    elif f.specials == "fnu" and e == emax:
        v = float("nan")
    elif e == 0 and f.subnormals:
        v = m * 2.0 ** (1 - f.bias - f.mbits)
    else:
        v = (1 + m / (1 << f.mbits)) * 2.0 ** (e - f.bias)
    return -v if neg else v


class _Tables:
    __slots__ = ("max_code", "mid", "nan_code", "pos", "values")

    def __init__(self, f: Format) -> None:
        vals = np.array([_code_value(f, c) for c in range(f.ncodes)], dtype=np.float64)
        n_pos = f.sign_bit if f.signed else f.ncodes
        pos = vals[:n_pos]
        finite = np.isfinite(pos)
        # codes 0..max_code are the finite non-negative values, increasing with the code
        self.max_code = int(np.nonzero(finite)[0].max())
        self.pos = pos[: self.max_code + 1]
        assert np.all(np.diff(self.pos) > 0), f.name
        self.mid = (self.pos[:-1] + self.pos[1:]) / 2  # exact: few significant bits
        self.values = vals.astype(np.float32)
        if f.specials in ("ieee", "fn"):
            self.nan_code = f.sign_bit - 1  # S=0, all ones
        elif f.specials == "fnuz":
            self.nan_code = f.sign_bit
        elif f.specials == "fnu":
            self.nan_code = f.ncodes - 1
        else:
            self.nan_code = self.max_code  # no NaN: CUDA gives +largest


_TABLES: dict[str, _Tables] = {}


def _tables(name: str) -> _Tables:
    t = _TABLES.get(name)
    if t is None:
        t = _TABLES[name] = _Tables(fmt(name))
    return t


def decode(codes: np.ndarray, name: str) -> np.ndarray:
    """Code values (any integer array, only the format's low bits are used) -> float32."""
    f = fmt(name)
    c = np.asarray(codes).astype(np.int64) & (f.ncodes - 1)
    return _tables(name).values[c]


def encode(x: np.ndarray, name: str, rounding: str | None = None) -> np.ndarray:
    """float32/float64 values -> uint8 codes of ``name`` (the rules in the module docstring).

    ``rounding`` is ``"nearest"`` (ties to even) or ``"up"`` (toward +inf, of ``|x|`` for the
    unsigned format); by default the format's cast rounding.
    """
    f = fmt(name)
    t = _tables(name)
    rounding = f.rounding if rounding is None else rounding
    if rounding not in ("nearest", "up"):
        raise ValueError(f"encode: rounding must be 'nearest' or 'up', got {rounding!r}")
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    if rounding == "up":
        code = np.searchsorted(t.pos, ax, side="left")
    else:
        code = np.searchsorted(t.mid, ax, side="left")
        tie = (code < t.mid.size) & (ax == t.mid[np.minimum(code, t.mid.size - 1)]) & (code % 2 == 1)
        code = code + tie
    code = np.minimum(code, t.max_code)  # saturate (also +-inf)
    if f.signed:
        neg = np.signbit(x)
        if f.specials == "fnuz":
            neg = neg & (code != 0)  # no -0
        code = np.where(neg, code | f.sign_bit, code)
    code = np.where(np.isnan(x), t.nan_code, code)
    return code.astype(np.uint8)


def to_bits(x: np.ndarray, name: str) -> np.ndarray:
    """Values of the format (already rounded to it) -> their codes, as memory holds them:
    +-inf stays inf where the format has it; every NaN becomes the one NaN code."""
    f = fmt(name)
    code = encode(x, name, "nearest")
    if f.specials == "ieee":
        x = np.asarray(x)
        inf = ((1 << f.ebits) - 1) << f.mbits
        code = np.where(np.isinf(x), np.where(np.signbit(x), inf | f.sign_bit, inf), code).astype(np.uint8)
    return code


def round_to_format(x: np.ndarray, name: str) -> np.ndarray:
    """``x`` converted to ``name`` as a cast does, returned as float32 numbers."""
    return decode(encode(x, name), name)
