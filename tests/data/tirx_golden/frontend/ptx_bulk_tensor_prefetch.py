# TMA tile prefetch into L2 (cp.async.bulk.prefetch.tensor.Nd.L2.global[.tile][.L2::cache_hint]):
# [descriptor, {one int32 coordinate per dimension}][, cache policy]. A uint64 memory operand
# (T.address_of(A_map), P[0]) becomes T.reinterpret(.., ty=T.Ptr(T.void)), as TIRx converts it. Guarded
# by n < 0 so that a GPU run (random inputs, no real descriptor) only compares the store.
from tirx.script import tirx as T


@T.function
def f(A_map: T.handle("tensormap"), B: T.Tensor((4,), "int32"), P: T.Tensor((1,), "uint64"), n: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tid = T.cuda.thread_idx("x")
    if n < 0:
        m = T.reinterpret(T.address_of(A_map), ty="handle")
        T.ptx["cp.async.bulk.prefetch.tensor.1d.L2.global"](m, tid)
        T.ptx["cp.async.bulk.prefetch.tensor.2d.L2.global.tile"](T.address_of(A_map), 0, tid)
        T.ptx["cp.async.bulk.prefetch.tensor.3d.L2.global.tile.L2::cache_hint"](m, 0, 1, tid, P[0])
        T.ptx["cp.async.bulk.prefetch.tensor.5d.L2.global"](m, 0, 1, 2, 3, n)
        T.ptx["prefetch.global.L2"](P[0])
    if tid < 4:
        B[tid] = tid + n
