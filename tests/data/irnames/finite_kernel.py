# T.isinf / T.isfinite as TIRx builds them (comparisons) next to tirx's op calls (ty=), for the
# NVRTC and GPU tests of tests/test_script_ir_names_parity.py / test_script_ir_names_gpu.py.
from tirx.script import tirx as T

N = 64


def kernel(dt):
    @T.function
    def f(X: T.Tensor((N,), dt), C: T.Tensor((4 * N,), T.bool)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=N))
        i = T.cuda.thread_idx("x")
        C[4 * i] = T.isinf(X[i])
        C[4 * i + 1] = T.isinf(X[i], ty=T.bool)
        C[4 * i + 2] = T.isfinite(X[i])
        C[4 * i + 3] = T.isfinite(X[i], ty=T.bool)

    return f
