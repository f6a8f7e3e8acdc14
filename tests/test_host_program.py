"""Host code with control flow around device entries (a host program, tirx.runtime.host_program):
what it launches, in which order and with which host values, its errors, and its agreement
with the interpreter, which runs the whole function. No GPU needed: each kernel's launch is
recorded instead of made (tests/test_host_program_gpu.py runs them)."""

from __future__ import annotations

import types

import numpy as np
import pytest
from host_program_cases import (
    affine_loop,
    host_reads_device,
    host_scalar,
    if_else_launch,
    loop_launch,
    nested_loops,
    while_steps,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx
from tirx.runtime.host_program import HostProgram, _DeviceIO
from tirx.runtime.kernel import Kernel
from tirx.script import tirx as T


class FakeCuda:
    """A device array as ``__cuda_array_interface__`` describes it (never dereferenced here)."""

    def __init__(self, shape: tuple, typestr: str, ptr: int = 0x7F0000000000):
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": typestr, "data": (ptr, False), "version": 3, "strides": None,
        }  # fmt: skip
        self.device = types.SimpleNamespace(id=0)


@pytest.fixture
def launches(monkeypatch):
    """Each launch a host program makes: (kernel C name, host values passed)."""
    seen: list = []

    def record(self, args, stream, outer=None):
        seen.append((self.name, tuple(outer)))

    monkeypatch.setattr(Kernel, "_check_and_launch", record)
    return seen


def test_a_loop_and_a_condition_around_an_entry(launches):
    k = tirx.compile(loop_launch)
    assert isinstance(k, HostProgram) and list(k.kernels) == ["loop_launch_kernel"]
    # the loop variable is a kernel parameter
    assert "int it)" in k.source
    k(FakeCuda((4, 128), "<f4"), 2)
    assert launches == [
        ("loop_launch_kernel", (0,)),
        ("loop_launch_kernel", (1,)),
        ("loop_launch_kernel", (3,)),
    ]
    launches.clear()
    with pytest.raises(ValueError, match=r"T.assume_aligned: A \(0x7f0000000040\) is not 128-byte aligned"):
        k(FakeCuda((4, 128), "<f4", ptr=0x7F0000000040), 0)
    assert launches == []  # the fact is checked before the loop


def test_a_host_scalar_changes_between_launches(launches):
    k = tirx.compile(host_scalar)
    assert list(k.kernels) == ["host_scalar_kernel", "host_scalar_kernel_1"]
    k(FakeCuda((128,), "<i4"), 5)
    assert launches == [("host_scalar_kernel", (10,)), ("host_scalar_kernel_1", (11,))]
    launches.clear()
    # int32 arithmetic on the host wraps as on the device
    k(FakeCuda((128,), "<i4"), 2**30)
    assert launches == [("host_scalar_kernel", (-(2**31),)), ("host_scalar_kernel_1", (-(2**31) + 1,))]


def test_if_else_launches_one_kernel(launches):
    k = tirx.compile(if_else_launch)
    k(FakeCuda((128,), "<f4"), 7)
    k(FakeCuda((128,), "<f4"), flag=0)
    assert launches == [("if_else_launch_kernel", ()), ("if_else_launch_kernel_1", ())]


def test_nested_loops_continue_and_a_binding(launches):
    k = tirx.compile(nested_loops)
    k(FakeCuda((3, 4, 32), "<i4"), 1)
    want = [("nested_loops_kernel", (i, j, i * 10 + j)) for i in range(3) for j in (1, 3)]
    assert launches == want


def _while_reference(n: int) -> list[int]:
    out, w = [], 1
    while w < n and w <= 64:
        out.append(w)
        w *= 2
    return out


@settings(max_examples=12, deadline=None)
@given(st.integers(-3, 200))
def test_while_loop_launches_and_returns_what_the_interpreter_computes(n):
    """The host program launches once per step with the step's width and returns the step
    count; the interpreter, running the whole function, returns the same count and writes what
    those launches write (numpy reference)."""
    seen: list = []
    k = tirx.compile(while_steps)
    orig = Kernel._check_and_launch
    Kernel._check_and_launch = lambda self, args, stream, outer=None: seen.append(tuple(outer))
    try:
        ret = k(FakeCuda((256,), "<i4"), n)
    finally:
        Kernel._check_and_launch = orig
    ws = _while_reference(n)
    assert seen == [(w,) for w in ws] and ret == len(ws)
    a = np.arange(256, dtype=np.int32)
    assert tirx.compile(while_steps, target="interp")(a, n) == len(ws)
    ref = np.arange(256, dtype=np.int32)
    for w in ws:
        ref[w : 2 * w] = ref[:w] + w
    np.testing.assert_array_equal(a, ref)


