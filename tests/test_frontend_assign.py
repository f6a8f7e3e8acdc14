# ruff: noqa: F841
# (kernel bodies are the tirx DSL: names such as T.constexpr parameters and locals are read by the parser)
"""Assignment rules (pointer Bind PR, numeric assignment, T.let, mutable locals) and pointers."""

from __future__ import annotations

import pytest
from test_frontend_util import line_of

import tirx
from tirx.ir import (
    AllocBuffer,
    Bind,
    BufferLoad,
    BufferStore,
    Call,
    DeclBuffer,
    DeviceEntry,
    PointerType,
    PrimType,
    SeqStmt,
    Var,
    While,
    post_order,
)  # fmt: skip
from tirx.script import tirx as T


def body(f):
    b = f.body
    if isinstance(b, DeviceEntry):
        b = b.body
    return list(b.stmts) if isinstance(b, SeqStmt) else [b]


def binds(f):
    return [n for n in post_order(f.body) if isinstance(n, Bind)]


# ------------------------------------------------------------------ pointers
def test_pointer_assignment_is_typed_bind():
    @T.function
    def f(A: T.Tensor((8,), "float32", scope="shared")):
        p = T.address_of(A[2])
        q = A.ptr_to([3])
        X = T.decl_buffer((4,), "float32", data=p, scope="shared")
        X[0] = A[0]

    b = binds(f)
    assert [x.var.name for x in b] == ["p", "q"]
    assert b[0].var.ty == PointerType(PrimType("float32"), "shared")
    assert b[1].var.ty == b[0].var.ty
    d = next(n for n in post_order(f.body) if isinstance(n, DeclBuffer))
    assert d.buffer.data is b[0].var and d.buffer.scope == "shared"


def test_pointer_reassignment_is_a_diagnostic():
    with pytest.raises(tirx.DiagnosticError) as ei:

        @T.function
        def f(A: T.Tensor((8,), "float32")):
            p = T.address_of(A[0])
            p = T.address_of(A[1])  # MARK-ptr-reassign

    e = ei.value
    assert "immutable" in str(e) and "'p'" in str(e)
    assert e.span.line == line_of(__file__, "MARK-ptr" + "-reassign")
    assert e.span.col == 13
    assert str(e).startswith("error: cannot reassign 'p'")


def test_pointer_shadowing_a_captured_name_is_allowed():
    p = T.dynamic("p")  # a name from outside the kernel

    @T.function
    def f(A: T.Tensor((8,), "float32")):
        p = T.address_of(A[0])
        A[1] = A[0]

    assert binds(f)[0].var is not p and isinstance(binds(f)[0].var.ty, PointerType)


def test_address_of_typed_view_over_byte_storage():
    @T.function
    def f(A: T.Tensor((8,), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32, dynamic_smem_bytes=1024))
        raw = T.alloc_buffer((1024,), "uint8", scope="shared.dyn")
        F = T.decl_buffer((256,), "float32", data=raw.data)
        p = T.address_of(F[3])
        q = F.ptr_to([4])
        A[0] = F[0]

    b = binds(f)
    assert b[0].var.ty == PointerType(PrimType("float32"), "shared.dyn")
    assert b[1].var.ty == PointerType(PrimType("float32"), "shared.dyn")


def test_reinterpret_both_argument_orders():
    @T.function(private=True)
    def f1(h: T.handle):
        p = T.reinterpret(h, ty=T.Ptr(T.float32))
        X = T.decl_tensor(p, ty_args=[T.Tensor((4,), "float32")])
        X[0] = T.float32(0)

    @T.function(private=True)
    def f2(h: T.handle):
        p = T.reinterpret(T.Ptr(T.float32), h)
        X = T.decl_tensor(p, ty_args=[T.Tensor((4,), "float32")])
        X[0] = T.float32(0)

    tirx.assert_structural_equal(f1, f2)
    assert binds(f1)[0].var.ty == PointerType(PrimType("float32"))


DSMEM_SRC_MARK = "dsmem"


