"""The minifloat formats (fp8 / fp6 / fp4): moved to :mod:`tirx.ir.minifloat` so constant
folding rounds with the very tables the interpreter uses; this name stays for its users."""

from ..ir.minifloat import FORMATS, Format, decode, encode, fmt, round_to_format, to_bits

__all__ = ["FORMATS", "Format", "decode", "encode", "fmt", "round_to_format", "to_bits"]
