"""The ``I`` namespace: ``from tirx.script import ir as I`` (``@I.ir_module``), as TIRx spells it."""

from __future__ import annotations

from .decorators import ir_module

__all__ = ["ir_module"]
