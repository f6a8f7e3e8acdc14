"""tcgen05 descriptor encoders and TMEM addresses (tirx/ops/tcgen05.py), Blackwell sm_100a:
compile-only here (NVRTC targets sm_100a without a GPU; no Blackwell GPU runs them).

- the encoders against a bit-level reference written from the PTX ISA's descriptor tables
  (``_REF_*``: field name, first bit, width), property-tested over the valid options;
- the encoders against TIRx's values for a grid of options, valid and refused
  (tests/data/tirx_golden/tcgen05_desc.json, tools/tirx_oracle/golden_tcgen05.py);
- the ops: TIRx's printed text loads, prints back, builds the same IR as the script calls
  (also through ``T.cuda.tcgen05.*``), compiles for sm_100a, the interpreter stores the same
  descriptor, and a combination PTX lacks is a located error.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
from tirx.ops import tcgen05 as t5

GOLDEN = json.loads((Path(__file__).parent / "data" / "tirx_golden" / "tcgen05_desc.json").read_text())

# ----------------------------------------------------------------------------- the reference
#: PTX ISA, "Instruction descriptor format for .kind::f16, .kind::tf32, .kind::f8f6f4, .kind::i8"
_REF_DENSE = {
    "sparse_id2": (0, 2), "sparse": (2, 1), "saturate": (3, 1), "dtype": (4, 2), "atype": (7, 3), "btype": (10, 3),
    "negate_a": (13, 1), "negate_b": (14, 1), "transpose_a": (15, 1), "transpose_b": (16, 1), "n_shr3": (17, 6),
    "m_shr4": (24, 5), "max_shift": (30, 2),
}  # fmt: skip
#: PTX ISA, "Instruction descriptor format for .kind::mxf8f6f4, .kind::mxf4, .kind::mxf4nvf4"
_REF_SCALED = {
    "sparse_id2": (0, 2), "sparse": (2, 1), "b_sf_id": (4, 2), "atype": (7, 3), "btype": (10, 3), "negate_a": (13, 1),
    "negate_b": (14, 1), "transpose_a": (15, 1), "transpose_b": (16, 1), "n_shr3": (17, 6), "sf_type": (23, 1),
    "m_shr4": (24, 5), "a_sf_id": (29, 2), "k96": (31, 1),
}  # fmt: skip
#: PTX ISA, "Shared memory descriptor" (tcgen05)
_REF_SMEM = {"start_shr4": (0, 14), "lbo": (16, 14), "sbo": (32, 14), "version": (46, 3), "base_offset": (49, 3),
             "lbo_mode": (52, 1), "swizzle": (61, 3)}  # fmt: skip

# the ISA's type encodings
_F8F6F4 = {"float8_e4m3fn": 0, "float8_e5m2": 1, "float6_e2m3fn": 3, "float6_e3m2fn": 4, "float4_e2m1fn": 5}
_KINDS = {  # kind: (D dtypes -> code, A/B dtypes -> code, (K dense, K sparse))
    "f16": ({"float16": 0, "float32": 1}, {"float16": 0, "bfloat16": 1}, (16, 32)),
    "tf32": ({"float32": 1}, {"tf32": 2}, (8, 16)),
    "f8f6f4": ({"float16": 0, "float32": 1}, _F8F6F4, (32, 64)),
    "i8": ({"int32": 2}, {"uint8": 0, "int8": 1}, (32, 64)),
}
_SCALED = {  # kind: (A/B dtypes -> code, scale dtype -> sf_type, (K dense, K sparse))
    "mxf8f6f4": (_F8F6F4, {"float8_e8m0fnu": 1}, (32, 64)),
    "mxf4": ({"float4_e2m1fn": 1}, {"float8_e8m0fnu": 1}, (64, 128)),
    "mxf4nvf4": ({"float4_e2m1fn": 1}, {"float8_e4m3fn": 0}, (64, 128)),
}


def _pack(layout: dict, **fields: int) -> int:
    v = 0
    for name, x in fields.items():
        lo, width = layout[name]
        assert 0 <= x < 1 << width, (name, x)
        v |= x << lo
    return v


def _ref_dense(M, N, d, a, b, ta, tb, na, nb, sat, sp, kind):
    dcodes, ab, _k = _KINDS[kind]
    return _pack(_REF_DENSE, sparse=int(sp), saturate=int(sat), dtype=dcodes[d], atype=ab[a], btype=ab[b],
                 negate_a=int(na), negate_b=int(nb), transpose_a=int(ta), transpose_b=int(tb), n_shr3=N >> 3,
                 m_shr4=M >> 4)  # fmt: skip


@st.composite
def _dense_options(draw):
    kind = draw(st.sampled_from(sorted(_KINDS)))
    dcodes, ab, (kd, ks) = _KINDS[kind]
    a, b = draw(st.sampled_from(sorted(ab))), draw(st.sampled_from(sorted(ab)))
    d = draw(st.sampled_from(sorted(dcodes)))
    if kind == "f16" and d == "float16":
        a = b = "float16"
    cg = draw(st.sampled_from((1, 2)))
    if cg == 2:
        M, step = draw(st.sampled_from((128, 256))), 32
    else:
        M = draw(st.sampled_from((64, 128)))
        step = 16 if (kind == "i8" or M == 128) else 8
    N = step * draw(st.integers(1, 256 // step))
    sp = draw(st.booleans())
    ta, tb = (draw(st.booleans()) for _ in range(2)) if kind != "f8f6f4" else (False, False)
    flags = [draw(st.booleans()) for _ in range(3)]
    return dict(M=M, N=N, K=ks if sp else kd, d_dtype=d, a_dtype=a, b_dtype=b, trans_a=ta, trans_b=tb,
                n_cta_groups=cg, neg_a=flags[0], neg_b=flags[1], sat_d=flags[2], is_sparse=sp), kind  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(_dense_options())
def test_dense_descriptor_matches_the_isa_fields(case):
    opts, kind = case
    assert t5.mma_kind(opts["d_dtype"], opts["a_dtype"], opts["b_dtype"]) == kind
    want = _ref_dense(opts["M"], opts["N"], opts["d_dtype"], opts["a_dtype"], opts["b_dtype"], opts["trans_a"],
                      opts["trans_b"], opts["neg_a"], opts["neg_b"], opts["sat_d"], opts["is_sparse"], kind)  # fmt: skip
    got = t5.encode_instr_descriptor(**opts)
    assert got == want, hex(got ^ want)
    assert t5.TCGen05InstrDescriptorAttrs(**opts).encode() == got
    assert 0 <= got < 1 << 32


@st.composite
def _scaled_options(draw):
    kind = draw(st.sampled_from(sorted(_SCALED)))
    ab, sfs, (kd, ks) = _SCALED[kind]
    a, b = draw(st.sampled_from(sorted(ab))), draw(st.sampled_from(sorted(ab)))
    if kind == "mxf8f6f4" and a == b == "float4_e2m1fn":
        a = "float8_e4m3fn"  # FP4 x FP4 with UE8M0 scales is kind::mxf4
    sf = draw(st.sampled_from(sorted(sfs)))
    cg = draw(st.sampled_from((1, 2)))
    M = 128 if cg == 1 else draw(st.sampled_from((128, 256)))
    step = 8 if cg == 1 else 16
    N = step * draw(st.integers(1, 256 // step))
    sp = draw(st.booleans()) and (cg == 1 or M == 256)
    k96 = kind != "mxf8f6f4" and not sp and (cg, M) in ((1, 128), (2, 256)) and draw(st.booleans())
    K = 96 if k96 else (ks if sp else kd)
    ta = kind == "mxf8f6f4" and a.startswith("float8") and draw(st.booleans())
    na, nb = draw(st.booleans()), draw(st.booleans())
    opts = dict(M=M, N=N, K=K, d_dtype="float32", a_dtype=a, b_dtype=b, sfa_dtype=sf, sfb_dtype=sf, trans_a=ta,
                trans_b=False, n_cta_groups=cg, neg_a=na, neg_b=nb, is_sparse=sp)  # fmt: skip
    want = _pack(_REF_SCALED, sparse=int(sp), atype=ab[a], btype=ab[b], negate_a=int(na), negate_b=int(nb),
                 transpose_a=int(ta), n_shr3=N >> 3, sf_type=sfs[sf], m_shr4=M >> 4, k96=int(k96))  # fmt: skip
    return opts, want


@settings(max_examples=300, deadline=None)
@given(_scaled_options())
def test_block_scaled_descriptor_matches_the_isa_fields(case):
    opts, want = case
    got = t5.encode_instr_descriptor_block_scaled(**opts)
    assert got == want, hex(got ^ want)
    assert t5.TCGen05InstrDescriptorBlockScaledAttrs(**opts).encode() == got


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 0x3FFFF), st.integers(0, 0x3FFF), st.integers(0, 0x3FFF), st.sampled_from(range(5)))
def test_matrix_descriptor_matches_the_isa_fields(addr, ldo, sdo, sw):
    layout = {0: 0, 1: 6, 2: 4, 3: 2, 4: 1}[sw]  # none, 32B, 64B, 128B, 128B with 32B atoms
    want = _pack(_REF_SMEM, start_shr4=(addr >> 4) & 0x3FFF, lbo=ldo, sbo=sdo, version=1, swizzle=layout)
    assert t5.encode_matrix_descriptor(addr, ldo, sdo, sw) == want


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(-70000, 70000), st.integers(-70000, 70000), st.integers(0, 3))
def test_tmem_addresses_and_scale_ids(taddr, row, col, sf):
    a = t5.tmem_addr(taddr, row, col)
    assert a >> 16 == ((taddr >> 16) + row) % 65536 and a & 0xFFFF == ((taddr & 0xFFFF) + col) % 65536
    assert t5.tmem_addr(a, -row, -col) == taddr
    d = t5.with_sf_id(taddr, sf)
    assert (d >> 4) & 3 == sf and (d >> 29) & 3 == sf
    assert d & ~0x60000030 == taddr & ~0x60000030


# ----------------------------------------------------------------------------- against TIRx
def _rows(table: str):
    g = GOLDEN[table]
    return [dict(zip(g["keys"], r)) for r in g["rows"]]


def _tirx_call(encode, opts: dict):
    try:
        return encode(**opts)
    except ValueError:
        return "error"


def test_dense_descriptors_equal_tirx():
    rows = _rows("dense")
    assert len(rows) > 1000
    bad = []
    for r in rows:
        want = r.pop("value")
        r["n_cta_groups"] = r.pop("cta_group")
        got = _tirx_call(t5.encode_instr_descriptor, r)
        if got != want:
            bad.append((r, got, want))
    assert not bad, (len(bad), bad[:3])
    assert sum(1 for r in _rows("dense") if r["value"] != "error") > 400


def test_block_scaled_descriptors_equal_tirx():
    rows = _rows("block_scaled")
    bad = []
    for r in rows:
        want = r.pop("value")
        r["n_cta_groups"] = r.pop("cta_group")
        sf = r.pop("sf_dtype")
        got = _tirx_call(t5.encode_instr_descriptor_block_scaled, {**r, "sfa_dtype": sf, "sfb_dtype": sf})
        if got != want:
            bad.append((r, sf, got, want))
    assert not bad, (len(bad), bad[:3])


def test_matrix_descriptor_constants_equal_tirx():
    for r in _rows("smem_base"):
        assert t5.encode_matrix_descriptor(0, r["ldo"], r["sdo"], r["swizzle"]) == r["value"], r


def test_refused_options_name_what_is_wrong():
    with pytest.raises(ValueError, match="no kind for d: float32, a: int8"):
        t5.encode_instr_descriptor(128, 64, 32, "float32", "int8", "int8", False, False)
    with pytest.raises(ValueError, match="no shape M=128 N=8 K=16"):
        t5.encode_instr_descriptor(128, 8, 16, "float32", "float16", "float16", False, False)
    with pytest.raises(ValueError, match="n_cta_groups must be 1 or 2"):
        t5.encode_instr_descriptor(128, 64, 16, "float32", "float16", "float16", False, False, n_cta_groups=3)
    with pytest.raises(ValueError, match="cannot be MN-major"):
        t5.encode_instr_descriptor(128, 64, 32, "float32", "float6_e2m3fn", "float8_e4m3fn", True, False)
    with pytest.raises(ValueError, match="swizzle is 0"):
        t5.encode_matrix_descriptor(0, 1, 1, 5)


# ----------------------------------------------------------------------------- the ops
_HEAD = """
@T.function
def f(A: T.Tensor((128,), T.uint32), B: T.Tensor((128,), T.uint64)):
    with T.device_entry(1, 1, 1, 128, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):
        s = T.alloc_tensor(ty_args=[T.Tensor((64,), T.float32, scope="shared")])
        x = T.alloc_tensor(ty_args=[T.Tensor((8,), T.uint64, scope="local")])
        y = T.alloc_tensor(ty_args=[T.Tensor((8,), T.uint32, scope="local")])
        y[1] = T.uint32(0)
        {body}
        A[T.cuda.thread_idx("x")] = y[0]
        B[T.cuda.thread_idx("x")] = x[0]
