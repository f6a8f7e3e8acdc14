"""The three text invariants, on generated IR and on every TIRx-printed compat text.

1. ``structural_equal(loads(dumps(x)), x)``
2. ``dumps(loads(dumps(x))) == dumps(x)``
3. ``structural_equal(a, b)`` implies ``structural_hash(a) == structural_hash(b)``

Long runs go through ``tirx fuzz --examples N --seed S``.
"""

from __future__ import annotations

import glob
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx

strategies = pytest.importorskip("tirx.testing.strategies")

COMPAT = sorted(glob.glob("/work/shared/compat/tirx-0.1.0a4/*.tirx")) or sorted(
    glob.glob(
        os.path.join(os.path.dirname(__file__), "..", "..", "shared", "compat", "tirx-0.1.0a4", "*.tirx")
    )
)

FAST = settings(
    max_examples=int(os.environ.get("TIRX_ROUNDTRIP_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)


def check_invariants(x) -> None:
    d = tirx.dumps(x)
    y = tirx.loads(d)
    if not tirx.structural_equal(y, x):
        tirx.assert_structural_equal(y, x)  # raises with the first mismatch path and both texts
    assert tirx.dumps(y) == d
    assert tirx.structural_hash(y) == tirx.structural_hash(x)


@FAST
@given(strategies.functions())
def test_generated_functions(f):
    check_invariants(f)


@FAST
@given(strategies.modules())
def test_generated_modules(m):
    check_invariants(m)


@settings(FAST, max_examples=25)
@given(st.data())
def test_equal_implies_equal_hash_across_loads(data):
    f = data.draw(strategies.functions())
    d = tirx.dumps(f)
    a, b = tirx.loads(d), tirx.loads(d)  # two independent loads of one text
    assert a is not b
    assert tirx.structural_equal(a, b)
    assert tirx.structural_hash(a) == tirx.structural_hash(b)


@pytest.mark.parametrize("path", COMPAT, ids=[os.path.basename(p) for p in COMPAT])
def test_compat_invariants(path):
    x = tirx.load(path)
    check_invariants(x)
    # the CLI's checker agrees
    from tirx.tools.cli import roundtrip_problems

    assert roundtrip_problems(x) == []


def test_spans_do_not_matter():
    text = tirx.dumps(tirx.load(COMPAT[0]))
    a = tirx.loads(text, source_name="a.tirx")
    b = tirx.loads("\n\n" + text.replace("\n", "\n  # moved\n", 3), source_name="b.tirx")
    assert tirx.structural_equal(a, b)
    assert tirx.structural_hash(a) == tirx.structural_hash(b)
