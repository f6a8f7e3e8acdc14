"""PTX instruction table rows for register arithmetic: integer and float arithmetic
(also dp4a/dp2a, mul24/mad24, sad), bit operations (shf, bmsk, szext, fns, ...),
comparisons and selects (setp, set, selp, slct, testp), special functions, mov and cvt.

Every form writes its destination through a buffer element, as TIRx's table does:
``T.ptx.add.u32(y[0], y[1], 1)`` prints ``T.ptx.add(y[0], y[1], T.uint32(1), "", "u32", "")``
(a Python number becomes a literal of the type the modifiers name). A ``.pred`` operand
is a bool expression (an input) or a 32-bit element set to 1/0 (an output); the printed
form marks predicate inputs in its trailing string (``"p3"``). Slot layouts follow TIRx's
(apache-tvm-tirx 0.1.0a4); the sm_107f mixed-precision forms are left out
(tests/test_ptx_rows_table.py lists them).
"""

from __future__ import annotations

from . import ptx_semantics  # noqa: F401  (registers the CPU semantics of these rows and of ld/st/warp rows)
from .ptx_table import Operand, Row, declare_opcode, row, slots

__all__: list[str] = []

_RND = "rnd?=rn|rz|rm|rp"
_HALF = "f16|f16x2|bf16|bf16x2"
_D3 = "d:dst@type a:reg@type b:reg@type"
_D2 = "d:dst@type a:reg@type"
_D4 = "d:dst@type a:reg@type b:reg@type c:reg@type"

# --------------------------------------------------------------------------- add sub mul mad fma


def _src(mods: dict) -> str:
    """The type of a mixed-precision source: ``add.rn.f32.bf16``'s ``a`` is ``.bf16``."""
    return mods["btype"] or mods["type"]


def _mixed(mods: dict) -> str | None:
    """The mixed-precision line is ``op{.rnd}{.sat}.f32.{f16,bf16}`` (PTX ISA 9.7.5)."""
    if mods["btype"] and (mods["type"] != "f32" or mods["ftz"]):
        return f"the mixed-precision .{mods['btype']} source exists only on the .f32 line, without .ftz"
    return None


_MIXED_A = Operand("a", "reg", ty=_src)
for _op in ("add", "sub"):
    _int = "u16|u32|u64|u16x2|s16|s32|s64|s16x2" if _op == "add" else "u16|u32|u64|s16|s32|s64"
    declare_opcode(_op, [
        row(f"{_op}_int", f"sat?=sat type={_int}", _D3),
        Row(_op, slots(f"{_RND} ftz?=ftz sat?=sat type=f32|f64|f32x2 btype?=f16|bf16"),
            (Operand("d", "dst", ty="type"), _MIXED_A, Operand("b", "reg", ty="type")), check_mods=_mixed),
        row(f"{_op}_half", f"rnd?=rn ftz?=ftz sat?=sat type={_HALF}", _D3),
    ], doc=f"{_op}: integer, float and half {'addition' if _op == 'add' else 'subtraction'}")  # fmt: skip

declare_opcode("mul", [
    row("mul_int", "mode=hi|lo type=u16|u32|u64|s16|s32|s64", _D3),
    row("mul_wide", "mode=wide type=u16|s16|u32|s32", "d:dst a:reg@type b:reg@type"),
    row("mul", f"{_RND} ftz?=ftz sat?=sat type=f32|f64|f32x2", _D3),
    row("mul_half", f"rnd?=rn ftz?=ftz sat?=sat type={_HALF}", _D3),
], doc="mul: integer (.hi/.lo/.wide), float and half multiplication")  # fmt: skip

declare_opcode("mad", [
    row("mad_int", "mode=hi|lo sat?=sat type=u16|u32|u64|s16|s32|s64", _D4),
    row("mad_wide", "mode=wide type=u16|s16|u32|s32", "d:dst a:reg@type b:reg@type c:reg"),
    row("mad_f", "rnd=rn|rz|rm|rp ftz?=ftz sat?=sat type=f32|f64", _D4),
], doc="mad: integer (.hi/.lo/.wide) and float multiply-add")  # fmt: skip

