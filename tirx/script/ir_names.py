"""TIRx's IR class and type names in ``T`` (``T.Var``, ``T.IntImm``, ``T.Range``, ``T.ptr``, ...).

Each name means what it means in TIRx (apache-tvm-tirx 0.1.0a4), mapped onto tirx's own IR:
a constructor of the tirx node or type where tirx has the concept (``T.IntImm("int32", 3)``
is tirx's ``IntImm``), a type of ``tirx.ir.host_types`` where TIRx has a type tirx's kernels
do not (``T.Tuple``), or a Python-side value where TIRx's object only lives in Python
(``T.Range``, ``T.Lambda``, ``T.index_map``, ``T.meta_class``). ``T.Shuffle`` is an IR node
(``tirx/ir/shuffle.py``) with its form in ``tirx.surface.forms``. Where tirx has no such concept the
name gives the closest equivalent and docs/tirx_compat.md says how it differs.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable, Iterator
from typing import Any, cast

from tirx.surface.forms import range_extent as _range_extent
from tirx.surface.helpers import float_imm as _float_imm
from tirx.surface.helpers import int_imm as _int_imm

from .. import ir as _ir
from ..ir import op as _op
from ..ir.fold import fold as _fold
from ..ir.host_types import (
    AnyType,
    FuncType,
    MissingType,
    OpaqueType,
    StringType,
    TensorRegionType,
    TupleType,
)
from ..ir.types import PointerType as _PointerType
from ..ir.types import PrimType as _PrimType
from ..ir.types import TensorType as _TensorType
from ..ir.types import Type
from ..ir.types import VoidType as _VoidType
from ..ir.types import as_type as _as_type
from ..ir.visitor import Mutator as _Mutator
from .parser_values import LetAnn as LetAnnotation

__all__ = [
    "MISSING", "AnyType", "Bind", "CallEffectKind", "FloatImm", "Func", "FuncType", "GenericConst",
    "IntImm", "Lambda", "LetAnnotation", "MemoryScope", "Missing", "MissingType", "Op", "Opaque", "Optional",
    "Prim", "PrimType", "Range", "String", "StringImm", "StringType", "TensorLoad", "TensorRegion",
    "TensorRegionType", "ThreadScope", "Tuple", "Type", "Var", "index_map", "make_node",
    "meta_class", "ptr", "target",
]  # fmt: skip


def _unwrap(x: Any) -> Any:
    """The frontend's mutable scalars and meta vars as expressions."""
    f = getattr(x, "__tirx_expr__", None)
    return f() if f is not None else x


def _expr(x: Any, what: str, like: Any = None) -> _ir.PrimExpr:
    x = _unwrap(x)
    if isinstance(x, _ir.PrimExpr):
        return x
    if type(x) in (int, float, bool):
        return _ir.convert(x, like if isinstance(like, _ir.PrimExpr) else None)
    raise TypeError(f"{what} must be an expression, got {type(x).__name__}")


# ------------------------------------------------------------------ classes that construct
class _Ctor(type):
    """A class standing for tirx's own class(es): calling it constructs the tirx node or type
    (``_build``), ``isinstance`` tests against the tirx classes (``_of``)."""

    _of: tuple = ()
    _build: Callable[..., Any]  # each class's constructor (a staticmethod)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls._of)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._build(*args, **kwargs)

    @property
    def __signature__(cls) -> inspect.Signature:  # help(T.Var) shows the constructor's parameters
        return inspect.signature(cls._build)


class Var(metaclass=_Ctor):
    """``T.Var(name, ty)``: a variable (tirx's ``Var``): a scalar dtype or a ``T.Ptr`` type.

    As a parameter annotation (``n: T.Var("n", "int32")``) it gives the parameter its type,
    as in TIRx. TIRx lets the type be left out (its ``T.Missing()``); tirx needs it."""

    _of = (_ir.Var,)

    @staticmethod
    def _build(
        name: str | None = None, ty: Any = None, *, name_hint: str | None = None, span: Any = None
    ) -> Any:
        nm = name if name is not None else name_hint
        if nm is None:
            nm = "v"
        if not isinstance(nm, str):
            raise TypeError(f"T.Var: name must be a str, got {type(nm).__name__}")
        if ty is None:
            raise TypeError("T.Var: ty is required (tirx has no missing type), e.g. T.Var('n', 'int32')")
        if isinstance(ty, _TensorType):
            raise TypeError("T.Var: ty must be a scalar or pointer type; a tensor is a T.Tensor parameter")
        t = _as_type(ty, "T.Var ty")
        if not isinstance(t, (_PrimType, _PointerType)):
            raise TypeError(f"T.Var: ty must be a scalar or pointer type, got {t}")
        return _ir.Var(nm, t, span=span)


