"""A tight LALR driver and lexer over the tables Lark builds for ``tirx.lark``.

Lark stays the source of truth: it reads the grammar, builds the LALR(1) parse table
(shipped as JSON, ``_tables.py``), and its own ``Lark.parse`` with its basic lexer and the
inline transformer is kept as the reference path (``_parser.parse_reference``; the tests
check both give the same IR). This module runs that same table with the same
transformer callbacks and the same child filtering (anonymous tokens dropped, ``_rule``
children spliced, ``?rule`` single children passed through) in one loop with local
variables, and lexes with one compiled regex whose alternatives are ordered the way
Lark's lexer would decide (priorities, then longest strings first; keywords are
NAMEs retyped by exact match). Indentation tokens, the nesting limits and token
positions follow ``_parser.TirxIndenter``. That is about twice Lark's own throughput.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Tree
from lark.lexer import PatternStr

from tirx.grammar._names import BadName, compare_indent, dotted_value, indent_of, name_value

__all__ = ["FastParser", "Tok"]

_OPEN = frozenset(("LPAR", "LSQB", "LBRACE"))
_CLOSE = frozenset(("RPAR", "RSQB", "RBRACE"))


# NAME and DOTTED as one flat pattern: a name start, then name characters and dots
# (``_names`` checks the parts); the same character sets as NAME / DOTTED in tirx.lark
_WORD = r"[^\x00-\x40\x5b-\x5e\x60\x7b-\x7f][^\x00-\x2c\-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]*"
# the run of a string literal up to its quote, backslash or line end: one character class
_STRING_RUN = {'"': re.compile(r'[^"\\\n]*'), "'": re.compile(r"[^'\\\n]*")}


def _blank_class(patterns: list[str]) -> str:
    """``[...]*`` for the ignored blank patterns, which are each one character class + ``+``."""
    chars = []
    for p in patterns:
        if not (p.startswith("[") and p.endswith("]+")) or "]" in p[1:-2]:
            raise ValueError(f"grammar: the ignored pattern {p!r} is not a character class")
        chars.append(p[1:-2])
    return "[" + "".join(chars) + "]*" if chars else ""


def _string_end(text: str, s: int, line: int, col: int) -> int:
    """The index after the string literal opening at ``s`` (what STRING in tirx.lark matches).

    One loop step per escape: runs without escapes are matched by one character class.
    """
    q = text[s]
    if text.startswith(q * 3, s):  # a triple-quoted string (a docstring): may span lines
        i = s + 3
        while True:
            j = text.find(q * 3, i)
            if j < 0:
                raise LexFail("unterminated triple-quoted string literal", line, col)
            k = j
            while k > s + 3 and text[k - 1] == "\\":
                k -= 1
            if (j - k) % 2 == 0:  # the quotes are not escaped
                return j + 3
            i = j + 1
    run = _STRING_RUN[q].match
    n = len(text)
    i = s + 1
    while True:
        r = run(text, i)
        assert r is not None  # a ``[...]*`` run matches the empty string
        i = r.end()
        c = text[i] if i < n else "\n"
        if c == q:
            return i + 1
        if c == "\\" and i + 1 < n and text[i + 1] != "\n":
            i += 2
            continue
        raise LexFail("unterminated string literal", line, col)


class Tok:
    """A token: the attributes the transformer reads from Lark's Token."""

    __slots__ = ("column", "end_column", "end_line", "line", "type", "value")

    def __init__(self, type_, value, line, column, end_line, end_column):
        self.type = type_
        self.value = value
        self.line = line
        self.column = column
        self.end_line = end_line
        self.end_column = end_column

    def __repr__(self) -> str:
        return f"Tok({self.type}, {self.value!r}, {self.line}:{self.column})"

    def __str__(self) -> str:
        return self.value


class LexFail(Exception):
    def __init__(self, message: str, line: int, column: int):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


class IndentFail(Exception):
    def __init__(self, message: str, tok: Tok):
        super().__init__(message)
        self.message = message
        self.token = tok


class ParseFail(Exception):
    def __init__(self, tok: Tok, expected: set[str]):
        super().__init__(f"unexpected {tok.type}")
        self.token = tok
        self.expected = expected


