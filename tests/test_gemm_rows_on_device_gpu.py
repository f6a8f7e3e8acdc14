"""The GEMM calls with ``gemm.ROWS_ON_DEVICE`` (each CTA writes the descriptors of A and C from a
template: a new M or a new address encodes nothing on the host) on a GPU: the library's GEMM
tests again in that mode, a serving loop's new row counts on views of one buffer, and two
streams at once (each has its own descriptor space)."""

from __future__ import annotations

import pytest
from gpu_util import require_gpu

torch = require_gpu()

import tirx.kernels as K  # noqa: E402
from tirx.kernels import gemm as MM  # noqa: E402

pytestmark = pytest.mark.gpu

if torch.cuda.get_device_capability() < (9, 0):  # pragma: no cover
    pytest.skip("the library's kernels need sm_90a", allow_module_level=True)

# the library's GEMM tests, collected here again and run with the descriptors written on the device
from test_kernels_library_gpu import (  # noqa: E402, F401
    _rel,
    test_linear_and_matmul_at_any_shape,
    test_matmul_of_a_row_major_b,
    test_scaled_matmul_at_any_shape,
    test_scaled_matmul_with_block_scales,
    test_scaled_matmul_with_rowwise_scales,
    test_split_k_adds_every_share_once,
)


@pytest.fixture(autouse=True)
def rows_on_device(monkeypatch):
    monkeypatch.setattr(MM, "ROWS_ON_DEVICE", True)


def test_the_calls_take_the_kernels_that_write_their_descriptors():
    x = torch.randn(300, 256, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(512, 256, device="cuda", dtype=torch.bfloat16)
    K.linear(x, w)
    plans = [p for key, p in MM._CALLS.items() if key[-1] and p[0] != "gemv"]
    assert plans and all(p[5] and isinstance(p[2], int) for p in plans)  # the template's address


def test_a_serving_loop_of_new_row_counts_on_one_buffer():
    """Views of one activation buffer at row counts never seen (a decode / prefill loop): every
    call's result is right, with no synchronization between the calls."""
    g = torch.Generator(device="cuda").manual_seed(5)
    big = torch.randn(4200, 1024, device="cuda", dtype=torch.bfloat16, generator=g)
    w = torch.randn(3000, 1024, device="cuda", dtype=torch.bfloat16, generator=g)
    outs = torch.full((4200, 3000), float("nan"), device="cuda", dtype=torch.bfloat16)
    ms = [65, 66, 127, 128, 129, 700, 701, 1500, 4097, 4200, 90, 3000]
    got = [K.linear(big[:m], w, out=outs[:m]).clone() for m in ms]
    for m, y in zip(ms, got):
        assert not y.isnan().any() and _rel(y, big[:m].float() @ w.float().t()) < 1e-2, m


def test_two_streams_at_once_each_have_their_own_descriptors():
    """Launches on two streams may run at the same time: each stream's CTAs write their
    descriptors in that stream's space, so both streams' products stay right."""
    g = torch.Generator(device="cuda").manual_seed(9)
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    w = torch.randn(4096, 2048, device="cuda", dtype=torch.bfloat16, generator=g)
    xs = [[torch.randn(m, 2048, device="cuda", dtype=torch.bfloat16, generator=g) for m in ms]
          for ms in ((300, 1000, 77, 4096), (513, 129, 2000, 65))]  # fmt: skip
    torch.cuda.synchronize()
    outs: list = [[], []]
    for _ in range(3):
        for i, s in enumerate(streams):
            with torch.cuda.stream(s):
                outs[i] = [K.linear(x, w) for x in xs[i]]
    torch.cuda.synchronize()
    spaces = {MM.per_stream(0, "gemm_maps", MM._map_space, s.cuda_stream).data_ptr() for s in streams}
    assert len(spaces) == 2
    for i in range(2):
        for x, y in zip(xs[i], outs[i]):
            assert _rel(y, x.float() @ w.float().t()) < 1e-2
