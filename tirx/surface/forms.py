"""Surface forms: one declaration per ``T.<Form>(...)`` of the language.

A special form is not an op: it builds its own node (or a piece of one), not a ``Call``. The
expression forms (``T.Ramp``, ``T.Broadcast``, ``T.Select``, ``T.Cast``, ``T.Let``,
``T.Call``), the loop headers (``T.serial`` / ``T.unroll`` / ``T.vectorized`` /
``T.parallel`` / ``T.thread_binding`` / ``range``), the types (``T.Tensor``, ``T.Ptr``), the
binding statements (``X = T.alloc_tensor(...)``, ``X = T.decl_tensor(...)``), the regions
(``with T.device_entry(...)``, ``with T.attr(...)``) and the statements (``T.evaluate``,
``T.func_attr``), the subscript ``T.let[ty]`` and ``T.grid`` are each one :class:`FormSpec`
here (its ``role`` says which), read by three consumers, the way an assembly format drives
both parse and print; the conveniences ``T.alloc_shared`` / ``T.alloc_local`` /
``T.alloc_buffer`` / ``T.decl_buffer`` / ``T.cast`` are derived forms (:func:`derive`): their
own parameters, built (and printed) as a base form with fixed values:

* the Python frontend (``tirx/script/tirx.py``): ``T.Ramp`` is :meth:`FormSpec.function`;
* the text loader (``grammar/_transform.py``): a call ``T.Ramp(...)`` binds and builds
  through :meth:`FormSpec.call`, errors located at the call;
* the printer (``printer/_printer.py``): a node whose class has a spec prints through
  :meth:`FormSpec.unparse` (script name, then the arguments in parameter order; keyword
  parameters equal to their default are left out).

Argument binding (positional / keyword, defaults), its error messages ("takes N positional
argument(s)", "unexpected keyword argument"), the kind checks and conversions of each
argument, and the build are written once, here, so both front ends accept the same calls
and reject the bad ones with the same message.

This module sits between ``tirx.ir`` and its consumers: it imports only ``tirx.ir``, so the
printer and the grammar use it without importing the Python frontend, and nothing here
imports upward (``tests/test_layering.py``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from operator import attrgetter
from typing import Any, cast

from tirx import target_spec as _target_spec
from tirx.ir import host_types as _host_types
from tirx.ir.buffer import DEFAULT_ALIGN
from tirx.ir.dtype_imm import DataTypeImm
from tirx.ir.expr import (
    Add,
    Broadcast,
    Call,
    Cast,
    GlobalVar,
    IntImm,
    Let,
    PrimExpr,
    Ramp,
    Select,
    StringImm,
    Var,
    convert,
)
from tirx.ir.fold import match
from tirx.ir.function import Function, Module
from tirx.ir.layout import Layout
from tirx.ir.node import Attrs
from tirx.ir.shuffle import Shuffle
from tirx.ir.stmt import (
    DISABLE_UNROLL,
    LAUNCH_FIELDS,
    LAUNCH_FIELDS_KEY,
    PRAGMA_UNROLL,
    AllocBuffer,
    AttrStmt,
    DeclBuffer,
    DeviceEntry,
    Evaluate,
    For,
    ForKind,
    loop_stop,
    range_extent,
)
from tirx.ir.structural import structural_equal
from tirx.ir.types import (
    MEMORY_SCOPES,
    PointerType,
    PrimType,
    TensorType,
    Type,
    as_type,
    int32,
    parse_dtype,
    tensormap_ptr,
    void,
)

__all__ = [
    "BINDINGS",
    "DERIVED",
    "FORMS",
    "GRID",
    "LET",
    "LOOPS",
    "RANGE",
    "TYPES",
    "FormError",
    "FormSpec",
    "Param",
    "Pending",
    "by_name",
    "by_node",
    "derive",
    "describe",
    "loop_head",
    "loop_stop",
    "range_extent",
]  # fmt: skip

REQUIRED: Any = type("_Required", (), {"__repr__": lambda self: "REQUIRED"})()


class FormError(TypeError):
    """A call of a form that does not fit its declaration (message says which argument)."""


# ------------------------------------------------------------------ argument kinds
_DESC = {
    int: "an int literal",
    float: "a float literal",
    bool: "a bool literal",
    str: "a string literal",
    list: "a list",
    tuple: "a tuple",
    dict: "a dict",
    type(None): "None",
}


def describe(v: Any) -> str:
    """What a value is, for messages (the same words in both front ends)."""
    if isinstance(v, PrimExpr):
        return f"an expression of dtype {v.ty}"
    if isinstance(v, Type):
        return f"the type {v}"
    return _DESC.get(type(v), f"a {type(v).__name__}")


def _expr(fname: str, p: Param, v: Any) -> Any:
    """An expression operand: a PrimExpr, or a Python number kept as is (the build gives it the
    dtype of its neighbour, as in ``T.Ramp(0, n, 4)``)."""
    t = type(v)
    if t is int or t is float or t is bool or isinstance(v, PrimExpr):
        return v
    if hasattr(v, "dtype") and hasattr(v, "item") and not hasattr(v, "__len__"):  # a numpy scalar
        return v.item()
    raise FormError(f"{fname}: {p.name} must be an expression, got {describe(v)}")


def _int(fname: str, p: Param, v: Any) -> int:
    if type(v) is int:
        return v
    if type(v) is IntImm:
        return v.value
    raise FormError(f"{fname}: {p.name} must be an int literal, got {describe(v)}")


def _dtype(fname: str, p: Param, v: Any) -> Type:
    if isinstance(v, Type):
        return v
    if type(v) is str:
        try:
            return parse_dtype(v)
        except ValueError:
            raise FormError(f"{fname}: unknown dtype {v!r}") from None
    if hasattr(v, "__tirx_type__") or (not isinstance(v, (int, float, PrimExpr)) and v is not None):
        try:
            return as_type(v)
        except (TypeError, ValueError):
            pass
    raise FormError(f"{fname}: {p.name} must be a dtype, got {describe(v)}")


def _b_dtype_imm(value: Type, span: Any = None) -> DataTypeImm:
    if not isinstance(value, PrimType):
        raise FormError(f"T.dtype: value must be a primitive dtype, got {value}")
    return DataTypeImm(value, span=span)


def _types(fname: str, p: Param, v: Any) -> tuple:
    if type(v) not in (list, tuple):
        raise FormError(f"{fname}: {p.name} must be a list of types, got {describe(v)}")
    return tuple(_dtype(fname, p, x) for x in v)


def _binding(fname: str, p: Param, v: Any) -> tuple:
    var, value = getattr(v, "var", None), getattr(v, "value", None)
    if type(var) is not Var or not isinstance(value, PrimExpr):
        raise FormError(
            f"{fname}'s first argument must be an assignment expression: {fname}(x := value, body)"
        )
    return var, value


def _funcref(fname: str, p: Param, v: Any) -> tuple:
    """A module function: ``(GlobalVar, its return type or None)``; or a declared op (TIRx's
    ``T.Call(T.Op.get("prim.exp"), [x], ty=...)``): ``(Op, None)``, built as the op's call."""
    from tirx.ir.op import Op

    if isinstance(v, (GlobalVar, Op)):
        return v, None
    if type(v) is str:
        return GlobalVar(v), None
    if hasattr(v, "gvar") and hasattr(v, "func"):  # Module.f of a built Module
        return v.gvar, v.func.ret_ty
    name = getattr(v, "name", None)
    if type(name) is str and hasattr(v, "ret"):  # Module.f while the module is parsed / loaded
        return GlobalVar(name), v.ret
    raise FormError(f"{fname}: {p.name} must be a module function (Module.f), got {describe(v)}")


def _exprs(fname: str, p: Param, v: Any) -> tuple:
    if type(v) not in (list, tuple):
        raise FormError(f"{fname}: {p.name} must be a list of expressions, got {describe(v)}")
    out = []
    for x in v:
        tx = type(x)
        if not (tx is int or tx is float or tx is bool or tx is str or isinstance(x, PrimExpr)):
            raise FormError(
                f"{fname}: {p.name} must be a list of expressions, got an element that is {describe(x)}"
            )
        out.append(convert(x))
    return tuple(out)


def _str(fname: str, p: Param, v: Any) -> str:
    if type(v) is str:
        return v
    if isinstance(v, str):  # a registered name such as T.MemoryScope("shared"): its plain text
        return str.__str__(v)
    if type(v) is StringImm:  # TIRx's IR string (tvm.ir.StringImm("threadIdx.x")) where a str goes
        return v.value
    raise FormError(f"{fname}: {p.name} must be a string, got {describe(v)}")


def _dict(fname: str, p: Param, v: Any) -> Any:
    if isinstance(v, (dict, Attrs)):
        bad = [k for k in v if type(k) is not str]
        if bad:  # the text loader also reads {var: value} (T.Let's where=): not attributes
            raise FormError(f"{fname}: {p.name} keys must be strings, got {describe(bad[0])}")
        return v
    raise FormError(f"{fname}: {p.name} must be a dict, got {describe(v)}")


def _dim(fname: str, what: str, x: Any) -> Any:
    """One dimension: a Python int (kept: the builder makes the constant) or a scalar integer
    expression."""
    t = type(x)
    if t is int:
        return x
    if isinstance(x, PrimExpr):
        xt = x.ty
        if isinstance(xt, PrimType) and xt.is_int and xt.lanes == 1:
            return x
        raise FormError(f"{fname}: {what} entries must be integers, got dtype {xt}")
    if t is not bool and hasattr(x, "dtype") and hasattr(x, "item") and not hasattr(x, "__len__"):
        v = x.item()  # a numpy integer
        if type(v) is int:
            return v
    raise FormError(f"{fname}: {what} entries must be integers, got {describe(x)}")


def _shape(fname: str, p: Param, v: Any) -> tuple:
    """A shape: a tuple / list of dimensions, or one dimension."""
    if isinstance(v, (tuple, list)):
        return tuple([_dim(fname, p.name, x) for x in v])
    if v is None or type(v) in (str, float, bool, dict):
        raise FormError(f"{fname}: {p.name} must be a tuple of integers, got {describe(v)}")
    return (_dim(fname, p.name, v),)


def _dims(fname: str, p: Param, v: Any) -> tuple:
    """Strides: a tuple / list of dimensions (None: none)."""
    if v is None:
        return ()
    if isinstance(v, (tuple, list)):
        return tuple([_dim(fname, p.name, x) for x in v])
    raise FormError(f"{fname}: {p.name} must be a tuple of integers, got {describe(v)}")


