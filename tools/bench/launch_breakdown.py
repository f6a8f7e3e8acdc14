"""Where a tirx kernel call's host time goes (run on a GPU machine).

Times, on the seed kernel compiled by ``tirx.compile`` (bursts of 256 calls, synchronized
between bursts, median of many bursts): the whole call; the generated fast path with the
driver call replaced by a no-op (the Python part alone); the raw ``cuLaunchKernel`` the fast
path ends in; and each torch/driver-binding operation the fast path performs, alone. Then the
Hopper GEMMs with and without a 2-CTA cluster (tirx/kernels/hopper/gemm.py): host time of a call
and of the general path alone (``Kernel._general``, the path cluster kernels took on every
call before they had a fast path: ~150 us, docs/benchmarks.md "Cluster launches"), and the
GPU time of one launch, for the host time to be compared with.

``python tools/bench/launch_breakdown.py [--no-gemm]``
"""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cuda import _ex


def _per_call(fn, n: int = 256, rounds: int = 201, sync=None) -> float:
    ts = []
    for _ in range(rounds):
        if sync:
            sync()
        t = time.perf_counter()
        for _ in range(n):
            fn()
        ts.append((time.perf_counter() - t) / n)
    if sync:
        sync()
    return statistics.median(ts) * 1e6


def main() -> None:
    import torch

    import tirx
    from tirx.runtime import driver as drv
    from tirx.script import tirx as T

    ex = _ex("elementwise_add")
    k = tirx.compile(ex.make_add(T.float16, 2, block=128), target="cuda")
    a = torch.randn(1024, device="cuda", dtype=torch.float16)
    b = torch.empty_like(a)
    k(a, b)
    k(a, b)
    torch.cuda.synchronize()
    call = type(k).__call__
    ns = dict(call.__globals__)
    ok = ns["_OK"]
    ns["_launch"] = lambda *args: (ok,)
    exec(compile(k.fast_source, "<python part only>", "exec"), ns)
    py_only = ns["__call__"]
    sync = torch.cuda.synchronize
    d = drv.driver()
    fn = k._fns[0]
    blk = k._blocks[threading.get_ident()]
    so = d.CUstream(torch.cuda.current_stream().cuda_stream)
    raw = torch._C._cuda_getCurrentRawStream
    rows = [
        ("tirx kernel call (fast path + launch)", _per_call(lambda: k(a, b), sync=sync)),
        ("fast path, launch replaced by a no-op", _per_call(lambda: py_only(k, a, b))),
        (
            "raw cuLaunchKernel (cuda-bindings)",
            _per_call(lambda: d.cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, so, blk[1], 0), sync=sync),
        ),
        ("x.get_device()", _per_call(a.get_device)),
        ("x.dtype", _per_call(lambda: a.dtype)),
        ("x.is_contiguous()", _per_call(a.is_contiguous)),
        ("x.shape (unpacked)", _per_call(lambda: a.shape)),
        ("x.data_ptr()", _per_call(a.data_ptr)),
        ("getCurrentRawStream(dev)", _per_call(lambda: raw(0))),
        ("threading.get_ident()", _per_call(threading.get_ident)),
        ("empty lambda (loop overhead)", _per_call(lambda: None)),
    ]
    print("| step | µs per call |\n| --- | ---: |")
    for name, us in rows:
        print(f"| {name} | {us:.3f} |")
    if "--no-gemm" not in sys.argv[1:]:
        cluster_rows()


def cluster_rows() -> None:
    """Host µs per call of Hopper GEMMs with and without a cluster, fast and general path."""
    import torch

    import tirx

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from tirx.kernels.hopper import gemm as G

    cases = [
        ((128, 8192, 8192), dict(G.best_config(128, 8192, 8192))),
        ((128, 8192, 8192), dict(G.best_config(128, 8192, 8192), CLUSTER=2, SHARE="A")),
        ((4096, 4096, 4096), dict(G.best_config(4096, 4096, 4096))),
        ((4096, 4096, 4096), dict(G.best_config(4096, 4096, 4096), CLUSTER=2)),
    ]
    sync = torch.cuda.synchronize
    print(
        "\n| GEMM (fp16) | cluster | call µs | general path µs | GPU µs a launch |\n| --- | --- | ---: | ---: | ---: |"
    )
    for (M, N, K), cfg in cases:
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(N, K, device="cuda", dtype=torch.float16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        pa, pb = G.plans_for(M, N, K, "float16", cfg)
        k = tirx.compile(G.make_gemm(M, N, K, "float16", **cfg), target="cuda")
        args = (a, b, c, pa.param(a), pb.param(b), G.c_plan(M, N, "float16").param(c))
        for _ in range(3):
            k(*args)
        sync()
        call = _per_call(lambda k=k, args=args: k(*args), n=16, rounds=21, sync=sync)
        general = _per_call(lambda k=k, args=args: k._general(args, None), n=16, rounds=21, sync=sync)
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(20):
            k(*args)
        e1.record()
        sync()
        gpu = e0.elapsed_time(e1) / 20 * 1e3
        print(f"| {M}x{N}x{K} | {cfg.get('CLUSTER', 1)} | {call:.1f} | {general:.1f} | {gpu:.1f} |")


if __name__ == "__main__":
    main()
