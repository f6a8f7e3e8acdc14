"""On a GPU: a CUDA runtime tensor (``tirx.runtime.tensor(a, tirx.cuda(0))``) passed to a
compiled CUDA kernel and read back. Skipped cleanly without a CUDA driver/device."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_util import require_gpu

require_gpu()

import tirx  # noqa: E402
from tirx.script import tirx as T  # noqa: E402

pytestmark = pytest.mark.gpu


@T.function
def scale(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=128))
    i = T.cuda.block_idx("x") * 128 + T.cuda.thread_idx("x")
    B[i] = A[i] * T.float32(2) + T.float32(1)


def test_cuda_tensor_through_a_kernel():
    k = tirx.compile(scale, target="cuda")
    a = np.random.default_rng(0).standard_normal(256).astype("float32")
    ta = tirx.runtime.tensor(a, tirx.cuda(0))
    tb = tirx.runtime.tensor(np.full(256, np.nan, "float32"), tirx.cuda(0))
    k(ta, tb)
    np.testing.assert_array_equal(tb.numpy(), a * 2 + 1)
    np.testing.assert_array_equal(ta.numpy(), a)
    assert tirx.cuda(0).exist and tirx.cuda(0).compute_version.count(".") == 1
    tirx.cuda(0).sync()
    tb.copyfrom(np.zeros(256, "float32"))
    assert not tb.numpy().any()