def _dim1(fname: str, p: Param, v: Any) -> Any:
    return _dim(fname, p.name, v)


def _nat(fname: str, p: Param, v: Any) -> int:
    if type(v) is int and v >= 0:
        return v
    raise FormError(
        f"{fname}: {p.name} must be a non-negative int literal, got {describe(v) if type(v) is not int else v}"
    )


def _primtype(fname: str, p: Param, v: Any) -> PrimType:
    t = _dtype(fname, p, v)
    if not isinstance(t, PrimType):
        raise FormError(f"{fname}: {p.name} must be a primitive dtype, got {t}")
    return t


def _elemtype(fname: str, p: Param, v: Any) -> Type:
    if v is None:
        return void
    if isinstance(v, TensorType):
        raise FormError(f"{fname}: {p.name} must be an element dtype, not a T.Tensor")
    return _dtype(fname, p, v)


def _ptrvar(fname: str, p: Param, v: Any) -> Var:
    if type(v) is Var and isinstance(v.ty, PointerType):
        return v
    raise FormError(f"{fname}: {p.name} must be a pointer variable, got {describe(v)}")


def _ptrexpr(fname: str, p: Param, v: Any) -> PrimExpr:
    """A pointer: a variable, or an expression TIRx's ``T.decl_tensor`` takes
    (``T.address_of(A[3, 0])``; the builder binds it to the view's ``X.data``)."""
    if isinstance(v, PrimExpr) and isinstance(v.ty, PointerType):
        return v
    raise FormError(f"{fname}: {p.name} must be a pointer, got {describe(v)}")


def _launch_values(fname: str, p: Param, v: tuple) -> tuple:
    out: list[PrimExpr] = []
    for x in v:
        if type(x) is int and -0x80000000 <= x <= 0x7FFFFFFF:  # what convert makes of it, directly
            out.append(IntImm(x, int32))
            continue
        e = x if isinstance(x, PrimExpr) else convert(x) if type(x) is int else None
        if e is None:
            raise FormError(f"{fname}: launch values must be scalar integers, got {describe(x)}")
        t = e.ty
        # launch options beyond the shape may be float32 (a hit ratio) or handles (events,
        # streams, window pointers); DeviceEntry checks each value against its field's kind
        if not (isinstance(t, PrimType) and (t.is_int or t.is_float) and t.lanes == 1) and not isinstance(
            t, PointerType
        ):
            raise FormError(f"{fname}: launch values must be scalar integers, got dtype {t}")
        out.append(e)
    return tuple(out)


def _value(fname: str, p: Param, v: Any) -> Any:
    """An attribute value: an expression, or a string (a StringImm)."""
    if type(v) is str:
        return v
    return _expr(fname, p, v)


def _layout(fname: str, p: Param, v: Any) -> Layout | None:
    """``layout=T.TileLayout(...)`` / ``T.ComposeLayout(...)`` (tirx.ir.layout), or None
    (``"default"``: TIRx's row-major layout of the shape, made by the tensor's builder)."""
    if v is None or isinstance(v, Layout) or v == "default":
        return v
    raise FormError(f"{fname}: {p.name} must be a T.TileLayout or T.ComposeLayout, got {describe(v)}")


def _tensor_arg(fname: str, p: Param, v: Any) -> TensorType:
    """``ty_args=[T.Tensor(...)]``: the one tensor type of an allocation / declaration."""
    if isinstance(v, (list, tuple)) and len(v) == 1 and isinstance(v[0], TensorType):
        return v[0]
    raise FormError(f"{fname}: {p.name} must be a list of one T.Tensor(shape, dtype, ...), got {describe(v)}")


def _grid_extents(fname: str, p: Param, v: tuple) -> tuple:
    """``*extents`` of ``T.grid``: each an integer or a ``(start, extent)`` pair of integers."""
    out = []
    for e in v:
        if type(e) is int:  # the common extent
            out.append((0, e))
            continue
        pair = type(e) in (tuple, list)
        if pair and len(e) != 2:
            raise FormError(f"{fname}: a tuple extent is (start, extent), got {len(e)} values")
        start, ext = e if pair else (0, e)
        try:
            out.append((_dim(fname, p.name, start), _dim(fname, p.name, ext)))
        except FormError:
            raise FormError(
                f"{fname}: extents must be integers or (start, extent) pairs of integers, got {describe(e)}"
            ) from None
    return tuple(out)


def _unroll(fname: str, p: Param, v: Any) -> Any:
    """``unroll=`` of ``T.serial``: True, False or a positive int literal (TIRx's)."""
    if type(v) is bool or (type(v) is int and v >= 1):
        return v
    if type(v) is int:
        raise FormError(f"{fname}: unroll must be a positive integer, got {v}")
    raise FormError(f"{fname}: unroll must be a bool or a positive int literal, got {describe(v)}")


def _unset(fname: str, p: Param, v: Any) -> None:
    if v is not None:
        raise FormError(
            f"{fname}: unsupported argument {p.name} (tirx has no {p.name}; only None is accepted)"
        )
    return None


#: kind -> (checker/converter, what the printer writes for it)
KINDS: dict[str, Callable[[str, Any, Any], Any]] = {
    "expr": _expr,  # printed as an expression
    "int": _int,  # an int literal
    "dtype": _dtype,  # printed "float32" (a PrimType) or T.Ptr(...) / T.void
    "type": _dtype,  # the same values, printed T.float32
    "calltype": _dtype,  # a call's result type: the same values, void printed T.Tuple() (TIRx's unit type)
    "types": _types,  # a list of types (T.Func's argument types; T.Tuple's *fields)
    "config": lambda fname, p, v: _config(fname, p, v),  # a dict or a string (T.target's config)
    "binding": _binding,  # x := value (T.Let); the later arguments see x
    "funcref": _funcref,  # Module.f
    "exprs": _exprs,  # [e, ...]
    "typed_exprs": _exprs,  # [e, ...], an int32 constant printed T.int32(k) (TIRx's T.Shuffle indices)
    "call_args": _exprs,  # [e, ...] of T.Call, printed with a tensor's name where it was written (CallArgs)
    "str": _str,  # a string literal
    "dict": _dict,  # {"key": value, ...} (attribute values)
    "shape": _shape,  # (d0, d1, ...): ints or integer expressions; one dimension alone is a 1-tuple
    "dims": _dims,  # the same, for strides (None or () for none)
    "dim": _dim1,  # one dimension (elem_offset)
    "nat": _nat,  # a non-negative int literal (align)
    "primtype": _primtype,  # a primitive dtype, printed T.float32
    "elemtype": _elemtype,  # a pointer's element type (None: void), printed T.float32
    "ptrvar": _ptrvar,  # a pointer variable (X.data)
    "ptrexpr": _ptrexpr,  # a pointer expression (T.decl_tensor's data)
    "tensor_arg": _tensor_arg,  # [T.Tensor(...)]: an allocation's type, printed with its scope
    "view_arg": _tensor_arg,  # the same for a view (its storage is its pointer's: DeclBuffer.declared_scope)
    "launch_values": _launch_values,  # *values: scalar integer expressions
    "value": _value,  # an expression or a string (T.attr's value)
    "grid_extents": _grid_extents,  # *extents: integers or (start, extent) pairs (T.grid)
    "unroll": _unroll,  # T.serial's unroll=: True, False or a positive int
    "unset": _unset,  # a TVM keyword tirx has no meaning for: only None (derived forms' tvm=True)
    "layout": _layout,  # a layout (tirx.ir.layout) or None
}


# ------------------------------------------------------------------ the records
class Param:
    """One parameter of a form: its name, kind (a key of :data:`KINDS`), default, and whether
    it can only be given by keyword. Keyword-only parameters, and those marked ``print_kw``,
    print as ``name=value`` and are left out when they hold their default."""

    __slots__ = ("conv", "default", "kind", "kw_only", "name", "pos_only", "print_kw", "print_name", "print_omit",
                 "star")  # fmt: skip

    def __init__(self, name: str, kind: str, default: Any = REQUIRED, kw_only: bool = False,
                 print_kw: bool = False, pos_only: bool = False, print_omit: bool = False,
                 star: bool = False, print_name: str | None = None):  # fmt: skip
        if kind not in KINDS:
            raise ValueError(f"Param {name}: unknown kind {kind!r} (one of {', '.join(KINDS)})")
        self.name = name
        # the keyword the printer writes (TIRx's spelling), when it is not ``name``; the form's
        # ``normalize`` reads it back
        self.print_name = print_name or name
        self.kind = kind
        self.default = default
        self.kw_only = kw_only
        self.print_kw = kw_only or print_kw
        self.pos_only = pos_only
        # a trailing positional parameter left out when it holds its default (T.Ptr's scope)
        self.print_omit = print_omit
        # ``*values``: every positional argument, as a tuple (T.device_entry's launch values);
        # printed one by one, nothing when empty
        self.star = star
        self.conv = KINDS[kind]

    def __repr__(self) -> str:
        d = "" if self.default is REQUIRED else f"={self.default!r}"
        return f"{'*' if self.kw_only else ''}{self.name}: {self.kind}{d}"


