"""TIRx's host CPU target (``target="llvm"``, run on the interpreter) and its runtime tensors
(``tirx.runtime.tensor``, ``tirx.cpu``, ``tirx.cuda``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
from tirx.script import tirx as T
from tirx.target_spec import Target, parse_target, target_text


@T.function
def add_scalar(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
    for i in range(8):
        B[i] = A[i] + T.float32(1.5)


@pytest.mark.parametrize(
    "target", ["llvm", "llvm -mtriple=x86_64-unknown-linux-gnu", {"kind": "llvm", "keys": ["cpu"], "tag": ""}]
)
def test_llvm_target_runs_on_the_cpu(target):
    ex = tirx.tirx.compile(tirx.IRModule({"main": add_scalar}), target=target)
    a = tirx.runtime.tensor(np.arange(8, dtype="float32"))
    b = tirx.runtime.tensor(np.zeros(8, "float32"))
    ex["main"](a, b)
    np.testing.assert_array_equal(b.numpy(), np.arange(8, dtype="float32") + 1.5)
    np.testing.assert_array_equal(a.numpy(), np.arange(8, dtype="float32"))  # the input is untouched


def test_llvm_target_prints_as_tirx_and_loads_back():
    t = parse_target({"kind": "llvm", "keys": ["cpu"], "mtriple": "x86_64-unknown-linux-gnu", "tag": ""})
    assert t == Target("llvm", None, ("-mtriple=x86_64-unknown-linux-gnu",))
    assert target_text(t) == (
        'T.target({"keys": ["cpu"], "kind": "llvm", "mtriple": "x86_64-unknown-linux-gnu", "tag": ""})'
    )
    f = add_scalar.with_attr("target", t)
    text = tirx.dumps(f)
    assert '"kind": "llvm"' in text
    assert tirx.structural_equal(tirx.loads(text), f)
    odd = parse_target("llvm -foo")  # an option with no config key prints as the string
    assert target_text(odd) == 'T.target("llvm -foo")' and parse_target(str(odd)) == odd


def test_llvm_config_errors_name_the_key():
    with pytest.raises(ValueError, match="unsupported keys"):
        parse_target({"kind": "llvm", "bogus": 1})
    with pytest.raises(ValueError, match="keys"):
        parse_target({"kind": "llvm", "keys": ["gpu"]})
    with pytest.raises(ValueError, match="unknown target kind 'rocm'"):
        parse_target("rocm")


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["float32", "float64", "int32", "int8", "uint16", "bool"]),
    st.lists(st.integers(0, 5), min_size=0, max_size=3),
)
def test_cpu_tensor_is_an_independent_copy(dtype, shape):
    src = (np.arange(int(np.prod(shape, dtype=np.int64))) % 3).astype(dtype).reshape(shape)
    t = tirx.runtime.tensor(src)
    assert t.shape == tuple(shape) and t.dtype == dtype and t.device == tirx.cpu(0)
    got = t.numpy()
    np.testing.assert_array_equal(got, src)
    got[...] = 0  # numpy() is a copy, and so was the tensor
    np.testing.assert_array_equal(t.numpy(), src)
    if src.size:
        src.flat[0] = 1
        assert t.numpy().flat[0] == 0
    t.copyfrom(np.ones(shape, dtype))
    np.testing.assert_array_equal(t.numpy(), np.ones(shape, dtype))


def test_devices_and_misuse():
    assert str(tirx.cpu(0)) == "cpu:0" and str(tirx.cuda(1)) == "cuda:1"
    assert tirx.device("cuda:2") == tirx.cuda(2) and tirx.device("cpu") == tirx.cpu(0)
    assert tirx.runtime.cpu is tirx.cpu and tirx.runtime.Device is type(tirx.cpu())
    assert tirx.cpu().exist and isinstance(tirx.cuda(0).exist, bool)  # read by TIRx's skip marks
    assert not tirx.cuda(999).exist
    tirx.cpu().sync()
    with pytest.raises(ValueError, match="compute_version"):
        tirx.cpu().compute_version  # noqa: B018
    with pytest.raises(ValueError, match="unknown kind"):
        tirx.device("tpu")
    with pytest.raises(ValueError, match="device_id"):
        tirx.cpu(-1)
    with pytest.raises(TypeError, match="device"):
        tirx.runtime.tensor(np.zeros(2), device="cpu")
    with pytest.raises(ValueError, match="mem_scope"):
        tirx.runtime.tensor(np.zeros(2), mem_scope="global.texture")
    with pytest.raises(ValueError, match="shape"):
        tirx.runtime.tensor(np.zeros(2)).copyfrom(np.zeros(3))
