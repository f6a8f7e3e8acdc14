"""Statement nodes.

Scoping rule: ``Bind``, ``AllocBuffer`` and ``DeclBuffer`` have no body; what they
define is visible to the following statements of the enclosing scope (function body,
loop body, branch, device entry).
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

from .buffer import Buffer, tensor_buffer
from .expr import BUF_USE, DEF, NODE, SEQ, VALUE, FloatImm, IntImm, PrimExpr, StringImm, Var, binop, convert
from .launch_fields import FIELD_KINDS as _LAUNCH_FIELD_KINDS
from .launch_fields import LAUNCH_FIELDS  # noqa: F401 - every launch field, in TIRx's order (re-exported)
from .node import ATTRS, BUF_DEF, EMPTY_ATTRS, PARAMS, Attrs, Node, as_attrs, child
from .node import frozen_node as _frozen  # attrs.define(frozen, slots, eq=False, repr=False)
from .types import PrimType, bool_, float32, int32, int64

__all__ = [
    "AllocBuffer",
    "Assert",
    "AttrStmt",
    "Bind",
    "Break",
    "BufferStore",
    "Continue",
    "DeclBuffer",
    "DeviceEntry",
    "Evaluate",
    "For",
    "ForKind",
    "IfThenElse",
    "RegionStmt",
    "Return",
    "SeqStmt",
    "Stmt",
    "While",
]


class Stmt(Node):
    __slots__ = ()


def _need_expr(node: str, field: str, v: Any) -> PrimExpr:
    if not isinstance(v, PrimExpr):
        raise TypeError(f"{node}.{field} must be a PrimExpr, got {type(v).__name__}")
    return v


def _need_stmt(node: str, field: str, v: Any) -> Stmt:
    if not isinstance(v, Stmt):
        raise TypeError(f"{node}.{field} must be a Stmt, got {type(v).__name__}")
    return v


def _need_int_expr(node: str, field: str, v: Any) -> PrimExpr:
    _need_expr(node, field, v)
    if not (isinstance(v.ty, PrimType) and v.ty.is_int and v.ty.lanes == 1):
        raise TypeError(f"{node}.{field} must be a scalar integer expression, got dtype {v.ty}")
    return v


def _need_cond(node: str, field: str, v: Any) -> PrimExpr:
    """A branch or loop condition: a bool expression, or (as TIRx keeps it) a scalar of any
    other dtype, true when not zero (C's rule: ``if (x)``)."""
    _need_expr(node, field, v)
    t = v.ty
    if not (isinstance(t, PrimType) and (t.is_bool or t.lanes == 1)):
        raise TypeError(f"{node}.{field} must be a bool expression or a scalar, got dtype {t}")
    return v


def _need_bool(node: str, field: str, v: Any) -> PrimExpr:
    _need_expr(node, field, v)
    if not (isinstance(v.ty, PrimType) and v.ty.is_bool):
        raise TypeError(f"{node}.{field} must be a bool expression, got dtype {v.ty}")
    return v


@_frozen
class Bind(Stmt):
    """``var = value``, immutable; visible to the following statements of the scope."""

    var: Var = child(DEF)
    value: PrimExpr = child(NODE)

    def __attrs_post_init__(self):
        if not isinstance(self.var, Var):
            raise TypeError(f"Bind.var must be a Var, got {type(self.var).__name__}")
        _need_expr("Bind", "value", self.value)
        if self.var.ty != self.value.ty:
            raise TypeError(f"Bind.value dtype {self.value.ty} differs from Bind.var dtype {self.var.ty}")


@_frozen
class BufferStore(Stmt):
    buffer: Buffer = child(BUF_USE)
    value: PrimExpr = child(NODE)
    indices: tuple = child(SEQ)

    @property
    def source(self) -> Buffer:
        """The tensor stored into, under TIRx's name (``TensorStore.source``)."""
        return self.buffer

    @property
    def dest(self) -> Buffer:
        """The tensor stored into, under TIRx's field name (``TensorStore.dest``)."""
        return self.buffer

    def __attrs_post_init__(self):
        if isinstance(self.value, (list, tuple)) and isinstance(self.indices, (PrimExpr, int, float)):
            # TIRx's argument order, ``TensorStore(dest, indices, value)``: the same store
            idx, v = self.value, self.indices
            object.__setattr__(self, "indices", idx)
            object.__setattr__(self, "value", convert(v) if isinstance(v, (int, float)) else v)
        if not isinstance(self.buffer, Buffer):
            object.__setattr__(self, "buffer", tensor_buffer(self.buffer, "BufferStore.buffer"))
        _need_expr("BufferStore", "value", self.value)
        if type(self.indices) is not tuple:
            object.__setattr__(self, "indices", tuple(self.indices))
        lanes = 1
        for i, x in enumerate(self.indices):
            if not isinstance(x, PrimExpr):
                raise TypeError(f"BufferStore.indices[{i}] must be a PrimExpr, got {type(x).__name__}")
            if isinstance(x.ty, PrimType) and x.ty.lanes > 1:
                lanes = x.ty.lanes
        d = self.buffer.dtype
        want = d if lanes == 1 else d.with_lanes(d.lanes * lanes)
        if self.value.ty != want:
            raise TypeError(
                f"BufferStore.value dtype {self.value.ty} differs from buffer {self.buffer.name} dtype {want}"
            )


@_frozen
class Evaluate(Stmt):
    value: PrimExpr = child(NODE)

    def __attrs_post_init__(self):
        _need_expr("Evaluate", "value", self.value)


@_frozen
class SeqStmt(Stmt):
    stmts: tuple = child(SEQ)

    @property
    def seq(self) -> tuple:
        """The statements, under TIRx's field name (``SeqStmt.seq``)."""
        return self.stmts

    def __attrs_post_init__(self):
        if isinstance(self.stmts, Stmt):  # TIRx's ``SeqStmt(stmt)``: a sequence of one
            object.__setattr__(self, "stmts", (self.stmts,))
        elif type(self.stmts) is not tuple:
            object.__setattr__(self, "stmts", tuple(self.stmts))
        for i, s in enumerate(self.stmts):
            if not isinstance(s, Stmt):
                raise TypeError(f"SeqStmt.stmts[{i}] must be a Stmt, got {type(s).__name__}")
        if any(type(s) is SeqStmt for s in self.stmts):
            # a sequence in a sequence is spliced in, as TIRx's SeqStmt does (its parts are
            # flat already, being SeqStmts themselves)
            flat: list = []
            for s in self.stmts:
                if type(s) is SeqStmt:
                    flat.extend(s.stmts)
                else:
                    flat.append(s)
            object.__setattr__(self, "stmts", tuple(flat))

    # TIRx's sequence protocol: ``len(seq)``, ``seq[i]`` (and so ``for s in seq``)
    def __len__(self) -> int:
        return len(self.stmts)

    def __getitem__(self, i: Any) -> Any:
        return self.stmts[i]

    def __bool__(self) -> bool:  # a node is true, an empty sequence too (``if body:`` tests presence)
        return True


def stmt_seq(*args: Any) -> SeqStmt:
    """TIRx's ``ir.stmt_seq(a, b, ...)``: a sequence of the statements given, an expression
    (or a Python number) as its ``Evaluate``."""
    return SeqStmt(tuple(a if isinstance(a, Stmt) else Evaluate(convert(a)) for a in args))


def as_else(s: Any) -> Any:
    """An ``else`` branch: :func:`as_body`, an empty list being no branch (TIRx's
    ``If(c, then, [])``)."""
    if isinstance(s, (list, tuple)) and not s:
        return None
    return as_body(s)


def as_body(s: Any) -> Any:
    """A scope body as TIRx holds it (a loop's, a branch's, a region's, a function's): always a
    SeqStmt, a single statement a sequence of one, a list its statements, so that IR built by
    hand, by passes and from text is one structure (TIRx's constructors wrap the same way).
    ``None`` (no else branch) and what is not a statement pass through to the node's check."""
    if type(s) is SeqStmt or s is None:
        return s
    if isinstance(s, Stmt):
        return SeqStmt((s,), span=s.span)
    if isinstance(s, (list, tuple)):
        return SeqStmt(tuple(s))
    return s


UNROLL_FACTOR = "pragma_unroll_factor"
"""``For`` annotation: ``#pragma unroll N`` in the CUDA (``1``: keep the loop rolled, e.g. a
k-loop of wgmma steps, so NVVM and ptxas see its body once). No effect on meaning."""


PRAGMA_UNROLL = "tirx.pragma_unroll"
"""``For`` annotation (TIRx's, from ``T.serial(..., unroll=True | N)``): ``True`` is CUDA's
``#pragma unroll``, an int ``N`` ``#pragma unroll N``; the loop stays a loop."""

DISABLE_UNROLL = "tirx.disable_unroll"
"""``For`` annotation (TIRx's, from ``T.serial(..., unroll=False)``): ``True`` is CUDA's
``#pragma unroll 1``."""


class ForKind(enum.Enum):
    SERIAL = "serial"
    UNROLLED = "unroll"
    VECTORIZED = "vectorized"
    PARALLEL = "parallel"
    THREAD_BINDING = "thread_binding"
    DEFAULT = "serial"  # TIRx's name of a plain loop (``ir.ForKind.DEFAULT``): the same member as SERIAL

    def __int__(self) -> int:
        """TIRx's number of the kind (its ``ForKind`` is an integer enum: DEFAULT 0, PARALLEL 1,
        VECTORIZED 2, UNROLLED 3); a thread-bound loop, which TIRx writes as a region, is 4."""
        return _FOR_KIND_NUMBERS[self.value]

    __index__ = __int__

    @classmethod
    def _missing_(cls, value: object) -> ForKind | None:
        """``ForKind(0)``: TIRx's number of a kind (``ir.ForKind(int(loop.kind))``) gives it."""
        if isinstance(value, int) and not isinstance(value, bool):
            for name, n in _FOR_KIND_NUMBERS.items():
                if n == value:
                    return cls(name)
        return None


_FOR_KIND_NUMBERS = {"serial": 0, "parallel": 1, "vectorized": 2, "unroll": 3, "thread_binding": 4}


@_frozen
class For(Stmt):
    """``var`` runs over start, start+step, ... while < start + extent.

    TIRx's constructor is served too: ``For(var, begin, end, step, kind, body, annotations)``
    (positionally or by those names; ``body`` may be a list) builds the same loop, its
    extent by the rule the front ends read ``range(begin, end)`` with (:func:`range_extent`),
    so a loop built so is structurally the one parsed. ``begin`` / ``end`` read TIRx's fields
    back; a unit ``step`` is ``IntImm(1)`` of the var's dtype (given or not), as in TIRx."""

    var: Var = child(DEF)
    start: PrimExpr = child(NODE)
    extent: PrimExpr = child(NODE)
    kind: ForKind = child(VALUE)
    body: Stmt = child(NODE, body=True, converter=as_body)
    step: Any = child(NODE, default=None)
    thread: str | None = child(VALUE, default=None)
    annotations: Attrs = child(ATTRS, default=EMPTY_ATTRS)

    @property
    def begin(self) -> PrimExpr:
        """TIRx's ``For.begin``: the first value (``start``)."""
        return self.start

    @property
    def end(self) -> PrimExpr:
        """TIRx's ``For.end``: the exclusive bound, as the loop prints (``range(begin, end)``)."""
        return loop_stop(self.start, self.extent)

    @property
    def nonunit_step(self) -> PrimExpr | None:
        """The step, or None for a unit step (the printer leaves it out, codegen writes ``++i``)."""
        st = self.step
        return None if type(st) is IntImm and st.value == 1 else st

    def __attrs_post_init__(self):
        if not isinstance(self.var, Var):
            raise TypeError(f"For.var must be a Var, got {type(self.var).__name__}")
        for f in ("start", "extent"):
            _need_int_expr("For", f, getattr(self, f))
        if self.step is None:  # a unit step is IntImm(1) of the var's dtype, as TIRx builds it
            if not (isinstance(self.var.ty, PrimType) and self.var.ty.is_int):
                raise TypeError(f"For.var must be an integer Var, got {self.var.ty}")
            object.__setattr__(self, "step", IntImm(1, self.var.ty))
        else:
            _need_int_expr("For", "step", self.step)
            if self.step.ty != self.var.ty:
                raise TypeError(f"For.step dtype {self.step.ty} differs from For.var dtype {self.var.ty}")
        if not isinstance(self.kind, ForKind):
            try:
                object.__setattr__(self, "kind", ForKind(self.kind))
            except ValueError:
                raise TypeError(f"For.kind must be a ForKind, got {self.kind!r}") from None
        if self.thread is not None and not isinstance(self.thread, str):
            raise TypeError(f"For.thread must be a str or None, got {type(self.thread).__name__}")
        _need_stmt("For", "body", self.body)
        if self.var.ty != self.start.ty or self.var.ty != self.extent.ty:
            raise TypeError(
                f"For: var {self.var.ty}, start {self.start.ty} and extent {self.extent.ty} dtypes must agree"
            )
        if not isinstance(self.annotations, Attrs):
            object.__setattr__(self, "annotations", as_attrs(self.annotations, "For.annotations"))


_FOR_TIRX_ARGS = ("var", "begin", "end", "step", "kind", "body", "annotations")
_for_fields_init = For.__init__


def _for_init(self: For, *args: Any, **kw: Any) -> None:
    """``For``'s constructor: tirx's fields, or TIRx's (``_tirx_for_args``) when the call names
    ``begin`` / ``end`` or gives a step where tirx's order has the kind."""
    if "begin" in kw or "end" in kw or (len(args) > 3 and not isinstance(args[3], (ForKind, str))):
        args, kw = _tirx_for_args(args, kw)
    _for_fields_init(self, *args, **kw)


def _tirx_args(node: str, order: tuple, required: tuple, args: tuple, kw: dict) -> tuple[dict, Any]:
    """A call in TIRx's argument ``order`` (positional, then by name) as a dict by name, and
    its span (``span=``; TIRx's ``loc=`` is dropped: tirx's location is the span); too many,
    unknown, repeated or missing (``required``) arguments are TypeErrors naming them."""
    if len(args) > len(order):
        raise TypeError(f"{node} takes at most {len(order)} arguments in TIRx's order, got {len(args)}")
    got = dict(zip(order, args))
    span = kw.pop("span", None)
    kw.pop("loc", None)
    for k, v in kw.items():
        if k not in order:
            raise TypeError(f"{node}: unexpected argument {k!r} (TIRx's order: {', '.join(order)})")
        if k in got:
            raise TypeError(f"{node}: argument {k!r} given twice")
        got[k] = v
    for k in required:
        if k not in got:
            raise TypeError(f"{node}: missing argument {k!r}")
    return got, span


def _tirx_for_args(args: tuple, kw: dict) -> tuple[tuple, dict]:
    """TIRx's ``For(var, begin, end, step, kind, body, annotations)`` as tirx's fields."""
    got, span = _tirx_args("For", _FOR_TIRX_ARGS, ("var", "begin", "end", "kind", "body"), args, kw)
    var = got["var"]
    if not isinstance(var, Var):
        raise TypeError(f"For.var must be a Var, got {type(var).__name__}")

    def expr(name: str) -> Any:
        v = got.get(name)
        if isinstance(v, int) and not isinstance(v, bool):
            v = convert(v, var)
        return v if v is None else _need_int_expr("For", name, v)

    kind = got["kind"]
    if isinstance(kind, int) and not isinstance(kind, ForKind):
        if isinstance(kind, bool) or not 0 <= kind <= 3:
            raise ValueError(f"For.kind: TIRx's loop kinds are 0 to 3, got {kind}")
        kind = ForKind(kind)
    start, extent = range_extent(expr("begin"), expr("end"))
    ann = got.get("annotations")
    fields = {"step": expr("step"), "annotations": EMPTY_ATTRS if ann is None else ann, "span": span}
    return (var, start, extent, kind, got["body"]), fields


setattr(For, "__init__", _for_init)  # noqa: B010  (the attrs class's own __init__ stays inside)


#: ``tirx.ir.structural.structural_equal``, for the loop-bound rule below: structural.py (above
#: this module) puts it here when it loads (``tirx.ir`` imports it), as fold.py registers with expr
STRUCTURAL_EQUAL: list = []


def _structural_equal() -> Any:
    if not STRUCTURAL_EQUAL:
        raise RuntimeError("tirx.ir.structural is not imported yet (import tirx.ir)")
    return STRUCTURAL_EQUAL[0]


def range_extent(start: PrimExpr, stop: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
    """``(start, extent)`` of a loop from ``start`` to ``stop``, the rule :func:`loop_stop` inverts
    (the front ends' reading of ``range(start, stop)``, ``tirx.surface.forms``).

    A literal-0 start gives extent = stop; two constants of one dtype give the folded
    difference; a stop ``start + e`` (``start`` structurally) gives ``e``; anything else
    gives ``stop - start`` (a Sub node, not simplified).
    """
    from .expr import Add, Sub

    structural_equal = _structural_equal()
    if type(start) is IntImm and start.value == 0:
        return (start if start.ty == stop.ty else IntImm(0, stop.ty)), stop  # type: ignore[arg-type]
    if type(start) is IntImm and type(stop) is IntImm and start.ty == stop.ty:
        return start, IntImm(stop.value - start.value, stop.ty)
    if type(stop) is Add and structural_equal(stop.a, start):
        return start, stop.b
    return start, binop(Sub, stop, start)


def loop_stop(start: PrimExpr, extent: PrimExpr) -> PrimExpr:
    """The exclusive bound of a loop (what it prints in ``range(start, stop)``), from which
    :func:`range_extent` rebuilds exactly ``extent``: the extent itself after a literal-0 start,
    the folded sum of two constants, ``x`` for an extent ``x - start`` when the rule would not
    read ``x`` otherwise, else ``start + extent`` (an Add node). Nothing is simplified."""
    from .expr import Add, Sub

    structural_equal = _structural_equal()
    if type(start) is IntImm and start.value == 0:
        return extent
    if type(start) is IntImm and type(extent) is IntImm and start.ty == extent.ty:
        try:
            return IntImm(start.value + extent.value, extent.ty)
        except (TypeError, ValueError):  # the sum overflows the dtype: start + extent
            pass
    if type(extent) is Sub and (extent.b is start or structural_equal(extent.b, start)):
        x = extent.a
        if not (type(x) is IntImm and type(start) is IntImm and x.ty == start.ty) and not (
            type(x) is Add and (x.a is start or structural_equal(x.a, start))
        ):
            return x
    return Add(start, extent)


@_frozen
class While(Stmt):
    cond: PrimExpr = child(NODE)
    body: Stmt = child(NODE, body=True, converter=as_body)

    @property
    def condition(self) -> PrimExpr:
        """TIRx's field name of ``cond``."""
        return self.cond

    def __attrs_post_init__(self):
        _need_cond("While", "cond", self.cond)
        _need_stmt("While", "body", self.body)


@_frozen
class IfThenElse(Stmt):
    cond: PrimExpr = child(NODE)
    then_case: Stmt = child(NODE, body=True, converter=as_body)
    else_case: Stmt | None = child(NODE, body=True, default=None, converter=as_else)

    @property
    def condition(self) -> PrimExpr:
        """TIRx's field name of ``cond`` (its ``If.condition``)."""
        return self.cond

    def __attrs_post_init__(self):
        _need_cond("IfThenElse", "cond", self.cond)
        _need_stmt("IfThenElse", "then_case", self.then_case)
        if self.else_case is not None:
            _need_stmt("IfThenElse", "else_case", self.else_case)


@_frozen
class Break(Stmt):
    pass


@_frozen
class Continue(Stmt):
    pass


@_frozen
class Return(Stmt):
    value: PrimExpr | None = child(NODE, default=None)

    def __attrs_post_init__(self):
        if self.value is not None:
            _need_expr("Return", "value", self.value)


@_frozen
class Assert(Stmt):
    """``assert cond, (kind, [message parts])``.

    TIRx's ``AssertStmt(condition, error_kind, message_parts)`` builds the same node (its
    ``StringImm`` kind and parts are kept as their strings) and reads back under those names."""

    cond: PrimExpr = child(NODE)
    kind: str = child(VALUE, default="RuntimeError")
    message: tuple = child(VALUE, default=())

    @property
    def condition(self) -> PrimExpr:
        return self.cond

    @property
    def error_kind(self) -> Any:
        """TIRx's ``AssertStmt.error_kind``: the kind as a ``StringImm``."""
        return StringImm(self.kind)

    @property
    def message_parts(self) -> tuple:
        """TIRx's ``AssertStmt.message_parts``: the parts as ``StringImm``s."""
        return tuple(StringImm(m) for m in self.message)

    def __attrs_post_init__(self):
        if isinstance(self.kind, StringImm):
            object.__setattr__(self, "kind", self.kind.value)
        if self.message is None:
            object.__setattr__(self, "message", ())
        elif isinstance(self.message, (list, tuple)) and any(isinstance(m, StringImm) for m in self.message):
            object.__setattr__(
                self, "message", tuple(m.value if isinstance(m, StringImm) else m for m in self.message)
            )
        _need_bool("Assert", "cond", self.cond)
        if not isinstance(self.kind, str):
            raise TypeError(f"Assert.kind must be a str, got {type(self.kind).__name__}")
        if isinstance(self.message, str):
            raise TypeError("Assert.message must be a sequence of str, got a single str")
        if type(self.message) is not tuple:
            object.__setattr__(self, "message", tuple(self.message))
        if not all(isinstance(m, str) for m in self.message):
            raise TypeError("Assert.message must be a sequence of str")


def _typed(v: Any) -> Any:
    """An attribute value as an IR constant where it is a Python bool, int or float."""
    if type(v) is bool:
        return IntImm(int(v), bool_)
    if type(v) is int:
        return IntImm(v, int32 if -(2**31) <= v < 2**31 else int64)
    if type(v) is float:
        return FloatImm(v, float32)
    return v


@_frozen
class AllocBuffer(Stmt):
    """Allocate ``buffer`` in its scope; visible to the following statements."""

    buffer: Buffer = child(BUF_DEF)
    annotations: Attrs = child(ATTRS, after_defs=True, default=EMPTY_ATTRS)  # may name the buffer

    def __attrs_post_init__(self):
        if not isinstance(self.buffer, Buffer):
            raise TypeError(f"AllocBuffer.buffer must be a Buffer, got {type(self.buffer).__name__}")
        if not isinstance(self.annotations, Attrs):
            object.__setattr__(self, "annotations", as_attrs(self.annotations))
        a = self.annotations
        if a and any(type(v) in (bool, int, float) for v in a.values()):
            # as TIRx keeps them: a bool, int or float attribute is a typed constant (3 is T.int32(3))
            object.__setattr__(self, "annotations", as_attrs({k: _typed(v) for k, v in a.items()}))


@_frozen
class DeclBuffer(Stmt):
    """Declare ``buffer`` over an existing pointer (``buffer.data``).

    ``declared_scope`` is the scope the declaration's ``T.Tensor`` names, which TIRx keeps and
    prints (a view, ``A.view(...)``, names its storage's; ``T.Tensor(...)`` without ``scope=``
    names ``"global"``): metadata only, the storage is always the pointer's (``buffer.scope``).

    ``data_of`` is the tensor whose pointer the declaration names, when the script named it
    so (``T.decl_tensor(v.data, ...)``, ``v.view(...)``): every view of a storage shares its
    pointer variable, and TIRx prints the view a view was taken of (``v.data``, not the
    storage's ``A.data``). Provenance like a name: not structural, and a printer that finds
    it out of scope (a pass replaced that tensor) names the pointer as usual."""

    buffer: Buffer = child(BUF_DEF)
    declared_scope: str = child(VALUE, default="global")
    data_of: Any = attrs.field(default=None, kw_only=True)

    def __attrs_post_init__(self):
        if not isinstance(self.buffer, Buffer):
            raise TypeError(f"DeclBuffer.buffer must be a Buffer, got {type(self.buffer).__name__}")
        if not isinstance(self.declared_scope, str):
            raise TypeError(
                f"DeclBuffer.declared_scope must be a str, got {type(self.declared_scope).__name__}"
            )


LAUNCH_FIELDS_KEY = "cuda.launch_fields"


@_frozen
class DeviceEntry(Stmt):
    """The kernel launch region: ``args`` are the launch values named by ``attrs['cuda.launch_fields']``."""

    args: tuple = child(SEQ)
    attrs: Attrs = child(ATTRS)
    body: Stmt = child(NODE, body=True, converter=as_body)

    def __attrs_post_init__(self):
        if type(self.args) is not tuple:
            object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "args", tuple(convert(a) if isinstance(a, int) else a for a in self.args))
        if not isinstance(self.attrs, Attrs):
            object.__setattr__(self, "attrs", as_attrs(self.attrs, "DeviceEntry.attrs"))
        fields = self.attrs.get(LAUNCH_FIELDS_KEY)
        if fields is None:
            raise TypeError("DeviceEntry.attrs must name the launch fields under 'cuda.launch_fields'")
        if len(fields) != len(self.args):
            raise TypeError(f"DeviceEntry: {len(self.args)} launch values for {len(fields)} launch fields")
        for i, (f, a) in enumerate(zip(fields, self.args)):
            kind = _LAUNCH_FIELD_KINDS.get(f)
            if kind is None:
                raise TypeError(f"DeviceEntry: unknown launch field {f!r}")
            if kind == "int":
                _need_int_expr("DeviceEntry", f"args[{i}] ({f})", a)
            elif kind == "float":
                _need_expr("DeviceEntry", f"args[{i}] ({f})", a)
                if not (isinstance(a.ty, PrimType) and a.ty.is_float and a.ty.lanes == 1):
                    raise TypeError(
                        f"DeviceEntry.args[{i}] ({f}) must be a scalar float expression, got {a.ty}"
                    )
            else:  # a host handle: a pointer-typed expression
                _need_expr("DeviceEntry", f"args[{i}] ({f})", a)
                if isinstance(a.ty, PrimType):
                    raise TypeError(
                        f"DeviceEntry.args[{i}] ({f}) must be a pointer (handle), got dtype {a.ty}"
                    )
        _need_stmt("DeviceEntry", "body", self.body)

    def launch_value(self, field: str, default: int | None = 1) -> PrimExpr | None:
        fields = self.attrs[LAUNCH_FIELDS_KEY]
        if field in fields:
            return self.args[fields.index(field)]
        return None if default is None else convert(default)

    @property
    def grid(self) -> tuple:
        return tuple(self.launch_value(f"grid.{a}") for a in "xyz")

    @property
    def block(self) -> tuple:
        return tuple(self.launch_value(f"block.{a}") for a in "xyz")

    @property
    def cluster(self) -> tuple | None:
        if "cluster.x" not in self.attrs[LAUNCH_FIELDS_KEY]:
            return None
        return tuple(self.launch_value(f"cluster.{a}") for a in "xyz")

    @property
    def dynamic_smem_bytes(self) -> PrimExpr:
        v = self.launch_value("dynamic_smem_bytes", 0)
        assert v is not None  # only a None default gives None
        return v


@_frozen
class AttrStmt(Stmt):
    """``with T.attr(key, value):`` — an annotated region."""

    key: str = child(VALUE)
    value: PrimExpr = child(NODE)
    body: Stmt = child(NODE, body=True, converter=as_body)

    def __attrs_post_init__(self):
        if not isinstance(self.key, str):
            raise TypeError(f"AttrStmt.key must be a str, got {type(self.key).__name__}")
        _need_expr("AttrStmt", "value", self.value)
        _need_stmt("AttrStmt", "body", self.body)


class RegionOpName(str):
    """``RegionStmt.op``: TIRx's op name of the region (``"tirx.launch_thread"``); ``.name`` is
    the name itself, as TIRx's ``Op`` has it (tirx's op table has no region ops)."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return str(self)


#: TIRx's region statements: ``with T.<kind>(args) [as var]:``. Each kind: its argument kinds
#: (``s`` a string, ``x`` an integer expression) and whether it binds a variable (TIRx's
#: ``launch_thread(tag, extent)`` binds the thread index, typed like the extent)
REGION_KINDS: dict[str, tuple[str, bool]] = {
    "launch_thread": ("sx", True),
    "compute_scope": ("s", False),
    "device_context": ("xx", False),
    "parallel_launch": ("", False),
    "device_scope": ("", False),
}


@_frozen
class RegionStmt(Stmt):
    """``with T.launch_thread("threadIdx.x", n) as v:``, ``with T.compute_scope("name"):``,
    ``with T.device_context(type, id):``, ``with T.parallel_launch():`` — TIRx's regions.

    ``args`` are expressions (a string argument is a ``StringImm``); ``params`` the variables
    the body sees (``launch_thread``'s thread index).

    TIRx's ``RegionStmt(op, args, body_params, attrs, body, result_vars=None)`` builds the same
    node (``op`` an op name, ``"tirx.launch_thread"``, or an object with that ``.name``; no attrs
    or result vars: tirx's regions have none) and reads back under those names."""

    kind: str = child(VALUE)
    args: tuple = child(SEQ)
    params: tuple = child(PARAMS)
    body: Stmt = child(NODE, body=True, converter=as_body)

    @property
    def op(self) -> RegionOpName:
        """TIRx's ``RegionStmt.op``: the region's op name (``RegionOpName``)."""
        return RegionOpName("tirx." + self.kind)

    @property
    def body_params(self) -> tuple:
        """TIRx's name of ``params``."""
        return self.params

    @property
    def attrs(self) -> Attrs:
        """TIRx's ``RegionStmt.attrs``: tirx's regions have none."""
        return EMPTY_ATTRS

    @property
    def result_vars(self) -> tuple:
        """TIRx's ``RegionStmt.result_vars``: tirx's regions bind none."""
        return ()

    def __attrs_post_init__(self):
        spec = REGION_KINDS.get(self.kind) if isinstance(self.kind, str) else None
        if spec is None:
            raise ValueError(f"RegionStmt.kind must be one of {', '.join(REGION_KINDS)}, got {self.kind!r}")
        kinds, binds = spec
        for f in ("args", "params"):
            if type(getattr(self, f)) is not tuple:
                object.__setattr__(self, f, tuple(getattr(self, f)))
        if len(self.args) != len(kinds):
            raise TypeError(f"RegionStmt {self.kind} takes {len(kinds)} argument(s), got {len(self.args)}")
        for i, (k, a) in enumerate(zip(kinds, self.args)):
            if k == "s":
                if type(a).__name__ != "StringImm":
                    raise TypeError(f"RegionStmt {self.kind}: args[{i}] must be a string (StringImm)")
            else:
                _need_int_expr(f"RegionStmt {self.kind}", f"args[{i}]", a)
        if len(self.params) != int(binds):
            raise TypeError(f"RegionStmt {self.kind} binds {int(binds)} variable(s), got {len(self.params)}")
        for i, v in enumerate(self.params):
            if not isinstance(v, Var):
                raise TypeError(f"RegionStmt.params[{i}] must be a Var, got {type(v).__name__}")
        if binds and self.params[0].ty != self.args[1].ty:
            raise TypeError(
                f"RegionStmt launch_thread: the thread var has dtype {self.params[0].ty}, "
                f"the extent {self.args[1].ty}"
            )
        _need_stmt("RegionStmt", "body", self.body)


_REGION_TIRX_ARGS = ("op", "args", "body_params", "attrs", "body", "result_vars")
_region_fields_init = RegionStmt.__init__


def _region_init(self: RegionStmt, *args: Any, **kw: Any) -> None:
    """``RegionStmt``'s constructor: tirx's fields, or TIRx's ``RegionStmt(op, args, body_params,
    attrs, body, result_vars=None)`` (five or more arguments, or those names)."""
    if len(args) > 4 or "op" in kw or "body_params" in kw:
        args, kw = _tirx_region_args(args, kw)
    _region_fields_init(self, *args, **kw)


def _tirx_region_args(args: tuple, kw: dict) -> tuple[tuple, dict]:
    got, span = _tirx_args("RegionStmt", _REGION_TIRX_ARGS, ("op", "args", "body"), args, kw)
    op = got["op"]
    name = op if isinstance(op, str) else getattr(op, "name", None)
    if not isinstance(name, str):
        raise TypeError(f"RegionStmt.op must be an op name or an Op, got {type(op).__name__}")
    kind = name[len("tirx.") :] if name.startswith("tirx.") else name
    if got.get("attrs"):
        raise ValueError(f"RegionStmt.attrs: tirx's regions have no attributes, got {dict(got['attrs'])!r}")
    if got.get("result_vars"):
        raise ValueError("RegionStmt.result_vars: tirx's regions bind no result variables")
    rargs = tuple(
        StringImm(a) if isinstance(a, str) else convert(a) if isinstance(a, int) else a for a in got["args"]
    )
    body = got["body"]
    if isinstance(body, (list, tuple)):
        body = seq(body)
    return (kind, rargs, tuple(got.get("body_params") or ()), body), {"span": span}


setattr(RegionStmt, "__init__", _region_init)  # noqa: B010  (the attrs class's own __init__ stays inside)


def flat_stmts(s: Stmt | None) -> tuple | list:
    """The statements of a body with nested SeqStmts spliced in, iteratively (nesting
    depth is data); ``None`` is no statement, any other statement a sequence of one. A
    SeqStmt is not a scope, so this is what a body means (and how it prints)."""
    if s is None:
        return ()
    if type(s) is not SeqStmt:
        return (s,)
    st = s.stmts
    if not any(type(c) is SeqStmt for c in st):
        return st
    out: list = []
    stack = [iter(st)]
    while stack:
        for c in stack[-1]:
            if type(c) is SeqStmt:
                stack.append(iter(c.stmts))
                break
            out.append(c)
        else:
            stack.pop()
    return out


def seq(stmts: list | tuple) -> Stmt:
    """A SeqStmt, flattened, or the single statement when there is one."""
    flat: list = []
    for s in stmts:
        if isinstance(s, SeqStmt):
            flat.extend(s.stmts)
        elif s is not None:
            flat.append(s)
    if len(flat) == 1:
        return flat[0]
    return SeqStmt(tuple(flat))
