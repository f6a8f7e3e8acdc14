"""Which names print as themselves and load back as themselves.

Below the front ends and the printer: the IRBuilder asks it before it names a function by
its ``global_symbol`` (a symbol that is no identifier stays an attribute, so loaded text
always prints again), and the printer asks it for every name it writes.
"""

from __future__ import annotations

import keyword
import unicodedata

__all__ = ["is_printable_name", "why_not_printable"]


def is_printable_name(name: str) -> bool:
    """Whether ``name`` prints as itself and loads back as itself (here and in Python).

    Python identifiers, non-ASCII included, in NFKC normal form (Python, and the grammar,
    read identifiers NFKC-normalized: ``ﬁx`` would come back as ``fix``), not keywords.
    """
    if name.isascii():
        return name.isidentifier() and not keyword.iskeyword(name)
    return name.isidentifier() and unicodedata.is_normalized("NFKC", name) and not keyword.iskeyword(name)


def why_not_printable(name: str) -> str:
    """Why :func:`is_printable_name` refuses ``name``, for an error message."""
    if keyword.iskeyword(name):
        return "it is a Python keyword"
    if not name.isidentifier():
        return "it is not a Python identifier"
    return f"Python reads it NFKC-normalized, as {unicodedata.normalize('NFKC', name)!r}"
