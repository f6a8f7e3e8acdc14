# ruff: noqa: F821, B007
# (kernel bodies are the tirx DSL: names such as T.constexpr parameters and locals are read by the parser)
"""Source spans on built IR, and located diagnostics."""

from __future__ import annotations

import pytest
from test_frontend_util import line_of, load_module

import tirx
from tirx.ir import BinaryOp, BufferLoad, Call, IntImm, SeqStmt, SequentialSpan, Span, Stmt, post_order
from tirx.script import tirx as T

HERE = __file__


def _lines() -> list[str]:
    with open(HERE) as fh:
        return fh.read().splitlines()


def _all(f):
    return list(post_order(f.body))


@T.inline
def helper_store(A, i):
    A[i] = A[i] * 2.0  # MARK-helper-store


@T.inline
def helper_bad(A, i):
    A[i] = A[i] + undefined_thing  # MARK-helper-bad


@T.inline
def helper_outer(A, i):
    helper_bad(A, i)  # MARK-helper-outer


def test_every_statement_and_expression_has_a_span():
    @T.function
    def f(A: T.Tensor((16,), "float32"), n: T.int32):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=16))
        i = T.cuda.thread_idx("x")
        acc: T.float32 = 0.0
        for k in range(4):
            acc = acc + A[k] * 2.0
        if i < n:
            A[i] = acc
        while acc > 1.0:
            acc = acc / 2.0

    for node in _all(f):
        if isinstance(node, (Stmt, BinaryOp, Call, BufferLoad)) and not isinstance(node, SeqStmt):
            assert node.span is not None, node
            assert node.span.source == HERE
    strs = [n for n in _all(f) if type(n).__name__ == "StringImm"]
    assert strs and all(x.span is not None for x in strs)
    consts = [n for n in _all(f) if isinstance(n, IntImm)]
    assert consts and all(c.span is not None for c in consts if c.value in (2, 4))


def test_span_coordinates_match_the_source():
    @T.function
    def f(A: T.Tensor((16,), "float32")):
        A[1] = A[2] + A[3]  # MARK-coords

    line = line_of(HERE, "MARK-" + "coords")
    text = _lines()[line - 1]
    st = f.body.seq[0]
    assert isinstance(st.span, Span) and (st.span.line, st.span.col) == (line, text.index("A[1]") + 1)
    add = st.value
    assert (add.span.line, add.span.col) == (line, text.index("A[2]") + 1)
    assert add.span.end_col == text.index("  #") + 1
    load = add.b
    assert (load.span.col, load.span.end_col) == (text.index("A[3]") + 1, text.index("A[3]") + 5)


def test_diagnostic_coordinates_equal_span_coordinates():
    with pytest.raises(tirx.DiagnosticError) as ei:

        @T.function
        def f(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "int32")):
            A[1] = A[2] // B[3]  # MARK-diag-coords (a float // an int: refused)

    line = line_of(HERE, "MARK-" + "diag-coords")
    text = _lines()[line - 1]
    e = ei.value
    assert (e.span.line, e.span.col) == (line, text.index("A[2]") + 1)
    assert f"{HERE}:{line}:{text.index('A[2]') + 1}" in str(e)


def test_inline_expansion_has_sequential_span():
    @T.function
    def f(A: T.Tensor((16,), "float32")):
        helper_store(A, 3)  # MARK-call-site

    st = f.body.seq[0]
    assert isinstance(st.span, SequentialSpan)
    call, defn = st.span.spans
    assert call.line == line_of(HERE, "MARK-" + "call-site") and defn.line == line_of(
        HERE, "MARK-" + "helper-store"
    )
    assert isinstance(st.value.span, SequentialSpan) and st.value.span.spans[0] == call


def test_spans_do_not_change_structural_identity():
    src = (
        "from tirx.script import tirx as T\n"
        "{pad}"
        "@T.function\n"
        "def k(A: T.Tensor((8,), 'float32')):\n"
        "    for i in range(8):\n"
        "        A[i] = A[i] + 1.0\n"
    )
    a = load_module(src.format(pad=""), "spanA").k
    b = load_module(src.format(pad="\n\n\n# moved\n"), "spanB").k
    assert a.body.span.line != b.body.span.line
    assert tirx.structural_equal(a, b)
    assert tirx.structural_hash(a) == tirx.structural_hash(b)


# ------------------------------------------------------------------ diagnostics
def _error(fn):
    with pytest.raises(tirx.DiagnosticError) as ei:
        fn()
    return ei.value


def _col(marker: str, needle: str) -> tuple[int, int]:
    line = line_of(HERE, marker)
    return line, _lines()[line - 1].index(needle) + 1