class _Splice(list):
    """Children of an inlined ``_rule``: spliced into the parent's children."""

    __slots__ = ()


def _as_splice(out: list) -> _Splice:
    """An inlined rule's children; a list that already is one is reused (no copy)."""
    return out if type(out) is _Splice else _Splice(out)


def _filter_fn(keep, expand, expand1, cb, size):
    """Child filter + ``?rule`` single-child expansion + callback, as Lark's wrappers do."""
    if not any(expand):
        idx = tuple(keep)
        if idx == tuple(range(size)):  # nothing to drop: the slice the driver made is ours
            if expand1:

                def h(ch, cb=cb):
                    return ch[0] if len(ch) == 1 else cb(ch)

                return h
            return cb
        if expand1:

            def f(ch, idx=idx, cb=cb):
                ch = [ch[i] for i in idx]
                return ch[0] if len(ch) == 1 else cb(ch)

        else:

            def f(ch, idx=idx, cb=cb):
                return cb([ch[i] for i in idx])

        return f
    pairs = tuple(zip(keep, expand))

    def g(ch, pairs=pairs, cb=cb, expand1=expand1):
        out: list = []
        first = True
        for i, ex in pairs:
            c = ch[i]
            if ex and type(c) is _Splice:
                if first:
                    out = c  # reuse the spliced list (it is ours): linear, not quadratic
                else:
                    out.extend(c)
            else:
                out.append(c)
            first = False
        if expand1 and len(out) == 1:
            return out[0]
        return cb(out)

    return g


