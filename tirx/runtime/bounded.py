"""A dict of at most ``bound`` entries, the oldest dropped first: the memo of a call path.

The host side remembers what a call on the same arguments needs again (TMA descriptors, a
GEMM's or attention's prepared launch, a function stripped of its ``T.NoneType()`` parameters).
Lookups stay ``dict.get`` (the hot path pays nothing for the bound); only ``put`` counts.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Bounded"]


class Bounded(dict):
    """``put(key, value)`` stores, dropping the oldest entry when ``bound`` are held, and
    returns ``value``; everything else is a dict's."""

    def __init__(self, bound: int) -> None:
        if not isinstance(bound, int) or bound < 1:
            raise ValueError(f"bound: expected a positive int, got {bound!r}")
        super().__init__()
        self.bound = bound

    def put(self, key: Any, value: Any) -> Any:
        if key not in self and len(self) >= self.bound:
            self.pop(next(iter(self)))  # insertion order: the oldest first
        self[key] = value
        return value
