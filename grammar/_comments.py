"""Attach the comments of a ``.tirx`` text to the statements they precede or trail.

The lexer folds comments into its line-end tokens (``NL`` in ``tirx.lark``), so the
parser never sees them; ``loads(text, keep_comments=True)`` scans them separately
(``tirx.surface.comments.scan``) and places each by source position against the
*anchors* of the loaded IR: every statement with a span, each function (from its first
decorator line), the module, and each ``else:`` line. Rules, for a comment on line L:

* trailing (code before it on the line): the last anchor starting at or before L
  (a continuation line or a decorator line belongs to the statement it continues);
* full-line, inside an anchor's header lines (between a decorator and its ``def``, in
  a multi-line statement): trailing of that anchor;
* full-line, followed by an anchor indented at least as deep: leading comment of it;
* full-line at the end of a block (the next anchor is shallower): after the last
  earlier anchor at the comment's own indentation, else leading of the next anchor; in a
  function with no statement after its header (only ``T.func_attr``): trailing of the header;
* before the first decorator: the preamble, kept line by line.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import Any

from tirx.ir import stmt as _s
from tirx.ir.function import Function, Module
from tirx.surface.comments import _IMPORT_RE, _LEX, Comment, CommentTable, attach, lone_stmt, scan

__all__ = ["collect"]

_ELSE = re.compile(r"[ \t]*else[ \t]*:")
_DYN_DECL = re.compile(r"\w+\s*=\s*T\.dynamic\(")  # ``n = T.dynamic(...)``: the header the printer writes


class _Anchor:
    __slots__ = ("col", "end", "func", "key", "line", "owner")

    def __init__(self, key: Any, line: int, col: int, end: int, owner: Any = None, func: bool = False):
        self.key = key
        self.line = line
        self.col = col
        self.end = end  # last line of its header (or of the whole simple statement)
        self.owner = key if owner is None else owner  # comments "after" it go after this one
        self.func = func  # a function's header: a comment in its (statement-less) body trails it


def collect(obj: Any, text: str, source: str) -> CommentTable:
    """The comment table for ``obj`` loaded from ``text``; attached to ``obj``."""
    table = CommentTable(source, text)
    comments = scan(text)
    table.order = comments
    if comments:
        lines = text.split("\n")
        top = _top_line(lines)
        anchors: list[_Anchor] = []
        _anchors(obj, lines, anchors, top, table.nodes, table.heads)
        anchors.sort(key=lambda a: (a.line, a.col))
        pre_end = _adjacent_block(lines, top)  # comments right above the code lead it
        body = [c for c in comments if c.line >= pre_end]
        table.preamble = _preamble(lines[: pre_end - 1]) if pre_end > 1 else []
        _place(table, body, anchors, lines)
    attach(obj, table)
    return table


def _top_line(lines: list[str]) -> int:
    """The first line (1-based) of the code after the header: not blank, a comment, ``from``
    or a ``n = T.dynamic(...)`` declaration."""
    for i, ln in enumerate(lines, 1):
        s = ln.strip()
        if not s or s.startswith("#") or s.startswith("from ") or s.startswith("\\") or _DYN_DECL.match(s):
            continue
        return i
    return len(lines) + 1


def _adjacent_block(lines: list[str], top: int) -> int:
    """The first line of the comment lines directly above line ``top`` (``top`` if none);
    the import comment stays in the preamble."""
    i = top
    while i > 1:
        s = lines[i - 2].strip()
        if not s.startswith("#") or _IMPORT_RE.match(s):
            break
        i -= 1
    return i


def _header_end(lines: list[str], line: int) -> int:
    """The line of the ``:`` that ends a (possibly multi-line) ``def`` header starting at ``line``."""
    for i in range(line, min(len(lines), line + 200) + 1):
        code = lines[i - 1]
        cut = next((m.start() for m in _LEX.finditer(code) if m.group()[0] == "#"), None)
        if cut is not None:
            code = code[:cut]
        if code.rstrip().endswith(":"):
            return _func_attr_end(lines, i)
    return line


def _code_part(line: str) -> str:
    """``line`` without its comment and with string literals emptied."""
    return _LEX.sub(lambda m: "" if m.group()[0] == "#" else '""', line)


def _func_attr_end(lines: list[str], hdr: int) -> int:
    """The last line of a ``T.func_attr(...)`` right after the ``def`` line ``hdr`` (it
    prints with the header), else ``hdr``."""
    i = hdr + 1
    while i <= len(lines) and (not lines[i - 1].strip() or lines[i - 1].lstrip().startswith("#")):
        i += 1
    if i > len(lines) or not lines[i - 1].lstrip().startswith("T.func_attr("):
        return hdr
    depth = 0
    for j in range(i, len(lines) + 1):
        code = _code_part(lines[j - 1])
        depth += code.count("(") + code.count("[") + code.count("{")
        depth -= code.count(")") + code.count("]") + code.count("}")
        if depth <= 0:
            return j
    return hdr


def _preamble(lines: list[str]) -> list[str]:
    out: list[str] = []
    for ln in lines:
        s = ln.strip()
        if _DYN_DECL.match(s):  # the printer writes the declarations after the header
            continue
        if s or (out and out[-1]):
            out.append(s)
    return out


def _decorator_line(lines: list[str], def_line: int) -> int:
    i = def_line - 1
    while i >= 1:
        s = lines[i - 1].strip()
        if s.startswith("@"):
            i -= 1
            continue
        if not s or s.startswith("#"):  # a comment between decorators stays with them
            j = i - 1
            while j >= 1 and (not lines[j - 1].strip() or lines[j - 1].strip().startswith("#")):
                j -= 1
            if j >= 1 and lines[j - 1].strip().startswith("@"):
                i = j
                continue
        break
    return i + 1


def _anchors(obj: Any, lines: list[str], out: list[_Anchor], top: int, keep: list, heads: dict) -> None:
    if isinstance(obj, Module):
        cls = next((i for i in range(top, len(lines) + 1) if lines[i - 1].lstrip().startswith("class")), top)
        keep.append(obj)
        out.append(_Anchor(id(obj), top, 1, cls))
        heads[id(obj)] = top
        for f in obj.functions:
            _anchors(f, lines, out, top, keep, heads)
        return
    if isinstance(obj, Function):
        sp = obj.span
        if sp is not None and getattr(sp, "line", None):
            keep.append(obj)
            head = _decorator_line(lines, sp.line)
            out.append(_Anchor(id(obj), head, sp.col, _header_end(lines, sp.line), func=True))
            heads[id(obj)] = head
        if sp is not None and getattr(sp, "line", None):
            _pass_anchor(obj.body, lines, _header_end(lines, sp.line), out, keep)
        _stmts(obj.body, lines, out, keep)


def _span(s: Any) -> Any:
    sp = s.span
    return sp if sp is not None and getattr(sp, "line", None) else None


def _stmts(s: Any, lines: list[str], out: list[_Anchor], keep: list, owner: Any = None) -> None:
    """Anchors of ``s`` and its bodies; ``owner``: the ``if`` of an ``elif`` node."""
    if s is None:
        return
    if type(s) is _s.SeqStmt:
        for c in s.stmts:
            _stmts(c, lines, out, keep)
        return
    sp = _span(s)
    if sp is not None:
        keep.append(s)
        for j, ln in enumerate(_let_decls(lines, sp.line)):  # ``x = T.dynamic(...)`` of its T.Lets
            out.append(
                _Anchor(("decl", id(s), j), ln, len(lines[ln - 1]) - len(lines[ln - 1].lstrip()) + 1, ln)
            )
        out.append(_Anchor(id(s), sp.line, sp.col, getattr(sp, "end_line", None) or sp.line, owner))
    if isinstance(s, _s.IfThenElse):
        top = id(s) if owner is None else owner
        hdr = (getattr(sp, "end_line", None) or sp.line) if sp is not None else 0
        if sp is not None:
            _pass_anchor(s.then_case, lines, hdr, out, keep)
        k = len(out)
        _stmts(s.then_case, lines, out, keep)
        e = lone_stmt(s.else_case)
        if e is None:
            return
        if isinstance(e, _s.IfThenElse) and _is_elif(e, lines):  # an elif: in the same if statement
            _stmts(e, lines, out, keep, top)
            return
        if sp is not None:  # the else: line, the first after the then branch at the if's indentation
            ln = max([hdr, *(a.end for a in out[k:])]) + 1
            while ln <= len(lines):
                t = lines[ln - 1]
                if _ELSE.match(t) and len(t) - len(t.lstrip()) == sp.col - 1:
                    out.append(_Anchor(("else", id(s)), ln, sp.col, ln, top))
                    _pass_anchor(e, lines, ln, out, keep)
                    break
                ln += 1
        _stmts(e, lines, out, keep)
        return
    b = getattr(s, "body", None)
    if isinstance(b, _s.Stmt):
        if sp is not None:
            _pass_anchor(b, lines, getattr(sp, "end_line", None) or sp.line, out, keep)
        _stmts(b, lines, out, keep)


def _let_decls(lines: list[str], line: int) -> list[int]:
    """The ``x = T.dynamic(...)`` lines right above a statement's line (comments and blank
    lines between them allowed): the declarations of its ``T.Let`` variables, which the
    printer writes just before the statement (each is an anchor of its own)."""
    found: list[int] = []
    ln = line - 1
    while ln >= 1:
        t = lines[ln - 1].strip()
        if not t or t.startswith("#"):
            ln -= 1
            continue
        if not _DYN_DECL.match(t):
            break
        found.append(ln)
        ln -= 1
    return found[::-1]


def _is_elif(e: Any, lines: list[str]) -> bool:
    """Whether the ``if`` of an else branch was written ``elif`` (else ``else:`` and a nested
    ``if``, TIRx's spelling, whose comments stay inside the ``else:``)."""
    sp = _span(e)
    if sp is None or not 0 < sp.line <= len(lines):
        return True
    return lines[sp.line - 1].lstrip().startswith("elif")


def _pass_anchor(body: Any, lines: list[str], after: int, out: list[_Anchor], keep: list) -> None:
    """An empty body prints as ``pass``: anchor that line to the (empty) body node."""
    if type(body) is not _s.SeqStmt or body.stmts:
        return
    for ln in range(after + 1, len(lines) + 1):
        x = lines[ln - 1]
        t = x.strip()
        if not t or t.startswith("#"):
            continue
        if t == "pass" or t.startswith(("pass ", "pass#")):
            keep.append(body)
            out.append(_Anchor(id(body), ln, len(x) - len(x.lstrip()) + 1, ln))
        return


def _before_pass(lines: list[str], L: int, col: int, starts: list[int]) -> bool:
    """Whether the next code line after ``L`` is a ``pass`` (not an empty body's, which is
    an anchor) indented at least to ``col``."""
    for k, x in enumerate(lines[L:], L + 1):
        s = x.strip()
        if s and not s.startswith("#"):
            if not (s == "pass" or s.startswith(("pass ", "pass#"))):
                return False
            j = bisect_left(starts, k)
            return not (j < len(starts) and starts[j] == k) and len(x) - len(x.lstrip()) >= col - 1
    return False


def _place(table: CommentTable, comments: list[Comment], anchors: list[_Anchor], lines: list[str]) -> None:
    if not anchors:  # nothing to hang them on: the printer reports each as unplaceable
        return
    starts = [a.line for a in anchors]
    for c in comments:
        L = c.line
        i = bisect_right(starts, L) - 1  # last anchor starting at or before L
        if not c.full_line:
            if i < 0:
                i = 0
            _add(table.trailing, anchors[i].key, c)
            continue
        if i >= 0 and anchors[i].line < L <= anchors[i].end:
            _add(table.trailing, anchors[i].key, c)
            continue
        if i >= 0 and _before_pass(lines, L, anchors[i].col, starts):  # ``pass`` has no node: keep it
            _add(table.trailing, anchors[i].key, c)  # with the statement (or header) above
            continue
        n = bisect_left(starts, L + 1)
        nxt = anchors[n] if n < len(anchors) else None
        if nxt is not None and nxt.col >= c.col:
            _add(table.leading, nxt.key, c)
            continue
        p = None
        for k in range(n - 1, -1, -1):
            if anchors[k].col <= c.col:
                p = anchors[k]
                break
        if p is not None and p.col == c.col:
            _add(table.after, p.owner, c)
        elif p is not None and p is anchors[i] and p.func and c.col > p.col:
            # under a function's header with no statement after it (a body of only
            # ``T.func_attr``): the header's, as a comment between its lines is
            _add(table.trailing, p.key, c)
        elif nxt is not None:
            _add(table.leading, nxt.key, c)
        else:
            _add(table.after, (p or anchors[-1]).owner, c)


def _add(d: dict, key: Any, c: Comment) -> None:
    v = d.get(key)
    if v is None:
        d[key] = [c]
    else:
        v.append(c)
