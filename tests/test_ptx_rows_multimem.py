"""The PTX instruction table's multimem rows (tirx/ops/ptx_rows_multimem.py: multimem.ld_reduce, multimem.red, multimem.st, multimem.cp, multimem.red.async, multimem.st.async).

For each family: TIRx's printed text loads in tirx and round-trips (print -> load ->
equal), the chain written in a kernel builds the same IR, the CUDA tirx generates
compiles through NVRTC for sm_100a (no GPU) with the PTX instruction TIRx emits, bad
chains are located errors naming the allowed modifiers (helpers: tests/ptx_rows_util.py),
and every TIRx form of these families has a row or is listed below with the reason.
"""

from __future__ import annotations

from ptx_rows_util import check_emits, family_tests, form_coverage

#: (chain written in a kernel, TIRx's printed text of it, the PTX instruction TIRx's asm
#: emits for sm_100a), recorded from apache-tvm-tirx 0.1.0a4 running the chain in the same
#: kernel
CASES: list[tuple[str, str, str]] = [
    ('T.ptx.multimem_ld_reduce.global_.add.u32(y[0], B.data)',
     'T.ptx.multimem_ld_reduce(y[0], B.data, "", "", "global", "add", "u32", "")',
     'multimem.ld_reduce.global.add.u32'),
    ('T.ptx.multimem_ld_reduce.relaxed.gpu.global_.min.s32(w[0], B.data)',
     'T.ptx.multimem_ld_reduce(w[0], B.data, "relaxed", "gpu", "global", "min", "s32", "")',
     'multimem.ld_reduce.relaxed.gpu.global.min.s32'),
    ('T.ptx.multimem_ld_reduce.acquire.sys.global_.xor.b64(x[0], B.data)',
     'T.ptx.multimem_ld_reduce(x[0], B.data, "acquire", "sys", "global", "xor", "b64", "")',
     'multimem.ld_reduce.acquire.sys.global.xor.b64'),
    ('T.ptx.multimem_ld_reduce.global_.add.f32(z[0], A.data)',
     'T.ptx.multimem_ld_reduce(z[0], A.data, "", "", "global", "add", "", "f32", "")',
     'multimem.ld_reduce.global.add.f32'),
    ('T.ptx.multimem_ld_reduce.global_.add.acc__f32.bf16x2(y[0], A.data)',
     'T.ptx.multimem_ld_reduce(y[0], A.data, "", "", "global", "add", "acc::f32", "bf16x2", "")',
     'multimem.ld_reduce.global.add.acc::f32.bf16x2'),
    ('T.ptx.multimem_ld_reduce.global_.add.acc__f32.v4.f16x2(y[0], y[1], y[2], y[3], A.data)',
     'T.ptx.multimem_ld_reduce(y[0], y[1], y[2], y[3], A.data, "", "", "global", "add", "acc::f32", "v4", "f16x2", "")',
     'multimem.ld_reduce.global.add.acc::f32.v4.f16x2'),
    ('T.ptx.multimem_ld_reduce.weak.global_.add.v2.f32(z[0], z[1], A.data)',
     'T.ptx.multimem_ld_reduce(z[0], z[1], A.data, "weak", "", "global", "add", "", "v2", "f32", "")',
     'multimem.ld_reduce.weak.global.add.v2.f32'),
    ('T.ptx.multimem_red.relaxed.gpu.global_.add.u32(B.data, y[0])',
     'T.ptx.multimem_red(B.data, y[0], "relaxed", "gpu", "global", "add", "u32", "")',
     'multimem.red.relaxed.gpu.global.add.u32'),
    ('T.ptx.multimem_red.release.sys.global_.min.u64(B.data, x[0])',
     'T.ptx.multimem_red(B.data, x[0], "release", "sys", "global", "min", "u64", "")',
     'multimem.red.release.sys.global.min.u64'),
    ('T.ptx.multimem_red.global_.add.f32(A.data, z[0])',
     'T.ptx.multimem_red(A.data, z[0], "", "", "global", "add", "f32", "")',
     'multimem.red.global.add.f32'),
    ('T.ptx.multimem_red.global_.add.v2.f32(A.data, z[0], z[1])',
     'T.ptx.multimem_red(A.data, z[0], z[1], "", "", "global", "add", "v2", "f32", "")',
     'multimem.red.global.add.v2.f32'),
    ('T.ptx.multimem_red.global_.add.v4.bf16x2(A.data, y[0], y[1], y[2], y[3])',
     'T.ptx.multimem_red(A.data, y[0], y[1], y[2], y[3], "", "", "global", "add", "v4", "bf16x2", "")',
     'multimem.red.global.add.v4.bf16x2'),
    ('T.ptx.multimem_st.relaxed.gpu.global_.u32(B.data, y[0])',
     'T.ptx.multimem_st(B.data, y[0], "relaxed", "gpu", "global", "u32", "")',
     'multimem.st.relaxed.gpu.global.u32'),
    ('T.ptx.multimem_st.global_.b64(B.data, x[0])',
     'T.ptx.multimem_st(B.data, x[0], "", "", "global", "b64", "")',
     'multimem.st.global.b64'),
    ('T.ptx.multimem_st.global_.f64(A.data, d[0])',
     'T.ptx.multimem_st(A.data, d[0], "", "", "global", "f64", "")',
     'multimem.st.global.f64'),
    ('T.ptx.multimem_st.release.cta.global_.v4.f32(A.data, z[0], z[1], z[2], z[3])',
     'T.ptx.multimem_st(A.data, z[0], z[1], z[2], z[3], "release", "cta", "global", "v4", "f32", "")',
     'multimem.st.release.cta.global.v4.f32'),
    ('T.ptx.multimem_red_async.release.gpu.global_.add.u32(B.data, y[0])',
     'T.ptx.multimem_red_async(B.data, y[0], "release", "gpu", "global", "add", "u32", "")',
     'multimem.red.async.release.gpu.global.add.u32'),
    ('T.ptx.multimem_red_async.release.sys.add.u64(B.data, x[0])',
     'T.ptx.multimem_red_async(B.data, x[0], "release", "sys", "", "add", "u64", "")',
     'multimem.red.async.release.sys.add.u64'),
    ('T.ptx.multimem_st_async.release.sys.global_.u64(B.data, x[0])',
     'T.ptx.multimem_st_async(B.data, x[0], "release", "sys", "global", "u64", "")',
     'multimem.st.async.release.sys.global.u64'),
    ('T.ptx.multimem_st_async.release.gpu.global_.f32(A.data, z[0])',
     'T.ptx.multimem_st_async(A.data, z[0], "release", "gpu", "global", "f32", "")',
     'multimem.st.async.release.gpu.global.f32'),
    ('T.ptx.multimem_cp.reduce.async_.bulk.global_.shared__cta.bulk_group.add.noftz.f32(A.data, s.data, 64)',
     'T.ptx.multimem_cp(A.data, T.cuda.cvta_generic_to_shared(s.data), T.uint32(64), "reduce", "async", "bulk", "", "", "global", "shared::cta", "bulk_group", "add", "noftz", "f32", "")',
     'multimem.cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f32'),
    ('T.ptx.multimem_cp.async_.bulk.global_.shared__cta.bulk_group(A.data, s.data, 64)',
     'T.ptx.multimem_cp(A.data, T.cuda.cvta_generic_to_shared(s.data), T.uint32(64), "async", "bulk", "", "", "global", "shared::cta", "bulk_group", "", "", "")',
     'multimem.cp.async.bulk.global.shared::cta.bulk_group'),
    ('T.ptx.multimem_cp.async_.bulk.relaxed.gpu.global_.shared__cta.bulk_group.cp_mask.b128(A.data, s.data, 64, 255)',
     'T.ptx.multimem_cp(A.data, T.cuda.cvta_generic_to_shared(s.data), T.uint32(64), T.uint16(255), "async", "bulk", "relaxed", "gpu", "global", "shared::cta", "bulk_group", "cp_mask", "b128", "")',
     'multimem.cp.async.bulk.relaxed.gpu.global.shared::cta.bulk_group.cp_mask.b128'),
    ('T.ptx.multimem_cp.reduce.async_.bulk.global_.shared__cta.bulk_group.add.u32(A.data, s.data, 64)',
     'T.ptx.multimem_cp(A.data, T.cuda.cvta_generic_to_shared(s.data), T.uint32(64), "reduce", "async", "bulk", "", "", "global", "shared::cta", "bulk_group", "add", "", "u32", "")',
     'multimem.cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32'),
    ('T.ptx.multimem_cp.reduce.async_.bulk.relaxed.gpu.global_.shared__cta.bulk_group.max.bf16(A.data, s.data, 64)',
     'T.ptx.multimem_cp(A.data, T.cuda.cvta_generic_to_shared(s.data), T.uint32(64), "reduce", "async", "bulk", "relaxed", "gpu", "global", "shared::cta", "bulk_group", "max", "", "bf16", "")',
     'multimem.cp.reduce.async.bulk.relaxed.gpu.global.shared::cta.bulk_group.max.bf16'),
    # T.ptx.addr(base, byte_offset): TIRx's [base+offset] operand (its asm reads [%2+16])
    ('T.ptx.multimem_ld_reduce.global_.add.v2.f32(z[0], z[1], T.ptx.addr(A.data, 16))',
     'T.ptx.multimem_ld_reduce(z[0], z[1], T.ptx.addr(A.data, 16), "", "", "global", "add", "", "v2", "f32", "")',
     'multimem.ld_reduce.global.add.v2.f32'),
]  # fmt: skip

