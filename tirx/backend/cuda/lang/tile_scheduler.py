"""Tile schedulers: which output tile a CTA (or cluster) works on next.

Each scheduler keeps ``int32`` registers for the current linear work index and the tile
coordinates it maps to; ``init(start)`` sets the first index, ``next_tile()`` strides to the
next, ``valid()`` is the loop condition::

    sched = ClusterPersistentScheduler2D("s", num_m_tiles=MT, num_n_tiles=NT, num_clusters=NC,
                                         serpentine=True)
    sched.init(cluster_id)
    while sched.valid():
        ... sched.m_idx, sched.n_idx ...
        sched.next_tile()

- ``ClusterPersistentScheduler2D``: a 2D grid of tiles visited in L2-friendly order (groups of
  ``l2_group_size`` tile rows walked column by column, or with ``serpentine=True`` square
  blocks of tiles walked down one column of blocks and up the next), split into
  ``cluster_m`` x ``cluster_n`` sub-tiles.
- ``FlashAttentionLinearScheduler``: (batch, head, query block) in row-major order.
- ``FlashAttentionLPTScheduler``: longest-first query blocks (causal attention) with an L2
  swizzle over batch x head.

The coordinate arithmetic is emitted as TIRx's helpers emit it: every geometry constant bound
to a named ``T.let`` (``GROUP_SPAN``, ``M_BLOCKS``, ...) where it is used, so a kernel built
with these classes is the same IR as TIRx's.
"""

from __future__ import annotations

from typing import Any

from tirx.ir import PrimExpr
from tirx.ir.types import PrimType
from tirx.script import tirx as T

from .alloc_pool import _builder, _positive, _static_int
from .pipeline import _value


def _registers(n: int) -> list:
    """``n`` fresh ``int32`` registers."""
    _builder()
    return [T.local_scalar("int32", name="v") for _ in range(n)]


@T.meta_class
class BaseTileScheduler:
    """The registers every scheduler has (``m_idx``, ``n_idx``, ``linear_idx``) and the generic
    loop: ``init(start)``, ``next_tile(step)``, ``valid(total)``. Subclasses map the linear
    index to coordinates in ``update_current_m_n_idx``."""

    def __init__(self, prefix: str):
        if not isinstance(prefix, str):
            raise TypeError(f"{type(self).__name__}: prefix must be a str, got {prefix!r}")
        self.prefix = prefix
        self.m_idx, self.n_idx, self.linear_idx = _registers(3)

    @T.inline
    def update_current_m_n_idx(self, linear_idx):
        pass

    @T.inline
    def init(self, linear_init):
        self.linear_idx = linear_init
        self.update_current_m_n_idx(linear_init)

    @T.inline
    def next_tile(self, step):
        self.linear_idx = self.linear_idx + step
        self.update_current_m_n_idx(self.linear_idx)

    def valid(self, total_tiles: Any) -> Any:
        """Whether the current linear index is below ``total_tiles`` (an expression)."""
        return _value(self.linear_idx) < total_tiles


def _ceil_div(a: Any, b: int) -> Any:
    return (a + b - 1) // b if isinstance(a, int) else T.truncdiv(a + b - 1, b)


def _div(a: Any, b: int) -> Any:
    return a // b if isinstance(a, int) else T.truncdiv(a, b)


