"""The PTX instruction table's memory rows (tirx/ops/ptx_rows_memory.py: ld, ldu, st, atom,
red, st.async, red.async, getctarank, ldmatrix, stmatrix, isspacep, prefetchu, createpolicy, discard, applypriority).

For each family: TIRx's printed text loads in tirx and round-trips (print -> load ->
equal), the chain written in a kernel builds the same IR, the CUDA tirx generates
compiles through NVRTC for sm_90a (no GPU) with the PTX instruction TIRx emits, and bad
chains are located errors naming the allowed modifiers (helpers: tests/ptx_rows_util.py).
"""

from __future__ import annotations

import pytest
from ptx_rows_util import check_compiles_all, check_error, check_text_and_chain, check_text_error, ids

#: (chain written in a kernel, TIRx's printed text of it, the PTX instruction TIRx's asm
#: emits), recorded from apache-tvm-tirx 0.1.0a4 running the chain in the same kernel
CASES: list[tuple[str, str, str]] = [
    ('T.ptx.ld.global_.f32(z[0], A.data)',
     'T.ptx.ld(z[0], A.data, "", "", "", "global", "", "", "", "", "", "f32", "")',
     'ld.global.f32'),
    ('T.ptx.ld.u32(y[0], B.data)',
     'T.ptx.ld(y[0], B.data, "", "", "", "", "", "", "", "", "", "u32", "")',
     'ld.u32'),
    ('T.ptx.ld.shared.v2.f32(z[0], z[1], T.address_of(s[0]))',
     'T.ptx.ld(z[0], z[1], T.cuda.cvta_generic_to_shared(T.address_of(s[0])), "", "", "shared", "", "", "", "", "", "v2", "f32", "")',
     'ld.shared.v2.f32'),
    ('T.ptx.ld.global_.v4.u32(y[0], y[1], y[2], y[3], B.data)',
     'T.ptx.ld(y[0], y[1], y[2], y[3], B.data, "", "", "global", "", "", "", "", "", "v4", "u32", "")',
     'ld.global.v4.u32'),
    ('T.ptx.ld.global_.L2__cache_hint.f32(z[0], A.data, x[0])',
     'T.ptx.ld(z[0], A.data, x[0], "", "", "", "global", "", "", "", "L2::cache_hint", "", "f32", "")',
     'ld.global.L2::cache_hint.f32'),
    ('T.ptx.ld.acquire.gpu.global_.u64(x[0], B.data)',
     'T.ptx.ld(x[0], B.data, "", "acquire", "gpu", "global", "", "", "", "", "", "u64", "")',
     'ld.acquire.gpu.global.u64'),
    ('T.ptx.ld.global_.nc.L1__no_allocate.u32(y[0], B.data)',
     'T.ptx.ld(y[0], B.data, "", "", "", "global", "", "nc", "L1::no_allocate", "", "", "u32", "")',
     'ld.global.nc.L1::no_allocate.u32'),
    ('T.ptx.ld.volatile.shared.f32(z[0], T.address_of(s[0]))',
     'T.ptx.ld(z[0], T.cuda.cvta_generic_to_shared(T.address_of(s[0])), "", "volatile", "", "shared", "", "", "", "", "", "f32", "")',
     'ld.volatile.shared.f32'),
    ('T.ptx.ld.global_.cg.L2__128B.f32(z[0], A.data)',
     'T.ptx.ld(z[0], A.data, "", "", "", "global", "cg", "", "", "", "L2::128B", "f32", "")',
     'ld.global.cg.L2::128B.f32'),
    ('T.ptx.ld.global_.u32.proxy__readonly(y[0], B.data)',
     'T.ptx.ld(y[0], B.data, "global", "u32", "proxy::readonly", "")',
     'ld.global.u32.proxy::readonly'),
    ('T.ptx.st.global_.f32(A.data, z[1])',
     'T.ptx.st(A.data, z[1], "", "", "", "global", "", "", "", "f32", "")',
     'st.global.f32'),
    ('T.ptx.st.global_.v4.f32(A.data, z[1], z[2], z[3], z[4])',
     'T.ptx.st(A.data, z[1], z[2], z[3], z[4], "", "", "global", "", "", "", "v4", "f32", "")',
     'st.global.v4.f32'),
    ('T.ptx.st.release.gpu.global_.u32(B.data, 7)',
     'T.ptx.st(B.data, T.uint32(7), "", "release", "gpu", "global", "", "", "", "u32", "")',
     'st.release.gpu.global.u32'),
    ('T.ptx.st.shared.wt.u32(T.address_of(s[0]), y[0])',
     'T.ptx.st(T.cuda.cvta_generic_to_shared(T.address_of(s[0])), y[0], "", "", "", "shared", "wt", "", "", "u32", "")',
     'st.shared.wt.u32'),
    ('T.ptx.st.shared__cta.v2.b32(T.address_of(s[0]), y[0], y[1])',
     'T.ptx.st(T.cuda.cvta_generic_to_shared(T.address_of(s[0])), y[0], y[1], "", "", "shared::cta", "", "", "", "v2", "b32", "")',
     'st.shared::cta.v2.b32'),
    ('T.ptx.atom.global_.add.u32(y[0], B.data, 1)',
     'T.ptx.atom(y[0], B.data, T.uint32(1), "", "", "global", "add", "", "u32", "")',
     'atom.global.add.u32'),
    ('T.ptx.atom.global_.add.f32(z[0], A.data, z[1])',
     'T.ptx.atom(z[0], A.data, z[1], "", "", "global", "add", "", "f32", "")',
     'atom.global.add.f32'),
    ('T.ptx.atom.shared.cas.b32(y[0], T.address_of(s[0]), y[1], y[2])',
     'T.ptx.atom(y[0], T.cuda.cvta_generic_to_shared(T.address_of(s[0])), y[1], y[2], "", "", "shared", "cas", "b32", "")',
     'atom.shared.cas.b32'),
    ('T.ptx.atom.acq_rel.gpu.global_.exch.b64(x[0], B.data, x[1])',
     'T.ptx.atom(x[0], B.data, x[1], "acq_rel", "gpu", "global", "exch", "", "b64", "")',
     'atom.acq_rel.gpu.global.exch.b64'),
    ('T.ptx.atom.global_.max.s32(w[0], B.data, w[1])',
     'T.ptx.atom(w[0], B.data, w[1], "", "", "global", "max", "", "s32", "")',
     'atom.global.max.s32'),
    ('T.ptx.atom.global_.add.noftz.f16x2(y[0], A.data, y[1])',
     'T.ptx.atom(y[0], A.data, y[1], "", "", "global", "add", "noftz", "", "f16x2", "")',
     'atom.global.add.noftz.f16x2'),
    ('T.ptx.atom.global_.add.v2.f32(z[0], z[1], A.data, z[2], z[3])',
     'T.ptx.atom(z[0], z[1], A.data, z[2], z[3], "", "", "global", "add", "", "v2", "f32", "")',
     'atom.global.add.v2.f32'),
    ('T.ptx.atom.global_.add.noftz.f32(z[0], A.data, z[1])',
     'T.ptx.atom(z[0], A.data, z[1], "", "", "global", "add", "noftz", "", "f32", "")',
     'atom.global.add.noftz.f32'),
    ('T.ptx.red.global_.add.f32(A.data, z[1])',
     'T.ptx.red(A.data, z[1], "", "", "global", "add", "", "f32", "")',
     'red.global.add.f32'),
    ('T.ptx.red.relaxed.gpu.global_.add.u32(B.data, 1)',
     'T.ptx.red(B.data, T.uint32(1), "relaxed", "gpu", "global", "add", "", "u32", "")',
     'red.relaxed.gpu.global.add.u32'),
    ('T.ptx.red.shared.or_.b32(T.address_of(s[0]), y[0])',
     'T.ptx.red(T.cuda.cvta_generic_to_shared(T.address_of(s[0])), y[0], "", "", "shared", "or", "", "b32", "")',
     'red.shared.or.b32'),
    ('T.ptx.red.global_.add.noftz.bf16x2(A.data, y[0])',
     'T.ptx.red(A.data, y[0], "", "", "global", "add", "noftz", "", "bf16x2", "")',
     'red.global.add.noftz.bf16x2'),
    ('T.ptx.red.global_.add.v4.f32(A.data, z[0], z[1], z[2], z[3])',
     'T.ptx.red(A.data, z[0], z[1], z[2], z[3], "", "", "global", "add", "", "v4", "f32", "")',
     'red.global.add.v4.f32'),
    ('T.ptx.st_async.shared__cluster.mbarrier__complete_tx__bytes.b32(y[0], y[1], y[2])',
     'T.ptx.st_async(y[0], y[1], y[2], "", "shared::cluster", "mbarrier::complete_tx::bytes", "b32", "")',
     'st.async.shared::cluster.mbarrier::complete_tx::bytes.b32'),
    ('T.ptx.st_async.shared__cluster.mbarrier__complete_tx__bytes.v2.f32(y[0], z[0], z[1], y[2])',
     'T.ptx.st_async(y[0], z[0], z[1], y[2], "", "shared::cluster", "mbarrier::complete_tx::bytes", "v2", "f32", "")',
     'st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32'),
    ('T.ptx.getctarank.shared__cluster.u32(y[0], y[1])',
     'T.ptx.getctarank(y[0], y[1], "shared::cluster", "u32", "")',
     'getctarank.shared::cluster.u32'),
    ('T.ptx.getctarank.u64(y[0], x[1])',
     'T.ptx.getctarank(y[0], x[1], "u64", "")',
     'getctarank.u64'),
    ('T.ptx.ldmatrix.sync.aligned.m8n8.x4.shared.b16(y[0], y[1], y[2], y[3], T.address_of(s[0]))',
     'T.ptx.ldmatrix(y[0], y[1], y[2], y[3], T.cuda.cvta_generic_to_shared(T.address_of(s[0])), "sync", "aligned", "m8n8", "x4", "", "shared", "b16", "")',
     'ldmatrix.sync.aligned.m8n8.x4.shared.b16'),
    ('T.ptx.ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16(y[0], T.address_of(s[0]))',
     'T.ptx.ldmatrix(y[0], T.cuda.cvta_generic_to_shared(T.address_of(s[0])), "sync", "aligned", "m8n8", "x1", "trans", "shared", "b16", "")',
     'ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16'),
    ('T.ptx.ldmatrix.sync.aligned.m8n8.x2.shared__cta.b16(y[0], y[1], T.address_of(s[0]))',
     'T.ptx.ldmatrix(y[0], y[1], T.cuda.cvta_generic_to_shared(T.address_of(s[0])), "sync", "aligned", "m8n8", "x2", "", "shared::cta", "b16", "")',
     'ldmatrix.sync.aligned.m8n8.x2.shared::cta.b16'),
    ('T.ptx.stmatrix.sync.aligned.m8n8.x2.shared.b16(T.address_of(s[0]), y[0], y[1])',
     'T.ptx.stmatrix(T.cuda.cvta_generic_to_shared(T.address_of(s[0])), y[0], y[1], "sync", "aligned", "m8n8", "x2", "", "shared", "b16", "")',
     'stmatrix.sync.aligned.m8n8.x2.shared.b16'),
    ('T.ptx.stmatrix.sync.aligned.m8n8.x4.trans.shared.b16(T.address_of(s[0]), y[0], y[1], y[2], y[3])',
     'T.ptx.stmatrix(T.cuda.cvta_generic_to_shared(T.address_of(s[0])), y[0], y[1], y[2], y[3], "sync", "aligned", "m8n8", "x4", "trans", "shared", "b16", "")',
     'stmatrix.sync.aligned.m8n8.x4.trans.shared.b16'),
    ('T.ptx.isspacep.shared(y[0], B.data)',
     'T.ptx.isspacep(y[0], B.data, "shared", "")',
     'isspacep.shared'),
    ('T.ptx.prefetchu.L1(B.data)',
     'T.ptx.prefetchu(B.data, "L1", "")',
     'prefetchu.L1'),
    ('T.ptx.createpolicy.fractional.L2__evict_last.b64(x[0])',
     'T.ptx.createpolicy(x[0], "fractional", "L2::evict_last", "", "b64", "")',
     'createpolicy.fractional.L2::evict_last.b64'),
    ('T.ptx.createpolicy.fractional.L2__evict_last.L2__evict_unchanged.b64(x[0], 0.5)',
     'T.ptx.createpolicy(x[0], T.float32(0.5), "fractional", "L2::evict_last", "L2::evict_unchanged", "b64", "")',
     'createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64'),
    ('T.ptx.createpolicy.range.global_.L2__evict_last.b64(x[0], B.data, 128, 256)',
     'T.ptx.createpolicy(x[0], B.data, T.uint32(128), T.uint32(256), "range", "global", "L2::evict_last", "", "b64", "")',
     'createpolicy.range.global.L2::evict_last.b64'),
    ('T.ptx.createpolicy.cvt.L2.b64(x[0], x[1])',
     'T.ptx.createpolicy(x[0], x[1], "cvt", "L2", "b64", "")',
     'createpolicy.cvt.L2.b64'),
    ('T.ptx.ldu.global_.f32(z[0], A.data)',
     'T.ptx.ldu(z[0], A.data, "global", "f32", "")',
     'ldu.global.f32'),
    ('T.ptx.ldu.global_.v2.u32(y[0], y[1], B.data)',
     'T.ptx.ldu(y[0], y[1], B.data, "global", "v2", "u32", "")',
     'ldu.global.v2.u32'),
    ('T.ptx.red_async.relaxed.cluster.shared__cluster.mbarrier__complete_tx__bytes.add.u32(y[0], y[1], y[2])',
     'T.ptx.red_async(y[0], y[1], y[2], "relaxed", "cluster", "shared::cluster", "mbarrier::complete_tx::bytes", "add", "u32", "")',
     'red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32'),
    ('T.ptx.isspacep.global_(y[0], B.data)',
     'T.ptx.isspacep(y[0], B.data, "global", "")',
     'isspacep.global'),
    ('T.ptx.discard.global_.L2(B.data)',
     'T.ptx.discard(B.data, "global", "L2", "")',
     'discard.global.L2'),
    ('T.ptx.applypriority.global_.L2__evict_normal(B.data)',
     'T.ptx.applypriority(B.data, "global", "L2::evict_normal", "")',
     'applypriority.global.L2::evict_normal'),
    ('T.ptx.atom.global_.add.u32(B.data, 1)',
     'T.ptx.atom(B.data, T.uint32(1), "", "", "global", "add", "", "u32", "")',
     'atom.global.add.u32'),
    ('T.ptx.atom.global_.add.L2__cache_hint.u32(y[0], B.data, 1, x[0])',
     'T.ptx.atom(y[0], B.data, T.uint32(1), x[0], "", "", "global", "add", "L2::cache_hint", "u32", "")',
     'atom.global.add.L2::cache_hint.u32'),
    # TIRx's chains are order-free: each modifier fills the first open slot listing it
    ('T.ptx.atom.global_.v2.f32.add(z[0], z[1], A.data, z[2], z[3])',
     'T.ptx.atom(z[0], z[1], A.data, z[2], z[3], "", "", "global", "add", "", "v2", "f32", "")',
     'atom.global.add.v2.f32'),
]  # fmt: skip

