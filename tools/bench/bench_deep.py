"""Deeply nested IR: cost per term of every stage, shallow vs deep (issue #12, item 12).

A kernel whose one store sums N loads is an expression N levels deep. Below about 300
levels every stage runs on the caller's thread; above, it fails there once and reruns on
``tirx.ir.deep``'s large-stack worker. This prints microseconds per term for each stage and
the ratio against the shallow N=100 case, so the price of the worker (the failed first try
plus the thread) is visible and linearity can be checked.

    python tools/bench/bench_deep.py [--sizes 100,1000,10000,30000]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import tirx
import tirx.passes as P
from tirx.codegen.cuda import generate


def chain_text(n: int) -> str:
    expr = " + ".join(f"A[{j % 64}]" for j in range(n))
    return (
        "# from tirx.script import tirx as T\n\n@T.function\n"
        "def f(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.float32)):\n"
        "    with T.device_entry(1, 1, 1, 64, 1, 1):\n"
        '        i: T.let[T.int32] = T.cuda.thread_idx("x")\n'
        f"        B[i] = {expr}\n"
    )


def stages(n: int) -> dict[str, float]:
    text = chain_text(n)
    out: dict[str, float] = {}

    def timed(name: str, fn):
        t = time.perf_counter()
        r = fn()
        out[name] = (time.perf_counter() - t) * 1e6 / n
        return r

    f = timed("loads", lambda: tirx.loads(text))
    printed = timed("dumps", lambda: tirx.dumps(f))
    g = tirx.loads(printed)
    timed("hash", lambda: tirx.structural_hash(g))
    timed("equal", lambda: tirx.structural_equal(f, g))
    timed("verify", lambda: P.verify_well_formed(f))
    timed("simplify", lambda: P.Simplify()(f))
    timed("cse", lambda: P.CommonSubexprElim()(f))
    k = timed("interp compile", lambda: tirx.compile(f, target="interp"))
    A = np.ones(64, np.float32)
    B = np.zeros(64, np.float32)
    timed("interp run", lambda: k(A, B))
    timed("cuda codegen", lambda: generate(f))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,1000,10000,30000")
    args = ap.parse_args()
    os.environ.setdefault("TIRX_CACHE_DIR", tempfile.mkdtemp(prefix="tirx-bench-deep-"))
    sizes = [int(s) for s in args.sizes.split(",")]
    stages(50)  # warm up: grammar tables, generated comparers, NVRTC-free codegen tables
    rows = {n: stages(n) for n in sizes}
    base = rows[sizes[0]]
    names = list(base)
    print(f"{'stage':<16}" + "".join(f"{f'N={n} µs/term':>18}" for n in sizes) + "   ratio (largest/first)")
    for s in names:
        cells = "".join(f"{rows[n][s]:>18.2f}" for n in sizes)
        print(f"{s:<16}{cells}   {rows[sizes[-1]][s] / base[s]:.2f}x")


if __name__ == "__main__":
    main()
