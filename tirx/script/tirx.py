"""The ``T`` namespace: ``from tirx.script import tirx as T`` (same spelling as ``tvm_tirx``).

Intrinsics are not listed here: ``T.<name>`` and ``T.<ns>.<name>`` resolve through the op
table (``tirx.ir.op.lookup``), so ``T.exp``, ``T.cuda.thread_idx``, ``T.ptx.mapa`` ... are
the declared ops. What is defined here is the language: decorators, types, loops,
allocations, launch configuration and expression constructors.
"""

from __future__ import annotations

import builtins as _builtins
import inspect as _inspect
from typing import Any

from .. import forms as _forms
from .. import ir as _ir
from ..ir import PointerType
from ..ir import op as _op
from ..ir.node import Attrs as _Attrs
from ..ir.stmt import ForKind as _ForKind
from ..ir.types import DTYPE_NAMES as _DTYPE_NAMES
from ..ir.types import as_prim as _as_prim
from ..ir.types import as_type as _as_type
from ..ir.types import handle, void
from ..ir.types import parse_dtype as _parse_dtype
from . import parser as _p
from .builder import IRBuilder as _IRBuilder
from .builder import launch_args as _launch_args
from .decorators import function, inline, ir_module, jit, macro

__all__ = [  # the language; ops (T.exp, T.cuda.*, T.ptx.*) and dtypes resolve through the op/dtype tables
    "BufferFrom", "DType", "LaunchConfig", "LetAnn",
    "alloc_buffer", "alloc_local", "alloc_scalar", "alloc_shared",
    "assign", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "boolean",
    "broadcast_grid", "cast", "ceildiv", "compute", "constexpr", "cuda", "decl_buffer",
    "decl_scalar", "device_entry", "dynamic", "floordiv", "floormod",
    "function", "grid", "handle", "infinity", "inline", "ir_module", "jit", "let",
    "local_scalar", "logical_and", "logical_not", "logical_or", "macro", "max", "max_value", "meta_var",
    "min", "min_value", "prim_func", "ptr_byte_offset", "reinterpret",
    "shared_scalar", "shift_left", "shift_right", "smem", "static_assert",
    "truncdiv", "truncmod", "tvm_access_ptr", "void",
]  # fmt: skip

_Add, _Sub, _Broadcast, _Buffer, _Call, _Cast = (
    _ir.Add,
    _ir.Sub,
    _ir.Broadcast,
    _ir.Buffer,
    _ir.Call,
    _ir.Cast,
)
_Div, _FloorDiv, _FloorMod, _Mod, _Mul = _ir.Div, _ir.FloorDiv, _ir.FloorMod, _ir.Mod, _ir.Mul
_GlobalVar, _IntImm, _Let, _Max, _Min = _ir.GlobalVar, _ir.IntImm, _ir.Let, _ir.Max, _ir.Min
_PrimExpr, _PrimType, _Ramp, _Select = _ir.PrimExpr, _ir.PrimType, _ir.Ramp, _ir.Select
_TensorType, _Type, _Var = _ir.TensorType, _ir.Type, _ir.Var
_binop, _const, _convert = _ir.binop, _ir.const, _ir.convert
_AttrSpec, _Cell, _DeviceEntrySpec, _LetBinding = _p.AttrSpec, _p.Cell, _p.DeviceEntrySpec, _p.LetBinding
_LoopSpec, _MetaVar, _take_name = _p.LoopSpec, _p.MetaVar, _p.take_name

prim_func = function  # TVM spelling


