"""Test-wide settings: hypothesis never fails on wall-clock deadlines or slow data
generation (CI machines are shared and slow; speed is measured in tools/bench, never in
tests)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "tirx",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("tirx")