class FastParser:
    """The LALR table of a constructed ``Lark`` instance, driven by one function."""

    def __init__(self, lark_inst, transformer) -> None:
        self.transformer = transformer
        pt = lark_inst.parser.parser.parser.parse_table
        self.start_state = pt.start_states["start"]
        self.end_state = pt.end_states["start"]
        # one dict per state: terminal -> int (shift) | tuple (reduce); nonterminal -> goto
        infos: dict = {}
        table: list = [None] * (max(pt.states) + 1)
        for state, acts in pt.states.items():
            d = {}
            for sym, (action, arg) in acts.items():
                if action.name == "Shift":
                    d[sym] = arg
                else:
                    info = infos.get(arg)
                    if info is None:
                        info = infos[arg] = self._rule_info(arg)
                    d[sym] = info
            table[state] = d
        self.table = table
        self.units: dict = {}
        self.tok_cbs = {
            t.name: getattr(transformer, t.name)
            for t in lark_inst.terminals
            if callable(getattr(transformer, t.name, None))
        }
        self._build_lexer(lark_inst)

    def _rule_info(self, rule) -> tuple:
        keep, expand = [], []
        for i, sym in enumerate(rule.expansion):
            if sym.is_term and sym.filter_out and not rule.options.keep_all_tokens:
                continue
            keep.append(i)
            expand.append((not sym.is_term) and sym.name.startswith("_"))
        name = rule.alias or rule.options.template_source or rule.origin.name
        inline = name.startswith("_")
        cb = None if inline else getattr(self.transformer, name, None)
        if cb is None:
            # Lark would build a Tree here; inlined rules hand their children to the parent
            cb = _as_splice if inline else (lambda ch, name=name: Tree(name, ch))
        expand1 = bool(rule.options.expand1) and not rule.alias
        if expand1 and len(rule.expansion) == 1 and keep == [0] and not expand[0]:
            return (1, rule.origin.name, None)  # a unit reduction: the value passes through
        if inline and not expand1 and not any(expand) and len(keep) == len(rule.expansion):
            fn = _Splice
        else:
            fn = _filter_fn(keep, expand, expand1, cb, len(rule.expansion))
        return (len(rule.expansion), rule.origin.name, fn)

    # ------------------------------------------------------------------ lexer
    def _build_lexer(self, lark_inst) -> None:
        """One master regex, in the order Lark's lexer would decide.

        Every piece is a flat pattern (no quantifier inside a repeated group), so a match
        attempt is linear in what it scans. Three things are finished in Python, in linear
        loops: string literals (scanned escape by escape, see ``_string_end``; a regex
        repeating a group keeps per-character backtracking state, hundreds of bytes per
        character), runs of line ends (merged into one NL), and names (checked and
        NFKC-normalized by ``_names``).
        """
        ignore = set(lark_inst.lexer_conf.ignore)
        regexes, strings, keywords, ign = [], [], {}, []
        name_re = None
        for t in lark_inst.terminals:
            p = t.pattern
            if t.name in ignore:
                ign.append(t)
                continue
            if t.name == "NAME":
                name_re = re.compile(p.to_regexp())
            if isinstance(p, PatternStr):
                strings.append(t)
            else:
                regexes.append(t)
        kw_strings = []
        for t in strings:
            if name_re is not None and name_re.fullmatch(t.pattern.value):
                keywords[t.pattern.value] = t.name
            else:
                kw_strings.append(t)
        regexes.sort(key=lambda t: (-t.priority, t.name != "NL", t.name))
        # punctuation: one group for the multi-character operators (longest first), one
        # character class for the single characters; the matched text names the terminal
        punct = {t.pattern.value: t.name for t in kw_strings}
        multi = sorted((v for v in punct if len(v) > 1), key=lambda v: (-len(v), v))
        single = sorted(v for v in punct if len(v) == 1)
        alts = []
        ws = []
        for t in ign:
            rx = t.pattern.to_regexp()
            if "\n" in rx or "\\n" in rx:
                alts.append(f"(?P<_CONT>{rx})")
            else:
                ws.append(rx)
        by_name = {t.name: t for t in regexes}
        # NAME and DOTTED in one flat group (most tokens are names): DOTTED when it has a dot
        alts.append(f"(?P<_WORD>{_WORD})")
        for t in regexes:
            if t.name in ("NAME", "DOTTED"):
                continue
            if t.name == "STRING":
                alts.append("(?P<STRING>[\"'])")  # the opening quote; _string_end finds the end
                continue
            alts.append(f"(?P<{t.name}>{t.pattern.to_regexp()})")
        if multi:
            alts.append("(?P<_MULTI>" + "|".join(re.escape(v) for v in multi) + ")")
        if single:
            alts.append("(?P<_SINGLE>[" + "".join(re.escape(v) for v in single) + "])")
        # leading blanks: one character class, never a repeated group (``(?:[ ]+)*``
        # backtracks exponentially when the token after the blanks fails to match)
        lead = _blank_class(ws)
        self.master = re.compile(lead + "(?:" + "|".join(alts) + ")")
        self.ws = re.compile(lead)
        nl = by_name["NL"].pattern.to_regexp()
        self.nl_more = re.compile(lead + nl)  # the next line end of a run (blank/comment line)
        self.punct = punct
        self.keywords = keywords

    def tokens(self, text: str, post=None):
        match = self.master.match
        nl_more = self.nl_more.match
        keywords = self.keywords
        punct = self.punct
        n = len(text)
        pos = 0
        line = 1
        line_start = 0
        paren = 0
        levels = [(0, 0)]
        tok = None
        while pos < n:
            m = match(text, pos)
            if m is None:
                blanks = self.ws.match(text, pos)
                assert blanks is not None  # ``[...]*`` (or empty) matches the empty string
                p = blanks.end()
                if p >= n:
                    break
                raise LexFail(f"unexpected character {text[p]!r}", line, p - line_start + 1)
            typ = m.lastgroup
            assert typ is not None  # every alternative of the master pattern is a named group
            s = m.start(typ)
            end = m.end()
            if typ == "NL":
                m2 = nl_more(text, end)
                while m2 is not None:  # blank and comment-only lines: one NL for the run
                    end = m2.end()
                    m2 = nl_more(text, end)
                val = text[s:end]
                last_nl = val.rfind("\n")
                new_line = line + val.count("\n")
                new_start = s + last_nl + 1
                tok = Tok("NL", val, line, s - line_start + 1, new_line, end - new_start + 1)
                line = new_line
                line_start = new_start
                pos = end
                if paren:
                    continue
                yield tok
                ind = val[last_nl + 1 :]
                indent = indent_of(ind)
                col = end - new_start + 1
                try:
                    c = compare_indent(indent, levels[-1])
                except ValueError as e:
                    raise IndentFail(str(e), Tok("INDENT", ind, line, 1, line, col)) from None
                if c == 0:
                    continue
                if c > 0:
                    levels.append(indent)
                    yield Tok("INDENT", ind, line, col, line, col)
                else:
                    try:
                        while compare_indent(indent, levels[-1]) < 0:
                            levels.pop()
                            yield Tok("DEDENT", ind, line, col, line, col)
                    except ValueError as e:
                        raise IndentFail(str(e), Tok("DEDENT", ind, line, 1, line, col)) from None
                    if indent != levels[-1]:
                        raise IndentFail(
                            "unindent does not match any outer indentation level",
                            Tok("DEDENT", ind, line, 1, line, col),
                        )
                continue
            if typ == "_CONT":
                line += 1
                line_start = end
                pos = end
                continue
            col = s - line_start + 1
            if typ == "STRING":
                end = _string_end(text, s, line, col)
            val = text[s:end]
            pos = end
            if typ == "_WORD":
                try:
                    if "." in val:
                        typ = "DOTTED"
                        val = dotted_value(val)
                    elif val.isascii():
                        typ = keywords.get(val, "NAME")
                    else:
                        typ = "NAME"
                        val = name_value(val)
                except BadName as e:
                    raise LexFail(e.message, line, col + e.offset) from e
            elif typ == "_SINGLE":
                typ = punct[val]
                tok = Tok(typ, val, line, col, line, col + 1)
                yield tok
                if typ in _OPEN:
                    paren += 1
                elif typ in _CLOSE and paren:
                    paren -= 1
                continue
            elif typ == "_MULTI":
                typ = punct[val]
            elif typ == "STRING" and "\n" in val:  # a triple-quoted string over several lines
                last = val.rfind("\n")
                tok = Tok(typ, val, line, col, line + val.count("\n"), len(val) - last)
                line += val.count("\n")
                line_start = s + last + 1
                yield tok
                continue
            tok = Tok(typ, val, line, col, line, col + end - s)
            yield tok
        col = pos - line_start + 1
        while len(levels) > 1:
            levels.pop()
            yield Tok("DEDENT", "", line, col, line, col)
        end_tok = Tok("$END", "", line, col, line, col)
        if tok is not None:
            end_tok = Tok("$END", "", tok.line, tok.column, tok.end_line, tok.end_column)
        yield end_tok

    # ------------------------------------------------------------------ driver
    def parse(self, text: str, post) -> Any:
        table = self.table
        units = self.units
        tok_cbs = self.tok_cbs
        end_state = self.end_state
        state = self.start_state
        states = [state]
        values: list = []
        tok = None
        post.last = None
        try:
            for tok in self.tokens(text, post):
                ttype = tok.type
                while True:
                    act = table[state].get(ttype)
                    if act is None:
                        acts = table[state]
                        raise ParseFail(tok, {s for s in acts if s.isupper() or s.startswith("$")})
                    if type(act) is int:
                        state = act
                        states.append(act)
                        cb = tok_cbs.get(ttype)
                        values.append(tok if cb is None else cb(tok))
                        break
                    size, origin, fn = act
                    if fn is None:
                        # a chain of unit reductions (test <- nottest <- arith <- unary <- primary):
                        # its end state depends only on (state below, top state, lookahead)
                        below = states[-2]
                        key = (below, state, ttype)
                        top = units.get(key)
                        if top is None:
                            top = table[below][origin]
                            while True:
                                a2 = table[top].get(ttype)
                                if type(a2) is not tuple or a2[2] is not None:
                                    break
                                top = table[below][a2[1]]
                            units[key] = top
                        states[-1] = state = top
                        continue
                    if size:
                        ch = values[-size:]
                        del values[-size:]
                        del states[-size:]
                    else:
                        ch = []
                    value = fn(ch)
                    state = table[states[-1]][origin]
                    states.append(state)
                    values.append(value)
                    if state == end_state and ttype == "$END":
                        return values[-1]
        except BaseException:
            post.last = tok  # locates errors that carry no token of their own
            raise
        raise ParseFail(Tok("$END", "", 1, 1, 1, 1), set())  # pragma: no cover - $END always comes last
