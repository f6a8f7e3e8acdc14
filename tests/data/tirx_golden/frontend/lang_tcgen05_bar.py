# tirx.backend.cuda.lang (my own kernel, Blackwell): TCGen05Bar commit forms (unicast, a constant
# mask of one CTA, a multicast mask, a runtime mask under an elected predicate) and a Pipeline whose
# full side is tcgen05 and empty side TMA (remote expect_tx, a remote_view), with its own leader.
from tirx.script import tirx as T
from tirx.backend.cuda.lang import Pipeline, PipelineState, SMEMPool, TCGen05Bar


@T.function
def f(M: T.Tensor((4,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=128, cluster=2))
    tx = T.cuda.thread_idx("x")
    pool = SMEMPool()
    done = TCGen05Bar(pool, 2)
    done.init(1)
    pipe = Pipeline(pool, 3, full="tcgen05", empty="tma", init_full=2, leader=tx == 3)
    pool.commit()
    T.ptx.fence.mbarrier_init.release.cluster()
    T.cuda.cluster_sync()
    if tx < 32:
        done.arrive(0, cta_group=2)
        done.arrive(1, cta_group=2, cta_mask=2)
        done.arrive(1, cta_group=2, cta_mask=3, pred=tx == 0)
        done.arrive(0, cta_group=2, cta_mask=M[0], pred=T.cuda.elect_sync())
    pipe.full.arrive(2, cta_group=2)
    pipe.empty.arrive(1, 64, remote=1, pred=tx == 1)
    peer = pipe.empty.remote_view(0)
    peer.arrive(0, 32)
    st = PipelineState(3)
    st.init(1)
    pipe.full.wait(st.stage, st.phase)
    st.advance()
    M[1] = st.stage
