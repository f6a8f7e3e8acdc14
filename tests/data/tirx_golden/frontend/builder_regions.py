# TIRx's region statements written in a kernel: launch_thread binds the thread index; the
# CPU regions (compute_scope, device_context, parallel_launch) build and print (not on CUDA).
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((16,), T.float32), n: T.int32):
    with T.launch_thread("vthread", T.int64(4)) as vt:
        T.evaluate(vt)
    with T.compute_scope("helper"):
        A[0] = T.float32(2.0)
    with T.device_context(2, n):
        A[1] = T.float32(3.0)
    with T.parallel_launch():
        A[2] = T.float32(4.0)
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=8)):
        with T.launch_thread("blockIdx.x", 2) as bx:
            with T.launch_thread("threadIdx.x", 8) as tx:
                A[bx * 8 + tx] = T.float32(1.0)
