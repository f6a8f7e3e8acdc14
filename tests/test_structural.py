"""Structural equality and hash: semantics, mismatch paths, properties on generated IR, speed."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import ir_gen
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from structural_check import differ, eq_both, same

import tirx
from tirx.ir import (
    Add,
    AllocBuffer,
    Bind,
    Buffer,
    BufferLoad,
    BufferStore,
    Cast,
    DeviceEntry,
    Evaluate,
    FloatImm,
    For,
    ForKind,
    Function,
    IfThenElse,
    IntImm,
    Let,
    Module,
    PointerType,
    SeqStmt,
    Span,
    StringImm,
    Var,
    prim,
    structural_equal,
    structural_hash,
)  # fmt: skip
from tirx.ir import structural as S
from tirx.ir.stmt import LAUNCH_FIELDS_KEY

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
i32, f32 = prim("int32"), prim("float32")


def kernel(names=("A", "B", "n", "i", "x"), fname="add", private=False, attrs=None, order=1):
    """A small dynamic-shape kernel built from scratch (fresh vars every call)."""
    a, b, n, i, x = names
    nv = Var(n, i32)
    pa, pb = Var(a, PointerType(f32)), Var(b, PointerType(f32))
    A = Buffer(a, pa, f32, (nv,))
    B = Buffer(b, pb, f32, (nv,))
    iv, xv = Var(i, i32), Var(x, f32)
    body = For(
        iv,
        IntImm(0),
        nv,
        ForKind.SERIAL,
        SeqStmt((Bind(xv, BufferLoad(A, (iv,)) * 2.0), BufferStore(B, xv + xv, (iv,)))),
        annotations={"a": 1, "b": "two"} if order == 1 else {"b": "two", "a": 1},
    )
    return Function(fname, (pa, pb), body, ((pa, A), (pb, B)), None, attrs or {}, private)


# ------------------------------------------------------------------ semantics
def test_bound_vars_compare_up_to_renaming():
    same(kernel(), kernel())
    same(kernel(), kernel(names=("P", "Q", "len", "k", "t")))


def test_bound_var_use_must_be_consistent():
    a, b = Var("a"), Var("b")
    differ(a + a, a + b, map_free_vars=True)
    assert structural_hash(a + a, True) != structural_hash(a + b, True)
    # inside binders
    v, w, z = Var("v"), Var("w"), Var("z")
    same(Let(v, IntImm(1), v + v), Let(w, IntImm(1), w + w))
    differ(Let(v, IntImm(1), v + v), Let(w, IntImm(1), w + z))
    differ(Let(v, IntImm(1), v + z), Let(w, IntImm(1), w + w))  # z free, w bound
    i, j = Var("i"), Var("j")
    loop_i = For(i, IntImm(0), IntImm(4), ForKind.SERIAL, Evaluate(i * i))
    loop_j = For(j, IntImm(0), IntImm(4), ForKind.SERIAL, Evaluate(j * i))
    differ(loop_i, loop_j)


def test_free_vars_by_identity_unless_map_free_vars():
    x, y = Var("x"), Var("y")
    same(x + 1, x + 1)
    differ(x + 1, y + 1)
    same(x + 1, y + 1, map_free_vars=True)
    differ(x, Var("x", "int64"), map_free_vars=True)  # dtypes still exact
    # a free var in one tree cannot pair with a bound var in the other
    v = Var("v")
    differ(Let(v, IntImm(1), v + x), Let(v, IntImm(1), v + v), map_free_vars=True)


def test_bind_scope_renaming_in_sequences():
    def prog(nm1, nm2):
        a, b = Var(nm1), Var(nm2)
        return SeqStmt((Bind(a, IntImm(1)), Bind(b, a + 1), Evaluate(a * b)))

    same(prog("a", "b"), prog("p", "q"))
    a, b = Var("a"), Var("b")
    swapped = SeqStmt((Bind(a, IntImm(1)), Bind(b, a + 1), Evaluate(b * a)))
    differ(prog("a", "b"), swapped)


def test_dtypes_are_exact():
    differ(IntImm(1, "int32"), IntImm(1, "int64"))
    differ(FloatImm(1.0, "float16"), FloatImm(1.0, "bfloat16"))
    differ(Cast("float16", Var("i")), Cast("float32", Var("i")))
    v, w = Var("v", "int32"), Var("w", "int64")
    differ(Let(v, IntImm(1), IntImm(0)), Let(w, IntImm(1, "int64"), IntImm(0)))
    differ(kernel(), _retyped_kernel())
    pa, pb = Var("p", PointerType(f32, "shared")), Var("p", PointerType(f32, "global"))
    differ(Function("f", (pa,), Evaluate(IntImm(0))), Function("f", (pb,), Evaluate(IntImm(0))))
    differ(Var("x", "float32x4"), Var("x", "float32"), map_free_vars=True)


def _retyped_kernel():
    f = kernel()
    return ir_gen._substitute_dtype(f, f32, prim("float16"))


def test_float_constants_exact_nan_equals_nan():
    same(FloatImm(math.nan), FloatImm(float("nan")))
    same(FloatImm(math.inf), FloatImm(math.inf))
    differ(FloatImm(math.inf), FloatImm(-math.inf))
    differ(FloatImm(0.0), FloatImm(-0.0))
    assert structural_hash(FloatImm(0.0)) != structural_hash(FloatImm(-0.0))
    differ(FloatImm(0.1), FloatImm(math.nextafter(0.1, 1.0)))
    differ(FloatImm(1.0), FloatImm(math.nan))
    differ(IntImm(-1), IntImm(-2))
    assert structural_hash(IntImm(-1)) != structural_hash(IntImm(-2))
    differ(StringImm("a"), StringImm("b"))


def test_names_never_matter_except_a_public_symbol():
    same(kernel(fname="f", private=True), kernel(fname="g", private=True))
    differ(kernel(fname="f"), kernel(fname="g"))
    differ(kernel(fname="f", private=True), kernel(fname="f", private=False))
    # buffer and var names never matter
    same(kernel(names=("A", "B", "n", "i", "x")), kernel(names=("B", "A", "m", "x", "i")))


def test_attr_dict_key_order_is_ignored():
    same(kernel(order=1), kernel(order=2))
    same(kernel(attrs={"x": 1, "y": {"p": 1, "q": 2}}), kernel(attrs={"y": {"q": 2, "p": 1}, "x": 1}))
    differ(kernel(attrs={"x": 1}), kernel(attrs={"x": 2}))
    differ(kernel(attrs={"x": 1}), kernel(attrs={"y": 1}))
    differ(kernel(attrs={"x": 1}), kernel(attrs={"x": 1, "y": 1}))
    differ(kernel(attrs={"x": 1}), kernel(attrs={"x": True}))  # exact value types

    def de(order):
        fields = ["grid.x", "block.x"]
        attrs = {"cuda.kernel_attrs": {}, LAUNCH_FIELDS_KEY: fields}
        if order:
            attrs = dict(reversed(list(attrs.items())))
        return DeviceEntry((1, 128), attrs, Evaluate(IntImm(0)))

    same(de(False), de(True))


def test_attr_values_that_bind_vars_hash_consistently_whatever_the_order():
    # vars first met inside attrs (map_free_vars) are numbered in a canonical key order
    x, y, p, q = Var("x"), Var("y"), Var("p"), Var("q")
    f1 = Function("f", (), Evaluate(IntImm(0)), attrs={"a": x, "b": y})
    f2 = Function("f", (), Evaluate(IntImm(0)), attrs={"b": q, "a": p})
    same(f1, f2, map_free_vars=True)


def test_spans_never_matter():
    a = kernel()
    b = ir_gen.rebuild(kernel(), spans=True, seed=3)
    same(a, b)
    e = Add(Var("i"), IntImm(1))
    same(e, e.with_span(Span("x.py", 1, 1)))


def test_module_function_order_is_ignored():
    def mod(order):
        fs = [kernel(fname="f"), kernel(fname="g", attrs={"k": 1})]
        return Module(tuple(fs if order else reversed(fs)))

    same(mod(True), mod(False))
    differ(mod(True), Module((kernel(fname="f"), kernel(fname="h", attrs={"k": 1}))))
    differ(mod(True), Module((kernel(fname="f"),)))


def test_structure_changes_break_equality():
    x = Var("x")
    differ(x + 1, x - 1)
    differ(x + 1, x + 2)
    differ(x + 1, 1 + x)
    # a one-statement SeqStmt equals its statement (sequences compare flattened, see
    # tests/test_trust_binders.py); one more statement is a change
    differ(SeqStmt((Evaluate(x), Evaluate(x))), Evaluate(x))
    differ(IfThenElse(x < 1, Evaluate(x)), IfThenElse(x < 1, Evaluate(x), Evaluate(x)))
    differ(
        For(x, IntImm(0), IntImm(4), ForKind.SERIAL, Evaluate(x)),
        For(x, IntImm(0), IntImm(4), "unroll", Evaluate(x)),
    )
    differ(IntImm(1), Var("x"), map_free_vars=True)
    differ(IntImm(1), None)


def test_buffers_compare_up_to_renaming_and_consistently():
    i = Var("i")  # free, shared by both programs

    def prog(share):
        A = Buffer("A", Var("A", PointerType(f32, "shared")), f32, (IntImm(4),))
        B = Buffer("B", Var("B", PointerType(f32, "shared")), f32, (IntImm(4),))
        return SeqStmt(
            (AllocBuffer(A), AllocBuffer(B), BufferStore(A, BufferLoad(A if share else B, (i,)), (i,)))
        )

    same(prog(True), prog(True))
    differ(prog(True), prog(False))


def test_non_node_values():
    assert structural_equal(1, 1) and not structural_equal(1, 2) and not structural_equal(1, True)
    assert structural_equal((IntImm(1), "a"), (IntImm(1), "a"))
    assert structural_equal(1.5, 1.5) and structural_equal(math.nan, math.nan)
    assert structural_hash((IntImm(1), "a")) == structural_hash((IntImm(1), "a"))
    assert structural_hash([IntImm(1)]) == structural_hash([IntImm(1)])


# ------------------------------------------------------------------ assert_structural_equal
def test_assert_structural_equal_reports_the_first_mismatch_path():
    tirx.assert_structural_equal(kernel(), kernel())
    a = kernel()
    b = ir_gen._replace(a, a.body.seq[0].body.stmts[1].value, a.body.seq[0].body.stmts[1].value.a * 2.0)
    with pytest.raises(ValueError) as ei:
        tirx.assert_structural_equal(a, b)
    msg = str(ei.value)
    assert "root.body.stmts[0].body.stmts[1].value" in msg, msg
    assert "Add vs Mul" in msg
    with pytest.raises(ValueError, match=r"root<function name f vs g>"):
        tirx.assert_structural_equal(kernel(fname="f"), kernel(fname="g"))
    x, y = Var("x"), Var("y")
    with pytest.raises(ValueError, match=r"root\.b<free var x vs y>"):
        tirx.assert_structural_equal(x + x, x + y)
    with pytest.raises(ValueError, match=r"root\.annotations\['a'\]"):
        f1 = For(x, IntImm(0), IntImm(4), ForKind.SERIAL, Evaluate(x), annotations={"a": 1})
        tirx.assert_structural_equal(f1, f1.replace(annotations={"a": 2}))
    with pytest.raises(ValueError, match=r"root\.ty"):
        tirx.assert_structural_equal(IntImm(1), IntImm(1, "int64"))
    tirx.assert_structural_equal(x + 1, y + 1, map_free_vars=True)


def test_assert_structural_equal_shows_text_around_the_mismatch():
    pytest.importorskip("tirx.printer")
    sys.path.insert(0, str(ROOT / "tools" / "bench"))
    try:
        from bench_structural import build_tirx
    finally:
        sys.path.pop(0)
    a, b = build_tirx(12), build_tirx(12)
    loop = b.body.seq[0].body.stmts[5]
    store = loop.body.stmts[1].then_case.seq[0]
    b2 = ir_gen._replace(b, store.value.b, FloatImm(9.5))
    with pytest.raises(ValueError) as ei:
        tirx.assert_structural_equal(a, b2)
    msg = str(ei.value)
    assert "--- lhs" in msg and "+++ rhs" in msg and "T.float32(9.5)" in msg
    assert len(msg.splitlines()) < 30  # context around the change, not both whole kernels
    # small IR: both whole texts
    with pytest.raises(ValueError, match="--- lhs ---"):
        tirx.assert_structural_equal(kernel(attrs={"x": 1}), kernel(attrs={"x": 2}))


# ------------------------------------------------------------------ O(1) and caching
def test_hash_of_a_hashed_root_and_equal_of_self_are_o1(monkeypatch):
    f = kernel()
    h = structural_hash(f)
    hm = structural_hash(f, map_free_vars=True)

    def boom(*a, **k):
        raise AssertionError("traversed")

    monkeypatch.setattr(S, "_deep", boom)
    assert structural_hash(f) == h and structural_hash(f, map_free_vars=True) == hm
    assert structural_equal(f, f) and structural_equal(f, f, map_free_vars=True)
    tirx.assert_structural_equal(f, f)
    # a copy made by replace() has no cached hash
    g = f.replace(attrs={"x": 1})
    with pytest.raises(AssertionError, match="traversed"):
        structural_hash(g)


def test_new_node_classes_are_picked_up():
    # a node class defined after the generated code exists must still hash and compare
    import attrs as _attrs

    from tirx.ir.expr import NODE, VALUE, PrimExpr

    @_attrs.define(slots=True, eq=False, frozen=True)
    class Twice(PrimExpr):
        a: PrimExpr
        tag: str
        ty: object = _attrs.field(default=i32)
        _sfields = (("tag", VALUE), ("a", NODE))

    x = Var("x")
    k = kernel()
    structural_hash(k)
    same(Twice(x + 1, "t"), Twice(x + 1, "t"))
    differ(Twice(x + 1, "t"), Twice(x + 1, "u"))
    same(Add(Twice(x, "t"), x), Add(Twice(x, "t"), x))


# ------------------------------------------------------------------ determinism across processes
_HASH_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import tirx
from bench_structural import build_tirx
from tirx.ir import FloatImm, For, ForKind, IntImm, Module, StringImm, Var, Evaluate
f = build_tirx(3)
i = Var("i")
loop = For(i, IntImm(0), IntImm(4), ForKind.UNROLLED, Evaluate(i), annotations={"x": "s", "y": (1, 2.5, None)})
m = Module((build_tirx(2).replace(name="f"), build_tirx(1).replace(name="g")))
out = [tirx.structural_hash(f), tirx.structural_hash(f, map_free_vars=True), tirx.structural_hash(loop),
       tirx.structural_hash(m), tirx.structural_hash(FloatImm(float("nan"))), tirx.structural_hash(StringImm("hi"))]
print(json.dumps(out))
"""


