"""Terminal colour for the command line: unified diffs and ``error:`` diagnostics.

Colour is used only where it can be seen: ``enabled(stream)`` is true when the stream is a
terminal, ``NO_COLOR`` is unset or empty (https://no-color.org) and ``TERM`` is not
``dumb``. ``--color=always`` / ``never`` (``mode``) override all of that, as a command-line
choice overrides the environment. The painters only add ANSI SGR sequences around parts of
lines; with colour off the text is returned unchanged.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["MODES", "Painter", "enabled"]

MODES = ("auto", "always", "never")

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
RED = "\x1b[31m"
GREEN = "\x1b[32m"
YELLOW = "\x1b[33m"
BLUE = "\x1b[34m"
CYAN = "\x1b[36m"


def enabled(stream: Any, mode: str = "auto") -> bool:
    """Whether to colour what goes to ``stream`` (``mode``: auto, always or never)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if mode != "auto":
        return mode == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except (OSError, ValueError):  # a closed stream
        return False


_LOCATION = re.compile(r"^(\s*)(-->)(.*)$")
_GUTTER = re.compile(r"^(\s*\d*\s?\|)(.*)$")
_LEVEL = re.compile(r"^(error|warning|note)(:)(.*)$")
_LEVEL_COLOUR = {"error": RED, "warning": YELLOW, "note": CYAN}


class Painter:
    """Colours text when ``on``; returns it unchanged otherwise."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def paint(self, text: str, *codes: str) -> str:
        return "".join(codes) + text + RESET if self.on and text else text

    def diff_line(self, line: str) -> str:
        """One line of a unified diff, coloured as git does (headers bold, hunks cyan,
        removals red, additions green)."""
        if not self.on:
            return line
        if line.startswith(("---", "+++")):
            return self.paint(line, BOLD)
        if line.startswith("@@"):
            return self.paint(line, CYAN)
        if line.startswith("-"):
            return self.paint(line, RED)
        if line.startswith("+"):
            return self.paint(line, GREEN)
        return line

    def diff(self, lines: Iterable[str]) -> str:
        """A unified diff (lines without their newlines) as text, one newline per line."""
        return "".join(self.diff_line(x) + "\n" for x in lines)

    def diagnostic(self, text: str) -> str:
        """A rendered diagnostic (``error: message`` / `` --> file:line:col`` / the gutter
        and the source line / the carets), coloured as rustc does."""
        if not self.on:
            return text
        out = []
        caret_next = False
        for line in text.split("\n"):
            m = _LEVEL.match(line)
            if m is not None:
                level, colon, rest = m.groups()
                out.append(self.paint(level + colon, BOLD, _LEVEL_COLOUR[level]) + self.paint(rest, BOLD))
                caret_next = False
                continue
            m = _LOCATION.match(line)
            if m is not None:
                out.append(m.group(1) + self.paint(m.group(2), BOLD, BLUE) + m.group(3))
                continue
            m = _GUTTER.match(line)
            if m is not None:
                gutter, rest = m.groups()
                if caret_next and rest.strip() and set(rest.strip()) <= {"^", "~"}:
                    lead = rest[: len(rest) - len(rest.lstrip())]
                    rest = lead + self.paint(rest.strip(), BOLD, RED)
                caret_next = bool(re.match(r"^\s*\d+\s?\|", gutter))
                out.append(self.paint(gutter, BOLD, BLUE) + rest)
                continue
            caret_next = False
            out.append(line)
        return "\n".join(out)
