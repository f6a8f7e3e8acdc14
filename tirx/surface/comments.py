"""Comment attachment shared by the text loader and the printer: the comment scanner, the
side table of comments kept from a text, and the ``elif`` rule both read statements by.

It sits in the surface layer so the grammar (``tirx/grammar/_comments.py`` fills a table)
and the printer (``tirx/printer/_comments.py`` prints one back) need not import each other.
"""

from __future__ import annotations

import re
import weakref
from typing import Any

from tirx.ir import stmt as _s
from tirx.ir.function import Function, Module

__all__ = ["Comment", "CommentTable", "attach", "comments_of", "lone_stmt", "scan"]

FUTURE = "from __future__ import annotations"
IMPORT_COMMENT = "# from tirx.script import tirx as T"
# TIRx writes ``# from tvm_tirx.script import tirx as T``; any such line counts as the import comment
_IMPORT_RE = re.compile(r"#\s*from\s+[\w.]+\s+import\s+tirx\s+as\s+T\s*$")
# a string literal (single line, as in the grammar; unterminated runs to the line end) or a comment
_LEX = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"?|'(?:[^'\\\n]|\\.)*'?|#[^\r\n]*")


class Comment:
    """One ``# ...`` comment: its text (from ``#``, trailing blanks dropped) and position."""

    __slots__ = ("col", "full_line", "line", "text")

    def __init__(self, line: int, col: int, text: str, full_line: bool):
        self.line = line
        self.col = col
        self.text = text
        self.full_line = full_line

    def __repr__(self) -> str:
        return f"Comment({self.line}:{self.col} {self.text!r})"


def scan(text: str) -> list[Comment]:
    """Every comment of ``text`` in order (``#`` inside string literals is not a comment)."""
    out = []
    for i, line in enumerate(text.split("\n"), 1):
        if "#" not in line:
            continue
        for m in _LEX.finditer(line):
            s = m.group()
            if s[0] == "#":
                col = m.start()
                out.append(Comment(i, col + 1, s.rstrip(), not line[:col].strip()))
                break
    return out


def _is_code(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#")


class CommentTable:
    """Comments of one loaded text, keyed by statement identity (``id(node)``; the table
    keeps the nodes alive). ``("else", id(if_node))`` keys the ``else:`` line of an if."""

    __slots__ = (
        "__weakref__",
        "after",
        "heads",
        "leading",
        "nodes",
        "order",
        "preamble",
        "source",
        "text",
        "trailing",
    )

    def __init__(self, source: str, text: str = ""):
        self.source = source
        self.text = text
        self.preamble: list[str] = []  # lines before the first decorator: comments, headers, ""
        self.leading: dict[Any, list[Comment]] = {}
        self.trailing: dict[Any, list[Comment]] = {}
        self.after: dict[Any, list[Comment]] = {}
        self.nodes: list[Any] = []
        self.heads: dict[Any, int] = {}  # Function/Module key -> its decorator line
        self.order: list[Comment] = []  # every comment of the source, in order

    def __len__(self) -> int:
        return len(self.order)


TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
print_with: Any = None  # set by _comments: (table, obj) -> text


def comments_of(obj: Any) -> CommentTable | None:
    """The comment table ``tirx.loads(..., keep_comments=True)`` gave ``obj`` (or None)."""
    try:
        return TABLES.get(obj)
    except TypeError:  # not weak-referenceable: never has one
        return None


def attach(obj: Any, table: CommentTable | None) -> None:
    """Give root ``obj`` (a Function or Module) the comments of ``table`` (None removes them).

    Comments of statements that ``obj`` no longer contains make ``dumps(obj)`` raise."""
    if not isinstance(obj, (Function, Module)):
        raise TypeError(f"attach: obj must be a Function or Module, got {type(obj).__name__}")
    if table is None:
        TABLES.pop(obj, None)
    elif not isinstance(table, CommentTable):
        raise TypeError(f"attach: table must be a CommentTable or None, got {type(table).__name__}")
    else:
        TABLES[obj] = table


def lone_stmt(s: Any) -> Any:
    """The one statement of a SeqStmt that flattens to one (``else: if`` of a one-element
    sequence prints as ``elif``, as the text loads back), else ``s``."""
    if type(s) is _s.SeqStmt:
        from tirx.ir.structural import _flat_stmts

        x = _flat_stmts(s)
        if len(x) == 1:
            return x[0]
    return s
