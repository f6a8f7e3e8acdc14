"""TIRx's Python API module (``tvm_tirx.tirx``) under tirx's name, for ported host code.

A program written for TIRx builds some expressions outside its kernels with TIRx's Python
API: ``from tvm_tirx.tirx.op import if_then_else``, ``tvm_tirx.tirx.Var(...)``. After changing
the import, ``tirx.tirx`` serves the expression builders and node classes both systems have:
``tirx.tirx.op.<name>`` is the script op of that name (``T.<name>``), with TIRx's host folding
where TIRx folds (``op.if_then_else`` of a constant condition is the chosen arm), and the node
classes are tirx's (``tirx.ir``). TIRx's passes, analyses and runtime (``tvm_tirx.tirx.
transform``, ``.analysis``, ...) are not served: an unknown name is an ``AttributeError`` that
says so.
"""

from __future__ import annotations

from typing import Any

from tirx.ir import Cast, FloatImm, IntImm, StringImm, Var

from . import op

__all__ = ["Cast", "FloatImm", "IntImm", "StringImm", "Var", "op"]


def __getattr__(name: str) -> Any:
    """TIRx re-exports its op functions at ``tvm_tirx.tirx.<name>`` too."""
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(op, name)


def __dir__() -> list[str]:
    return sorted({*__all__, *op.__dir__()})
