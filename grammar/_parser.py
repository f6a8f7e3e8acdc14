"""The Lark parser for ``tirx.lark``: indenter, construction, and the shipped tables.

Building the LALR tables costs a few hundred milliseconds, so it never happens at ``import
tirx`` nor, normally, at all: the parser is made on the first ``loads`` from the tables
that ship with the package as plain JSON (``tirx_tables.json``, see ``_tables.py``). Only
when they do not match this grammar or the installed Lark are they built, in memory.
Nothing is read from or written to a cache directory, and nothing is unpickled.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from lark import Lark, Token
from lark.lark import PostLex

from tirx.grammar._names import BadName, compare_indent, dotted_value, indent_of, name_value

GRAMMAR_PATH = Path(__file__).with_name("tirx.lark")


_OPEN = frozenset(("LPAR", "LSQB", "LBRACE"))
_CLOSE = frozenset(("RPAR", "RSQB", "RBRACE"))


class IndentError(Exception):
    """Raised by the indenter and the name checks; ``loads`` makes it a located DiagnosticError."""

    def __init__(self, message: str, token: Token):
        super().__init__(message)
        self.message = message
        self.token = token


class TirxIndenter(PostLex):
    """Python-style NL / INDENT / DEDENT tokens, with located errors and nesting limits.

    Unlike ``lark.indenter.Indenter`` it gives INDENT/DEDENT tokens the position of the
    line they start, raises a located error on a bad dedent (Lark's DedentError has no
    position), and records the last token seen so any later failure can be located.
    """

    always_accept = ("NL",)

    def __init__(self) -> None:
        self.last: Token | None = None

    def process(self, stream):
        self.last = None
        return self._process(_merge_nl(stream))

    def _process(self, stream):
        paren = 0
        levels = [(0, 0)]
        tok = None
        for tok in stream:
            self.last = tok
            t = tok.type
            if t == "NL":
                if paren:
                    continue
                yield tok
                v = tok.value
                ind = v[v.rfind("\n") + 1 :]
                indent = indent_of(ind)
                line = tok.end_line
                col = tok.end_column
                try:
                    c = compare_indent(indent, levels[-1])
                except ValueError as e:
                    raise IndentError(
                        str(e), Token("INDENT", ind, tok.end_pos, line, 1, line, col, tok.end_pos)
                    ) from None
                if c == 0:
                    continue
                if c > 0:
                    levels.append(indent)
                    yield Token("INDENT", ind, tok.end_pos, line, col, line, col, tok.end_pos)
                else:
                    try:
                        while compare_indent(indent, levels[-1]) < 0:
                            levels.pop()
                            yield Token("DEDENT", ind, tok.end_pos, line, col, line, col, tok.end_pos)
                    except ValueError as e:
                        raise IndentError(
                            str(e), Token("DEDENT", ind, tok.end_pos, line, 1, line, col, tok.end_pos)
                        ) from None
                    if indent != levels[-1]:
                        raise IndentError(
                            "unindent does not match any outer indentation level",
                            Token("DEDENT", ind, tok.end_pos, line, 1, line, col, tok.end_pos),
                        )
            else:
                yield tok
                if t in _OPEN:
                    paren += 1
                elif t in _CLOSE and paren:
                    paren -= 1
        while len(levels) > 1:
            levels.pop()
            if tok is None:
                yield Token("DEDENT", "", 0, 1, 1, 1, 1, 0)
            else:
                yield Token.new_borrow_pos("DEDENT", "", tok)


def _merge_nl(stream):
    """One NL token per run of line ends (blank and comment-only lines), as Python does."""
    pending: list = []
    for tok in stream:
        if tok.type == "NL":
            pending.append(tok)
            continue
        if pending:
            yield _joined_nl(pending)
            pending = []
        yield tok
    if pending:
        yield _joined_nl(pending)


def _joined_nl(toks: list) -> Token:
    first, last = toks[0], toks[-1]
    if len(toks) == 1:
        return first
    value = "".join(toks)
    return Token(
        "NL", value, first.start_pos, first.line, first.column, last.end_line, last.end_column, last.end_pos
    )


def _name_cb(tok: Token) -> Token:
    """Lexer callback (Lark path): check / NFKC-normalize a NAME token like Python."""
    if tok.isascii():
        return tok
    return _checked(tok, name_value)


def _dotted_cb(tok: Token) -> Token:
    return _checked(tok, dotted_value)


def _checked(tok: Token, fn) -> Token:
    try:
        v = fn(str(tok))
    except BadName as e:
        assert tok.column is not None  # the lexer positions every token
        col = tok.column + e.offset
        raise IndentError(
            e.message, Token(tok.type, tok, tok.start_pos, tok.line, col, tok.line, col + 1)
        ) from e
    return tok if v == tok else tok.update(value=v)


# NAME last: Lark chains a callback after its keyword check with ``lambda t: t.type == type_``,
# a closure over its loop variable, so only the last chained terminal's check is right
LEXER_CALLBACKS = {"DOTTED": _dotted_cb, "NAME": _name_cb}

_lock = threading.Lock()
_parser: Lark | None = None
_transformer: Any = None
_fast: Any = None


def grammar_text() -> str:
    return GRAMMAR_PATH.read_text(encoding="utf-8")


def _options(transformer, postlex, **extra):
    opts = dict(
        parser="lalr",
        # the basic lexer: the indenter merges runs of NL tokens, which needs one token of
        # lookahead, and a contextual lexer would lex that token in a stale parser state
        lexer="basic",
        transformer=transformer,
        postlex=postlex,
        maybe_placeholders=False,
        propagate_positions=False,
        start="start",
    )
    opts.update(extra)
    return opts


def build(transformer=None, postlex=None, strict: bool = False) -> Lark:
    """Construct the parser from the grammar (``strict=True``: Lark rejects any conflict or collision)."""
    postlex = postlex if postlex is not None else TirxIndenter()
    return Lark(
        grammar_text(), **_options(transformer, postlex, strict=strict, lexer_callbacks=LEXER_CALLBACKS)
    )


def _make(transformer, postlex) -> Lark:
    from tirx.grammar._tables import load_tables

    p = load_tables(grammar_text(), transformer=transformer, postlex=postlex, lexer_callbacks=LEXER_CALLBACKS)
    return p if p is not None else build(transformer, postlex)


def get_parser() -> tuple[Lark, Any, Any]:
    """(Lark parser, transformer, fast driver), made once per process under a lock.

    The transformer's ``post`` is the indenter (it records the last token, for locating
    errors that come with no token of their own).
    """
    global _parser, _transformer, _fast
    if _fast is None:
        with _lock:
            if _fast is None:
                from tirx.grammar._fast import FastParser
                from tirx.grammar._transform import TextBuilder

                post = TirxIndenter()
                tr = TextBuilder(post)
                p = _make(tr, post)
                _transformer = tr
                _parser = p
                _fast = FastParser(p, tr)
    assert _parser is not None  # set together with _fast
    return _parser, _transformer, _fast
