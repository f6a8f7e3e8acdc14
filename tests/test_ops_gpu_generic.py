"""TIRx's ``T.gpu_*`` ops and annotations (tirx/ops/gpu_generic.py): the statements TIRx 0.1.0a4
prints for them load, print back the same and round-trip; the interpreter gives them CUDA's
meaning (checked against numpy); the CUDA lowering compiles through NVRTC where TIRx's does,
and the others are refused by name at their source line. The GPU run of the shuffles is in
tests/test_ops_gpu_generic_gpu.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
import tirx.codegen
from tirx.interp.errors import InterpError
from tirx.ops.gpu_generic import shuffle_source
from tirx.script import tirx as T

_ENTRY = (
    'with T.device_entry(2, 1, 1, 64, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": '
    '["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):'
)
# statements as TIRx prints them (its .script() of kernels calling each op)
TIRX_PRINTED = [
    "F[0] = T.gpu_warp_shuffle(T.uint32(4294967295), F[1], 3, 32, 32)",
    "F[0] = T.gpu_warp_shuffle_down(T.uint32(4294967295), F[1], 3, 32, 32)",
    "F[0] = T.gpu_warp_shuffle_up(T.uint32(4294967295), F[1], 3, 32, 32)",
    "F[0] = T.gpu_warp_shuffle_xor(T.uint32(4294967295), F[1], 3, 32, 32)",
    'T.gpu_storage_sync("shared")',
    'T.gpu_storage_sync("warp")',
    'N[0] = T.Cast("int32", T.gpu_thread_invariant(N[1] > 0))',
    "T.gpu_thread_return()",
    "T.assume_always(N[0] > 0)",
    "x: T.let[T.Ptr(T.void)] = T.handle_add_byte_offset(T.address_of(F[2]), tx)",
    "x: T.let[T.int32] = T.undef()",
    "x: T.let[T.float16] = T.undef()",
    "x: T.let[T.bool] = T.ignore_loop_partition(tx < 3)",
    "T.prefetch(T.address_of(F[0]), 0, 3, 1)",
    "T.kernel_replace_point()",
    "x: T.let[T.int32] = T.gpu_active_thread_selector(tx, tx == 3)",
    "T.gpu_thread_filter(tx, tx < 3)",
    'T.gpu_load_matrix_sync(S.data, 16, 16, 16, 0, T.address_of(F[0]), 16, "row_major")',
    "T.gpu_fill_fragment(S.data, 16, 16, 16, 0, T.float32(0.0))",
    "T.gpu_mma_sync(S.data, 0, S.data, 0, S.data, 0, S.data, 0)",
]
#: what TIRx's own CUDA backend compiles (so tirx must too)
COMPILED = TIRX_PRINTED[:10]
REFUSED = {
    "T.prefetch(T.address_of(F[0]), 0, 3, 1)": "prefetch",
    "T.kernel_replace_point()": "kernel_replace_point",
    "x: T.let[T.int32] = T.gpu_active_thread_selector(tx, tx == 3)": "gpu_active_thread_selector",
    "T.gpu_thread_filter(tx, tx < 3)": "gpu_thread_filter",
    'T.gpu_store_matrix_sync(F.data, 16, 16, 16, 0, T.address_of(F[0]), 16, "row_major")': "gpu_store_matrix_sync",
    'T.gpu_storage_sync("global")': 'gpu_storage_sync("global")',
}


_WMMA = '        S = T.alloc_tensor(ty_args=[T.Tensor((256,), T.float32, scope="wmma.accumulator")])\n'


def _text(*stmts: str) -> str:
    body = "\n".join(f"        {s}" for s in stmts)
    return (
        "@T.function\ndef k(F: T.Tensor((64,), T.float32), N: T.Tensor((64,), T.int32)):\n"
        f"    {_ENTRY}\n"
        '        tx: T.let[T.int32] = T.cuda.thread_idx("x")\n'
        + (_WMMA if "S.data" in body else "")
        + f"{body}\n"
    )


@pytest.mark.parametrize("stmt", TIRX_PRINTED)
def test_tirx_printed_text_loads_prints_back_and_round_trips(stmt):
    f = tirx.loads(_text(stmt))
    text = tirx.dumps(f)
    assert stmt in text, text
    assert tirx.structural_equal(tirx.loads(text), f)


def test_what_tirx_compiles_compiles():
    pytest.importorskip("cuda.bindings.nvrtc")
    stmts = [s.replace("x: T.let", f"x{k}: T.let") for k, s in enumerate(COMPILED)]
    stmts.remove("T.gpu_thread_return()")
    f = tirx.loads(_text(*stmts, "T.gpu_thread_return()"))
    k = tirx.compile(f, target="cuda -arch=sm_90a", cache=False)
    assert len(k.cubin) > 0
    src = k.source
    for fn in ("__shfl_sync((unsigned)", "__shfl_down_sync(", "__shfl_up_sync(", "__shfl_xor_sync("):
        assert fn in src
    assert "__syncthreads();" in src and "return;" in src


@pytest.mark.parametrize("stmt", list(REFUSED))
def test_ops_without_a_cuda_meaning_are_refused_by_name_at_their_line(stmt):
    f = tirx.loads(_text(stmt), source_name="ops.tirx")
    with pytest.raises(tirx.DiagnosticError) as e:
        tirx.codegen.generate(f)
    msg = str(e.value)
    assert f"T.{REFUSED[stmt]}" in msg and "not supported by the CUDA backend" in msg, msg
    assert "ops.tirx:5:" in msg, msg


# ----------------------------------------------------------------------------- shuffles
def _cuda_reference(mode: str, lane: int, b: int, width: int) -> int:
    """The source lane as the CUDA programming guide states each shuffle."""
    b &= 31
    base = lane - lane % width
    if mode == "idx":
        return base + b % width
    if mode == "up":
        return lane - b if lane % width >= b else lane
    if mode == "down":
        return lane + b if lane % width + b < width else lane
    j = lane ^ b  # later groups are out of reach: own value
    return j if j < base + width else lane


@settings(max_examples=200, deadline=None)
@given(
    mode=st.sampled_from(["idx", "up", "down", "xor"]),
    width=st.sampled_from([1, 2, 4, 8, 16, 32]),
    b=st.integers(-(2**31), 2**31 - 1),
)
def test_shuffle_source_lane_matches_cudas_rule(mode, width, b):
    lanes = np.arange(32)
    got = shuffle_source(mode, lanes, np.full(32, b), width)
    want = [_cuda_reference(mode, int(x), b, width) for x in lanes]
    np.testing.assert_array_equal(got, want)


@T.function
def shuffles(X: T.Tensor((128,), T.float32), D: T.Tensor((4, 128), T.float32), W: T.int32, B: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=64))
    i = T.cuda.block_idx("x") * 64 + T.cuda.thread_idx("x")
    m = T.uint32(0xFFFFFFFF)
    D[0, i] = T.gpu_warp_shuffle(m, X[i], B, W, 32)
    D[1, i] = T.gpu_warp_shuffle_up(m, X[i], B, W, 32)
    D[2, i] = T.gpu_warp_shuffle_down(m, X[i], B, W, 32)
    D[3, i] = T.gpu_warp_shuffle_xor(m, X[i], B, W, 32)


def shuffles_reference(x: np.ndarray, width: int, b: int) -> np.ndarray:
    out = np.zeros((4, x.size), x.dtype)
    for i in range(x.size):
        warp, lane = i - i % 32, i % 32
        for r, mode in enumerate(("idx", "up", "down", "xor")):
            out[r, i] = x[warp + _cuda_reference(mode, lane, b, width)]
    return out


@pytest.mark.parametrize(("width", "b"), [(32, 3), (16, 5), (8, 11), (4, 1), (1, 0), (32, 0), (16, 31)])
def test_shuffles_on_the_interpreter_match_numpy(width, b):
    x = np.random.default_rng(width * 100 + b).standard_normal(128).astype(np.float32)
    d = np.zeros((4, 128), np.float32)
    tirx.compile(shuffles, target="interp")(x, d, width, b)
    np.testing.assert_array_equal(d, shuffles_reference(x, width, b))


def test_shuffle_prints_as_tirx_does():
    assert "T.gpu_warp_shuffle_up(m, X[i], B, W, 32)" in tirx.dumps(shuffles)


def test_a_shuffle_mask_without_the_calling_lane_is_an_error():
    @T.function
    def k(X: T.Tensor((32,), T.int32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        i = T.cuda.thread_idx("x")
        X[i] = T.gpu_warp_shuffle_xor(T.uint32(0xFFFF), X[i], 1, 32, 32)

    with pytest.raises(InterpError, match="does not include its own lane"):
        tirx.compile(k, target="interp")(np.zeros(32, np.int32))


def test_a_bad_width_is_an_error():
    x = np.zeros(128, np.float32)
    with pytest.raises(InterpError, match="width"):
        tirx.compile(shuffles, target="interp")(x, np.zeros((4, 128), np.float32), 12, 1)


# ----------------------------------------------------------------------------- the others
def test_storage_sync_is_a_block_barrier():
    @T.function
    def k(X: T.Tensor((64,), T.int32), Y: T.Tensor((64,), T.int32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
        i = T.cuda.thread_idx("x")
        s = T.alloc_shared((64,), "int32")
        s[i] = X[i] * 2
        T.gpu_storage_sync("shared")
        Y[i] = s[63 - i]

    x = np.arange(64, dtype=np.int32)
    y = np.zeros(64, np.int32)
    tirx.compile(k, target="interp")(x, y)
    np.testing.assert_array_equal(y, x[::-1] * 2)


def test_thread_return_ends_the_thread():
    @T.function
    def k(Y: T.Tensor((64,), T.int32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
        i = T.cuda.thread_idx("x")
        Y[i] = 1
        if i >= 10:
            T.gpu_thread_return()
        Y[i] = 2

    y = np.zeros(64, np.int32)
    tirx.compile(k, target="interp")(y)
    np.testing.assert_array_equal(y, np.r_[np.full(10, 2), np.full(54, 1)])


def test_thread_return_inside_a_loop_ends_the_thread_not_the_loop():
    @T.function
    def k(Y: T.Tensor((64,), T.int32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
        i = T.cuda.thread_idx("x")
        for j in range(8):
            if j == i % 8:
                T.gpu_thread_return()
            Y[i] = Y[i] + 1
        Y[i] = Y[i] + 100

    y = np.zeros(64, np.int32)
    tirx.compile(k, target="interp")(y)
    np.testing.assert_array_equal(y, np.arange(64) % 8)


def test_value_markers_undef_and_handle_offsets():
    @T.function
    def k(X: T.Tensor((64,), T.int32), Y: T.Tensor((64,), T.int32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
        i = T.cuda.thread_idx("x")
        c = T.gpu_thread_invariant(X[i] > 3) and T.ignore_loop_partition(X[i] < 9)
        h = T.handle_add_byte_offset(X.data, 4 * i)
        T.assume_always(X[i] >= 0)
        Y[i] = T.Cast("int32", c) + T.undef() + T.Cast("int32", T.is_aligned(h, 8))

    x = np.arange(64, dtype=np.int32)
    y = np.full(64, -1, np.int32)
    tirx.compile(k, target="interp")(x, y)
    np.testing.assert_array_equal(y, ((x > 3) & (x < 9)).astype(np.int32) + (x % 2 == 0))
    x[5] = -1
    with pytest.raises(InterpError, match="assume_always"):
        tirx.compile(k, target="interp")(x, y)


def test_assume_aligned_is_checked_by_the_interpreter():
    @T.function
    def k(X: T.Tensor((64,), T.float32), off: T.int32):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        T.assume_aligned(T.address_of(X[off]), 16)

    run = tirx.compile(k, target="interp")
    run(np.zeros(64, np.float32), 4)
    with pytest.raises(InterpError, match="16-byte aligned"):
        run(np.zeros(64, np.float32), 2)
    assert "T.assume_aligned(T.address_of(X[off]), 16)" in tirx.dumps(k)


def test_undef_takes_a_result_type():
    @T.function
    def k(Y: T.Tensor((4,), T.float16)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=4))
        Y[T.cuda.thread_idx("x")] = T.undef(ty=T.float16)

    text = tirx.dumps(k)
    assert "T.undef(ty=T.float16)" in text
    assert tirx.structural_equal(tirx.loads(text), k)
    y = np.ones(4, np.float16)
    tirx.compile(k, target="interp")(y)
    np.testing.assert_array_equal(y, 0)
