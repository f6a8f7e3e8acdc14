"""GPU run of TIRx's T.gpu_* ops (tirx/ops/gpu_generic.py): the CUDA lowering computes what the
interpreter and numpy compute (tests/test_ops_gpu_generic.py). Skipped without a GPU."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_util import require_gpu

torch = require_gpu()

from test_ops_gpu_generic import shuffles, shuffles_reference  # noqa: E402

import tirx  # noqa: E402
from tirx.script import tirx as T  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize(
    ("width", "b"), [(32, 3), (16, 5), (8, 11), (4, 1), (1, 0), (32, 0), (16, 31), (2, 33)]
)
def test_shuffles_on_the_gpu_match_numpy(width, b):
    x = np.random.default_rng(width * 100 + b).standard_normal(128).astype(np.float32)
    k = tirx.compile(shuffles, target="cuda")
    X = torch.from_numpy(x).cuda()
    D = torch.full((4, 128), float("nan"), device="cuda")
    k(X, D, width, b)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(D.cpu().numpy(), shuffles_reference(x, width, b))


@T.function
def sync_and_return(X: T.Tensor((64,), T.int32), Y: T.Tensor((64,), T.int32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    i = T.cuda.thread_idx("x")
    s = T.alloc_shared((64,), "int32")
    s[i] = X[i] * 2 + T.undef()
    T.gpu_storage_sync("shared")
    Y[i] = s[63 - i]
    if T.gpu_thread_invariant(i >= 10):
        T.gpu_thread_return()
    Y[i] = Y[i] + 1000


def test_storage_sync_and_thread_return_match_the_interpreter():
    x = np.arange(64, dtype=np.int32) * 3
    want = np.zeros(64, np.int32)
    tirx.compile(sync_and_return, target="interp")(x, want)
    Y = torch.full((64,), -1, dtype=torch.int32, device="cuda")
    tirx.compile(sync_and_return, target="cuda")(torch.from_numpy(x).cuda(), Y)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(Y.cpu().numpy(), want)
    np.testing.assert_array_equal(want, x[::-1] * 2 + np.r_[np.full(10, 1000), np.zeros(54, np.int32)])
