"""The custom-pass tutorial (docs/custom_pass.md) and examples/custom_pass.py run and work."""

from __future__ import annotations

import pathlib

import pytest
from examples_dir import load_example

import tirx
from tirx.ir import Evaluate, Function, IntImm, Mul, SeqStmt, Shl, Var, const
from tirx.ir import types as ty
from tirx.passes import PassContext

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _load_example():
    return load_example("custom_pass.py")


ex = _load_example()


@pytest.fixture(autouse=True)
def _verify_each_pass():
    with PassContext(verify=True):
        yield


def test_strength_reduce_rewrites_powers_of_two():
    x = Var("x", ty.int32)
    f = Function("f", (x,), SeqStmt((Evaluate(x * 8), Evaluate(4 * x), Evaluate(x * 3), Evaluate(x * 1))))
    g = ex.StrengthReduceMul(f)
    s = g.body.stmts
    assert isinstance(s[0].value, Shl) and s[0].value.b.value == 3
    assert isinstance(s[1].value, Shl) and s[1].value.a is x and s[1].value.b.value == 2
    assert s[2] is f.body.stmts[2] and s[3] is f.body.stmts[3]  # untouched: same objects
    expected = Function(
        "f", (x,), SeqStmt((Evaluate(x << 3), Evaluate(x << 2), Evaluate(x * 3), Evaluate(x * 1)))
    )
    tirx.assert_structural_equal(g, expected)


def test_floats_and_wide_shifts_untouched():
    y = Var("y", ty.float32)
    f = Function("f", (y,), Evaluate(y * 2.0))
    assert ex.StrengthReduceMul(f) is f
    b = Var("b", ty.prim("int8"))
    g = Function("g", (b,), Evaluate(Mul(b, IntImm(-128, ty.prim("int8")))))
    assert ex.StrengthReduceMul(g) is g
    assert ex._log2_exact(1) is None and ex._log2_exact(1024) == 10


def test_example_runs(capsys):
    ex.main()
    out = capsys.readouterr().out
    assert "+++ after StrengthReduceMul" in out
    assert "<< 3" in out
    assert "same outputs before and after: False" not in out


_ = const