def make_dsmem():
    from tirx.ir import PointerType, PrimType

    @T.function
    def dsmem(Out: T.Tensor((1,), "uint64")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=32, cluster=(2, 1, 1)))
        mbar = T.alloc_shared((1,), "uint64")
        ptr_ty = PointerType(PrimType("uint64"), "shared")
        remote_ptr = T.reinterpret(
            ptr_ty,
            T.ptx.map_shared_rank(mbar.ptr_to([0]), T.int32(0)),
        )
        remote_mbar = T.decl_buffer([1], "uint64", data=remote_ptr, scope="shared")
        Out[0] = remote_mbar[0]
        m = T.ptx.mapa(T.address_of(mbar[0]), 1)
        Y = T.decl_buffer([1], "uint64", data=m, scope="shared")
        Out[0] = Y[0]

    return dsmem


def test_dsmem_mbarrier_example_builds_prints_reparses():
    f = make_dsmem()
    b = binds(f)
    assert b[0].var.name == "remote_ptr"
    assert b[0].var.ty == PointerType(PrimType("uint64"), "shared")
    call = b[0].value
    assert isinstance(call, Call) and call.op.name == "reinterpret"
    # map_shared_rank is an alias: the raw uint64 of mapa (reinterpreted once more here)
    inner = call.args[0]
    assert inner.op.name == "reinterpret" and inner.ty == PrimType("uint64")
    assert inner.args[0].op.name == "ptx.mapa"
    assert b[1].var.ty == PointerType(PrimType("uint64"), "shared")  # mapa keeps the pointer type
    text = tirx.dumps(f)
    assert 'remote_ptr: T.let[T.Ptr(T.uint64, "shared")]' in text
    assert "T.ptx.mapa(T.address_of(mbar[0]), 1)" in text
    tirx.assert_structural_equal(tirx.loads(text), f)


# ------------------------------------------------------------------ numeric assignment
def test_straight_line_reassignment_binds_new_vars():
    @T.function
    def f(A: T.Tensor((8,), "int32")):
        a = A[0] + 1
        a = a + 2
        a += 3
        A[1] = a

    b = binds(f)
    assert [x.var.name for x in b] == ["a", "a", "a"]
    assert len({x.var for x in b}) == 3
    assert b[1].value.a is b[0].var and b[2].value.a is b[1].var
    st = body(f)[-1]
    assert st.value is b[2].var
    assert "a_1: T.let[T.int32] = a + 2" in tirx.dumps(f)


def test_reassignment_in_nested_loop_makes_a_mutable_local():
    @T.function
    def f(A: T.Tensor((16,), "int32")):
        k = 0
        while k < 10:
            k = k + 1
        s = A[0]
        for i in range(4):
            s += A[i]
        A[1] = k + s

    al = [n for n in post_order(f.body) if isinstance(n, AllocBuffer)]
    assert [a.buffer.name for a in al] == ["k", "s"]
    assert all(a.buffer.scope == "local" and len(a.buffer.shape) == 1 for a in al)
    w = next(n for n in post_order(f.body) if isinstance(n, While))
    assert isinstance(w.cond.a, BufferLoad) and w.cond.a.buffer is al[0].buffer
    assert not binds(f)
    tirx.assert_structural_equal(tirx.loads(tirx.dumps(f)), f)


def test_reassignment_in_branch_is_branch_local_as_in_tirx():
    """TIRx's meaning (apache-tvm-tirx 0.1.0a4 builds it; held-out round 13): a plain
    re-assignment in an ``if`` branch is a new binding that ends with the branch, so the read
    after the ``if`` sees the value from before it (a mutable local here gave other results)."""
    import numpy as np

    @T.function
    def f(A: T.Tensor((16,), "float32"), x: T.int32):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        v = A[0]
        if x > 0:
            v = A[1]
        else:
            v = v * 2.0
        A[2] = v

    assert not [n for n in post_order(f.body) if isinstance(n, AllocBuffer)]
    text = tirx.dumps(f)
    assert "v_1: T.let[T.float32] = A[1]" in text and text.rstrip().endswith("A[2] = v")
    for x in (1, -1):
        a = np.arange(16, dtype=np.float32) + 3
        tirx.compile(f, target="interp")(a, x)
        assert a[2] == 3.0