# ------------------------------------------------------------------ dtypes
class DType:
    """``T.float16`` and friends: a dtype usable as a type, and callable for constants."""

    __slots__ = ("ty",)

    def __init__(self, ty: _PrimType):
        self.ty = ty

    def __tirx_type__(self) -> _PrimType:
        return self.ty

    def __call__(self, value: Any = None) -> _PrimExpr:
        if value is None:
            raise TypeError(f"T.{self.ty.name}() needs a value, e.g. T.{self.ty.name}(0)")
        if isinstance(value, _Cell):
            value = value.load()
        if isinstance(value, _PrimExpr):
            return value if value.ty == self.ty else _Cast(self.ty, value)
        if isinstance(value, str):
            value = float(value) if self.ty.is_float else int(value)
        return _const(value, self.ty)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return self.ty == other.ty
        if isinstance(other, _PrimType):
            return self.ty == other
        if isinstance(other, str):
            return self.ty.name == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.ty)

    def __repr__(self) -> str:
        return f"T.{self.ty.name}"

    def __str__(self) -> str:
        return self.ty.name

    @property
    def name(self) -> str:
        return self.ty.name


for _n in _DTYPE_NAMES:
    globals()[_n] = DType(_parse_dtype(_n))
bool = globals()["bool"]


# the markers the script parser recognizes (defined there, so parser.py needs no import of
# this module: tests/test_layering.py)
LetAnn, let, constexpr = _p.LetAnn, _p.let, _p.constexpr


def dynamic(name: str, dtype: Any = "int32") -> _Var:
    """A symbolic dimension: ``n = T.dynamic("n")``, ``T.dynamic("D", "int64")``."""
    return _Var(name, _as_prim(dtype, "T.dynamic dtype"))


def meta_var(value: Any) -> _MetaVar:
    """``x = T.meta_var(v)`` binds ``x`` to the Python value ``v`` itself (no Bind)."""
    return _MetaVar(value)


# ------------------------------------------------------------------ tensors
def _no_extra(fn: str, extra: dict) -> None:
    """TVM keywords tirx has no meaning for are accepted only when left unset."""
    bad = [k for k, v in extra.items() if v is not None and k not in ("offset_factor",)]
    if bad:
        raise TypeError(f"T.{fn}: unsupported argument(s) {', '.join(bad)} (tirx has no {bad[0]})")


def _shape(shape: Any) -> tuple:
    if isinstance(shape, (list, tuple)):
        return tuple(shape)
    if isinstance(shape, (int, _PrimExpr)):
        return (shape,)
    return tuple(shape)


# T.Tensor (alias T.Buffer) and T.Ptr are FormSpecs (tirx/forms.py TYPES), generated with the
# other forms below; T.Tensor.like (T.BufferFrom) is Python-only: it reads a Python array.
def _tensor_like(example: Any, scope: str | None = None) -> _TensorType:
    """A tensor type with the shape and dtype of an example (numpy/torch array, Buffer, type)."""
    if isinstance(example, _TensorType):
        return example if scope is None else Tensor(example.shape, example.dtype, scope)
    if isinstance(example, _Buffer):
        return Tensor(example.shape, example.dtype, scope or example.scope)
    shape = getattr(example, "shape", None)
    dt = getattr(example, "dtype", None)
    if shape is None or dt is None:
        raise TypeError(
            f"T.Tensor.like needs an array-like with .shape and .dtype, got {type(example).__name__}"
        )
    return Tensor(
        tuple(int(s) if not isinstance(s, _PrimExpr) else s for s in shape),
        _as_prim(dt),
        scope or "global",
    )


# ------------------------------------------------------------------ launch
class LaunchConfig:
    """``T.cuda.LaunchConfig(grid=, block=, cluster=, dynamic_smem_bytes=)``."""

    __slots__ = ("block", "cluster", "dynamic_smem_bytes", "grid")

    def __init__(self, grid: Any = 1, block: Any = 1, cluster: Any = None, dynamic_smem_bytes: Any = None):
        self.grid = grid
        self.block = block
        self.cluster = cluster
        self.dynamic_smem_bytes = dynamic_smem_bytes


