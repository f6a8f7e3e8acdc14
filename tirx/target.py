"""Targets and the ``tirx.compile`` dispatcher.

``tirx.compile(f, target="cuda")``: ``f`` is a Function (returns a :class:`Kernel`) or a
Module (returns a :class:`CompiledModule`). Targets: ``"cuda"`` (the arch of the current
device; ``sm_90a`` when there is no device), ``"cuda -arch=sm_90a"``, a :class:`Target`,
or ``"interp"`` (the CPU interpreter, ``tirx.interp.compile``).

CUDA options: ``restrict=True`` (``__restrict__`` on tensor pointers; aliasing arguments
are then refused at launch), ``cache=True`` (memory and disk cache), ``options=()``
(extra NVRTC flags, e.g. ``("-lineinfo",)``), ``launcher="bindings"|"ctypes"`` (how the
fast path calls ``cuLaunchKernel``: through ``cuda.bindings.driver`` or the same libcuda
symbol through ctypes; default ``$TIRX_LAUNCHER`` or ``bindings``), ``wrap_int=True``
(signed int32/int64 ``+ - * <<`` wrap around exactly as the IR and the interpreter define
them, computed in the unsigned type only where ``tirx.ir.bounds`` cannot prove the result
fits; ``False``: plain C++ operators, whose signed overflow is undefined),
``vectorize=True`` (kernels whose threads are independent and whose accesses are contiguous
across threads get V threads' work per thread with 16-byte loads and stores:
``tirx.passes.VectorizeThreads``).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

from .target_spec import Target, parse_target  # the target value lives in a leaf module

__all__ = ["Target", "compile", "parse_target"]

_LAST_TIMES: dict[str, float] = {}


def compile(f: Any, target: Any = "cuda", **options: Any):
    t = parse_target(target)
    if t.kind == "interp":
        from . import interp

        return interp.compile(f, **options)
    from .runtime import interpret

    if interpret.enabled():  # TIRX_INTERPRET=1: run "cuda" kernels on the interpreter
        return interpret.interpret(f, str(t), options)
    return compile_cuda(f, t, **options)


_LOWERED: OrderedDict = OrderedDict()
_LOWERED_MAX = 128
_LOWERED_LOCK = threading.Lock()


def _lower(f: Any, vectorize: bool, restrict: bool, wrap_int: bool) -> tuple:
    """IR passes and CUDA generation for ``f``, remembered per function object (IR is
    immutable): a repeated ``tirx.compile`` of the same object skips both."""
    from . import codegen

    key = (id(f), vectorize, restrict, wrap_int)
    with _LOWERED_LOCK:
        hit = _LOWERED.get(key)
        if hit is not None and hit[0] is f:
            _LOWERED.move_to_end(key)
            return hit[1], hit[2]
    g = f
    if vectorize:
        from .passes.vectorize_threads import VectorizeThreads

        g = VectorizeThreads()(f)
    src = codegen.generate(g, restrict=restrict, wrap_int=wrap_int)
    with _LOWERED_LOCK:
        _LOWERED[key] = (f, g, src)
        if len(_LOWERED) > _LOWERED_MAX:
            _LOWERED.popitem(last=False)
    return g, src


def compile_cuda(
    f: Any,
    t: Target,
    restrict: bool = True,
    cache: bool = True,
    options: tuple = (),
    source_name: str | None = None,
    launcher: str | None = None,
    vectorize: bool = True,
    wrap_int: bool = True,
) -> Any:
    from .ir import Function, Module
    from .runtime import cache as _cache
    from .runtime import driver as _drv
    from .runtime import nvrtc as _nvrtc
    from .runtime.kernel import CompiledModule

    if not isinstance(f, (Function, Module)):
        conv = getattr(f, "__tirx_ir__", None)
        if conv is None:
            raise TypeError(f"tirx.compile: expected a tirx Function or Module, got {type(f).__name__}")
        f = conv()
    t0 = time.perf_counter()
    arch = t.arch
    if arch is None:
        ok, _why = _drv.probe()
        arch = _drv.device_arch(_drv.current_device_index()) if ok else "sm_90a"
    opts = tuple(t.options) + tuple(options)
    names = tuple(g.name for g in (f.functions if isinstance(f, Module) else (f,)))
    key = ""
    entry = None
    hit = ""
    f, src = _lower(f, vectorize, restrict, wrap_int)
    build = _nvrtc.compile_source
    if "nvshmem" in src.features:  # relocatable code linked with NVSHMEM's device library
        from .runtime import nvshmem as _nvshmem

        opts += _nvshmem.compile_options()
        build = _nvshmem.compile_source
    cu_name = source_name or f"{names[0]}.cu"
    if cache:
        # keyed by the exact CUDA source NVRTC would compile (never by structural_hash), and a
        # hit must carry that same source: a binary is only ever served for its own code
        key = _cache.make_key(
            src.text,
            (*names, cu_name, f"restrict={restrict}", f"wrap_int={wrap_int}", f"vectorize={vectorize}"),
            arch,
            _nvrtc.toolchain_id(),
            _nvrtc.base_options(arch, opts),
        )
        entry = _cache.get(key, disk=True, source=src.text)
        hit = "hit" if entry is not None else ""
    if entry is None:
        res = build(src.text, arch, name=cu_name, options=opts, line_spans=src.line_spans)
        entry = _cache.CacheEntry(src.text, res.ptx, res.cubin, res.log, {"arch": arch, "names": list(names)})
        if cache:
            _cache.put(key, entry, disk=True)
    import os

    launcher = launcher or os.environ.get("TIRX_LAUNCHER", "bindings")
    if launcher not in ("bindings", "ctypes"):
        raise ValueError(f"tirx.compile: launcher must be 'bindings' or 'ctypes', got {launcher!r}")
    mod = CompiledModule(
        f,
        entry.source,
        entry.ptx,
        entry.cubin,
        arch,
        src.kernels,
        restrict,
        entry.log,
        opts,
        key,
        hit,
        launcher,
        features=src.features,  # cooperative launches (grid_sync), NVSHMEM module registration
    )
    _LAST_TIMES["compile_s"] = time.perf_counter() - t0
    if isinstance(f, Function):
        return next(iter(mod.kernels.values()))
    return mod
