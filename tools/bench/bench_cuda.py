"""CUDA backend benchmark (run on a GPU machine; prints ratios against the peer).

1. Bandwidth: the seed's fp16 add on 2^31 elements (int64 indices; and the 16-byte
   access variant) against a device-to-device copy of the same bytes and torch.add.
   CUDA events around each launch, warm-up, median of the timed runs (tirx.testing.do_bench).
2. Host cost per launch, including argument checks: a tirx kernel call on a small
   tensor vs torch's smallest op and a raw ``cuLaunchKernel`` of the same cubin (through
   cuda-bindings, and through ctypes as ``cuLaunchKernel``/``cuLaunchKernelEx``); the
   variants are timed round-robin in bursts of 256 launches (below the driver's queue
   depth, so the GPU's own rate never throttles the host), median over 201 bursts.
3. Compile time: IR -> cubin for the seed kernel in a warm process (no cache), and a
   cache hit.

``python tools/bench/bench_cuda.py [--json out.json] [--quick] [--only launch|bandwidth|compile]``
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _ex(stem: str):
    spec = importlib.util.spec_from_file_location(
        f"bench_{stem}", os.path.join(ROOT, "examples", "kernels", stem + ".py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _events_median(fn, warmup: int, reps: int) -> float:
    """Median seconds of ``fn()``: CUDA events around each launch, one launch at a time,
    after ``warmup`` launches (``tirx.testing.do_bench``; no L2 flush)."""
    from tirx.testing import do_bench

    ms = do_bench(fn, n_warmup=warmup, n_repeat=reps, flush_l2=False, sync_each=True, device="cuda")
    return ms / 1e3


def bench_bandwidth(log2n: int, reps: int) -> dict:
    import torch

    import tirx
    from tirx.script import tirx as T

    ex = _ex("elementwise_add")
    n = 1 << log2n
    nbytes = 2 * n * 2  # read A, write B (fp16)
    a = torch.randn(n, device="cuda", dtype=torch.float16)
    b = torch.empty_like(a)
    # the guide's kernel exactly (int32 n, so 2^31 - 1 elements), its int64 form on 2^31, both
    # as tirx.compile makes them (VectorizeThreads) and as written; the hand-written 16-byte add
    guide = tirx.compile(ex.make_add(T.float16, 2, block=128), target="cuda")
    seed_src = ex.make_add(T.float16, 2, block=256, index_dtype="int64")
    seed = tirx.compile(seed_src, target="cuda")
    as_written = tirx.compile(seed_src, target="cuda", vectorize=False)
    vec = tirx.compile(ex.make_add_vec(T.float16, 2, block=256, vec=8), target="cuda")
    m = min(n, (1 << 31) - 1)
    a1, b1 = a[:m], b[:m]
    runs = {
        "guide_i32": lambda: guide(a1, b1),
        "seed": lambda: seed(a, b),
        "as_written": lambda: as_written(a, b),
        "vec16B": lambda: vec(a, b),
    }
    res = {"n": n, "bytes": nbytes, "guide_n": m, "guide_source_vectorized": "tx_lane0" in guide.source}
    # correctness on this data (poisoned output first)
    for name, fn in runs.items():
        b.fill_(float("nan"))
        fn()
        torch.cuda.synchronize()
        k = m if name == "guide_i32" else n
        res[f"{name}_correct"] = bool(torch.equal(b[:k], a[:k] + 2))
    times = {"copy": _events_median(lambda: b.copy_(a), 3, reps)}
    times["torch_add"] = _events_median(lambda: torch.add(a, 2, out=b), 3, reps)
    for name, fn in runs.items():
        times[name] = _events_median(fn, 3, reps)
    # the copy again, to see the spread between identical runs
    times["copy_again"] = _events_median(lambda: b.copy_(a), 3, reps)
    best_copy = min(times["copy"], times["copy_again"])
    for k, t in times.items():
        nb = 2 * m * 2 if k == "guide_i32" else nbytes
        res[f"{k}_ms"] = t * 1e3
        res[f"{k}_TBps"] = nb / t / 1e12
        res[f"{k}_vs_copy"] = (nb / t) / (nbytes / best_copy)
    return res


def bench_launch(calls: int, rounds: int) -> dict:
    import ctypes
    import struct

    import torch

    import tirx
    from tirx.runtime import driver as drv
    from tirx.script import tirx as T

    ex = _ex("elementwise_add")
    k = tirx.compile(ex.make_add(T.float16, 2, block=128), target="cuda", launcher="bindings")
    kc = tirx.compile(ex.make_add(T.float16, 2, block=128), target="cuda", launcher="ctypes")
    a = torch.randn(1024, device="cuda", dtype=torch.float16)
    b = torch.empty_like(a)
    k(a, b)
    kc(a, b)
    torch.cuda.synchronize()

    def one_round(fn) -> float:
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        dt = (time.perf_counter() - t) / calls  # host time only: the sync below is not timed
        torch.cuda.synchronize()
        return dt

    # the raw peers launch the kernel as written (3 parameters, grid 8); tirx's calls launch
    # what tirx.compile makes of it (VectorizeThreads: one more, host-computed, parameter)
    plain = tirx.compile(ex.make_add(T.float16, 2, block=128), target="cuda", vectorize=False)
    plain(a, b)
    d = drv.driver()
    fn = plain._fns[a.get_device()]
    params = (ctypes.c_void_p * 3)()
    vals = (ctypes.c_uint64(a.data_ptr()), ctypes.c_uint64(b.data_ptr()), ctypes.c_int(1024))
    for i, v in enumerate(vals):
        params[i] = ctypes.addressof(v)
    paddr = ctypes.addressof(params)
    hs = torch.cuda.current_stream().cuda_stream
    stream = d.CUstream(hs)

    def raw():
        d.cuLaunchKernel(fn, 8, 1, 1, 128, 1, 1, 0, stream, paddr, 0)

    # the same launch through libcuda and ctypes: cuLaunchKernel with argtypes (eleven conversions
    # per call) and cuLaunchKernelEx with prebuilt ctypes arguments (what launcher="ctypes" does)
    from tirx.runtime import kernel as K

    ct = K._ctypes_launch()
    ctx = K._ctypes_launch_ex()
    fni = int(fn)

    def raw_ctypes():
        ct(fni, 8, 1, 1, 128, 1, 1, 0, hs, paddr, None)

    cfg = (ctypes.c_char * 64)()

    struct.pack_into("=7I4xQ", cfg, 0, 8, 1, 1, 128, 1, 1, 0, hs)
    cfgp, fnp, pp = ctypes.c_void_p(ctypes.addressof(cfg)), ctypes.c_void_p(fni), ctypes.c_void_p(paddr)

    def raw_ctypes_ex():
        ctx(cfgp, fnp, pp, None)

    # the raw launch as a hand-written caller does it for tensors it gets each call: their
    # addresses read and packed, then cuLaunchKernel (no checks)
    pbuf = (ctypes.c_char * 24)()
    rparams = (ctypes.c_void_p * 3)(*[ctypes.addressof(pbuf) + o for o in (0, 8, 16)])
    rpaddr = ctypes.addressof(rparams)
    rpack = struct.Struct("=QQi").pack_into

    def raw_repacked():
        rpack(pbuf, 0, a.data_ptr(), b.data_ptr(), 1024)
        d.cuLaunchKernel(fn, 8, 1, 1, 128, 1, 1, 0, stream, rpaddr, 0)

    # tirx's prepared launch: the arguments checked once (Kernel.prepare), then stream + launch
    pk = k.prepare(a, b)

    res = {}
    variants = [
        ("tirx_kernel_call", lambda: k(a, b)),
        ("torch_add_out", lambda: torch.add(a, 2, out=b)),
        ("torch_add_", lambda: b.add_(1)),
        ("raw_cuLaunchKernel", raw),
        ("raw_ctypes_cuLaunchKernel", raw_ctypes),
        ("raw_ctypes_cuLaunchKernelEx", raw_ctypes_ex),
        ("tirx_kernel_call_again", lambda: k(a, b)),
        ("tirx_kernel_call_ctypes", lambda: kc(a, b)),
        ("tirx_general_path", lambda: k._general((a, b), None)),
        ("tirx_kernel_call_ctypes_again", lambda: kc(a, b)),
        ("tirx_prepared", pk),
        ("raw_cuLaunchKernel_repacked", raw_repacked),
        ("tirx_prepared_again", pk),
        ("torch_add__again", lambda: b.add_(1)),
    ]
    variants = [
        (n, f)
        for n, f in variants
        if not ((f is raw_ctypes and ct is None) or (f is raw_ctypes_ex and ctx is None))
    ]
    # round-robin: every round times every variant once, so a drift of the host's speed during the
    # run (seen: torch's own op 10.4 -> 6.5 us within one run) hits all variants alike
    times: dict = {n: [] for n, _f in variants}
    for _ in range(rounds):
        for name, f in variants:
            times[name].append(one_round(f))
    for name, ts in times.items():
        res[f"{name}_us_min"] = min(ts) * 1e6
        res[f"{name}_us_median"] = statistics.median(ts) * 1e6
    for name, kk in (("bindings", k), ("ctypes", kc)):
        b.fill_(float("nan"))
        kk(a, b)
        torch.cuda.synchronize()
        res[f"correct_after_{name}"] = bool(torch.equal(b, a + 2))
        res[f"fast_path_{name}"] = type(kk).__name__ != "Kernel"
    res["torch_smallest_us"] = min(
        res["torch_add_out_us_median"], res["torch_add__us_median"], res["torch_add__again_us_median"]
    )
    res["tirx_us"] = min(res["tirx_kernel_call_us_median"], res["tirx_kernel_call_again_us_median"])
    res["tirx_ctypes_us"] = min(
        res["tirx_kernel_call_ctypes_us_median"], res["tirx_kernel_call_ctypes_again_us_median"]
    )
    res["tirx_prepared_us"] = min(res["tirx_prepared_us_median"], res["tirx_prepared_again_us_median"])
    b.fill_(float("nan"))
    pk()
    torch.cuda.synchronize()
    res["correct_after_prepared"] = bool(torch.equal(b, a + 2))
    raw_us = res["raw_cuLaunchKernel_us_median"]
    res["gap_call_us"] = res["tirx_us"] - raw_us
    res["gap_ctypes_call_vs_ctypes_ex_us"] = res["tirx_ctypes_us"] - res.get(
        "raw_ctypes_cuLaunchKernelEx_us_median", float("nan")
    )
    res["gap_prepared_us"] = res["tirx_prepared_us"] - raw_us
    res["tirx_vs_torch"] = res["torch_smallest_us"] / res["tirx_us"]
    res["tirx_ctypes_vs_torch"] = res["torch_smallest_us"] / res["tirx_ctypes_us"]
    return res


def bench_compile(reps: int) -> dict:
    import tempfile

    import tirx
    from tirx.runtime import cache
    from tirx.script import tirx as T

    os.environ["TIRX_CACHE_DIR"] = tempfile.mkdtemp(prefix="tirx-bench-cache-")
    ex = _ex("elementwise_add")
    f = ex.make_add(T.float16, 2, block=128)
    t0 = time.perf_counter()
    tirx.compile(f, target="cuda", cache=False)
    first = time.perf_counter() - t0
    warm = []
    from tirx import pipeline

    for _ in range(reps):
        pipeline._LOWERED.clear()  # the whole path: passes, CUDA generation, NVRTC
        t = time.perf_counter()
        tirx.compile(f, target="cuda", cache=False)
        warm.append(time.perf_counter() - t)
    tirx.compile(f, target="cuda")
    hits = []
    for _ in range(reps):
        t = time.perf_counter()
        k = tirx.compile(f, target="cuda")
        hits.append(time.perf_counter() - t)
    assert k.module.cache_hit == "hit"
    cache.clear_memory()
    t = time.perf_counter()
    tirx.compile(f, target="cuda")
    disk = time.perf_counter() - t
    return {
        "first_compile_ms": first * 1e3,
        "warm_compile_ms_median": statistics.median(warm) * 1e3,
        "warm_compile_ms_min": min(warm) * 1e3,
        "cache_hit_ms_median": statistics.median(hits) * 1e3,
        "disk_cache_hit_ms": disk * 1e3,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--log2n", type=int, default=31)
    ap.add_argument(
        "--only", choices=("all", "launch", "bandwidth", "compile"), default="all", help="run one part only"
    )
    args = ap.parse_args(argv)
    from tirx.runtime import driver as drv

    ok, why = drv.probe()
    out: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    if args.only in ("all", "compile"):
        out["compile"] = bench_compile(5 if args.quick else 20)
        print("compile:", json.dumps(out["compile"], indent=1))
    if args.only == "compile":
        pass
    elif not ok:
        print(f"no GPU ({why}): bandwidth and launch benchmarks skipped")
    elif args.only in ("all", "launch"):
        import torch

        out["device"] = torch.cuda.get_device_name()
        # bursts of 256 launches (fewer than the driver's launch queue holds, so the host never
        # waits for the GPU to drain it; 20,000 back-to-back launches measured the GPU's rate of tiny
        # kernels for every variant), synchronized between bursts, variants round-robin
        out["launch"] = bench_launch(256, 21 if args.quick else 201)
        print("launch:", json.dumps(out["launch"], indent=1))
        la = out["launch"]
        print(
            f"| host cost per launch | {la['tirx_us']:.2f} us (bindings), {la['tirx_ctypes_us']:.2f} us (ctypes) "
            f"| torch {la['torch_smallest_us']:.2f} us, raw cuLaunchKernel {la['raw_cuLaunchKernel_us_median']:.2f} us "
            f"(ctypes {la.get('raw_ctypes_cuLaunchKernel_us_median', float('nan')):.2f} us, "
            f"cuLaunchKernelEx {la.get('raw_ctypes_cuLaunchKernelEx_us_median', float('nan')):.2f} us) | goal <= 6 us |"
        )
        print(
            f"| gap to the raw launch (issue #16: <= 1 us) | call {la['gap_call_us']:.2f} us (bindings), "
            f"{la['gap_ctypes_call_vs_ctypes_ex_us']:.2f} us (ctypes vs raw cuLaunchKernelEx); prepared "
            f"{la['tirx_prepared_us']:.2f} us, gap {la['gap_prepared_us']:.2f} us | raw with per-call "
            f"data_ptr + pack {la['raw_cuLaunchKernel_repacked_us_median']:.2f} us |"
        )
    if ok and args.only in ("all", "bandwidth"):
        out["bandwidth"] = bench_bandwidth(24 if args.quick else args.log2n, 10 if args.quick else 30)
        print("bandwidth:", json.dumps(out["bandwidth"], indent=1))
    if "bandwidth" in out:
        bw = out["bandwidth"]
        copy = max(bw["copy_TBps"], bw["copy_again_TBps"])
        print("\n| fp16 add | tirx | peer | ratio / goal | correct |")
        print("| --- | --- | --- | --- | --- |")
        for key, what in (
            ("guide_i32", "the guide's make_add (int32 n = 2^31 - 1, block 128)"),
            ("seed", "int64 seed kernel, block 256"),
            ("as_written", "int64 seed kernel, vectorize=False"),
            ("vec16B", "hand-written 16-byte accesses"),
            ("torch_add", "torch.add"),
        ):
            print(
                f"| 2^{args.log2n}: {what} | {bw[key + '_TBps']:.2f} TB/s | copy {copy:.2f} TB/s "
                f"| {bw[key + '_vs_copy']:.1%} of copy (goal >= 95%) | {bw.get(key + '_correct', '-')} |"
            )
    if {"launch", "compile"} <= out.keys():
        la, co = out["launch"], out["compile"]
        print(
            f"| host cost per launch | {la['tirx_us']:.2f} us (bindings), {la['tirx_ctypes_us']:.2f} us (ctypes) "
            f"| torch {la['torch_smallest_us']:.2f} us, raw cuLaunchKernel {la['raw_cuLaunchKernel_us_median']:.2f} us "
            f"| goal <= 6 us |"
        )
        print(
            f"| IR -> cubin, warm | {co['warm_compile_ms_median']:.1f} ms | | goal <= 60 ms |\n"
            f"| cache hit | {co['cache_hit_ms_median']:.3f} ms | | goal <= 1 ms |"
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
