"""The layout engine of ``tirx fmt``: whitespace and line breaks only, never the tokens.

``.tirx`` text is Python syntax, so it is formatted the way black formats Python, at the
token level: every token is kept as the user spelled it (sugar stays sugar, defaults stay
implicit, ``0.90000000000000002`` stays), and only the space between tokens changes:

- logical lines are re-indented four spaces a level (tabs and odd widths included), and a
  one-line suite (``if c: x = 1``) gets its own line;
- spaces around operators, commas, colons, ``=`` and ``:=`` / ``->`` follow one set of rules
  (those of ``tirx.dumps``: ``f(a, b=1)``, ``A[i:i + 4]``, ``x: T.int32 = -y * 2``);
- runs of blank lines are collapsed (two at the top level, one inside a block; none after a
  decorator or a block opener, nor at the start and end of the file); backslash
  continuations are joined;
- a line longer than the line length is split at a bracket: its contents go on their own
  lines, one top-level comma-separated item per line (with a trailing comma added), then
  recursively; inside brackets a long expression is split before its lowest-priority
  operators. A trailing comma the user wrote (``f(a, b,)``) keeps its bracket exploded
  (black's "magic trailing comma");
- comments stay where they were: a trailing comment after the token it followed, a
  full-line comment on its own line before the token (or statement) it preceded; a
  full-line comment between statements is indented as the statement it belongs with (by
  its column: at the end of a block it stays in the block).

Every decision depends only on the tokens, the comments and the line length, never on the
old layout, which makes the output a fixpoint (``tools/fmt.py`` checks it anyway, and that
the result loads to the same IR, before anything is written).
"""

from __future__ import annotations

import re

__all__ = ["LayoutError", "layout", "tokens"]


class LayoutError(ValueError):
    """Text the layout engine cannot tokenize or indent (it did load: a tirx bug)."""


# the lexical classes of tirx.lark (NAME/DOTTED as one word; FLOAT before INT)
_WORD = r"[^\x00-\x40\x5b-\x5e\x60\x7b-\x7f][^\x00-\x2c\-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]*"
_FLOAT = r"(?:\d[\d_]*)?\.\d[\d_]*(?:[eE][-+]?\d+)?|\d[\d_]*\.(?:[eE][-+]?\d+)?|\d[\d_]*[eE][-+]?\d+"
_INT = r"0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|\d[\d_]*"
_STRING = r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
_OPS = r":=|->|//|<<|>>|==|!=|<=|>=|[-+*/%&|^~<>=:,@()\[\]{}]"
# one physical line's tokens and comment (strings first, so a "#" inside one is not a
# comment); anything else that is not blank comes out as one character of its own
_LINE = re.compile(rf"{_STRING}|#[^\n]*|{_WORD}|{_FLOAT}|{_INT}|{_OPS}|[^ \t\f]")
# the tokens only, for comparing two texts
_SIGNIFICANT = re.compile(rf"{_STRING}|#[^\r\n]*|{_WORD}|{_FLOAT}|{_INT}|{_OPS}")
# the characters the grammar has no token for (what the last alternative of _LINE returns)
_STRAY = frozenset(chr(c) for c in range(128) if not (chr(c).isalnum() or chr(c) in "_-+*/%&|^~<>=:,@()[]{}"))
_OP_START = frozenset("-+*/%&|^~<>=:,@()[]{}!")

_KEYWORDS = frozenset(
    "from import as class def pass break continue return assert for in while with if elif else and or not".split()  # noqa: SIM905
)
_COMPOUND = frozenset(("if", "elif", "else", "for", "while", "with", "def", "class"))
_OPEN = frozenset("([{")
_CLOSE = frozenset(")]}")
_UNARY = frozenset("-+~")
# binary operators by priority, lowest first (where a long expression inside brackets splits)
_PRIORITY = {
    "or": 1,
    "and": 2,
    **dict.fromkeys(("==", "!=", "<", "<=", ">", ">="), 4),
    "|": 5,
    "^": 6,
    "&": 7,
    "<<": 8,
    ">>": 8,
    "+": 9,
    "-": 9,
    **dict.fromkeys(("*", "/", "//", "%"), 10),
}