def _hashes_in_subprocess(python: str, seed: str) -> list[int]:
    env = dict(os.environ, PYTHONHASHSEED=seed, TIRX_BACKEND_AUTOLOAD="0", PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [python, "-c", _HASH_SCRIPT, str(ROOT / "tools" / "bench")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_hash_is_deterministic_across_processes():
    runs = [_hashes_in_subprocess(sys.executable, seed) for seed in ("0", "1", "4242")]
    assert runs[0] == runs[1] == runs[2]
    h = runs[0]
    assert h[0] == h[1]  # a closed function: map_free_vars changes nothing
    assert len(set(h[1:])) == len(h) - 1


def test_hash_is_the_same_on_another_python_version():
    other = "/work/venv-tvm/bin/python"  # a Python 3.12 with attrs, next to our 3.11
    if not os.path.exists(other) or sys.version_info[:2] == (3, 12):
        pytest.skip("no second Python version available")
    probe = subprocess.run([other, "-c", "import attrs"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("the other Python lacks attrs")
    assert _hashes_in_subprocess(other, "7") == _hashes_in_subprocess(sys.executable, "7")


# ------------------------------------------------------------------ properties on generated IR
@SETTINGS
@given(ir_gen.functions())
def test_reflexive_and_alpha_renaming_keeps_equality_and_hash(f):
    assert structural_equal(f, f)
    g = ir_gen.rebuild(f)
    assert g is not f
    same(f, g)
    same(f, g, map_free_vars=True)


@SETTINGS
@given(ir_gen.functions(), st.integers(0, 2**16))
def test_spans_and_attr_order_never_matter(f, seed):
    same(f, ir_gen.rebuild(f, spans=True, shuffle=True, rename=False, seed=seed))


@SETTINGS
@given(ir_gen.functions(), ir_gen.functions())
def test_symmetric_and_equal_implies_same_hash(f, g):
    r = eq_both(f, g)
    assert r == eq_both(g, f)
    if r:
        assert structural_hash(f) == structural_hash(g)


@SETTINGS
@given(ir_gen.exprs(), ir_gen.exprs())
def test_expressions_symmetric_with_and_without_map_free_vars(a, b):
    for mf in (False, True):
        r = eq_both(a, b, mf)
        assert r == eq_both(b, a, mf)
        if r:
            assert structural_hash(a, mf) == structural_hash(b, mf)
    same(a, ir_gen.rebuild(a, spans=True))


@SETTINGS
@given(ir_gen.functions(), st.integers(0, 2**16))
def test_changing_a_dtype_constant_op_or_structure_breaks_equality(f, seed):
    muts = ir_gen.mutations(f, limit=12, seed=seed)
    for what, m in muts:
        assert not eq_both(f, m), what
        assert not eq_both(m, f), what
        assert structural_hash(f) != structural_hash(m), what


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(ir_gen.modules())
def test_modules_properties(m):
    same(m, ir_gen.rebuild(m, shuffle=True, spans=True))
    for what, mm in ir_gen.mutations(m, limit=5):
        assert not eq_both(m, mm), what


def test_shared_strategies_if_present():
    # the printer's strategies (tirx.testing.strategies) cover more node shapes; run the
    # same properties on a few of their functions when that module works
    try:
        from tirx.testing import strategies as tst
    except Exception as e:  # pragma: no cover
        pytest.skip(f"tirx.testing.strategies unavailable: {e}")

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(tst.functions())
    def check(f):
        same(f, ir_gen.rebuild(f, spans=True, shuffle=True))
        for what, m in ir_gen.mutations(f, limit=6):
            assert not eq_both(f, m), what

    check()


def test_module_free_vars_are_the_modules():
    """A var no function of a module defines is the module's (TIRx's module-level
    ``n = T.dynamic(...)``): two loads of one text are equal with equal hashes, and which
    functions share such a var matters."""
    head = '# from tirx.script import tirx as T\n\nn = T.dynamic("n", dtype="int32")\nm = T.dynamic("n", dtype="int32")\n'
    body = (
        "@T.ir_module\nclass Module:\n    @T.function(private=True)\n    def first():\n        T.evaluate(n + 1)\n\n"
        "    @T.function(private=True)\n    def second():\n        T.evaluate({})\n"
    )
    a, b = (tirx.loads(head + body.format("n + m")) for _ in range(2))
    assert a is not b and tirx.structural_equal(a, b) and eq_both(a, b)
    assert tirx.structural_hash(a) == tirx.structural_hash(b)
    for other in ("m + n", "n + n", "m + m"):
        assert not tirx.structural_equal(a, tirx.loads(head + body.format(other))), other
    with pytest.raises(ValueError, match="module var"):
        tirx.assert_structural_equal(a, tirx.loads(head + body.format("m + n")))
    # a standalone function's free var is still equal only to itself
    assert not tirx.structural_equal(a["first"], b["first"])


def test_public_function_identity_is_its_global_symbol():
    # TIRx's Before/Expected idiom: two functions of other names, given one global symbol,
    # are the same function (a PrimFunc has no name there); hash and equality agree
    from tirx.script import tirx as T

    @T.function
    def kernel(A: T.Tensor((8,), "int32")):
        A[0] = A[1] + 1

    @T.function
    def expected(A: T.Tensor((8,), "int32")):
        A[0] = A[1] + 1

    assert not tirx.structural_equal(kernel, expected)
    a, b = kernel.with_attr("global_symbol", "main"), expected.with_attr("global_symbol", "main")
    tirx.assert_structural_equal(a, b)
    assert tirx.structural_hash(a) == tirx.structural_hash(b)
    assert not tirx.structural_equal(a, expected.with_attr("global_symbol", "other"))