# ------------------------------------------------------------------ loops
# T.serial, T.unroll, T.vectorized, T.parallel, T.thread_binding are FormSpecs (tirx/forms.py
# LOOPS), generated with the expression forms below; T.grid and T.broadcast_grid are
# Python-only (several loops at once; the text has no such form, loops print one by one)
def _grid_loops(extents: tuple) -> list:
    loops = []
    for e in extents:
        if isinstance(e, tuple):
            if len(e) != 2:
                raise TypeError("T.grid: a tuple extent is (start, extent)")
            start, ext = e
        else:
            start, ext = 0, e
        if isinstance(ext, _PrimExpr) and not isinstance(start, _PrimExpr):
            start = _convert(start, ext)
        loops.append((start, ext, _ForKind.SERIAL, None, None, None))
    return loops


def grid(*extents: Any) -> _LoopSpec:
    """``for i, j in T.grid(m, n)``: nested serial loops; an extent may be ``(start, extent)``."""
    return _LoopSpec(_grid_loops(extents))


def broadcast_grid(out_shape: Any, *in_shapes: Any) -> _LoopSpec:
    """``for i, i_a, i_b in T.broadcast_grid(C.shape, A.shape, B.shape)``: numpy broadcasting.

    Loops over ``out_shape``; ``i`` is the output index tuple and each ``i_x`` the index
    tuple into an input (right-aligned; size-1 dimensions read index 0).
    """
    out_shape = tuple(out_shape)
    n = len(out_shape)

    def bind(vs: tuple) -> tuple:
        res = [tuple(vs)]
        for shp in in_shapes:
            shp = tuple(shp)
            if len(shp) > n:
                raise ValueError(f"T.broadcast_grid: input rank {len(shp)} exceeds output rank {n}")
            idx = []
            for k, d in enumerate(shp):
                v = vs[n - len(shp) + k]
                one = d == 1 if isinstance(d, int) else isinstance(d, _IntImm) and d.value == 1
                idx.append(_convert(0, v) if one else v)
            res.append(tuple(idx))
        return tuple(res)

    return _LoopSpec(_grid_loops(out_shape), bind, [f"i{k}" for k in range(n)])


# ------------------------------------------------------------------ allocation
def _alloc(name: str, ty: _TensorType, annotations: Any = None) -> _Buffer:
    return _IRBuilder.current().alloc(name, ty, annotations)


def alloc_buffer(shape: Any, dtype: Any = "float32", scope: str = "global", *, strides: Any = None,
                 elem_offset: Any = None, align: int = 0, annotations: Any = None, **extra: Any) -> _Buffer:  # fmt: skip
    """Allocate a tensor in ``scope`` (name from the assignment target)."""
    _no_extra("alloc_buffer", extra)
    return _alloc(_take_name("buf"), Tensor(shape, dtype, scope, strides, elem_offset, align), annotations)


def alloc_shared(shape: Any, dtype: Any = "float32", *, strides: Any = None, align: int = 0,
                 annotations: Any = None, **extra: Any) -> _Buffer:  # fmt: skip
    """Allocate a shared-memory tensor."""
    _no_extra("alloc_shared", extra)
    return _alloc(_take_name("buf"), Tensor(shape, dtype, "shared", strides, None, align), annotations)


def alloc_local(shape: Any, dtype: Any = "float32", *, strides: Any = None, align: int = 0,
                annotations: Any = None, **extra: Any) -> _Buffer:  # fmt: skip
    """Allocate a thread-local tensor."""
    _no_extra("alloc_local", extra)
    return _alloc(_take_name("buf"), Tensor(shape, dtype, "local", strides, None, align), annotations)


def decl_buffer(shape: Any, dtype: Any = "float32", data: Any = None, scope: str | None = None, *,
                strides: Any = None, elem_offset: Any = None, align: int = 0, **extra: Any) -> _Buffer:  # fmt: skip
    """A tensor view over ``data`` (a pointer var); without ``data`` it allocates."""
    _no_extra("decl_buffer", extra)
    name = _take_name("buf")
    if data is None:
        return _alloc(name, Tensor(shape, dtype, scope or "global", strides, elem_offset, align))
    if not isinstance(data, _Var) or not isinstance(data.ty, PointerType):
        raise TypeError(f"T.decl_buffer: data= must be a pointer variable, got {data!r}")
    if scope is not None and str(scope) != data.ty.scope:
        raise TypeError(f"T.decl_buffer: scope={scope!r} differs from the pointer's scope {data.ty.scope!r}")
    ty = Tensor(shape, dtype, data.ty.scope, strides, elem_offset, align)
    return _IRBuilder.current().decl(name, ty, data)


