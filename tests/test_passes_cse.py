"""CommonSubexprElim: the behaviours TVM's own CSE tests check, plus ours."""

from __future__ import annotations

import pytest

import tirx
from tirx.ir import (
    Add,
    Bind,
    BufferStore,
    Evaluate,
    Function,
    IfThenElse,
    Mul,
    SeqStmt,
    TensorType,
    Var,
    op,
)
from tirx.ir import types as ty
from tirx.passes import CommonSubexprElim, PassContext
from tirx.surface.builder import IRBuilder, launch_args


@pytest.fixture(autouse=True)
def _verify_each_pass():
    with PassContext(verify=True):
        yield


def binds(f) -> list[tuple[str, object]]:
    """(name, value) of every Bind in ``f`` in order (pre-order walk)."""
    out = []
    from tirx.ir import post_order

    # post_order lists children first; keep source order by collecting then sorting by position
    for n in post_order(f.body):
        if isinstance(n, Bind):
            out.append(n)
    return [(b.var.name, b.value) for b in out]


def cse_names(f) -> list[str]:
    return [n for n, _ in binds(f) if n.startswith("cse_v")]


def fn(build, *params):
    """Build a function with IRBuilder: ``build(ib, *param_objects)``."""
    ib = IRBuilder()
    with ib.function("main"):
        ps = [ib.param(n, t) for n, t in params]
        build(ib, *ps)
    return ib.get()


BUF = ("B", TensorType((50,), ty.int32))
I32 = ty.int32


def expect(build, *params):
    return fn(build, *params)


def test_basic_two_levels():
    def before(ib, B, i1, i2, z3):
        z1 = ib.bind("z1", 1)
        z2 = ib.bind("z2", 2)
        ib.store(B, (i1,), z1 + z2)
        x = ib.bind("x", 1)
        y = ib.bind("y", 1)
        a = ib.bind("a", (x + y) + (z1 + z2))
        b = ib.bind("b", (x + y) + z3)
        ib.store(B, (i2,), a + b)

    def expected(ib, B, i1, i2, z3):
        z1 = ib.bind("z1", 1)
        z2 = ib.bind("z2", 2)
        c1 = ib.bind("cse_v1", z1 + z2)
        ib.store(B, (i1,), c1)
        x = ib.bind("x", 1)
        y = ib.bind("y", 1)
        c2 = ib.bind("cse_v2", x + y)
        a = ib.bind("a", c2 + c1)
        b = ib.bind("b", c2 + z3)
        ib.store(B, (i2,), a + b)

    ps = (BUF, ("i1", I32), ("i2", I32), ("z3", I32))
    after = CommonSubexprElim()(fn(before, *ps))
    tirx.assert_structural_equal(after, fn(expected, *ps))
    assert cse_names(after) == ["cse_v1", "cse_v2"]


IF_PS = (BUF, ("i1", I32), ("i2", I32), ("i3", I32), ("y", I32), ("z", I32))


def test_if_single_branch_stays_in_branch():
    def before(ib, B, i1, i2, i3, y, z):
        b = ib.bind("b", tirx.ir.const(True))
        with ib.if_(b):
            ib.store(B, (i1,), y + z)
            ib.store(B, (i2,), y + z)
        with ib.else_():
            ib.store(B, (i3,), y)

    def expected(ib, B, i1, i2, i3, y, z):
        b = ib.bind("b", tirx.ir.const(True))
        with ib.if_(b):
            c = ib.bind("cse_v1", y + z)
            ib.store(B, (i1,), c)
            ib.store(B, (i2,), c)
        with ib.else_():
            ib.store(B, (i3,), y)

    after = CommonSubexprElim()(fn(before, *IF_PS))
    tirx.assert_structural_equal(after, fn(expected, *IF_PS))


