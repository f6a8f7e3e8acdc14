"""TIRx's named TIR pipelines (``register_tir_pipeline`` / ``get_tir_pipeline`` /
``compile(..., pipeline=name)``): a registered pipeline's passes run before tirx's compile."""

from __future__ import annotations

import numpy as np
import pytest

import tirx
from tirx.ffi import structural_map
from tirx.ir import FloatImm
from tirx.passes import function_pass, module_pass
from tirx.passes.infra import PassContext, TIRxPassInstrument
from tirx.script import tirx as T
from tirx.tir_pipelines import get_tir_pipeline, register_tir_pipeline

SEEN: list = []


@function_pass(opt_level=0, name="TimesTen")
def times_ten(func, mod, ctx):
    SEEN.append(sorted(f.name for f in mod.functions))
    return structural_map(func, (FloatImm, lambda c: FloatImm(c.value * 10, c.ty)))


def _factory(*, target=None):
    lowering, host, device = get_tir_pipeline("default", target=target)

    @module_pass(opt_level=0, name="UserLowering")
    def pipeline(mod, ctx):
        return lowering(times_ten(mod))

    return pipeline, host, device


register_tir_pipeline("test_times_ten", _factory)


@T.function
def add_const(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
    for i in range(8):
        B[i] = A[i] + T.float32(1.5)


def _run(k, name="add_const"):
    a = np.arange(8, dtype="float32")
    b = np.zeros(8, "float32")
    k[name](a, b)
    return b


@pytest.mark.parametrize("target", ["interp", "llvm"])
def test_a_registered_pipeline_runs_its_passes_first(target):
    SEEN.clear()
    assert list(_run(tirx.compile(add_const, target=target, pipeline="test_times_ten"))) == list(
        np.arange(8, dtype="float32") + 15
    )
    assert SEEN == [["add_const"]]
    SEEN.clear()
    assert list(_run(tirx.compile(add_const, target=target))) == list(np.arange(8, dtype="float32") + 1.5)
    assert SEEN == []  # the default pipeline runs no user pass
    mod = tirx.IRModule({"add_const": add_const})
    assert list(_run(tirx.compile(mod, target=target, tir_pipeline="test_times_ten"))) == list(
        np.arange(8, dtype="float32") + 15
    )


def test_the_pipeline_runs_under_the_current_pass_context():
    names = []

    class Recorder(TIRxPassInstrument):
        def run_before_pass(self, mod, info):
            names.append(info.name)

    with PassContext(instruments=[Recorder()]):
        tirx.compile(add_const, target="interp", pipeline="test_times_ten")
    assert names.index("UserLowering") < names.index("TimesTen")
    assert "tirx.DefaultLowering" in names


def test_pipeline_misuse_is_named():
    with pytest.raises(ValueError, match="no TIR pipeline named 'nope'"):
        tirx.compile(add_const, target="interp", pipeline="nope")
    with pytest.raises(ValueError, match="cannot be replaced"):
        register_tir_pipeline("default", _factory)
    with pytest.raises(TypeError, match="factory must be callable"):
        register_tir_pipeline("x", 3)
    register_tir_pipeline("test_bad_factory", lambda *, target=None: (times_ten,))
    with pytest.raises(TypeError, match="must return"):
        tirx.compile(add_const, target="interp", pipeline="test_bad_factory")
    register_tir_pipeline(
        "test_drops_it",
        lambda *, target=None: (
            (module_pass(lambda m: tirx.IRModule({}), name="Drop"), *get_tir_pipeline()[1:])
        ),
    )
    with pytest.raises(ValueError, match="no function 'add_const'"):
        tirx.compile(add_const, target="interp", pipeline="test_drops_it")
    with pytest.raises(ValueError, match="disagree"):
        tirx.compile(add_const, target="interp", pipeline="default", tir_pipeline="test_times_ten")
