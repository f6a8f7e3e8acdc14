"""``tirx fmt --canonical`` keeps comments (``loads(keep_comments=True)`` / ``dumps``); fmt's
options. The default layout (only whitespace changes) is tested in test_fmt_layout.py."""

from __future__ import annotations

import glob
import io
import os
import sys

import pytest
from compat_dir import COMPAT_DIR, COMPAT_TIRX
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx
from tirx.printer import attach, comments_of
from tirx.surface.comments import scan
from tirx.testing import strategies as tst
from tirx.tools import fmt as fmt_mod
from tirx.tools.cli import main

HERE = os.path.dirname(__file__)
GOLDEN = sorted(glob.glob(os.path.join(HERE, "data", "tirx_golden", "**", "*.tirx"), recursive=True))

SRC = """# Copyright 2026 The Authors
# SPDX-License-Identifier: Apache-2.0

from __future__ import annotations

# from tvm_tirx.script import tirx as T

# the module
@T.ir_module  # decorator
class Module:  # class line
    # f adds
    @T.function
    def f(A: T.Tensor((4,), T.int32),
          # about n
          n: T.int32):  # def line
        # loop over A
        for i in range(4):  # the loop
            A[i] = i  # store "#" not a comment
        if n > 1:
            A[0] = (1 +  # one
               2)
            # end of then
        # before elif
        elif n > 2:  # elif
            A[0] = 2
        # before else
        else:  # else
            A[0] = 3
            # end of else
        # end of f

    # g next
    @T.function(private=True)
    def g(A: T.Tensor((4,), T.int32)):
        A[1] = 5  # five
# the end
"""

WANT = """# Copyright 2026 The Authors
# SPDX-License-Identifier: Apache-2.0

from __future__ import annotations

# from tvm_tirx.script import tirx as T

# the module
@T.ir_module  # decorator
class Module:  # class line
    # f adds
    @T.function
    # about n
    def f(A: T.Tensor((4,), T.int32), n: T.int32):  # def line
        # loop over A
        for i in range(4):  # the loop
            A[i] = i  # store "#" not a comment
        if n > 1:
            A[0] = 3  # one
            # end of then
        else:
            # before elif
            if n > 2:  # elif
                A[0] = 2
            # before else
            else:  # else
                A[0] = 3
                # end of else
        # end of f

    # g next
    @T.function(private=True)
    def g(A: T.Tensor((4,), T.int32)):
        A[1] = 5  # five
# the end
"""


def _texts(text: str) -> list[str]:
    return [c.text for c in scan(text)]


def test_every_kind_of_place_round_trips():
    m = tirx.loads(SRC, "m.tirx", keep_comments=True)
    out = tirx.dumps(m)
    assert out == WANT
    assert _texts(out) == _texts(SRC)
    again = tirx.loads(out, keep_comments=True)
    assert tirx.dumps(again) == out  # a fixpoint
    assert fmt_mod.format_text(out, canonical=True) == out
    assert fmt_mod.format_text(out) == out  # the layout keeps it too


def test_comments_do_not_change_structural_equality_or_hash():
    with_c = tirx.loads(SRC, keep_comments=True)
    without = tirx.loads(SRC)
    assert comments_of(with_c) is not None and comments_of(without) is None
    assert tirx.structural_equal(with_c, without)
    assert tirx.structural_hash(with_c) == tirx.structural_hash(without)
    assert "# the loop" not in tirx.dumps(without)  # the plain print is the canonical one
    assert tirx.dumps(without) == tirx.dumps(tirx.loads(tirx.dumps(with_c)))


def test_scan_ignores_hash_in_strings():
    cs = scan("x = \"a # b\"  # real\ny = '#'\n  # full\n")
    assert [(c.line, c.col, c.text, c.full_line) for c in cs] == [
        (1, 14, "# real", False),
        (3, 3, "# full", True),
    ]


def test_a_comment_of_a_statement_that_is_gone_is_refused():
    src = (
        "@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n    A[0] = 1\n    # why two\n    A[1] = 2  # two\n"
    )
    f = tirx.loads(src, "k.tirx", keep_comments=True)
    g = tirx.ir.function.Function(f.name, f.params, f.body.stmts[0], f.buffer_map)  # a pass dropped A[1]
    attach(g, comments_of(f))
    with pytest.raises(tirx.DiagnosticError) as ei:
        tirx.dumps(g)
    assert "k.tirx:4:5" in str(ei.value) and "cannot place" in str(ei.value)
    attach(g, None)
    assert "#" not in tirx.dumps(g).split("import tirx as T", 1)[1]
    with pytest.raises(TypeError, match="obj"):
        attach(f.body, comments_of(f))
    with pytest.raises(TypeError, match="table"):
        attach(f, {})