def test_if_both_branches_hoisted_above_if():
    def before(ib, B, i1, i2, i3, y, z):
        b = ib.bind("b", tirx.ir.const(True))
        with ib.if_(b):
            ib.store(B, (i1,), y + z)
            ib.store(B, (i2,), y)
        with ib.else_():
            ib.store(B, (i3,), y + z)

    def expected(ib, B, i1, i2, i3, y, z):
        b = ib.bind("b", tirx.ir.const(True))
        c = ib.bind("cse_v1", y + z)
        with ib.if_(b):
            ib.store(B, (i1,), c)
            ib.store(B, (i2,), y)
        with ib.else_():
            ib.store(B, (i3,), c)

    after = CommonSubexprElim()(fn(before, *IF_PS))
    tirx.assert_structural_equal(after, fn(expected, *IF_PS))


CAS_PS = (BUF, ("i1", I32), ("i2", I32), ("i3", I32), ("x", I32), ("y", I32), ("z", I32))


def test_cascade():
    def before(ib, B, i1, i2, i3, x, y, z):
        ib.store(B, (i1,), (x + y) + z)
        ib.store(B, (i2,), (x + y) + z)
        ib.store(B, (i3,), x + y)

    def expected(ib, B, i1, i2, i3, x, y, z):
        c2 = ib.bind("cse_v2", x + y)
        c1 = ib.bind("cse_v1", c2 + z)
        ib.store(B, (i1,), c1)
        ib.store(B, (i2,), c1)
        ib.store(B, (i3,), c2)

    after = CommonSubexprElim()(fn(before, *CAS_PS))
    tirx.assert_structural_equal(after, fn(expected, *CAS_PS))
    assert cse_names(after) == ["cse_v2", "cse_v1"]


def test_no_duplication_is_identity():
    def before(ib, x, y, z):
        a = ib.bind("a", x + (y + z))
        ib.evaluate(a)

    f = fn(before, ("x", I32), ("y", I32), ("z", I32))
    assert CommonSubexprElim()(f) is f


def test_deterministic():
    x = Var("x", I32)
    result = Var("result", I32)
    e = x
    for k in list(range(1, 11)) * 2:
        e = e + (x + k)
    f = Function("main", (x,), SeqStmt((Bind(result, e), Evaluate(result))))
    outs = {tirx.dumps(CommonSubexprElim()(f)) for _ in range(5)}
    assert len(outs) == 1


def test_for_loop_body():
    def before(ib, B, y, z):
        with ib.for_("i", 0, 10) as i:
            ib.store(B, (i,), y + z)
            ib.store(B, (i + 10,), y + z)

    def expected(ib, B, y, z):
        with ib.for_("i", 0, 10) as i:
            c = ib.bind("cse_v1", y + z)
            ib.store(B, (i,), c)
            ib.store(B, (i + 10,), c)

    ps = (BUF, ("y", I32), ("z", I32))
    tirx.assert_structural_equal(CommonSubexprElim()(fn(before, *ps)), fn(expected, *ps))


def test_for_hoist_to_outer_scope():
    def before(ib, B, y, z):
        ib.store(B, (0,), y + z)
        with ib.for_("i", 0, 10) as i:
            ib.store(B, (i + 1,), y + z)

    def expected(ib, B, y, z):
        c = ib.bind("cse_v1", y + z)
        ib.store(B, (0,), c)
        with ib.for_("i", 0, 10) as i:
            ib.store(B, (i + 1,), c)

    ps = (BUF, ("y", I32), ("z", I32))
    tirx.assert_structural_equal(CommonSubexprElim()(fn(before, *ps)), fn(expected, *ps))


def test_cannot_lift_bufferload():
    def before(ib, A, B):
        ib.store(B, (0,), A[0] + A[0])
        ib.store(B, (1,), A[0] + A[0])

    f = fn(before, ("A", TensorType((50,), I32)), BUF)
    assert CommonSubexprElim()(f) is f