declare_opcode("fma", [
    Row("fma", slots("rnd=rn|rz|rm|rp ftz?=ftz sat?=sat type=f32|f64|f32x2 btype?=f16|bf16"),
        (Operand("d", "dst", ty="type"), _MIXED_A, Operand("b", "reg", ty=_src), Operand("c", "reg", ty="type")),
        check_mods=_mixed),
    row("fma_half", f"rnd=rn ftz?=ftz sat?=sat oob?=oob relu?=relu type={_HALF}", _D4),
], doc="fma: fused multiply-add (float, half)")  # fmt: skip

# --------------------------------------------------------------------------- min max abs neg
_MM = "f32|f64|f16|f16x2|bf16|bf16x2|u16|u32|u64|u16x2|s16|s64|s16x2|s32"
for _op in ("min", "max"):
    declare_opcode(_op, [
        row(_op, f"ftz?=ftz nan?=NaN xorsign?=xorsign abs?=abs relu?=relu type={_MM}", _D3),
        row(f"{_op}3", "ftz?=ftz nan?=NaN abs?=abs type=f32", _D4),
    ], doc=f"{_op}: the {_op}imum of two (or, .f32 on sm_100, three) values")  # fmt: skip

declare_opcode("abs", [
    row("abs", "type=s16|s32|s64", _D2),
    row("abs_f", "ftz?=ftz type=f32|f64", _D2),
    row("abs_half", f"ftz?=ftz type={_HALF}", _D2),
], doc="abs: absolute value")  # fmt: skip
declare_opcode("neg", [
    row("neg_int", "type=s16|s32|s64", _D2),
    row("neg", "ftz?=ftz type=f32|f64", _D2),
    row("neg_half", f"ftz?=ftz type={_HALF}", _D2),
], doc="neg: arithmetic negation")  # fmt: skip

# --------------------------------------------------------------------------- logic and bits
for _op in ("and", "or", "xor"):
    declare_opcode(_op, [row(_op, "type=pred|b16|b32|b64", _D3)], doc=f"{_op}: bitwise (or predicate) {_op}")
declare_opcode(
    "not", [row("not", "type=pred|b16|b32|b64", _D2)], doc="not: bitwise (or predicate) complement"
)
declare_opcode(
    "shl", [row("shl", "type=b16|b32|b64", "d:dst@type a:reg@type b:reg@u32")], doc="shl: shift left"
)
declare_opcode("shr", [row("shr", "type=b16|b32|b64|u16|u32|u64|s16|s32|s64", "d:dst@type a:reg@type b:reg@u32")],
               doc="shr: shift right (arithmetic for .s types)")  # fmt: skip
for _op, _what in (("popc", "population count"), ("clz", "count leading zeros")):
    declare_opcode(_op, [row(_op, "type=b32|b64", "d:dst@u32 a:reg@type")], doc=f"{_op}: {_what}")
declare_opcode("brev", [row("brev", "type=b32|b64", _D2)], doc="brev: bit reverse")
declare_opcode("bfe", [row("bfe", "type=u32|u64|s32|s64", "d:dst@type a:reg@type b:reg@u32 c:reg@u32")],
               doc="bfe: bit field extract (start b, length c)")  # fmt: skip
declare_opcode("bfi", [row("bfi", "type=b32|b64", "f:dst@type a:reg@type b:reg@type c:reg@u32 d:reg@u32")],
               doc="bfi: bit field insert (a into b at start c, length d)")  # fmt: skip
declare_opcode("bfind", [row("bfind", "shiftamt?=shiftamt type=u32|u64|s32|s64", "d:dst@u32 a:reg@type")],
               doc="bfind: the position of the most significant non-sign bit")  # fmt: skip
