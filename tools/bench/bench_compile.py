"""Compile time of the Hopper kernels (issue #16: IR -> cubin <= 0.5 s cold, cache hit <= 1 ms).

    python tools/bench/bench_compile.py [--reps 3] [--stat min] [--only TEXT] [--baseline FILE]
    python tools/bench/bench_compile.py --fresh [--reps 3] [--only TEXT]

Per kernel (GEMM fp16/bf16 and its cluster / ping-pong variants, FP8 GEMM and attention when
their examples exist), in one process: *first* = the first ``tirx.compile`` of the process
(loads cuda-bindings and NVRTC, no cache); *cold* = IR -> cubin with the compile cache off in
a warm process (median of ``--reps``, or the minimum with ``--stat min`` on a shared machine;
each compile's source carries a declaration no other has: NVRTC 13 answers an identical text,
comments aside, from a cache of its own), split into tirx's lowering + CUDA generation (its
per-function cache cleared), NVRTC's front
end and NVVM (CUDA C++ -> PTX, timed as a ``compute_90a`` compile) and ptxas (PTX -> cubin: the
``sm_90a`` compile minus the PTX-only one); *hit* = the memory-cache and disk-cache lookups of
the same kernel. The script frontend (``@T.jit`` specialization) is timed apart. No GPU is
needed (NVRTC only). ``--baseline FILE``: the attention ``best_config`` kernels of another
version of tirx/kernels/hopper/attention.py too (labelled "old"), for a before / after in one run.
``--fresh``: each kernel in ``--reps`` fresh processes (minimum; the kernels round robin, each
round one process a kernel; wall and CPU time): the toolchain's first compile
of a tiny kernel, then the kernel's lowering + NVRTC on code no compile has seen, twice, and the
identical source again (a cache inside NVRTC would answer that one).
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


def kernels(baseline: str | None = None) -> list[tuple[str, object]]:
    """(label, builder) of every Hopper kernel variant to time (``baseline``: see --baseline)."""
    from tirx.kernels.hopper import gemm as G

    out: list[tuple[str, object]] = [
        ("gemm fp16 4096^3", lambda: G.make_gemm(4096, 4096, 4096, "float16")),
        ("gemm bf16 4096^3", lambda: G.make_gemm(4096, 4096, 4096, "bfloat16")),
        ("gemm fp16 8192^3 cluster 2", lambda: G.make_gemm(8192, 8192, 8192, "float16", CLUSTER=2)),
        # (ping-pong with the default 128x256 tile, 256 accumulators a thread, spilled and took
        # twice as long to compile; gemm_tn now refuses it)
        (
            "gemm bf16 8192^3 ping-pong 128x128",  # the ping-pong tiles the H200 benchmark runs
            lambda: G.make_gemm(
                8192, 8192, 8192, "bfloat16", BM=128, BN=128, STAGES=5, GROUP_M=8, PINGPONG=True
            ),
        ),
    ]
    out.append(
        (
            "gemm bf16 8192^3 best",
            lambda: G.make_gemm(8192, 8192, 8192, "bfloat16", **G.best_config(8192, 8192, 8192, "bfloat16")),
        )
    )
    from tirx.kernels.hopper import matmul as MA

    out.append(("matmul any-shape bf16 128x256", lambda: MA.make("bfloat16")))
    out.append(("matmul any-shape e4m3 128x256", lambda: MA.make("float8_e4m3fn")))
    try:
        from tirx.kernels.hopper import fp8_gemm as F

        out.append(("fp8 gemm 4096^3", lambda: F.make_fp8_gemm(4096, 4096, 4096)))
    except ImportError:
        pass
    try:
        from tirx.kernels.hopper import attention as A

        out.append(("attention d128", lambda: A.make_attention(4, 16, 4096, 128)))
        out.append(("attention d64 causal", lambda: A.make_attention(4, 16, 4096, 64, causal=True)))
        if hasattr(A, "best_config"):  # the schedules the H200 benchmark runs (ping-pong + overlap)
            for d, causal in ((128, False), (128, True), (64, False), (64, True), (256, False), (256, True)):
                label = f"attention d{d}{' causal' if causal else ''} best"
                out.append(
                    (label, lambda d=d, c=causal: A.make_attention(4, 16, 4096, d, c, **A.best_config(d, c)))
                )
                out.append(  # the same schedule without the peeled step (ONE_LOOP)
                    (
                        label + " one-loop",
                        lambda d=d, c=causal: A.make_attention(
                            4, 16, 4096, d, c, **A.best_config(d, c), ONE_LOOP=True
                        ),
                    )
                )
        # the causal head-dim-128 schedules with one CTA a tile (longest first: by the LPT tile
        # order or by the grid's) instead of the dynamic persistent one: less to compile, a few
        # per cent slower (docs/benchmarks.md)
        for sched in ("lpt", "grid"):
            out.append(
                (
                    f"attention d128 causal {sched}",
                    lambda s=sched: A.make_attention(
                        4, 16, 4096, 128, True, **{**A.best_config(128, True), "SCHED": s}
                    ),
                )
            )
    except ImportError:
        pass
    if baseline:
        import baseline as BL  # tools/bench/baseline.py (this script's folder)

        B = BL.load(baseline)
        for d, causal in ((128, False), (128, True), (64, False), (64, True)):
            label = f"attention d{d}{' causal' if causal else ''} best (old)"
            out.append(
                (label, lambda d=d, c=causal: B.make_attention(4, 16, 4096, d, c, **B.best_config(d, c)))
            )
    return out


def _ptx_only_ms(nvrtc, text: str) -> float:
    """NVRTC's front end + NVVM alone: the same source compiled for ``compute_90a`` (PTX, no
    ptxas), through the same bindings as ``nvrtc.compile_source``."""
    nv = nvrtc._nvrtc()
    opts = [o.encode() for o in nvrtc.base_options("compute_90a")]
    _err, prog = nv.nvrtcCreateProgram(text.encode(), b"tirx_kernel.cu", 0, [], [])
    try:
        t = time.perf_counter()
        (res,) = nv.nvrtcCompileProgram(prog, len(opts), opts)
        dt = (time.perf_counter() - t) * 1e3
        if int(res) != 0:
            raise RuntimeError("the compute_90a (PTX-only) compile failed")
    finally:
        nv.nvrtcDestroyProgram(prog)
    return dt


def _unique(text: str) -> str:
    """``text`` with a declaration no other compile has (a code change, not a comment: the
    device machine's NVRTC answered sources differing only in a comment from a cache)."""
    return f"{text}\n__device__ int tirx_bench_compile_{os.getpid()}_{time.time_ns()};\n"


def cold_once(TG, nvrtc, f) -> tuple[float, float, float, str, float]:
    """One cold IR -> cubin of ``f``: (lowering ms, NVRTC ms, the PTX-only part ms, the source
    compiled, CPU ms of lowering + NVRTC: what a shared VM's stolen cycles do not inflate).
    tirx's per-function lowering cache is cleared first."""
    from tirx import pipeline

    pipeline._LOWERED.clear()
    c = time.process_time()
    t = time.perf_counter()
    _f2, src = TG._lower(f, True, True, True)
    t1 = time.perf_counter()
    text = _unique(src.text)
    nvrtc.compile_source(text, "sm_90a")
    t2 = time.perf_counter()
    cpu = (time.process_time() - c) * 1e3
    return (t1 - t) * 1e3, (t2 - t1) * 1e3, _ptx_only_ms(nvrtc, _unique(src.text)), text, cpu


def child(label: str, baseline: str | None = None) -> None:
    """One kernel in a fresh process: the toolchain's first compile (a tiny kernel), then the
    kernel's lowering and NVRTC compiles of code no compile has seen (twice), the PTX-only
    part, and the identical source again (what a cache inside NVRTC would answer)."""
    import json

    os.environ["TIRX_CACHE_DIR"] = tempfile.mkdtemp(prefix="tirx_bench_compile_")
    t = time.perf_counter()
    import tirx
    from tirx import target as TG
    from tirx.runtime import nvrtc
    from tirx.script import tirx as T

    out: dict = {"import_ms": (time.perf_counter() - t) * 1e3}
    from examples.kernels.elementwise_add import make_add

    t = time.perf_counter()
    tirx.compile(make_add(T.float16, 2, block=128), target="cuda -arch=sm_90a", cache=False)
    out["toolchain_ms"] = (time.perf_counter() - t) * 1e3  # NVRTC loaded, headers parsed once
    make = dict(kernels(baseline))[label]
    t = time.perf_counter()
    f = make()
    out["frontend_ms"] = (time.perf_counter() - t) * 1e3
    out["lower_ms"], out["nvrtc_ms"], out["ptx_ms"], text, out["cpu_ms"] = cold_once(TG, nvrtc, f)
    out["nvrtc_again_ms"] = cold_once(TG, nvrtc, f)[1]
    t = time.perf_counter()
    nvrtc.compile_source(text, "sm_90a")
    out["same_source_ms"] = (time.perf_counter() - t) * 1e3
    print("CHILD " + json.dumps(out), flush=True)


def fresh(only: str, reps: int, baseline: str | None = None) -> None:
    """``--fresh``: every kernel in fresh processes (``child``), the minimum over ``reps``
    (``baseline``: the old attention kernels too, as without ``--fresh``)."""
    import json
    import subprocess

    print(
        f"# fresh-process compile times, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} "
        f"(min of {reps} processes a kernel)"
    )
    print(
        "| kernel | import ms | toolchain (tiny kernel) ms | cold = lower + NVRTC ms | cold, CPU ms "
        "| NVRTC = PTX + ptxas ms | again, new code ms | same source again ms |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    labels = [label for label, _make in kernels(baseline) if only in label]
    runs: dict[str, list] = {label: [] for label in labels}
    failed: set[str] = set()
    for _ in range(reps):  # round robin: a slow spell of the machine hits every kernel alike
        for label in labels:
            if label in failed:
                continue
            r = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--child", label]
                + (["--baseline", os.path.abspath(baseline)] if baseline else []),
                capture_output=True,
                text=True,
            )
            line = [x for x in r.stdout.splitlines() if x.startswith("CHILD ")]
            if r.returncode or not line:
                print(f"| {label} | failed: {r.stderr.strip()[-300:]} |")
                failed.add(label)
                continue
            runs[label].append(json.loads(line[0][6:]))
    for label in labels:
        if label in failed or not runs[label]:
            continue
        m = {k: min(x[k] for x in runs[label]) for k in runs[label][0]}
        print(
            f"| {label} | {m['import_ms']:.0f} | {m['toolchain_ms']:.0f} | "
            f"{m['lower_ms'] + m['nvrtc_ms']:.0f} = {m['lower_ms']:.0f} + {m['nvrtc_ms']:.0f} | "
            f"{m['cpu_ms']:.0f} | {m['nvrtc_ms']:.0f} = {m['ptx_ms']:.0f} + {m['nvrtc_ms'] - m['ptx_ms']:.0f} | "
            f"{m['nvrtc_again_ms']:.0f} | {m['same_source_ms']:.0f} |",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--stat", choices=("median", "min"), default="median", help="of the --reps cold times")
    ap.add_argument("--only", default="", help="only the kernels whose label contains this text")
    ap.add_argument("--baseline", default=None, help="another attention.py: its best kernels too")
    ap.add_argument("--fresh", action="store_true", help="each kernel in fresh processes (see child)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child is not None:
        return child(a.child, a.baseline)
    if a.fresh:
        return fresh(a.only, a.reps, a.baseline)
    os.environ["TIRX_CACHE_DIR"] = tempfile.mkdtemp(prefix="tirx_bench_compile_")
    import tirx
    from tirx import target as TG
    from tirx.runtime import cache as C
    from tirx.runtime import nvrtc

    print(
        f"# compile times, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, NVRTC {nvrtc.nvrtc_version()}"
    )
    print(
        "| kernel | frontend ms | first ms | cold ms (lower + NVRTC) | NVRTC = PTX + ptxas ms "
        "| memory hit ms | disk hit ms |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    first_done = False
    for label, make in kernels(a.baseline):
        if a.only not in label:
            continue
        t = time.perf_counter()
        f = make()
        fe = (time.perf_counter() - t) * 1e3
        first = float("nan")
        if not first_done:
            t = time.perf_counter()
            tirx.compile(f, target="cuda -arch=sm_90a", cache=False)
            first = (time.perf_counter() - t) * 1e3
            first_done = True
        cold, low, nv, ptx = [], [], [], []
        for _rep in range(a.reps):
            lo, nvr, px, _text, _cpu = cold_once(TG, nvrtc, f)
            low.append(lo)
            nv.append(nvr)
            ptx.append(px)
            cold.append(lo + nvr)
        tirx.compile(f, target="cuda -arch=sm_90a")  # fills both caches
        t = time.perf_counter()
        tirx.compile(f, target="cuda -arch=sm_90a")
        mem = (time.perf_counter() - t) * 1e3
        C.clear_memory()
        t = time.perf_counter()
        tirx.compile(f, target="cuda -arch=sm_90a")
        disk = (time.perf_counter() - t) * 1e3
        med = min if a.stat == "min" else statistics.median
        print(
            f"| {label} | {fe:.0f} | {first:.0f} | {med(cold):.0f} ({med(low):.0f} + {med(nv):.0f}) | "
            f"{med(nv):.0f} = {med(ptx):.0f} + {med(nv) - med(ptx):.0f} | {mem:.2f} | {disk:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
