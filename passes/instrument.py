"""TIRx's instruments (``tvm.ir.transform.instrument``; ``tvm.instrument`` after ``import tirx
as tvm``): ``PassInstrument`` / ``pass_instrument`` with TIRx's hooks (``should_run(mod,
info)``, ``run_before_pass(mod, info)``, ``run_after_pass(mod, info)``), and the ready-made
ones: ``PassTimingInstrument`` (``render()`` inside the context), ``PassPrintingInstrument``,
``PrintBeforeAll``, ``PrintAfterAll`` and ``DumpIR``. They run in tirx's ``PassContext``.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tirx.passes.infra import PassContext, PassTiming, ir_text, pass_instrument
from tirx.passes.infra import TIRxPassInstrument as PassInstrument

__all__ = [
    "DumpIR",
    "PassInstrument",
    "PassPrintingInstrument",
    "PassTimingInstrument",
    "PrintAfterAll",
    "PrintBeforeAll",
    "pass_instrument",
]


class PassTimingInstrument(PassTiming):
    """Times every pass of its context; ``PassTimingInstrument.render()`` (inside the context)
    is the report of the current context's timing instrument. Entering a context starts over."""

    def enter_pass_ctx(self) -> None:
        self.timings.clear()
        self._starts.clear()

    @staticmethod
    def render() -> str:
        """The timing report of the current context's ``PassTimingInstrument`` ("" if none)."""
        for ins in PassContext.current().instruments:
            if isinstance(ins, PassTimingInstrument):
                return ins.report()
        return ""


class PassPrintingInstrument(PassInstrument):
    """Print the IR before the passes named in ``print_before_pass_names`` and after those in
    ``print_after_pass_names`` (exact names, as ``info.name``)."""

    def __init__(self, print_before_pass_names: Iterable[str], print_after_pass_names: Iterable[str]) -> None:
        self.print_before_pass_names = list(print_before_pass_names)
        self.print_after_pass_names = list(print_after_pass_names)

    def run_before_pass(self, mod: Any, info: Any) -> None:
        if info.name in self.print_before_pass_names:
            print(f"Print IR before: {info.name}\n{ir_text(mod)}\n\n")

    def run_after_pass(self, mod: Any, info: Any) -> None:  # type: ignore[override]
        if info.name in self.print_after_pass_names:
            print(f"Print IR after: {info.name}\n{ir_text(mod)}\n\n")


class PrintBeforeAll(PassInstrument):
    """Print each pass's info and input IR before it runs."""

    def run_before_pass(self, mod: Any, info: Any) -> None:
        print(f"Before Running Pass: {info}")
        print(ir_text(mod), end="")


class PrintAfterAll(PassInstrument):
    """Print each pass's info and output IR after it runs."""

    def run_after_pass(self, mod: Any, info: Any) -> None:  # type: ignore[override]
        print(f"After Running Pass: {info}")
        print(ir_text(mod), end="")


_DUMPED = re.compile(r"\d{3}_.*\.py")


class DumpIR(PassInstrument):
    """Write the IR after each pass to ``dump_dir/NNN_<pass name>.py`` (NNN counts from 000;
    characters a file name cannot hold become ``_``). ``refresh=True`` first removes
    ``dump_dir`` if it holds nothing but such files (else it is kept, with a warning)."""

    def __init__(self, dump_dir: Path | str, refresh: bool = False) -> None:
        if not isinstance(dump_dir, (str, Path)):
            raise TypeError(f"DumpIR: dump_dir must be a path, got {type(dump_dir).__name__}")
        self.dump_dir = Path(dump_dir)
        self.counter = 0
        if refresh and self.dump_dir.is_dir():
            if all(p.is_file() and _DUMPED.fullmatch(p.name) for p in self.dump_dir.iterdir()):
                shutil.rmtree(self.dump_dir)
            else:
                print(f"WARNING: DumpIR keeps {self.dump_dir}: it holds files it did not write")

    def run_after_pass(self, mod: Any, info: Any) -> None:  # type: ignore[override]
        self.dump_dir.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r'[<>:"/\\|?*\x00-\x1f]', "_", info.name)
        try:
            (self.dump_dir / f"{self.counter:03d}_{safe}.py").write_text(ir_text(mod), encoding="utf-8")
        finally:
            self.counter += 1
