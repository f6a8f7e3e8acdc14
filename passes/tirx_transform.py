"""TIRx's ``tvm_tirx.tirx.transform`` names (``tvm.tirx.transform`` after ``import tirx as tvm``).

``function_pass`` / ``FunctionPass`` are tirx's (``tirx.passes.infra``: TIRx's
``f(func, mod, ctx)`` and ``transform_function(self, func, mod, ctx)`` classes included).
The built-in passes TIRx 0.1.0a4 exposes are served where tirx has the same transformation,
under TIRx's pass names (what instruments and ``PassContext(required_pass=...)`` see):

- ``StmtSimplify()``: tirx's ``Simplify`` (``"tirx.StmtSimplify"``; it folds constants and
  identities but, unlike TIRx's, does not simplify with variables' ranges)
- ``CommonSubexprElim()``: tirx's ``CommonSubexprElim`` (``"tirx.CommonSubexprElim"``)
- ``ConvertSSA()``: tirx's ``ConvertSSA`` (``"tirx.ConvertSSA"``)
- ``Apply(f)``: ``f(func)`` on every function (``"Apply"``); ``Filter(cond)``: keeps the
  functions for which ``cond(func)`` is true (``"tirx.Filter"``)
- ``UnrollLoop()``: tirx's ``UnrollLoop`` (``"tirx.UnrollLoop"``, ``tirx.passes.unroll``; it
  follows a loop's step, which TIRx's ignores)

TIRx's other passes (``HoistIf``, ``NarrowDataType``, ``VectorizeLoop``,
``RemoveNoOp``, the lowering and legalization passes, ...) have no tirx equivalent: asking
for one is an ``AttributeError`` that says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tirx.ir import Function, Module
from tirx.passes.cse import CommonSubexprElim as _CSE
from tirx.passes.infra import FunctionPass, ModulePass, Pass, function_pass
from tirx.passes.simplify import Simplify as _Simplify
from tirx.passes.ssa import ConvertSSA as _ConvertSSA
from tirx.passes.unroll import UnrollLoop as _UnrollLoop

__all__ = [
    "Apply",
    "CommonSubexprElim",
    "ConvertSSA",
    "Filter",
    "FunctionPass",
    "StmtSimplify",
    "UnrollLoop",
    "function_pass",
]


def _named(p: Pass, name: str) -> Pass:
    p.name = name
    return p


def StmtSimplify() -> Pass:
    """TIRx's ``StmtSimplify``: tirx's ``Simplify`` (exact constant folding, integer
    identities, dead branches, trivial loops), named ``tirx.StmtSimplify``. Weaker than TIRx's:
    it does not simplify with variables' ranges (``i // 4`` for ``i`` in ``range(4)`` stays)."""
    return _named(_Simplify(), "tirx.StmtSimplify")


def CommonSubexprElim() -> Pass:
    """TIRx's ``CommonSubexprElim``: tirx's, named ``tirx.CommonSubexprElim``."""
    return _named(_CSE(), "tirx.CommonSubexprElim")


def ConvertSSA() -> Pass:
    """TIRx's ``ConvertSSA``: tirx's, named ``tirx.ConvertSSA``."""
    return _named(_ConvertSSA(), "tirx.ConvertSSA")


def UnrollLoop() -> Pass:
    """TIRx's ``UnrollLoop``: tirx's (``T.unroll`` loops of constant bounds as copies of their
    body; the ``"tirx.UnrollLoop"`` config's ``auto_max_step`` / ``explicit_unroll``)."""
    return _UnrollLoop()


def Apply(ftransform: Callable[[Function], Function]) -> Pass:
    """A function pass (``"Apply"``, opt level 0) that returns ``ftransform(func)`` for each function."""
    if not callable(ftransform):
        raise TypeError(f"Apply: ftransform must be callable, got {type(ftransform).__name__}")

    def apply(func: Function, mod: Module, ctx: Any) -> Function:
        return ftransform(func)

    return function_pass(apply, opt_level=0, name="Apply")


class _Filter(ModulePass):
    def __init__(self, fcond: Callable[[Function], Any]) -> None:
        self.fcond = fcond
        self.name = "tirx.Filter"
        super().__init__()

    def transform_module(self, mod: Module) -> Module:
        keep = tuple(f for f in mod.functions if self.fcond(f))
        if len(keep) == len(mod.functions):
            return mod
        return Module(keep, mod.attrs, mod.name, span=mod.span)


def Filter(fcond: Callable[[Function], Any]) -> Pass:
    """A pass (``"tirx.Filter"``) that keeps the functions for which ``fcond(func)`` is true."""
    if not callable(fcond):
        raise TypeError(f"Filter: fcond must be callable, got {type(fcond).__name__}")
    return _Filter(fcond)


#: TIRx pass name -> the factory above (a ``required=[...]`` entry may name them)
BY_TIRX_NAME: dict[str, Callable[[], Pass]] = {
    "tirx.StmtSimplify": StmtSimplify,
    "tirx.CommonSubexprElim": CommonSubexprElim,
    "tirx.ConvertSSA": ConvertSSA,
    "tirx.UnrollLoop": UnrollLoop,
}

#: what tvm_tirx.tirx.transform 0.1.0a4 has that tirx does not
_ABSENT = frozenset(
    [
        "AnnotateEntryFunc",
        "BF16ComputeLegalize",
        "BF16StorageLegalize",
        "BindTarget",
        "DecorateDeviceScope",
        "FP8ComputeLegalize",
        "FP8StorageLegalize",
        "FlattenTensor",
        "ForceNarrowIndexToInt32",
        "HoistIf",
        "LowerIntrin",
        "LowerTVMBuiltin",
        "LowerTensorLayouts",
        "LowerThreadAllreduce",
        "MakePackedAPI",
        "NarrowDataType",
        "PointerValueTypeRewrite",
        "RemoveNoOp",
        "RenormalizeSplitPattern",
        "SkipAssert",
        "SplitHostDevice",
        "StorageRewrite",
        "TileDispatch",
        "VectorizeLoop",
        "VerifyMemory",
    ]
)


def __getattr__(name: str) -> Any:
    if name in _ABSENT:
        raise AttributeError(
            f"tirx.tirx.transform has no {name!r}: TIRx's {name} pass has no tirx equivalent "
            f"(served: {', '.join(__all__)})"
        )
    if name == "prim_func_pass":
        raise AttributeError(
            "tirx.tirx.transform has no 'prim_func_pass', as TIRx 0.1.0a4 has none: use "
            "function_pass(opt_level=...) (f(func, mod, ctx), or a class with transform_function)"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
