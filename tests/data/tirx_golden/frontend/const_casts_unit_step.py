# Held-out round 10's forms: a dtype call and `.astype` of a constant fold (TIRx's cast), a unit
# loop step is no step, and `syncthreads_and` / `_or` take an integer predicate as it is.
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), "int64"), U: T.Tensor((4,), "uint64"), F: T.Tensor((4,), "float16"), B: T.Tensor((64,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    tx = T.cuda.thread_idx("x")
    A[0] = T.int64(T.int8(127))
    A[1] = T.int64(T.float32(3.7))
    A[2] = T.int64(T.uint32(4294967295))
    U[0] = T.max_value(ty="uint32").astype("uint64") + T.uint64(1)
    F[0] = T.float16(T.float32(1e-8))
    acc: T.int32 = 0
    for j in range(8, 9, 1):
        acc += j
    for j in T.serial(0, 4, step=1):
        acc += j
    B[tx] = acc + T.cuda.syncthreads_or(B[tx]) + T.cuda.syncthreads_and(tx)
