"""Expression nodes and the Python operators that build them.

Every expression has a ``ty`` (a PrimType or a PointerType). A Python number beside an
expression combines with it as TIRx combines them (``tirx.ir.fold``: its own dtype, then
both operands matched to one; the Python operators then fold as TIRx does); two expressions of
different dtypes are a ``TypeError`` naming both.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from numbers import Number
from typing import TYPE_CHECKING, Any

import attrs

from .arith import int_range
from .node import BUF_USE, DEF, NODE, SEQ, VALUE, Node, child
from .node import frozen_node as _frozen  # attrs.define(frozen, slots, eq=False, repr=False)
from .types import PrimType, Type, as_type, bool_, float32, handle, int32, int64, prim

__all__ = [
    "EQ",
    "GE",
    "GT",
    "LE",
    "LT",
    "NE",
    "Add",
    "And",
    "BinaryOp",
    "BitAnd",
    "BitNot",
    "BitOr",
    "BitXor",
    "Broadcast",
    "BufferLoad",
    "Call",
    "Cast",
    "CmpOp",
    "Div",
    "FloatImm",
    "FloorDiv",
    "FloorMod",
    "GlobalVar",
    "IntImm",
    "Let",
    "Max",
    "Min",
    "Mod",
    "Mul",
    "Not",
    "Or",
    "PrimExpr",
    "Ramp",
    "Select",
    "Shl",
    "Shr",
    "StringImm",
    "Sub",
    "Var",
    "const",
    "convert",
]


if TYPE_CHECKING:
    from typing import Protocol

    class Typed(Protocol):
        """What ``convert``'s ``like`` needs: a dtype (an expression, or a dtype carrier)."""

        @property
        def ty(self) -> Type: ...


class PrimExpr(Node):
    """Base of expressions; Python operators build IR.

    ``==`` / ``!=`` build ``EQ`` / ``NE`` too (TVM's ``EqualOp`` rule), so a plain Python
    helper called while a kernel builds gets a real comparison, never a silent ``False``.
    Their Python truth value (``bool``, an ``if`` in plain Python, ``in`` on a list) is
    identity only when both operands are expressions of one dtype (what passes need: nodes
    as list members and dict keys; hash stays identity); against a Python number it raises
    ``TypeError``, since only the running kernel knows the answer. Expressions of two dtypes
    compare by identity (never equal). Kernel ``if``, the lazy select op and the frontend's
    ``in`` / ``not in`` (``tirx/script/parser.py``) build the comparison instead.
    """

    __slots__ = ()
    if TYPE_CHECKING:  # every expression class has this field (its dtype)
        ty: Type

    # -- arithmetic (with a Python number: TIRx's rules and folding, _pyop) ---------------
    def __add__(self, o):
        return _pyop(Add, self, o)

    def __radd__(self, o):
        return _pyop(Add, o, self)

    def __sub__(self, o):
        return _pyop(Sub, self, o)

    def __rsub__(self, o):
        return _pyop(Sub, o, self)

    def __mul__(self, o):
        return _pyop(Mul, self, o)

    def __rmul__(self, o):
        return _pyop(Mul, o, self)

    def __truediv__(self, o):
        _literal_rules().check_true_div(self, o)
        return _pyop(Div, self, o)

    def __rtruediv__(self, o):
        _literal_rules().check_true_div(o, self)
        return _pyop(Div, o, self)

    def __floordiv__(self, o):
        return _pyop(FloorDiv, self, o)

    def __rfloordiv__(self, o):
        return _pyop(FloorDiv, o, self)

    def __mod__(self, o):
        return _pyop(FloorMod, self, o)

    def __rmod__(self, o):
        return _pyop(FloorMod, o, self)

    def __neg__(self):  # as TIRx's (tirx.ir.fold.neg): ``x * T.<dtype>(-1)``, folded
        return _literal_rules().neg(self)

    def __and__(self, o):
        return _pyop(BitAnd, self, o)

    def __rand__(self, o):
        return _pyop(BitAnd, o, self)

    def __or__(self, o):
        return _pyop(BitOr, self, o)

    def __ror__(self, o):
        return _pyop(BitOr, o, self)

    def __xor__(self, o):
        return _pyop(BitXor, self, o)

    def __rxor__(self, o):
        return _pyop(BitXor, o, self)

    def __lshift__(self, o):
        return _pyop(Shl, self, o)

    def __rlshift__(self, o):
        return _pyop(Shl, o, self)

    def __rshift__(self, o):
        return _pyop(Shr, self, o)

    def __rrshift__(self, o):
        return _pyop(Shr, o, self)

    def __invert__(self):
        return BitNot(self, self.ty)

    # comparisons (== / !=: see the class docstring and _equality)
    def __eq__(self, o: object) -> Any:  # type: ignore[override]  # builds IR, as TVM's
        return _equality(EQ, self, o)

    def __ne__(self, o: object) -> Any:  # type: ignore[override]
        return _equality(NE, self, o)

    def __lt__(self, o):
        return _pyop(LT, self, o)

    def __le__(self, o):
        return _pyop(LE, self, o)

    def __gt__(self, o):
        return _pyop(GT, self, o)

    def __ge__(self, o):
        return _pyop(GE, self, o)

    def eq(self, o):
        return binop(EQ, self, o)

    def ne(self, o):
        return binop(NE, self, o)

    def astype(self, dtype: Any) -> PrimExpr:
        """``self`` as ``dtype``, as TIRx's ``astype`` builds it (its ``cast``: a constant
        folds, ``T.max_value(ty="uint32").astype("uint64")`` is ``T.uint64(4294967295)``;
        the folding cast is tirx.ir.fold's, which sets ``_FOLD_CAST`` when it loads)."""
        t = as_type(dtype)
        if t == self.ty:
            return self
        return _FOLD_CAST(t, self) if isinstance(t, PrimType) else Cast(t, self)

    def __bool__(self):
        raise TypeError(
            "a tirx expression has no Python truth value; use it in a kernel 'if', or compare with "
            "tirx.structural_equal"
        )

    __hash__ = Node.__hash__  # identity, consistent with bool(a == b) (a is b)

    @property
    def dtype(self) -> Type:
        return self.ty


