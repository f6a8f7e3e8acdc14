# Kernels written as TIRx's thread launches: each top-level `with T.launch_thread(...)` nest of
# a host function is one kernel (grid from its blockIdx extents, block from its threadIdx ones;
# an extent may be a parameter, computed on the host). kernel_a launches two kernels in order.
from tirx.script import tirx as T


@T.ir_module
class f:
    @T.function
    def kernel_a(A: T.Tensor((256,), T.float32), n: T.int32):
        with T.launch_thread("blockIdx.x", 2) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                A[bx * 128 + tx] = A[bx * 128 + tx] + T.float32(1)
        with T.launch_thread("threadIdx.x", n) as tx:
            A[tx] = A[tx] * T.float32(2)

    @T.function
    def kernel_b(A: T.Tensor((256,), T.float32)):
        with T.launch_thread("threadIdx.x", 256) as tx:
            A[tx] = A[tx] - T.float32(3)
            with T.launch_thread("threadIdx.x", 256) as tx2:
                A[tx2] = A[tx2] * T.float32(0.5)