class IntImm(metaclass=_Ctor):
    """``T.IntImm(ty, value)``: an integer (or bool) constant; ValueError when it does not fit."""

    _of = (_ir.IntImm,)

    _build = staticmethod(_int_imm)


class FloatImm(metaclass=_Ctor):
    """``T.FloatImm(ty, value)``: a float constant of a float dtype."""

    _of = (_ir.FloatImm,)

    _build = staticmethod(_float_imm)


class StringImm(metaclass=_Ctor):
    """``T.StringImm(value)``: a string literal (in tirx its type is ``handle``, a ``char*``)."""

    _of = (_ir.StringImm,)

    @staticmethod
    def _build(value: Any, span: Any = None) -> Any:
        if not isinstance(value, str):
            raise TypeError(f"T.StringImm: value must be a str, got {type(value).__name__}")
        return _ir.StringImm(value, span=span)


class Bind(metaclass=_Ctor):
    """``T.Bind(var, value)``: binds an existing ``T.Var`` for the statements after it. As a
    kernel statement it is emitted where it stands (TIRx's meaning)."""

    _of = (_ir.Bind,)

    @staticmethod
    def _build(var: Any, value: Any, span: Any = None) -> Any:
        if not isinstance(var, _ir.Var):
            raise TypeError(f"T.Bind: var must be a T.Var, got {type(var).__name__}")
        v = _expr(value, "T.Bind value", var if isinstance(var.ty, _PrimType) else None)
        if isinstance(var.ty, _PrimType) and isinstance(v.ty, _PrimType) and v.ty != var.ty:
            raise TypeError(f"T.Bind: value dtype {v.ty} differs from the var's dtype {var.ty}")
        return _ir.Bind(var, v, span=span)


class PrimType(metaclass=_Ctor):
    """``T.PrimType("float32x4")`` (also ``T.Prim``): a primitive dtype; ``"void"`` is ``T.void``
    (TIRx's void sentinel is a PrimType)."""

    _of = (_PrimType, _VoidType)

    @staticmethod
    def _build(dtype: Any) -> Any:
        t = _as_type(dtype, "T.PrimType dtype")
        if not isinstance(t, (_PrimType, _VoidType)):
            raise TypeError(f"T.PrimType: {dtype!r} is not a primitive dtype")
        return t


Prim = PrimType


class Tuple(metaclass=_Ctor):
    """``T.Tuple(T.int32, T.float32)``: a tuple type (``tirx.ir.host_types.TupleType``);
    ``T.Tuple()`` is TIRx's unit type, tirx's ``T.void`` (as the text loader reads it: TIRx
    prints a void call's type so)."""

    _of = (TupleType, _VoidType)

    @staticmethod
    def _build(*fields: Any) -> Any:
        return TupleType(fields) if fields else _as_type("void")


class Func(metaclass=_Ctor):
    """``T.Func([arg types], ret_type)`` (also ``T.FuncType``): a function type."""

    _of = (FuncType,)

    @staticmethod
    def _build(arg_types: Any, ret_type: Any) -> Any:
        return FuncType(arg_types, ret_type)


String = StringType
Missing = MissingType
Opaque = OpaqueType


class _MissingValue:
    """``T.MISSING``: TIRx's "no value given" sentinel (not ``None``, which may be a value)."""

    __slots__ = ()
    _one: _MissingValue | None = None

    def __new__(cls) -> _MissingValue:
        if cls._one is None:
            cls._one = object.__new__(cls)
        return cls._one

    def __repr__(self) -> str:
        return "<MISSING>"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "MISSING"


