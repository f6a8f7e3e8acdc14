"""The kernel the autotuning tests tune (tests/test_autotune.py on the interpreter,
tests/test_autotune_gpu.py on a GPU): one module, so worker processes can import it by name."""

from __future__ import annotations

from tirx.script import tirx as T


@T.jit
def acc(
    X: T.Tensor((N,), "float32"),  # noqa: F821
    C: T.Tensor((N,), "float32"),  # noqa: F821
    *,
    N: T.constexpr,
    BLOCK: T.constexpr = 32,
    REPEAT: T.constexpr = 1,
):
    """C += X; REPEAT dependent additions per element (work that changes nothing: REPEAT = 1024
    makes it compute-bound)."""
    T.static_assert(BLOCK <= 1024, "BLOCK is at most 1024 threads")
    T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(N, BLOCK), block=BLOCK))
    i = T.cuda.block_idx("x") * BLOCK + T.cuda.thread_idx("x")
    if i < N:
        x = T.float32(0)
        for _r in range(REPEAT):
            x = x + X[i]
        C[i] = C[i] + x / REPEAT
