"""TIRx's builder API (``T.function_``, ``T.arg_``, ``T.bind_``, ``T.if_``, ``T.for_``, ...): a
kernel built call by call is the IR ``@T.function`` builds for the same source, prints,
loads back and compiles (tirx/script/protocol)."""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx
from tirx.ir import BufferLoad, Evaluate, Function, GlobalVar, IntImm, Module, SeqStmt
from tirx.ir.span import Span
from tirx.script import tirx as T

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from test_frontend_util import load_module

HEADER = "from tirx.script import tirx as T\n\n"


def built(fn) -> Function | Module:
    with T.IRBuilder() as ib:
        fn()
    return ib.get()


def same_three_ways(f, source: str, same_text: bool = True) -> None:
    """``f`` (built by the API) == ``@T.function`` of ``source`` == ``loads(dumps(f))``."""
    g = load_module(HEADER + source).f
    tirx.assert_structural_equal(f, g)
    tirx.assert_structural_equal(tirx.loads(tirx.dumps(f)), f)
    if same_text:  # (else variable names differ: equal up to renaming)
        assert tirx.dumps(f) == tirx.dumps(g)


# ------------------------------------------------------------------ whole kernels
def test_scalar_function_with_control_flow_matches_the_frontend():
    def body():
        with T.function_():
            T.func_name_("f")
            n = T.arg_("n", T.int32)
            T.func_ret_type_(T.int32)
            x = T.bind_(n + 1, name="x")
            y = T.bind_(T.int32(5), name="y")
            c = T.decl_mutable_cell_(0, ty=T.int32, name="c")
            T.set_mutable_cell_(c, c + x)
            with T.while_(T.lt_(c, 10)):
                T.set_mutable_cell_(c, c + 1)
                with T.if_(T.eq_(c, 5)), T.then_():
                    T.break_()
            cond = lambda j: T.and_(T.gt_(j, 3), T.not_(T.ne_(j, 7)), T.or_(T.le_(j, 1), T.ge_(j, 2)))  # noqa: E731
            with T.for_(T.range_(1, n, 2), names="j") as j, T.if_(cond(j)):
                with T.then_():
                    T.continue_()
                with T.else_():
                    T.evaluate(j)
            T.assert_(T.gt_(n, 0), "n must be positive")
            T.return_(T.if_then_else_(T.gt_(n, 0), x, y))

    src = """
@T.function
def f(n: T.int32) -> T.int32:
    x = n + 1
    y = T.int32(5)
    c: T.int32 = 0
    c = c + x
    while c < 10:
        c = c + 1
        if c == 5:
            break
    for j in range(1, n, 2):
        if j > 3 and not j != 7 and (j <= 1 or j >= 2):
            continue
        else:
            T.evaluate(j)
    assert n > 0, "n must be positive"
    return x if n > 0 else y
"""
    same_three_ways(built(body), src)


def _gpu_kernel() -> Function:
    def body():
        with T.function_():
            T.func_name_("f")
            A = T.arg_("A", T.Tensor((128,), "float32"))
            B = T.arg_("B", T.Tensor((128,), "float32"))
            with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128)):
                S = T.bind_(T.alloc_shared((128,), "float32"), name="S")
                tx = T.bind_(T.cuda.thread_idx("x"), name="tx")
                T.setitem_(S, tx, A[tx] * T.float32(2))
                T.emit_(T.cuda.cta_sync())  # a void op's call is emitted explicitly here
                with T.for_(T.grid(2, 3), names=["a", "b"]) as (a, b):
                    T.tensor_store(B, [a * 3 + b], S[a] + S[b])

    return built(body)


_GPU_SRC = """
@T.function
def f(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128)):
        S = T.alloc_shared((128,), "float32")
        tx = T.cuda.thread_idx("x")
        S[tx] = A[tx] * T.float32(2)
        T.cuda.cta_sync()
        for a, b in T.grid(2, 3):
            B[a * 3 + b] = S[a] + S[b]
"""


def test_gpu_kernel_matches_the_frontend_and_round_trips():
    same_three_ways(_gpu_kernel(), _GPU_SRC)


def test_gpu_kernel_compiles_through_nvrtc():
    pytest.importorskip("cuda.bindings.nvrtc")
    k = tirx.compile(_gpu_kernel(), target="cuda")
    assert "__shared__" in k.source and "__syncthreads()" in k.source


