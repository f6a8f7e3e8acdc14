"""Compile time of the Hopper kernels (issue #16: IR -> cubin <= 0.5 s cold, cache hit <= 1 ms).

    python tools/bench/bench_compile.py [--reps 3]

Per kernel (GEMM fp16/bf16 and its cluster / ping-pong variants, FP8 GEMM and attention when
their examples exist), in one process: *first* = the first ``tirx.compile`` of the process
(loads cuda-bindings and NVRTC, no cache); *cold* = IR -> cubin with the compile cache off in
a warm process (median of ``--reps``), split into tirx's lowering + CUDA generation and NVRTC;
*hit* = the memory-cache and disk-cache lookups of the same kernel. The script frontend
(``@T.jit`` specialization) is timed apart. No GPU is needed (NVRTC only).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)


def kernels() -> list[tuple[str, object]]:
    """(label, builder) of every Hopper kernel variant to time."""
    from examples.hopper import gemm as G

    out: list[tuple[str, object]] = [
        ("gemm fp16 4096^3", lambda: G.make_gemm(4096, 4096, 4096, "float16")),
        ("gemm bf16 4096^3", lambda: G.make_gemm(4096, 4096, 4096, "bfloat16")),
        ("gemm fp16 8192^3 cluster 2", lambda: G.make_gemm(8192, 8192, 8192, "float16", CLUSTER=2)),
        ("gemm bf16 8192^3 ping-pong", lambda: G.make_gemm(8192, 8192, 8192, "bfloat16", PINGPONG=True)),
    ]
    try:
        from examples.hopper import fp8_gemm as F

        out.append(("fp8 gemm 4096^3", lambda: F.make_fp8_gemm(4096, 4096, 4096)))
    except ImportError:
        pass
    try:
        from examples.hopper import attention as A

        out.append(("attention d128", lambda: A.make_attention(4, 16, 4096, 128)))
        out.append(("attention d64 causal", lambda: A.make_attention(4, 16, 4096, 64, causal=True)))
    except ImportError:
        pass
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    os.environ["TIRX_CACHE_DIR"] = tempfile.mkdtemp(prefix="tirx_bench_compile_")
    import tirx
    from tirx import target as TG
    from tirx.runtime import cache as C
    from tirx.runtime import nvrtc

    print(
        f"# compile times, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, NVRTC {nvrtc.nvrtc_version()}"
    )
    print("| kernel | frontend ms | first ms | cold ms (lower + NVRTC) | memory hit ms | disk hit ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    first_done = False
    for label, make in kernels():
        t = time.perf_counter()
        f = make()
        fe = (time.perf_counter() - t) * 1e3
        first = float("nan")
        if not first_done:
            t = time.perf_counter()
            tirx.compile(f, target="cuda -arch=sm_90a", cache=False)
            first = (time.perf_counter() - t) * 1e3
            first_done = True
        cold, low, nv = [], [], []
        for _ in range(a.reps):
            t = time.perf_counter()
            _f2, src = TG._lower(f, True, True, True)
            t1 = time.perf_counter()
            nvrtc.compile_source(src.text, "sm_90a")
            t2 = time.perf_counter()
            tirx.compile(f, target="cuda -arch=sm_90a", cache=False)
            t3 = time.perf_counter()
            low.append((t1 - t) * 1e3)
            nv.append((t2 - t1) * 1e3)
            cold.append((t3 - t2) * 1e3)
        tirx.compile(f, target="cuda -arch=sm_90a")  # fills both caches
        t = time.perf_counter()
        tirx.compile(f, target="cuda -arch=sm_90a")
        mem = (time.perf_counter() - t) * 1e3
        C.clear_memory()
        t = time.perf_counter()
        tirx.compile(f, target="cuda -arch=sm_90a")
        disk = (time.perf_counter() - t) * 1e3
        med = statistics.median
        print(
            f"| {label} | {fe:.0f} | {first:.0f} | {med(cold):.0f} ({med(low):.0f} + {med(nv):.0f}) | "
            f"{mem:.2f} | {disk:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
