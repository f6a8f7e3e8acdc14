"""PTX instruction table rows for warp-level MMA: ``mma.sync.aligned`` and sparse ``mma.sp``.

A fragment is a register vector: ``T.ptx.mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32(
d0, d1, d2, d3, a0, a1, a2, a3, b0, b1, c0, c1, c2, c3)`` takes one buffer element per
register, as TIRx's table does; the register counts follow from the shape and types
(``_frag``). Slot layouts follow TIRx's (apache-tvm-tirx 0.1.0a4).

The sparse forms ``mma.sp{::ordered_metadata}.sync.aligned`` (A 2:4 structured sparse, so
it holds half the dense registers) add two operands: ``e``, the u32 metadata register, and
``f``, the sparsity selector, an immediate naming which thread(s) of each group of four hold
the group's metadata. How many do depends on K and the element width (PTX ISA 9.7.14.6.1):
one thread (f in 0..3), a pair (0..1) or all four (0), so each of TIRx's seven sparse forms
is one selector line: a row whose ``check_mods`` takes only its line's shape for each type.
The interpreter has no model of them (ptx_table's refusal: "the interpreter cannot run").
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..ir.types import uint32
from . import ptx_semantics_mma  # noqa: F401  (registers the CPU semantics of mma.sync .f16/.bf16 forms)
from .ptx_table import Operand, Row, slots
from .ptx_table import declare_opcode as _declare

__all__: list[str] = []

_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "f32": 32, "f64": 64, "s32": 32,
         "u8": 8, "s8": 8, "u4": 4, "s4": 4, "b1": 1}  # fmt: skip
_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)")


def _frag(which: str, sparse: bool = False):
    """The register count of fragment ``which`` (a, b, c or d) for the chosen modifiers:
    a thread holds 1/32 of the warp's tile, packed into 32-bit registers (f64 in 64-bit
    ones); m8n8k4 with f16 inputs is the quad-pair form (8 accumulators, 2+2 inputs);
    ``sparse``: A is stored compressed, M x K/2 (mma.sp)."""

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
        elems = {"a": m * k // (2 if sparse else 1), "b": n * k}.get(which, m * n) // 32
        return elems if bits == 64 else max(1, elems * bits // 32)

    return count


_FRAGS = (
    Operand("d", "dst", lanes=_frag("d")),
    Operand("a", "reg", lanes=_frag("a")),
    Operand("b", "reg", lanes=_frag("b")),
    Operand("c", "reg", lanes=_frag("c")),
)
_SA = "sync=sync aligned=aligned"


#: the floating-point multiplicand types' syntax lines (PTX ISA 9.7.16.5.14): the shapes each
#: is written at; only ``m8n8k4`` takes layouts other than ``.row.col``, and the two positions
#: name one type except on the fp8 line (``.e4m3`` / ``.e5m2`` mix)
_FP_SHAPES = {"f16": ("m8n8k4", "m16n8k8", "m16n8k16"), "bf16": ("m16n8k8", "m16n8k16"),
              "tf32": ("m16n8k4", "m16n8k8"), "e4m3": ("m16n8k16", "m16n8k32"),
              "e5m2": ("m16n8k16", "m16n8k32")}  # fmt: skip
#: the integer lines: A and B in one width class, each class at its own shapes
_INT_CLASS = {"u8": "8-bit", "s8": "8-bit", "u4": "4-bit", "s4": "4-bit", "b1": "single-bit"}
_INT_SHAPES = {"8-bit": ("m8n8k16", "m16n8k16", "m16n8k32"), "4-bit": ("m8n8k32", "m16n8k32", "m16n8k64"),
               "single-bit": ("m8n8k128", "m16n8k128", "m16n8k256")}  # fmt: skip


def _fp_lines(mods: dict) -> str | None:
    """Refuse a floating-point combination no syntax line of the ISA writes (ptxas would)."""
    shape, a, b = mods["shape"], mods["atype"], mods["btype"]
    if a != b and not {a, b} <= {"e4m3", "e5m2"}:
        return f"no syntax line pairs .{a} with .{b}"
    if shape != "m8n8k4" and (mods["alayout"], mods["blayout"]) != ("row", "col"):
        return f"{shape} is spelled .row.col (only m8n8k4 takes other layouts)"
    if shape not in _FP_SHAPES[a]:
        return f"{shape} has no .{a} multiplicand line (.{a} is at {', '.join(_FP_SHAPES[a])})"
    return None


def _int_lines(mods: dict) -> str | None:
    """Refuse an integer / single-bit combination no syntax line of the ISA writes."""
    shape, a, b = mods["shape"], mods["atype"], mods["btype"]
    cls = _INT_CLASS[a]
    if cls != _INT_CLASS[b]:
        return f"no syntax line pairs .{a} with .{b}"
    if shape not in _INT_SHAPES[cls]:
        return f"{shape} has no {cls} integer line ({cls} is at {', '.join(_INT_SHAPES[cls])})"
    if cls != "single-bit":
        return "only the single-bit line takes .xor / .and and .popc" if mods["bop"] or mods["popc"] else None
    if not (mods["bop"] and mods["popc"]):
        return "the single-bit line is spelled .xor.popc or .and.popc"
    return "the single-bit line takes no .satfinite" if mods["satfinite"] else None


def _mma(name: str, spec: str, lines: Callable[[dict], str | None] | None = None) -> Row:
    return Row(name, slots(spec), _FRAGS, check_mods=lines)


# ------------------------------------------------------------------ sparse: mma.sp
#: the A types a sparse form may pair with a B type of the same group (f16, bf16 and tf32
#: only with themselves)
_SP_GROUP = {"e4m3": "f8", "e5m2": "f8", "u8": "i8", "s8": "i8", "u4": "i4", "s4": "i4"}
#: selector line -> (the selector values, who holds the metadata, {A type: its one shape})
_SP_LINES: dict[str, tuple[tuple[int, ...], str, dict[str, str]]] = {
    "thread": ((0, 1, 2, 3), "one thread", {"f16": "m16n8k16", "bf16": "m16n8k16", "tf32": "m16n8k8"}),
    "pair": ((0, 1), "a thread pair", {"f16": "m16n8k32", "bf16": "m16n8k32", "tf32": "m16n8k16",
                                        "u8": "m16n8k32", "s8": "m16n8k32", "u4": "m16n8k64", "s4": "m16n8k64"}),
    "all": ((0,), "all four threads", {"e4m3": "m16n8k64", "e5m2": "m16n8k64", "u8": "m16n8k64",
                                        "s8": "m16n8k64", "u4": "m16n8k128", "s4": "m16n8k128"}),
}  # fmt: skip


def _sp_mods(line: str) -> Callable[[dict], str | None]:
    """Refuse a shape outside the row's selector line, and an A/B pair no mma.sp line has."""
    _, who, shapes = _SP_LINES[line]

    def check(mods: dict) -> str | None:
        a, b = mods["atype"], mods["btype"]
        if _SP_GROUP.get(a, a) != _SP_GROUP.get(b, b):
            return f"no sparse mma pairs .{a} with .{b}"
        want = shapes.get(a)
        if want != mods["shape"]:
            at = f"only at .{want}" if want else "at no shape"
            return f"this form (the metadata held by {who} of each group of four) takes .{a} {at}"
        return None

    return check


