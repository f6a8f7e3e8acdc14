"""``do_bench``: how long a kernel takes, measured as ``triton.testing.do_bench`` does.

::

    from tirx.testing import do_bench

    ms = do_bench(lambda: kernel(a, b))                          # median, in milliseconds
    p50, p20, p80 = do_bench(lambda: kernel(a, b), quantiles=[0.5, 0.2, 0.8])

On a GPU: CUDA events (through ``cuda.bindings.driver``, the runtime tirx launches with)
around each run, on the stream tirx launches on (torch's or CuPy's current stream when
they are loaded, else the default stream; ``stream=`` another), after warm-up runs, with
the L2 cache flushed before each timed run by writing a 256 MB buffer. ``warmup`` and
``rep`` are time budgets in ms, as in Triton: five runs estimate one run's time, and the
budgets become run counts (``n_warmup`` / ``n_repeat`` give the counts directly). The
result is the median of the runs in ms (Triton's default is the mean:
``return_mode="mean"``), or the ``quantiles`` asked for.

On the CPU: an interpreter kernel (``tirx.compile(f, target="interp")``, or any kernel
under ``TIRX_INTERPRET=1``) is timed with ``time.perf_counter`` the same way (there is no
cache to flush). A CUDA kernel on a machine without a GPU is an error saying so
(``tirx.runtime.driver.CudaUnavailable``); another callable is timed on the GPU when there
is one and on the CPU otherwise (``device=`` decides).
"""

from __future__ import annotations

import functools
import inspect
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["L2_FLUSH_BYTES", "do_bench"]

#: bytes written between timed runs to evict the L2 cache (Triton's 256 MB)
L2_FLUSH_BYTES = 256 * 1024 * 1024
_RETURN_MODES = ("median", "mean", "min", "max", "all")
_MAX_RUNS = 1_000_000  # a budget never asks for more runs than this (a near-instant fn)


