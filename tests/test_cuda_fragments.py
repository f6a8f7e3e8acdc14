"""Accumulator-fragment helpers (``T.cuda.mma_fill``/``mma_store``/``bmma_sync``), TIRx's
``T.ptx_legacy`` and ``T.s_tir.cp_async_raw`` (tirx/ops/cuda_mma.py, cuda_legacy.py): the
interpreter against numpy, round-trip, NVRTC, and located refusals for what the CUDA backend
does not lower."""

from __future__ import annotations

import numpy as np
import pytest

import tirx
from tirx.codegen import generate
from tirx.script import tirx as T


@T.function
def store_kernel(C: T.Tensor((16, 16), T.float32), R: T.Tensor((32, 8), T.float32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    t = T.cuda.thread_idx("x")
    c = T.alloc_local((10,), "float32")
    T.cuda.mma_fill(10, c.data, 0, ty="float32")
    for r in T.serial(8):
        c[2 + r] = R[t, r]
    T.cuda.mma_store(16, 16, C.data, c.data, 2, 16, ty="float32")


@T.function
def copy_kernel(A: T.Tensor((64,), T.float16), O: T.Tensor((64,), T.float16)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    S = T.alloc_shared((64,), "float16")
    T.s_tir.cp_async_raw(S.data, 0, A.data, 8, 16)
    T.s_tir.cp_async_raw.legacy(S.data, 8, A.data, 0, 8, elem_dtype="float16")
    for i in T.serial(12):
        O[i] = S[i]


@T.function
def legacy_kernel(A: T.Tensor((64,), T.float16), D: T.Tensor((64,), T.int32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    a = T.alloc_local((8,), "float16")
    T.ptx_legacy.ldmatrix(False, 4, ".b16", a.data, 0, A.data, 8)
    T.ptx_legacy.mma(
        "m16n8k16", "row", "col", "fp16", "fp16", "fp32", a.data, 0, a.data, 0, a.data, 0, False, "xor"
    )
    T.cuda.bmma_sync(D.data, 0, D.data, 1, D.data, 2, D.data, 0)


@pytest.mark.parametrize("f", (store_kernel, copy_kernel, legacy_kernel), ids=lambda f: f.name)
def test_round_trip(f):
    text = tirx.dumps(f)
    tirx.assert_structural_equal(tirx.loads(text), f)
    assert tirx.dumps(tirx.loads(text)) == text


def test_mma_store_is_the_inverse_of_the_ldmatrix_32x8_layout():
    rng = np.random.default_rng(0)
    R = rng.standard_normal((32, 8)).astype(np.float32)
    C = np.full((16, 16), np.nan, np.float32)
    tirx.compile(store_kernel, target="interp")(C, R)
    want = np.empty((16, 16), np.float32)
    for i in range(16):
        for j in range(16):  # the 16x16 -> (lane, register) map of ldmatrix's 32x8 layout
            lane = 4 * (i % 8) + (j % 8) // 2
            reg = 4 * (j // 8) + 2 * (i // 8) + j % 2
            want[i, j] = R[lane, reg]
    np.testing.assert_array_equal(C, want)


def test_cp_async_raw_copies_bytes_at_element_offsets():
    A = np.arange(64).astype(np.float16)
    O = np.zeros(64, np.float16)
    tirx.compile(copy_kernel, target="interp")(A, O)
    np.testing.assert_array_equal(O[:8], A[8:16])  # 16 bytes from element 8
    np.testing.assert_array_equal(O[8:12], A[0:4])  # 8 bytes, offsets folded into the pointers
    src = generate(copy_kernel).text
    assert "cp.async.cg.shared.global" in src and "cp.async.ca.shared.global" in src


def test_generated_cuda_compiles():
    pytest.importorskip("cuda.bindings.nvrtc")
    from tirx.runtime.nvrtc import compile_source

    for f in (store_kernel, copy_kernel):
        assert compile_source(generate(f).text, "sm_90a").cubin


def test_what_the_cuda_backend_does_not_lower_is_refused_by_name_at_its_line():
    with pytest.raises(
        tirx.DiagnosticError, match=r"T\.ptx_legacy\.ldmatrix is not supported by the CUDA backend"
    ) as e:
        generate(legacy_kernel)
    assert "test_cuda_fragments.py:" in str(e.value)
    with pytest.raises(tirx.errors.OpError, match="ptx_legacy"):
        tirx.compile(legacy_kernel, target="interp")


def test_misuse():
    from tirx.ir.op import call

    p = tirx.ir.Var("p", tirx.ir.PointerType(tirx.ir.types.float16))
    with pytest.raises(TypeError, match="cp_size"):
        call("s_tir.cp_async_raw", p, 0, p, 0, 12)
    with pytest.raises(TypeError, match="result type"):
        call("cuda.mma_fill", 8, p, 0)
    with pytest.raises(tirx.DiagnosticError, match="16x16"):

        @T.function
        def bad(C: T.Tensor((16, 16), T.float32)):
            T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
            c = T.alloc_local((8,), "float32")
            T.cuda.mma_store(16, 8, C.data, c.data, 0, 16, ty="float32")

        generate(bad)
