"""The script surface of layouts: ``T.S[shape : stride]``, ``T.R[...]``, ``T.cuda.Axis``,
``T.cuda.layout`` (TIRx's spelling; the nodes are in ``tirx.ir.layout``).

``T.TileLayout(T.S[(4, 8) : (1, 4)] + T.R[2 : 4 @ T.cuda.Axis.laneid] + 2 @ T.cuda.Axis.warpid + 5)``:
``S`` gives the shard iters, ``R`` the replica iters, a stride is an int (on ``m``),
``value @ axis``, an axis name (stride 1 on it) or a ``(value, axis)`` pair; strides left out
are row-major on ``m``; what is added that is not a spec is an offset (a bare value is on
``m``). Plain Python objects that only build layouts, never IR of their own.
"""

from __future__ import annotations

import enum
from typing import Any

from ..ir.buffer import register_views
from ..ir.expr import IntImm, PrimExpr, const
from ..ir.layout import THREAD_AXES as _THREAD_AXES
from ..ir.layout import Axis, ComposeLayout, Iter, Layout, Offsets, OnAxis, TileLayout
from ..ir.types import PrimType, as_prim

__all__ = [
    "Axis",
    "ComposeLayout",
    "CudaAxes",
    "Iter",
    "Layout",
    "LayoutSpec",
    "R",
    "S",
    "TileLayout",
    "cuda_layout",
]


def _tup(x: Any) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _to_iters(pair: tuple | None, what: str) -> list:
    if pair is None:
        return []
    shape, strides = pair
    if strides is None:  # row-major on m
        # a constant stride is typed int64 where an int64 extent is at or right of its own
        # dimension, as TIRx's are (``T.Iter(T.int64(8), T.int64(1), "m")``)
        strides, acc, wide = [], 1, False
        for e in reversed(shape):
            wide = wide or str(getattr(e, "ty", "")) == "int64"
            strides.append(const(acc, "int64") if wide and type(acc) is int else acc)
            e = e.value if isinstance(e, IntImm) else e
            acc = acc * e if type(acc) is not int or type(e) is int else e * acc
        strides.reverse()
    if len(strides) != len(shape):
        raise ValueError(f"T.{what}[shape : stride]: {len(shape)} extents but {len(strides)} strides")
    out = []
    for e, s in zip(shape, strides):
        if isinstance(s, OnAxis):
            out.append(Iter(e, s.value, s.axis))
        elif isinstance(s, (str, Axis)):
            out.append(Iter(e, 1, s))
        elif isinstance(s, tuple) and len(s) == 2:
            out.append(Iter(e, s[0], s[1]))
        else:
            out.append(Iter(e, s, "m"))
    return out


class LayoutSpec:
    """``S[...] + R[...] + offset``: what ``T.TileLayout(spec)`` is built from."""

    __slots__ = ("offset", "replica", "shard")
    __layout_operand__ = True  # the Python frontend applies + to it as Python does

    def __init__(self, shard: tuple | None = None, replica: tuple | None = None, offset: Any = None):
        self.shard = shard
        self.replica = replica
        self.offset = offset

    def __layout_spec__(self) -> tuple:
        off = None if self.offset is None else Offsets.of(self.offset).terms
        return _to_iters(self.shard, "S"), _to_iters(self.replica, "R"), off

    def __add__(self, other: Any) -> LayoutSpec:
        if isinstance(other, LayoutSpec):
            return LayoutSpec(self.shard or other.shard, other.replica or self.replica,
                              _merge(self.offset, other.offset))  # fmt: skip
        if isinstance(other, (OnAxis, Offsets, int, PrimExpr)) and not isinstance(other, bool):
            return LayoutSpec(self.shard, self.replica, _merge(self.offset, other))
        return NotImplemented

    def __radd__(self, other: Any) -> LayoutSpec:
        if isinstance(other, (OnAxis, Offsets, int, PrimExpr)) and not isinstance(other, bool):
            return LayoutSpec(self.shard, self.replica, _merge(other, self.offset))
        return NotImplemented

    def __repr__(self) -> str:
        return f"LayoutSpec(shard={self.shard!r}, replica={self.replica!r}, offset={self.offset!r})"


