"""Nesting limits shared by the Lark indenter (``_parser.py``) and the fast driver
(``_fast.py``): Python itself refuses more than 100 indentation levels and 200 nested
brackets."""

from __future__ import annotations

MAX_BLOCK_DEPTH = 100
MAX_PAREN_DEPTH = 200
