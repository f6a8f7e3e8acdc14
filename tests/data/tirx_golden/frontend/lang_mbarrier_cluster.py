# tirx.backend.cuda.lang (my own kernel): mbarrier arrivals across a cluster of two CTAs. Each
# CTA arrives on its peer's barriers: counted and predicated remote arrives (remote=), arrives
# through a remote_view (plain and predicated), a remote TMABar expect_tx of 0 bytes; local
# arrives with count and pred; a phase_offset and a leader that is not thread 0; a one-stage
# PipelineState initialized after it is made.
from tirx.script import tirx as T
from tirx.backend.cuda.lang import SMEMPool
from tirx.backend.cuda.lang.pipeline import MBarrier, PipelineState, TMABar


@T.function
def f(C: T.Tensor((2, 64), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=64, cluster=2))
    tx = T.cuda.thread_idx("x")
    rank = T.cuda.cluster_cta_id("x")
    pool = SMEMPool()
    mine = MBarrier(pool, 2, phase_offset=1, leader=tx == 5)
    tb = TMABar(pool, 2)
    mine.init(65)
    tb.init(1)
    pool.commit()
    T.ptx.fence.mbarrier_init.release.cluster()
    T.cuda.cluster_sync()
    mine.arrive(0, remote=1 - rank, pred=tx < 32, count=2)
    far = mine.remote_view(1 - rank)
    if tx == 0:
        far.arrive(0)
        tb.arrive(0, 0, remote=1 - rank)
        tb.remote_view(1 - rank).arrive(1, pred=tx == 0)
    mine.arrive(1, count=64, pred=tx == 63)
    mine.arrive(1, pred=tx == 1)
    ps = PipelineState(1)
    ps.init(0)
    mine.wait(0, ps.phase + 1)
    mine.wait(1, 1)
    tb.wait(ps.stage, ps.phase)
    ps.advance()
    tb.wait(1, 0)
    T.cuda.cluster_sync()
    C[rank, tx] = rank * 1000 + tx * 10 + ps.phase
