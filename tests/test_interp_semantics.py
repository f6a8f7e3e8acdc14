"""Interpreter semantics: integers, floats, control flow, memory, barriers, warps, atomics,
and the errors a GPU would hide (out-of-bounds, races, divergent barriers)."""

from __future__ import annotations

import numpy as np
import pytest

import tirx
import tirx.interp as ti
from tirx.ir import (
    BufferStore,
    Call,
    Cast,
    Div,
    FloorDiv,
    FloorMod,
    GlobalVar,
    Mod,
    Ramp,
    TensorType,
    const,
    prim,
)
from tirx.ir.op import call
from tirx.ir.types import bfloat16, bool_, float16, float32, int32, int64, uint8, uint32
from tirx.surface.builder import IRBuilder, launch_args


def build(params, body, grid=None, block=None, name="k", ret=None):
    b = IRBuilder()
    with b, b.function(name):
        ps = [b.param(n, t) for n, t in params.items()]
        if ret is not None:
            b.set_ret_type(ret)
        if grid is None:
            body(b, *ps)
        else:
            with b.device_entry(*launch_args(grid, block)):
                body(b, *ps)
    return b.get()


def T(shape, dtype, scope="global"):
    return TensorType(shape if isinstance(shape, tuple) else (shape,), dtype, scope)


def tid(axis="x"):
    return call("cuda.thread_idx", axis)


def bid(axis="x"):
    return call("cuda.block_idx", axis)


def ew(op, n, in_t, out_t=None):
    """out[i] = op(A[i], B[i]) over n threads."""
    out_t = out_t or in_t

    def body(b, A, B, C):
        i = b.bind("i", tid())
        C[i] = op(A[i], B[i])

    return ti.compile(build({"A": T(n, in_t), "B": T(n, in_t), "C": T(n, out_t)}, body, 1, n))


# ----------------------------------------------------------------------------- integers
def test_int32_wraparound():
    k = ew(lambda a, b: a + b, 4, int32)
    A = np.array([2**31 - 1, -(2**31), 5, 2**30], np.int32)
    B = np.array([1, -1, -10, 2**30], np.int32)
    C = np.zeros(4, np.int32)
    k(A, B, C)
    np.testing.assert_array_equal(C, [-(2**31), 2**31 - 1, -5, -(2**31)])
    k = ew(lambda a, b: a * b, 2, int32)
    k(np.array([65536, 123456789], np.int32), np.array([65536, 1000], np.int32), C2 := np.zeros(2, np.int32))
    np.testing.assert_array_equal(C2, np.array([0, (123456789 * 1000) % 2**32], np.uint32).view(np.int32))


def test_uint8_wraps():
    k = ew(lambda a, b: a + b, 2, uint8)
    C = np.zeros(2, np.uint8)
    k(np.array([250, 3], np.uint8), np.array([10, 4], np.uint8), C)
    np.testing.assert_array_equal(C, [4, 7])


AS = np.array([7, -7, 7, -7, 0, 9, -9, -8], np.int32)
BS = np.array([2, 2, -2, -2, 3, 3, -4, 3], np.int32)


