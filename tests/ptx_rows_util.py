"""Shared checks for the PTX table row tests (tests/test_ptx_rows_*.py).

A case is (a chain written in a kernel, TIRx's printed text of it, the PTX instruction
TIRx's asm emits for it). The printed texts and instructions were recorded from
apache-tvm-tirx 0.1.0a4 running the same chains in the same kernel (``_TIRX`` is its
printed prologue), so they are what TIRx users have in their files.
"""

from __future__ import annotations

import re

import pytest
from test_frontend_util import load_module

import tirx

_PY = """
from tirx.script import tirx as T

@T.function
def f(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "uint64")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid={grid}, block=128{cluster}))
    s = T.alloc_shared((64,), "float32")
    x = T.alloc_local((8,), "uint64")
    y = T.alloc_local((8,), "uint32")
    z = T.alloc_local((8,), "float32")
    w = T.alloc_local((8,), "int32")
    d = T.alloc_local((8,), "float64")
    h = T.alloc_local((8,), "float16")
    {body}
"""
#: the line of ``{body}`` in _PY (errors are located there)
BODY_LINE = 14

# the registers start from the inputs and are stored, so no instruction is dropped as
# dead or folded over undefined values
_INIT = """for i in range(8):
        x[i] = B[i]
        y[i] = T.Cast("uint32", B[i + 8])
        z[i] = A[i]
        w[i] = T.Cast("int32", B[i + 16])
        d[i] = T.Cast("float64", A[i + 8])
        h[i] = T.Cast("float16", A[i + 16])
    """
_KEEP = """
    for i in range(8):
        B[i] = x[i] + T.Cast("uint64", y[i]) + T.Cast("uint64", w[i])
        A[i] = z[i] + T.Cast("float32", d[i]) + T.Cast("float32", h[i])"""

_TIRX = """
@T.function
def f(A: T.Tensor((128,), T.float32), B: T.Tensor((128,), T.uint64)):
    with T.device_entry(1, 1, 1, 128, 1, 1, attrs={{"cuda.kernel_attrs": {{}}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}}):
        s = T.alloc_tensor(ty_args=[T.Tensor((64,), T.float32, scope="shared")])
        x = T.alloc_tensor(ty_args=[T.Tensor((8,), T.uint64, scope="local")])
        y = T.alloc_tensor(ty_args=[T.Tensor((8,), T.uint32, scope="local")])
        z = T.alloc_tensor(ty_args=[T.Tensor((8,), T.float32, scope="local")])
        w = T.alloc_tensor(ty_args=[T.Tensor((8,), T.int32, scope="local")])
        d = T.alloc_tensor(ty_args=[T.Tensor((8,), T.float64, scope="local")])
        h = T.alloc_tensor(ty_args=[T.Tensor((8,), T.float16, scope="local")])
        {body}
"""


def kernel(body: str, keep: bool = False, cluster: int = 1):
    """The tirx kernel of ``_PY`` with ``body`` (and the stores of every register)."""
    cl = f", cluster={cluster}" if cluster > 1 else ""  # the grid holds whole clusters, as TIRx checks
    body = _INIT + body + _KEEP if keep else body
    return load_module(_PY.format(body=body, cluster=cl, grid=max(cluster, 1)), "ptxrows").f


def tirx_text(printed: str) -> str:
    return _TIRX.format(body=printed)


def ids(cases) -> list[str]:
    return [c[0].split("(")[0][6:] + f"/{i}" for i, c in enumerate(cases)]


def check_text_and_chain(chain: str, printed: str) -> None:
    """TIRx's printed text loads; the chain builds the same IR; print -> load -> equal."""
    loaded = tirx.loads(tirx_text(printed))
    built = kernel(chain)
    tirx.assert_structural_equal(loaded, built)
    # the printed positional form is Python too: it builds the same IR in a kernel
    tirx.assert_structural_equal(kernel(printed), built)
    text = tirx.dumps(built)
    assert printed in text, text  # TIRx's text exactly (int32 literal operands as T.int32(v))
    again = tirx.loads(text)
    tirx.assert_structural_equal(again, built)
    assert tirx.dumps(again) == text


def check_compiles_all(cases, arch: str = "sm_90a") -> None:
    """One kernel holding every case's chain compiles through NVRTC for ``arch`` (no GPU
    needed), and its PTX has each instruction TIRx emits for them."""
    pytest.importorskip("cuda.bindings.nvrtc")
    body = "\n    ".join(c[0] for c in cases)
    k = tirx.compile(kernel(body, keep=True, cluster=2), target=f"cuda -arch={arch}", cache=False)
    assert f".target {arch}" in k.ptx
    missing = [c for c in cases if not re.search(re.escape(c[2]) + r"[ ;]", k.ptx)]
    for chain, _printed, instr in missing:
        # a non-volatile form (mov, getctarank) whose register a later case overwrites is
        # dead code in the shared kernel: it must show in a kernel of its own
        k1 = tirx.compile(kernel(chain, keep=True, cluster=2), target=f"cuda -arch={arch}", cache=False)
        assert re.search(re.escape(instr) + r"[ ;]", k1.ptx), (chain, instr, k1.ptx[-2500:])


