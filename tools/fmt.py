"""``tirx fmt``: lay out ``.tirx`` files, keeping the text the user wrote.

By default (``tools/fmt_layout.py``) only whitespace changes: every token stays as it was
spelled (``T.alloc_shared(...)`` stays, ``with T.device_entry(2, 1, 1, 128, 1, 1):`` stays,
defaults stay implicit, floats keep their digits), lines are re-indented, spaces normalised
and lines longer than the line length wrapped at brackets, and every comment stays where it
was. The line length is ``--line-length``, else ``line-length`` in the ``[tool.tirx]`` table
of the nearest ``pyproject.toml`` that has one (looking up from each file; for stdin, from
the current directory), else 100. Before anything is written the result is checked: it
must hold the same tokens (a trailing comma may be added where a bracket is exploded) and
comments, load to IR structurally equal to the input's, and be a fixpoint (formatting it
again changes nothing); if not, the file is refused with an error and left as it was.

``--canonical`` is the old behaviour: each file is loaded with ``keep_comments=True`` and
printed back (``tirx.dumps``), exactly as TIRx prints it, comments kept (a comment the
printer cannot place is an error at its ``file:line``, never a silent loss). There, text
that differs from the canonical print only in how a float is spelled (TIRx writes 17
significant digits: ``0.90000000000000002`` for ``0.9``), in an ``elif`` chain written as
TIRx does, or (``--same-ir``) in how expressions are spelled counts as formatted. In both
modes a missing final newline alone does not count as a change.

Arguments: files, directories (every ``*.tirx`` below them), glob patterns (``**``
recurses), and ``-`` (stdin to stdout). ``--diff`` and error messages are coloured on a
terminal (``--color``, ``NO_COLOR``: ``tools/colour.py``). Exit codes: 0 done / nothing to
change, 1 a file would be reformatted (``--check``) or could not be formatted, 2 usage (a
missing path). docs/fmt.md has the rules.
"""

from __future__ import annotations

import argparse
import difflib
import glob
import importlib
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from tirx.tools.colour import MODES, Painter, enabled
from tirx.tools.fmt_layout import LayoutError, layout, tokens

__all__ = [
    "DEFAULT_LINE_LENGTH",
    "add_arguments",
    "config_line_length",
    "equivalent",
    "format_text",
    "run",
    "same_layout",
]

DEFAULT_LINE_LENGTH = 100

# a string literal or a comment (left alone), or a float literal (normalized to its value)
_FLOAT_OR_SKIP = re.compile(
    r"\"(?:[^\"\\\n]|\\.)*\"?|'(?:[^'\\\n]|\\.)*'?|#[^\n]*"
    r"|(?<![\w.])(?P<f>(?:\d[\d_]*)?\.\d[\d_]*(?:[eE][-+]?\d+)?|\d[\d_]*\.(?:[eE][-+]?\d+)?|\d[\d_]*[eE][-+]?\d+)"
)


def _float_repl(m: re.Match) -> str:
    f = m.group("f")
    if f is None:
        return m.group()
    try:
        return repr(float(f.replace("_", "")))
    except (ValueError, OverflowError):  # pragma: no cover - the pattern only matches floats
        return f


_ELIF = re.compile(r"([ ]*)elif\b(.*)$")
_CONT = re.compile(r"[ ]*(elif\b|else\s*:)")


def _unelif(text: str) -> str:
    """``elif c:`` chains written as TIRx prints them: ``else:`` and a nested ``if c:`` (the
    same IR), so a file TIRx printed and tirx's canonical print compare line for line."""
    out: list[str] = []
    open_: list[int] = []  # indents of the elif lines turned into else + nested if
    for line in text.split("\n"):
        body = line.lstrip(" ")
        ind = len(line) - len(body)
        if body and not body.startswith("#"):
            cont = bool(_CONT.match(line))
            while open_ and (ind < open_[-1] or (ind == open_[-1] and not cont)):
                open_.pop()
        shift = 4 * sum(1 for b in open_ if b < ind or (b == ind and body and _CONT.match(line)))
        m = _ELIF.match(line)
        if m is not None:
            pad = " " * (ind + shift)
            out += [f"{pad}else:", f"{pad}    if{m.group(2)}"]
            open_.append(ind)
            continue
        out.append(" " * shift + line if body else line)
    return "\n".join(out)


