"""The ``T`` namespace: ``from tirx.script import tirx as T`` (same spelling as ``tvm_tirx``).

Intrinsics are not listed here: ``T.<name>`` and ``T.<ns>.<name>`` resolve through the op
table (``tirx.ir.op.lookup``), so ``T.exp``, ``T.cuda.thread_idx``, ``T.ptx.mapa`` ... are
the declared ops. What is defined here is the language: decorators, types, loops,
allocations, launch configuration and expression constructors.
"""

from __future__ import annotations

import builtins as _builtins
import functools as _functools
import inspect as _inspect
import math as _math
from collections.abc import Callable
from typing import Any

from tirx.surface import forms as _forms
from tirx.surface.builder import IRBuilder as _IRBuilder

from .. import ir as _ir
from ..ir import Buffer as _Buffer
from ..ir import Div as _Div
from ..ir import FloorDiv as _FloorDiv
from ..ir import FloorMod as _FloorMod
from ..ir import IntImm as _IntImm
from ..ir import Max as _Max
from ..ir import Min as _Min
from ..ir import Mod as _Mod
from ..ir import PrimExpr as _PrimExpr
from ..ir import PrimType as _PrimType
from ..ir import TensorType as _TensorType
from ..ir import Var as _Var
from ..ir import op as _op
from ..ir.fold import cast as _fold_cast
from ..ir.fold import combine as _combine
from ..ir.types import DTYPE_NAMES as _DTYPE_NAMES
from ..ir.types import DTYPE_SHORT as _DTYPE_SHORT
from ..ir.types import PointerType as _PointerType
from ..ir.types import as_prim as _as_prim
from ..ir.types import handle as _handle_type
from ..ir.types import handle_of as _handle_of
from ..ir.types import parse_dtype as _parse_dtype
from ..ir.types import void
from ..surface.cells import new_scalar as _new_scalar
from ..surface.helpers import (
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    ceildiv,
    infinity,
    logical_and,
    logical_not,
    logical_or,
    max_value,
    min_value,
    shift_left,
    shift_right,
)
from ..surface.helpers import limits as _limits
from ..surface.launch_config import KernelAttributes, LaunchConfig
from ..surface.launch_config import entry_launch as _entry_launch
from . import parser as _p
from .decorators import autotune, function, inline, ir_module, jit, macro
from .intrin import call_intrin, llvm_lookup_intrinsic_id, tensor_data_ptr
from .parser import _FOLDING_HELPERS
from .parser import AttrSpec as _AttrSpec
from .parser import Cell as _Cell
from .parser import DeviceEntrySpec as _DeviceEntrySpec
from .parser import LoopSpec as _LoopSpec
from .parser import MetaVar as _MetaVar
from .parser import fold_new as _fold_new
from .parser import take_name as _take_name

__all__ = [  # the language; ops (T.exp, T.cuda.*, T.ptx.*) and dtypes resolve through the op/dtype tables;
    # the forms (T.Ramp, T.alloc_shared, T.grid, ...) are appended where they are generated
    "BufferFrom", "DType", "LaunchConfig", "LetAnn",
    "alloc_scalar",
    "assign", "autotune", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "boolean",
    "broadcast_grid", "call_intrin", "ceildiv", "compute", "constexpr", "cuda", "decl_buffer",
    "decl_scalar", "device_entry", "dynamic", "floordiv", "floormod",
    "function", "handle", "infinity", "inline", "ir_module", "jit", "let", "llvm_lookup_intrinsic_id",
    "local_scalar", "logical_and", "logical_not", "logical_or", "macro", "max", "max_value", "meta_var",
    "min", "min_value", "prim_func",
    "shared_scalar", "shift_left", "shift_right", "static_assert", "tensor_data_ptr",
    "truncdiv", "truncmod", "void",
]  # fmt: skip