def do_bench(
    fn: Callable[[], Any],
    warmup: float = 25,
    rep: float = 100,
    quantiles: Sequence[float] | None = None,
    *,
    return_mode: str = "median",
    grad_to_none: Sequence[Any] | None = None,
    device: str | None = None,
    flush_l2: bool = True,
    n_warmup: int | None = None,
    n_repeat: int | None = None,
    sync_each: bool = False,
    stream: Any = None,
) -> Any:
    """Time ``fn()`` (no arguments: ``lambda: kernel(a, b)``); milliseconds.

    - ``warmup``, ``rep``: time budgets in ms for the warm-up runs and the timed runs.
    - ``quantiles``: return these quantiles of the run times (a list; one value for one
      quantile, as Triton), else ``return_mode``: ``"median"`` (default), ``"mean"``,
      ``"min"``, ``"max"`` or ``"all"`` (every run's time).
    - ``grad_to_none``: tensors whose ``.grad`` is reset to None before each run.
    - ``device``: ``"cuda"`` (CUDA events), ``"cpu"`` (``time.perf_counter``) or None:
      ``"cpu"`` for an interpreter kernel, ``"cuda"`` for a CUDA kernel (an error without a
      GPU), and for another callable ``"cuda"`` when a GPU is present, else ``"cpu"``.
    - ``flush_l2``: write ``L2_FLUSH_BYTES`` before each timed run (GPU only).
    - ``n_warmup``, ``n_repeat``: run counts instead of the budgets (``fn`` then runs
      exactly ``n_warmup + n_repeat`` times).
    - ``sync_each``: wait for each timed run before starting the next (each run then starts
      on an idle GPU, so a short kernel's time includes part of its launch latency).
    - ``stream``: the CUDA stream the events are recorded on (a handle, or an object with
      ``cuda_stream``/``ptr``/``handle``); default as tirx kernels launch.
    """
    if not callable(fn):
        raise TypeError(f"do_bench: fn must be callable (e.g. lambda: kernel(a, b)), got {type(fn).__name__}")
    for what, v in (("warmup", warmup), ("rep", rep)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            raise ValueError(f"do_bench: {what} is a time budget in ms and must be positive, got {v!r}")
    if n_warmup is not None and (isinstance(n_warmup, bool) or not isinstance(n_warmup, int) or n_warmup < 0):
        raise ValueError(f"do_bench: n_warmup must be an int >= 0, got {n_warmup!r}")
    if n_repeat is not None and (isinstance(n_repeat, bool) or not isinstance(n_repeat, int) or n_repeat < 1):
        raise ValueError(f"do_bench: n_repeat must be an int >= 1, got {n_repeat!r}")
    qs = None
    if quantiles is not None:
        qs = [float(q) for q in quantiles]
        if not qs or any(not 0.0 <= q <= 1.0 for q in qs):
            raise ValueError(f"do_bench: quantiles must be numbers in [0, 1], got {list(quantiles)!r}")
    if return_mode not in _RETURN_MODES:
        raise ValueError(
            f"do_bench: return_mode must be one of {', '.join(_RETURN_MODES)}, got {return_mode!r}"
        )
    if device not in (None, "cuda", "cpu"):
        raise ValueError(f"do_bench: device must be 'cuda', 'cpu' or None, got {device!r}")
    where = device or _device_of(fn)
    run = _bench_cuda if where == "cuda" else _bench_cpu
    times = run(fn, warmup, rep, grad_to_none, flush_l2, n_warmup, n_repeat, sync_each, stream)
    return _summarize(times, qs, return_mode)


def _summarize(times: list[float], quantiles: list[float] | None, return_mode: str) -> Any:
    if quantiles is not None:
        import numpy as np

        got = [float(x) for x in np.quantile(np.asarray(times, dtype=np.float64), quantiles)]
        return got[0] if len(got) == 1 else got
    if return_mode == "all":
        return list(times)
    how: dict[str, Callable[[list[float]], float]] = {
        "median": statistics.median,
        "mean": statistics.fmean,
        "min": min,
        "max": max,
    }
    return float(how[return_mode](times))


# ---------------------------------------------------------------------------- which device
def _unwrap(fn: Any) -> Any:
    """The object behind partials, bound methods and prepared launches."""
    for _ in range(8):
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif inspect.ismethod(fn):
            fn = fn.__self__
        else:
            break
    return fn


def _kind(fn: Any) -> str | None:
    """``"cpu"`` for an interpreter kernel, ``"cuda"`` for a CUDA kernel, None for anything else."""
    obj = _unwrap(fn)
    for o in (obj, getattr(obj, "kernel", None), getattr(obj, "_kernel", None)):
        if o is None:
            continue
        mod = type(o).__module__ or ""
        if getattr(type(o), "target", None) == "interp" or mod.startswith("tirx.interp"):
            return "cpu"
        if mod.startswith("tirx.runtime."):
            return "cuda"
    return None


def _device_of(fn: Any) -> str:
    kind = _kind(fn)
    if kind is not None:
        return kind
    from tirx.runtime import driver as drv

    ok, _why = drv.probe()
    return "cuda" if ok else "cpu"


# ---------------------------------------------------------------------------- CPU
def _reset_grads(grad_to_none: Sequence[Any] | None) -> None:
    for x in grad_to_none or ():
        x.grad = None


def _counts(
    warmup: float, rep: float, estimate_ms: float, n_warmup: int | None, n_repeat: int | None
) -> tuple[int, int]:
    est = max(estimate_ms, 1e-6)
    w = n_warmup if n_warmup is not None else min(_MAX_RUNS, max(1, int(warmup / est)))
    r = n_repeat if n_repeat is not None else min(_MAX_RUNS, max(1, int(rep / est)))
    return w, r


def _bench_cpu(
    fn: Callable[[], Any],
    warmup: float,
    rep: float,
    grad_to_none: Sequence[Any] | None,
    flush_l2: bool,
    n_warmup: int | None,
    n_repeat: int | None,
    sync_each: bool,
    stream: Any,
) -> list[float]:
    clock = time.perf_counter
    est = 0.0
    if n_warmup is None or n_repeat is None:
        fn()  # the first run: compiling, caches
        t0 = clock()
        k = 0
        while k < 5:  # estimate one run (stop early when the runs already took the budget)
            fn()
            k += 1
            if (clock() - t0) * 1e3 >= rep:
                break
        est = (clock() - t0) * 1e3 / k
    w, r = _counts(warmup, rep, est, n_warmup, n_repeat)
    for _ in range(w):
        fn()
    times = []
    for _ in range(r):
        _reset_grads(grad_to_none)
        t0 = clock()
        fn()
        times.append((clock() - t0) * 1e3)
    return times


# ---------------------------------------------------------------------------- GPU
def _bench_cuda(
    fn: Callable[[], Any],
    warmup: float,
    rep: float,
    grad_to_none: Sequence[Any] | None,
    flush_l2: bool,
    n_warmup: int | None,
    n_repeat: int | None,
    sync_each: bool,
    stream: Any,
) -> list[float]:
    from tirx.runtime import driver as drv
    from tirx.runtime.kernel import _stream_handle

    ok, why = drv.probe()
    if not ok:
        raise drv.CudaUnavailable(
            f"do_bench: {_what(fn)} needs a CUDA GPU to be timed, and there is none here ({why}); time an "
            "interpreter kernel (tirx.compile(f, target='interp')) instead, or pass device='cpu' for CPU work"
        )
    d = drv.driver()
    dev = drv.current_device_index()
    drv.context(dev)
    s = d.CUstream(_stream_handle(stream, dev))
    events: list[Any] = []
    flush_ptr = None

    def event() -> Any:
        e = drv.check(d.cuEventCreate(d.CUevent_flags.CU_EVENT_DEFAULT), "cuEventCreate")
        events.append(e)
        return e

    def record(e: Any) -> None:
        drv.check(d.cuEventRecord(e, s), "cuEventRecord")

    def elapsed(a: Any, b: Any) -> float:
        return float(drv.check(d.cuEventElapsedTime(a, b), "cuEventElapsedTime"))

    def flush() -> None:
        if flush_ptr is not None:  # write the whole buffer: what the L2 held is evicted
            drv.check(d.cuMemsetD32Async(flush_ptr, 0, L2_FLUSH_BYTES // 4, s), "cuMemsetD32Async (L2 flush)")

    try:
        if flush_l2:
            flush_ptr = int(drv.check(d.cuMemAlloc(L2_FLUSH_BYTES), "cuMemAlloc (L2 flush buffer)"))
        est = 0.0
        if n_warmup is None or n_repeat is None:
            fn()  # the first run: compiling, loading the module
            drv.check(d.cuStreamSynchronize(s), "cuStreamSynchronize")
            a, b = event(), event()
            record(a)
            for _ in range(5):
                flush()
                fn()
            record(b)
            drv.check(d.cuEventSynchronize(b), "cuEventSynchronize")
            est = elapsed(a, b) / 5
        w, r = _counts(warmup, rep, est, n_warmup, n_repeat)
        for _ in range(w):
            fn()
        drv.check(d.cuStreamSynchronize(s), "cuStreamSynchronize")
        pairs = [(event(), event()) for _ in range(r)]
        for a, b in pairs:
            _reset_grads(grad_to_none)
            flush()
            record(a)
            fn()
            record(b)
            if sync_each:
                drv.check(d.cuEventSynchronize(b), "cuEventSynchronize")
        drv.check(d.cuEventSynchronize(pairs[-1][1]), "cuEventSynchronize")
        return [elapsed(a, b) for a, b in pairs]
    finally:
        for e in events:
            d.cuEventDestroy(e)
        if flush_ptr is not None:
            d.cuStreamSynchronize(s)  # the memsets are done with the buffer
            d.cuMemFree(flush_ptr)


def _what(fn: Any) -> str:
    obj = _unwrap(fn)
    if _kind(fn) == "cuda":
        return f"the CUDA kernel {getattr(obj, 'name', None) or type(obj).__name__}"
    return f"{getattr(fn, '__name__', None) or type(fn).__name__} (device='cuda')"