class FormSpec:
    """One surface form: script name (+ aliases), parameters, node class, build and unparse.

    ``build(*values, span=None)`` gets the converted arguments in parameter order and
    returns the node; ``unparse(node)`` returns the argument values in parameter order (a
    keyword parameter whose value is its default is not printed); it may be declared as the
    node's field names, one per parameter (``("base", "stride", "lanes")``). ``role`` says
    what the build gives: ``"expr"`` an expression node, ``"type"`` a type (``T.Tensor``,
    ``T.Ptr``: annotations and ``ty_args``), ``"loop"`` the header of a ``for`` loop
    (``(start, extent, kind, step, annotations, thread)``, see :func:`loop_head`), ``"bind"``
    a binding statement: a :class:`Pending` that the assignment target's name completes
    (``X = T.alloc_tensor(...)``), ``"region"`` the header of a ``with`` region (its node's
    fields but the body), ``"stmt"`` a statement (a :class:`Pending` emitted where it stands),
    ``"loops"`` several loop headers (``T.grid``), ``"subscript"`` the value of
    ``T.<name>[...]`` (``T.let[T.int32]``: the type; see :meth:`subscript`);
    each front end wraps loops, bindings, regions and statements its own way. ``base``: the
    form(s) a derived form builds (:func:`derive`); it has no ``unparse``, the base prints.
    ``normalize(pos, kw)``, when given, rewrites a call before binding (another spelling of
    the same call); ``kw_normalize``: it only rewrites calls with keywords, so a positional
    call keeps the fast path. ``builtin``: written without ``T.``.
    """

    __slots__ = ("aliases", "base", "build", "builtin", "call", "defaults", "doc", "fast", "fields", "hi",
                 "index", "kw_normalize", "lo", "name", "node", "normalize", "params", "pos_idx", "role", "star",
                 "unparse")  # fmt: skip

    def __init__(self, name: str, params: tuple, node: type | None, build: Callable[..., Any],
                 unparse: Callable[[Any], tuple] | tuple[str, ...] | None = None, aliases: tuple = (), doc: str = "",
                 role: str = "expr", normalize: Callable | None = None, builtin: bool = False,
                 kw_normalize: bool = False, base: tuple | None = None):  # fmt: skip
        self.name = name
        self.base = base  # a derived form: the form(s) it builds and prints as (see derive)
        self.params = tuple(params)
        self.node = node
        self.build = build
        # unparse: a function, or the node's field names, one per parameter
        self.fields = unparse if isinstance(unparse, tuple) else None
        self.unparse = _getter(unparse) if isinstance(unparse, tuple) else unparse
        self.aliases = tuple(aliases)
        self.doc = doc
        self.role = role
        self.normalize = normalize
        self.kw_normalize = kw_normalize
        self.builtin = builtin
        self.pos_idx = tuple(i for i, p in enumerate(self.params) if not p.kw_only)
        self.hi = len(self.pos_idx)
        self.lo = sum(1 for i in self.pos_idx if self.params[i].default is REQUIRED)
        self.star = next((i for i, p in enumerate(self.params) if p.star), None)
        if self.star is not None:  # the one positional parameter: any number of values
            if self.pos_idx != (self.star,):
                raise ValueError(f"FormSpec {name}: a *parameter must be the only positional one")
            self.lo, self.hi = 0, 1 << 30
        self.defaults = tuple(p.default for p in self.params)
        self.index = {p.name: i for i, p in enumerate(self.params)}  # keyword -> parameter position
        self.call = _compile_call(self) if self.star is None else self.call_general
        # a call with positional arguments only binds them to the first parameters
        self.fast = (
            (normalize is None or kw_normalize)
            and self.star is None
            and self.pos_idx == tuple(range(self.hi))
        )

    @property
    def fname(self) -> str:
        """The callee as written: ``T.Ramp``; a builtin's bare name (``range``)."""
        return self.name if self.builtin else "T." + self.name

    def __repr__(self) -> str:
        return f"FormSpec({self.fname}({', '.join(map(repr, self.params))}) -> {getattr(self.node, '__name__', None)})"

    # -------------------------------------------------------------- parse direction
    def subscript(self, index: Any, span: Any = None) -> Any:
        """``T.<name>[index]`` (a ``"subscript"`` form, ``T.let[T.int32]``): the index's items
        are the positional arguments, as Python passes a tuple index."""
        pos = list(index) if type(index) is tuple else [index]
        return self.call(pos, {}, span, self.fname + "[...]")

    def bind(self, pos: list | tuple, kw: dict, fname: str | None = None) -> list:
        """The raw argument values in parameter order (defaults filled in), or FormError."""
        fname = fname or self.fname
        if self.normalize is not None and (kw or not self.kw_normalize):
            pos, kw = self.normalize(pos, kw)
        params = self.params
        n = len(pos)
        if n > self.hi or (n < self.lo and not kw):
            want = f"{self.lo}" if self.lo == self.hi else f"{self.lo} to {self.hi}"
            raise FormError(f"{fname} takes {want} positional argument(s), got {n}")
        vals = [p.default for p in params]
        pos_idx = self.pos_idx
        if self.star is not None:
            if n:
                vals[self.star] = tuple(pos)
            n = 0
        for k in range(n):
            vals[pos_idx[k]] = pos[k]
        if kw:
            index = self.index
            given = pos_idx[:n]
            for k, v in kw.items():
                i = index.get(k, -1)
                if i < 0 or params[i].pos_only:
                    raise FormError(f"{fname} got an unexpected keyword argument '{k}'")
                if i in given:
                    raise FormError(f"{fname} got multiple values for argument '{k}'")
                vals[i] = v
        for p, v in zip(params, vals):
            if v is REQUIRED:
                raise FormError(f"{fname} missing required argument '{p.name}'")
        return vals

    def convert(self, vals: list, fname: str | None = None) -> list:
        """Check and convert each bound value by its parameter's kind (defaults pass as is)."""
        fname = fname or self.fname
        return [v if v is p.default else p.conv(fname, p, v) for p, v in zip(self.params, vals)]

    def call_general(self, pos: list | tuple, kw: dict, span: Any = None, fname: str | None = None) -> Any:
        """Bind, convert and build: what ``T.<name>(*pos, **kw)`` means in both front ends.

        FormError for a call that does not fit; TypeError/ValueError from the node. (``call``
        is this, generated as straight-line code for the form: :func:`_compile_call`.)"""
        fname = fname or self.fname
        n = len(pos)
        if not kw and n and self.star is not None and self.normalize is None:  # *values only
            vals = list(self.defaults)
            p = self.params[self.star]
            vals[self.star] = p.conv(fname, p, tuple(pos))
            return self.build(*vals, span=span)
        if not kw and self.fast and self.lo <= n <= self.hi:  # positional only, in parameter order
            return self.build(
                *[v if v is p.default else p.conv(fname, p, v) for p, v in zip(self.params, pos)],
                *self.defaults[n:],
                span=span,
            )
        return self.build(*self.convert(self.bind(pos, kw, fname), fname), span=span)

    def function(self, unwrap: Callable[[Any], Any] | None = None, name: str | None = None,
                 wrap: Callable[[Any], Any] | None = None) -> Callable:  # fmt: skip
        """A Python function ``T.<name>`` that calls this form (``unwrap`` is applied to every
        argument first: the frontend's mutable scalars and meta vars become expressions;
        ``wrap`` to the result: a loop header becomes the frontend's loop value). The kernel
        parser gives the result the call's span."""
        f = _compile_function(self, unwrap or _identity, wrap, "T." + (name or self.name))
        f.__name__ = f.__qualname__ = name or self.name
        f.__doc__ = self.doc
        ps = []
        for p in sorted(self.params, key=lambda p: p.kw_only):  # Python lists keyword-only ones last
            k = (
                inspect.Parameter.VAR_POSITIONAL
                if p.star
                else inspect.Parameter.KEYWORD_ONLY
                if p.kw_only
                else inspect.Parameter.POSITIONAL_ONLY
                if p.pos_only
                else inspect.Parameter.POSITIONAL_OR_KEYWORD
            )
            d = inspect.Parameter.empty if p.default is REQUIRED or p.star else p.default
            ps.append(inspect.Parameter(p.name, k, default=d))
        f.__signature__ = inspect.Signature(ps)  # type: ignore[attr-defined]
        f.__tirx_form__ = self  # type: ignore[attr-defined]
        return f


def _identity(x: Any) -> Any:
    return x


def _compile_call(spec: FormSpec) -> Callable:
    """``spec.call(pos, kw, span=None, fname=None)``, generated once from the parameters: the
    arguments bound, converted and built in straight-line code; a call that does not bind (an
    extra, repeated, unknown or missing argument) goes through :meth:`FormSpec.call_general`,
    which raises the message."""
    params = spec.params
    ns: dict[str, Any] = {
        "FNAME": spec.fname, "slow": spec.call_general, "build": spec.build, "REQUIRED": REQUIRED,
        "normalize": spec.normalize, "KWOK": frozenset(p.name for p in params if not p.pos_only),
    }  # fmt: skip
    code = ["def call(pos, kw, span=None, fname=None):", "    fname = fname or FNAME", "    n = len(pos)"]
    if spec.normalize is not None:
        if spec.kw_normalize:
            code.append("    if kw:")
            code += ["        pos, kw = normalize(pos, kw)", "        n = len(pos)"]
        else:
            code += ["    pos, kw = normalize(pos, kw)", "    n = len(pos)"]
    code.append(f"    if n > {spec.hi} or n < {spec.lo} and not kw or kw and not KWOK.issuperset(kw):")
    code.append("        return slow(pos, kw, span, fname)")
    for i, p in enumerate(params):
        ns[f"p{i}"], ns[f"d{i}"], ns[f"c{i}"] = p, p.default, p.conv
        if i < spec.hi:  # positional parameters come first (spec.fast-like layout is checked below)
            code.append(f"    v{i} = pos[{i}] if n > {i} else d{i}")
        else:
            code.append(f"    v{i} = d{i}")
    code += ["    if kw:", "        pass"]
    for i, p in enumerate(params):
        if p.pos_only:
            continue
        if i < spec.hi:
            code.append(f"        if {p.name!r} in kw:")
            code.append(f"            if n > {i}:")
            code.append("                return slow(pos, kw, span, fname)")
            code.append(f"            v{i} = kw[{p.name!r}]")
        else:
            code.append(f"        v{i} = kw.get({p.name!r}, d{i})")
    for i, p in enumerate(params):
        if p.default is REQUIRED:
            code += [f"    if v{i} is REQUIRED:", "        return slow(pos, kw, span, fname)"]
    for i, _p in enumerate(params):
        code += [f"    if v{i} is not d{i}:", f"        v{i} = c{i}(fname, p{i}, v{i})"]
    code.append(f"    return build({''.join(f'v{i}, ' for i in range(len(params)))}span=span)")
    if spec.pos_idx != tuple(range(spec.hi)):  # keyword-only parameters before positional ones
        return spec.call_general
    exec("\n".join(code), ns)  # the code is built above from the declaration, no user text
    return ns["call"]


