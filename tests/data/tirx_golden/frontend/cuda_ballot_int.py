"""``T.cuda.ballot_sync`` / ``any_sync`` with an int32 predicate (TIRx's helpers take
``int pred``; corpus: a TIRx codegen test votes on an int32 value)."""

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((32,), "int32"), B: T.Tensor((32,), "uint32"), C: T.Tensor((32,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    tx = T.cuda.thread_idx("x")
    B[tx] = T.cuda.ballot_sync(T.uint32(0xFFFFFFFF), A[tx])
    C[tx] = T.cuda.any_sync(T.uint32(0xFFFFFFFF), A[tx] - 1)
