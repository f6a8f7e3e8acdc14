"""``tirx fmt`` on the command line: line length and pyproject.toml, ``--canonical``, colour,
and the refusal to write a layout that fails its own checks (the file is left as it was)."""

from __future__ import annotations

import io
import os
import sys

import pytest

import tirx
from tirx.tools import colour, fmt
from tirx.tools.cli import main

LONG = (
    "@T.function\n"
    "def f(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.float32), n: T.int32):\n"
    "    for i in range(64):\n"
    "        B[i] = A[i] * 2\n"
)  # the def line is 80 characters
WRAPPED = (
    "@T.function\n"
    "def f(\n"
    "    A: T.Tensor((64,), T.float32),\n"
    "    B: T.Tensor((64,), T.float32),\n"
    "    n: T.int32,\n"
    "):\n"
    "    for i in range(64):\n"
    "        B[i] = A[i] * 2\n"
)


@pytest.fixture(autouse=True)
def _plain_terminal(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TERM", raising=False)


def test_line_length_flag(tmp_path, capsys):
    p = tmp_path / "k.tirx"
    p.write_text(LONG)
    assert main(["fmt", "--check", str(p)]) == 0  # 80 <= 100
    assert main(["fmt", "--check", "--line-length", "70", str(p)]) == 1
    assert main(["fmt", "--line-length", "70", str(p)]) == 0
    assert p.read_text() == WRAPPED
    assert main(["fmt", "--check", str(p)]) == 0  # the trailing comma keeps it exploded
    for bad in ("0", "-3", "x"):
        assert main(["fmt", "--line-length", bad, str(p)]) == 2
    assert "positive integer" in capsys.readouterr().err


def test_line_length_from_the_nearest_pyproject_with_a_tool_tirx_table(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.tirx]\nline-length = 70\n')
    sub = tmp_path / "pkg" / "kernels"
    sub.mkdir(parents=True)
    (tmp_path / "pkg" / "pyproject.toml").write_text("[tool.ruff]\nline-length = 50\n")  # no [tool.tirx]
    p = sub / "k.tirx"
    p.write_text(LONG)
    assert fmt.config_line_length(str(p)) == 70
    assert main(["fmt", str(p)]) == 0
    assert p.read_text() == WRAPPED
    p.write_text(LONG)
    assert main(["fmt", "--line-length", "100", str(p)]) == 0 and p.read_text() == LONG  # the flag wins
    monkeypatch.chdir(sub)  # stdin: from the current directory
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(LONG.encode())))
    capsys.readouterr()
    assert main(["fmt", "-"]) == 0
    assert capsys.readouterr().out == WRAPPED
    # a nearer [tool.tirx] wins; without line-length it is the default
    (tmp_path / "pkg" / "pyproject.toml").write_text("[tool.tirx]\n")
    assert fmt.config_line_length(str(p)) == 100


def test_a_bad_configuration_is_an_error_and_nothing_is_written(tmp_path, capsys):
    p = tmp_path / "k.tirx"
    p.write_text(LONG.replace("    for", "  for").replace("        B", "    B"))
    before = p.read_text()
    for value in ('"wide"', "0", "true"):
        (tmp_path / "pyproject.toml").write_text(f"[tool.tirx]\nline-length = {value}\n")
        assert main(["fmt", str(p)]) == 1
        err = capsys.readouterr().err
        assert (
            f"error: {tmp_path / 'pyproject.toml'}: [tool.tirx] line-length must be a positive integer" in err
        )
        assert p.read_text() == before
    (tmp_path / "pyproject.toml").write_text("[tool.tirx\n")
    assert main(["fmt", str(p)]) == 1
    assert "not valid TOML" in capsys.readouterr().err and p.read_text() == before


def test_the_toml_fallback_reads_the_one_key():
    text = '[tool.other]\nline-length = 1\n[tool.tirx]  # ours\n"line-length" = 88  # wide\nx = "y"\n[next]\n'
    assert fmt._tool_tirx_by_hand(text) == {"line-length": 88, "x": '"y"'}
    assert fmt._tool_tirx_by_hand("[tool.ruff]\n") is None


def test_canonical_is_what_tirx_prints(tmp_path, capsys):
    src = "# top\n@T.function\ndef f(A: T.Tensor((4,), T.float32)):\n    with T.device_entry(1, 1, 1, 4, 1, 1):\n        S = T.alloc_shared((4,), T.float32)\n        A[0] = S[0]\n"
    p = tmp_path / "k.tirx"
    p.write_text(src)
    assert main(["fmt", "--check", str(p)]) == 0  # nothing to lay out
    assert main(["fmt", "--canonical", str(p)]) == 0
    assert p.read_text() == tirx.dumps(tirx.loads(src, keep_comments=True))
    assert "T.alloc_tensor(" in p.read_text() and "attrs=" in p.read_text()
    capsys.readouterr()


# ------------------------------------------------------------------ the safety net
MOVED = "@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n    for i in range(2):\n        A[0] = 1  # one\n        A[1] = 2\n"
BAD_LAYOUTS = {  # what a broken layout engine could return, and why fmt refuses it
    "would change its tokens": lambda t, n: t.replace("A[0] = 1", "A[0] = 2"),
    "would lose, change or reorder a comment": lambda t, n: t.replace("  # one", ""),
    "is not stable": lambda t, n: t + "\n",
    "would load to different IR": lambda t, n: MOVED,  # A[1] = 2 moved into the loop
}
SRC = "@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n  for i in range(2):\n      A[0] = 1  # one\n  A[1] = 2\n"