class ClusterPersistentScheduler2D(BaseTileScheduler):
    """A persistent scheduler over ``num_m_tiles`` x ``num_n_tiles`` tiles shared by
    ``num_clusters`` clusters: cluster ``c`` takes work items ``c, c + num_clusters, ...``.

    A work item is split into ``cluster_m`` x ``cluster_n`` sub-tiles (the fastest-varying
    part of the index), the rest is a tile of the grid of ``ceil(M / cluster_m)`` rows by
    ``ceil(N / cluster_n)`` columns, taken in L2-friendly order: groups of ``l2_group_size``
    rows, each walked column by column (the last group may be shorter); with
    ``serpentine=True``, square blocks of ``l2_group_size`` x ``l2_group_size`` tiles, row-major
    inside a block, walked down the first column of blocks, up the next, ...; the tiles outside
    whole blocks come after, row by row. ``num_m_tiles`` may be a runtime expression.
    ``m_idx`` / ``n_idx`` are the current tile, ``work_idx`` the work item, ``tile_count`` how
    many items this cluster has taken.
    """

    def __init__(self, prefix: str, num_m_tiles: Any, num_n_tiles: int, num_clusters: int,
                 l2_group_size: int = 8, cluster_m: int = 1, cluster_n: int = 1,
                 serpentine: bool = False):  # fmt: skip
        where = "ClusterPersistentScheduler2D"
        m_static = _static_int(num_m_tiles)
        if m_static is None:
            m = _value(num_m_tiles)
            if not (isinstance(m, PrimExpr) and isinstance(m.ty, PrimType) and m.ty.is_int):
                raise TypeError(
                    f"{where}: num_m_tiles must be an int or an integer expression, got {num_m_tiles!r}"
                )
        elif m_static < 1:
            raise ValueError(f"{where}: num_m_tiles must be >= 1, got {m_static}")
        n = _positive(num_n_tiles, "num_n_tiles", where)
        self._num_clusters = _positive(num_clusters, "num_clusters", where)
        g = self._l2_group_size = _positive(l2_group_size, "l2_group_size", where)
        cm = self._cluster_m = _positive(cluster_m, "cluster_m", where)
        cn = self._cluster_n = _positive(cluster_n, "cluster_n", where)
        if not isinstance(serpentine, bool):
            raise TypeError(f"{where}: serpentine must be a bool, got {serpentine!r}")
        self._serpentine = serpentine
        super().__init__(prefix)
        self._num_m_tiles = m_static if m_static is not None else _value(num_m_tiles)
        self._num_n_tiles = n
        self.work_idx = self.linear_idx
        (self.tile_count,) = _registers(1)

        # the tile grid (in work items of cluster_m x cluster_n sub-tiles)
        cols = self._N_TILE_COLS = _ceil_div(n, cn)
        rows = self._M_TILE_ROWS = _ceil_div(self._num_m_tiles, cm)
        self._FULL_GROUPS = _div(rows, g)
        self._TAIL_ROWS = rows - self._FULL_GROUPS * g
        self._TOTAL_TILES = rows * cols * cm * cn
        if serpentine:
            self._N_BLOCKS = cols // g
            self._M_BLOCKS = _div(rows, g)
            self._BLOCK_SIZE = g * g
            self._FULL_BLOCK_TILES = self._M_BLOCKS * self._N_BLOCKS * self._BLOCK_SIZE
            self._RESIDUAL_N = cols - self._N_BLOCKS * g
            self._RESIDUAL_M = rows - self._M_BLOCKS * g

    # -------------------------------------------------------------- the loop
    @T.inline
    def init(self, cluster_id):
        self.linear_idx = cluster_id
        self.tile_count = 0
        self.update_current_m_n_idx(cluster_id)

    @T.inline
    def next_tile(self):
        self.linear_idx = self.linear_idx + self._num_clusters
        self.tile_count = self.tile_count + 1
        self.update_current_m_n_idx(self.linear_idx)

    @T.inline
    def next_tile_stride(self, stride):
        self.linear_idx = self.linear_idx + stride
        self.tile_count = self.tile_count + 1
        self.update_current_m_n_idx(self.linear_idx)

    def valid(self) -> Any:  # type: ignore[override]
        """Whether this cluster's current work item is a tile of the grid."""
        return _value(self.linear_idx) < self._TOTAL_TILES

    # -------------------------------------------------------------- index -> tile
    @T.inline
    def update_current_m_n_idx(self, work_idx):
        CLUSTER_M: T.let[T.int32] = self._cluster_m
        CLUSTER_N: T.let[T.int32] = self._cluster_n
        cluster_m_offset: T.let[T.int32] = work_idx % CLUSTER_M
        t: T.let[T.int32] = work_idx // CLUSTER_M
        cluster_n_offset: T.let[T.int32] = t % CLUSTER_N
        tile_linear: T.let[T.int32] = t // CLUSTER_N

        @T.inline
        def set_tile_coords(tile_row, tile_col):
            self.m_idx = tile_row * CLUSTER_M + cluster_m_offset
            self.n_idx = tile_col * CLUSTER_N + cluster_n_offset

        if T.constexpr(self._serpentine):
            # TIRx tests the flag as an IR condition and builds both orders: so does this
            if T.bool(True):
                self._update_serpentine(tile_linear, set_tile_coords)
            else:
                self._update_group_major(tile_linear, set_tile_coords)
        else:
            self._update_group_major(tile_linear, set_tile_coords)

    # TIRx's extension points: a subclass that overrides update_current_m_n_idx (to restrict the
    # order, say) calls these with its own ``set_tile_coords(tile_row, tile_col)``
    def _update_group_major(self, tile_linear: Any, set_tile_coords: Any) -> None:
        """Row groups of ``l2_group_size``, column-major inside a group; the parts of the
        branch that cannot run (no full group, no tail) are left out."""
        no_full = isinstance(self._FULL_GROUPS, int) and self._FULL_GROUPS == 0
        no_tail = isinstance(self._TAIL_ROWS, int) and self._TAIL_ROWS == 0
        if no_full and no_tail:
            set_tile_coords(0, 0)
        else:
            self._group_major_emit(tile_linear, set_tile_coords, not no_full, not no_tail)

    @T.inline
    def _group_major_emit(self, tile_linear, set_tile_coords, full, tail):
        FULL_GROUPS: T.let[T.int32] = self._FULL_GROUPS
        if T.constexpr(tail):
            TAIL_ROWS: T.let[T.int32] = self._TAIL_ROWS
        GROUP_SIZE: T.let[T.int32] = self._l2_group_size
        GROUP_SPAN: T.let[T.int32] = self._l2_group_size * self._N_TILE_COLS
        if T.constexpr(full):
            if (FULL_GROUPS > 0) & (tile_linear < FULL_GROUPS * GROUP_SPAN):
                self._group_tile(tile_linear, set_tile_coords, GROUP_SIZE, GROUP_SPAN)
            elif T.constexpr(tail):
                if TAIL_ROWS > 0:
                    self._tail_tile(tile_linear, set_tile_coords, FULL_GROUPS, TAIL_ROWS, GROUP_SIZE, GROUP_SPAN)
                else:
                    set_tile_coords(0, 0)
            else:
                set_tile_coords(0, 0)
        elif TAIL_ROWS > 0:
            self._tail_tile(tile_linear, set_tile_coords, FULL_GROUPS, TAIL_ROWS, GROUP_SIZE, GROUP_SPAN)
        else:
            set_tile_coords(0, 0)

    @T.inline
    def _group_tile(self, tile_linear, set_tile_coords, size, span):
        group_id: T.let[T.int32] = tile_linear // span
        within_group: T.let[T.int32] = tile_linear % span
        tile_row: T.let[T.int32] = group_id * size + within_group % size
        tile_col: T.let[T.int32] = within_group // size
        set_tile_coords(tile_row, tile_col)

    @T.inline
    def _tail_tile(self, tile_linear, set_tile_coords, full_groups, tail_rows, size, span):
        rem: T.let[T.int32] = tile_linear - full_groups * span
        tile_row: T.let[T.int32] = full_groups * size + rem % tail_rows
        tile_col: T.let[T.int32] = rem // tail_rows
        set_tile_coords(tile_row, tile_col)

    @T.inline
    def _update_serpentine(self, tile_linear, set_tile_coords):
        S: T.let[T.int32] = self._l2_group_size
        M_BLOCKS: T.let[T.int32] = self._M_BLOCKS
        N_BLOCKS: T.let[T.int32] = self._N_BLOCKS
        BLOCK_SIZE: T.let[T.int32] = self._BLOCK_SIZE
        FULL_BLOCK_TILES: T.let[T.int32] = self._FULL_BLOCK_TILES
        M_TILE_ROWS: T.let[T.int32] = self._M_TILE_ROWS
        RESIDUAL_N: T.let[T.int32] = self._RESIDUAL_N
        RESIDUAL_M: T.let[T.int32] = self._RESIDUAL_M
        if (M_BLOCKS > 0) & (N_BLOCKS > 0) & (tile_linear < FULL_BLOCK_TILES):
            # whole blocks: down the even columns of blocks, up the odd ones
            block_linear: T.let[T.int32] = tile_linear // BLOCK_SIZE
            within_block: T.let[T.int32] = tile_linear % BLOCK_SIZE
            block_col: T.let[T.int32] = block_linear // M_BLOCKS
            block_row_raw: T.let[T.int32] = block_linear % M_BLOCKS
            block_row: T.let[T.int32] = T.Select(
                block_col % 2 == 0, block_row_raw, M_BLOCKS - 1 - block_row_raw
            )
            local_row: T.let[T.int32] = within_block // S
            local_col: T.let[T.int32] = within_block % S
            tile_row: T.let[T.int32] = block_row * S + local_row
            tile_col: T.let[T.int32] = block_col * S + local_col
            set_tile_coords(tile_row, tile_col)
        elif RESIDUAL_N > 0:
            # the columns right of the whole blocks, all rows, row-major
            rem: T.let[T.int32] = tile_linear - FULL_BLOCK_TILES
            right_strip_tiles: T.let[T.int32] = M_TILE_ROWS * RESIDUAL_N
            if rem < right_strip_tiles:
                tile_row: T.let[T.int32] = rem // RESIDUAL_N
                tile_col: T.let[T.int32] = N_BLOCKS * S + rem % RESIDUAL_N
                set_tile_coords(tile_row, tile_col)
            elif RESIDUAL_M > 0:
                set_tile_coords(0, 0)
            else:
                set_tile_coords(0, 0)
        elif RESIDUAL_M > 0:
            # the rows below the whole blocks, column by column
            rem: T.let[T.int32] = tile_linear - FULL_BLOCK_TILES
            bottom_strip_tiles: T.let[T.int32] = RESIDUAL_M * (N_BLOCKS * S)
            if rem < bottom_strip_tiles:
                tile_row: T.let[T.int32] = M_BLOCKS * S + rem % RESIDUAL_M
                tile_col: T.let[T.int32] = rem // RESIDUAL_M
                set_tile_coords(tile_row, tile_col)
            else:
                set_tile_coords(0, 0)
        else:
            set_tile_coords(0, 0)


