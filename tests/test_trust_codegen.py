"""Generated CUDA never carries user text out of a comment (issue #12: nothing a loaded file
says becomes code by accident). Source names, attribute values, buffer names and evaluated
strings end up in ``//`` comments; a newline or a trailing backslash there would turn the
rest into C++."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tirx
from tirx.codegen.cuda import _comment, generate

KERNEL = """# from tirx.script import tirx as T

@T.function
def f(B: T.Tensor((4,), T.int32)):
    with T.device_entry(1, 1, 1, 4, 1, 1):
        i: T.let[T.int32] = T.cuda.thread_idx("x")
        B[i] = i
"""


@pytest.mark.parametrize("name", ["a.tirx\nB[0] = 7; //", "a.tirx\r\n  B[0] = 7;", "dir\\", "x\u2028y"])
def test_source_name_cannot_inject_code(name):
    code = generate(tirx.loads(KERNEL, source_name=name)).text
    for line in code.splitlines():
        if line.lstrip().startswith("//"):
            assert not line.endswith("\\")
    assert not any(ln.strip().startswith("B[0] = 7") for ln in code.splitlines())


@given(st.text())
def test_comment_text_is_one_safe_line(s):
    c = _comment(s)
    assert "\n" not in c and "\r" not in c and not c.endswith("\\")
    assert c.isascii() and c.isprintable()
    if s.isascii() and s.isprintable() and "\\" not in s:
        assert c == s


def test_constant_index_folding_wraps_as_the_ir_does():
    """Codegen folds constant index products; an out-of-range one wraps (the IR's int32
    arithmetic) instead of failing with ValueError (found by the mutation campaign)."""
    text = """# from tirx.script import tirx as T

@T.function
def f(A: T.Tensor((4, 123), T.float16)):
    with T.device_entry(1, 1, 1, 1, 1, 1):
        p: T.let[T.Ptr(T.float16)] = T.address_of(A[-2147483648, 0])
"""
    code = generate(tirx.loads(text)).text
    assert "(A + (-2147483647 - 1))" in code  # -2^31 * 123 wraps to -2^31 in int32


def test_a_module_named_T_is_a_located_error():
    """The printer cannot print a module named T (``T.<name>`` names the script namespace),
    so the loader refuses it too (found by the mutation campaign)."""
    text = """# from tirx.script import tirx as T

@T.ir_module
class T:
    @T.function
    def f(A: T.Tensor((4,), T.int32)):
        A[0] = 1
"""
    with pytest.raises(tirx.DiagnosticError) as info:
        tirx.loads(text)
    assert "cannot be named T" in str(info.value) and ":4:" in str(info.value)


@pytest.mark.parametrize("name", ["None", "True", "False"])
def test_a_module_named_after_a_keyword_is_a_located_error(name):
    """``class None:`` parses, but no printer can write it back (mutate fuzz, seed 1753255730)."""
    text = f"@T.ir_module\nclass {name}:\n    @T.function\n    def f(A: T.Tensor((4,), T.int32)):\n        A[0] = 1\n"
    with pytest.raises(tirx.DiagnosticError) as info:
        tirx.loads(text)
    assert f"cannot be named {name}" in str(info.value) and ":2:" in str(info.value)


def test_str_of_a_node_works_on_a_thread_that_never_printed():
    """Mutate fuzz seed 306014528: codegen (which runs deep IR on a worker thread with a large
    stack) formatted a tmem shape with ``str``; the printer's per-thread depth was missing there."""
    import threading

    from tirx.ir import Var
    from tirx.ir.types import int32

    x = Var("x", int32) + 1
    out = []
    t = threading.Thread(target=lambda: out.append(str(x)))
    t.start()
    t.join()
    assert out == [str(x)] and "x" in out[0]


def test_tmem_declaration_with_a_deep_shape_expression_generates():
    """The same input: a ``T.tmem`` buffer whose shape is a 1,000-term sum (deep IR)."""
    n = " + ".join(["128"] * 1000)
    f = tirx.loads(
        "@T.function\n"
        "def f(B: T.Tensor((128,), T.uint32)):\n"
        "    with T.device_entry(1, 1, 1, 128, 1, 1):\n"
        f'        t = T.alloc_tensor(ty_args=[T.Tensor(({n}, 64), T.float32, scope="tmem")])\n'
        '        B[T.cuda.thread_idx("x")] = T.uint32(1)\n'
    )
    assert "tensor memory" in generate(f).text
