"""TIRx's packed conversions and paired float32 arithmetic (tirx/ops/cuda_convert.py): the
interpreter against numpy written independently here, printing/round-trip, the generated
CUDA through NVRTC, and the errors for misuse. The GPU side is tests/test_cuda_parity_gpu.py."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
from tirx.codegen import generate
from tirx.script import tirx as T


@T.function
def convert_kernel(A: T.Tensor((8,), T.float32), B: T.Tensor((8,), T.float16), C: T.Tensor((8,), T.float32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    T.cuda.float8tohalf8(T.address_of(A[0]), T.address_of(B[0]))
    T.cuda.half8tofloat8(T.address_of(B[0]), T.address_of(C[0]))


@T.function
def float2_kernel(A: T.Tensor((8,), T.float32), B: T.Tensor((2,), T.float16)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    T.cuda.float22half2(T.address_of(B[0]), T.address_of(A[2]))


@T.function
def pair_kernel(X: T.Tensor((64,), T.uint64), Y: T.Tensor((64,), T.uint64), S: T.Tensor((64,), T.uint64),
                P: T.Tensor((64,), T.uint64)):  # fmt: skip
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    i = T.cuda.thread_idx("x")
    S[i] = T.cuda.fadd2_rn(X[i], Y[i])
    P[i] = T.cuda.fmul2_rn(X[i], Y[i])


def _half_ref(x: float) -> int:
    """float -> IEEE half bits, nearest even, via Python's struct ('e' rounds correctly)."""
    if np.isnan(x):
        return 0x7FFF
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:
        return 0x7C00 if x > 0 else 0xFC00


def _pack(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return (y.astype(np.float32).view(np.uint32).astype(np.uint64) << np.uint64(32)) | x.astype(
        np.float32
    ).view(np.uint32).astype(np.uint64)


EDGE = np.array([0.0, -0.0, 1.0, 65504.0, 65520.0, 1e-8, 6.1e-5, np.inf, -np.inf, np.nan, 0.1, -3.3333],
                dtype=np.float32)  # fmt: skip


def test_round_trip_and_print():
    for f in (convert_kernel, float2_kernel, pair_kernel):
        text = tirx.dumps(f)
        tirx.assert_structural_equal(tirx.loads(text), f)
        assert tirx.dumps(tirx.loads(text)) == text
    assert "T.cuda.float8tohalf8(T.address_of(A[0]), T.address_of(B[0]))" in tirx.dumps(convert_kernel)


@given(st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True), min_size=8, max_size=8))
@settings(max_examples=25, deadline=None)
def test_float8tohalf8_rounds_to_nearest_even_and_half8tofloat8_is_exact(vals):
    k = tirx.compile(convert_kernel, target="interp")
    A = np.array(vals, dtype=np.float32)
    B = np.zeros(8, np.float16)
    C = np.zeros(8, np.float32)
    k(A, B, C)
    got = B.view(np.uint16)
    want = [_half_ref(float(v)) for v in A]
    assert [int(g) for g in got] == want
    np.testing.assert_array_equal(C, B.astype(np.float32))  # widening is exact


def test_float22half2_converts_two_from_src_into_dst():
    k = tirx.compile(float2_kernel, target="interp")
    A = np.array([9, 9, 1.5, 65520.0, 9, 9, 9, 9], np.float32)
    B = np.zeros(2, np.float16)
    k(A, B)
    assert B[0] == np.float16(1.5) and np.isinf(B[1])  # 65520 rounds up to inf


@given(
    st.lists(st.floats(width=32), min_size=4, max_size=4),
    st.lists(st.floats(width=32), min_size=4, max_size=4),
)
@settings(max_examples=25, deadline=None)
def test_fadd2_fmul2_round_each_half_like_one_float32_op(xs, ys):
    xs = np.resize(np.array(xs, np.float32), 64)
    ys = np.resize(np.array(ys, np.float32), 64)
    X, Y = _pack(xs[:64], xs[::-1][:64]), _pack(ys, ys[::-1])
    S = np.zeros(64, np.uint64)
    P = np.zeros(64, np.uint64)
    tirx.compile(pair_kernel, target="interp")(X, Y, S, P)
    for name, out, fn in (("add", S, np.add), ("mul", P, np.multiply)):
        for half, (a, b) in enumerate(((xs, ys), (xs[::-1], ys[::-1]))):
            with np.errstate(all="ignore"):
                ref = fn(a.astype(np.float64), b.astype(np.float64)).astype(
                    np.float32
                )  # exact then one rounding
            got = ((out >> np.uint64(32 * half)) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
            nan = np.isnan(ref)
            assert np.array_equal(np.isnan(got), nan), name
            np.testing.assert_array_equal(got[~nan], ref[~nan], err_msg=name)
            bits = got.view(np.uint32)[nan]
            assert (bits == 0x7FFFFFFF).all()  # the GPU's canonical NaN


def test_generated_cuda_compiles_with_nvrtc():
    pytest.importorskip("cuda.bindings.nvrtc")
    from tirx.runtime.nvrtc import compile_source

    for f in (convert_kernel, float2_kernel, pair_kernel):
        src = generate(f).text
        for arch in ("sm_90a", "sm_100a"):  # the sm_100 path uses __fadd2_rn / __fmul2_rn
            assert compile_source(src, arch).cubin
    ptx = compile_source(generate(pair_kernel).text, "sm_100a").ptx
    assert "add.rn.f32x2" in ptx and "mul.rn.f32x2" in ptx


def test_misuse_errors():
    from tirx.ir.op import call

    x = tirx.ir.Var("x", "float32")
    with pytest.raises(TypeError, match="pointer"):
        call("cuda.float22half2", x, x)
    with pytest.raises(TypeError, match="integer"):
        call("cuda.fadd2_rn", x, x)
    u = tirx.ir.Var("u", "uint32")
    with pytest.raises(tirx.DiagnosticError, match="uint64"):

        @T.function
        def bad(A: T.Tensor((4,), T.uint32)):
            T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
            A[0] = T.Cast("uint32", T.cuda.fadd2_rn(A[1], A[2]))

        generate(bad)
    del u
