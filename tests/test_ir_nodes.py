"""IR nodes: operators build IR, literal coercion, construction validation, identity, spans."""

from __future__ import annotations

import attrs
import pytest

from tirx.ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    AllocBuffer,
    And,
    Assert,
    AttrStmt,
    Bind,
    BitAnd,
    BitNot,
    BitOr,
    BitXor,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    DeclBuffer,
    DeviceEntry,
    Div,
    Evaluate,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    Function,
    GlobalVar,
    IfThenElse,
    IntImm,
    Let,
    Module,
    Mul,
    Not,
    PointerType,
    Ramp,
    Return,
    Select,
    SeqStmt,
    SequentialSpan,
    Shl,
    Shr,
    Span,
    StringImm,
    Sub,
    Var,
    While,
    const,
    convert,
    op,
    prim,
    seq,
    structural_equal,
    structural_hash,
)  # fmt: skip
from tirx.ir.node import Attrs
from tirx.ir.stmt import LAUNCH_FIELDS_KEY

i32, i64, f16, f32, b1 = prim("int32"), prim("int64"), prim("float16"), prim("float32"), prim("bool")


def buf(name="A", dtype="float32", shape=(16,), scope="global"):
    t = prim(dtype)
    return Buffer(name, Var(name, PointerType(t, scope)), t, shape)


