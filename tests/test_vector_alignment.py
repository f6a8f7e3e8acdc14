"""A stride-1 ``T.Ramp`` access is one vector load or store in the generated CUDA (``float4``,
``half2``, ``tirx_vec<T, N>``), which the GPU faults on ("misaligned address") when its first
element is off the vector's alignment. The interpreter must refuse exactly those accesses
(``MisalignedError``), or the two backends disagree on a kernel: one computes, the other faults.
The codegen side: every allocation a vector access reads is aligned for it (local arrays too),
and vectors of any lane count compile (``tirx_vec<float, 3>`` is 4-aligned)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
import tirx.interp as ti
from tirx.codegen import generate
from tirx.codegen.cuda_buffer import flat_index, is_vector_access, vector_alignment
from tirx.ir.types import PrimType
from tirx.script import tirx as T

sys.path.insert(0, str(Path(__file__).parent))
from hopper_util import needs_nvrtc

DTYPES = ("int8", "float16", "bfloat16", "float32", "int32", "float64", "int64")


def copy_kernel(dtype: str, lanes: int, src_off: int, dst_off: int, n: int = 256):
    """Each of 4 threads copies ``lanes`` elements from ``A[tx*lanes*2 + src_off]`` to
    ``B[tx*lanes*2 + dst_off]`` as one vector."""

    @T.function
    def f(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=4))
        tx = T.cuda.thread_idx("x")
        B[T.Ramp(tx * (lanes * 2) + dst_off, 1, lanes)] = A[T.Ramp(tx * (lanes * 2) + src_off, 1, lanes)]

    return f


def _np(dtype: str) -> np.dtype:
    from tirx.ops.semantics import dtypes as D

    return D.storage_np(PrimType(dtype))


@settings(max_examples=60, deadline=None)
@given(
    dtype=st.sampled_from(DTYPES),
    lanes=st.sampled_from((2, 3, 4, 8)),
    src_off=st.integers(0, 9),
    dst_off=st.integers(0, 9),
)
def test_interpreter_refuses_exactly_the_misaligned_vectors(dtype, lanes, src_off, dst_off):
    f = copy_kernel(dtype, lanes, src_off, dst_off)
    size = PrimType(dtype).bytes
    align = vector_alignment(PrimType(dtype), lanes)
    # every thread's start is a multiple of lanes * 2 elements: only the offsets decide
    bad_src = (src_off * size) % align != 0
    bad_dst = (dst_off * size) % align != 0
    a = np.arange(256).astype(_np(dtype))
    b = np.zeros(256, _np(dtype))
    if bad_src or bad_dst:
        with pytest.raises(ti.MisalignedError, match=r"misaligned vector access to buffer [AB]") as ei:
            ti.compile(f)(a, b)
        # the load is evaluated first: a misaligned source is the one named
        assert ("buffer A" in str(ei.value)) == bad_src
        assert f"{align}-byte aligned" in str(ei.value)
        assert "thread (0, 0, 0)" in str(ei.value)
    else:
        ti.compile(f)(a, b)
        for t in range(4):
            s, d = t * lanes * 2 + src_off, t * lanes * 2 + dst_off
            np.testing.assert_array_equal(b[d : d + lanes], a[s : s + lanes])


def test_vector_alignment_is_the_cuda_types():
    f16, f32, f64, i8 = (PrimType(x) for x in ("float16", "float32", "float64", "int8"))
    assert vector_alignment(f16, 2) == 4  # half2
    assert vector_alignment(f32, 4) == 16  # float4
    assert vector_alignment(f32, 3) == 4  # 12 bytes: the largest power of two dividing it
    assert vector_alignment(f64, 4) == 16  # 32 bytes: capped at 16
    assert vector_alignment(f16, 8) == 16
    assert vector_alignment(i8, 2) == 2


def test_only_stride_one_ramps_are_vector_accesses():
    @T.function
    def f(A: T.Tensor((8, 16), "float32"), B: T.Tensor((64,), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        B[T.Ramp(0, 1, 4)] = A[1, T.Ramp(4, 1, 4)]
        B[T.Ramp(8, 2, 4)] = A[T.Ramp(0, 1, 4), 3]  # a column: a gather, any alignment
        B[T.Ramp(17, 2, 4)] = A[2, T.Ramp(1, 2, 4)]

    from tirx.ir.visitor import Visitor

    stores: list = []

    class Stores(Visitor):
        def visit_BufferStore(self, st_):
            stores.append(st_)

    Stores().visit(f.body)
    kinds = [
        (
            is_vector_access(flat_index(s.buffer, s.indices)),
            is_vector_access(flat_index(s.value.buffer, s.value.indices)),
        )
        for s in stores
    ]
    assert kinds == [(True, True), (False, False), (False, False)]
    a = np.arange(128, dtype=np.float32).reshape(8, 16)
    b = np.zeros(64, np.float32)
    ti.compile(f)(a, b)  # the gathers and scatters at odd elements are fine
    np.testing.assert_array_equal(b[0:4], a[1, 4:8])
    np.testing.assert_array_equal(b[8:16:2], a[0:4, 3])
    np.testing.assert_array_equal(b[17:25:2], a[2, 1:9:2])


def test_masked_threads_are_not_checked():
    @T.function
    def f(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
        tx = T.cuda.thread_idx("x")
        if tx % 2 == 0:  # odd threads would start at an odd element
            B[T.Ramp(tx * 4, 1, 4)] = A[T.Ramp(tx * 4, 1, 4)]
        if tx == 3:
            B[T.Ramp(tx * 4 + 2, 1, 2)] = A[T.Ramp(tx * 4 + 2, 1, 2)]  # 8-byte float2 at 14: ok

    a = np.arange(64, dtype=np.float32)
    b = np.zeros(64, np.float32)
    ti.compile(f)(a, b)
    assert b[8] == 8 and b[14] == 14 and b[4] == 0


def test_local_arrays_are_aligned_for_their_vector_accesses():
    @T.function
    def f(A: T.Tensor((64,), "float16"), B: T.Tensor((64,), "float16")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
        tx = T.cuda.thread_idx("x")
        r = T.alloc_local((6,), "float16")  # 12 bytes: 2-aligned as a plain array
        r[T.Ramp(0, 1, 4)] = A[T.Ramp(tx * 8, 1, 4)]
        r[T.Ramp(4, 1, 2)] = A[T.Ramp(tx * 8 + 4, 1, 2)]
        B[T.Ramp(tx * 8, 1, 4)] = r[T.Ramp(0, 1, 4)]
        B[T.Ramp(tx * 8 + 4, 1, 2)] = r[T.Ramp(4, 1, 2)]

    src = generate(f).text
    m = re.search(r"(__align__\((\d+)\) )?half r\[6\];", src)
    assert m is not None, src
    assert m.group(2) == "8", m.group(0)  # the 4-lane half vector (8 bytes) needs 8


@needs_nvrtc
def test_vectors_of_three_lanes_compile():
    k = tirx.compile(copy_kernel("float32", 3, 0, 0), target="cuda")
    assert "tirx_vec<float, 3>" in k.source
    assert len(k.cubin) > 0
