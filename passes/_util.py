"""Small helpers shared by the passes: statement lists, purity, spans, diagnostics."""

from __future__ import annotations

import linecache
from typing import Any

from tirx.diagnostics import render
from tirx.errors import DiagnosticError
from tirx.ir import (
    AttrStmt,
    Call,
    DeviceEntry,
    For,
    GlobalVar,
    IfThenElse,
    RegionStmt,
    SeqStmt,
    Stmt,
    While,
)
from tirx.ir.expr import NODE, SEQ
from tirx.ir.stmt import flat_stmts

__all__ = ["DiagnosticError", "call_has_effect", "flatten", "has_side_effects", "render_diagnostic"]


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
    RegionStmt: ("body",),
}


def has_side_effects(e: Any, _cache: dict | None = None, collectives: bool = True) -> bool:
    """True when evaluating ``e`` may have an effect (impure op, call of a module function).
    ``collectives=False``: a warp collective (a convergent op: a shuffle, a vote; impure so
    that no pass moves it) does not count, as it writes no memory (SequenceEffects).

    The field walk is inlined (not ``child_nodes``): Simplify calls this on every
    subexpression, and the helper's call per node made it 1.6x slower."""
    stack = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, Call):
            if call_has_effect(n, collectives):
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


def call_has_effect(c: Call, collectives: bool = True) -> bool:
    """Whether the call itself (not its arguments) has an effect: a module function, or an
    impure op (``collectives=False``: not a convergent one, see ``has_side_effects``)."""
    op = c.op
    return isinstance(op, GlobalVar) or not (op.pure or (not collectives and op.traits.convergent))


def span_of(*nodes: Any) -> Any:
    """The first span found on ``nodes`` (innermost first), or None."""
    for n in nodes:
        s = getattr(n, "span", None)
        if s is not None:
            return s
    return None


def located_error(msg: str, node: Any) -> Any:
    """A ``DiagnosticError`` at ``node``'s span (rendered with its snippet), or bare without one."""
    from tirx.errors import DiagnosticError

    span = getattr(node, "span", None)
    if span is None:
        return DiagnosticError(msg)
    return DiagnosticError(msg, span, render_diagnostic(msg, span))


def render_diagnostic(message: str, span: Any) -> str:
    """``tirx.diagnostics.render`` with the snippet read from the span's file (passes see IR,
    not the text it came from)."""
    inner = getattr(span, "innermost", span)
    text = "".join(linecache.getlines(inner.source)) if span is not None else ""
    return render(message, span, text or None)
