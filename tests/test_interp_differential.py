"""Differential tests: the interpreter judges that passes and the text round trip keep a
kernel's meaning (random runnable kernels from ``tirx.testing.runnable``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tirx.testing.runnable import Runnable, runnable_kernels
from tirx.testing.semantic_fuzz import _roundtrip_available, check_runnable, run_semantic, semantic_checks

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _pass_checks():
    return [(n, f) for n, f in semantic_checks() if not n.startswith("loads")]


@SETTINGS
@given(runnable_kernels())
def test_runnable_kernels_run(r):
    out = r.run()
    assert len(out) == 4
    assert all(isinstance(a, np.ndarray) for a in out)
    # the run is deterministic and leaves the stored arguments untouched
    r.assert_same(out, r.run())


@pytest.mark.skipif(not _pass_checks(), reason="tirx.passes not available")
@SETTINGS
@given(runnable_kernels())
def test_passes_preserve_outputs(r):
    check_runnable(r, _pass_checks())


@pytest.mark.skipif(not _roundtrip_available(), reason="printer/grammar round trip not available")
@SETTINGS
@given(runnable_kernels())
def test_text_roundtrip_preserves_outputs(r):
    check_runnable(r, [(n, f) for n, f in semantic_checks() if n.startswith("loads")])


def test_strategy_covers_modes():
    from hypothesis import find

    for mode in ("device=True", "smem=True", "device=False", "dyn=True"):
        r = find(
            runnable_kernels(max_stmts=3),
            lambda r, mode=mode: mode in r.note,
            settings=settings(max_examples=2000, phases=[Phase.generate], database=None),
        )
        assert mode in r.note
        r.run()


def test_check_detects_a_meaning_change():
    from tirx.ir import Mul, const
    from tirx.ir.visitor import Mutator

    class Breaker(Mutator):  # turns every int32 add into a multiply
        def visit_Add(self, e):
            a, b = self.visit(e.a), self.visit(e.b)
            return Mul(a, b) if str(e.ty) == "int32" else e

    @settings(max_examples=30, deadline=None, database=None, phases=[Phase.generate])
    @given(st.data())
    def find(data):
        r = data.draw(runnable_kernels())
        try:
            check_runnable(r, [("breaker", Breaker().visit)])
        except AssertionError as e:
            assert "breaker" in str(e)
            raise _Found() from None

    class _Found(Exception):
        pass

    with pytest.raises(_Found):
        find()
    _ = const


def test_run_semantic_report():
    rep = run_semantic(examples=5, seed=1)
    assert rep["mode"] == "semantic" and rep["examples"] >= 1
    assert rep["ok"], rep["failure"]
    assert isinstance(Runnable, type)
