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
          D: T.Tensor((128,), T.int64), E: T.Tensor((128,), T.int64), F: T.Tensor((128,), T.int64)):  # fmt: skip
        T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=64))
        i = T.cuda.block_idx("x") * 64 + T.cuda.thread_idx("x")
        B[i] = T.cuda.ballot_sync(T.uint32(0xFFFFFFFF), A[i] > 0)
        C[i] = T.cuda.any_sync(T.uint32(0xFFFFFFFF), A[i] > 0)
        D[i] = T.cuda.syncthreads_and(A[i] >= 0)
        E[i] = T.cuda.syncthreads_or(A[i] > 5)
        F[i] = T.cuda.syncthreads_or(A[i])  # an integer predicate, as TIRx takes it: nonzero is true

    A = np.zeros(128, np.int32)
    A[[1, 3, 56]] = 1  # warp 0: lanes 1 and 3; warp 1: lane 24
    A[70] = 9  # block 1 only
    A[100] = -1
    B, C = np.zeros(128, np.uint32), np.zeros(128, np.int32)
    D, E, F = np.zeros(128, np.int64), np.zeros(128, np.int64), np.zeros(128, np.int64)
    tirx.compile(k, target="interp")(A, B, C, D, E, F)
    np.testing.assert_array_equal(B[:32], np.full(32, 0b1010, np.uint32))
    np.testing.assert_array_equal(B[32:64], np.full(32, 1 << 24, np.uint32))
    np.testing.assert_array_equal(C, np.r_[np.ones(96), np.zeros(32)].astype(np.int32))
    np.testing.assert_array_equal(D, np.r_[np.ones(64), np.zeros(64)].astype(np.int64))
    np.testing.assert_array_equal(E, np.r_[np.zeros(64), np.ones(64)].astype(np.int64))
    np.testing.assert_array_equal(F, np.ones(128, np.int64))  # both blocks have a nonzero A[i]


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


# ----------------------------------------------------------------------------- second batch
_ENTRY2 = (
    'with T.device_entry(2, 1, 1, 32, 1, 1, 2, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": '
    '["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z", "cluster.x", "cluster.y", "cluster.z"]}):'
)
# TIRx's printed statements (its .script() of a kernel calling each builtin, cluster launch)
TIRX_PRINTED_2 = [
    'B[0] = T.Cast("uint32", T.cuda.cluster_cta_id("x"))',
    'B[1] = T.Cast("uint32", T.cuda.cluster_id("x"))',
    "B[2] = T.cuda.elect_sync()",
    "A[0] = T.cuda.fdividef(A[1], A[2])",
    "A[3] = T.cuda.half2float(H[0])",
    "A[4] = T.cuda.bfloat162float(G[0])",
    "B[3] = T.cuda.reduce_add_sync_u32(T.uint32(4294967295), B[tx])",
    "B[4] = T.cuda.reduce_min_sync_u32(T.uint32(4294967295), B[tx])",
    "T.cuda.mbarrier_wait(T.address_of(bar[0]), 0)",
    "T.cuda.mbarrier_wait_acquire_cluster(T.address_of(bar[0]), 1)",
    "T.cuda.warpgroup_sync(10)",
    "T.cuda.trap_when_assert_failed(tx < 200)",
    'B[5] = T.Cast("uint32", T.cuda.cta_pair_id())',
    "U[0] = T.cuda.make_float2(A[0], A[1])",
    "A[5] = T.cuda.float2_x(U[0]) + T.cuda.float2_y(U[0])",
    "B[6] = T.cuda.smem_addr_from_uint64(U[1])",
    "B[7] = T.cuda.hmax2(B[8], B[9])",
    "B[8] = T.cuda.hmin2(B[8], B[9])",
]


def _text2(stmts: list[str]) -> str:
    body = "\n        ".join(stmts)
    return (
        "@T.function\ndef k(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.uint32), "
        "H: T.Tensor((64,), T.float16), G: T.Tensor((64,), T.bfloat16), U: T.Tensor((64,), T.uint64)):\n"
        f"    {_ENTRY2}\n"
        '        tx: T.let[T.int32] = T.cuda.thread_idx("x")\n'
        '        bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])\n'
        f"        {body}\n"
    )


@pytest.mark.parametrize("stmt", TIRX_PRINTED_2)
def test_tirx_printed_text_2_loads_and_prints_back_the_same(stmt):
    text = _text2([stmt])
    f = tirx.loads(text)
    assert stmt in tirx.dumps(f)  # tirx prints what TIRx printed
    assert tirx.structural_equal(tirx.loads(tirx.dumps(f)), f)