def test_fmt_refuses_to_write_a_comment_it_cannot_place(tmp_path, monkeypatch, capsys):
    from tirx.grammar import _comments

    p = tmp_path / "k.tirx"
    text = "@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n      A[0] = 1  # keep me\n"
    p.write_text(text)
    monkeypatch.setattr(_comments, "_place", lambda *a: None)  # placement fails for every comment
    assert main(["fmt", "--canonical", str(p)]) == 1
    err = capsys.readouterr().err
    assert f"{p}:3:17" in err and "refusing to drop it" in err
    assert p.read_text() == text  # nothing written


def test_fmt_keeps_comments_in_files(tmp_path, capsys):
    p = tmp_path / "a.tirx"
    p.write_text(SRC)
    assert main(["fmt", "--check", "--canonical", str(p)]) == 1
    assert main(["fmt", "--canonical", str(p)]) == 0
    assert p.read_text() == WANT
    assert main(["fmt", "--check", "--canonical", str(p)]) == 0
    assert "1 file(s) reformatted" in capsys.readouterr().err


# ------------------------------------------------------------------ hypothesis
_WORD = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=0, max_size=12)
_EXCLUDED = ("pass", "T.func_attr(")


def _code_lines(lines: list[str], start: int) -> list[int]:
    return [i for i in range(start, len(lines)) if lines[i].strip() and not lines[i].lstrip().startswith("#")]


def _next_code(lines: list[str], i: int) -> str | None:
    for x in lines[i + 1 :]:
        s = x.strip()
        if s and not s.startswith("#"):
            return s
    return None


@st.composite
def _commented(draw):
    obj = draw(st.one_of(tst.functions(max_stmts=12), tst.modules(max_stmts=8)))
    text = tirx.dumps(obj)
    lines = text.rstrip("\n").split("\n")
    first = next(i for i, x in enumerate(lines) if x.startswith("@"))
    code = _code_lines(lines, first)
    n = draw(st.integers(1, 8))
    picks = sorted(
        draw(
            st.lists(
                st.tuples(st.sampled_from(code), st.sampled_from(["before", "after", "trail"])),
                min_size=n,
                max_size=n,
            )
        )
    )
    out: list[str] = []
    by_line: dict[int, list[tuple[str, str]]] = {}
    for k, (i, mode) in enumerate(picks, 1):
        by_line.setdefault(i, []).append((mode, f"# c{k} {draw(_WORD)}".rstrip()))
    for i, line in enumerate(lines):
        ind = line[: len(line) - len(line.lstrip())]
        marks = by_line.get(i, [])
        for mode, c in marks:
            if mode == "before":
                out.append(ind + c)
        trail = [c for mode, c in marks if mode == "trail"][:1]
        out.append(line + (f"  {trail[0]}" if trail and "#" not in line else ""))
        for mode, c in marks:
            if mode == "after" or (mode == "trail" and c not in trail) or (mode == "trail" and "#" in line):
                out.append(ind + c)
    return obj, "\n".join(out) + "\n"


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(_commented())
def test_fmt_keeps_every_inserted_comment_in_order(case):
    obj, text = case
    out = fmt_mod.format_text(text, canonical=True)
    assert _texts(out) == _texts(text)  # every comment, in order
    assert tirx.structural_equal(tirx.loads(out), obj)
    assert fmt_mod.format_text(out, canonical=True) == out  # formatting is a fixpoint
    src, dst = text.split("\n"), out.split("\n")
    where = {}
    for i, x in enumerate(dst):
        for c in scan(x):
            where[c.text] = i
    for i, x in enumerate(src):
        cs = scan(x)
        if not cs:
            continue
        c = cs[0]
        j = where[c.text]
        if c.full_line:
            nxt = _next_code(src, i)
            prev = next(
                (y.strip() for y in reversed(src[:i]) if y.strip() and not y.strip().startswith("#")), ""
            )
            if (
                nxt is None
                or nxt.startswith(_EXCLUDED)
                or prev.startswith(("@", "def "))
                or nxt.startswith("class")
            ):
                continue
            assert _next_code(dst, j) == nxt  # still right before the same statement
        else:
            code = x[: c.col - 1].strip()
            if code.startswith(_EXCLUDED):
                continue
            assert dst[j][: dst[j].index(c.text)].strip() == code  # still on the same line


# ------------------------------------------------------------------ fmt --check on TIRx's text
@pytest.mark.parametrize("path", COMPAT_TIRX, ids=os.path.basename)
def test_fmt_check_passes_on_tirx_printed_compat_files(path, capsys):
    assert main(["fmt", "--check", "--canonical", path]) == 0, capsys.readouterr()
    assert main(["fmt", "--check", "--canonical", str(COMPAT_DIR)]) == 0  # the folder too
    # the layout's spacing is TIRx's: only lines over the line length change
    assert main(["fmt", "--check", "--line-length", "100000", str(COMPAT_DIR)]) == 0


#: golden files whose TIRx text fmt rewrites, with why (documented in docs/text_format.md)
FMT_REWRITES: dict[str, str] = {}  # golden files fmt rewrites (to the same IR): none now


