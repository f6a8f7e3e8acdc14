"""VerifyWellFormed: each check, located messages, the raising mode."""

from __future__ import annotations

import pytest

import tirx
from tirx.ir import (
    AllocBuffer,
    Bind,
    Break,
    BufferLoad,
    BufferStore,
    Call,
    Continue,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    Function,
    GlobalVar,
    IfThenElse,
    Module,
    PointerType,
    Return,
    SeqStmt,
    Span,
    TensorType,
    Var,
    While,
    const,
    op,
)
from tirx.ir import types as ty
from tirx.passes import VerifyWellFormed, verify_well_formed
from tirx.surface.builder import IRBuilder, launch_args

I32 = ty.int32
SP = Span("kernel.py", 7, 5, 7, 12)


def msgs(ir, **kw) -> list[str]:
    return [e.message for e in verify_well_formed(ir, **kw)]


def good():
    ib = IRBuilder()
    with ib.function("main"):
        A = ib.param("A", TensorType((16,), ty.float32))
        n = ib.param("n", I32)
        with ib.for_("i", 0, 16) as i:
            x = ib.bind("x", i * 2 % 16)
            ib.store(A, (x,), A[x] + 1.0)
        with ib.if_(n > 0):
            y = ib.bind("y", n + 1)
            ib.evaluate(y)
        with ib.else_():
            y2 = ib.bind("y", n - 1)
            ib.evaluate(y2)
    return ib.get()


def test_good_function_passes():
    f = good()
    assert verify_well_formed(f) == []
    assert verify_well_formed(f, require_ssa=True) == []
    assert VerifyWellFormed(require_ssa=True)(f) is f


def test_a_zero_step_is_refused_as_the_parser_refuses_it():
    i, n = Var("i", I32), Var("n", I32)
    loop = For(i, const(0), n, ForKind.SERIAL, Evaluate(i), const(0))
    f = Function("main", (n,), loop)
    assert any("loop step is 0" in m for m in msgs(f))
    with pytest.raises(tirx.DiagnosticError, match="step cannot be zero"):
        tirx.loads(tirx.dumps(f))
    assert msgs(Function("main", (n,), For(i, const(0), n, ForKind.SERIAL, Evaluate(i), const(2)))) == []


def test_use_before_definition():
    x = Var("x", I32)
    f = Function("main", (), SeqStmt((Evaluate(x + 1), Bind(x, const(1)))))
    assert any("x is used before it is defined" in m for m in msgs(f))


def test_never_defined():
    x = Var("x", I32)
    assert any("never defined" in m for m in msgs(Function("main", (), Evaluate(x))))


def test_use_outside_scope_after_loop():
    x, i = Var("x", I32), Var("i", I32)
    loop = For(i, const(0), const(4), ForKind.SERIAL, Bind(x, i))
    f = Function("main", (), SeqStmt((loop, Evaluate(x))))
    assert any("x is used outside the scope" in m for m in msgs(f))
    # the loop var too
    f2 = Function("main", (), SeqStmt((loop, Evaluate(i))))
    assert any("i is used outside" in m for m in msgs(f2))


def test_bind_in_branch_not_visible_after():
    x, c = Var("x", I32), Var("c", ty.bool_)
    f = Function("main", (c,), SeqStmt((IfThenElse(c, Bind(x, const(1))), Evaluate(x))))
    assert msgs(f)


def test_ssa_option():
    x = Var("x", I32)
    f = Function("main", (), SeqStmt((Bind(x, const(1)), Bind(x, const(2)), Evaluate(x))))
    assert msgs(f) == []
    assert any("defined more than once" in m for m in msgs(f, require_ssa=True))
    # a param shared by two functions of a module
    n = Var("n", I32)
    mod = Module((Function("a", (n,), Evaluate(n)), Function("b", (n,), Evaluate(n))))
    assert msgs(mod) == []
    assert msgs(mod, require_ssa=True)


def test_break_continue_only_in_loops():
    assert any("break outside a loop" in m for m in msgs(Function("main", (), Break())))
    assert any("continue outside" in m for m in msgs(Function("main", (), Continue())))
    c = Var("c", ty.bool_)
    assert msgs(Function("main", (c,), While(c, Break()))) == []
    # a device entry does not inherit the host loop
    args, at = launch_args(1, 1)
    from tirx.ir import DeviceEntry

    i = Var("i", I32)
    f = Function("main", (), For(i, const(0), const(2), ForKind.SERIAL, DeviceEntry(args, at, Break())))
    assert any("break outside" in m for m in msgs(f))


def test_device_only_ops_need_device_entry():
    f = Function("main", (), Evaluate(op.call("cuda.cta_sync")))
    assert any("device-only op T.cuda.cta_sync" in m for m in msgs(f))
    args, at = launch_args(1, 32)
    from tirx.ir import DeviceEntry

    assert msgs(Function("main", (), DeviceEntry(args, at, Evaluate(op.call("cuda.cta_sync"))))) == []


def test_types_consistent():
    ib = IRBuilder()
    A = ib.make_buffer("A", TensorType((4, 4), ty.float32))
    f = Function("main", (A.data,), Evaluate(BufferLoad(A, (const(0),))), ((A.data, A),))
    assert any("rank 2" in m for m in msgs(f))
    x = Var("x", ty.float32)
    ret = Function("main", (x,), Return(x), ret_ty=I32)
    assert any("return value has type float32" in m for m in msgs(ret))
    # op argument kinds: popcount takes an integer
    bad = Call(op.get("popcount"), (x,), ty.float32)
    assert any("T.popcount" in m for m in msgs(Function("main", (x,), Evaluate(bad))))