def test_tirx_printed_text_2_compiles():
    pytest.importorskip("cuda.bindings.nvrtc")
    k = tirx.compile(tirx.loads(_text2(TIRX_PRINTED_2)), target="cuda -arch=sm_90a", cache=False)
    for ins in ("elect.sync", "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64",
                "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64", "bar.sync", "trap;",
                "redux.sync.add.u32", "redux.sync.min.u32", "%cluster_ctaid.x", "%clusterid.x"):  # fmt: skip
        assert ins in k.ptx, ins


def _run(f, *arrays):
    tirx.compile(f, target="interp")(*arrays)
    return arrays


def test_redux_sync_u32_on_the_interpreter_against_numpy():
    @T.function
    def k(V: T.Tensor((64,), T.uint32), S: T.Tensor((64,), T.uint32), M: T.Tensor((64,), T.uint32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
        i = T.cuda.thread_idx("x")
        # the even lanes reduce over the even lanes, the odd over the odd
        mask = T.if_then_else(i % 2 == 0, T.uint32(0x55555555), T.uint32(0xAAAAAAAA))
        S[i] = T.cuda.reduce_add_sync_u32(mask, V[i])
        M[i] = T.cuda.reduce_min_sync_u32(mask, V[i])

    V = np.random.default_rng(1).integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    S, M = np.zeros(64, np.uint32), np.zeros(64, np.uint32)
    _run(k, V, S, M)
    for w in range(2):
        for par in range(2):
            lanes = np.arange(w * 32 + par, w * 32 + 32, 2)
            want_s = np.uint32(int(V[lanes].astype(np.uint64).sum()) & 0xFFFFFFFF)
            assert (S[lanes] == want_s).all() and (M[lanes] == V[lanes].min()).all()


def test_redux_sync_mask_without_the_calling_lane_is_an_error():
    @T.function
    def k(V: T.Tensor((32,), T.uint32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        i = T.cuda.thread_idx("x")
        V[i] = T.cuda.reduce_add_sync_u32(T.uint32(1), V[i])

    with pytest.raises(RuntimeError, match="does not include its own lane"):
        _run(k, np.zeros(32, np.uint32))


def _bf16(x: float) -> int:
    return int(np.array([x], np.float32).view(np.uint32)[0] >> 16)


@pytest.mark.parametrize(
    "a, b, mx, mn",
    [
        (_bf16(1.0), _bf16(2.0), _bf16(2.0), _bf16(1.0)),
        (0x0000, 0x8000, 0x0000, 0x8000),  # +0 > -0
        (0x7FC1, _bf16(3.0), _bf16(3.0), _bf16(3.0)),  # a NaN gives the other operand
        (0x7FC1, 0xFFC2, 0x7FFF, 0x7FFF),  # two NaNs: the canonical NaN
        (_bf16(-np.inf), _bf16(5.0), _bf16(5.0), _bf16(-np.inf)),
    ],
)
def test_hmax2_hmin2_bfloat16_pairs_on_the_interpreter(a, b, mx, mn):
    @T.function
    def k(X: T.Tensor((4,), T.uint32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        X[2] = T.cuda.hmax2(X[0], X[1])
        X[3] = T.cuda.hmin2(X[0], X[1])

    # the same pair in both halves, swapped in the high half
    X = np.array([a | (b << 16), b | (a << 16), 0, 0], np.uint32)
    _run(k, X)
    assert X[2] == mx | (mx << 16) and X[3] == mn | (mn << 16)


def test_float2_packing_fdividef_and_conversions_on_the_interpreter():
    @T.function
    def k(A: T.Tensor((8,), T.float32), U: T.Tensor((2,), T.uint64), H: T.Tensor((1,), T.float16),
          G: T.Tensor((1,), T.bfloat16), B: T.Tensor((1,), T.uint32)):  # fmt: skip
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        U[0] = T.cuda.make_float2(A[0], A[1])
        A[2] = T.cuda.float2_x(U[0])
        A[3] = T.cuda.float2_y(U[0])
        A[4] = T.cuda.fdividef(A[0], A[1])
        A[5] = T.cuda.fdividef(A[0], T.float32(2.0**127))  # documented: 0 for 2^126 < |y| < 2^128
        A[6] = T.cuda.half2float(H[0])
        A[7] = T.cuda.bfloat162float(G[0])
        B[0] = T.cuda.smem_addr_from_uint64(U[1])

    A = np.array([3.0, -0.5, 0, 0, 0, 0, 0, 0], np.float32)
    U = np.array([0, 0x1234_5678_9ABC_DEF0], np.uint64)
    G = (np.array([0.375], np.float32).view(np.uint32) >> 16).astype(np.uint16)  # bfloat16 bits
    H, B = np.array([1.5], np.float16), np.zeros(1, np.uint32)
    _run(k, A, U, H, G, B)
    assert int(U[0]) == (int(np.float32(-0.5).view(np.uint32)) << 32) | int(np.float32(3.0).view(np.uint32))
    assert list(A[2:]) == [3.0, -0.5, -6.0, 0.0, 1.5, 0.375] and B[0] == 0x9ABC_DEF0


def test_trap_when_assert_failed_on_the_interpreter():
    @T.function
    def k(A: T.Tensor((32,), T.int32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        i = T.cuda.thread_idx("x")
        T.cuda.trap_when_assert_failed(A[i] >= 0)
        A[i] = A[i] + 1

    A = np.arange(32, dtype=np.int32)
    _run(k, A)
    assert (np.arange(1, 33) == A).all()
    A[7] = -1
    with pytest.raises(RuntimeError, match=r"condition is false in .*thread \(7"):
        _run(k, A)


def test_elect_sync_and_cluster_ids_on_the_interpreter():
    @T.function
    def k(E: T.Tensor((128,), T.uint32), C: T.Tensor((128,), T.int32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=4, block=32, cluster=2))
        i = T.cuda.thread_idx("x") + T.cuda.block_idx("x") * 32
        E[i] = T.cuda.elect_sync()
        C[i] = T.cuda.cluster_cta_id("x") * 100 + T.cuda.cluster_id("x") * 10 + T.cuda.cta_pair_id()

    E, C = np.zeros(128, np.uint32), np.zeros(128, np.int32)
    _run(k, E, C)
    assert E.reshape(4, 32).sum(axis=1).tolist() == [1, 1, 1, 1]
    b = np.arange(128) // 32
    assert ((b % 2) * 100 + (b // 2) * 10 + (b % 2) == C).all()


def test_old_cluster_names_are_aliases():
    @T.function
    def k(C: T.Tensor((64,), T.int32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=32, cluster=2))
        C[T.cuda.thread_idx("x")] = T.cuda.block_idx_in_cluster("x") + T.cuda.cluster_idx("x")

    text = tirx.dumps(k)
    assert 'T.cuda.cluster_cta_id("x") + T.cuda.cluster_id("x")' in text
    tirx.assert_structural_equal(tirx.loads(text), k)


# ----------------------------------------------------------------------------- T-level names
_TIRX_TOP = """
@T.function
def k(A: T.Tensor((128,), T.float32), B: T.Tensor((128,), T.int32)):
    with T.device_entry(1, 1, 1, 128, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):
        tx: T.let[T.int32] = T.cuda.thread_idx("x")
        A[127] = T.acosh(A[101]) + T.asinh(A[102]) + T.atanh(A[103])
        if T.likely(tx < 100):
            A[tx] = T.float32(1.0)
        B[1] = T.gpu_dp4a(B[2], B[3], B[4])
        B[5] = T.Cast("int32", T.gpu_warp_activemask())
        T.atomic_add(T.address_of(B[6]), 1)
        B[7] = T.Cast("int32", T.isnullptr(A.data))
"""  # TIRx's printed text (its .script() of a kernel using them)


def test_tirx_printed_top_level_names_load_print_and_run():
    f = tirx.loads(_TIRX_TOP)
    text = tirx.dumps(f)
    for line in _TIRX_TOP.strip().splitlines()[3:]:
        assert line.strip() in text, line
    assert tirx.structural_equal(tirx.loads(text), f)
    A = np.array([0] * 101 + [1.5, 0.5, 0.25] + [0] * 24, np.float32)
    B = np.zeros(128, np.int32)
    B[2] = np.array([1, -2, 3, -4], np.int8).view(np.int32)[0]
    B[3] = np.array([5, 6, -7, 8], np.int8).view(np.int32)[0]
    B[4] = 1000
    tirx.compile(f, target="interp")(A, B)
    # (every thread stores the same A[127]; lane 0 once overwrote A[0] with no barrier: a race
    # the interpreter's detector reports since issue #29)
    want = np.float32(
        np.arccosh(np.float32(1.5)) + np.arcsinh(np.float32(0.5)) + np.arctanh(np.float32(0.25))
    )
    assert (A[:100] == 1.0).all() and A[100] == 0 and abs(A[127] - want) < 1e-5
    assert B[1] == 1000 + 5 - 12 - 21 - 32
    assert B[5] == -1  # all 32 lanes of the warp are active: 0xffffffff
    assert B[6] == 128 and B[7] == 0  # every thread added 1; a buffer's pointer is not null


def test_assume_is_checked_by_the_interpreter():
    @T.function
    def k(A: T.Tensor((32,), T.int32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        i = T.cuda.thread_idx("x")
        T.assume(A[i] < 100)
        A[i] = A[i] * 2

    text = tirx.dumps(k)
    assert "T.assume(A[i] < 100)" in text
    A = np.arange(32, dtype=np.int32)
    tirx.compile(k, target="interp")(A)
    assert (np.arange(32) * 2 == A).all()
    A[3] = 500
    with pytest.raises(RuntimeError, match="assumed condition is false"):
        tirx.compile(k, target="interp")(A)
    pytest.importorskip("cuda.bindings.nvrtc")
    src = tirx.compile(k, target="cuda -arch=sm_90a", cache=False).source
    assert "__builtin_assume" in src


# ----------------------------------------------------------------------------- packed conversions
_TIRX_CONV = """
@T.function
def k(F: T.Tensor((64,), T.float32), U: T.Tensor((64,), T.uint32), L: T.Tensor((64,), T.uint64), V: T.Tensor((64,), T.int32)):
    with T.device_entry(1, 1, 1, 64, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):
        L[0] = T.cuda.bfloat1622float2(U[0])
        U[1] = T.cuda.float22bfloat162_rn(F[0], F[1])
        U[2] = T.cuda.float22bfloat162_rn_from_float2(L[1])
        U[3] = T.cuda.fp8x4_e4m3_from_float4(F[0], F[1], F[2], F[3])
        V[T.cuda.thread_idx("x")] = T.cuda.mov_sreg(32, "laneid")
"""  # the statements as TIRx prints them


def test_packed_conversions_and_sreg_against_hand_computed_bits():
    f = tirx.loads(_TIRX_CONV)
    text = tirx.dumps(f)
    for line in _TIRX_CONV.strip().splitlines()[3:]:
        assert line.strip() in text
    F = np.array([1.0, -2.5, 448.0, 1e9] + [0] * 60, np.float32)
    U = np.zeros(64, np.uint32)
    U[0] = 0x4040BF80  # bfloat16 pair (-1.0, 3.0)
    L = np.zeros(64, np.uint64)
    L[1] = (int(np.float32(3.0).view(np.uint32)) << 32) | int(np.float32(0.5).view(np.uint32))
    V = np.zeros(64, np.int32)
    tirx.compile(f, target="interp")(F, U, L, V)
    assert int(L[0]) == 0x40400000_BF800000  # float2 (-1.0, 3.0), x in the low word
    assert U[1] == 0xC0203F80 and U[2] == 0x40403F00
    assert U[3] == 0x7E7EC238  # e4m3: 1.0 0x38, -2.5 0xc2, 448 0x7e, 1e9 saturates to 0x7e
    assert (np.arange(64) % 32 == V).all()


def test_bf16_rounding_ties_to_even_and_nan_is_canonical():
    @T.function
    def k(F: T.Tensor((4,), T.float32), U: T.Tensor((2,), T.uint32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        U[0] = T.cuda.float22bfloat162_rn(F[0], F[1])
        U[1] = T.cuda.float22bfloat162_rn(F[2], F[3])

    bits = np.array([0x3F808000, 0x3F818000, 0x7FC12345, 0x3F80FFFF], np.uint32)  # two ties, NaN, round up
    U = np.zeros(2, np.uint32)
    tirx.compile(k, target="interp")(bits.view(np.float32), U)
    assert U[0] == 0x3F823F80 and U[1] == 0x3F817FFF


def test_half2_packing_rounds_to_nearest_even_low_half_first():
    """``float22half2_rn``: the fp16 attention kernel packs P with it (bfloat16 bits read as
    fp16 by wgmma would be a wrong answer, not an error)."""

    @T.function
    def k(F: T.Tensor((4,), T.float32), U: T.Tensor((2,), T.uint32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        U[0] = T.cuda.float22half2_rn(F[0], F[1])
        U[1] = T.cuda.float22half2_rn(F[2], F[3])

    # 1 + 2^-11 is a tie (rounds to 1.0), 1 + 3 * 2^-11 a tie rounding up to 1 + 2^-9; -2.5; 1e6 overflows
    F = np.array([1 + 2**-11, -2.5, 1 + 3 * 2**-11, 1e6], np.float32)
    U = np.zeros(2, np.uint32)
    tirx.compile(k, target="interp")(F, U)
    assert U[0] == 0xC1003C00 and U[1] == 0x7C003C02
    pytest.importorskip("cuda.bindings.nvrtc")
    assert "__float22half2_rn" in tirx.compile(k, target="cuda -arch=sm_90a", cache=False).source


def test_mov_sreg_width_must_match_the_register():
    pytest.importorskip("cuda.bindings.nvrtc")
    bad = _TIRX_CONV.replace(
        'T.cuda.mov_sreg(32, "laneid")', 'T.Cast("int32", T.cuda.mov_sreg(64, "laneid"))'
    )
    with pytest.raises(tirx.DiagnosticError, match="32-bit register"):
        tirx.compile(tirx.loads(bad), target="cuda -arch=sm_90a", cache=False)


@pytest.mark.parametrize("bits", [8, 16, 128])
def test_mov_sreg_of_another_width_builds_and_cuda_refuses_it(bits):
    """TIRx's IR takes ``T.cuda.mov_sreg(16, ...)`` (its CUDA refuses it: only 32 and 64 bits):
    such text loads, prints the same, and codegen says why it cannot (held-out round 19)."""
    text = _TIRX_CONV.replace(
        'T.cuda.mov_sreg(32, "laneid")', f'T.Cast("int32", T.cuda.mov_sreg({bits}, "laneid"))'
    )
    f = tirx.loads(text)
    assert f'T.cuda.mov_sreg({bits}, "laneid")' in tirx.dumps(f)
    assert tirx.structural_equal(tirx.loads(tirx.dumps(f)), f)
    with pytest.raises(tirx.DiagnosticError, match=f"special registers are 32 or 64 bits wide, not {bits}"):
        tirx.codegen.generate(f)


def test_printf_prints_per_thread_and_compiles(capfd):
    t = """
@T.function
def k(A: T.Tensor((4,), T.int32), F: T.Tensor((4,), T.float32)):
    with T.device_entry(1, 1, 1, 4, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):
        T.cuda.printf("t=%d v=%.1f\\n", T.cuda.thread_idx("x"), F[T.cuda.thread_idx("x")])
        T.cuda.wgmma_noop_barrier(F[0])
"""
    f = tirx.loads(t)
    assert tirx.structural_equal(tirx.loads(tirx.dumps(f)), f)
    tirx.compile(f, target="interp")(np.zeros(4, np.int32), np.array([0.5, 1.5, 2.5, 3.5], np.float32))
    assert capfd.readouterr().out == "t=0 v=0.5\nt=1 v=1.5\nt=2 v=2.5\nt=3 v=3.5\n"
    pytest.importorskip("cuda.bindings.nvrtc")
    k = tirx.compile(f, target="cuda -arch=sm_90a", cache=False)
    assert 'printf("t=%d v=%.1f\\n"' in k.source and "tirx: register barrier" in k.ptx


def test_votes_keep_the_warps_of_each_block_apart_when_the_block_is_not_whole_warps():
    """48 threads a block: block 0's second warp (16 lanes) and block 1's first warp are
    different warps (the interpreter numbered both warp 1 and merged their ballots)."""

    @T.function
    def k(A: T.Tensor((96,), T.int32), B: T.Tensor((96,), T.uint32), C: T.Tensor((96,), T.int32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=48))
        tx = T.cuda.thread_idx("x")
        i = T.cuda.block_idx("x") * 48 + tx
        m = T.uint32(0xFFFFFFFF) if tx < 32 else T.uint32(0xFFFF)
        B[i] = T.cuda.ballot_sync(m, A[i] > 0)
        C[i] = T.cuda.any_sync(m, A[i] > 0)

    A = np.zeros(96, np.int32)
    A[[33, 35]] = 1  # block 0, warp 1 (16 lanes): lanes 1 and 3
    A[48 + 2] = 1  # block 1, warp 0: lane 2
    B, C = np.zeros(96, np.uint32), np.zeros(96, np.int32)
    tirx.compile(k, target="interp")(A, B, C)
    want = np.r_[np.zeros(32), np.full(16, 0b1010), np.full(32, 0b100), np.zeros(16)].astype(np.uint32)
    np.testing.assert_array_equal(B, want)
    np.testing.assert_array_equal(C, (want != 0).astype(np.int32))