# ------------------------------------------------------------------- leaves
@_frozen
class Var(PrimExpr):
    """A variable. Its identity is the object; ``name`` is only a hint for printing."""

    name: str
    ty: Type = child(VALUE, default=int32)

    def __attrs_post_init__(self):
        if not isinstance(self.name, str):
            raise TypeError(f"Var.name must be a str, got {type(self.name).__name__}")
        if not isinstance(self.ty, Type):
            object.__setattr__(self, "ty", as_type(self.ty, "Var.ty"))

    def __repr__(self):
        return f"Var({self.name!r}, {self.ty})"


@_frozen
class IntImm(PrimExpr):
    value: int = child(VALUE)
    ty: PrimType = child(VALUE, default=int32)

    def __attrs_post_init__(self):
        if type(self.value) is not int:
            if isinstance(self.value, bool):
                object.__setattr__(self, "value", int(self.value))
            elif isinstance(self.value, (str, Type)) and isinstance(self.ty, int):
                # TIRx's argument order, ``IntImm(dtype, value)``: the same constant
                dt, v = self.value, self.ty
                object.__setattr__(self, "value", int(v))
                object.__setattr__(self, "ty", dt)
            else:
                raise TypeError(f"IntImm.value must be an int, got {type(self.value).__name__}")
        t = self.ty
        if not isinstance(t, Type):
            t = as_type(t, "IntImm.ty")
            object.__setattr__(self, "ty", t)
        if not isinstance(t, PrimType) or not (t.is_int or t.is_bool):
            raise TypeError(f"IntImm.ty must be an integer or bool dtype, got {t}")
        if t.is_bool:
            if self.value not in (0, 1):
                raise ValueError(f"IntImm: bool value must be 0 or 1, got {self.value}")
        else:
            lo, hi = int_range(t)
            if not lo <= self.value <= hi:
                raise ValueError(f"IntImm: {self.value} does not fit in {t}")

    def __repr__(self):
        return f"IntImm({self.value}, {self.ty})"

    # a constant is a number in host code, as in TIRx: ``if T.int32(0):``, ``int(n)``,
    # ``range(n)``, ``xs[n]`` (a Var or any other expression has no Python value)
    def __bool__(self) -> bool:
        return self.value != 0

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value


