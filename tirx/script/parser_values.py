"""The script values the parser hands around (:class:`Cell`, :class:`MetaVar`,
:class:`LoopSpec`, the region specs, the ``T.let`` / ``T.constexpr`` markers) and the operator
helpers its statement and expression halves share (issue #30: the parser split by node family).
A module below :mod:`.parser`, :mod:`.parser_stmt` and :mod:`.parser_expr`, so the halves import
no cycle; :mod:`.parser` re-exports these names."""

from __future__ import annotations

import ast
import contextlib
import itertools
import operator
import sys
from typing import Any, cast

import numpy as np

from tirx.surface.builder import (
    IRBuilder,
    _Like,  # noqa: F401  (re-exported: one dtype carrier for both front ends)
)
from tirx.surface.cells import Cell  # the mutable scalar, shared with the text builder
from tirx.surface.forms import LET, slice_ramp
from tirx.surface.parser_stack import current_parser

from ..ir import (
    And,
    Buffer,
    IntImm,
    PrimExpr,
    Type,
    Var,
    convert,
)
from ..ir.expr import Cast, Or
from ..ir.fold import check_true_div, combine, fold, fold_cast
from ..ir.operators import OPERATORS
from ..surface.helpers import to_bool_expr as _to_bool_expr

_MISSING = object()
_ZERO = IntImm(0)


def _store_slices(idx: Any) -> Any:
    """Store-target slices ``A[s:e:k] = v`` as the lanes they store to (``forms.slice_ramp``)."""
    if type(idx) is slice:
        return _slice_ramp(idx)
    if type(idx) is tuple and any(type(x) is slice for x in idx):
        return tuple(_slice_ramp(x) if type(x) is slice else x for x in idx)
    return idx


def _slice_ramp(s: slice) -> Any:
    if s.start is None or s.stop is None:
        raise ValueError("a store-target slice needs its start and stop (A[s:e] = v)")
    return slice_ramp(*(_unwrap(x) for x in (s.start, s.stop) + (() if s.step is None else (s.step,))))


def bool_chain(values: Any, is_and: bool, make: Any, short_circuit: Any = None) -> Any:
    """``a and b and ...`` (``or``) over host values and IR, as TIRx builds it.

    Operands come lazily from ``values``. A host operand that decides the chain (``False`` for
    ``and``, ``True`` for ``or``) before any IR operand ends it where ``short_circuit(k)`` says
    so for its position ``k`` (the frontend: a ``T.constexpr(...)`` operand; None: always, as
    the builder API's ``T.and_`` / ``T.or_``). Otherwise every operand is evaluated, as TIRx
    does, and once one is IR, each operand is a term of ``make`` (``And`` / ``Or``, left to
    right), host values as ``T.bool``: ``flag and tx < 5`` with ``flag = False`` is
    ``T.And(T.bool(False), tx < 5)``; a pinned host operand that does not decide is dropped, as
    Python's ``and`` drops it (``T.constexpr(True) and x`` is ``x``). Host operands alone give
    Python's value. Where an operand after a deciding host value fails to evaluate
    (``B is not None and B[i] > 0`` with ``B = None``; TIRx fails there), the chain is the host
    value, as Python's ``and``."""
    terms: list = []
    ir = False
    decided: Any = _MISSING
    last: Any = is_and
    it = iter(values)
    k = -1
    while True:
        k += 1
        try:
            v = next(it)
        except StopIteration:
            break
        except Exception:
            if decided is _MISSING:
                raise
            return decided
        if type(v) is MetaVar:
            v = v.value
        if type(v) is Cell:
            v = v.load()
        host = not isinstance(v, PrimExpr)
        last = v
        if host and not ir and decided is _MISSING:
            pinned = short_circuit is None or short_circuit(k)
            if (is_and and not v) or (not is_and and v):
                if pinned:
                    return v
                decided = v
            elif pinned:  # ``T.constexpr(True) and x`` is ``x``, as Python's ``and``
                continue
        ir = ir or not host
        terms.append(v)
    if not ir:
        return decided if decided is not _MISSING else (terms[-1] if terms else last)
    acc = _bool_term(terms[0])
    for v in terms[1:]:
        acc = make(acc, _bool_term(v))
    return acc


def _bool_term(v: Any) -> PrimExpr:
    """One term of an IR ``and``/``or``: a host bool as ``T.bool`` (``convert``)."""
    return _to_bool_expr(bool(v) if type(v).__name__ == "bool_" else v)


