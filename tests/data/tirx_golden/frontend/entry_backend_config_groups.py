# Two device entries with different compile settings: TIRx builds each group of equal settings
# apart (here one NVRTC build, one "nvcc" build to PTX). tirx builds each group with NVRTC
# (nvcc's flags are NVRTC's device flags) and loads the PTX one through the driver.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((32,), T.float32), B: T.Tensor((32,), T.float32)):
    with T.device_entry(
        launch=T.cuda.LaunchConfig(grid=1, block=32), backend_config={"cuda": {"nvrtc": ["--ftz=false"]}}
    ):
        x = T.cuda.thread_idx("x")
        B[x] = A[x] * T.float32(0.5)
    with T.device_entry(
        launch=T.cuda.LaunchConfig(grid=1, block=32),
        backend_config={"cuda": {"compiler": "nvcc", "nvcc": ["--generate-line-info"], "target_format": "ptx"}},
    ):
        y = T.cuda.thread_idx("x")
        A[y] = B[y] + T.float32(1)
