"""The idioms TIRx's own tests use around kernels, served by tirx (issue #31): a round-trip test
parses printed text back with ``tvm.script.from_source(text, extra_vars={"T": T})``, builds a
module with ``tvm.IRModule({"main": f})`` and compiles with ``tvm.compile(mod, target=...,
tir_pipeline="tirx")``."""

from __future__ import annotations

import pytest

import tirx
from tirx.script import from_source
from tirx.script import ir as I
from tirx.script import tirx as T


@T.function
def _copy(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    t = T.cuda.thread_idx("x")
    B[t] = A[t]


def test_from_source_is_the_text_loader():
    text = _copy.script()
    back = from_source(text, extra_vars={"T": T, "I": I})
    tirx.assert_structural_equal(back, _copy)
    with pytest.raises(TypeError, match=r"extra_vars\['n'\] is int: text loading never runs code"):
        from_source(text, extra_vars={"n": 3})
    with pytest.raises(TypeError, match="source must be a str"):
        from_source(_copy)


def test_irmodule_names_functions_by_key_and_compiles_with_tirs_pipeline_name():
    mod = tirx.IRModule({"main": _copy})
    assert [f.name for f in mod.functions] == ["main"]
    assert mod["main"].body is _copy.body
    assert tirx.IRModule().functions == ()
    with pytest.raises(TypeError, match="IRModule: functions must be a dict"):
        tirx.IRModule(_copy)
    k = tirx.compile(mod, target="interp", tir_pipeline="tirx")
    assert set(k.kernels) == {"main"}
    assert set(tirx.compile(mod, target="interp", tir_pipeline="default").kernels) == {"main"}
    with pytest.raises(ValueError, match="no TIR pipeline named 'bogus'"):
        tirx.compile(mod, target="interp", tir_pipeline="bogus")


def test_builder_api_from_tirx_s_import_path():
    """``from tvm.script.ir_builder import IRBuilder, tirx as Tb``: TIRx's builder, where TIRx has it."""
    from tirx.script.ir_builder import IRBuilder
    from tirx.script.ir_builder import tirx as Tb

    with IRBuilder() as ib, Tb.function_():
        Tb.func_name_("built")
        A = Tb.arg_("A", T.Tensor((32,), "float32"))
        with Tb.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32)):
            t = Tb.bind_(T.cuda.thread_idx("x"), name="t")
            Tb.setitem_(A, [t], A[t] + T.float32(1))
    f = ib.get()
    assert f.name == "built" and "A[t] = A[t] + T.float32(1.0)" in tirx.dumps(f)
    assert "function_" in dir(Tb) and "float32" in dir(Tb)
