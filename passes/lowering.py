"""The IR stages every backend runs before its own (``tirx/pipeline.py`` lists them with
the rest of the compile pipeline): ``lower-layouts`` (``tirx.passes.layout``) then
``launch-thread-entries`` (``tirx.passes.thread_launch``). Each takes and returns IR;
``lower-layouts`` also returns the address arithmetic it built, which CUDA codegen leaves
unwrapped (``tirx.codegen.cuda.emit(..., layout_arith=...)``). These are the backends'
steps, not passes users run (their output is for a backend only)."""

from __future__ import annotations

from typing import Any

from tirx.ir import deep

__all__ = ["PREPARE", "launch_threads_stage", "lower_layouts_stage", "prepare"]


def lower_layouts_stage(ir: Any) -> tuple:
    """``(IR with every layout-carrying tensor addressed flat, the offsets' arithmetic nodes)``."""
    from tirx.passes.layout import lower_layouts

    def run(x: Any) -> tuple:
        made: set = set()
        return lower_layouts(x, made), made

    return deep.call(run, ir)  # a traversal: deep IR retries on the large-stack thread


def launch_threads_stage(ir: Any) -> Any:
    """``ir`` with TIRx's top-level ``launch_thread`` nests as device entries."""
    from tirx.passes.thread_launch import launch_thread_entries

    return deep.call(launch_thread_entries, ir)


PREPARE: tuple[str, ...] = ("lower-layouts", "launch-thread-entries")


def prepare(obj: Any) -> tuple:
    """``(IR, layout_arith)``: ``obj`` through ``PREPARE``'s stages in order (what
    ``tirx.codegen.generate`` and ``tirx.interp.compile`` run first)."""
    ir, arith = lower_layouts_stage(obj)
    return launch_threads_stage(ir), arith
