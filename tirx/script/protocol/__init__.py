"""TIRx's builder API in tirx (``T.ir_builder``): build IR from Python, frame by frame.

TIRx's own parser turns each piece of syntax into a call of this API (``T.function_``,
``T.arg_``, ``T.bind_``, ``T.if_``/``T.then_``/``T.else_``, ``T.for_``, ``T.setitem_``, ...), and
users call it to build kernels programmatically. In tirx every call is a thin wrapper over the
one :class:`~tirx.surface.builder.IRBuilder` that the Python frontend and the text loader drive,
doing what the frontend does for the same syntax, so the IR is the same whichever way a
kernel is written (docs/frontend.md, "Building IR from Python (TIRx's builder API)").

Modules: ``parser_protocol`` (the calls), ``frame`` (the frames), ``op`` (``and_``, the
comparisons, ``if_then_else_`` and every op by name), ``utils`` (``frame_scope``,
``tensor_indices``), ``ir`` (``T.ir.<name>`` is ``T.<name>``, as in TIRx). ``ir_module()`` opens
a module frame and ``function()`` a function frame (TIRx's ``T.ir_builder.ir_module`` /
``T.ir_builder.function``; ``T.ir_module`` / ``T.function`` are the decorators). Any other
``T.ir_builder.<name>`` is ``T.<name>``.
"""

from __future__ import annotations

import sys
from typing import Any

from tirx.surface.builder import IRBuilder

from . import frame, ir, op, parser_protocol, utils
from .frame import AlreadyEmitted, IRModuleFrame
from .op import expose_script_op, expose_script_type, register_script_namespace
from .parser_protocol import *  # noqa: F403 - the protocol calls
from .parser_protocol import __all__ as _protocol_all
from .utils import frame_scope, tensor_indices

__all__ = [
    *_protocol_all, "IRBuilder", "expose_script_op", "expose_script_type", "frame", "frame_scope",
    "op", "parser_protocol", "register_script_namespace", "tensor_indices", "utils",
]  # fmt: skip


def ir_module() -> IRModuleFrame:
    """``with T.ir_builder.ir_module() as m:``: TIRx's module frame (``T.ir_module`` is the
    class decorator; this is the frame its parser opens)."""
    return IRModuleFrame()


function = parser_protocol.function  # T.ir_builder.function(): a function frame, not the decorator


def t_exports() -> dict[str, Any]:
    """The names this API adds to ``T`` (tirx/script/tirx.py merges them)."""
    d = {n: globals()[n] for n in __all__ if n != "MISSING"}
    d["ir_builder"] = sys.modules[__name__]
    d["ir"] = ir  # T.ir.<name> is T.<name> (as in TIRx); tirx.ir's classes T lacks
    return d


def __getattr__(name: str) -> Any:
    """``T.ir_builder.<name>`` for anything else of ``T`` (ops, forms, dtypes)."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(sys.modules["tirx.script.tirx"], name)
    except AttributeError:
        raise AttributeError(f"T.ir_builder has no member {name!r}") from None


_ = (AlreadyEmitted, IRModuleFrame)
