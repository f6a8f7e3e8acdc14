"""InferPointerTypes: precise PointerType(element, scope) for every pointer var."""

from __future__ import annotations

import pytest

import tirx
from tirx.ir import (
    AllocBuffer,
    Bind,
    Call,
    DeclBuffer,
    Evaluate,
    Function,
    Module,
    PointerType,
    SeqStmt,
    TensorType,
    Var,
    const,
    op,
)
from tirx.ir import types as ty
from tirx.passes import InferPointerTypes, PassContext
from tirx.surface.builder import IRBuilder, launch_args

U64_SHARED = PointerType(ty.uint64, "shared")


@pytest.fixture(autouse=True)
def _verify_each_pass():
    with PassContext(verify=True):
        yield


VOID_SHARED = PointerType(ty.void, "shared")


def _dsmem(remote_ty=VOID_SHARED):
    ib = IRBuilder()
    with ib.function("k"):
        A = ib.param("A", TensorType((1,), ty.uint64))
        args, at = launch_args(1, 32, cluster=2)
        with ib.device_entry(args, at):
            mbar = ib.alloc("mbar", TensorType((1,), ty.uint64, scope="shared"))
            raw = op.call("ptx.map_shared_rank", mbar.ptr_to([0]), 0)
            remote = ib.bind("remote", op.call("reinterpret", raw, ty=remote_ty))
            rb = ib.decl("rb", TensorType((1,), ty.uint64, scope="shared"), remote)
            ib.store(rb, (0,), A[0])
    return ib.get()


def _find_bind(f, name):
    from tirx.ir import post_order

    return next(n for n in post_order(f.body) if isinstance(n, Bind) and n.var.name == name)


def test_dsmem_remote_pointer_is_uint64_shared():
    f = _dsmem()
    g = InferPointerTypes()(f)
    b = _find_bind(g, "remote")
    assert b.var.ty == U64_SHARED and b.value.ty == U64_SHARED
    decl = next(n for n in tirx.ir.post_order(g.body) if isinstance(n, DeclBuffer))
    assert decl.buffer.data is b.var
    assert InferPointerTypes()(g) is g  # idempotent, already precise


def test_dsmem_codegen_declares_uint64_pointer():
    cuda = pytest.importorskip("tirx.codegen.cuda")
    try:
        src = cuda.generate(InferPointerTypes()(_dsmem()))
    except Exception as e:  # codegen in progress: only the declaration matters here
        pytest.skip(f"codegen not ready: {e}")
    text = str(getattr(src, "code", src))
    assert "uint64_t* const remote" in text or "uint64_t *remote" in text or "uint64_t* remote" in text


def test_already_precise_is_unchanged():
    f = _dsmem(U64_SHARED)
    assert InferPointerTypes()(f) is f


def test_address_of_is_pointer_to_buffer_dtype_in_backing_scope():
    # a float32 view over uint8 shared.dyn storage: &view[i] is float32* in shared.dyn
    ib = IRBuilder()
    with ib.function("k"):
        args, at = launch_args(1, 32)
        with ib.device_entry(args, at):
            raw = ib.alloc("raw", TensorType((64,), ty.uint8, scope="shared.dyn"))
            view = ib.decl("view", TensorType((16,), ty.float32, scope="shared.dyn"), raw.data)
            # hand-built address_of with an imprecise type, as a lowering pass might leave it
            p = Var("p", PointerType(ty.void, "shared.dyn"))
            ib.emit(Bind(p, Call(op.get("address_of"), (view[3],), PointerType(ty.void, "shared.dyn"))))
            ib.evaluate(op.call("call_extern", "use", p, ty=ty.void))
    g = InferPointerTypes()(ib.get())
    b = _find_bind(g, "p")
    assert b.var.ty == PointerType(ty.float32, "shared.dyn")
    assert b.value.ty == b.var.ty
    # the pointer passed on is the narrowed var
    assert any(
        isinstance(n, Call) and n.args[-1:] == (b.var,)
        for n in tirx.ir.post_order(g.body)
        if isinstance(n, Call)
    )


