"""The Lark parser for ``tirx.lark``: indenter, construction, and the saved-parser cache.

Building the LALR tables costs about half a second, so it never happens at ``import
tirx``: the parser is made on the first ``loads``, from a serialized copy in the user
cache directory when one matches this grammar and Lark version, otherwise built and
then saved there (best effort: a read-only cache directory just means building each
process). ``TIRX_GRAMMAR_CACHE=0`` turns the cache off; ``TIRX_CACHE_DIR`` moves it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import threading
from pathlib import Path
from typing import Any

from lark import Lark, Token
from lark.lark import PostLex

GRAMMAR_PATH = Path(__file__).with_name("tirx.lark")

# Python itself refuses more than 100 indentation levels and 200 nested brackets.
MAX_BLOCK_DEPTH = 100
MAX_PAREN_DEPTH = 200

_OPEN = frozenset(("LPAR", "LSQB", "LBRACE"))
_CLOSE = frozenset(("RPAR", "RSQB", "RBRACE"))


class NestingError(Exception):
    """Raised by the indenter; turned into a located DiagnosticError by ``loads``."""

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
        return self._process(stream)

    def _process(self, stream):
        paren = 0
        levels = [0]
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
                indent = len(ind) + 7 * ind.count("\t")
                cur = levels[-1]
                if indent == cur:
                    continue
                line = tok.end_line
                col = tok.end_column
                if indent > cur:
                    if len(levels) > MAX_BLOCK_DEPTH:
                        raise NestingError(
                            f"too many nested blocks (more than {MAX_BLOCK_DEPTH} levels of indentation)",
                            Token("INDENT", ind, tok.end_pos, line, col, line, col, tok.end_pos),
                        )
                    levels.append(indent)
                    yield Token("INDENT", ind, tok.end_pos, line, col, line, col, tok.end_pos)
                else:
                    while indent < levels[-1]:
                        levels.pop()
                        yield Token("DEDENT", ind, tok.end_pos, line, col, line, col, tok.end_pos)
                    if indent != levels[-1]:
                        raise NestingError(
                            "unindent does not match any outer indentation level",
                            Token("DEDENT", ind, tok.end_pos, line, 1, line, col, tok.end_pos),
                        )
            else:
                yield tok
                if t in _OPEN:
                    paren += 1
                    if paren > MAX_PAREN_DEPTH:
                        raise NestingError(
                            f"too many nested brackets (more than {MAX_PAREN_DEPTH})",
                            tok,
                        )
                elif t in _CLOSE and paren:
                    paren -= 1
        while len(levels) > 1:
            levels.pop()
            if tok is None:
                yield Token("DEDENT", "", 0, 1, 1, 1, 1, 0)
            else:
                yield Token.new_borrow_pos("DEDENT", "", tok)


_lock = threading.Lock()
_parser: Lark | None = None
_transformer: Any = None
_fast: Any = None


def grammar_text() -> str:
    return GRAMMAR_PATH.read_text(encoding="utf-8")


def _cache_dir() -> Path | None:
    if os.environ.get("TIRX_GRAMMAR_CACHE", "1") == "0":
        return None
    d = os.environ.get("TIRX_CACHE_DIR")
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tirx"


def _options(transformer, postlex, **extra):
    opts = dict(
        parser="lalr",
        lexer="contextual",
        transformer=transformer,
        postlex=postlex,
        maybe_placeholders=False,
        propagate_positions=False,
        start="start",
    )
    opts.update(extra)
    return opts


def build(transformer=None, postlex=None, strict: bool = False, cache: bool | str = False) -> Lark:
    """Construct the parser (``strict=True`` makes Lark reject any conflict or collision)."""
    postlex = postlex if postlex is not None else TirxIndenter()
    return Lark(grammar_text(), **_options(transformer, postlex, strict=strict, cache=cache))


def cache_file() -> Path | None:
    d = _cache_dir()
    if d is None:
        return None
    import lark

    py = f"{sys.version_info[0]}{sys.version_info[1]}"
    key = hashlib.sha256(f"{lark.__version__}\0{py}\0{grammar_text()}".encode()).hexdigest()[:20]
    return d / f"grammar-{key}.lark.cache"


def _make(transformer, postlex) -> Lark:
    path = cache_file()
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            writable = os.access(path.parent, os.W_OK)
        except OSError:
            writable = False
        if path.exists() or writable:
            try:
                return build(transformer, postlex, cache=str(path))
            except Exception:  # a corrupt or foreign cache file: rebuild without it
                with contextlib.suppress(OSError):
                    path.unlink()
    return build(transformer, postlex)


def get_parser() -> tuple[Lark, Any, Any]:
    """(Lark parser, transformer, fast driver), made once per process under a lock.

    The transformer's ``post`` is the indenter (it records the last token, for locating
    errors that come with no token of their own).
    """
    global _parser, _transformer, _fast
    if _fast is None:
        with _lock:
            if _fast is None:
                from ._fast import FastParser
                from ._transform import TextBuilder

                post = TirxIndenter()
                tr = TextBuilder(post)
                p = _make(tr, post)
                _transformer = tr
                _parser = p
                _fast = FastParser(p, tr)
    return _parser, _transformer, _fast
