"""Interpreter semantics that the generated GPU differential tests (tests/test_ops_generated_gpu.py,
H200, 2026-12-01) found different from CUDA, pinned here on the CPU: shuffles read the low 5
bits of their lane/delta/mask operand (PTX ``shfl``), ``atom.add.f32`` flushes subnormals to
sign-preserving zero, and warp max/min of floats ignore NaN as ``fmaxf``/``fminf`` do (the
CUDA helper used ``y > x ? y : x``, which NaN poisoned)."""

from __future__ import annotations

import numpy as np
import pytest

import tirx
from tirx.script import tirx as T


def _shfl(which):
    @T.function
    def k(A: T.Tensor((64,), T.int32), B: T.Tensor((64,), T.int32), C: T.Tensor((64,), T.int32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
        i = T.cuda.thread_idx("x")
        if T.constexpr(which == "xor"):
            C[i] = T.cuda.shfl_xor_sync(A[i], B[i])
        elif T.constexpr(which == "up"):
            C[i] = T.cuda.shfl_up_sync(A[i], B[i])
        elif T.constexpr(which == "down"):
            C[i] = T.cuda.shfl_down_sync(A[i], B[i])
        else:
            C[i] = T.cuda.shfl_sync(A[i], B[i])

    return k


@pytest.mark.parametrize("which", ["xor", "up", "down", "idx"])
@pytest.mark.parametrize("operand", [1, 33, -31, 2**31 - 1, -(2**31)])
def test_shuffles_read_the_low_5_bits(which, operand):
    A = np.arange(100, 164, dtype=np.int32)
    B = np.full(64, operand, np.int32)
    C = np.zeros(64, np.int32)
    tirx.compile(_shfl(which), target="interp")(A, B, C)
    b = operand & 31
    lane = np.arange(64) % 32
    base = np.arange(64) - lane
    if which == "xor":
        src = lane ^ b
    elif which == "up":
        src = np.where(lane - b >= 0, lane - b, lane)
    elif which == "down":
        src = np.where(lane + b <= 31, lane + b, lane)
    else:
        src = np.full(64, b)
    np.testing.assert_array_equal(C, A[base + src])


def test_float32_atomic_add_flushes_subnormals():
    @T.function
    def k(A: T.Tensor((4,), T.float32), V: T.Tensor((4,), T.float32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=4))
        i = T.cuda.thread_idx("x")
        T.cuda.atomic_add(T.address_of(A[i]), V[i])

    A = np.array([0.0, -0.0, 1e-40, 1.0], np.float32)
    V = np.array([1e-40, 1e-40, 0.0, 1e-40], np.float32)
    tirx.compile(k, target="interp")(A, V)
    np.testing.assert_array_equal(A, [0.0, 0.0, 0.0, 1.0])
    assert not np.signbit(A[:3]).any()


def test_warp_max_of_floats_ignores_nan_in_both_backends():
    @T.function
    def k(A: T.Tensor((32,), T.float32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        i = T.cuda.thread_idx("x")
        A[i] = T.cuda.warp_max(A[i])

    A = np.arange(32, dtype=np.float32)
    A[3], A[7] = np.nan, np.inf
    tirx.compile(k, target="interp")(A)
    np.testing.assert_array_equal(A, np.full(32, np.inf, np.float32))
    from tirx.codegen import generate

    src = generate(k).text
    assert "fmaxf(a, b)" in src and "y > x ? y : x" not in src