def test_bare_device_entry_holds_the_rest_of_the_function():
    def body():
        with T.function_():
            T.func_name_("f")
            A = T.arg_("A", T.Tensor((4,), "int32"))
            T.emit_(T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=4)))
            T.setitem_(A, T.cuda.thread_idx("x"), 7)

    src = """
@T.function
def f(A: T.Tensor((4,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=4))
    A[T.cuda.thread_idx("x")] = 7
"""
    same_three_ways(built(body), src)


def test_the_function_frame_gives_its_result_and_defaults_to_main():
    with T.IRBuilder() as ib, T.function_(private=True) as fn:
        T.arg_("n", T.int32)
    assert fn.result is ib.get() and fn.result.name == "main" and fn.result.private


def test_typed_bind_alias_and_python_values():
    def body():
        with T.function_():
            T.func_name_("f")
            n = T.arg_("n", T.int32)
            assert T.bind_(n, name="alias") is n  # a Var is an alias, no Bind
            assert T.bind_([1, 2], name="meta") == [1, 2]
            assert T.bind_(T.meta_var(3), name="m") == 3
            T.bind_(n, ty=T.let[T.int32], name="x")
            T.bind_(2, ty=T.int64, name="y")

    src = """
@T.function
def f(n: T.int32):
    x: T.let[T.int32] = n
    y: T.let[T.int64] = 2
"""
    same_three_ways(built(body), src)


def test_mutable_cells_from_storage_and_attributes():
    class State:
        pass

    def body():
        with T.function_():
            T.func_name_("f")
            n = T.arg_("n", T.int32)
            s = State()
            s.count = T.decl_mutable_cell_(ty=T.int32, name="count")
            assert T.setattr_(s, "count", n) is not None
            assert T.setattr_(s, "label", "plain") is None and s.label == "plain"
            buf = T.decl_mutable_cell_(T.alloc_local((1,), "int32"), name="acc")
            T.set_mutable_cell_(buf, 3)

    src = """
@T.function
def f(n: T.int32):
    count = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="local")])
    count[0] = n
    acc = T.alloc_local((1,), "int32")
    acc[0] = 3
"""
    same_three_ways(built(body), src)


def test_statements_return_receipts_that_emit_nothing_again():
    def body():
        with T.function_():
            T.func_name_("f")
            A = T.arg_("A", T.Tensor((4,), "int32"))
            with T.for_(range(4), names="i") as i:
                r = T.setitem_(A, i, i)
                assert isinstance(r, T.AlreadyEmitted)
                T.emit_(r)
                T.emit_([None, i, A, "text", r])  # inert values
                T.emit_([A[i] + 1, T.call_extern("g", i, ty=T.int32)])
                T.add_to_parent(Evaluate(IntImm(7)))

    src = """
@T.function
def f(A: T.Tensor((4,), "int32")):
    for i in range(4):
        A[i] = i
        T.evaluate(A[i] + 1)
        T.call_extern("g", i, ty=T.int32)
        T.evaluate(7)
"""
    same_three_ways(built(body), src)


def test_loops_of_every_spelling():
    def body():
        with T.function_():
            T.func_name_("f")
            A = T.arg_("A", T.Tensor((8,), "int32"))
            with T.for_(T.unroll(2), names="u") as u:
                T.setitem_(A, u, 1)
            with T.range_(0, 8, 2) as k:  # an unnamed frame is a loop over "i"
                T.setitem_(A, k, 2)
            with T.for_(T.range_(4, annotations={"pragma": 1}), names="p") as p:
                T.setitem_(A, p, 3)
            with T.for_(T.grid(2, 2, 2), names=["a", "*rest"]) as vs:
                assert len(vs) == 3
                T.setitem_(A, vs[0] * 4 + vs[1] * 2 + vs[2], 4)

    src = """
@T.function
def f(A: T.Tensor((8,), "int32")):
    for u in T.unroll(2):
        A[u] = 1
    for i in range(0, 8, 2):
        A[i] = 2
    for p in T.serial(4, annotations={"pragma": 1}):
        A[p] = 3
    for a, *rest in T.grid(2, 2, 2):
        A[a * 4 + rest[0] * 2 + rest[1]] = 4
"""
    same_three_ways(built(body), src)