def local_scalar(
    dtype: Any = "float32", init: Any = None, *, name: str | None = None, annotations: Any = None
) -> _Cell:
    """A mutable local scalar (a one-element local tensor), optionally initialized."""
    nm = name or _take_name("scalar")
    b = _IRBuilder.current()
    buf = b.alloc(nm, Tensor((1,), dtype, "local"), annotations)
    if init is not None:
        b.store(buf, (_IntImm(0),), init)
    return _Cell(buf)


def alloc_scalar(dtype: Any = "float32", scope: str = "local", *, annotations: Any = None) -> _Cell:
    """A mutable scalar in ``scope`` (reads load ``[0]``, assignments store)."""
    return _Cell(_alloc(_take_name("scalar"), Tensor((1,), dtype, scope), annotations))


def shared_scalar(dtype: Any = "float32", *, annotations: Any = None) -> _Cell:
    """A mutable scalar in shared memory."""
    return alloc_scalar(dtype, "shared", annotations=annotations)


def decl_scalar(dtype: Any, data: Any, scope: str | None = None) -> _Cell:
    """A mutable scalar view over the pointer ``data``."""
    return _Cell(decl_buffer((1,), dtype, data=data, scope=scope))


smem = alloc_shared


def assign(dst: Any, value: Any) -> None:
    """Store ``value`` into a scalar or tensor element (``T.assign(x, v)``, ``T.assign(A[i], v)``)."""
    if isinstance(dst, _Cell):
        dst = dst.load()
    if not isinstance(dst, _ir.BufferLoad):
        raise TypeError(
            f"T.assign: the destination must be a tensor element or a mutable scalar, got {dst!r}"
        )
    _IRBuilder.current().store(dst.buffer, dst.indices, _e(value))


def static_assert(cond: Any, message: str = "") -> None:
    """A check decided while parsing: ``cond`` must be a Python value or a constant."""
    cond = _e(cond)
    if isinstance(cond, _IntImm):
        cond = cond.value
    if isinstance(cond, _PrimExpr):
        raise TypeError("T.static_assert needs a compile-time condition, got a tirx expression")
    if not cond:
        raise AssertionError(f"static assertion failed{': ' + message if message else ''}")


def _limits(dtype: Any) -> tuple:
    t = _as_prim(dtype)
    if t.is_float:
        if t.bits == 16 and t.kind == "float":
            return -65504.0, 65504.0
        return (
            (-3.4028234663852886e38, 3.4028234663852886e38)
            if t.bits <= 32
            else (-1.7976931348623157e308, 1.7976931348623157e308)
        )
    if t.is_bool:
        return 0, 1
    from ..ir.expr import int_range

    return int_range(t)


def max_value(dtype: Any) -> _PrimExpr:
    """The largest finite value of ``dtype``."""
    return _const(_limits(dtype)[1], _as_prim(dtype))


def min_value(dtype: Any) -> _PrimExpr:
    """The smallest finite value of ``dtype``."""
    return _const(_limits(dtype)[0], _as_prim(dtype))


def infinity(dtype: Any) -> _PrimExpr:
    """``+inf`` of a float dtype."""
    return _const(float("inf"), _as_prim(dtype))


# ------------------------------------------------------------------ expressions
def _e(x: Any) -> Any:
    if isinstance(x, (_Cell, _MetaVar)):
        return x.__tirx_expr__()
    return x


def ceildiv(a: Any, b: Any) -> Any:
    """``(a + b - 1) // b``; plain Python ints fold."""
    a, b = _e(a), _e(b)
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    return _binop(_FloorDiv, _binop(_Sub, _binop(_Add, a, b), 1), b)


