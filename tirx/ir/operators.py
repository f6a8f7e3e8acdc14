"""The operator table: one row per binary/unary expression node.

Every surface that spells an operator derives its table from ``OPERATORS``:

* the printer (``printer/_printer.py``): ``text`` / ``func``, ``prec``, ``assoc``;
* the text grammar's transformer (``grammar/_transform.py``): ``text`` -> node, ``prec``,
  ``assoc`` (comparisons do not chain), ``func`` (``T.<name>(a, b)`` spellings);
* the Python frontend (``tirx/script/parser.py``): ``py_ast`` -> node and ``py_func`` (what the
  operator computes on plain Python values);
* the CUDA backend (``tirx/codegen/cuda_expr.py``, ``cuda_common.py``): ``c_text`` and ``c_prec``.

Text precedence is Python's (the text format is Python syntax); C++ precedence differs (e.g.
comparisons bind tighter than ``&`` in Python, looser in C++), so both columns are kept.
This module imports only ``tirx.ir.expr`` and the standard library.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

import attrs

from . import expr as _e

__all__ = [
    "ADD",
    "AND",
    "ATOM",
    "BAND",
    "BOR",
    "BXOR",
    "BY_NODE",
    "CMP",
    "C_PREC_PRIMARY",
    "C_PREC_UNARY",
    "MUL",
    "NOT",
    "OPERATORS",
    "OR",
    "SHIFT",
    "UNARY",
    "Operator",
]

# Text (Python) precedence levels, loosest first. ATOM: anything that never needs parentheses.
OR, AND, NOT, CMP, BOR, BXOR, BAND, SHIFT, ADD, MUL, UNARY, ATOM = range(1, 13)
# C++ precedence levels used by the CUDA backend (higher binds tighter).
C_PREC_PRIMARY = 16
C_PREC_UNARY = 15


@attrs.frozen
class Operator:
    """One operator node and how each surface spells it.

    ``text``: the infix/prefix spelling in the text format (None: printed as ``T.<func>(a, b)``).
    ``func``: the ``T.<name>(a, b)`` spellings the text grammar accepts; the first is printed when
    ``text`` is None. ``prec``/``assoc``: text (Python) precedence and associativity ("left", or
    "none" for comparisons, which may not chain). ``kind``: "arith", "bitwise", "cmp", "logic".
    ``py_ast``: the Python ``ast`` operator class (None: no Python operator builds it);
    ``py_func``: what that operator computes on plain Python values. ``c_text``/``c_prec``: the
    C++ operator and its precedence (None: the backend emits a helper or intrinsic call).
    """

    node: type
    kind: str
    text: str | None
    prec: int
    assoc: str = "left"
    func: tuple[str, ...] = ()
    py_ast: type | None = None
    py_func: Callable[..., Any] | None = None
    c_text: str | None = None
    c_prec: int | None = None
    unary: bool = False


_O = Operator
OPERATORS: tuple[Operator, ...] = (
    _O(_e.Add, "arith", "+", ADD, func=("Add",), py_ast=ast.Add, py_func=operator.add, c_text="+", c_prec=12),
    _O(_e.Sub, "arith", "-", ADD, func=("Sub",), py_ast=ast.Sub, py_func=operator.sub, c_text="-", c_prec=12),
    _O(_e.Mul, "arith", "*", MUL, func=("Mul",), py_ast=ast.Mult, py_func=operator.mul, c_text="*", c_prec=13),
    _O(_e.Div, "arith", "/", MUL, func=("truncdiv", "Div"), py_ast=ast.Div, py_func=operator.truediv,
       c_text="/", c_prec=13),
    _O(_e.Mod, "arith", None, ATOM, func=("truncmod", "Mod"), c_text="%", c_prec=13),
    _O(_e.FloorDiv, "arith", "//", MUL, func=("floordiv", "FloorDiv"), py_ast=ast.FloorDiv,
       py_func=operator.floordiv),
    _O(_e.FloorMod, "arith", "%", MUL, func=("floormod", "FloorMod"), py_ast=ast.Mod, py_func=operator.mod),
    _O(_e.Min, "arith", None, ATOM, func=("min", "Min")),
    _O(_e.Max, "arith", None, ATOM, func=("max", "Max")),
    _O(_e.BitAnd, "bitwise", "&", BAND, func=("BitwiseAnd",), py_ast=ast.BitAnd, py_func=operator.and_, c_text="&", c_prec=8),
    _O(_e.BitOr, "bitwise", "|", BOR, func=("BitwiseOr",), py_ast=ast.BitOr, py_func=operator.or_, c_text="|", c_prec=6),
    _O(_e.BitXor, "bitwise", "^", BXOR, func=("BitwiseXor",), py_ast=ast.BitXor, py_func=operator.xor, c_text="^", c_prec=7),
    _O(_e.Shl, "bitwise", "<<", SHIFT, func=("LShift",), py_ast=ast.LShift, py_func=operator.lshift, c_text="<<", c_prec=11),
    _O(_e.Shr, "bitwise", ">>", SHIFT, func=("RShift",), py_ast=ast.RShift, py_func=operator.rshift, c_text=">>", c_prec=11),
    _O(_e.EQ, "cmp", "==", CMP, "none", func=("EQ",), py_ast=ast.Eq, py_func=operator.eq, c_text="==", c_prec=9),
    _O(_e.NE, "cmp", "!=", CMP, "none", func=("NE",), py_ast=ast.NotEq, py_func=operator.ne, c_text="!=", c_prec=9),
    _O(_e.LT, "cmp", "<", CMP, "none", func=("LT",), py_ast=ast.Lt, py_func=operator.lt, c_text="<", c_prec=10),
    _O(_e.LE, "cmp", "<=", CMP, "none", func=("LE",), py_ast=ast.LtE, py_func=operator.le, c_text="<=", c_prec=10),
    _O(_e.GT, "cmp", ">", CMP, "none", func=("GT",), py_ast=ast.Gt, py_func=operator.gt, c_text=">", c_prec=10),
    _O(_e.GE, "cmp", ">=", CMP, "none", func=("GE",), py_ast=ast.GtE, py_func=operator.ge, c_text=">=", c_prec=10),
    _O(_e.And, "logic", "and", AND, func=("And",), py_ast=ast.And, c_text="&&", c_prec=5),
    _O(_e.Or, "logic", "or", OR, func=("Or",), py_ast=ast.Or, c_text="||", c_prec=4),
    _O(_e.Not, "logic", "not", NOT, "right", py_ast=ast.Not, py_func=operator.not_, c_text="!",
       c_prec=C_PREC_UNARY, unary=True),
    _O(_e.BitNot, "bitwise", "~", UNARY, "right", py_ast=ast.Invert, py_func=operator.invert, c_text="~",
       c_prec=C_PREC_UNARY, unary=True),
)  # fmt: skip

BY_NODE: dict[type, Operator] = {o.node: o for o in OPERATORS}