_const, _convert = _ir.const, _ir.convert
# T.min / T.truncdiv / T.bitwise_and ...: two operands of different dtypes match as TIRx's do
_binop = _combine

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
        if value is None:  # TIRx's unnamed variable (``v = T.int32()``, then ``T.Bind(v, ...)``)
            return _Var("", self.ty)
        if isinstance(value, _Cell):
            value = value.load()
        if isinstance(value, _PrimExpr):  # a constant folds, as TIRx's dtype call folds it
            return value if value.ty == self.ty else _fold_cast(self.ty, value)
        if isinstance(value, str):
            value = float(value) if self.ty.is_float else int(value)
        elif (
            self.ty.is_float
            and self.ty.lanes == 1
            and isinstance(value, (int, float))
            and _math.isfinite(value)
        ):
            lo, hi = _limits(self.ty)
            if not lo <= value <= hi:  # TIRx refuses it too; it would be inf (or saturate) silently
                raise ValueError(
                    f"T.{self.ty.name}({value!r}): the literal is beyond {self.ty.name}'s finite range "
                    f"[{lo!r}, {hi!r}] (write T.{self.ty.name}('inf') for an infinity)"
                )
        return _const(value, self.ty)

    def __getitem__(self, shape: Any) -> Any:
        """``T.float32[4]``: the annotation of a local tensor (``acc: T.float32[4]``)."""
        return _p.ArrayAnn(self.ty, shape if isinstance(shape, tuple) else (shape,))

    def __eq__(self, other: object) -> _builtins.bool:
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
    globals()[_n] = DType(_as_prim(_n))  # every DTYPE_NAMES entry is a PrimType
bool = globals()["bool"]


class _Handle:
    """``T.handle``: an opaque pointer type (``T.Ptr(T.void)``); called, TIRx's pointer type
    constructor: ``T.handle("float32", "shared")`` is ``T.Ptr(T.float32, "shared")`` and
    ``T.handle("tensormap")`` a TMA descriptor, ``T.Ptr(T.TensorMap())``."""

    __slots__ = ()

    def __tirx_type__(self) -> _PointerType:
        return _handle_type

    def __call__(self, dtype: Any = None, storage_scope: str = "global") -> _PointerType:
        return _handle_of(dtype, storage_scope)

    def __eq__(self, other: object) -> _builtins.bool:
        return isinstance(other, _Handle) or other == _handle_type

    def __hash__(self) -> int:
        return hash(_handle_type)

    def __repr__(self) -> str:
        return "T.handle"


handle = _Handle()


# the markers the script parser recognizes (defined in parser_values.py, so the parser needs no import of
# this module: tests/test_layering.py)
LetAnn, let, constexpr = _p.LetAnn, _p.let, _p.constexpr


def dynamic(name: str, dtype: Any = "int32") -> _Var:
    """A symbolic dimension: ``n = T.dynamic("n")``, ``T.dynamic("D", "int64")``."""
    return _Var(name, _as_prim(dtype, "T.dynamic dtype"))


def meta_var(value: Any) -> _MetaVar:
    """``x = T.meta_var(v)`` binds ``x`` to the Python value ``v`` itself (no Bind)."""
    return _MetaVar(value)


# ------------------------------------------------------------------ tensors
def _shape(shape: Any) -> tuple:
    if isinstance(shape, (list, tuple)):
        return tuple(shape)
    if isinstance(shape, (int, _PrimExpr)):
        return (shape,)
    return tuple(shape)


# T.Tensor (alias T.Buffer) and T.Ptr are FormSpecs (tirx/surface/forms.py TYPES), generated with the
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


# ------------------------------------------------------------------ loops
# T.serial, T.unroll, T.vectorized, T.parallel, T.thread_binding and T.grid are FormSpecs
# (tirx/surface/forms.py LOOPS, GRID), generated with the expression forms below; T.broadcast_grid is
# Python-only (it binds index tuples; the text has no such form, loops print one by one)
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

    heads = _forms.GRID.call(list(out_shape), {}, None, "T.broadcast_grid") if n else ()
    return _LoopSpec(list(heads), bind, [f"i{k}" for k in range(n)])


