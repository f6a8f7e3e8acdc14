"""T.cuda builtins under TIRx's names (tirx/ops/cuda_builtins.py, cuda.warp_reduce): the text
TIRx 0.1.0a4 prints for them loads, round-trips and compiles; the interpreter gives them the
CUDA meaning (checked here against numpy; on a GPU by tests/test_ops_generated_gpu.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tirx
from tirx.script import tirx as T

_ENTRY = (
    'with T.device_entry(1, 1, 1, 128, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": '
    '["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):'
)
# statements as TIRx prints them (its .script() of kernels calling each builtin)
TIRX_PRINTED = [
    'a: T.let[T.float32] = T.cuda.warp_reduce(F[0], "sum", 32)',
    'b: T.let[T.float32] = T.cuda.warp_reduce(F[1], "max", 16)',
    'd: T.let[T.int32] = T.cuda.warp_reduce(A[1], "min", 32)',
    "T.cuda.nano_sleep(100)",
    "T.cuda.thread_fence()",
    "v: T.let[T.uint64] = T.cuda.clock64()",
    "w: T.let[T.int64] = T.cuda.syncthreads_and(A[0] > 0)",
    "w: T.let[T.int64] = T.cuda.syncthreads_or(A[0] > 0)",
    "x: T.let[T.uint32] = T.cuda.ballot_sync(T.uint32(4294967295), A[0] > 0)",
    "y: T.let[T.int32] = T.cuda.any_sync(T.uint32(4294967295), A[0] > 0)",
    "z: T.let[T.int32] = T.cuda.warpgroup_id()",
    "z: T.let[T.int32] = T.cuda.warp_in_warpgroup()",
    "z: T.let[T.int32] = T.cuda.thread_in_warpgroup()",
    "z: T.let[T.int32] = T.cuda.linear_thread_id()",
    "z: T.let[T.int32] = T.cuda.thread_rank()",
    "u: T.let[T.uint32] = T.cuda.float_as_uint(F[0])",
    "q: T.let[T.float32] = T.cuda.uint_as_float(T.uint32(3))",
    "r: T.let[T.int32] = T.cuda.ffs_u32(T.uint32(8))",
]


def _text(stmt: str) -> str:
    return (
        "@T.function\ndef k(A: T.Tensor((128,), T.int32), F: T.Tensor((128,), T.float32)):\n"
        f"    {_ENTRY}\n        {stmt}\n"
    )


@pytest.mark.parametrize("stmt", TIRX_PRINTED)
def test_tirx_printed_text_loads_and_round_trips(stmt):
    f = tirx.loads(_text(stmt))
    assert tirx.structural_equal(tirx.loads(tirx.dumps(f)), f)


def test_tirx_printed_text_compiles():
    pytest.importorskip("cuda.bindings.nvrtc")
    stmts = [
        s.replace(": T.let", f"_{k}: T.let", 1) if ": T.let" in s else s for k, s in enumerate(TIRX_PRINTED)
    ]
    text = _text("\n        ".join(stmts))
    k = tirx.compile(tirx.loads(text), target="cuda -arch=sm_90a", cache=False)
    assert len(k.cubin) > 0 and "error" not in k.module.log  # unused lets warn


def test_warp_reduce_default_width_and_keywords():
    @T.function
    def k(F: T.Tensor((64,), T.float32), O: T.Tensor((64,), T.float32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
        i = T.cuda.thread_idx("x")
        O[i] = T.cuda.warp_reduce(F[i], op="max", width=8) + T.cuda.warp_reduce(F[i], "sum")

    text = tirx.dumps(k)
    assert 'T.cuda.warp_reduce(F[i], "sum", 32)' in text.replace("T.int32(32)", "32")
    F = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    O = np.zeros(64, np.float32)
    tirx.compile(k, target="interp")(F, O)
    g8 = F.reshape(-1, 8).max(axis=1).repeat(8)
    s32 = F.reshape(-1, 32).sum(axis=1, dtype=np.float64).repeat(32)
    np.testing.assert_allclose(O, g8 + s32, rtol=1e-5)


def test_votes_and_block_predicates_on_the_interpreter():
    @T.function
    def k(A: T.Tensor((128,), T.int32), B: T.Tensor((128,), T.uint32), C: T.Tensor((128,), T.int32),
          D: T.Tensor((128,), T.int64), E: T.Tensor((128,), T.int64)):  # fmt: skip
        T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=64))
        i = T.cuda.block_idx("x") * 64 + T.cuda.thread_idx("x")
        B[i] = T.cuda.ballot_sync(T.uint32(0xFFFFFFFF), A[i] > 0)
        C[i] = T.cuda.any_sync(T.uint32(0xFFFFFFFF), A[i] > 0)
        D[i] = T.cuda.syncthreads_and(A[i] >= 0)
        E[i] = T.cuda.syncthreads_or(A[i] > 5)

    A = np.zeros(128, np.int32)
    A[[1, 3, 56]] = 1  # warp 0: lanes 1 and 3; warp 1: lane 24
    A[70] = 9  # block 1 only
    A[100] = -1
    B, C = np.zeros(128, np.uint32), np.zeros(128, np.int32)
    D, E = np.zeros(128, np.int64), np.zeros(128, np.int64)
    tirx.compile(k, target="interp")(A, B, C, D, E)
    np.testing.assert_array_equal(B[:32], np.full(32, 0b1010, np.uint32))
    np.testing.assert_array_equal(B[32:64], np.full(32, 1 << 24, np.uint32))
    np.testing.assert_array_equal(C, np.r_[np.ones(96), np.zeros(32)].astype(np.int32))
    np.testing.assert_array_equal(D, np.r_[np.ones(64), np.zeros(64)].astype(np.int64))
    np.testing.assert_array_equal(E, np.r_[np.zeros(64), np.ones(64)].astype(np.int64))


def test_bit_builtins_and_thread_ids_on_the_interpreter():
    @T.function
    def k(F: T.Tensor((256,), T.float32), U: T.Tensor((256,), T.uint32), R: T.Tensor((256,), T.int32),
          W: T.Tensor((256,), T.int32), G: T.Tensor((256,), T.int32), L: T.Tensor((256,), T.int32)):  # fmt: skip
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=256))
        i = T.cuda.thread_idx("x")
        U[i] = T.cuda.float_as_uint(F[i])
        F[i] = T.cuda.uint_as_float(U[i] + T.uint32(1))
        R[i] = T.cuda.ffs_u32(T.cast(i, "uint32"))
        W[i] = T.cuda.warpgroup_id() * 1000 + T.cuda.warp_in_warpgroup() * 100
        G[i] = T.cuda.thread_in_warpgroup()
        L[i] = T.cuda.linear_thread_id() - T.cuda.thread_rank()

    F = np.linspace(-3, 3, 256).astype(np.float32)
    F0 = F.copy()
    U, R, W, G, L = (np.zeros(256, d) for d in (np.uint32, np.int32, np.int32, np.int32, np.int32))
    tirx.compile(k, target="interp")(F, U, R, W, G, L)
    np.testing.assert_array_equal(U, F0.view(np.uint32))
    np.testing.assert_array_equal(F, (F0.view(np.uint32) + 1).view(np.float32))
    t = np.arange(256)
    np.testing.assert_array_equal(R, [0] + [((x & -x).bit_length()) for x in range(1, 256)])
    np.testing.assert_array_equal(W, (t // 128) * 1000 + ((t // 32) % 4) * 100)
    np.testing.assert_array_equal(G, t % 128)
    np.testing.assert_array_equal(L, 0)


def test_clock64_is_refused_by_the_interpreter_with_a_reason():
    f = tirx.loads(_text("v: T.let[T.uint64] = T.cuda.clock64()"))
    with pytest.raises(tirx.OpError, match="cycle counter"):
        tirx.compile(f, target="interp")


def test_a_vote_whose_mask_leaves_out_the_calling_lane_is_an_error():
    @T.function
    def k(A: T.Tensor((32,), T.int32), B: T.Tensor((32,), T.uint32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        i = T.cuda.thread_idx("x")
        B[i] = T.cuda.ballot_sync(T.uint32(0x0000FFFF), A[i] > 0)

    with pytest.raises(tirx.interp.InterpError, match="does not include its own lane"):
        tirx.compile(k, target="interp")(np.zeros(32, np.int32), np.zeros(32, np.uint32))


@pytest.mark.parametrize("bad", ['"prod", 32', '"sum", 12'])
def test_warp_reduce_checks_its_choices_at_build_time(bad):
    with pytest.raises(tirx.DiagnosticError, match="must be one of"):
        tirx.loads(_text(f"a: T.let[T.float32] = T.cuda.warp_reduce(F[0], {bad})"))