def _attention_shape(where: str, num_batches: Any, num_heads: Any, num_m_blocks: Any) -> tuple:
    return (
        _positive(num_batches, "num_batches", where),
        _positive(num_heads, "num_heads", where),
        _positive(num_m_blocks, "num_m_blocks", where),
    )


class _AttentionLoop(BaseTileScheduler):
    """The loop both attention schedulers run: a CTA starts at its own work item and strides
    by ``num_ctas`` (none: it takes its one item) while ``valid()``."""

    _num_ctas: int | None
    _total_tasks: int

    @T.inline
    def init(self, cta_id):
        self.linear_idx = cta_id
        self.update_current_m_n_idx(cta_id)

    @T.inline
    def next_tile(self):
        if T.constexpr(self._num_ctas is None):
            self.linear_idx = self._total_tasks
        else:
            self.linear_idx = self.linear_idx + self._num_ctas
            self.update_current_m_n_idx(self.linear_idx)

    def valid(self) -> Any:  # type: ignore[override]
        """Whether the current work item exists."""
        return _value(self.linear_idx) < self._total_tasks


class FlashAttentionLinearScheduler(_AttentionLoop):
    """Work items ``batch * (heads * m_blocks) + head * m_blocks + m_block``, strided by
    ``num_ctas``: ``batch_idx``, ``head_idx``, ``m_block_idx`` are the current item."""

    def __init__(self, prefix: str, num_batches: int, num_heads: int, num_m_blocks: int, num_ctas: int):
        where = "FlashAttentionLinearScheduler"
        b, h, m = _attention_shape(where, num_batches, num_heads, num_m_blocks)
        self._num_ctas = _positive(num_ctas, "num_ctas", where)
        super().__init__(prefix)
        self._num_batches, self._num_heads, self._num_m_blocks = b, h, m
        self._total_tasks = b * h * m
        self.batch_idx, self.head_idx, self.m_block_idx = _registers(3)

    @T.inline
    def update_current_m_n_idx(self, linear_idx):
        NUM_HEADS: T.let[T.int32] = self._num_heads
        NUM_M_BLOCKS: T.let[T.int32] = self._num_m_blocks
        HEAD_M_PRODUCT: T.let[T.int32] = NUM_HEADS * NUM_M_BLOCKS
        self.batch_idx = linear_idx // HEAD_M_PRODUCT
        self.head_idx = linear_idx % HEAD_M_PRODUCT // NUM_M_BLOCKS
        self.m_block_idx = linear_idx % NUM_M_BLOCKS


