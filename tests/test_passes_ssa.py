"""ConvertSSA: the behaviours TVM's own ConvertSSA tests check, plus ours."""

from __future__ import annotations

import pytest

import tirx
from tirx.ir import (
    Bind,
    BufferLoad,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    Function,
    Let,
    Module,
    PointerType,
    SeqStmt,
    TensorType,
    Var,
    const,
)
from tirx.ir import types as ty
from tirx.passes import ConvertSSA, PassContext, verify_well_formed
from tirx.surface.builder import IRBuilder

I32 = ty.int32


@pytest.fixture(autouse=True)
def _verify_each_pass():
    # ConvertSSA's output must be SSA; inputs here are not, so only outputs are checked
    with PassContext(verify=True, require_ssa=True):
        yield


def is_ssa(ir) -> bool:
    return verify_well_formed(ir, require_ssa=True) == []


def test_reuse_in_sequential_binds():
    var = Var("var", I32)
    f = Function(
        "main", (), SeqStmt((Bind(var, const(16)), Evaluate(var), Bind(var, const(32)), Evaluate(var)))
    )
    assert not is_ssa(f)
    g = ConvertSSA()(f)
    s = g.body.stmts
    v1, v2 = s[0].var, s[2].var
    assert v1 is not v2 and v1.name == v2.name == "var"
    assert s[1].value is v1 and s[3].value is v2
    exp_a, exp_b = Var("a", I32), Var("b", I32)
    expected = Function(
        "main",
        (),
        SeqStmt((Bind(exp_a, const(16)), Evaluate(exp_a), Bind(exp_b, const(32)), Evaluate(exp_b))),
    )
    tirx.assert_structural_equal(g, expected)


def test_reuse_in_nested_binding_refers_to_innermost():
    # a Bind inside a loop body shadows the outer one; after the loop the outer is back
    var = Var("var", I32)
    i = Var("i", I32)
    inner = SeqStmt((Evaluate(var), Bind(var, const(16)), Evaluate(var)))
    body = SeqStmt(
        (
            Bind(var, const(32)),
            Evaluate(var),
            For(i, const(0), const(2), ForKind.SERIAL, inner),
            Evaluate(var),
        )
    )
    g = ConvertSSA()(Function("main", (), body))
    outer = g.body.stmts[0].var
    loop = g.body.stmts[2]
    new_inner = loop.body.stmts[1].var
    assert outer is var and new_inner is not var
    assert loop.body.stmts[0].value is outer  # before the inner binding: the outer one
    assert loop.body.stmts[2].value is new_inner
    assert g.body.stmts[3].value is outer  # after the loop: the outer one again


def test_nested_let_expressions():
    x, y = Var("x", I32), Var("y", I32)
    e = Let(x, const(1), x + 1) + Let(x, const(1), x + y)
    f = Function("main", (y,), Evaluate(e))
    g = ConvertSSA()(f)
    assert is_ssa(g)
    assert g.body.seq[0].value.a.var is not g.body.seq[0].value.b.var


def _func_with(name, body, params=()):
    return Function(name, tuple(params), body)


def test_reused_var_across_module():
    var = Var("var", I32)
    body = SeqStmt((Bind(var, const(10)), Evaluate(var)))
    mod = Module((_func_with("func_a", body), _func_with("func_b", body)))
    out = ConvertSSA()(mod)
    assert is_ssa(out)
    a, b = out["func_a"].body.stmts[0].var, out["func_b"].body.stmts[0].var
    assert a is not b and a.name == b.name == "var"
    assert out["func_a"] is mod["func_a"]  # the first definition keeps its var
    tirx.assert_structural_equal(out, mod)


def test_reused_parameter():
    n = Var("n", I32)
    mod = Module((_func_with("func_a", Evaluate(n), (n,)), _func_with("func_b", Evaluate(n), (n,))))
    out = ConvertSSA()(mod)
    fb = out["func_b"]
    assert fb.params[0] is not n and fb.body.seq[0].value is fb.params[0]
    tirx.assert_structural_equal(out, mod)