@pytest.mark.parametrize("why", list(BAD_LAYOUTS))
def test_a_layout_that_fails_a_check_is_refused_and_the_file_kept(why, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(fmt, "layout", BAD_LAYOUTS[why])
    with pytest.raises(tirx.DiagnosticError, match=why):
        fmt.format_text(SRC)
    p = tmp_path / "k.tirx"
    p.write_text(SRC)
    assert main(["fmt", str(p)]) == 1
    err = capsys.readouterr().err
    assert f"error: {p}: tirx fmt refuses to write this file: its formatted text {why}" in err
    assert "left as it" in err and "Traceback" not in err
    assert p.read_text() == SRC
    assert main(["fmt", "--check", str(p)]) == 1
    assert main(["fmt", "--canonical", str(p)]) == 0  # the canonical print does not use it


def test_a_layout_that_does_not_load_is_refused(monkeypatch):
    monkeypatch.setattr(fmt, "layout", lambda t, n: t.replace("  A[1] = 2", "A[1] = 2"))
    with pytest.raises(tirx.DiagnosticError, match="would not load"):
        fmt.format_text(SRC)


def test_the_layout_of_the_example_passes_its_checks():
    out = fmt.format_text(SRC)
    assert out == MOVED.replace("        A[1]", "    A[1]")


# ------------------------------------------------------------------ colour
class _Tty(io.StringIO):
    def isatty(self) -> bool:
        if self.closed:
            raise ValueError("I/O operation on closed file")
        return True


def test_colour_is_on_for_a_terminal_only(monkeypatch):
    tty, pipe = _Tty(), io.StringIO()
    assert colour.enabled(tty) and not colour.enabled(pipe)
    assert colour.enabled(pipe, "always") and not colour.enabled(tty, "never")
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour.enabled(tty) and colour.enabled(tty, "always")
    monkeypatch.setenv("NO_COLOR", "")  # empty: not set (no-color.org)
    assert colour.enabled(tty)
    monkeypatch.setenv("TERM", "dumb")
    assert not colour.enabled(tty)
    with pytest.raises(ValueError, match="mode"):
        colour.enabled(tty, "sometimes")
    closed = _Tty()
    closed.close()
    monkeypatch.delenv("TERM")
    assert not colour.enabled(closed)


UGLY = "@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n  A[0] = (1)   # one\n"


def test_diff_is_coloured_on_a_terminal(tmp_path, monkeypatch):
    p = tmp_path / "u.tirx"
    p.write_text(UGLY)
    out = _Tty()
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["fmt", "--diff", str(p)]) == 0
    text = out.getvalue()
    assert f"\x1b[1m--- {p}\t(original)\x1b[0m\n" in text
    assert (
        "\x1b[31m-  A[0] = (1)   # one\x1b[0m\n" in text and "\x1b[32m+    A[0] = (1)  # one\x1b[0m\n" in text
    )
    assert "\x1b[36m@@" in text
    monkeypatch.setenv("NO_COLOR", "1")
    out.truncate(0)
    out.seek(0)
    assert main(["fmt", "--diff", str(p)]) == 0
    assert "\x1b[" not in out.getvalue() and "+    A[0] = (1)  # one\n" in out.getvalue()


def test_diff_is_plain_in_a_pipe_unless_asked(tmp_path, capsys):
    p = tmp_path / "u.tirx"
    p.write_text(UGLY)
    assert main(["fmt", "--diff", str(p)]) == 0
    assert "\x1b[" not in capsys.readouterr().out
    assert main(["fmt", "--diff", "--color", "always", str(p)]) == 0
    assert "\x1b[32m+" in capsys.readouterr().out


BAD = "@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n    A[0] = y\n    A[1] = z\n"


@pytest.mark.parametrize("extra", [[], ["--canonical"]])
def test_diagnostics_are_coloured_on_a_terminal(extra, tmp_path, monkeypatch, capsys):
    p = tmp_path / "bad.tirx"
    p.write_text(BAD)
    assert main(["fmt", *extra, str(p)]) == 1
    plain = capsys.readouterr().err
    assert "\x1b[" not in plain and f"--> {p}:3:12" in plain and "2 errors in" in plain
    err = _Tty()
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["fmt", *extra, str(p)]) == 1
    text = err.getvalue()
    assert "\x1b[1m\x1b[31merror:\x1b[0m\x1b[1m undefined name 'y'\x1b[0m" in text
    assert f"\x1b[1m\x1b[34m-->\x1b[0m {p}:3:12" in text
    assert "\x1b[1m\x1b[31m^\x1b[0m" in text  # the caret
    assert "0 file(s) reformatted, 0 unchanged, 1 failed" in text
    assert p.read_text() == BAD
    # uncoloured, the message is the same text
    assert _strip(text).replace("0 file(s) reformatted, 0 unchanged, 1 failed\n", "") == plain.replace(
        "0 file(s) reformatted, 0 unchanged, 1 failed\n", ""
    )


def _strip(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_painter_leaves_text_alone_when_off():
    off = colour.Painter(False)
    diag = "error: x\n --> a.tirx:1:2\n  |\n1 | ab\n  |  ^"
    assert off.diagnostic(diag) == diag and off.diff_line("+x") == "+x" and off.paint("x", colour.RED) == "x"
    on = colour.Painter(True)
    assert _strip(on.diagnostic(diag)) == diag
    assert (
        _strip(on.diff(["--- a", "+++ b", "@@ -1 +1 @@", "-x", "+y", " z"]))
        == "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n z\n"
    )


def test_help_lists_the_new_options(capsys):
    assert main(["fmt", "--help"]) == 0
    out = capsys.readouterr().out
    for opt in ("--line-length", "--canonical", "--color", "--check", "--diff", "--same-ir"):
        assert opt in out
    assert os.environ.get("NO_COLOR") is None
