"""Rendering of located diagnostics, shared by the text grammar and the Python frontend.

A diagnostic looks like rustc's::

    error: undefined name 'y'
     --> kernel.tirx:9:18
      |
    9 |         B[i] = A[y]
      |                  ^

``render`` builds that text; ``error`` builds the ``DiagnosticError`` carrying it.
"""

from __future__ import annotations

from typing import Any

from .errors import DiagnosticError

__all__ = ["error", "render"]


def _innermost(span: Any) -> Any:
    if span is None:
        return None
    inner = getattr(span, "innermost", None)
    return inner if inner is not None else span


def render(message: str, span: Any, source_text: str | None) -> str:
    """Render ``message`` located at ``span`` (a Span / SequentialSpan or None).

    ``source_text`` is the text the span points into; without it (or without a
    span) the snippet is left out but the ``-->`` location line is kept.
    """
    sp = _innermost(span)
    out = [f"error: {message}"]
    if sp is None:
        return out[0]
    line = int(getattr(sp, "line", 0) or 0)
    col = int(getattr(sp, "col", 0) or 0)
    src = getattr(sp, "source", "<unknown>")
    w = max(1, len(str(line)))
    pad = " " * w
    if isinstance(span, object) and hasattr(span, "spans") and len(getattr(span, "spans", ())) > 1:
        # inline expansion history: show the chain, innermost last
        out.append(f"{pad}--> {span}")
    else:
        out.append(f"{pad}--> {src}:{line}:{col}")
    if source_text is None or line < 1:
        return "\n".join(out)
    lines = source_text.split("\n")
    if line > len(lines):
        return "\n".join(out)
    text = lines[line - 1].rstrip("\r")
    end_line = int(getattr(sp, "end_line", 0) or 0)
    end_col = int(getattr(sp, "end_col", 0) or 0)
    c0 = max(1, col)
    if end_line == line and end_col > c0:
        n = end_col - c0
    elif end_line > line:
        n = max(1, len(text) - c0 + 1)
    else:
        n = 1
    n = max(1, min(n, max(1, len(text) - c0 + 1)))
    # keep tabs in the lead so the caret lines up under tab-indented source
    lead = "".join(ch if ch == "\t" else " " for ch in text[: c0 - 1])
    if len(lead) < c0 - 1:
        lead += " " * (c0 - 1 - len(lead))
    out.append(f"{pad} |")
    out.append(f"{line} | {text}")
    out.append(f"{pad} | {lead}{'^' * n}")
    return "\n".join(out)


def error(
    message: str, span: Any, source_text: str | None, cause: BaseException | None = None
) -> DiagnosticError:
    """A ``DiagnosticError`` for ``message`` at ``span``; ``cause`` becomes ``__cause__``."""
    err = DiagnosticError(message, span, render(message, span, source_text))
    if cause is not None:
        err.__cause__ = cause
    return err
