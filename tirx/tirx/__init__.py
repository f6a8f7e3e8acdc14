"""TIRx's Python API module (``tvm_tirx.tirx``) under tirx's name, for ported host code.

A program written for TIRx builds some expressions outside its kernels with TIRx's Python
API: ``from tvm_tirx.tirx.op import if_then_else``, ``tvm_tirx.tirx.Var(...)``. After changing
the import, ``tirx.tirx`` serves the expression builders and node classes both systems have:
``tirx.tirx.op.<name>`` is the script op of that name (``T.<name>``), with TIRx's host folding
where TIRx folds (``op.if_then_else`` of a constant condition is the chosen arm), and the node
classes both serve (``Var``, ``Cast``, the expression ``Let(var, value, body)``) and ``const(value,
dtype)`` are tirx's (``tirx.ir``). The constants (``IntImm``,
``FloatImm``, ``StringImm``) are not served here, as TIRx has them in ``tvm_tirx.ir`` only
(``tirx.ir.IntImm("int64", 8)`` takes its dtype-first order). ``compile(f, target={"kind": "cuda", "arch": "sm_90a"})`` is ``tirx.compile``; its result's
``.mod.imports[0].inspect_source()`` is the CUDA source, as TIRx's runtime module gives it. TIRx's
pass API is ``tirx.tirx.transform`` (tirx's passes) and ``.analysis`` serves the analyses
tirx's IR answers (``check_well_formed``, ``undefined_vars``); the rest of TIRx's runtime is not
served: an unknown name is an ``AttributeError`` that says so. The constraint-aware traversals
(``structural_walk_with_constraint_context``, ``..._visit_...``, ``..._map_...``, ``..._mutate_...``:
``tirx.ffi``'s, each callback given the loop ranges, guards and bindings in force, for
``tirx.sym.Analyzer``) are ``tirx.tirx.structural``'s, loaded on first use.

The IR's node classes are here under TIRx's names (docs/tirx_compat.md, "The IR's Python
API"): the binary and comparison nodes (``Add`` ... ``Or``, TIRx's ``BitwiseAnd``,
``LShift``, ... for tirx's ``BitAnd``, ``Shl``, ...) are tirx's own classes, so
``isinstance(e, tirx.Add)``, ``type(e) is tirx.Add`` and dicts keyed by them hold; ``Function``
and ``TensorType`` take TIRx's arguments (``Function(params, body, ret_type, attrs)``,
``TensorType(shape, dtype, scope, align, layout)``) and build tirx's nodes, of which
``isinstance`` is true.
"""

from __future__ import annotations

from typing import Any

from tirx.ir import BinaryOp, BitNot
from tirx.ir import Cast as Cast
from tirx.ir import Expr as Expr
from tirx.ir import Let as Let
from tirx.ir import Not as Not
from tirx.ir import Select as Select
from tirx.ir import TensorType as _TensorType
from tirx.ir import Var as Var
from tirx.ir import const as const
from tirx.ir import convert as convert
from tirx.ir import function as _function
from tirx.ir.buffer import is_tensor_var as is_tensor_var
from tirx.ir.operators import OPERATORS as _OPERATORS
from tirx.ir.types import TirxName
from tirx.ir.types import as_prim as _as_prim

from . import op

#: the binary and comparison node classes under TIRx's names: the op table's capitalized
#: spellings (``Add``, ``FloorDiv``, ``BitwiseAnd``, ``LShift``, ``EQ``, ``And``, ...), tirx's own
#: classes, so ``isinstance(e, tirx.Add)`` and ``type(e) is tirx.BitwiseAnd`` hold
_OP_CLASSES = {n: o.node for o in _OPERATORS for n in o.func if n[:1].isupper()}
globals().update(_OP_CLASSES)
BitwiseNot = BitNot  # (a unary op: the table gives its ``~`` only)
BinaryOpExpr = BinaryOp


class Function(metaclass=TirxName):
    """TIRx's ``tirx.Function(params, body, ret_type=None, attrs=None)``: tirx's Function
    (``tirx.ir.function.tirx_function`` says how tensor parameters and the name map)."""

    _of = _function.Function

    def __new__(cls, params: Any, body: Any, ret_type: Any = None, attrs: Any = None, loc: Any = None) -> Any:
        return _function.tirx_function(params, body, ret_type, attrs)


class TensorType(metaclass=TirxName):
    """TIRx's ``tirx.TensorType(shape, dtype, scope="global", align=0, layout=None, *, data=None)``:
    tirx's TensorType (``tirx.ir.TensorType``), the type of a tensor Var (``ir.Var("A",
    TensorType((16,), "float32"))``), which ``Function``, ``TensorLoad`` and ``TensorStore``
    take for its Buffer."""

    _of = _TensorType

    def __new__(
        cls, shape: Any, dtype: Any, scope: Any = "global", align: int = 0, layout: Any = None, *,
        data: Any = None, strides: Any = (), elem_offset: Any = None, data_alignment: Any = None, loc: Any = None,
    ) -> Any:  # fmt: skip
        if isinstance(shape, (str, bytes)) or not isinstance(shape, (list, tuple)):
            raise TypeError(f"TensorType: shape must be a tuple, got {type(shape).__name__}")
        if not isinstance(scope, str):
            scope = str(scope)  # TIRx's MemoryScope
        if data_alignment is not None and not align:
            align = data_alignment
        return _TensorType(
            tuple(shape), _as_prim(dtype, "TensorType dtype"), scope, tuple(strides), align, elem_offset, data,
            layout,
        )  # fmt: skip


#: the constraint-aware traversals (tirx.tirx.structural, loaded on first use: it reads T.Range)
_STRUCTURAL = frozenset(
    {"StructuralMutatorWithConstraintContext", "StructuralVisitorWithConstraintContext",
     "structural_map_with_constraint_context", "structural_mutate_with_constraint_context",
     "structural_visit_with_constraint_context", "structural_walk_with_constraint_context"}
)  # fmt: skip

__all__ = sorted(
    [*_OP_CLASSES, *_STRUCTURAL, "BinaryOpExpr", "BitwiseNot", "Cast", "Expr", "Function", "Let", "Not",
     "Select", "TensorType", "Var", "compile", "const", "convert", "get_tir_pipeline", "is_tensor_var", "op",
     "register_tir_pipeline"]
)  # fmt: skip


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
    if name == "analysis":  # the analyses tirx's IR answers (check_well_formed, undefined_vars)
        import importlib

        return importlib.import_module("tirx.tirx.analysis")
    if name in ("register_tir_pipeline", "get_tir_pipeline"):  # TIRx's named pipelines (tirx.tir_pipelines)
        import importlib

        return getattr(importlib.import_module("tirx.tir_pipelines"), name)
    if name in _STRUCTURAL:
        from . import structural

        return getattr(structural, name)
    if name in _NOT_SERVED:
        raise AttributeError(
            f"tirx.tirx has no {name!r}, as tvm_tirx.tirx has none (TIRx's is tvm_tirx.ir.{name}(dtype, "
            f"value); tirx's is tirx.ir.{name})"
        )
    return getattr(op, name)


def __dir__() -> list[str]:
    return sorted({*__all__, *op.__dir__()} - _NOT_SERVED)