def test_a_kernel_of_a_host_program_is_not_called_alone():
    k = tirx.compile(host_scalar)
    with pytest.raises(
        TypeError, match=r"launched by the host code of host_scalar \(it reads host values: m\)"
    ):
        k.kernels["host_scalar_kernel"](FakeCuda((128,), "<i4"), 1)


def test_prepare_records_the_launches(monkeypatch):
    made: list = []

    class FakePrepared:
        def __init__(self, kernel, args, ret, plan):
            made.append((kernel.name, plan))

    monkeypatch.setattr(Kernel, "_check", lambda self, args, stream=None, outer=None: (None, ("plan", outer)))
    monkeypatch.setattr("tirx.runtime.prepared.PreparedLaunch", FakePrepared)
    seq = tirx.compile(while_steps).prepare(FakeCuda((256,), "<i4"), 9)
    assert [p for _n, (_t, p) in made] == [(1,), (2,), (4,), (8,)]
    assert len(seq.launches) == 4


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(-20, 20), min_size=8, max_size=8))
def test_host_reads_and_writes_device_memory_as_the_interpreter_does(monkeypatch, vals):
    """Host code reading and writing tensor elements in device memory: each access copies the
    element at the offset the tensor's layout gives (here faked by numpy arrays standing for
    device memory, the launch replaced by the kernel's effect), and the result, the memory and
    the return value are the interpreter's. (The patches are the same for every example; ``mem``
    is made per example.)"""
    mem: dict = {}

    def arr(a: np.ndarray, ptr: int) -> FakeCuda:
        mem[ptr] = a
        return FakeCuda(a.shape, "<i4", ptr=ptr)

    def load(self, ptr, off, dtype, name):
        return mem[ptr].reshape(-1).view(dtype)[off].item()

    def store(self, ptr, off, value, dtype, name):
        mem[ptr].reshape(-1).view(dtype)[off] = value

    def launch(self, args, stream, outer=None):  # the kernel's effect: A[tx] = n * 100 + total; L[1, 0] = 7
        n, total = outer
        mem[0x7F0000000000][:] = n * 100 + total
        mem[0x7F0000100000][1, 0] = 7

    monkeypatch.setattr(_DeviceIO, "load", load)
    monkeypatch.setattr(_DeviceIO, "store", store)
    monkeypatch.setattr(Kernel, "_check_and_launch", launch)
    ell = np.array(vals, np.int32).reshape(2, 4)
    a = np.zeros(32, np.int32)
    ret = tirx.compile(host_reads_device)(arr(a.copy(), 0x7F0000000000), arr(ell.copy(), 0x7F0000100000))
    ref_a, ref_l = a.copy(), ell.copy()
    want = tirx.compile(host_reads_device, target="interp")(ref_a, ref_l)
    assert ret == want
    np.testing.assert_array_equal(mem[0x7F0000000000], ref_a)
    np.testing.assert_array_equal(mem[0x7F0000100000], ref_l)


def test_prepare_refuses_host_reads_of_device_memory():
    with pytest.raises(ValueError, match=r"prepare: host code reads L from device memory between launches"):
        tirx.compile(host_reads_device).prepare(FakeCuda((32,), "<i4"), FakeCuda((2, 4), "<i4"))


@T.function
def device_contexts(A: T.Tensor((2, 32), "float32"), n: T.int32):
    k = n + 1
    with T.compute_scope("prep"):
        assert n >= 0, "n"
    for d in range(n):
        with T.device_context(2, d), T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32)):
            A[d, T.cuda.thread_idx("x")] = T.Cast("float32", d + k)


