"""UnrollLoop (TIRx's ``tirx.UnrollLoop``): ``T.unroll`` loops of constant bounds become copies
of their body, each with its own definitions; meaning kept (the interpreter runs both)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
from tirx.ir import For, ForKind
from tirx.passes import PassContext, UnrollLoop, verify_well_formed
from tirx.passes.tirx_transform import UnrollLoop as TIRxUnrollLoop
from tirx.script import tirx as T


def _loops(f):
    out = []
    todo = [f.body]
    while todo:
        n = todo.pop()
        if isinstance(n, For):
            out.append(n)
        todo.extend(c for c in getattr(n, "stmts", ()) or ())
        for name in ("body", "then_case", "else_case"):
            c = getattr(n, name, None)
            if c is not None:
                todo.append(c)
    return out


@T.function
def mixed(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32"), n: T.int32):
    for i in T.unroll(3):
        x = A[i] * T.float32(2)
        for j in T.unroll(2):
            B[i * 2 + j] = x + T.float32(j)
    for k in range(2):
        B[10 + k] = T.float32(7)
    for m in T.unroll(9, 15, step=2):
        B[m] = A[m]
    for q in range(n):
        B[15] = T.float32(q)


def _run(f, n=4):
    a = np.arange(16, dtype="float32")
    b = np.full(16, -1, "float32")
    tirx.compile(f, target="interp")(a, b, n)
    return b


def test_unrolled_loops_become_copies_with_fresh_definitions():
    out = UnrollLoop()(mixed)
    kinds = [lp.kind for lp in _loops(out)]
    assert kinds == [ForKind.SERIAL, ForKind.SERIAL]  # the serial loops stay, every T.unroll went
    assert verify_well_formed(out, require_ssa=True) == []  # each copy's x is its own
    np.testing.assert_array_equal(_run(out), _run(mixed))
    text = tirx.dumps(out)
    assert "B[13] = A[13]" in text and "B[12]" not in text  # the step is followed
    assert tirx.structural_equal(tirx.loads(text), out)


def test_auto_max_step_and_explicit_unroll_from_the_pass_context():
    with PassContext(config={"tirx.UnrollLoop": {"auto_max_step": 2}}):
        out = UnrollLoop()(mixed)
    assert [lp.kind for lp in _loops(out)] == [ForKind.SERIAL]  # range(2) went, range(n) stays
    with PassContext(config={"tirx.UnrollLoop": {"explicit_unroll": False}}):
        kept = UnrollLoop()(mixed)
    assert kept is mixed
    np.testing.assert_array_equal(_run(out), _run(mixed))
    assert TIRxUnrollLoop().name == "tirx.UnrollLoop"


@T.function
def dynamic(A: T.Tensor((16,), "float32"), n: T.int32):
    for i in T.unroll(n):
        A[i] = T.float32(0)


@T.function
def leaves(A: T.Tensor((16,), "float32")):
    for i in T.unroll(4):
        if A[i] > T.float32(2):
            break
        A[i] = T.float32(0)


def test_what_cannot_be_copied():
    with pytest.raises(tirx.DiagnosticError, match="cannot unroll loop i") as e:
        UnrollLoop()(dynamic)
    assert e.value.span is not None
    assert UnrollLoop()(leaves) is leaves  # a break of the loop: copies have nowhere to go
    with pytest.raises(ValueError, match="auto_max_step"):
        UnrollLoop(auto_max_step=-1)(mixed)
    with (
        pytest.raises(ValueError, match="unknown options"),
        PassContext(config={"tirx.UnrollLoop": {"max_depth": 2}}),
    ):
        UnrollLoop()(mixed)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 6), st.integers(1, 4), st.integers(1, 3))
def test_unrolling_keeps_meaning(start, extent, step):
    src = f"""
from __future__ import annotations

@T.function
def f(A: T.Tensor((32,), "int32"), B: T.Tensor((32,), "int32"), n: T.int32):
    for i in T.unroll({start}, {start + extent * step}, step={step}):
        t = A[i] + n
        B[i] = t * 2
"""
    f = tirx.loads(src)
    g = UnrollLoop()(f)
    assert not _loops(g)
    a = np.arange(32, dtype="int32")
    outs = []
    for h in (f, g):
        b = np.zeros(32, "int32")
        tirx.compile(h, target="interp")(a, b, 5)
        outs.append(b)
    np.testing.assert_array_equal(outs[0], outs[1])
