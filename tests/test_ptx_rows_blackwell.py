"""Blackwell (sm_100a) forms of the PTX table's sm_90 families: cvt's microscaling formats
(ue8m0, fp8/fp6 pairs, stochastic rounding, tf32), ldmatrix/stmatrix on b8 matrices, the
mixed-precision add/sub/fma lines and .f32x2 arithmetic, and a generic pointer in a shared
address position (converted, as TIRx converts it).

TIRx's printed text of each chain (recorded from apache-tvm-tirx 0.1.0a4 running the chains
in the kernel ``_PY``) loads in tirx to what the chain builds, and tirx prints it exactly;
the CUDA compiles through NVRTC for sm_100a with the instruction TIRx's asm holds, except
the forms the NVRTC here does not assemble (their asm text is checked instead).
"""

from __future__ import annotations

import re

import pytest
from test_frontend_util import load_module

import tirx

#: (chain written in the kernel, TIRx's printed text of it)
CASES: list[tuple[str, str]] = [
    ('T.ptx.cvt.rz.ue8m0x2.f32(u[0], z[1], z[0])',
     'T.ptx.cvt(u[0], z[1], z[0], "rz", "", "ue8m0x2", "f32", "")'),
    ('T.ptx.cvt.rp.satfinite.ue8m0x2.bf16x2(u[1], y[0])',
     'T.ptx.cvt(u[1], y[0], "rp", "satfinite", "ue8m0x2", "bf16x2", "")'),
    ('T.ptx.cvt.rn.bf16x2.ue8m0x2(y[1], u[0])',
     'T.ptx.cvt(y[1], u[0], "rn", "bf16x2", "ue8m0x2", "")'),
    ('T.ptx.cvt.rn.satfinite.e4m3x2.f16x2(u[2], y[2])',
     'T.ptx.cvt(u[2], y[2], "rn", "satfinite", "", "e4m3x2", "f16x2", "")'),
    ('T.ptx.cvt.rn.satfinite.relu.e5m2x2.bf16x2(u[3], y[3])',
     'T.ptx.cvt(u[3], y[3], "rn", "satfinite", "relu", "e5m2x2", "bf16x2", "")'),
    ('T.ptx.cvt.rn.bf16x2.e4m3x2(y[4], u[2])',
     'T.ptx.cvt(y[4], u[2], "rn", "", "", "", "bf16x2", "e4m3x2", "")'),
    ('T.ptx.cvt.rn.scaled__n2__ue8m0.bf16x2.e5m2x2(y[5], u[3], u[0])',
     'T.ptx.cvt(y[5], u[3], u[0], "rn", "", "", "scaled::n2::ue8m0", "bf16x2", "e5m2x2", "")'),
    ('T.ptx.cvt.rn.satfinite.e2m3x2.f32(u[4], z[2], z[3])',
     'T.ptx.cvt(u[4], z[2], z[3], "rn", "satfinite", "", "e2m3x2", "f32", "")'),
    ('T.ptx.cvt.rn.satfinite.e3m2x2.f16x2(u[5], y[6])',
     'T.ptx.cvt(u[5], y[6], "rn", "satfinite", "", "e3m2x2", "f16x2", "")'),
    ('T.ptx.cvt.rn.relu.f16x2.e2m3x2(y[7], u[4])',
     'T.ptx.cvt(y[7], u[4], "rn", "relu", "f16x2", "e2m3x2", "")'),
    ('T.ptx.cvt.rn.bf16x2.e3m2x2(y[0], u[5])',
     'T.ptx.cvt(y[0], u[5], "rn", "", "", "", "bf16x2", "e3m2x2", "")'),
    ('T.ptx.cvt.rs.relu.satfinite.e4m3x4.f32(y[1], z[0], z[1], z[2], z[3], y[2])',
     'T.ptx.cvt(y[1], z[0], z[1], z[2], z[3], y[2], "rs", "relu", "satfinite", "e4m3x4", "f32", "")'),
    ('T.ptx.cvt.rs.satfinite.e2m1x4.f32(u[6], z[4], z[5], z[6], z[7], y[3])',
     'T.ptx.cvt(u[6], z[4], z[5], z[6], z[7], y[3], "rs", "", "satfinite", "e2m1x4", "f32", "")'),
    ('T.ptx.cvt.rs.f16x2.f32(y[4], z[0], z[1], y[5])',
     'T.ptx.cvt(y[4], z[0], z[1], y[5], "rs", "", "", "f16x2", "f32", "")'),
    ('T.ptx.cvt.rna.satfinite.tf32.f32(y[6], z[2])',
     'T.ptx.cvt(y[6], z[2], "rna", "satfinite", "", "tf32", "f32", "")'),
    ('T.ptx.cvt.rz.relu.tf32.f32(y[7], z[3])',
     'T.ptx.cvt(y[7], z[3], "rz", "", "relu", "tf32", "f32", "")'),
    ('T.ptx.stmatrix.sync.aligned.m16n8.x2.trans.shared.b8(s.data, y[0], y[1])',
     'T.ptx.stmatrix(T.cuda.cvta_generic_to_shared(s.data), y[0], y[1], "sync", "aligned", "m16n8", "x2", "trans", "shared", "b8", "")'),
    ('T.ptx.ldmatrix.sync.aligned.m16n16.x2.trans.shared__cta.b8(y[0], y[1], y[2], y[3], s.data)',
     'T.ptx.ldmatrix(y[0], y[1], y[2], y[3], T.cuda.cvta_generic_to_shared(s.data), "sync", "aligned", "m16n16", "x2", "trans", "shared::cta", "b8", "")'),
    ('T.ptx.ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b6x16_p32(y[4], s.data)',
     'T.ptx.ldmatrix(y[4], T.cuda.cvta_generic_to_shared(s.data), "sync", "aligned", "m8n16", "x1", "", "shared", "b8x16", "b6x16_p32", "")'),
    ('T.ptx.ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8x16.b4x16_p64(y[5], y[6], s.data)',
     'T.ptx.ldmatrix(y[5], y[6], T.cuda.cvta_generic_to_shared(s.data), "sync", "aligned", "m16n16", "x1", "trans", "shared", "b8x16", "b4x16_p64", "")'),
    ('T.ptx.add.rn.f32.bf16(z[0], u[0], z[1])',
     'T.ptx.add(z[0], u[0], z[1], "rn", "", "", "f32", "bf16", "")'),
    ('T.ptx.sub.rn.sat.f32.f16(z[2], u[1], z[3])',
     'T.ptx.sub(z[2], u[1], z[3], "rn", "", "sat", "f32", "f16", "")'),
    ('T.ptx.fma.rz.f32.bf16(z[4], u[2], u[3], z[5])',
     'T.ptx.fma(z[4], u[2], u[3], z[5], "rz", "", "", "f32", "bf16", "")'),
    ('T.ptx.mul.rn.ftz.f32x2(x[0], x[1], x[2])',
     'T.ptx.mul(x[0], x[1], x[2], "rn", "ftz", "", "f32x2", "")'),
    ('T.ptx.add.f32x2(x[3], x[1], x[2])',
     'T.ptx.add(x[3], x[1], x[2], "", "", "", "f32x2", "", "")'),
    ('T.ptx.fma.rm.f32x2(x[4], x[1], x[2], x[3])',
     'T.ptx.fma(x[4], x[1], x[2], x[3], "rm", "", "", "f32x2", "", "")'),
    ('T.ptx.st.shared.u32(B.data, y[0])',
     'T.ptx.st(T.cuda.cvta_generic_to_shared(B.data), y[0], "", "", "", "shared", "", "", "", "u32", "")'),
]  # fmt: skip