def test_nested_if_lca():
    def before(ib, B, c1, c2, y, z):
        with ib.if_(c1 > 0):
            with ib.if_(c2 > 0):
                ib.store(B, (0,), y + z)
            with ib.else_():
                ib.store(B, (1,), y + z)
        with ib.else_():
            ib.store(B, (2,), y)

    def expected(ib, B, c1, c2, y, z):
        with ib.if_(c1 > 0):
            c = ib.bind("cse_v1", y + z)
            with ib.if_(c2 > 0):
                ib.store(B, (0,), c)
            with ib.else_():
                ib.store(B, (1,), c)
        with ib.else_():
            ib.store(B, (2,), y)

    ps = (BUF, ("c1", I32), ("c2", I32), ("y", I32), ("z", I32))
    tirx.assert_structural_equal(CommonSubexprElim()(fn(before, *ps)), fn(expected, *ps))


def test_multiple_independent():
    def before(ib, B, a, b, c, d):
        ib.store(B, (0,), a + b)
        ib.store(B, (1,), c + d)
        ib.store(B, (2,), a + b)
        ib.store(B, (3,), c + d)

    def expected(ib, B, a, b, c, d):
        v1 = ib.bind("cse_v1", a + b)
        ib.store(B, (0,), v1)
        v2 = ib.bind("cse_v2", c + d)
        ib.store(B, (1,), v2)
        ib.store(B, (2,), v1)
        ib.store(B, (3,), v2)

    ps = (BUF, ("a", I32), ("b", I32), ("c", I32), ("d", I32))
    after = CommonSubexprElim()(fn(before, *ps))
    tirx.assert_structural_equal(after, fn(expected, *ps))
    assert cse_names(after) == ["cse_v1", "cse_v2"]


def test_if_condition_and_branch():
    def before(ib, B, y, z):
        with ib.if_(y + z > 0):
            ib.store(B, (0,), y + z)

    def expected(ib, B, y, z):
        c = ib.bind("cse_v1", y + z)
        with ib.if_(c > 0):
            ib.store(B, (0,), c)

    ps = (BUF, ("y", I32), ("z", I32))
    tirx.assert_structural_equal(CommonSubexprElim()(fn(before, *ps)), fn(expected, *ps))


def test_cannot_lift_impure_call():
    def before(ib, B, x):
        ib.store(B, (0,), op.call("call_extern", "my_func", x, ty=I32) + 1)
        ib.store(B, (1,), op.call("call_extern", "my_func", x, ty=I32) + 1)

    f = fn(before, BUF, ("x", I32))
    assert CommonSubexprElim()(f) is f


def test_no_single_use_binding():
    def before(ib, B, x, y, z):
        ib.store(B, (0,), (x + y) + z)
        ib.store(B, (1,), (x + y) + z)

    def expected(ib, B, x, y, z):
        c = ib.bind("cse_v1", (x + y) + z)
        ib.store(B, (0,), c)
        ib.store(B, (1,), c)

    ps = (BUF, ("x", I32), ("y", I32), ("z", I32))
    tirx.assert_structural_equal(CommonSubexprElim()(fn(before, *ps)), fn(expected, *ps))


def test_for_extent_lifted():
    def before(ib, B, y, z):
        with ib.for_("i", 0, y + z) as i:
            ib.store(B, (i,), y + z)

    def expected(ib, B, y, z):
        c = ib.bind("cse_v1", y + z)
        with ib.for_("i", 0, c) as i:
            ib.store(B, (i,), c)

    ps = (BUF, ("y", I32), ("z", I32))
    tirx.assert_structural_equal(CommonSubexprElim()(fn(before, *ps)), fn(expected, *ps))


def test_loop_var_expression_stays_inside_loop():
    def before(ib, A, B):
        with ib.for_("i", 0, 10) as i:
            ib.store(A, (i * 4,), B[i * 4])

    def expected(ib, A, B):
        with ib.for_("i", 0, 10) as i:
            c = ib.bind("cse_v1", i * 4)
            ib.store(A, (c,), B[c])

    ps = (("A", TensorType((50,), I32)), BUF)
    tirx.assert_structural_equal(CommonSubexprElim()(fn(before, *ps)), fn(expected, *ps))