def _kind(t: str) -> str:
    """``o`` operator or punctuation, ``s`` string, ``n`` number, ``w`` word (name, keyword)."""
    c = t[0]
    if c in _OP_START:
        return "o"
    if c == '"' or c == "'":
        return "s"
    if "0" <= c <= "9" or c == ".":
        return "n"
    return "w"


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` as strings (no comments, newlines or blanks), for comparing
    two texts (only for text that lexes: what does not is skipped)."""
    return [t for t in _SIGNIFICANT.findall(text) if t[0] != "#"]


class _Stmt:
    """A logical line: its tokens (texts and kinds), the comments around them (``lead``:
    full-line comments inside brackets before token i; ``trail``: the comment ending the
    line of token i), its indentation (width, then level) and the blank lines before it."""

    __slots__ = ("blank", "kinds", "lead", "level", "line", "stack", "texts", "trail", "width")

    def __init__(self, line: int, width: int, blank: int) -> None:
        self.texts: list[str] = []
        self.kinds: list[str] = []
        self.lead: dict[int, list[str]] = {}
        self.trail: dict[int, str] = {}
        self.line = line
        self.width = width
        self.blank = blank
        self.level = 0
        self.stack: tuple[int, ...] = (0,)


class _Comment:
    """A full-line comment between statements: its text, column width, blank lines before."""

    __slots__ = ("blank", "level", "text", "width")

    def __init__(self, text: str, width: int, blank: int) -> None:
        self.text = text
        self.width = width
        self.blank = blank
        self.level = 0


def _indent_width(raw: str) -> int:
    """The indentation of a physical line as the text's indenter counts it: the leading
    spaces and tabs, a tab eight."""
    ws = raw[: len(raw) - len(raw.lstrip(" \t"))]
    return len(ws) + 7 * ws.count("\t")


def _scan(text: str) -> list[_Stmt | _Comment]:
    """Statements and full-line comments, in order; comments inside brackets are attached to
    the tokens (``lead`` / ``trail``)."""
    items: list[_Stmt | _Comment] = []
    cur: _Stmt | None = None
    depth = 0
    pending: list[str] = []
    last_line = 0  # the physical line of the last token or comment
    continued = False
    for line, raw in enumerate(text.split("\n"), 1):
        toks = _LINE.findall(raw)
        if toks and toks[-1] == "\r":
            toks.pop()
        if not toks:
            if continued:
                raise LayoutError(f"a backslash continuation before a blank line at line {line - 1}")
            continue
        was_continued, continued = continued, False
        on_line = False  # a token of this physical line is in ``cur``
        for k, t in enumerate(toks):
            c = t[0]
            if c == "#":
                t = t.rstrip()
                if on_line and cur is not None:
                    cur.trail[len(cur.texts) - 1] = t
                elif depth == 0:
                    if cur is not None:  # pragma: no cover - a continued line then a comment does not load
                        raise LayoutError(f"a comment inside a continued line at line {line}")
                    items.append(_Comment(t, _indent_width(raw), line - last_line - 1))
                else:
                    pending.append(t)
                last_line = line
                continue
            if t in _STRAY:
                if t == "\\" and k == len(toks) - 1:
                    continued = True
                    continue
                raise LayoutError(f"unexpected character {t!r} at line {line}")
            if cur is None:
                cur = _Stmt(line, 0 if was_continued else _indent_width(raw), line - last_line - 1)
            kind = "o" if c in _OP_START else _kind(t)
            if kind == "o":
                if t in _OPEN:
                    depth += 1
                elif t in _CLOSE:
                    depth -= 1
                    if depth < 0:
                        raise LayoutError(f"unmatched {t!r} at line {line}")
            if pending:
                cur.lead[len(cur.texts)] = pending
                pending = []
            cur.texts.append(t)
            cur.kinds.append(kind)
            on_line = True
            last_line = line
        if depth == 0 and not continued and cur is not None:
            items.append(cur)
            cur = None
    if cur is not None:
        if depth or continued:
            raise LayoutError("the text ends inside a bracket or a continued line")
        items.append(cur)
    return items


def _levels(items: list[_Stmt | _Comment]) -> list[_Stmt | _Comment]:
    """Indentation levels of the statements (as the indenter computes them), one-line suites
    split off, then the levels of the full-line comments."""
    out: list[_Stmt | _Comment] = []
    widths = [0]
    first = True
    for it in items:
        if isinstance(it, _Comment):
            out.append(it)
            continue
        w = 0 if first else it.width  # the first line's indentation is not read
        first = False
        if w > widths[-1]:
            widths.append(w)
        else:
            while w < widths[-1]:
                widths.pop()
            if w != widths[-1]:
                raise LayoutError(f"inconsistent dedent at line {it.line}")
        it.level = len(widths) - 1
        it.stack = tuple(widths)
        out.append(it)
        b = _suite_split(it)
        if b is not None:
            sub = _Stmt(it.line, widths[-1] + 1, 0)
            sub.texts, it.texts = it.texts[b:], it.texts[:b]
            sub.kinds, it.kinds = it.kinds[b:], it.kinds[:b]
            sub.lead = {i - b: v for i, v in it.lead.items() if i >= b}
            sub.trail = {i - b: v for i, v in it.trail.items() if i >= b}
            it.lead = {i: v for i, v in it.lead.items() if i < b}
            it.trail = {i: v for i, v in it.trail.items() if i < b}
            sub.level = it.level + 1
            sub.stack = (*it.stack, widths[-1] + 1)
            out.append(sub)
    # full-line comments: the deepest level open around them whose width fits their column
    nxt: _Stmt | None = None
    following: list[_Stmt | None] = [None] * len(out)
    for i in range(len(out) - 1, -1, -1):
        following[i] = nxt
        it = out[i]
        if isinstance(it, _Stmt):
            nxt = it
    prev: _Stmt | None = None
    for i, it in enumerate(out):
        if isinstance(it, _Stmt):
            prev = it
            continue
        after = following[i]
        lo = after.level if after is not None else 0
        stack = prev.stack if prev is not None else (0,)
        if after is not None and after.level >= len(stack):
            stack = after.stack
        level = lo
        for k in range(lo + 1, len(stack)):
            if stack[k] <= it.width:
                level = k
        it.level = level
    return out


def _suite_split(st: _Stmt) -> int | None:
    """Where the body of a one-line suite (``else: pass``) starts; None if there is none."""
    texts = st.texts
    if texts[0] not in _COMPOUND or st.kinds[0] != "w":
        return None
    depth = 0
    for i, s in enumerate(texts):
        if st.kinds[i] != "o":
            continue
        if s in _OPEN:
            depth += 1
        elif s in _CLOSE:
            depth -= 1
        elif s == ":" and depth == 0:
            return i + 1 if i + 1 < len(texts) else None
    return None


def _operand_ends(text: str, kind: str) -> bool:
    """Whether a token can end an operand (a name, number, string, closing bracket): then a
    following ``-`` is binary and a following ``(`` / ``[`` is a call or subscript."""
    if kind == "w":
        return text not in _KEYWORDS
    if kind == "o":
        return text in _CLOSE
    return True


class _Line:
    """One logical line being laid out: its tokens and the per-token facts the layout reads
    (matching brackets, spacing; ``prepare`` adds prefix sums of widths and of what forces a
    line break, needed only when the line does not simply fit)."""

    def __init__(self, st: _Stmt, limit: int) -> None:
        self.texts = texts = st.texts
        self.kinds = kinds = st.kinds
        self.lead = st.lead
        self.trail = st.trail
        self.limit = limit
        n = len(texts)
        match = [-1] * n
        opener = [-1] * n  # the innermost open bracket around each token
        unary = [False] * n
        stack: list[int] = []
        self.trailing_comma = False
        for i in range(n):
            if kinds[i] != "o":
                opener[i] = stack[-1] if stack else -1
                continue
            s = texts[i]
            opener[i] = stack[-1] if stack else -1
            if s in _OPEN:
                stack.append(i)
            elif s in _CLOSE:
                j = stack.pop()
                match[i] = j
                match[j] = i
                if texts[i - 1] == ",":
                    self.trailing_comma = True
            elif s in _UNARY:
                unary[i] = s == "~" or i == 0 or not _operand_ends(texts[i - 1], kinds[i - 1])
        self.match = match
        self.opener = opener
        self.unary = unary
        space = [0] * n
        for i in range(1, n):
            space[i] = self._space(i)
        self.space = space

    def simple(self) -> bool:
        """No comment but a last one, no trailing comma: the line may be printed flat."""
        n = len(self.texts)
        return not self.lead and not self.trailing_comma and (not self.trail or (n - 1) in self.trail)

    def prepare(self) -> None:
        texts, match, space = self.texts, self.match, self.space
        n = len(texts)
        # magic trailing commas: a comma right before a closer the user (or fmt) exploded
        magic_open = [0] * n
        for i in range(n):
            c = match[i]
            if c > i + 1 and texts[c - 1] == "," and not self._single(i, c):
                magic_open[i] = 1
        pre = [0] * (n + 1)
        lead = [0] * (n + 1)
        trail = [0] * (n + 1)
        magic = [0] * (n + 1)
        mtc = [0] * (n + 1)
        has_lead, has_trail = self.lead, self.trail
        for i in range(n):
            pre[i + 1] = pre[i] + len(texts[i]) + space[i]
            lead[i + 1] = lead[i] + (i in has_lead)
            trail[i + 1] = trail[i] + (i in has_trail)
            magic[i + 1] = magic[i] + magic_open[i]
            c = match[i + 1] if i + 1 < n else -1
            mtc[i + 1] = mtc[i] + (texts[i] == "," and 0 <= c < i and magic_open[c])
        self.pre, self.leadc, self.trailc, self.magicc, self.mtc = pre, lead, trail, magic, mtc

    # ---------------------------------------------------------------- spacing
    def _single(self, o: int, c: int) -> bool:
        """``(x,)`` (a 1-tuple) and ``A[x,]``: a trailing comma that is not magic."""
        texts = self.texts
        commas = 0
        i = o + 1
        while i < c:
            if self.match[i] > i:
                i = self.match[i] + 1
                continue
            if texts[i] == ",":
                commas += 1
            i += 1
        if commas != 1:
            return False
        called = o > 0 and _operand_ends(texts[o - 1], self.kinds[o - 1])
        return (texts[o] == "(" and not called) or (texts[o] == "[" and called)

    def _subscript(self, o: int) -> bool:
        """Whether the ``[`` at ``o`` opens a subscript (not a list, not ``def f[...]``)."""
        if o < 1 or not _operand_ends(self.texts[o - 1], self.kinds[o - 1]):
            return False
        return not (o >= 2 and self.texts[o - 2] == "def")

    def _space(self, i: int) -> int:
        """1 when a space goes between token ``i - 1`` and token ``i`` on one line."""
        ps, ts = self.texts[i - 1], self.texts[i]
        pk, tk = self.kinds[i - 1], self.kinds[i]
        if tk == "o" and ts in (",", ")", "]", "}", ":"):
            return 0
        if pk == "o":
            if ps in ("(", "[", "{", "@"):
                return 0
            if ps == ",":
                return 1
            if ps == ":":
                o = self.opener[i - 1]
                return 0 if o >= 0 and self.texts[o] == "[" and self._subscript(o) else 1
            if ps == "=" or (tk == "o" and ts == "="):
                return 0 if self.opener[i] >= 0 else 1
            if self.unary[i - 1]:
                return 0
        elif tk == "o" and ts == "=":
            return 0 if self.opener[i] >= 0 else 1
        if tk == "o" and ts in ("(", "["):
            return 0 if _operand_ends(ps, pk) else 1
        return 1

    # ---------------------------------------------------------------- measures
    def width(self, lo: int, hi: int) -> int:
        """The width of tokens ``lo..hi-1`` on one line, magic trailing commas not counted
        (so adding one never changes a decision)."""
        return self.pre[hi] - self.pre[lo] - self.space[lo] - (self.mtc[hi] - self.mtc[lo])

    def flat(self, lo: int, hi: int) -> str:
        texts, space = self.texts, self.space
        parts = [texts[lo]]
        for i in range(lo + 1, hi):
            parts.append(" " + texts[i] if space[i] else texts[i])
        return "".join(parts)

    def _trail_ok(self, lo: int, hi: int) -> bool:
        """Whether the trailing comments of ``lo..hi-1`` fit one line: at most one, on the
        last token or on one followed only by commas."""
        n = self.trailc[hi] - self.trailc[lo]
        if n == 0:
            return True
        if n > 1:
            return False
        k = hi - 1
        while k > lo and self.texts[k] == "," and k not in self.trail:
            k -= 1
        return k in self.trail

    def forced(self, lo: int, hi: int) -> bool:
        """Whether ``lo..hi-1`` cannot stay on one line whatever its width: a full-line
        comment inside, a trailing comment before its end, or a magic trailing comma."""
        end = hi
        if self.match[hi - 1] >= hi:  # a head ending in its bracket: the bracket is not inside
            end = hi - 1
        if self.leadc[hi] - self.leadc[lo + 1] > 0 or self.magicc[end] - self.magicc[lo] > 0:
            return True
        return not self._trail_ok(lo, hi)

    def forces_bracket(self, o: int) -> bool:
        c = self.match[o]
        return (
            self.leadc[c + 1] - self.leadc[o + 1] > 0
            or self.trailc[c] - self.trailc[o] > 0
            or self.magicc[c] - self.magicc[o] > 0
        )

    def comment_of(self, lo: int, hi: int) -> str | None:
        if self.trailc[hi] == self.trailc[lo]:
            return None
        for k in range(hi - 1, lo - 1, -1):
            if k in self.trail:
                return self.trail[k]
        return None  # pragma: no cover - the count says there is one

    def top(self, lo: int, hi: int) -> list[int]:
        """Indices of the tokens of ``lo..hi-1`` outside every bracket closed in that range."""
        out = []
        i = lo
        match = self.match
        while i < hi:
            out.append(i)
            c = match[i]
            i = c + 1 if i < c < hi else i + 1
        return out


class _Out:
    """The lines of one statement: ``(indent, code, comment)``; code '' is a comment line."""

    def __init__(self, line: _Line) -> None:
        self.line = line
        self.rows: list[list] = []

    def comments(self, texts: list[str] | None, indent: int) -> None:
        for c in texts or ():
            self.rows.append([indent, "", c])

    # ---------------------------------------------------------------- the layout
    def seg(self, lo: int, hi: int, indent: int, body: bool, magic: bool = False) -> None:
        """Lay out tokens ``lo..hi-1`` starting a line at ``indent``; ``body``: inside
        brackets (a line may break anywhere); ``magic``: the bracket around it is exploded."""
        L = self.line
        w = L.width(lo, hi)
        fits = indent + w <= L.limit
        forced = magic or L.forced(lo, hi)
        if fits and not forced:
            self.rows.append([indent, L.flat(lo, hi), L.comment_of(lo, hi)])
            return
        if body and self._delimiter_split(lo, hi, indent):
            return
        if self._bracket_split(lo, hi, indent, body, None if not fits else forced):
            return
        self._raw(lo, hi, indent)

    def _delimiter_split(self, lo: int, hi: int, indent: int) -> bool:
        """One item per line at the top-level commas (a trailing comma added), else before
        each top-level binary operator of the lowest priority. False: nothing to split at."""
        L = self.line
        top = L.top(lo, hi)
        commas = [i for i in top if L.texts[i] == "," and L.kinds[i] == "o"]
        if commas and not (len(commas) == 1 and commas[0] == hi - 1):
            starts = [lo] + [c + 1 for c in commas if c + 1 < hi]
            ends = [*starts[1:], hi]
            for k, (a, b) in enumerate(zip(starts, ends)):
                self.comments(L.lead.get(a) if a != lo else None, indent)
                self.seg(a, b, indent, True)
                if k == len(starts) - 1 and L.texts[b - 1] != ",":
                    self._add_comma()
            return True
        ops = [
            i
            for i in top
            if i > lo
            and not L.unary[i]
            and (L.kinds[i] == "o" or L.texts[i] in ("and", "or"))
            and L.texts[i] in _PRIORITY
        ]
        if not ops:
            return False
        best = min(_PRIORITY[L.texts[i]] for i in ops)
        # break before each operator, or after one that carries a trailing comment
        cuts = sorted({i + 1 if i in L.trail else i for i in ops if _PRIORITY[L.texts[i]] == best})
        cuts = [c for c in cuts if lo < c < hi]
        if not cuts:
            return False
        starts = [lo, *cuts]
        ends = [*cuts, hi]
        for a, b in zip(starts, ends):
            self.comments(L.lead.get(a) if a != lo else None, indent)
            self.seg(a, b, indent, True)
        return True

    def _add_comma(self) -> None:
        row = self.rows[-1]
        row[1] += ","

    def _bracket_split(self, lo: int, hi: int, indent: int, body: bool, forced: bool | None) -> bool:
        """Head (up to the bracket), the contents one level deeper, then the closing bracket
        and the rest. The bracket: of the top-level ones with contents (or a comment), one
        whose head and tail each fit on a line if there is one, and of those the one with
        the longest contents; when the line fits but must break (``forced``), only those
        that hold what forces it. Ties: the last."""
        L = self.line
        best = -1
        best_key = (False, -1)
        for o in L.top(lo, hi):
            c = L.match[o]
            if not (o < c < hi):
                continue
            if forced and not L.forces_bracket(o):
                continue
            if c == o + 1 and c not in L.lead:
                continue  # () with nothing to put on its own line
            ends_fit = indent + max(L.width(lo, o + 1), L.width(c, hi)) <= L.limit
            key = (ends_fit, L.width(o + 1, c) if c > o + 1 else 0)
            if key >= best_key:
                best, best_key = o, key
        if best < 0:
            return False
        o, c = best, L.match[best]
        self.seg(lo, o + 1, indent, body)  # the head, ending with the bracket
        inner = indent + 4
        if c > o + 1:
            self.comments(L.lead.get(o + 1), inner)
            magic = L.magicc[o + 1] - L.magicc[o] > 0
            self.seg(o + 1, c, inner, True, magic)
        self.comments(L.lead.get(c), inner)
        self.seg(c, hi, indent, body)
        return True

    def _raw(self, lo: int, hi: int, indent: int) -> None:
        """The tokens as they come, a line break after each trailing comment and before each
        full-line comment (only inside brackets: nothing else forces a break there)."""
        L = self.line
        start = lo
        for i in range(lo, hi):
            if i in L.lead and i > lo:
                if start < i:
                    self.rows.append([indent, L.flat(start, i), None])
                self.comments(L.lead[i], indent)
                start = i
            if i in L.trail:
                self.rows.append([indent, L.flat(start, i + 1), L.trail[i]])
                start = i + 1
        if start < hi:
            self.rows.append([indent, L.flat(start, hi), None])


def _blank_cap(it: _Stmt | _Comment) -> int:
    return 2 if it.level == 0 else 1


def layout(text: str, line_length: int = 100) -> str:
    """``text`` laid out: the same tokens and comments, new whitespace (module docstring)."""
    if line_length < 1:
        raise ValueError(f"line_length must be positive, not {line_length}")
    items = _levels(_scan(text))
    out: list[str] = []
    prev: _Stmt | _Comment | None = None
    for it in items:
        blank = min(it.blank, _blank_cap(it))
        if prev is None:
            blank = 0
        elif isinstance(prev, _Stmt) and (prev.texts[0] == "@" or prev.texts[-1] == ":"):
            blank = 0  # after a decorator or a block opener
        if blank:
            out.extend([""] * blank)
        ind = 4 * it.level
        if isinstance(it, _Comment):
            out.append(" " * ind + it.text)
            prev = it
            continue
        line = _Line(it, line_length)
        if line.simple():
            code = line.flat(0, len(it.texts))
            if ind + len(code) <= line_length:  # the common case: it fits as it is
                comment = it.trail.get(len(it.texts) - 1)
                out.append(" " * ind + code + ("  " + comment if comment else ""))
                prev = it
                continue
        line.prepare()
        o = _Out(line)
        o.seg(0, len(it.texts), ind, False)
        for indent, code, comment in o.rows:
            if not code:
                out.append(" " * indent + comment)
            elif comment:
                out.append(" " * indent + code + "  " + comment)
            else:
                out.append(" " * indent + code)
        prev = it
    return "\n".join(out) + "\n" if out else ""