#: forms the ptxas of NVRTC 13.0 refuses ("Unexpected instruction types" / "Unknown modifier")
NO_COMPILE = {
    c for c, _ in CASES if re.search(r"cvt\.rn\.(scaled__n2__ue8m0\.)?bf16x2\.e(4m3|5m2|2m3|3m2)x2", c)
} | {
    "T.ptx.cvt.rn.satfinite.relu.e5m2x2.bf16x2(u[3], y[3])",
    "T.ptx.cvt.rn.satfinite.e3m2x2.f16x2(u[5], y[6])",
}

_PY = """
from tirx.script import tirx as T

@T.function
def f(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "uint64")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    s = T.alloc_shared((64,), "float32")
    x = T.alloc_local((8,), "uint64")
    y = T.alloc_local((8,), "uint32")
    z = T.alloc_local((8,), "float32")
    u = T.alloc_local((8,), "uint16")
    {body}
"""
_TIRX = """
@T.function
def f(A: T.Tensor((128,), T.float32), B: T.Tensor((128,), T.uint64)):
    with T.device_entry(1, 1, 1, 128, 1, 1, attrs={{"cuda.kernel_attrs": {{}}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}}):
        s = T.alloc_tensor(ty_args=[T.Tensor((64,), T.float32, scope="shared")])
        x = T.alloc_tensor(ty_args=[T.Tensor((8,), T.uint64, scope="local")])
        y = T.alloc_tensor(ty_args=[T.Tensor((8,), T.uint32, scope="local")])
        z = T.alloc_tensor(ty_args=[T.Tensor((8,), T.float32, scope="local")])
        u = T.alloc_tensor(ty_args=[T.Tensor((8,), T.uint16, scope="local")])
        {body}
"""
# the registers start from the inputs and are stored, so nothing is dead or undefined
_INIT = """for i in range(8):
        x[i] = B[i]
        y[i] = T.Cast("uint32", B[i + 8])
        z[i] = A[i]
        u[i] = T.Cast("uint16", B[i + 16])
    """
