"""Fit ``tirx.kernels.gemm``'s tile-choice model to measured GEMM times (issue #33).

    python tools/bench/gemm_model_fit.py [DATA.json]

The data (default ``tools/bench/data/gemm_tiles_h100.json``) are ``[M, N, K, BN, split, µs]``
rows from ``gemm_explore.py`` / ``bench_library.py`` (128-row tiles, bf16). A random search
from the library's constants minimizes the RMS of log(model / measured); the script prints
the fitted constants, the error before and after, and for every shape measured with more than
one tile set whether the model picks the fastest (and what a wrong pick costs). The library's
model (``model_us``) is evaluated with the candidate constants, so the fit is of the code
itself.
"""

from __future__ import annotations

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

NAMES = ("_T_KB", "_S192", "_S128", "_S64", "_T_UNIT", "_T_SPLIT", "_T_SHARE", "_BW")


def main() -> int:
    import numpy as np

    from tirx.kernels import gemm as MM

    path = (
        sys.argv[1]
        if len(sys.argv) > 1
        else os.path.join(ROOT, "tools", "bench", "data", "gemm_tiles_h100.json")
    )
    with open(path) as fh:
        runs = json.load(fh)["runs"]

    def use(p) -> None:
        for n, v in zip(NAMES, p):
            setattr(MM, n, float(v))

    def err(p) -> float:
        use(p)
        e = [np.log(MM.model_us(M, N, K, "bfloat16", bn, s) / t) for M, N, K, bn, s, t in runs]
        return float(np.sqrt(np.mean(np.square(e))))

    def picks(p) -> tuple[int, int, list]:
        use(p)
        groups: dict = {}
        for r in runs:
            groups.setdefault(tuple(r[:3]), []).append(r)
        groups = {k: v for k, v in groups.items() if len(v) > 1}
        bad = []
        for k, rs in groups.items():
            best = min(rs, key=lambda r: r[5])
            pick = min(rs, key=lambda r: MM.model_us(*r[:3], "bfloat16", r[3], r[4]))
            if pick is not best:
                bad.append((k, tuple(pick[3:5]), tuple(best[3:5]), round(pick[5] / best[5], 3)))
        return len(groups) - len(bad), len(groups), bad

    p0 = np.array([getattr(MM, n) for n in NAMES])
    print(f"library constants: RMS log error {err(p0):.3f}, picks {picks(p0)}")
    rng = np.random.default_rng(0)
    best, be = p0, err(p0)
    for _ in range(20000):
        cand = best * np.exp(rng.normal(0, 0.05, size=len(NAMES)))
        cand[1:4] = np.minimum(cand[1:4], 1.0)  # narrower tiles are never faster per MAC
        e = err(cand)
        if e < be:
            best, be = cand, e
    print(f"fitted: RMS log error {be:.3f}, picks {picks(best)}")
    print("  " + ", ".join(f"{n} = {float(v):.4g}" for n, v in zip(NAMES, best)))
    use(p0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