def _sp_operands(line: str) -> Callable[[dict], str | None]:
    """The metadata must be a u32 register and the selector one of the line's values."""
    allowed, who, _ = _SP_LINES[line]

    def check(ops: dict) -> str | None:
        e, f = ops["e"], ops["f"]
        if e.ty != uint32:
            return f"operand 'e' (the sparsity metadata) must be a uint32 value, got {e.ty}"
        if f.value not in allowed:
            vals = ", ".join(map(str, allowed))
            return (f"operand 'f' (the sparsity selector) must be one of {vals}, got {f.value} (at this "
                    f"shape the metadata of each group of four threads is held by {who})")  # fmt: skip
        return None

    return check


_SP_FRAGS = (
    Operand("d", "dst", lanes=_frag("d")),
    Operand("a", "reg", lanes=_frag("a", sparse=True)),
    Operand("b", "reg", lanes=_frag("b")),
    Operand("c", "reg", lanes=_frag("c")),
    Operand("e", "reg", ty="u32"),
    Operand("f", "imm"),
)
_SP = "spvariant=sp|sp::ordered_metadata sync=sync aligned=aligned"


def _mma_sp(name: str, line: str, spec: str) -> Row:
    return Row(name, slots(f"{_SP} {spec}"), _SP_FRAGS, check=_sp_operands(line), check_mods=_sp_mods(line))


