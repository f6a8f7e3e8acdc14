# ruff: noqa: F821
"""Calling kernels directly with arrays, and by parameter name (issue #15).

``f(a, b)`` on a ``@T.function``/``@T.jit`` picks the target from where the arrays live
(``tirx.runtime.direct``); CUDA kernels and interpreter kernels bind keyword arguments with
one rule (``Function.bind_args``). The GPU cases skip without a device.
"""

from __future__ import annotations

import numpy as np
import pytest
from gpu_util import require_gpu as _gpu
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
from tirx.runtime import direct
from tirx.script import tirx as T


@T.function
def axpy(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32"), s: T.float32):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=16))
    i = T.cuda.thread_idx("x")
    B[i] = A[i] * s + B[i]


@T.jit
def shifted(
    A: T.Tensor((N,), "int32"),
    B: T.Tensor((N,), "int32"),
    bias: T.Tensor((1,), "int32") | None,
    *,
    N: T.constexpr,
    K: T.constexpr = 1,
):
    for i in range(N):
        if T.constexpr(bias is not None):
            B[i] = A[i] + K + bias[0]
        else:
            B[i] = A[i] + K


class _GpuArray:
    """Stands for a GPU array (CuPy-style) without a GPU."""

    __cuda_array_interface__ = {"shape": (16,), "typestr": "<f4", "data": (0, False), "version": 3}


class _Dl:
    def __init__(self, kind: int):
        self.kind = kind

    def __dlpack__(self, stream=None):  # pragma: no cover - never consumed here
        raise NotImplementedError

    def __dlpack_device__(self):
        return (self.kind, 0)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3, width=32), min_size=16, max_size=16),
    st.lists(st.floats(-1e3, 1e3, width=32), min_size=16, max_size=16),
    st.floats(-8, 8, width=32),
    st.permutations(["A", "B", "s"]),
    st.integers(0, 3),
)
def test_direct_call_on_host_arrays_matches_numpy_in_any_argument_order(a, b, s, order, npos):
    a = np.array(a, np.float32)
    b0 = np.array(b, np.float32)
    b = b0.copy()
    vals = {"A": a, "B": b, "s": s}
    names = ["A", "B", "s"][:npos]  # a positional prefix, the rest by name in any order
    kw = {n: vals[n] for n in order if n not in names}
    axpy(*[vals[n] for n in names], **kw)
    np.testing.assert_array_equal(b, a * np.float32(s) + b0)


def test_direct_call_compiles_once_per_target():
    a = np.ones(16, np.float32)
    b = np.zeros(16, np.float32)
    axpy(a, b, 1.0)
    k = direct._CACHE[axpy]["interp"]
    axpy(a, b, 1.0)
    assert direct._CACHE[axpy]["interp"] is k
    assert np.all(b == 2)


def test_direct_call_binding_errors_name_the_parameter():
    a = np.ones(16, np.float32)
    with pytest.raises(TypeError, match=r"axpy\(\) takes 3 argument\(s\) \(A, B, s\), got 2"):
        axpy(a, a)
    with pytest.raises(TypeError, match="unexpected keyword argument 'C'"):
        axpy(a, a, 1.0, C=a)
    with pytest.raises(TypeError, match="multiple values for parameter 'A'"):
        axpy(a, a, A=a)
    with pytest.raises(TypeError, match=r"missing a value for parameter.* s"):
        axpy(a, B=a)


def test_direct_call_refuses_ambiguous_targets():
    a = np.ones(16, np.float32)
    with pytest.raises(TypeError, match=r"GPU memory \(A\) and in host memory \(B\)"):
        axpy(_GpuArray(), a, 1.0)
    with pytest.raises(TypeError, match="no array argument"):
        axpy(1, 2, 3.0)


def test_where_reads_every_array_protocol():
    assert direct.where(np.zeros(2)) == "host"
    assert direct.where([1, 2]) == "host"
    assert direct.where(_GpuArray()) == "gpu"
    assert direct.where(_Dl(2)) == "gpu"  # kDLCUDA
    assert direct.where(_Dl(13)) == "gpu"  # kDLCUDAManaged
    assert direct.where(_Dl(1)) == "host"  # kDLCPU
    assert direct.where(_Dl(3)) == "host"  # kDLCUDAHost (pinned): host-visible
    for scalar in (1, 2.5, True, np.float32(1), None):
        assert direct.where(scalar) is None