#: forms the ptxas of NVRTC 13.0 does not know yet (multimem.red.async / st.async: "Illegal
#: modifier .async"; multimem.cp: "not a name of any known instruction"): their emitted
#: text is checked against TIRx's instead (test_forms_ptxas_lacks_emit_tirx_instruction)
NO_COMPILE = {
    c[0] for c in CASES if c[2].startswith(("multimem.red.async", "multimem.st.async", "multimem.cp"))
}

BAD_CHAINS = [
    ("T.ptx.multimem_ld_reduce.global_.add.v2.f32(z[0], A.data)", ["takes 3 operand(s)", "d0, d1"]),
    ("T.ptx.multimem_red.global_.cas.u32(B.data, y[0])", ["'cas'", "allowed:"]),
    ("T.ptx.multimem_st.global_.u32(B.data, x[0])", ["32-bit scalar value for .u32"]),
    ("T.ptx.multimem_red_async.relaxed", ["'relaxed'", "release"]),
]  # fmt: skip

BAD_TEXT = [
    ('T.ptx.multimem_st(B.data, y[0], "relaxed", "gpu", "shared", "u32", "")', ["slot .space", "global"]),
]  # fmt: skip

#: TIRx forms of these families tirx leaves out, with the reason (none: all have rows)
UNSUPPORTED: dict[tuple[str, str], str] = {}
FAMILIES = ("multimem_cp", "multimem_ld_reduce", "multimem_red", "multimem_red_async", "multimem_st",
            "multimem_st_async")  # fmt: skip

globals().update(family_tests(CASES, BAD_CHAINS, BAD_TEXT, NO_COMPILE, arch="sm_100a"))


def test_forms_ptxas_lacks_emit_tirx_instruction():
    check_emits([c for c in CASES if c[0] in NO_COMPILE])


def test_every_tirx_form_has_a_row_or_a_reason():
    missing, stale = form_coverage(FAMILIES, UNSUPPORTED)
    assert not missing, missing
    assert not stale, stale