def test_calls_between_functions_checked():
    n = Var("n", I32)
    callee = Function("callee", (n,), Evaluate(n))
    x = Var("x", ty.float32)
    caller = Function("caller", (x,), Evaluate(Call(GlobalVar("callee"), (x,), ty.void)))
    assert any("argument 1 has type float32" in m for m in msgs(Module((callee, caller))))
    missing = Function("caller", (), Evaluate(Call(GlobalVar("nope"), (), ty.void)))
    assert any("unknown function nope" in m for m in msgs(Module((missing,))))


def test_pointer_consistent_with_declared_buffer():
    p = Var("p", PointerType(ty.float32))
    ib = IRBuilder()
    ok = ib.make_buffer("V", TensorType((4,), ty.float32), p)
    assert msgs(Function("main", (p,), DeclBuffer(ok))) == []
    # as in TIRx, a tensor of another element type reinterprets the storage (A.view("uint32"))
    words = ib.make_buffer("W", TensorType((4,), ty.uint64), p)
    assert msgs(Function("main", (p,), DeclBuffer(words))) == []
    # a pointer to pointers is no storage of elements
    pp = Var("pp", PointerType(PointerType(ty.float32)))
    bad = ib.make_buffer("X", TensorType((4,), ty.float32), pp)
    assert any("declared over pointer pp" in m for m in msgs(Function("main", (pp,), DeclBuffer(bad))))
    # byte storage viewed as another dtype is fine; so is a void pointer
    b = Var("b", PointerType(ty.uint8, "shared.dyn"))
    h = Var("h", ty.handle)
    view = ib.make_buffer("F", TensorType((4,), ty.float32), b)
    alloc = ib.make_buffer("S", TensorType((16,), ty.uint8, scope="shared.dyn"), b)
    args, at = launch_args(1, 1)
    from tirx.ir import DeviceEntry

    body = DeviceEntry(args, at, SeqStmt((AllocBuffer(alloc), DeclBuffer(view))))
    assert msgs(Function("main", (), body)) == []
    assert msgs(Function("main", (h,), DeclBuffer(ib.make_buffer("H", TensorType((4,), ty.int32), h)))) == []


def test_buffer_used_outside_scope():
    ib = IRBuilder()
    buf = ib.make_buffer("tmp", TensorType((4,), ty.float32, scope="local"))
    c = Var("c", ty.bool_)
    f = Function(
        "main",
        (c,),
        SeqStmt((IfThenElse(c, AllocBuffer(buf)), BufferStore(buf, const(1.0), (const(0),)))),
    )
    assert any("buffer tmp is used outside" in m for m in msgs(f))


def test_errors_located_and_raising_mode():
    x = Var("x", I32)
    f = Function("main", (), SeqStmt((Evaluate(x, span=SP), Break(span=Span("kernel.py", 9, 1)))))
    errs = verify_well_formed(f)
    assert len(errs) == 2
    assert errs[0].span == SP and str(errs[0]).startswith("kernel.py:7:5:")
    assert errs[1].span.line == 9
    with pytest.raises(tirx.DiagnosticError) as ei:
        VerifyWellFormed()(f)
    e = ei.value
    assert e.span == SP
    assert "kernel.py:7:5" in str(e) and "kernel.py:9:1" in str(e)
    assert len(e.errors) == 2
    p = VerifyWellFormed(raising=False)
    assert p(f) is f and len(p.errors) == 2


def test_dynamic_shape_vars_defined():
    ib = IRBuilder()
    n = Var("n", I32)
    with ib.function("main"):
        A = ib.param("A", TensorType((n,), ty.float32))
        with ib.for_("i", 0, n) as i:
            ib.store(A, (i,), A[i] * 2.0)
    assert verify_well_formed(ib.get(), require_ssa=True) == []


# -- the walk dispatches through the functor base (issue #30) ----------------------------------
class _MyEval(Evaluate):
    """A statement class the checker has no ``s_`` method for."""


def test_checker_dispatch_tables_and_fallbacks():
    from tirx.ir.functor import DispatchTable
    from tirx.ir.verify import _Checker

    x = Var("x", I32)
    # a statement class without s_<Class>: reported by name; an expression class without
    # e_<Class> (Cast): its operands are checked
    f = Function("main", (x,), SeqStmt((_MyEval(x), Evaluate(tirx.ir.Cast(ty.float32, Var("y", I32))))))
    assert msgs(f) == [
        "unknown statement _MyEval (in function main)",
        "var y is undefined: used but never defined (in function main)",
    ]
    assert isinstance(_Checker._stmt_table, DispatchTable)
    assert _Checker._stmt_table[For] is _Checker.s_For
    assert _Checker._expr_table[tirx.ir.Cast] is None

    class Extended(_Checker):  # a subclass adds a statement kind through its own table
        def s__MyEval(self, s):
            self.expr(s.value)

    c = Extended(False, None)
    c.function(f)
    assert [e.message for e in c.errors] == ["var y is undefined: used but never defined (in function main)"]