declare_opcode("prmt", [row("prmt", "type=b32 mode?=f4e|b4e|rc8|ecl|ecr|rc16", _D4)],
               doc="prmt: permute bytes of two registers (selector c)")  # fmt: skip
declare_opcode("lop3", [
    row("lop3", "type=b32", "d:dst@type a:reg@type b:reg@type c:reg@type immLut:imm"),
    row("lop3_bool", "boolop=or|and type=b32",
        "d:dst@type? p:dst@pred a:reg@type b:reg@type c:reg@type immLut:imm q:reg@pred",
        asm="{{ .reg .pred P0; .reg .pred Q0; setp.ne.b32 Q0, {q}, 0; "
            "{mn} {d}|P0, {a}, {b}, {c}, {immLut}, Q0; selp.u32 {p}, 1, 0, P0; }}"),
], doc="lop3: an arbitrary logic function of three registers (lookup table immLut)")  # fmt: skip

# --------------------------------------------------------------------------- compare and select
_CMP = "cmp=eq|ne|lt|le|gt|ge|lo|ls|hi|hs|equ|neu|ltu|leu|gtu|geu|num|nan"
_CMPH = "cmp=eq|ne|lt|le|gt|ge|equ|neu|ltu|leu|gtu|geu|num|nan"
_ST = "type=b16|b32|b64|u16|u32|u64|s16|s32|s64|f32|f64"
_PQ = "{{ .reg .pred P0; .reg .pred P1; {mn} P0|P1, {a}, {b}; selp.u32 {p}, 1, 0, P0; selp.u32 {q}, 1, 0, P1; }}"
_PQC = ("{{ .reg .pred P0; .reg .pred P1; .reg .pred Q0; setp.ne.b32 Q0, {c}, 0; {mn} P0|P1, {a}, {b}, Q0; "
        "selp.u32 {p}, 1, 0, P0; selp.u32 {q}, 1, 0, P1; }}")  # fmt: skip
_P = "p:dst@pred a:reg@type b:reg@type"
_PQO = "p:dst@pred q:dst@pred a:reg@type b:reg@type"
declare_opcode("setp", [
    row("setp", f"{_CMP} ftz?=ftz {_ST}", _P),
    row("setp_pq", f"{_CMP} ftz?=ftz {_ST}", _PQO, asm=_PQ),
    row("setp_bool", f"{_CMP} boolop=and|or|xor ftz?=ftz {_ST}", _P + " c:reg@pred"),
    row("setp_bool_pq", f"{_CMP} boolop=and|or|xor ftz?=ftz {_ST}", _PQO + " c:reg@pred", asm=_PQC),
    row("setp_half", f"{_CMPH} ftz?=ftz type=f16|bf16", _P),
    row("setp_half_pq", f"{_CMPH} ftz?=ftz type=f16x2|bf16x2", _PQO, asm=_PQ),
    row("setp_half_bool", f"{_CMPH} boolop=and|or|xor ftz?=ftz type=f16|bf16", _P + " c:reg@pred"),
    row("setp_half_bool_pq", f"{_CMPH} boolop=and|or|xor ftz?=ftz type=f16x2|bf16x2", _PQO + " c:reg@pred",
        asm=_PQC),
], doc="setp: compare two values into a predicate (p, or p|q for the complement / half pairs)")  # fmt: skip
declare_opcode("selp", [
    row("selp", "type=b16|b32|b64|u16|u32|u64|s16|s32|s64|f32|f64", "d:dst@type a:reg@type b:reg@type c:reg@pred"),
], doc="selp: select a or b by the predicate c")  # fmt: skip

# --------------------------------------------------------------------------- special functions
_V = "d:dst@type value:reg@type"
declare_opcode("rcp", [row("rcp", "rnd=approx|rn|rz|rm|rp ftz?=ftz type=f32|f64", _V)], doc="rcp: reciprocal")
declare_opcode(
    "sqrt", [row("sqrt", "rnd=approx|rn|rz|rm|rp ftz?=ftz type=f32|f64", _V)], doc="sqrt: square root"
)
declare_opcode("rsqrt", [row("rsqrt", "approx=approx ftz?=ftz type=f32|f64", _V)],
               doc="rsqrt: reciprocal square root (approximate)")  # fmt: skip
