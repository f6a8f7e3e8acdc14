# ruff: noqa: B023
# (the timing lambdas run before the loop moves on)
"""Host time of the GEMM's tile choice at a new M (issue #33: a new shape costs host time only,
at most 20 µs a call in all), against the model evaluated pair by pair.

``gemm._choose`` (the ``(BN, split)`` pair for more than 64 rows, its per-(N, K) terms computed
once by ``_pairs``) is timed at row counts never seen (its cache bypassed), beside the plain
minimum of ``gemm._cost`` over the same candidate pairs, which it must equal (checked here
too). No GPU needed.

    python tools/bench/bench_tile_choice.py [--n 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from tirx.kernels import gemm as MM  # noqa: E402

CLASSES = [(4096, 4096, "bfloat16", False), (14336, 4096, "bfloat16", False), (4096, 4096, "bfloat16", True),
           (7168, 2048, "float8_e4m3fn", False)]  # fmt: skip


def reference(M: int, N: int, K: int, dtype: str, sms: int, trans_b: bool) -> tuple[int, int]:
    """The model's first minimum, every pair through ``_cost``."""
    kb = -(-K // MM._bk(dtype))
    splits = tuple(s for s in (1, 2, 4, 8) if s == 1 or kb // s >= 16)
    pairs = [(w, s) for s in splits for w in MM._widths(trans_b)]
    return min(pairs, key=lambda p: MM._cost(M, N, K, dtype, p[0], p[1], sms))


def per_call(fn, ms, *args) -> float:
    """Median over 5 passes of µs a call at the row counts ``ms``."""
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for m in ms:
            fn(m, *args)
        runs.append((time.perf_counter() - t0) / len(ms) * 1e6)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    a = ap.parse_args()
    choose = MM._choose.__wrapped__  # the lru cache bypassed: every call is a new M
    print(f"{'N x K, dtype, B layout':38} {'_choose us':>10} {'_cost each us':>14} {'ratio':>6}")
    for N, K, dt, tb in CLASSES:
        ms = range(65, 65 + a.n)
        for m in ms:
            assert choose(m, N, K, dt, 132, tb, None) == reference(m, N, K, dt, 132, tb), (m, N, K, dt, tb)
        mine = per_call(lambda m: choose(m, N, K, dt, 132, tb, None), ms)
        ref = per_call(lambda m: reference(m, N, K, dt, 132, tb), ms)
        label = f"{N} x {K}, {dt}, {'row-major B' if tb else 'K-major B'}"
        print(f"{label:38} {mine:10.2f} {ref:14.2f} {ref / mine:6.2f}")


if __name__ == "__main__":
    main()
