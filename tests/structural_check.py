"""Shared assertions for the structural-equality tests: every comparison runs both plain and
explaining (the run behind ``assert_structural_equal``, which records the mismatch's path;
they must agree), both ways round, and equal results must hash alike."""

from __future__ import annotations

import pytest

import tirx
from tirx.ir import structural as S


def eq_both(a, b, map_free_vars=False) -> bool:
    """The comparer, checked against its explaining run (the one behind
    ``assert_structural_equal``): they agree, and a mismatch always has a path."""
    fast = tirx.structural_equal(a, b, map_free_vars)
    ref, path = S._deep(S._mismatch_path, a, b, bool(map_free_vars))
    assert fast == ref, (fast, ref)
    assert fast or path, "a mismatch without an access path"
    return fast


def same(a, b, map_free_vars=False) -> None:
    assert eq_both(a, b, map_free_vars) and eq_both(b, a, map_free_vars)
    assert tirx.structural_hash(a, map_free_vars) == tirx.structural_hash(b, map_free_vars)


def differ(a, b, map_free_vars=False) -> None:
    assert not eq_both(a, b, map_free_vars) and not eq_both(b, a, map_free_vars)
    with pytest.raises(ValueError, match="structural mismatch"):
        tirx.assert_structural_equal(a, b, map_free_vars)