_declare("mma", [
    _mma("mma", f"{_SA} shape=m8n8k4|m16n8k4|m16n8k8|m16n8k16|m16n8k32 alayout=row|col blayout=row|col "
                "dtype=f32 atype=f16|bf16|tf32|e4m3|e5m2 btype=f16|bf16|tf32|e4m3|e5m2 ctype=f32", _fp_lines),
    _mma("mma_f16acc", f"{_SA} shape=m8n8k4|m16n8k8|m16n8k16|m16n8k32 alayout=row|col blayout=row|col "
                       "dtype=f16 atype=f16|e4m3|e5m2 btype=f16|e4m3|e5m2 ctype=f16", _fp_lines),
    _mma("mma_f16c_f32d", f"{_SA} shape=m8n8k4 alayout=row|col blayout=row|col dtype=f32 atype=f16 btype=f16 "
                          "ctype=f16"),
    _mma("mma_int", f"{_SA} shape=m8n8k16|m16n8k16|m16n8k32|m8n8k32|m16n8k64|m8n8k128|m16n8k128|m16n8k256 "
                    "alayout=row blayout=col satfinite?=satfinite dtype=s32 atype=u8|s8|u4|s4|b1 "
                    "btype=u8|s8|u4|s4|b1 ctype=s32 bop?=xor|and popc?=popc", _int_lines),
    _mma("mma_f64", f"{_SA} shape=m8n8k4|m16n8k4|m16n8k8|m16n8k16 alayout=row blayout=col dtype=f64 atype=f64 "
                    "btype=f64 ctype=f64 rnd?=rn|rz|rm|rp"),
    # sparse A (mma.sp): TIRx's seven forms, one per selector line (_SP_LINES)
    _mma_sp("mma_sp_f16acc", "thread", "shape=m16n8k16 alayout=row blayout=col dtype=f16 atype=f16 btype=f16 "
                                       "ctype=f16"),
    _mma_sp("mma_sp_f16acc_pair", "pair", "shape=m16n8k32 alayout=row blayout=col dtype=f16 atype=f16 "
                                          "btype=f16 ctype=f16"),
    _mma_sp("mma_sp", "thread", "shape=m16n8k8|m16n8k16 alayout=row blayout=col dtype=f32 atype=f16|bf16|tf32 "
                                "btype=f16|bf16|tf32 ctype=f32"),
    _mma_sp("mma_sp_pair", "pair", "shape=m16n8k16|m16n8k32 alayout=row blayout=col dtype=f32 "
                                   "atype=f16|bf16|tf32 btype=f16|bf16|tf32 ctype=f32"),
    _mma_sp("mma_sp_all", "all", "shape=m16n8k64 alayout=row blayout=col dtype=f32 atype=e4m3|e5m2 "
                                 "btype=e4m3|e5m2 ctype=f32"),
    _mma_sp("mma_sp_int_pair", "pair", "shape=m16n8k32|m16n8k64 alayout=row blayout=col satfinite?=satfinite "
                                       "dtype=s32 atype=u8|s8|u4|s4 btype=u8|s8|u4|s4 ctype=s32"),
    _mma_sp("mma_sp_int_all", "all", "shape=m16n8k64|m16n8k128 alayout=row blayout=col satfinite?=satfinite "
                                     "dtype=s32 atype=u8|s8|u4|s4 btype=u8|s8|u4|s4 ctype=s32"),
], doc="mma.sync.aligned / mma.sp.sync.aligned: a warp-level matrix multiply-accumulate d = a*b + c on "
       "register fragments (mma.sp: A 2:4 structured sparse, with metadata e and selector f)")  # fmt: skip
