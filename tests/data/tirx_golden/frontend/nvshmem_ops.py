# Every T.nvshmem op in TIRx's spellings: scoped members (.warp/.block) and flat names, literal
# strings, the wait_until type left out (filled in as "uint64_t").
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), T.int32), B: T.Tensor((64,), T.int32), S: T.Tensor((4,), T.uint64)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    i = T.cuda.thread_idx("x")
    me = T.nvshmem.my_pe()
    n = T.nvshmem.n_pes()
    peer = (me + 1) % n
    A[i] = me * 100 + i
    T.nvshmem.barrier_all()
    T.nvshmem.putmem_nbi(B.ptr_to([i]), A.ptr_to([i]), 4, peer)
    T.nvshmem.getmem_nbi(B.ptr_to([i]), A.ptr_to([i]), 4, peer)
    T.nvshmem.putmem_nbi.warp(B.ptr_to([0]), A.ptr_to([0]), 128, peer)
    T.nvshmem.putmem_nbi_block(B.ptr_to([0]), A.ptr_to([0]), 128, peer)
    T.nvshmem.getmem_nbi.block(B.ptr_to([0]), A.ptr_to([0]), 128, peer)
    T.nvshmem.getmem_nbi_warp(B.ptr_to([0]), A.ptr_to([0]), 128, peer)
    T.nvshmem.fence()
    T.nvshmem.quiet()
    T.nvshmem.signal_op(S.ptr_to([0]), T.uint64(1), "add", peer)
    T.nvshmem.putmem_signal_nbi(B.ptr_to([0]), A.ptr_to([0]), 128, S.ptr_to([1]), T.uint64(1), "set", peer)
    T.nvshmem.putmem_signal_nbi.warp(
        B.ptr_to([0]), A.ptr_to([0]), 128, S.ptr_to([1]), T.uint64(1), "set", peer
    )
    T.nvshmem.putmem_signal_nbi_block(
        B.ptr_to([0]), A.ptr_to([0]), 128, S.ptr_to([1]), T.uint64(2), "add", peer
    )
    T.nvshmem.putmem_signal_nbi.block(B.ptr_to([0]), A.ptr_to([0]), 128, S.ptr_to([1]), 3, "add", peer)
    T.nvshmem.putmem_signal_nbi_warp(B.ptr_to([0]), A.ptr_to([0]), 128, S.ptr_to([1]), 1, "set", peer)
    T.nvshmem.wait_until(S.ptr_to([0]), "ge", T.uint64(1))
    T.nvshmem.wait_until(S.ptr_to([1]), "eq", T.uint64(1), "uint64_t")
    T.nvshmem.wait_until(S.ptr_to([2]), "ne", T.uint64(0), "uint64")