def test_no_normalization_without_commoning():
    def before(ib, x, y, z):
        a = ib.bind("a", x + (y + z))
        ib.evaluate(a)

    f = fn(before, ("x", I32), ("y", I32), ("z", I32))
    out = CommonSubexprElim()(f)
    assert out is f and isinstance(out.body.stmts[0].value.b, Add)


# ------------------------------------------------------------------ beyond TVM's tests
def test_boolean_predicates_never_lifted():
    def before(ib, B, x, y):
        with ib.if_(x < y):
            ib.store(B, (0,), x)
        with ib.if_(x < y):
            ib.store(B, (1,), y)

    f = fn(before, BUF, ("x", I32), ("y", I32))
    assert CommonSubexprElim()(f) is f


def test_not_across_device_entry():
    def before(ib, B, y, z):
        ib.store(B, (0,), y * z)
        args, at = launch_args(1, 32)
        with ib.device_entry(args, at):
            ib.store(B, (1,), y * z)

    f = fn(before, BUF, ("y", I32), ("z", I32))
    assert CommonSubexprElim()(f) is f


def test_device_only_pure_op_commoned_inside_device():
    def before(ib, B):
        args, at = launch_args(1, 32)
        with ib.device_entry(args, at):
            t = op.call("cuda.thread_idx", "x")
            ib.store(B, (t * 2,), t * 2 + 1)

    after = CommonSubexprElim()(fn(before, BUF))
    assert cse_names(after) == ["cse_v1"]
    assert 'cse_v1: T.let[T.int32] = T.cuda.thread_idx("x") * 2' in tirx.dumps(after)


def test_non_ssa_rebinding_is_respected():
    # x is bound twice: x + 1 after each binding is a different value
    x = Var("x", I32)
    B = IRBuilder().make_buffer("B", TensorType((4,), I32))
    body = SeqStmt(
        (
            Bind(x, tirx.ir.const(1)),
            BufferStore(B, x + 1, (tirx.ir.const(0),)),
            Bind(x, tirx.ir.const(2)),
            BufferStore(B, x + 1, (tirx.ir.const(1),)),
        )
    )
    f = Function("main", (B.data,), body, ((B.data, B),))
    with PassContext():  # non-SSA input: verify without require_ssa only
        assert CommonSubexprElim()(f) is f