def test_return_and_assert_forms():
    def body():
        with T.function_():
            T.func_name_("f")
            n = T.arg_("n", T.int32)
            T.func_ret("float32")
            T.assert_(n > 0, ("ValueError", ["n=", "bad"]))
            T.assert_(n < 100)
            T.assert_(True, "decided while building")
            T.return_(2)

    src = """
@T.function
def f(n: T.int32) -> T.float32:
    assert n > 0, ("ValueError", ["n=", "bad"])
    assert n < 100
    assert True, "decided while building"
    return 2
"""
    same_three_ways(built(body), src)
    with pytest.raises(AssertionError, match="assertion failed"), T.IRBuilder(), T.function_():
        T.assert_(False, "no")


# ------------------------------------------------------------------ expression helpers
def test_logic_and_comparisons_decide_host_values_in_python():
    assert T.and_(True, 3) == 3 and T.and_(0, 1) == 0 and T.or_(0, 2) == 2
    assert T.not_(0) is True and T.eq_(2, 2) is True and T.lt_(3, 2) is False
    assert T.if_then_else_(True, "a", "b") == "a"
    assert T.if_then_else_(T.int32(0), 1, 2) == 2  # a constant condition is decided now
    n = tirx.ir.Var("n", "int32")
    # from the first IR operand on, host values are T.bool terms (TIRx's T.And(n > 0, T.bool(True)))
    a, o = T.and_(n > 0, True), T.or_(n > 0, True)
    assert type(a) is tirx.ir.And and a.b.ty.is_bool and a.b.value == 1
    assert type(o) is tirx.ir.Or and o.b.ty.is_bool and o.b.value == 1
    # operands are already evaluated: none short-circuits, as TIRx's builder (oracle-checked)
    a0, o1 = T.and_(False, n > 0), T.or_(True, n > 0)
    assert type(a0) is tirx.ir.And and a0.a.value == 0 and type(o1) is tirx.ir.Or and o1.a.value == 1
    assert T.and_(True, False) is False
    e = T.eq_(n, 3)
    assert type(e) is tirx.ir.EQ and e.a is n and e.b.value == 3
    c = T.ge_(T.int32(3), 2)  # two constants fold, as in the frontend
    assert type(c) is IntImm and c.value == 1 and c.ty.is_bool
    with pytest.raises(TypeError):
        T.and_()


def test_tensor_indices_unravel_row_major():
    def body():
        with T.function_():
            T.func_name_("f")
            A = T.arg_("A", T.Tensor((4, 5, 6), "float32"))
            i = T.arg_("i", T.int32)
            assert [x.value for x in T.tensor_indices(A, 7)] == [0, 1, 1]
            assert T.tensor_indices(A, [1, 2, 3]) == [1, 2, 3]
            T.setitem_(A, tuple(T.tensor_indices(A, i)), T.float32(0))

    src = """
@T.function
def f(A: T.Tensor((4, 5, 6), "float32"), i: T.int32):
    A[i // 6 // 5, i // 6 % 5, i % 6] = T.float32(0)
"""
    same_three_ways(built(body), src)


def test_frame_scope_enters_frames_in_order():
    def body():
        with T.function_():
            T.func_name_("f")
            A = T.arg_("A", T.Tensor((6,), "int32"))
            with T.frame_scope([T.for_(T.range_(2), names="a"), T.for_(T.range_(3), names="b")]) as (a, b):
                T.setitem_(A, a * 3 + b, 0)

    src = """
@T.function
def f(A: T.Tensor((6,), "int32")):
    for a in range(2):
        for b in range(3):
            A[a * 3 + b] = 0
"""
    same_three_ways(built(body), src)


def test_locations_attach_to_nodes_receipts_and_frames():
    sp = Span("gen.py", 3, 5)
    with T.IRBuilder(), T.function_() as fn:
        n = T.arg_("n", T.int32)
        r = T.with_at_group_(sp, lambda: T.bind_(n + 1, name="x"))
        e = T.at_(sp, n + 2)
        assert e.span is sp and r.span is sp
        rec = T.emit_(e, loc=sp) or T.return_(loc=sp)
        assert rec.value.span is sp
    assert fn.result.body.stmts[0].span is sp
    with pytest.raises(TypeError, match="loc"):
        T.at_("here", 1)