def test_error_format_and_cause(monkeypatch):
    monkeypatch.setenv("TIRX_TRACEBACK", "1")  # the cause keeps its frames (dropped by default)

    def build():
        @T.function
        def f(A: T.Tensor((16,), "float32")):
            A[0] = missing_name  # MARK-err-name

    e = _error(build)
    line, col = _col("MARK-" + "err-name", "missing_name")
    text = str(e)
    assert text.startswith("error: name 'missing_name' is not defined\n")
    assert f"--> {HERE}:{line}:{col}" in text
    assert "A[0] = missing_name" in text and "^^^^^^^^^^^^" in text
    assert isinstance(e, RuntimeError) and isinstance(e.__cause__, NameError)
    assert e.__cause__.__traceback__ is not None
    assert text.count("error:") == 1


def test_error_inside_inline_helper_names_helper_and_call_site():
    def build():
        @T.function
        def f(A: T.Tensor((16,), "float32")):
            helper_outer(A, 1)  # MARK-err-inline-call

    e = _error(build)
    text = str(e)
    hl, hc = _col("MARK-" + "helper-bad", "undefined_thing")
    ol, _ = _col("MARK-" + "helper-outer", "helper_bad")
    cl, cc = _col("MARK-" + "err-inline-call", "helper_outer")
    assert isinstance(e.span, SequentialSpan)
    assert [s.line for s in e.span.spans] == [cl, ol, hl]
    assert (e.span.line, e.span.col) == (hl, hc)
    assert f"{HERE}:{hl}:{hc}" in text and f"{HERE}:{cl}:{cc}" in text and f"{HERE}:{ol}:" in text
    assert text.count("error:") == 1 and "undefined_thing" in text


@pytest.mark.parametrize(
    "marker,needle,msg",
    [
        ("MARK-e1", "T.no_such_thing", "no_such_thing"),
        ("MARK-e2", "T.cuda.thread_idx", "takes 1"),
        ("MARK-e3", "try", "unsupported statement"),
        ("MARK-e4", "3.5", "cannot loop over float"),
        ("MARK-e5", "A[0, 1]", "rank 1"),
        ("MARK-e6", "x", "needs a type annotation"),
    ],
)
def test_error_locations(marker, needle, msg):
    kernels = {
        "MARK-e1": _k1, "MARK-e2": _k2, "MARK-e3": _k3, "MARK-e4": _k4, "MARK-e5": _k5, "MARK-e6": _k6,
    }  # fmt: skip
    e = _error(kernels[marker])
    line, col = _col(marker + " ", needle)
    assert msg in str(e)
    assert (e.span.line, e.span.col) == (line, col), str(e)


def _k1():
    @T.function
    def f(A: T.Tensor((4,), "float32")):
        A[0] = T.no_such_thing(1)  # MARK-e1 here


def _k2():
    @T.function
    def f(A: T.Tensor((4,), "int32")):
        A[0] = T.cuda.thread_idx("x", "y")  # MARK-e2 here


def _k3():
    @T.function
    def f(A: T.Tensor((4,), "int32")):
        try:  # MARK-e3 here
            A[0] = 1
        finally:
            pass


def _k4():
    @T.function
    def f(A: T.Tensor((4,), "int32")):
        for i in 3.5:  # MARK-e4 here
            A[0] = 1


def _k5():
    @T.function
    def f(A: T.Tensor((4,), "int32")):
        A[0] = A[0, 1]  # MARK-e5 here


def _k6():
    @T.function
    def f(A: T.Tensor((4,), "int32"), x):  # MARK-e6 here
        pass


@T.inline
def helper_early_return(A, i):
    if i > 0:
        return A[i]  # MARK-early-return
    return A[0]


def test_inline_return_inside_a_kernel_branch_is_a_diagnostic():
    def build():
        @T.function
        def f(A: T.Tensor((16,), "float32"), i: T.int32):
            A[1] = helper_early_return(A, i)

    e = _error(build)
    line, col = _col("MARK-" + "early-return", "return")
    assert "return inside a kernel loop or branch" in str(e)
    assert (e.span.line, e.span.col) == (line, col)


def test_inline_return_decided_at_parse_time_is_fine():
    @T.inline
    def pick(A, first):
        if first:
            return A[0]
        return A[1]

    @T.function
    def f(A: T.Tensor((16,), "float32")):
        A[2] = pick(A, True) + pick(A, False)

    st = f.body.seq[0]
    assert [x.indices[0].value for x in (st.value.a, st.value.b)] == [0, 1]
