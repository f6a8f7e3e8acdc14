"""TIRx's Python IR API (``tvm_tirx.ir`` / ``tvm_tirx.tirx``) over tirx's nodes.

IR built by hand with TIRx's calls (``ir.For(var, begin, end, step, kind, body)``,
``ir.TensorStore(A, [i], v)``, ``tirx.Function([A, n], body)``, ...) is structurally the program
parsed from TVMScript; the node classes under TIRx's names answer ``isinstance`` / ``type(e) is``
and serve as ``tirx.ffi`` callback keys. docs/tirx_compat.md, "The IR's Python API".
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
from tirx import ffi, ir
from tirx import tirx as tx
from tirx.surface import forms

# TIRx's binary and comparison node classes (apache-tvm-tirx 0.1.0a4, ``tvm_tirx.tirx``)
ARITH = ["Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Min", "Max"]
BITWISE = ["BitwiseAnd", "BitwiseOr", "BitwiseXor", "LShift", "RShift"]
CMP = ["EQ", "NE", "LT", "LE", "GT", "GE"]
LOGIC = ["And", "Or"]
ALL_BINARY = ARITH + BITWISE + CMP + LOGIC


def _i32(v: int) -> ir.IntImm:
    return ir.IntImm("int32", v)


def _operands(name: str, dtype: str) -> tuple:
    if name in LOGIC:
        return ir.Var("p", "bool"), ir.Var("q", "bool")
    return ir.Var("x", dtype), ir.Var("y", dtype)


# ------------------------------------------------------------------ node classes
@settings(max_examples=60, deadline=None)
@given(st.sampled_from(ALL_BINARY), st.sampled_from(["int32", "int64", "uint8"]))
def test_binary_op_classes_are_the_nodes_they_build(name, dtype):
    cls = getattr(tx, name)
    a, b = _operands(name, dtype)
    e = cls(a, b)
    assert isinstance(e, cls) and type(e) is cls
    assert issubclass(cls, tx.Expr) and isinstance(e, tx.BinaryOpExpr)
    assert e.a is a and e.b is b
    others = [getattr(tx, n) for n in ALL_BINARY if getattr(tx, n) is not cls]
    assert not any(isinstance(e, o) for o in others)
    # a folder table keyed by class, as passes write it
    table = {getattr(tx, n): n for n in ALL_BINARY}
    assert table[type(e)] == name


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(ARITH + BITWISE + CMP), st.integers(-50, 50), st.integers(1, 50))
def test_python_operators_build_the_classes(name, x, y):
    """What ``x + y`` builds on expressions is the class TIRx's name gives."""
    a, b = ir.Var("a", "int32"), ir.Var("b", "int32")
    py = {
        "Add": a + b, "Sub": a - b, "Mul": a * b, "FloorDiv": a // b, "FloorMod": a % b,
        "LT": a < b, "LE": a <= b, "GT": a > b, "GE": a >= b, "EQ": a.eq(b), "NE": a.ne(b),
        "BitwiseAnd": a & b, "BitwiseOr": a | b, "BitwiseXor": a ^ b, "LShift": a << b, "RShift": a >> b,
    }  # fmt: skip
    if name in py:
        assert type(py[name]) is getattr(tx, name)
        assert tirx.structural_equal(py[name], getattr(tx, name)(a, b))


def test_tirx_spellings_are_tirx_classes():
    assert tx.BitwiseAnd is ir.BitAnd and tx.LShift is ir.Shl and tx.RShift is ir.Shr
    assert tx.BitwiseNot is ir.BitNot and tx.Expr is ir.PrimExpr and ir.Expr is ir.PrimExpr
    assert ir.If is ir.IfThenElse and ir.TensorLoad is ir.BufferLoad and ir.TensorStore is ir.BufferStore
    assert ir.AssertStmt is ir.Assert
    for n in ("Not", "Select", "Cast", "Let", "Var"):
        assert getattr(tx, n) is getattr(ir, n)


def test_select_not_cast_let_take_tirx_arguments():
    c = tx.LT(ir.Var("m", "int32"), _i32(3))
    s = tx.Select(c, _i32(1), _i32(2))
    assert s.condition is c and s.true_value.value == 1
    assert isinstance(tx.Not(c), tx.Not)
    assert tx.Cast("int64", _i32(3)).ty == "int64"
    v = ir.Var("v", "int32")
    assert isinstance(tx.Let(v, _i32(1), v + 1), tx.Let)