# ------------------------------------------------------------------ modules
def test_module_frame_attrs_and_declared_functions_round_trip():
    @T.function
    def helper(x: T.int32) -> T.int32:
        return x + 1

    def body():
        with T.IRModuleFrame("Mod"):
            T.module_attrs({"system": "demo"})
            T.module_set_attr("version", 2)
            assert T.module_get_attr("system") == "demo" and T.module_get_attr("none") is None
            T.module_global_infos({})
            gv = T.decl_function("helper", helper)
            assert isinstance(gv, GlobalVar) and T.module_member_("k", 3) == 3
            with T.function_():
                T.func_name_("main")
                n = T.arg_("n", T.int32)
                T.func_ret_type_(T.int32)
                T.return_(T.call_global_var_(gv, [n]))

    m = built(body)
    assert isinstance(m, Module) and [f.name for f in m] == ["helper", "main"]
    assert dict(m.attrs) == {"system": "demo", "version": 2}
    src = """
@T.ir_module(attrs={"system": "demo", "version": 2})
class Mod:
    @T.function
    def helper(x: T.int32) -> T.int32:
        return x + 1

    @T.function
    def main(n: T.int32) -> T.int32:
        return Mod.helper(n)
"""
    g = load_module(HEADER + src).Mod
    tirx.assert_structural_equal(m, g)
    tirx.assert_structural_equal(tirx.loads(tirx.dumps(m)), m)
    T.check_well_formed_(m)


def test_module_misuse_is_a_clear_error():
    with T.IRBuilder():
        with pytest.raises(ValueError, match="module frame"):
            T.module_attrs({})
        with T.IRModuleFrame():
            T.module_set_attr("a", 1)
            with pytest.raises(ValueError, match="set already"):
                T.module_set_attr("a", 2)
            T.module_set_attr("a", 2, allow_overwrite=True)
            with pytest.raises(ValueError, match="global infos"):
                T.module_global_infos({"mesh": [1]})
            with pytest.raises(TypeError, match="finished tirx Function"):
                T.decl_function("g", object())
            with pytest.raises(ValueError, match="no function 'nope'"):
                T.call_global_var_(GlobalVar("nope"), [])
    with pytest.raises(ValueError, match="no global infos"):
        T.resolve_global_info_("mesh[0]")


def test_pyfunc_and_resolve_global_info_args():
    def plain(x):
        return x * 2

    assert T.pyfunc(plain) is plain

    @T.resolve_global_info_args("a", "a", resolver=lambda s: s.upper())
    def g(a, b="x"):
        return a, b

    assert g("hi") == ("HI", "x") and g(a=3) == (3, "x")
    with pytest.raises(ValueError, match="no parameter"):
        T.resolve_global_info_args("zz", resolver=str)(plain)


def test_check_well_formed_rejects_a_bad_function():
    def body():
        with T.function_():
            T.func_name_("f")
            T.break_()  # outside a loop

    with pytest.raises(tirx.DiagnosticError):
        T.check_well_formed_(built(body))


# ------------------------------------------------------------------ namespaces
def test_namespaces_resolve_to_tirx_modules():
    import tirx.script.protocol as proto

    assert T.ir is proto.ir and T.ir.ir is tirx.ir and T.ir_builder is proto  # T.ir.<x> is T.<x>
    assert T.parser_protocol is proto.parser_protocol and T.frame is proto.frame
    assert T.utils.tensor_indices is T.tensor_indices and T.utils.frame_scope is T.frame_scope
    assert T.op.exp is T.exp and T.op.and_ is T.and_ and T.ir_builder.serial is T.serial
    assert T.supports_mutable_declarations is True
    assert T.emit is T.emit_ and T.func_ret is T.func_ret_type_
    assert T.frame.FunctionFrame is type(T.function_()) and T.IRBuilder is tirx.script.IRBuilder


