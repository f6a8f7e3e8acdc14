"""``==`` / ``!=`` / ``in`` / ``not in`` on IR values are never a silent Python constant
(issue #29): the frontend builds ``in`` as ``==``s joined by ``or``; a plain Python helper's
``x == 0`` is an ``EQ`` node; asking for the Python truth of one only the kernel can decide
is a ``TypeError`` (a located ``DiagnosticError`` while a kernel builds); and between two
nodes ``==`` stays identity, which passes rely on."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx
from tirx.errors import DiagnosticError
from tirx.ir import EQ, NE, And, Cast, Or, Var
from tirx.ir.expr import FloatImm, IntImm, Ramp
from tirx.ir.types import float32, prim
from tirx.testing import frontend_programs as fp

boolx4 = prim("bool", 4)
_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


def _build(body: str, helpers: str = "", dtype: str = "int32"):
    """A kernel ``kern(A, B)`` over 8 threads with ``body`` (indented 4) after ``v = A[i]``."""
    src = (
        f"from tirx.script import tirx as T\n\n{helpers}\n\n@T.function\n"
        f'def kern(A: T.Tensor((8,), "{dtype}"), B: T.Tensor((8,), "int32")):\n'
        "    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))\n"
        '    i = T.cuda.thread_idx("x")\n'
        "    v = A[i]\n"
        "    B[i] = 0\n" + "".join(f"    {line}\n" for line in body.strip("\n").split("\n"))
    )
    return fp.load_source(src).kern


def _body_line(helpers: str = "") -> int:
    """The source line of ``_build``'s first body line."""
    return 11 + helpers.count("\n")


def _run(f, values, dtype: str = "int32") -> list[int]:
    b = np.full(8, -1, "int32")
    tirx.compile(f, target="interp")(np.array(values, dtype), b)
    return b.tolist()


def _conds(f) -> list:
    return [n.cond for n in tirx.ir.post_order(f.body) if type(n).__name__ == "IfThenElse"]


# ---------------------------------------------------------------- the frontend's `in`
def test_in_on_a_load_builds_the_equalities_and_branches_as_python():
    f = _build("if A[i] in (1, 2):\n    B[i] = 1\nif A[i] not in [1, 2]:\n    B[i] = B[i] + 2")
    c_in, c_not = _conds(f)
    assert type(c_in) is Or and type(c_in.a) is EQ and type(c_in.b) is EQ
    assert type(c_not) is And and type(c_not.a) is NE and type(c_not.b) is NE
    vals = [0, 1, 2, 3, 1, 2, 5, -1]
    assert _run(f, vals) == [2 if x not in (1, 2) else 1 for x in vals]


def test_in_is_the_ir_of_the_spelled_out_form():
    spelled = _build("if v == 1 or v == 3 or v == 5:\n    B[i] = 1")
    short = _build("if v in (1, 3, 5):\n    B[i] = 1")
    tirx.assert_structural_equal(short, spelled)
    spelled = _build("if v != 1 and v != 3:\n    B[i] = 1")
    short = _build("if v not in {1: 'a', 3: 'b'}:\n    B[i] = 1")  # a dict: its keys, as Python
    tirx.assert_structural_equal(short, spelled)


def test_in_over_python_values_with_ir_inside_builds():
    f = _build("B[i] = (1 if 3 in (v, 7) else 0) + (2 if v in range(2, 5) else 0)")
    vals = list(range(-1, 7))
    assert _run(f, vals) == [(3 in (x, 7)) + 2 * (x in range(2, 5)) for x in vals]


def test_in_an_empty_collection_is_pythons_answer():
    f = _build("if v in ():\n    B[i] = 1\nif v not in []:\n    B[i] = B[i] + 2")
    assert _run(f, [0] * 8) == [2] * 8


