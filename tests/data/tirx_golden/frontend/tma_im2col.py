# TMA im2col copies (my own kernel): a 4d load in im2col mode with its two 16-bit pixel
# offsets after the mbarrier, the same as a 5d L2 prefetch, and an im2col_no_offs store back.
from tirx.script import tirx as T


@T.function
def f(M: T.Tensor((128,), "uint8", align=64), Out: T.Tensor((1024,), "float16")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    tx = T.cuda.thread_idx("x")
    px = T.alloc_shared((1024,), "float16", align=128)
    bar = T.alloc_shared((1,), "uint64", align=8)
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
        T.ptx.fence.mbarrier_init.release.cluster()
    T.cuda.cta_sync()
    if tx == 0:
        T.ptx.mbarrier.arrive.expect_tx.shared.b64(bar.ptr_to([0]), T.uint32(2048))
        T.ptx["cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"](
            px.ptr_to([0]), M.ptr_to([0]), T.int32(0), T.int32(1), T.int32(2), T.int32(3), bar.ptr_to([0]),
            T.uint16(1), T.uint16(2))
        T.ptx["cp.async.bulk.prefetch.tensor.5d.L2.global.im2col"](
            M.ptr_to([0]), T.int32(0), T.int32(0), T.int32(0), T.int32(0), T.int32(0),
            T.uint16(0), T.uint16(1), T.uint16(1))
    T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
    for i in range(8):
        Out[i * 128 + tx] = px[i * 128 + tx]
    T.cuda.cta_sync()
    if tx == 0:
        T.ptx["cp.async.bulk.tensor.3d.global.shared::cta.im2col_no_offs.bulk_group"](
            M.ptr_to([0]), T.int32(0), T.int32(0), T.int32(0), px.ptr_to([0]))
        T.ptx.cp.async_.bulk.commit_group()
        T.ptx.cp.async_.bulk.wait_group(0)
