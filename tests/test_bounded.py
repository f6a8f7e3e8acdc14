"""``tirx.runtime.bounded.Bounded``: the host memos' dict of at most ``bound`` entries."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tirx.runtime.bounded import Bounded


@given(bound=st.integers(1, 6), keys=st.lists(st.integers(0, 9), max_size=40))
@settings(max_examples=200, deadline=None)
def test_keeps_the_newest_entries_up_to_its_bound(bound, keys):
    """Against a model: at most ``bound`` entries, the oldest first inserted dropped first, a
    key put again keeps its place and takes the new value without dropping anything."""
    b, model = Bounded(bound), []
    for i, k in enumerate(keys):
        assert b.put(k, i) == i
        if k not in model:
            if len(model) >= bound:
                model.pop(0)
            model.append(k)
        assert list(b) == model and b[k] == i and len(b) <= bound


def test_refuses_a_bound_that_is_no_positive_int():
    for bad in (0, -1, 2.0, "4", None):
        with pytest.raises(ValueError, match=r"^bound: expected a positive int"):
            Bounded(bad)