def test_handle_param_narrowed_by_decl():
    ib = IRBuilder()
    with ib.function("k"):
        h = ib.param("h", ty.handle)
        buf = ib.decl("buf", TensorType((8,), ty.float32), h)
        ib.store(buf, (0,), buf[1] + 1.0)
    g = InferPointerTypes()(ib.get())
    assert g.params[0].ty == PointerType(ty.float32)
    decl = g.body.stmts[0]
    assert decl.buffer.data is g.params[0]
    assert g.body.stmts[1].buffer is decl.buffer


def test_handle_param_narrowed_through_binds_and_reinterpret():
    h = Var("h", ty.handle)
    alias = Var("alias", ty.handle)
    q = Var("q", PointerType(ty.int32))
    body = SeqStmt(
        (
            Bind(alias, h),
            Bind(q, op.call("reinterpret", alias, ty=PointerType(ty.int32))),
            Evaluate(op.call("call_extern", "use", q, ty=ty.void)),
        )
    )
    g = InferPointerTypes()(Function("k", (h,), body))
    assert g.params[0].ty == PointerType(ty.int32)
    assert g.body.stmts[0].var.ty == PointerType(ty.int32)


def test_reinterprets_that_disagree_leave_void():
    h = Var("h", ty.handle)
    a, b = Var("a", PointerType(ty.int32)), Var("b", PointerType(ty.float32))
    body = SeqStmt(
        (
            Bind(a, op.call("reinterpret", h, ty=a.ty)),
            Bind(b, op.call("reinterpret", h, ty=b.ty)),
        )
    )
    f = Function("k", (h,), body)
    assert InferPointerTypes()(f) is f


def test_conflicting_uses_are_located_diagnostics():
    from tirx.ir import Span

    h = Var("h", ty.handle)
    ib = IRBuilder()
    b1 = ib.make_buffer("a", TensorType((4,), ty.float32), h)
    b2 = ib.make_buffer("b", TensorType((4,), ty.int32), h)
    s1, s2 = Span("k.py", 3, 5, 3, 20), Span("k.py", 4, 5, 4, 20)
    f = Function("k", (h,), SeqStmt((DeclBuffer(b1, span=s1), DeclBuffer(b2, span=s2))))
    with pytest.raises(tirx.DiagnosticError) as ei:
        InferPointerTypes()(f)
    e = ei.value
    assert e.span == s1 and s2 in e.spans
    assert "float32" in str(e) and "int32" in str(e) and "k.py:4:5" in str(e)


def test_params_of_called_functions_not_narrowed():
    from tirx.ir import GlobalVar

    h = Var("h", ty.handle)
    ib = IRBuilder()
    buf = ib.make_buffer("a", TensorType((4,), ty.float32), h)
    callee = Function("callee", (h,), DeclBuffer(buf))
    g = Var("g", ty.handle)
    caller = Function("caller", (g,), Evaluate(Call(GlobalVar("callee"), (g,), ty.void)))
    mod = Module((callee, caller))
    assert InferPointerTypes()(mod) is mod
    # alone, the callee's handle is narrowed
    assert InferPointerTypes()(callee).params[0].ty == PointerType(ty.float32)


def test_alloc_data_keeps_its_type():
    ib = IRBuilder()
    buf = ib.make_buffer("s", TensorType((4,), ty.float16, scope="shared"))
    args, at = launch_args(1, 1)
    from tirx.ir import DeviceEntry

    f = Function("k", (), DeviceEntry(args, at, SeqStmt((AllocBuffer(buf), Evaluate(const(0))))))
    assert InferPointerTypes()(f) is f


CONFLICT_TEXT = """\
from __future__ import annotations

# from tirx.script import tirx as T

@T.function
def k(h: T.Ptr(T.void)):
    a = T.decl_tensor(h, ty_args=[T.Tensor((4,), T.float32)])
    b = T.decl_tensor(h, ty_args=[T.Tensor((4,), T.int32)])
    a[0] = T.float32(1.0)
"""


def test_conflict_spans_from_parsed_text():
    try:
        f = tirx.loads(CONFLICT_TEXT, source_name="k.tirx")
    except Exception as e:  # the grammar is developed in parallel
        pytest.skip(f"tirx.loads cannot parse this yet: {e}")
    with pytest.raises(tirx.DiagnosticError) as ei:
        InferPointerTypes()(f)
    lines = {s.line for s in ei.value.spans if s is not None}
    assert {7, 8} <= lines
    assert "k.tirx:7" in str(ei.value) and "k.tirx:8" in str(ei.value)
