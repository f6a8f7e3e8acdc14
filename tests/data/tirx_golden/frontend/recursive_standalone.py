# Held-out round 11: a standalone function calling itself by name (TIRx prints `Module.f`).
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(n: T.int32) -> T.int32:
    if n <= 1:
        return 1
    return n * f(n - 1)
