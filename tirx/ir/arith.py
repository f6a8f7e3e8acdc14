"""Exact scalar integer semantics of the IR, in one place.

Integer results wrap to the dtype's width (two's complement); ``Div``/``Mod`` truncate
toward zero as in C, ``FloorDiv``/``FloorMod`` round toward negative infinity as in
Python. Constant folding (``tirx.passes.Simplify``) and host-side evaluation of launch
expressions (``tirx.runtime``) both use these; the interpreter implements the same rules
vectorized over numpy lanes.
"""

from __future__ import annotations

from .types import PrimType

__all__ = ["int_range", "trunc_div", "trunc_mod", "wrap", "wrap_bits"]


def wrap_bits(v: int, bits: int, signed: bool) -> int:
    """``v`` reduced to ``bits`` bits, read back as signed or unsigned."""
    m = 1 << bits
    v &= m - 1
    return v - m if signed and v >= m >> 1 else v


def wrap(v: int, t: PrimType) -> int:
    """``v`` wrapped to integer dtype ``t``."""
    return wrap_bits(v, t.bits, t.kind == "int")


def trunc_div(a: int, b: int) -> int:
    """C division: the quotient rounded toward zero (``b`` must be non-zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def trunc_mod(a: int, b: int) -> int:
    """C remainder: takes the sign of ``a`` (``b`` must be non-zero)."""
    return a - b * trunc_div(a, b)


def int_range(t: PrimType) -> tuple[int, int]:
    """The smallest and largest value of integer dtype ``t``."""
    b = t.bits
    if t.kind == "uint":
        return 0, (1 << b) - 1
    return -(1 << (b - 1)), (1 << (b - 1)) - 1
