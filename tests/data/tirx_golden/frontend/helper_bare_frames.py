# A bare frame opened at a helper's top level (`T.device_entry(...)`, `T.launch_thread(...)` in an
# `@T.inline` or `@T.macro` body) stays open after the call: the rest of the caller's block goes
# inside it, up to the end of the caller's enclosing block, as TIRx expands a helper into its
# caller (held-out round 18: tirx closed the frame at the end of the helper).
from tirx.script import tirx as T


@T.inline
def enter(A):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    A[0] = T.float32(1.0)


@T.macro
def threads4(A):
    T.launch_thread("threadIdx.x", 4)
    A[2] = T.float32(2.0)


@T.function
def f(A: T.Tensor((64,), "float32"), n: T.int32):
    enter(A)
    A[1] = T.float32(3.0)
    if n > 0:
        threads4(A)
        A[5] = T.float32(5.0)
    A[6] = T.float32(6.0)
