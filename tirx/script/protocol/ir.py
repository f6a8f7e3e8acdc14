"""``T.ir``: TIRx's builder ``ir`` namespace, where every member is the ``T`` member of that name.

TIRx's ``T.ir`` is the module its builder's IR-level helpers live in (``T.ir.alloc_local``,
``T.ir.decl_scalar``, ``T.ir.meta_var``, ``T.ir.Var``, the dtypes); each is also ``T.<name>``, so
here ``T.ir.<name>`` is ``T.<name>``. tirx's own IR classes that ``T`` does not name
(``T.ir.Buffer``, ``T.ir.Function``, ``T.ir.BufferStore``, ...) are ``tirx.ir``'s, and
``T.ir.ir`` is the ``tirx.ir`` package itself (TIRx's is its IR package).
"""

from __future__ import annotations

import sys
from typing import Any

from ... import ir  # T.ir.ir: the IR package (as in TIRx)

__all__ = ["ir"]


def __getattr__(name: str) -> Any:
    """``T.ir.<name>``: ``T.<name>``, else the ``tirx.ir`` class of that name."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(sys.modules["tirx.script.tirx"], name)
    except AttributeError:
        pass
    try:
        return getattr(ir, name)
    except AttributeError:
        raise AttributeError(f"T.ir has no member {name!r} (neither T.{name} nor tirx.ir.{name})") from None
