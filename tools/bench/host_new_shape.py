# ruff: noqa: B023
# (the timing lambdas run before the loop moves on)
"""Where the host time of a library call at a new shape goes (issue #33: at most 20 µs for a
GEMM at a new shape with its kernel compiled; at most 10 µs for a cached attention call).

    python tools/bench/host_new_shape.py [--n 400]

Run on a GPU. ``linear`` at ``--n`` new row counts (65, 66, ...: the wgmma tiles, kernel
compiled) is timed per call, then its parts on the same kind of inputs: the output's
allocation, the choice of tiles and split (``auto_split_k`` + ``_plan`` at a new M), the
descriptors of a new A and C (``tensor_map``: two driver encodes), the launch of a prepared
plan; torch.matmul at the same new shapes beside it. Then a cProfile of the new-shape calls
(top functions by own time), the two descriptor modes side by side (``rows_on_device``) and a
cached attention call's parts.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

import torch  # noqa: E402

import tirx.kernels as K  # noqa: E402
from tirx.kernels import _host  # noqa: E402
from tirx.kernels import gemm as MM  # noqa: E402


def each(fn, xs) -> float:
    """Median µs of ``fn(x)`` over ``xs``, one call each (synchronized before each)."""
    ts = []
    for x in xs:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn(x)
        ts.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(ts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=400)
    a = ap.parse_args()
    dt = torch.bfloat16
    N, Kd = 256, 256
    w = torch.randn(N, Kd, device="cuda", dtype=dt)
    big = torch.randn(65 + 5 * a.n, Kd, device="cuda", dtype=dt)
    outs = torch.empty(65 + 5 * a.n, N, device="cuda", dtype=dt)
    K.linear(big[:100], w)  # compile, warm
    torch.cuda.synchronize()
    ms = iter(range(65, 65 + 5 * a.n))  # every measurement takes row counts never seen
    # views at one base address: a new M changes the descriptors' row count only
    print(
        f"linear at a new M, out given:      {each(lambda m: K.linear(big[:m], w, out=outs[:m]), [next(ms) for _ in range(a.n)]):7.1f} us"
    )
    print(
        f"linear at a new M, out allocated:  {each(lambda m: K.linear(big[:m], w), [next(ms) for _ in range(a.n)]):7.1f} us"
    )
    print(
        f"torch.matmul at a new M:           {each(lambda m: torch.matmul(big[:m], w.t()), [next(ms) for _ in range(a.n)]):7.1f} us"
    )
    print(
        f"  torch.empty (M, N):              {each(lambda m: torch.empty(m, N, device='cuda', dtype=dt), range(a.n)):7.1f} us"
    )
    ms2 = iter(range(100000, 100000 + 4 * a.n))

    def choose(m):
        sp = MM.auto_split_k(m, N, Kd, "bfloat16", 132, False)
        MM._plan(m, N, Kd, "bfloat16", False, 0, sp, "tensor")

    print(f"  tiles and split at a new M:      {each(choose, [next(ms2) for _ in range(a.n)]):7.1f} us")
    rows = iter(range(200000, 200000 + 4 * a.n))
    print(
        f"  one descriptor, new row count:   {each(lambda r: _host.tensor_map(big, r, Kd, (128, 64), 'bfloat16'), [next(rows) for _ in range(a.n)]):7.1f} us"
    )
    plan = MM._prepare(big[:100], w, outs[:100], 100, N, Kd, "bfloat16", False, False, None, "tensor", None)
    print(
        f"  launch of a prepared plan:       {each(lambda m: MM._launch(plan, big[:100], w, outs[:100], 100, N, Kd, ()), range(a.n)):7.1f} us"
    )
    print(f"  big[:m] (a view):                {each(lambda m: big[:m], range(1, a.n)):7.1f} us")
    ms3 = [next(ms) for _ in range(a.n)]
    pr = cProfile.Profile()
    pr.enable()
    for m in ms3:
        K.linear(big[:m], w, out=outs[:m])
    pr.disable()
    torch.cuda.synchronize()
    pstats.Stats(pr).sort_stats("tottime").print_stats(14)
    rows_on_device(a.n)
    attention_parts()


def rows_on_device(n: int) -> None:
    """``gemm.ROWS_ON_DEVICE`` (the kernels write A's and C's descriptors from templates) against
    the host's encodes and the default (None: by what the call has seen): ``linear`` at new row counts, one synchronized call each and back to back
    (a serving loop's calls), then at fixed shapes the kernels' GPU time (CUDA events around
    launches queued behind a spin: what the device-side patching costs the kernel) and a
    cached call's host time (the same call 200 times: what the extra arguments cost)."""
    dt = torch.bfloat16
    N, Kd = 4096, 4096
    w = torch.randn(N, Kd, device="cuda", dtype=dt)
    big = torch.randn(65 + 6 * n + 10, Kd, device="cuda", dtype=dt)
    outs = torch.empty(65 + 6 * n + 10, N, device="cuda", dtype=dt)
    print("descriptors: host encodes | written on the device (ROWS_ON_DEVICE) | the default (None)")
    for k, mode in enumerate((False, True, None)):
        MM.ROWS_ON_DEVICE = mode
        for _ in range(2):  # compile, warm (None: the device-writing kernel, then the host's)
            K.linear(big[:100], w, out=outs[:100])
        torch.cuda.synchronize()
        ms = iter(range(65 + 2 * n * k, 65 + 2 * n * (k + 1)))  # new row counts in each mode
        one = each(lambda m: K.linear(big[:m], w, out=outs[:m]), [next(ms) for _ in range(n)])
        rows = [next(ms) for _ in range(n)]
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for m in rows:
            K.linear(big[:m], w, out=outs[:m])
        loop = (time.perf_counter() - t0) / n * 1e6
        torch.cuda.synchronize()
        print(
            f"  {('host  ', 'device', 'auto  ')[k]}: linear at a new M {one:6.1f} us (synchronized each), {loop:6.1f} us (back to back)"
        )
    for M, Nn, Kk in ((65, 4096, 4096), (300, 4096, 4096), (128, 1024, 1024), (4096, 4096, 4096)):
        x = torch.randn(M, Kk, device="cuda", dtype=dt)
        ww = torch.randn(Nn, Kk, device="cuda", dtype=dt)
        o = torch.empty(M, Nn, device="cuda", dtype=dt)
        gpu, host = [], []
        for mode in (False, True, False, True):
            MM.ROWS_ON_DEVICE = mode
            K.linear(x, ww, out=o)
            torch.cuda.synchronize()
            # the kernel's GPU time: launches queued behind a spin, so the host's pace is hidden
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(200_000_000)
            e0.record()
            for _ in range(50):
                K.linear(x, ww, out=o)
            e1.record()
            torch.cuda.synchronize()
            gpu.append(e0.elapsed_time(e1) * 1e3 / 50)
            # a cached call's host time (same shape and tensors: the plan is remembered)
            t0 = time.perf_counter()
            for _ in range(200):
                K.linear(x, ww, out=o)
            host.append((time.perf_counter() - t0) / 200 * 1e6)
            torch.cuda.synchronize()
        (gh, gd), (hh, hd) = (min(gpu[0::2]), min(gpu[1::2])), (min(host[0::2]), min(host[1::2]))
        print(
            f"  {M}x{Nn}x{Kk}: kernel {gh:7.2f} | {gd:7.2f} us on the GPU (device/host {gd / gh:.3f}); "
            f"a cached call {hh:5.1f} | {hd:5.1f} us on the host"
        )
    MM.ROWS_ON_DEVICE = None


def loop_us(fn, n: int = 2000) -> float:
    """µs per call of ``fn`` in a loop (median of 5 loops)."""
    ts = []
    for _ in range(5):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        ts.append((time.perf_counter() - t0) / n * 1e6)
    torch.cuda.synchronize()
    return statistics.median(ts)


def attention_parts() -> None:
    """A cached ``attention`` call (tensors seen before) and its parts, then its profile."""
    from tirx.kernels import attn as AH
    from tirx.kernels._host import check_cuda

    for shape, causal in (((1, 8, 256, 128), False), ((1, 8, 256, 64), True)):
        q, k, v = (torch.randn(*shape, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        F = torch.nn.functional
        cfg, key = AH._best(shape[2], shape[3], causal)
        kern = AH._compiled(*shape, causal, "bfloat16", key)
        o = torch.empty_like(q)
        args = AH.launch_args(q, k, v, o, **cfg)
        print(f"attention {shape} causal={causal} ({cfg.get('SCHED', 'grid')}):")
        print(
            f"  the call:                        {loop_us(lambda: K.attention(q, k, v, causal=causal)):7.2f} us"
        )
        print(
            f"  SDPA:                            {loop_us(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)):7.2f} us"
        )
        print(f"  the kernel on prepared args:     {loop_us(lambda: kern(*args)):7.2f} us")
        print(
            f"  _check_qkv:                      {loop_us(lambda: AH._check_qkv(q, k, v, '(B, H, S, D)', '(B, HKV, S, D)', (0, 2, 3))):7.2f} us"
        )
        print(
            f"  check_cuda once:                 {loop_us(lambda: check_cuda('q', q, ('bfloat16',), 4)):7.2f} us"
        )
        print(f"  torch.empty_like:                {loop_us(lambda: torch.empty_like(q)):7.2f} us")
        if cfg.get("SCHED") == "dynamic":
            print(
                f"  tile_counter:                    {loop_us(lambda: AH._counter(q.get_device())):7.2f} us"
            )
        print(
            f"  3 data_ptr + key tuple:          {loop_us(lambda: (q.data_ptr(), k.data_ptr(), v.data_ptr(), *q.shape)):7.2f} us"
        )
        sig = lambda: (  # noqa: E731 - a key that decides every check: addresses, shapes, dtypes, strides
            q.data_ptr(), k.data_ptr(), v.data_ptr(), q.shape, k.shape, v.shape,
            q.dtype, k.dtype, v.dtype, q.stride(), k.stride(), v.stride(),
        )  # fmt: skip
        print(f"  a key deciding the checks:       {loop_us(sig):7.2f} us")
        d = {sig(): 1}
        print(f"  ... and its lookup:              {loop_us(lambda: d.get(sig())):7.2f} us")
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(3000):
            K.attention(q, k, v, causal=causal)
        pr.disable()
        torch.cuda.synchronize()
        pstats.Stats(pr).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
