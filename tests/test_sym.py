"""``tirx.sym``: TIRx's symbolic analyzer (``tvm_tirx.sym``) and the constraint-aware walks of
``tirx.tirx``.

- the normal form and TIRx's spellings (checked against apache-tvm-tirx 0.1.0a4's output);
- bounds, modular sets, proofs, comparisons and intervals, with and without facts;
- constraints as data, the contexts the walks hand out (what each scope records, as TIRx),
  and the analyzer synced with them;
- properties on generated expressions over bounded variables: every simplification keeps
  the value, and every bound, modular set, proof and comparison holds at sampled points
  (a tiny exact evaluator is the judge);
- misuse is a ``TypeError`` / ``ValueError`` naming the argument; deep IR never recurses out.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
import tirx.sym as S
from tirx import tirx as TX
from tirx.ffi import structural_walk
from tirx.ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BufferStore,
    FloorDiv,
    FloorMod,
    For,
    IfThenElse,
    IntImm,
    Max,
    Min,
    Mul,
    Not,
    Or,
    Select,
    Sub,
    Var,
)
from tirx.ir.arith import trunc_div, trunc_mod
from tirx.ir.types import int64
from tirx.script import tirx as T

x, y, z = Var("x"), Var("y"), Var("z")


def ctx_of(*constraints):
    ctx = S.ConstraintContext()
    for c in constraints:
        ctx.append(c)
    return ctx


def analyzer(*constraints):
    a = S.Analyzer()
    a.sync_constraint_context(ctx_of(*constraints))
    return a


def in_range(v, lo, hi):
    """``v`` in ``[lo, hi]`` (inclusive)."""
    return S.RangeConstraint(v, T.Range(lo, hi + 1))


# ---------------------------------------------------------------------- normal form
@pytest.mark.parametrize(
    "build,expected",
    [
        # (what TIRx 0.1.0a4's Analyzer.simplify prints for the same expression)
        (lambda: (x + y) * 2 - y * 2, "x * 2"),
        (lambda: x * 3 + y - x, "x * 2 + y"),
        (lambda: y + x * 2, "x * 2 + y"),
        (lambda: y - x * 2 + 3, "y + 3 - x * 2"),
        (lambda: x * (y * 2), "x * y * 2"),
        (lambda: z * y * x, "z * y * x"),
        (lambda: x * y + y * x, "x * y * 2"),
        (lambda: (x + y) * 3, "x * 3 + y * 3"),
        (lambda: Sub(IntImm(0), x * 3), "x * -3"),
        (lambda: y + TX.min(z, x), "T.min(z, x) + y"),
        (lambda: TX.floordiv(x, 4) * 4 + TX.floormod(x, 4), "x"),
        (lambda: TX.floormod(x, 4) * 2 + TX.floordiv(x, 4) * 8, "x * 2"),
        (lambda: TX.floordiv(x * 4 + 2, 2), "x * 2 + 1"),
        (lambda: TX.floordiv(x * 4 + 2, 8), "x // 2"),
        (lambda: TX.floormod(x * 4 + 2, 8), "x % 2 * 4 + 2"),
        (lambda: TX.floormod(x * 6 + 4, 4), "x % 2 * 2"),
        (lambda: TX.floordiv(x + y * 4, 4), "x // 4 + y"),
        (lambda: TX.floordiv(x + 5, 4), "(x + 5) // 4"),
        (lambda: TX.floormod(x - 1, 3), "(x + 2) % 3"),
        (lambda: TX.floordiv(TX.floordiv(x, 2), 3), "x // 6"),
        (lambda: TX.floormod(TX.floormod(x, 8), 4), "x % 4"),
        (lambda: TX.floormod(TX.floordiv(y, 4), 3), "y % 12 // 4"),
        (lambda: TX.min(x + 1, y + 1), "T.min(x, y) + 1"),
        (lambda: TX.max(x, x + 1), "x + 1"),
        (lambda: TX.max(z, TX.max(x, z)), "T.max(x, z)"),
        (lambda: Select(x < y, x + 1, x + 1), "x + 1"),
    ],
)
def test_simplify_spells_as_tirx(build, expected):
    assert str(S.Analyzer().simplify(build())) == expected


@pytest.mark.parametrize(
    "build,expected",
    [
        (lambda: x * 2 < 7, "x < 4"),
        (lambda: x * 4 <= 9, "x <= 2"),
        (lambda: x > 5, "5 < x"),
        (lambda: x * -1 < 3, "-3 < x"),
        (lambda: x < y + 1, "x <= y"),
        (lambda: x <= y - 1, "x < y"),
        (lambda: x <= z - 2, "x + 2 <= z"),
        (lambda: x - 7 <= y + 4, "x <= y + 11"),
        (lambda: x - z - 1 < 6, "x - z < 7"),
        (lambda: x + z <= 3 - x * 3, "x * 4 + z <= 3"),
        (lambda: TX.floordiv(y, 8) > 1, "15 < y"),
        (lambda: TX.floordiv(y + 1, 2) <= 5, "y <= 10"),
        (lambda: EQ(IntImm(5), x - y), "x - y == 5"),
        (lambda: EQ(x * 2, IntImm(3)), "T.bool(False)"),
        (lambda: Not(x < y), "y <= x"),
        (lambda: Not(And(x < y, y < z)), "y <= x or z <= y"),
        (lambda: And(x < 5, x > 7), "T.bool(False)"),
        (lambda: TX.max(y, z) < x, "y < x and z < x"),
        (lambda: TX.min(x, y) <= 3, "x <= 3 or y <= 3"),
        (lambda: x + 1 < x + 3, "T.bool(True)"),
    ],
)
def test_comparisons_spell_as_tirx(build, expected):
    assert str(S.Analyzer().simplify(build())) == expected


def test_canonical_collects_terms_and_proves_equalities():
    a = S.Analyzer()
    assert tirx.structural_equal(a.canonical_simplify((x + y) * 2 - y * 2), x * 2)
    assert a.can_prove_equal(x * 3 + y - x, y + x * 2)
    assert a.can_prove(x * 2 - x - x == 0)
    assert not a.can_prove(x < y)
    # a product of sums stays one (TIRx's form); equality proofs still expand it
    assert str(a.simplify(x * (y + 1))) == "x * (y + 1)"
    assert a.can_prove_equal(x * (y + 1), x * y + x)
    assert not a.can_prove_equal(x * (y + 1), x * y)


def test_rewrite_simplify_keeps_the_shape_of_sums():
    a = S.Analyzer()
    assert str(a.rewrite_simplify(x * 3 + y - x)) == "x * 3 + y - x"
    assert str(a.rewrite_simplify(x + 1 + 2)) == "x + 3"
    assert str(a.rewrite_simplify((x + y) - (y + x))) == "0"
    assert str(a.simplify(x * 3 + y - x, steps=0)) == "x * 3 + y - x"
    assert str(a.simplify(x * 3 + y - x, steps=1)) == "x * 3 + y - x"


def test_dtypes_are_kept():
    w, v = Var("w", int64), Var("v", int64)
    a = S.Analyzer()
    r = a.simplify(w * 2 + v - w - w - v)
    assert isinstance(r, IntImm) and r.value == 0 and r.ty == int64
    assert str(a.simplify(v + w * 2 - 3)) == "w * T.int64(2) + v - T.int64(3)"
    assert a.simplify(w + v).ty == int64
    assert a.simplify(x < 3).ty.is_bool
    # a constant the dtype cannot hold is not made: the node stays
    big = a.simplify(x + IntImm(2**31 - 1) + IntImm(1))
    assert big.ty == x.ty


def test_constants_fold_for_every_operator():
    a = S.Analyzer()
    for op, py in [
        (Add, lambda p, q: p + q),
        (Sub, lambda p, q: p - q),
        (Mul, lambda p, q: p * q),
        (FloorDiv, lambda p, q: p // q),
        (FloorMod, lambda p, q: p % q),
        (Min, min),
        (Max, max),
        (tirx.ir.Div, trunc_div),
        (tirx.ir.Mod, trunc_mod),
    ]:
        for p, q in [(7, 3), (-7, 3), (12, -5)]:
            r = a.simplify(op(IntImm(p), IntImm(q)))
            assert isinstance(r, IntImm) and r.value == py(p, q), (op, p, q)
    assert tirx.structural_equal(a.simplify(FloorDiv(x, IntImm(0))), FloorDiv(x, IntImm(0)))


def test_simplified_ir_prints_and_parses_back():
    @T.function
    def f(A: T.Tensor((64,), "int32"), n: T.int32):
        for i in range(16):
            A[T.Sub(T.Add(i, 4), 4)] = T.floordiv(i * 4 + 2, 2) + T.Mul(n, 0) + T.min(n + 1, i + 1)

    a = S.Analyzer()

    def on_store(s):
        return BufferStore(s.buffer, a.simplify(s.value), [a.simplify(i) for i in s.indices])

    g = tirx.ffi.structural_map(f, (BufferStore, on_store))
    assert "A[i] = i * 2 + T.min(n, i) + 2" in tirx.dumps(g)  # as TIRx simplifies it
    assert tirx.structural_equal(tirx.loads(tirx.dumps(g)), g)


# ---------------------------------------------------------------------- bounds and sets
@pytest.mark.parametrize(
    "build,lo,hi",
    [
        (lambda: TX.floormod(x, 8), 0, 7),
        (lambda: TX.floormod(x, 8) * 2 + 1, 1, 15),
        (lambda: TX.min(TX.max(x, 0), 10), 0, 10),
        (lambda: TX.floormod(x, 4) - 2, -2, 1),
        (lambda: x + 1, -(2**31) + 1, 2**31),  # no overflow: the exact value's bounds
        (lambda: x < y, 0, 1),
    ],
)
def test_const_int_bound(build, lo, hi):
    b = S.Analyzer().const_int_bound(build())
    assert (b.min_value, b.max_value) == (lo, hi)


def test_const_int_bound_of_int64_is_clamped_to_infinity():
    w = Var("w", int64)
    b = S.Analyzer().const_int_bound(w * 2)
    assert (b.min_value, b.max_value) == (S.ConstIntBound.NEG_INF, S.ConstIntBound.POS_INF)
    assert S.ConstIntBound.POS_INF == 2**63 - 1 == -S.ConstIntBound.NEG_INF


@pytest.mark.parametrize(
    "build,coeff,base",
    [
        (lambda: x * 8 + 4, 8, 4),
        (lambda: x * 4 + 1, 4, 1),
        (lambda: x * 16, 16, 0),
        (lambda: x * 6 + 4 + y * 4, 2, 0),
        (lambda: x * 6 - 4, 6, 2),
        (lambda: TX.floordiv(x * 8 + 4, 2), 4, 2),
        (lambda: IntImm(5), 0, 5),
        (lambda: x, 1, 0),
    ],
)
def test_modular_set(build, coeff, base):
    m = S.Analyzer().modular_set(build())
    assert (m.coeff, m.base) == (coeff, base)


def test_modular_set_from_a_fact():
    a = analyzer(S.PredicateConstraint(TX.floormod(x, 4) == 1))
    assert a.modular_set(x * 2) == S.ModularSet(8, 2)


def test_int_set():
    n = Var("n")
    a = S.Analyzer()
    s = a.int_set(x * 4 + 1, {x: S.IntervalSet(0, 3)})
    assert isinstance(s, S.IntervalSet) and (int(s.min_value), int(s.max_value)) == (1, 13)
    s = a.int_set(x * 4 + y, {x: S.IntervalSet(0, n), y: S.IntervalSet(n, n * 2)})
    assert str(s.min_value) == "n" and str(s.max_value) == "n * 6"
    s = a.int_set(x * -2 + z, {x: T.Range(0, 8)})  # a range domain: [0, 7]
    assert str(s.min_value) == "z - 14" and str(s.max_value) == "z"
    s = a.int_set(TX.floormod(x, 4) + y, {x: S.IntervalSet(S.neg_inf(), S.pos_inf())})
    assert str(s.min_value) == "y" and str(s.max_value) == "y + 3"
    assert a.int_set(x * y, {x: S.IntervalSet(S.neg_inf(), 3)}).is_everything()
    # without a domain map: the variables the facts give a range
    a = analyzer(in_range(x, 0, 15))
    s = a.int_set(x * 2 + 1)
    assert (int(s.min_value), int(s.max_value)) == (1, 31)
    assert str(a.int_set(y + 1).min_value) == "y + 1"
    assert S.IntSet.single_point(x).min_value is x


def test_try_compare():
    R = S.CompareResult
    a = analyzer(in_range(x, 0, 15), S.PredicateConstraint(y < z))
    assert a.try_compare(x, IntImm(16)) is R.LT
    assert a.try_compare(x, IntImm(15)) is R.LE
    assert a.try_compare(x + 1, x) is R.GT
    assert a.try_compare(x * 2, x + x) is R.EQ
    assert a.try_compare(y, z) is R.LT
    assert a.try_compare(z, y + 1) is R.GE
    assert a.try_compare(x * 2, IntImm(7)) is R.NE
    assert a.try_compare(x, y) is R.UNKNOWN


# ---------------------------------------------------------------------- facts
def test_facts_decide_min_max_div_mod():
    i, n = Var("i"), Var("n")
    a = analyzer(in_range(i, 0, 15), S.PredicateConstraint(x >= 5))
    e = TX.floordiv(i, 16) + TX.floormod(i, 16) + TX.min(i, IntImm(21))
    assert tirx.structural_equal(a.simplify(e), i * 2)
    assert tirx.structural_equal(a.simplify(TX.max(x, 1) + TX.min(x, 2)), x + 2)
    assert a.can_prove(x * 2 > 9)
    # symbolic bounds: a guard and a loop over [n, n + 8)
    a = analyzer(S.RangeConstraint(i, T.Range.from_min_extent(n, IntImm(8))), S.PredicateConstraint(y < n))
    assert a.can_prove(y < i) and a.can_prove(i < n + 8) and a.can_prove(i - n < 8)
    assert tirx.structural_equal(a.simplify(TX.floordiv(i - n, 8)), IntImm(0))
    assert not a.can_prove(i < n + 7)


def test_bindings_are_substituted():
    i, t = Var("i"), Var("t")
    a = analyzer(in_range(i, 0, 15), S.BindingConstraint(t, i * 4))
    assert str(a.simplify(t + 1)) == "i * 4 + 1"
    b = a.const_int_bound(t)
    assert (b.min_value, b.max_value) == (0, 60)
    assert a.const_int_bound_is_bound(t) and a.const_int_bound_is_bound(i)
    assert not a.const_int_bound_is_bound(z)
    assert a.modular_set(t) == S.ModularSet(4, 0)


def test_two_facts_chain():
    # comparisons chain two known inequalities; SYMBOLIC_BOUND chains them everywhere
    a = analyzer(S.PredicateConstraint(x < y), S.PredicateConstraint(y < z))
    assert a.can_prove(x + 2 <= z) and a.try_compare(x, z) is S.CompareResult.LT
    inner = EQ(TX.min(x + 2, z), x + 2)
    assert not a.can_prove(inner)
    assert a.can_prove(inner, S.ProofStrength.SYMBOLIC_BOUND)


def test_sync_follows_the_context():
    outer = ctx_of(in_range(x, 0, 15))
    inner = S.ConstraintContext(outer, outer.local_size())
    inner.append(S.PredicateConstraint(x < 4))
    a = S.Analyzer()
    a.sync_constraint_context(outer)
    assert a.can_prove(x < 16) and not a.can_prove(x < 4)
    b = a.const_int_bound(x * 2 + 1)
    assert (b.min_value, b.max_value) == (1, 31)
    a.sync_constraint_context(inner)
    assert a.can_prove(x < 4)
    c = a.clone()
    a.sync_constraint_context(outer)
    assert not a.can_prove(x < 4)
    assert c.can_prove(x < 4)  # a clone keeps its own facts
    outer.append(S.PredicateConstraint(x > 10))  # seen only after another sync
    assert not a.can_prove(x > 10)
    a.sync_constraint_context(outer)
    assert a.can_prove(x > 10)
    a.sync_constraint_context(S.ConstraintContext())
    assert not a.can_prove(x >= 0)


def test_maximum_rewrite_steps():
    a = S.Analyzer()
    e = x
    for _ in range(50):
        e = e + 1
    a.set_maximum_rewrite_steps(10)
    with pytest.raises(RuntimeError, match="rewrite steps"):
        a.simplify(e)
    a.set_maximum_rewrite_steps(0)
    assert str(a.simplify(e)) == "x + 50"


def test_no_z3():
    a = S.Analyzer()
    assert a.is_z3_enabled is False
    with pytest.raises(RuntimeError, match="Z3"):
        a.get_smtlib2()


# ---------------------------------------------------------------------- constraints as data
def test_constraint_context_chains():
    a, b, c = (S.PredicateConstraint(x < k) for k in (1, 2, 3))
    root = ctx_of(a, b)
    child = S.ConstraintContext(root, 1)  # sees a only
    child.append(c)
    assert list(child) == [a, c] and child.local_size() == 1 and root.local_size() == 2
    it = iter(root)
    root.append(c)  # an iteration in progress does not see it
    assert list(it) == [a, b]
    snap = child.snapshot()
    child.append(b)
    assert list(snap) == [a, c] and list(child) == [a, c, b]
    deep = root
    for _ in range(3000):  # long chains iterate without recursion
        deep = S.ConstraintContext(deep, deep.local_size())
    assert len(list(deep)) == 3


def test_constraint_fields():
    r = S.RangeConstraint(x, T.Range(2, 16))
    assert r.var is x and int(r.range.begin) == 2 and int(r.range.extent) == 14
    p = S.PredicateConstraint(x < 3)
    assert p.assume_always is False and S.PredicateConstraint(True, assume_always=True).assume_always
    bnd = S.BindingConstraint(y, x * 2)
    assert bnd.var is y and str(bnd.value) == "x * 2"
    with pytest.raises(AttributeError):
        p.condition = x  # type: ignore[misc]


# ---------------------------------------------------------------------- the walks
def facts(ctx):
    out = []
    for c in ctx:
        if isinstance(c, S.RangeConstraint):
            out.append(("range", c.var.name, str(c.range.begin), str(c.range.extent)))
        elif isinstance(c, S.BindingConstraint):
            out.append(("bind", c.var.name, str(c.value)))
        else:
            out.append(("pred", str(c.condition)))
    return out


def test_walk_records_what_tirx_records():
    # the same kernel under TIRx 0.1.0a4 records exactly these facts, in this order
    @T.function(private=True)
    def func(A: T.Tensor((64,), "int32"), n: T.int32, m: T.int32):
        for i in range(1, n):
            if i < m:
                t = i * 2
                A[t] = 1
                assert t < 50, "x"
                A[t + 1] = 2
            else:
                A[i] = T.if_then_else(i < 4, A[i], 7)
        bx = T.launch_thread("blockIdx.x", 8)
        for j in range(4):
            while j < 2:
                A[j] = 0
            A[bx] = 1

    seen = []

    def on_node(node, ctx):
        if isinstance(node, (BufferStore, tirx.ir.BufferLoad)):
            seen.append(facts(ctx))

    TX.structural_walk_with_constraint_context(func, on_node, order="pre")
    loop = [("range", "i", "1", "n - 1"), ("pred", "n > 1"), ("pred", "n - 1 > 0")]
    inner = [
        ("range", "bx", "0", "8"),
        ("range", "j", "0", "4"),
        ("pred", "T.bool(True)"),
        ("pred", "T.bool(True)"),
    ]
    assert seen == [
        [*loop, ("pred", "i < m"), ("bind", "t", "i * 2")],
        [*loop, ("pred", "i < m"), ("bind", "t", "i * 2"), ("pred", "t < 50")],
        [*loop, ("pred", "not i < m")],  # the store in the else branch
        [*loop, ("pred", "not i < m"), ("pred", "i < 4")],  # the load in the select's taken arm
        [*inner, ("pred", "j < 2")],
        inner,
    ]


def test_post_order_callback_of_a_scope_sees_the_outer_facts():
    @T.function(private=True)
    def func(A: T.Tensor((16,), "int32")):
        for i in range(16):
            A[i] = 0

    seen = {}

    def on_node(v, ctx):
        seen.setdefault(type(v).__name__, facts(ctx))

    TX.structural_walk_with_constraint_context(func, on_node)
    assert seen["For"] == [] and seen["BufferStore"][0] == ("range", "i", "0", "16")


def test_walk_skip_and_interrupt():
    @T.function(private=True)
    def func(A: T.Tensor((16,), "int32")):
        for i in range(16):
            A[i] = 0
        for j in range(16):
            A[j] = 1

    stores = []

    def on_node(v, ctx):
        if isinstance(v, For) and v.var.name == "j":
            return tirx.ffi.WalkResult.SKIP
        if isinstance(v, BufferStore):
            stores.append(int(v.value))
        return None

    TX.structural_walk_with_constraint_context(func, on_node, order="pre")
    assert stores == [0]
    stop = TX.structural_walk_with_constraint_context(
        func, lambda v, ctx: tirx.ffi.VisitInterrupt(v) if isinstance(v, BufferStore) else None
    )
    assert isinstance(stop, tirx.ffi.VisitInterrupt) and isinstance(stop.value, BufferStore)


def test_map_removes_guards_the_facts_decide():
    @T.function(private=True)
    def before(A: T.Tensor((8,), "int32"), m: T.int32):
        for i in range(8):
            if i < 8:
                A[i] = 1
            if i < m:
                A[i] = 5
            if i > 11:
                A[i] = 7
            else:
                A[i] = A[i] * 2

    @T.function(private=True)
    def expected(A: T.Tensor((8,), "int32"), m: T.int32):
        for i in range(8):
            A[i] = 1
            if i < m:
                A[i] = 5
            A[i] = A[i] * 2

    a = S.Analyzer()

    def on_node(node, ctx):
        if isinstance(node, IfThenElse):
            a.sync_constraint_context(ctx)
            if a.can_prove(node.cond):
                return node.then_case
            if a.can_prove(Not(node.cond)):
                return node.else_case if node.else_case is not None else tirx.ir.SeqStmt(())
        return node

    after = TX.structural_map_with_constraint_context(before, on_node)
    tirx.assert_structural_equal(after, expected)
    assert TX.structural_map_with_constraint_context(expected, on_node) is expected


def test_map_records_the_rewritten_condition():
    @T.function(private=True)
    def func(A: T.Tensor((16,), "int32"), n: T.int32):
        if n < 4:
            A[0] = 1

    conds = []

    def on_node(node, ctx):
        if isinstance(node, LT):
            return LT(node.a, IntImm(2))  # n < 4 becomes n < 2
        if isinstance(node, BufferStore):
            conds.extend(str(c.condition) for c in ctx)
        return node

    TX.structural_map_with_constraint_context(func, on_node)
    assert conds == ["n < 2"]


def test_visit_and_mutate_own_the_descent():
    @T.function(private=True)
    def before(A: T.Tensor((16,), "int32")):
        for i in range(16):
            A[i] = T.floormod(i, 16)
        for j in range(32):
            A[T.floormod(j, 16)] = T.floormod(j, 16)

    @T.function(private=True)
    def expected(A: T.Tensor((16,), "int32")):
        for i in range(16):
            A[i] = i
        for j in range(32):
            A[T.floormod(j, 16)] = T.floormod(j, 16)

    a = S.Analyzer()

    def on_value(value, mutator):
        if isinstance(value, For) and value.var.name == "j":
            return value
        if isinstance(value, BufferStore):
            a.sync_constraint_context(mutator.constraints)
            return BufferStore(value.buffer, a.simplify(value.value), [a.simplify(i) for i in value.indices])
        return mutator.default_mutate(value)

    tirx.assert_structural_equal(TX.structural_mutate_with_constraint_context(before, on_value), expected)

    ranges = []

    def on_visit(value, visitor):
        if isinstance(value, BufferStore):
            ranges.append(facts(visitor.constraints)[0][:2])
            return None
        return visitor.default_visit(value)

    TX.structural_visit_with_constraint_context(before, on_visit)
    assert ranges == [("range", "i"), ("range", "j")]


def test_let_and_lazy_select_scope_expressions():
    seen = []
    e = tirx.ir.Let(x, IntImm(5), x + y)
    TX.structural_walk_with_constraint_context(
        e, lambda v, ctx: seen.append((str(v), facts(ctx))) if isinstance(v, Add) else None
    )
    assert seen == [("x + y", [("bind", "x", "5")])]
    sel = T.if_then_else(x < 4, x + 1, y)
    seen = []
    TX.structural_walk_with_constraint_context(
        sel, lambda v, ctx: seen.append((str(v), facts(ctx))), order="pre"
    )
    assert ("x + 1", [("pred", "x < 4")]) in seen and ("y", [("pred", "not x < 4")]) in seen
    assert not any(isinstance(v, tuple) for v, _ in seen)  # no callback for the argument tuple


# ---------------------------------------------------------------------- misuse and depth
@pytest.mark.parametrize(
    "call,exc,words",
    [
        (lambda: S.Analyzer().simplify("x"), TypeError, "expr"),
        (lambda: S.Analyzer().simplify(x, steps=-1), ValueError, "steps"),
        (lambda: S.Analyzer().can_prove(x < 1, strength=5), ValueError, "strength"),
        (lambda: S.Analyzer().sync_constraint_context([]), TypeError, "context"),
        (lambda: S.Analyzer().int_set(x, {x: 2}), TypeError, "dom_map"),
        (lambda: S.Analyzer().const_int_bound_is_bound(1), TypeError, "var"),
        (lambda: S.Analyzer().set_maximum_rewrite_steps(1.5), TypeError, "maximum"),
        (lambda: S.RangeConstraint(x, (0, 4)), TypeError, "domain"),
        (lambda: S.BindingConstraint("t", x), TypeError, "var"),
        (lambda: S.ConstraintContext(None, 1), ValueError, "parent_local_prefix"),
        (lambda: S.ConstraintContext(S.ConstraintContext(), 1), ValueError, "parent_local_prefix"),
        (lambda: S.ConstraintContext().append(x < 1), TypeError, "constraint"),
        (lambda: TX.structural_walk_with_constraint_context(x, None), TypeError, "callback"),
        (lambda: TX.structural_map_with_constraint_context(x, print, order="in"), ValueError, "order"),
    ],
)
def test_misuse_names_the_argument(call, exc, words):
    with pytest.raises(exc, match=words):
        call()


def test_deep_expressions_do_not_recurse_out():
    e, c = x, x < 5
    for i in range(3000):
        e = Add(e, IntImm(1)) if i % 2 else Mul(e, IntImm(1))
        c = Not(c) if i % 2 else And(c, x < i + 6)
    a = S.Analyzer()
    assert str(a.simplify(e)) == "x + 1500"
    assert a.can_prove(x < e)
    assert a.const_int_bound(e).max_value == 2**31 - 1 + 1500
    assert a.modular_set(e) == S.ModularSet(1, 0)
    assert a.simplify(c) is not None
    assert a.can_prove_equal(e, x + 1500)


# ---------------------------------------------------------------------- properties
RANGES = {x: (0, 15), y: (-8, 7), z: (1, 20)}


def evaluate(e, env):
    """The exact value of an integer / bool expression (unbounded integers)."""
    t = type(e)
    if t is IntImm:
        return e.value
    if t is Var:
        return env[e]
    if t is Select:
        return evaluate(e.true_value if evaluate(e.cond, env) else e.false_value, env)
    if t is Not:
        return int(not evaluate(e.a, env))
    a, b = evaluate(e.a, env), evaluate(e.b, env)
    ops = {
        Add: lambda: a + b,
        Sub: lambda: a - b,
        Mul: lambda: a * b,
        FloorDiv: lambda: a // b,
        FloorMod: lambda: a % b,
        tirx.ir.Div: lambda: trunc_div(a, b),
        tirx.ir.Mod: lambda: trunc_mod(a, b),
        Min: lambda: min(a, b),
        Max: lambda: max(a, b),
        LT: lambda: int(a < b),
        LE: lambda: int(a <= b),
        GT: lambda: int(a > b),
        GE: lambda: int(a >= b),
        EQ: lambda: int(a == b),
        NE: lambda: int(a != b),
        And: lambda: int(bool(a) and bool(b)),
        Or: lambda: int(bool(a) or bool(b)),
    }
    return ops[t]()


leaves = st.sampled_from([x, y, z]) | st.integers(-6, 9).map(IntImm)
divisors = st.sampled_from([-4, -3, 2, 3, 4, 8]).map(IntImm)


def _cmp(children):
    return st.builds(
        lambda cls, a, b: cls(a, b), st.sampled_from([LT, LE, EQ, NE, GT, GE]), children, children
    )


def _extend(children):
    cond = _cmp(children) | st.builds(Not, _cmp(children))
    return st.one_of(
        st.builds(Add, children, children),
        st.builds(Sub, children, children),
        st.builds(Mul, children, children),
        st.builds(Mul, children, st.sampled_from([-3, -1, 2, 4]).map(IntImm)),
        st.builds(FloorDiv, children, divisors),
        st.builds(FloorMod, children, divisors),
        st.builds(tirx.ir.Div, children, st.sampled_from([2, 3, 5]).map(IntImm)),
        st.builds(lambda a, b: FloorDiv(a, Add(FloorMod(b, IntImm(3)), IntImm(1))), children, children),
        st.builds(Min, children, children),
        st.builds(Max, children, children),
        st.builds(Select, cond, children, children),
    )


int_exprs = st.recursive(leaves, _extend, max_leaves=10)
conditions = st.one_of(
    _cmp(int_exprs),
    st.builds(Not, _cmp(int_exprs)),
    st.builds(And, _cmp(int_exprs), _cmp(int_exprs)),
    st.builds(Or, _cmp(int_exprs), _cmp(int_exprs)),
)
points = st.lists(
    st.fixed_dictionaries({v: st.integers(lo, hi) for v, (lo, hi) in RANGES.items()}),
    min_size=12,
    max_size=12,
)


def ranged():
    return analyzer(*(in_range(v, lo, hi) for v, (lo, hi) in RANGES.items()))


@settings(max_examples=80, deadline=None)
@given(int_exprs, points)
def test_simplification_keeps_the_value(e, pts):
    a = ranged()
    want = [evaluate(e, p) for p in pts]
    for f in (a.simplify, a.canonical_simplify, a.rewrite_simplify):
        assert [evaluate(f(e), p) for p in pts] == want, (e, f(e))


@settings(max_examples=80, deadline=None)
@given(int_exprs, points)
def test_bounds_and_modular_sets_hold(e, pts):
    a = ranged()
    vals = [evaluate(e, p) for p in pts]
    b = a.const_int_bound(e)
    assert all(b.min_value <= v <= b.max_value for v in vals), (e, b)
    m = a.modular_set(e)
    assert all((v - m.base) % m.coeff == 0 if m.coeff else v == m.base for v in vals), (e, m)
    s = a.int_set(e, {v: S.IntervalSet(lo, hi) for v, (lo, hi) in RANGES.items()})
    if isinstance(s.min_value, IntImm):
        assert min(vals) >= s.min_value.value
    if isinstance(s.max_value, IntImm):
        assert max(vals) <= s.max_value.value


@settings(max_examples=80, deadline=None)
@given(conditions, conditions, points)
def test_proofs_and_comparisons_hold(guard, c, pts):
    # a guard as a fact: what is proven must hold wherever the guard does
    base = ctx_of(*(in_range(v, lo, hi) for v, (lo, hi) in RANGES.items()))
    inner = S.ConstraintContext(base, base.local_size())
    inner.append(S.PredicateConstraint(guard))
    a = S.Analyzer()
    a.sync_constraint_context(inner)
    where = [p for p in pts if evaluate(guard, p)]
    if a.can_prove(c, S.ProofStrength.SYMBOLIC_BOUND):
        assert all(evaluate(c, p) for p in where), (guard, c)
    assert [evaluate(a.simplify(c), p) for p in where] == [evaluate(c, p) for p in where], (guard, c)
    lhs, rhs = c.a.a if isinstance(c, Not) else c.a, c.b if not isinstance(c, Not) else c.a.b
    if isinstance(lhs, tirx.ir.PrimExpr) and lhs.ty == x.ty:
        holds = {
            S.CompareResult.EQ: lambda p, q: p == q,
            S.CompareResult.LT: lambda p, q: p < q,
            S.CompareResult.LE: lambda p, q: p <= q,
            S.CompareResult.GT: lambda p, q: p > q,
            S.CompareResult.GE: lambda p, q: p >= q,
            S.CompareResult.NE: lambda p, q: p != q,
            S.CompareResult.UNKNOWN: lambda p, q: True,
        }[a.try_compare(lhs, rhs)]
        assert all(holds(evaluate(lhs, p), evaluate(rhs, p)) for p in where), (guard, lhs, rhs)
        if a.can_prove_equal(lhs, rhs):
            assert all(evaluate(lhs, p) == evaluate(rhs, p) for p in where)


def test_walk_and_deep_ir_share_tirx_ffi_traversal():
    # the walks are tirx.ffi's: the same values in the same order, plus the facts
    @T.function(private=True)
    def func(A: T.Tensor((8,), "int32"), n: T.int32):
        for i in range(8):
            if i < n:
                A[i] = i + 1

    plain, with_ctx = [], []
    structural_walk(func, lambda v: plain.append(type(v).__name__))
    TX.structural_walk_with_constraint_context(func, lambda v, ctx: with_ctx.append(type(v).__name__))
    # sequences' tuples get no callback in the constraint-aware walk (as TIRx's)
    assert [t for t in plain if t != "tuple"] == [t for t in with_ctx if t != "tuple"]
    assert GE is not None and GT is not None and Or is not None