@_frozen
class FloatImm(PrimExpr):
    value: float = child(VALUE)
    ty: PrimType = child(VALUE, default=float32)

    def __attrs_post_init__(self):
        if type(self.value) is not float:
            if isinstance(self.value, (str, Type)) and isinstance(self.ty, (int, float)):
                # TIRx's argument order, ``FloatImm(dtype, value)``: the same constant
                dt, v = self.value, self.ty
                object.__setattr__(self, "value", float(v))
                object.__setattr__(self, "ty", dt)
            elif isinstance(self.value, (int, float)) and not isinstance(self.value, bool):
                object.__setattr__(self, "value", float(self.value))
            else:
                raise TypeError(f"FloatImm.value must be a float, got {type(self.value).__name__}")
        if not isinstance(self.ty, Type):
            object.__setattr__(self, "ty", as_type(self.ty, "FloatImm.ty"))
        if not isinstance(self.ty, PrimType) or not self.ty.is_float:
            raise TypeError(f"FloatImm.ty must be a float dtype, got {self.ty}")

    def __repr__(self):
        return f"FloatImm({self.value!r}, {self.ty})"


@_frozen
class StringImm(PrimExpr):
    value: str = child(VALUE)
    ty: Type = attrs.field(default=handle, init=False)

    def __attrs_post_init__(self):
        if not isinstance(self.value, str):
            raise TypeError(f"StringImm.value must be a str, got {type(self.value).__name__}")

    def __repr__(self):
        return f"StringImm({self.value!r})"


# ------------------------------------------------------------------- binary ops
class BinaryOp(PrimExpr):
    """Two operands of the same dtype."""

    __slots__ = ()
    if TYPE_CHECKING:  # every binary node class (_defbin) has these fields and this __init__
        a: PrimExpr
        b: PrimExpr

        def __init__(self, a: PrimExpr, b: PrimExpr, ty: Type | None = None, *, span: Any = None) -> None: ...


def _check_bin(self):
    a, b = self.a, self.b
    if not isinstance(a, PrimExpr) or not isinstance(b, PrimExpr):
        bad = "a" if not isinstance(a, PrimExpr) else "b"
        raise TypeError(
            f"{type(self).__name__}.{bad} must be a PrimExpr, got {type(getattr(self, bad)).__name__}"
        )
    if a.ty != b.ty:
        raise TypeError(f"{type(self).__name__}: operand dtypes differ: {a.ty} vs {b.ty}")


def _arith_post(self):
    _check_bin(self)
    if self.ty is None:
        object.__setattr__(self, "ty", self.a.ty)
    elif self.ty != self.a.ty:
        raise TypeError(f"{type(self).__name__}.ty {self.ty} differs from the operand dtype {self.a.ty}")


def _bitwise_post(self):
    _arith_post(self)
    t = self.a.ty
    if not (isinstance(t, PrimType) and (t.is_int or t.is_bool)):
        raise TypeError(f"{type(self).__name__}: operands must be integers, got dtype {t}")


def _cmp_post(self):
    _check_bin(self)
    t = self.a.ty
    want = bool_ if not isinstance(t, PrimType) or t.lanes == 1 else prim("bool", t.lanes)
    if self.ty is None:
        object.__setattr__(self, "ty", want)
    elif self.ty != want:
        raise TypeError(f"{type(self).__name__}.ty must be {want}, got {self.ty}")


def _logic_post(self):
    _check_bin(self)
    if not (isinstance(self.a.ty, PrimType) and self.a.ty.is_bool):
        raise TypeError(f"{type(self).__name__}: operands must be bool, got {self.a.ty}")
    if self.ty is None:
        object.__setattr__(self, "ty", self.a.ty)


def _constant_truth(e: Any) -> bool | None:
    """The truth of a comparison of two constants, as TIRx folds it (``T.int32(0) == -1`` is
    false, ``T.float32(1.5) < 2`` true): host code of TIRx programs branches on such values
    (a test's parameter compared with a sentinel). ``None`` when an operand is not constant."""
    if type(e.a) not in (IntImm, FloatImm) or type(e.b) not in (IntImm, FloatImm):
        return None
    return bool(_PY_CMP[type(e).__name__](e.a.value, e.b.value))


_PY_CMP = {
    "EQ": operator.eq,
    "NE": operator.ne,
    "LT": operator.lt,
    "LE": operator.le,
    "GT": operator.gt,
    "GE": operator.ge,
}


def _cmp_bool(self: Any) -> bool:
    """``<``, ``<=``, ``>``, ``>=`` of two constants have their folded truth; any other
    comparison has none (the kernel decides it)."""
    t = _constant_truth(self)
    if t is None:
        return PrimExpr.__bool__(self)
    return t


