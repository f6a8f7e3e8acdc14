"""Names in ``.tirx`` text follow Python's identifier rules (PEP 3131).

The lexer's NAME / DOTTED patterns accept ASCII letters, digits, ``_`` and every non-ASCII
character (one character class each, so matching stays linear); this module then decides
what a token means, as CPython's tokenizer and parser do: the raw text must be an
identifier (``str.isidentifier``), and the name is its NFKC normal form, so ``ﬁx`` and
``fix`` are one name. ASCII names (nearly all of them) take a fast path.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["BadName", "dotted_value", "name_value"]


class BadName(ValueError):
    """A NAME / DOTTED token that is not an identifier; ``offset`` is within the token."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.message = message
        self.offset = offset


def _first_bad(part: str) -> int:
    """Index of the first character that breaks ``part`` as an identifier (linear)."""
    if not part[:1].isidentifier():
        return 0
    for i in range(1, len(part)):
        if not ("a" + part[i]).isidentifier():
            return i
    return len(part)  # pragma: no cover - only called on non-identifiers


def _bad_char(part: str, base: int) -> BadName:
    i = _first_bad(part)
    ch = part[i] if i < len(part) else ""
    return BadName(f"invalid character {ch!r} (U+{ord(ch):04X}) in a name", base + i)


def name_value(raw: str) -> str:
    """The name a NAME token denotes; BadName when it is not a Python identifier."""
    if raw.isascii():
        return raw  # the pattern only matches identifiers in ASCII
    if not raw.isidentifier():
        raise _bad_char(raw, 0)
    name = unicodedata.normalize("NFKC", raw)
    if not name.isidentifier():
        raise BadName(f"the name {raw!r} is not an identifier once normalized (NFKC: {name!r})", 0)
    return name


_BAD_DOT = re.compile(r"\.(?![A-Za-z_])")  # a dot not followed by a name start (ASCII)


def dotted_value(raw: str) -> str:
    """The text of a DOTTED token with each part checked and normalized like a name."""
    if raw.isascii():
        m = _BAD_DOT.search(raw)
        if m is None:
            return raw
        raise BadName("expected a name after '.'", m.end())
    parts = raw.split(".")
    out = []
    pos = 0
    for p in parts:
        if not p:
            raise BadName("expected a name after '.'", pos)
        if p[0].isdigit():
            raise BadName("expected a name after '.'", pos)
        try:
            out.append(name_value(p))
        except BadName as e:
            e.offset += pos
            raise
        pos += len(p) + 1
    return ".".join(out)


def indent_of(ind: str) -> tuple[int, int]:
    """A line's indentation measured as Python measures it, twice: tabs to the next multiple
    of 8, and tabs as one column. Two indentations compare alike under both or the text mixes
    tabs and spaces inconsistently (Python's TabError): ``compare_indent``."""
    if "\t" not in ind:  # spaces only (nearly every line): both measures are the length
        return len(ind), len(ind)
    col8 = col1 = 0
    for ch in ind:
        if ch == "\t":
            col8 = (col8 // 8 + 1) * 8
        else:
            col8 += 1
        col1 += 1
    return col8, col1


def compare_indent(new: tuple[int, int], cur: tuple[int, int]) -> int:
    """-1, 0 or 1 as ``new`` is less than, equal to or greater than ``cur``; ``ValueError``
    when the answer depends on the tab size (inconsistent tabs and spaces)."""
    a = (new[0] > cur[0]) - (new[0] < cur[0])
    b = (new[1] > cur[1]) - (new[1] < cur[1])
    if a != b:
        raise ValueError("inconsistent use of tabs and spaces in indentation")
    return a