def test_expose_and_register_names():
    assert (
        T.expose_script_op("tirx.exp") is T.exp and T.expose_script_op("cuda.thread_idx") is T.cuda.thread_idx
    )
    with pytest.raises(ValueError, match="no op"):
        T.expose_script_op("tirx.no_such_op_xyz")
    assert T.expose_script_type("ir.PrimType") is tirx.ir.PrimType
    with pytest.raises(ValueError):
        T.expose_script_type("ir.NoSuchType")
    ns = type("NS", (), {"twice": staticmethod(lambda x: x * 2)})()
    assert T.register_script_namespace("h2_demo_ns", ns) is ns and T.h2_demo_ns is ns
    ns2 = object()  # registering the name again replaces it (a script run twice), as in TIRx
    assert T.register_script_namespace("h2_demo_ns", ns2) is ns2 and T.h2_demo_ns is ns2
    with pytest.raises(ValueError, match="already defined"):
        T.register_script_namespace("cuda", object())  # T's own names are not replaced
    with pytest.raises(ValueError, match="declared op"):
        T.register_script_namespace("exp", object())


def test_unpack_returns_python_tuples():
    assert T.unpack_([1, 2]) == (1, 2) and T.unpack_(5) == 5 and T.unpack_(T.meta_var((3,))) == (3,)


# ------------------------------------------------------------------ misuse
@pytest.mark.parametrize(
    "call, exc, msg",
    [
        (lambda: T.function_(persistent=True), ValueError, "persistent"),
        (lambda: T.function_(decl=True), ValueError, "decl=True"),
        (lambda: T.func_name_("not a name"), ValueError, "identifier"),
        (lambda: T.arg_("x", 3), TypeError, "not a type"),
        (lambda: T.bind_(), TypeError, "value is required"),
        (lambda: T.set_mutable_cell_(3, 1), TypeError, "mutable storage"),
        (lambda: T.decl_mutable_cell_(ty=T.Tensor((2,), "int32"), value=1), TypeError, "initializer"),
        (lambda: T.emit_(object()), TypeError, "cannot emit"),
        (lambda: T.for_(3), TypeError, "cannot loop"),
        (lambda: T.range_(0, 4, 0), ValueError, "step"),
        (lambda: T.for_(T.range_(4), names=["a", "b"]), ValueError, "2 names for 1 loops"),
        (lambda: T.assert_(T.int32(1) > 0, 3), TypeError, "message"),
        (lambda: T.then_().__enter__(), ValueError, "directly inside"),
        (lambda: T.tensor_store(3, [0], 1), TypeError, "tensor"),
    ],
)
def test_misuse_names_the_argument(call, exc, msg):
    with T.IRBuilder(), T.function_():
        n = T.arg_("n", T.int32)
        del n
        with pytest.raises(exc, match=msg):
            call()


def test_if_frame_needs_its_branches():
    with T.IRBuilder(), T.function_():
        n = T.arg_("n", T.int32)
        with pytest.raises(ValueError, match="then_"), T.if_(n > 0):
            T.evaluate(n)
        with pytest.raises(ValueError, match="follow"), T.if_(n > 0), T.else_():
            pass
    with pytest.raises(RuntimeError, match="no IRBuilder"):
        T.function_().__enter__()


# ------------------------------------------------------------------ property
# Random small kernels, written twice from one description: as Python source for @T.function,
# and as builder-API calls. Constants are 2..9 and every operator has a variable operand, so
# neither side folds (tirx's Python operators on IR values build raw nodes; the frontend folds).
_BIN = ["+", "-", "*"]
_CMP = ["<", "<=", ">", ">=", "==", "!="]


@st.composite
def _expr(draw, names: list, depth: int = 2):
    if depth == 0 or draw(st.booleans()):
        return ("name", draw(st.sampled_from(names)))
    op = draw(st.sampled_from(_BIN))
    left = draw(_expr(names, depth - 1))
    right = draw(st.one_of(_expr(names, depth - 1), st.integers(2, 9).map(lambda k: ("int", k))))
    if draw(st.booleans()):
        left, right = right, left
    return ("bin", op, left, right)


@st.composite
def _cond(draw, names: list):
    c = ("cmp", draw(st.sampled_from(_CMP)), draw(_expr(names, 1)), ("int", draw(st.integers(2, 9))))
    k = draw(st.integers(0, 2))
    if k == 1:
        return ("not", c)
    if k == 2:
        return (draw(st.sampled_from(["and", "or"])), c, draw(_cond(names)))
    return c