def _equality_bool(self: Any) -> bool:
    """The Python truth of ``a == b`` / ``a != b``: identity, set by ``_equality`` only when
    both operands were expressions; a constant compared with a Python number has its folded
    value (as in TIRx, integers only); any other EQ/NE has no Python truth value."""
    same = self._same
    if same is None:
        # integers only: TIRx folds ``T.int32(0) == -1`` but not float equality
        t = _constant_truth(self) if type(self.a) is IntImm and type(self.b) is IntImm else None
        if t is not None:
            return t
        raise TypeError(
            f"{self!r}: a comparison of a tirx expression with a Python value has no Python truth "
            "value (the kernel decides it when it runs); write it in a kernel 'if' or a lazy "
            "select op (cond, a, b). Plain Python 'if x == c', and 'in' / 'not in' on tirx "
            "values, work only in a kernel body or a @T.inline helper, which build IR for them"
        )
    return same


def _defbin(name: str, post, doc: str, equality: bool = False) -> type[BinaryOp]:
    # spellings (text, Python, C++) and precedence: the operator table, tirx/ir/operators.py
    ann = {"a": "PrimExpr", "b": "PrimExpr", "ty": "Type"}
    ns: dict[str, Any] = {
        "a": child(NODE),
        "b": child(NODE),
        "ty": child(VALUE, default=None),
        "__attrs_post_init__": post,
        "__doc__": doc,
    }
    if equality:  # EQ / NE: the identity answer of the Python ``==`` that built it (else None)
        ann["_same"] = "Any"
        ns["_same"] = attrs.field(default=None, init=False, repr=False)
        ns["__bool__"] = _equality_bool
    elif post is _cmp_post:
        ns["__bool__"] = _cmp_bool
    ns["__annotations__"] = ann
    ns["__slots__"] = ()
    return _frozen(type(name, (BinaryOp,), ns))


Add = _defbin("Add", _arith_post, "a + b")
Sub = _defbin("Sub", _arith_post, "a - b")
Mul = _defbin("Mul", _arith_post, "a * b")
Div = _defbin("Div", _arith_post, "a / b (truncating for integers)")
Mod = _defbin("Mod", _arith_post, "truncating remainder (C's %)")
FloorDiv = _defbin("FloorDiv", _arith_post, "floor division")
FloorMod = _defbin("FloorMod", _arith_post, "floor modulo (Python's %)")
Min = _defbin("Min", _arith_post, "min(a, b)")
Max = _defbin("Max", _arith_post, "max(a, b)")
BitAnd = _defbin("BitAnd", _bitwise_post, "a & b")
BitOr = _defbin("BitOr", _bitwise_post, "a | b")
BitXor = _defbin("BitXor", _bitwise_post, "a ^ b")
Shl = _defbin("Shl", _bitwise_post, "a << b")
Shr = _defbin("Shr", _bitwise_post, "a >> b (arithmetic for signed)")
EQ = _defbin("EQ", _cmp_post, "a == b", equality=True)
NE = _defbin("NE", _cmp_post, "a != b", equality=True)
LT = _defbin("LT", _cmp_post, "a < b")
LE = _defbin("LE", _cmp_post, "a <= b")
GT = _defbin("GT", _cmp_post, "a > b")
GE = _defbin("GE", _cmp_post, "a >= b")
And = _defbin("And", _logic_post, "logical and")
Or = _defbin("Or", _logic_post, "logical or")

CmpOp = (EQ, NE, LT, LE, GT, GE)
ARITH_OPS = (Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max, BitAnd, BitOr, BitXor, Shl, Shr)
BINARY_OPS = (*ARITH_OPS, *CmpOp, And, Or)


# ------------------------------------------------------------------- unary and others
@_frozen
class Not(PrimExpr):
    a: PrimExpr = child(NODE)
    ty: Type = attrs.field(default=None)

    def __attrs_post_init__(self):
        if not isinstance(self.a, PrimExpr):
            raise TypeError(f"Not.a must be a PrimExpr, got {type(self.a).__name__}")
        if not (isinstance(self.a.ty, PrimType) and self.a.ty.is_bool):
            raise TypeError(f"Not: operand must be bool, got {self.a.ty}")
        want = self.a.ty
        if self.ty is None:
            object.__setattr__(self, "ty", want)
        elif self.ty != want:
            raise TypeError(f"Not.ty {self.ty} differs from the derived dtype {want}")


