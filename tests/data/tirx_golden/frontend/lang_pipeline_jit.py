# tirx.backend.cuda.lang (my own kernel): a @T.jit warp-specialized kernel on a Pipeline (a TMA
# full barrier and an mbarrier empty barrier, initialized by the Pipeline, the empty one with
# phase offset 1 so the producer's first waits pass). Thread 32 is the producer, warp 0 the
# consumers; the stage count and chunk width are constexpr.
from __future__ import annotations

from tirx.script import tirx as T
from tirx.backend.cuda.lang import Pipeline, PipelineState, SMEMPool


@T.jit
def weighted_rows(
    X: T.Tensor((NK, CH), "float32"), Y: T.Tensor((CH,), "float32"), *, NK: T.constexpr, CH: T.constexpr,
    DEPTH: T.constexpr,
):
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=CH + 32)):
        tx = T.cuda.thread_idx("x")
        pool = SMEMPool()
        ring = pool.alloc((DEPTH, CH), "float32", align=256)
        pipe = Pipeline(pool, DEPTH, full="tma", empty="mbar", init_empty=CH, empty_phase_offset=1,
                        leader=tx == CH)
        pool.commit()
        T.ptx.fence.mbarrier_init.release.cluster()
        T.cuda.cta_sync()
        if tx == CH:
            w = PipelineState(DEPTH, 0)
            for k in range(NK):
                pipe.empty.wait(w.stage, w.phase)
                pipe.full.arrive(w.stage, CH * 4)
                T.ptx["cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"](
                    ring.ptr_to([w.stage, 0]), X.ptr_to([k, 0]), T.uint32(CH * 4), pipe.full.ptr_to([w.stage])
                )
                w.advance()
        elif tx < CH:
            r = PipelineState(DEPTH, 0)
            acc = T.local_scalar("float32")
            acc = T.float32(0)
            for k in range(NK):
                pipe.full.wait(r.stage, r.phase)
                acc = acc + ring[r.stage, tx] * T.float32(k + 1)
                pipe.empty.arrive(r.stage)
                r.advance()
            Y[tx] = acc


f = weighted_rows.specialize(NK=5, CH=32, DEPTH=2)
