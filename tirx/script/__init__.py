"""The Python frontend: ``from tirx.script import tirx as T`` (and ``ir as I``).

See docs/frontend.md. ``IRBuilder`` is the one builder both front ends drive;
``tirx.script.ir_module`` is TIRx's ``tvm_tirx.script.ir_module`` (``@I.ir_module``);
``tirx.script.from_source`` is TIRx's ``tvm.script.from_source`` (the text loader).
"""

from __future__ import annotations

import types
from typing import Any

from tirx.surface.builder import IRBuilder

from . import ir, tirx
from .decorators import ir_module

__all__ = ["IRBuilder", "from_source", "ir", "ir_module", "tirx"]


def from_source(source: str, extra_vars: dict | None = None) -> Any:
    """TIRx's ``tvm.script.from_source(text, extra_vars={"T": T, "I": I})``: ``tirx.loads``.

    Text loading never runs code, so ``extra_vars`` may only name the script modules the text
    already knows (``T``, ``I``, under any names); any other value is a TypeError naming it."""
    if not isinstance(source, str):
        raise TypeError(f"from_source: source must be a str, got {type(source).__name__}")
    for k, v in (extra_vars or {}).items():
        if not (isinstance(v, types.ModuleType) and v in (tirx, ir)):
            raise TypeError(
                f"from_source: extra_vars[{k!r}] is {type(v).__name__}: text loading never runs code, "
                "so only the script modules (tirx.script.tirx, tirx.script.ir) may be given"
            )
    from tirx.ir.node import load_text

    return load_text(source)
