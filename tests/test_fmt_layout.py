"""``tirx fmt``'s layout (tools/fmt_layout.py): the user's tokens kept, whitespace redone.

The invariants, over generated kernels (tirx.testing.strategies, printed by ``tirx.dumps``)
and over every ``.tirx`` file of the corpus (tests/data, and the shared TIRx 0.1.0a4 sample
when it is there), each with its whitespace redrawn at random (indentation unit, tabs,
spaces, line breaks inside brackets, backslash continuations, one-line suites) and with
comments inserted: the result loads to the same IR, keeps every token (a trailing comma may
be added) and every comment at its place in the token stream, is a fixpoint, and does not
depend on the old whitespace.
"""

from __future__ import annotations

import glob
import os
import random
import re

import pytest
from compat_dir import COMPAT_TIRX, SHARED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx
from tirx.testing import strategies as tst
from tirx.tools import fmt
from tirx.tools.fmt_layout import _FLOAT, _INT, _OPS, _STRING, _WORD, layout

HERE = os.path.dirname(__file__)
CORPUS = sorted(
    {
        *glob.glob(os.path.join(HERE, "data", "**", "*.tirx"), recursive=True),
        *COMPAT_TIRX,
        *glob.glob(os.path.join(str(SHARED), "*.tirx")),
    }
)
HUGE = 10**6
# the text's tokens, blanks, line ends and comments, by kind (tirx.lark's lexical classes)
_TOKEN = re.compile(
    r"(?P<ws>[ \t\f]+)|(?P<cont>\\[ \t\f]*\r?\n)|(?P<nl>\r?\n)|(?P<comment>#[^\r\n]*)"
    rf"|(?P<str>{_STRING})|(?P<word>{_WORD})|(?P<num>{_FLOAT}|{_INT})|(?P<op>{_OPS})"
)
_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def _loads_ok(path: str) -> bool:
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        tirx.loads(text)
    except tirx.DiagnosticError:
        return False
    return True


LOADABLE = [p for p in CORPUS if _loads_ok(p)]


# ------------------------------------------------------------------ redrawing whitespace
def _gap(r: random.Random, a: tuple[str, str], b: tuple[str, str], depth: int) -> str:
    """What goes between tokens ``a`` and ``b`` (kind, text): spaces (none only where the
    two cannot merge), a line break inside brackets, or a backslash continuation."""
    if depth > 0 and a[1] in ("(", "[", "{", ",") and r.random() < 0.25:
        return "\n" + " " * r.randint(0, 12)
    if depth == 0 and r.random() < 0.03:
        return " \\\n" + " " * r.randint(0, 6)
    glue = (a[0] == "o") != (b[0] == "o") or a[1] in "()[]{}," or b[1] in "()[]{},"
    return " " * r.randint(0 if glue else 1, 3)


