"""TIRx's ``tvm.script.ir_builder.tirx``: the builder functions of ``tirx.script.protocol``, and
every other ``T`` name (``Tb.device_entry(...)``, ``Tb.float32``) as ``T`` has it."""

from __future__ import annotations

from typing import Any

from tirx.script import protocol as _protocol
from tirx.script import tirx as _T


def __getattr__(name: str) -> Any:
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    if hasattr(_protocol, name):
        return getattr(_protocol, name)
    return getattr(_T, name)


def __dir__() -> list[str]:
    return sorted({*dir(_protocol), *dir(_T)})
