"""TIRx's type spellings: ``T.NoneType()`` (the return annotation of a function that returns
nothing) and ``T.Ptr(T.TensorMap())`` (a TMA descriptor parameter)."""

from __future__ import annotations

import pytest
from test_frontend_util import load_module

import tirx
from tirx.errors import DiagnosticError
from tirx.ir.types import void

_TIRX = """
@T.function
def k3(A: T.Tensor((128,), T.float32)) -> T.NoneType():
    with T.device_entry(1, 1, 1, 128, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):
        A[0] = T.float32(1.0)
"""  # TIRx 0.1.0a4's printed text


def test_tirx_text_with_none_type_is_a_void_return():
    f = tirx.loads(_TIRX)
    assert f.ret_ty == void  # TIRx keeps the annotation too (no annotation prints without one)
    tirx.assert_structural_equal(f, tirx.loads(_TIRX.replace("T.NoneType()", "T.void")))
    assert tirx.structural_equal(tirx.loads(tirx.dumps(f)), f)


def test_python_frontend_accepts_none_type():
    src = _TIRX.replace("@T.function", "from tirx.script import tirx as T\n\n@T.function")
    f = load_module(src, "nt").k3
    tirx.assert_structural_equal(f, tirx.loads(_TIRX))


def test_bad_none_type_call_is_located():
    with pytest.raises(DiagnosticError, match="NoneType") as e:
        tirx.loads(_TIRX.replace("T.NoneType()", "T.NoneType(1)"))
    assert ":3:" in str(e.value)


_TMAP = """
@T.function
def k(A: T.Tensor((128,), T.float32), TM: T.Ptr(T.TensorMap())):
    with T.device_entry(1, 1, 1, 128, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):
        T.ptx.prefetch(TM, "", "", "", "tensormap", "")
        A[0] = T.float32(1.0)
"""  # TIRx 0.1.0a4's printed text


def test_tensor_map_pointer_is_tirx_s_spelling_of_the_descriptor_parameter():
    from tirx.ir.types import PointerType, PrimType

    f = tirx.loads(_TMAP)
    assert f.params[1].ty == PointerType(PrimType("uint8"), "tensormap")
    assert tirx.dumps(f).strip().endswith(_TMAP.strip().split("\n", 1)[1])  # prints back TIRx's text
    old = tirx.loads(_TMAP.replace("T.Ptr(T.TensorMap())", 'T.Ptr(T.uint8, "tensormap")'))
    tirx.assert_structural_equal(old, f)  # tirx's older spelling loads to the same IR
    with pytest.raises(DiagnosticError, match="takes no scope"):
        tirx.loads(_TMAP.replace("T.Ptr(T.TensorMap())", 'T.Ptr(T.TensorMap(), "shared")'))