def respace(text: str, r: random.Random, comments: bool = False) -> str:
    """``text`` (one logical line per line, as ``layout(text, HUGE)`` prints) with its
    whitespace redrawn; with ``comments``, numbered comments inserted too."""
    unit = r.choice(["  ", "   ", "    ", "\t", " " * 8, "\t  "])
    lines = text.split("\n")
    # one-line suites: `if c:` + a single simple statement below it, joined
    joined: list[str] = []
    i = 0
    while i < len(lines):
        x = lines[i]
        if (
            x.rstrip().endswith(":")
            and "#" not in x
            and not x.lstrip().startswith("class")  # a class body is never on its line
            and i + 1 < len(lines)
            and r.random() < 0.3
            and _indent(lines[i + 1]) == _indent(x) + 4
            and (i + 2 >= len(lines) or not lines[i + 2].strip() or _indent(lines[i + 2]) <= _indent(x))
            and not lines[i + 1].rstrip().endswith(":")
            and not lines[i + 1].lstrip().startswith(("#", "@"))
        ):
            joined.append(x.rstrip() + " " + lines[i + 1].strip())
            i += 2
            continue
        joined.append(x)
        i += 1
    out: list[str] = []
    depth = 0
    k = 0
    for line in joined:
        body = line.lstrip(" ")
        if not body:
            out.append(r.choice(["", " ", "\t"]))
            continue
        level = _indent(line) // 4
        ind = unit * level if depth == 0 else " " * r.randint(0, 9)
        if comments and depth == 0 and r.random() < 0.15:
            k += 1
            out.append(ind + f"# c{k} before")
        parts = [ind]
        prev: tuple[str, str] | None = None
        for m in _TOKEN.finditer(body):
            kind = m.lastgroup
            assert kind is not None
            s = m.group()
            if kind == "ws":
                continue
            if kind == "comment":
                parts.append(" " * r.randint(0, 3) + s + r.choice(["", " "]))
                prev = None
                break
            tok = (kind[0], s)
            if prev is not None:
                gap = _gap(r, prev, tok, depth)
                if comments and depth > 0 and gap.startswith("\n") and r.random() < 0.5:
                    k += 1
                    gap = f"  # c{k} in\n" + " " * r.randint(0, 9) + f"# c{k} own\n" + " " * r.randint(0, 9)
                parts.append(gap)
            parts.append(s)
            if s in ("(", "[", "{"):
                depth += 1
            elif s in (")", "]", "}"):
                depth -= 1
            prev = tok
        if comments and prev is not None and depth == 0 and r.random() < 0.2:
            k += 1
            parts.append(f"  # c{k} after")
        out.append("".join(parts) + r.choice(["", " ", "\t"]))
    return "\n".join(out)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


# ------------------------------------------------------------------ the invariants
def _places(text: str) -> list[tuple[int, bool, str]]:
    """Each comment: how many tokens (commas not counted) come before it, whether code
    precedes it on its line, and its text."""
    out = []
    n = 0
    code_on_line = False
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind in ("nl", "cont"):
            code_on_line = False
        elif kind == "comment":
            out.append((n, code_on_line, m.group().rstrip()))
        elif kind in ("word", "num", "str", "op"):
            code_on_line = True
            n += m.group() != ","
    return out


def check_invariants(text: str, obj, n: int) -> str:
    out = fmt.format_text(text, line_length=n)  # raises when its own checks fail
    assert fmt.format_text(out, line_length=n) == out  # a fixpoint
    assert tirx.structural_equal(tirx.loads(out), obj)
    assert _places(out) == _places(text)  # every comment, at its place, of its kind
    assert out.endswith("\n") and "\t" not in out.split("#")[0]
    for line in out.split("\n"):
        assert line == line.rstrip() and (len(line) - len(line.lstrip(" "))) % 4 == 0
    return out


_lengths = st.one_of(st.just(100), st.integers(1, 160))


@_SETTINGS
@given(obj=st.one_of(tst.functions(max_stmts=10), tst.modules(max_stmts=6)), n=_lengths, r=st.randoms())
def test_generated_kernels_keep_their_ir_and_any_whitespace_gives_the_same_text(obj, n, r):
    text = tirx.dumps(obj)
    assert layout(text, HUGE) == text  # TIRx's spacing is fmt's: only long lines change
    want = check_invariants(text, obj, n)
    got = check_invariants(respace(text, r), obj, n)
    assert got == want  # the layout depends on the tokens only


@_SETTINGS
@given(obj=st.one_of(tst.functions(max_stmts=10), tst.modules(max_stmts=6)), n=_lengths, r=st.randoms())
def test_comments_stay_in_place(obj, n, r):
    check_invariants(respace(tirx.dumps(obj), r, comments=True), obj, n)


@_SETTINGS
@given(path=st.sampled_from(LOADABLE), n=_lengths, r=st.randoms(), comments=st.booleans())
def test_corpus_files_redrawn(path, n, r, comments):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    obj = tirx.loads(text)
    base = layout(text, HUGE)
    got = check_invariants(respace(base, r, comments), obj, n)
    if not comments:
        assert got == check_invariants(base, obj, n)


