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