def cast(x: Any, dtype: Any) -> _PrimExpr:
    """``T.cast(x, "float32")``: a Cast unless ``x`` already has that dtype."""
    return _convert(_e(x)).astype(dtype)


def _minmax(cls: Any, pyf: Any, args: tuple) -> Any:
    args = tuple(_e(a) for a in args)
    if len(args) < 2:
        raise TypeError(f"T.{pyf.__name__} needs at least two arguments")
    if not any(isinstance(a, _PrimExpr) for a in args):
        return pyf(*args)
    acc = args[0]
    for a in args[1:]:
        acc = _binop(cls, acc, a)
    return acc


def min(*args: Any) -> Any:
    """``T.min(a, b, ...)``."""
    return _minmax(_Min, _builtins.min, args)


def max(*args: Any) -> Any:
    """``T.max(a, b, ...)``."""
    return _minmax(_Max, _builtins.max, args)


def truncmod(a: Any, b: Any) -> _PrimExpr:
    """C's ``%`` (truncating remainder)."""
    return _binop(_Mod, _e(a), _e(b))


def truncdiv(a: Any, b: Any) -> _PrimExpr:
    """C's ``/`` on integers."""
    return _binop(_Div, _e(a), _e(b))


def floordiv(a: Any, b: Any) -> _PrimExpr:
    return _binop(_FloorDiv, _e(a), _e(b))


def floormod(a: Any, b: Any) -> _PrimExpr:
    return _binop(_FloorMod, _e(a), _e(b))


# T.Ramp, T.Broadcast, T.Select, T.Cast, T.Let, T.Call (and T.ramp, T.broadcast, T.select) and the
# loops T.serial ... T.thread_binding: generated from their FormSpecs (tirx/forms.py), which
# the text loader and the printer read too. A loop form gives the header a ``for`` opens.
def _one_loop(head: tuple) -> _LoopSpec:
    return _LoopSpec([head])


def _bind_target(pending: _forms.Pending) -> Any:
    """A binding form (``X = T.alloc_tensor(...)``) completed with the assignment target's name."""
    return pending.emit(_IRBuilder.current(), _take_name("buf"))


_WRAP = {
    "loop": _one_loop,
    "bind": _bind_target,
    "device_entry": lambda r: _DeviceEntrySpec(*r),  # the header the parser opens as a region
    "attr": lambda r: _AttrSpec(*r),
    "stmt": lambda pending: pending.emit(_IRBuilder.current()),  # T.evaluate, T.func_attr: emitted here
}
for _form in _forms.FORMS:
    for _n in (_form.name, *_form.aliases):
        globals()[_n] = _form.function(_e, _n, _WRAP.get(_form.role) or _WRAP.get(_form.name))
        if _n not in __all__:
            __all__.append(_n)
del _form, _n
Tensor: Any = globals()["Tensor"]
Tensor.like = globals()["Buffer"].like = _tensor_like
BufferFrom = _tensor_like
_device_entry_form = globals()["device_entry"]


def device_entry(*values: Any, launch: LaunchConfig | None = None, grid: Any = None, block: Any = None,
                 cluster: Any = None, dynamic_smem_bytes: Any = None, **kw: Any) -> _DeviceEntrySpec:  # fmt: skip
    """The kernel launch region, as a bare statement (the rest of the body goes inside) or ``with``.

    The form (``tirx.forms``) is ``T.device_entry(*values, attrs=...)``, what the text has;
    ``launch=T.cuda.LaunchConfig(...)`` (or ``grid=``, ``block=``, ...; or the config as the one
    positional argument) is Python's spelling of the same values and attrs."""
    if launch is None and grid is not None:
        launch = LaunchConfig(grid, 1 if block is None else block, cluster, dynamic_smem_bytes)
    if launch is None and len(values) == 1 and isinstance(values[0], LaunchConfig):
        launch, values = values[0], ()
    if launch is not None:
        if values:
            raise TypeError("T.device_entry: give either launch=... or positional launch values")
        values, at = _launch_args(launch.grid, launch.block, launch.cluster, launch.dynamic_smem_bytes)
        attrs = kw.get("attrs")
        kw = {**kw, "attrs": _Attrs({**at.to_dict(), **dict(attrs)}) if attrs else at}
    return _device_entry_form(*values, **kw)  # other keywords: the form's (attrs=) or its error


