# T.device_entry(backend_config=...): TIRx's per-entry CUDA compile settings, kept as the entry's
# attrs["backend_config"] (compact JSON, keys sorted). tirx compiles the entry with them: the
# NVRTC flags of its compiler, each ptxas option as --ptxas-options=, its arch.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.float32)):
    T.device_entry(
        launch=T.cuda.LaunchConfig(grid=2, block=32),
        backend_config={"cuda": {"arch": "sm_90a", "nvrtc": ["--ftz=false", "--prec-div=true"], "ptxas": ["-O2"]}},
    )
    i = T.cuda.block_idx("x") * 32 + T.cuda.thread_idx("x")
    B[i] = A[i] * T.float32(0.5) + T.float32(1)
