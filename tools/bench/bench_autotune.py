"""Compile phase of ``@T.autotune`` (issue #32): N candidate configs of the Hopper GEMM
(``tirx.kernels.hopper.gemm.gemm_tn``, 4096^3 fp16, tiles and pipeline depths as a tuning
would try them) compiled for CUDA (``sm_90a`` without a GPU: NVRTC only), in the process
(``--workers 1``) and in worker processes.

    python tools/bench/bench_autotune.py [--n 8] [--workers 1,2,4] [--reps 3] [--warm]

Each measurement is a fresh process with an empty compile cache directory (no disk-cache hit,
and NVRTC's own in-process cache is empty), timing ``tirx.runtime.autotune.build_candidates``:
everything a tuning pays before it times a candidate (specialize, lower, NVRTC; with workers,
the pool's start and this process's lowering of each finished candidate, then a cache hit).
``--warm``: the process first compiles an unrelated small kernel (cuda-bindings and NVRTC
loaded, as in a program that already ran a kernel; forked workers inherit them). Prints the
median of ``--reps`` per worker count and the speedup over one worker.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (BN, STAGES) pairs that fit 227 KiB of shared memory with BM = 128, times two GROUP_M values
_TILES = ((256, 4), (128, 6), (64, 8), (256, 3), (128, 5), (64, 6), (128, 4), (64, 4))


def configs(n: int) -> list[dict]:
    out = [dict(BN=bn, STAGES=st, GROUP_M=g) for g in (8, 16) for bn, st in _TILES]
    if n > len(out):
        raise SystemExit(f"--n is at most {len(out)}")
    return out[:n]


def child(n: int, workers: int, warm: bool) -> dict:
    t0 = time.perf_counter()
    sys.path.insert(0, ROOT)
    import tirx
    from tirx.kernels.hopper import gemm as G
    from tirx.runtime import autotune as A

    t1 = time.perf_counter()
    if warm:
        from tirx.script import tirx as T

        @T.function
        def tiny(X: T.Tensor((4,), T.float32)):
            T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=4))
            X[T.cuda.thread_idx("x")] = 1.0

        tirx.compile(tiny, "cuda -arch=sm_90a")
    values = [dict(M=4096, N=4096, K=4096, DT="float16", TC=None, **c) for c in configs(n)]
    t2 = time.perf_counter()
    built = A.build_candidates(G.gemm_tn, values, "cuda", workers=workers)
    t3 = time.perf_counter()
    return {
        "workers": workers,
        "import_s": t1 - t0,
        "build_s": t3 - t2,
        "hits": sum(1 for _f, k, _w in built if k is not None and k.module.cache_hit),
        "failed": [w for _f, _k, w in built if w is not None],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=8, help="candidates (at most 16)")
    ap.add_argument(
        "--workers", default=None, help="comma-separated worker counts (default: 1 and the CPU count)"
    )
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warm", action="store_true", help="NVRTC loaded before the compile phase")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child is not None:
        print(json.dumps(child(a.n, a.child, a.warm)))
        return
    cpus = os.cpu_count() or 1
    counts = [int(x) for x in a.workers.split(",")] if a.workers else sorted({1, cpus})
    print(f"{a.n} gemm_tn candidates (4096^3 fp16, sm_90a), {cpus} CPUs, median of {a.reps} fresh processes"
          f"{', NVRTC warm' if a.warm else ''}")  # fmt: skip
    results: dict[int, list[float]] = {w: [] for w in counts}
    for _ in range(a.reps):
        for w in counts:  # round robin: a slow spell of the machine hits every count alike
            with tempfile.TemporaryDirectory() as d:
                env = dict(os.environ, TIRX_CACHE_DIR=d, PYTHONPATH=ROOT)
                cmd = [
                    sys.executable,
                    __file__,
                    "--child",
                    str(w),
                    "--n",
                    str(a.n),
                    *(["--warm"] if a.warm else []),
                ]
                r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
                if r.returncode != 0:
                    raise SystemExit(r.stderr[-3000:])
                got = json.loads(r.stdout.strip().splitlines()[-1])
                if got["failed"]:
                    raise SystemExit(f"candidates failed: {got['failed']}")
                if w > 1 and got["hits"] != a.n:
                    print(f"  note: {got['hits']}/{a.n} of this process's compiles were cache hits")
                results[w].append(got["build_s"])
    base = statistics.median(results[counts[0]]) if counts[0] == 1 else None
    print(f"{'workers':>8} {'compile s':>10} {'per cand. ms':>13} {'speedup':>8}   runs")
    for w in counts:
        med = statistics.median(results[w])
        sp = f"{base / med:8.2f}" if base else f"{'':>8}"
        runs = " ".join(f"{x:.2f}" for x in results[w])
        print(f"{w:>8} {med:>10.2f} {med / a.n * 1e3:>13.0f} {sp}   {runs}")


if __name__ == "__main__":
    main()
