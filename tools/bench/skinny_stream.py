"""Where skinny-M GEMM time goes: B from L2 against B from HBM, and a K sweep (issue #33).

    python tools/bench/skinny_stream.py

``linear`` (the calls' tile choice) and ``torch.matmul(x, w.t())`` paired (``bench_library.paired``:
GPU time alone) on bf16 ``x (M, K)``, ``w (N, K)``: once with one weight (read from the L2 after
the first call when it fits: 50 MiB on an H100) and once with weights rotating through 256 MiB
(read from HBM), then at a fixed ``M x N`` over K, whose least-squares line splits each side's
time into a fixed part (µs) and a streaming rate (TB/s of B). Prints both sides and torch/tirx.
"""

from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools", "bench"))


def _time(M: int, N: int, K: int, sets: int) -> tuple[float, float]:
    import torch
    from bench_library import paired

    import tirx.kernels as TK

    xs = [torch.randn(M, K, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
    ws = [torch.randn(N, K, device="cuda", dtype=torch.bfloat16) / K**0.5 for _ in range(sets)]
    out = torch.empty((M, N), device="cuda", dtype=torch.bfloat16)
    tt, tc = paired(
        lambda i: TK.linear(xs[i], ws[i], out=out), lambda i: torch.matmul(xs[i], ws[i].t()), sets
    )
    return tt * 1000, tc * 1000


def main() -> int:
    import numpy as np
    import torch

    print(torch.cuda.get_device_name())
    for M, N, K in [
        (16, 4096, 4096),
        (64, 4096, 4096),
        (65, 4096, 4096),
        (16, 8192, 8192),
        (32, 14336, 4096),
    ]:
        hbm = max(1, min(8, -(-(256 << 20) // (N * K * 2))))
        for sets, where in ((1, "L2" if N * K * 2 < (40 << 20) else "HBM (one weight)"), (hbm, "HBM")):
            tt, tc = _time(M, N, K, sets)
            print(
                f"{M}x{N}x{K} B from {where:<17} tirx {tt:7.2f} us  torch {tc:7.2f} us  torch/tirx {tc / tt:.3f}"
            )
    for M, N in [(16, 4096), (65, 4096)]:
        ks = [1024, 2048, 4096, 8192, 16384]
        rows = [(K, *_time(M, N, K, max(1, min(8, -(-(256 << 20) // (N * K * 2)))))) for K in ks]
        mb = np.array([N * K * 2 / 1e6 for K in ks])  # MB of B
        for side, col in (("tirx", 1), ("torch", 2)):
            t = np.array([r[col] for r in rows])
            slope, icpt = np.polyfit(mb, t, 1)
            print(
                f"{M}x{N}xK {side:>5}: "
                + " ".join(f"K={k}:{v:.1f}" for k, v in zip(ks, t))
                + f"  fixed {icpt:.1f} us, B at {1 / slope:.2f} TB/s"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
