"""Property tests for the built-in passes on generated IR.

- every pass returns well-formed IR (ConvertSSA: SSA), on ``tirx.testing.strategies``;
- the result round-trips through text (when the input itself does: the grammar is
  tested elsewhere);
- idempotence where claimed (ConvertSSA, CommonSubexprElim, InferPointerTypes; Simplify
  reaches a fixpoint in one run too);
- semantics: on generated *runnable* kernels (a local generator: in-bounds indices,
  terminating loops, per-thread outputs) the CPU interpreter computes the same outputs
  before and after each pass (skipped when ``tirx.compile(..., target="interp")`` cannot
  run).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tirx
from tirx.ir import (
    Bind,
    BufferStore,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    Function,
    IfThenElse,
    IntImm,
    Max,
    Min,
    Mod,
    Select,
    SeqStmt,
    Shr,
    TensorType,
    Var,
    op,
)
from tirx.ir import types as ty
from tirx.passes import (
    CommonSubexprElim,
    ConvertSSA,
    InferPointerTypes,
    Sequential,
    Simplify,
    verify_well_formed,
)
from tirx.surface.builder import IRBuilder, launch_args
from tirx.testing import strategies as tst

PASSES = [ConvertSSA, CommonSubexprElim, Simplify, InferPointerTypes]
IDEMPOTENT = {ConvertSSA, CommonSubexprElim, InferPointerTypes, Simplify}
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


def _roundtrips(ir) -> bool:
    try:
        return tirx.structural_equal(tirx.loads(tirx.dumps(ir)), ir)
    except Exception:
        return False


@pytest.mark.parametrize("P", PASSES, ids=lambda p: p.__name__)
@SETTINGS
@given(m=tst.modules())
def test_pass_output_well_formed_idempotent_roundtrips(P, m):
    assert verify_well_formed(m) == []
    out = P()(m)
    errs = verify_well_formed(out, require_ssa=P is ConvertSSA)
    assert errs == [], "\n".join(map(str, errs)) + "\n" + tirx.dumps(out)
    if P in IDEMPOTENT:
        again = P()(out)
        assert again is out or tirx.structural_equal(again, out)
    if P in (ConvertSSA, CommonSubexprElim, InferPointerTypes):
        assert P()(out) is out  # a second run finds nothing: the same object
    if out is not m and _roundtrips(m):
        assert _roundtrips(out), tirx.dumps(out)


@SETTINGS
@given(f=tst.functions())
def test_pipeline_on_functions(f):
    out = Sequential([ConvertSSA(), Simplify(), CommonSubexprElim(), InferPointerTypes()])(f)
    assert verify_well_formed(out, require_ssa=True) == []


@SETTINGS
@given(f=tst.functions())
def test_ssa_input_returned_unchanged(f):
    once = ConvertSSA()(f)
    assert ConvertSSA()(once) is once


# ------------------------------------------------------------------ runnable kernels
N = 64
I32, F32 = ty.int32, ty.float32


class _Gen:
    """Draws runnable kernel bodies through an IRBuilder (see module doc)."""

    def __init__(self, draw, ib, A, F, B, G, tid, scalars):
        self.draw, self.ib = draw, ib
        self.A, self.F, self.B, self.G = A, F, B, G
        self.ints = [tid, *scalars]
        self.floats: list = []
        self.pool: list = []  # previously drawn expressions, reused to create duplicates
        self.tid = tid
        self.budget = 14

    def idx(self, e):
        return FloorMod(e, IntImm(N, I32))

    def int_expr(self, depth=0):
        d = self.draw
        if self.pool and d(st.integers(0, 4)) == 0:
            return d(st.sampled_from([p for p in self.pool if p.ty == I32] or [self.tid]))
        if depth >= 3 or d(st.integers(0, 3)) == 0:
            k = d(st.integers(0, 2))
            if k == 0:
                return IntImm(d(st.integers(-9, 9)), I32)
            if k == 1:
                return self.A[self.idx(self.int_expr(depth + 1))]
            return d(st.sampled_from(self.ints))
        a, b = self.int_expr(depth + 1), self.int_expr(depth + 1)
        k = d(st.integers(0, 10))
        cst = IntImm(d(st.sampled_from([1, 2, 3, -3, 7])), I32)
        e = [
            lambda: a + b,
            lambda: a - b,
            lambda: a * b,
            lambda: FloorDiv(a, cst),
            lambda: FloorMod(a, cst),
            lambda: Div(a, cst),
            lambda: Mod(a, cst),
            lambda: Min(a, b),
            lambda: Max(a, b),
            lambda: Select(a < b, a, b + IntImm(1, I32)),
            lambda: Shr(a, IntImm(d(st.integers(0, 3)), I32)),
        ][k]()
        self.pool.append(e)
        return e

    def float_expr(self, depth=0):
        d = self.draw
        if self.pool and d(st.integers(0, 4)) == 0:
            cands = [p for p in self.pool if p.ty == F32]
            if cands:
                return d(st.sampled_from(cands))
        if depth >= 3 or d(st.integers(0, 3)) == 0:
            k = d(st.integers(0, 3))
            if k == 0:
                return FloatImm(d(st.sampled_from([0.5, 1.25, -2.0, 3.0])), F32)
            if k == 1 or not self.floats:
                return self.F[self.idx(self.int_expr(depth + 1))]
            if k == 2:
                return Cast(F32, self.int_expr(depth + 1))
            return d(st.sampled_from(self.floats))
        a, b = self.float_expr(depth + 1), self.float_expr(depth + 1)
        e = [lambda: a + b, lambda: a - b, lambda: a * b, lambda: a * FloatImm(0.5, F32)][
            d(st.integers(0, 3))
        ]()
        self.pool.append(e)
        return e

    def stmts(self, depth=0):
        d, ib = self.draw, self.ib
        n = d(st.integers(1, 4))
        saved = (list(self.ints), list(self.floats), list(self.pool))
        for _ in range(n):
            if self.budget <= 0:
                break
            self.budget -= 1
            k = d(st.integers(0, 6))
            if k <= 1:
                self.ints.append(ib.bind("v", self.int_expr()))
            elif k == 2:
                self.floats.append(ib.bind("w", self.float_expr()))
            elif k == 3:
                ib.store(self.B, (self.tid,), self.int_expr())
            elif k == 4:
                ib.store(self.G, (self.tid,), self.float_expr())
            elif k == 5 and depth < 2:
                with ib.for_("i", 0, d(st.integers(0, 3))) as i:
                    self.ints.append(i)
                    self.stmts(depth + 1)
                self.ints, self.floats, self.pool = (list(x) for x in saved)
            elif depth < 2:
                with ib.if_(self.int_expr() < self.int_expr()):
                    self.stmts(depth + 1)
                self.ints, self.floats, self.pool = (list(x) for x in saved)
                if d(st.booleans()):
                    with ib.else_():
                        self.stmts(depth + 1)
                    self.ints, self.floats, self.pool = (list(x) for x in saved)
        if depth:
            self.ints, self.floats, self.pool = saved


@st.composite
def runnable_kernels(draw) -> Function:
    ib = IRBuilder()
    with ib.function("kernel"):
        A = ib.param("A", TensorType((N,), I32))
        F = ib.param("F", TensorType((N,), F32))
        B = ib.param("B", TensorType((N,), I32))
        G = ib.param("G", TensorType((N,), F32))
        x = ib.param("x", I32)
        y = ib.param("y", I32)
        args, at = launch_args(2, 32)
        with ib.device_entry(args, at):
            tid = ib.bind("tid", op.call("cuda.block_idx", "x") * 32 + op.call("cuda.thread_idx", "x"))
            g = _Gen(draw, ib, A, F, B, G, tid, [x, y])
            g.stmts()
            ib.store(B, (tid,), g.int_expr())
            ib.store(G, (tid,), g.float_expr())
    return ib.get()


def _interp_ok() -> bool:
    try:
        ib = IRBuilder()
        with ib.function("probe"):
            B = ib.param("B", TensorType((1,), I32))
            ib.store(B, (0,), IntImm(1, I32))
        k = tirx.compile(ib.get(), target="interp")
        b = np.zeros(1, np.int32)
        k(b)
        return int(b[0]) == 1
    except Exception:
        return False


def _run(f, inputs):
    a, fl, x, y = inputs
    b = np.zeros(N, np.int32)
    g = np.zeros(N, np.float32)
    tirx.compile(f, target="interp")(a.copy(), fl.copy(), b, g, x, y)
    return b, g


@pytest.mark.skipif(not _interp_ok(), reason="the CPU interpreter cannot run kernels yet")
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(f=runnable_kernels(), seed=st.integers(0, 2**16))
def test_passes_preserve_semantics(f, seed):
    rng = np.random.default_rng(seed)
    inputs = (
        rng.integers(-50, 50, N).astype(np.int32),
        (rng.integers(-8, 8, N) * 0.25).astype(np.float32),
        int(rng.integers(-20, 20)),
        int(rng.integers(-20, 20)),
    )
    try:
        want = _run(f, inputs)
    except Exception as e:  # the interpreter rejects the program: nothing to compare
        assume(False)
        raise AssertionError from e
    for P in (*PASSES, lambda: Sequential([p() for p in PASSES])):
        out = P()(f)
        got = _run(out, inputs)
        assert np.array_equal(got[0], want[0]), tirx.dumps(out)
        assert np.array_equal(got[1], want[1], equal_nan=True), tirx.dumps(out)


def test_runnable_generator_makes_cse_opportunities():
    # sanity check of the local generator: some generated kernels do get commoned
    found = []

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
    @given(f=runnable_kernels())
    def inner(f):
        assert verify_well_formed(f) == []
        if CommonSubexprElim()(f) is not f:
            found.append(1)

    inner()
    assert found


_ = (Bind, BufferStore, For, ForKind, IfThenElse, SeqStmt, Var)
