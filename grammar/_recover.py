"""Error recovery for ``.tirx`` text: find the errors after the first one.

The parser stops at the first error. To report the others, the statement that failed is
replaced by ``pass`` (a whole function when its header failed) and the text is parsed
again, until it loads or the next error cannot be skipped. Line and column numbers stay
those of the original text: replaced lines keep their place. An "undefined name" error
for a name that only a skipped statement defined is a consequence, not a new error, and
is not reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tirx.diagnostics import render
from tirx.errors import DiagnosticError

__all__ = ["MAX_ERRORS", "find_more"]

MAX_ERRORS = 50  # stop after this many (a file of garbage would otherwise take long)

_HEADER = re.compile(r"\s*(@|def\s|class\s|async\s+def\s)")
_NAME = re.compile(r"[A-Za-z_]\w*")
_UNDEFINED = re.compile(r"'([A-Za-z_][\w.]*)'")


def _line_of(e: DiagnosticError) -> int | None:
    sp = e.span
    sp = getattr(sp, "innermost", None) or sp
    line = getattr(sp, "line", None)
    return int(line) if isinstance(line, int) and line >= 1 else None


def _depths(lines: list[str]) -> list[int]:
    """The bracket depth at the start of each line (strings and comments skipped)."""
    out = []
    depth = 0
    for ln in lines:
        out.append(depth)
        i, n = 0, len(ln)
        while i < n:
            c = ln[i]
            if c == "#":
                break
            if c in "\"'":
                j = i + 1
                while j < n and ln[j] != c:
                    j += 2 if ln[j] == "\\" else 1
                i = j + 1
                continue
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth = max(0, depth - 1)
            i += 1
    return out


def _indent(ln: str) -> int:
    return len(ln) - len(ln.lstrip(" \t"))


def _code(ln: str) -> str:
    """``ln`` without a trailing comment (good enough for finding a final ``:``)."""
    return re.sub(r"\s+#[^\"']*$", "", ln).rstrip()


def _region(lines: list[str], k: int) -> tuple[int, int, bool] | None:
    """``(start, end, whole_unit)``: the lines of the statement at line index ``k`` and, for a
    compound statement, its block; a function (decorators, header and body) when ``k`` is
    in its header. None when there is nothing to skip."""
    depth = _depths(lines)
    s = k
    while s > 0 and depth[s] > 0:
        s -= 1
    if not lines[s].strip():
        return None
    e = s + 1
    while e < len(lines) and depth[e] > 0:
        e += 1
    ind = _indent(lines[s])
    unit = bool(_HEADER.match(lines[s]))
    if unit:
        if lines[s].lstrip().startswith("class"):
            return None  # the module header: nothing to fall back to
        while s > 0 and lines[s - 1].strip().startswith("@") and _indent(lines[s - 1]) == ind:
            s -= 1
        j = s
        while j < len(lines) and lines[j].lstrip().startswith("@"):  # the decorators
            j += 1
        e = j + 1
        while e < len(lines) and depth[e] > 0:
            e += 1
        if j < len(lines) and not lines[j].lstrip().startswith(("def", "async")):
            return None
    if unit or _code(lines[e - 1]).endswith(":"):
        while e < len(lines) and (not lines[e].strip() or _indent(lines[e]) > ind or depth[e] > 0):
            e += 1
        while e - 1 > s and not lines[e - 1].strip():
            e -= 1
    return s, e, unit


def _bound(lines: list[str]) -> set[str]:
    """Names a skipped region may have defined (assignment targets, loop vars, ``as`` names,
    function names): errors about them later are consequences of the skip."""
    out: set[str] = set()
    for ln in lines:
        code = _code(ln).strip()
        m = re.match(r"(?:async\s+)?def\s+(\w+)", code)
        if m:
            out.add(m.group(1))
            continue
        m = re.match(r"for\s+(.*?)\s+in\s", code)
        if m:
            out.update(_NAME.findall(m.group(1)))
        for m2 in re.finditer(r"\bas\s+([\w\s,()]+?)\s*:?$", code):
            out.update(_NAME.findall(m2.group(1)))
        m = re.match(r"([\w\s,()\[\].:]+?)\s*(?::[^=]*)?=(?!=)", code)
        if m and not code.startswith(("if ", "while ", "assert ")):
            target = m.group(1).split(":")[0]
            if "[" not in target:
                out.update(_NAME.findall(target))
    return out


def _consequence(e: DiagnosticError, skipped: set[str]) -> bool:
    msg = e.message if isinstance(e.message, str) else str(e)
    if "undefined" not in msg and "not defined" not in msg and "no function" not in msg:
        return False
    return any(n.split(".")[-1] in skipped for n in _UNDEFINED.findall(msg))


def find_more(
    first: DiagnosticError, text: str, parse: Callable[[str], object], limit: int = MAX_ERRORS
) -> list[DiagnosticError]:
    """The errors after ``first`` in ``text`` (``parse(text)`` loads or raises
    ``DiagnosticError``), each rendered against the original text."""
    lines = text.split("\n")
    changed: set[int] = set()
    skipped: set[str] = set()
    seen = {(_line_of(first), first.message)}
    out: list[DiagnosticError] = []
    err = first
    while len(out) + 1 < limit:
        reg = _skippable(err, lines, changed)
        if reg is None:
            break
        s, e, unit = reg
        skipped |= _bound(lines[s:e])
        before = lines[s:e]
        changed.update(range(s, e))
        nxt = None
        # ``pass`` keeps a block that held only this statement valid; an empty line fits
        # where ``pass`` does not (a line indented by mistake, a top-level statement)
        for first_line in ([] if unit else [" " * _indent(before[0]) + "pass"]) + [""]:
            lines[s:e] = [first_line] + [""] * (e - s - 1)
            nxt = _parse_error(parse, lines)
            if nxt is None or _skippable(nxt, lines, changed) is not None:
                break
        if nxt is None:
            break
        err = nxt
        key = (_line_of(err), err.message)
        if _skippable(err, lines, changed) is None:
            break  # at the end of what is left, or in what was skipped: not a new error
        if key in seen or _consequence(err, skipped):
            seen.add(key)
            continue
        seen.add(key)
        out.append(DiagnosticError(err.message, err.span, render(err.message, err.span, text)))
    return out


def _parse_error(parse: Callable[[str], object], lines: list[str]) -> DiagnosticError | None:
    try:
        parse("\n".join(lines))
    except DiagnosticError as e:
        return e
    except Exception:  # the recovered text broke something else: treat it as the end
        return None
    return None


def _skippable(err: DiagnosticError, lines: list[str], changed: set[int]) -> tuple[int, int, bool] | None:
    """The region to skip for ``err``; None when it is at a line already skipped, or at a
    blank or comment line (the end of the text or of what is left of it)."""
    line = _line_of(err)
    if line is None or line > len(lines) or (line - 1) in changed:
        return None
    if not lines[line - 1].strip() or lines[line - 1].lstrip().startswith("#"):
        return None
    return _region(lines, line - 1)
