"""tirx's kernel library: fast GPU kernels written in tirx script, called on torch CUDA tensors.

    from tirx.kernels import matmul, linear, scaled_matmul, attention, attention_varlen, decode_attention, softmax, rms_norm

Each call checks its arguments (errors name the argument), compiles its kernel once per dtype
and tile set (cached in memory and in tirx's disk cache) and launches it on the current torch
stream. The kernels' scripts live in ``tirx/kernels/hopper/`` and are the documentation of how
each is done (docs/kernels.md). They need a Hopper GPU (sm_90a); importing this package needs
neither torch nor a GPU.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "attention",
    "attention_varlen",
    "decode_attention",
    "linear",
    "matmul",
    "rms_norm",
    "scaled_matmul",
    "softmax",
]

_WHERE = {
    "matmul": "tirx.kernels.gemm",
    "linear": "tirx.kernels.gemm",
    "scaled_matmul": "tirx.kernels.gemm",
    "attention": "tirx.kernels.attn",
    "attention_varlen": "tirx.kernels.attn",
    "decode_attention": "tirx.kernels.decode",
    "softmax": "tirx.kernels.rows",
    "rms_norm": "tirx.kernels.rows",
}


def __getattr__(name: str) -> Any:
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module 'tirx.kernels' has no attribute {name!r}")
    import importlib

    value = globals()[name] = getattr(importlib.import_module(mod), name)  # found once, not per call
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