MISSING = _MissingValue()


# ------------------------------------------------------------------ constants of other types
# (T.dtype / T.DataTypeImm: the form tirx.surface.forms "dtype", a DataTypeImm node)
def GenericConst(ty: Any, value: Any, span: Any = None) -> Any:
    """``T.GenericConst(ty, value)``: TIRx's literal of a non-primitive type. tirx has no
    non-primitive constants, and TIRx itself refuses primitive ones here."""
    raise TypeError(
        "T.GenericConst: tirx has no constants of non-primitive types; primitive literals are "
        "T.IntImm / T.FloatImm / T.StringImm (TIRx refuses them here too)"
    )


# ------------------------------------------------------------------ ranges, loads, regions
class Range:
    """``T.Range(begin, end)`` / ``T.Range(extent)``: the half-open interval ``[begin, end)``,
    stored as ``begin`` and ``extent`` (a value for loop bounds and regions; tirx's loops
    store start and extent themselves, so it is not an IR node)."""

    __slots__ = ("begin", "extent")

    def __init__(self, begin: Any, end: Any = None, span: Any = None):
        if end is None:
            begin, end = 0, begin
        b, e = _unwrap(begin), _unwrap(end)
        if isinstance(b, _ir.PrimExpr) or isinstance(e, _ir.PrimExpr):
            b = _expr(b, "T.Range begin", e if isinstance(e, _ir.PrimExpr) else None)
            e = _expr(e, "T.Range end", b)
        else:
            b, e = _expr(b, "T.Range begin"), _expr(e, "T.Range end")
        for x, w in ((b, "begin"), (e, "end")):
            if not (isinstance(x.ty, _PrimType) and x.ty.is_int and x.ty.lanes == 1):
                raise TypeError(f"T.Range: {w} must be a scalar integer, got dtype {x.ty}")
        self.begin, self.extent = _range_extent(b, e)

    @staticmethod
    def from_min_extent(min_value: Any, extent: Any, span: Any = None) -> Range:
        """The range ``[min_value, min_value + extent)``."""
        r = Range.__new__(Range)
        b = _expr(min_value, "T.Range.from_min_extent min_value", _unwrap(extent))
        r.begin, r.extent = b, _expr(extent, "T.Range.from_min_extent extent", b)
        return r

    @property
    def end(self) -> Any:
        b, x = self.begin, self.extent
        if type(b) is _ir.IntImm and type(x) is _ir.IntImm:
            return _ir.const(b.value + x.value, b.ty)
        if type(b) is _ir.IntImm and b.value == 0:
            return x
        return _ir.binop(_ir.Add, b, x)

    def __repr__(self) -> str:
        return f"T.Range({self.begin!s}, {self.end!s})"


