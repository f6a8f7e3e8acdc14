"""TIRx's host-side forms the CUDA target accepts (issue #14, "tirx compiles every kernel TIRx
compiles"): a final ``return <value>`` after the device entry (the call returns it) and
``T.tmem`` declarations (tensor memory has no pointer: declared, never loaded or stored)."""

from __future__ import annotations

import pytest

import tirx
from tirx.script import tirx as T


def _returning():
    @T.function
    def f(A: T.Tensor((32,), "int32"), n: T.int32) -> T.int32:
        with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32)):
            A[T.cuda.thread_idx("x")] = n
        return n * 2 + 1

    return f


def test_final_host_return_compiles_and_takes_the_general_path():
    k = tirx.compile(_returning(), target="cuda -arch=sm_90a")
    assert k.return_code is not None and "_a1" in k.return_code
    assert k._fast is None  # the fast path returns nothing: such kernels use the general path
    assert "* 2" not in k.source  # computed on the host, not in the kernel


def test_statements_after_the_device_entry_other_than_return_are_located_errors():
    @T.function
    def g(A: T.Tensor((32,), "int32")):
        with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32)):
            A[0] = 1
        T.cuda.cta_sync()

    # after the launch, host code (a host program, tests/test_host_program.py) runs what a host
    # can run; a device op is not one
    with pytest.raises(tirx.DiagnosticError, match=r"T.cuda.cta_sync[^\n]*device entry") as ei:
        tirx.compile(g, target="cuda -arch=sm_90a")
    assert ei.value.span is not None and ei.value.span.line > 0


def test_tmem_declaration_has_no_storage_and_a_direct_access_is_an_error():
    @T.function
    def ok(B: T.Tensor((128,), "uint32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
        t = T.tmem((128, 64))  # noqa: F841
        B[T.cuda.thread_idx("x")] = T.uint32(1)

    k = tirx.compile(ok, target="cuda -arch=sm_100a")
    assert "8192" not in k.source  # no 128 x 64 array in the thread

    @T.function
    def bad(B: T.Tensor((128,), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
        t = T.tmem((128, 64))
        B[T.cuda.thread_idx("x")] = t[0, 1]

    with pytest.raises(tirx.DiagnosticError, match="tensor memory"):
        tirx.compile(bad, target="cuda -arch=sm_100a")


def test_gpu_call_returns_the_host_value():
    from gpu_util import require_gpu

    torch = require_gpu()
    k = tirx.compile(_returning(), target="cuda")
    a = torch.zeros(32, dtype=torch.int32, device="cuda")
    assert k(a, 5) == 11
    assert k(a, n=7) == 15
    torch.cuda.synchronize()
    assert a.cpu().tolist() == [7] * 32
