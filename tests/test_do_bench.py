"""``tirx.testing.do_bench`` without a GPU: the CPU path on interpreter kernels (and plain
callables), the CUDA path's logic against a stand-in driver (events, L2 flush, counts), and
the error for a CUDA kernel on a machine with no GPU. The real GPU runs in
tests/test_do_bench_gpu.py."""

from __future__ import annotations

import functools
import time

import numpy as np
import pytest
from kernel_texts import ADD

import tirx
from tirx.runtime import bench as B
from tirx.runtime import driver as drv
from tirx.testing import do_bench

KERNEL = """\
@T.function
def inc(A: T.Tensor((64,), T.int32)):
    for i in range(64):
        A[i] = A[i] + 1
"""


def _gpu() -> bool:
    try:
        return drv.probe()[0]
    except Exception:
        return False


def test_public_and_documented():
    import tirx.testing

    assert tirx.testing.do_bench is do_bench and "do_bench" in dir(tirx.testing)
    for word in ("warmup", "rep", "quantiles", "return_mode", "L2", "median"):
        assert word in (do_bench.__doc__ or "") + (B.__doc__ or "")


def test_interpreter_kernels_are_timed_on_the_cpu():
    k = tirx.compile(tirx.loads(KERNEL), target="interp")
    a = np.zeros(64, np.int32)
    calls = []
    fn = functools.partial(k, a)
    assert B._kind(fn) == "cpu" and B._kind(k) == "cpu" and B._kind(k.prepare(a)) == "cpu"
    ms = do_bench(lambda: calls.append(k(a)), n_warmup=2, n_repeat=5, return_mode="all", device="cpu")
    assert len(ms) == 5 and all(t > 0 for t in ms)
    assert len(calls) == 7 and a[0] == 7  # exactly n_warmup + n_repeat runs
    med = do_bench(k.prepare(a), warmup=1, rep=5)  # a prepared launch: the CPU too
    assert isinstance(med, float) and med > 0


def test_budgets_become_counts_and_the_statistics():
    calls = []

    def sleepy():
        calls.append(None)
        time.sleep(0.002)

    ms = do_bench(sleepy, warmup=4, rep=20, device="cpu")
    assert 1.9 < ms < 50
    # 1 first run + up to 5 estimate runs + about 2 warm-up + about 10 timed ones
    assert 8 <= len(calls) <= 25
    lo, mid, hi = do_bench(sleepy, warmup=1, rep=10, quantiles=[0.2, 0.5, 0.8], device="cpu")
    assert lo <= mid <= hi
    one = do_bench(sleepy, warmup=1, rep=6, quantiles=[0.5], device="cpu")
    assert isinstance(one, float)  # one quantile: one number, as Triton


def test_the_summary_functions():
    t = [3.0, 1.0, 2.0, 10.0]
    assert B._summarize(t, None, "median") == 2.5
    assert B._summarize(t, None, "mean") == 4.0
    assert B._summarize(t, None, "min") == 1.0 and B._summarize(t, None, "max") == 10.0
    assert B._summarize(t, None, "all") == t
    assert B._summarize(t, [0.0, 1.0], "median") == [1.0, 10.0]


def test_grad_to_none_is_reset_before_each_run():
    class Tensor:
        grad = 1

    x = Tensor()
    seen = []

    def step():
        seen.append(x.grad)
        x.grad = 5  # what a backward pass would leave

    do_bench(step, n_warmup=1, n_repeat=3, grad_to_none=[x], device="cpu")
    assert seen == [1, None, None, None]  # the warm-up run sees what was there; timed runs start clean


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"warmup": 0}, "warmup is a time budget in ms"),
        ({"rep": -1}, "rep is a time budget"),
        ({"quantiles": [0.5, 2]}, "quantiles must be numbers in [0, 1]"),
        ({"return_mode": "avg"}, "return_mode must be one of"),
        ({"device": "gpu"}, "device must be"),
        ({"n_repeat": 0}, "n_repeat must be an int >= 1"),
        ({"n_warmup": -1}, "n_warmup must be an int >= 0"),
    ],
)
def test_bad_arguments(kw, words):
    with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
        do_bench(lambda: None, **kw)
    with pytest.raises(TypeError, match="fn must be callable"):
        do_bench(3)