device_entry.__tirx_form__ = _device_entry_form.__tirx_form__  # type: ignore[attr-defined]
device_entry.__signature__ = _inspect.signature(device_entry).replace(  # type: ignore[attr-defined]
    parameters=[
        *(q for q in _inspect.signature(device_entry).parameters.values() if q.kind is not q.VAR_KEYWORD),
        _inspect.Parameter("attrs", _inspect.Parameter.KEYWORD_ONLY, default=None),
    ]
)


def reinterpret(*args: Any, ty: Any = None) -> _PrimExpr:
    """``T.reinterpret(e, ty=T.Ptr(T.float32))`` or ``T.reinterpret(ptr_ty, e)``."""
    if (
        ty is None
        and len(args) == 2
        and (isinstance(args[0], _Type) or hasattr(args[0], "__tirx_type__") or isinstance(args[0], str))
    ):
        ty, args = args[0], (args[1],)
    if ty is None or len(args) != 1:
        raise TypeError(
            "T.reinterpret takes a value and a type: T.reinterpret(e, ty=...) or T.reinterpret(ty, e)"
        )
    return _op.call("reinterpret", _e(args[0]), ty=_as_type(ty, "T.reinterpret type"))


def _typed_ptr(ptype: Any, ptr: Any) -> _PrimExpr:
    ptr = _e(ptr)
    if isinstance(ptr, _Buffer):
        ptr = ptr.data
    pt = getattr(ptr, "ty", None)
    if not isinstance(pt, PointerType):
        raise TypeError(f"expected a pointer expression, got {ptr!r}")
    want = PointerType(_as_type(ptype, "pointer element type"), pt.scope)
    return ptr if pt == want else _op.call("reinterpret", ptr, ty=want)


def ptr_byte_offset(*args: Any) -> _PrimExpr:
    """``T.ptr_byte_offset(ptr, nbytes)``; ``T.ptr_byte_offset(T.float32, ptr, nbytes)`` types it first."""
    if len(args) == 3:
        return _op.call("ptr_byte_offset", _typed_ptr(args[0], args[1]), _e(args[2]))
    return _op.call("ptr_byte_offset", *(_e(a) for a in args))


def tvm_access_ptr(ptype: Any, data: Any, offset: Any, extent: Any = None, rw_mask: Any = None) -> _PrimExpr:
    """A ``ptype``-typed pointer to element ``offset`` of ``data`` (a pointer var or buffer)."""
    dt = _as_prim(ptype, "T.tvm_access_ptr type")
    p = _typed_ptr(dt, data)
    off = _e(offset)
    if isinstance(off, int) and off == 0:
        return p
    return _op.call(
        "ptr_byte_offset", p, _binop(_Mul, off, dt.bytes) if isinstance(off, _PrimExpr) else off * dt.bytes
    )


