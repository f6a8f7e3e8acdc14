"""Small helpers shared by the passes: statement lists, purity, spans, diagnostics."""

from __future__ import annotations

import linecache
from typing import Any

from tirx.errors import DiagnosticError
from tirx.ir import (
    AttrStmt,
    Call,
    DeviceEntry,
    For,
    GlobalVar,
    IfThenElse,
    SeqStmt,
    Stmt,
    While,
)
from tirx.ir.expr import NODE, SEQ
from tirx.ir.stmt import flat_stmts

__all__ = ["DiagnosticError", "flatten", "has_side_effects", "render_diagnostic"]


def flatten(s: Stmt | None) -> list[Stmt]:
    """The statements of a body, with nested SeqStmts spliced in (iteratively)."""
    return list(flat_stmts(s))


def make_body(stmts: list[Stmt]) -> Stmt:
    """A body from a statement list: the single statement, a SeqStmt, or ``SeqStmt(())``."""
    if len(stmts) == 1:
        return stmts[0]
    return SeqStmt(tuple(stmts))


#: statement classes whose bodies open a scope for flat Binds, with their body fields
SCOPED = {
    For: ("body",),
    While: ("body",),
    IfThenElse: ("then_case", "else_case"),
    DeviceEntry: ("body",),
    AttrStmt: ("body",),
}


def has_side_effects(e: Any, _cache: dict | None = None) -> bool:
    """True when evaluating ``e`` may have an effect (impure op, call of a module function).

    The field walk is inlined (not ``child_nodes``): Simplify calls this on every
    subexpression, and the helper's call per node made it 1.6x slower."""
    stack = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, Call):
            if isinstance(n.op, GlobalVar) or not n.op.pure:
                return True
            stack.extend(n.args)
            continue
        for name, kind in type(n)._sfields:
            if kind is NODE:
                v = getattr(n, name)
                if v is not None:
                    stack.append(v)
            elif kind is SEQ:
                stack.extend(getattr(n, name))
    return False


def span_of(*nodes: Any) -> Any:
    """The first span found on ``nodes`` (innermost first), or None."""
    for n in nodes:
        s = getattr(n, "span", None)
        if s is not None:
            return s
    return None


def render_diagnostic(message: str, span: Any) -> str:
    """``error: message`` then ``--> file:line:col`` and a caret snippet when the file is readable."""
    if span is None:
        return f"error: {message}"
    inner = getattr(span, "innermost", span)
    out = [f"error: {message}", f"  --> {span}"]
    line = ""
    try:
        line = linecache.getline(inner.source, inner.line).rstrip("\n")
    except Exception:  # pragma: no cover - odd source names
        line = ""
    if line:
        width = 1
        if getattr(inner, "end_line", 0) == inner.line and inner.end_col > inner.col:
            width = inner.end_col - inner.col
        pad = " " * len(str(inner.line))
        out.append(f"{pad} |")
        out.append(f"{inner.line} | {line}")
        out.append(f"{pad} | {' ' * max(0, inner.col - 1)}{'^' * width}")
    return "\n".join(out)
