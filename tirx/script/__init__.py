"""The Python frontend: ``from tirx.script import tirx as T`` (and ``ir as I``).

See docs/frontend.md. ``IRBuilder`` is the one builder both front ends drive;
``tirx.script.ir_module`` is TIRx's ``tvm_tirx.script.ir_module`` (``@I.ir_module``).
"""

from tirx.surface.builder import IRBuilder

from . import ir, tirx
from .decorators import ir_module

__all__ = ["IRBuilder", "ir", "ir_module", "tirx"]