def compute(shape: Any, fcompute: Any, *, out: Any = None, dtype: Any = None, scope: str = "global",
            name: str | None = None) -> _Buffer:  # fmt: skip
    """``C = T.compute((m, n), lambda i, j: ...)``: the loop nest storing ``fcompute`` into C.

    Without ``out=`` a tensor named after the assignment target is allocated in
    ``scope`` (dtype from ``dtype=`` or the value).
    """
    b = _IRBuilder.current()
    nm = name or _take_name("compute")
    shape = _shape(shape)
    names = getattr(fcompute, "arg_names", None)
    if names is None:
        code = fcompute.__code__
        names = list(code.co_varnames[: code.co_argcount])
    if len(names) != len(shape):
        raise TypeError(f"T.compute: the lambda takes {len(names)} indices for a rank-{len(shape)} shape")
    holder: dict = {"buf": out}

    def rec(k: int, vs: list) -> None:
        if k == len(shape):
            val = _e(fcompute(*vs))
            buf = holder["buf"]
            if buf is None:
                dt = _as_prim(dtype) if dtype is not None else _convert(val).ty
                buf = holder["buf"] = b.make_buffer(nm, Tensor(shape, dt, scope))
            b.store(buf, tuple(vs), val)
            return
        ext = shape[k]
        with b.for_(names[k], _convert(0, ext) if isinstance(ext, _PrimExpr) else 0, ext) as v:
            rec(k + 1, [*vs, v])

    with b.block() as fr:
        rec(0, [])
    from ..ir import AllocBuffer as _AllocBuffer

    if out is None:
        b.emit(_AllocBuffer(holder["buf"]))
    for s in fr.stmts:
        b.emit(s)
    return holder["buf"]


# ------------------------------------------------------------------ TVM spellings
boolean = globals()["bool"]
f16, f32, f64, bf16 = float16, float32, float64, bfloat16  # noqa: F821 - set from DTYPE_NAMES above
i8, i16, i32, i64 = int8, int16, int32, int64  # noqa: F821
u8, u16, u32, u64 = uint8, uint16, uint32, uint64  # noqa: F821


def bitwise_and(a: Any, b: Any) -> _PrimExpr:
    return _binop(_ir.BitAnd, _e(a), _e(b))


def bitwise_or(a: Any, b: Any) -> _PrimExpr:
    return _binop(_ir.BitOr, _e(a), _e(b))


def bitwise_xor(a: Any, b: Any) -> _PrimExpr:
    return _binop(_ir.BitXor, _e(a), _e(b))


def bitwise_not(a: Any) -> _PrimExpr:
    return ~_convert(_e(a))


def shift_left(a: Any, b: Any) -> _PrimExpr:
    return _binop(_ir.Shl, _e(a), _e(b))


def shift_right(a: Any, b: Any) -> _PrimExpr:
    return _binop(_ir.Shr, _e(a), _e(b))


def logical_and(a: Any, b: Any) -> _PrimExpr:
    return _ir.And(_convert(_e(a)), _convert(_e(b)))


def logical_or(a: Any, b: Any) -> _PrimExpr:
    return _ir.Or(_convert(_e(a)), _convert(_e(b)))


def logical_not(a: Any) -> _PrimExpr:
    return _ir.Not(_convert(_e(a)))


# ------------------------------------------------------------------ op namespaces
class OpNamespace:
    """``T.cuda``, ``T.ptx``, ...: members resolve through the op table by dotted name."""

    def __init__(self, prefix: str, extra: dict | None = None):
        self._prefix = prefix
        if extra:
            self.__dict__.update(extra)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        v = _resolve(f"{self._prefix}.{name}")
        if v is None:
            raise AttributeError(f"T.{self._prefix} has no member {name!r} (no op T.{self._prefix}.{name})")
        self.__dict__[name] = v
        return v

    def __repr__(self) -> str:
        return f"T.{self._prefix}"


def _resolve(name: str) -> Any:
    o = _op.lookup(name)
    if o is not None:
        # an op may give its own script surface (the PTX table's modifier chains)
        return _op.impl("script", o) or o
    pre = name + "."
    if any(k.startswith(pre) for k in _op.all_ops()):
        return OpNamespace(name)
    return None


cuda = OpNamespace("cuda", {"LaunchConfig": LaunchConfig})


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    v = None
    try:
        t = _parse_dtype(name)
        if isinstance(t, _PrimType):
            v = DType(t)
    except ValueError:
        v = None
    if v is None:
        v = _resolve(name)
    if v is None:
        raise AttributeError(f"T.{name} is not defined (not a tirx script name nor a declared op)")
    globals()[name] = v
    return v