def test_unobserved_reassignment_in_a_loop_is_a_new_binding_as_in_tirx():
    """Each iteration assigns before it reads, and nothing reads after the loop: TIRx's new
    binding (``val_1``), the same values as a mutable local would give."""
    import numpy as np

    @T.function
    def f(A: T.Tensor((8,), "int32"), B: T.Tensor((8,), "int32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        val = A[0]
        B[7] = val
        for k in range(4):
            val = A[k] * 2
            B[k] = val

    assert not [n for n in post_order(f.body) if isinstance(n, AllocBuffer)]
    assert "val_1: T.let[T.int32] = A[k] * 2" in tirx.dumps(f)
    a = np.arange(1, 9, dtype=np.int32)
    b = np.zeros(8, dtype=np.int32)
    tirx.compile(f, target="interp")(a, b)
    assert list(b) == [2, 4, 6, 8, 0, 0, 0, 1]


@pytest.mark.parametrize("where", ["after the loop", "loop-carried", "while test", "nested def"])
def test_observed_reassignment_stays_a_mutable_local(where):
    """A read that sees a nested re-assignment (after the block, in the next iteration, in a
    ``while`` test, from a nested helper) needs the mutable local: Python's meaning."""
    import numpy as np

    if where == "after the loop":

        @T.function
        def f(A: T.Tensor((8,), "int32"), B: T.Tensor((8,), "int32")):
            s = A[0]
            for k in range(4):
                s = A[k]
            B[0] = s

        want = 4
    elif where == "loop-carried":

        @T.function
        def f(A: T.Tensor((8,), "int32"), B: T.Tensor((8,), "int32")):
            s = A[0]
            for k in range(4):
                B[k + 1] = s
                s = A[k] * 10
            B[0] = A[7]

        want = 8
    elif where == "while test":

        @T.function
        def f(A: T.Tensor((8,), "int32"), B: T.Tensor((8,), "int32")):
            i = 0
            while i < 6:
                B[i] = A[i]
                i = i + 2
            B[0] = 8

        want = 8
    else:

        @T.function
        def f(A: T.Tensor((8,), "int32"), B: T.Tensor((8,), "int32")):
            s = A[0]

            @T.inline
            def read():
                return s

            for k in range(2):
                s = A[k + 3]
            B[0] = read()

        want = 5
    assert [n for n in post_order(f.body) if isinstance(n, AllocBuffer)], tirx.dumps(f)
    a = np.arange(1, 9, dtype=np.int32)
    b = np.zeros(8, dtype=np.int32)
    tirx.compile(f, target="interp")(a, b)
    assert b[0] == want
    if where == "loop-carried":
        assert list(b[1:5]) == [1, 10, 20, 30]


def test_sibling_branch_definitions_are_separate_binds():
    @T.function
    def f(A: T.Tensor((16,), "int32"), x: T.int32):
        if x > 0:
            t = A[0]
            A[1] = t
        else:
            t = A[2]
            A[3] = t

    assert len(binds(f)) == 2


def test_annotated_forms():
    @T.function
    def f(A: T.Tensor((8,), "int64")):
        a: T.let = A[0] * 2
        b: T.let[T.int64] = 3
        c: T.int32 = 5
        c = c + 1
        d: T.float32
        d = T.float32(1.5)
        A[1] = a + b + T.cast(c, "int64") + T.cast(d, "int64")

    b = binds(f)
    assert [x.var.name for x in b] == ["a", "b"]
    assert b[1].var.ty == PrimType("int64") and b[1].value.ty == PrimType("int64")
    al = [n for n in post_order(f.body) if isinstance(n, AllocBuffer)]
    assert [(a.buffer.name, a.buffer.dtype.name) for a in al] == [("c", "int32"), ("d", "float32")]
    stores = [n for n in body(f) if isinstance(n, BufferStore) and n.buffer.name == "c"]
    assert len(stores) == 2  # init and c = c + 1


def test_let_type_mismatch_is_a_diagnostic():
    with pytest.raises(tirx.DiagnosticError) as ei:

        @T.function
        def f(A: T.Tensor((8,), "int32")):
            x: T.let[T.float32] = A[0]  # MARK-let-mismatch

    assert "float32" in str(ei.value)
    assert ei.value.span.line == line_of(__file__, "MARK-let" + "-mismatch")


def test_var_to_var_assignment_is_an_alias():
    # TIRx (0.1.0a4) names the same var: `alias = bx` emits no Bind (issue #14); it was a Bind
    n = T.dynamic("n")

    @T.function(private=True)  # a device helper: device ops outside a device entry
    def f(A: T.Tensor((n,), "int32")):
        m = n
        tx = T.cuda.thread_idx("x")
        t2 = tx
        A[0] = m + t2
        t2 = t2 + 1  # a new Bind of the alias name
        A[1] = t2

    b = binds(f)
    assert [x.var.name for x in b] == ["tx", "t2"]
    assert body(f)[1].value.a is n and body(f)[1].value.b is b[0].var
    assert b[1].value.a is b[0].var and body(f)[-1].value is b[1].var


def test_tuple_unpacking_and_starred_targets():
    @T.function
    def f(A: T.Tensor((8,), "int32")):
        lo, hi = A[0] * 2, A[0] * 2 + 1
        first, *rest = (A[1], A[2], A[3])
        A[4] = lo + hi + first + rest[0] + rest[1]

    assert [x.var.name for x in binds(f)] == ["lo", "hi", "first"]


def test_meta_var_and_python_values_bind_no_var():
    @T.function
    def f(A: T.Tensor((8,), "int32")):
        k = T.meta_var(3)
        shape = A.shape
        idx = (1, 2)
        A[k] = idx[1] + shape[0]

    assert not binds(f)
    st = body(f)[0]
    # 2 + A.shape[0] folds as TIRx folds it (issue #14); it was Add(2, 8)
    assert st.indices[0].value == 3 and st.value.value == 10


def test_local_scalar_reassignment_stores():
    @T.function
    def f(A: T.Tensor((8,), "float32")):
        t = T.local_scalar("float32", T.float32(1.0))
        t = t + A[0]
        A[1] = t

    st = [n for n in body(f) if isinstance(n, BufferStore)]
    assert st[0].buffer.name == "t" and st[1].buffer.name == "t"
    assert isinstance(st[2].value, BufferLoad) and st[2].value.buffer.name == "t"


def test_bind_var_is_var():
    @T.function(private=True)  # a device helper: device ops outside a device entry
    def f(A: T.Tensor((8,), "int32")):
        i = T.cuda.thread_idx("x")
        A[i] = 0

    assert isinstance(binds(f)[0].var, Var)


def test_ptr_byte_offset_and_access_ptr_accept_prim_types():
    @T.function
    def f(A: T.Tensor((64,), "uint8", scope="shared")):
        p = T.ptr_byte_offset(T.float32, A.data, 16)
        q = T.tvm_access_ptr(T.float16, A.data, 4, 8, 3)
        r = T.ptr_byte_offset(A.ptr_to([0]), 4)
        X = T.decl_buffer((4,), "float32", data=p, scope="shared")
        X[0] = T.float32(0)

    b = binds(f)
    assert b[0].var.ty == PointerType(PrimType("float32"), "shared")
    assert b[1].var.ty == PointerType(PrimType("float16"), "shared")
    assert b[1].value.args[1].value == 8  # 4 elements of 2 bytes
    assert b[2].var.ty == PointerType(PrimType("uint8"), "shared")


def test_kernel_local_plain_def_runs_as_python():
    """An undecorated kernel-local ``def`` has Python's meaning, as TIRx runs it while building
    (golden case ``local_def_python`` holds TIRx's text): ``range`` of constants unrolls, names
    bind expressions (no ``let``); a ``range`` of run-time values stays a loop; ``@T.inline``
    keeps the script's meaning (a loop, a ``let``)."""

    @T.function
    def f(X: T.Tensor((8,), "float32"), Y: T.Tensor((8,), "float32"), n: T.int32):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))

        def plain(m):
            s = X[0]
            for k in range(1, m):
                s = s + X[k]
            return s

        def upto(m):
            for k in range(m):
                Y[k] = X[k]

        @T.inline
        def script(m):
            s = X[0]
            for k in range(1, m):
                Y[k] = s
            return s

        Y[0] = plain(3)
        upto(n)
        Y[1] = script(2)

    text = f.script()
    assert "Y[0] = X[0] + X[1] + X[2]" in text
    assert "for k in range(n):" in text  # run-time extent: an IR loop
    assert "for k_1 in range(1, 2):" in text and "s: T.let[T.float32] = X[0]" in text
    tirx.assert_structural_equal(tirx.loads(text), f)

    with pytest.raises(tirx.DiagnosticError, match="must not be zero"):

        @T.function
        def g(Y: T.Tensor((8,), "float32")):
            T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))

            def bad():
                for k in range(0, 4, 0):
                    Y[k] = 0.0

            bad()
