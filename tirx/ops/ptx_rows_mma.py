"""PTX instruction table rows for warp-level MMA: ``mma.sync.aligned``.

A fragment is a register vector: ``T.ptx.mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32(
d0, d1, d2, d3, a0, a1, a2, a3, b0, b1, c0, c1, c2, c3)`` takes one buffer element per
register, as TIRx's table does; the register counts follow from the shape and types
(``_frag``). Slot layouts follow TIRx's (apache-tvm-tirx 0.1.0a4). The sparse forms
(``mma.sp``) are left out (tests/test_ptx_rows_table.py lists them).
"""

from __future__ import annotations

import re

from . import ptx_semantics_mma  # noqa: F401  (registers the CPU semantics of mma.sync .f16/.bf16 forms)
from .ptx_table import Operand, Row, slots
from .ptx_table import declare_opcode as _declare

__all__: list[str] = []

_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "f32": 32, "f64": 64, "s32": 32,
         "u8": 8, "s8": 8, "u4": 4, "s4": 4, "b1": 1}  # fmt: skip
_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)")


def _frag(which: str):
    """The register count of fragment ``which`` (a, b, c or d) for the chosen modifiers:
    a thread holds 1/32 of the warp's tile, packed into 32-bit registers (f64 in 64-bit
    ones); m8n8k4 with f16 inputs is the quad-pair form (8 accumulators, 2+2 inputs)."""

    def count(mods: dict) -> int:
        shape = _SHAPE.fullmatch(mods["shape"])
        assert shape is not None  # every mma shape option is spelled mMnNkK
        m, n, k = (int(x) for x in shape.groups())
        ty = mods[which + "type"] if which in "ab" else mods["dtype" if which == "d" else "ctype"]
        bits = _BITS[ty]
        if mods["shape"] == "m8n8k4" and mods["atype"] == "f16":
            if which in "ab":
                return 2
            return 8 if bits == 32 else 4
        elems = {"a": m * k, "b": n * k}.get(which, m * n) // 32
        return elems if bits == 64 else max(1, elems * bits // 32)

    return count


_FRAGS = (
    Operand("d", "dst", lanes=_frag("d")),
    Operand("a", "reg", lanes=_frag("a")),
    Operand("b", "reg", lanes=_frag("b")),
    Operand("c", "reg", lanes=_frag("c")),
)
_SA = "sync=sync aligned=aligned"


def _mma(name: str, spec: str) -> Row:
    return Row(name, slots(spec), _FRAGS)


_declare("mma", [
    _mma("mma", f"{_SA} shape=m8n8k4|m16n8k4|m16n8k8|m16n8k16|m16n8k32 alayout=row|col blayout=row|col "
                "dtype=f32 atype=f16|bf16|tf32|e4m3|e5m2 btype=f16|bf16|tf32|e4m3|e5m2 ctype=f32"),
    _mma("mma_f16acc", f"{_SA} shape=m8n8k4|m16n8k8|m16n8k16|m16n8k32 alayout=row|col blayout=row|col "
                       "dtype=f16 atype=f16|e4m3|e5m2 btype=f16|e4m3|e5m2 ctype=f16"),
    _mma("mma_f16c_f32d", f"{_SA} shape=m8n8k4 alayout=row|col blayout=row|col dtype=f32 atype=f16 btype=f16 "
                          "ctype=f16"),
    _mma("mma_int", f"{_SA} shape=m8n8k16|m16n8k16|m16n8k32|m8n8k32|m16n8k64|m8n8k128|m16n8k128|m16n8k256 "
                    "alayout=row blayout=col satfinite?=satfinite dtype=s32 atype=u8|s8|u4|s4|b1 "
                    "btype=u8|s8|u4|s4|b1 ctype=s32 bop?=xor|and popc?=popc"),
    _mma("mma_f64", f"{_SA} shape=m8n8k4|m16n8k4|m16n8k8|m16n8k16 alayout=row blayout=col dtype=f64 atype=f64 "
                    "btype=f64 ctype=f64 rnd?=rn|rz|rm|rp"),
], doc="mma.sync.aligned: a warp-level matrix multiply-accumulate d = a*b + c on register fragments")  # fmt: skip
