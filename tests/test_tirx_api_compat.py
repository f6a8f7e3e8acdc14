"""``tirx.tirx``: TIRx's Python API module names (``tvm_tirx.tirx``) for ported host code
(issue #31: a TIRx test computes a kernel argument with ``tvm.tirx.op.if_then_else``)."""

from __future__ import annotations

import pytest

import tirx
from tirx.ir import IntImm
from tirx.script import tirx as T
from tirx.tirx.op import if_then_else


def test_op_if_then_else_folds_a_constant_condition_as_tirx_does():
    for pred, want in ((T.int32(1), 16), (T.int32(0), 0)):
        r = if_then_else(pred != 0, 16, 0)
        assert type(r) is IntImm and r.value == want
    x = tirx.ir.Var("x")
    r = if_then_else(x > 2, 1, 2)  # not constant: the script op's node
    assert tirx.structural_equal(r, T.if_then_else(x > 2, 1, 2))


def test_other_names_are_the_script_ops_and_unknown_names_say_what_is_served():
    assert tirx.tirx.op.exp is T.exp and tirx.tirx.exp is T.exp and tirx.tirx.Var is tirx.ir.Var
    assert "if_then_else" in dir(tirx.tirx.op) and "op" in dir(tirx.tirx)
    with pytest.raises(AttributeError, match="passes, analyses and runtime"):
        tirx.tirx.op.LowerTIRx  # noqa: B018


def test_an_integer_constant_compared_with_a_number_folds_as_in_tirx():
    assert (T.int32(1) != 0).value == 1 and type(T.int32(0) == -1) is IntImm
    assert type(T.float32(1.0) == 1.0) is not IntImm  # TIRx does not fold float equality


def test_function_attribute_api_and_script_ir_module():
    """TIRx's ``Function.with_attr`` / ``with_attrs`` / ``without_attr`` and
    ``tvm.script.ir_module`` (TIRx programs use them around their kernels)."""
    f = tirx.loads("@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n    A[0] = 1\n")
    g = f.with_attr("k", 1).with_attrs({"j": "x"})
    assert dict(g.attrs) == {"k": 1, "j": "x"} and dict(f.attrs) == {}
    assert dict(g.without_attr("k").attrs) == {"j": "x"} and dict(g.without_attr("zz").attrs) == dict(g.attrs)
    assert tirx.structural_equal(tirx.loads(tirx.dumps(g)), g)
    from tirx.script import ir as I
    from tirx.script import ir_module

    assert ir_module is I.ir_module


def test_an_ir_string_goes_where_a_string_literal_goes():
    """TIRx programs pass ``tvm.ir.StringImm("threadIdx.x")`` where a form takes a string."""
    from tirx.ir import StringImm

    def build(tag):
        @T.function(private=True)
        def f(A: T.Tensor((4,), "int32")):
            with T.launch_thread(tag, 4) as tx:
                A[tx] = 1

        return f

    assert tirx.structural_equal(build(StringImm("threadIdx.x")), build("threadIdx.x"))