class TensorRegion:
    """``T.TensorRegion(source, region, ty)``: a rectangular region of a tensor, one
    ``T.Range`` per dimension (a Python value: tirx's ops take buffers and indices)."""

    __slots__ = ("region", "source", "ty")

    def __init__(self, source: Any, region: Any, ty: Any = None, span: Any = None):
        if not isinstance(source, _ir.Buffer):
            raise TypeError(f"T.TensorRegion: source must be a tensor, got {type(source).__name__}")
        rs = tuple(r if isinstance(r, Range) else Range(*r) if isinstance(r, tuple) else None for r in region)
        if any(r is None for r in rs):
            raise TypeError("T.TensorRegion: region must be a list of T.Range")
        ranges = cast("tuple[Range, ...]", rs)  # no None: checked just above
        if len(rs) != len(source.shape):
            raise ValueError(f"T.TensorRegion: {len(rs)} ranges for a rank-{len(source.shape)} tensor")
        self.source, self.region, self.ty = source, ranges, ty if ty is not None else TensorRegionType()

    @property
    def shape(self) -> tuple:
        return tuple(r.extent for r in self.region)

    @staticmethod
    def of(source: Any, idx: tuple, span: Any = None) -> TensorRegion:
        """``A[2:6, 4:]`` read as a value (TIRx's region): an index is a one-element range,
        a slice its range (the tensor's bounds where open); a step is refused."""
        if len(idx) != len(source.shape):
            raise IndexError(f"buffer {source.name} has rank {len(source.shape)}, got {len(idx)} indices")
        rs = []
        for x, dim in zip(idx, source.shape):
            if type(x) is not slice:
                b = _expr(x, f"{source.name} region index")
                rs.append(Range.from_min_extent(b, _ir.convert(1, b)))
                continue
            if x.step is not None:
                raise TypeError(f"buffer {source.name}: a region has no step (got {x.start}:{x.stop}:{x.step})")
            rs.append(Range(0 if x.start is None else x.start, dim if x.stop is None else x.stop))
        return TensorRegion(source, rs, span=span)

    def __getitem__(self, idx: Any) -> Any:
        """``z[i, j]`` of a region ``z = A[2:6, 4:]``: the element ``A[2 + i, 4 + j]`` (TIRx's
        reading; a region of a region, or fewer indices, is refused as TIRx refuses it)."""
        idx = idx if type(idx) is tuple else (idx,)
        name = self.source.name
        if len(idx) != len(self.region) or any(type(x) is slice for x in idx):
            raise TypeError(
                f"region of {name}: index it with {len(self.region)} scalar indices (one per dimension), "
                f"got {len(idx)}{' with a slice' if any(type(x) is slice for x in idx) else ''}"
            )
        out = []
        for r, x in zip(self.region, idx):
            i = _expr(x, f"{name} region index", r.begin)
            out.append(i if type(r.begin) is _ir.IntImm and r.begin.value == 0 else _fold(_ir.binop(_ir.Add, r.begin, i)))
        return _ir.BufferLoad(self.source, tuple(out))

    def __setitem__(self, idx: Any, value: Any) -> None:
        raise TypeError(f"region of {self.source.name}: a region is read-only (store to the tensor itself)")

    def __repr__(self) -> str:
        return f"T.TensorRegion({self.source.name}, {list(self.region)})"


def TensorLoad(source: Any, indices: Any, span: Any = None) -> Any:
    """``T.TensorLoad(A, [i, j])``: the element (or vector, with a ``T.Ramp`` index) ``A[i, j]``:
    tirx's ``BufferLoad``."""
    if not isinstance(source, _ir.Buffer):
        raise TypeError(f"T.TensorLoad: source must be a tensor, got {type(source).__name__}")
    if not isinstance(indices, (list, tuple)):
        raise TypeError(f"T.TensorLoad: indices must be a list, got {type(indices).__name__}")
    return _ir.BufferLoad(source, tuple(_expr(i, "T.TensorLoad index") for i in indices), span=span)