def test_binary_op_misuse_names_the_operand():
    with pytest.raises(TypeError, match=r"Add\.b"):
        tx.Add(ir.Var("x", "int32"), "y")
    with pytest.raises(TypeError, match="dtypes differ"):
        tx.Add(ir.Var("x", "int32"), ir.Var("y", "float32"))


# ------------------------------------------------------------------ ffi callbacks
_KERNEL = """
@T.function
def f(A: T.Tensor((16,), T.float32), n: T.int32):
    for i in range(16):
        A[i] = A[i] + T.float32(1.0)
    if n > 0:
        A[0] = A[1] - T.float32(2.0)
"""


def test_ffi_callbacks_keyed_by_tirx_names():
    f = tirx.loads(_KERNEL)
    out = ffi.structural_map(f, [((tx.Add, tx.Sub), lambda e: tx.Mul(e.a, e.b))])
    assert "*" in tirx.dumps(out) and "+" not in tirx.dumps(out).split("def f")[1]
    seen: list = []
    ffi.structural_walk(
        f,
        [
            (ir.TensorStore, lambda s: seen.append("store")),
            (ir.If, lambda s: seen.append("if")),
            (ir.TensorLoad, lambda s: seen.append("load")),
            (tx.Function, lambda s: seen.append("function")),
        ],
    )
    assert seen.count("store") == 2 and seen.count("if") == 1 and seen.count("load") == 2
    assert seen.count("function") == 1
    ptrs: list = []
    ffi.structural_walk(f, [(ir.PtrType, lambda t: ptrs.append(t))])  # types are values: never visited
    assert ptrs == []


# ------------------------------------------------------------------ hand-built == parsed
def _tensor(name: str = "A", shape=(16,), dtype: str = "float32") -> ir.Var:
    return ir.Var(name, tx.TensorType(shape, dtype))


def test_hand_built_kernel_equals_the_parsed_one():
    A, n, i = _tensor(), ir.Var("n", "int32"), ir.Var("i", "int32")
    one, two = ir.FloatImm("float32", 1.0), ir.FloatImm("float32", 2.0)
    loop = ir.For(i, 0, 16, 1, ir.ForKind.DEFAULT, ir.TensorStore(A, [i], tx.Add(ir.TensorLoad(A, [i]), one)))
    store0 = ir.TensorStore(A, [_i32(0)], tx.Sub(ir.TensorLoad(A, [_i32(1)]), two))
    body = ir.SeqStmt([loop, ir.If(tx.GT(n, _i32(0)), [store0], None)])
    f = tx.Function([A, n], body).with_attr("global_symbol", "f")
    g = tirx.loads(_KERNEL)
    tirx.assert_structural_equal(f, g)
    assert tirx.structural_hash(f) == tirx.structural_hash(g)
    assert tirx.dumps(f) == tirx.dumps(g)
    assert isinstance(f, tx.Function) and isinstance(g, tx.Function) and not isinstance(loop, tx.Function)


def test_unnamed_function_is_private_main():
    x = ir.Var("x", "int32")
    f = tx.Function([x], [ir.Evaluate(_i32(0))])
    assert f.private and f.name == "main" and f.ret_type is None
    g = tirx.loads("@T.function(private=True)\ndef main(x: T.int32):\n    T.evaluate(T.int32(0))\n")
    tirx.assert_structural_equal(f, g)
    h = tx.Function([x], ir.Evaluate(_i32(0)), attrs={"global_symbol": "k"})
    assert not h.private and h.name == "k" and "global_symbol" not in h.attrs
    r = tx.Function([x], ir.Return(x), ret_type=ir.PrimType("int32"))
    assert r.ret_type == "int32"


def test_tensor_var_is_one_buffer_everywhere():
    A, i = _tensor(), ir.Var("i", "int32")
    assert tx.is_tensor_var(A) and not tx.is_tensor_var(i)
    assert isinstance(A.ty, tx.TensorType) and A.ty.dtype == "float32" and A.ty.scope == "global"
    load, store = ir.TensorLoad(A, [i]), ir.TensorStore(A, [i], ir.FloatImm("float32", 0.0))
    assert load.source is store.dest
    f = tx.Function([A], ir.For(i, 0, 16, 1, ir.ForKind.DEFAULT, store))
    (p,) = f.params
    assert f.buffer_map == ((p, store.dest),) and p is store.dest.data
    assert tx.is_tensor_var(store.dest)