@_frozen
class BitNot(PrimExpr):
    a: PrimExpr = child(NODE)
    ty: Type = attrs.field(default=None)

    def __attrs_post_init__(self):
        if not isinstance(self.a, PrimExpr):
            raise TypeError(f"BitNot.a must be a PrimExpr, got {type(self.a).__name__}")
        t = self.a.ty
        if not (isinstance(t, PrimType) and (t.is_int or t.is_bool)):
            raise TypeError(f"BitNot.a must be an integer expression, got dtype {t}")
        want = self.a.ty
        if self.ty is None:
            object.__setattr__(self, "ty", want)
        elif self.ty != want:
            raise TypeError(f"BitNot.ty {self.ty} differs from the derived dtype {want}")


@_frozen
class Select(PrimExpr):
    """Both arms are evaluated; the select op of tirx/ops/math.py is the lazy form."""

    cond: PrimExpr = child(NODE)
    true_value: PrimExpr = child(NODE)
    false_value: PrimExpr = child(NODE)
    ty: Type = attrs.field(default=None)

    @property
    def condition(self) -> PrimExpr:
        """TIRx's field name of ``cond`` (its ``Select.condition``)."""
        return self.cond

    def __attrs_post_init__(self):
        for f in ("cond", "true_value", "false_value"):
            if not isinstance(getattr(self, f), PrimExpr):
                raise TypeError(f"Select.{f} must be a PrimExpr, got {type(getattr(self, f)).__name__}")
        ct = self.cond.ty
        if not (isinstance(ct, PrimType) and ct.is_bool):
            raise TypeError(f"Select.cond must be a bool expression, got dtype {ct}")
        if self.true_value.ty != self.false_value.ty:
            raise TypeError(f"Select: arm dtypes differ: {self.true_value.ty} vs {self.false_value.ty}")
        want = self.true_value.ty
        if self.ty is None:
            object.__setattr__(self, "ty", want)
        elif self.ty != want:
            raise TypeError(f"Select.ty {self.ty} differs from the derived dtype {want}")


@_frozen
class Cast(PrimExpr):
    ty: Type = child(VALUE)
    value: PrimExpr = child(NODE)

    def __attrs_post_init__(self):
        if not isinstance(self.ty, Type):
            object.__setattr__(self, "ty", as_type(self.ty, "Cast.ty"))
        if not isinstance(self.value, PrimExpr):
            raise TypeError(f"Cast.value must be a PrimExpr, got {type(self.value).__name__}")
        vt = self.value.ty
        if isinstance(self.ty, PrimType) and isinstance(vt, PrimType) and 1 != vt.lanes != self.ty.lanes:
            # a vector keeps its lane count (TIRx's check; a scalar cast to a vector type is every
            # lane's value, which tirx's own passes build when they widen an index)
            raise TypeError(f"Cast to {self.ty}: the value has {vt.lanes} lanes, the type {self.ty.lanes}")


@_frozen
class GlobalVar(PrimExpr):
    """A reference to a function of the enclosing Module, by name."""

    name: str = child(VALUE)
    ty: Type = attrs.field(default=handle)

    @property
    def name_hint(self) -> str:
        """TVM's spelling of ``name``."""
        return self.name

    def __attrs_post_init__(self):
        if not isinstance(self.name, str):
            raise TypeError(f"GlobalVar.name must be a str, got {type(self.name).__name__}")
        if not isinstance(self.ty, Type):
            object.__setattr__(self, "ty", as_type(self.ty, "GlobalVar.ty"))


@_frozen
class Call(PrimExpr):
    """A call of an op from the op table (``tirx.ir.op``) or of a module function (GlobalVar).

    ``tensor_args``: the positions where the call was written with a tensor (``scratch``) for a
    pointer argument; the argument is the tensor's pointer (``scratch.data``) either way, and
    the text keeps the spelling (TIRx's IR keeps the tensor there)."""

    op: Any = child(VALUE)
    args: tuple = child(SEQ)
    ty: Type = child(VALUE)
    tensor_args: tuple = child(VALUE, default=())

    def __attrs_post_init__(self):
        Op = _lazy("Op")
        if not isinstance(self.op, (Op, GlobalVar)):
            raise TypeError(f"Call.op must be an Op or GlobalVar, got {type(self.op).__name__}")
        if type(self.args) is not tuple:
            object.__setattr__(self, "args", tuple(self.args))
        for i, a in enumerate(self.args):
            if not isinstance(a, PrimExpr):
                raise TypeError(f"Call({self.op.name}).args[{i}] must be a PrimExpr, got {type(a).__name__}")
        if not isinstance(self.ty, Type):
            object.__setattr__(self, "ty", as_type(self.ty, "Call.ty"))
        if self.tensor_args:
            ta = tuple(self.tensor_args)
            if any(type(i) is not int or not 0 <= i < len(self.args) for i in ta):
                raise TypeError(f"Call.tensor_args must be argument positions, got {ta!r}")
            object.__setattr__(self, "tensor_args", ta)


