# KernelAttributes(required_block_size=True, min_blocks_per_sm=...): TIRx writes
# `__block_size__(...) __launch_bounds__(...)`; ptxas refuses both on one kernel, so tirx keeps
# the launch bounds as a comment (the required block size already bounds the block).
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((4,), "int32")):
    T.device_entry(
        launch=T.cuda.LaunchConfig(grid=(4,), block=(128,)),
        kernel_attrs=T.cuda.KernelAttributes(required_block_size=True, min_blocks_per_sm=2),
    )
    bx = T.cuda.block_idx("x")
    tx = T.cuda.thread_idx("x")
    if tx == 0:
        A[bx] = A[bx] + 1
