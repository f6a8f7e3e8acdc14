# T.cuda.wait_until (a buffer for dst, a lambda or an expression for the condition),
# T.cuda.grid_sync in a cooperative launch, and a void T.cuda.func_call.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), T.uint32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=4, block=32, cooperative=True))
    v = T.alloc_local((1,), "uint32")
    v[0] = T.uint32(0)
    T.cuda.wait_until(v, T.address_of(A[4]), lambda x: x == T.uint32(1))
    T.cuda.wait_until(v, T.address_of(A[4]), v[0] != T.uint32(0), "sys", "global", "u32", 100)
    T.cuda.grid_sync()
    T.cuda.func_call("my_nop", "__device__ void my_nop() {}")
