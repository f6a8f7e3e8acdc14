"""A timeline of the any-shape GEMM's CTAs: where a skinny product's time goes (issue #33).

    python tools/bench/gemm_trace.py [--json OUT.json]

Each case runs ``matmul_sm90`` with ``TRACE=True``: thread 0 stamps the kernel's start
(``%globaltimer`` and ``clock64``), the producer the cycle each k-block of the CTA's first work
unit found its stage empty, the first consumer thread the cycles before and after it waited for
the k-block's data and after the previous k-block's wgmma finished, then the main loop's and
the epilogue's ends. One launch per case on a weight not read before (rotating sets, so B
comes from HBM), queued behind a sleep. Printed per case (medians over the CTAs, µs): the
spread of the CTAs' starts, the wait for the first k-block, the main loop, a k-block's pace
and how much of it the consumer spent waiting for data or for the previous wgmma, the
producer's pace, the epilogue, and the kernel's span.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

#: (name, (M, N, K), tile set): the skinny shapes and, for contrast, one at cuBLAS's speed
CASES = [
    ("16 rows, config 64x64", (16, 4096, 4096), dict(BM=64, BN=64, STAGES=8, EPI="tma")),
    ("16 rows, swapped 128x16", (16, 4096, 4096), dict(BM=128, BN=16, STAGES=12, EPI="direct", TRANS_C=True)),
    ("16 rows, 64x64 2 shares", (16, 4096, 4096), dict(BM=64, BN=64, STAGES=8, EPI="tma", SPLIT_K=2)),
    (
        "65 rows, config 128x64 2 shares",
        (65, 4096, 4096),
        dict(BM=128, BN=64, STAGES=8, EPI="tma", SPLIT_K=2),
    ),
    ("65 rows, 128x128 4 shares", (65, 4096, 4096), dict(BM=128, BN=128, STAGES=6, EPI="tma", SPLIT_K=4)),
    ("32x14336 (at cuBLAS's speed)", (32, 14336, 4096), dict(BM=64, BN=128, STAGES=8, EPI="tma")),
    ("4096^3 (compute-bound)", (4096, 4096, 4096), dict(BM=128, BN=256, STAGES=4, EPI="tma")),
    # two k-blocks a stage (KPACK=2)
    (
        "16 rows, 64x64, 2 k-blocks a stage",
        (16, 4096, 4096),
        dict(BM=64, BN=64, STAGES=6, EPI="tma", KPACK=2),
    ),
    (
        "65 rows, 128x64 2 shares, 2 a stage",
        (65, 4096, 4096),
        dict(BM=128, BN=64, STAGES=4, SPLIT_K=2, KPACK=2),
    ),
]


def _run(M: int, N: int, K: int, cfg: dict) -> dict:
    import torch

    from tirx.kernels import gemm as MM
    from tirx.kernels.hopper.matmul import TRACE_KB, TRACE_SLOTS

    cfg = dict(cfg, GROUP_M=8, SMS=MM.sm_count(0), TRACE=True)
    sets = max(2, min(8, -(-(256 << 20) // (N * K * 2))))
    xs = [torch.randn(M, K, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
    ws = [torch.randn(N, K, device="cuda", dtype=torch.bfloat16) / K**0.5 for _ in range(sets)]
    out = torch.empty((M, N), device="cuda", dtype=torch.bfloat16)
    tr = torch.zeros(cfg["SMS"] * TRACE_SLOTS, dtype=torch.int64, device="cuda")

    def launch(i: int) -> None:
        plan = MM._prepare(xs[i], ws[i], out, M, N, K, "bfloat16", False, False, None, "tensor", cfg)
        epi, k, ta, tb, tc = plan[:5]
        extra = MM.split_space(0, *plan[6]) if plan[6] is not None else ()
        m, n = (N, M) if plan[7] else (M, N)
        if epi == "tma":
            k(m, n, K, ta, tb, tc, out, *extra, tr.data_ptr())
        else:
            k(m, n, K, ta, tb, out, *extra, tr.data_ptr())

    for i in range(sets - 1):
        launch(i)
    tr.zero_()
    torch.cuda.synchronize()
    torch.cuda._sleep(400_000)
    launch(sets - 1)
    torch.cuda.synchronize()
    ref = xs[-1].float() @ ws[-1].float().t()
    err = float((out.float() - ref).norm() / ref.norm())
    t = tr.view(cfg["SMS"], TRACE_SLOTS).cpu().tolist()
    ctas = [r for r in t if r[1] != 0]
    kb = TRACE_KB
    per = []
    for r in ctas:
        gt0, c0, cmain, cepi, gt1 = r[0], r[1], r[2], r[3], r[4]
        prod = [x for x in r[8 : 8 + kb] if x]
        before = r[8 + kb : 8 + 2 * kb]
        got = r[8 + 2 * kb : 8 + 3 * kb]
        mma = r[8 + 3 * kb : 8 + 4 * kb]
        n = sum(1 for x in got if x)
        if n < 2 or not gt1:
            continue
        ghz = (cepi - c0) / max(1, gt1 - gt0)  # cycles per ns
        us = 1 / (ghz * 1e3)  # µs per cycle
        per.append(
            dict(
                ghz=ghz,
                start_ns=gt0,
                end_ns=gt1,
                first=(got[0] - c0) * us,
                main=(cmain - got[0]) * us,
                pace=statistics.median(got[j] - got[j - 1] for j in range(1, n)) * us,
                wait_data=statistics.median(got[j] - before[j] for j in range(1, n)) * us,
                wait_mma=statistics.median(mma[j] - got[j] for j in range(1, n) if mma[j]) * us
                if any(mma[1:n])
                else 0.0,
                prod_pace=statistics.median(prod[j] - prod[j - 1] for j in range(1, len(prod))) * us
                if len(prod) > 2
                else 0.0,
                epi=(cepi - cmain) * us,
                kblocks=n,
            )
        )
    if not per:
        return dict(ctas=len(ctas), err=err)
    t0 = min(p["start_ns"] for p in per)
    res = {k: statistics.median(p[k] for p in per) for k in per[0] if k not in ("start_ns", "end_ns")}
    res.update(
        ctas=len(per),
        err=err,
        start_spread=(max(p["start_ns"] for p in per) - t0) / 1e3,
        span=(max(p["end_ns"] for p in per) - t0) / 1e3,
    )
    return res


def main() -> int:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    print(torch.cuda.get_device_name())
    allres = {}
    for name, (M, N, K), cfg in CASES:
        r = _run(M, N, K, cfg)
        allres[name] = r
        if "pace" not in r:
            print(f"{name}: no trace ({r})")
            continue
        print(
            f"{name:<34} {M}x{N}x{K}: {r['ctas']} CTAs, err {r['err']:.1e}, {r['ghz']:.2f} GHz; start spread "
            f"{r['start_spread']:.2f} us, first k-block {r['first']:.2f} us, main loop {r['main']:.2f} us "
            f"({r['kblocks']} k-blocks traced), pace {r['pace'] * 1e3:.0f} ns/k-block (waiting for data "
            f"{r['wait_data'] * 1e3:.0f} ns, for the wgmma {r['wait_mma'] * 1e3:.0f} ns), producer "
            f"{r['prod_pace'] * 1e3:.0f} ns/k-block, epilogue {r['epi']:.2f} us, span {r['span']:.2f} us"
        )
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(allres, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
