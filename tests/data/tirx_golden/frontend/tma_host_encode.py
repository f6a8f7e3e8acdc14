# TMA descriptors encoded in host code (my own kernel): T.stack_alloca("tensormap", 1) and
# T.cuda.tensormap_encode_tiled before the device entry, passed to the kernel by value (TIRx's
# `const __grid_constant__ CUtensorMap`); a 2-d box with a 128-byte swizzle loaded into shared
# memory, scaled, and stored back through a second descriptor of the output.
from tirx.script import tirx as T


@T.function
def f(X: T.Tensor((128, 64), "float16"), Y: T.Tensor((128, 64), "float16")):
    x_map: T.let[T.handle("tensormap")] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(x_map, X.data, 64, 128, 128, 64, 32, 1, 1, descriptor_dtype="float16",
                                  rank=2, swizzle=3)  # fmt: skip
    y_map: T.let[T.handle("tensormap")] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(y_map, Y.data, 64, 128, 128, 64, 32, 1, 1, descriptor_dtype="float16",
                                  rank=2, swizzle=3)  # fmt: skip
    T.device_entry(launch=T.cuda.LaunchConfig(grid=4, block=128))
    bx = T.cuda.block_idx("x")
    tx = T.cuda.thread_idx("x")
    tile = T.alloc_shared((2048,), "float16", align=1024)
    bar = T.alloc_shared((1,), "uint64", align=8)
    if tx == 0:
        T.ptx.prefetch.tensormap(T.reinterpret(T.address_of(x_map), ty="handle"))
        T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
        T.ptx.fence.mbarrier_init.release.cluster()
    T.cuda.cta_sync()
    if tx == 0:
        T.ptx.mbarrier.arrive.expect_tx.shared.b64(bar.ptr_to([0]), T.uint32(4096))
        T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"](
            tile.ptr_to([0]), T.reinterpret(T.address_of(x_map), ty="handle"), 0, bx * 32, bar.ptr_to([0]))
    T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
    for i in T.serial(16):
        tile[i * 128 + tx] = tile[i * 128 + tx] * T.float16(2.0)
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    if tx == 0:
        T.ptx["cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"](
            T.reinterpret(T.address_of(y_map), ty="handle"), 0, bx * 32, tile.ptr_to([0]))
        T.ptx.cp.async_.bulk.commit_group()
        T.ptx.cp.async_.bulk.wait_group(0)