@st.composite
def _body(draw, names: list, cells: list, depth: int, fresh: list):
    out = []
    names, cells = list(names), list(cells)  # what a nested body binds stays in it
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(
            st.sampled_from(
                # no nesting below depth 0 (a `for` there nested without bound: Python's limit of
                # 20 statically nested blocks, found by a CI-style run)
                ["bind", "store", "for", "if", "assert", "cell", "set", "region"][: 8 if depth > 0 else 2]
            )
        )
        if kind == "bind":
            nm = f"x{len(fresh)}"
            fresh.append(nm)
            out.append(("bind", nm, draw(_expr(names))))
            names.append(nm)
        elif kind == "store":
            out.append(("store", draw(_expr(names, 1)), draw(_expr(names))))
        elif kind == "for":
            nm = f"i{len(fresh)}"
            fresh.append(nm)
            out.append(
                ("for", nm, draw(st.integers(2, 4)), draw(_body([*names, nm], cells, depth - 1, fresh)))
            )
        elif kind == "if":
            then = draw(_body(names, cells, depth - 1, fresh))
            orelse = draw(st.one_of(st.none(), _body(names, cells, depth - 1, fresh)))
            out.append(("if", draw(_cond(names)), then, orelse))
        elif kind == "assert":
            out.append(("assert", draw(_cond(names))))
        elif kind == "cell":
            nm = f"c{len(fresh)}"
            fresh.append(nm)
            out.append(("cell", nm, draw(_expr(names))))
            names.append(nm)
            cells.append(nm)
        elif kind == "region":
            rk = draw(
                st.sampled_from(["launch_thread", "compute_scope", "device_context", "parallel_launch"])
            )
            nm = f"t{len(fresh)}"
            fresh.append(nm)
            inner = [*names, nm] if rk == "launch_thread" else names
            out.append(("region", rk, nm, draw(_expr(names, 1)), draw(_body(inner, cells, depth - 1, fresh))))
        elif cells:
            out.append(("set", draw(st.sampled_from(cells)), draw(_expr(names))))
    return out


def _src_expr(e) -> str:
    if e[0] == "name":
        return e[1]
    if e[0] == "int":
        return str(e[1])
    if e[0] == "bin":
        return f"({_src_expr(e[2])} {e[1]} {_src_expr(e[3])})"
    if e[0] == "cmp":
        return f"({_src_expr(e[2])} {e[1]} {_src_expr(e[3])})"
    if e[0] == "not":
        return f"(not {_src_expr(e[1])})"
    return f"({_src_expr(e[1])} {e[0]} {_src_expr(e[2])})"


def _src(stmts, ind: int) -> list[str]:
    p = "    " * ind
    out = []
    for s in stmts:
        k = s[0]
        if k == "bind":
            out.append(f"{p}{s[1]} = {_src_expr(s[2])}")
        elif k == "store":
            out.append(f"{p}A[{_src_expr(s[1])} % 16] = {_src_expr(s[2])}")
        elif k == "for":
            out += [f"{p}for {s[1]} in range({s[2]}):", *_src(s[3], ind + 1)]
        elif k == "if":
            out += [f"{p}if {_src_expr(s[1])}:", *_src(s[2], ind + 1)]
            if s[3] is not None:
                out += [f"{p}else:", *_src(s[3], ind + 1)]
        elif k == "assert":
            out.append(f'{p}assert {_src_expr(s[1])}, "check"')
        elif k == "cell":
            out.append(f"{p}{s[1]}: T.int32 = {_src_expr(s[2])}")
        elif k == "region":
            head = {
                "launch_thread": f'T.launch_thread("vthread", 4) as {s[2]}',
                "compute_scope": f'T.compute_scope("{s[2]}")',
                "device_context": f"T.device_context(2, {_src_expr(s[3])})",
                "parallel_launch": "T.parallel_launch()",
            }[s[1]]
            out += [f"{p}with {head}:", *_src(s[4], ind + 1)]
        else:
            out.append(f"{p}{s[1]} = {_src_expr(s[2])}")
    return out or [f"{p}pass"]


_PYOP = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
_CMPF = {"<": T.lt_, "<=": T.le_, ">": T.gt_, ">=": T.ge_, "==": T.eq_, "!=": T.ne_}


