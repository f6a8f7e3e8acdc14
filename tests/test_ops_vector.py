"""TIRx's LLVM vector ops (tirx/ops/vector.py): the statements TIRx 0.1.0a4 prints load and
round-trip; on the interpreter they compute what numpy does; CUDA codegen refuses them by
name (TIRx's CUDA backend has no lowering for them either)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
import tirx.codegen
from tirx.interp.errors import OutOfBoundsError
from tirx.script import tirx as T

_ENTRY = (
    'with T.device_entry(2, 1, 1, 64, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": '
    '["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):'
)
# statements as TIRx prints them (its .script() of kernels calling each op); a tensor argument
# prints as F there and loads here as its data pointer, F.data
TIRX_PRINTED = {
    "x: T.let[T.int32] = T.vscale()": None,
    "x: T.let[T.float32x4] = T.masked_load(F, 0, T.Broadcast(T.bool(True), 4))": None,
    "T.masked_store(F, T.Broadcast(T.float32(1.0), 4), 0, T.Broadcast(T.bool(True), 4))": None,
    "x: T.let[T.float32x2] = T.vector_low(T.Broadcast(T.float32(1.0), 4))": None,
    "x: T.let[T.float32x2] = T.vector_high(T.Broadcast(T.float32(1.0), 4))": None,
    "x: T.let[T.float32x4] = T.vector_combine(T.Broadcast(T.float32(1.0), 2), T.Broadcast(T.float32(2.0), 2))": None,
    'x: T.let[T.PrimType("boolx4")] = T.get_active_lane_mask(0, 3, ty=T.PrimType("boolx4"))': None,
}


def _text(stmt: str) -> str:
    return f"@T.function\ndef k(F: T.Tensor((64,), T.float32)):\n    {_ENTRY}\n        {stmt}\n"


@pytest.mark.parametrize("stmt", list(TIRX_PRINTED))
def test_tirx_printed_text_loads_and_round_trips(stmt):
    f = tirx.loads(_text(stmt), source_name="v.tirx")
    text = tirx.dumps(f)
    part = TIRX_PRINTED[stmt]
    assert (stmt if part is None else part) in text, text
    assert tirx.structural_equal(tirx.loads(text), f)
    name = re.search(r"T\.((?:masked|vector|vscale|get_active)\w*)\(", stmt).group(1)
    with pytest.raises(
        tirx.DiagnosticError, match=rf"v.tirx:4:.*T\.{name} is not supported by the CUDA backend"
    ):
        tirx.codegen.generate(f)


@T.function
def lanes(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32"), n: T.int32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=16))
    base = T.cuda.thread_idx("x") * 4
    m = T.get_active_lane_mask(base, n, ty="boolx4")
    v = T.masked_load(A, base, m)
    w = T.vector_combine(T.vector_high(v), T.vector_low(v))
    T.masked_store(B, w, base, m)


def lanes_reference(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    out = b.copy()
    for t in range(16):
        idx = t * 4 + np.arange(4)
        m = idx < n
        v = np.where(m, a[np.minimum(idx, 63)], 0)
        w = np.r_[v[2:], v[:2]]
        out[idx[m]] = w[m]
    return out


@settings(max_examples=25, deadline=None)
@given(n=st.integers(-5, 70), seed=st.integers(0, 2**16))
def test_masked_lanes_match_numpy(n, seed):
    a = np.random.default_rng(seed).standard_normal(64).astype(np.float32)
    b = np.full(64, -7.0, np.float32)
    want = lanes_reference(a, b, n)
    tirx.compile(lanes, target="interp")(a, b, n)
    np.testing.assert_array_equal(b, want)


def test_masked_off_lanes_may_point_outside_the_buffer():
    @T.function
    def k(A: T.Tensor((6,), "int32"), B: T.Tensor((8,), "int32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        m = T.get_active_lane_mask(4, 6, ty="boolx4")
        T.masked_store(B, T.masked_load(A, 4, m), 0, m)

    a = np.arange(6, dtype=np.int32) + 10
    b = np.full(8, -1, np.int32)
    tirx.compile(k, target="interp")(a, b)
    np.testing.assert_array_equal(b, [14, 15, -1, -1, -1, -1, -1, -1])


def test_a_masked_on_lane_outside_the_buffer_is_an_error():
    @T.function
    def k(A: T.Tensor((6,), "int32"), B: T.Tensor((8,), "int32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        m = T.get_active_lane_mask(4, 7, ty="boolx4")
        T.masked_store(B, T.masked_load(A, 4, m), 0, m)

    with pytest.raises(OutOfBoundsError, match="masked_load"):
        tirx.compile(k, target="interp")(np.zeros(6, np.int32), np.zeros(8, np.int32))


def test_result_types_follow_the_vectors():
    text = tirx.dumps(lanes)
    assert "v: T.let[T.float32x4] = T.masked_load(A, base, m)" in text  # as written (TIRx's text)
    assert "T.vector_combine(T.vector_high(v), T.vector_low(v))" in text
    assert tirx.structural_equal(tirx.loads(text), lanes)


@pytest.mark.parametrize(
    ("expr", "match"),
    [
        ("T.vector_low(T.float32(1.0))", "must be a vector"),
        ("T.vector_high(T.Broadcast(T.float32(1.0), 3))", "odd number of lanes"),
        ("T.vector_combine(T.Broadcast(T.float32(1.0), 2), T.Broadcast(T.int32(1), 2))", "differ in element"),
    ],
)
def test_malformed_vector_ops_are_located_errors(expr, match):
    with pytest.raises(tirx.DiagnosticError, match=match):
        tirx.loads(_text(f"T.evaluate({expr})"))


def test_a_scalar_mask_is_an_op_error_of_the_backends():
    """Mutate fuzz seed 207343794: a masked_load whose mask is a scalar bool raised a bare
    TypeError while compiling for the interpreter; it is the backends' documented OpError."""
    from tirx.errors import OpError

    text = (
        "@T.function\n"
        "def f(A: T.Tensor((8,), T.float32), B: T.Tensor((8,), T.float32)):\n"
        "    B[0] = T.masked_load(A.data, 0, A[0] > T.float32(0.0), ty=T.float32)\n"
    )
    try:
        f = tirx.loads(text)
    except tirx.DiagnosticError:
        pytest.skip("the text loader already refuses this call")
    with pytest.raises((OpError, tirx.DiagnosticError), match="mask must be a bool vector"):
        tirx.compile(f, target="interp")


def test_a_non_bool_lane_mask_type_is_an_op_error_of_the_interpreter():
    """Mutate fuzz seed 1996758004: get_active_lane_mask with ``ty=T.int16`` (the loader takes
    any result type) raised a bare TypeError while compiling for the interpreter."""
    from tirx.errors import OpError

    f = tirx.loads(
        "@T.function\n"
        "def k1(j: T.uint8) -> T.int16:\n"
        "    return T.get_active_lane_mask(-2147483648, 2147483647, ty=T.int16)\n"
    )
    with pytest.raises((OpError, tirx.DiagnosticError), match="ty must be a bool vector"):
        tirx.compile(f, target="interp")