@pytest.mark.parametrize("path", LOADABLE, ids=lambda p: os.path.relpath(p, HERE))
def test_corpus_files(path):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    obj = tirx.loads(text)
    for n in (100, 40, 1):
        out = check_invariants(text, obj, n)
        if n == 100:  # every line fits but an unbreakable one (a long string literal)
            assert all(len(x) <= 100 or '"' in x for x in out.split("\n")), out
    assert layout(text, HUGE).rstrip("\n") == text.rstrip("\n")  # TIRx's spacing is fmt's


def test_the_corpus_is_there():
    assert len(LOADABLE) >= 80 and any("compat" in p for p in LOADABLE)


# ------------------------------------------------------------------ the rules, by example
def _fmt(text: str, n: int = 100) -> str:
    return fmt.format_text(text, line_length=n)


ISSUE = """\
@T.function
def scale(A: T.Tensor((256,), T.float32), B: T.Tensor((256,), T.float32)):
    with T.device_entry(2, 1, 1, 128, 1, 1):
        S = T.alloc_shared((128,), T.float32)
        S[T.cuda.thread_idx("x")] = A[T.cuda.block_idx("x") * 128 + T.cuda.thread_idx("x")]
        B[T.cuda.block_idx("x") * 128 + T.cuda.thread_idx("x")] = S[T.cuda.thread_idx("x")] * T.float32(0.90000000000000002)
"""


def test_sugar_stays_sugar_and_defaults_stay_implicit():
    out = _fmt(ISSUE)
    assert "with T.device_entry(2, 1, 1, 128, 1, 1):\n" in out
    assert "S = T.alloc_shared((128,), T.float32)\n" in out
    assert "0.90000000000000002" in out and "attrs=" not in out and "alloc_tensor" not in out
    assert out.split("\n")[:5] == ISSUE.split("\n")[:5]
    assert out.endswith(  # too long: split at the bracket with the longest contents
        "        B[\n"
        '            T.cuda.block_idx("x") * 128 + T.cuda.thread_idx("x")\n'
        '        ] = S[T.cuda.thread_idx("x")] * T.float32(0.90000000000000002)\n'
    )
    canonical = fmt.format_text(ISSUE, canonical=True)
    assert "attrs={" in canonical and "T.alloc_tensor(ty_args=[T.Tensor((128,), T.float32" in canonical
    assert canonical == tirx.dumps(tirx.loads(ISSUE))  # --canonical is tirx.dumps


def test_a_long_line_splits_at_its_longest_bracket_one_item_per_line():
    src = (
        "@T.function\n"
        "def f(A: T.Tensor((64, 64), T.float16), B: T.Tensor((64, 64), T.float16), C: T.Tensor((64,), T.int32)):\n"
        "    A[0, 0] = T.if_then_else(C[0] > 1, B[0, 0], T.float16(0))\n"
    )
    out = _fmt(src, 60)
    assert out == (
        "@T.function\n"
        "def f(\n"
        "    A: T.Tensor((64, 64), T.float16),\n"
        "    B: T.Tensor((64, 64), T.float16),\n"
        "    C: T.Tensor((64,), T.int32),\n"
        "):\n"
        "    A[0, 0] = T.if_then_else(\n"
        "        C[0] > 1, B[0, 0], T.float16(0)\n"
        "    )\n"
    )
    assert _fmt(out, 60) == out
    wide = _fmt(out, 200)  # the trailing comma fmt added keeps the def exploded; the call joins
    assert wide == out.replace(
        "(\n        C[0] > 1, B[0, 0], T.float16(0)\n    )", "(C[0] > 1, B[0, 0], T.float16(0))"
    )
    assert wide != out
    assert _fmt(src, 200) == src  # nothing to do when it fits
    narrow = _fmt(src, 30)
    assert "        C[0] > 1,\n        B[0, 0],\n        T.float16(0),\n    )\n" in narrow


