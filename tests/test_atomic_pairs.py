"""Atomic adds of a two-lane f16 / bf16 value through the address of its first element (TIRx's
``T.cuda.atomic_add(T.address_of(A[i, T.ramp(j, 1, 2)]), v)``, held-out round 23's paired
embedding-gradient atomics): one packed ``atomicAdd`` on ``half2`` / ``__nv_bfloat162`` in
CUDA, two element adds in lane order in the interpreter; other vector atomics stay refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
from tirx.codegen import generate
from tirx.script import tirx as T


def _kernel(dt: str, rows: int, toks: int, width: int, stride: int = 1):
    @T.function
    def f(dw: T.Tensor((rows, width), dt), dy: T.Tensor((toks, width), dt), ids: T.Tensor((toks,), T.int32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=toks, block=width // 2))
        t = T.cuda.block_idx("x")
        d2 = T.cuda.thread_idx("x")
        T.cuda.atomic_add(T.address_of(dw[ids[t], T.ramp(d2 * 2, stride, 2)]), dy[t, T.ramp(d2 * 2, 1, 2)])

    return f


@pytest.mark.parametrize("dt,ctype", [("float16", "half2"), ("bfloat16", "nv_bfloat162")])
def test_cuda_is_one_packed_atomic_a_pair(dt, ctype):
    src = str(generate(_kernel(dt, 4, 16, 8)))
    line = next(ln for ln in src.splitlines() if "atomicAdd" in ln)
    assert f"atomicAdd(({ctype}*)(" in line.replace("__nv_bfloat162", "nv_bfloat162")


@given(
    dt=st.sampled_from(["float16", "bfloat16"]),
    rows=st.integers(1, 5),
    toks=st.integers(1, 24),
    half=st.integers(1, 8),
    seed=st.integers(0, 2**31 - 1),
)
@settings(max_examples=30, deadline=None)
def test_the_interpreter_adds_every_pair_once(dt, rows, toks, half, seed):
    rng = np.random.default_rng(seed)
    width = 2 * half
    ids = rng.integers(0, rows, toks).astype(np.int32)
    dy32 = rng.integers(-8, 8, (toks, width)).astype(np.float32) / 4  # exact in both dtypes
    k = tirx.compile(_kernel(dt, rows, toks, width), target="interp")
    if dt == "float16":
        dw, dy = np.zeros((rows, width), np.float16), dy32.astype(np.float16)
        k(dw, dy, ids)
        got = dw.astype(np.float32)
    else:  # bfloat16 as its uint16 storage
        dw = np.zeros((rows, width), np.uint16)
        dy = (dy32.view(np.uint32) >> 16).astype(np.uint16)
        k(dw, dy, ids)
        got = (dw.astype(np.uint32) << 16).view(np.float32)
    ref = np.zeros((rows, width), np.float32)
    np.add.at(ref, ids, dy32)
    np.testing.assert_array_equal(got, ref)


def test_a_strided_ramp_adds_at_consecutive_elements_as_cuda_does():
    """A pointer to a ramp's element is its first lane's: the pair lands on two neighbours."""

    @T.function
    def f(dw: T.Tensor((16,), "float16"), dy: T.Tensor((8,), "float16")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=4))
        d2 = T.cuda.thread_idx("x")
        T.cuda.atomic_add(T.address_of(dw[T.ramp(d2 * 4, 3, 2)]), dy[T.ramp(d2 * 2, 1, 2)])

    dw = np.zeros(16, np.float16)
    tirx.compile(f, target="interp")(dw, np.arange(1, 9, dtype=np.float16))
    np.testing.assert_array_equal(dw, [1, 2, 0, 0, 3, 4, 0, 0, 5, 6, 0, 0, 7, 8, 0, 0])
    assert "atomicAdd((half2*)((dw + d2 * 4))" in str(generate(f))


def test_other_vector_atomics_are_refused():
    f = _kernel("float32", 2, 4, 8)
    with pytest.raises(
        tirx.DiagnosticError, match="pointer element float32 differs from value dtype float32x2"
    ):
        generate(f)