def _normal(text: str) -> str:
    if not text.endswith("\n"):
        text += "\n"
    return _unelif(_FLOAT_OR_SKIP.sub(_float_repl, text))


def equivalent(text: str, canonical: str) -> bool:
    """Whether ``text`` counts as formatted: ``canonical`` itself, or the same up to the
    spelling of float literals of equal value, ``else:`` + nested ``if`` for ``elif`` (as TIRx
    prints a chain) and a missing final newline."""
    return text == canonical or _normal(text) == _normal(canonical)


_HEAD = re.compile(r"[ \t]*[^ \t\[(:=]*")


def same_layout(text: str, canonical: str) -> bool:
    """The ``--same-ir`` test: line for line the same indentation, first word and comment;
    only expression spellings differ (the IR is the same: ``canonical`` prints it)."""
    from tirx.surface.comments import scan

    a = _normal(text).split("\n")
    b = _normal(canonical).split("\n")
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x == y:
            continue
        hx, hy = _HEAD.match(x), _HEAD.match(y)  # the pattern matches every line (maybe empty)
        if (
            hx is None
            or hy is None
            or hx.group() != hy.group()
            or [c.text for c in scan(x)] != [c.text for c in scan(y)]
        ):
            return False
    return True


def format_text(
    text: str,
    source_name: str = "<string>",
    *,
    line_length: int = DEFAULT_LINE_LENGTH,
    canonical: bool = False,
) -> str:
    """``text`` formatted as ``tirx fmt`` does: the user's tokens with new whitespace, or
    (``canonical``) the canonical print, comments kept. DiagnosticError: the text does not
    load, a comment cannot be placed (canonical), or the layout failed its checks (then
    nothing is returned: the caller keeps the text it has)."""
    if canonical:
        return _format(text, source_name)[1]
    return _format_kept(text, source_name, line_length)


def _format(text: str, source_name: str) -> tuple[Any, str]:
    """The canonical form: ``(loaded object, tirx.dumps of it)``, comments kept."""
    import tirx

    obj = tirx.loads(text, source_name=source_name, keep_comments=True)
    return obj, tirx.dumps(obj)


def _refused(source_name: str, why: str) -> Exception:
    import tirx

    message = (
        f"tirx fmt refuses to write this file: its formatted text {why}; the file is left as it "
        "was. This is a bug in tirx fmt; please report it (`tirx fmt --canonical` still "
        "prints the canonical form)"
    )
    return tirx.DiagnosticError(message, None, f"error: {source_name}: {message}")


def _format_kept(text: str, source_name: str, line_length: int) -> str:
    """The layout of ``text`` (``fmt_layout.layout``), checked before it is returned."""
    import tirx

    obj = tirx.loads(text, source_name=source_name)  # every error of the input, located
    try:
        out = layout(text, line_length)
    except LayoutError as e:
        raise _refused(source_name, f"could not be laid out ({e})") from e
    if out != text:
        _check_layout(text, out, obj, source_name, line_length)
    return out


def _same_tokens(a: str, b: str) -> bool:
    """``b`` holds ``a``'s tokens in order, plus at most trailing commas before closers."""
    x, y = tokens(a), tokens(b)
    if x == y:
        return True
    i = 0
    for k, t in enumerate(y):
        if i < len(x) and x[i] == t:
            i += 1
        elif not (t == "," and k + 1 < len(y) and y[k + 1] in (")", "]", "}")):
            return False
    return i == len(x)