# ------------------------------------------------------------------ operators
def test_operators_build_ir():
    a, b = Var("a"), Var("b")
    cases = [
        (a + b, Add), (a - b, Sub), (a * b, Mul), (Div(a, b), Div), (a // b, FloorDiv), (a % b, FloorMod),
        (a & b, BitAnd), (a | b, BitOr), (a ^ b, BitXor), (a << b, Shl), (a >> b, Shr),
        (a < b, LT), (a <= b, LE), (a > b, GT), (a >= b, GE), (a.eq(b), EQ), (a.ne(b), NE),
    ]  # fmt: skip
    for e, cls in cases:
        assert type(e) is cls and e.a is a and e.b is b
    assert all(e.ty == (b1 if cls in (LT, LE, GT, GE, EQ, NE) else i32) for e, cls in cases)
    n = -a  # TIRx's negation: a * -1 (0 - a for an unsigned integer)
    assert type(n) is Mul and n.a is a and n.b.value == -1
    u = Var("u", "uint32")
    assert type(-u) is Sub and (-u).a.value == 0 and (-u).b is u
    assert type(~a) is BitNot and (~a).a is a
    with pytest.raises(TypeError, match=r"T\.truncdiv"):  # TIRx's '/' refuses two integers
        a / b  # the expression is the check
    f = Var("f", "float32")
    assert type(f / f) is Div


def test_python_literals_combine_as_in_tirx():
    """A literal has its own dtype, then both operands take one (tirx/ir/fold.py; every
    case against TIRx: tests/test_tirx_literals.py)."""
    a64 = Var("a", "int64")
    e = a64 + 1
    assert type(e.b) is IntImm and e.b.ty == i64 and e.b.value == 1
    e = 3 * a64
    assert type(e.a) is IntImm and e.a.ty == i64 and e.a.value == 3
    x = Var("x", "float16")
    e = x * 2
    assert type(e.b) is FloatImm and e.b.ty == f16 and e.b.value == 2.0
    e = 1.5 - x  # a float literal is float32: the float16 operand widens
    assert e.a.ty == f32 and e.a.value == 1.5 and type(e.b) is Cast and e.ty == f32
    assert (Var("i") + 1).b.ty == i32
    e = Var("i") + 1.5  # an int expression beside a float: float32
    assert type(e.a) is Cast and e.a.ty == f32 and e.b.value == 1.5
    e = Var("c", "int8") + 1  # a narrower integer widens to the literal's int32
    assert type(e.a) is Cast and e.ty == i32


def test_vector_operands_broadcast_scalars():
    v = Var("v", "float32x4")
    e = v + 1.0
    assert type(e.b) is Broadcast and e.b.lanes == 4 and e.b.value.ty == f32
    s = Var("s", "float32")
    e = v * s
    assert type(e.b) is Broadcast and e.b.value is s and e.ty == prim("float32", 4)
    assert (v < s).ty == prim("bool", 4)


@pytest.mark.parametrize(
    "lhs, rhs",
    [
        ("int32", "int64"),
        ("float16", "float32"),
        ("int32", "float32"),
        ("uint8", "int8"),
        ("bfloat16", "float16"),
    ],
)
def test_mixing_explicit_dtypes_raises_naming_both(lhs, rhs):
    """The node constructors take one dtype; the Python operators match two as TIRx's do."""
    a, b = Var("a", lhs), Var("b", rhs)
    with pytest.raises(TypeError) as ei:
        Add(a, b)
    assert lhs in str(ei.value) and rhs in str(ei.value)
    want = {"int64": "int64", "float32": "float32", "int8": "uint8", "float16": "float16"}[rhs]
    for e in (a + b, b * a):
        assert str(e.ty) == want
    assert str((a < b).ty) == "bool"


def test_bitwise_on_floats_is_rejected():
    x = Var("x", "float32")
    with pytest.raises(TypeError, match="float32"):
        x & x
    with pytest.raises(TypeError, match=r"Shl.*float32"):
        Shl(x, x)
    with pytest.raises(TypeError, match=r"BitNot\.a"):
        _ = ~x


def test_expressions_have_no_truth_value():
    with pytest.raises(TypeError, match="truth value"):
        bool(Var("a") < 3)
    with pytest.raises(TypeError):
        if Var("a") < 3:  # pragma: no cover
            pass


def test_const_and_convert():
    assert const(1).ty == i32 and const(2**40).ty == i64 and const(True).ty == b1 and const(1.0).ty == f32
    assert const(3, "uint8").ty == prim("uint8")
    c = const(1.0, "float16x4")
    assert type(c) is Broadcast and c.ty == prim("float16", 4)
    assert type(convert("s")) is StringImm
    with pytest.raises(TypeError):
        const(1.5, "int32")
    with pytest.raises(TypeError):
        convert(object())
    with pytest.raises(ValueError, match="does not fit"):
        const(300, "int8")


# ------------------------------------------------------------------ identity
def test_identity_equality_and_hash():
    a, b = IntImm(1), IntImm(1)
    assert a is not b and bool(a == b) is False and a != b  # == builds EQ; truth: identity
    assert hash(a) != hash(b) or a is not b  # identity hash
    d = {a: "a", b: "b"}
    assert d[a] == "a" and d[b] == "b"
    v = Var("x")
    assert v == v and {v: 1}[v] == 1
    assert structural_equal(a, b)


def test_nodes_are_frozen_and_slotted():
    v = Var("x")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        v.name = "y"
    assert not hasattr(v, "__dict__")
    e = v + 1
    e2 = e.replace(b=IntImm(2))
    assert e2 is not e and e2.b.value == 2 and e.b.value == 1


# ------------------------------------------------------------------ spans
def test_spans_on_every_node_never_matter():
    s1 = Span("a.py", 3, 5, 3, 9)
    s2 = SequentialSpan((Span("call.py", 10, 1), Span("def.py", 2, 4)))
    assert s2.innermost.source == "def.py" and s2.line == 2 and str(s1) == "a.py:3:5"
    a = Var("a")
    e1 = Add(a, IntImm(1, span=s1), span=s1)
    e2 = Add(a, IntImm(1), span=s2)
    assert structural_equal(e1, e2) and structural_hash(e1) == structural_hash(e2)
    st = BufferStore(buf(), FloatImm(1.0), (a,), span=s2)
    assert st.span is s2 and st.with_span(None).span is None
    assert structural_equal(st, st.with_span(s1))


# ------------------------------------------------------------------ validation
A = buf()
i, f = Var("i"), Var("f", "float32")
body = Evaluate(i)
LF = {"cuda.kernel_attrs": {}, LAUNCH_FIELDS_KEY: ["grid.x", "block.x"]}

BAD = [
    # (builder, exception, words the message must contain)
    (lambda: For(i, IntImm(0), FloatImm(4.0), ForKind.SERIAL, body), TypeError, ["For.extent", "float32"]),
    (lambda: For(i, FloatImm(0.0), IntImm(4), ForKind.SERIAL, body), TypeError, ["For.start"]),
    (lambda: For(i, IntImm(0), IntImm(4), ForKind.SERIAL, i), TypeError, ["For.body", "Var"]),
    (lambda: For(f, IntImm(0), IntImm(4), ForKind.SERIAL, body), TypeError, ["For", "float32"]),
    (lambda: For(i, IntImm(0), IntImm(4), "sideways", body), TypeError, ["For.kind"]),
    (lambda: For(i, IntImm(0), IntImm(4), ForKind.SERIAL, body, IntImm(1, "int64")), TypeError, ["For.step"]),
    (lambda: For(i, IntImm(0), IntImm(4), ForKind.SERIAL, body, None, 3), TypeError, ["For.thread"]),
    (lambda: BufferStore(A, IntImm(1), (i,)), TypeError, ["BufferStore.value", "int32", "float32"]),
    (lambda: BufferStore(A, FloatImm(1.0, "float16"), (i,)), TypeError, ["BufferStore.value", "float16"]),
    (lambda: BufferStore(A, FloatImm(1.0), (1,)), TypeError, ["BufferStore.indices[0]"]),
    (lambda: BufferStore("A", FloatImm(1.0), (i,)), TypeError, ["BufferStore.buffer"]),
    (lambda: BufferLoad(A, (i, "j")), TypeError, ["BufferLoad.indices[1]"]),
    (lambda: Bind(i, FloatImm(1.0)), TypeError, ["Bind.value", "float32", "int32"]),
    (lambda: Bind("i", IntImm(1)), TypeError, ["Bind.var"]),
    # a scalar of any dtype is a condition (TIRx's ``if x:``); a vector of another dtype is not
    (lambda: IfThenElse(Var("v", "int32x4"), body), TypeError, ["IfThenElse.cond", "int32x4"]),
    (lambda: IfThenElse(i < 1, body, 3), TypeError, ["IfThenElse.else_case"]),
    (lambda: While(Var("v", "float32x2"), body), TypeError, ["While.cond"]),
    (lambda: Assert(i, "RuntimeError"), TypeError, ["Assert.cond"]),
    (lambda: Assert(i < 1, 3), TypeError, ["Assert.kind"]),
    (lambda: Assert(i < 1, "E", "msg"), TypeError, ["Assert.message"]),
    (lambda: Evaluate(3), TypeError, ["Evaluate.value"]),
    (lambda: SeqStmt((body, i)), TypeError, ["SeqStmt.stmts[1]"]),
    (lambda: AttrStmt(1, i, body), TypeError, ["AttrStmt.key"]),
    (lambda: Return(3), TypeError, ["Return.value"]),
    (lambda: AllocBuffer(i), TypeError, ["AllocBuffer.buffer"]),
    (lambda: DeclBuffer(i), TypeError, ["DeclBuffer.buffer"]),
    (lambda: DeviceEntry((1,), {}, body), TypeError, ["DeviceEntry", "launch_fields"]),
    (lambda: DeviceEntry((1,), LF, body), TypeError, ["DeviceEntry", "1 launch values for 2"]),
    (lambda: DeviceEntry((1, FloatImm(1.0)), LF, body), TypeError, ["DeviceEntry.args[1]"]),
    (lambda: IntImm(1.5), TypeError, ["IntImm.value"]),
    (lambda: IntImm(1, "float32"), TypeError, ["IntImm.ty"]),
    (lambda: IntImm(256, "uint8"), ValueError, ["IntImm", "uint8"]),
    (lambda: IntImm(2, "bool"), ValueError, ["bool"]),
    (lambda: FloatImm("1"), TypeError, ["FloatImm.value"]),
    (lambda: FloatImm(1.0, "int32"), TypeError, ["FloatImm.ty"]),
    (lambda: StringImm(3), TypeError, ["StringImm.value"]),
    (lambda: Var(3), TypeError, ["Var.name"]),
    (lambda: Var("x", "float33"), ValueError, ["Var.ty"]),
    (lambda: Add(i, 1), TypeError, ["Add.b", "int"]),
    (lambda: Add(i, i, ty=f32), TypeError, ["Add.ty"]),
    (lambda: LT(i, i, ty=i32), TypeError, ["LT.ty", "bool"]),
    (lambda: And(i, i), TypeError, ["And", "bool"]),
    (lambda: Not(i), TypeError, ["Not", "bool"]),
    (lambda: Select(i, i, i), TypeError, ["Select.cond"]),
    (lambda: Select(i < 1, i, f), TypeError, ["Select", "int32", "float32"]),
    (lambda: Cast("int32", 3), TypeError, ["Cast.value"]),
    (lambda: Call(op.lookup("exp"), (3,), f32), TypeError, ["Call(exp).args[0]"]),
    (lambda: Call("exp", (f,), f32), TypeError, ["Call.op"]),
    (lambda: Ramp(i, Var("s", "int64"), 4), TypeError, ["Ramp", "int64"]),
    (lambda: Ramp(i, i, 1), TypeError, ["Ramp.lanes"]),
    (lambda: Ramp(Var("v", "int32x4"), Var("w", "int32x4"), 4), TypeError, ["Ramp.base"]),
    (lambda: Broadcast(f, 1), TypeError, ["Broadcast.lanes"]),
    (lambda: Broadcast(Var("p", PointerType(f32)), 4), TypeError, ["Broadcast.value"]),
    (lambda: Let(i, FloatImm(1.0), i), TypeError, ["Let", "int32", "float32"]),
    (lambda: GlobalVar(3), TypeError, ["GlobalVar.name"]),
    (lambda: Buffer("A", Var("A"), f32, (16,)), TypeError, ["Buffer.data"]),
    (lambda: Buffer("A", Var("A", PointerType(f32)), f32, (FloatImm(1.0),)), TypeError, ["Buffer.shape[0]"]),
    (lambda: Buffer("A", Var("A", PointerType(f32)), f32, (16,), (1, 1)), TypeError, ["Buffer.strides"]),
    (lambda: Buffer("A", Var("A", PointerType(f32)), f32, (16,), (), 1.5), TypeError, ["Buffer.elem_offset"]),
    (lambda: Buffer("A", Var("A", PointerType(f32)), f32, (16,), (), None, -1), TypeError, ["Buffer.align"]),
    (lambda: Buffer("A", Var("A", PointerType(f32)), "handle", (16,)), TypeError, ["Buffer.dtype"]),
    (lambda: Function("f", (3,), body), TypeError, ["Function.params[0]"]),
    (lambda: Function("f", (), i), TypeError, ["Function.body"]),
    (lambda: Function("f", (), body, ((i, i),)), TypeError, ["Function.buffer_map[0]"]),
    (lambda: Function("f", (), body, private="yes"), TypeError, ["Function.private"]),
    (lambda: Function("f", (), body, attrs=[1]), TypeError, ["Function.attrs"]),
    (lambda: Module((Function("f", (), body), Function("f", (), body))), ValueError, ["duplicate", "f"]),
    (lambda: Module((body,)), TypeError, ["Module.functions[0]"]),
]


@pytest.mark.parametrize("build, exc, words", BAD, ids=[f"bad{k}" for k in range(len(BAD))])
def test_construction_validation_names_node_and_field(build, exc, words):
    with pytest.raises(exc) as ei:
        build()
    msg = str(ei.value)
    for w in words:
        assert w in msg, (w, msg)


def test_valid_construction_and_coercions():
    s = For(i, IntImm(0), IntImm(4), "unroll", body, annotations={"pragma": 1})
    assert s.kind is ForKind.UNROLLED and isinstance(s.annotations, Attrs)
    assert Var("x", "float16").ty == f16
    assert IntImm(3, "int64").ty == i64 and FloatImm(1, "float16").value == 1.0
    assert Cast("float32", i).ty == f32
    assert Function("f", [], body, ret_ty="int32").ret_ty == i32
    st = BufferStore(A, Broadcast(FloatImm(1.0), 4), (Ramp(i, IntImm(1), 4),))
    assert st.value.ty == prim("float32", 4)
    ld = A.vload((i,), 4)
    assert ld.ty == prim("float32", 4)
    assert seq([body]) is body and type(seq([body, body])) is SeqStmt and seq([]).stmts == ()
    m = Module({"g": Function("f", (), body)})
    assert m["g"].name == "g" and "g" in m and len(m) == 1
    d = DeviceEntry((1, 128), LF, body)
    assert d.grid[0].value == 1 and d.block[0].value == 128 and d.cluster is None


def test_attrs_mapping():
    a = Attrs({"b": 1, "a": {"x": [1, 2]}})
    assert list(a) == ["b", "a"]  # insertion order kept for printing
    assert isinstance(a["a"], Attrs) and a["a"]["x"] == (1, 2)
    assert a == Attrs({"a": {"x": (1, 2)}, "b": 1}) and hash(a) == hash(Attrs({"a": {"x": (1, 2)}, "b": 1}))
    assert a.set("c", 3)["c"] == 3 and "c" not in a
    assert a.to_dict() == {"b": 1, "a": {"x": (1, 2)}}
    with pytest.raises(TypeError, match="keys must be str"):
        Attrs({1: 2})


def test_op_table():
    from tirx.errors import OpError
    from tirx.ir.op import call, declare, get, handler

    c = call("exp", f)
    assert type(c) is Call and c.ty == f32 and c.op is op.lookup("exp")
    assert call("isnan", f).ty == b1
    assert call("fma", f, 2.0, f).args[1].ty == f32  # literal takes the first typed argument's dtype
    assert op.lookup("no.such.op") is None
    with pytest.raises(OpError, match=r"no\.such\.op"):
        get("no.such.op")
    with pytest.raises(TypeError, match="takes 1 argument"):
        call("exp", f, f)
    with pytest.raises(TypeError, match="needs a result type"):
        call("reinterpret", f)
    with pytest.raises(TypeError, match="argument 1 must be an integer"):
        call("popcount", f)
    with pytest.raises(ValueError, match="declared twice"):
        declare("exp", "x")
    with pytest.raises(OpError, match=r"T.exp.*nosuchbackend"):
        handler("nosuchbackend", op.lookup("exp"))


# ------------------------------------------------------------------ visitor / mutator
def test_mutator_returns_the_same_object_when_nothing_changed():
    from tirx.ir import Mutator, collect_vars, post_order

    n = Var("n")
    B = buf("B", shape=(n,))
    k, x = Var("k"), Var("x", "float32")
    loop = For(k, IntImm(0), n, ForKind.SERIAL, SeqStmt((Bind(x, B[k] * 2.0), BufferStore(B, x, (k,)))))
    fn = Function("f", (B.data,), loop, ((B.data, B),))
    assert Mutator().visit(fn) is fn

    class Twice(Mutator):
        def visit_FloatImm(self, e):
            return FloatImm(e.value * 2, e.ty)

    g = Twice().visit(fn)
    assert g is not fn and g.body.seq[0].body.stmts[0].value.b.value == 4.0
    # untouched parts stay shared
    assert g.body.seq[0].body.stmts[1] is fn.body.seq[0].body.stmts[1] and g.buffer_map is fn.buffer_map
    assert not structural_equal(g, fn)
    assert collect_vars(fn.body) == [n, k, x]  # uses in field order (extent before body)
    kinds = [type(m).__name__ for m in post_order(loop)]
    assert kinds[-1] == "For" and "BufferStore" in kinds


def test_scope_stack():
    from tirx.ir import ScopeStack

    s = ScopeStack()
    s.current["a"] = 1
    with s.scope() as inner:
        inner["b"] = 2
        assert s.lookup("a") == 1 and s.lookup("b") == 2 and len(s) == 2
        assert [sorted(x) for x in s] == [["b"], ["a"]]  # innermost first
    assert s.lookup("b") is None and s.lookup("b", 0) == 0 and len(s) == 1


@pytest.mark.parametrize("bad", ["if", "a.b", "", "1st"])
def test_function_name_must_be_an_identifier(bad):
    from tirx.ir import Function, SeqStmt

    with pytest.raises(ValueError, match=r"Function\.name"):
        Function(bad, (), SeqStmt(()))


def test_visitor_defines_buffer_data_only_where_allocated():
    """AllocBuffer defines its data pointer; DeclBuffer and buffer-map params only use one."""
    import tirx
    from tirx.ir import Visitor

    f = tirx.loads(
        "@T.function\n"
        "def f(A: T.Tensor((64,), T.float32)):\n"
        '    with T.device_entry(1, 1, 1, 64, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": '
        '["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):\n'
        '        S = T.alloc_tensor(ty_args=[T.Tensor((64,), T.uint8, scope="shared")])\n'
        "        W = T.decl_tensor(S.data, ty_args=[T.Tensor((64,), T.uint8)])\n"
        '        W[T.cuda.thread_idx("x")] = T.uint8(1)\n'
    )

    class Defs(Visitor):
        def __init__(self):
            self.defs, self.uses = [], []

        def visit_var_def(self, v):
            self.defs.append(v.name)

        def visit_Var(self, v):
            self.uses.append(v.name)

    d = Defs()
    d.visit(f)
    assert sorted(d.defs) == ["A", "S"]
    assert d.uses.count("S") == 1 and d.uses.count("A") == 1


def test_loc_is_tirx_name_of_span():
    """``node.loc`` (TIRx's attribute) is the node's span."""
    x = Var("x", prim("int32"))
    assert x.loc is None
    sp = Span("k.py", 3, 4)
    assert x.with_span(sp).loc is sp


def test_a_cast_keeps_the_lane_count():
    """``T.Cast("float16x2", <4 lanes>)`` is refused where it is built, as TIRx refuses it
    (held-out round 29; tirx's CUDA failed in NVRTC and its interpreter with a numpy error)."""
    from tirx.ir import Cast, Ramp, const
    from tirx.ir.types import PrimType

    v4 = Ramp(const(0), const(1), 4)
    with pytest.raises(TypeError, match="the value has 4 lanes, the type 2"):
        Cast(PrimType("float16", 2), v4)
    assert Cast(PrimType("float16", 4), v4).ty.lanes == 4
