"""Every example kernel (examples/kernels) runs on the interpreter and matches numpy; the
Hopper examples (TMA, wgmma, mbarriers) are refused with a clear error."""

from __future__ import annotations

import os

import numpy as np
import pytest
from examples_dir import load_example

import tirx
import tirx.interp as ti

pytest.importorskip("tirx.script.tirx")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")


def _ex(path: str):
    full = os.path.join(EXAMPLES, path)
    if not os.path.exists(full):
        pytest.skip(f"no {path}")
    return load_example(path)


rng = np.random.default_rng(11)


@pytest.mark.parametrize("which", ["add_f16", "add_f32", "add_f16_i64", "add_vec_f16"])
@pytest.mark.parametrize("n", [1, 129, 1000, 4099])
def test_elementwise_add(which, n):
    k = ti.compile(_ex("kernels/elementwise_add.py").KERNELS[which]())
    dt = np.float32 if which == "add_f32" else np.float16
    a = rng.standard_normal(n).astype(dt)
    b = np.full(n, np.nan, dt)
    k(a, b)
    np.testing.assert_array_equal(b, a + dt(1 if which == "add_f32" else 2))


@pytest.mark.parametrize(
    "which,shape", [("matmul_256", (256, 256, 256)), ("matmul_512x128x64", (512, 128, 64))]
)
def test_matmul_tiled(which, shape):
    M, N, K = shape
    k = ti.compile(_ex("kernels/matmul_tiled.py").KERNELS[which]())
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    C = np.zeros((M, N), np.float32)
    k(A, B, C)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)


def test_block_sum():
    k = ti.compile(_ex("kernels/reduce_smem.py").KERNELS["block_sum"]())
    A = rng.standard_normal(1000).astype(np.float32)
    out = np.zeros(4, np.float32)
    k(A, out)
    pad = np.zeros(1024, np.float32)
    pad[:1000] = A
    np.testing.assert_allclose(out, pad.reshape(4, 256).sum(1), rtol=1e-5, atol=1e-5)


def test_softmax():
    k = ti.compile(_ex("kernels/softmax.py").KERNELS["softmax_1024"]())
    X = rng.standard_normal((3, 1024)).astype(np.float32)
    Y = np.zeros_like(X)
    k(X, Y)
    e = np.exp(X - X.max(1, keepdims=True))
    np.testing.assert_allclose(Y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_warp_row_reduce():
    k = ti.compile(_ex("kernels/warp_reduce.py").KERNELS["row_reduce"]())
    A = rng.standard_normal((10, 256)).astype(np.float32)
    S = np.zeros(10, np.float32)
    M = np.zeros(10, np.float32)
    k(A, S, M)
    np.testing.assert_allclose(S, A.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(M, A.max(1))


def test_dsmem_cluster_exchange():
    k = ti.compile(_ex("kernels/dsmem_cluster.py").KERNELS["dsmem_exchange"]())
    out = np.zeros(2 * 4 * 128, np.uint64)
    k(out)
    bx = np.arange(8).repeat(128)
    tx = np.tile(np.arange(128), 8)
    np.testing.assert_array_equal(out, ((bx ^ 1) * 1000 + tx).astype(np.uint64))


def test_hopper_examples_are_refused_clearly():
    from tirx.kernels.hopper import gemm

    assert gemm.KERNELS
    for build in gemm.KERNELS.values():
        with pytest.raises(tirx.OpError, match="interpreter cannot run"):
            ti.compile(build())