# ------------------------------------------------------------------ allocation
# T.alloc_shared (T.smem), T.alloc_local, T.alloc_buffer, T.decl_buffer and T.cast are derived
# forms (tirx/surface/forms.py DERIVED): declared once, built and printed as T.alloc_tensor /
# T.decl_tensor / T.Cast; generated with the other forms below. The mutable scalars are
# Python-only: reading one loads [0], which the text writes out.
def _alloc(name: str, ty: _TensorType, annotations: Any = None) -> _Buffer:
    return _IRBuilder.current().alloc(name, ty, annotations)


def local_scalar(
    dtype: Any = "float32", init: Any = None, *, name: str | None = None, annotations: Any = None
) -> _Cell:
    """A mutable local scalar (a one-element local tensor), optionally initialized."""
    return _new_scalar(_IRBuilder.current(), name or _take_name("scalar"), "local", dtype, init, annotations)


def alloc_scalar(dtype: Any = "float32", scope: str = "global", *, annotations: Any = None) -> _Cell:
    """A mutable scalar in ``scope`` (reads load ``[0]``, assignments store). The default scope
    is TIRx's, ``"global"``; in a CUDA kernel use ``T.local_scalar`` or ``scope="local"``."""
    return _new_scalar(_IRBuilder.current(), _take_name("scalar"), scope, dtype, None, annotations)


def shared_scalar(dtype: Any = "float32", *, annotations: Any = None) -> _Cell:
    """A mutable scalar in shared memory."""
    return alloc_scalar(dtype, "shared", annotations=annotations)


def decl_scalar(dtype: Any, data: Any, scope: str | None = None) -> _Cell:
    """A mutable scalar view over the pointer ``data``."""
    return _Cell(decl_buffer((1,), dtype, data=data, scope=scope))


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


# ------------------------------------------------------------------ expressions
def _e(x: Any) -> Any:
    if isinstance(x, (_Cell, _MetaVar)):
        return x.__tirx_expr__()
    return x


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


def min(*args: Any, **kw: Any) -> Any:
    """``T.min(a, b, ...)`` (``a=``, ``b=``: TIRx's names of the two)."""
    return _minmax(_Min, _builtins.min, _ab("min", args, kw))


def max(*args: Any, **kw: Any) -> Any:
    """``T.max(a, b, ...)`` (``a=``, ``b=``: TIRx's names of the two)."""
    return _minmax(_Max, _builtins.max, _ab("max", args, kw))


def _ab(name: str, args: tuple, kw: dict) -> tuple:
    if not kw:
        return args
    bad = set(kw) - {"a", "b"}
    if bad or len(args) + len(kw) != 2 or ("a" in kw and args):
        what = f"unexpected keyword argument {sorted(bad)[0]!r}" if bad else "two values: a and b"
        raise TypeError(f"T.{name}: {what}")
    return (*args, kw["a"], kw["b"]) if not args else (args[0], kw["b"])


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


def _raw_unary(cls: Any) -> Callable[[Any], _PrimExpr]:
    def build(a: Any) -> _PrimExpr:
        return cls(_convert(_e(a)))

    return build


def _raw_binary(cls: Any) -> Callable[[Any, Any], _PrimExpr]:
    def build(a: Any, b: Any) -> _PrimExpr:
        return _binop(cls, _e(a), _e(b))

    return build


# TIRx's explicit node constructors (T.Add(a, b), ..., T.Not(a), T.BitwiseNot(a)): the node as
# written, never folded (the operators fold, tirx/ir/fold.py); the printer writes one where
# the operator spelling would fold
def _raw_node(cls: Any, name: str) -> Any:
    build = _raw_unary(cls) if cls in (_ir.Not, _ir.BitNot) else _raw_binary(cls)
    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"``T.{name}(...)``: a ``{cls.__name__}`` node, never folded."
    return build


