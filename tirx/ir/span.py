"""Source spans. Spans are metadata: they never affect structural equality or hash."""

from __future__ import annotations

import attrs

__all__ = ["SequentialSpan", "Span"]


@attrs.frozen(slots=True)
class Span:
    """A source range; lines and columns are 1-based, ``end_col`` exclusive."""

    source: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0

    def __str__(self) -> str:
        return f"{self.source}:{self.line}:{self.col}"

    @property
    def innermost(self) -> Span:
        return self


@attrs.frozen(slots=True)
class SequentialSpan:
    """Inline-expansion history, ordered from the outermost call site to the definition."""

    spans: tuple[Span, ...]

    def __str__(self) -> str:
        return " -> ".join(str(s) for s in self.spans)

    @property
    def innermost(self) -> Span:
        return self.spans[-1]

    @property
    def source(self) -> str:
        return self.spans[-1].source

    @property
    def line(self) -> int:
        return self.spans[-1].line

    @property
    def col(self) -> int:
        return self.spans[-1].col
