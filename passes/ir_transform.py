"""TIRx's ``tvm_tirx.ir.transform`` names (``tvm.transform`` and ``tvm.ir.transform`` after
``import tirx as tvm``), on tirx's one pass infrastructure (``tirx.passes.infra``).

``Pass``, ``ModulePass``, ``PassContext``, ``PassInfo`` and ``module_pass`` are tirx's;
``PassInstrument`` is the instrument with TIRx's hooks (``run_before_pass(mod, info)``, ...:
``tirx.passes.infra.TIRxPassInstrument``) and ``pass_instrument`` gives a class those hooks.
Two names mean what they mean in TIRx, not in ``tirx.passes``: ``Sequential``'s default name is
``"sequential"``, and ``PrintIR(header)`` is a pass that prints the IR (to stderr) and returns
it unchanged (``tirx.passes.PrintIR`` is an instrument). ``instrument`` is TIRx's
``tvm.ir.transform.instrument`` (``PassTimingInstrument``, ``PrintBeforeAll``, ...).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from tirx.passes import instrument
from tirx.passes.infra import (
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    ir_text,
    module_pass,
    pass_instrument,
)
from tirx.passes.infra import Sequential as _Sequential
from tirx.passes.infra import TIRxPassInstrument as PassInstrument

__all__ = [
    "ModulePass",
    "Pass",
    "PassContext",
    "PassInfo",
    "PassInstrument",
    "PrintIR",
    "Sequential",
    "instrument",
    "module_pass",
    "pass_instrument",
]


class Sequential(_Sequential):
    """``tirx.passes.Sequential`` with TIRx's default name, ``"sequential"``."""

    def __init__(
        self, passes: Iterable[Pass] | None = None, opt_level: Any = 0, name: str = "sequential"
    ) -> None:
        super().__init__(passes, opt_level, name)


class _PrintIR(ModulePass):
    def __init__(self, header: str) -> None:
        self.header = header
        self.name = "PrintIR"
        super().__init__()

    def transform_module(self, mod: Any) -> Any:
        sys.stderr.write(f"PrintIR({self.header}):\n{ir_text(mod)}")
        return mod


def PrintIR(header: str = "") -> Pass:
    """A pass (``"PrintIR"``, opt level 0) that writes ``PrintIR(header):`` and the IR's
    text to stderr and returns the IR unchanged."""
    if not isinstance(header, str):
        raise TypeError(f"PrintIR: header must be a str, got {type(header).__name__}")
    return _PrintIR(header)
