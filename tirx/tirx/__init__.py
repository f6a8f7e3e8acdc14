"""TIRx's Python API module (``tvm_tirx.tirx``) under tirx's name, for ported host code.

A program written for TIRx builds some expressions outside its kernels with TIRx's Python
API: ``from tvm_tirx.tirx.op import if_then_else``, ``tvm_tirx.tirx.Var(...)``. After changing
the import, ``tirx.tirx`` serves the expression builders and node classes both systems have:
``tirx.tirx.op.<name>`` is the script op of that name (``T.<name>``), with TIRx's host folding
where TIRx folds (``op.if_then_else`` of a constant condition is the chosen arm), and the node
classes both serve (``Var``, ``Cast``, the expression ``Let(var, value, body)``) and ``const(value,
dtype)`` are tirx's (``tirx.ir``). The constants (``IntImm``,
``FloatImm``, ``StringImm``) are not served here: TIRx has them in ``tvm_tirx.ir``, with the
dtype first (``IntImm("int64", 8)``), which tirx's ``tirx.ir.IntImm(value, ty)`` would
misread. ``compile(f, target={"kind": "cuda", "arch": "sm_90a"})`` is ``tirx.compile``; its result's
``.mod.imports[0].inspect_source()`` is the CUDA source, as TIRx's runtime module gives it. TIRx's
passes, analyses and the rest of its runtime (``tvm_tirx.tirx.transform``, ``.analysis``, ...)
are not served: an unknown name is an ``AttributeError`` that says so.
"""

from __future__ import annotations

from typing import Any

from tirx.ir import Cast, Let, Var, const

from . import op

__all__ = ["Cast", "Let", "Var", "compile", "const", "op"]


def compile(f: Any, target: Any = "cuda", **options: Any) -> Any:
    """``tvm_tirx.tirx.compile(f, target=...)``: ``tirx.compile`` (TIRx's target dict taken)."""
    import tirx

    return tirx.compile(f, target, **options)


#: names T has that ``tvm_tirx.tirx`` lacks (TIRx's constants live in ``tvm_tirx.ir``, dtype first)
_NOT_SERVED = frozenset({"IntImm", "FloatImm", "StringImm"})


def __getattr__(name: str) -> Any:
    """TIRx re-exports its op functions at ``tvm_tirx.tirx.<name>`` too."""
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "transform":  # TIRx's pass API (tvm_tirx.tirx.transform): served by tirx.passes
        import importlib

        return importlib.import_module("tirx.passes.tirx_transform")
    if name in _NOT_SERVED:
        raise AttributeError(
            f"tirx.tirx has no {name!r}, as tvm_tirx.tirx has none (TIRx's is tvm_tirx.ir.{name}(dtype, "
            f"value); tirx's is tirx.ir.{name})"
        )
    return getattr(op, name)


def __dir__() -> list[str]:
    return sorted({*__all__, *op.__dir__()} - _NOT_SERVED)