_KEEP = """
    for i in range(8):
        B[i] = x[i] + T.Cast("uint64", y[i]) + T.Cast("uint64", u[i])
        A[i] = z[i] + s[i]"""
IDS = [c.split("(")[0][6:] + f"/{i}" for i, (c, _) in enumerate(CASES)]


def _kernel(body: str, keep: bool = False):
    return load_module(_PY.format(body=_INIT + body + _KEEP if keep else body), "ptxbw").f


def _instr(printed: str) -> str:
    """The instruction TIRx emits: the opcode and the modifier strings of the printed form."""
    opcode = re.match(r"T\.ptx\.(\w+)\(", printed).group(1)
    mods = re.findall(r'"([^"]*)"', printed)[:-1]
    return ".".join([opcode, *(m for m in mods if m)])


@pytest.mark.parametrize("chain, printed", CASES, ids=IDS)
def test_tirx_text_loads_and_the_chain_builds_it(chain, printed):
    loaded = tirx.loads(_TIRX.format(body=printed))
    built = _kernel(chain)
    tirx.assert_structural_equal(loaded, built)
    tirx.assert_structural_equal(_kernel(printed), built)
    text = tirx.dumps(built)
    assert printed in text, text
    tirx.assert_structural_equal(tirx.loads(text), built)


def test_asm_compiles_for_sm100a(monkeypatch, tmp_path):
    pytest.importorskip("cuda.bindings.nvrtc")
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    cases = [c for c in CASES if c[0] not in NO_COMPILE]
    k = tirx.compile(
        _kernel("\n    ".join(c for c, _ in cases), keep=True), target="cuda -arch=sm_100a", cache=False
    )
    missing = [_instr(p) for _, p in cases if not re.search(re.escape(_instr(p)) + r"[ ;]", k.ptx)]
    assert not missing, missing


def test_forms_ptxas_lacks_emit_tirx_instruction():
    from tirx.codegen.cuda import generate

    for chain, printed in CASES:
        if chain in NO_COMPILE:
            src = generate(_kernel(chain, keep=True)).text
            assert re.search(r'asm(?: volatile)?\("' + re.escape(_instr(printed)) + r" ", src), (
                chain,
                src[-800:],
            )


@pytest.mark.parametrize(
    "body, words",
    [
        ("T.ptx.stmatrix.sync.aligned.m16n8.x1.shared.b8(s.data, y[0])", ["missing required modifier .trans"]),
        ("T.ptx.ldmatrix.sync.aligned.m8n16.x1.trans.shared.b8x16.b6x16_p32(y[0], s.data)",
         ["the .m8n16 decompression line takes no .trans"]),
        ("T.ptx.add.rn.ftz.f32.bf16(z[0], u[0], z[1])", ["mixed-precision .bf16 source", "without .ftz"]),
        ("T.ptx.cvt.rn.ue8m0x2.f32(u[0], z[0], z[1])", ["'f32' is not a modifier allowed here", "bf16x2"]),
    ],
)  # fmt: skip
def test_bad_forms_are_located(body, words):
    with pytest.raises(tirx.DiagnosticError) as ei:
        _kernel(body)
    msg = str(ei.value)
    for w in words:
        assert w in msg, msg
    assert re.search(r"\.py:12:5", msg), msg