@_frozen
class BufferLoad(PrimExpr):
    buffer: Any = child(BUF_USE)
    indices: tuple = child(SEQ)
    ty: PrimType = attrs.field(default=None)  # derived from the buffer's dtype (a PrimType)

    def __attrs_post_init__(self):
        Buffer = _lazy("Buffer")
        if not isinstance(self.buffer, Buffer):  # TIRx's tensor Var stands for its Buffer
            object.__setattr__(self, "buffer", _TENSOR_OF(self.buffer, "BufferLoad.buffer"))
        if type(self.indices) is not tuple:
            object.__setattr__(self, "indices", tuple(self.indices))
        lanes = 1
        for i, x in enumerate(self.indices):
            if not isinstance(x, PrimExpr):
                raise TypeError(f"BufferLoad.indices[{i}] must be a PrimExpr, got {type(x).__name__}")
            if isinstance(x.ty, PrimType) and x.ty.lanes > 1:
                lanes = x.ty.lanes
        d = self.buffer.dtype
        want = d if lanes == 1 else d.with_lanes(d.lanes * lanes)
        if self.ty is None:
            object.__setattr__(self, "ty", want)
        elif self.ty != want:
            raise TypeError(f"BufferLoad.ty {self.ty} differs from the derived dtype {want}")

    @property
    def source(self) -> Any:
        """The tensor loaded from, under TIRx's name (its ``TensorLoad.source``): ``cell.source``
        of a ``T.local_scalar`` is the one-element tensor to store into."""
        return self.buffer


@_frozen
class Ramp(PrimExpr):
    base: PrimExpr = child(NODE)
    stride: PrimExpr = child(NODE)
    lanes: int = child(VALUE)
    ty: Type = attrs.field(default=None)

    def __attrs_post_init__(self):
        if not isinstance(self.base, PrimExpr) or not isinstance(self.stride, PrimExpr):
            raise TypeError("Ramp.base and Ramp.stride must be PrimExpr")
        if self.base.ty != self.stride.ty:
            raise TypeError(f"Ramp: base and stride dtypes differ: {self.base.ty} vs {self.stride.ty}")
        if not (isinstance(self.base.ty, PrimType) and self.base.ty.lanes == 1):
            raise TypeError(f"Ramp.base must be a scalar expression, got dtype {self.base.ty}")
        if not isinstance(self.lanes, int) or self.lanes < 2:
            raise TypeError(f"Ramp.lanes must be an int >= 2, got {self.lanes!r}")
        want = self.base.ty.with_lanes(self.lanes)
        if self.ty is None:
            object.__setattr__(self, "ty", want)
        elif self.ty != want:
            raise TypeError(f"Ramp.ty {self.ty} differs from the derived dtype {want}")


@_frozen
class Broadcast(PrimExpr):
    value: PrimExpr = child(NODE)
    lanes: int = child(VALUE)
    ty: Type = attrs.field(default=None)

    def __attrs_post_init__(self):
        if not isinstance(self.value, PrimExpr):
            raise TypeError(f"Broadcast.value must be a PrimExpr, got {type(self.value).__name__}")
        if not isinstance(self.lanes, int) or self.lanes < 2:
            raise TypeError(f"Broadcast.lanes must be an int >= 2, got {self.lanes!r}")
        if not (isinstance(self.value.ty, PrimType) and self.value.ty.lanes == 1):
            raise TypeError(f"Broadcast.value must be a scalar expression, got dtype {self.value.ty}")
        want = self.value.ty.with_lanes(self.lanes)
        if self.ty is None:
            object.__setattr__(self, "ty", want)
        elif self.ty != want:
            raise TypeError(f"Broadcast.ty {self.ty} differs from the derived dtype {want}")


@_frozen
class Let(PrimExpr):
    """Expression-level binding: ``var`` is visible in ``body`` only."""

    var: Var = child(DEF)
    value: PrimExpr = child(NODE)
    body: PrimExpr = child(NODE, body=True)
    ty: Type = attrs.field(default=None)

    def __attrs_post_init__(self):
        if not isinstance(self.var, Var):
            raise TypeError(f"Let.var must be a Var, got {type(self.var).__name__}")
        if not isinstance(self.value, PrimExpr) or not isinstance(self.body, PrimExpr):
            raise TypeError("Let.value and Let.body must be PrimExpr")
        if self.var.ty != self.value.ty:
            raise TypeError(f"Let: var dtype {self.var.ty} differs from value dtype {self.value.ty}")
        want = self.body.ty
        if self.ty is None:
            object.__setattr__(self, "ty", want)
        elif self.ty != want:
            raise TypeError(f"Let.ty {self.ty} differs from the derived dtype {want}")


