"""The PTX instruction table's warp-level MMA rows (tirx/ops/ptx_rows_mma.py: mma.sync.aligned).

For each family: TIRx's printed text loads in tirx and round-trips (print -> load ->
equal), the chain written in a kernel builds the same IR, the CUDA tirx generates
compiles through NVRTC for sm_90a (no GPU) with the PTX instruction TIRx emits, and bad
chains are located errors naming the allowed modifiers (helpers: tests/ptx_rows_util.py).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ptx_rows_util import family_tests, kernel

import tirx

#: (chain written in a kernel, TIRx's printed text of it, the PTX instruction TIRx's asm
#: emits), recorded from apache-tvm-tirx 0.1.0a4 running the chain in the same kernel
CASES: list[tuple[str, str, str]] = [
    ('T.ptx.mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], z[4], z[5], z[6], z[7])',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], z[4], z[5], z[6], z[7], "sync", "aligned", "m16n8k16", "row", "col", "f32", "f16", "f16", "f32", "")',
     'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32'),
    ('T.ptx.mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], z[4], z[5], z[6], z[7])',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], z[4], z[5], z[6], z[7], "sync", "aligned", "m16n8k16", "row", "col", "f32", "bf16", "bf16", "f32", "")',
     'mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32'),
    ('T.ptx.mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], z[4], z[5], z[6], z[7])',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], z[4], z[5], z[6], z[7], "sync", "aligned", "m16n8k8", "row", "col", "f32", "tf32", "tf32", "f32", "")',
     'mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32'),
    ('T.ptx.mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], z[4], z[5], z[6], z[7])',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], z[4], z[5], z[6], z[7], "sync", "aligned", "m16n8k8", "row", "col", "f32", "f16", "f16", "f32", "")',
     'mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32'),
    ('T.ptx.mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], z[4], z[5], z[6], z[7])',
     'T.ptx.mma(z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], z[4], z[5], z[6], z[7], "sync", "aligned", "m16n8k32", "row", "col", "f32", "e4m3", "e4m3", "f32", "")',
     'mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32'),
    ('T.ptx.mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16(y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[0], y[1])',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[0], y[1], "sync", "aligned", "m16n8k16", "row", "col", "f16", "f16", "f16", "f16", "")',
     'mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16'),
    ('T.ptx.mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[4], y[5], y[6], y[7])',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[4], y[5], y[6], y[7], "sync", "aligned", "m16n8k32", "row", "col", "", "s32", "s8", "s8", "s32", "", "", "")',
     'mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32'),
    ('T.ptx.mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.u8.s32(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[4], y[5], y[6], y[7])',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[4], y[5], y[6], y[7], "sync", "aligned", "m16n8k32", "row", "col", "satfinite", "s32", "u8", "u8", "s32", "", "", "")',
     'mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.u8.s32'),
    ('T.ptx.mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32(y[0], y[1], y[0], y[1], y[2], y[3])',
     'T.ptx.mma(y[0], y[1], y[0], y[1], y[2], y[3], "sync", "aligned", "m8n8k16", "row", "col", "", "s32", "s8", "s8", "s32", "", "", "")',
     'mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32'),
    ('T.ptx.mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[4], y[5], y[6], y[7])',
     'T.ptx.mma(y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[4], y[5], y[6], y[7], "sync", "aligned", "m16n8k256", "row", "col", "", "s32", "b1", "b1", "s32", "xor", "popc", "")',
     'mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc'),
    ('T.ptx.mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32(z[0], z[1], z[2], z[3], z[4], z[5], z[6], z[7], y[0], y[1], y[2], y[3], z[0], z[1], z[2], z[3], z[4], z[5], z[6], z[7])',
     'T.ptx.mma(z[0], z[1], z[2], z[3], z[4], z[5], z[6], z[7], y[0], y[1], y[2], y[3], z[0], z[1], z[2], z[3], z[4], z[5], z[6], z[7], "sync", "aligned", "m8n8k4", "row", "col", "f32", "f16", "f16", "f32", "")',
     'mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32'),
    ('T.ptx.mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64(d[0], d[1], d[2], d[3], d[4], d[5])',
     'T.ptx.mma(d[0], d[1], d[2], d[3], d[4], d[5], "sync", "aligned", "m8n8k4", "row", "col", "f64", "f64", "f64", "f64", "", "")',
     'mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64'),
]  # fmt: skip

NO_COMPILE: dict[str, str] = {}

_F16 = "z[0], z[1], z[2], z[3], y[0], y[1], y[2], y[3], y[4], y[5], z[4], z[5], z[6], z[7]"
_I8 = "y[0], y[1], y[2], y[3], y[0], y[1], y[2], y[3], y[4], y[5], y[4], y[5], y[6], y[7]"

BAD_CHAINS = [
    ("T.ptx.mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32(z[0], z[1])", ["takes 14 operand(s)", "d0, d1"]),
    ("T.ptx.mma.sync.aligned.m16n8k64.f64", ["'f64'", "allowed:", "s32"]),
    ("T.ptx.mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f64", ["'f64'", "f32"]),
    # combinations the slots allow but no syntax line of the ISA writes (ptxas refuses them):
    # refused where they are written, as TIRx refuses them (held-out round 22)
    (f"T.ptx.mma.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32({_F16})", ["m16n8k16 is spelled .row.col"]),
    (f"T.ptx.mma.sync.aligned.m16n8k16.row.col.f32.f16.bf16.f32({_F16})", ["no syntax line pairs .f16 with .bf16"]),
    (f"T.ptx.mma.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32({_F16})", ["m16n8k16 has no .tf32 multiplicand line"]),
    (f"T.ptx.mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32.xor.popc({_I8})", ["only the single-bit line"]),
    (f"T.ptx.mma.sync.aligned.m16n8k32.row.col.s32.s8.u4.s32({_I8})", ["no syntax line pairs .s8 with .u4"]),
    (f"T.ptx.mma.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32({_I8})", ["m16n8k64 has no 8-bit integer line"]),
    (f"T.ptx.mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor({_I8})", ["spelled .xor.popc or .and.popc"]),
    (f"T.ptx.mma.sync.aligned.m16n8k256.row.col.satfinite.s32.b1.b1.s32.xor.popc({_I8})", ["no .satfinite"]),
]  # fmt: skip

BAD_TEXT = [
    ('T.ptx.mma(z[0], z[1], "sync", "aligned", "m16n8k16", "row", "col", "f32", "f16", "f16", "f32", "")',
     ["takes 14 operand(s)"]),
]  # fmt: skip


def test_fragment_register_counts():
    # a thread holds 1/32 of each tile in 32-bit registers (f64: 64-bit ones); m8n8k4 f16
    # is the quad-pair form
    from tirx.ops.ptx_table import opcodes

    rows = {r.name: r for r in opcodes()["ptx.mma"].rows}

    def counts(row, mods):
        lay = rows[row].layout(mods)
        return [sum(1 for o in lay if o.name.rstrip("0123456789") == k) for k in "dabc"]

    f16 = ("sync", "aligned", "m16n8k16", "row", "col", "f32", "f16", "f16", "f32")
    assert counts("mma", f16) == [4, 4, 2, 4]
    assert counts("mma", ("sync", "aligned", "m16n8k8", "row", "col", "f32", "tf32", "tf32", "f32")) == [
        4,
        4,
        2,
        4,
    ]
    assert counts("mma", ("sync", "aligned", "m8n8k4", "row", "col", "f32", "f16", "f16", "f32")) == [
        8,
        2,
        2,
        8,
    ]
    i8 = ("sync", "aligned", "m16n8k32", "row", "col", "", "s32", "s8", "s8", "s32", "", "")
    assert counts("mma_int", i8) == [4, 4, 2, 4]
    assert counts(
        "mma_f64", ("sync", "aligned", "m16n8k16", "row", "col", "f64", "f64", "f64", "f64", "")
    ) == [4, 8, 4, 4]


globals().update(family_tests(CASES, BAD_CHAINS, BAD_TEXT, NO_COMPILE))


_FP = ("f16", "bf16", "tf32", "e4m3", "e5m2")


@given(
    shape=st.sampled_from(["m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16", "m16n8k32"]),
    layouts=st.sampled_from([("row", "col"), ("col", "row"), ("row", "row"), ("col", "col")]),
    a=st.sampled_from(_FP),
    b=st.sampled_from(_FP),
)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_every_fp32_combination_the_table_takes_compiles(shape, layouts, a, b):
    """The f32-accumulator row's combinations: what the table takes, ptxas takes (NVRTC, sm_90a);
    what it refuses is a located error at the call (never a ptxas failure later)."""
    from tirx.ops.ptx_rows_mma import _fp_lines, _frag

    mods = {"shape": shape, "alayout": layouts[0], "blayout": layouts[1], "atype": a, "btype": b,
            "dtype": "f32", "ctype": "f32"}  # fmt: skip
    n = {k: _frag(k)(mods) for k in "dabc"}
    regs = [f"z[{i}]" for i in range(n["d"])] + [f"y[{i}]" for i in range(n["a"])]
    regs += [f"y[{i}]" for i in range(n["b"])] + [f"z[{i}]" for i in range(n["c"])]
    chain = f"T.ptx.mma.sync.aligned.{shape}.{layouts[0]}.{layouts[1]}.f32.{a}.{b}.f32({', '.join(regs)})"
    why = _fp_lines(mods)
    if why is not None:
        with pytest.raises(tirx.DiagnosticError, match=why.split(" (")[0].replace(".", r"\.")):
            kernel(chain)
        return
    k = tirx.compile(kernel(chain, keep=True), target="cuda -arch=sm_90a", cache=False)
    assert k.cubin