def test_in_over_python_values_only_is_a_constant():
    """Python's answer, as the IR's constant condition (TIRx's ``if T.bool(...)``), or decided
    while parsing under ``T.constexpr``."""
    f = _build("if 2 in (1, 2):\n    B[i] = 1\nif 'a' not in 'abc':\n    B[i] = 2")
    assert [(c.ty.is_bool, c.value) for c in _conds(f)] == [(True, 1), (True, 0)]
    assert _run(f, [0] * 8) == [1] * 8
    f = _build("if T.constexpr(2 in (1, 2)):\n    B[i] = 1\nif T.constexpr('a' not in 'abc'):\n    B[i] = 2")
    assert _conds(f) == [] and _run(f, [0] * 8) == [1] * 8


def test_in_inside_an_inline_helper_builds():
    helpers = "@T.inline\ndef small(x):\n    return x in (0, 1)\n"
    f = _build("if small(v):\n    B[i] = 1", helpers)
    assert _run(f, list(range(8))) == [1, 1, -0, 0, 0, 0, 0, 0]


@pytest.mark.parametrize(
    "cond, words",
    [
        ("v in A", "buffer"),
        ("3 in A", "buffer"),
        ("v in v", "tirx expression"),
        ("v in 'ab'", "numbers on its right"),
        ("v in 3", "tuple, list, set or range"),
        ("v in (1, None)", "value 1 on its right is a NoneType"),
        ("v in range(512)", "at most 256 values"),
    ],
)
def test_in_without_build_time_values_is_a_located_error(cond, words):
    with pytest.raises(DiagnosticError) as ei:
        _build(f"if {cond}:\n    B[i] = 1")
    e = ei.value
    assert words in e.message
    assert e.span.line == _body_line() and e.span.col == 8 + cond.index(" in ") + 4  # the right side
    assert "^" in str(e) and f":{e.span.line}:{e.span.col}" in str(e)


def test_in_over_a_loop_range_with_an_ir_bound_is_a_located_error():
    with pytest.raises(DiagnosticError, match="constant bounds") as ei:
        _build("if v in T.serial(0, v):\n    B[i] = 1")
    assert ei.value.span.line == _body_line()


# ---------------------------------------------------------------- plain Python helpers
def test_plain_helper_equality_is_an_ir_node_not_false():
    helpers = "def is3(x):\n    return x == 3\n\ndef not3(x):\n    return 3 != x\n"
    f = _build("if is3(v):\n    B[i] = 1\nif not3(v + 1):\n    B[i] = B[i] + 2", helpers)
    vals = list(range(8))
    assert _run(f, vals) == [(x == 3) + 2 * (x + 1 != 3) for x in vals]


def test_plain_helper_if_then_else_on_equality_runs():
    helpers = "def pick(x):\n    return T.if_then_else(x == 2, 10, 20)\n"
    f = _build("B[i] = pick(v)", helpers)
    assert _run(f, list(range(8))) == [10 if x == 2 else 20 for x in range(8)]


@pytest.mark.parametrize(
    "body",
    [
        "    if x == 3:\n        return 1\n    return 0",
        "    return x in (1, 2)",
        "    return 0 if x not in [1] else 1",
    ],
)
def test_plain_helper_python_truth_of_an_ir_comparison_is_a_located_error(body):
    with pytest.raises(DiagnosticError, match="no Python truth value") as ei:
        _build("B[i] = helper(v)", helpers := f"def helper(x):\n{body}\n")
    assert ei.value.span.line == _body_line(helpers)  # the kernel line calling the helper


def test_float_equality_in_helpers_and_in_kernels():
    helpers = "def half(x):\n    return x == 0.5\n"
    f = _build("B[i] = (1 if half(v) else 0) + (2 if v in (1.5, -1) else 0)", helpers, "float32")
    vals = [0.5, 1.5, -1.0, 0.0, 2.0, 0.5, -0.5, 1.5]
    assert _run(f, vals, "float32") == [(x == 0.5) + 2 * (x in (1.5, -1)) for x in vals]


