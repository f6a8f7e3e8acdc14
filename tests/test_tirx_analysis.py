"""``tirx.tirx.analysis`` (TIRx's ``tvm_tirx.tirx.analysis`` names): ``check_well_formed`` and
``undefined_vars`` on tirx's IR, as passes ported from TIRx call them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
from tirx import ir
from tirx import tirx as tx
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


def test_detect_linear_equation_reads_coefficients_and_refuses_what_is_not_linear():
    detect_linear_equation = analysis.detect_linear_equation

    x, y, n = (ir.Var(name, "int32") for name in "xyn")
    assert [c.value for c in detect_linear_equation(x * 4 + y * 3 + 7, [x, y])] == [4, 3, 7]
    coeff, base = detect_linear_equation(x * y + 3, [x])  # a symbolic coefficient, the var itself
    assert coeff is y and base.value == 3
    assert [c.value for c in detect_linear_equation((x + y) * 2 - y, [x, y])] == [2, 1, 0]
    assert detect_linear_equation(x * x + 1, [x]) == []
    assert detect_linear_equation(x * y, [x, y]) == []
    assert detect_linear_equation(tx.floordiv(x, 4) + y, [x, y]) == []
    c0, rest = detect_linear_equation(n * 2, [x])
    assert c0.value == 0 and tirx.structural_equal(rest, n * 2)
    assert detect_linear_equation(ir.FloatImm("float32", 1.0), [x]) == []
    with pytest.raises(TypeError, match="var_list"):
        detect_linear_equation(x, x)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=3, max_size=3), st.integers(-20, 20), st.integers(-20, 20))
def test_detect_linear_equation_rebuilds_the_value(cs, vx, vy):
    """Coefficients found for a sum written in a shuffled, nested form give back its value."""
    detect_linear_equation = analysis.detect_linear_equation

    x, y = ir.Var("x", "int32"), ir.Var("y", "int32")
    e = (y * cs[1] + ir.IntImm("int32", cs[2])) - (x * (-cs[0]) - y * 0)
    got = detect_linear_equation(e, [x, y])
    assert len(got) == 3 and all(isinstance(c, ir.IntImm) for c in got)
    assert got[0].value * vx + got[1].value * vy + got[2].value == cs[0] * vx + cs[1] * vy + cs[2]


def test_detect_clip_bound_as_tirx_reads_it():
    x, y = ir.Var("x", "int32"), ir.Var("y", "int32")
    clip = analysis.detect_clip_bound

    def vals(bs):
        return [None if b is None else b.value for b in bs]

    assert vals(clip(tx.all(x >= 2, x < 10, y < 5), [x, y])) == [2, 9, None, 4]
    assert vals(clip(tx.all(x * 2 >= 3, x + 1 < 10), [x])) == [2, 8]  # ceil / floor of a scaled var
    assert vals(clip(tx.all(x < 10, x < 7), [x])) == [None, 6]
    lo, hi = clip(tx.all(x >= y, x < 10), [x])
    assert lo is y and hi.value == 9  # a symbolic bound
    assert clip(tx.any(x < 10, x > 20), [x]) == [] and clip(tx.all(x >= 0, x * x < 10), [x]) == []
    with pytest.raises(TypeError, match="cond"):
        clip(3, [x])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["lt", "le", "gt", "ge"]),
            st.sampled_from([-3, -2, -1, 1, 2, 3]),
            st.integers(-12, 12),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_detect_clip_bound_gives_exactly_the_integers_the_condition_allows(parts):
    """Against brute force: ``k * x + c (op) 0`` parts joined by ``and``."""
    x = ir.Var("x", "int32")
    ops = {
        "lt": lambda a, b: a < b,
        "le": lambda a, b: a <= b,
        "gt": lambda a, b: a > b,
        "ge": lambda a, b: a >= b,
    }
    conds = [ops[op](x * k + c, 0) for op, k, c in parts]
    lo, hi = analysis.detect_clip_bound(tx.all(*conds), [x])
    for v in range(-40, 41):
        holds = all(ops[op](k * v + c, 0) for op, k, c in parts)
        inside = (lo is None or v >= lo.value) and (hi is None or v <= hi.value)
        assert holds == inside, (v, parts, lo, hi)