def _compile_function(spec: FormSpec, unwrap: Callable, wrap: Callable | None, fname: str) -> Callable:
    """The Python function of a form, generated once from its parameters: a positional-only
    call (the common one) binds, converts and builds in straight-line code, one branch per
    argument count; anything else goes through :meth:`FormSpec.call` (the same rules, so the
    same results and messages, just slower)."""
    ns: dict[str, Any] = {"spec": spec, "unwrap": unwrap, "wrap": wrap or _identity, "fname": fname}
    ns["build"], ns["slow"] = spec.build, spec.call
    params = spec.params
    code = ["def f(*args, **kwargs):"]
    if spec.fast:
        code.append("    n = len(args)")
        for n in range(spec.lo, spec.hi + 1):
            code.append(f"    if n == {n} and not kwargs:")
            vals = []
            for i, p in enumerate(params):
                ns[f"p{i}"], ns[f"d{i}"], ns[f"c{i}"] = p, p.default, p.conv
                if i < n:
                    code += [f"        v{i} = unwrap(args[{i}])", f"        if v{i} is not d{i}:"]
                    code.append(f"            v{i} = c{i}(fname, p{i}, v{i})")
                    vals.append(f"v{i}")
                else:
                    vals.append(f"d{i}")
            code.append(f"        return wrap(build({''.join(v + ', ' for v in vals)}span=None))")
    elif spec.star is not None and spec.normalize is None:  # *values, positional only
        vals = []
        for i, p in enumerate(params):
            ns[f"p{i}"], ns[f"d{i}"], ns[f"c{i}"] = p, p.default, p.conv
            vals.append(f"c{i}(fname, p{i}, tuple([unwrap(a) for a in args]))" if i == spec.star else f"d{i}")
        code += ["    if args and not kwargs:", f"        return wrap(build({', '.join(vals)}, span=None))"]
    code += [
        "    if kwargs:",
        "        kwargs = {k: unwrap(v) for k, v in kwargs.items()}",
        "    return wrap(slow([unwrap(a) for a in args], kwargs, None, fname))",
    ]
    exec("\n".join(code), ns)  # the code is built above from the declaration, no user text
    return ns["f"]


def _getter(fields: tuple) -> Callable[[Any], tuple]:
    get = attrgetter(*fields)
    return get if len(fields) > 1 else lambda node: (get(node),)


# ------------------------------------------------------------------ the forms
def _unify(a: Any, b: Any) -> tuple:
    """Two operands of one dtype: a literal takes the dtype of the expression beside it."""
    if isinstance(a, PrimExpr):
        return a, convert(b, a)
    b = convert(b)
    return convert(a, b), b


def _b_ramp(base: Any, stride: Any, lanes: int, span: Any = None) -> Ramp:
    base, stride = _unify(base, stride)
    return Ramp(base, stride, lanes, span=span)


def _b_broadcast(value: Any, lanes: int, span: Any = None) -> Broadcast:
    return Broadcast(convert(value), lanes, span=span)


def _b_select(cond: Any, true_value: Any, false_value: Any, span: Any = None) -> Select:
    t, f = _unify(true_value, false_value)
    return Select(convert(cond), t, f, span=span)


def _b_cast(dtype: Type, value: Any, span: Any = None) -> Cast:
    return Cast(dtype, convert(value), span=span)


class _Where:
    """``where={v: value}``'s one binding, in the shape the ``binding`` kind reads."""

    __slots__ = ("value", "var")

    def __init__(self, var: Any, value: Any) -> None:
        self.var, self.value = var, value


def _let_where(pos: Any, kw: dict) -> tuple:
    """TIRx's spelling ``T.Let(body, where={v: value})`` (``v`` from ``T.dynamic``) is
    ``T.Let(v := value, body)``."""
    if "where" not in kw:
        return pos, kw
    kw = dict(kw)
    where = kw.pop("where")
    if not isinstance(where, dict) or len(where) != 1:
        raise FormError("T.Let: where= must be a dict of exactly one {var: value}")
    ((var, value),) = where.items()
    if type(var) is not Var:
        raise FormError(f"T.Let: the where= key must be a variable (T.dynamic), got {describe(var)}")
    body = kw.pop("body") if "body" in kw else (pos[0] if len(pos) == 1 else None)
    if body is None or len(pos) > 1:
        raise FormError("T.Let(body, where={v: value}) takes the body and one binding")
    return [_Where(var, convert(value)), body], kw


def _b_let(binding: tuple, body: Any, span: Any = None) -> Let:
    var, value = binding
    return Let(var, value, convert(body), span=span)


class CallArgs(tuple):
    """A call's arguments as the printer gets them: ``tensors``, the positions written with a
    tensor (``Call.tensor_args``: printed by its name, as TIRx prints it)."""

    tensors: tuple

    def __new__(cls, args: tuple, tensors: tuple = ()) -> CallArgs:
        r = super().__new__(cls, args)
        r.tensors = tensors
        return r


def _b_call(func: tuple, args: tuple, ty: Any = None, span: Any = None) -> Call:
    gv, ret = func
    if not isinstance(gv, GlobalVar):  # an Op: its declaration checks the arguments
        from tirx.ir.op import call

        return call(gv, *args, ty=ty, span=span)
    rt = ty if ty is not None else (ret if ret is not None else void)
    return Call(gv, args, rt, span=span)


# ------------------------------------------------------------------ loops
def _same(a: Any, b: Any) -> bool:
    return a is b or structural_equal(a, b, map_free_vars=False)