class FlashAttentionLPTScheduler(_AttentionLoop):
    """Causal attention's longest-processing-time-first order: query blocks from the last
    (the most keys to attend to) to the first, with ``l2_swizzle`` consecutive (batch, head)
    pairs interleaved for L2 reuse. Without ``num_ctas`` each CTA takes its one work item;
    with it, CTAs stride by ``num_ctas``."""

    def __init__(self, prefix: str, num_batches: int, num_heads: int, num_m_blocks: int, l2_swizzle: int,
                 num_ctas: int | None = None):  # fmt: skip
        where = "FlashAttentionLPTScheduler"
        b, h, m = _attention_shape(where, num_batches, num_heads, num_m_blocks)
        sw = _positive(l2_swizzle, "l2_swizzle", where)
        self._num_ctas = None if num_ctas is None else _positive(num_ctas, "num_ctas", where)
        super().__init__(prefix)
        self._num_batches, self._num_heads, self._num_m_blocks, self._l2_swizzle = b, h, m, sw
        self._total_tasks = b * h * m
        self._num_hb = b * h
        self._l2_major = sw * m
        self._num_hb_quotient = self._num_hb // sw
        self.batch_idx, self.head_idx, self.m_block_idx = _registers(3)

    @T.inline
    def update_current_m_n_idx(self, linear_idx):
        L2_SWIZZLE: T.let[T.int32] = self._l2_swizzle
        L2_MAJOR: T.let[T.int32] = self._l2_major
        NUM_HB_QUOTIENT: T.let[T.int32] = self._num_hb_quotient
        NUM_HB: T.let[T.int32] = self._num_hb
        NUM_HEADS: T.let[T.int32] = self._num_heads
        NUM_M_BLOCKS: T.let[T.int32] = self._num_m_blocks
        bidhb: T.let[T.int32] = linear_idx // L2_MAJOR
        l2_mod: T.let[T.int32] = linear_idx % L2_MAJOR
        # the last swizzle group may hold fewer (batch, head) pairs
        num_hb_remainder: T.let[T.int32] = T.max(NUM_HB % L2_SWIZZLE, 1)
        m_block_raw: T.let[T.int32] = T.Select(
            bidhb < NUM_HB_QUOTIENT, l2_mod // L2_SWIZZLE, l2_mod // num_hb_remainder
        )
        bidhb_residual: T.let[T.int32] = T.Select(
            bidhb < NUM_HB_QUOTIENT, l2_mod % L2_SWIZZLE, l2_mod % num_hb_remainder
        )
        bidhb_actual: T.let[T.int32] = bidhb * L2_SWIZZLE + bidhb_residual
        self.batch_idx = bidhb_actual // NUM_HEADS
        self.head_idx = bidhb_actual % NUM_HEADS
        self.m_block_idx = NUM_M_BLOCKS - 1 - m_block_raw


__all__ = [
    "BaseTileScheduler",
    "ClusterPersistentScheduler2D",
    "FlashAttentionLPTScheduler",
    "FlashAttentionLinearScheduler",
]
