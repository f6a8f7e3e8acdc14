"""Comments kept from the text, and the printer that puts them back.

Comments are not IR: they live in a side table (:class:`CommentTable`) held weakly by the
root Function/Module that ``tirx.loads(text, keep_comments=True)`` returned. Nodes stay
untouched, so structural equality and hash never see comments, and a pass that builds a
new root drops them (carry them over with :func:`attach` when the statements survive).
The table maps statement *identity* to its comments, as nodes are compared by identity.

``dumps`` of a root with a table prints through :class:`CommentPrinter`, then checks that
the output holds every comment of the source in order; if one went missing (attached to a
statement the printer did not print) it raises a DiagnosticError at that comment rather
than drop it.
"""

from __future__ import annotations

from typing import Any

from tirx.ir import stmt as _s
from tirx.ir.function import Function, Module
from tirx.printer._printer import HEADER, HEADER_PLAIN, Printer
from tirx.surface import comments as _comment_table
from tirx.surface.comments import _IMPORT_RE, FUTURE, IMPORT_COMMENT, Comment, CommentTable, lone_stmt, scan

__all__ = ["CommentPrinter", "check_kept", "preamble_text"]

# ------------------------------------------------------------------ printing
_COMPOUND = (_s.For, _s.While, _s.IfThenElse)


class CommentPrinter(Printer):
    """The printer plus comments: leading lines before a statement (at its depth), the
    first trailing comment on its first line (the rest as lines after that line), and
    comments after it (and its body). Used only for roots that have a table."""

    def __init__(self, table: CommentTable, module_name: str = "Module"):
        super().__init__(module_name)
        self.table = table
        self._cur: Any = None  # the statement whose first line comes next (its comments wait)
        self._own: dict[int, int] = {}  # id(statement) -> the index of its own first line

    def emit(self, depth: int, text: str) -> None:
        s = self._cur
        if s is None:
            return super().emit(depth, text)
        # a statement's first line: its T.Let declarations (``x = T.dynamic(...)``, each with
        # its own comments), then its leading comments, then the line itself
        self._cur = None
        tab = self.table
        if self.pending:
            ind = "    " * depth
            for j, d in enumerate(self.pending):
                key = ("decl", id(s), j)
                self._lines(tab.leading.get(key), depth)
                n = len(self.lines)
                self.lines.append(ind + d)
                self._trail(key, n, depth)
            self.pending.clear()
            self.pending_lets.clear()
        self._lines(tab.leading.get(id(s)), depth)
        self._own[id(s)] = len(self.lines)
        return super().emit(depth, text)

    def _lines(self, cs: list[Comment] | None, depth: int, at: int | None = None) -> None:
        if not cs:
            return
        ind = "    " * depth
        new = [ind + c.text for c in cs]
        if at is None:
            self.lines.extend(new)
        else:
            self.lines[at:at] = new

    def _trail(self, key: Any, first: int, depth: int, extra_at: int | None = None) -> None:
        cs = self.table.trailing.get(key)
        if not cs:
            return
        if first < len(self.lines):
            self.lines[first] += "  " + cs[0].text
        else:  # pragma: no cover - every statement prints a line
            self._lines(cs[:1], depth)
        self._lines(cs[1:], depth, extra_at)

    def stmt(self, s: Any, depth: int) -> None:
        t = type(s)
        tab = self.table
        k = id(s)
        if t is _s.SeqStmt:
            if s.stmts:
                items = s.stmts
                for i, c in enumerate(items):
                    if self.defers_view_bind(items, i):
                        self._lines(tab.leading.get(id(c)), depth)  # its comments go with the declaration
                        continue
                    self.stmt(c, depth)
            elif k in tab.leading or k in tab.trailing or k in tab.after:  # the ``pass`` of an empty body
                self._lines(tab.leading.get(k), depth)
                n = len(self.lines)
                self.emit(depth, "pass")
                self._trail(k, n, depth)
                self._lines(tab.after.get(k), depth)
            return
        self._cur = s  # leading comments: at its first line (emit), after its T.Let declarations
        start = len(self.lines)
        if t is _s.IfThenElse:
            self._if_c(s, depth)
        else:
            Printer.stmt(self, s, depth)
        if self._cur is s:  # printed no line of its own (every statement does): comments here
            self._cur = None
            self._lines(tab.leading.get(k), depth)
        n = self._own.pop(k, start)
        if k in tab.trailing:
            compound = isinstance(s, _COMPOUND) or hasattr(s, "body")
            self._trail(k, n, depth + 1 if compound else depth, n + 1 if compound else None)
        self._lines(tab.after.get(k), depth)

    def _if_c(self, s: _s.IfThenElse, depth: int) -> None:
        tab = self.table
        self.emit(depth, f"if {self.expr(s.cond)}:")
        self.body(s.then_case, depth + 1)
        e = lone_stmt(s.else_case)
        k: Any  # the comment table's key: ("else", id) for an else branch
        # an ``elif`` prints as TIRx prints it (the plain printer's spelling): ``else:`` and the
        # nested ``if``, whose comments go inside the ``else:``
        if e is not None:
            k = ("else", id(s))
            self._lines(tab.leading.get(k), depth)
            n = len(self.lines)
            self.emit(depth, "else:")
            self._trail(k, n, depth + 1)
            self.body(e, depth + 1)

    def _head_trail(self, k: Any, n: int, depth: int, extra_at: int) -> None:
        """Trailing comments of a decorated header (line ``n`` the decorator, ``n + 1`` the
        ``def``/``class``): the decorator line's stay on it; full-line ones before the first
        other trailing one go between the decorator and the ``def``; the next trails the
        ``def``; the rest are lines at ``extra_at`` (after ``T.func_attr``)."""
        cs = self.table.trailing.get(k)
        if not cs:
            return
        head = self.table.heads.get(k)
        lines = self.lines
        i = 0
        if not cs[0].full_line and cs[0].line == head:
            lines[n] += "  " + cs[0].text
            i = 1
        ind = "    " * (depth - 1)
        between = []
        while i < len(cs) and cs[i].full_line:
            between.append(ind + cs[i].text)
            i += 1
        if i < len(cs):
            lines[n + 1] += "  " + cs[i].text
            self._lines(cs[i + 1 :], depth, extra_at)
        lines[n + 1 : n + 1] = between

    def function(self, f: Function, depth: int = 0) -> None:
        tab = self.table
        k = id(f)
        self._lines(tab.leading.get(k), depth)
        n = len(self.lines)
        super().function(f, depth)
        if k in tab.trailing:  # more than one: after the T.func_attr line
            self._head_trail(k, n, depth + 1, n + 3 if f.attrs else n + 2)
        self._lines(tab.after.get(k), depth)

    def module(self, m: Module) -> None:
        tab = self.table
        k = id(m)
        self._lines(tab.leading.get(k), 0)
        n = len(self.lines)
        super().module(m)
        if k in tab.trailing:
            self._head_trail(k, n, 1, n + 2)
        self._lines(tab.after.get(k), 0)

    def run(self, obj: Any) -> str:
        text = super().run(obj)
        if self.table.preamble:
            for head, future in ((HEADER, True), (HEADER_PLAIN, False)):
                if text.startswith(head):
                    text = preamble_text(self.table.preamble, future) + text[len(head) :]
                    break
        check_kept(self.table, text)
        return text


