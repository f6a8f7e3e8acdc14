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


# ------------------------------------------------------------------ constant powers of two
# floordiv / floormod by 2**k of every signed width, MIN included: the interpreter against
# Python's floor division, and the CUDA build against the interpreter (on a GPU). Both go
# through the floor helpers: writing them as a shift and a mask (exact too) took 3-7 % of the
# SASS instructions out of the attention kernels but moved their speed by up to -3.4 %
# (ptxas's scheduling; docs/benchmarks.md), so the CUDA backend keeps the helpers.
POW2_TYPES = ("int8", "int16", "int32", "int64")


def _pow2_kernel(dt: str, shifts: tuple):
    from tirx.ir import FloorDiv, FloorMod, const
    from tirx.ir.op import call
    from tirx.ir.types import TensorType, prim
    from tirx.surface.builder import IRBuilder, launch_args

    assert all(1 <= s < np.iinfo(dt).bits - 1 for s in shifts)
    t = prim(dt)
    b = IRBuilder()
    with b, b.function("pow2"):
        A = b.param("A", TensorType((32,), t))
        O = b.param("O", TensorType((2 * len(shifts), 32), t))
        with b.device_entry(*launch_args(1, 32)):
            i = b.bind("i", call("cuda.thread_idx", "x"))
            for j, s in enumerate(shifts):
                O[2 * j, i] = FloorDiv(A[i], const(1 << s, t))
                O[2 * j + 1, i] = FloorMod(A[i], const(1 << s, t))
    return b.get()


def _pow2_shifts(dt: str) -> tuple:
    return (1, 2, 5) + ((13, 30, 40) if dt == "int64" else (13,) if dt != "int8" else (6,))


def _pow2_inputs(dt: str) -> np.ndarray:
    info = np.iinfo(dt)
    rng = np.random.default_rng(7)
    edge = [info.min, info.min + 1, info.max, -1, 0, 1, -2, 2, -3, 3, -64, 63, -65, 65]
    rest = rng.integers(info.min, info.max, 32 - len(edge), dtype=dt, endpoint=True)
    return np.concatenate([np.array(edge, dt), rest])


@pytest.mark.parametrize("dt", POW2_TYPES)
def test_pow2_floor_ops_in_the_interpreter(dt):
    a = _pow2_inputs(dt)
    o = np.zeros((2 * len(_pow2_shifts(dt)), 32), dt)
    tirx.compile(_pow2_kernel(dt, _pow2_shifts(dt)), target="interp")(a, o)
    for j, s in enumerate(_pow2_shifts(dt)):
        np.testing.assert_array_equal(o[2 * j], np.array([x // (1 << s) for x in a.tolist()], dt))
        np.testing.assert_array_equal(o[2 * j + 1], np.array([x % (1 << s) for x in a.tolist()], dt))
    src = generate(_pow2_kernel(dt, _pow2_shifts(dt))).text
    assert "tirx_floordiv<" in src and "tirx_floormod<" in src  # the helpers, not shifts


@pytest.mark.gpu
@pytest.mark.parametrize("dt", POW2_TYPES)
def test_gpu_pow2_floor_ops_match_the_interpreter(dt):
    from gpu_util import require_gpu

    torch = require_gpu()
    shifts = _pow2_shifts(dt)
    a = _pow2_inputs(dt)
    want = np.zeros((2 * len(shifts), 32), dt)
    tirx.compile(_pow2_kernel(dt, shifts), target="interp")(a, want)
    ta = torch.from_numpy(a).cuda()
    to = torch.zeros((2 * len(shifts), 32), dtype=getattr(torch, dt), device="cuda")
    tirx.compile(_pow2_kernel(dt, shifts), target="cuda")(ta, to)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(to.cpu().numpy(), want)


@T.function
def _guarded(A: T.Tensor((16,), "int32"), B: T.Tensor((16,), "int32"), O: T.Tensor((4, 16), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=16))
    i = T.cuda.thread_idx("x")
    O[0, i] = T.Select(B[i] != 0, T.floordiv(A[i], B[i]), -7)
    O[1, i] = T.if_then_else(B[i] == 0, -7, T.truncmod(A[i], B[i]))
    if B[i] != 0:
        O[2, i] = T.truncdiv(A[i], B[i])
    O[3, i] = T.floormod(A[i], B[i] + T.int32(B[i] == 0))


@pytest.mark.parametrize("dt", ["int8", "int32", "uint16", "int64", "uint64"])
@pytest.mark.parametrize("op", range(4))
def test_division_by_zero_is_reported_not_invented(dt, op):
    # undefined in CUDA C++, and the GPU's value depends on the width and on NVCC's expansion
    # (an H100: int32 x / 0 = -1 and x % 0 = -1, int8 x % 0 = x, int64 small x / 0 = 2**32 - 1):
    # the interpreter names the operation and the thread instead of giving 0
    a = np.arange(1, 17).astype(dt)
    b = np.ones(16, dt)
    b[5] = 0
    k = tirx.compile(_kernel(dt), target="interp")
    with pytest.raises(
        tirx.interp.errors.DivisionByZeroError,
        match=rf"T\.{('Div', 'truncmod', 'floordiv', 'floormod')[op]}.* thread \(5, 0, 0\)",
    ):
        k(a, b, np.zeros((4, 16), dt)) if op == 0 else _one_op(dt, op)(a, b, np.zeros(16, dt))


def _one_op(dt: str, op: int):
    name = OPS[op]

    @T.function
    def k(A: T.Tensor((16,), dt), B: T.Tensor((16,), dt), O: T.Tensor((16,), dt)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=16))
        i = T.cuda.thread_idx("x")
        O[i] = getattr(T, name)(A[i], B[i])

    return tirx.compile(k, target="interp")


def test_division_guarded_against_zero_runs():
    # a divisor checked first (T.Select, T.if_then_else, an if, a zero made one) is no error
    a = np.arange(-8, 8, dtype=np.int32)
    b = np.array([0, 3] * 8, dtype=np.int32)
    o = np.zeros((4, 16), np.int32)
    tirx.compile(_guarded, target="interp")(a, b, o)
    nz = b != 0
    np.testing.assert_array_equal(o[0], np.where(nz, a // np.where(nz, b, 1), -7))
    np.testing.assert_array_equal(o[1], np.where(nz, np.fmod(a, np.where(nz, b, 1)), -7))
    np.testing.assert_array_equal(o[2][nz], np.trunc(a[nz] / b[nz]).astype(np.int32))
    np.testing.assert_array_equal(o[3], a % np.where(nz, b, 1))
