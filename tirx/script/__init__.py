"""The Python frontend: ``from tirx.script import tirx as T`` (and ``ir as I``).

See docs/frontend.md. ``IRBuilder`` is the one builder both front ends drive.
"""

from tirx.surface.builder import IRBuilder

from . import ir, tirx

__all__ = ["IRBuilder", "ir", "tirx"]
