"""The Python frontend: ``from tirx.script import tirx as T`` (and ``ir as I``).

See docs/frontend.md. ``IRBuilder`` is the one builder both front ends drive.
"""

from . import ir, tirx
from .builder import IRBuilder

__all__ = ["IRBuilder", "ir", "tirx"]