_COMMENT_OR_STRING = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|(#[^\r\n]*)")


def _comments(text: str) -> list[str]:
    return [m.group(1).rstrip() for m in _COMMENT_OR_STRING.finditer(text) if m.group(1)]


def _check_layout(text: str, out: str, obj: Any, source_name: str, line_length: int) -> None:
    """The safety net: raise (refuse) unless ``out`` keeps ``text``'s tokens and comments,
    loads to IR structurally equal to ``obj`` and is a fixpoint of the layout."""
    import tirx

    if not _same_tokens(text, out):
        raise _refused(source_name, "would change its tokens")
    if _comments(text) != _comments(out):
        raise _refused(source_name, "would lose, change or reorder a comment")
    try:
        stable = layout(out, line_length) == out
    except LayoutError:
        stable = False
    if not stable:
        raise _refused(source_name, "is not stable (formatting it again changes it)")
    try:
        again = tirx.loads(out, source_name=source_name)
    except tirx.DiagnosticError as e:
        first = str(e).split("\n", 1)[0]
        raise _refused(source_name, f"would not load ({first})") from e
    if not tirx.structural_equal(again, obj):
        raise _refused(source_name, "would load to different IR")


# ------------------------------------------------------------------ configuration
def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {value!r}")
    return n


def _tool_tirx(path: str) -> dict | None:
    """The ``[tool.tirx]`` table of a pyproject.toml; None when it has none."""
    import tirx

    with open(path, "rb") as fh:
        data = fh.read(1 << 20)
    try:
        tomllib: Any = importlib.import_module("tomllib")
    except ModuleNotFoundError:  # Python 3.10: the one key fmt reads, by hand
        return _tool_tirx_by_hand(data.decode("utf-8", "replace"))
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise tirx.DiagnosticError(str(e), None, f"error: {path}: not valid TOML: {e}") from e
    table = doc.get("tool", {}).get("tirx") if isinstance(doc.get("tool"), dict) else None
    return table if isinstance(table, dict) else None


def _tool_tirx_by_hand(text: str) -> dict | None:
    table: dict | None = None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("["):
            if table is not None:
                break
            if line.replace(" ", "") == "[tool.tirx]":
                table = {}
        elif table is not None and "=" in line:
            key, value = (p.strip() for p in line.split("=", 1))
            try:
                table[key.strip("\"'")] = int(value)
            except ValueError:
                table[key.strip("\"'")] = value
    return table


class _Config:
    """``[tool.tirx] line-length`` of the nearest pyproject.toml with a ``[tool.tirx]``
    table, per directory (cached)."""

    def __init__(self) -> None:
        self._cache: dict[str, int] = {}

    def line_length(self, path: str) -> int:
        d = os.getcwd() if path == "-" else os.path.dirname(os.path.abspath(path))
        return self._find(d)

    def _find(self, d: str) -> int:
        hit = self._cache.get(d)
        if hit is not None:
            return hit
        value: int | None = None
        p = os.path.join(d, "pyproject.toml")
        if os.path.isfile(p):
            table = _tool_tirx(p)
            if table is not None:
                value = _config_value(p, table)
        if value is None:
            parent = os.path.dirname(d)
            value = DEFAULT_LINE_LENGTH if parent == d else self._find(parent)
        self._cache[d] = value
        return value


def _config_value(path: str, table: dict) -> int:
    import tirx

    v = table.get("line-length", DEFAULT_LINE_LENGTH)
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        msg = f"[tool.tirx] line-length must be a positive integer, not {v!r}"
        raise tirx.DiagnosticError(msg, None, f"error: {path}: {msg}")
    return v


def config_line_length(path: str = "-") -> int:
    """The line length ``tirx fmt`` uses for ``path`` (``-``: the current directory)
    without ``--line-length``: the nearest ``[tool.tirx] line-length``, else 100."""
    return _Config().line_length(path)


# ------------------------------------------------------------------ the command
def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="PATH", help="a .tirx file, a directory, a glob, or - (stdin)")
    p.add_argument(
        "--check", action="store_true", help="do not write; exit 1 and list the files that would change"
    )
    p.add_argument("--diff", action="store_true", help="do not write; print a unified diff of each change")
    p.add_argument(
        "--line-length",
        type=_positive,
        metavar="N",
        help=f"wrap lines longer than N (default: [tool.tirx] line-length in the nearest "
        f"pyproject.toml, else {DEFAULT_LINE_LENGTH})",
    )
    p.add_argument(
        "--canonical",
        action="store_true",
        help="print each file as TIRx prints its IR (tirx.dumps: every attribute spelled out, "
        "sugar expanded), comments kept; without it only whitespace changes",
    )
    p.add_argument(
        "--same-ir",
        action="store_true",
        help="with --canonical: also count as formatted a file whose lines differ from the "
        "canonical ones only in how expressions are spelled (TIRx's T.LShift(3, 30) for "
        "T.int32(3) << 30)",
    )
    p.add_argument(
        "--color",
        choices=MODES,
        default="auto",
        help="colour diffs and errors: auto (on a terminal, unless NO_COLOR is set), always, never",
    )


