"""A tensor the host declares (``T.decl_tensor``) before or between device entries, over a
pointer the host has: the kernel addresses it through that pointer, a kernel parameter (as
host bindings are), the interpreter runs it the same, and what the host cannot compute is a
located error at compile time."""

from __future__ import annotations

import numpy as np
import pytest
from hopper_util import needs_nvrtc, no_disk_cache  # noqa: F401 - no_disk_cache is autouse

import tirx
from tirx.script import tirx as T

ARCH = "cuda -arch=sm_90a"


@T.function
def main(a: T.handle, n: T.int32):
    p = T.reinterpret(a, ty=T.Ptr(T.float32))
    A = T.decl_tensor(p, ty_args=[T.Tensor((n,), "float32", data=p)])
    T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(n, 128), block=128))
    i = T.cuda.block_idx("x") * 128 + T.cuda.thread_idx("x")
    if i < n:
        A[i] = A[i] + T.float32(1)


@T.function
def view_dtype(A: T.Tensor((64,), "int32")):
    H = T.decl_tensor(A.data, ty_args=[T.Tensor((128,), "int16", data=A.data)])
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    i = T.cuda.thread_idx("x")
    H[2 * i] = T.int16(7)


@T.function
def between(a: T.handle, n: T.int32):
    p = T.reinterpret(a, ty=T.Ptr(T.float32))
    A = T.decl_tensor(p, ty_args=[T.Tensor((n,), "float32", data=p)])
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64)):
        i = T.cuda.thread_idx("x")
        if i < n:
            A[i] = A[i] * T.float32(2)
    k = n // 2
    q = T.reinterpret(a, ty=T.Ptr(T.int32))
    B = T.decl_tensor(q, ty_args=[T.Tensor((k, 2), "int32", data=q)])
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=(2, 32))):
        x = T.cuda.thread_idx("x")
        y = T.cuda.thread_idx("y")
        if y < k:
            B[y, x] = y * 2 + x + T.Cast("int32", A[0])


@T.function
def address_math(a: T.handle):
    q = T.reinterpret(a, ty=T.uint64)
    p = T.reinterpret(q + T.uint64(16), ty=T.Ptr(T.float32))
    A = T.decl_tensor(p, ty_args=[T.Tensor((32,), "float32", data=p)])
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    i = T.cuda.thread_idx("x")
    A[i] = T.Cast("float32", i)


@T.function
def host_cannot(A: T.Tensor((64,), "float32"), n: T.int32):
    m = T.popcount(n)  # an op with no host form (tirx.ir.op.declare(host=...))
    B = T.decl_tensor(A.data, ty_args=[T.Tensor((m, m), "float32", data=A.data)])
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
    i = T.cuda.thread_idx("x")
    if i < m:
        B[i, i] = T.float32(1)


def test_interp_runs_host_declared_tensors():
    a = np.arange(300, dtype=np.float32)
    tirx.compile(main, target="interp")(a, 300)
    np.testing.assert_array_equal(a, np.arange(300, dtype=np.float32) + 1)

    x = np.zeros(64, np.int32)
    tirx.compile(view_dtype, target="interp")(x)
    np.testing.assert_array_equal(x.view(np.int16)[0::2], np.full(64, 7, np.int16))
    np.testing.assert_array_equal(x.view(np.int16)[1::2], np.zeros(64, np.int16))

    b = np.full(40, 3.0, np.float32)
    tirx.compile(between, target="interp")(b, 40)
    # the first kernel doubles the floats; the second writes ints over the first 40 words
    want = np.arange(40, dtype=np.int32) + 6
    np.testing.assert_array_equal(b.view(np.int32), want)


@needs_nvrtc
def test_host_declared_tensor_is_a_kernel_parameter():
    k = tirx.compile(main, target=ARCH, cache=False)
    assert k.module.log == ""
    kinds = [(p.kind, p.name) for p in k.info.params]
    assert kinds == [("handle", "a"), ("scalar", "n"), ("host", "p")]
    assert "float* p) {" in k.source
    assert "p[i] = p[i] + 1.0f;" in k.source
    # the host computes p from the handle: the same address
    assert k.host_binds[0][1] == "_p0"


@needs_nvrtc
@pytest.mark.parametrize("f", [view_dtype, between, address_math], ids=lambda f: f.name)
def test_host_declared_tensors_compile(f):
    k = tirx.compile(f, target=ARCH, cache=False)
    kernels = getattr(k, "kernels", None) or [k]
    for kk in kernels if isinstance(kernels, list) else kernels.values():
        assert len(kk.cubin) > 0
    assert "view over" in k.source


@needs_nvrtc
def test_view_of_a_parameter_marks_it_written():
    k = tirx.compile(view_dtype, target=ARCH, cache=False)
    assert "((short*)A)[i * 2] = (short)7;" in k.source or "((short*)A)" in k.source
    assert "const int* __restrict__ A" not in k.source  # written through the view


def test_host_cannot_compute_is_a_located_error():
    with pytest.raises(tirx.DiagnosticError, match=r"tensor B, declared on the host, needs m") as ei:
        tirx.codegen.generate(host_cannot)
    assert ei.value.span is not None and ei.value.span.line > 0
    assert "test_host_decl_tensor.py" in str(ei.value)
    # the interpreter runs it
    a = np.zeros(64, np.float32)
    tirx.compile(host_cannot, target="interp")(a, 15)
    np.testing.assert_array_equal(a[:16].reshape(4, 4), np.eye(4, dtype=np.float32))


def test_other_host_statements_are_still_refused():
    @T.function
    def store_before(A: T.Tensor((32,), "int32")):
        T.cuda.cta_sync()
        with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32)):
            A[2] = 3

    with pytest.raises(tirx.DiagnosticError, match=r"T\.cuda\.cta_sync cannot run in host code") as ei:
        tirx.codegen.generate(store_before)
    assert ei.value.span is not None