def check_error(body: str, words: list[str]) -> None:
    """A bad chain is a located DiagnosticError naming what is allowed."""
    with pytest.raises(tirx.DiagnosticError) as ei:
        kernel(body)
    msg = str(ei.value)
    for word in words:
        assert word in msg, msg
    assert re.search(rf"\.py:{BODY_LINE}:5", msg), msg


def check_text_error(printed: str, words: list[str]) -> None:
    """A printed form no row takes is a located DiagnosticError naming what is wrong."""
    with pytest.raises(tirx.DiagnosticError) as ei:
        tirx.loads(tirx_text(printed))
    msg = str(ei.value)
    for word in words:
        assert word in msg, msg
    assert re.search(r":12:9", msg), msg  # the call's line and column in _TIRX


def family_tests(cases, bad_chains, bad_text, no_compile, arch: str = "sm_90a") -> dict:
    """The four tests every family file runs over its tables (``globals().update(...)`` in
    the file makes them its own, so pytest reports them under that file); the compile test
    targets ``arch`` (its name keeps saying sm90a)."""
    import pytest

    @pytest.mark.parametrize("chain, printed, _instr", cases, ids=ids(cases))
    def test_tirx_text_loads_and_the_chain_builds_it(chain, printed, _instr):
        check_text_and_chain(chain, printed)

    def test_asm_compiles_for_sm90a(monkeypatch, tmp_path):
        monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
        check_compiles_all([c for c in cases if c[0] not in no_compile], arch)

    @pytest.mark.parametrize("body, words", bad_chains)
    def test_bad_chains_name_the_allowed_modifiers(body, words):
        check_error(body, words)

    @pytest.mark.parametrize("printed, words", bad_text)
    def test_bad_printed_forms_are_located(printed, words):
        check_text_error(printed, words)

    fns = (test_tirx_text_loads_and_the_chain_builds_it, test_asm_compiles_for_sm90a,
           test_bad_chains_name_the_allowed_modifiers, test_bad_printed_forms_are_located)  # fmt: skip
    return {f.__name__: f for f in fns}


def form_coverage(families, unsupported: dict, implied: dict | None = None) -> tuple[list, list]:
    """TIRx's forms of ``families`` (tests/data/tirx_golden/surface.json) that no row takes
    and that ``unsupported`` ({(family, form name): reason}) does not list, and the listed
    forms a row now takes (stale). A row takes a form with the same slots (count, optional
    flags, at least its choices) and operand count (less ``implied`` ones, the immediates
    written into the instruction)."""
    import json
    from pathlib import Path

    from tirx.ops.ptx_table import escape, opcodes

    surface = json.loads((Path(__file__).parent / "data" / "tirx_golden" / "surface.json").read_text())["ptx"]
    ops = opcodes()
    implied = implied or {}

    def takes(r, fam, form) -> bool:
        if r.bare or len(r.slots) != len(form["slots"]):
            return False
        for mine, theirs in zip(r.slots, form["slots"]):
            if mine.optional != theirs["optional"] or not set(theirs["choices"]) <= set(mine.choices):
                return False
        n = len(form["operands"]) - implied.get((fam, form["name"]), 0)
        return r.n_required <= n <= len(r.operands)

    missing, stale = [], []
    for fam in families:
        opc = ops["ptx." + escape(fam)]
        for form in surface[fam]["forms"]:
            ok = any(takes(r, fam, form) for r in opc.rows)
            listed = (fam, form["name"]) in unsupported
            if not ok and not listed:
                missing.append((fam, form["name"]))
            if ok and listed:
                stale.append((fam, form["name"]))
    return missing, stale


def check_emits(cases) -> None:
    """The CUDA source tirx generates (no NVRTC) has each case's instruction TIRx emits in
    an asm statement: the check for forms this NVRTC cannot assemble (compile-only text)."""
    from tirx.codegen.cuda import generate

    for chain, _printed, instr in cases:
        src = generate(kernel(chain, keep=True, cluster=2)).text
        assert re.search(r'asm(?: volatile)?\("[^"]*' + re.escape(instr) + r"[ ;]", src), (
            chain,
            instr,
            src[-1500:],
        )