def test_magic_trailing_comma_and_one_tuples():
    src = "@T.function\ndef f(A: T.Tensor((4,), T.int32),):\n    A[0] = T.max(1, 2,)\n"
    assert _fmt(src) == (
        "@T.function\ndef f(\n    A: T.Tensor((4,), T.int32),\n):\n    A[0] = T.max(\n        1,\n        2,\n    )\n"
    )
    one = "@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n    A[0] = 1\n"
    assert _fmt(one) == one  # (4,) is a 1-tuple, not a magic comma


def test_long_expressions_inside_brackets_split_before_operators():
    src = (
        "@T.function\ndef f(A: T.Tensor((4,), T.int32), n: T.int32):\n"
        "    A[0] = T.max(n * 1000000 + n * 2000000 + n * 3000000 - n * 4000000, 7)\n"
    )
    assert _fmt(src, 40) == (
        "@T.function\ndef f(\n    A: T.Tensor((4,), T.int32),\n    n: T.int32,\n):\n"
        "    A[0] = T.max(\n"
        "        n * 1000000\n"
        "        + n * 2000000\n"
        "        + n * 3000000\n"
        "        - n * 4000000,\n"
        "        7,\n"
        "    )\n"
    )


def test_spaces_indentation_tabs_blank_lines_continuations_and_suites():
    src = (
        "\n\n# lead\n\n\n\n"
        "@T.function\n\n"
        "def f(A:T.Tensor( (4,),T.int32 ),n :T.int32)->T.int32:\n"
        "\tfor i in range(0,4) :\n"
        "\t\tA[i]=(i*2)+-n  # why\n\n\n\n"
        "\tx : T.int32 = T.max(n,\\\n   1)\n"
        "\tif x>1 : return x\n"
        "\telse: return T.Let(v:=x+1,v*2)\n\n\n"
    )
    assert _fmt(src) == (
        "# lead\n\n\n"
        "@T.function\n"
        "def f(A: T.Tensor((4,), T.int32), n: T.int32) -> T.int32:\n"
        "    for i in range(0, 4):\n"
        "        A[i] = (i * 2) + -n  # why\n\n"
        "    x: T.int32 = T.max(n, 1)\n"
        "    if x > 1:\n"
        "        return x\n"
        "    else:\n"
        "        return T.Let(v := x + 1, v * 2)\n"
    )


def test_comments_keep_their_block_by_their_column():
    src = (
        "@T.function\ndef f(A: T.Tensor((4,), T.int32), n: T.int32):\n"
        "  if n > 1:\n"
        "     A[0] = 1\n"
        "     # still in the then-branch\n"
        "  # before else\n"
        "  else:\n"
        "     A[0] = 2\n"
        "# at the end of f, at its body's level\n"
    )
    assert _fmt(src) == (
        "@T.function\ndef f(A: T.Tensor((4,), T.int32), n: T.int32):\n"
        "    if n > 1:\n"
        "        A[0] = 1\n"
        "        # still in the then-branch\n"
        "    # before else\n"
        "    else:\n"
        "        A[0] = 2\n"
        "# at the end of f, at its body's level\n"
    )


def test_comments_inside_brackets_stay_where_they_were():
    src = (
        "@T.function\n"
        "def f(A: T.Tensor((4,), T.int32),  # about A\n"
        "      # about n\n"
        "      n: T.int32):\n"
        "    A[0] = T.max(1,  # one\n"
        "                 2\n"
        "                 # after two\n"
        "                 )\n"
    )
    assert _fmt(src) == (
        "@T.function\n"
        "def f(\n"
        "    A: T.Tensor((4,), T.int32),  # about A\n"
        "    # about n\n"
        "    n: T.int32,\n"
        "):\n"
        "    A[0] = T.max(\n"
        "        1,  # one\n"
        "        2,\n"
        "        # after two\n"
        "    )\n"
    )
