# ruff: noqa: B023
# (the timing lambdas are run by bench() before the loop moves on)
"""FP8 GEMM (tirx/kernels/hopper/fp8_gemm.py) vs ``torch._scaled_mm`` on the same GPU, in one run.

    python tools/bench/bench_fp8.py [--out DIR] [--quick]

C = scale_a * scale_b * (A @ B^T), A (M, K) and B (N, K) float8_e4m3fn, C bfloat16, per-tensor
float32 scales on the device. Per size: torch._scaled_mm with ``use_fast_accum`` False (its
default) and True, then each tile config of the tirx kernel: relative L2 error against a float32
reference on the dequantized inputs (fresh random data, output poisoned with NaN), median time
over rotating input sets (CUDA events around each launch, after warm-up, bench_hopper.bench),
TFLOP/s and the ratio to torch. Small problems are checked first (several tiles per CTA,
clusters) so a broken config fails fast. With ``--out``: the log and the best config's SASS
(QGMMA count, no LDL/STL).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

import torch  # noqa: E402
from bench_hopper import bench, rel, sass_check  # noqa: E402

import tirx  # noqa: E402
from tirx.kernels.hopper import fp8_gemm as F  # noqa: E402

LOG: list[str] = []
ROWS: list[tuple] = []
FP8 = torch.float8_e4m3fn

CONFIGS = [
    dict(BM=128, BN=256, STAGES=4, GROUP_M=8, EPI="direct"),  # stores from registers
    dict(BM=128, BN=256, STAGES=4, GROUP_M=8, EPI="direct", CLUSTER=2),
    dict(BM=128, BN=256, STAGES=4, GROUP_M=8, EPI="tma"),
    dict(BM=128, BN=256, STAGES=4, GROUP_M=16, EPI="tma"),
    dict(BM=128, BN=256, STAGES=4, GROUP_M=8, EPI="tma", CLUSTER=2),
    dict(BM=128, BN=128, STAGES=6, GROUP_M=8, EPI="tma"),
]
# clusters on grids smaller than 8192^2 and half the SMs (2026-12-01 they read 35-60 %: the
# ~150 us host cost of a cluster launch on the general path, docs/benchmarks.md "Cluster launches")
DIAG_4096 = [
    dict(BM=128, BN=256, STAGES=4, GROUP_M=8, EPI="tma", CLUSTER=2, SMS=66),
    dict(BM=128, BN=256, STAGES=4, GROUP_M=8, EPI="tma", SMS=66),
    dict(BM=128, BN=256, STAGES=4, GROUP_M=2, EPI="tma", CLUSTER=2),
]
# (M, N, K, config): small shapes with several tiles per CTA, checked before any timing
SMALL = [
    (256, 512, 384, dict(SMS=3, EPI="direct")),
    (1024, 1024, 512, dict(BN=128, STAGES=6, SMS=7, EPI="direct")),
    (512, 1024, 1024, dict(CLUSTER=2, SMS=4, EPI="direct")),
    (1024, 2048, 768, dict(CLUSTER=2, BN=128, GROUP_M=2, EPI="direct")),
    (256, 512, 384, dict(SMS=3, EPI="tma")),
    (1024, 1024, 512, dict(BN=128, STAGES=6, SMS=7, EPI="tma")),
    (1024, 2048, 768, dict(CLUSTER=2, GROUP_M=2, SMS=6, EPI="tma")),
]


def log(*a) -> None:
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.append(s)


def fp8_inputs(M: int, N: int, K: int):
    """Fresh e4m3 operands (N(0,1) rounded: well inside e4m3's range) and random scales."""
    a = torch.randn(M, K, device="cuda").to(FP8)
    b = torch.randn(N, K, device="cuda").to(FP8)
    sa = (torch.rand((), device="cuda") + 0.5).float()
    sb = (torch.rand((), device="cuda") * 0.02 + 0.01).float()
    return a, b, sa, sb


def reference(a, b, sa, sb):
    return (a.float() @ b.float().t()) * (sa * sb)


def scaled_mm(a, b, sa, sb, fast: bool):
    """torch._scaled_mm (A @ B^T: B^T is column-major, as cuBLASLt's fp8 path wants)."""
    t = torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, use_fast_accum=fast)
    return t[0] if isinstance(t, tuple) else t  # torch < 2.4 also returned amax


def run_tirx(k, plans, a, b, c, sa, sb) -> None:
    pa, pb, pc = plans
    k(a, b, c, sa.view(1), sb.view(1), pa.param(a), pb.param(b), pc.param(c))


def sass_counts(k, name: str, out: str | None) -> str:
    return sass_check(k, name, out, ("QGMMA", "HGMMA", "LDL", "STL", "UTMALDG", "SYNCS", "USETMAXREG"))


def small_checks(sms: int) -> None:
    for M, N, K, cfg in SMALL:
        a, b, sa, sb = fp8_inputs(M, N, K)
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        pl = F.plans(M, N, K, BN=cfg.get("BN", 256), CLUSTER=cfg.get("CLUSTER", 1))
        k = tirx.compile(F.make_fp8_gemm(M, N, K, **cfg), target="cuda")
        run_tirx(k, pl, a, b, c, sa, sb)
        torch.cuda.synchronize()
        log(f"small {M}x{N}x{K} {cfg}: err {rel(c, reference(a, b, sa, sb)):.2e}")


