"""The ``pragma_unroll_factor`` loop annotation (``tirx.ir.stmt.UNROLL_FACTOR``): ``#pragma
unroll N`` in the CUDA, kept through print / parse, no effect on meaning (interpreter), and a
located refusal of a value that is not a positive int."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
from tirx.codegen import generate
from tirx.ir.stmt import UNROLL_FACTOR
from tirx.script import tirx as T


def _kernel(factor, unrolled=False):
    @T.function
    def k(A: T.Tensor((16,), T.float32), O: T.Tensor((16,), T.float32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        acc = T.alloc_local((1,), "float32")
        acc[0] = T.float32(0)
        for i in T.serial(16, annotations={"pragma_unroll_factor": factor}):
            acc[0] = acc[0] + A[i]
            O[i] = acc[0]

    if unrolled:  # the same loop as an unrolled one, through the text form
        return tirx.loads(tirx.dumps(k).replace("T.serial(", "T.unroll("))
    return k


def test_key_is_the_documented_name():
    assert UNROLL_FACTOR == "pragma_unroll_factor"


def _pragmas(f) -> list[str]:
    """The pragma lines of ``f``'s CUDA; asserts the one before the loop is one of them."""
    lines = generate(f).text.splitlines()
    at = next(n for n, line in enumerate(lines) if line.strip().startswith("for (int i = 0; i < 16"))
    assert lines[at - 1].strip().startswith("#pragma unroll")
    return [line.strip() for line in lines if "#pragma unroll" in line]


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 64), st.booleans())
def test_pragma_emitted_round_trips_and_keeps_meaning(factor, unrolled):
    # the factor wins over an unrolled loop's plain `#pragma unroll`; the text form (where the
    # value is parsed back) gives the same CUDA
    f = _kernel(factor, unrolled)
    assert _pragmas(f) == [f"#pragma unroll {factor}"]
    again = tirx.loads(tirx.dumps(f))
    tirx.assert_structural_equal(f, again)
    assert _pragmas(again) == [f"#pragma unroll {factor}"]
    a = np.arange(16, dtype=np.float32)
    o = np.zeros(16, dtype=np.float32)
    tirx.compile(again, target="interp")(a, o)
    np.testing.assert_allclose(o, np.cumsum(a))


@pytest.mark.parametrize("bad", [0, -2, True, "4", 1.5])
def test_bad_factor_is_refused_with_a_location(bad):
    with pytest.raises(tirx.DiagnosticError) as e:
        generate(_kernel(bad))
    msg = str(e.value)
    assert "pragma_unroll_factor" in msg and "positive int" in msg
    assert "test_unroll_factor.py:" in msg