# ------------------------------------------------------------------- helpers
# Op and Buffer live in modules that import this one: op.py and buffer.py register their
# classes here when imported (tirx/ir/__init__ imports both), so nothing here imports them.
_LAZY: dict[str, type] = {}


def _lazy(name: str) -> type:
    """Op / Buffer, as registered by op.py / buffer.py."""
    c = _LAZY.get(name)
    if c is None:
        raise RuntimeError(f"tirx.ir.{name.lower()} is not imported yet (import tirx.ir)")
    return c


def const(value: Any, dtype: Any = None, span: Any = None) -> PrimExpr:
    """A typed constant. ``dtype`` defaults from the Python type (int32/int64, float32, bool)."""
    if dtype is None:
        if isinstance(value, bool):
            return IntImm(int(value), bool_, span=span)
        if isinstance(value, int):
            return IntImm(value, int32 if -(2**31) <= value < 2**31 else int64, span=span)
        if isinstance(value, float):
            return FloatImm(value, float32, span=span)
        raise TypeError(f"cannot make a constant from {type(value).__name__}")
    t = as_type(dtype)
    if not isinstance(t, PrimType):
        raise TypeError(f"constant dtype must be primitive, got {t}")
    el = t.element
    c: PrimExpr
    if el.is_float:
        if isinstance(value, (bool,)) or not isinstance(value, (int, float)):
            raise TypeError(f"cannot make a {t} constant from {value!r}")
        c = FloatImm(float(value), el, span=span)
    elif el.is_bool:
        if not isinstance(value, (bool, int)) or (isinstance(value, int) and value not in (0, 1)):
            raise TypeError(f"cannot make a bool constant from {value!r}")
        c = IntImm(int(value), el, span=span)
    else:
        if isinstance(value, float):
            if not value.is_integer():
                raise TypeError(f"cannot make a {t} constant from the float {value!r}")
            value = int(value)
        if not isinstance(value, int):
            raise TypeError(f"cannot make a {t} constant from {value!r}")
        c = IntImm(int(value), el, span=span)
    return c if t.lanes == 1 else Broadcast(c, t.lanes, span=span)


def _no_tensor_of(x: Any, what: str) -> Any:
    raise TypeError(f"{what} must be a Buffer, got {type(x).__name__}")


#: ``BufferLoad``'s reading of a non-Buffer source: buffer.py (above this module) puts its
#: ``tensor_buffer`` here (TIRx's tensor Vars, ``ir.TensorLoad(A_var, [i])``)
_TENSOR_OF: Callable[[Any, str], Any] = _no_tensor_of

#: ``PrimExpr.astype``'s cast: a plain ``Cast`` until tirx.ir.fold (above this module) loads and
#: puts its constant-folding ``cast`` here
_FOLD_CAST: Callable[[PrimType, PrimExpr], PrimExpr] = Cast


def convert(x: Any, like: Typed | None = None) -> PrimExpr:
    """Turn a Python value into an expression, taking ``like``'s dtype for literals."""
    if isinstance(x, PrimExpr):
        return x
    tx = type(x)
    if like is not None and (tx is int or tx is float):
        # fast path: a literal next to a scalar int / float expression takes its dtype
        lt = like.ty
        if type(lt) is PrimType and lt.lanes == 1:
            k = lt.kind
            if tx is int and (k == "int" or k == "uint"):
                return IntImm(x, lt)
            if k == "float" or k == "bfloat" or k == "float8" or k == "float6" or k == "float4":
                return FloatImm(float(x), lt)
    if isinstance(x, (bool, int, float)):
        if like is not None and isinstance(like.ty, PrimType):
            lt = like.ty
            if lt.is_bool and not isinstance(x, bool):
                return const(x)
            if lt.is_int and isinstance(x, float) and not x.is_integer():
                raise TypeError(f"cannot combine the float {x!r} with an expression of dtype {lt}")
            if lt.is_int and isinstance(x, bool):
                return const(x)
            return const(x, lt)
        return const(x)
    if isinstance(x, str):
        return StringImm(x)
    conv = getattr(x, "__tirx_expr__", None)
    if conv is not None:
        return conv()
    # numpy scalars
    try:
        import numpy as np

        if isinstance(x, np.generic):
            return const(x.item(), str(x.dtype)) if like is None else convert(x.item(), like)
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"cannot convert {type(x).__name__} to a tirx expression")