declare_opcode("ex2", [
    row("ex2", "approx=approx ftz?=ftz type=f32", _V),
    row("ex2_half", f"approx=approx ftz?=ftz type={_HALF}", _V),
], doc="ex2: base-2 exponential (approximate)")  # fmt: skip
for _op, _what in (("lg2", "base-2 logarithm"), ("sin", "sine"), ("cos", "cosine")):
    declare_opcode(
        _op, [row(_op, "approx=approx ftz?=ftz type=f32", _V)], doc=f"{_op}: {_what} (approximate)"
    )
declare_opcode("tanh", [
    row("tanh", "approx=approx type=f32", _V),
    row("tanh_half", f"approx=approx type={_HALF}", _V),
], doc="tanh: hyperbolic tangent (approximate)")  # fmt: skip
declare_opcode(
    "copysign", [row("copysign", "type=f32|f64", _D3)], doc="copysign: a's magnitude with b's sign"
)
declare_opcode("div", [
    row("div", "type=u16|u32|u64|s16|s32|s64", _D3),
    row("div_f", "rnd=approx|full|rn|rz|rm|rp ftz?=ftz type=f32|f64", _D3),
], doc="div: integer and float division")  # fmt: skip
declare_opcode("rem", [row("rem", "type=u16|u32|u64|s16|s32|s64", _D3)], doc="rem: integer remainder")


# --------------------------------------------------------------------------- mov / cvt
def _lanes_fill(whole: str, part: str):
    """A check that the lanes ``part0, part1, ...`` together are as wide as ``whole``."""

    def check(ops: dict) -> str | None:
        lanes = [e for k, e in ops.items() if k.startswith(part) and k[len(part) :].isdigit()]
        bits = sum(e.ty.bits for e in lanes)
        if bits != ops[whole].ty.bits:
            return f"mov: the {len(lanes)} lanes of {part!r} make {bits} bits, {whole!r} has {ops[whole].ty.bits}"
        return None

    return check


declare_opcode("mov", [
    row("mov", "type=pred|b16|b32|b64|u16|u32|u64|s16|s32|s64|f32|f64", _D2, volatile=False),
    *(row(f"mov_{way}_{lane}x{n}", f"type={whole}",
          f"d:dst@type a:reg@{lane}*{n}" if way == "pack" else f"d:dst@{lane}*{n} a:reg@type", volatile=False,
          check=_lanes_fill("d", "a") if way == "pack" else _lanes_fill("a", "d"))
      for whole, lane, n in (("b32", "b16", 2), ("b64", "b32", 2), ("b64", "b16", 4)) for way in ("pack", "unpack")),
], doc="mov: copy a register (.pred: a predicate), or pack/unpack a vector {a, b, ...} of narrower registers")  # fmt: skip

