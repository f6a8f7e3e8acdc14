"""Deeply nested IR (issue #12, item 12): everything that loads must print, compare, hash,
verify, run passes, compile and run without a RecursionError, whichever front end made it.

A chain of N terms is an expression N levels deep; before tirx.ir.deep, 300 frontend terms
broke tirx.compile and 1000 text terms broke `tirx check`."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
import tirx.passes as P
from tirx.codegen.cuda import generate
from tirx.ir import deep
from tirx.script import tirx as T
from tirx.tools.cli import main

PASSES = [P.ConvertSSA, P.CommonSubexprElim, P.Simplify, P.InferPointerTypes, P.VectorizeThreads]


def chain_text(n: int, ops: list[str] | None = None) -> str:
    """A kernel whose one store adds (or mixes ``ops`` over) ``n`` loads."""
    ops = ops or ["+"] * n
    expr = "A[0]"
    for j in range(1, n):
        expr += f" {ops[j % len(ops)]} A[{j % 64}]"
    return f"""# from tirx.script import tirx as T

@T.function
def f(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.float32)):
    with T.device_entry(1, 1, 1, 64, 1, 1):
        i: T.let[T.int32] = T.cuda.thread_idx("x")
        B[i] = {expr}
"""


def run_interp(f, A: np.ndarray) -> np.ndarray:
    B = np.zeros(64, np.float32)
    tirx.compile(f, target="interp")(A, B)
    return B


@pytest.mark.parametrize("n", [1000, 20000])
def test_deep_text_goes_through_every_stage(n):
    text = chain_text(n)
    f = tirx.loads(text)
    printed = tirx.dumps(f)
    g = tirx.loads(printed)
    assert tirx.dumps(g) == printed
    assert tirx.structural_equal(f, g)
    assert tirx.structural_hash(f) == tirx.structural_hash(g)
    assert P.verify_well_formed(f) == []
    P.VerifyWellFormed()(f)
    for p in PASSES:
        p()(f)
    A = np.arange(64, dtype=np.float32)
    want = np.float32(sum(float(A[j % 64]) for j in range(n)))
    np.testing.assert_allclose(run_interp(f, A), np.full(64, want), rtol=1e-5)
    src = generate(f)
    assert "__global__" in src.text and src.text.count("A[") >= n


def test_deep_mismatch_is_reported_with_a_short_path():
    f = tirx.loads(chain_text(3000))
    g = tirx.loads(chain_text(3000).replace("A[0] +", "A[1] +", 1))
    with pytest.raises(ValueError) as info:
        tirx.assert_structural_equal(f, g)
    first = str(info.value).splitlines()[0]
    assert "(.a)*2999" in first and len(first) < 200


@pytest.mark.parametrize("n", [300, 3000])
def test_frontend_sum_of_300_and_3000_terms_compiles_and_runs(n):
    @T.function
    def g(A: T.Tensor((4096,), T.float32), B: T.Tensor((1,), T.float32)):
        B[0] = sum(A[j] for j in range(n))

    A = np.random.default_rng(n).random(4096, dtype=np.float32)
    B = np.zeros(1, np.float32)
    tirx.compile(g, target="interp")(A, B)
    np.testing.assert_allclose(B[0], A[:n].sum(dtype=np.float64), rtol=1e-4)
    assert tirx.structural_equal(tirx.loads(tirx.dumps(g)), g)


def test_frontend_source_with_a_1000_term_expression(tmp_path):
    terms = " + ".join(f"A[{j % 64}]" for j in range(1000))
    path = tmp_path / "deep_kernel.py"
    path.write_text(
        "from tirx.script import tirx as T\n\n"
        "@T.function\n"
        "def f(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.float32)):\n"
        "    with T.device_entry(1, 1, 1, 64, 1, 1):\n"
        '        i: T.let[T.int32] = T.cuda.thread_idx("x")\n'
        f"        B[i] = {terms}\n"
    )
    spec = importlib.util.spec_from_file_location("deep_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["deep_kernel"] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop("deep_kernel", None)
    assert tirx.structural_equal(mod.f, tirx.loads(chain_text(1000)))


def test_cli_check_on_a_1000_term_file(tmp_path, capsys):
    p = tmp_path / "deep.tirx"
    p.write_text(chain_text(1000))
    assert main(["check", str(p)]) == 0
    assert main(["roundtrip", str(p)]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_pass_context_is_carried_to_the_deep_worker():
    seen: list[str] = []

    class Spy(P.PassInstrument):
        def run_after_pass(self, pass_, before, after):
            seen.append(pass_.name)

    where: list[bool] = []

    def depth(e) -> int:  # a user pass recursing over the chain: too deep for the caller
        return 1 + depth(e.a) if hasattr(e, "a") else 1

    @P.function_pass
    def needs_context(func):
        assert depth(func.body.seq[0].body.stmts[1].value) == 5000
        assert P.PassContext.current().config.get("marker") == 7
        where.append(deep.active())
        return func

    f = tirx.loads(chain_text(5000))
    with P.PassContext(instruments=[Spy()], config={"marker": 7}):
        P.Sequential([P.Simplify(), needs_context])(f)
    assert seen == ["Simplify", "needs_context", "Sequential"]
    assert where == [True]


def test_too_deep_even_for_the_worker_is_a_value_error(monkeypatch):
    monkeypatch.setattr(deep, "RECURSION_LIMIT", 5000)

    def forever(k: int) -> int:
        return forever(k + 1) + 1

    with pytest.raises(deep.NestingTooDeep) as info:
        deep.call(forever, 0)
    assert isinstance(info.value, ValueError) and not isinstance(info.value, RecursionError)


def test_work_that_must_not_repeat_runs_once():
    calls: list[int] = []

    def job() -> bool:
        calls.append(1)
        return deep.active()

    assert deep.run(job) is True and calls == [1]
    assert deep.call(job) is False and calls == [1, 1]


@settings(max_examples=15)
@given(st.integers(150, 2500), st.lists(st.sampled_from(["+", "-", "*"]), min_size=1, max_size=5))
def test_deep_chains_round_trip_and_hash_consistently(n, ops):
    f = tirx.loads(chain_text(n, ops))
    printed = tirx.dumps(f)
    g = tirx.loads(printed)
    assert tirx.structural_equal(f, g) and tirx.dumps(g) == printed
    assert tirx.structural_hash(f) == tirx.structural_hash(g)
    assert tirx.structural_equal(P.Simplify()(f), P.Simplify()(g))
