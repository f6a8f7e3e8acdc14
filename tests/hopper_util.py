"""The shared preamble of the Hopper kernel tests (test_hopper*.py): the target they compile
for, and a fresh compile cache per test (a kernel is compiled, never served from another test's
disk cache). ``examples/`` is importable through pytest's ``pythonpath`` (pyproject.toml)."""

from __future__ import annotations

import pytest

ARCH = "cuda -arch=sm_90a"


@pytest.fixture(autouse=True)
def no_disk_cache(monkeypatch, tmp_path):
    """Autouse in every module that imports it."""
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