_CVT_T = "u8|u16|u32|u64|s8|s16|s32|s64|bf16|f16|f32|f64"
declare_opcode("cvt", [
    row("cvt", f"rnd?=rni|rzi|rmi|rpi|rn|rz|rm|rp relu?=relu satfinite?=satfinite ftz?=ftz sat?=sat "
               f"dtype={_CVT_T} atype={_CVT_T}", "d:dst@dtype a:reg@atype"),
    row("cvt_f16x2_f32", "rnd=rn|rz relu?=relu satfinite?=satfinite dtype=f16x2 atype=f32",
        "d:dst@dtype a:reg@atype b:reg@atype"),
    row("cvt_bf16x2_f32", "rnd=rn|rz relu?=relu satfinite?=satfinite dtype=bf16x2 atype=f32",
        "d:dst@dtype a:reg@atype b:reg@atype"),
    row("cvt_f8x2_f32", "rnd=rn satfinite=satfinite relu?=relu dtype=e4m3x2|e5m2x2 atype=f32",
        "d:dst@dtype a:reg@atype b:reg@atype"),
    row("cvt_f16x2_f8x2", "rnd=rn relu?=relu dtype=f16x2 atype=e4m3x2|e5m2x2", "d:dst@dtype a:reg@atype"),
    # sm_100a: the microscaling formats (ue8m0 scales; fp8 from/to half pairs; fp6) and the
    # stochastic rounding (.rs, random bits in rbits). e2m1x2 (.b8 registers) is left out.
    row("cvt_ue8m0x2_f32", "rnd=rz|rp satfinite?=satfinite dtype=ue8m0x2 atype=f32",
        "d:dst@dtype a:reg@atype b:reg@atype"),
    row("cvt_ue8m0x2_bf16x2", "rnd=rz|rp satfinite?=satfinite dtype=ue8m0x2 atype=bf16x2", "d:dst@dtype a:reg@atype"),
    row("cvt_bf16x2_ue8m0x2", "rnd=rn dtype=bf16x2 atype=ue8m0x2", "d:dst@dtype a:reg@atype"),
    row("cvt_f8x2_fp16x2", "rnd=rn satfinite=satfinite relu?=relu dtype=e4m3x2|e5m2x2 atype=f16x2|bf16x2",
        "d:dst@dtype a:reg@atype"),
    row("cvt_bf16x2_f8x2", "rnd=rn relu?=relu satfinite?=satfinite scaled?=scaled::n2::ue8m0 dtype=bf16x2 "
                           "atype=e4m3x2|e5m2x2", "d:dst@dtype a:reg@atype scale_factor:reg@ue8m0x2?scaled"),
    row("cvt_f6x2_f32", "rnd=rn satfinite=satfinite relu?=relu dtype=e2m3x2|e3m2x2 atype=f32",
        "d:dst@dtype a:reg@atype b:reg@atype"),
    row("cvt_f6x2_fp16x2", "rnd=rn satfinite=satfinite relu?=relu dtype=e2m3x2|e3m2x2 atype=f16x2|bf16x2",
        "d:dst@dtype a:reg@atype"),
    row("cvt_f16x2_f6x2", "rnd=rn relu?=relu dtype=f16x2 atype=e2m3x2|e3m2x2", "d:dst@dtype a:reg@atype"),
    row("cvt_bf16x2_f6x2", "rnd=rn relu?=relu satfinite?=satfinite scaled?=scaled::n2::ue8m0 dtype=bf16x2 "
                           "atype=e2m3x2|e3m2x2", "d:dst@dtype a:reg@atype scale_factor:reg@ue8m0x2?scaled"),
    row("cvt_tf32_f32", "rnd=rna|rn|rz satfinite?=satfinite relu?=relu dtype=tf32 atype=f32", "d:dst@dtype a:reg@atype",
        check_mods=lambda m: "the .rna tf32 line has no .relu" if m["rnd"] == "rna" and m["relu"] else None),
    *(row(f"cvt_rs_{n}_f32", f"rnd=rs relu?=relu satfinite=satfinite dtype={d} atype=f32",
          "d:dst@dtype abef:reg@f32*4 rbits:reg@b32") for n, d in (("f8x4", "e4m3x4|e5m2x4"), ("f6x4", "e2m3x4|e3m2x4"),
                                                                    ("f4x4", "e2m1x4"))),
    *(row(f"cvt_rs_{d}_f32", f"rnd=rs relu?=relu satfinite?=satfinite dtype={d} atype=f32",
          "d:dst@dtype a:reg@atype b:reg@atype rbits:reg@b32") for d in ("f16x2", "bf16x2")),
], doc="cvt: convert between integer and float types (rounding, saturation), and pack pairs")  # fmt: skip
declare_opcode("cvt_pack", [
    row("cvt_pack", "sat=sat dtype=u16|s16 atype=s32", "d:dst@u32 a:reg@atype b:reg@atype", mnemonic="cvt.pack"),
    row("cvt_pack_c", "sat=sat dtype=u2|s2|u4|s4|u8|s8 atype=s32 ctype=b32",
        "d:dst@u32 a:reg@atype b:reg@atype c:reg@ctype", mnemonic="cvt.pack"),
], doc="cvt.pack: saturate two s32 values to narrow integers and pack them (into c's low bits)")  # fmt: skip

