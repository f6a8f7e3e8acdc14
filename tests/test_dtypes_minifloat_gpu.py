"""On the GPU: the CUDA conversions of every minifloat CUDA has a type for give the codes the
interpreter gives (float32 and float64 sources, every code decoded, vectors too)."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_util import require_gpu

torch = require_gpu()

import tirx  # noqa: E402
from tirx.interp import minifloat as mf  # noqa: E402
from tirx.script import tirx as T  # noqa: E402

pytestmark = pytest.mark.gpu

NAMES = ["float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]
N = 4096


def _kernel(name: str):
    @T.function
    def f(
        X: T.Tensor((N,), "float32"),
        Y: T.Tensor((N,), "float64"),
        K: T.Tensor((N,), name),
        C: T.Tensor((N,), name),
        E: T.Tensor((N,), name),
        V: T.Tensor((N,), name),
        D: T.Tensor((N,), "float32"),
    ):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=N // 128, block=128))
        i = T.cuda.block_idx("x") * 128 + T.cuda.thread_idx("x")
        C[i] = T.cast(X[i], name)
        E[i] = T.cast(Y[i], name)
        D[i] = T.cast(K[i], "float32")
        if i < N // 4:
            V[T.Ramp(i * 4, 1, 4)] = T.cast(X[T.Ramp(i * 4, 1, 4)], f"{name}x4")

    return f


def _inputs(name: str):
    f = mf.fmt(name)
    codes = np.arange(f.ncodes)
    vals = mf.decode(codes, name).astype(np.float64)
    fin = np.unique(np.abs(vals[np.isfinite(vals)]))
    mids = (fin[:-1] + fin[1:]) / 2
    m32 = mids.astype(np.float32)
    pts = np.concatenate(
        [
            fin,
            mids,
            np.nextafter(m32, np.float32(np.inf)),
            np.nextafter(m32, np.float32(0)),
            [fin[-1] * 1.5, 3e38, np.inf, np.nan, 0.0, 1e-45],
        ]
    )
    pts = np.concatenate([pts, -pts])
    rng = np.random.default_rng(7)
    x = np.concatenate([pts, rng.standard_normal(N) * fin[-1] / 4])[:N].astype(np.float32)
    y = np.concatenate([mids + mids * 2.0**-40, rng.standard_normal(N) * fin[-1] / 4])[:N]
    k = np.resize(codes, N).astype(np.uint8)
    return x, y, k


def _dev(a: np.ndarray, name: str):
    t = torch.from_numpy(a).cuda()
    if a.dtype == np.uint8 and name.startswith("float8"):
        return t.view(getattr(torch, name))
    return t


@pytest.mark.parametrize("name", NAMES)
def test_cuda_conversions_match_the_interpreter(name):
    f = _kernel(name)
    x, y, k = _inputs(name)
    outs = [np.zeros(N, np.uint8) for _ in range(3)] + [np.zeros(N, np.float32)]
    tirx.compile(f, target="interp")(x, y, k, *outs)
    dev = [_dev(a, name) for a in (x, y, k, *[np.zeros_like(o) for o in outs])]
    tirx.compile(f, target="cuda")(*dev)
    torch.cuda.synchronize()
    got = [d.view(torch.uint8).cpu().numpy() if d.element_size() == 1 else d.cpu().numpy() for d in dev[3:]]
    for what, g, want in zip(("float32 cast", "float64 cast", "vector cast"), got[:3], outs[:3]):
        bad = np.nonzero(g != want)[0]
        src = x if what != "float64 cast" else y
        assert bad.size == 0, (what, [(float(src[j]), int(g[j]), int(want[j])) for j in bad[:8]])
    np.testing.assert_array_equal(got[3], outs[3])  # decoding, NaN == NaN
