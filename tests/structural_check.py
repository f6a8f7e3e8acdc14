"""Shared assertions for the structural-equality tests: every comparison runs both the fast
generated comparer and the path-tracking one behind ``assert_structural_equal`` (they must
agree), both ways round, and equal results must hash alike."""

from __future__ import annotations

import pytest

import tirx
from tirx.ir import structural as S


def eq_both(a, b, map_free_vars=False) -> bool:
    """The fast comparer, checked against the path-tracking one (they must agree)."""
    fast = tirx.structural_equal(a, b, map_free_vars)
    ref = S._top_equal(a, b, S._Equal(map_free_vars))
    assert fast == ref, (fast, ref)
    return fast


def same(a, b, map_free_vars=False) -> None:
    assert eq_both(a, b, map_free_vars) and eq_both(b, a, map_free_vars)
    assert tirx.structural_hash(a, map_free_vars) == tirx.structural_hash(b, map_free_vars)


def differ(a, b, map_free_vars=False) -> None:
    assert not eq_both(a, b, map_free_vars) and not eq_both(b, a, map_free_vars)
    with pytest.raises(ValueError, match="structural mismatch"):
        tirx.assert_structural_equal(a, b, map_free_vars)