def test_tensor_type_takes_tirx_arguments():
    t = tx.TensorType([8, 4], "float16", "shared", 16)
    assert isinstance(t, ir.TensorType) and t.shape == (8, 4) and t.align == 16 and t.scope == "shared"
    A = ir.Var("S", t)
    f = tx.Function([A], ir.TensorStore(A, [_i32(0), _i32(1)], ir.FloatImm("float16", 1.0)))
    assert f.buffer_map[0][1].scope == "shared" and f.buffer_map[0][1].dtype == "float16"
    with pytest.raises(TypeError, match="shape"):
        tx.TensorType(8, "float32")
    with pytest.raises(ValueError, match="TensorType dtype"):
        tx.TensorType((8,), "floaty")


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(st.integers(0, 40), st.just("n")),
    st.one_of(st.integers(0, 80), st.just("n"), st.just("n+4")),
    st.integers(1, 4),
)
def test_for_in_tirx_order_is_the_parsed_loop(begin, end, step):
    """``ir.For(var, begin, end, step, kind, body)`` is the loop ``range(begin, end, step)``
    parses to, and reads back ``begin`` / ``end`` as written."""
    A, n, i = _tensor("A", (128,)), ir.Var("n", "int32"), ir.Var("i", "int32")

    def ex(v):
        return {"n": n, "n+4": n + 4}.get(v, v) if isinstance(v, str) else v

    def tx_text(v):
        return {"n": "n", "n+4": "n + 4"}.get(v, str(v)) if isinstance(v, str) else str(v)

    b, e = ex(begin), ex(end)
    store = ir.TensorStore(A, [i], ir.FloatImm("float32", 1.0))
    f = tx.Function([A, n], [ir.For(i, b, e, step, ir.ForKind.DEFAULT, [store])]).with_attr(
        "global_symbol", "f"
    )
    rng = f"range({tx_text(begin)}, {tx_text(end)}" + (f", {step})" if step != 1 else ")")
    head = "@T.function\ndef f(A: T.Tensor((128,), T.float32), n: T.int32):\n"
    text = f"{head}    for i in {rng}:\n        A[i] = T.float32(1.0)\n"
    g = tirx.loads(text)
    tirx.assert_structural_equal(f, g)
    loop = f.body.seq[0]
    assert isinstance(loop, ir.For)
    want_b = ir.convert(b) if isinstance(b, int) else b
    want_e = ir.convert(e) if isinstance(e, int) else e
    assert tirx.structural_equal(loop.begin, want_b) and tirx.structural_equal(loop.end, want_e)
    assert tirx.structural_equal(g.body.seq[0].end, want_e, map_free_vars=True)
    # one rule reads a range (the IR's, which the front ends import) and prints it back
    assert forms.range_extent is ir.stmt.range_extent and forms.loop_stop is ir.stmt.loop_stop
    s_ir, x_ir = ir.stmt.range_extent(want_b, want_e)
    assert tirx.structural_equal(s_ir, loop.start) and tirx.structural_equal(x_ir, loop.extent)
    assert tirx.structural_equal(ir.stmt.loop_stop(loop.start, loop.extent), want_e)


def test_for_keywords_kinds_and_annotations():
    i, n = ir.Var("i", "int32"), ir.Var("n", "int32")
    body = ir.Evaluate(_i32(0))
    a = ir.For(var=i, begin=2, end=n, step=1, kind=ir.ForKind.DEFAULT, body=body)
    assert a.begin.value == 2 and a.end is n and a.step.value == 1 and a.step.ty == i.ty and a.nonunit_step is None and a.kind is ir.ForKind.SERIAL
    b = ir.For(i, 0, 8, 2, ir.ForKind.UNROLLED, [body, body], {"k": 1})
    assert b.kind is ir.ForKind.UNROLLED and isinstance(b.body, ir.SeqStmt) and len(b.body.stmts) == 2 and b.annotations["k"] == 1
    assert b.step.value == 2
    c = ir.For(i, 0, 8, 1, 1, body)  # TIRx's kinds by value: 1 is PARALLEL
    assert c.kind is ir.ForKind.PARALLEL
    assert ir.ForKind.DEFAULT is ir.ForKind.SERIAL
    # tirx's own order is unchanged
    d = ir.For(i, _i32(0), _i32(8), ir.ForKind.SERIAL, body)
    assert d.extent.value == 8 and d.end.value == 8