def _api_expr(e, env: dict):
    k = e[0]
    if k == "name":
        return env[e[1]]
    if k == "int":
        return e[1]
    if k == "bin":
        return _PYOP[e[1]](_api_expr(e[2], env), _api_expr(e[3], env))
    if k == "cmp":
        return _CMPF[e[1]](_api_expr(e[2], env), _api_expr(e[3], env))
    if k == "not":
        return T.not_(_api_expr(e[1], env))
    f = T.and_ if k == "and" else T.or_
    return f(_api_expr(e[1], env), _api_expr(e[2], env))


def _api(stmts, env: dict) -> None:
    env = dict(env)
    for s in stmts:
        k = s[0]
        if k == "bind":
            env[s[1]] = T.bind_(_api_expr(s[2], env), name=s[1])
        elif k == "store":
            T.setitem_(env["A"], _api_expr(s[1], env) % 16, _api_expr(s[2], env))
        elif k == "for":
            with T.for_(T.range_(s[2]), names=s[1]) as v:
                _api(s[3], {**env, s[1]: v})
        elif k == "if":
            with T.if_(_api_expr(s[1], env)):
                with T.then_():
                    _api(s[2], env)
                if s[3] is not None:
                    with T.else_():
                        _api(s[3], env)
        elif k == "assert":
            T.assert_(_api_expr(s[1], env), "check")
        elif k == "cell":
            env[s[1]] = T.decl_mutable_cell_(_api_expr(s[2], env), ty=T.int32, name=s[1])
        elif k == "region":
            if s[1] == "launch_thread":
                fr = T.launch_thread("vthread", 4)
            elif s[1] == "compute_scope":
                fr = T.compute_scope(s[2])
            elif s[1] == "device_context":
                fr = T.device_context(2, _api_expr(s[3], env))
            else:
                fr = T.parallel_launch()
            fr.var_name = s[2]  # tirx: the bound variable's name (the frontend's `as` target)
            with fr as v:
                _api(s[4], {**env, s[2]: v} if s[1] == "launch_thread" else env)
        else:
            T.set_mutable_cell_(env[s[1]], _api_expr(s[2], env))


@st.composite
def _kernel_body(draw):
    return draw(_body(["n"], [], 2, []))  # fresh name lists per example


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_kernel_body())
def test_protocol_kernels_equal_frontend_kernels_and_their_text(stmts):
    def body():
        with T.function_():
            T.func_name_("f")
            A = T.arg_("A", T.Tensor((16,), "int32"))
            n = T.arg_("n", T.int32)
            _api(stmts, {"A": A, "n": n})

    f = built(body)
    src = "@T.function\ndef f(A: T.Tensor((16,), T.int32), n: T.int32):\n" + "\n".join(_src(stmts, 1)) + "\n"
    same_three_ways(f, src)


_ = (BufferLoad, SeqStmt)


# ------------------------------------------------------------------ regions
_REGIONS_SRC = """
@T.function
def f(A: T.Tensor((16,), "int32"), n: T.int32):
    with T.compute_scope("helper"):
        A[0] = 2
    with T.device_context(2, n):
        A[1] = 3
    with T.parallel_launch():
        A[2] = 4
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=8)):
        with T.launch_thread("blockIdx.x", 2) as bx:
            with T.launch_thread("threadIdx.x", 8) as tx:
                A[bx * 8 + tx] = bx * 100 + tx
"""


def _regions_api(cpu: bool = True) -> Function:
    def body():
        with T.function_():
            T.func_name_("f")
            A = T.arg_("A", T.Tensor((16,), "int32"))
            n = T.arg_("n", T.int32)
            if cpu:
                with T.compute_scope("helper"):
                    T.setitem_(A, 0, 2)
                with T.device_context(2, n):
                    T.setitem_(A, 1, 3)
                with T.parallel_launch() as p:
                    assert p == ()
                    T.setitem_(A, 2, 4)
            launch = T.cuda.LaunchConfig(grid=2, block=8)
            with T.device_entry(launch=launch), T.launch_thread("blockIdx.x", 2) as bx:  # noqa: SIM117
                with T.region("tirx.launch_thread", ["threadIdx.x", 8]) as tx:  # T.region: by op name
                    T.setitem_(A, bx * 8 + tx, bx * 100 + tx)

    return built(body)