def _expand(paths: list[str], err: Callable[[str], None]) -> list[str] | None:
    """Files to format, in order, each once; None after reporting a missing path."""
    out: list[str] = []
    missing = False
    for p in paths:
        if p == "-":
            out.append(p)
        elif os.path.isdir(p):
            found = []
            for root, dirs, names in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found += [os.path.join(root, n) for n in names if n.endswith(".tirx")]
            out += sorted(found)
        elif os.path.exists(p):
            out.append(p)
        elif glob.has_magic(p) and (hits := sorted(glob.glob(p, recursive=True))):
            out += [h for h in hits if not os.path.isdir(h)]  # a FIFO is refused when read
        else:
            err(f"tirx fmt: error: no such file: {p}")
            missing = True
    return None if missing else list(dict.fromkeys(out))


def _every_error(e: BaseException, name: str) -> str:
    """Every error of a file, each rendered, then how many (as the CLI prints them)."""
    diags = getattr(e, "diagnostics", None) or [e]
    text = "\n".join(str(d) for d in diags)
    if len(diags) > 1:
        text += f"\n{len(diags)} errors in {name}"
    return text


def _kept_same(text: str, out: str) -> bool:
    return text == out or text + "\n" == out


def run(args: argparse.Namespace, err: Callable[[str], None], files: Any, read: Callable[[str], str]) -> int:
    """The ``fmt`` command; ``files.guard(path)`` is the CLI's per-file error handler
    (it reports a file's error and counts it in ``files.failed``); ``read(path)`` reads a
    file (``-``: stdin) as UTF-8 text, refusing anything but a regular file. A file counts
    as reformatted only once its write succeeded; a failed write is that file's error."""
    import tirx
    from tirx.fileio import write_file

    paths = _expand(list(args.files), err)
    if paths is None:
        return 2
    canonical = bool(getattr(args, "canonical", False))
    fixed = getattr(args, "line_length", None)
    mode = getattr(args, "color", "auto")
    out_paint = Painter(enabled(sys.stdout, mode))
    err_paint = Painter(enabled(sys.stderr, mode))
    write = not (args.check or args.diff)
    if canonical:
        same = (lambda t, o: equivalent(t, o) or same_layout(t, o)) if args.same_ir else equivalent
    else:
        same = _kept_same
    config = _Config()
    changed: list[str] = []
    for path in paths:
        name = "<stdin>" if path == "-" else path
        with files.guard(path):
            try:
                text = read(path)
                if canonical:
                    obj, out = _format(text, name)
                else:
                    n = fixed if fixed is not None else config.line_length(path)
                    out = _format_kept(text, name, n)
            except tirx.DiagnosticError as e:
                if not err_paint.on:
                    raise  # the CLI reports it (every error of the file, located)
                err(err_paint.diagnostic(_every_error(e, name)))
                files.failed += 1
                continue
            if path == "-" and write:
                sys.stdout.write(out if not same(text, out) else text)
            elif not same(text, out):
                if args.diff:
                    diff = difflib.unified_diff(
                        text.splitlines(),
                        out.splitlines(),
                        f"{name}\t(original)",
                        f"{name}\t(formatted)",
                        lineterm="",
                    )
                    sys.stdout.write(out_paint.diff(diff))
                elif write:
                    if canonical:
                        tirx.save(obj, path)  # atomic; prints the same text (comments kept)
                    else:
                        write_file(path, out.encode("utf-8"))  # atomic, like tirx.save
                changed.append(path)  # after the write: a failed one is counted as failed only
    failed = files.failed
    n = len(paths) - failed
    tail = f", {failed} failed" if failed else ""
    if args.check or args.diff:
        if args.check:
            for p in changed:
                print(f"would reformat {p}")
        err(f"{len(changed)} file(s) would be reformatted, {n - len(changed)} already formatted{tail}")
        return 1 if failed or (args.check and changed) else 0
    for p in changed:
        print(f"reformatted {p}")
    if paths != ["-"]:
        err(f"{len(changed)} file(s) reformatted, {n - len(changed)} unchanged{tail}")
    return 1 if failed else 0