def test_reused_buffer_object_over_param():
    a = Var("a", PointerType(ty.float32))
    buf = IRBuilder().make_buffer("A", TensorType((1,), ty.float32), a)
    body = SeqStmt((DeclBuffer(buf), Evaluate(BufferLoad(buf, (const(0),)))))
    mod = Module((_func_with("func_a", body, (a,)), _func_with("func_b", body, (a,))))
    out = ConvertSSA()(mod)
    fb = out["func_b"]
    decl = fb.body.stmts[0]
    assert decl.buffer is not buf and decl.buffer.data is fb.params[0]
    assert fb.body.stmts[1].value.buffer is decl.buffer
    tirx.assert_structural_equal(out, mod)


def _add_fn(name="f"):
    ib = IRBuilder()
    with ib.function(name):
        A = ib.param("A", TensorType((1,), ty.float32))
        ib.evaluate(A[0])
    return ib.get()


def test_reused_buffer_parameter():
    f = _add_fn()
    mod = Module((f.replace(name="func_a"), f.replace(name="func_b")))
    out = ConvertSSA()(mod)
    fa, fb = out["func_a"], out["func_b"]
    assert fb.params[0] is not fa.params[0]
    assert fb.buffer_map[0][1] is not fa.buffer_map[0][1]
    assert fb.buffer_map[0][1].data is fb.params[0]
    assert fb.body.seq[0].value.buffer is fb.buffer_map[0][1]
    tirx.assert_structural_equal(out, mod)


def test_no_change_if_already_ssa():
    mod = Module((_add_fn("func"),))
    out = ConvertSSA()(mod)
    assert out is mod
    f = _add_fn()
    assert ConvertSSA()(f) is f


def _thread_kernel(name="kernel_1"):
    from tirx.ir import BufferStore

    tx = Var("tx", I32)
    B = IRBuilder().make_buffer("B", TensorType((256,), ty.float32))

    def loop(v):
        return For(tx, const(0), const(256), ForKind.THREAD_BINDING, v, thread="threadIdx.x")

    body = SeqStmt(
        (
            loop(BufferStore(B, BufferLoad(B, (tx,)) + 1.0, (tx,))),
            loop(BufferStore(B, BufferLoad(B, (tx,)) + 2.0, (tx,))),
        )
    )
    return Function(name, (B.data,), body, ((B.data, B),)), tx


def test_keep_duplicate_thread_var_in_same_function():
    f, _tx = _thread_kernel()
    assert ConvertSSA()(f) is f  # one hardware index: both loops keep the same var


def test_de_duplicate_thread_var_across_functions():
    f, tx = _thread_kernel()
    with PassContext():
        mod = Module((f, f.replace(name="kernel_2")))
        out = ConvertSSA()(mod)
    assert is_ssa(out)
    k1, k2 = out["kernel_1"], out["kernel_2"]
    assert k1.body.stmts[0].var is k1.body.stmts[1].var is tx  # reused within the function
    assert k2.body.stmts[0].var is k2.body.stmts[1].var is not tx  # renamed across functions
    assert k2.params[0] is not k1.params[0]


def test_idempotent():
    var = Var("v", I32)
    i = Var("i", I32)
    body = SeqStmt(
        (
            Bind(var, const(1)),
            For(i, const(0), const(3), ForKind.SERIAL, SeqStmt((Bind(var, i), Evaluate(var)))),
            For(i, const(0), const(3), ForKind.SERIAL, Evaluate(i + var)),
        )
    )
    g = ConvertSSA()(Function("main", (), body))
    assert is_ssa(g)
    assert ConvertSSA()(g) is g


def test_alloc_buffer_reused_in_sibling_scopes():
    ib = IRBuilder()
    buf = ib.make_buffer("tmp", TensorType((4,), ty.float32, scope="local"))
    from tirx.ir import AllocBuffer, BufferStore, IfThenElse

    use = SeqStmt((AllocBuffer(buf), BufferStore(buf, const(1.0), (const(0),))))
    c = Var("c", ty.bool_)
    f = Function("main", (c,), IfThenElse(c, use, use))
    g = ConvertSSA()(f)
    then_buf = g.body.seq[0].then_case.stmts[0].buffer
    else_buf = g.body.seq[0].else_case.stmts[0].buffer
    assert then_buf is buf and else_buf is not buf
    assert g.body.seq[0].else_case.stmts[1].buffer is else_buf