def test_regions_match_the_frontend_and_print_as_tirx_prints_them():
    f = _regions_api()
    same_three_ways(f, _REGIONS_SRC, same_text=False)
    text = tirx.dumps(f)
    assert 'with T.launch_thread("blockIdx.x", 2) as v:' in text  # TIRx's name for an API-built var
    assert 'with T.compute_scope("helper"):' in text and "with T.parallel_launch():" in text
    g = load_module(HEADER + _REGIONS_SRC).f
    assert 'with T.launch_thread("threadIdx.x", 8) as tx:' in tirx.dumps(g)  # named after the target


def test_launch_thread_compiles_and_cpu_regions_are_located_cuda_errors():
    pytest.importorskip("cuda.bindings.nvrtc")
    k = tirx.compile(_regions_api(cpu=False), target="cuda")
    assert "(int)blockIdx.x" in k.source and "(int)threadIdx.x" in k.source
    g = load_module(HEADER + _REGIONS_SRC).f
    with pytest.raises(
        # compute_scope groups host code (a host program); the CPU worker team is not CUDA's
        tirx.DiagnosticError, match=r"T\.parallel_launch is not supported by the CUDA backend"
    ) as e:
        tirx.compile(g, target="cuda")
    assert ".py:" in str(e.value)  # located at the region in the kernel's source


def test_regions_run_on_the_interpreter():
    np = pytest.importorskip("numpy")
    a = np.zeros(16, dtype=np.int32)
    _regions_api(cpu=False)(a, 0)
    assert a.tolist() == [b * 100 + t for b in range(2) for t in range(8)]


@pytest.mark.parametrize(
    "header, msg",
    [
        ('T.compute_scope("h") as x', "binds no value"),
        ('T.launch_thread("threadIdx.x", 4)', "needs 'as <name>'"),
        ('T.launch_thread("threadIdx.x", 2.5) as t', "expected an integer"),
        ("T.device_context(1) ", "device_context"),
    ],
)
def test_region_headers_are_checked_in_text(header, msg):
    text = f"@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n    with {header}:\n        A[0] = 1\n"
    with pytest.raises(tirx.DiagnosticError, match=msg) as e:
        tirx.loads(text)
    assert "<string>:3:" in str(e.value)


def test_region_misuse_in_python():
    with T.IRBuilder(), T.function_():
        with pytest.raises(ValueError, match="no attrs"):
            T.compute_scope("h", attrs={"a": 1})
        with pytest.raises(ValueError, match="not a region op"):
            T.region("tirx.nope", [])
        with pytest.raises(TypeError, match="body_params"):
            T.launch_thread("threadIdx.x", 4, body_params=[])
        v = tirx.ir.Var("mine", "int32")
        with T.launch_thread("threadIdx.x", 4, body_params=[v]) as got:
            assert got is v


def test_the_docs_example_builds_loads_and_compiles():
    import re
    from pathlib import Path

    doc = (Path(__file__).parents[1] / "docs" / "frontend.md").read_text()
    sec = doc[doc.index("## Building IR from Python") :]
    code = re.search(r"```python\n(.*?)```", sec, re.S).group(1)
    ns = {"T": T}
    exec(code, ns)  # the page's example, as written
    f = ns["f"]
    tirx.assert_structural_equal(tirx.loads(tirx.dumps(f)), f)
    assert "T.cuda.cta_sync()" in tirx.dumps(f)


def test_frames_emitted_as_statements_close_with_their_owner():
    def body():
        with T.function_():
            T.func_name_("f")
            A = T.arg_("A", T.Tensor((4,), "int32"))
            with T.for_(T.range_(2), names="i") as i:
                T.emit_(T.compute_scope("inner"))  # holds the rest of the loop body
                T.setitem_(A, i, 1)
            T.setitem_(A, 3, 2)  # after the loop: outside the region

    src = """
@T.function
def f(A: T.Tensor((4,), "int32")):
    for i in range(2):
        with T.compute_scope("inner"):
            A[i] = 1
    A[3] = 2
"""
    same_three_ways(built(body), src)
    assert T.frame.innermost() is None  # no frame left open