# --------------------------------------------------------------------------- more integer forms
declare_opcode("shf", [row("shf", "dir=l|r mode=clamp|wrap type=b32", _D4)],
               doc="shf: funnel shift (a:b shifted by c)")  # fmt: skip
declare_opcode("dp4a", [row("dp4a", "atype=u32|s32 btype=u32|s32", "d:dst@u32 a:reg@atype b:reg@btype c:reg@u32")],
               doc="dp4a: four-way byte dot product accumulated into c")  # fmt: skip
declare_opcode("dp2a", [row("dp2a", "mode=lo|hi atype=u32|s32 btype=u32|s32",
                            "d:dst@u32 a:reg@atype b:reg@btype c:reg@u32")],
               doc="dp2a: two-way 16x8-bit dot product (lo/hi bytes of b) accumulated into c")  # fmt: skip
declare_opcode("mul24", [row("mul24", "mode=hi|lo type=u32|s32", _D3)], doc="mul24: 24-bit integer multiply")
declare_opcode("mad24", [row("mad24", "mode=hi|lo sat?=sat type=u32|s32", _D4)],
               doc="mad24: 24-bit integer multiply-add")  # fmt: skip
declare_opcode("sad", [row("sad", "type=u16|u32|u64|s16|s32|s64", _D4)], doc="sad: c + |a - b|")
declare_opcode("testp", [row("testp", "op=finite|infinite|number|notanumber|normal|subnormal type=f32|f64",
                             "p:dst@pred a:reg@type")],
               doc="testp: test a float's class into a predicate")  # fmt: skip
# TIRx's set and set_half forms overlap and emit alike: one row each (with and without .boolop)
_SETD = "dtype=u32|s32|f32|f16|bf16|u16|s16|f16x2|bf16x2"
_SETA = "atype=b16|b32|b64|u16|u32|u64|s16|s32|s64|f32|f64|f16|bf16|f16x2|bf16x2"
_SD = "d:dst@dtype a:reg@atype b:reg@atype"
declare_opcode("set", [
    row("set", f"{_CMP} ftz?=ftz {_SETD} {_SETA}", _SD),
    row("set_bool", f"{_CMP} boolop=and|or|xor ftz?=ftz {_SETD} {_SETA}", _SD + " c:reg@pred"),
], doc="set: compare two values into an all-ones/1.0 (true) or zero (false) result")  # fmt: skip
declare_opcode("slct", [
    row("slct", "ftz?=ftz type=b16|b32|b64|u16|u32|u64|s16|s32|s64|f32|f64 ctype=s32|f32",
        "d:dst@type a:reg@type b:reg@type c:reg@ctype"),
], doc="slct: a when c >= 0, else b")  # fmt: skip
declare_opcode("bmsk", [row("bmsk", "mode=clamp|wrap type=b32", "d:dst@type a:reg@u32 b:reg@u32")],
               doc="bmsk: a mask of b bits from position a")  # fmt: skip
declare_opcode("szext", [row("szext", "mode=clamp|wrap type=u32|s32", "d:dst@type a:reg@type b:reg@u32")],
               doc="szext: sign- or zero-extend the low b bits of a")  # fmt: skip
declare_opcode("fns", [row("fns", "type=b32", "d:dst@type mask:reg@b32 base:reg@u32 offset:reg@s32",
                           volatile=False)],
               doc="fns: the n-th set bit of a mask from a base position")  # fmt: skip
declare_opcode(
    "cnot", [row("cnot", "type=b16|b32|b64", _D2)], doc="cnot: C logical not (1 when a is 0, else 0)"
)