@pytest.mark.parametrize(
    "call, exc, words",
    [
        (lambda i, b: ir.For(i, 0, 8, 1, 9, b), ValueError, ["For.kind", "9"]),
        (lambda i, b: ir.For(i, 0.5, 8, 1, ir.ForKind.DEFAULT, b), TypeError, ["For.begin"]),
        (lambda i, b: ir.For(i, 0, 8, 1, ir.ForKind.DEFAULT, b, None, 3), TypeError, ["at most 7"]),
        (lambda i, b: ir.For(var=i, begin=0, end=8, body=b), TypeError, ["missing", "kind"]),
        (lambda i, b: ir.For(var=i, begin=0, end=8, kind=0, body=b, bogus=1), TypeError, ["bogus"]),
        (lambda i, b: ir.For("i", 0, 8, 1, ir.ForKind.DEFAULT, b), TypeError, ["For.var"]),
        (lambda i, b: ir.TensorStore(i, [i], i), TypeError, ["BufferStore.buffer", "TensorType"]),
        (lambda i, b: ir.TensorLoad("A", [i]), TypeError, ["BufferLoad.buffer", "str"]),
        (lambda i, b: tx.Function(i, b), TypeError, ["params"]),
        (lambda i, b: tx.Function([1], b), TypeError, ["params[0]"]),
        (lambda i, b: tx.Function([i], b, attrs=3), TypeError, ["attrs"]),
        (lambda i, b: ir.RegionStmt("tirx.compute_scope", ["s"], [], {"a": 1}, b), ValueError, ["attrs"]),
        (lambda i, b: ir.RegionStmt(3, ["s"], [], None, b), TypeError, ["RegionStmt.op"]),
    ],
)
def test_misuse_names_the_argument(call, exc, words):
    i, b = ir.Var("i", "int32"), ir.Evaluate(_i32(0))
    with pytest.raises(exc) as ei:
        call(i, b)
    for w in words:
        assert w in str(ei.value)


def test_sequences_as_tirx_reads_them():
    """``len(seq)``, ``seq[i]``, iteration, nested sequences flattened; ``ir.stmt_seq``."""
    n = ir.Var("n", "int32")
    stores = [ir.Evaluate(_i32(k)) for k in range(4)]
    nested = ir.SeqStmt([ir.SeqStmt(stores[:2]), ir.SeqStmt(stores[2:])])
    assert len(nested) == 4 and nested[2] is stores[2] and list(nested) == stores and nested[-1] is stores[3]
    assert [s for s in nested[1:3]] == stores[1:3]
    empty = ir.SeqStmt([])
    assert len(empty) == 0 and bool(empty)  # a node is true, whatever its length
    with pytest.raises(IndexError):
        empty[0]
    made = ir.stmt_seq(n + 1, ir.Evaluate(n), 3)
    assert isinstance(made, ir.SeqStmt) and len(made) == 3
    assert all(isinstance(s, ir.Evaluate) for s in made)
    assert made[1] is not None and made[2].value.value == 3


def test_statements_under_tirx_names():
    n = ir.Var("n", "int32")
    body = ir.Evaluate(_i32(0))
    s = ir.SeqStmt(body)
    assert s.seq == (body,) and s.stmts == (body,)
    w = ir.While(tx.LT(n, _i32(3)), [body])
    assert w.condition is w.cond and w.body.seq == (body,)  # a body is a SeqStmt, as TIRx's
    c = ir.If(tx.LT(n, _i32(3)), [body], [])
    assert isinstance(c, ir.If) and c.condition is c.cond and c.then_case.seq == (body,) and c.else_case is None
    b = ir.Bind(ir.Var("m", "int32"), n)
    assert b.value is n and isinstance(ir.Return(n), ir.Return)
    a = ir.AssertStmt(
        tx.LT(n, _i32(3)), ir.StringImm("ValueError"), [ir.StringImm("n is "), ir.StringImm("big")]
    )
    assert a.kind == "ValueError" and a.message == ("n is ", "big") and a.condition is a.cond
    assert a.error_kind.value == "ValueError" and [p.value for p in a.message_parts] == ["n is ", "big"]
    assert isinstance(a, ir.AssertStmt)
    p = ir.PtrType("float32", "shared")
    assert isinstance(p, ir.PtrType) and p == ir.PointerType(ir.PrimType("float32"), "shared")
    assert ir.IntImm("int64", 8).ty == "int64" and ir.FloatImm("float16", 1.5).value == 1.5
    assert ir.Var("z", "float32").ty.dtype == "float32"


