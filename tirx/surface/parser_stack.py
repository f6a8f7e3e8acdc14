"""Which Python-frontend parsers are evaluating a kernel on this thread (innermost last).

Kept below the front end so lower layers can ask "is a kernel being parsed?" without
importing the frontend: the runtime refuses to call a compiled function inside a kernel
(``tirx/runtime/direct.py``). ``tirx.script.parser`` pushes and pops its parsers here.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from tirx.ir import deep

if TYPE_CHECKING:
    from tirx.script.parser import Parser

__all__ = ["current_parser", "stack"]

_state = threading.local()
deep.carry_stack(_state)  # a deep function body is built on tirx.ir.deep's worker thread


def stack() -> list:
    """This thread's parser stack (created empty on first use)."""
    s = getattr(_state, "stack", None)
    if s is None:
        s = _state.stack = []
    return s


def current_parser() -> Parser | None:
    """The innermost parser evaluating a kernel on this thread, or None."""
    s = getattr(_state, "stack", None)
    return s[-1] if s else None