def take_name(default: str) -> str:
    """The name of the assignment target being evaluated (``As = T.alloc_shared(...)``)."""
    p = current_parser()
    if p is None or p.pending_name is None:
        return default
    n, p.pending_name = p.pending_name, None
    return n


# ------------------------------------------------------------------ script values


class MetaVar:
    """``T.meta_var(v)``: assigning it binds the Python name to ``v`` itself (no Bind)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __tirx_expr__(self) -> PrimExpr:
        return convert(self.value)


class LoopSpec:
    """What ``range``/``T.serial``/``T.grid``/... return: loops for a ``for`` statement.

    ``loops`` is a list of (start, extent, kind, step, annotations, thread); ``bind``
    maps the created loop vars to the values of the ``for`` targets (default: the
    vars themselves). Iterating it in plain Python (comprehensions) works when the
    bounds are constants.
    """

    __slots__ = ("_frames", "bind", "loops", "names")

    def __init__(self, loops: list, bind: Any = None, names: Any = None):
        self.loops = loops
        self.bind = bind
        self.names = names
        self._frames: Any = None

    def __enter__(self) -> Any:
        """``with T.serial(0, n) as i:`` in a plain-Python helper a kernel calls (TIRx's builder
        frames): the loops open in the kernel being built, their variables named ``v`` as TIRx
        names them; the loop variable (a tuple for several loops) is what ``as`` binds."""
        from tirx.ir import IntImm, PrimExpr, PrimType

        p = current_parser()
        if p is None or self._frames is not None:
            raise TypeError("`with T.serial(...)`: a loop frame opens only inside a kernel being built")
        stack = contextlib.ExitStack()
        vars_ = []
        try:
            for start, extent, kind, step, ann, thread in self.loops:
                if type(extent) is int:
                    extent = (
                        IntImm(extent, cast(PrimType, start.ty))
                        if isinstance(start, PrimExpr)
                        else IntImm(extent)
                    )
                if type(start) is int:
                    start = IntImm(start, cast(PrimType, extent.ty))
                vars_.append(stack.enter_context(p.b.for_("v", start, extent, kind, step, ann, thread)))
        except BaseException:
            stack.close()
            raise
        self._frames = stack
        if self.bind is not None:
            return self.bind(tuple(vars_))
        return vars_[0] if len(vars_) == 1 else tuple(vars_)

    def __exit__(self, *exc: Any) -> Any:
        stack, self._frames = self._frames, None
        return stack.__exit__(*exc)

    def __iter__(self):
        ranges = []
        for start, extent, _kind, step, _ann, _thr in self.loops:
            vals = []
            for x in (start, extent, 1 if step is None else step):
                if isinstance(x, IntImm):
                    x = x.value
                if not isinstance(x, int):
                    raise TypeError("only loops with constant bounds can be iterated in Python")
                vals.append(x)
            ranges.append(range(vals[0], vals[0] + vals[1], vals[2]))
        if len(ranges) == 1:
            return iter(ranges[0])
        return iter(itertools.product(*ranges))


class _RegionCM:
    """``with T.device_entry(...)`` / ``with T.attr(...)`` run from plain Python (TIRx's builder
    API, tirx/script/protocol): the builder's region frame. A parsed kernel opens it itself."""

    __slots__ = ("_cm",)
    _cm: contextlib.AbstractContextManager[Any] | None

    def __enter__(self) -> None:
        b = IRBuilder.current()
        cm: contextlib.AbstractContextManager[Any]
        if type(self) is DeviceEntrySpec:
            cm = b.device_entry(self.args, self.attrs)
        else:
            assert isinstance(self, AttrSpec)  # the two region specs
            cm = b.attr(self.key, self.value)
        cm.__enter__()
        self._cm = cm

    def __exit__(self, *exc: Any) -> Any:
        cm, self._cm = self._cm, None
        assert cm is not None  # set by __enter__
        return cm.__exit__(*exc)


class DeviceEntrySpec(_RegionCM):
    __slots__ = ("args", "attrs")

    def __init__(self, args: tuple, attrs: Any):
        self.args = args
        self.attrs = attrs


class AttrSpec(_RegionCM):
    __slots__ = ("key", "value")

    def __init__(self, key: str, value: Any):
        self.key = key
        self.value = value


class LetBinding:
    """``x := value`` inside ``T.Let(...)``: the var and its value. Used as a value anywhere
    else (``if (j := i + 1) < n``) it says so, not what the operator did not find."""

    __slots__ = ("value", "var")

    def __init__(self, var: Var, value: PrimExpr):
        self.var = var
        self.value = value

    def _misused(self, *_: Any) -> Any:
        raise TypeError(
            f"the walrus operator ({self.var.name} := ...) binds only inside T.Let({self.var.name} := value, body); "
            f"write {self.var.name} = ... as a statement of its own"
        )