# ------------------------------------------------------------------ ops and effects
class Op(metaclass=_Ctor):
    """``T.Op``: the class of declared ops (tirx's ``tirx.ir.Op``); ``T.Op.get(name)``."""

    _of = (_ir.Op,)

    @staticmethod
    def _build(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("T.Op: ops are declared (tirx.ir.op.declare); look one up with T.Op.get(name)")

    @staticmethod
    def get(op_name: str) -> Any:
        """The op by its script name (``"exp"``, ``"cuda.thread_idx"``); TIRx's registry
        prefixes (``"prim."``, ``"tirx."``, ``"tir."``) are accepted."""
        if not isinstance(op_name, str):
            raise TypeError(f"T.Op.get: op_name must be a str, got {type(op_name).__name__}")
        o = _op.lookup(op_name)
        for pre in ("prim.", "tirx.", "tir."):
            if o is None and op_name.startswith(pre):
                o = _op.lookup(op_name[len(pre) :])
        if o is None:
            raise ValueError(f"T.Op.get: no op named {op_name!r}")
        return o

    @staticmethod
    def list_op_names() -> list:
        """Every declared op's script name."""
        return sorted(_op.all_ops())


class CallEffectKind(enum.IntEnum):
    """TIRx's call effect kinds (same members and values). tirx declares an op's effect as
    ``pure=`` plus traits; :meth:`of` gives the kind that declaration amounts to."""

    ExprAnnotation = 0
    Pure = 1
    ReadState = 2
    UpdateState = 3
    SpecialCallArg = 4
    EmbedInfo = 5
    ControlJump = 6

    @classmethod
    def of(cls, op: Any) -> CallEffectKind:
        """``Pure`` for a pure op, else ``UpdateState`` (tirx does not tell reads apart)."""
        if isinstance(op, str):
            op = Op.get(op)
        if not isinstance(op, _ir.Op):
            raise TypeError(f"CallEffectKind.of: op must be an op or its name, got {type(op).__name__}")
        return cls.Pure if op.pure else cls.UpdateState


# ------------------------------------------------------------------ registered scopes
class _Registry(type):
    """Iterating the class lists its registered members, as TIRx's enums do."""

    _members: dict[str, Any]  # each class's registry, by name

    def __iter__(cls) -> Iterator[Any]:
        return iter(list(cls._members.values()))

    def __len__(cls) -> int:
        return len(cls._members)


class MemoryScope(str, metaclass=_Registry):
    """``T.MemoryScope("shared")``: a registered storage scope. tirx writes scopes as plain
    strings, and this is one (a ``str``), so it goes wherever a scope string goes; an unknown
    name is a ValueError, as in TIRx."""

    _members: dict = {}

    def __new__(cls, name: Any) -> MemoryScope:
        if isinstance(name, MemoryScope):
            return name
        m = cls._members.get(name)
        if m is None:
            raise ValueError(f"{name!r} is not a valid MemoryScope")
        return m

    @classmethod
    def register(cls, name: str) -> MemoryScope:
        """Add a scope name (registration alone gives no backend support, as in TIRx)."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"MemoryScope.register: name must be a non-empty str, got {name!r}")
        m = cls._members.get(name)
        if m is None:
            m = cls._members[name] = str.__new__(cls, name)
        return m

    @classmethod
    def get(cls, name: str) -> MemoryScope:
        return cls(name)

    @property
    def name(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"MemoryScope({str.__repr__(self)})"


# TIRx's registered scopes, and tirx's tensormap
_SCOPES = (
    "global shared shared.dyn warp local tmem wmma.matrix_a wmma.matrix_b wmma.accumulator mma.matrixA "
    "mma.matrixB mma.matrixC global.ddr global.vtcm metal.simdgroup metal.cooperative_tensor texture "
    "global.texture global.texture-1d global.texture-nchw global.texture-nhwc global.texture-weight "
    "trn.sbuf trn.psum amx.tmm tensormap"
)
for _s in _SCOPES.split():
    MemoryScope.register(_s)


class ThreadScope(metaclass=_Registry):
    """``T.ThreadScope.get("cuda.warp")``: a level of the thread hierarchy: ``backend``,
    ``local_name`` and ``rank`` (smaller is wider; the kernel is -1), as TIRx registers them."""

    __slots__ = ("backend", "local_name", "rank")
    _members: dict = {}

    def __init__(self, backend: str, local_name: str, rank: int):
        self.backend, self.local_name, self.rank = backend, local_name, rank

    @property
    def name(self) -> str:
        return f"{self.backend}.{self.local_name}"

    @classmethod
    def get(cls, name: str) -> ThreadScope:
        m = cls._members.get(name)
        if m is None:
            raise ValueError(f"ThreadScope.get: no thread scope {name!r} (one of {', '.join(cls._members)})")
        return m

    @classmethod
    def register(cls, name: str, rank: int) -> ThreadScope:
        backend, _, local = name.partition(".")
        if not local or type(rank) is not int:
            raise ValueError(
                f"ThreadScope.register: need 'backend.scope' and an int rank, got {name!r}, {rank!r}"
            )
        m = cls._members.get(name)
        if m is None:
            m = cls._members[name] = cls(backend, local, rank)
        return m

    def __repr__(self) -> str:
        return f"ThreadScope({self.name!r})"

    def __str__(self) -> str:
        return self.name


for _s, _r in (("cuda.kernel", -1), ("cuda.cluster", 0), ("cuda.cta", 1), ("cuda.warpgroup", 2),
               ("cuda.warp", 3), ("cuda.thread", 4), ("trn.kernel", -1), ("trn.thread", 0)):  # fmt: skip
    ThreadScope.register(_s, _r)
del _s, _r


# ------------------------------------------------------------------ pointers and annotations
def ptr(dtype: Any, storage_scope: Any = "global") -> Any:
    """``T.ptr("float32", "shared")``: a pointer variable (its type is ``T.Ptr(dtype, scope)``);
    as a parameter annotation it gives the parameter that type, as in TIRx."""
    if not isinstance(storage_scope, str):
        raise TypeError(f"T.ptr: storage_scope must be a str, got {type(storage_scope).__name__}")
    el = _as_type(dtype, "T.ptr dtype")
    return _ir.Var("v", _PointerType(el, str(storage_scope)))


class Optional:
    """``x: T.Optional(T.Tensor(...))`` in a ``@T.jit`` signature: the parameter may be
    specialized to None (``f.specialize(x=None)``), as ``x: T.Tensor(...) | None``."""

    __slots__ = ("annotation",)

    def __init__(self, annotation: Any):
        self.annotation = annotation

    def __tirx_optional__(self) -> Any:
        return self.annotation

    def __repr__(self) -> str:
        return f"T.Optional({self.annotation!r})"


# ------------------------------------------------------------------ Python-side helpers
class _Substitute(_Mutator):
    def __init__(self, mapping: dict):
        super().__init__()
        self.var_map = dict(mapping)


def _lambda_type(ty: Any) -> Type:
    return _as_type(ty, "T.Lambda parameter type")


class Lambda:
    """``T.Lambda([T.float32, T.float32], lambda a, b: (a + b,))``: a typed staging function
    (a reduction's combiner): ``function`` is called once with fresh vars ``arg0, arg1, ...``
    and its result kept as ``body`` (a tuple of expressions); :meth:`apply` substitutes
    arguments. Like TIRx's, it never reaches generated code."""

    __slots__ = ("body", "ret_type", "vars")

    def __init__(self, parameter_types: Any, function: Callable, *, ret_type: Any = None):
        if not callable(function):
            raise TypeError(f"T.Lambda: function must be callable, got {type(function).__name__}")
        self.vars = tuple(_ir.Var(f"arg{i}", _lambda_type(t)) for i, t in enumerate(parameter_types))
        res = function(*self.vars)
        single = not isinstance(res, (tuple, list))
        items = (res,) if single else tuple(res)
        self.body = tuple(_expr(x, "T.Lambda result") for x in items)
        if ret_type is not None:
            want = (
                _as_type(ret_type, "T.Lambda ret_type") if not isinstance(ret_type, (list, tuple)) else None
            )
            got = self.body[0].ty if len(self.body) == 1 else TupleType([b.ty for b in self.body])
            if isinstance(ret_type, (list, tuple)):
                want = TupleType(ret_type)
            if want != got:
                raise TypeError(f"T.Lambda: ret_type {want} does not match the body's type {got}")
        self.ret_type = self.body[0].ty if len(self.body) == 1 else TupleType([b.ty for b in self.body])

    def apply(self, arguments: Any) -> tuple:
        """The body with ``arguments`` substituted for the vars (all at once)."""
        args = [_expr(a, "T.Lambda argument", v) for a, v in zip(arguments, self.vars)]
        if len(args) != len(self.vars) or len(arguments) != len(self.vars):
            raise TypeError(f"T.Lambda.apply: takes {len(self.vars)} arguments, got {len(arguments)}")
        m = _Substitute(dict(zip(self.vars, args)))
        return tuple(m.visit(b) for b in self.body)

    def __call__(self, *arguments: Any) -> Any:
        r = self.apply(arguments)
        return r[0] if len(r) == 1 else r

    def __repr__(self) -> str:
        names = ", ".join(v.name for v in self.vars)
        return f"T.Lambda([{', '.join(str(v.ty) for v in self.vars)}], lambda {names}: {self.body!r})"


class IndexMap:
    """What ``T.index_map`` builds: ``initial_indices`` (vars) mapped to ``final_indices``."""

    __slots__ = ("final_indices", "initial_indices", "inverse_index_map")

    def __init__(self, initial: tuple, final: tuple, inverse: Any = None):
        self.initial_indices, self.final_indices, self.inverse_index_map = initial, final, inverse

    def map_indices(self, indices: Any) -> tuple:
        """The final indices for the given initial ones."""
        if len(indices) != len(self.initial_indices):
            raise TypeError(
                f"IndexMap.map_indices: takes {len(self.initial_indices)} indices, got {len(indices)}"
            )
        m = _Substitute({v: _expr(x, "IndexMap index", v) for v, x in zip(self.initial_indices, indices)})
        return tuple(m.visit(f) for f in self.final_indices)

    def __repr__(self) -> str:
        return (
            f"T.index_map(lambda {', '.join(v.name for v in self.initial_indices)}: {self.final_indices!r})"
        )


def index_map(
    mapping: Callable, *, inverse_index_map: Callable | None = None, index_dtype: Any = "int64"
) -> IndexMap:
    """``T.index_map(lambda i, j: (j, i))``: an index mapping over ``index_dtype`` vars
    (named after the lambda's parameters)."""
    if not callable(mapping):
        raise TypeError(f"T.index_map: mapping must be callable, got {type(mapping).__name__}")
    t = _as_type(index_dtype, "T.index_map index_dtype")
    code = getattr(mapping, "__code__", None)
    names = list(code.co_varnames[: code.co_argcount]) if code is not None else []
    vs = tuple(_ir.Var(n, t) for n in names)
    res = mapping(*vs)
    items = res if isinstance(res, (tuple, list)) else (res,)
    return IndexMap(
        vs, tuple(_expr(x, "T.index_map result", vs[0] if vs else None) for x in items), inverse_index_map
    )


def meta_class(cls: type) -> type:
    """``@T.meta_class``: a utility class used inside kernels; its instances are Python
    values there (assigning one binds the name, no IR), its ``@T.inline`` methods expand."""
    if not isinstance(cls, type):
        raise TypeError(f"T.meta_class decorates a class, got {type(cls).__name__}")
    cls.__tirx_meta_class__ = True  # type: ignore[attr-defined]  # a marker on the user's class
    return cls


# ------------------------------------------------------------------ nodes by type key, targets
_NODE_KEYS: dict[str, Any] = {
    "Var": Var._build, "IntImm": IntImm._build, "FloatImm": FloatImm._build, "StringImm": StringImm._build,
    "Bind": Bind._build, "PrimType": PrimType._build, "TupleType": TupleType, "FuncType": FuncType,
    "TensorLoad": TensorLoad, "BufferLoad": TensorLoad, "Range": Range,
}  # fmt: skip


def make_node(type_key: str, /, **kwargs: Any) -> Any:
    """``T.make_node("ir.IntImm", ty="int32", value=3)``: a node by TIRx's type key (its last
    part names the class: ``ir.Var``, ``ir.IntImm``, ``tirx.Bind``, ``ir.Shuffle``...)."""
    if not isinstance(type_key, str):
        raise TypeError(f"T.make_node: type_key must be a str, got {type(type_key).__name__}")
    name = type_key.rsplit(".", 1)[-1]
    if "dtype" in kwargs and "ty" not in kwargs:
        kwargs["ty"] = kwargs.pop("dtype")
    build = _NODE_KEYS.get(name)
    if build is None and name == "Shuffle":
        from ..ir.shuffle import Shuffle

        build = Shuffle
    if build is None:
        raise ValueError(f"T.make_node: no tirx node for the type key {type_key!r}")
    return build(**kwargs)


def target(target_config: Any, host: Any = None) -> Any:
    """``T.target({"kind": "cuda", "arch": "sm_90a"})`` or ``T.target("cuda -arch=sm_90a")``:
    tirx's compile target (``tirx.target.Target``, what ``tirx.compile(f, target=...)``
    takes). As in TIRx it may be a function attribute (``T.func_attr({"target": ...})``),
    printed as TIRx prints it; tirx still picks the target when compiling."""
    from ..target_spec import from_config

    return from_config(target_config, host)