def _merge(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return Offsets.of(a) + b


class _SpecBuilder:
    """``S[8, 4]`` (extents, row-major), ``S[8 : 4 @ laneid]``, ``S[(8, 4) : (4 @ laneid, 1)]``."""

    __slots__ = ("_kind",)

    def __init__(self, kind: str):
        self._kind = kind

    def __getitem__(self, key: Any) -> LayoutSpec:
        if isinstance(key, slice):
            if key.step is not None:
                raise ValueError(f"T.{self._kind}[shape : stride] takes no third part")
            pair: tuple[tuple, tuple | None] = (_tup(key.start), _tup(key.stop))
        else:
            pair = (_tup(key), None)
        return LayoutSpec(shard=pair) if self._kind == "S" else LayoutSpec(replica=pair)

    def __repr__(self) -> str:
        return f"T.{self._kind}"


S = _SpecBuilder("S")
R = _SpecBuilder("R")


class CudaAxes:
    """``T.cuda.Axis``: the CUDA layout axes (thread/block ids and tensor-memory lane/column)."""

    NAMES = (*_THREAD_AXES, "TCol", "TLane")

    def __getattr__(self, name: str) -> Axis:
        if name in self.NAMES:
            return Axis(name)
        raise AttributeError(f"T.cuda.Axis has no axis {name!r} (one of {', '.join(self.NAMES)})")

    def get(self, name: str) -> Axis:
        if name not in self.NAMES:
            raise ValueError(f"Unknown backend axis: {name}")
        return Axis(name)

    def __dir__(self) -> list[str]:
        return [*self.NAMES, "get"]

    def __repr__(self) -> str:
        return "T.cuda.Axis"


class SwizzleMode(enum.Enum):
    """The TMA / MMA shared-memory swizzle modes."""

    SWIZZLE_NONE = 0
    SWIZZLE_32B_ATOM = 1
    SWIZZLE_64B_ATOM = 2
    SWIZZLE_128B_ATOM = 3


def _bits(dtype: Any) -> int:
    from ..ir.types import as_prim

    return as_prim(dtype, "dtype").bits


def mma_atom_layout(dtype: Any, swizzle_mode: SwizzleMode | int) -> ComposeLayout:
    """The MMA-compatible shared-memory atom: 16-byte units kept whole, ``swizzle_mode``
    bits XORed in from 8 units (128 bytes) higher."""
    mode = SwizzleMode(swizzle_mode)
    per_element = (128 // _bits(dtype)).bit_length() - 1
    period = 1 << (per_element + mode.value + 3)
    return ComposeLayout(per_element, mode.value, 3, TileLayout(S[(period,)]))


def mma_atom_shape(dtype: Any, swizzle_mode: SwizzleMode | int, shape: Any = None) -> list[int]:
    """The atom's 2-D shape (8 rows of the swizzle width), left-padded with 1s to ``shape``'s rank."""
    mode = SwizzleMode(swizzle_mode)
    if mode is SwizzleMode.SWIZZLE_NONE:
        raise ValueError("mma_atom_shape: SWIZZLE_NONE has no atom")
    atom = [8, {1: 256, 2: 512, 3: 1024}[mode.value] // _bits(dtype)]
    if shape is None:
        return atom
    return [1] * (len(shape) - 2) + atom


def mma_shared_layout(dtype: Any, swizzle_mode: SwizzleMode | int, shape: Any) -> Layout:
    """The MMA-compatible shared-memory layout of a ``shape`` tensor: the swizzle atom tiled
    down the rows, then across the columns (canonical). Without a swizzle: 16-byte units,
    column-block major (``e16 * row + rows * e16 * (col // e16) + col % e16``), or row-major
    when the columns are not a whole number of units."""
    mode = SwizzleMode(swizzle_mode)
    shape = [int(x) for x in shape]
    if mode is SwizzleMode.SWIZZLE_NONE:
        e16 = 128 // _bits(dtype)
        m, k = shape[-2], shape[-1]
        if k % e16:
            return TileLayout(S[tuple(shape)]).canonicalize()
        lead = shape[:-2]
        strides: list[Any] = []
        acc = m * k
        for e in reversed(lead):
            strides.insert(0, acc)
            acc *= e
        return TileLayout(S[(*lead, m, k // e16, e16) : (*strides, e16, m * e16, 1)]).canonicalize()
    atom_shape = mma_atom_shape(dtype, mode, shape)
    mid = list(atom_shape)
    mid[-2] = shape[-2]
    return mma_atom_layout(dtype, mode).tile_to(mid, atom_shape).tile_to(shape, mid).canonicalize()


def tmem_datapath_layout(datapath: str, rows: int, cols: int, sub_slab: int = 0) -> TileLayout:
    """The tensor-memory layout (rows -> ``TLane``, columns -> ``TCol``) a tcgen05 MMA of
    datapath ``A``, ``B``, ``D``, ``E``, ``F`` or ``G`` writes (PTX ISA, tcgen05 data paths)."""
    rows_of = {"A": 128, "B": 64, "C": 64, "D": 128, "E": 64, "F": 64, "G": 32}
    if datapath not in rows_of:
        raise ValueError(f"tmem_datapath_layout: unknown datapath {datapath!r}; supported: {sorted(rows_of)}")
    if rows != rows_of[datapath]:
        raise ValueError(
            f"tmem_datapath_layout: datapath={datapath!r} expects rows={rows_of[datapath]}, got {rows}"
        )
    if sub_slab not in (0, 1):
        raise ValueError(f"tmem_datapath_layout: sub_slab must be 0 or 1, got {sub_slab}")
    lane, col = Axis("TLane"), Axis("TCol")
    if datapath in ("A", "B", "D", "E", "G") and sub_slab:
        raise ValueError(
            f"tmem_datapath_layout: datapath={datapath!r} spans both sub-slabs; sub_slab must be 0"
        )
    if datapath in ("A", "D"):
        return TileLayout(S[(rows, cols) : (1 @ lane, 1 @ col)])
    if datapath == "G":
        if cols % 4:
            raise ValueError(f"tmem_datapath_layout: datapath='G' requires cols % 4 == 0, got {cols}")
        return TileLayout(S[(rows, 4, cols // 4) : (1 @ lane, 32 @ lane, 1 @ col)])
    if datapath in ("B", "E"):
        if cols % 2:
            raise ValueError(f"tmem_datapath_layout: datapath={datapath!r} expects even cols, got {cols}")
        return TileLayout(S[(rows, 2, cols // 2) : (1 @ lane, 64 @ lane, 1 @ col)])
    spec = S[(4, 16, cols) : (32 @ lane, 1 @ lane, 1 @ col)]  # C and F: 16 rows per 32-lane warp slab
    return TileLayout(spec + (16 @ lane) if sub_slab else spec)


def _datapath(m: int, cta_group: int, ws: bool, sparse: bool) -> str:
    """The PTX tcgen05 data-path letter of an MMA of instruction ``M`` and ``cta_group``."""
    if sparse:
        raise ValueError(
            f"alloc_tcgen05_mma_AB: sparse A (Layout C) not supported in v1 (M={m}, cta_group={cta_group})"
        )
    if ws and not (cta_group == 1 and m in (64, 128)):
        raise ValueError(
            f"alloc_tcgen05_mma_AB: ws=True requires cta_group=1, M=64 or M=128; got M={m}, cta_group={cta_group}"
        )
    letter = {(1, 128): "D", (1, 64): "E" if ws else "F", (2, 256): "A", (2, 128): "B"}.get((cta_group, m))
    if letter is None:
        raise ValueError(
            f"alloc_tcgen05_mma_AB: no supported datapath for M={m}, cta_group={cta_group}, ws={ws} "
            "(supported: cta1 M in {64,128}, cta2 M in {128,256})"
        )
    return letter


def tmem_mma_operand_layout(operand: str, shape: Any, dtype: Any, *, M: int, cta_group: int,
                            ws: bool = False, sparse: bool = False, group: Any = None) -> TileLayout:  # fmt: skip
    """The tensor-memory layout of a tcgen05 MMA operand: ``"D"`` (the accumulator) or ``"A"``
    (A in tensor memory), of buffer ``shape``, for an MMA of instruction ``M`` and ``cta_group``
    (per-CTA rows ``M // cta_group``). A 16-bit accumulator takes two columns per element."""
    lane, col = Axis("TLane"), Axis("TCol")
    dp = _datapath(M, cta_group, ws, sparse)
    rows = M // cta_group
    ext = [int(x) for x in shape]
    half = dp in ("B", "E")

    def check(r: int) -> None:
        if r != rows:
            raise ValueError(f"alloc_mma_{operand}: M={M}, cta_group={cta_group} expects per-CTA rows {rows}, "
                             f"got {r} (shape {ext})")  # fmt: skip

    if operand == "D":
        if group is not None:
            gs = [int(g) for g in group]
            if len(ext) != 2:
                raise ValueError(f"alloc_tcgen05_mma_D group= requires 2D (m,N), got {ext}")
            if len(gs) != 3 or gs[1] != 2:
                raise ValueError(f"alloc_tcgen05_mma_D group must be (s,2,n), got {group}")
            m, n_all = ext
            if gs[0] * 2 * gs[2] != n_all:
                raise ValueError(f"alloc_tcgen05_mma_D group {group} product != N={n_all}")
            if not half:
                raise ValueError(f"alloc_tcgen05_mma_D group= only for Layout B/E, got {dp}")
            check(m)
            s_, _, n = gs
            # (TIRx gives this grouped form as is: no 16-bit column doubling)
            return TileLayout(S[(m, s_, 2, n) : (1 @ lane, n @ col, 64 @ lane, 1 @ col)]).canonicalize()
        if len(ext) == 2:
            check(ext[0])
            layout = tmem_datapath_layout(dp, ext[0], ext[1])
        elif len(ext) == 3 and ext[0] == 2 and half:
            check(ext[1])
            layout = TileLayout(S[tuple(ext) : (64 @ lane, 1 @ lane, 1 @ col)])
        elif len(ext) == 3 and ext[1] == 2 and half:
            check(ext[0])
            layout = TileLayout(S[tuple(ext) : (1 @ lane, 64 @ lane, 1 @ col)])
        elif len(ext) == 4 and ext[2] == 2 and half:
            check(ext[0])
            layout = TileLayout(S[tuple(ext) : (1 @ lane, ext[3] @ col, 64 @ lane, 1 @ col)])
        else:
            raise ValueError(f"alloc_tcgen05_mma_D: unsupported D shape {ext} for datapath {dp}")
        if _bits(dtype) == 16:  # a 16-bit accumulator sits in the low half of a 32-bit column
            layout = TileLayout(
                shard=[
                    Iter(i.extent, _times(i.stride, 2) if i.axis is col else i.stride, i.axis)
                    for i in layout.shard
                ],
                replica=layout.replica,
            )
    elif operand == "A":
        if dp in ("A", "D", "F"):
            if len(ext) != 2:
                what = f"{dp} identity" if dp in ("A", "D") else dp
                raise ValueError(f"alloc_tcgen05_mma_A: datapath {what} needs 2D (m,K), got {ext}")
            check(ext[0])
            layout = TileLayout(S[tuple(ext) : (1 @ lane, 1 @ col)])
        elif len(ext) == 3 and ext[0] == 2:  # B or E: bank-batched
            check(ext[1])
            layout = TileLayout(S[tuple(ext) : (64 @ lane, 1 @ lane, 1 @ col)])
        elif dp == "B" and len(ext) == 2:  # replicated over both lane halves
            check(ext[0])
            layout = TileLayout(S[tuple(ext) : (1 @ lane, 1 @ col)] + R[2 : 64 @ lane])
        elif dp == "B":
            raise ValueError(
                f"alloc_tcgen05_mma_A: datapath B needs (64,K) replica or (2,64,K) bank-batched, got {ext}"
            )
        else:
            raise ValueError(f"alloc_tcgen05_mma_A: datapath E (M=64 .ws) requires bank-batched (2,64,K); "
                             f"flat {ext} rejected (hidden second-half read)")  # fmt: skip
    else:
        raise ValueError(f"tmem_mma_operand_layout: operand must be 'A' or 'D', got {operand!r}")
    return layout.canonicalize()


class _CudaLayout:
    """``T.cuda.layout``: CUDA layout factories (TIRx's ``tvm_tirx.backend.cuda.layout``)."""

    Axis = Axis
    ComposeLayout = ComposeLayout
    Iter = Iter
    Layout = Layout
    TileLayout = TileLayout
    S = S
    R = R
    SwizzleMode = SwizzleMode
    mma_atom_layout = staticmethod(mma_atom_layout)
    mma_atom_shape = staticmethod(mma_atom_shape)
    mma_shared_layout = staticmethod(mma_shared_layout)
    tmem_datapath_layout = staticmethod(tmem_datapath_layout)
    tmem_mma_operand_layout = staticmethod(tmem_mma_operand_layout)

    def __repr__(self) -> str:
        return "T.cuda.layout"


cuda_layout = _CudaLayout()


# ------------------------------------------------------------------ tensor views
# ``A.view(...)``, ``A.permute(...)``, ``A.sub[...]``: a new tensor declared over A's storage
# (``T.decl_tensor(A.data, ...)``) whose layout addresses the same elements; what TIRx builds
# for them, one declaration per step, each named ``v`` as TIRx names them.
def _n(x: Any) -> Any:
    """A Python int for an integer constant."""
    return x.value if isinstance(x, IntImm) else x


def _declare(buf: Any, shape: Any, layout: Any, dtype: Any = None) -> Any:
    from tirx.surface.builder import IRBuilder

    from ..ir.types import TensorType

    if buf.scope == "tmem":
        raise ValueError(f"tensor {buf.name}: views of tensor memory are not supported")
    dt = buf.dtype if dtype is None else dtype
    ty = TensorType(tuple(shape), dt, buf.scope, (), buf.align, None, None, layout)
    # TIRx's view names its storage's scope, and its pointer as the source's (``v.data``)
    return IRBuilder.current().decl("v", ty, buf.data, buf.scope, data_of=buf)


def _default(buf: Any) -> Layout:
    return buf.layout if buf.layout is not None else TileLayout(S[tuple(buf.shape)])


def _is_memory_tile(layout: Any, shape: Any) -> bool:
    """One memory iter per dimension, of the dimension's extent: dimensions address directly."""
    return (
        isinstance(layout, TileLayout)
        and not layout.replica
        and len(layout.shard) == len(shape)
        and all(it.axis.name == "m" for it in layout.shard)
        and all(k == "m" for k in layout.offset_axes)
        and all(_same(it.extent, d) for it, d in zip(layout.shard, shape))
    )


def _same(a: Any, b: Any) -> bool:
    a, b = _n(a), _n(b)
    if type(a) is int or type(b) is int:
        return type(a) is type(b) and a == b
    from ..ir.structural import structural_equal

    return structural_equal(a, b)


def _prod(xs: Any) -> Any:
    p: Any = 1
    for x in xs:
        p = p * _n(x)
    return p


def _reshape(tile: TileLayout, shape: list) -> TileLayout | None:
    """The memory tile's strides regrouped for ``shape`` (None: the dimensions cross a gap)."""
    old = [(_n(it.extent), _n(it.stride)) for it in tile.shard]
    if len(shape) == len(old) and all(_same(a, b) for a, (b, _) in zip(shape, old)):
        return tile
    if not all(type(e) is int and type(s) is int for e, s in old) or not all(type(d) is int for d in shape):
        return None
    runs: list[list[int]] = []  # (extent, stride), innermost first, contiguous runs fused
    for e, s in reversed(old):
        if e == 1:
            continue
        if runs and s == runs[-1][0] * runs[-1][1]:
            runs[-1][0] *= e
        else:
            runs.append([e, s])
    strides: list = [None] * len(shape)
    i = len(shape) - 1
    for e, s in runs:
        p = 1
        while i >= 0:
            strides[i] = p * s
            p *= shape[i]
            i -= 1
            if p == e:
                break
        if p != e:
            return None
    while i >= 0 and shape[i] == 1:
        strides[i] = strides[i + 1] * shape[i + 1] if i + 1 < len(shape) else 1
        i -= 1
    if i >= 0:
        return None
    return TileLayout(shard=[Iter(d, st, "m") for d, st in zip(shape, strides)], offset=tile.offset)


def _view(buf: Any, shape: tuple, layout: Any) -> Any:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if (
        len(shape) == 1
        and (isinstance(shape[0], (str, PrimType)) or hasattr(shape[0], "__tirx_type__"))
        and layout is None
    ):
        return _view_dtype(buf, as_prim(shape[0], "view(dtype)"))
    dims = [_n(d) for d in shape]
    if layout is not None:
        return _declare(buf, _typed(shape, dims), layout)
    holes = [k for k, d in enumerate(dims) if type(d) is int and d == -1]
    if len(holes) > 1:
        raise ValueError("view: at most one inferred dimension is allowed")
    total = _prod(buf.shape)
    if holes:
        rest = _prod(d for k, d in enumerate(dims) if k != holes[0])
        dims[holes[0]] = total // rest
    elif type(total) is int and type(_prod(dims)) is int and total != _prod(dims):
        raise ValueError(
            f"view: the shape {tuple(buf.shape)} and the new shape {tuple(dims)} are not compatible"
        )
    typed = _typed(shape, dims)
    if buf.layout is None:
        return _declare(buf, typed, None)
    if _is_memory_tile(buf.layout, buf.shape):
        r = _reshape(buf.layout, dims)
        if r is not None:
            return _declare(buf, typed, r)
    return _declare(buf, typed, buf.layout)


def _typed(given: tuple, dims: list) -> list:
    """The view's dimensions, each given integer constant as given (``A.view(T.int64(64))``
    keeps an int64 dimension, as TIRx does), the inferred one as computed."""
    return [g if isinstance(g, IntImm) and g.value != -1 else d for g, d in zip(given, dims)]


def _view_dtype(buf: Any, dtype: PrimType) -> Any:
    """``A.view("uint32")``: the same storage as another element type (TIRx's rule: the last
    dimension shrinks or grows by the ratio of the element sizes; the layout, when there is
    one, is rescaled to the new element size)."""
    cur = buf.dtype
    # whole elements, lanes included: a (32, 2) float16 tensor viewed as float16x2 is (32, 1)
    # (TIRx scales by the bits of one lane, so the view reads past the storage: held-out round
    # 14's helper; an int8x4 viewed as int32 kept a quarter of its extent)
    nb, cb = dtype.bits * dtype.lanes, cur.bits * cur.lanes
    big, small = max(nb, cb), min(nb, cb)
    if big % small:
        raise ValueError(f"view(dtype): {cur} cannot be viewed as {dtype} (element sizes {cb} and {nb} bits)")
    if not buf.shape:
        raise ValueError(f"view(dtype): tensor {buf.name} has no dimensions")
    pack, ratio = nb > cb, big // small
    last = _n(buf.shape[-1])
    shape = [*buf.shape[:-1], last // ratio if pack else last * ratio]
    if buf.layout is None:
        layout = None
        if pack and type(last) is int and last % ratio:
            raise ValueError("view(dtype): shape, offset and strides must align to the new dtype")
    else:
        source = buf.layout
        if _is_memory_tile(source, buf.shape):
            if _n(source.shard[-1].stride) != 1:
                raise ValueError("view(dtype): the last dimension must have unit stride")
            values = [last, *source.offset.values(), *[it.stride for it in source.shard[:-1]]]
            if pack and any(type(_n(v)) is int and _n(v) % ratio for v in values):
                raise ValueError("view(dtype): shape, offset and strides must align to the new dtype")

            def scale(v: Any) -> Any:
                v = _n(v)
                return v // ratio if pack else v * ratio

            layout = TileLayout(
                shard=[
                    Iter(_n(d), scale(it.stride) if k + 1 < len(shape) else 1, "m")
                    for k, (d, it) in enumerate(zip(shape, source.shard))
                ],
                offset={a: scale(v) for a, v in source.offset.items()},
            )
        else:
            layout = source.pack(ratio, "m") if pack else source.unpack(ratio, "m")
    return _declare(buf, shape, layout, dtype)


def _parts(buf: Any) -> tuple:
    """The tile layout to operate on and the swizzle to put back (a bare swizzle's period
    tile is spread over the tensor's shape first)."""
    lay = _default(buf)
    if isinstance(lay, ComposeLayout):
        sw = (lay.per_element, lay.swizzle_len, lay.atom_len, lay.swizzle_inner)
        tile = lay.tile_layout
        if tile.is_trivial():
            tile = TileLayout(S[tuple(buf.shape)])
        return tile, sw
    return lay, None


def _grouped(buf: Any, tile: TileLayout, sw: Any) -> tuple:
    if sw is None and _is_memory_tile(_default(buf), buf.shape):
        return tile, list(range(len(buf.shape) + 1))
    return tile.group(list(buf.shape))


def _wrap(tile: TileLayout, sw: Any) -> Layout:
    return tile if sw is None else ComposeLayout(sw[0], sw[1], sw[2], tile, sw[3])


def _permute(buf: Any, dims: tuple) -> Any:
    dims = tuple(_n(d) for d in dims)
    if sorted(dims) != list(range(len(buf.shape))):
        raise ValueError(f"permute: invalid dimensions {dims}")
    tile, sw = _parts(buf)
    grouped, seps = _grouped(buf, tile, sw)
    return _declare(buf, [buf.shape[d] for d in dims], _wrap(grouped.permute_by_groups(seps, list(dims)), sw))


def _rebuild(buf: Any, shape: list, shard: list, grouped: TileLayout, sw: Any, extra: Any) -> Any:
    off = dict(grouped.offset)
    m = Axis("m")
    if m in off:
        a, b = _n(off[m]), _n(extra)
        extra = a + b if type(a) is int and type(b) is int else off[m] + extra
    off[m] = extra
    return _declare(buf, shape, _wrap(TileLayout(shard=shard, replica=grouped.replica, offset=off), sw))


def _dim(buf: Any, dim: int) -> int:
    nd = len(buf.shape)
    if dim < 0:
        dim += nd
    if not 0 <= dim < nd:
        raise ValueError(f"sub: dim {dim} out of range for tensor of rank {nd}")
    return dim


def _times(x: Any, k: Any) -> Any:
    x, k = _n(x), _n(k)
    if type(x) is int and type(k) is int:
        return x * k
    return x * k if type(x) is not int else k * x


def _drop(buf: Any, dim: int, index: Any) -> Any:
    dim = _dim(buf, dim)
    index = _n(index)
    ext = _n(buf.shape[dim])
    if type(index) is int and (index < 0 or (type(ext) is int and index >= ext)):
        raise ValueError(f"index {index} out of range for dim {dim} of extent {ext}")
    tile, sw = _parts(buf)
    grouped, seps = _grouped(buf, tile, sw)
    its = list(grouped.shard)
    group = its[seps[dim] : seps[dim + 1]]
    if len(group) == 1:
        off = _times(index, group[0].stride)
    else:
        inner = [_n(it.extent) for it in group[1:]]
        if not all(type(e) is int for e in inner):
            raise ValueError("select/narrow: dim with multiple layout iters requires concrete iter extents")
        off, rest = None, index
        for k, it in enumerate(group):
            block = _prod(inner[k:])
            if block == 1:
                c = rest
            else:
                c, rest = rest // block, rest % block
            term = _times(c, it.stride)
            off = term if off is None else off + term
    shape = [*buf.shape[:dim], *buf.shape[dim + 1 :]]
    return _rebuild(buf, shape, its[: seps[dim]] + its[seps[dim + 1] :], grouped, sw, off)


def _length(start: Any, stop: Any) -> Any:
    start, stop = _n(start), _n(stop)
    if type(start) is int and type(stop) is int:
        return stop - start
    if type(stop).__name__ == "Add" and _same(stop.a, start):  # i * 8 : i * 8 + 8
        return _n(stop.b)
    a, b = _linear(stop), _linear(start)
    if a is not None and b is not None:  # i : i + 2 * r + 1 is 2 * r + 1 (TIRx's analyzer's answer)
        for k, (v, c) in b.items():
            a[k] = (v, a.get(k, (v, 0))[1] - c)
        if all(c == 0 for k, (_v, c) in a.items() if k != 1):
            return a.get(1, (None, 0))[1]
    return stop - start


def _linear(e: Any) -> dict | None:
    """``e`` as integer coefficients of its variables (by identity) and a constant (key 1), or
    None when it is not a sum of constant multiples of variables."""
    from ..ir import Var

    e = _n(e)
    if type(e) is int:
        return {1: (None, e)}
    if isinstance(e, Var):
        return {id(e): (e, 1)}
    kind = type(e).__name__
    if kind in ("Add", "Sub"):
        x, y = _linear(e.a), _linear(e.b)
        if x is None or y is None:
            return None
        sign = -1 if kind == "Sub" else 1
        for k, (v, c) in y.items():
            x[k] = (v, x.get(k, (v, 0))[1] + sign * c)
        return x
    if kind == "Mul":
        x, y = _linear(e.a), _linear(e.b)
        if x is None or y is None:
            return None
        if set(y) == {1}:
            return {k: (v, c * y[1][1]) for k, (v, c) in x.items()}
        if set(x) == {1}:
            return {k: (v, c * x[1][1]) for k, (v, c) in y.items()}
    return None


def _narrow(buf: Any, dim: int, start: Any, stop: Any) -> Any:
    dim = _dim(buf, dim)
    length = _length(start, stop)
    start = _n(start)
    ext = _n(buf.shape[dim])
    if type(start) is int and start < 0:
        raise ValueError(f"sub: start {start} must be non-negative")
    if type(length) is int and length < 1:
        raise ValueError(f"sub: length {length} must be positive")
    if type(start) is int and type(length) is int and type(ext) is int and start + length > ext:
        raise ValueError(f"sub: range [{start}, {start + length}) exceeds dim {dim} extent {ext}")
    tile, sw = _parts(buf)
    grouped, seps = _grouped(buf, tile, sw)
    its = list(grouped.shard)
    group = its[seps[dim] : seps[dim + 1]]
    if len(group) == 1:
        off = _times(start, group[0].stride)
        new = [Iter(length, group[0].stride, group[0].axis)]
    else:
        inner = _prod(_n(it.extent) for it in group[1:])
        if type(inner) is not int or any(type(v) is not int or v % inner for v in (start, length)):
            raise ValueError(
                f"sub: dim {dim} start/length must be multiples of the inner iter block {inner}; "
                f"got start={start} length={length}"
            )
        off = _times(start // inner, group[0].stride)
        new = [Iter(length // inner, group[0].stride, group[0].axis), *group[1:]]
    shape = list(buf.shape)
    shape[dim] = length
    return _rebuild(buf, shape, its[: seps[dim]] + new + its[seps[dim + 1] :], grouped, sw, off)


def _stepped(buf: Any, dim: int, it: slice) -> Any:
    """``A.sub[..., s::k, ...]`` (``0 <= s < k``), as TIRx builds it: the dimension viewed as
    ``(n // k, k)``, then element ``s`` of the inner one (a view of stride ``k``)."""
    k = _n(it.step)
    start = 0 if it.start is None else _n(it.start)
    if type(k) is not int or k < 1:
        raise ValueError(f"sub: a slice step must be a positive integer constant, got {it.step}")
    if it.stop is not None:
        raise ValueError("sub: a stop bound with a step is not supported (write s::k, 0 <= s < k)")
    if type(start) is not int or not 0 <= start < k:
        raise ValueError(f"sub: stepped-slice start {start} must be in [0, {k})")
    n = _n(buf.shape[dim])
    if type(n) is not int or n % k:
        raise ValueError(f"sub: dim {dim} of extent {n} is not a multiple of the step {k}")
    shape = [*buf.shape[:dim], n // k, k, *buf.shape[dim + 1 :]]
    return _drop(_view(buf, tuple(shape), None), dim + 1, start)


class _Sub:
    """``A.sub[...]``: per item, ``a:b`` narrows a dimension, ``:`` keeps it, an index drops it."""

    __slots__ = ("_buf",)

    def __init__(self, buf: Any):
        self._buf = buf

    def __getitem__(self, items: Any) -> Any:
        if not isinstance(items, tuple):
            items = (items,)
        buf = self._buf
        if len(items) > len(buf.shape):
            raise ValueError(f"sub: {len(items)} indices for tensor of rank {len(buf.shape)}")
        dim = 0
        for it in items:
            if isinstance(it, slice):
                if it.step is not None and _n(it.step) != 1:
                    buf = _stepped(buf, dim, it)
                    dim += 1
                    continue
                if it.start is None and it.stop is None:
                    dim += 1
                    continue
                start = 0 if it.start is None else it.start
                stop = buf.shape[dim] if it.stop is None else it.stop
                buf = _narrow(buf, dim, start, stop)
                dim += 1
            else:
                buf = _drop(buf, dim, it)
        return buf


def _einops_side(text: str, what: str) -> list[list[str]]:
    """``"r (a b)"`` -> ``[["r"], ["a", "b"]]``: the axes of each dimension."""
    out: list[list[str]] = []
    group: list[str] | None = None
    for tok in text.replace("(", " ( ").replace(")", " ) ").split():
        if tok == "(":
            if group is not None:
                raise ValueError(f"rearrange: nested parentheses in the {what} side")
            group = []
        elif tok == ")":
            if group is None:
                raise ValueError(f"rearrange: ')' without '(' in the {what} side")
            out.append(group)
            group = None
        elif tok.isidentifier():
            if group is not None:
                group.append(tok)
            else:
                out.append([tok])
        else:
            raise ValueError(f"rearrange: {tok!r} is not an axis name (no '...' or numbers)")
    if group is not None:
        raise ValueError(f"rearrange: unclosed '(' in the {what} side")
    return out


def _rearrange(buf: Any, pattern: str, sizes: dict) -> Any:
    """``A.rearrange("r (a b) -> (r a) b", b=4)``: TIRx's three views (split, permute, merge)."""
    if not isinstance(pattern, str) or pattern.count("->") != 1:
        raise ValueError(f"rearrange: the pattern must be 'left -> right', got {pattern!r}")
    left_s, right_s = pattern.split("->")
    left, right = _einops_side(left_s, "left"), _einops_side(right_s, "right")
    names = [n for g in left for n in g]
    if len(set(names)) != len(names) or sorted(names) != sorted(n for g in right for n in g):
        raise ValueError(f"rearrange: the axes of both sides must be the same, each once: {pattern!r}")
    if len(left) != len(buf.shape):
        raise ValueError(f"rearrange: the left side has {len(left)} dimensions, the tensor {len(buf.shape)}")
    unknown = set(sizes) - set(names)
    if unknown:
        raise ValueError(f"rearrange: sizes of axes the pattern does not name: {sorted(unknown)}")
    size: dict[str, Any] = {}
    for g, dim in zip(left, buf.shape):
        dim = _n(dim)
        free = [n for n in g if n not in sizes]
        known = 1
        for n in g:
            if n in sizes:
                size[n] = _n(sizes[n])
                known *= size[n]
        if len(g) == 1 and not free:
            if type(dim) is int and size[g[0]] != dim:
                raise ValueError(f"rearrange: axis {g[0]} is {size[g[0]]}, the dimension {dim}")
        elif len(free) > 1:
            raise ValueError(f"rearrange: give the sizes of all but one of {g} (keywords)")
        elif free:
            if type(dim) is not int or type(known) is not int or dim % known:
                raise ValueError(f"rearrange: dimension {dim} does not split into {g} with {sizes}")
            size[free[0]] = dim // known
    split = buf.view(*[size[n] for n in names])
    order = [names.index(n) for g in right for n in g]
    moved = split.permute(*order)
    merged = []
    for g in right:
        m: Any = 1
        for n in g:
            m = size[n] * m if type(m) is int and m == 1 else m * size[n]
        merged.append(m)
    return moved.view(*merged)


def _views(kind: str, buf: Any, args: tuple, kw: dict) -> Any:
    if kind == "rearrange":
        return _rearrange(buf, args[0], kw)
    if kind == "view":
        return _view(buf, args, kw.get("layout"))
    if kind == "permute":
        return _permute(buf, args)
    return _Sub(buf)


register_views(_views)