def test_fmt_check_on_the_tirx_golden_files(capsys):
    assert GOLDEN
    # the raw forms TIRx prints for constant operands (T.LShift(3, 30)) are another spelling
    # of tirx's canonical one (T.int32(3) << 30): accepted with --same-ir
    same = [g for g in GOLDEN if os.path.basename(g) not in FMT_REWRITES]
    assert main(["fmt", "--check", "--canonical", "--same-ir", *same]) == 0, capsys.readouterr()
    for g in GOLDEN:
        if os.path.basename(g) in FMT_REWRITES:  # rewritten, and to the same IR
            assert main(["fmt", "--check", "--canonical", "--same-ir", g]) == 1
            with open(g) as fh:
                text = fh.read()
            out = fmt_mod.format_text(text, canonical=True)
            tirx.assert_structural_equal(tirx.loads(out), tirx.loads(text))
    capsys.readouterr()
    assert main(["fmt", "--check", "--canonical", os.path.join(HERE, "data", "tirx_golden")]) in (0, 1)
    # without --canonical every golden file keeps its text (TIRx's spacing is fmt's)
    assert main(["fmt", "--check", "--line-length", "100000", *GOLDEN]) == 0, capsys.readouterr()
    capsys.readouterr()


def test_tirx_spellings_count_as_formatted():
    with open(os.path.join(COMPAT_DIR, "mutable_scalars.tirx")) as fh:
        text = fh.read()
    assert "0.90000000000000002" in text and not text.endswith("\n")
    out = fmt_mod.format_text(text, canonical=True)
    assert out != text and fmt_mod.equivalent(text, out)
    assert not fmt_mod.equivalent(text.replace("0.90000000000000002", "0.9000000000000001"), out)
    assert not fmt_mod.equivalent(text + "\n\n", out)
    assert fmt_mod.equivalent('x = "0.50"  # 1.0\n', 'x = "0.50"  # 1.0')
    assert not fmt_mod.equivalent('x = "0.50"\n', 'x = "0.5"\n')  # strings are not floats
    assert not fmt_mod.same_layout("    A[0] = (i * 2)\n", "A[0] = i * 2\n")


# ------------------------------------------------------------------ fmt options
UGLY = "@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n  A[0] = (1)   # one\n"


def test_fmt_diff_writes_nothing(tmp_path, capsys):
    p = tmp_path / "u.tirx"
    p.write_text(UGLY)
    assert main(["fmt", "--diff", str(p)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"--- {p}\t(original)\n+++ {p}\t(formatted)\n@@")
    assert "-  A[0] = (1)   # one\n" in out and "+    A[0] = (1)  # one\n" in out  # the user's (1)
    assert main(["fmt", "--diff", "--canonical", str(p)]) == 0
    assert "+    A[0] = 1  # one\n" in capsys.readouterr().out  # the canonical print
    assert p.read_text() == UGLY
    assert main(["fmt", "--diff", "--check", str(p)]) == 1


def test_fmt_stdin_to_stdout(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(UGLY.encode())))
    assert main(["fmt", "-"]) == 0
    out = capsys.readouterr().out
    assert out == "@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n    A[0] = (1)  # one\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(UGLY.encode())))
    assert main(["fmt", "--canonical", "-"]) == 0
    assert capsys.readouterr().out.endswith("def f(A: T.Tensor((4,), T.int32)):\n    A[0] = 1  # one\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"@T.function\ndef f(:\n")))
    assert main(["fmt", "-"]) == 1
    assert "<stdin>:2:7" in capsys.readouterr().err


def test_fmt_recurses_into_directories_and_globs(tmp_path, capsys):
    (tmp_path / "sub" / "deep").mkdir(parents=True)
    a = tmp_path / "a.tirx"
    b = tmp_path / "sub" / "deep" / "b.tirx"
    other = tmp_path / "sub" / "notes.txt"
    for p in (a, b, other):
        p.write_text(UGLY)
    assert main(["fmt", "--check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"would reformat {a}" in out and f"would reformat {b}" in out and "notes" not in out
    assert main(["fmt", str(tmp_path / "**" / "*.tirx")]) == 0
    assert b.read_text().endswith("    A[0] = (1)  # one\n") and other.read_text() == UGLY
    assert main(["fmt", "--check", str(tmp_path)]) == 0
    assert main(["fmt", str(tmp_path / "missing.tirx")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_fmt_accepts_tirx_else_if_for_elif_chains():
    """TIRx prints an elif chain as else: + a nested if (same IR); --check accepts either."""
    from tirx.tools.fmt import equivalent

    canonical = (
        "if a:\n    x\nelif b:\n    if q:\n        z\n    else:\n        t\nelif c:\n    w\nelse:\n    v\ny\n"
    )
    tirx_style = (
        "if a:\n    x\nelse:\n    if b:\n        if q:\n            z\n        else:\n            t\n"
        "    else:\n        if c:\n            w\n        else:\n            v\ny\n"
    )
    assert equivalent(tirx_style, canonical)
    assert not equivalent(tirx_style.replace("            w", "            u"), canonical)
    assert not equivalent(tirx_style.replace("\ny\n", "\n    y\n"), canonical)  # y moved into the else
