# TMA four-row gather (2d only): a column and four row coordinates instead of one per dimension,
# in the tensor prefetch and the global -> shared copy. Guarded by n < 0 (no real descriptor).
from tirx.script import tirx as T


@T.function
def f(A_map: T.handle("tensormap"), B: T.Tensor((4,), "int32"), n: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tid = T.cuda.thread_idx("x")
    if n < 0:
        S = T.alloc_shared((256,), "float32")
        bar = T.alloc_shared((1,), "uint64")
        m = T.reinterpret(T.address_of(A_map), ty="handle")
        T.ptx["cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4"](m, 0, 1, 2, 3, tid)
        T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes"](
            S.ptr_to([0]), m, 0, 1, 2, 3, tid, bar.ptr_to([0])
        )
    if tid < 4:
        B[tid] = tid * n