def size_section(M: int, N: int, K: int, sms: int, out: str | None) -> None:
    sets = 3 if M * N * K <= 4096**3 else 2
    data = [fp8_inputs(M, N, K) for _ in range(sets)]
    Cs = [torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
    flops = 2 * M * N * K
    tag = f"{M}x{N}x{K}"
    a, b, sa, sb = fp8_inputs(M, N, K)
    ref = reference(a, b, sa, sb)
    ts = {}
    for fast in (False, True):
        t = scaled_mm(a, b, sa, sb, fast)
        err = rel(t, ref)
        ms = bench(lambda i: scaled_mm(*data[i], fast), sets, reps=30)
        ts[fast] = flops / (ms * 1e-3) / 1e12
        log(f"torch._scaled_mm {tag} fast_accum={fast}: err {err:.2e} {ms:.4f} ms {ts[fast]:.0f} TFLOP/s")
        ROWS.append((f"torch._scaled_mm fast_accum={fast}", tag, err, ms, ts[fast], ts[fast] / ts[False]))
    best = None
    for cfg in CONFIGS + (DIAG_4096 if (M, N, K) == (4096, 4096, 4096) else []):
        name = "_".join(f"{kk}{v}" for kk, v in cfg.items())
        try:
            t0 = time.perf_counter()
            k = tirx.compile(F.make_fp8_gemm(M, N, K, **{"SMS": sms, **cfg}), target="cuda")
            tc = time.perf_counter() - t0
            pa, pb, pc = pl = F.plans(M, N, K, BN=cfg["BN"], CLUSTER=cfg.get("CLUSTER", 1))
            c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            run_tirx(k, pl, a, b, c, sa, sb)
            torch.cuda.synchronize()
            err = rel(c, ref)
            TA = [pa.param(d[0]) for d in data]
            TB = [pb.param(d[1]) for d in data]
            TC = [pc.param(x) for x in Cs]
            SA = [d[2].view(1) for d in data]
            SB = [d[3].view(1) for d in data]
            ms = bench(
                lambda i: k(data[i][0], data[i][1], Cs[i], SA[i], SB[i], TA[i], TB[i], TC[i]), sets, reps=30
            )
            ms2 = bench(
                lambda i: k(data[i][0], data[i][1], Cs[i], SA[i], SB[i], TA[i], TB[i], TC[i]), sets, reps=30
            )
            tf = flops / (ms * 1e-3) / 1e12
            log(
                f"  tirx fp8 {tag} {name}: compile {tc:.2f}s err {err:.2e} {ms:.4f} ms (again {ms2:.4f}) "
                f"{tf:.0f} TFLOP/s = {tf / ts[False]:.1%} of _scaled_mm, {tf / ts[True]:.1%} of fast_accum"
            )
            ROWS.append((f"tirx fp8 {name}", tag, err, ms, tf, tf / ts[False], tf / ts[True]))
            if best is None or tf > best[0]:
                best = (tf, name, k)
        except Exception as e:  # one bad config must not hide the others
            log(f"  tirx fp8 {tag} {name}: FAILED {type(e).__name__}: {e}")
            LOG.append(traceback.format_exc())
    if best is not None:
        log(f"  best {best[1]}: SASS {sass_counts(best[2], f'fp8_{tag}_{best[1]}', out)}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    log(
        f"device: {torch.cuda.get_device_name()} ({sms} SMs) torch {torch.__version__} "
        f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    small_checks(sms)
    sizes = [(4096, 4096, 4096)] if a.quick else [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 1024, 8192)]
    for M, N, K in sizes:
        try:
            size_section(M, N, K, sms, a.out)
        except Exception as e:
            log(f"{M}x{N}x{K} FAILED {type(e).__name__}: {e}")
            LOG.append(traceback.format_exc())
        if a.out:
            with open(os.path.join(a.out, "bench_fp8.log"), "w") as fh:
                fh.write("\n".join(LOG) + "\n")
    log("")
    log(
        f"{'kernel':44s} {'size':>16s} {'rel err':>9s} {'ms':>8s} {'TFLOP/s':>8s} {'vs torch':>9s} {'vs fast':>8s}"
    )
    for row in ROWS:
        name, size, err, ms, tf, r1 = row[:6]
        r2 = f"{row[6]:8.1%}" if len(row) > 6 else ""
        log(f"{name:44s} {size:>16s} {err:9.2e} {ms:8.4f} {tf:8.0f} {r1:9.1%} {r2}")
    log(
        "(vs torch: fraction of torch._scaled_mm's TFLOP/s (use_fast_accum=False, its default); vs fast: of use_fast_accum=True)"
    )
    if a.out:
        with open(os.path.join(a.out, "bench_fp8.log"), "w") as fh:
            fh.write("\n".join(LOG) + "\n")


if __name__ == "__main__":
    main()
