"""The ``.tirx`` text grammar: ``loads(text)`` / ``load(path)`` -> Function or Module.

The text is parsed by a Lark LALR parser (``tirx.lark``) whose inline transformer drives
the same IRBuilder as the Python frontend. Nothing in the text is ever executed. Every
problem (syntax, unknown names, wrong arguments, undefined or redefined variables,
``break`` outside a loop, device-only ops outside a device entry, store dtype
mismatches, too-deep nesting) is a ``tirx.DiagnosticError`` located at
``file:line:col`` with a caret snippet.
"""

from __future__ import annotations

import os
import threading

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from tirx.diagnostics import error as _diag
from tirx.errors import DiagnosticError
from tirx.ir import deep
from tirx.ir.span import Span

__all__ = ["load", "loads", "parse_reference"]

_lock = threading.RLock()

_TOKEN_DESC = {
    "NL": "end of line",
    "INDENT": "an indented block",
    "DEDENT": "the end of the block",
    "NAME": "a name",
    "DOTTED": "a dotted name",
    "INT": "an integer",
    "FLOAT": "a float",
    "STRING": "a string",
    "$END": "end of input",
}


def _tok_desc(tok) -> str:
    t = tok.type
    if t == "NAME":
        return f"name '{tok.value}'"
    if t == "DOTTED":
        return f"'{tok.value}'"
    if t in ("INT", "FLOAT"):
        return f"number {tok.value}"
    if t == "STRING":
        return f"string {tok.value}"
    if t in _TOKEN_DESC:
        return _TOKEN_DESC[t]
    return f"'{tok.value}'"


def _expected_desc(names, parser) -> str:
    out = set()
    pats = {}
    try:
        pats = {t.name: t.pattern for t in parser.terminals}
    except Exception:  # pragma: no cover - lark internals moved
        pats = {}
    for n in names:
        if n in _TOKEN_DESC:
            out.add(_TOKEN_DESC[n])
            continue
        p = pats.get(n)
        if p is not None and getattr(p, "type", "") == "str":
            out.add(f"'{p.value}'")
        else:
            out.add(n.lower())
    items = sorted(out)
    if len(items) > 8:
        items = [*items[:8], "..."]
    return ", ".join(items)


def _tok_span(src: str, tok) -> Span:
    line = getattr(tok, "line", None) or 1
    col = getattr(tok, "column", None) or 1
    end_line = getattr(tok, "end_line", None) or line
    end_col = getattr(tok, "end_column", None) or col + 1
    if end_line == line and end_col <= col:
        end_col = col + 1
    return Span(src, line, col, end_line, end_col)


def _syntax_error(e: UnexpectedInput, src: str, text: str, parser, post) -> DiagnosticError:
    if isinstance(e, UnexpectedToken):
        tok = e.token
        if tok.type == "$END" or getattr(tok, "line", None) is None:
            last = post.last
            span = _tok_span(src, last) if last is not None else Span(src, 1, 1, 1, 2)
        else:
            span = _tok_span(src, tok)
        exp = set(e.expected or ())
        return _diag(_parse_fail_message(tok, exp, parser), span, text, e)
    if isinstance(e, UnexpectedCharacters):
        line, col = e.line or 1, e.column or 1
        pos = e.pos_in_stream if e.pos_in_stream is not None else -1
        ch = text[pos] if 0 <= pos < len(text) else ""
        if ch in "\"'":
            msg = "unterminated string literal"
        elif ch == "\t" or ch == "\r":
            msg = f"unexpected character {ch!r}"
        else:
            msg = f"unexpected character {ch!r}"
        return _diag(msg, Span(src, line, col, line, col + 1), text, e)
    if isinstance(e, UnexpectedEOF):  # pragma: no cover - LALR reports $END as UnexpectedToken
        last = post.last
        span = _tok_span(src, last) if last is not None else Span(src, 1, 1, 1, 2)
        return _diag("unexpected end of input", span, text, e)
    line = getattr(e, "line", 1) or 1
    col = getattr(e, "column", 1) or 1
    return _diag(f"syntax error: {e}", Span(src, line, col, line, col + 1), text, e)


def _parse_fail_message(tok, exp, parser) -> str:
    if tok.type == "INDENT":
        return "unexpected indent"
    if "INDENT" in exp:
        return "expected an indented block"
    if tok.type == "DEDENT":
        return f"unexpected end of the block; expected {_expected_desc(exp, parser)}"
    return f"unexpected {_tok_desc(tok)}; expected {_expected_desc(exp, parser)}"


