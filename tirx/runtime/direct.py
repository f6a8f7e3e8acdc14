"""Calling a kernel directly with arrays: ``f(a, b)`` for a ``@T.function`` or ``@T.jit``.

The target comes from the arguments, and only when that is unambiguous: every array in
GPU memory runs the CUDA build, every array in host memory runs the interpreter (a CUDA
kernel cannot read host memory, so nothing else could run it), and ``TIRX_INTERPRET=1``
makes both run on the interpreter. Arrays on both sides, or no array at all, are a
``TypeError`` that names the parameters and points to ``tirx.compile(f, target=...)``.
Each function is compiled once per target and kept while the function lives, and no
longer: the cache holds the function weakly and the compiled kernel holds a copy of it, not
the function itself (a value that referenced its weak key would keep it alive forever), so
the specializations a ``@T.jit`` cache drops are freed with their kernels.
"""

from __future__ import annotations

import sys
import threading
import weakref
from typing import Any

from . import interpret

__all__ = ["call", "where"]

#: function -> {target: kernel}; weak keys, and no kernel references its key (see _compiled)
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()

# DLPack device types (dlpack.h): host-visible memory vs GPU memory
_DL_HOST = {1, 3}  # kDLCPU, kDLCUDAHost
_DL_GPU = {2, 13}  # kDLCUDA, kDLCUDAManaged


def where(x: Any) -> str | None:
    """``"gpu"``, ``"host"``, or None for a value that is not an array (a scalar)."""
    if x is None or isinstance(x, (bool, int, float, complex, str, bytes)):
        return None
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return "gpu" if x.is_cuda else "host"
    if hasattr(x, "__cuda_array_interface__"):
        return "gpu"
    dev = getattr(x, "__dlpack_device__", None)
    if dev is not None:
        try:
            kind = int(dev()[0])
        except Exception:
            kind = None
        if kind in _DL_GPU:
            return "gpu"
        if kind in _DL_HOST:
            return "host"
    np = sys.modules.get("numpy")
    if np is not None and isinstance(x, np.generic):
        return None  # a numpy scalar
    if hasattr(x, "__array_interface__") or hasattr(x, "__array__") or isinstance(x, (list, tuple)):
        return "host"
    return None


def _target(f: Any, args: list) -> str:
    if interpret.enabled():
        return "interp"
    names = [p.name for p in f.params]
    sides: dict[str, list[str]] = {"gpu": [], "host": []}
    for n, a in zip(names, args):
        w = where(a)
        if w is not None:
            sides[w].append(n)
    if sides["gpu"] and sides["host"]:
        raise TypeError(
            f"{f.name}(): arrays in GPU memory ({', '.join(sides['gpu'])}) and in host memory "
            f"({', '.join(sides['host'])}); move them to one side, or compile explicitly with "
            "tirx.compile(f, target=...)"
        )
    if sides["gpu"]:
        return "cuda"
    if sides["host"]:
        return "interp"
    raise TypeError(
        f"{f.name}(): no array argument tells where to run it; compile explicitly with "
        "tirx.compile(f, target='cuda' or 'interp') and call the result"
    )


def _compiled(f: Any, target: str) -> Any:
    """The kernel of ``f`` for ``target``, compiled on first use. It is compiled from a
    shallow copy of ``f`` (same fields, another object), so the entry does not keep ``f``
    alive: when ``f`` is gone the entry goes with it."""
    with _LOCK:
        k = _CACHE.get(f, {}).get(target)
    if k is not None:
        return k
    from ..target import compile as _compile

    k = _compile(f.replace(), target)
    with _LOCK:  # another thread may have compiled it meanwhile: one kernel per key
        return _CACHE.setdefault(f, {}).setdefault(target, k)


def call(f: Any, args: tuple, kwargs: dict) -> Any:
    """Bind ``args``/``kwargs`` to ``f``'s parameters, pick the target, compile once, run."""
    from tirx.surface.parser_stack import current_parser

    if current_parser() is not None:
        raise TypeError(
            f"{f.name}() is a compiled function: it cannot be called inside a kernel; "
            "write the helper with @T.inline (expanded at the call) instead"
        )
    stream = kwargs.pop("stream", None) if not any(p.name == "stream" for p in f.params) else None
    vals = f.bind_args(args, kwargs)
    k = _compiled(f, _target(f, vals))
    return k(*vals) if stream is None else k(*vals, stream=stream)
