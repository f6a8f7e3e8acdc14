"""Host-side helpers shared by the library's calls: argument checks that name the argument,
arrays of other libraries taken as torch views (``takes_arrays``), the device's SM count, and a
cache of TMA descriptors.

A ``CUtensorMap`` encodes only a pointer, the shape, the strides, the dtype, the box and the
swizzle, so a descriptor cached under exactly those values is the descriptor a fresh encode
would give, whatever tensor now lives at that address: the cache is never stale, and a call
on tensors it has seen (the weights of a layer, a caching allocator's reused blocks) costs a
dictionary lookup instead of a driver call.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from typing import Any

from tirx.runtime.bounded import Bounded

_MAPS: Bounded = Bounded(4096)
_ENCODERS: dict[tuple, Any] = {}  # (dtype, cols, box, swizzle) -> tirx.runtime.tma._Encoder
_TEMPLATES: dict[tuple, Any] = {}  # (device, cols, box, dtype, swizzle) -> (16,) uint64 tensor
_PER_STREAM: dict[tuple, Any] = {}  # (device, raw stream, what) -> a device buffer


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


def torch_view(name: str, x: Any) -> Any:
    """``x`` as a torch tensor: itself, or a view (no copy) of a DLPack array (``__dlpack__``:
    CuPy, JAX, ...) or of a CUDA-array-interface one (Numba, ...). Anything else is returned as
    it is, for the call's checks to name."""
    import torch

    if x is None or isinstance(x, torch.Tensor):
        return x
    try:
        if hasattr(x, "__dlpack__"):
            return torch.from_dlpack(x)
        if hasattr(x, "__cuda_array_interface__"):
            return torch.as_tensor(x, device="cuda")
    except Exception as e:  # a producer torch cannot take (its dtype, its device, ...)
        raise TypeError(f"{name}: cannot view this {type(x).__name__} as a torch tensor: {e}") from e
    return x


def _like(result: Any, kind: Any) -> Any:
    """``result`` (a torch tensor) as the array kind ``kind`` came as: CuPy through DLPack (no
    copy); other kinds stay torch tensors."""
    mod = type(kind).__module__.partition(".")[0]
    if mod == "cupy":
        import cupy

        return cupy.from_dlpack(result)
    return result


def takes_arrays(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A library call that takes, for its parameters ``names``, any DLPack or CUDA-array-interface
    array besides torch tensors: such arguments are viewed as torch tensors without a copy and
    the result comes back as the first one's kind (a CuPy array for CuPy inputs, else a torch
    tensor); an ``out`` given as such an array is written through its view and returned as it
    was given. Torch arguments pass straight through (an ``isinstance`` each)."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        params = list(inspect.signature(fn).parameters)
        pos = tuple(params.index(n) for n in names if n in params)
        keyed = frozenset(names)

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            T = getattr(sys.modules.get("torch") or _import_torch(), "Tensor", None)
            if T is None:  # no torch: the call's own checks say so
                return fn(*args, **kwargs)
            n = len(args)
            for i in pos:
                if i < n and not isinstance(args[i], T) and args[i] is not None:
                    break
            else:
                if not kwargs or keyed.isdisjoint(kwargs):
                    return fn(*args, **kwargs)  # all torch (or left out): the common call
                for k in keyed.intersection(kwargs):
                    if not isinstance(kwargs[k], T) and kwargs[k] is not None:
                        break
                else:
                    return fn(*args, **kwargs)
            new, kw = list(args), dict(kwargs)
            first = None  # the first argument that is not a torch tensor: the result's kind
            for i in pos:
                if i < n and new[i] is not None and not isinstance(new[i], T):
                    first = new[i] if first is None else first
                    new[i] = torch_view(params[i], new[i])
            for k in names:
                if kw.get(k) is not None and not isinstance(kw[k], T):
                    first = kw[k] if first is None else first
                    kw[k] = torch_view(k, kw[k])
            res = fn(*new, **kw)
            out = kwargs.get("out")
            if out is not None and not isinstance(out, T):
                return out  # written through its view
            return _like(res, first) if first is not None else res

        return call

    return deco


def _import_torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch


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


def map_template(t: Any, rows: int, cols: int, box: tuple[int, int], dtype: str, swizzle: int = 128) -> Any:
    """A descriptor of the row-major ``(rows, cols)`` class with this box and swizzle, as a
    ``(16,)`` uint64 tensor on ``t``'s device, for kernels that write their own descriptors from
    it with another address and row count (``matmul_sm90``'s ``ROWS_ON_DEVICE``): encoded once
    a class (from ``t``), copied to the device once, then shared by every tensor of the class."""
    key = (t.device.index, cols, box, dtype, swizzle)
    got = _TEMPLATES.get(key)
    if got is None:
        from tirx.runtime import tma

        got = _TEMPLATES[key] = tma.words_on_device(tensor_map(t, rows, cols, box, dtype, swizzle), t.device)
    return got


def per_stream(index: int, what: str, make: Callable[[Any], Any], stream: int | None = None) -> Any:
    """A device buffer of device ``index`` for the launches on one stream (``stream``: a raw
    handle; None: the device's current stream), built by ``make(device)`` the first time. For
    kernels whose launches share scratch memory: launches on one stream run one after another,
    launches on two may run at once, so each stream has its own. (A stream destroyed while its
    work still runs, its handle reused by a new one, would share it: the caller's to avoid.)"""
    import torch

    if stream is None:
        stream = torch._C._cuda_getCurrentRawStream(index)
    key = (index, int(stream), what)
    got = _PER_STREAM.get(key)
    if got is None:
        got = _PER_STREAM[key] = make(torch.device("cuda", index))
    return got