def _fail_span(tok, src: str, post) -> Span:
    return _tok_span(src, tok)  # $END carries the position of the last token


def _lex_error(e, src: str, text: str) -> DiagnosticError:
    return _diag(e.message, Span(src, e.line, e.column, e.line, e.column + 1), text, e)


_reference = False


def parse_reference(text: str, source_name: str = "<string>"):
    """Load through Lark's own ``parse`` (its basic lexer + the inline transformer).

    The reference path the fast driver (grammar/_fast.py) must agree with; tests compare them.
    """
    global _reference
    with _lock:
        _reference = True
        try:
            return loads(text, source_name)
        finally:
            _reference = False


def loads(text: str, source_name: str = "<string>", keep_comments: bool = False):
    """Parse ``.tirx`` text into a Function or Module. Never executes code from the text.

    ``keep_comments=True`` also records the text's comments in a side table held by the
    returned object (``tirx.printer.comments_of``), so ``dumps`` prints them back; the IR
    itself, and so structural equality and hash, is the same either way."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            line = bytes(text[: e.start]).count(b"\n") + 1
            raise _diag(
                f"the text is not valid UTF-8: {e.reason}", Span(source_name, line, 1, line, 2), None, e
            ) from e
    if not isinstance(text, str):
        raise TypeError(f"tirx.loads: text must be a str, got {type(text).__name__}")
    if not isinstance(source_name, str):
        source_name = str(source_name)
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.endswith("\n"):
        text += "\n"
    try:
        obj = deep.call(_parse, text, source_name)
    except DiagnosticError as e:
        _later_errors(e, text, source_name)
        raise
    if keep_comments:
        from tirx.grammar._comments import collect

        collect(obj, text, source_name)
    return obj


def _later_errors(e: DiagnosticError, text: str, source_name: str) -> None:
    """Let ``e.diagnostics`` find the errors after ``e`` (grammar/_recover.py), on first use."""

    def find():
        from tirx.grammar._recover import find_more

        return find_more(e, text, lambda t: deep.call(_parse, t, source_name))

    e._find_more = find


def _parse(text: str, source_name: str):
    """Parse normalized text (retried on tirx.ir.deep's worker when nested too deeply)."""
    from tirx.grammar._fast import IndentFail, LexFail, ParseFail
    from tirx.grammar._parser import IndentError, get_parser
    from tirx.grammar._transform_stmt import NeedsMutableAnalysis

    parser, tr, fast = get_parser()
    post = tr.post
    with _lock:
        tr.reset(source_name, text)
        try:
            try:
                return parser.parse(text) if _reference else fast.parse(text, post)
            except NeedsMutableAnalysis as need:
                # a name re-assigned in a nested block: the frontend's rule decides a mutable local
                # or a new binding from the reads after it; read again knowing them
                from tirx.surface.mutable import function_mutables

                mutable = function_mutables(text)
                if mutable is None:
                    raise need.error from None
                tr.reset(source_name, text, mutable)
                return parser.parse(text) if _reference else fast.parse(text, post)
        except DiagnosticError:
            raise
        except (IndentError, IndentFail) as e:
            raise _diag(e.message, _tok_span(source_name, e.token), text, e) from e
        except ParseFail as e:
            raise _diag(
                _parse_fail_message(e.token, e.expected, parser),
                _fail_span(e.token, source_name, post),
                text,
                e,
            ) from e
        except LexFail as e:
            raise _lex_error(e, source_name, text) from e
        except UnexpectedInput as e:
            raise _syntax_error(e, source_name, text, parser, post) from e
        except RecursionError as e:
            if not deep.active():
                raise  # deep.call retries on the large-stack worker
            last = post.last
            span = _tok_span(source_name, last) if last is not None else Span(source_name, 1, 1, 1, 2)
            raise _diag("the text is nested too deeply", span, text, e) from e
        except Exception as e:
            last = post.last
            span = _tok_span(source_name, last) if last is not None else Span(source_name, 1, 1, 1, 2)
            raise _diag(f"cannot load the text ({type(e).__name__}: {e})", span, text, e) from e
        finally:
            tr.reset(None, None)


def load(path, keep_comments: bool = False):
    """Parse a ``.tirx`` file (UTF-8) into a Function or Module (``keep_comments``: see ``loads``)."""
    from tirx.fileio import read_file  # never blocks: a FIFO is refused, not waited on

    p = os.fspath(path)
    data = read_file(p)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise _diag(f"{p} is not valid UTF-8: {e.reason}", Span(str(p), line, 1, line, 2), None, e) from e
    return loads(text, source_name=str(p), keep_comments=keep_comments)