for _cls, _n in (*_ir.fold.RAW_NAMES.items(), (_ir.And, "And"), (_ir.Or, "Or"),  # tirx.ir.fold: loaded by .parser
                 (_ir.Not, "Not"), (_ir.BitNot, "BitwiseNot")):  # fmt: skip
    globals()[_n] = _raw_node(_cls, _n)
    __all__.append(_n)
del _cls, _n


# T.Ramp, T.Broadcast, T.Select, T.Cast, T.Let, T.Call (and T.ramp, T.broadcast, T.select) and the
# loops T.serial ... T.thread_binding: generated from their FormSpecs (tirx/surface/forms.py), which
# the text loader and the printer read too. A loop form gives the header a ``for`` opens.
def _one_loop(head: tuple) -> _LoopSpec:
    return _LoopSpec([head])


def _bind_target(pending: _forms.Pending) -> Any:
    """A binding form (``X = T.alloc_tensor(...)``) completed with the assignment target's name."""
    return pending.emit(_IRBuilder.current(), _take_name("buf"))


_WRAP: dict[str, Callable[[Any], Any]] = {
    "loop": _one_loop,
    "bind": _bind_target,
    "loops": lambda heads: _LoopSpec(list(heads)),  # T.grid
    "device_entry": lambda r: _DeviceEntrySpec(*r),  # the header the parser opens as a region
    "attr": lambda r: _AttrSpec(*r),
    "stmt": lambda pending: pending.emit(_IRBuilder.current()),  # T.evaluate, T.func_attr: emitted here
}


_TYPE_FORMS = (_forms.NONE_TYPE, _forms.TENSOR_MAP, _forms.PRIM_TYPE)
for _form in (*_forms.FORMS, *_forms.DERIVED, _forms.GRID, *_TYPE_FORMS):
    for _n in (_form.name, *_form.aliases):
        globals()[_n] = _form.function(_e, _n, _WRAP.get(_form.role) or _WRAP.get(_form.name))
        if _n not in __all__:
            __all__.append(_n)
del _form, _n
Tensor: Any = globals()["Tensor"]
decl_buffer: Any = globals()["decl_buffer"]
Tensor.like = globals()["Buffer"].like = _tensor_like
BufferFrom = _tensor_like
_device_entry_form = globals()["device_entry"]


def device_entry(*values: Any, launch: LaunchConfig | None = None, grid: Any = None, block: Any = None,
                 cluster: Any = None, dynamic_smem_bytes: Any = None, kernel_attrs: KernelAttributes | None = None,
                 backend_config: Any = None, **kw: Any) -> _DeviceEntrySpec:  # fmt: skip
    """The kernel launch region, as a bare statement (the rest of the body goes inside) or ``with``.

    The form (``tirx.surface.forms``) is ``T.device_entry(*values, attrs=...)``, what the text has;
    ``launch=T.cuda.LaunchConfig(...)`` (or ``grid=``, ``block=``, ...; or the config as the one
    positional argument) is the same values and attrs (``tirx.script.launch_config``, which the
    text parser shares). ``backend_config=`` (TIRx's per-entry CUDA compile settings) is checked
    and stored as TIRx stores it: ``attrs["backend_config"]``, compact JSON."""
    values, kw = _entry_launch(values, kw, launch=launch, grid=grid, block=block, cluster=cluster,
                               dynamic_smem_bytes=dynamic_smem_bytes, kernel_attrs=kernel_attrs,
                               backend_config=backend_config)  # fmt: skip
    return _device_entry_form(*values, **kw)  # other keywords: the form's (attrs=) or its error


