"""TIRx's host-runtime ops and calls of packed/LLVM/SPIR-V functions (tirx/ops/host_runtime.py,
tirx/ops/calls.py) and the script-only spellings of tirx/script/intrin.py: the text TIRx
0.1.0a4 prints loads, prints back the same and round-trips; the frontend builds the same IR;
CUDA codegen refuses each op by name at its source line; the interpreter says why it cannot
run them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
import tirx.codegen
from tirx.script import tirx as T

_ENTRY = (
    'with T.device_entry(2, 1, 1, 64, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": '
    '["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):'
)
# statement as TIRx prints it -> the op CUDA codegen must name
TIRX_PRINTED = {
    'x: T.let[T.int32] = T.call_packed("fname", F[0], N[0])': "call_packed",
    'x: T.let[T.int32] = T.call_cpacked("fname", F[0], N[0], 0)': "call_cpacked",
    'x: T.let[T.int32] = T.call_packed_lowered("fname", F[0], N[0])': "call_packed_lowered",
    'x: T.let[T.int32] = T.call_cpacked_lowered("fname", F[0], 0)': "call_cpacked_lowered",
    'x: T.let[T.int32] = T.call_packed("foo", F[0], 0, T.float32(1.5))': "call_packed",
    'T.call_packed("f")': "call_packed",
    'x: T.let[T.float32] = T.call_packed("f", F[0])': "call_packed",
    'x: T.let[T.float32] = T.call_llvm_intrin("llvm.sqrt", F[0], ty=T.float32)': "call_llvm_intrin",
    'x: T.let[T.float32] = T.call_llvm_pure_intrin("llvm.sqrt", F[0], ty=T.float32)': "call_llvm_pure_intrin",
    "x: T.let[T.float32] = T.call_spirv_pure_glsl450(31, F[0], ty=T.float32)": "call_spirv_pure_glsl450",
    'x: T.let[T.Ptr(T.int64)] = T.stack_alloca("shape", 3)': "stack_alloca",
    'x: T.let[T.Ptr(T.void)] = T.stack_alloca("array", 3)': "stack_alloca",
    'x: T.let[T.Ptr(T.int32)] = T.stack_alloca("arg_tcode", 3)': "stack_alloca",
    "x: T.let[T.Ptr(T.int64)] = T.stack_make_shape(3, 4)": "stack_make_shape",
    "x: T.let[T.Ptr(T.void)] = T.alloc_workspace(2, 0, 64, 2, 32)": "alloc_workspace",
    "T.free_workspace(2, 0, T.address_of(F[0]))": "free_workspace",
    "x: T.let[T.int32] = T.free_workspace(2, 0, T.address_of(F[0]))": "free_workspace",
    "T.throw_last_error()": "throw_last_error",
    "T.cpu_parallel_barrier()": "cpu_parallel_barrier",
    "x: T.let[T.int32] = T.abi_field_get(F.data, 0, 1, ty=T.int32)": "abi_field_get",
    "T.abi_field_set(F.data, 0, 1, N[0])": "abi_field_set",
    "x: T.let[T.Ptr(T.void)] = T.stack_make_dltensor(F.data, T.stack_make_shape(64), 0, 1, T.float32(0.0), 0)": (
        "stack_make_dltensor"
    ),
    # two calls with effects as arguments: the first runs first (sequence-effects binds it)
    "x: T.let[T.Ptr(T.void)] = T.stack_make_dltensor(F.data, T.stack_make_shape(64), T.stack_make_shape(1), 1, 0, 0)": (
        "stack_make_shape"
    ),
    "x: T.let[T.Ptr(T.void)] = T.static_handle()": "static_handle",
}


def _text(stmt: str) -> str:
    return (
        "@T.function\ndef k(F: T.Tensor((64,), T.float32), N: T.Tensor((64,), T.int32)):\n"
        f"    {_ENTRY}\n        {stmt}\n"
    )


@pytest.mark.parametrize("stmt", list(TIRX_PRINTED))
def test_tirx_printed_text_round_trips_and_is_refused_by_cuda_by_name(stmt):
    f = tirx.loads(_text(stmt), source_name="host.tirx")
    text = tirx.dumps(f)
    assert stmt in text, text
    assert tirx.structural_equal(tirx.loads(text), f)
    with pytest.raises(
        tirx.DiagnosticError,
        match=rf"host.tirx:4:\d+: error: T\.{TIRX_PRINTED[stmt]} is not supported by the CUDA backend",
    ):
        tirx.codegen.generate(f)
    with pytest.raises(tirx.OpError, match="interpreter cannot run"):
        tirx.compile(f, target="interp")


@settings(max_examples=30, deadline=None)
@given(lits=st.lists(st.one_of(st.integers(-(2**31), 2**31 - 1), st.floats(-1e6, 1e6, width=32)), max_size=3))
def test_packed_call_literals_keep_their_own_dtype(lits):
    """TVM passes a Python int literal of a packed call as int32 and a float as float32,
    whatever the other arguments are (tirx.ir.op ``own_literals``)."""
    c = T.call_packed("f", T.float32(1.0), *lits)
    for a, lit in zip(c.args[2:], lits):
        assert str(a.ty) == ("int32" if isinstance(lit, int) else "float32")


@T.function
def host_ops(F: T.Tensor((64,), T.float32), N: T.Tensor((64,), T.int32)):
    shape = T.stack_make_shape(64)
    t = T.stack_make_dltensor(T.tensor_data_ptr(F), shape, 0, 1, T.float32(0.0), 0)
    r = T.call_packed("fname", t, N[0])
    u = T.call_intrin("tirx.undef", ty="float32")
    w = T.call_intrin("call_extern", "foo", F[0], ty="float32")
    T.abi_field_set(F.data, 0, 1, r)
    F[1] = u + w


def test_frontend_builds_what_the_text_holds():
    text = tirx.dumps(host_ops)
    assert "T.stack_make_dltensor(F.data, shape, 0, 1, T.float32(0.0), 0)" in text
    assert "u: T.let[T.float32] = T.undef()" in text  # as TIRx prints it: the let types it
    assert 'w: T.let[T.float32] = T.call_extern("foo", F[0], ty=T.float32)' in text
    assert tirx.structural_equal(tirx.loads(text), host_ops)


def test_script_only_spellings_reject_misuse_by_argument():
    with pytest.raises(ValueError, match=r"no op named 'tirx\.nope'"):
        T.call_intrin("tirx.nope", ty="int32")
    with pytest.raises(TypeError, match="tensor must be a buffer"):
        T.tensor_data_ptr(3)
    with pytest.raises(NotImplementedError, match="LLVM's intrinsic table"):
        T.llvm_lookup_intrinsic_id("llvm.sqrt")


def test_device_scope_is_its_body_in_a_kernel():
    """``with T.device_scope():`` (a region, tirx/surface/region_forms.py) runs its body inline, in
    CUDA as TIRx's codegen does and on the interpreter."""
    import numpy as np

    @T.function
    def k(A: T.Tensor((64,), T.int32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
        i = T.cuda.thread_idx("x")
        with T.device_scope():
            A[i] = i * 2 + 1

    text = tirx.dumps(k)
    assert "with T.device_scope():" in text
    assert tirx.structural_equal(tirx.loads(text), k)
    a = np.zeros(64, np.int32)
    tirx.compile(k, target="interp")(a)
    np.testing.assert_array_equal(a, np.arange(64) * 2 + 1)
    assert "A[i] = i * 2 + 1;" in tirx.codegen.generate(k).text.replace("(i * 2) + 1", "i * 2 + 1")


def test_device_scope_in_host_code_is_a_kernel():
    """``with T.device_scope():`` in host code without a device entry inside is device code, as
    TIRx splits it (golden case ``device_scope_kernel``: TIRx's CUDA has one kernel per region):
    its body is a kernel launched by the ``launch_thread`` regions in it, one thread where there
    are none; host statements beside it stay host code."""
    import numpy as np

    from tirx.passes.thread_launch import launch_thread_entries

    @T.function
    def f(A: T.Tensor((128,), "float32")):
        A[0] = T.float32(2.0)
        with T.device_scope():
            A[1] = A[1] + T.float32(1.0)
        with T.device_scope():  # noqa: SIM117 (TIRx's nesting, as it prints it)
            with T.launch_thread("threadIdx.x", 32) as tx:
                A[tx + 32] = A[tx] * T.float32(2.0)

    entries = [s for s in launch_thread_entries(f).body.stmts if isinstance(s, tirx.ir.DeviceEntry)]
    assert [tuple(int(v.value) for v in e.args) for e in entries] == [(1, 1, 1, 1, 1, 1), (1, 1, 1, 32, 1, 1)]
    src = tirx.codegen.generate(f).text
    assert src.count("__global__ void") == 2
    a = np.arange(128, dtype=np.float32)
    tirx.compile(f, target="interp")(a)
    want = np.arange(128, dtype=np.float32)
    want[0], want[1] = 2, 2
    want[32:64] = want[0:32] * 2
    np.testing.assert_array_equal(a, want)
