"""``T.op``: the expression half of TIRx's builder API, and every op by name.

``and_``/``or_``/``not_``, the comparisons ``eq_`` ... ``ge_`` and ``if_then_else_`` are what a
parser emits for ``a and b``, ``a < b``, ``x if c else y``. They build exactly what the Python
frontend builds for that syntax (the same helpers of ``tirx/script/parser_values.py``: constant
folding, host short-circuits, ``T.if_then_else`` for an IR condition). Any other
``T.op.<name>`` is the op of the op table (``T.op.exp is T.exp``).
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from ...ir import IntImm, PrimExpr
from ...ir import op as _op
from ...ir.expr import Not
from ...surface.helpers import lazy_select
from ..parser import _BOOL, _CMP, Cell, MetaVar, apply_binop, bool_chain
from .frame import check_loc, unwrap

__all__ = [
    "and_", "eq_", "expose_script_op", "expose_script_type", "ge_", "gt_", "if_then_else_", "le_",
    "lt_", "ne_", "not_", "or_", "register_script_namespace",
]  # fmt: skip


def _v(x: Any) -> Any:
    x = unwrap(x)
    return x.value if type(x) is MetaVar else x


def _logic(node_ast: type, name: str, values: tuple) -> Any:
    """``a and b and ...`` of operands already evaluated, as TIRx's builder takes them
    (``tirx/script/parser_values.py bool_chain``, no operand short-circuits): host values alone
    give Python's value; with an IR operand, every operand is a term (``T.and_(False, x > 0)``
    is ``T.And(T.bool(False), x > 0)``, as TIRx's)."""
    if not values:
        raise TypeError(f"{name} needs at least one operand")
    cls = _BOOL[node_ast]
    return bool_chain((_v(v) for v in values), node_ast is ast.And, cls, short_circuit=lambda k: False)


def and_(*values: Any) -> Any:
    """``a and b and ...``: a host value when decided in Python, else an ``And`` node."""
    return _logic(ast.And, "and_", values)


def or_(*values: Any) -> Any:
    """``a or b or ...``: a host value when decided in Python, else an ``Or`` node."""
    return _logic(ast.Or, "or_", values)


def not_(value: Any) -> Any:
    """``not x``: ``Not`` of an IR value, Python's ``not`` of a host value."""
    value = _v(value)
    if isinstance(value, PrimExpr):
        return Not(value)
    return not value


def _cmp(node_ast: type, name: str) -> Any:
    opcls, pyop = _CMP[node_ast]
    assert pyop is not None  # every comparison operator has a Python function

    def cmp(lhs: Any, rhs: Any, *, loc: Any = None) -> Any:
        lhs, rhs = _v(lhs), _v(rhs)
        if isinstance(lhs, (PrimExpr, Cell)) or isinstance(rhs, (PrimExpr, Cell)):
            return apply_binop(opcls, pyop, lhs, rhs, check_loc(loc))
        return pyop(lhs, rhs)

    cmp.__name__ = cmp.__qualname__ = name
    cmp.__doc__ = f"``lhs {name[:2]} rhs`` in written operand order (folded as the frontend folds it)."
    return cmp


eq_ = _cmp(ast.Eq, "eq_")
ne_ = _cmp(ast.NotEq, "ne_")
lt_ = _cmp(ast.Lt, "lt_")
le_ = _cmp(ast.LtE, "le_")
gt_ = _cmp(ast.Gt, "gt_")
ge_ = _cmp(ast.GtE, "ge_")


def if_then_else_(condition: Any, true_value: Any, false_value: Any) -> Any:
    """``a if c else b``: a host condition picks an arm; an IR one gives ``T.if_then_else``."""
    c = _v(condition)
    a, b = _v(true_value), _v(false_value)
    if isinstance(c, PrimExpr) and type(c) is not IntImm:  # both arms are built (TIRx)
        return lazy_select(c, a, b)
    if type(c) is IntImm:  # an integer constant: decided now, as the frontend does
        c = bool(c.value)
    return a if c else b


# ------------------------------------------------------------------ namespaces
def _t() -> Any:
    return sys.modules["tirx.script.tirx"]


#: the names register_script_namespace gave ``T`` (a later call may replace these, as in TIRx)
_REGISTERED: set[str] = set()


def register_script_namespace(name: str, namespace: object) -> object:
    """Make ``namespace`` reachable as ``T.<name>`` (in kernels and for the text loader's
    ``T.<name>.<member>`` calls that resolve through Python) and return it.

    Registering a name again replaces the namespace (a script run twice); unlike TIRx, a
    name ``T`` itself defines (an op, ``T.cuda``, ``T.Var``, ...) is refused, not replaced."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"register_script_namespace: name must be an identifier, got {name!r}")
    t = _t()
    cur = t.__dict__.get(name)
    if cur is namespace:
        return namespace
    if _op.lookup(name) is not None or _op.lookup_alias(name) is not None:
        raise ValueError(f"register_script_namespace: T.{name} is a declared op")
    if cur is not None and name not in _REGISTERED:
        raise ValueError(f"register_script_namespace: T.{name} is already defined")
    setattr(t, name, namespace)
    _REGISTERED.add(name)
    return namespace


_OP_PREFIXES = ("tirx.", "prim.", "ir.")


def expose_script_op(name: str) -> Any:
    """``T.<path>`` for the declared op ``name`` (TIRx's ``tirx.<path>`` spelling accepted).

    Every op of tirx's op table is already a ``T`` member (``tirx.ir.op.declare``); this
    returns it, and refuses a name no declaration gives."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"expose_script_op: name must be a str, got {name!r}")
    path = name
    for p in _OP_PREFIXES:
        if path.startswith(p):
            path = path[len(p) :]
            break
    v = _t()._resolve(path)  # T's resolver, looked up: T imports this module
    if v is None:
        raise ValueError(
            f"expose_script_op: no op {name!r} is declared (declare it with tirx.ir.op.declare first)"
        )
    return v


def expose_script_type(type_key: str) -> Any:
    """The class that constructs the IR type ``type_key`` (``"ir.PrimType"``, ``"tirx.TensorType"``,
    ``"ir.TupleType"``): tirx's types are plain classes of ``tirx.ir.types`` and
    ``tirx.ir.host_types``."""
    if not isinstance(type_key, str) or not type_key:
        raise TypeError(f"expose_script_type: type_key must be a str, got {type_key!r}")
    from ...ir import host_types as _host
    from ...ir import types as _types

    short = type_key.rsplit(".", 1)[-1]
    cls = getattr(_types, short, None) or getattr(_host, short, None)  # TupleType, StringType, ...
    if not (isinstance(cls, type) and issubclass(cls, _types.Type)):
        raise ValueError(f"expose_script_type: tirx has no IR type {type_key!r}")
    return cls


def __getattr__(name: str) -> Any:
    """``T.op.<name>``: the op (or ``T`` helper) of that name."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(_t(), name)
    except AttributeError:
        raise AttributeError(f"T.op has no member {name!r} (no op T.{name})") from None