"""
#: (TIRx's printed text of the call, the script call written in a kernel)
_INSTR = (
    'T.cuda.tcgen05_encode_instr_descriptor(T.address_of(y[0]), K=16, M=128, N=256, a_dtype="float16", '
    'b_dtype="float16", d_dtype="float32", trans_a=False, trans_b=True)'
)
_SCALED_TEXT = (
    "T.cuda.tcgen05_encode_instr_descriptor_block_scaled(T.address_of(y[0]), K=32, M=128, N=256, "
    'a_dtype="float8_e4m3fn", b_dtype="float8_e4m3fn", d_dtype="float32", sfa_dtype="float8_e8m0fnu", '
    'sfb_dtype="float8_e8m0fnu", trans_a=False, trans_b=False)'
)
_NONDEFAULT = (
    'T.cuda.tcgen05_encode_instr_descriptor(T.address_of(y[0]), K=16, M=128, N=256, a_dtype="bfloat16", '
    'b_dtype="bfloat16", d_dtype="float32", n_cta_groups=2, neg_a=True, trans_a=False, trans_b=True)'
)
_MATRIX = "T.cuda.tcgen05_encode_matrix_descriptor(T.address_of(x[0]), T.address_of(s[0]), 1, 64, 3)"
_OTHERS = (
    "y[2] = T.cuda.get_tmem_addr(y[0], 32, 8)\n        T.cuda.runtime_instr_desc(T.address_of(y[0]), y[1])"
)


def _load(body: str):
    return tirx.loads(_HEAD.replace("{body}", body))


@pytest.mark.parametrize("call", [_INSTR, _SCALED_TEXT, _NONDEFAULT, _MATRIX, _OTHERS])
def test_tirx_text_loads_round_trips_and_compiles_for_sm100a(call, monkeypatch, tmp_path):
    f = _load(call)
    text = tirx.dumps(f)
    assert tirx.structural_equal(tirx.loads(text), f)
    assert tirx.dumps(tirx.loads(text)) == text
    pytest.importorskip("cuda.bindings.nvrtc")
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    k = tirx.compile(f, target="cuda -arch=sm_100a", cache=False)
    assert ".target sm_100a" in k.ptx


def test_the_namespace_and_script_calls_build_tirx_s_ir():
    from test_frontend_util import load_module

    src = _HEAD.replace("T.Tensor((128,), T.uint32)", 'T.Tensor((128,), "uint32")')
    py = "from tirx.script import tirx as T\n" + src.replace(
        "{body}",
        'T.cuda.tcgen05.encode_instr_descriptor(T.address_of(y[0]), d_dtype="float32", a_dtype="float16", '
        'b_dtype="float16", M=128, N=256, K=16, trans_a=False, trans_b=True)\n'
        "        T.cuda.tcgen05.encode_matrix_descriptor(T.address_of(x[0]), T.address_of(s[0]), 1, 64, 3)",
    )
    built = load_module(py, "tcgen05ns").f
    tirx.assert_structural_equal(built, _load(_INSTR + "\n        " + _MATRIX))


def test_the_encoder_stores_a_constant_and_the_interpreter_the_same_value():
    f = _load(_INSTR + "\n        " + _OTHERS.replace("y[1])", "T.uint32(2))"))
    from tirx.codegen.cuda import generate

    want = t5.encode_instr_descriptor(128, 256, 16, "float32", "float16", "float16", False, True)
    assert f"{want:#010x}u" in generate(f).text
    A = np.zeros(128, np.uint32)
    B = np.zeros(128, np.uint64)
    tirx.compile(f, target="interp")(A, B)
    assert (t5.with_sf_id(want, 2) == A).all()


def test_get_tmem_addr_on_the_interpreter():
    f = _load("y[0] = T.uint32(0x0010FFF0)\n        y[0] = T.cuda.get_tmem_addr(y[0], 32, 24)")
    A = np.zeros(128, np.uint32)
    tirx.compile(f, target="interp")(A, np.zeros(128, np.uint64))
    assert (t5.tmem_addr(0x0010FFF0, 32, 24) == A).all() and A[0] == (0x30 << 16 | 0x0008)


def test_leader_address_is_the_expression_tirx_builds():
    f = _load("y[1] = T.cuda.cvta_generic_to_shared(s.data) & T.uint32(4278190079)")
    g = _load("y[1] = T.cuda.sm100_2sm_leader_smem_addr(s.data)")
    tirx.assert_structural_equal(f, g)


@pytest.mark.parametrize(
    "body, words",
    [
        (_INSTR.replace("N=256", "N=260"), ["no shape M=128 N=260", "tcgen05"]),
        (_INSTR.replace('d_dtype="float32"', 'd_dtype="int32"'), ["no kind for d: int32"]),
        (_INSTR.replace("T.address_of(y[0])", "T.address_of(x[0])"), ["32-bit element"]),
        (_MATRIX.replace(", 3)", ", 5)"), ["swizzle is 0"]),
    ],
)
def test_bad_options_are_located_codegen_errors(body, words):
    from tirx.codegen.cuda import generate

    f = _load(body)
    with pytest.raises(tirx.DiagnosticError) as ei:
        generate(f)
    for w in words:
        assert w in str(ei.value), str(ei.value)
    assert ":9:9:" in str(ei.value), str(ei.value)  # the call's line and column


# ----------------------------------------------------------------------------- the golden kernels
_GOLDEN_FE = Path(__file__).parent / "data" / "tirx_golden" / "frontend"


@pytest.mark.parametrize("case", ["tcgen05_descriptors", "tcgen05_ptx"])
def test_golden_kernels_compile_for_sm100a(case, monkeypatch, tmp_path):
    # TIRx's printed text of tests/data/tirx_golden/frontend/<case>.py (the frontend test
    # checks tirx builds the same IR from the .py)
    pytest.importorskip("cuda.bindings.nvrtc")
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    f = tirx.loads((_GOLDEN_FE / f"{case}.tirx").read_text())
    k = tirx.compile(f, target="cuda -arch=sm_100a", cache=False)
    assert ".target sm_100a" in k.ptx
    if case == "tcgen05_ptx":
        for instr in (
            "tcgen05.mma.cta_group::1.kind::f16",
            "tcgen05.commit.cta_group::1",
            "multimem.st.global.v2.f32",
        ):
            assert instr in k.ptx


def test_tmem_tensors_are_declarations_only_on_cuda():
    # TIRx lowers a TMEM tensor to a local array of its size; tirx declares it without storage
    # (TMEM is allocated by tcgen05.alloc and reached through tcgen05 instructions and
    # T.cuda.get_tmem_addr) and refuses a load or store of it by name, at the access
    from tirx.codegen.cuda import generate

    f = tirx.loads((_GOLDEN_FE / "tcgen05_tmem.tirx").read_text())
    src = generate(f).text
    assert "tensor memory, 128x64 float32" in src and "8192" not in src and "4096" not in src
    from tirx.script import tirx as T

    @T.function
    def g(B: T.Tensor((128,), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
        t = T.tmem((128, 64))
        B[T.cuda.thread_idx("x")] = t[0, 1]

    with pytest.raises(tirx.DiagnosticError, match="lives in tensor memory"):
        generate(g)
