from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "uint64")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    s = T.alloc_shared((64,), "float32")
    x = T.alloc_local((4,), "uint64")
    y = T.alloc_local((8,), "uint32")
    T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(s.data, 32)
    T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
    T.ptx.tcgen05.fence__after_thread_sync()
    T.ptx.tcgen05.mma.cta_group__1.kind__f16(y[0], x[0], x[1], y[1], y[2], y[3], y[4], y[5], T.ptx.pred(y[6]))
    T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(T.ptx.addr(s.data, 16))
    T.ptx.tcgen05.wait__ld.sync.aligned()
    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(y[0], 32)
    T.ptx.multimem_red.relaxed.gpu.global_.add.u64(B.data, x[2])
    T.ptx.multimem_st.global_.v2.f32(T.ptx.addr(A.data, 8), A[0], A[1])
    T.ptx.st_bulk.weak.shared__cta(s.data, x[3])
    T.ptx.tensormap_replace.tile.box_dim.shared__cta.b1024.b32(s.data, 2, y[7])
    B[0] = x[0]
