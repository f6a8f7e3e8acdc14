"""``tirx.testing.do_bench`` on a GPU: a tirx CUDA kernel timed with CUDA events, L2 flush
and quantiles (skipped without a GPU; tests/test_do_bench.py runs everywhere)."""

from __future__ import annotations

import pytest
from gpu_util import require_gpu

torch = require_gpu()

import tirx  # noqa: E402
from tirx.testing import do_bench  # noqa: E402

pytestmark = pytest.mark.gpu

ADD = """\
@T.function
def add(A: T.Tensor((16777216,), T.float32), B: T.Tensor((16777216,), T.float32)):
    with T.device_entry(131072, 1, 1, 128, 1, 1):
        i: T.let[T.int32] = T.cuda.block_idx("x") * 128 + T.cuda.thread_idx("x")
        B[i] = A[i] + T.float32(2)
"""


def test_a_cuda_kernel_is_timed_with_events():
    k = tirx.compile(tirx.loads(ADD), target="cuda")
    a = torch.randn(1 << 24, device="cuda")
    b = torch.empty_like(a)
    ms = do_bench(lambda: k(a, b))
    assert 0.001 < ms < 50  # 128 MB moved: tens of microseconds on a recent GPU
    torch.testing.assert_close(b, a + 2)
    lo, mid, hi = do_bench(k.prepare(a, b), quantiles=[0.2, 0.5, 0.8])
    assert 0 < lo <= mid <= hi
    runs = do_bench(lambda: k(a, b), n_warmup=2, n_repeat=7, return_mode="all", sync_each=True)
    assert len(runs) == 7 and all(t > 0 for t in runs)


def test_events_see_the_kernel_not_the_host():
    """A long kernel's time is the GPU's: a 64x bigger copy takes clearly longer."""
    small = torch.empty(1 << 20, device="cuda")
    big = torch.empty(1 << 26, device="cuda")
    t_small = do_bench(lambda: small.copy_(small.flip(0)), warmup=5, rep=20)
    t_big = do_bench(lambda: big.copy_(big.flip(0)), warmup=5, rep=20)
    assert t_big > 8 * t_small
