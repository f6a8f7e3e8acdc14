"""Lane and warp indices come from the thread's linear index in its block: warps are formed
from ``x + y * blockDim.x + z * blockDim.x * blockDim.y``, so in a 16 x 2 x 2 block the lane of
``(x, y, z)`` is ``16 * y + x``, not ``x % 32`` (a silent wrong result the corpus's GPU stage
found: TIRx's ``test_multidimensional_indices``). Codegen reads ``threadIdx.x`` alone only where
the block is known to be one-dimensional; the interpreter and CUDA agree on every block shape."""

from __future__ import annotations

import numpy as np
import pytest

import tirx
from tirx.codegen.cuda import generate
from tirx.script import tirx as T

OPS = ("lane_id", "warp_id", "warpgroup_id", "warp_in_warpgroup", "thread_in_warpgroup", "linear_thread_id")


def kernel(block):
    nthreads = block[0] * block[1] * block[2]

    @T.function
    def f(A: T.Tensor((nthreads, 6), "int32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=block))
        t = T.cuda.linear_thread_id()
        A[t, 0] = T.cuda.lane_id()
        A[t, 1] = T.cuda.warp_id()
        A[t, 2] = T.cuda.warpgroup_id()
        A[t, 3] = T.cuda.warp_in_warpgroup()
        A[t, 4] = T.cuda.thread_in_warpgroup()
        A[t, 5] = t

    return f


def expected(n: int) -> np.ndarray:
    t = np.arange(n)
    return np.stack([t % 32, t // 32, t // 128, (t // 32) % 4, t % 128, t], 1).astype(np.int32)


@pytest.mark.parametrize("block", [(256, 1, 1), (16, 2, 2), (8, 4, 8), (32, 3, 2), (1, 1, 64)])
def test_interpreter_indices_follow_the_linear_index(block):
    n = block[0] * block[1] * block[2]
    a = np.full((n, 6), -1, np.int32)
    tirx.compile(kernel(block), target="interp")(a)
    np.testing.assert_array_equal(a, expected(n))


def test_codegen_reads_threadidx_x_alone_only_for_one_dimensional_blocks():
    one = generate(kernel((256, 1, 1))).text
    assert "threadIdx.y" not in one.split("extern")[-1]
    multi = generate(kernel((16, 2, 2))).text.split("extern")[-1]
    body = [ln for ln in multi.splitlines() if "= " in ln and "A[" in ln and not ln.endswith("= t;")]
    assert body and all("threadIdx.y" in ln and "threadIdx.z" in ln for ln in body), body
    assert "(int)threadIdx.x & 31" not in multi and "(int)threadIdx.x >> 5" not in multi


def test_cuda_agrees_on_a_gpu():
    from gpu_util import require_gpu

    torch = require_gpu()
    for block in [(256, 1, 1), (16, 2, 2), (8, 4, 8), (32, 3, 2), (1, 1, 64)]:
        n = block[0] * block[1] * block[2]
        a = torch.full((n, 6), -1, dtype=torch.int32, device="cuda")
        tirx.compile(kernel(block), target="cuda")(a)
        np.testing.assert_array_equal(a.cpu().numpy(), expected(n), err_msg=str(block))
