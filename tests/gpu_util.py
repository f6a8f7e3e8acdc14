"""The preamble of the GPU test modules: skip the module cleanly (CI has no GPU) unless
cuda-python finds a device and torch sees it; returns torch."""

from __future__ import annotations

from typing import Any

import pytest


def require_gpu() -> Any:
    pytest.importorskip("cuda.bindings.driver")
    from tirx.runtime import driver as drv

    ok, why = drv.probe()
    if not ok:
        pytest.skip(f"no CUDA device: {why}", allow_module_level=True)
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():  # pragma: no cover
        pytest.skip("torch sees no CUDA device", allow_module_level=True)
    return torch