def test_trunc_vs_floor_division():
    C = np.zeros(8, np.int32)
    ew(lambda a, b: Div(a, b), 8, int32)(AS, BS, C)
    np.testing.assert_array_equal(C, np.trunc(AS / BS).astype(np.int32))
    ew(lambda a, b: Mod(a, b), 8, int32)(AS, BS, C)
    np.testing.assert_array_equal(C, np.fmod(AS, BS))
    ew(lambda a, b: FloorDiv(a, b), 8, int32)(AS, BS, C)
    np.testing.assert_array_equal(C, AS // BS)
    ew(lambda a, b: FloorMod(a, b), 8, int32)(AS, BS, C)
    np.testing.assert_array_equal(C, AS % BS)
    # C identities: a == (a / b) * b + a % b  (trunc)  and  a == (a // b) * b + a % b  (floor)
    assert list(np.fmod(AS, BS)[:4]) == [1, -1, 1, -1]
    assert list((AS % BS)[:4]) == [1, 1, -1, -1]


def test_float_floordiv_floormod():
    A = np.array([7.5, -7.5, 7.5, -7.5], np.float32)
    B = np.array([2.0, 2.0, -2.0, -2.0], np.float32)
    C = np.zeros(4, np.float32)
    ew(lambda a, b: FloorDiv(a, b), 4, float32)(A, B, C)
    np.testing.assert_array_equal(C, np.floor(A / B))
    ew(lambda a, b: FloorMod(a, b), 4, float32)(A, B, C)
    np.testing.assert_array_equal(C, A - np.floor(A / B) * B)
    ew(lambda a, b: Mod(a, b), 4, float32)(A, B, C)
    np.testing.assert_array_equal(C, np.fmod(A, B))


def test_shifts():
    A = np.array([1, -16, -16, 1, 5], np.int32)
    B = np.array([31, 2, 2, 32, 0], np.int32)
    C = np.zeros(5, np.int32)
    ew(lambda a, b: a << b, 5, int32)(A, B, C)
    np.testing.assert_array_equal(C[[0, 1, 4]], [-(2**31), -64, 5])
    assert C[3] == 0  # PTX shl clamps shifts >= 32
    ew(lambda a, b: a >> b, 5, int32)(A, B, C)
    np.testing.assert_array_equal(C[[1, 2]], [-4, -4])  # arithmetic for signed
    U = np.array([0xF0000000, 1, 2, 3, 4], np.uint32)
    V = np.array([4, 0, 1, 1, 1], np.uint32)
    W = np.zeros(5, np.uint32)
    ew(lambda a, b: a >> b, 5, uint32)(U, V, W)
    assert W[0] == 0x0F000000  # logical for unsigned


def test_casts_saturate_and_wrap():
    def body(b, A, I, U8):
        i = b.bind("i", tid())
        I[i] = Cast(int32, A[i])
        U8[i] = Cast(uint8, Cast(int32, A[i]))

    k = ti.compile(build({"A": T(6, float32), "I": T(6, int32), "U8": T(6, uint8)}, body, 1, 6))
    A = np.array([1.9, -1.9, 3e10, -3e10, np.nan, 300.0], np.float32)
    I = np.zeros(6, np.int32)
    U8 = np.zeros(6, np.uint8)
    k(A, I, U8)
    np.testing.assert_array_equal(I, [1, -1, 2**31 - 1, -(2**31), 0, 300])
    assert U8[5] == 300 % 256


# ----------------------------------------------------------------------------- floats
def test_float16_rounds_every_step():
    def body(b, A, B):
        acc = b.alloc("acc", T(1, float16, "local"))
        acc[0] = const(0.0, float16)
        with b.for_("j", 0, 64) as j:
            acc[0] = acc[0] + A[j]
        B[0] = acc[0]

    k = ti.compile(build({"A": T(64, float16), "B": T(1, float16)}, body, 1, 1))
    A = (np.arange(64) * 3.37 + 0.011).astype(np.float16)
    B = np.zeros(1, np.float16)
    k(A, B)
    ref = np.float16(0)
    for x in A:
        ref = np.float16(ref + x)
    assert B[0] == ref
    k2 = ew(lambda a, b: a + b, 1, float16)
    C = np.zeros(1, np.float16)
    k2(np.array([2048], np.float16), np.array([1], np.float16), C)
    assert C[0] == 2048  # 2049 is not a float16


def bf16_bits(x):
    return np.asarray(x, np.float32).view(np.uint32).__rshift__(16).astype(np.uint16)


def test_bfloat16_rounding():
    k = ew(lambda a, b: a + b, 3, bfloat16)
    one = bf16_bits([1.0, 1.0, 256.0])
    small = np.array([np.float32(2**-8), np.float32(3 * 2**-8), np.float32(1.0)], np.float32)
    # 2^-8 and 3*2^-8 are exact in bfloat16; the sums are ties that round to even
    C = np.zeros(3, np.uint16)
    k(one, bf16_bits(small), C)
    got = (C.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(got, [1.0, 1.0 + 2**-6, 256.0])
    from tirx.ops.semantics.dtypes import f32_to_bf16_bits

    assert f32_to_bf16_bits(np.array([3.14159265], np.float32))[0] == 0x4049
    assert f32_to_bf16_bits(np.array([np.nan], np.float32))[0] & 0x7F80 == 0x7F80
    with pytest.raises(TypeError, match="bfloat16"):
        k(np.zeros(3, np.float32), one, C)


def test_math_ops():
    names = ["exp", "log", "sqrt", "tanh", "sigmoid", "floor", "round", "erf"]

    def body(b, A, *outs):
        i = b.bind("i", tid())
        for nm, o in zip(names, outs):
            o[i] = call(nm, A[i])

    params = {"A": T(8, float32)} | {nm: T(8, float32) for nm in names}
    k = ti.compile(build(params, body, 1, 8))
    A = np.array([0.5, 1.5, 2.5, -0.5, 3.0, 0.1, 7.2, 10.0], np.float32)
    outs = [np.zeros(8, np.float32) for _ in names]
    k(np.abs(A) + np.float32(0.01), *outs)
    x = np.abs(A) + np.float32(0.01)
    np.testing.assert_allclose(outs[0], np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(outs[2], np.sqrt(x), rtol=1e-6)
    np.testing.assert_allclose(outs[4], 1 / (1 + np.exp(-x)), rtol=1e-6)
    k(A, *outs)
    np.testing.assert_array_equal(outs[6], [0.0, 2.0, 2.0, -0.0, 3.0, 0.0, 7.0, 10.0])  # ties to even (rintf)
    assert np.signbit(outs[6][3])
    import math

    np.testing.assert_allclose(outs[7], [math.erf(v) for v in A], rtol=1e-6)


# ----------------------------------------------------------------------------- control flow
def test_divergent_while_collatz():
    def body(b, A, S):
        i = b.bind("i", bid() * 64 + tid())
        x = b.alloc("x", T(1, int32, "local"))
        s = b.alloc("s", T(1, int32, "local"))
        x[0] = A[i]
        s[0] = 0
        with b.while_(x[0].ne(1)):
            with b.if_(x[0].eq(x[0] // 2 * 2)):
                x[0] = x[0] // 2
            with b.else_():
                x[0] = x[0] * 3 + 1
            s[0] = s[0] + 1
        S[i] = s[0]

    k = ti.compile(build({"A": T(256, int32), "S": T(256, int32)}, body, 4, 64))
    A = np.arange(1, 257, dtype=np.int32)
    S = np.zeros(256, np.int32)
    k(A, S)

    def steps(n):
        c = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            c += 1
        return c

    assert list(S) == [steps(int(n)) for n in A]


def test_divergent_for_extent_and_return():
    def body(b, O):
        t = b.bind("t", tid())
        acc = b.alloc("acc", T(1, int32, "local"))
        acc[0] = 0
        with b.for_("j", 0, t) as j:
            with b.if_(j.eq(10)):
                O[t] = -1
                b.return_()
            acc[0] = acc[0] + j
        O[t] = acc[0]

    k = ti.compile(build({"O": T(32, int32)}, body, 1, 32))
    O = np.zeros(32, np.int32)
    k(O)
    ref = [sum(range(t)) if t <= 10 else -1 for t in range(32)]
    assert list(O) == ref


def test_host_scalar_return_and_recursion():
    b = IRBuilder()
    with b, b.module("M"):
        with b.function("fact", private=True):
            n = b.param("n", int64)
            b.set_ret_type(int64)
            with b.if_(n <= 1):
                b.return_(const(1, int64))
            b.return_(n * Call(GlobalVar("fact"), (n - 1,), int64))
        with b.function("main"):
            x = b.param("x", int64)
            b.set_ret_type(int64)
            b.return_(Call(GlobalVar("fact"), (x,), int64) + 1)
    mk = ti.compile(b.get())
    assert mk.fact(10) == 3628800
    assert mk.main(5) == 121
    assert mk(5) == 121  # the only public function
    with pytest.raises(TypeError, match="integer"):
        mk.fact(2.5)
    with pytest.raises(ValueError, match="does not fit"):
        mk.fact(2**70)


def test_local_memory_is_per_thread():
    def body(b, O):
        t = b.bind("t", tid())
        loc = b.alloc("loc", T(4, int32, "local"))
        with b.for_("j", 0, 4) as j:
            loc[j] = t * 10 + j
        O[t] = loc[3] + loc[t % 4]

    k = ti.compile(build({"O": T(64, int32)}, body, 1, 64))
    O = np.zeros(64, np.int32)
    k(O)
    t = np.arange(64)
    np.testing.assert_array_equal(O, t * 10 + 3 + t * 10 + t % 4)


def test_vector_ramp_load_store():
    def body(b, A, B):
        t = b.bind("t", tid())
        v = A.vload(t * 4, 4)
        b.emit(BufferStore(B, v + v, (Ramp(t * 4, const(1), 4),)))

    k = ti.compile(build({"A": T(32, float16), "B": T(32, float16)}, body, 1, 8))
    A = np.arange(32).astype(np.float16)
    B = np.zeros(32, np.float16)
    k(A, B)
    np.testing.assert_array_equal(B, A + A)


# ----------------------------------------------------------------------------- memory errors
def test_out_of_bounds_load_names_buffer_index_thread():
    def body(b, A, B):
        i = b.bind("i", bid() * 32 + tid())
        B[i] = A[i + 1]

    k = ti.compile(build({"A": T(64, float32), "B": T(64, float32)}, body, 2, 32))
    with pytest.raises(ti.OutOfBoundsError) as ei:
        k(np.zeros(64, np.float32), np.zeros(64, np.float32))
    msg = str(ei.value)
    assert "A" in msg and "[64]" in msg and "block (1, 0, 0), thread (31, 0, 0)" in msg
    assert isinstance(ei.value, IndexError)


def test_out_of_bounds_store_and_guard():
    def body(b, A):
        i = b.bind("i", tid())
        with b.if_(i < 10):
            A[i] = const(1.0, float32)
        A[i - 1] = const(2.0, float32)

    k = ti.compile(build({"A": T(16, float32)}, body, 1, 16))
    with pytest.raises(ti.OutOfBoundsError, match=r"A .*\[-1\].*thread \(0, 0, 0\)"):
        k(np.zeros(16, np.float32))

    def body2(b, A, B):
        i = b.bind("i", tid())
        with b.if_(i < 16):
            B[i] = A[i]

    k = ti.compile(build({"A": T(16, float32), "B": T(16, float32)}, body2, 1, 64))
    A = np.arange(16, dtype=np.float32)
    B = np.zeros(16, np.float32)
    k(A, B)  # inactive lanes never touch memory
    np.testing.assert_array_equal(A, B)


def test_out_of_bounds_2d_per_dimension():
    def body(b, A, O):
        r = b.bind("r", tid())
        O[r] = A[r, 64]  # would alias A[r+1, 0] on a GPU

    k = ti.compile(build({"A": T((4, 64), int32), "O": T(4, int32)}, body, 1, 2))
    with pytest.raises(ti.OutOfBoundsError, match=r"\[0, 64\]"):
        k(np.zeros((4, 64), np.int32), np.zeros(4, np.int32))


def _smem_kernel(sync: bool, write_first=True, same_slot=False):
    def body(b, A, O):
        t = b.bind("t", tid())
        s = b.alloc("s", T(64, float32, "shared"))
        if write_first:
            s[0 if same_slot else t] = A[t]
        if sync:
            b.evaluate(call("cuda.cta_sync"))
        O[t] = s[(t + 1) % 64]

    return build({"A": T(64, float32), "O": T(64, float32)}, body, 2, 64)


def test_barrier_makes_neighbour_read_correct():
    k = ti.compile(_smem_kernel(True))
    A = np.arange(64, dtype=np.float32)
    O = np.zeros(64, np.float32)
    k(A, O)
    np.testing.assert_array_equal(O, np.roll(A, -1))


def test_missing_barrier_is_a_race():
    k = ti.compile(_smem_kernel(False))
    with pytest.raises(
        ti.RaceError, match=r"missing barrier.*s at index \(1,\).*thread \(0, 0, 0\).*thread \(1, 0, 0\)"
    ):
        k(np.zeros(64, np.float32), np.zeros(64, np.float32))
    k = ti.compile(_smem_kernel(False), check_races=False)
    k(np.zeros(64, np.float32), np.zeros(64, np.float32))  # runs when switched off


def test_uninitialized_shared_read():
    k = ti.compile(_smem_kernel(True, write_first=False))
    with pytest.raises(ti.RaceError, match="no thread wrote"):
        k(np.zeros(64, np.float32), np.zeros(64, np.float32))


def test_write_write_race():
    k = ti.compile(_smem_kernel(True, same_slot=True))
    with pytest.raises(ti.RaceError, match="write-write"):
        k(np.arange(64, dtype=np.float32), np.zeros(64, np.float32))


def test_write_after_read_race():
    def body(b, A, O):
        t = b.bind("t", tid())
        s = b.alloc("s", T(64, float32, "shared"))
        s[t] = A[t]
        b.evaluate(call("cuda.cta_sync"))
        x = b.bind("x", s[(t + 1) % 64])
        s[t] = x  # thread t-1 read s[t] in this phase
        O[t] = x

    k = ti.compile(build({"A": T(64, float32), "O": T(64, float32)}, body, 1, 64))
    with pytest.raises(ti.RaceError, match=r"after .* read it"):
        k(np.arange(64, dtype=np.float32), np.zeros(64, np.float32))


def test_divergent_barrier():
    def body(b, O):
        t = b.bind("t", tid())
        with b.if_(t < 16):
            b.evaluate(call("cuda.cta_sync"))
        O[t] = t

    k = ti.compile(build({"O": T(32, int32)}, body, 1, 32))
    with pytest.raises(ti.BarrierError, match="16 of the 32"):
        k(np.zeros(32, np.int32))


def test_shared_memory_is_per_block_across_chunks():
    from tirx.testing.compat_kernels import reduce_smem_tree

    A = np.random.default_rng(1).standard_normal(65536).astype(np.float32)
    ref = np.zeros(256, np.float32)
    ti.compile(reduce_smem_tree())(A, ref)
    out = np.zeros(256, np.float32)
    ti.compile(reduce_smem_tree(), max_lanes=1000)(A, out)  # 3 blocks per chunk
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_allclose(out, A.reshape(256, 256).sum(1), rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------- warps
@pytest.mark.parametrize(
    "op,ref",
    [
        ("cuda.shfl_xor_sync", lambda v, lane: v[(lane ^ 5)]),
        ("cuda.shfl_down_sync", lambda v, lane: np.where(lane % 32 + 5 < 32, v[np.minimum(lane + 5, 63)], v)),
        ("cuda.shfl_up_sync", lambda v, lane: np.where(lane % 32 >= 5, v[np.maximum(lane - 5, 0)], v)),
        ("cuda.shfl_sync", lambda v, lane: v[lane - lane % 32 + 5]),
    ],
)
def test_shuffles(op, ref):
    def body(b, A, O):
        t = b.bind("t", tid())
        O[t] = call(op, A[t], 5)

    k = ti.compile(build({"A": T(64, float32), "O": T(64, float32)}, body, 1, 64))
    A = np.random.default_rng(2).standard_normal(64).astype(np.float32)
    O = np.zeros(64, np.float32)
    k(A, O)
    lane = np.arange(64)
    np.testing.assert_array_equal(O, ref(A, lane))


def test_warp_reductions():
    def body(b, A, S, M, N):
        t = b.bind("t", bid() * 64 + tid())
        S[t] = call("cuda.warp_sum", A[t])
        M[t] = call("cuda.warp_max", A[t])
        N[t] = call("cuda.warp_min", A[t])

    k = ti.compile(build({n: T(128, int32) for n in "ASMN"}, body, 2, 64))
    A = np.random.default_rng(3).integers(-100, 100, 128).astype(np.int32)
    S, M, N = (np.zeros(128, np.int32) for _ in range(3))
    k(A, S, M, N)
    w = A.reshape(4, 32)
    np.testing.assert_array_equal(S, np.repeat(w.sum(1), 32))
    np.testing.assert_array_equal(M, np.repeat(w.max(1), 32))
    np.testing.assert_array_equal(N, np.repeat(w.min(1), 32))


def test_shuffle_from_inactive_lane_is_an_error():
    def body(b, O):
        t = b.bind("t", tid())
        with b.if_(t < 8):
            O[t] = call("cuda.shfl_xor_sync", t, 16)

    k = ti.compile(build({"O": T(32, int32)}, body, 1, 32))
    with pytest.raises(ti.InterpError, match="not active"):
        k(np.zeros(32, np.int32))


# ----------------------------------------------------------------------------- atomics
def test_atomic_add_counter_returns_unique_old_values():
    def body(b, C, Old):
        i = b.bind("i", bid() * 128 + tid())
        Old[i] = call("cuda.atomic_add", C.ptr_to([0]), 1)

    k = ti.compile(build({"C": T(1, int32), "Old": T(512, int32)}, body, 4, 128))
    C = np.array([100], np.int32)
    Old = np.zeros(512, np.int32)
    k(C, Old)
    assert C[0] == 612
    assert sorted(Old) == list(range(100, 612))


def test_atomic_histogram_float_and_max_cas():
    def body(b, X, H, Mx, Cs):
        i = b.bind("i", bid() * 64 + tid())
        b.evaluate(call("cuda.atomic_add", H.ptr_to([X[i] % 8]), const(0.5, float32)))
        b.evaluate(call("cuda.atomic_max", Mx.ptr_to([0]), X[i]))
        b.evaluate(call("cuda.atomic_cas", Cs.ptr_to([X[i] % 4]), const(0), i + 1))

    k = ti.compile(
        build({"X": T(256, int32), "H": T(8, float32), "Mx": T(1, int32), "Cs": T(4, int32)}, body, 4, 64)
    )
    X = np.random.default_rng(4).integers(0, 1000, 256).astype(np.int32)
    H = np.zeros(8, np.float32)
    Mx = np.array([-5], np.int32)
    Cs = np.zeros(4, np.int32)
    k(X, H, Mx, Cs)
    np.testing.assert_array_equal(H, np.bincount(X % 8, minlength=8) * 0.5)
    assert Mx[0] == X.max()
    for r in range(4):
        first = np.flatnonzero(r == X % 4)
        assert Cs[r] == (first[0] + 1 if first.size else 0)


def test_atomic_on_shared_memory():
    def body(b, X, H):
        t = b.bind("t", tid())
        s = b.alloc("s", T(4, int32, "shared"))
        with b.if_(t < 4):
            s[t] = 0
        b.evaluate(call("cuda.cta_sync"))
        b.evaluate(call("cuda.atomic_add", s.ptr_to([X[bid() * 128 + t] % 4]), 1))
        b.evaluate(call("cuda.cta_sync"))
        with b.if_(t < 4):
            H[bid() * 4 + t] = s[t]

    k = ti.compile(build({"X": T(256, int32), "H": T(8, int32)}, body, 2, 128))
    X = np.random.default_rng(5).integers(0, 100, 256).astype(np.int32)
    H = np.zeros(8, np.int32)
    k(X, H)
    ref = np.concatenate([np.bincount(X[:128] % 4, minlength=4), np.bincount(X[128:] % 4, minlength=4)])
    np.testing.assert_array_equal(H, ref)


# ----------------------------------------------------------------------------- API
def test_argument_checks():
    def body(b, A, n):
        i = b.bind("i", tid())
        with b.if_(i < n):
            A[i] = Cast(float32, i)

    k = ti.compile(build({"A": T(8, float32), "n": int32}, body, 1, 8))
    A = np.zeros(8, np.float32)
    k(A, 5)
    np.testing.assert_array_equal(A, [0, 1, 2, 3, 4, 0, 0, 0])
    with pytest.raises(TypeError, match="2 argument"):
        k(A)
    with pytest.raises(TypeError, match="parameter A must have dtype float32"):
        k(np.zeros(8, np.float64), 5)
    with pytest.raises(ValueError, match="parameter A dimension 0 is 9, expected 8"):
        k(np.zeros(9, np.float32), 5)
    with pytest.raises(TypeError, match="parameter n"):
        k(A, 2.5)
    with pytest.raises(TypeError, match="parameter A takes an array"):
        k([0.0] * 8, 5)
    with pytest.raises(TypeError, match="unknown option"):
        ti.compile(build({"A": T(8, float32), "n": int32}, body, 1, 8), bogus=1)


def test_non_contiguous_array_is_written_back():
    def body(b, A):
        i = b.bind("i", tid())
        A[i] = A[i] * const(2.0, float32)

    k = ti.compile(build({"A": T(8, float32)}, body, 1, 8))
    base = np.arange(16, dtype=np.float32)
    view = base[::2]
    k(view)
    np.testing.assert_array_equal(base[::2], np.arange(0, 16, 2) * 2)
    np.testing.assert_array_equal(base[1::2], np.arange(1, 16, 2))


def test_unsupported_and_unhandled_ops_are_clear():
    def body(b, O):
        b.evaluate(call("ptx.asm", "nop;", ty=prim("int32")))

    with pytest.raises(tirx.OpError, match=r"interpreter cannot run T\.ptx\.asm"):
        ti.compile(build({"O": T(1, int32)}, body, 1, 1))
    from tirx.ir.op import declare, lookup

    op = lookup("test_interp.no_handler") or declare("test_interp.no_handler", "x", "arg0")

    def body2(b, O):
        O[0] = op(O[0])

    with pytest.raises(tirx.OpError, match=r"test_interp\.no_handler.*interp"):
        ti.compile(build({"O": T(1, int32)}, body2, 1, 1))


def test_device_op_on_host_is_an_error():
    def body(b, O):
        O[0] = tid()

    k = ti.compile(build({"O": T(1, int32)}, body))
    with pytest.raises(ti.InterpError, match="outside a device entry"):
        k(np.zeros(1, np.int32))


def test_tirx_compile_dispatch():
    try:
        from tirx import target  # noqa: F401
    except ImportError:
        pytest.skip("tirx.target is not written yet")
    from tirx.testing.compat_kernels import ew_add_f16_dyn

    k = tirx.compile(ew_add_f16_dyn(), target="interp")
    a = np.arange(10, dtype=np.float16)
    b = np.empty_like(a)
    k(a, b)
    np.testing.assert_array_equal(b, np.arange(2, 12, dtype=np.float16))


_ = (bool_, int64)


def test_typed_ptx_ops():
    from tirx.ir.op import lookup

    if lookup("ptx.elect_sync") is None or lookup("ptx.mbarrier_init") is None:
        pytest.skip("typed PTX ops not declared")

    def body(b, O):
        t = b.bind("t", tid())
        b.evaluate(call("ptx.fence_proxy_async"))
        O[t] = Cast(int32, call("ptx.elect_sync"))

    k = ti.compile(build({"O": T(64, int32)}, body, 1, 64))
    O = np.zeros(64, np.int32)
    k(O)
    assert list(np.flatnonzero(O)) == [0, 32]

    def body2(b, O):
        s = b.alloc("s", T(1, prim("uint64"), "shared"))
        b.evaluate(call("ptx.mbarrier_init", s.ptr_to([0]), 1))

    with pytest.raises(tirx.OpError, match=r"cannot run T\.ptx\.mbarrier_init"):
        ti.compile(build({"O": T(1, int32)}, body2, 1, 1))


def test_cpu_torch_tensors_including_bfloat16():
    torch = pytest.importorskip("torch")
    k = ew(lambda a, b: a + b, 3, bfloat16)
    a = torch.tensor([1.0, 1.0, 256.0], dtype=torch.bfloat16)
    b = torch.tensor([2**-8, 3 * 2**-8, 1.0], dtype=torch.bfloat16)
    c = torch.zeros(3, dtype=torch.bfloat16)
    k(a, b, c)
    assert torch.equal(c, a + b)  # torch rounds bfloat16 adds the same way
    k2 = ew(lambda a, b: a * b, 4, float32)
    x = torch.arange(8, dtype=torch.float32)[::2]  # non-contiguous
    y = torch.full((4,), 3.0)
    z = torch.zeros(8)[::2]
    k2(x, y, z)
    assert z.tolist() == [0.0, 6.0, 12.0, 18.0]
    with pytest.raises(TypeError, match="parameter A must have dtype"):
        k2(x.double(), y, z)


def test_dynamic_shared_memory_views():
    def body(b, A, O, Bytes):
        t = b.bind("t", tid())
        raw = b.alloc("raw", T(512, uint8, "shared.dyn"))
        F = b.decl("F", TensorType((64,), float32, "shared.dyn"), raw.data)
        G = b.decl("G", TensorType((64,), float32, "shared.dyn", elem_offset=64), raw.data)
        F[t] = A[t]
        G[t] = A[t] * const(2.0, float32)
        b.evaluate(call("cuda.cta_sync"))
        O[t] = F[63 - t] + G[t]
        Bytes[t] = raw[t * 4 + 3]  # the float bits, read back through the byte view

    k = ti.compile(build({"A": T(64, float32), "O": T(64, float32), "Bytes": T(64, uint8)}, body, 2, 64))
    A = np.arange(64, dtype=np.float32) - 7
    O = np.zeros(64, np.float32)
    Bytes = np.zeros(64, np.uint8)
    k(A, O, Bytes)
    np.testing.assert_array_equal(O, A[::-1] + A * 2)
    np.testing.assert_array_equal(Bytes, A.view(np.uint8).reshape(64, 4)[:, 3])


@pytest.mark.parametrize("base,fmax", [("float8_e4m3fn", 448.0), ("float8_e5m2", 57344.0)])
def test_float8_rounds_and_saturates(base, fmax):
    t8 = prim(base)

    def body(b, A, Q, R):
        i = b.bind("i", tid())
        Q[i] = Cast(t8, A[i])
        R[i] = Cast(float32, Q[i] + Q[i])

    k = ti.compile(build({"A": T(6, float32), "Q": T(6, t8), "R": T(6, float32)}, body, 1, 6))
    A = np.array([1.0625, 1.1875, 1e6, -np.inf, np.nan, -0.0], np.float32)
    Q = np.zeros(6, np.uint8)
    R = np.zeros(6, np.float32)
    k(A, Q, R)
    from tirx.ops.semantics.dtypes import f8_from_bits

    got = f8_from_bits(Q, base)
    np.testing.assert_array_equal(got[:4], [1.0, 1.25, fmax, -fmax])  # ties to even, saturating
    assert np.isnan(got[4]) and Q[5] == 0x80
    np.testing.assert_array_equal(R[:2], [2.0, 2.5])
    assert R[2] == fmax  # 2 * max saturates back to max


def test_same_value_writes_by_two_threads_are_a_race():
    def body(b, O):
        t = b.bind("t", tid())
        s = b.alloc("s", T(4, int32, "shared"))
        s[0] = 7  # every thread, one address
        b.evaluate(call("cuda.cta_sync"))
        O[t] = s[0]

    k = ti.compile(build({"O": T(32, int32)}, body, 1, 32))
    with pytest.raises(ti.RaceError, match=r"write-write race.*s at index \(0,\).*same value"):
        k(np.zeros(32, np.int32))
    O = np.zeros(32, np.int32)
    ti.compile(build({"O": T(32, int32)}, body, 1, 32), check_races=False)(O)
    assert (O == 7).all()


def test_global_write_conflict_in_one_statement():
    def body(b, A, O):
        t = b.bind("t", tid())
        O[t // 2] = A[t]  # threads 2k and 2k+1 write one element

    k = ti.compile(build({"A": T(8, float32), "O": T(4, float32)}, body, 1, 8))
    with pytest.raises(
        ti.RaceError, match=r"global buffer O at element 0 .*thread \(0, 0, 0\).*thread \(1, 0, 0\)"
    ):
        k(np.arange(8, dtype=np.float32), np.zeros(4, np.float32))
    O = np.zeros(4, np.float32)
    k(np.ones(8, np.float32), O)  # the same value: benign in global memory
    ti.compile(build({"A": T(8, float32), "O": T(4, float32)}, body, 1, 8), check_races=False)(
        np.arange(8, dtype=np.float32), O
    )


def test_vector_index_beside_a_per_thread_row():
    """``A[row, T.Ramp(c, 1, 4)]`` with ``row`` from the thread index: the row spans the lanes
    (the interpreter broadcast a (threads,) row index against (threads, lanes) and failed)."""
    from tirx.script import tirx as S

    @S.function
    def rows(A: S.Tensor((8, 16), "int32"), B: S.Tensor((8, 16), "int32")):
        S.device_entry(launch=S.cuda.LaunchConfig(grid=1, block=32))
        tx = S.cuda.thread_idx("x")
        row = tx // 4
        c = (tx % 4) * 4
        B[row, S.Ramp(c, 1, 4)] = A[row, S.Ramp(c, 1, 4)] * 2 + row

    A = np.arange(128, dtype=np.int32).reshape(8, 16)
    B = np.zeros_like(A)
    tirx.compile(rows, target="interp")(A, B)
    np.testing.assert_array_equal(B, A * 2 + np.arange(8)[:, None])