#: tirx.ir.fold (it imports this module), for its literal rules: it registers itself here when
#: tirx.ir imports it, as op.py and buffer.py register their classes in _LAZY
_RULES: Any = None


def _literal_rules() -> Any:
    r = _RULES
    if r is None:
        raise RuntimeError("tirx.ir.fold is not imported yet (import tirx.ir)")
    return r


def binop(cls, a: Any, b: Any, span: Any = None) -> PrimExpr:
    """Build ``cls(a, b)``: a Python number beside an expression combines with it as in TIRx
    (``tirx.ir.fold``: its own dtype, then both operands matched to one); two expressions
    of different dtypes raise TypeError (a scalar beside a vector of its dtype broadcasts)."""
    ta, tb = type(a), type(b)
    if ta is int or ta is float or ta is bool or tb is int or tb is float or tb is bool:
        return _literal_rules().combine(cls, a, b, span)
    if not isinstance(a, PrimExpr):
        if not isinstance(b, PrimExpr):
            b = convert(b)
        a = convert(a, b)
    elif not isinstance(b, PrimExpr):
        b = convert(b, a)
    if a.ty != b.ty:
        # broadcast scalar to vector lanes
        at, bt = a.ty, b.ty
        if isinstance(at, PrimType) and isinstance(bt, PrimType) and at.element == bt.element:
            if at.lanes == 1:
                a = Broadcast(a, bt.lanes)
            elif bt.lanes == 1:
                b = Broadcast(b, at.lanes)
        if a.ty != b.ty:
            raise TypeError(f"{cls.__name__}: cannot mix dtypes {at} and {bt}; cast one side explicitly")
    if cls in (Shl, Shr, BitAnd, BitOr, BitXor) and isinstance(a.ty, PrimType) and a.ty.is_float:
        raise TypeError(f"{cls.__name__}: bitwise operation on float dtype {a.ty}")
    return cls(a, b, span=span)


def _pyop(cls: Any, a: Any, b: Any) -> PrimExpr:
    """A Python operator on an expression, as TIRx's: the operands combined (a Python number
    typed, two dtypes matched: ``tirx.ir.fold.combine``) and the node folded (``x * 1`` is
    ``x``, ``T.int32(2) + 3`` is ``5``), as the frontend folds every operator it builds."""
    R = _literal_rules()
    ta = getattr(a, "ty", None)
    if ta is not None and cls not in R.CHECKED and isinstance(b, PrimExpr) and b.ty == ta:
        return R.fold(cls(a, b))  # two IR values of one dtype: nothing to combine
    return R.fold(R.combine(cls, a, b))


def _equality(cls: Any, a: PrimExpr, o: object) -> Any:
    """``a == o`` (``cls`` EQ) / ``a != o`` (NE) in Python: the comparison node.

    Two expressions of one dtype give a node whose truth is identity (``a is o``: lists,
    dicts and ``==`` in passes keep working; a scalar and a vector of its element type
    broadcast); of two other dtypes, NotImplemented (Python then answers by identity: never
    equal). A Python number gives a node with no truth value.
    Anything else (None, a str, a Buffer, ...) is NotImplemented: never equal.
    """
    if isinstance(o, PrimExpr):
        if a.ty == o.ty:
            r = cls(a, o)
        else:
            try:  # a scalar next to a vector of its element type broadcasts, as for ``<``
                r = binop(cls, a, o)
            except TypeError:
                return NotImplemented
        object.__setattr__(r, "_same", (a is o) is (cls is EQ))
        return r
    if isinstance(o, Number) and not isinstance(o, complex):
        if type(a) is IntImm and type(o) in (int, bool):  # TIRx folds an integer constant's ==
            R = _literal_rules()
            r = R.fold(R.combine(cls, a, o))
            if type(r) is IntImm:
                return r
        return binop(cls, a, o)  # not folded: its Python truth is _equality_bool's
    return NotImplemented


def is_const_int(e: Any, value: int | None = None) -> bool:
    return isinstance(e, IntImm) and (value is None or e.value == value)


def float_eq(x: float, y: float) -> bool:
    """Exact float equality where NaN equals NaN (and -0.0 differs from 0.0)."""
    if x != x:
        return y != y
    return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)
