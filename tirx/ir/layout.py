"""Layouts: maps from a tensor's logical index to named physical coordinates (TIRx's layouts).

A layout sends a logical element to a value on each of its *axes*: ``m`` (the memory offset,
in elements), thread axes (``laneid``, ``warpid``, ... which thread owns the element) and
tensor-memory axes (``TLane``, ``TCol``). Two kinds, as in TIRx:

- :class:`TileLayout`: ``shard`` iters (extent, stride, axis), outermost first, give distinct
  elements; ``replica`` iters give copies of them; ``offset`` is an origin per axis. A logical
  index is linearized row-major over the tensor's shape and split row-major over the shard
  extents; each part times its stride lands on its iter's axis.
- :class:`ComposeLayout`: a TileLayout whose memory offset is then XOR-swizzled
  (``per_element`` low bits kept, ``swizzle_len`` bits XORed with the group ``atom_len``
  bits above them), the shared-memory swizzle of TMA and MMA operands.

Nodes are immutable and compared structurally like every IR node. The tensor a layout
belongs to carries it (``Buffer.layout``, ``TensorType.layout``); the backends address
elements through :func:`memory_offset` (``tirx.passes`` lowers accesses before codegen and
the interpreter run).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .expr import NODE, SEQ, VALUE, Add, BitAnd, BitXor, Cast, IntImm, Mul, PrimExpr, Shl, Shr, Sub, convert
from .fold import fold
from .node import Node, child, with_field_kinds
from .node import frozen_node as _frozen  # attrs.define(frozen, slots, eq=False, repr=False)
from .types import PrimType

__all__ = [
    "MEMORY_AXES",
    "THREAD_AXES",
    "Axis",
    "ComposeLayout",
    "Iter",
    "Layout",
    "LayoutError",
    "OnAxis",
    "TileLayout",
    "memory_offset",
]


#: axes that address storage: shared/global memory (``m``) and tensor memory (lane, column)
MEMORY_AXES = ("m", "TCol", "TLane")
#: CUDA thread/block axes (ownership: which thread or block holds an element)
THREAD_AXES = (
    "bx",
    "by",
    "bz",
    "cbx",
    "cby",
    "cbz",
    "tx",
    "warpid",
    "laneid",
    "wgid",
    "tid_in_wg",
    "wid_in_wg",
)
_CUDA_AXES = frozenset((*THREAD_AXES, "TCol", "TLane"))


class LayoutError(ValueError):
    """A layout that cannot do what was asked (a thread axis addressed as memory, ...)."""


class _AxisMeta(type):
    get: Callable[[str], Axis]  # Axis.get (a classmethod of the class this makes)

    def __getattr__(cls, name: str) -> Axis:
        if name == "m":
            return cls.get(name)
        raise AttributeError(f"type object 'Axis' has no attribute {name!r}")


class Axis(metaclass=_AxisMeta):
    """A named physical coordinate (``T.Axis.get("m")``, ``T.cuda.Axis.laneid``).

    Interned by name: one object per name, so ``is`` and ``==`` agree. ``value @ axis``
    attaches a stride or an offset to the axis (``T.S[8 : 2 @ T.cuda.Axis.laneid]``).
    """

    __slots__ = ("name",)
    name: str
    __layout_operand__ = True  # the Python frontend applies operators to it as Python does
    _table: dict[str, Axis] = {}

    def __new__(cls, name: str) -> Axis:
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"Axis: name must be an identifier string, got {name!r}")
        a = cls._table.get(name)
        if a is None:
            a = object.__new__(cls)
            object.__setattr__(a, "name", name)
            cls._table[name] = a
        return a

    def __setattr__(self, k: str, v: Any) -> None:
        raise AttributeError("Axis is immutable")

    def __reduce__(self) -> tuple:
        return (Axis, (self.name,))

    @classmethod
    def get(cls, name: str) -> Axis:
        """The axis named ``name`` (created on first use, as TIRx registers unknown names)."""
        return cls(name)

    def is_memory(self) -> bool:
        return self.name in MEMORY_AXES

    def is_thread(self) -> bool:
        return self.name in THREAD_AXES

    @property
    def backend(self) -> str | None:
        """``"cuda"`` for the CUDA thread and tensor-memory axes, None for the generic ``m``."""
        return "cuda" if self.name in _CUDA_AXES else None

    def __rmatmul__(self, value: Any) -> OnAxis:
        return OnAxis(value, self)

    def __repr__(self) -> str:
        return f"tirx.Axis.{self.name}"

    __str__ = __repr__


def as_axis(a: Any, what: str = "axis") -> Axis:
    if isinstance(a, Axis):
        return a
    if isinstance(a, str):
        return Axis(a)
    raise TypeError(f"{what} must be an axis name (str) or an Axis, got {type(a).__name__}")


class OnAxis:
    """``value @ axis``: a stride or an offset placed on an axis (not IR: it builds layouts)."""

    __slots__ = ("axis", "value")
    __layout_operand__ = True

    def __init__(self, value: Any, axis: Axis):
        self.value = value
        self.axis = axis

    def __add__(self, other: Any) -> Any:
        from_spec = getattr(other, "__layout_spec__", None)
        if from_spec is not None:
            return NotImplemented
        return Offsets.of(self) + other

    def __radd__(self, other: Any) -> Any:
        return Offsets.of(other) + self

    def __repr__(self) -> str:
        return f"{self.value!r} @ {self.axis!r}"


class Offsets:
    """A sum of axis-bound terms (``1 @ laneid + 2 @ warpid + 5``); a bare value is on ``m``."""

    __slots__ = ("terms",)
    __layout_operand__ = True

    def __init__(self, terms: dict[Axis, Any] | None = None):
        self.terms: dict[Axis, Any] = dict(terms or {})

    @staticmethod
    def of(x: Any) -> Offsets:
        if isinstance(x, Offsets):
            return x
        if isinstance(x, OnAxis):
            return Offsets({x.axis: x.value})
        if isinstance(x, (int, PrimExpr)) and not isinstance(x, bool):
            return Offsets({Axis("m"): x})
        raise TypeError(f"a layout offset must be an integer, an expression or value @ axis, got {x!r}")

    def __add__(self, other: Any) -> Any:
        if getattr(other, "__layout_spec__", None) is not None:
            return NotImplemented
        out = dict(self.terms)
        for ax, v in Offsets.of(other).terms.items():
            out[ax] = out[ax] + v if ax in out else v
        return Offsets(out)

    def __radd__(self, other: Any) -> Any:
        return Offsets.of(other) + self


# ------------------------------------------------------------------ arithmetic on ints or IR
def _is_int(x: Any) -> bool:
    return type(x) is int or (isinstance(x, IntImm) and not x.ty.is_bool)


def _iv(x: Any) -> Any:
    """A Python int for an integer constant -- also a ``+ - *`` tree of them, as text may
    write an extent (``64 + 64``; the loader keeps what is written) -- else the expression.
    Folding here keeps such a tree from being copied into every address computed."""
    if isinstance(x, IntImm):
        return x.value
    if isinstance(x, (Add, Sub, Mul)):
        v = _const_tree(x)
        return x if v is None else v
    return x


def _const_tree(e: Any) -> int | None:
    """The value of a ``+ - *`` tree over integer constants as the builder would fold it
    (``tirx.ir.fold``: each step only when its exact result fits the dtype); else None.
    Iterative: a mutated text may nest thousands deep."""
    vals: dict[int, IntImm] = {}
    todo = [(e, False)]
    while todo:
        n, done = todo.pop()
        if isinstance(n, IntImm):
            vals[id(n)] = n
            continue
        if not isinstance(n, (Add, Sub, Mul)):
            return None
        if not done:
            todo += [(n, True), (n.a, False), (n.b, False)]
            continue
        r = fold(type(n)(vals[id(n.a)], vals[id(n.b)], n.ty))
        if not isinstance(r, IntImm):
            return None
        vals[id(n)] = r
    return vals[id(e)].value


def _mul(a: Any, b: Any) -> Any:
    a, b = _iv(a), _iv(b)
    if type(a) is int and type(b) is int:
        return a * b
    if (type(a) is int and a == 0) or (type(b) is int and b == 0):
        return 0
    if type(a) is int and a == 1:
        return b
    if type(b) is int and b == 1:
        return a
    a, b = _pair(a, b)
    return a * b


def _pair(a: Any, b: Any) -> tuple[Any, Any]:
    """Two index expressions get one integer width (``_match``); an int literal is left to the
    expression's operator, which gives it the expression's dtype or int64 where it does not
    fit there (a stride of 2**31 beside an int32 extent), as TIRx does."""
    if type(a) is int or type(b) is int:
        return a, b
    return _match(a, b)


def _match(a: Any, b: Any) -> tuple[Any, Any]:
    """Two index expressions of different integer widths (an int64 coordinate, written so in
    text, beside int32 strides): the narrower is cast to the wider, as TIRx matches them."""
    if isinstance(a, PrimExpr) and isinstance(b, PrimExpr) and a.ty != b.ty:
        ta, tb = a.ty, b.ty
        if isinstance(ta, PrimType) and isinstance(tb, PrimType) and ta.is_int and tb.is_int:
            if ta.bits >= tb.bits:
                b = Cast(ta, b)
            else:
                a = Cast(tb, a)
    return a, b


def _add(a: Any, b: Any) -> Any:
    a, b = _iv(a), _iv(b)
    if type(a) is int and type(b) is int:
        return a + b
    if type(a) is int and a == 0:
        return b
    if type(b) is int and b == 0:
        return a
    a, b = _pair(a, b)
    return a + b


def _fdiv(a: Any, b: Any) -> Any:
    a, b = _iv(a), _iv(b)
    if type(b) is int and b == 1:
        return a
    if type(a) is int and type(b) is int:
        return a // b
    a, b = _pair(a, b)
    return a // b


def _fmod(a: Any, b: Any) -> Any:
    a, b = _iv(a), _iv(b)
    if type(b) is int and b == 1:
        return 0
    if type(a) is int and type(b) is int:
        return a % b
    a, b = _pair(a, b)
    return a % b


def _prod(xs: Iterable[Any]) -> Any:
    p: Any = 1
    for x in xs:
        p = _mul(p, x)
    return p


def _same(a: Any, b: Any) -> bool:
    a, b = _iv(a), _iv(b)
    if type(a) is int or type(b) is int:
        return type(a) is type(b) and a == b
    return a is b  # the same symbolic dimension (a Var), not merely an equal expression


def _dim(x: Any, what: str) -> PrimExpr:
    if isinstance(x, bool) or not isinstance(x, (int, PrimExpr)):
        raise TypeError(f"{what} must be an integer or an integer expression, got {type(x).__name__}")
    e = convert(x)
    if not (isinstance(e.ty, PrimType) and e.ty.is_int and e.ty.lanes == 1):
        raise TypeError(f"{what} must be an integer expression, got dtype {e.ty}")
    return e


# ------------------------------------------------------------------ nodes
@_frozen
class Layout(Node):
    """Base of layouts: a map from a logical index to coordinates on named axes."""

    def apply(self, *coord: Any, shape: Sequence[Any] | None = None) -> dict[str, Any]:
        """Coordinates (axis name -> value) of one element. ``coord``: one linear index,
        one index per shard iter, or indices over ``shape`` (linearized row-major)."""
        raise NotImplementedError

    def size(self, axis_name: str | None = None) -> Any:
        raise NotImplementedError

    def layout_span(self, axis_name: str | None = None) -> Any:
        raise NotImplementedError

    def is_trivial(self) -> bool:
        return False

    def check_well_formed(self) -> None:
        """Raise ValueError when the layout cannot describe storage (a negative stride)."""

    def axes(self) -> tuple[str, ...]:
        raise NotImplementedError


@_frozen
class Iter(Node):
    """One factor of a layout: ``extent`` positions, each ``stride`` apart on ``axis``."""

    extent: PrimExpr = child(NODE)
    stride: PrimExpr = child(NODE)
    axis: Axis = child(VALUE, default=None)

    if TYPE_CHECKING:  # what __init__ takes: __attrs_post_init__ converts ints and axis names

        def __init__(
            self,
            extent: PrimExpr | int,
            stride: PrimExpr | int,
            axis: Axis | str | None = None,
            *,
            span: Any = None,
        ) -> None: ...

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "extent", _dim(self.extent, "Iter.extent"))
        object.__setattr__(self, "stride", _dim(self.stride, "Iter.stride"))
        object.__setattr__(self, "axis", as_axis("m" if self.axis is None else self.axis, "Iter.axis"))
        if isinstance(self.extent, IntImm) and self.extent.value <= 0:
            raise ValueError(f"Iter.extent must be positive, got {self.extent.value}")


def _iters(xs: Any, what: str) -> tuple:
    if isinstance(xs, Iter):
        xs = (xs,)
    try:
        out = tuple(xs)
    except TypeError:
        raise TypeError(f"{what} must be a list of T.Iter, got {type(xs).__name__}") from None
    for i, x in enumerate(out):
        if not isinstance(x, Iter):
            raise TypeError(f"{what}[{i}] must be a T.Iter, got {type(x).__name__}")
    return out


def _offsets(offset: Any) -> tuple[tuple, tuple]:
    if offset is None:
        return (), ()
    if isinstance(offset, (Offsets, OnAxis, int, PrimExpr)):
        offset = Offsets.of(offset).terms
    if not isinstance(offset, dict) and hasattr(offset, "items"):
        offset = dict(offset.items())
    if not isinstance(offset, dict):
        raise TypeError(f"TileLayout offset must be a dict of axis -> value, got {type(offset).__name__}")
    named = {}
    for k, v in offset.items():
        ax = as_axis(k, "TileLayout offset key")
        named[ax.name] = _dim(v, f"TileLayout offset[{ax.name!r}]")
    keys = tuple(sorted(named))  # TIRx prints the offsets sorted by axis name
    return keys, tuple(named[k] for k in keys)


@with_field_kinds
@attrs.define(slots=True, eq=False, frozen=True, repr=False, init=False)  # its own __init__: a spec or iters
class TileLayout(Layout):
    """Strided factors to axes: ``T.TileLayout(T.S[(4, 8) : (1, 4)] + T.R[...] + offset)``.

    Built from a spec (``T.S``/``T.R``, see ``tirx.surface.layout``) or from iters,
    ``T.TileLayout.from_iters(shard=[T.Iter(4, 1, "m"), ...], replica=[], offset={"m": 3})``
    (TIRx's printed form). Offsets are kept sorted by axis name.
    """

    shard: tuple = child(SEQ)
    replica: tuple = child(SEQ, default=())
    offset_axes: tuple = child(VALUE, default=())
    offset_values: tuple = child(SEQ, default=())

    def __init__(self, spec: Any = None, shard: Any = None, replica: Any = (), offset_axes: Any = (),
                 offset_values: Any = (), *, offset: Any = None, span: Any = None):  # fmt: skip
        if spec is not None:
            to_parts = getattr(spec, "__layout_spec__", None)
            if to_parts is None:
                if isinstance(spec, (list, tuple)) and shard is None:  # TileLayout([iters])
                    shard = spec
                else:
                    raise TypeError(
                        f"TileLayout: spec must be T.S[shape : stride] (+ T.R[...] + offset), got {spec!r}"
                    )
            else:
                shard, replica, offset = to_parts()
        if shard is None:
            raise TypeError("TileLayout: give a spec (T.S[...]) or shard= iters")
        if offset is not None:
            offset_axes, offset_values = _offsets(offset)
        else:
            offset_axes, offset_values = tuple(offset_axes), tuple(offset_values)
            if len(offset_axes) != len(offset_values):
                raise TypeError("TileLayout: offset_axes and offset_values differ in length")
            if offset_axes:
                offset_axes, offset_values = _offsets(dict(zip(offset_axes, offset_values)))
        self.__attrs_init__(
            _iters(shard, "TileLayout shard"), _iters(replica, "TileLayout replica"), offset_axes, offset_values,
            span=span,  # type: ignore[call-arg]  # Node's field: mypy's attrs plugin misses it (dataclass_transform base)
        )  # fmt: skip

    @staticmethod
    def from_iters(shard: Any = (), replica: Any = (), offset: Any = None, *, span: Any = None) -> TileLayout:
        """The layout with these iters and offsets (``{axis name: value}``)."""
        return TileLayout(shard=shard, replica=replica, offset=offset or {}, span=span)

    @property
    def replicate(self) -> tuple:  # TIRx's field name
        return self.replica

    @property
    def offset(self) -> dict[Axis, PrimExpr]:
        return {Axis(k): v for k, v in zip(self.offset_axes, self.offset_values)}

    def axes(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for it in (*self.shard, *self.replica):
            seen[it.axis.name] = None
        for k in self.offset_axes:
            seen[k] = None
        return tuple(seen)

    # -- the map ----------------------------------------------------------------------
    def _split(self, coord: tuple, shape: Sequence[Any] | None) -> list:
        """Per-shard-iter coordinates of an element."""
        ext = [it.extent for it in self.shard]
        if shape is None and len(coord) == len(ext) and len(coord) != 1:
            return list(coord)
        if shape is None:
            if len(coord) != 1:
                raise LayoutError(
                    f"TileLayout.apply: {len(coord)} coordinates for {len(ext)} shard iters (give shape=)"
                )
            shape = (self.size(),)
        return _regroup(list(coord), list(shape), ext)

    def apply(self, *coord: Any, shape: Sequence[Any] | None = None) -> dict[str, Any]:
        if len(coord) == 1 and isinstance(coord[0], (list, tuple)):
            coord = tuple(coord[0])
        parts = self._split(tuple(coord), shape)
        out: dict[str, Any] = {}
        for it, c in zip(self.shard, parts):
            n = it.axis.name
            out[n] = _add(out.get(n, 0), _mul(c, it.stride))
        for k, v in zip(self.offset_axes, self.offset_values):
            out[k] = _add(out.get(k, 0), v)
        return {k: (convert(v) if type(v) is int and _any_expr(coord) else v) for k, v in out.items()}

    def size(self, axis_name: str | None = None) -> Any:
        its = self.shard if axis_name is None else [i for i in self.shard if i.axis.name == axis_name]
        return _iv(_prod(it.extent for it in its))

    def layout_span(self, axis_name: str | None = None) -> Any:
        """One past the largest coordinate on ``axis_name`` (default ``m``), offset included."""
        name = axis_name or "m"
        hi: Any = 0
        for it in (*self.shard, *self.replica):
            if it.axis.name == name:
                hi = _add(hi, _mul(_add(it.extent, -1), it.stride))
        for k, v in zip(self.offset_axes, self.offset_values):
            if k == name:
                hi = _add(hi, v)
        return _iv(_add(hi, 1))

    def is_trivial(self) -> bool:
        """One contiguous row-major run on ``m`` from 0 (what a tensor without a layout is)."""
        return self.is_contiguous() and all(_iv(v) == 0 for v in self.offset_values)

    def is_contiguous(self, analyzer: Any = None) -> bool:
        """Memory-only shard strides that are row-major and compact, whatever the origin."""
        if self.replica:
            return False
        acc: Any = 1
        for it in reversed(self.shard):
            if it.axis.name != "m" or not _same(it.stride, acc):
                return False
            acc = _mul(acc, it.extent)
        return True

    def check_well_formed(self) -> None:
        for i, it in enumerate((*self.shard, *self.replica)):
            if isinstance(it.stride, IntImm) and it.stride.value < 0:
                raise ValueError(f"TileLayout: iter {i} has a negative stride {it.stride.value}")

    def permute_dims(self, perm: Sequence[int]) -> TileLayout:
        if sorted(perm) != list(range(len(self.shard))):
            raise ValueError(
                f"permute_dims: {list(perm)} is not a permutation of {len(self.shard)} shard iters"
            )
        return TileLayout(shard=[self.shard[i] for i in perm], replica=self.replica, offset=self.offset)

    def permute_by_groups(self, seps: Sequence[int], perm: Sequence[int]) -> TileLayout:
        """Reorder groups of shard iters (group ``k`` is ``[seps[k], seps[k + 1])``, as
        :meth:`group` gives them) into the order ``perm``."""
        if sorted(perm) != list(range(len(seps) - 1)):
            raise ValueError(f"permute_by_groups: invalid perm {list(perm)}")
        return self.permute_dims([k for g in perm for k in range(seps[g], seps[g + 1])])

    def canonicalize(self) -> TileLayout:
        """Drop extent-1 shard iters and fuse neighbours that form one strided run."""
        out: list[Iter] = []
        for it in self.shard:
            if isinstance(it.extent, IntImm) and it.extent.value == 1:
                continue
            if out:
                prev = out[-1]
                if prev.axis is it.axis and _same(prev.stride, _mul(it.stride, it.extent)):
                    out[-1] = Iter(_mul(prev.extent, it.extent), it.stride, it.axis)
                    continue
            out.append(it)
        if not out and self.shard:
            out = [Iter(1, 1, "m")]
        off = {a: v for a, v in self.offset.items() if _iv(v) != 0}  # a zero origin says nothing
        return TileLayout(shard=out, replica=self.replica, offset=off)

    def group(self, shape: Sequence[Any]) -> tuple[TileLayout, list[int]]:
        """The layout with its shard iters split to fall into ``shape``'s dimensions, and the
        separators: dimension ``k`` owns shard iters ``[seps[k], seps[k + 1])``."""
        groups = _group(self.shard, shape)
        seps, flat = [0], []
        for g in groups:
            flat += g
            seps.append(len(flat))
        return TileLayout(shard=flat, replica=self.replica, offset=self.offset), seps

    def tile(self, outer: TileLayout, outer_shape: Sequence[Any], inner_shape: Sequence[Any]) -> TileLayout:
        """``outer`` copies of this layout (the inner tile): per dimension, the outer iters
        (strides scaled by this layout's span on their axis) then the inner ones; canonical."""
        if not isinstance(outer, TileLayout):
            raise TypeError(f"tile: outer must be a T.TileLayout, got {type(outer).__name__}")
        if len(outer_shape) != len(inner_shape):
            raise LayoutError(
                f"tile: outer shape {list(outer_shape)} and inner shape {list(inner_shape)} differ in rank"
            )
        go, gi = _group(outer.shard, outer_shape), _group(self.shard, inner_shape)
        shard: list[Iter] = []
        for o, i in zip(go, gi):
            shard += [Iter(it.extent, _mul(it.stride, self.layout_span(it.axis.name)), it.axis) for it in o]
            shard += i
        return TileLayout(shard=shard, replica=self.replica, offset=self.offset).canonicalize()

    def tile_to(self, to_shape: Sequence[Any], current_shape: Sequence[Any]) -> TileLayout:
        """This layout (of ``current_shape``) repeated row-major to cover ``to_shape``."""
        return self.tile(*_tile_args(to_shape, current_shape))

    def unpack(self, num: int, axis: str = "m") -> TileLayout:
        """Each element becomes ``num`` contiguous ones on ``axis`` (a narrower dtype's view)."""

        def scale(it: Iter) -> Iter:
            return Iter(it.extent, _mul(it.stride, num) if it.axis.name == axis else it.stride, it.axis)

        off = {a: (_mul(v, num) if a.name == axis else v) for a, v in self.offset.items()}
        return TileLayout(
            shard=[*map(scale, self.shard), Iter(num, 1, axis)],
            replica=[*map(scale, self.replica)],
            offset=off,
        )

    def pack(self, num: int, axis: str = "m") -> TileLayout:
        """``num`` contiguous elements become one (a wider dtype's view)."""
        inner = self.shard[-1] if self.shard else None
        if (
            inner is None
            or inner.axis.name != axis
            or _iv(inner.stride) != 1
            or not _is_int(inner.extent)
            or _iv(inner.extent) % num
        ):
            raise LayoutError(f"layout cannot be packed into {num} elements on {axis}")

        def scale(it: Iter) -> Iter:
            if it.axis.name != axis:
                return it
            s = _iv(it.stride)
            if type(s) is not int or s % num:
                raise LayoutError(f"layout stride {s} on {axis} is not divisible by {num}")
            return Iter(it.extent, s // num, it.axis)

        off = {}
        for a, v in self.offset.items():
            if a.name == axis:
                if type(_iv(v)) is not int or _iv(v) % num:
                    raise LayoutError(f"layout offset {v} on {axis} is not divisible by {num}")
                v = _iv(v) // num
            off[a] = v
        shard = [*map(scale, self.shard[:-1]), Iter(_iv(inner.extent) // num, 1, inner.axis)]
        return TileLayout(shard=shard, replica=[*map(scale, self.replica)], offset=off)


def _any_expr(xs: Iterable[Any]) -> bool:
    return any(isinstance(x, PrimExpr) and not isinstance(x, IntImm) for x in xs)


@_frozen
class ComposeLayout(Layout):
    """A TileLayout whose memory offset ``o`` is XOR-swizzled: with ``p = per_element``,
    ``s = swizzle_len``, ``a = atom_len``, ``swizzle_inner`` XORs bits ``[p+a, p+a+s)`` into
    ``[p, p+s)``; otherwise bits ``[p, p+s)`` into ``[p+a, p+a+s)``."""

    per_element: int = child(VALUE)
    swizzle_len: int = child(VALUE)
    atom_len: int = child(VALUE)
    tile_layout: TileLayout = child(NODE)
    swizzle_inner: bool = child(VALUE, default=True)

    def __attrs_post_init__(self) -> None:
        for f in ("per_element", "swizzle_len", "atom_len"):
            v = getattr(self, f)
            if isinstance(v, IntImm):
                v = v.value
                object.__setattr__(self, f, v)
            if type(v) is not int or v < 0:
                raise TypeError(f"ComposeLayout.{f} must be a non-negative int, got {v!r}")
        if self.per_element + self.swizzle_len + self.atom_len > 64:  # bit positions of a 64-bit offset
            raise ValueError(
                f"ComposeLayout: per_element + swizzle_len + atom_len ({self.per_element} + {self.swizzle_len} + "
                f"{self.atom_len}) must be at most 64 (bit positions of an address offset)"
            )
        if self.swizzle_len and self.atom_len < self.swizzle_len:
            raise ValueError(
                f"ComposeLayout.atom_len ({self.atom_len}) must be at least swizzle_len ({self.swizzle_len})"
            )
        if not isinstance(self.tile_layout, TileLayout):
            raise TypeError(f"ComposeLayout.tile_layout must be a T.TileLayout, got {self.tile_layout!r}")
        if type(self.swizzle_inner) is not bool:
            v = self.swizzle_inner
            if isinstance(v, IntImm) and v.ty.is_bool:
                object.__setattr__(self, "swizzle_inner", bool(v.value))
            else:
                raise TypeError(f"ComposeLayout.swizzle_inner must be a bool, got {v!r}")

    def axes(self) -> tuple[str, ...]:
        return self.tile_layout.axes()

    def check_well_formed(self) -> None:
        self.tile_layout.check_well_formed()

    def swizzle(self, o: Any) -> Any:
        """The swizzled memory offset of the tile layout's offset ``o`` (an int or an expression)."""
        p, s, a = self.per_element, self.swizzle_len, self.atom_len
        if s == 0:
            return o
        mask = (1 << s) - 1
        lo, hi = (p, p + a) if self.swizzle_inner else (p + a, p)  # bits written, bits read
        o = _iv(o)
        if type(o) is int:
            return o ^ (((o >> hi) & mask) << lo)
        try:
            hi_c, mask_c, lo_c = (convert(v, o) for v in (hi, mask, lo))
        except (TypeError, ValueError) as e:  # swizzle bits past the offset's integer type
            raise LayoutError(f"the swizzle ({p}, {s}, {a}) does not fit the {o.ty} offset: {e}") from None
        bits = BitAnd(Shr(o, hi_c) if hi else o, mask_c)
        return BitXor(o, Shl(bits, lo_c) if lo else bits)

    def apply(self, *coord: Any, shape: Sequence[Any] | None = None) -> dict[str, Any]:
        out = dict(self.tile_layout.apply(*coord, shape=shape))
        if "m" in out:
            out["m"] = self.swizzle(out["m"])
        return out

    def size(self, axis_name: str | None = None) -> Any:
        return self.tile_layout.size(axis_name)

    def layout_span(self, axis_name: str | None = None) -> Any:
        return self.tile_layout.layout_span(axis_name)

    def alloc_span(self) -> Any:
        """Elements to allocate: the span rounded up to a multiple of ``2**b``, ``b`` one past
        the highest bit the swizzle writes (a swizzled offset keeps every bit above it, so it
        stays inside the same ``2**b`` block; TIRx allocates the same)."""
        sp = self.layout_span("m")
        if self.swizzle_len == 0:
            return sp
        written = self.per_element if self.swizzle_inner else self.per_element + self.atom_len
        period = 1 << (written + self.swizzle_len)
        return _mul(_fdiv(_add(sp, period - 1), period), period)

    def unpack(self, num: int, axis: str = "m") -> ComposeLayout:
        if num <= 0 or num & (num - 1):
            raise ValueError(f"unpack: num must be a power of 2, got {num}")
        return ComposeLayout(self.per_element + num.bit_length() - 1, self.swizzle_len, self.atom_len,
                             self.tile_layout.unpack(num, axis), self.swizzle_inner)  # fmt: skip

    def pack(self, num: int, axis: str = "m") -> ComposeLayout:
        if num <= 0 or num & (num - 1):
            raise ValueError(f"pack: num must be a power of 2, got {num}")
        if self.per_element < num.bit_length() - 1:
            raise LayoutError(f"pack: per_element {self.per_element} is too small to pack {num} elements")
        return ComposeLayout(self.per_element - (num.bit_length() - 1), self.swizzle_len, self.atom_len,
                             self.tile_layout.pack(num, axis), self.swizzle_inner)  # fmt: skip

    def canonicalize(self) -> ComposeLayout:
        return self.replace(tile_layout=self.tile_layout.canonicalize())

    def tile(
        self, outer: TileLayout, outer_shape: Sequence[Any], inner_shape: Sequence[Any]
    ) -> ComposeLayout:
        """The swizzle over the tiled tile layout (see :meth:`TileLayout.tile`)."""
        return self.replace(tile_layout=self.tile_layout.tile(outer, outer_shape, inner_shape))

    def tile_to(self, to_shape: Sequence[Any], current_shape: Sequence[Any]) -> ComposeLayout:
        return self.tile(*_tile_args(to_shape, current_shape))


def _tile_args(to_shape: Sequence[Any], current_shape: Sequence[Any]) -> tuple:
    if len(to_shape) != len(current_shape):
        raise LayoutError(f"tile_to: shapes {list(to_shape)} and {list(current_shape)} differ in rank")
    reps = []
    for t, c in zip(to_shape, current_shape):
        t, c = _iv(t), _iv(c)
        if type(t) is not int or type(c) is not int or c <= 0 or t % c:
            raise LayoutError(f"tile_to: {list(to_shape)} is not a whole multiple of {list(current_shape)}")
        reps.append(t // c)
    strides, acc = [], 1
    for r in reversed(reps):
        strides.append(acc)
        acc *= r
    outer = TileLayout(shard=[Iter(r, st) for r, st in zip(reps, reversed(strides))])
    return outer, reps, list(current_shape)


def _group(iters: Sequence[Iter], shape: Sequence[Any]) -> list[list[Iter]]:
    """Shard iters split into runs whose extents multiply to each dimension of ``shape``
    (innermost first; an iter spanning a dimension boundary is split in two)."""
    todo = list(iters)
    groups: list[list[Iter]] = []
    for d in reversed(list(shape)):
        d = _iv(d)
        if type(d) is not int:
            raise LayoutError(f"group: the shape {list(shape)} must be constant")
        g: list[Iter] = []
        while d != 1:
            if not todo:
                raise LayoutError(f"group: the layout has fewer elements than the shape {list(shape)}")
            it = todo.pop()
            e = _iv(it.extent)
            if type(e) is not int:
                raise LayoutError("group: the layout's extents must be constant")
            if d % e == 0:
                g.insert(0, it)
                d //= e
            elif e % d == 0:  # split: the inner d positions here, the rest to the next dimension
                g.insert(0, Iter(d, it.stride, it.axis))
                todo.append(Iter(e // d, _mul(it.stride, d), it.axis))
                d = 1
            else:
                raise LayoutError(f"group: an iter of extent {e} straddles the dimensions of {list(shape)}")
        groups.insert(0, g)
    if any(_iv(it.extent) != 1 for it in todo):
        raise LayoutError(f"group: the layout has more elements than the shape {list(shape)}")
    if groups:
        groups[0] = todo + groups[0]
    return groups


# ------------------------------------------------------------------ index regrouping
def _regroup(idx: list, shape: list, ext: list) -> list:
    """Row-major coordinates ``idx`` over ``shape`` as row-major coordinates over ``ext``.

    Runs of dimensions and of extents with the same product are matched one run at a time
    (an index splits into several iters, or several indices fuse into one), so the usual
    cases need no division; anything else is linearized whole and split."""
    if not ext:
        return []
    out: list = []
    i = j = 0
    while i < len(shape) and j < len(ext):
        i2, j2 = i + 1, j + 1
        pd, pe = _iv(shape[i]), _iv(ext[j])
        while not _same(pd, pe):
            if type(pd) is not int or type(pe) is not int:
                return _split(_linear(idx, shape), ext)
            if pd < pe:
                if i2 >= len(shape):
                    return _split(_linear(idx, shape), ext)
                pd *= _iv(shape[i2])
                i2 += 1
            else:
                if j2 >= len(ext):
                    return _split(_linear(idx, shape), ext)
                pe *= _iv(ext[j2])
                j2 += 1
        out += _split(_linear(idx[i:i2], shape[i:i2]), ext[j:j2])
        i, j = i2, j2
    if i < len(shape) or j < len(ext):  # trailing extent-1 dims or iters
        rest_d = _prod(shape[i:])
        rest_e = _prod(ext[j:])
        if not (_iv(rest_d) == 1 and _iv(rest_e) == 1):
            return _split(_linear(idx, shape), ext)
        out += [0] * (len(ext) - j)
    return out


def _linear(idx: list, shape: list) -> Any:
    lin: Any = 0
    for x, d in zip(idx, shape):
        lin = _add(_mul(lin, d), x)
    return lin


def _split(lin: Any, ext: list) -> list:
    out = []
    for k, e in enumerate(ext):
        inner = _prod(ext[k + 1 :])
        c = _fdiv(lin, inner)
        if k:  # the outermost part needs no modulo (the index is in bounds)
            c = _fmod(c, e)
        out.append(c)
    return out


# ------------------------------------------------------------------ addressing
def memory_offset(layout: Layout, indices: Sequence[Any], shape: Sequence[Any], name: str = "tensor") -> Any:
    """The element offset (axis ``m``) of the element at ``indices`` of a tensor of ``shape``
    stored with ``layout``: what codegen and the interpreter address."""
    bad = [a for a in layout.axes() if a != "m"]
    if bad:
        raise LayoutError(
            f"{name}: its layout places elements on {', '.join(bad)}; an element of a layout with "
            "thread or tensor-memory axes cannot be addressed directly (TIRx refuses it too)"
        )
    return layout.apply(*indices, shape=shape).get("m", 0)


def vector_run(layout: Layout, shape: Sequence[Any], base: Any, lanes: int) -> bool:
    """Whether ``lanes`` elements along the last dimension from ``base`` (an index provably a
    multiple of ``lanes``) sit at consecutive offsets: the innermost shard iter of that
    dimension is a stride-1 run on ``m`` of a multiple of ``lanes`` positions, every other
    memory stride and the origin are multiples of ``lanes`` (so the run starts aligned), and a
    swizzle keeps at least that many low bits."""
    if lanes <= 1 or not shape or not _multiple_of(base, lanes):
        return False
    tile = layout
    if isinstance(layout, ComposeLayout):
        if layout.swizzle_len and lanes > (1 << layout.per_element):
            return False
        tile = layout.tile_layout
    assert isinstance(tile, TileLayout)  # the layout kinds: TileLayout, and ComposeLayout over one
    last = _iv(shape[-1])
    if type(last) is not int or last % lanes:
        return False
    try:
        groups = _group(tile.shard, shape)
    except LayoutError:
        return False
    inner = groups[-1][-1] if groups[-1] else None
    if inner is None or inner.axis.name != "m" or _iv(inner.stride) != 1:
        return False
    if type(_iv(inner.extent)) is not int or _iv(inner.extent) % lanes:
        return False
    others = [it for g in groups for it in g if it is not inner]
    return all(type(_iv(it.stride)) is int and _iv(it.stride) % lanes == 0 for it in others) and all(
        type(_iv(v)) is int and _iv(v) % lanes == 0
        for k, v in zip(tile.offset_axes, tile.offset_values)
        if k == "m"
    )


def _multiple_of(e: Any, k: int) -> bool:
    """``e`` is a multiple of ``k`` by its form (constants, products, sums, ``% c``)."""
    e = _iv(e)
    if type(e) is int:
        return e % k == 0
    name = type(e).__name__
    if name == "Mul":
        return _multiple_of(e.a, k) or _multiple_of(e.b, k)
    if name in ("Add", "Sub"):
        return _multiple_of(e.a, k) and _multiple_of(e.b, k)
    if name == "FloorMod":
        return _multiple_of(e.a, k) and _multiple_of(e.b, k)
    if name == "Shl":
        sh = _iv(e.b)
        return _multiple_of(e.a, k) or (type(sh) is int and 0 <= sh < 64 and (1 << sh) % k == 0)
    return False


def alloc_span(layout: Layout) -> Any:
    """Elements a tensor stored with ``layout`` occupies."""
    if isinstance(layout, ComposeLayout):
        return layout.alloc_span()
    return layout.layout_span("m")


def enumerate_offsets(layout: Layout, shape: Sequence[int]) -> list[int]:
    """Memory offsets of every element of a constant-shaped tensor, row-major (for tests)."""
    n = math.prod(shape)
    out = []
    for lin in range(n):
        idx, r = [], lin
        for d in reversed(shape):
            idx.append(r % d)
            r //= d
        out.append(int(_iv(memory_offset(layout, tuple(reversed(idx)), tuple(shape)))))
    return out
