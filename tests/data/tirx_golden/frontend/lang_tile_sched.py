# tirx.backend.cuda.lang (my own kernel): tile schedulers. Four persistent CTAs walk a 7 x 8
# tile grid with ClusterPersistentScheduler2D (serpentine blocks of 3 x 3 tiles with leftover
# rows and columns; TIRx 0.1.0a4's scheduler builds only with serpentine=True) and record the
# tiles they get; then the FlashAttention schedulers (linear, LPT with and without a stride)
# record their (batch, head, query block) items.
from tirx.script import tirx as T
from tirx.backend.cuda.lang import (
    ClusterPersistentScheduler2D,
    FlashAttentionLinearScheduler,
    FlashAttentionLPTScheduler,
)


@T.function
def f(Tiles: T.Tensor((4, 16, 2), "int32"), Work: T.Tensor((3, 30, 3), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=4, block=32))
    cta = T.cuda.block_idx("x")
    lane = T.cuda.thread_idx("x")
    grid = ClusterPersistentScheduler2D("g", num_m_tiles=7, num_n_tiles=8, num_clusters=4, l2_group_size=3,
                                        serpentine=True)
    grid.init(cta)
    while grid.valid():
        if lane == 0:
            Tiles[cta, grid.tile_count, 0] = grid.m_idx
            Tiles[cta, grid.tile_count, 1] = grid.n_idx
        grid.next_tile()
    lin = FlashAttentionLinearScheduler("l", 2, 3, 5, 4)
    lin.init(cta)
    while lin.valid():
        if lane == 1:
            Work[0, lin.linear_idx, 0] = lin.batch_idx
            Work[0, lin.linear_idx, 1] = lin.head_idx
            Work[0, lin.linear_idx, 2] = lin.m_block_idx
        lin.next_tile()
    lpt = FlashAttentionLPTScheduler("p", 2, 3, 5, 4, num_ctas=4)
    lpt.init(cta)
    while lpt.valid():
        if lane == 2:
            Work[1, lpt.linear_idx, 0] = lpt.batch_idx
            Work[1, lpt.linear_idx, 1] = lpt.head_idx
            Work[1, lpt.linear_idx, 2] = lpt.m_block_idx
        lpt.next_tile()
    one = FlashAttentionLPTScheduler("o", 1, 2, 2, 2)
    one.init(cta)
    if one.valid():
        if lane == 3:
            Work[2, cta, 0] = one.batch_idx
            Work[2, cta, 1] = one.head_idx
            Work[2, cta, 2] = one.m_block_idx
    one.next_tile()
    if lane == 3:
        Work[2, 4 + cta, 0] = one.linear_idx