def test_assert_and_while_equal_the_parsed_ones():
    n = ir.Var("n", "int32")
    m = ir.Var("m", "int32")
    body = [
        ir.AssertStmt(tx.LT(n, _i32(3)), ir.StringImm("RuntimeError"), [ir.StringImm("bad")]),
        ir.Bind(m, tx.Add(n, _i32(1))),
        ir.While(tx.LT(m, _i32(3)), [ir.Evaluate(m)]),
    ]
    f = tx.Function([n], body, attrs={"global_symbol": "g"})
    text = (
        "@T.function\ndef g(n: T.int32):\n"
        '    assert n < 3, ("RuntimeError", ["bad"])\n'
        "    m = n + 1\n"
        "    while m < 3:\n"
        "        T.evaluate(m)\n"
    )
    tirx.assert_structural_equal(f, tirx.loads(text))


def test_region_stmt_in_tirx_order_is_the_parsed_region():
    A, t = _tensor(), ir.Var("tx", "int32")
    store = ir.TensorStore(A, [t], ir.FloatImm("float32", 1.0))
    r = ir.RegionStmt("tirx.launch_thread", [ir.StringImm("threadIdx.x"), _i32(16)], [t], None, [store])
    assert r.op == "tirx.launch_thread" and r.op.name == "tirx.launch_thread"
    assert r.body_params == (t,) and not r.attrs and r.result_vars == ()
    f = tx.Function([A], r).with_attr("global_symbol", "f")
    text = (
        "@T.function\ndef f(A: T.Tensor((16,), T.float32)):\n"
        '    with T.launch_thread("threadIdx.x", 16) as tx:\n'
        "        A[tx] = T.float32(1.0)\n"
    )
    tirx.assert_structural_equal(f, tirx.loads(text))
    s = ir.RegionStmt(op="tirx.compute_scope", args=["s"], body_params=[], attrs={}, body=store)
    assert s.kind == "compute_scope" and s.args[0].value == "s"


def test_module_functions_read_as_tirx_s_map_and_kinds_as_numbers():
    """Passes written for TIRx walk ``mod.functions.items()`` with GlobalVar keys, build
    ``IRModule({gv: f})``, read ``int(loop.kind)`` and call ``with_body(..., loc=...)``."""
    n = ir.Var("n", "int32")
    body = ir.Evaluate(_i32(0))
    fa = tx.Function([n], [body]).with_attr("global_symbol", "b_fn")
    fb = tx.Function([n], [body, body]).with_attr("global_symbol", "a_fn")
    mod = tirx.ir.Module((fa, fb))
    assert [f.name for f in mod.functions] == ["b_fn", "a_fn"] and mod.functions[0] is fa  # a tuple
    assert [(gv.name_hint, f.name) for gv, f in mod.functions.items()] == [("a_fn", "a_fn"), ("b_fn", "b_fn")]
    keys = mod.functions.keys()  # TIRx's map API (iterating the tuple gives functions)
    assert [gv.name_hint for gv in keys] == ["a_fn", "b_fn"]
    gv = mod.get_global_var("b_fn")
    assert mod.functions[gv] is fa and mod.functions["a_fn"] is fb and mod.functions.get("zz") is None
    with pytest.raises(KeyError, match="zz"):
        mod.functions["zz"]
    renamed = tirx.ir.Module({ir.GlobalVar("user_" + g.name_hint): f for g, f in mod.functions.items()})
    assert sorted(f.name for f in renamed.functions) == ["user_a_fn", "user_b_fn"]
    assert [int(k) for k in (ir.ForKind.SERIAL, ir.ForKind.PARALLEL, ir.ForKind.VECTORIZED, ir.ForKind.UNROLLED)] == [0, 1, 2, 3]
    g = fa.with_body([body, body], loc=fb.span)
    assert len(g.body.seq) == 2 and g.name == "b_fn"


def test_module_attributes_under_tirx_names():
    """``IRModule.with_attr`` / ``get_attr`` (a module pass annotating its module) build a new
    module; the attributes print and load back."""
    n = ir.Var("n", "int32")
    m = tirx.ir.Module((tx.Function([n], [ir.Evaluate(n)]).with_attr("global_symbol", "f"),))
    m2 = m.with_attr("num_functions", 1).with_attr("names", ["f"])
    assert len(m.attrs) == 0 and m2.get_attr("num_functions") == 1 and m2.get_attr("zz", 7) == 7
    assert tuple(m2.get_attr("names")) == ("f",)
    assert tirx.structural_equal(tirx.loads(tirx.dumps(m2)), m2)
    with pytest.raises(TypeError, match="key must be a str"):
        m.with_attr(3, 1)
