"""What the interpreter's NaN rules (tirx/ops/semantics/nan.py, issue #29) cost on float arithmetic.

    python tools/bench/bench_interp_nan.py [--against OLD_TREE]

Times one elementwise float32 kernel (65,536 threads, nine float ops a thread) on the
interpreter, with inputs holding no NaN and with half the inputs NaN: the median of 20 calls.
``--against`` runs the same measurement with the tirx of another checkout (``git worktree add
/tmp/base <commit>``) in a subprocess, interleaved, and prints the ratio new / old.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

KERNEL = """# from tirx.script import tirx as T

@T.function
def k(A: T.Tensor((65536,), T.float32), C: T.Tensor((65536,), T.float32), B: T.Tensor((65536,), T.float32)):
    with T.device_entry(256, 1, 1, 256, 1, 1):
        i: T.let[T.int32] = T.cuda.block_idx("x") * 256 + T.cuda.thread_idx("x")
        x: T.let[T.float32] = A[i] * C[i] + A[i]
        y: T.let[T.float32] = (x - C[i]) / (A[i] + T.float32(1.5))
        B[i] = T.max(x * y, T.sqrt(T.fabs(y))) - T.min(x, C[i])
"""


def measure(calls: int = 20) -> dict[str, float]:
    """Median ms per interpreter call, inputs without NaN and with half NaN."""
    import numpy as np

    import tirx

    k = tirx.compile(tirx.loads(KERNEL), target="interp")
    rng = np.random.default_rng(0)
    a = rng.standard_normal(65536).astype(np.float32)
    c = rng.standard_normal(65536).astype(np.float32)
    half = a.copy()
    half[::2] = np.nan
    out = {}
    for name, x in (("no NaN", a), ("half NaN", half)):
        k(x, c, np.zeros_like(a))  # warm
        ts = []
        for _ in range(calls):
            b = np.zeros_like(a)
            t0 = time.perf_counter()
            k(x, c, b)
            ts.append(time.perf_counter() - t0)
        out[name] = statistics.median(ts) * 1e3
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--against", help="another checkout whose tirx to time in the same run")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    if a.json:
        print(json.dumps(measure()))
        return
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    trees = {"this tree": here} | ({"old tree": os.path.abspath(a.against)} if a.against else {})
    runs: dict[str, list[dict[str, float]]] = {t: [] for t in trees}
    for _ in range(a.rounds):  # interleaved, so load changes hit both alike
        for t, root in trees.items():
            env = dict(os.environ, PYTHONPATH=root)
            res = subprocess.run(
                [sys.executable, __file__, "--json"],
                env=env,
                cwd=root,
                capture_output=True,
                text=True,
                check=True,
            )
            runs[t].append(json.loads(res.stdout.strip().splitlines()[-1]))
    for case in ("no NaN", "half NaN"):
        best = {t: min(r[case] for r in rs) for t, rs in runs.items()}
        line = ", ".join(f"{t} {v:.2f} ms" for t, v in best.items())
        if a.against:
            line += f", ratio {best['this tree'] / best['old tree']:.3f}"
        print(f"{case}: {line}")


if __name__ == "__main__":
    main()
