# An atomic add of a two-lane value through the address of its first element (TIRx's
# `T.cuda.atomic_add(T.address_of(A[i, T.ramp(j, 1, 2)]), v)`): one packed f16x2 / bf16x2
# atomic per pair, each element added to once (a permutation of the rows: the GPU's
# order of atomics cannot change the bits, so TIRx's CUDA and tirx's agree bit for bit).
from tirx.script import tirx as T


@T.function
def f(
    dw: T.Tensor((16, 8), T.float16),
    dv: T.Tensor((16, 8), T.bfloat16),
    dy: T.Tensor((16, 8), T.float16),
    dz: T.Tensor((16, 8), T.bfloat16),
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=16, block=4))
    t = T.cuda.block_idx("x")
    d2 = T.cuda.thread_idx("x")
    T.cuda.atomic_add(T.address_of(dw[(t * 7) % 16, T.ramp(d2 * 2, 1, 2)]), dy[t, T.ramp(d2 * 2, 1, 2)])
    T.cuda.atomic_add(T.address_of(dv[(t * 7) % 16, T.ramp(d2 * 2, 1, 2)]), dz[t, T.ramp(d2 * 2, 1, 2)])