#: forms TIRx emits (its table is certified against CUDA 13.4's ptxas) that the ptxas of
#: the CUDA 13.0 NVRTC here refuses
NO_COMPILE = {
    "T.ptx.ld.global_.u32.proxy__readonly(y[0], B.data)": "ptxas 13.0: unknown modifier .proxy::readonly",
    "T.ptx.atom.global_.add.noftz.f32(z[0], A.data, z[1])": "ptxas 13.0: .noftz is illegal for atom .f32",
}

BAD_CHAINS = [
    ("T.ptx.ld.global_.f33(z[0], A.data)", ["'f33'", "f32", "allowed:"]),
    ("T.ptx.ld.global_.v4.f32(z[0], A.data)", ["takes 5 to 6 operand(s)", "d0, d1, d2, d3, addr"]),
    ("T.ptx.ld.global_.f64(z[0], A.data)", ["operand 'd'", "64-bit writable buffer element"]),
    ("T.ptx.st.global_.f32(A.data, z[0], x[0])", ["'cache_policy'", ".L2::cache_hint"]),
    ("T.ptx.atom.global_.cas.b32(y[0], B.data)", ["takes 3 to 4 operand(s)"]),
    ("T.ptx.red.global_.exch.b32(B.data, y[0])", ["'exch'", "allowed:", "and_, or_, xor, inc, dec"]),
    ("T.ptx.ldmatrix.sync.aligned.m8n8.x3(y[0], T.address_of(s[0]))", ["'x3'", "x1, x2, x4"]),
    ("T.ptx.stmatrix.sync.aligned.m8n8.x2.shared.b16(T.address_of(s[0]), y[0])", ["takes 3 operand(s)"]),
    ("T.ptx.st_async.shared__cluster.b32(y[0], y[1], y[2])",
     ["missing required modifier .complete", "mbarrier::complete_tx::bytes"]),
]  # fmt: skip

BAD_TEXT = [
    ('T.ptx.ld(z[0], A.data, "", "", "", "global", "", "", "", "", "", "f33", "")', ["slot .type is 'f33'"]),
    ('T.ptx.ld(z[0], z[1], A.data, "", "", "global", "", "", "", "", "", "v2", "f32", "p1")',
     ["trailing string must be ''"]),
]  # fmt: skip


@pytest.mark.parametrize("chain, printed, _instr", CASES, ids=ids(CASES))
def test_tirx_text_loads_and_the_chain_builds_it(chain, printed, _instr):
    check_text_and_chain(chain, printed)


def test_asm_compiles_for_sm90a(monkeypatch, tmp_path):
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    check_compiles_all([c for c in CASES if c[0] not in NO_COMPILE])


@pytest.mark.parametrize("body, words", BAD_CHAINS)
def test_bad_chains_name_the_allowed_modifiers(body, words):
    check_error(body, words)


@pytest.mark.parametrize("printed, words", BAD_TEXT)
def test_bad_printed_forms_are_located(printed, words):
    check_text_error(printed, words)