# ------------------------------------------------------------------ store-target slices
def slice_ramp(start: Any, stop: Any, step: Any = None) -> Ramp:
    """The lanes ``A[start:stop:step] = v`` stores to (TIRx prints a Ramp store target so):
    ``T.Ramp(start, step, lanes)`` with ``lanes = (stop - start) / step``, which must be a
    constant of at least 2: two integer constants, or a stop written ``start + k`` (``start``
    structurally). ``ValueError`` otherwise. Only store targets take slices: TIRx reads
    ``A[a:b]`` in an expression as a region, not as lanes."""
    start, stop = convert(start), convert(stop)
    stride = convert(1 if step is None else step)
    for what, e in (("start", start), ("stop", stop), ("step", stride)):
        if not (isinstance(e.ty, PrimType) and e.ty.is_int and e.ty.lanes == 1):
            raise ValueError(f"slice {what} must be a scalar integer expression, got dtype {e.ty}")
    if type(stride) is not IntImm or stride.value < 1:
        raise ValueError("slice step must be a positive integer constant")
    if type(start) is IntImm and type(stop) is IntImm:
        span = stop.value - start.value
    elif type(stop) is Add and type(stop.b) is IntImm and _same(stop.a, start):
        span = stop.b.value
    else:
        raise ValueError("slice length must be a constant: write A[s:s + n] or constants")
    if span % stride.value or span // stride.value < 2:
        raise ValueError(
            f"slice of {span} elements by step {stride.value}: a store needs 2 or more whole lanes"
        )
    if stride.ty != start.ty:
        stride = IntImm(stride.value, start.ty)
    return Ramp(start, stride, span // stride.value)


def slice_parts(r: Ramp) -> tuple | None:
    """``(start, stop, step)`` to print a store target ``r`` as TIRx does (``A[s:e]``,
    ``A[s:e:k]``), from which :func:`slice_ramp` rebuilds ``r``; None when it cannot
    (a symbolic stride)."""
    st = r.stride
    if type(st) is not IntImm or st.value < 1:
        return None
    n = st.value * r.lanes
    b = r.base
    stop: PrimExpr
    if type(b) is IntImm:
        try:
            stop = IntImm(b.value + n, b.ty)
        except (TypeError, ValueError):
            return None
    else:
        stop = Add(b, IntImm(n, cast(PrimType, b.ty)))  # IntImm's validator checks the base dtype
    return b, stop, (None if st.value == 1 else st)


def _int_bound(fname: str, e: PrimExpr) -> None:
    t = e.ty
    if not (isinstance(t, PrimType) and t.is_int and t.lanes == 1):
        raise FormError(f"{fname}: loop bounds must be scalar integers, got dtype {t}")


def _fresh(c: PrimExpr, span: Any) -> PrimExpr:
    """A constant made here from a literal carries the call's span (it is not shared yet)."""
    if span is not None and c.span is None:
        object.__setattr__(c, "span", span)
    return c


def _lit(x: Any, like: PrimExpr | None, span: Any) -> PrimExpr:
    return x if isinstance(x, PrimExpr) else _fresh(convert(x, like), span)


def loop_head(fname: str, kind: ForKind, start: Any, stop: Any, step: Any, thread: Any, annotations: Any,
              span: Any = None) -> tuple:  # fmt: skip
    """``(start, extent, kind, step, annotations, thread)`` of ``T.<kind>(start, stop, ...)``;
    one bound is the stop (from 0, in the stop's dtype). Constants made from literals carry
    ``span``."""
    if step is None and type(start) is int and (stop is None or type(stop) is int):
        # Python ints (``range(4)``, ``T.unroll(2, 8)``): the folded extent, left as ints for
        # the builder to make constants of (what it does with any literal bound)
        if kind is ForKind.THREAD_BINDING and thread is None:
            raise FormError(f'{fname} needs thread="threadIdx.x" (or another axis)')
        if stop is None:
            return (0, start, kind, None, annotations, thread)
        return (start, stop - start, kind, None, annotations, thread)
    try:
        if stop is None:
            stop_e = _lit(start, None, span)
            _int_bound(fname, stop_e)
            # _int_bound checked stop_e is an integer (IntImm's validator checks it again)
            start_e, extent = _fresh(IntImm(0, cast(PrimType, stop_e.ty)), span), stop_e
        else:
            if isinstance(stop, PrimExpr):
                stop_e, start_e = stop, _lit(start, stop, span)
            elif isinstance(start, PrimExpr):
                start_e, stop_e = start, _lit(stop, start, span)
            else:
                start_e, stop_e = _lit(start, None, span), _lit(stop, None, span)
            _int_bound(fname, start_e)
            _int_bound(fname, stop_e)
            if start_e.ty != stop_e.ty:  # int32 beside int64: both int64, as TIRx widens them
                start_e, stop_e = match(start_e, stop_e, span)
            s0 = start_e
            start_e, extent = range_extent(start_e, stop_e)
            if start_e is not s0:  # a 0 start retyped to the stop's dtype
                _fresh(start_e, span)
            if (
                type(extent) is IntImm
                and extent is not stop_e
                and not (type(stop_e) is Add and extent is stop_e.b)
            ):
                _fresh(extent, span)  # the folded difference of two constants
        if step is not None:
            step = _lit(step, start_e, span)
            _int_bound(fname, step)
            if type(step) is IntImm and step.value == 0:  # as TIRx's parser refuses it
                raise FormError(f"{fname}: the loop's step cannot be zero (the loop would never end)")
    except FormError:
        raise
    except (TypeError, ValueError) as e:
        raise FormError(f"{fname}: {e}") from e
    if kind is ForKind.THREAD_BINDING and thread is None:
        raise FormError(f'{fname} needs thread="threadIdx.x" (or another axis)')
    return (start_e, extent, kind, step, annotations, thread)


def _unroll_annotations(unroll: Any, annotations: Any) -> Any:
    """``T.serial(..., unroll=)`` as TIRx records it: ``True`` is ``{"tirx.pragma_unroll": True}``
    (CUDA ``#pragma unroll``), ``N`` is ``{"tirx.pragma_unroll": N}`` (``#pragma unroll N``),
    ``False`` is ``{"tirx.disable_unroll": True}`` (``#pragma unroll 1``); merged into
    ``annotations``, keys in order (as TIRx prints them)."""
    if unroll is None:
        return annotations
    d = dict(annotations or {})
    if unroll is False:
        d[DISABLE_UNROLL] = True
    else:
        d[PRAGMA_UNROLL] = unroll
    return dict(sorted(d.items()))


def _unroll_of(ann: Any) -> Any:
    """The ``unroll=`` value that prints ``ann`` (None: print ``annotations=``)."""
    if ann is None or len(ann) != 1:
        return None
    ((k, v),) = ann.items()
    if k == PRAGMA_UNROLL and (v is True or (type(v) is int and v >= 1)):
        return v
    if k == DISABLE_UNROLL and v is True:
        return False
    return None


def _loop_dtype(fname: str, dt: Any, start: Any, stop: Any, step: Any) -> tuple:
    """``dtype=``: the loop var's dtype; the bounds are converted to it (literals retyped,
    other expressions cast), as TIRx does."""
    if not (isinstance(dt, PrimType) and dt.is_int and dt.lanes == 1):
        raise FormError(f"{fname}: dtype must be a scalar integer dtype, got {dt}")

    def to(x: Any) -> Any:
        if x is None:
            return None
        if type(x) is int or type(x) is IntImm:
            try:
                return IntImm(x.value if isinstance(x, IntImm) else x, dt)
            except (TypeError, ValueError) as e:
                raise FormError(f"{fname}: {e}") from None
        if isinstance(x, PrimExpr):
            return x if x.ty == dt else Cast(dt, x)
        return x

    if stop is None:
        return IntImm(0, dt), to(start), to(step)
    return to(start), to(stop), to(step)


def _loop_form(kind: ForKind) -> FormSpec:
    tb = kind is ForKind.THREAD_BINDING
    serial = kind is ForKind.SERIAL

    fname = "T." + kind.value

    def build(start: Any, stop: Any, thread: Any, *rest: Any, span: Any = None) -> tuple:
        if serial:
            unroll, annotations, step, dtype = rest
            annotations = _unroll_annotations(unroll, annotations)
        else:
            annotations, step, dtype = rest
        if dtype is not None:
            start, stop, step = _loop_dtype(fname, dtype, start, stop, step)
        return loop_head(fname, kind, start, stop, step, thread, annotations, span)

    def unparse(s: For) -> tuple:
        thread = (s.thread or "") if tb else s.thread
        ann = s.annotations or None
        if serial:
            unroll = _unroll_of(ann)
            if unroll is not None:
                ann = None
            return (s.start, loop_stop(s.start, s.extent), thread, unroll, ann, s.nonunit_step, None)
        return (s.start, loop_stop(s.start, s.extent), thread, ann, s.nonunit_step, None)

    # the order TIRx prints them: unroll= / annotations= before step= (a positional third
    # argument is still the step: the ones between are keyword-only)
    params = (
        Param("start", "expr"),
        Param("stop", "expr", None),
        Param("thread", "str", None, kw_only=not tb, print_kw=True),
        *((Param("unroll", "unroll", None, kw_only=True),) if serial else ()),
        Param("annotations", "dict", None, kw_only=True),
        Param("step", "expr", None, kw_only=tb, print_kw=True),
        Param("dtype", "primtype", None, kw_only=True),  # input only: the bounds' dtype prints
    )
    what = 'thread="threadIdx.x"' if tb else "step=, annotations=, dtype="
    if serial:
        what = "step=, unroll=, annotations=, dtype="
    return FormSpec(
        kind.value, params, For, build, unparse, role="loop", normalize=_thread_as_stop if tb else None,
        doc=f"``for i in T.{kind.value}(start, stop, {what})``: a {kind.value} loop (one bound: the stop).",
    )  # fmt: skip


def _thread_as_stop(pos: Any, kw: dict) -> tuple:
    """``T.thread_binding(n, "threadIdx.x")``: a string in the stop's place is the thread."""
    if len(pos) == 2 and type(pos[1]) is str and "thread" not in kw:
        return [pos[0]], {**kw, "thread": pos[1]}
    return pos, kw


def _b_range(start: Any, stop: Any, step: Any, span: Any = None) -> tuple:
    return loop_head("range", ForKind.SERIAL, start, stop, step, None, None, span)


#: ``range(stop)`` / ``range(start, stop[, step])`` in a ``for`` header: a serial loop (the
#: builtin's name, so it is not a ``T.`` member; the printer writes it for a plain serial loop)
RANGE = FormSpec(
    "range",
    (Param("start", "expr", pos_only=True), Param("stop", "expr", None, pos_only=True),
     Param("step", "expr", None, pos_only=True)),
    For, _b_range, role="loop", builtin=True, doc="``for i in range(start, stop, step)``",
)  # fmt: skip

LOOPS: dict[ForKind, FormSpec] = {k: _loop_form(k) for k in ForKind}


# ------------------------------------------------------------------ types
def _b_tensor(shape: tuple, dtype: Any, scope: str, strides: tuple, elem_offset: Any, align: int, layout: Any,
              data: Any, span: Any = None) -> TensorType:  # fmt: skip
    if type(dtype) is str:  # the default, "float32"
        dtype = parse_dtype(dtype)
    if align == DEFAULT_ALIGN:  # TIRx's default alignment (tirx.ir.buffer): TIRx keeps and prints none
        align = 0
    if layout == "default":  # TIRx's row-major layout over the shape, kept explicit as TIRx keeps it
        layout = _row_major(shape)
    if data is not None and isinstance(data.ty, PointerType):
        scope = data.ty.scope  # a tensor over a pointer lives where it points (TIRx's: scope= ignored)
    elif scope not in MEMORY_SCOPES:
        import difflib

        near = difflib.get_close_matches(str(scope), sorted(MEMORY_SCOPES), n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise ValueError(f"T.Tensor: unknown storage scope {scope!r}{hint}")
    return TensorType(shape, dtype, scope, strides, align, elem_offset, data, layout)


def _row_major(shape: tuple) -> Layout:
    """TIRx's ``layout="default"``: the row-major tile layout of ``shape``."""
    from tirx.ir.layout import Iter, TileLayout

    iters = []
    stride: Any = 1
    for d in reversed(shape):
        iters.append(Iter(d, stride, "m"))
        stride = d * stride
    return TileLayout.from_iters(shard=list(reversed(iters)), replica=[])


def _tvm_keywords(pos: Any, kw: dict) -> tuple:
    """TVM's ``offset_factor=`` means nothing here: accepted and dropped.
    ``data_alignment=`` (TIRx's printed spelling) is ``align=``."""
    if "offset_factor" in kw:
        kw = {k: v for k, v in kw.items() if k != "offset_factor"}
    if "data_alignment" in kw:
        if "align" in kw:
            raise TypeError("data_alignment= and align= are one parameter; give one")
        kw = {("align" if k == "data_alignment" else k): v for k, v in kw.items()}
    return pos, kw


#: ``T.Tensor(shape, dtype, scope=, strides=, elem_offset=, data_alignment=, data=)``: a
#: parameter's annotation and an allocation's type (``align=`` is accepted for
#: ``data_alignment=``, as TIRx does). The printer writes a Buffer through the same
#: declaration (its shape, dtype, pointer scope, strides, elem_offset, align).
TENSOR = FormSpec(
    "Tensor",
    (Param("shape", "shape"), Param("dtype", "primtype", "float32"),
     Param("scope", "str", "global", print_kw=True), Param("strides", "dims", (), kw_only=True, print_kw=True),
     Param("elem_offset", "dim", None, kw_only=True, print_kw=True),
     Param("align", "nat", 0, print_kw=True, print_name="data_alignment"),
     Param("layout", "layout", None, kw_only=True), Param("data", "ptrexpr", None, kw_only=True)),
    TensorType, _b_tensor, ("shape", "dtype", "scope", "strides", "elem_offset", "align", "layout", "data"),
    aliases=("Buffer",), role="type", normalize=_tvm_keywords, kw_normalize=True,
    doc='``T.Tensor((m, n), T.float16, scope="shared")``: a tensor type (parameters, allocations).',
)  # fmt: skip


class TensorMapMark(Type):
    """``T.TensorMap()``: TIRx's type of a TMA descriptor. It only ever stands as a pointer's
    element: ``T.Ptr(T.TensorMap())`` is tirx's tensor-map parameter type,
    ``PointerType(uint8, "tensormap")`` (a by-value ``__grid_constant__`` descriptor), and
    prints back in TIRx's spelling."""

    __slots__ = ()

    def __str__(self) -> str:
        return "TensorMap()"

    def __repr__(self) -> str:
        return "TensorMapMark()"

    def __eq__(self, other: object) -> bool:
        return type(other) is TensorMapMark

    def __hash__(self) -> int:
        return hash("TensorMapMark")


_TENSOR_MAP_PTR = tensormap_ptr


def _b_ptr(element: Type, scope: str, span: Any = None) -> PointerType:
    if type(element) is TensorMapMark:
        if scope != "global":
            raise FormError(f"T.Ptr(T.TensorMap()) takes no scope (a descriptor parameter), got {scope!r}")
        return _TENSOR_MAP_PTR
    return PointerType(void if element is None else element, scope)


def _u_ptr(t: PointerType) -> tuple:
    if t == _TENSOR_MAP_PTR:
        return (TensorMapMark(), "global")  # TIRx's spelling, T.Ptr(T.TensorMap())
    return (t.element, t.scope)


#: ``T.Ptr(T.float32)``, ``T.Ptr(T.uint64, "shared")``; ``T.Ptr(T.void)`` is an opaque handle;
#: ``T.Ptr(T.TensorMap())`` a TMA descriptor parameter
PTR = FormSpec(
    "Ptr", (Param("element", "elemtype", None), Param("scope", "str", "global", print_omit=True)),
    PointerType, _b_ptr, _u_ptr, role="type",
    doc='``T.Ptr(T.float32)``, ``T.Ptr(T.uint64, "shared")``: a pointer type (``T.Ptr()``: to void).',
)  # fmt: skip


def _b_tensor_map(span: Any = None) -> Type:
    return TensorMapMark()


#: ``T.TensorMap()``: only as ``T.Ptr(T.TensorMap())`` (above)
TENSOR_MAP = FormSpec(
    "TensorMap", (), TensorMapMark, _b_tensor_map, None, role="type",
    doc="``T.TensorMap()``: a TMA descriptor's type, the element of ``T.Ptr(T.TensorMap())``.",
)  # fmt: skip


def _b_prim_type(dtype: str, span: Any = None) -> Type:
    try:
        t = parse_dtype(dtype)
    except ValueError as e:
        raise FormError(f"T.PrimType: {e}") from None
    if not isinstance(t, PrimType):
        raise FormError(f"T.PrimType: {dtype!r} is not a primitive dtype")
    return t


#: ``T.PrimType("boolx2")``: how TIRx writes a dtype its ``T`` has no name for (input; the
#: printer writes PrimType.script())
PRIM_TYPE = FormSpec(
    "PrimType", (Param("dtype", "str"),), PrimType, _b_prim_type, None, role="type",
    doc='``T.PrimType("boolx2")``: a primitive dtype by name (TIRx\'s spelling of one with no ``T.`` name).',
)  # fmt: skip


def _b_none_type(span: Any = None) -> Type:
    return void


#: ``-> T.NoneType()``: TIRx's return annotation of a function that returns nothing (void)
NONE_TYPE = FormSpec(
    "NoneType", (), type(void), _b_none_type, None, role="type",
    doc="``T.NoneType()``: the type of no value (``void``); TIRx writes it as a return annotation.",
)  # fmt: skip

TYPES: tuple[FormSpec, ...] = (TENSOR, PTR)  # NONE_TYPE: input only (void prints as T.void)


def _host_type_forms() -> tuple[FormSpec, ...]:
    """TIRx's non-primitive types (``tirx.ir.host_types``) as the text writes them:
    ``T.String()``, ``T.Tuple(T.int32, T.float32)``, ``T.Func([T.int32], T.int32)``, ...
    Input forms of the text loader only: the Python names are ``tirx.script.ir_names``'
    classes, and the printer writes the types themselves (``type.script()``)."""
    h = _host_types

    def marker(cls: type) -> Callable[..., Type]:
        return lambda span=None: cls()

    out = [
        FormSpec(name, (), cls, marker(cls), None, role="type", doc=f"``T.{name}()``: {cls.__doc__}")
        for name, cls in (("String", h.StringType), ("StringType", h.StringType), ("Missing", h.MissingType),
                          ("MissingType", h.MissingType), ("Opaque", h.OpaqueType), ("Any", h.AnyType),
                          ("TensorRegionType", h.TensorRegionType))
    ]  # fmt: skip
    out.append(
        FormSpec(
            "Tuple", (Param("fields", "types", (), star=True),), h.TupleType,
            # T.Tuple() is TIRx's unit type: tirx's void (TIRx prints a void call's type so)
            lambda fields, span=None: h.TupleType(fields) if fields else void, None, role="type",
            doc=h.TupleType.__doc__ or "",
        )
    )  # fmt: skip
    for name in ("Func", "FuncType"):
        out.append(
            FormSpec(
                name, (Param("arg_types", "types"), Param("ret_type", "type")), h.FuncType,
                lambda arg_types, ret_type, span=None: h.FuncType(arg_types, ret_type), None, role="type",
                doc=h.FuncType.__doc__ or "",
            )
        )  # fmt: skip
    return tuple(out)


#: input only, in text (see _host_type_forms)
HOST_TYPES = _host_type_forms()


def _config(fname: str, p: Param, v: Any) -> Any:
    if v is None or type(v) is str or isinstance(v, dict):
        return v
    raise FormError(f"{fname}: {p.name} must be a dict or a string, got {describe(v)}")


def _b_target(target_config: Any, host: Any = None, span: Any = None) -> Any:
    try:
        return _target_spec.from_config(target_config, host)
    except (TypeError, ValueError) as e:
        raise FormError(str(e)) from None


#: ``T.target({...})`` in text: a function attribute's value, as TIRx prints ``T.func_attr({"target":
#: T.target({...})})`` (input only: the printer writes a Target with ``target_spec.target_text``;
#: the Python name is ``tirx.script.ir_names.target``)
TARGET = FormSpec(
    "target", (Param("target_config", "config"), Param("host", "config", None)), None, _b_target, None,
    role="expr", doc='``T.target({"kind": "cuda", "arch": "sm_90a"})``: a compile target (an attribute value).',
)  # fmt: skip


# ------------------------------------------------------------------ binding statements
class Pending:
    """A statement waiting for its place: ``X = T.alloc_tensor(...)`` builds this, and each
    front end completes it with the target's name (``emit(builder, name)``), which emits the
    statement and returns what the name binds (the Buffer); a statement form
    (``T.evaluate``, ``T.func_attr``) is emitted the same way, without a name."""

    __slots__ = ("args", "form")

    def __init__(self, form: str, *args: Any):
        self.form = form
        self.args = args

    def emit(self, builder: Any, name: str | None = None) -> Any:
        form = self.form
        if form == "alloc_tensor":
            ty, ann = self.args
            return builder.alloc(name, ty, ann)
        if form == "decl_tensor":
            data, ty, declared = self.args
            return builder.decl(name, ty, data, declared)
        if form == "evaluate":
            return None if self.args[0] is None else builder.evaluate(self.args[0])
        if form == "module_attrs":
            return builder.set_module_attrs(self.args[0])
        return builder.func_attr(self.args[0])  # func_attr

    def __repr__(self) -> str:
        return f"T.{self.form}(...)"


def _b_alloc(ty: TensorType, annotations: Any, span: Any = None) -> Pending:
    return Pending("alloc_tensor", ty, annotations)


def _alloc_spellings(pos: Any, kw: dict) -> tuple:
    """``T.alloc_tensor(shape, dtype, scope=...)`` is ``ty_args=[T.Tensor(shape, dtype, scope=...)]``;
    ``attrs=`` (TIRx's printed spelling) is ``annotations=``."""
    if "attrs" in kw and "annotations" not in kw:
        kw = {("annotations" if k == "attrs" else k): v for k, v in kw.items()}
    if pos and "ty_args" not in kw:
        rest = {k: v for k, v in kw.items() if k != "annotations"}
        ty = TENSOR.call(pos, rest, fname="T.alloc_tensor")
        kw = {"ty_args": [ty], **({"annotations": kw["annotations"]} if "annotations" in kw else {})}
        pos = []
    return pos, kw


def _b_decl(data: Var, ty: TensorType, span: Any = None) -> Pending:
    pt = data.ty
    assert isinstance(pt, PointerType)  # the "ptrvar" / "ptrexpr" parameter kind checked it
    declared = ty.scope  # kept as TIRx keeps it (DeclBuffer.declared_scope)
    if ty.scope != pt.scope:  # the view lives where its pointer points
        ty = TensorType(ty.shape, ty.dtype, pt.scope, ty.strides, ty.align, ty.elem_offset, layout=ty.layout)
    return Pending("decl_tensor", data, ty, declared)


# ------------------------------------------------------------------ statements
def _b_evaluate(value: Any, span: Any = None) -> Pending:
    """``T.evaluate(0)`` (the literal) is nothing, as TIRx's builder drops it (a no-op used to
    fill a body); ``T.evaluate(T.int32(0))``, the printer's spelling of a kept one, stays."""
    if type(value) is int and value == 0:
        return Pending("evaluate", None)
    return Pending("evaluate", convert(value))


def _b_func_attr(attrs: Any, span: Any = None) -> Pending:
    return Pending("func_attr", attrs if type(attrs) is Attrs else Attrs(attrs))


def _b_module_attrs(attrs: Any, span: Any = None) -> Pending:
    return Pending("module_attrs", attrs if type(attrs) is Attrs else Attrs(attrs))


#: statements written as a call: the build gives a :class:`Pending` each front end emits
STMTS: tuple[FormSpec, ...] = (
    FormSpec(
        "evaluate", (Param("value", "value"),), Evaluate, _b_evaluate, ("value",), role="stmt",
        doc="``T.evaluate(e)``: ``e`` as a statement (a call statement prints without it).",
    ),
    FormSpec(
        "func_attr", (Param("attrs", "dict"),), Function, _b_func_attr, ("attrs",), role="stmt",
        doc='``T.func_attr({"key": value})``: the function\'s attributes (once, first in its body).',
    ),
)  # fmt: skip


# ------------------------------------------------------------------ regions
def _b_device_entry(values: tuple, attrs: Any, span: Any = None) -> tuple:
    fname = "T.device_entry"
    n = len(values)
    if attrs is None:
        if n == 0:  # TIRx's ``T.device_entry()``: no launch values (each defaults to 1)
            return values, Attrs({LAUNCH_FIELDS_KEY: []})
        if n not in (6, 9, 10):
            raise FormError(
                f"{fname}: without attrs= it takes 6 launch values (grid.xyz, block.xyz), or none"
            )
        attrs = {"cuda.kernel_attrs": {}, LAUNCH_FIELDS_KEY: list(LAUNCH_FIELDS[:n])}
    fields = attrs.get(LAUNCH_FIELDS_KEY)
    if fields is None and n == 0:  # TIRx's argument-free entry with attrs (backend_config): no launch fields
        attrs, fields = {**dict(attrs), LAUNCH_FIELDS_KEY: []}, []
    if type(fields) not in (list, tuple) or len(fields) != n:
        raise FormError(f'{fname}: attrs["{LAUNCH_FIELDS_KEY}"] must list one launch field per value ({n})')
    return values, attrs if type(attrs) is Attrs else Attrs(attrs)


def _unparse_device_entry(s: DeviceEntry) -> tuple:
    a = s.attrs
    if not s.args and not a.get(LAUNCH_FIELDS_KEY, True):
        if len(a) == 1:
            return (), None  # T.device_entry()
        # TIRx's argument-free entry prints only its other attrs: T.device_entry(attrs={"backend_config": ...})
        return (), Attrs({k: v for k, v in a.items() if k != LAUNCH_FIELDS_KEY})
    return s.args, a


def _b_attr(key: str, value: Any, span: Any = None) -> tuple:
    return key, convert(value)


#: ``with T.device_entry(*launch values, attrs={...}):`` / ``with T.attr(key, value):`` open a
#: region; the build gives the header's values, which each front end opens its own way
REGIONS: tuple[FormSpec, ...] = (
    FormSpec(
        "device_entry", (Param("values", "launch_values", (), star=True), Param("attrs", "dict", None, kw_only=True)),
        DeviceEntry, _b_device_entry, _unparse_device_entry, role="region",
        doc='``with T.device_entry(gx, gy, gz, bx, by, bz, attrs={"cuda.launch_fields": [...], ...}):`` '
        "the kernel launch region (without ``attrs=``: 6 values, grid.xyz then block.xyz; or none, "
        "``T.device_entry()``: every launch value 1).",
    ),
    FormSpec(
        "attr", (Param("key", "str"), Param("value", "value")), AttrStmt, _b_attr, ("key", "value"),
        role="region", doc='``with T.attr("key", value):`` an annotated region.',
    ),
)  # fmt: skip


ALLOC_TENSOR = FormSpec(
    "alloc_tensor",
    (Param("ty_args", "tensor_arg", kw_only=True),
     Param("annotations", "dict", None, kw_only=True, print_name="attrs")),
    AllocBuffer, _b_alloc, lambda s: (s.buffer, s.annotations or None), role="bind",
    normalize=_alloc_spellings,
    doc="``X = T.alloc_tensor(ty_args=[T.Tensor(shape, dtype, scope=...)], attrs={...})`` (``annotations=``: "
    "the same)",
)  # fmt: skip
DECL_TENSOR = FormSpec(
    "decl_tensor", (Param("data", "ptrexpr"), Param("ty_args", "view_arg", kw_only=True)),
    DeclBuffer, _b_decl, lambda s: (s.buffer.data, s), role="bind",
    doc="``X = T.decl_tensor(p, ty_args=[T.Tensor(shape, dtype)])``: a tensor view over the pointer ``p``.",
)  # fmt: skip
BINDINGS: tuple[FormSpec, ...] = (ALLOC_TENSOR, DECL_TENSOR)


CAST = FormSpec(
    "Cast", (Param("dtype", "dtype"), Param("value", "expr")), Cast, _b_cast, ("ty", "value"),
    doc='``T.Cast("int64", e)``: always a Cast node (``T.cast`` skips a no-op cast).',
)  # fmt: skip

FORMS: tuple[FormSpec, ...] = (
    FormSpec(
        "Ramp", (Param("base", "expr"), Param("stride", "expr"), Param("lanes", "int")), Ramp, _b_ramp,
        ("base", "stride", "lanes"), aliases=("ramp",),
        doc="``T.Ramp(base, stride, lanes)``: the vector ``base + k * stride`` for k < lanes.",
    ),
    FormSpec(
        "Broadcast", (Param("value", "expr"), Param("lanes", "int")), Broadcast, _b_broadcast,
        ("value", "lanes"), aliases=("broadcast",),
        doc="``T.Broadcast(value, lanes)``: a scalar repeated in every lane.",
    ),
    FormSpec(
        "Select", (Param("cond", "expr"), Param("true_value", "expr"), Param("false_value", "expr")),
        Select, _b_select, ("cond", "true_value", "false_value"),
        doc="``T.Select(cond, a, b)``: both arms are evaluated (``T.if_then_else`` is the lazy form).",
    ),
    CAST,
    FormSpec(  # TIRx's vector lane shuffle (tirx/ir/shuffle.py)
        "Shuffle", (Param("vectors", "exprs"), Param("indices", "typed_exprs")), Shuffle,
        lambda vectors, indices, span=None: Shuffle(vectors, indices, span=span), ("vectors", "indices"),
        doc="``T.Shuffle([v, w], [T.int32(7), T.int32(6)])``: lanes picked from the concatenation of the vectors.",
    ),
    FormSpec(
        "dtype", (Param("value", "dtype"),), DataTypeImm, _b_dtype_imm, ("value",), aliases=("DataTypeImm",),
        doc='``T.dtype("float16")``: a dtype as an argument value (TIRx\'s ``DataTypeImm``; a type where a '
        "type goes, ``ty=T.dtype(...)``).",
    ),
    FormSpec(
        "Let", (Param("binding", "binding"), Param("body", "expr")), Let, _b_let,
        lambda e: ((e.var, e.value), e.body),
        doc="``T.Let(x := value, body)``: ``x`` is visible in ``body`` only (TIRx's ``T.Let(body, "
        "where={x: value})`` with ``x = T.dynamic(...)`` builds the same).",
        normalize=_let_where, kw_normalize=True,
    ),
    FormSpec(
        "Call", (Param("func", "funcref"), Param("args", "call_args"), Param("ty", "calltype", None, kw_only=True)),
        Call, _b_call, lambda e: ((e.op, None), CallArgs(e.args, e.tensor_args), e.ty),
        doc="``T.Call(Module.f, [args], ty=T.float32)``: a call of a module function (or of an op, "
        "``T.Call(T.Op.get(name), [args], ty=...)``, built as ``T.<name>(args...)``).",
    ),
    *LOOPS.values(),
    *TYPES,
    *BINDINGS,
    *REGIONS,
    *STMTS,
)  # fmt: skip

# ------------------------------------------------------------------ derived forms
#: the form a parameter kind holds: a derived form routes that form's parameters into it
#: (``T.alloc_shared(shape, dtype)``'s shape and dtype go into ``ty_args=[T.Tensor(...)]``)
_NESTED: dict[str, FormSpec] = {"tensor_arg": TENSOR, "view_arg": TENSOR}

#: TVM keywords tirx has no meaning for: a derived form with ``tvm=True`` accepts them left None
#: (keyword-only parameters of kind ``unset``), and ``offset_factor=`` with any value (dropped:
#: it only constrains TVM's buffer offsets)
TVM_UNSET = ("data", "layout", "allocated_addr", "buffer_type", "axis_separators")


def _plan(base: FormSpec, names: frozenset) -> tuple:
    """How the named values reach ``base``'s parameters: per parameter ``(name, None, default)``
    (taken by name), ``(None, form, sub-plan)`` (a nested form built from the names it has) or
    ``(None, None, default)`` (the base's default)."""
    own = {p.name for p in base.params}
    plan: list[tuple] = []
    for p in base.params:
        sub = _NESTED.get(p.kind)
        if p.name in names:
            plan.append((p.name, None, p.default))
        elif sub is not None:
            inner = tuple((q.name if q.name in names and q.name not in own else None, None, q.default)
                          for q in sub.params)  # fmt: skip
            plan.append((None, sub, inner))
        else:
            plan.append((None, None, p.default))
    return tuple(plan)


def _compile_derived(name: str, pnames: tuple, fixed: dict, plans: list, check: Callable | None,
                     shortcut: Callable | None) -> Callable:  # fmt: skip
    """The build of a derived form, generated once from its routing (straight-line code, as fast
    as the hand-written convenience it replaces): the converted values ``v0, v1, ...`` in
    parameter order (the unset TVM keywords after them are ignored) -> the base form's build
    with its arguments in place, nested forms built inline."""
    ns: dict[str, Any] = {"FNAME": "T." + name, "check": check, "shortcut": shortcut}
    val = {n: f"v{i}" for i, n in enumerate(pnames)}
    for k, (n, v) in enumerate(fixed.items()):
        ns[f"F{k}"] = v
        val[n] = f"F{k}"
    counter = iter(range(1 << 30))

    def args(plan: tuple) -> str:
        out = []
        for n, sub, default in plan:
            k = next(counter)
            if sub is not None:
                ns[f"S{k}"] = sub.build
                out.append(f"S{k}({args(default)}span=span)")
                continue
            ns[f"D{k}"] = default
            e = val.get(n) if n is not None else None
            if e is None:
                out.append(f"D{k}")
            elif default is None or default is REQUIRED or e[0] == "F":  # (a fixed value is given)
                out.append(e)
            else:  # a None given is the base's default
                out.append(f"(D{k} if {e} is None else {e})")
        return "".join(a + ", " for a in out)

    code = [f"def build({''.join(v + ', ' for v in val.values() if v[0] == 'v')}*_unset, span=None):"]
    if check is not None or shortcut is not None:
        code.append("    d = {" + ", ".join(f"{n!r}: {e}" for n, e in val.items()) + "}")
    if check is not None:
        code.append("    check(FNAME, d)")
    if shortcut is not None:
        code += ["    r = shortcut(d)", "    if r is not None:", "        return r"]
    for i, (b, plan, required) in enumerate(plans):
        ns[f"B{i}"] = b.build
        call = f"B{i}({args(plan)}span=span)"
        if i < len(plans) - 1 and required:
            code += [
                f"    if {' and '.join(f'{val[r]} is not None' for r in required)}:",
                f"        return {call}",
            ]
        else:
            code.append(f"    return {call}")
            break
    exec("\n".join(code), ns)  # the code is built above from the declaration, no user text
    build = ns["build"]
    build.__name__ = build.__qualname__ = f"_b_{name}"
    return build


def derive(name: str, base: FormSpec | tuple, params: tuple, fixed: dict | None = None, *, aliases: tuple = (),
           doc: str = "", check: Callable | None = None, shortcut: Callable | None = None,
           tvm: bool = False, normalize: Callable | None = None) -> FormSpec:  # fmt: skip
    """A convenience spelling of a base form, declared once: ``T.<name>`` with its own
    parameters (bound, checked and worded by the same rules as any form's, in both front
    ends), built as ``base`` with each value routed by name to the base parameter of that name
    (or to that parameter of the form a base parameter holds: ``ty_args``' ``T.Tensor``),
    ``fixed`` values added, the base's defaults for the rest (a None given is the default).

    ``base`` may be a tuple: the first form whose required parameters all have a value
    (``T.decl_buffer`` is ``T.decl_tensor`` given ``data=``, else ``T.alloc_tensor``).
    ``check(fname, values)`` rejects a combination the kinds cannot see; ``shortcut(values)``
    may give the value without building the base (``T.cast`` to the value's own dtype);
    ``tvm``: TVM's keywords of :data:`TVM_UNSET` are accepted when None (and ``offset_factor=``,
    dropped); ``normalize(pos, kw)`` respells a call before it binds. The derived form has
    no ``unparse``: the printer prints what it built, the base form."""
    bases = base if isinstance(base, tuple) else (base,)
    fixed = dict(fixed or {})
    names = frozenset([*(p.name for p in params), *fixed])
    plans = []
    for b in bases:
        plan = _plan(b, names)
        required = tuple(p.name for p in b.params if p.default is REQUIRED and p.name in names)
        plans.append((b, plan, required))
    reached = {n for _b, plan, _r in plans for n in _names_in(plan)}
    if names - reached:
        raise ValueError(
            f"derive {name}: {', '.join(sorted(names - reached))} reach no parameter of its base"
        )
    pnames = tuple(p.name for p in params)
    if tvm:
        params = (*params, *(Param(k, "unset", None, kw_only=True) for k in TVM_UNSET if k not in pnames))
    build = _compile_derived(name, pnames, fixed, plans, check, shortcut)
    return FormSpec(
        name, params, bases[0].node, build, None, aliases=aliases, doc=doc, role=bases[0].role,
        normalize=_tvm_keywords if tvm else normalize, kw_normalize=True, base=bases,
    )  # fmt: skip


def _names_in(plan: tuple) -> list:
    out = []
    for name, sub, default in plan:
        if sub is not None:
            out += _names_in(default)
        elif name is not None:
            out.append(name)
    return out


def _view_scope(fname: str, d: dict) -> None:
    data, scope = d["data"], d["scope"]
    if data is not None and scope is not None and scope != data.ty.scope:
        raise FormError(f"{fname}: scope={scope!r} differs from the pointer's scope {data.ty.scope!r}")


def _ty_is_dtype(pos: Any, kw: dict) -> tuple:
    """TIRx's ``T.cast(value, *, ty=...)`` keyword is ``dtype=``."""
    if "ty" in kw:
        if "dtype" in kw or len(pos) > 1:
            raise FormError("T.cast: give the type once (dtype= or ty=)")
        kw = {("dtype" if k == "ty" else k): v for k, v in kw.items()}
    return pos, kw


def _same_dtype(d: dict) -> Any:
    """``T.cast`` of a value already of that dtype is the value."""
    v = d["value"]
    if not isinstance(v, PrimExpr):
        v = convert(v)
    return v if v.ty == d["dtype"] else None


_SHAPE, _DTYPE = Param("shape", "shape"), Param("dtype", "primtype", "float32")
_STRIDES, _ALIGN = Param("strides", "dims", (), kw_only=True), Param("align", "nat", 0, kw_only=True)
_ELEM_OFFSET = Param("elem_offset", "dim", None, kw_only=True)
_ANNOTATIONS = Param("annotations", "dict", None, kw_only=True)
_LAYOUT = Param("layout", "layout", None, kw_only=True)


def _alloc_in(scope: str, aliases: tuple = ()) -> FormSpec:
    # ``scope=`` may name a refinement of the default (TIRx: ``T.alloc_shared(..., scope="shared.dyn")``)
    scope_p = Param("scope", "str", scope, kw_only=True)
    return derive(
        f"alloc_{scope}", ALLOC_TENSOR, (_SHAPE, _DTYPE, _STRIDES, _ALIGN, _ANNOTATIONS, _LAYOUT, scope_p), None,
        aliases=aliases, tvm=True,
        doc=f'``X = T.alloc_{scope}(shape, dtype)``: ``T.alloc_tensor(ty_args=[T.Tensor(shape, dtype, scope="{scope}")])``.',
    )  # fmt: skip


#: conveniences that build (and print as) a base form
DERIVED: tuple[FormSpec, ...] = (
    _alloc_in("shared", aliases=("smem",)),
    _alloc_in("local"),
    derive(
        "alloc_buffer", ALLOC_TENSOR,
        (_SHAPE, _DTYPE, Param("scope", "str", "global"), _STRIDES, _ELEM_OFFSET, _ALIGN, _ANNOTATIONS, _LAYOUT),
        tvm=True, doc="``X = T.alloc_buffer(shape, dtype, scope)``: ``T.alloc_tensor`` of that ``T.Tensor``.",
    ),
    derive(
        "decl_buffer", (DECL_TENSOR, ALLOC_TENSOR),
        (_SHAPE, _DTYPE, Param("data", "ptrvar", None), Param("scope", "str", None), _STRIDES, _ELEM_OFFSET, _ALIGN,
         _LAYOUT),
        check=_view_scope, tvm=True,
        doc="``X = T.decl_buffer(shape, dtype, data=p)``: ``T.decl_tensor(p, ty_args=[T.Tensor(shape, dtype)])`` "
        "(the pointer's scope); without ``data``, ``T.alloc_tensor`` in ``scope`` (default global).",
    ),
    derive(
        # the parameters of T.alloc_shared / T.alloc_local (_alloc_in), in the same order
        "tmem", ALLOC_TENSOR, (_SHAPE, _DTYPE, _STRIDES, _ALIGN, _ANNOTATIONS, _LAYOUT), {"scope": "tmem"}, tvm=True,
        doc='``X = T.tmem(shape, dtype)``: a Blackwell tensor-memory tensor, ``T.alloc_tensor(ty_args=[T.Tensor('
        'shape, dtype, scope="tmem")])`` (docs/blackwell.md; TIRx\'s ``allocated_addr=`` is not supported yet)',
    ),
    derive(
        "cast", CAST, (Param("value", "expr"), Param("dtype", "dtype")), shortcut=_same_dtype,
        normalize=_ty_is_dtype,
        doc='``T.cast(e, "float32")``: ``T.Cast("float32", e)``, or ``e`` itself when it has that dtype '
        '(``ty=``, TIRx\'s keyword, is ``dtype=``).',
    ),
)  # fmt: skip


def _b_grid(extents: tuple, dtype: Any = None, span: Any = None) -> tuple:
    if not extents:
        raise FormError("T.grid needs at least one extent")
    heads = []
    for start, ext in extents:
        if dtype is not None:  # TIRx's dtype=: every loop's bounds in that dtype
            start, ext, _ = _loop_dtype("T.grid", dtype, start, ext, None)
        if type(start) is int and isinstance(ext, PrimExpr):
            start = _lit(start, ext, span)
        heads.append((start, ext, ForKind.SERIAL, None, None, None))
    return tuple(heads)


#: ``for i, j in T.grid(m, (lo, ext))``: nested serial loops, printed as the loops they are
GRID = FormSpec(
    "grid", (Param("extents", "grid_extents", (), star=True),
             Param("dtype", "primtype", None, kw_only=True)),  # input only: the bounds' dtype prints
    For, _b_grid, role="loops",
    base=(LOOPS[ForKind.SERIAL],),
    doc="``for i, j in T.grid(m, (lo, ext))``: nested serial loops; an extent may be ``(start, extent)``.",
)  # fmt: skip


def _b_let_type(ty: Type, span: Any = None) -> Type:
    return ty


#: ``x: T.let[T.int32] = v``: an immutable binding of that type. The build gives the type; each
#: front end wraps it as its annotation value (the Python parser's ``LetAnn``); the printer
#: writes a ``Bind`` with it. ``x: T.let = v`` (no type) is the bare marker.
LET = FormSpec(
    "let", (Param("ty", "type"),), None, _b_let_type, ("ty",), role="subscript",
    doc="``x: T.let[T.int32] = v``: an immutable binding (``Bind``) of that type.",
)  # fmt: skip


_BY_NAME: dict[str, FormSpec] = {}
for _f in (*FORMS, *DERIVED, GRID, LET, NONE_TYPE, TENSOR_MAP, PRIM_TYPE, *HOST_TYPES, TARGET):
    for _n in (_f.name, *_f.aliases):
        _BY_NAME[_n] = _f
_BY_NODE: dict[type, FormSpec] = {
    f.node: f for f in FORMS if f.role == "expr" and f.unparse is not None and f.node is not None
}


def register(spec: FormSpec) -> None:
    """Make ``T.<spec.name>`` a form of the text loader (a module declaring forms of its own,
    such as ``tirx.surface.layout_forms``, which the text loader and the printer import)."""
    for n in (spec.name, *spec.aliases):
        _BY_NAME[n] = spec


#: a module-level statement (first in a ``@T.ir_module`` class body, as TIRx prints module
#: attributes): a form of the text loader, not of kernel bodies
MODULE_ATTRS = FormSpec(
    "module_attrs", (Param("attrs", "dict"),), Module, _b_module_attrs, ("attrs",), role="stmt",
    doc='``T.module_attrs({"key": value})``: a module\'s attributes, first in its class body.',
)  # fmt: skip
register(MODULE_ATTRS)


def _b_int_imm(dtype: Type, value: int, span: Any = None) -> IntImm:
    if not isinstance(dtype, PrimType) or not dtype.is_int:
        raise FormError(f"IntImm: the dtype must be an integer dtype, got {dtype}")
    return IntImm(value, dtype, span=span)


#: ``T.IntImm("uint64", v)`` in text: TIRx's spelling of a uint64 constant past int64's range
#: (the printer writes it so, ``T.uint64(v)`` otherwise); input only. The Python name is
#: ``tirx.script.ir_names.IntImm``.
register(
    FormSpec(
        "IntImm", (Param("dtype", "dtype"), Param("value", "int")), IntImm, _b_int_imm, None, role="expr",
        doc='``T.IntImm("uint64", 18446744073709551615)``: an integer constant of that dtype.',
    )
)  # fmt: skip


def _b_string_imm(value: str, span: Any = None) -> StringImm:
    return StringImm(value, span=span)


#: ``T.StringImm("s")`` in text: a string constant node (TIRx prints an attribute value that is
#: one so, where a bare ``"s"`` is a str); input only, the printer writes it (tirx's
#: ``attr_value``). The Python name is ``tirx.script.ir_names.StringImm``.
register(
    FormSpec(
        "StringImm", (Param("value", "str"),), StringImm, _b_string_imm, None, role="expr",
        doc='``T.StringImm("s")``: a string constant (an attribute value that is not a str).',
    )
)  # fmt: skip


def by_name(name: str) -> FormSpec | None:
    """The form ``T.<name>`` names (aliases included), or None."""
    return _BY_NAME.get(name)


def by_node(cls: type) -> FormSpec | None:
    """The form an expression node class prints as, or None (a ``For`` prints by its kind:
    :data:`LOOPS`)."""
    return _BY_NODE.get(cls)
