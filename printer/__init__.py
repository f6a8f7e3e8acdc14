"""IR -> TVMScript text (``tirx.dumps``, ``tirx.save``, ``Node.script()``).

The output follows ``docs/text_format.md``: the form TIRx 0.1.0a4 prints, extended for
nodes TIRx's sample does not show. Printing is deterministic, never raises on well-typed
IR, and marks ill-formed IR (a variable or buffer used where it is not defined) with a
trailing ``# tirx: ...`` comment instead of failing.
"""

from __future__ import annotations

from tirx.fileio import save
from tirx.ir.node import register_printer
from tirx.printer import _comments  # noqa: F401  (registers the comment printer)
from tirx.printer._printer import HEADER, Printer, dumps
from tirx.surface.comments import CommentTable, attach, comments_of

register_printer(dumps)  # ``Node.script()`` and mismatch messages print through it

__all__ = ["HEADER", "CommentTable", "Printer", "attach", "comments_of", "dumps", "save"]