def test_a_cuda_kernel_without_a_gpu_is_a_clear_error():
    if _gpu():
        pytest.skip("a GPU is here: tests/test_do_bench_gpu.py times on it")
    pytest.importorskip("cuda.bindings.nvrtc")
    k = tirx.compile(tirx.loads(ADD), target="cuda -arch=sm_90a")
    assert B._kind(k) == "cuda"
    with pytest.raises(drv.CudaUnavailable, match="do_bench: the CUDA kernel add_kernel needs a CUDA GPU") as ei:
        do_bench(k)
    assert "target='interp'" in str(ei.value)
    with pytest.raises(drv.CudaUnavailable, match="needs a CUDA GPU"):
        do_bench(lambda: None, device="cuda")
    assert do_bench(lambda: None, n_warmup=0, n_repeat=2) >= 0  # a plain callable: the CPU here


class FakeDriver:
    """Events on a fake clock: each ``fn()`` advances it by ``run_ms``, each L2-flush memset
    by ``flush_ms``; ``cuEventRecord`` stamps the clock."""

    class CUevent_flags:
        CU_EVENT_DEFAULT = 0

    def __init__(self, run_ms=2.0, flush_ms=0.25):
        self.clock = 0.0
        self.run_ms, self.flush_ms = run_ms, flush_ms
        self.stamps: dict[int, float] = {}
        self.created = self.destroyed = 0
        self.memsets: list[tuple] = []
        self.allocs: list[int] = []
        self.freed: list[int] = []
        self.streams: list[int] = []
        self.log: list[str] = []

    def CUstream(self, h):
        self.streams.append(h)
        return ("stream", h)

    def cuEventCreate(self, flags):
        self.created += 1
        return (0, self.created)

    def cuEventRecord(self, e, s):
        self.stamps[e] = self.clock
        self.log.append("record")
        return (0,)

    def cuEventSynchronize(self, e):
        return (0,)

    def cuStreamSynchronize(self, s):
        return (0,)

    def cuEventElapsedTime(self, a, b):
        return (0, self.stamps[b] - self.stamps[a])

    def cuEventDestroy(self, e):
        self.destroyed += 1
        return (0,)

    def cuMemAlloc(self, n):
        self.allocs.append(n)
        return (0, 0x1000)

    def cuMemsetD32Async(self, ptr, value, n, s):
        self.memsets.append((ptr, value, n))
        self.clock += self.flush_ms
        self.log.append("flush")
        return (0,)

    def cuMemFree(self, ptr):
        self.freed.append(ptr)
        return (0,)

    def run(self):
        self.clock += self.run_ms
        self.log.append("run")


@pytest.fixture
def fake(monkeypatch):
    d = FakeDriver()
    monkeypatch.setattr(drv, "probe", lambda: (True, ""))
    monkeypatch.setattr(drv, "driver", lambda: d)
    monkeypatch.setattr(drv, "context", lambda index: None)
    monkeypatch.setattr(drv, "current_device_index", lambda: 0)
    return d


def test_cuda_path_events_flush_and_budgets(fake):
    ms = do_bench(fake.run, device="cuda")
    assert ms == 2.0  # the flush before each run is outside its events
    est = (5 * 2.0 + 5 * 0.25) / 5  # five runs, each after a flush
    n_warmup, n_repeat = int(25 / est), int(100 / est)
    assert fake.log.count("run") == 1 + 5 + n_warmup + n_repeat
    assert fake.allocs == [256 * 1024 * 1024] and fake.freed == [0x1000]
    assert set(fake.memsets) == {(0x1000, 0, 64 * 1024 * 1024)} and len(fake.memsets) == 5 + n_repeat
    assert fake.created == fake.destroyed == 2 + 2 * n_repeat
    timed = fake.log[-4 * n_repeat :]
    assert timed[:4] == ["flush", "record", "run", "record"]  # flush, then the run between its events
    assert fake.streams == [0]  # no torch/cupy loaded: the default stream, as tirx launches


def test_cuda_path_exact_counts_without_flush(fake):
    ts = do_bench(
        fake.run, device="cuda", n_warmup=3, n_repeat=4, flush_l2=False, return_mode="all", stream=7
    )
    assert ts == [2.0] * 4 and fake.log.count("run") == 7
    assert fake.allocs == [] and fake.memsets == [] and fake.streams == [7]


def test_cuda_kernels_default_to_the_gpu(fake):
    pytest.importorskip("cuda.bindings.nvrtc")
    k = tirx.compile(tirx.loads(ADD), target="cuda -arch=sm_90a")
    seen = []
    fn = functools.partial(lambda k: (seen.append(k), fake.run()), k)
    assert B._kind(k) == "cuda" and B._kind(k.__call__) == "cuda"
    assert do_bench(fn, device="cuda", n_warmup=0, n_repeat=2) == 2.0
    assert B._device_of(lambda: None) == "cuda"  # a GPU (the stand-in) is present