def test_tirx_interpret_makes_gpu_arrays_run_on_the_interpreter(monkeypatch):
    monkeypatch.setenv("TIRX_INTERPRET", "1")
    assert direct._target(axpy, [_GpuArray(), _GpuArray(), 1.0]) == "interp"
    monkeypatch.setenv("TIRX_INTERPRET", "0")
    assert direct._target(axpy, [_GpuArray(), _GpuArray(), 1.0]) == "cuda"


def test_jit_call_specializes_from_constexpr_keywords_and_drops_none():
    a = np.arange(8, dtype=np.int32)
    b = np.zeros(8, np.int32)
    shifted(a, b, None, N=8)
    np.testing.assert_array_equal(b, a + 1)
    shifted(a, b, np.array([10], np.int32), N=8, K=3)
    np.testing.assert_array_equal(b, a + 13)
    shifted(A=a, B=b, bias=None, N=8, K=5)
    np.testing.assert_array_equal(b, a + 5)
    assert len(shifted.cache) == 3  # (N=8, K=1, no bias), (N=8, K=3), (N=8, K=5, no bias)


def test_calling_a_compiled_function_inside_a_kernel_is_a_located_error(tmp_path):
    src = tmp_path / "inner.py"
    src.write_text(
        "from tirx.script import tirx as T\n"
        "from test_direct_call import axpy\n\n"
        "@T.function\n"
        "def outer(A: T.Tensor((16,), 'float32')):\n"
        "    axpy(A, A, 1.0)\n"
    )
    import sys

    sys.path.insert(0, str(src.parent))
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    try:
        with pytest.raises(tirx.DiagnosticError) as e:
            __import__("inner")
    finally:
        sys.path.pop(0)
        sys.path.pop(0)
        sys.modules.pop("inner", None)
    assert "inner.py:6" in str(e.value) and "@T.inline" in str(e.value)


def test_interpreter_kernel_keyword_arguments():
    k = tirx.compile(axpy, target="interp")
    a = np.full(16, 2, np.float32)
    b = np.ones(16, np.float32)
    k(s=0.5, B=b, A=a)
    assert np.all(b == 2)


# ------------------------------------------------------------------ on a GPU


@pytest.mark.gpu
@pytest.mark.parametrize("launcher", ["bindings", "ctypes"])
def test_gpu_keyword_arguments_on_both_paths(launcher, tmp_path, monkeypatch):
    torch = _gpu()
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path))
    k = tirx.compile(axpy, target="cuda", cache=False, launcher=launcher)
    a = torch.randn(16, device="cuda")
    b = torch.randn(16, device="cuda")
    want = a * 2 + b
    k(a, b, s=2.0)  # first call: the general path
    k(s=-1.0, B=b, A=a)  # the generated fast path
    torch.cuda.synchronize()
    assert torch.allclose(b, want - a)
    with pytest.raises(TypeError, match="unexpected keyword argument 'C'"):
        k(a, b, 1.0, C=a)


@pytest.mark.gpu
def test_gpu_direct_call_runs_cuda_for_device_tensors():
    torch = _gpu()
    a = torch.arange(16, device="cuda", dtype=torch.float32)
    b = torch.ones(16, device="cuda")
    axpy(a, b, 3.0)
    torch.cuda.synchronize()
    assert torch.equal(b, a * 3 + 1)
    assert type(direct._CACHE[axpy]["cuda"]).__module__.startswith("tirx.runtime")


@pytest.mark.gpu
def test_gpu_cuda_graph_capture_and_replay():
    torch = _gpu()
    k = tirx.compile(axpy, target="cuda")
    a = torch.arange(16, device="cuda", dtype=torch.float32)
    b = torch.zeros(16, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        k(a, b, 1.0)  # warm up: the fast path is bound outside the capture
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        k(a, b, 1.0)
        k(a, b, 2.0)
    b.zero_()
    torch.cuda.synchronize()
    for n in range(1, 4):
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(b, a * 3 * n)