device_entry.__tirx_form__ = _device_entry_form.__tirx_form__  # type: ignore[attr-defined]
device_entry.__signature__ = _inspect.signature(device_entry).replace(  # type: ignore[attr-defined]
    parameters=[
        *(q for q in _inspect.signature(device_entry).parameters.values() if q.kind is not q.VAR_KEYWORD),
        _inspect.Parameter("attrs", _inspect.Parameter.KEYWORD_ONLY, default=None),
    ]
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
# TVM's short spellings (T.bf16, T.i32, T.boolean; tirx.ir.types.DTYPE_SHORT, which the text reads too)
boolean, f16, f32, f64, bf16, i8, i16, i32, i64, u8, u16, u32, u64 = (
    globals()[_DTYPE_SHORT[_n]]
    for _n in ("boolean", "f16", "f32", "f64", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
)


# ------------------------------------------------------------------ op namespaces
class OpNamespace:
    """``T.cuda``, ``T.ptx``, ...: members resolve through the op table by dotted name."""

    def __init__(self, prefix: str, extra: dict | None = None):
        self._prefix = prefix
        if extra:
            self.__dict__.update(extra)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):  # Python's protocol names (__wrapped__, ...)
            raise AttributeError(name)
        v = _resolve(f"{self._prefix}.{name}")
        if v is None:
            raise AttributeError(
                f"T.{self._prefix} has no member {name!r} (no op T.{self._prefix}.{name})"
                + _did_you_mean(name, self.__dir__())
            )
        self.__dict__[name] = v
        return v

    def __getitem__(self, text: Any) -> Any:
        """``T.ptx["cp.async.ca.shared.global.L2::128B"]``: a PTX instruction by its text, the
        same chain as ``T.ptx.cp.async_.ca.shared.global_.L2__128B`` (TIRx's subscript form)."""
        if self._prefix != "ptx":
            raise TypeError(f'T.{self._prefix} is not subscriptable (only T.ptx["<instruction>"] is)')
        from ..ops.ptx_table import instruction

        return instruction(text)

    __iter__ = None  # subscripting names instructions: the namespace is not a sequence

    def __dir__(self) -> list[str]:
        """The members: the next name segment of every op, alias and marker under this
        namespace, and the namespace's own Python members (editors complete from this)."""
        pre = self._prefix + "."
        own = {k for k in self.__dict__ if not k.startswith("_")}
        return sorted(own | {n[len(pre) :].split(".", 1)[0] for n in _op.script_names() if n.startswith(pre)})

    def __repr__(self) -> str:
        return f"T.{self._prefix}"


# CUDA's spellings of ops tirx names otherwise (a misspelling's first suggestion)
_CUDA_SPELLINGS = {"syncthreads": "cta_sync", "__syncthreads": "cta_sync", "threadIdx": "thread_idx"}


def _did_you_mean(name: str, candidates: list[str]) -> str:
    """'; did you mean ...?' naming the CUDA spelling's tirx op and the closest members."""
    import difflib

    hits = [_CUDA_SPELLINGS[name]] if _CUDA_SPELLINGS.get(name) in candidates else []
    hits += [c for c in difflib.get_close_matches(name, candidates, n=3, cutoff=0.6) if c not in hits]
    return f"; did you mean {', '.join(repr(h) for h in hits[:3])}?" if hits else ""


def _resolve(name: str) -> Any:
    o = _op.lookup(name)
    if o is not None:
        # an op may give its own script surface (the PTX table's modifier chains)
        return _op.impl("script", o) or o
    a = _op.lookup_alias(name)
    if a is not None:  # a spelling that builds another op's call (T.cuda.warp_sum)
        return a
    m = _op.lookup_marker(name)
    if m is not None:  # an operand tag with no IR (T.ptx.SINK)
        return m
    pre = name + "."
    if any(k.startswith(pre) for k in _op.all_ops()) or any(k.startswith(pre) for k in _op.aliases()):
        return OpNamespace(name)
    return None


from . import cuda_names as _cuda_names  # noqa: E402 - needs OpNamespace

# T.cuda: the ops under cuda.*, the launch classes and TIRx's Python-only members (tirx/script/cuda_names.py)
cuda = OpNamespace("cuda", _cuda_names.names(OpNamespace))

# layouts (tirx/surface/layout.py, which the text reads too; the nodes are tirx.ir.layout's)
from ..surface.layout import Axis, ComposeLayout, Iter, Layout, R, S, TileLayout  # noqa: E402
from ..surface.layout import CudaAxes as _CudaAxes  # noqa: E402
from ..surface.layout import cuda_layout as _cuda_layout  # noqa: E402

cuda.__dict__.update({"Axis": _CudaAxes(), "layout": _cuda_layout})

# T.nvshmem, and TIRx's classes of it and of its scoped members under T.cuda (tirx/ops/nvshmem.py)
from ..ops import nvshmem as _nvshmem_ops  # noqa: E402


class NVSHMEMNamespace(OpNamespace):
    """``T.nvshmem``: the NVSHMEM device ops (``T.cuda.NVSHMEMNamespace()`` is the same namespace)."""

    def __init__(self) -> None:
        super().__init__("nvshmem")


nvshmem = NVSHMEMNamespace()
cuda.__dict__.update(
    {"NVSHMEMNamespace": NVSHMEMNamespace}
    | {n: getattr(_nvshmem_ops, n) for n in _nvshmem_ops.__all__ if n.startswith("NVSHMEM")}
)
__all__ += ["Axis", "ComposeLayout", "Iter", "Layout", "R", "S", "TileLayout"]

# TIRx's IR class and type names (T.Var, T.IntImm, T.Range, T.ptr, T.Tuple, ...): ir_names.py
from . import ir_names as _ir_names  # noqa: E402

for _n in _ir_names.__all__:
    globals()[_n] = getattr(_ir_names, _n)
    __all__.append(_n)
del _n
# T.Any is TIRx's top type (T.Any()); this module's annotations keep typing.Any (they are strings)
globals()["Any"] = _ir_names.AnyType
__all__.append("Any")


def __dir__() -> list[str]:
    """The script names (``__all__``, the dtypes, the ops and op namespaces): what an editor should
    complete after ``T.``, without this module's imports and helpers."""
    return sorted({*__all__, *_DTYPE_NAMES, *(n.split(".", 1)[0] for n in _op.script_names())})


def __getattr__(name: str) -> Any:
    if name.startswith("__") and name.endswith("__"):  # Python's protocol names: not ours
        raise AttributeError(name)
    v = None
    why = ""
    try:
        t = _parse_dtype(name)
        if isinstance(t, _PrimType):
            v = DType(t)
    except ValueError as e:
        why = f": {e}" if "lanes" in str(e) else ""  # a vector past TIRx's lane limit
    if v is None:
        v = _resolve(name)
    if v is None:
        raise AttributeError(f"T.{name} is not defined (not a tirx script name nor a declared op){why}")
    if not (isinstance(v, DType) and v.ty.lanes > 1):  # vector dtypes: unbounded names, not kept
        globals()[name] = v
    return v


# TIRx's builder API (T.IRBuilder, T.function_, T.arg_, T.if_, T.for_, T.setitem_, ... and the
# namespaces T.ir_builder, T.parser_protocol, T.frame, T.op, T.utils, T.ir): tirx/script/protocol
from .protocol import t_exports as _protocol_exports  # noqa: E402

globals().update(_protocol_exports())
__all__ += [n for n in _protocol_exports() if n not in __all__]


def _folding(f: Callable[..., Any]) -> Callable[..., Any]:
    """TIRx's helpers that fold as they build (``T.cast(T.int32(0), "uint32")`` is
    ``T.uint32(0)``) fold wherever they are called: in host code and plain helpers as in a
    kernel body, where the parser folds them too (``tirx.script.parser._FOLDING_HELPERS``)."""

    def helper(*args: Any, **kwargs: Any) -> Any:
        r = f(*args, **kwargs)
        if isinstance(r, _PrimExpr):
            r = _fold_new(r, (*args, *kwargs.values()))
        return r

    return _functools.wraps(f)(helper)  # name, doc, signature, __tirx_form__ stay f's


for _name in _FOLDING_HELPERS:
    if callable(globals().get(_name)):
        globals()[_name] = _folding(globals()[_name])
