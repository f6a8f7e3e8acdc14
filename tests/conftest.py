"""Test-wide settings: hypothesis never fails on wall-clock deadlines or slow data
generation (CI machines are shared and slow; speed is measured in tools/bench, never in
tests); the fixtures several files share."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "tirx",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("tirx")


@pytest.fixture
def disk_cache(monkeypatch, tmp_path):
    """A fresh, empty disk cache directory (not yet made) for the test, turned on, with the
    memory cache and the once-per-process warnings forgotten before and after."""
    from tirx import fileio
    from tirx.runtime import cache

    d = tmp_path / "cache"
    monkeypatch.setenv("TIRX_CACHE_DIR", str(d))
    monkeypatch.delenv("TIRX_DISABLE_DISK_CACHE", raising=False)
    monkeypatch.delenv("TIRX_READY_CACHE", raising=False)
    cache.clear_memory()
    fileio.reset_state()
    yield d
    cache.clear_memory()
    fileio.reset_state()