for _m in ("lt", "le", "gt", "ge", "eq", "ne", "add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv",
           "floordiv", "rfloordiv", "mod", "rmod", "and", "rand", "or", "ror", "xor", "rxor", "lshift", "rshift",
           "neg", "invert", "bool", "index", "getitem", "call"):  # fmt: skip
    setattr(LetBinding, f"__{_m}__", LetBinding._misused)


class LetAnn:
    """``x: T.let = e`` and ``x: T.let[T.int32] = e``: immutable bindings."""

    __slots__ = ("ty",)

    def __init__(self, ty: Any = None):
        self.ty = ty

    def __getitem__(self, ty: Any) -> LetAnn:
        return LetAnn(LET.subscript(ty))  # the declared form (tirx.surface.forms.LET), as the text reads it

    def __repr__(self) -> str:
        return "T.let" if self.ty is None else f"T.let[{self.ty}]"


let = LetAnn()


class ArrayAnn:
    """``acc: T.float32[4]`` / ``frag: T.int32[2, 4]`` with no value: TIRx's local tensor of
    that shape (``T.alloc_local``)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype: Any, shape: tuple):
        self.dtype = dtype
        self.shape = shape

    def __repr__(self) -> str:
        return f"T.{self.dtype}[{', '.join(map(str, self.shape))}]"


class _Constexpr:
    """``N: T.constexpr`` (a @T.jit parameter) and ``if T.constexpr(flag):``."""

    def __call__(self, value: Any) -> Any:
        if isinstance(value, MetaVar):
            value = value.value
        if isinstance(value, PrimExpr):
            # ``T.constexpr(A.shape[0] == 8)``: an expression of constants is its value, as in TIRx
            from ..ir.fold import fold_constants

            c = fold_constants(value)
            if c is not None:
                return bool(c.value) if c.ty.is_bool else c.value
        if isinstance(value, (PrimExpr, Cell)):
            raise TypeError("T.constexpr(...) needs a compile-time Python value, got a tirx expression")
        return value

    def __repr__(self) -> str:
        return "T.constexpr"


constexpr = _Constexpr()


class _ReturnSignal(BaseException):
    def __init__(self, value: Any):
        self.value = value


def _is_type_like(x: Any) -> bool:
    return isinstance(x, Type) or hasattr(x, "__tirx_type__")


# Python operators that build IR nodes come from the one operator table (tirx/ir/operators.py);
# the rest only compute on Python values (no IR node: None)
# (node class or None, Python function)
_BIN: dict[Any, tuple[Any, Any]] = {
    o.py_ast: (o.node, o.py_func) for o in OPERATORS if o.kind != "cmp" and not o.unary and o.py_func
}
_BIN[ast.Pow] = (None, operator.pow)
_BIN[ast.MatMult] = (None, operator.matmul)
_CMP: dict[Any, tuple[Any, Any]] = {o.py_ast: (o.node, o.py_func) for o in OPERATORS if o.kind == "cmp"}
_CMP.update(
    {
        ast.Is: (None, operator.is_),
        ast.IsNot: (None, operator.is_not),
        ast.In: (None, lambda a, b: a in b),
        ast.NotIn: (None, lambda a, b: a not in b),
    }
)
_BOOL = {o.py_ast: o.node for o in OPERATORS if o.kind == "logic" and not o.unary}
_IN, _NOT_IN = _CMP[ast.In][1], _CMP[ast.NotIn][1]
_MEMBERSHIP = (_IN, _NOT_IN)
#: The most values ``x in (...)`` on an IR ``x`` compares with (one ``==`` node each).
MAX_IN_VALUES = 256


def lit(x: Any, like: Any, span: Any) -> Any:
    """A Python number next to an IR value becomes a typed constant carrying ``span``."""
    t = type(x)
    if t is int or t is float or t is bool:
        c = convert(x, like)
        if c.span is None:
            object.__setattr__(c, "span", span)  # a fresh node, not shared yet
        return c
    return x


def apply_binop(opcls: Any, pyop: Any, a: Any, b: Any, span: Any = None) -> Any:
    if getattr(a, "__layout_operand__", False) or getattr(b, "__layout_operand__", False):
        # building a layout (tirx/surface/layout.py): ``n @ axis``, ``T.S[...] + n``
        a = a.__tirx_expr__() if isinstance(a, (Cell, MetaVar)) else a
        b = b.__tirx_expr__() if isinstance(b, (Cell, MetaVar)) else b
        return pyop(a, b)
    if isinstance(a, (PrimExpr, Cell, MetaVar)) or isinstance(b, (PrimExpr, Cell, MetaVar)):
        if opcls is None:
            raise TypeError("this operator is not supported on tirx expressions")
        if isinstance(a, (Cell, MetaVar)):
            a = a.__tirx_expr__()
        if isinstance(b, (Cell, MetaVar)):
            b = b.__tirx_expr__()
        if pyop is operator.truediv:
            check_true_div(a, b)  # TIRx's '/' refuses two integers (tirx/ir/fold.py)
        # a Python number combines as in TIRx (tirx/ir/fold.py); TIRx folds as it builds; two
        # expressions of different dtypes match as TIRx matches them
        return fold(combine(opcls, a, b, span))
    return pyop(a, b)


def fold_new(r: Any, keep: tuple) -> Any:
    """Fold, bottom-up, the nodes a ``T`` helper just built around its arguments ``keep``
    (``T.ceildiv(a, b)`` is three nodes); the arguments themselves are left as they are."""
    ids = {id(k) for k in keep}

    def rec(e: Any) -> Any:
        if id(e) in ids or not isinstance(e, PrimExpr):
            return e
        if isinstance(e, Cast):
            v = rec(e.value)
            if v is not e.value:
                e = Cast(e.ty, v, span=e.span)
            return fold_cast(e)
        a, b = getattr(e, "a", None), getattr(e, "b", None)
        if not (isinstance(a, PrimExpr) and isinstance(b, PrimExpr)) or type(e) is And or type(e) is Or:
            return e
        na, nb = rec(a), rec(b)
        if na is not a or nb is not b:
            e = cast(Any, type(e))(na, nb, span=e.span)  # a binary node of the same class
        return fold(e)

    return rec(r)


# the T helpers whose result TIRx folds as it builds (T.Add, T.Select, T.if_then_else,
# T.logical_* never fold); T.select is an op alias of T.if_then_else (tirx/ops/math.py)
_FOLDING_HELPERS = frozenset(
    {"min", "max", "truncdiv", "truncmod", "floordiv", "floormod", "ceildiv", "cast",
     "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right"}
)  # fmt: skip


_HELPERS: dict[int, str] = {}


def _helper_name(func: Any) -> str | None:
    """``name`` when ``func`` is ``T.<name>`` (one of the helpers above), else None. The T
    module imports this one, so it is looked up, not imported."""
    if not _HELPERS:
        t = sys.modules.get("tirx.script.tirx")
        if t is None:
            return None
        for n in _FOLDING_HELPERS:
            f = getattr(t, n, None)
            if f is not None:
                _HELPERS[id(f)] = n
    return _HELPERS.get(id(func))


class EndedBinding:
    """A name an IR frame's block bound again: after the block it means that binding, which
    ended with it (TIRx's program is not well-formed there); reading it is a located error."""

    __slots__ = ("dtype", "line", "name")

    def __init__(self, name: str, line: int, dtype: str = "int32") -> None:
        self.name, self.line, self.dtype = name, line, dtype


def no_tensor_truth(parser: Any, cond: Any, node: Any) -> bool:
    """The Python truth of a condition decided while parsing; a tensor has none (its object
    would be true whatever it holds: TIRx refuses it too)."""
    if isinstance(cond, Buffer):
        raise parser.diag(
            node, f"the tensor {cond.name} is not a condition: test its elements ({cond.name}[i] != 0)"
        )
    return bool(cond)


def host_condition(parser: Any, cond: Any, node: Any, kw: str) -> PrimExpr:
    """A Python value as an ``if`` / ``while`` condition: the IR constant TIRx makes of it
    (a bool or an integer; both branches are then built). Only ``if T.constexpr(c):``
    decides while parsing; other Python values (None, a list, a string) are refused, as in
    TIRx."""
    no_tensor_truth(parser, cond, node)
    if isinstance(cond, (bool, int, np.bool_, np.integer)):
        return convert(bool(cond) if isinstance(cond, (bool, np.bool_)) else int(cond))
    raise parser.diag(
        node,
        f"a {type(cond).__name__} is not a condition of the IR's `{kw}`: write "
        f"`if T.constexpr(...):` to decide it while parsing (the untaken branch is then not built)",
    )


def _unwrap(x: Any) -> Any:
    return x.__tirx_expr__() if isinstance(x, (Cell, MetaVar)) else x