def preamble_text(pre: list[str], future: bool = True) -> str:
    """The kept lines before the code, completed with the lines the printer writes (the
    ``from __future__`` line where ``future``: a function has an annotation; the import
    comment) where they are missing."""
    lines = list(pre)
    has_import = any(_IMPORT_RE.match(x) for x in lines)
    if future and FUTURE not in lines:
        lines += ["", FUTURE]
    if not has_import:
        i = lines.index(FUTURE) + 1 if FUTURE in lines else len(lines)
        lines[i:i] = ["", IMPORT_COMMENT]
    out: list[str] = []
    for x in lines:  # one blank line between groups, none at the start
        if x or (out and out[-1]):
            out.append(x)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n\n"


def check_kept(table: CommentTable, text: str) -> None:
    """Raise a DiagnosticError at the first source comment the output lost, repeated or
    moved out of order (the printer's own import comment may come in addition)."""
    got = [c.text for c in scan(text)]
    want = table.order
    j = 0
    spare = 1  # the import comment the printer adds when the source has none
    for c in want:
        while j < len(got) and got[j] != c.text and spare and got[j] == IMPORT_COMMENT:
            j += 1
            spare = 0
        if j >= len(got) or got[j] != c.text:
            _refuse(table, c)
        j += 1
    if j < len(got) and not (spare and got[j:] == [IMPORT_COMMENT]):
        _refuse(table, want[-1] if want else Comment(1, 1, got[j], True))


def _refuse(table: CommentTable, c: Comment) -> None:
    from tirx.diagnostics import error
    from tirx.ir.span import Span

    raise error(
        "cannot place this comment in the formatted text (refusing to drop it)",
        Span(table.source, c.line, c.col, c.line, c.col + len(c.text)),
        table.text or None,
    )


def _print_with(table: CommentTable, obj: Any) -> str:
    return CommentPrinter(table).run(obj)


_comment_table.print_with = _print_with  # dumps of a root with a table prints through it