# ---------------------------------------------------------------- the operator rule itself
def test_comparison_with_a_python_number_builds_a_node_without_truth_value():
    x = Var("x")
    yoda = (0 == x, 1.0 != FloatImm(1.0))  # noqa: SIM300  # the reflected operators
    for r, cls in ((x == 0, EQ), (x != 0, NE), (yoda[0], EQ), (yoda[1], NE)):
        assert type(r) is cls
        with pytest.raises(TypeError, match="no Python truth value"):
            bool(r)
    assert (x == 0).a is x and type((x == 0).b) is IntImm
    with pytest.raises(TypeError, match="no Python truth value"):
        x in [1, 2]  # noqa: B015  # the statement is the check
    # a float beside an int32 expression: the comparison in float32, as TIRx builds it
    half = x == 0.5
    assert type(half) is EQ and type(half.a) is Cast and half.a.ty == float32 and half.b.ty == float32


def test_constants_have_the_truth_tirx_folds_them_to():
    """Host code of TIRx programs branches on constants (a parametrized test compares its
    ``T.int32(0)`` parameter with a sentinel ``-1``): TIRx folds those comparisons, so their
    Python truth is the value; float equality is not folded (no truth value, as before)."""
    zero, three = IntImm(0), IntImm(3)
    assert bool(zero == -1) is False and bool(zero != -1) is True and bool(-1 != zero) is True  # noqa: SIM300  # the reflected operator
    assert bool(three == 3) is True and bool(zero < 1) is True and bool(three >= 4) is False
    assert bool(FloatImm(1.5) < 2.0) is True and bool(FloatImm(1.5) > FloatImm(2.0)) is False
    assert bool(zero) is False and bool(three) is True and int(three) == 3 and [7, 8, 9, 10][three] == 10
    assert list(range(three)) == [0, 1, 2]
    with pytest.raises(TypeError, match="no Python truth value"):
        bool(FloatImm(1.5) == 1.5)
    with pytest.raises(TypeError, match="no Python truth value"):
        bool(Var("x") < 1)
    assert bool(zero == IntImm(0)) is False  # two nodes: identity (hash agreement), not value


def test_two_nodes_compare_by_identity_and_keep_working_as_keys():
    x, y, z = Var("x"), Var("y"), Var("z", "int64")
    assert bool(x == x) is True and bool(x != x) is False
    assert bool(x != y) is True and bool(x == y) is False
    assert type(x == y) is EQ and type(x != y) is NE  # still usable as IR
    assert (x == z) is False and (x != z) is True  # two dtypes: identity, no node
    ramp = Ramp(y, IntImm(1), 4)
    assert (x == ramp).ty == boolx4 and bool(x == ramp) is False  # a scalar broadcasts, as for <
    assert x in [y, x] and x not in [y, z] and [z, y, x].index(x) == 2
    assert {x: 1, y: 2}[y] == 2 and (x, y) == (x, y) and (x, y) != (y, x)
    assert x != None and x != "x"  # noqa: E711
    eq = x == x
    with pytest.raises(TypeError, match="no Python truth value"):
        bool(eq.replace(a=y))  # a rebuilt node was not made by a Python ==


_POOL = st.sampled_from(
    [Var("a"), Var("b"), Var("c", "int64"), Var("f", "float32"), IntImm(3), IntImm(3), FloatImm(1.0)]
)


@_SETTINGS
@given(_POOL, _POOL)
def test_node_equality_truth_is_identity_and_agrees_with_hash(a, b):
    assert bool(a == b) is (a is b)
    assert bool(a != b) is (a is not b)
    if a == b:
        assert hash(a) == hash(b)
    assert (a in [b]) is (a is b)


# ---------------------------------------------------------------- the campaign
@_SETTINGS
@given(fp.compare_programs())
def test_generated_compare_programs_branch_as_python(p):
    fp.check_program(p)
