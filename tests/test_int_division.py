"""Signed integer division at its one overflow: ``MIN / -1`` wraps to ``MIN`` and ``MIN % -1``
is 0 in the IR (the interpreter's meaning), while both are undefined in C++ (NVCC folded a
floor division of them to 0: found by the TIRx golden GPU comparison). The CUDA backend guards
the divisor -1 whenever the value ranges cannot exclude the case."""

from __future__ import annotations

import numpy as np
import pytest

import tirx
from tirx.codegen.cuda import generate
from tirx.script import tirx as T

OPS = ("truncdiv", "truncmod", "floordiv", "floormod")


def _kernel(dt: str):
    @T.function
    def k(A: T.Tensor((16,), dt), B: T.Tensor((16,), dt), O: T.Tensor((4, 16), dt)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=16))
        i = T.cuda.thread_idx("x")
        O[0, i] = T.truncdiv(A[i], B[i])
        O[1, i] = T.truncmod(A[i], B[i])
        O[2, i] = T.floordiv(A[i], B[i])
        O[3, i] = T.floormod(A[i], B[i])

    return k


def _inputs(dt: str):
    info = np.iinfo(dt)
    a = np.array(
        [info.min, info.min, info.max, -7, 7, -7, 7, 0, info.min, 5, -5, info.max, -1, 1, info.min, 3], dt
    )
    b = np.array([-1, 1, -1, 2, -2, -2, 2, -1, 2, -1, -1, 1, -1, -1, info.max, info.min], dt)
    return a, b


def _reference(a: np.ndarray, b: np.ndarray, dt: str) -> np.ndarray:
    """Exact integer arithmetic, wrapped to the dtype."""
    bits = np.iinfo(dt).bits
    out = np.zeros((4, len(a)), dt)
    for j, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        vals = (q, x - q * y, x // y, x % y)
        for r, v in enumerate(vals):
            v &= (1 << bits) - 1
            out[r, j] = v - (1 << bits) if v >= 1 << (bits - 1) else v
    return out


@pytest.mark.parametrize("dt", ["int32", "int64"])
def test_interpreter_wraps_min_over_minus_one(dt):
    a, b = _inputs(dt)
    o = np.zeros((4, 16), dt)
    tirx.compile(_kernel(dt), target="interp")(a, b, o)
    np.testing.assert_array_equal(o, _reference(a, b, dt))


@pytest.mark.parametrize("dt", ["int32", "int64"])
def test_cuda_guards_the_divisor_minus_one_unless_ranges_exclude_it(dt):
    src = generate(_kernel(dt)).text
    for name in ("tirx_sdiv", "tirx_smod", "tirx_floordiv", "tirx_floormod"):
        assert f"{name}<" in src, name
    assert "b == T(-1)" in src
    assert tirx.compile(_kernel(dt), target="cuda -arch=sm_90a").cubin  # NVRTC accepts the helpers

    @T.function
    def safe(A: T.Tensor((16,), dt), O: T.Tensor((16,), dt)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=16))
        i = T.cuda.thread_idx("x")
        O[i] = T.truncdiv(A[i], T.cast(i, dt) + 1) + T.truncmod(A[i], T.cast(i, dt) - 20)

    src = generate(safe).text
    assert "tirx_sdiv" not in src and "tirx_smod" not in src  # the divisors are never -1


@pytest.mark.gpu
@pytest.mark.parametrize("dt", ["int32", "int64"])
def test_gpu_matches_the_interpreter(dt):
    from gpu_util import require_gpu

    torch = require_gpu()
    a, b = _inputs(dt)
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    to = torch.zeros((4, 16), dtype=getattr(torch, dt), device="cuda")
    tirx.compile(_kernel(dt), target="cuda")(ta, tb, to)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(to.cpu().numpy(), _reference(a, b, dt))
