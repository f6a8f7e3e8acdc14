# tirx.backend.cuda.lang (my own kernel): a ring of NSTAGE shared-memory rows filled by bulk
# copies (TMABar, expect_tx) and released by every consumer thread (MBarrier, phase_offset=1: the
# producer waits on the phase before its own), with producer and consumer PipelineState; the ring
# and barriers come from an SMEMPool whose size the kernel entry records (cuda.smem_required).
from tirx.script import tirx as T
from tirx.backend.cuda.lang import SMEMPool
from tirx.backend.cuda.lang.pipeline import MBarrier, PipelineState, TMABar

ROWS = 6
W = 64
NSTAGE = 3


@T.function
def f(X: T.Tensor((ROWS, W), "float32"), Y: T.Tensor((W,), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=W))
    pool = SMEMPool()
    ring = pool.alloc((NSTAGE, W), "float32", align=128)
    filled = TMABar(pool, NSTAGE)
    freed = MBarrier(pool, NSTAGE, phase_offset=1)  # the producer waits on the phase before its own
    filled.init(1)
    freed.init(W)
    pool.commit()
    T.ptx.fence.mbarrier_init.release.cluster()
    T.cuda.cta_sync()
    tx = T.cuda.thread_idx("x")
    put = PipelineState(NSTAGE, 0)
    get = PipelineState(NSTAGE, 0)
    best = T.local_scalar("float32")
    best = T.float32(-1e30)
    if tx == 0:
        for r in range(NSTAGE):
            filled.arrive(put.stage, W * 4)
            T.ptx["cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"](
                ring.ptr_to([put.stage, 0]), X.ptr_to([r, 0]), T.uint32(W * 4), filled.ptr_to([put.stage])
            )
            put.advance()
    for r in range(ROWS):
        filled.wait(get.stage, get.phase)
        best = T.max(best, ring[get.stage, (tx + r) % W])
        freed.arrive(get.stage)
        if tx == 0:
            if r + NSTAGE < ROWS:
                freed.wait(put.stage, put.phase)
                filled.arrive(put.stage, W * 4)
                T.ptx["cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"](
                    ring.ptr_to([put.stage, 0]), X.ptr_to([r + NSTAGE, 0]), T.uint32(W * 4), filled.ptr_to([put.stage])
                )
                put.advance()
        get.advance()
    Y[tx] = best
