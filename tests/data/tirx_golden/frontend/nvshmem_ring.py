# A ring exchange as a kernel writes one: thread 0 of the block signals the next PE after a
# block-scope put, waits for its own signal, and guards the barrier.
from tirx.script import tirx as T


@T.function
def f(src: T.Tensor((256,), T.float32), dst: T.Tensor((256,), T.float32), sig: T.Tensor((1,), T.uint64)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    tid = T.cuda.thread_idx("x")
    me = T.nvshmem.my_pe()
    nxt = (me + 1) % T.nvshmem.n_pes()
    T.nvshmem.putmem_signal_nbi.block(dst.ptr_to([0]), src.ptr_to([0]), 1024, sig.ptr_to([0]), 1, "add", nxt)
    if tid == 0:
        T.nvshmem.wait_until(sig.ptr_to([0]), "ge", 1)
        T.nvshmem.quiet()
        T.nvshmem.barrier_all()
    T.cuda.cta_sync()
    for k in range(2):
        T.nvshmem.getmem_nbi(dst.ptr_to([tid * 2 + k]), src.ptr_to([tid * 2 + k]), 4, me)
