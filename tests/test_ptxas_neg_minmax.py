"""A toolchain bug worked around: ptxas of CUDA 13.0 (the NVRTC tirx pins) drops an int32
negation that feeds a three-input integer min / max it forms (``VIMNMX3``):
``min(min(-s, i), 0)`` ran as ``min(s, i, 0)``. In a module with an int32 min / max, codegen
writes int32 negations as ``tirx_neg`` (not + add), which reaches the SASS as a negation.
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
]


def kernel(expr: str):
    return tirx.loads(KERNEL.replace("EXPR", expr))


def body(code: str) -> str:
    """The kernel's own lines (the prelude's helpers are not the kernel's arithmetic)."""
    return code[code.index("__global__") :]


@pytest.mark.parametrize("expr", CASES)
def test_negation_feeding_int_minmax_is_guarded(expr):
    code = generate(kernel(expr)).text
    assert "tirx_neg(" in body(code)
    assert "(unsigned int)(-1) *" not in body(code) and "0 - " not in body(code)


@pytest.mark.parametrize(
    "expr",
    [
        "-1 * s + i",  # no min / max: a negation as the C++ compiler likes it
        "T.cast(T.min(T.cast(-1 * s, 'int64'), T.int64(3)), 'int32')",  # an int64 min: no VIMNMX3
        "T.cast(T.min(T.cast(-1 * s, 'float32'), T.float32(0)), 'int32')",  # a float min
    ],
)
def test_no_guard_without_an_int32_minmax(expr):
    code = generate(kernel(expr)).text
    assert "tirx_neg" not in code


def test_guard_reaches_helpers_through_the_module():
    """A device helper's min can meet the kernel's negation after inlining: the scan is per
    module."""
    src = """# from tirx.script import tirx as T

@T.ir_module
class Module:
    @T.function
    def lo(a: T.int32, b: T.int32) -> T.int32:
        return T.min(a, b)

    @T.function
    def k(s: T.int32, O: T.Tensor((1,), T.int32)):
        with T.device_entry(1, 1, 1, 1, 1, 1):
            O[0] = T.Call(Module.lo, [0 - s, O[0]], ty=T.int32)
"""
    mod = tirx.loads(src)
    assert "tirx_neg(" in generate(mod).text


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
    assert any("MNMX" in x for x in sass), sass
    assert sum(_negates(x) for x in sass) >= expr.count("-1 *") + expr.count("0 -"), sass
