"""The IR: immutable nodes, types, the op table, spans, structural equality and hash."""

from typing import TYPE_CHECKING, Any

from . import fold, op  # noqa: F401  # fold registers TIRx's literal rules with binop (expr)
from .buffer import Buffer
from .expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BinaryOp,
    BitAnd,
    BitNot,
    BitOr,
    BitXor,
    Broadcast,
    BufferLoad,
    Call,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    GlobalVar,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Select,
    Shl,
    Shr,
    StringImm,
    Sub,
    Var,
    binop,
    const,
    convert,
)  # fmt: skip
from .function import Function, IRModule, Module
from .node import Attrs, Node
from .op import Op
from .span import SequentialSpan, Span
from .stmt import (
    AllocBuffer,
    Assert,
    AttrStmt,
    Bind,
    Break,
    BufferStore,
    Continue,
    DeclBuffer,
    DeviceEntry,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    RegionStmt,
    Return,
    SeqStmt,
    Stmt,
    While,
    seq,
    stmt_seq,
)  # fmt: skip
from .structural import assert_structural_equal, structural_equal, structural_hash
from .types import PointerType, PrimType, PtrType, TensorType, Type, VoidType, as_type, parse_dtype, prim

# TIRx's names (``tvm_tirx.ir``) of these nodes, for IR built by hand with its Python API
# (docs/tirx_compat.md, "The IR's Python API"): the same classes, whose constructors also take
# TIRx's argument order (``TensorStore(dest, indices, value)``, ``For(var, begin, end, step,
# kind, body)``, ``IntImm(dtype, value)``) and read back under TIRx's field names
If = IfThenElse
TensorLoad = BufferLoad
TensorStore = BufferStore
AssertStmt = Assert
Expr = PrimExpr

if TYPE_CHECKING:  # for type checkers: the traversals load on first use (__getattr__ below)
    from .visitor import Mutator, ScopeStack, Visitor, collect_vars, post_order

# The traversals (visitor.py, and the dispatch base it stands on, functor.py) load on first
# access, so ``import tirx`` loads only the nodes (tests/test_import_cost.py).
_LAZY = frozenset(("Mutator", "ScopeStack", "Visitor", "collect_vars", "post_order"))


def __getattr__(name: str) -> Any:
    """``tirx.ir.Visitor`` & co.: import ``visitor.py`` on first access."""
    if name in _LAZY:
        from . import visitor

        return getattr(visitor, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "EQ",
    "GE",
    "GT",
    "LE",
    "LT",
    "NE",
    "Add",
    "AllocBuffer",
    "And",
    "Assert",
    "AssertStmt",
    "AttrStmt",
    "Attrs",
    "BinaryOp",
    "Bind",
    "BitAnd",
    "BitNot",
    "BitOr",
    "BitXor",
    "Break",
    "Broadcast",
    "Buffer",
    "BufferLoad",
    "BufferStore",
    "Call",
    "Cast",
    "Continue",
    "DeclBuffer",
    "DeviceEntry",
    "Div",
    "Evaluate",
    "Expr",
    "FloatImm",
    "FloorDiv",
    "FloorMod",
    "For",
    "ForKind",
    "Function",
    "GlobalVar",
    "IRModule",
    "If",
    "IfThenElse",
    "IntImm",
    "Let",
    "Max",
    "Min",
    "Mod",
    "Module",
    "Mul",
    "Mutator",
    "Node",
    "Not",
    "Op",
    "Or",
    "PointerType",
    "PrimExpr",
    "PrimType",
    "PtrType",
    "Ramp",
    "RegionStmt",
    "Return",
    "ScopeStack",
    "Select",
    "SeqStmt",
    "SequentialSpan",
    "Shl",
    "Shr",
    "Span",
    "Stmt",
    "StringImm",
    "Sub",
    "TensorLoad",
    "TensorStore",
    "TensorType",
    "Type",
    "Var",
    "Visitor",
    "VoidType",
    "While",
    "as_type",
    "assert_structural_equal",
    "binop",
    "collect_vars",
    "const",
    "convert",
    "op",
    "parse_dtype",
    "post_order",
    "prim",
    "seq",
    "stmt_seq",
    "structural_equal",
    "structural_hash",
]  # fmt: skip
