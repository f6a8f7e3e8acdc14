# ruff: noqa: B023
# (the timing lambdas are run by bench() before the loop moves on)
"""Hopper kernels vs torch on the same GPU, in one run (METHOD.md timing).

    python tools/bench/bench_hopper.py [--out DIR] [--quick] [--only mem|gemm]

Prints, per kernel: correctness (relative L2 error against a float32/float64 reference on
fresh random data, outputs poisoned with NaN first), the median time over rotating input
sets (CUDA events around each launch, after warm-up), bandwidth as a fraction of the
device copy bandwidth measured in the same run, and the ratio to torch (softmax,
F.rms_norm, torch.add, torch.matmul / cuBLAS). With ``--out`` it writes the full log,
the GEMM cubins and, when ``cuobjdump`` is on PATH, their SASS with HGMMA / local-memory
counts.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

import torch  # noqa: E402
from sass_diff import disassembler  # noqa: E402

import tirx  # noqa: E402
from tirx.kernels.hopper import gemm as G  # noqa: E402
from tirx.kernels.hopper import memory as MB  # noqa: E402
from tirx.testing import do_bench  # noqa: E402

LOG: list[str] = []
ROWS: list[tuple] = []


def log(*a) -> None:
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.append(s)


def bench(fn, sets: int, warmup: int = 5, reps: int = 30) -> float:
    """Median ms of fn(i) with i rotating over ``sets`` input sets (warm-up from set 0, the
    timed runs from set 0 again); events per launch, launched back to back
    (``tirx.testing.do_bench``; no L2 flush: the rotating sets are the cold inputs)."""
    order = iter([i % sets for i in range(warmup)] + [i % sets for i in range(reps)])
    return do_bench(lambda: fn(next(order)), n_warmup=warmup, n_repeat=reps, flush_l2=False, device="cuda")


def rel(out, ref) -> float:
    out = out.double()
    ref = ref.double()
    if torch.isnan(out).any():
        return float("nan")
    return float((out - ref).norm() / ref.norm())


def copy_bw(nbytes: int = 2 << 30) -> float:
    src = [torch.empty(nbytes // 2, dtype=torch.float16, device="cuda").normal_() for _ in range(2)]
    dst = torch.empty_like(src[0])
    ms = bench(lambda i: dst.copy_(src[i]), 2, reps=20)
    bw = 2 * nbytes / (ms * 1e-3) / 1e12
    log(f"copy: {nbytes / 2**30:.0f} GiB d2d copy {ms:.3f} ms -> {bw:.3f} TB/s (read+write)")
    return bw


def mem_section(copy: float, quick: bool) -> None:
    # vector add
    n = (1 << 28) if not quick else (1 << 26)
    k = tirx.compile(MB.make_vector_add("float16"), target="cuda")
    sets = 2
    A = [torch.randn(n, device="cuda", dtype=torch.float16) for _ in range(sets)]
    B = [torch.randn(n, device="cuda", dtype=torch.float16) for _ in range(sets)]
    C = torch.full((n,), float("nan"), device="cuda", dtype=torch.float16)
    k(A[0], B[0], C)
    torch.cuda.synchronize()
    err = rel(C, A[0].float() + B[0].float())
    n_odd = n - 77
    C2 = torch.full((n_odd,), float("nan"), device="cuda", dtype=torch.float16)
    k(A[1][:n_odd], B[1][:n_odd], C2)
    err2 = rel(C2, A[1][:n_odd].float() + B[1][:n_odd].float())
    ms = bench(lambda i: k(A[i], B[i], C), sets)
    ms_t = bench(lambda i: torch.add(A[i], B[i], out=C), sets)
    by = 3 * n * 2
    bw = by / (ms * 1e-3) / 1e12
    log(
        f"vector_add f16 n={n}: err {err:.2e} (tail {err2:.2e}) {ms:.3f} ms {bw:.3f} TB/s = {bw / copy:.1%} of copy; torch {ms_t:.3f} ms -> x{ms_t / ms:.2f}"
    )
    ROWS.append(("vector_add f16", f"{n}", err, ms, bw / copy, ms_t / ms))
    # softmax / rmsnorm
    total = (1 << 27) if not quick else (1 << 25)
    for N, dt in ((4096, "float16"), (8192, "float16"), (4096, "bfloat16"), (8192, "bfloat16")):
        tdt = getattr(torch, dt)
        rows = total // N
        blk = MB.softmax_block(N, dt)
        X = [torch.randn(rows, N, device="cuda", dtype=tdt) * 3 for _ in range(sets)]
        W = torch.randn(N, device="cuda", dtype=tdt)
        Y = torch.full((rows, N), float("nan"), device="cuda", dtype=tdt)
        by = 2 * rows * N * 2
        # softmax
        ks = tirx.compile(MB.make_softmax(N, dt, blk), target="cuda")
        ks(X[0], Y)
        torch.cuda.synchronize()
        err = rel(Y, torch.softmax(X[0].double(), -1))
        ms = bench(lambda i: ks(X[i], Y), sets)
        ms_t = bench(lambda i: torch.softmax(X[i], -1), sets)
        bw = by / (ms * 1e-3) / 1e12
        log(
            f"softmax {dt} {rows}x{N} block {blk}: err {err:.2e} {ms:.3f} ms {bw:.3f} TB/s = {bw / copy:.1%} of copy; torch {ms_t:.3f} ms -> x{ms_t / ms:.2f}"
        )
        ROWS.append((f"softmax {dt}", f"{rows}x{N}", err, ms, bw / copy, ms_t / ms))
        # rmsnorm
        Y.fill_(float("nan"))
        kr = tirx.compile(MB.make_rmsnorm(N, dt, blk, 1e-6), target="cuda")
        kr(X[0], W, Y)
        torch.cuda.synchronize()
        xd = X[0].double()
        ref = xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6) * W.double()
        err = rel(Y, ref)
        ms = bench(lambda i: kr(X[i], W, Y), sets)
        rms = getattr(torch.nn.functional, "rms_norm", None)
        if rms is not None:
            ms_t = bench(lambda i: rms(X[i], (N,), W, 1e-6), sets)
            tname = "F.rms_norm"
        else:  # manual
            ms_t = bench(
                lambda i: X[i] * torch.rsqrt(X[i].float().pow(2).mean(-1, keepdim=True) + 1e-6).to(tdt) * W,
                sets,
            )
            tname = "manual"
        bw = by / (ms * 1e-3) / 1e12
        log(
            f"rmsnorm {dt} {rows}x{N} block {blk}: err {err:.2e} {ms:.3f} ms {bw:.3f} TB/s = {bw / copy:.1%} of copy; torch {tname} {ms_t:.3f} ms -> x{ms_t / ms:.2f}"
        )
        ROWS.append((f"rmsnorm {dt}", f"{rows}x{N}", err, ms, bw / copy, ms_t / ms))


GEMM_CONFIGS = [
    dict(BM=128, BN=256, STAGES=4, GROUP_M=8),
    dict(BM=128, BN=256, STAGES=4, GROUP_M=8, TMAP="global"),
    dict(BM=128, BN=256, STAGES=4, GROUP_M=8, CLUSTER=2),
    dict(BM=128, BN=256, STAGES=4, GROUP_M=16, CLUSTER=2),
    # TMA-store epilogue (C staged in shared memory, stored under the next tile's main loop)
    dict(BM=128, BN=256, STAGES=4, GROUP_M=8, EPI="tma"),
    dict(BM=128, BN=256, STAGES=4, GROUP_M=8, EPI="tma", CLUSTER=2),
    # ping-pong: each consumer warpgroup owns every other tile; main loops take turns
    dict(BM=128, BN=128, STAGES=6, GROUP_M=8, PINGPONG=True),
    dict(BM=128, BN=128, STAGES=5, GROUP_M=8, PINGPONG=True),
    dict(BM=64, BN=256, STAGES=5, GROUP_M=8, PINGPONG=True),
]


SASS_WORDS = ("HGMMA", "LDL", "STL", "UTMALDG", "SYNCS", "USETMAXREG")


def sass_check(k, name: str, out: str | None, words: tuple = SASS_WORDS) -> str:
    """The kernel's SASS (``cuobjdump -sass``, else ``nvdisasm`` from tirx's [cuda] extra) saved
    as ``OUT/<name>.sass``; returns the count of each of ``words`` and the distinct wgmma
    opcodes (``HGMMA.64x256x16.F32``, ...). Shared by bench_fp8.py and bench_attention.py."""
    if out is None:
        return "no --out"
    path = os.path.join(out, f"{name}.cubin")
    with open(path, "wb") as fh:
        fh.write(k.cubin)
    cmd = disassembler()
    if cmd is None:
        os.remove(path)
        return "no cuobjdump / nvdisasm"
    sass = subprocess.run([*cmd, path], capture_output=True, text=True).stdout
    with open(os.path.join(out, f"{name}.sass"), "w") as fh:
        fh.write(sass)
    os.remove(path)
    gmma = sorted({t for ln in sass.splitlines() for t in ln.split() if "GMMA." in t})
    return " ".join(f"{w}={sass.count(w)}" for w in words) + (f" {gmma}" if gmma else "")


#: non-square GEMMs of issue #16 (goal >= 95 % of torch.matmul): ``gemm.best_config`` first,
#: then the other tile sets tried for the shape
NONSQUARE = [
    ((8192, 1024, 8192), [dict(BM=128, BN=128, STAGES=4, GROUP_M=8, EPI="tma")]),
    ((128, 8192, 8192), [dict(BM=128, BN=128, STAGES=6, GROUP_M=1, EPI="tma"),
                         dict(BM=128, BN=256, STAGES=4, GROUP_M=1, EPI="tma"),
                         dict(BM=128, BN=32, STAGES=10, GROUP_M=1, EPI="direct"),
                         dict(BM=128, BN=64, STAGES=6, GROUP_M=1, EPI="tma"),
                         dict(BM=128, BN=64, STAGES=9, GROUP_M=1, EPI="direct"),
                         dict(BM=128, BN=64, STAGES=8, GROUP_M=1, EPI="tma", CLUSTER=2, SHARE="A"),
                         dict(BM=128, BN=128, STAGES=6, GROUP_M=1, EPI="tma", CLUSTER=2, SHARE="A"),
                         dict(BM=64, BN=64, STAGES=8, GROUP_M=1, EPI="tma", PRODUCER_REGS=40)]),
]  # fmt: skip


def nonsquare_configs(M: int, N: int, K: int, dt: str, extra: list) -> list:
    """``best_config`` for the shape, then the ``extra`` tile sets it does not repeat."""
    best = G.best_config(M, N, K, dt)
    return [best, *(c for c in extra if c != best)]


def gemm_case(M: int, N: int, K: int, dt: str, configs: list, out: str | None) -> None:
    """torch.matmul and every tirx config on the same inputs (C = A @ B^T), best one SASS-checked."""
    tdt = getattr(torch, dt)
    sets = 3 if M * N * K <= 4096**3 else 2
    As = [torch.randn(M, K, device="cuda", dtype=tdt) for _ in range(sets)]
    Bs = [torch.randn(N, K, device="cuda", dtype=tdt) for _ in range(sets)]
    Cs = [torch.empty(M, N, device="cuda", dtype=tdt) for _ in range(sets)]
    size = f"{M}x{N}x{K}" if not M == N == K else f"{M}^3"
    flops = 2 * M * N * K
    ms_t = bench(lambda i: torch.matmul(As[i], Bs[i].t(), out=Cs[i]), sets, reps=20)
    tf_t = flops / (ms_t * 1e-3) / 1e12
    log(f"torch.matmul {dt} {size}: {ms_t:.3f} ms {tf_t:.0f} TFLOP/s")
    best = None
    for cfg in configs:
        try:
            t0 = time.perf_counter()
            f = G.make_gemm(M, N, K, dt, **cfg)
            k = tirx.compile(f, target="cuda")
            tc = time.perf_counter() - t0
            pa, pb = G.plans_for(M, N, K, dt, cfg)
            desc = (lambda p, t: p.device(t)) if cfg.get("TMAP") == "global" else (lambda p, t: p.param(t))
            TA = [desc(pa, a) for a in As]
            TB = [desc(pb, b) for b in Bs]
            tma_c = cfg.get("EPI") == "tma"
            TC = [(G.c_plan(M, N, dt).param(c),) if tma_c else () for c in Cs]
            # correctness on fresh data
            a = torch.randn(M, K, device="cuda", dtype=tdt)
            b = torch.randn(N, K, device="cuda", dtype=tdt)
            c = torch.full((M, N), float("nan"), device="cuda", dtype=tdt)
            k(a, b, c, desc(pa, a), desc(pb, b), *((G.c_plan(M, N, dt).param(c),) if tma_c else ()))
            torch.cuda.synchronize()
            err = rel(c, torch.matmul(a.float(), b.float().t()))
            ms = bench(lambda i: k(As[i], Bs[i], Cs[i], TA[i], TB[i], *TC[i]), sets, reps=20)
            tf = flops / (ms * 1e-3) / 1e12
            tag = "_".join(f"{kk}{v}" for kk, v in cfg.items())
            if cfg == G.best_config(M, N, K, dt):
                tag += " [best_config]"
            log(
                f"  tirx gemm {dt} {size} {tag}: compile {tc:.1f}s err {err:.2e} {ms:.3f} ms {tf:.0f} TFLOP/s "
                f"= {tf / tf_t:.1%} of torch"
            )
            if best is None or tf > best[0]:
                best = (tf, ms, err, tag, k)
        except Exception as e:  # keep going: one bad config must not hide the others
            log(f"  tirx gemm {dt} {size} {cfg}: FAILED {type(e).__name__}: {e}")
            LOG.append(traceback.format_exc())
    if best is not None:
        tf, ms, err, tag, k = best
        sass = sass_check(k, f"gemm_{dt}_{size.replace('^3', 'cubed')}_{tag.split()[0]}", out)
        log(f"  best {tag}: SASS {sass}")
        ROWS.append((f"gemm {dt} ({tag})", size, err, ms, tf / tf_t, tf_t / tf and tf / tf_t))


def gemm_section(out: str | None, quick: bool, configs: list | None = None, shapes: str = "square") -> None:
    picked = [GEMM_CONFIGS[i] for i in configs] if configs else GEMM_CONFIGS
    for dt in ("float16", "bfloat16"):
        if shapes in ("square", "all"):
            for S in (4096, 8192) if not quick else (4096,):
                gemm_case(S, S, S, dt, picked, out)
        if shapes in ("nonsquare", "all"):
            for (M, N, K), extra in NONSQUARE:
                gemm_case(M, N, K, dt, nonsquare_configs(M, N, K, dt, extra), out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=("mem", "gemm"), default=None)
    ap.add_argument("--gemm-configs", default=None, help="indexes into GEMM_CONFIGS, e.g. 0,4 (default: all)")
    ap.add_argument("--shapes", choices=("square", "nonsquare", "all"), default="square")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    log(
        f"device: {torch.cuda.get_device_name()} torch {torch.__version__} date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    copy = copy_bw()
    if a.only in (None, "mem"):
        try:
            mem_section(copy, a.quick)
        except Exception as e:
            log(f"memory section FAILED {type(e).__name__}: {e}")
            LOG.append(traceback.format_exc())
    if a.only in (None, "gemm"):
        try:
            picked = [int(x) for x in a.gemm_configs.split(",")] if a.gemm_configs else None
            gemm_section(a.out, a.quick, picked, a.shapes)
        except Exception as e:
            log(f"gemm section FAILED {type(e).__name__}: {e}")
            LOG.append(traceback.format_exc())
    log("")
    log(f"{'kernel':36s} {'size':>12s} {'rel err':>9s} {'ms':>8s} {'ratio':>8s} {'vs torch':>9s}")
    for name, size, err, ms, r1, r2 in ROWS:
        log(f"{name:36s} {size:>12s} {err:9.2e} {ms:8.3f} {r1:8.1%} {r2:9.2f}")
    log(
        "(ratio: fraction of copy bandwidth for memory kernels, of torch.matmul TFLOP/s for GEMM;"
        " vs torch: torch time / tirx time)"
    )
    if a.out:
        with open(os.path.join(a.out, f"bench_hopper_{a.only or 'all'}.log"), "w") as fh:
            fh.write("\n".join(LOG) + "\n")


if __name__ == "__main__":
    main()
