"""The printer's names and literals: which identifiers print as themselves, the names bound
vars and buffers are made from, string and float literals, function names.

Plain functions of values, below everything else in the printer (``_printer.py`` and its
mixins import them); split out of the printer by what it holds (issue #30).
"""

from __future__ import annotations

import keyword
import math
import struct
import unicodedata

from tirx.ir.names import is_printable_name
from tirx.ir.names import why_not_printable as _why_not

__all__ = ["float_text", "global_name", "is_printable_name", "quote", "sanitize"]

# ------------------------------------------------------------------ names
_RESERVED = frozenset(keyword.kwlist) | {"T", "I", "range"}  # range: the loop builtin


def sanitize(name: str) -> str:
    """An identifier base for a bound var / buffer hint (those names are hints: the printer
    also makes them unique). Identifiers are kept as they are, NFKC-normalized; other
    characters become ``_``; a leading digit gets a ``v`` prefix."""
    if name.isascii() and name.isidentifier():
        return name
    name = unicodedata.normalize("NFKC", name)
    if name.isidentifier():
        return name
    out = ["_" if not ("a" + ch).isidentifier() else ch for ch in name]
    if not out:
        return "v"
    if not out[0].isidentifier():  # a digit (or another continue-only character)
        out.insert(0, "v")
    return "".join(out)


# ------------------------------------------------------------------ literals
_ESC = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def quote(s: str) -> str:
    """A double-quoted Python string literal, ASCII only, escaped as the doc says."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    out = ['"']
    for ch in s:
        r = _ESC.get(ch)
        if r is not None:
            out.append(r)
            continue
        o = ord(ch)
        if 0x20 <= o < 0x7F:
            out.append(ch)
        elif o < 0x80:  # a control character: \x1b, \x7f (TIRx's escapes)
            out.append(f"\\x{o:02x}")
        elif o < 0x10000:  # Latin-1 too: TIRx writes \u00e9, not Python's \xe9
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


def global_name(name: str) -> str:
    """The printed name of a function (a global symbol): the name itself, never changed.

    ValueError when it cannot be printed so that it loads back as the same name."""
    if not is_printable_name(name):
        raise ValueError(f"tirx.dumps: the function name {name!r} cannot be printed: {_why_not(name)}")
    return name


_NANS = {struct.pack("<d", math.nan): '"nan"', struct.pack("<d", -math.nan): '"-nan"'}


def float_text(v: float) -> str:
    """Text of a Python float as TIRx prints it, parsing back bit-exactly: an integral value
    in fixed point with ``.0``, any other with 17 significant digits (C's ``%.17g``), strings
    for inf/nan. A NaN is ``"nan"`` (TIRx's text) or ``"-nan"``; one with a payload has no
    text: ValueError."""
    if v != v:
        s = _NANS.get(struct.pack("<d", v))
        if s is None:
            bits = struct.unpack("<Q", struct.pack("<d", v))[0]
            raise ValueError(
                f"tirx.dumps: the NaN constant with bits {bits:#018x} (a payload) cannot be printed: "
                'the text has only T.float32("nan") and ("-nan"); build it with T.reinterpret'
            )
        return s
    if v in (math.inf, -math.inf):
        return '"inf"' if v > 0 else '"-inf"'
    if v == int(v):  # integral: every digit, fixed point, ``.0`` (``1e20`` prints in full)
        return f"{v:.1f}"
    return f"{v:.17g}"  # TIRx's 17 significant digits: ``0.1`` prints as 0.10000000000000001
