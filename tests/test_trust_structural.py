"""Issue #12 item 1: free buffers (and vars) compare by identity in structural equality,
and the passes that compare sub-expressions (Simplify, CSE, VectorizeThreads, bounds)
never confuse two different buffers of the same type.

Semantics checked here: a buffer used inside an expression or statement is a *use*;
buffers and vars are bound only where they are defined (function params and buffer map,
``AllocBuffer`` / ``DeclBuffer``, ``Bind`` / ``Let`` / ``For`` vars). What is free in the
compared subtree compares by identity unless ``map_free_vars=True``; structurally equal
objects always hash alike; the fast generated comparer and the path-tracking one agree.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from structural_check import differ, eq_both, same

import tirx
from tirx.ir import (
    AllocBuffer,
    Attrs,
    Buffer,
    BufferStore,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    Function,
    IntImm,
    Let,
    Max,
    Min,
    PointerType,
    SeqStmt,
    TensorType,
    Var,
    prim,
    structural_equal,
    structural_hash,
)
from tirx.ir import expr as E
from tirx.ir.bounds import Bounds, local_ranges
from tirx.ir.op import call
from tirx.ir.types import float32, int32, uint8
from tirx.ir.visitor import Mutator
from tirx.passes import CommonSubexprElim, Simplify, VectorizeThreads
from tirx.passes.vectorize_threads import explain
from tirx.surface.builder import IRBuilder, launch_args

i32, f32 = prim("int32"), prim("float32")
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


def _buf(name: str, dtype=i32, shape=(8,), scope: str = "global") -> Buffer:
    return Buffer(name, Var(name, PointerType(dtype, scope)), dtype, tuple(IntImm(s) for s in shape))


# ------------------------------------------------------------------ structural equality
def test_free_buffers_compare_by_identity():
    A, C = _buf("A"), _buf("C")
    i = Var("i")
    same(A[i], A[i])
    differ(A[i], C[i])
    differ(A[i] - C[i], A[i] - A[i])
    differ(Max(A[i], C[i]), Max(A[i], A[i]))
    differ(BufferStore(A, IntImm(1), (i,)), BufferStore(C, IntImm(1), (i,)))
    differ(A, C)  # a buffer on its own is free too
    same(A, A)
    # with map_free_vars, free buffers map consistently (a bijection), like free vars
    same(A[i], C[i], map_free_vars=True)
    same(A[i] - C[i], C[i] - A[i], map_free_vars=True)
    differ(A[i] - C[i], A[i] - A[i], map_free_vars=True)
    differ(A[i], _buf("F", f32)[i], map_free_vars=True)  # dtype still exact
    differ(A[i], _buf("S", shape=(9,))[i], map_free_vars=True)  # shape still exact
    # a free buffer in one tree never pairs with a buffer bound in the other
    body = lambda X, Y: SeqStmt((AllocBuffer(X), BufferStore(X, Y[i], (i,))))  # noqa: E731
    L = _buf("L", scope="local")
    differ(body(L, A), body(L, L), map_free_vars=True)


def test_free_buffers_in_attr_values_are_uses():
    A, C = _buf("A"), _buf("C")
    s1 = Function("f", (), Evaluate(IntImm(0)), attrs=Attrs({"buf": A}))
    s2 = Function("f", (), Evaluate(IntImm(0)), attrs=Attrs({"buf": C}))
    differ(s1, s2)
    same(s1, Function("f", (), Evaluate(IntImm(0)), attrs=Attrs({"buf": A})))
    same(s1, s2, map_free_vars=True)


def test_declared_and_allocated_buffers_are_bound_but_a_decl_pointer_is_a_use():
    i = Var("i")
    p, q = Var("p", PointerType(i32)), Var("q", PointerType(i32))

    def decl(ptr):
        B = Buffer("B", ptr, i32, (IntImm(8),))
        return SeqStmt((DeclBuffer(B), BufferStore(B, IntImm(1), (i,))))

    same(decl(p), decl(p))  # the declared buffer is bound: renaming it changes nothing
    differ(decl(p), decl(q))  # ... but the pointer it views is free: by identity
    same(decl(p), decl(q), map_free_vars=True)

    def alloc():
        B = _buf("B", scope="local")
        return SeqStmt((AllocBuffer(B), BufferStore(B, IntImm(1), (i,))))

    same(alloc(), alloc())  # an allocation defines its buffer and its pointer


def _two_input_kernel(expr_of, name="k"):
    b = IRBuilder()
    with b, b.function(name):
        A = b.param("A", TensorType((8,), i32))
        C = b.param("C", TensorType((8,), i32))
        B = b.param("B", TensorType((8,), i32))
        with b.for_("i", 0, 8) as i:
            B[i] = expr_of(A, C, i)
    return b.get()


def test_whole_functions_still_compare_up_to_renaming_of_params():
    sub = lambda A, C, i: A[i] - C[i]  # noqa: E731
    same(_two_input_kernel(sub), _two_input_kernel(sub))
    same(_two_input_kernel(sub), _two_input_kernel(sub), map_free_vars=True)
    differ(_two_input_kernel(sub), _two_input_kernel(lambda A, C, i: C[i] - A[i]))
    differ(_two_input_kernel(sub), _two_input_kernel(lambda A, C, i: A[i] - A[i]))


def test_mismatch_path_names_the_buffer():
    A, C = _buf("A"), _buf("C")
    with pytest.raises(ValueError, match=r"root\.a\.buffer"):
        tirx.assert_structural_equal(A[IntImm(0)] + 1, C[IntImm(0)] + 1)


# ------------------------------------------------------------------ Simplify
def _run(f, *arrays):
    out = [a.copy() for a in arrays]
    tirx.compile(f, target="interp")(*out)
    return out


def test_simplify_does_not_fold_loads_of_two_buffers():
    rng = np.random.default_rng(0)
    a = rng.integers(-50, 50, 8).astype(np.int32)
    c = rng.integers(-50, 50, 8).astype(np.int32)
    z = np.zeros(8, np.int32)
    f = _two_input_kernel(lambda A, C, i: A[i] - C[i])
    g = Simplify()(f)
    assert "B[i] = 0" not in tirx.dumps(g)
    assert np.array_equal(_run(g, a, c, z)[2], a - c)
    f = _two_input_kernel(lambda A, C, i: Max(A[i], C[i]) + E.Select(E.LT(A[i], C[i]), IntImm(1), IntImm(0)))
    g = Simplify()(f)
    want = np.maximum(a, c) + (a < c)
    assert np.array_equal(_run(f, a, c, z)[2], want)
    assert np.array_equal(_run(g, a, c, z)[2], want)
    for cls in (Min, Max):
        g = Simplify()(_two_input_kernel(lambda A, C, i, cls=cls: cls(A[i], C[i])))
        fn = np.minimum if cls is Min else np.maximum
        assert np.array_equal(_run(g, a, c, z)[2], fn(a, c))
    g = Simplify()(_two_input_kernel(lambda A, C, i: E.Select(E.EQ(A[i], C[i]), IntImm(5), IntImm(7))))
    assert np.array_equal(_run(g, a, c, z)[2], np.where(a == c, 5, 7))
    # the identities still apply to one buffer
    g = Simplify()(_two_input_kernel(lambda A, C, i: A[i] - A[i]))
    assert isinstance(g.body.seq[0].body.seq[0].value, IntImm)


def test_simplify_folds_only_identical_free_vars():
    x, y = Var("x"), Var("x")  # same name, different vars
    f = Function("f", (x, y), Evaluate(x - y))
    assert not isinstance(Simplify()(f).body.seq[0].value, IntImm)
    f = Function("f", (x,), Evaluate(x - x))
    assert isinstance(Simplify()(f).body.seq[0].value, IntImm)


# ------------------------------------------------------------------ CSE
def test_cse_keeps_apart_same_shaped_expressions_over_different_buffers_and_vars():
    rng = np.random.default_rng(1)
    a = rng.integers(-50, 50, 8).astype(np.int32)
    c = rng.integers(-50, 50, 8).astype(np.int32)
    z = np.zeros(8, np.int32)
    f = _two_input_kernel(lambda A, C, i: (A[i] * 3 + 1) * (i + 2) + (C[i] * 3 + 1) * (i + 2))
    g = CommonSubexprElim()(f)
    assert np.array_equal(
        _run(g, a, c, z)[2], (a * 3 + 1) * (np.arange(8) + 2) + (c * 3 + 1) * (np.arange(8) + 2)
    )
    # two scalar params with the same name are still two values
    B = _buf("B")
    s1, s2, i = Var("s", i32), Var("s", i32), Var("i")
    val = (s1 * 7 + 1) * i + (s1 * 7 + 1) + (s2 * 7 + 1) * i
    body = For(i, IntImm(0), IntImm(8), ForKind.SERIAL, BufferStore(B, val, (i,)))
    f = Function("k", (B.data, s1, s2), body, ((B.data, B),))
    g = CommonSubexprElim()(f)
    assert tirx.dumps(g).count("cse_v") == 3  # s1 * 7 + 1 is bound once; s2's stays
    z = np.zeros(8, np.int32)
    tirx.compile(g, target="interp")(z, 2, 5)
    assert np.array_equal(z, 15 * np.arange(8) + 15 + 36 * np.arange(8))


# ------------------------------------------------------------------ VectorizeThreads
def _offset_kernel():
    """O[i] = A[i + B[0]] + A[i + C[0]]: two loads of A whose indices differ only in which
    (lane-invariant) offset buffer they read."""
    n, block = 1024, 128
    b = IRBuilder("vt_trust.py")
    with b, b.function("k"):
        A = b.param("A", TensorType((n + 256,), float32))
        B = b.param("B", TensorType((1,), uint8))
        C = b.param("C", TensorType((1,), uint8))
        O = b.param("O", TensorType((n,), float32))
        with b.device_entry(*launch_args(n // block, block)):
            i = b.bind("i", call("cuda.block_idx", "x") * block + call("cuda.thread_idx", "x"))
            with b.if_(i < n):
                O[i] = A[i + E.Cast(int32, B[0])] * 2.0 + A[i + E.Cast(int32, C[0])]
    return b.get()


def test_vectorize_threads_keeps_loads_of_different_offset_buffers_apart():
    f = _offset_kernel()
    assert explain(f) is None
    g = VectorizeThreads()(f)
    a = np.arange(1024 + 256, dtype=np.float32) * 0.5
    for off_b, off_c in ((4, 8), (8, 4), (0, 12), (3, 5)):  # aligned (vector path) and not
        bb, cc = np.array([off_b], np.uint8), np.array([off_c], np.uint8)
        want = a[off_b : off_b + 1024] * 2 + a[off_c : off_c + 1024]
        for h in (f, g):
            o = np.zeros(1024, np.float32)
            tirx.compile(h, target="interp")(a, bb, cc, o)
            assert np.array_equal(o, want)


# ------------------------------------------------------------------ bounds
def test_bounds_of_loads_of_two_local_buffers_are_their_own():
    i = Var("i")
    P, Q = _buf("P", shape=(1,), scope="local"), _buf("Q", shape=(1,), scope="local")
    zero = IntImm(0)
    body = SeqStmt(
        (
            AllocBuffer(P),
            AllocBuffer(Q),
            For(
                i,
                zero,
                IntImm(4),
                ForKind.SERIAL,
                SeqStmt((BufferStore(P, i, (zero,)), BufferStore(Q, i * 1000, (zero,)))),
            ),
        )
    )
    bd = Bounds({i: (0, 3)})
    bd.set_buffer_ranges(local_ranges(body, bd))
    assert bd(P[zero]) == (0, 3)
    assert bd(Q[zero]) == (0, 3000)
    # structurally alike nodes over different buffers are never one memo entry
    assert bd(P[zero] + 1) == (1, 4) and bd(Q[zero] + 1) == (1, 3001)


# ------------------------------------------------------------------ properties
class _Swap(Mutator):
    """Rename buffer uses (a mirror image of an expression over other buffers)."""

    def __init__(self, perm: dict) -> None:
        super().__init__()
        self.perm = perm

    def visit_buffer_use(self, b: Buffer) -> Buffer:
        return self.perm.get(b, b)


@st.composite
def _kernels(draw):
    """A kernel over three int32 and two float32 input buffers of one shape, whose
    expressions pair sub-expressions with their mirror images over other buffers."""
    n = draw(st.integers(1, 9))
    b = IRBuilder()
    with b, b.function("k"):
        ins = [b.param(nm, TensorType((n,), i32)) for nm in ("A", "C", "D")]
        fins = [b.param(nm, TensorType((n,), f32)) for nm in ("F", "G")]
        OI = b.param("OI", TensorType((n,), i32))
        OF = b.param("OF", TensorType((n,), f32))
        N = IntImm(n)

        def leaf(i, bufs):
            k = draw(st.integers(0, 3))
            if k == 0:
                return (
                    IntImm(draw(st.integers(-3, 3)))
                    if bufs is ins
                    else E.FloatImm(draw(st.sampled_from((0.0, 1.5, -2.0))), f32)
                )
            j = i if k < 3 else E.FloorMod(i + draw(st.integers(1, 3)), N)
            return draw(st.sampled_from(bufs))[j]

        def ex(i, bufs, d):
            if d >= 3 or draw(st.integers(0, 3)) == 0:
                return leaf(i, bufs)
            x = ex(i, bufs, d + 1)
            k = draw(st.integers(0, 3))
            if k == 0:  # x against its mirror image over other buffers
                perm = dict(zip(bufs, draw(st.permutations(bufs))))
                y = _Swap(perm).visit(x)
            elif k == 1:
                y = x
            else:
                y = ex(i, bufs, d + 1)
            op = draw(st.integers(0, 6))
            if op <= 4:
                return (E.Sub, E.Add, E.Min, E.Max, E.Mul)[op](x, y)
            cmp = draw(st.sampled_from((E.LT, E.LE, E.EQ, E.NE, E.GE, E.GT)))
            return E.Select(cmp(x, y), x, y) if op == 5 else E.Select(cmp(x, y), leaf(i, bufs), y)

        with b.for_("i", 0, n) as i:
            for _ in range(draw(st.integers(1, 3))):
                if draw(st.booleans()):
                    OI[i] = OI[i] + ex(i, ins, 0)
                else:
                    OF[i] = ex(i, fins, 0)
    f = b.get()
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    args = [rng.integers(-4, 4, n).astype(np.int32) for _ in range(3)]
    args += [rng.integers(-4, 4, n).astype(np.float32) for _ in range(2)]
    args += [np.zeros(n, np.int32), np.zeros(n, np.float32)]
    return f, args


def _outputs(f, args):
    out = [a.copy() for a in args]
    tirx.compile(f, target="interp")(*out)
    return out[-2:]


def _subexprs(f) -> list:
    out: list = []

    class _V(tirx.ir.Visitor):
        def visit(self, n):
            if isinstance(n, E.PrimExpr):
                out.append(n)
            return super().visit(n)

    _V().visit(f.body)
    return out


@SETTINGS
@given(_kernels())
def test_simplify_and_cse_keep_meaning_with_several_buffers_of_one_type(fa):
    f, args = fa
    want = _outputs(f, args)
    for p in (Simplify(), CommonSubexprElim()):
        got = _outputs(p(f), args)
        for x, y in zip(want, got):
            assert np.array_equal(x, y, equal_nan=True), (type(p).__name__, tirx.dumps(f))


@SETTINGS
@given(_kernels(), st.data())
def test_equal_implies_same_hash_on_sub_expressions(fa, data):
    f, _ = fa
    subs = _subexprs(f)
    for _ in range(12):
        a = data.draw(st.sampled_from(subs))
        b = data.draw(st.sampled_from(subs))
        for mf in (False, True):
            r = eq_both(a, b, mf)
            assert r == eq_both(b, a, mf)
            if r:
                assert structural_hash(a, mf) == structural_hash(b, mf)
        if structural_equal(a, b):  # identity-equal implies equal up to renaming
            assert structural_equal(a, b, True)


def test_let_bound_names_do_not_matter_inside_sub_expressions():
    A = _buf("A")
    v, w = Var("v"), Var("w")
    same(Let(v, A[IntImm(0)], v + 1), Let(w, A[IntImm(0)], w + 1))
    differ(Let(v, A[IntImm(0)], v + 1), Let(w, _buf("A")[IntImm(0)], w + 1))
