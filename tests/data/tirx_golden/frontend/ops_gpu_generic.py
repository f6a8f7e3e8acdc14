# TIRx's T.gpu_* ops and annotations: keywords, statements, results bound and stored.
from tirx.script import tirx as T


@T.function
def f(X: T.Tensor((128,), T.float32), N: T.Tensor((128,), T.int32), W: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=64))
    i = T.cuda.block_idx("x") * 64 + T.cuda.thread_idx("x")
    full = T.uint32(0xFFFFFFFF)
    X[i] = T.gpu_warp_shuffle(full, X[i], 3, W, 32)
    X[i] = T.gpu_warp_shuffle_down(mask=full, value=X[i], offset=1, width=16, warp_size=32)
    N[i] = T.gpu_warp_shuffle_up(full, N[i], 2, 32, 32)
    N[i] = T.gpu_warp_shuffle_xor(full, N[i], lane_mask=5, width=32, warp_size=32)
    T.gpu_storage_sync("shared")
    T.gpu_storage_sync(storage_scope="warp")
    c = T.gpu_thread_invariant(N[0] > 0)
    d = T.ignore_loop_partition(predicate=i < 100)
    T.assume_always(N[i] >= 0)
    h = T.handle_add_byte_offset(X.data, 16)
    T.assume_aligned(T.address_of(X[0]), 16)
    T.assume_aligned(X, 16)
    u = T.undef()
    uf = T.undef(ty="float32")
    X[i] = uf
    if c and d:
        T.gpu_thread_return()
    N[i] = u + T.Cast("int32", T.isnullptr(h))
