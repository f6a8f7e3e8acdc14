"""``tirx fmt``: rewrite ``.tirx`` files in canonical form, keeping their comments.

Each file is loaded with ``keep_comments=True`` and printed back (``tirx.dumps``), so
full-line and trailing comments come back next to the statements they were written by; a
comment the printer cannot place is an error at its ``file:line`` (exit 1), never a
silent loss. Text that differs from the canonical print only in how a float is spelled
(TIRx writes 17 significant digits: ``0.90000000000000002`` for ``0.9``) or in a missing
final newline counts as formatted, so files TIRx prints pass ``--check`` unchanged.

Arguments: files, directories (every ``*.tirx`` below them), glob patterns (``**``
recurses), and ``-`` (stdin to stdout). Exit codes: 0 done / nothing to change, 1 a file
would be reformatted (``--check``) or could not be formatted, 2 usage (a missing path).
"""

from __future__ import annotations

import argparse
import difflib
import glob
import os
import re
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["add_arguments", "equivalent", "format_text", "run"]

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


def format_text(text: str, source_name: str = "<string>") -> str:
    """The canonical text of ``text``, comments kept (DiagnosticError: does not load, or a
    comment cannot be placed)."""
    return _format(text, source_name)[1]


def _format(text: str, source_name: str) -> tuple[Any, str]:
    import tirx

    obj = tirx.loads(text, source_name=source_name, keep_comments=True)
    return obj, tirx.dumps(obj)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="PATH", help="a .tirx file, a directory, a glob, or - (stdin)")
    p.add_argument(
        "--check", action="store_true", help="do not write; exit 1 and list the files that would change"
    )
    p.add_argument("--diff", action="store_true", help="do not write; print a unified diff of each change")
    p.add_argument(
        "--same-ir",
        action="store_true",
        help="also count as formatted a file whose lines differ from the canonical ones only in how "
        "expressions are spelled (TIRx's T.LShift(3, 30) for T.int32(3) << 30)",
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


def run(args: argparse.Namespace, err: Callable[[str], None], files: Any, read: Callable[[str], str]) -> int:
    """The ``fmt`` command; ``files.guard(path)`` is the CLI's per-file error handler
    (it reports a file's error and counts it in ``files.failed``); ``read(path)`` reads a
    file (``-``: stdin) as UTF-8 text, refusing anything but a regular file. A file counts
    as reformatted only once its write succeeded; a failed write is that file's error."""
    import tirx

    paths = _expand(list(args.files), err)
    if paths is None:
        return 2
    write = not (args.check or args.diff)
    same = (lambda t, o: equivalent(t, o) or same_layout(t, o)) if args.same_ir else equivalent
    changed: list[str] = []
    for path in paths:
        with files.guard(path):
            text = read(path)
            obj, out = _format(text, "<stdin>" if path == "-" else path)
            if path == "-" and write:
                sys.stdout.write(out if not same(text, out) else text)
            elif not same(text, out):
                if args.diff:
                    name = "<stdin>" if path == "-" else path
                    diff = difflib.unified_diff(
                        text.splitlines(),
                        out.splitlines(),
                        f"{name}\t(original)",
                        f"{name}\t(formatted)",
                        lineterm="",
                    )
                    sys.stdout.write("".join(line + "\n" for line in diff))
                elif write:
                    tirx.save(obj, path)  # atomic; prints the same text (comments kept)
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