def test_lazy_if_then_else_arms_not_hoisted():
    def before(ib, B, x, y):
        a = op.call("if_then_else", y > 0, x // y, 0)
        b = op.call("if_then_else", y > 0, x // y, 1)
        ib.store(B, (0,), a)
        ib.store(B, (1,), b)

    f = fn(before, BUF, ("x", I32), ("y", I32))
    assert CommonSubexprElim()(f) is f


def test_existing_cse_names_continue_numbering():
    def before(ib, B, x, y):
        c = ib.bind("cse_v1", x * 3)
        ib.store(B, (0,), c + (x - y))
        ib.store(B, (1,), c - (x - y))

    after = CommonSubexprElim()(fn(before, BUF, ("x", I32), ("y", I32)))
    assert cse_names(after) == ["cse_v1", "cse_v2"]


def test_idempotent_and_untouched_subtrees_shared():
    def before(ib, B, x, y):
        with ib.for_("i", 0, 4) as i:
            ib.store(B, (i,), x * y + i)
        with ib.for_("j", 0, 4) as j:
            ib.store(B, (j,), (x - y) + (x - y))

    f = fn(before, BUF, ("x", I32), ("y", I32))
    g = CommonSubexprElim()(f)
    assert g is not f
    assert g.body.stmts[0] is f.body.stmts[0]  # the first loop is untouched: same object
    assert CommonSubexprElim()(g) is g


def test_mul_not_confused_with_add():
    def before(ib, B, x, y):
        ib.store(B, (0,), x * y)
        ib.store(B, (1,), x + y)

    f = fn(before, BUF, ("x", I32), ("y", I32))
    assert CommonSubexprElim()(f) is f
    assert isinstance(f.body.stmts[0].value, Mul)


def test_if_stmt_kept_identity_when_unchanged():
    def before(ib, B, x):
        with ib.if_(x > 0):
            ib.store(B, (0,), x)

    f = fn(before, BUF, ("x", I32))
    assert CommonSubexprElim()(f) is f
    assert isinstance(f.body.seq[0], IfThenElse)


def test_not_hoisted_out_of_one_sided_branches():
    # x // y only evaluated when y != 0: binding it above both ifs would divide by zero
    def before(ib, B, x, y):
        with ib.if_(y.ne(0)):
            ib.store(B, (0,), x // y)
        with ib.if_(y.ne(0)):
            ib.store(B, (1,), x // y)

    f = fn(before, BUF, ("x", I32), ("y", I32))
    assert CommonSubexprElim()(f) is f


def test_not_hoisted_out_of_loops_that_may_not_run():
    def before(ib, B, n, y, z):
        with ib.for_("i", 0, n) as i:
            ib.store(B, (i,), y * z)
        with ib.for_("j", 0, n) as j:
            ib.store(B, (j,), y * z + 1)
            ib.store(B, (j + 1,), y * z + 2)

    f = fn(before, BUF, ("n", I32), ("y", I32), ("z", I32))
    g = CommonSubexprElim()(f)
    assert g.body.stmts[0] is f.body.stmts[0]  # the first loop keeps its single use
    second = g.body.stmts[1].body.stmts
    assert isinstance(second[0], Bind) and second[0].var.name == "cse_v1"  # bound inside the loop
    assert CommonSubexprElim()(g) is g


def test_hoisted_when_certain_through_nested_branches():
    def before(ib, B, c, d, y, z):
        with ib.if_(c > 0):
            with ib.if_(d > 0):
                ib.store(B, (0,), y - z)
            with ib.else_():
                ib.store(B, (1,), y - z)
        with ib.else_():
            ib.store(B, (2,), y - z)

    g = CommonSubexprElim()(fn(before, BUF, ("c", I32), ("d", I32), ("y", I32), ("z", I32)))
    assert isinstance(g.body.stmts[0], Bind) and isinstance(g.body.stmts[1], IfThenElse)


# -- the walks dispatch through the functor base (issue #30) -----------------------------------
def test_occurrences_inside_a_generic_expression_are_replaced():
    """Select and Cast have no sc_/rw_ method: numbered by their fields (sc_generic) and
    rebuilt only where an operand changed (rw_generic, through ``rebuild``)."""
    from tirx.ir import Cast, Select

    x, y = Var("x", I32), Var("y", I32)
    common = Add(Mul(x, y, I32), tirx.ir.const(3), I32)
    untouched = Cast(ty.float32, x)
    sel = Select(x < y, common, Add(common, tirx.ir.const(1), I32), I32)
    f = Function("main", (x, y), SeqStmt((Evaluate(sel), Evaluate(untouched))))
    g = CommonSubexprElim()(f)
    assert cse_names(g) == ["cse_v1"]
    stmts = g.body.stmts
    v = stmts[0].var
    new_sel = stmts[1].value
    assert type(new_sel) is Select and new_sel.true_value is v and new_sel.false_value.a is v
    assert new_sel.cond is sel.cond  # an operand without occurrences stays shared
    assert stmts[2].value is untouched


def test_cse_dispatch_tables_and_unknown_statement():
    from tirx.ir.functor import DispatchTable
    from tirx.passes.cse import _CSE

    class MyEval(Evaluate):
        pass

    assert isinstance(_CSE._scan_table, DispatchTable)
    assert _CSE._scan_table[IfThenElse] is _CSE.scan_IfThenElse
    assert _CSE._rws_table[BufferStore] is _CSE.rws_BufferStore
    x = Var("x", I32)
    with pytest.raises(TypeError, match="CommonSubexprElim: unknown statement MyEval"):
        _CSE().function(Function("main", (x,), MyEval(x)))
