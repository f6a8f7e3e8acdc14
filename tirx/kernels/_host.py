"""Host-side helpers shared by the library's calls: argument checks that name the argument,
the device's SM count, and a cache of TMA descriptors.

A ``CUtensorMap`` encodes only a pointer, the shape, the strides, the dtype, the box and the
swizzle, so a descriptor cached under exactly those values is the descriptor a fresh encode
would give, whatever tensor now lives at that address: the cache is never stale, and a call
on tensors it has seen (the weights of a layer, a caching allocator's reused blocks) costs a
dictionary lookup instead of a driver call.
"""

from __future__ import annotations

import functools
from typing import Any

from tirx.runtime.bounded import Bounded

_MAPS: Bounded = Bounded(4096)
_ENCODERS: dict[tuple, Any] = {}  # (dtype, cols, box, swizzle) -> tirx.runtime.tma._Encoder


_NAMES: dict = {}  # torch dtype -> its name (str() of a dtype costs a microsecond a call)


def dtype_name(t: Any) -> str:
    """The IR dtype name of a torch tensor (``torch.float16`` -> ``"float16"``)."""
    n = _NAMES.get(t.dtype)
    if n is None:
        n = _NAMES[t.dtype] = str(t.dtype).removeprefix("torch.")
    return n


def check_cuda(name: str, t: Any, dtypes: tuple[str, ...], ndim: int | None = None) -> str:
    """``t`` is a CUDA torch tensor of one of ``dtypes`` (and rank ``ndim``); its dtype name.
    Errors name the argument: ``TypeError`` for what it is, ``ValueError`` for its shape."""
    try:
        import torch
    except ImportError as e:  # pragma: no cover - the library's calls take torch tensors
        raise TypeError(f"{name}: tirx.kernels calls take torch CUDA tensors (torch is not installed)") from e
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name}: expected a torch CUDA tensor, got {type(t).__name__}")
    if not t.is_cuda:
        raise TypeError(f"{name}: expected a CUDA tensor, got one on {t.device}")
    dt = dtype_name(t)
    if dt not in dtypes:
        raise TypeError(f"{name}: dtype must be one of {', '.join(dtypes)}, got {dt}")
    if ndim is not None and t.dim() != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d tensor, got shape {tuple(t.shape)}")
    return dt


@functools.cache
def sm_count(device_index: int) -> int:
    """Streaming multiprocessors of a CUDA device (the persistent kernels' CTA count)."""
    import torch

    return int(torch.cuda.get_device_properties(device_index).multi_processor_count)


def tensor_map(t: Any, rows: int, cols: int, box: tuple[int, int], dtype: str, swizzle: int = 128) -> bytes:
    """The 128-byte descriptor (by value, for a ``T.Ptr(T.uint8, "tensormap")`` parameter) of
    the row-major ``rows x cols`` matrix at ``t``'s address, tiled by ``box`` (outermost
    first), from the cache when these exact values were encoded before; else encoded by the
    one prepared driver call of its ``(dtype, cols, box, swizzle)`` class with ``rows`` set
    (a new row count, a decode step's M, costs the driver call alone)."""
    ptr = t.data_ptr()
    key = (ptr, rows, cols, box, dtype, swizzle)
    got = _MAPS.get(key)
    if got is None:
        cls = (dtype, cols, box, swizzle)
        enc = _ENCODERS.get(cls)
        if enc is None:
            from tirx.runtime.tma import TensorMapPlan, _Encoder

            enc = _ENCODERS[cls] = _Encoder(TensorMapPlan(dtype, (rows, cols), box, swizzle))
        if ptr % 16:
            raise ValueError("tensor map: the tensor's address must be 16-byte aligned")
        got = _MAPS.put(key, enc(ptr, rows))
    return got
