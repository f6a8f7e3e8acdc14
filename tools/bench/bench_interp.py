"""Benchmark the CPU interpreter (tirx.interp) on the issue's two goals.

    python tools/bench/bench_interp.py [--repeat 3]

1. elementwise: the seed's ``make_add`` (float16, +2, block 128) over 1M elements, and a
   float32 version, both with a dynamic ``n``;
2. reduce_smem_tree: the compat block reduction, 256 blocks x 256 threads over 64K floats,
   with shared memory, barriers and a divergent tree;
plus the compat tiled matmul (512^3, 1024 blocks of 16x16) as a heavier case.

Each line prints the best wall time (race checks on, the default, and off) and the ratio
against the peer: the same computation written directly in numpy.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import tirx.interp as ti
from tirx.ir import Var, const
from tirx.ir.op import call
from tirx.ir.types import TensorType, float16, float32
from tirx.surface.builder import IRBuilder, launch_args
from tirx.testing.compat_kernels import matmul_tiled_smem, reduce_smem_tree


def make_add(dtype, value, block=128):
    b = IRBuilder()
    n = Var("n")
    with b, b.function("add"):
        A = b.param("A", TensorType((n,), dtype))
        B = b.param("B", TensorType((n,), dtype))
        with b.device_entry(*launch_args((n + block - 1) // block, block)):
            i = b.bind("i", call("cuda.block_idx", "x") * block + call("cuda.thread_idx", "x"))
            with b.if_(i < n):
                B[i] = A[i] + const(value, dtype)
    return b.get()


def best(fn, repeat):
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-matmul", action="store_true")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    rows = []

    n = 1 << 20
    for dt, npdt in ((float16, np.float16), (float32, np.float32)):
        a = rng.standard_normal(n).astype(npdt)
        out = np.empty_like(a)
        f = make_add(dt, 2.0)
        peer = best(lambda a=a, npdt=npdt: a + npdt(2.0), args.repeat)
        for races in (True, False):
            k = ti.compile(f, check_races=races)
            t = best(lambda k=k, a=a, out=out: k(a, out), args.repeat)
            assert np.array_equal(out, a + npdt(2.0))
            rows.append((f"elementwise add {dt} 1M", races, t, peer))

    A = rng.standard_normal(65536).astype(np.float32)
    O = np.zeros(256, np.float32)
    peer = best(lambda: A.reshape(256, 256).sum(1), args.repeat)
    for races in (True, False):
        k = ti.compile(reduce_smem_tree(), check_races=races)
        t = best(lambda k=k: k(A, O), args.repeat)
        assert np.allclose(O, A.reshape(256, 256).sum(1), atol=1e-3)
        rows.append(("reduce_smem_tree 256x256", races, t, peer))

    if not args.skip_matmul:
        X = rng.standard_normal((512, 512)).astype(np.float32)
        Y = rng.standard_normal((512, 512)).astype(np.float32)
        C = np.zeros((512, 512), np.float32)
        peer = best(lambda: X @ Y, args.repeat)
        for races in (True, False):
            k = ti.compile(matmul_tiled_smem(), check_races=races)
            t = best(lambda k=k: k(X, Y, C), 1)
            assert np.allclose(C, X @ Y, rtol=1e-3, atol=1e-3)
            rows.append(("matmul_tiled_smem 512^3", races, t, peer))

    print(f"{'case':32} {'races':>5} {'interp s':>9} {'numpy s':>9} {'ratio':>8}")
    for name, races, t, peer in rows:
        print(f"{name:32} {races!s:>5} {t:9.4f} {peer:9.5f} {t / peer:8.1f}x")
    return rows


if __name__ == "__main__":
    main()
