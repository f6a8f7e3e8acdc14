"""``tirx.tirx.analysis`` (TIRx's ``tvm_tirx.tirx.analysis`` names): ``check_well_formed`` and
``undefined_vars`` on tirx's IR, as passes ported from TIRx call them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

import tirx
from tirx import ir
from tirx.script import tirx as T
from tirx.testing import strategies as S
from tirx.tirx import analysis


@T.function
def _fill(A: T.Tensor((16,), "float32"), n: T.int32):
    for i in range(n):
        A[i] = T.float32(1)


def test_check_well_formed_true_raises_or_false():
    assert analysis.check_well_formed(_fill) is True
    assert analysis.check_well_formed(ir.Module((_fill,))) is True
    zz = ir.Var("zz", "int32")
    bad = _fill.replace(body=ir.Evaluate(zz))
    with pytest.raises(RuntimeError, match="zz"):
        analysis.check_well_formed(bad)
    assert analysis.check_well_formed(bad, assert_mode=False) is False
    with pytest.raises(TypeError, match="obj must be a Function or a Module"):
        analysis.check_well_formed(_fill.body)


def test_undefined_vars_in_first_use_order_and_defs():
    loop = _fill.body.seq[0]
    a_data, n = _fill.params
    # the loop's bound is met before its body
    got = analysis.undefined_vars(loop)
    assert len(got) == 2 and got[0] is n and got[1] is a_data
    # the loop's own variable is defined by the loop, not by its body
    assert loop.var in analysis.undefined_vars(loop.body)
    assert loop.var not in analysis.undefined_vars(loop)
    x, y = ir.Var("x", "int32"), ir.Var("y", "int32")
    assert analysis.undefined_vars(x + y * x) == [x, y]
    assert analysis.undefined_vars(x + y, [x]) == [y]
    with pytest.raises(TypeError, match=r"defs\[0\] must be a Var"):
        analysis.undefined_vars(x, [1])
    with pytest.raises(TypeError, match="node must be a Stmt or a PrimExpr"):
        analysis.undefined_vars(_fill)


def test_served_through_tirx_tirx():
    assert tirx.tirx.analysis.check_well_formed is analysis.check_well_formed


@given(f=S.functions(max_stmts=12))
@settings(max_examples=60, deadline=None)
def test_a_generated_function_uses_only_its_params(f):
    """A well-formed function's body uses no variable beyond its parameters (the buffers'
    data pointers and shape variables among them) and the module-level ones it binds."""
    assert analysis.check_well_formed(f, assert_mode=False)
    defs = list(f.params)
    for _, buf in f.buffer_map:
        defs += [e for e in (*buf.shape, *(buf.strides or ())) if isinstance(e, ir.Var)]
    assert analysis.undefined_vars(f.body, defs) == []
