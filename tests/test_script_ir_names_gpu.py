"""GPU: ``T.Shuffle`` (tirx/ir/shuffle.py) computes on the device what numpy and the
interpreter compute, with constant and per-thread runtime lane indices, for a
``tirx_vec`` element type and CUDA's ``half2``. Skipped without a CUDA device."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_util import require_gpu

torch = require_gpu()

import tirx  # noqa: E402
import tirx.interp as ti  # noqa: E402
from tirx.script import tirx as T  # noqa: E402

pytestmark = pytest.mark.gpu
N = 256  # threads


def _kernel(dt):
    @T.function
    def f(A: T.Tensor((N * 8,), dt), K: T.Tensor((N * 4,), T.int32), B: T.Tensor((N * 8,), dt)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=N // 64, block=64))
        t = T.cuda.block_idx("x") * 64 + T.cuda.thread_idx("x")
        v = A[T.ramp(t * 8, 1, 4)]
        w = A[T.ramp(t * 8 + 4, 1, 4)]
        s = T.Shuffle([v, w], [7, 2, 5, 0])
        d = T.Shuffle([v, w], [K[t * 4], K[t * 4 + 1], K[t * 4 + 2], K[t * 4 + 3]])
        for k in range(4):
            B[t * 8 + k] = T.Shuffle([s], [k])
            B[t * 8 + 4 + k] = T.Shuffle([d], [k])

    return f


def _half2_kernel():
    @T.function
    def f(A: T.Tensor((N * 4,), T.float16), K: T.Tensor((N * 2,), T.int32), B: T.Tensor((N * 4,), T.float16)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=N // 64, block=64))
        t = T.cuda.block_idx("x") * 64 + T.cuda.thread_idx("x")
        h = A[T.ramp(t * 4, 1, 2)]
        g = A[T.ramp(t * 4 + 2, 1, 2)]
        s = T.Shuffle([h, g], [K[t * 2], K[t * 2 + 1]])
        B[t * 4] = T.Shuffle([s], [0])
        B[t * 4 + 1] = T.Shuffle([s], [1])
        B[t * 4 + 2] = T.Shuffle([g, h], [3])

    return f


def _reference(a: np.ndarray, k: np.ndarray) -> np.ndarray:
    lanes = a.reshape(N, 8)
    out = np.empty_like(lanes)
    out[:, :4] = lanes[:, [7, 2, 5, 0]]
    out[:, 4:] = np.take_along_axis(lanes, k.reshape(N, 4), axis=1)
    return out.reshape(-1)


@pytest.mark.parametrize("dt", ["float32", "int32", "float16"])
def test_shuffle_on_the_gpu_matches_numpy_and_the_interpreter(dt):
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(N * 8) * 100).astype(dt)
    k = rng.integers(0, 8, N * 4).astype(np.int32)
    f = _kernel(getattr(T, dt))
    ref = _reference(a, k)
    b_interp = np.zeros_like(a)
    ti.compile(f)(a, k, b_interp)
    np.testing.assert_array_equal(b_interp, ref)
    dev = [torch.from_numpy(x.copy()).cuda() for x in (a, k, np.full_like(a, 0))]
    tirx.compile(f, target="cuda")(*dev)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(dev[2].cpu().numpy(), ref)


def test_half2_shuffle_on_the_gpu():
    rng = np.random.default_rng(3)
    a = rng.standard_normal(N * 4).astype(np.float16)
    k = rng.integers(0, 4, N * 2).astype(np.int32)
    lanes = a.reshape(N, 4)
    ref = np.zeros((N, 4), np.float16)
    ref[:, :2] = np.take_along_axis(lanes, k.reshape(N, 2), axis=1)
    ref[:, 2] = lanes[:, 1]  # [g, h] lane 3 is h[1]
    f = _half2_kernel()
    dev = [torch.from_numpy(x.copy()).cuda() for x in (a, k, np.zeros_like(a))]
    tirx.compile(f, target="cuda")(*dev)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(dev[2].cpu().numpy().reshape(N, 4), ref)


@pytest.mark.parametrize("dt", ["float32", "float16", "float64"])
def test_tirx_isinf_isfinite_comparisons_agree_with_the_ops_on_the_gpu(dt):
    # T.isinf(x) / T.isfinite(x) build TIRx's comparisons; ty= builds tirx's op (docs/tirx_compat.md)
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parent / "data" / "irnames" / "finite_kernel.py"
    spec = importlib.util.spec_from_file_location("irnames_finite_kernel_gpu", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    f = mod.kernel(dt)
    x = np.array([0.0, -0.0, 1.5, np.inf, -np.inf, np.nan, 6e4, -1e-3] * (mod.N // 8)).astype(dt)
    dev = [torch.from_numpy(x.copy()).cuda(), torch.zeros(4 * mod.N, dtype=torch.bool, device="cuda")]
    tirx.compile(f, target="cuda")(*dev)
    torch.cuda.synchronize()
    c = dev[1].cpu().numpy()
    assert (c[0::4] == np.isinf(x)).all() and (c[1::4] == np.isinf(x)).all()
    assert (c[2::4] == np.isfinite(x)).all() and (c[3::4] == np.isfinite(x)).all()
