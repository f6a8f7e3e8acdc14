"""The vendored compat sample is the one in ../shared (when that is present)."""

from __future__ import annotations

import pytest
from compat_dir import SHARED, VENDORED


@pytest.mark.skipif(not SHARED.is_dir(), reason="no ../shared checkout beside the repo")
def test_compat_sample_matches_shared():
    names = sorted(p.name for p in SHARED.iterdir() if p.is_file())
    assert names == sorted(p.name for p in VENDORED.iterdir())
    for n in names:
        assert (SHARED / n).read_bytes() == (VENDORED / n).read_bytes(), n
