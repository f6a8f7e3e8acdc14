"""Every error in a file, not just the first: ``DiagnosticError.diagnostics`` (the text loader
goes on after an error at the next statement) and every subcommand that reads files prints
them all, each at ``file:line:col`` with a caret; exit codes 0 / 1 / 2 alike everywhere."""

from __future__ import annotations

import pickle
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx
from tirx.tools.cli import main

# four independent errors: an undefined name, an unknown op, a syntax error, and an
# undefined name again; `j` (defined by the skipped line 14) is not reported at line 15
BAD = """\
# from tirx.script import tirx as T

@T.ir_module
class Module:
    @T.function(private=True)
    def relu(x: T.float32) -> T.float32:
        y = T.max(x, undefined_a)
        return T.max(x, T.float32(0.0))

    @T.function
    def k(A: T.Tensor((1024,), T.float32), B: T.Tensor((1024,), T.float32)):
        for i in range(4):
            j = T.nosuch(3)
            B[i] = T.Call(Module.relu, [A[j]], ty=T.float32)
            B[i] = A[i] +* 2
        B[0] = A[zz]
"""
WANT = [
    (7, 22, "undefined name 'undefined_a'"),
    (13, 17, "unknown name T.nosuch"),
    (15, 26, "unexpected '*'"),
    (16, 18, "undefined name 'zz'"),
]
GOOD = """\
@T.function
def f(A: T.Tensor((4,), T.int32)):
    for i in range(4):
        A[i] = i * 2
"""


def _where(d: tirx.DiagnosticError) -> tuple[int, int]:
    return d.span.line, d.span.col


def test_loads_raises_the_first_error_carrying_all():
    with pytest.raises(tirx.DiagnosticError) as ei:
        tirx.loads(BAD, source_name="bad.tirx")
    e = ei.value
    assert _where(e) == WANT[0][:2] and WANT[0][2] in e.message
    got = [(*_where(d), d.message) for d in e.diagnostics]
    assert len(got) == len(WANT)
    for (line, col, msg), (gl, gc, gm) in zip(WANT, got):
        assert (gl, gc) == (line, col) and gm.startswith(msg)
    assert e.diagnostics[0] is e
    # each is rendered against the original text, caret under the error
    last = str(e.diagnostics[-1])
    assert "--> bad.tirx:16:18" in last and "B[0] = A[zz]" in last and last.endswith("^^")
    # it pickles (multiprocessing, pytest-xdist) with what it found
    again = pickle.loads(pickle.dumps(e))
    assert str(again) == str(e) and [str(d) for d in again.diagnostics] == [str(d) for d in e.diagnostics]


@pytest.mark.parametrize(
    "text, lines",
    [
        # a function whose header fails is skipped whole; its body is not reported
        (
            "@T.ir_module\nclass M:\n    @T.function\n    def a(x: T.nosuch):\n        y = q\n\n"
            "    @T.function\n    def b(A: T.Tensor((4,), T.int32)):\n        A[0] = w\n",
            [4, 9],
        ),
        # a mis-indented line, then an error after it
        (
            "@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n    A[0] = 1\n        A[1] = 2\n    A[2] = r\n",
            [4, 5],
        ),
        # an unterminated string
        ('@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n    A[0] = "abc\n    A[2] = r\n', [3, 4]),
        # a bad loop header skips the loop; uses of its var afterwards are consequences
        (
            "@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n    for i in range(q):\n        A[i] = 1\n"
            "    A[0] = i\n    A[3] = w\n",
            [3, 6],
        ),
        # a statement continued over lines
        (
            "@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n    A[0] = T.max(1,\n       q)\n    A[3] = w\n",
            [4, 5],
        ),
        # only one error: only one diagnostic
        ("@T.function\ndef f(A: T.Tensor((4,), T.bogus)):\n    A[0] = 1\n", [2]),
    ],
)
def test_recovery_cases(text, lines):
    with pytest.raises(tirx.DiagnosticError) as ei:
        tirx.loads(text)
    assert [d.span.line for d in ei.value.diagnostics] == lines


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="abT.()[]:=+-* \n\t#'\"@01", max_size=200))
def test_recovery_never_crashes_on_garbage(text):
    """Any text: loads, or a DiagnosticError whose diagnostics are located DiagnosticErrors."""
    try:
        tirx.loads(GOOD + text)
    except tirx.DiagnosticError as e:
        ds = e.diagnostics
        assert ds[0] is e and all(isinstance(d, tirx.DiagnosticError) for d in ds)
        assert len({(d.span.line, d.message) for d in ds if d.span is not None}) == len(ds)


def _located(err: str, path) -> list[str]:
    return re.findall(rf"--> {re.escape(str(path))}:(\d+):(\d+)", err)


@pytest.mark.parametrize(
    "cmd",
    [
        ["check"],
        ["roundtrip"],
        ["fmt"],
        ["fmt", "--check"],
        ["opt", "-p", "cse"],
        ["compile", "--target", "interp"],
    ],
)
def test_every_subcommand_prints_every_error(cmd, tmp_path, capsys):
    bad = tmp_path / "bad.tirx"
    bad.write_text(BAD)
    assert main([*cmd, str(bad)]) == 1
    err = capsys.readouterr().err
    assert [(int(a), int(b)) for a, b in _located(err, bad)] == [w[:2] for w in WANT]
    assert err.count("^") >= len(WANT) and f"4 errors in {bad}" in err and "Traceback" not in err
    assert bad.read_text() == BAD  # fmt never writes a file that does not load


@pytest.mark.parametrize(
    "cmd",
    [["check"], ["roundtrip"], ["fmt", "--check"], ["opt", "-p", "cse"], ["compile", "--target", "interp"]],
)
def test_exit_codes(cmd, tmp_path, capsys):
    good = tmp_path / "good.tirx"
    good.write_text(tirx.dumps(tirx.loads(GOOD)))  # formatted, for fmt --check
    if cmd[0] != "compile":  # compile's output for interp is not text
        assert main([*cmd, str(good)]) == 0
    missing = tmp_path / "missing.tirx"
    assert main([*cmd, str(missing)]) == 2
    assert "no such file" in capsys.readouterr().err
    if cmd[0] != "fmt":  # fmt formats the .tirx files below a directory
        assert main([*cmd, str(tmp_path)]) == 2
        assert "is a directory" in capsys.readouterr().err
    # compile passes options on to the target (`-arch=sm_90a`); an extra FILE is a usage error
    bad_use = [*cmd, str(good), "extra.tirx"] if cmd[0] == "compile" else [*cmd, "--no-such-flag", str(good)]
    assert main(bad_use) == 2


def test_fmt_directory_reports_errors_of_each_file(tmp_path, capsys):
    (tmp_path / "a.tirx").write_text(BAD)
    (tmp_path / "b.tirx").write_text(GOOD)
    assert main(["fmt", "--check", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert len(_located(err, tmp_path / "a.tirx")) == len(WANT)
