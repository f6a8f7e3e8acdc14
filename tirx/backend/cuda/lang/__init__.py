"""CUDA kernel helper classes for tirx script (TIRx's ``backend.cuda.lang``).

``SMEMPool`` (a bump allocator over dynamic shared memory), ``PipelineState``, ``MBarrier``,
``TMABar``, ``TCGen05Bar``, ``Pipeline`` and the tile schedulers are used inside kernels::

    from tirx.backend.cuda.lang import SMEMPool
    from tirx.backend.cuda.lang.pipeline import MBarrier, PipelineState, TMABar

Each name is loaded from its submodule on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

#: exported name -> the submodule defining it
_WHERE = {
    "SMEMPool": "alloc_pool",
    "PipelineState": "pipeline",
    "MBarrier": "pipeline",
    "TMABar": "pipeline",
    "TCGen05Bar": "pipeline",
    "Pipeline": "pipeline",
    "BaseTileScheduler": "tile_scheduler",
    "ClusterPersistentScheduler2D": "tile_scheduler",
    "FlashAttentionLinearScheduler": "tile_scheduler",
    "FlashAttentionLPTScheduler": "tile_scheduler",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    sub = _WHERE.get(name)
    if sub is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{sub}"), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