def test_device_context_names_the_tensors_device(launches):
    """TIRx's ``T.device_context(2, d)`` around an entry: tirx launches on the tensors' device,
    so a context naming another device is an error at the call, not a launch elsewhere."""
    k = tirx.compile(device_contexts)
    k(FakeCuda((2, 32), "<f4"), 1)  # the fake tensor is on cuda:0
    assert launches == [("device_contexts_kernel", (2, 0))]  # k, then d (the order they are bound)
    with pytest.raises(ValueError, match=r"T.device_context\(2, 1\): the tensors are on cuda:0, not cuda:1"):
        k(FakeCuda((2, 32), "<f4"), 2)


# ----------------------------------------------------------------------------- errors
@T.function
def kernel_writes_host_scalar(A: T.Tensor((32,), "int32")):
    m: T.int32 = 3
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32)):
        m = 4
        A[T.cuda.thread_idx("x")] = m


@T.function
def kernel_reads_host_array_at_a_variable(A: T.Tensor((32,), "int32"), i: T.int32):
    h = T.alloc_local((4,), "int32")
    h[0] = i
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32)):
        A[T.cuda.thread_idx("x")] = h[i]


@T.function
def device_op_in_host_code(A: T.Tensor((32,), "int32")):
    for k in range(2):
        T.cuda.cta_sync()
        with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32)):
            A[T.cuda.thread_idx("x")] = k


@pytest.mark.parametrize(
    "fn, message, line",
    [
        (kernel_writes_host_scalar, "the kernel writes m, a tensor allocated in host code", 3),
        (kernel_reads_host_array_at_a_variable, "reads h, a tensor allocated in host code, at an index", 4),
        (device_op_in_host_code, r"T.cuda.cta_sync cannot run in host code", 2),
    ],
)
def test_host_code_the_host_cannot_run_is_a_located_error(fn, message, line):
    with pytest.raises(tirx.DiagnosticError, match=message) as ei:
        tirx.codegen.generate(fn)
    assert ei.value.span is not None and ei.value.span.line == fn.span.line + line
    assert "test_host_program.py" in str(ei.value)


@T.function
def host_op_forms(A: T.Tensor((32,), "float32"), h: T.handle, x: T.float32):
    lg = T.log(x)
    if not T.isnullptr(h):
        T.assume_aligned(T.handle_add_byte_offset(h, 64), 64)
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32)):
        A[T.cuda.thread_idx("x")] = lg


def test_ops_declare_their_host_form(launches):
    """``declare(..., host=...)``: ``T.log`` in the value's dtype, ``T.isnullptr`` and
    ``T.handle_add_byte_offset`` on the host's address integers; an op without one is the
    generation's error naming it."""
    k = tirx.compile(host_op_forms)
    assert "_npf('log', _a2, 'float32')" in k.host_source and "(_p1 == 0)" in k.host_source
    k(FakeCuda((32,), "<f4"), 0x7F0000001000, 2.0)
    # (the second value is the grid the vectorizer bound on the host)
    assert len(launches) == 1 and launches[0][1][0] == np.float32(np.log(np.float32(2.0))).item()
    launches.clear()
    k(FakeCuda((32,), "<f4"), 0, 1.0)  # a null handle: no alignment fact to check
    with pytest.raises(ValueError, match=r"is not 64-byte aligned"):
        k(FakeCuda((32,), "<f4"), 0x7F0000001010, 1.0)


@pytest.mark.parametrize("n", [0, 1, 4, 9])
def test_a_dimension_a_n_plus_c_drives_the_host_loop(launches, n):
    """The host program solves ``n`` from ``A: (2 * n + 1,)`` (held-out round 11's form, on this
    path until now untested): its loop launches n times, as the interpreter runs it."""
    k = tirx.compile(affine_loop)
    assert isinstance(k, HostProgram)
    k(FakeCuda((2 * n + 1,), "<i4"))
    assert launches == [("affine_loop_kernel", (it,)) for it in range(n)]
    a = np.arange(2 * n + 1, dtype=np.int32)
    tirx.compile(affine_loop, target="interp")(a)
    ref = np.arange(2 * n + 1, dtype=np.int32)
    for it in range(n):
        ref[2 * it + 1] = ref[2 * it] + it
    np.testing.assert_array_equal(a, ref)
