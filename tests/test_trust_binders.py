"""Issue #12 item 2: every IR that passes VerifyWellFormed round-trips exactly, also with
binder nodes reused in several places and with nested / singleton statement sequences.

Semantics checked here: structural equality is scope-aware -- a ``Let`` var is bound only
in the Let's body, a ``For`` var only in the loop body, a ``Bind`` / ``AllocBuffer`` /
``DeclBuffer`` until the end of its enclosing body; when the scope ends the binding is
dropped, so one var object bound in two places may map to two vars on the other side, and
an inner binding of a var shadows an outer one. A ``SeqStmt`` is not a scope: statement
sequences compare (and hash) flattened, and a one-element sequence is its element.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from structural_check import differ, same

import tirx
from tirx.ir import expr as E
from tirx.ir import stmt as S
from tirx.ir.buffer import Buffer
from tirx.ir.function import Function
from tirx.ir.types import PointerType, int32
from tirx.passes.verify import verify_well_formed
from tirx.testing import strategies

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def i32(v: int) -> E.IntImm:
    return E.IntImm(v, int32)


def ev(x) -> S.Evaluate:
    return S.Evaluate(x if isinstance(x, E.PrimExpr) else i32(x))


def round_trips(f) -> None:
    """The three text invariants, on IR that verifies."""
    assert verify_well_formed(f) == []
    d = tirx.dumps(f)
    g = tirx.loads(d)
    tirx.assert_structural_equal(g, f)
    same(g, f)
    assert tirx.dumps(g) == d


N = E.Var("n", int32)


def fn(body, params=(N,)) -> Function:
    return Function("f", params, body, ())


# ------------------------------------------------------------------ shared binder nodes
def test_let_reused_in_loop_bounds():
    # the campaign failure: tirx.testing.strategies._for form 3 with a Let start
    k = E.Var("k", int32)
    start = E.Let(k, N, k)
    ext = E.Sub(E.Add(start, i32(4)), start)
    round_trips(fn(S.For(E.Var("i", int32), start, ext, S.ForKind.SERIAL, ev(0))))


def test_let_node_used_twice_in_one_expression():
    k = E.Var("k", int32)
    let = E.Let(k, N + 1, k * k)
    round_trips(fn(ev(E.Add(let, let))))
    round_trips(fn(ev(E.Let(E.Var("m", int32), let, let))))


def test_for_node_used_twice():
    i = E.Var("i", int32)
    loop = S.For(i, i32(0), N, S.ForKind.SERIAL, ev(i + 1))
    round_trips(fn(S.SeqStmt((loop, loop))))
    outer = S.For(E.Var("j", int32), i32(0), i32(3), S.ForKind.SERIAL, S.SeqStmt((loop, loop)))
    round_trips(fn(S.SeqStmt((outer, loop))))


def test_same_loop_var_in_two_loops_and_nested():
    i = E.Var("i", int32)
    inner = S.For(i, i32(0), i + 2, S.ForKind.SERIAL, ev(i))  # i in the bounds is the outer i
    round_trips(fn(S.For(i, i32(0), N, S.ForKind.SERIAL, S.SeqStmt((inner, ev(i))))))


def test_bind_of_one_var_twice():
    x = E.Var("x", int32)
    body = S.SeqStmt((S.Bind(x, N), ev(x), S.Bind(x, x + 1), ev(x * 2)))
    round_trips(fn(body))
    b = S.Bind(x, N + 3)  # the same Bind node twice
    round_trips(fn(S.SeqStmt((b, ev(x), b, ev(x)))))


def test_alloc_reused_inside_a_reused_loop():
    buf = Buffer("B", E.Var("B", PointerType(int32, "local")), int32, (i32(4),))
    i = E.Var("i", int32)
    body = S.SeqStmt((S.AllocBuffer(buf), S.BufferStore(buf, i, (i32(0),)), ev(E.BufferLoad(buf, (i32(0),)))))
    loop = S.For(i, i32(0), N, S.ForKind.SERIAL, body)
    round_trips(fn(S.SeqStmt((loop, loop))))


def test_shadowing_is_innermost_binding():
    k, k1, k2 = E.Var("k", int32), E.Var("k", int32), E.Var("k", int32)
    shadow = E.Let(k, i32(1), E.Let(k, k + 1, k))  # inner value sees the outer k
    distinct = E.Let(k1, i32(1), E.Let(k2, k1 + 1, k2))
    same(shadow, distinct)
    round_trips(fn(ev(shadow), ()))
    # a use of the *outer* binder under the inner one is a different program
    differ(E.Let(k1, i32(1), E.Let(k2, i32(2), k1)), E.Let(k, i32(1), E.Let(k, i32(2), k)))
    x, y = E.Var("x", int32), E.Var("y", int32)
    differ(
        S.SeqStmt((S.Bind(x, i32(1)), S.Bind(y, i32(2)), ev(x))),
        S.SeqStmt((S.Bind(x, i32(1)), S.Bind(x, i32(2)), ev(x))),
    )


def test_binding_ends_with_its_scope():
    # outside its scope a var is free again: compared by identity
    i, j = E.Var("i", int32), E.Var("j", int32)
    a = S.SeqStmt((S.For(i, i32(0), i32(2), S.ForKind.SERIAL, ev(i)), ev(i)))
    b = S.SeqStmt((S.For(j, i32(0), i32(2), S.ForKind.SERIAL, ev(j)), ev(j)))
    differ(a, b)


# ------------------------------------------------------------------ statement sequences
def test_sequences_compare_flattened():
    a, b, c = ev(1), ev(2), ev(3)
    same(S.SeqStmt((a, S.SeqStmt((b, c)))), S.SeqStmt((a, b, c)))
    same(S.SeqStmt((S.SeqStmt((a,)), S.SeqStmt(()), b)), S.SeqStmt((a, b)))
    same(S.SeqStmt((a,)), a)
    same(S.SeqStmt((S.SeqStmt((a,)),)), a)
    same(S.SeqStmt((S.SeqStmt(()),)), S.SeqStmt(()))
    differ(S.SeqStmt((a, S.SeqStmt((c, b)))), S.SeqStmt((a, b, c)))
    differ(S.SeqStmt((a,)), S.SeqStmt((a, a)))
    differ(S.SeqStmt(()), a)


@pytest.mark.parametrize(
    "body",
    [
        S.SeqStmt((ev(1),)),
        S.SeqStmt((ev(1), S.SeqStmt((ev(2), ev(3))))),
        S.SeqStmt((ev(1), S.SeqStmt(()))),
        S.For(E.Var("i", int32), i32(0), N, S.ForKind.SERIAL, S.SeqStmt((S.SeqStmt((ev(1),)),))),
        S.IfThenElse(N < 1, S.SeqStmt((ev(1),)), S.SeqStmt((S.SeqStmt((ev(2),)), ev(3)))),
        # ``else:`` holding a one-element sequence of an ``if`` prints (and loads) as elif
        S.IfThenElse(N < 1, ev(1), S.SeqStmt((S.SeqStmt((S.IfThenElse(N < 2, ev(2)),)),))),
    ],
    ids=["singleton", "nested", "nested-empty", "loop-body", "branches", "elif"],
)
def test_nested_and_singleton_sequences_round_trip(body):
    round_trips(fn(body))


def test_binds_in_nested_sequence_stay_visible():
    # a SeqStmt is not a scope: a Bind in an inner sequence is visible after it
    x = E.Var("x", int32)
    round_trips(fn(S.SeqStmt((S.SeqStmt((S.Bind(x, N), ev(x))), ev(x + 1)))))


# ------------------------------------------------------------------ generated IR
@SETTINGS
@given(strategies.functions())
def test_generated_ir_with_shared_binders_round_trips(f):
    round_trips(f)


def test_interpreter_restores_shadowed_bindings():
    # equal IR means one program: the interpreter runs the shadowing original and its
    # reloaded (renamed) text alike -- a Let / loop var is bound in its body only
    import numpy as np

    from tirx.interp import compile as interp_compile

    a_buf = Buffer("A", E.Var("A", PointerType(int32)), int32, (i32(3),))
    k = E.Var("k", int32)
    body = S.SeqStmt(
        (
            S.Bind(k, i32(5)),
            S.BufferStore(a_buf, E.Add(E.Let(k, i32(1), k), k), (i32(0),)),
            S.For(k, i32(0), i32(3), S.ForKind.SERIAL, S.Evaluate(k)),
            S.BufferStore(a_buf, k, (i32(1),)),
            S.Bind(k, E.Mul(k, i32(2))),
            S.BufferStore(a_buf, k, (i32(2),)),
        )
    )
    f = Function("f", (a_buf.data,), body, buffer_map=((a_buf.data, a_buf),))
    round_trips(f)
    for g in (f, tirx.loads(tirx.dumps(f))):
        out = np.zeros(3, np.int32)
        interp_compile(g)(out)
        assert out.tolist() == [6, 5, 10]
