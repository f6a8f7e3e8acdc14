"""A toolchain bug worked around: ptxas of CUDA 13.0 (the NVRTC tirx pins) drops an int32
negation that feeds a three-input integer min / max it forms (``VIMNMX3``):
``min(min(-s, i), 0)`` ran as ``min(s, i, 0)`` -- also where NVVM made the min from a
comparison and select, or from a division helper's ``b == -1`` branch. Codegen writes every
int32 negation as ``tirx_neg`` (not + add in inline PTX), which reaches the SASS as a negation.
No GPU needed (NVRTC and nvdisasm); tests/test_interp_gpu.py runs the same kernels on the GPU
against the interpreter."""

from __future__ import annotations

import re
import subprocess
import tempfile

import pytest

import tirx
from tirx.codegen.cuda import generate

KERNEL = """# from tirx.script import tirx as T

@T.function
def k(s: T.int32, t: T.int32, O: T.Tensor((4,), T.int32)):
    with T.device_entry(1, 1, 1, 1, 1, 1):
        i: T.let[T.int32] = T.cuda.block_idx("x") + T.cuda.thread_idx("x")
        v: T.let[T.int32] = O[1]
        z: T.let[T.int32] = 0
        m: T.let[T.int32] = -1
        if i < 1:
            O[i] = O[i] + EXPR
"""

# negations that ptxas 13.0 folded away (each checked against its SASS, 2026-12-02), and
# forms around them
CASES = [
    "T.min(T.min(-1 * s, i), 0)",
    "T.min(T.min(0 - s, i), 0)",
    "T.min(T.min(-1 * v, i), 0)",
    "T.min(T.min(i, -1 * s), t)",
    "T.min(T.min(-1 * s, v), i)",
    "T.max(T.max(-1 * s, i), t)",
    "T.min(T.min(-1 * (s + t), i), 0)",
    "T.min(T.min(0 - v, i), t)",
    "T.min(T.min(-1 * s, i), -1 * t)",
    "T.max(T.min(-1 * v, i), 3)",
    # min / max written as comparisons and selects (NVVM turns them into min / max)
    "T.Select(T.Select(0 - s < i, 0 - s, i) < 0, T.Select(0 - s < i, 0 - s, i), 0)",
    "T.if_then_else(T.if_then_else(0 - v < i, 0 - v, i) < t, T.if_then_else(0 - v < i, 0 - v, i), t)",
    # a 0 or -1 the C++ compiler knows from a binding: still a negation to it
    "T.min(T.min(z - s, i), t)",
    "T.max(T.max(s * m, i), t)",
    "T.min(T.min(m * v, i), t)",
    # the division helpers negate when the divisor is -1
    "T.min(T.min(T.floordiv(s, -1), i), 0)",
    "T.min(T.min(T.truncdiv(v, -1), i), t)",
    # a zero only NVVM sees ((v - v), (v ^ v)): every int32 subtraction that is a min / max
    # operand or a select arm is guarded (issue #29: `tirx fuzz --cuda --seed 1654884400`
    # gave max(max(-47 - -47 - -47, -47), -3) = -3 on the H200)
    "T.max(T.max(v - v - v, v), t)",
    "T.min(T.min((v ^ v) - s, i), 0)",
    "T.Select(T.Select((v - v) - s < i, (v - v) - s, i) < 0, T.Select((v - v) - s < i, (v - v) - s, i), 0)",
]


def kernel(expr: str):
    return tirx.loads(KERNEL.replace("EXPR", expr))


def body(code: str) -> str:
    """The kernel's own lines (the prelude's helpers are not the kernel's arithmetic)."""
    return code[code.index("__global__") :]


@pytest.mark.parametrize("expr", [c for c in CASES if "div" not in c] + ["-1 * s + i"])
def test_int32_negation_is_guarded(expr):
    code = body(generate(kernel(expr)).text)
    assert "tirx_neg(" in code
    assert "(unsigned int)(-1) *" not in code and "0 - " not in code
    assert "(unsigned int)(z) - (unsigned int)" not in code
    assert "* (unsigned int)(m)" not in code and "(unsigned int)(m) *" not in code


def test_a_let_bound_subtraction_feeding_a_min_max_is_guarded():
    """The subtraction reaches the max through a let-bound variable: still guarded."""
    src = KERNEL.replace("        if i < 1:", "        w: T.let[T.int32] = v - v - v\n        if i < 1:")
    code = body(generate(tirx.loads(src.replace("EXPR", "T.max(T.max(w, i), t)"))).text)
    assert "tirx_neg(v)" in code
    plain = body(generate(tirx.loads(src.replace("EXPR", "w + i"))).text)
    assert "tirx_neg" not in plain  # a subtraction used elsewhere keeps its form


def test_division_helpers_negate_through_the_guard():
    code = generate(kernel("T.floordiv(s, t) + T.truncdiv(s, t)")).text
    helpers = code[: code.index("__global__")]
    assert (
        "tirx_neg<int>" in helpers
        and helpers.count("return tirx_neg(a)") + helpers.count("? tirx_neg(a)") == 2
    )


def test_other_types_keep_their_negation():
    """uint32, int64 and narrower ints kept their negation in every form tried: not rewritten."""
    src = (
        KERNEL.replace("s: T.int32, t: T.int32", "s: T.int64, t: T.int64")
        .replace("T.Tensor((4,), T.int32)", "T.Tensor((4,), T.int64)")
        .replace("v: T.let[T.int32]", "v: T.let[T.int64]")
        .replace("EXPR", "T.min(T.min(0 - v, T.cast(i, 'int64')), t)")
    )
    assert "tirx_neg" not in body(generate(tirx.loads(src)).text)


def _sass(expr: str) -> list[str]:
    from tirx.tools.cli import find_nvdisasm

    nv = find_nvdisasm()
    if nv is None:
        pytest.skip("nvdisasm is not installed (the [cuda] extra)")
    pytest.importorskip("cuda.bindings")
    k = tirx.compile(kernel(expr), target="cuda -arch=sm_90a", cache=False)
    with tempfile.NamedTemporaryFile(suffix=".cubin") as fh:
        fh.write(k.module.cubin)
        fh.flush()
        out = subprocess.run([nv, "-c", fh.name], capture_output=True, text=True, check=True).stdout
    return [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+([^;]*);", out)]


def _negates(insn: str) -> bool:
    """An instruction that negates an operand: a ``-R``/``-UR`` operand, a bitwise not
    (``LOP3`` with the truth table of ``~b``, 0x33) or ``LEA`` with a negated base."""
    return bool(re.search(r"[ ,]-U?R\d", insn)) or ("LOP3" in insn and "0x33" in insn)


@pytest.mark.parametrize("expr", CASES)
def test_sass_keeps_each_negation(expr):
    """Every negation of the expression still negates something in the SASS (before the
    guard, ``min(min(-s, i), 0)`` compiled to ``VIMNMX3 R5, R5, UR6, RZ`` and nothing else)."""
    sass = _sass(expr)
    if "T.min" in expr or "T.max" in expr:
        assert any("MNMX" in x for x in sass), sass
    wanted = (
        1
        if "div" in expr or "T.Select" in expr or "if_then_else" in expr
        else expr.count("-1 *") + expr.count("0 -") + expr.count(") - ") + expr.count("v - v - v")
    )
    assert sum(_negates(x) for x in sass) >= wanted, sass
