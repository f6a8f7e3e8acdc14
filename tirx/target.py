"""Targets and the ``tirx.compile`` dispatcher.

``tirx.compile(f, target="cuda")``: ``f`` is a Function (returns a :class:`Kernel`) or a
Module (returns a :class:`CompiledModule`). Targets: ``"cuda"`` (the arch of the current
device; ``sm_90a`` when there is no device), ``"cuda -arch=sm_90a"``, a :class:`Target`,
or ``"interp"`` (the CPU interpreter, ``tirx.interp.compile``). ``"llvm"`` (TIRx's host CPU
target, ``{"kind": "llvm", ...}``) runs on the same interpreter: tirx has no LLVM backend, so
its CPU code is the interpreter's, whatever options the target names (docs/tirx_compat.md).

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
``tirx.passes.VectorizeThreads``), ``backend_config=None`` (TIRx's compile settings for every
device entry, ``{"cuda": {"arch", "compiler", "nvrtc", "nvcc", "ptxas", "target_format"}}``; an
entry's own ``T.device_entry(backend_config=...)`` overrides it key by key: see
``_resolve_config``).

A function whose host code launches several kernels (device entries one after another, or
TIRx's top-level ``T.launch_thread`` nests: ``tirx.passes.thread_launch``) compiles to a
``HostFunction`` that launches them in order; entries with different settings are built apart
(``CompiledModule.images``).
"""

from __future__ import annotations

import time
from typing import Any

from .target_spec import Target, parse_target  # the target value lives in a leaf module

__all__ = ["Target", "compile", "parse_target"]

_LAST_TIMES: dict[str, float] = {}


def compile(f: Any, target: Any = "cuda", **options: Any) -> Any:
    """``tirx.compile`` (the facade's overloads say what each target and input give)."""
    from .runtime.none_params import strip_none_params, wrap_none_params
    from .tir_pipelines import apply_tir_pipeline

    # TIRx's tvm.compile(..., tir_pipeline=name) / tvm.tirx.compile(..., pipeline=name): a
    # registered pipeline's passes run first (tirx.tir_pipelines); "default" / "tirx" add none
    pipeline = options.pop("pipeline", None)
    tir_pipeline = options.pop("tir_pipeline", None)
    if pipeline is not None and tir_pipeline is not None and pipeline != tir_pipeline:
        raise ValueError(f"tirx.compile: pipeline={pipeline!r} and tir_pipeline={tir_pipeline!r} disagree")
    t = parse_target(target)
    f = apply_tir_pipeline(f, pipeline if pipeline is not None else tir_pipeline, t)
    f, full = strip_none_params(f)  # TIRx's ``Bias: T.NoneType()`` parameters take None, on the host
    if t.kind in ("interp", "llvm"):
        from .pipeline import run_interp

        return wrap_none_params(run_interp(f, options), full)
    from .runtime import interpret

    if interpret.enabled():  # TIRX_INTERPRET=1: run "cuda" kernels on the interpreter
        return wrap_none_params(interpret.interpret(f, str(t), options), full)
    return wrap_none_params(compile_cuda(f, t, **options), full)


def _lower(f: Any, vectorize: bool, restrict: bool, wrap_int: bool) -> tuple:
    """``(IR the kernel keeps, CudaSource)``: the cuda pipeline up to ``codegen``
    (``tirx.pipeline.lower_cuda``, remembered per function object)."""
    from .pipeline import Compilation, lower_cuda

    c = lower_cuda(Compilation(f, vectorize=vectorize, restrict=restrict, wrap_int=wrap_int))
    return c.func, c.source


def compile_cuda(f: Any, t: Target, **kw: Any) -> Any:
    """``_compile_cuda``, with a device-only op in host code (which both front ends load, as
    TIRx does) reported where it is: when the host side cannot be built, the verifier's
    ``device_only`` findings are the located error (checked only then: a cache hit pays nothing)."""
    from .errors import DiagnosticError

    try:
        return _compile_cuda(f, t, **kw)
    except (ValueError, DiagnosticError) as e:
        from .ir import Function, Module
        from .ir.verify import raise_errors, verify_well_formed

        if not isinstance(f, (Function, Module)):
            raise
        dev = [x for x in verify_well_formed(f) if x.check == "device_only"]
        if not dev:
            raise
        try:
            raise_errors(dev, header="the cuda target cannot compile this host code")
        except DiagnosticError as located:
            raise located from e
        raise  # pragma: no cover - raise_errors always raises


def _compile_cuda(
    f: Any,
    t: Target,
    restrict: bool = True,
    cache: bool = True,
    options: tuple = (),
    source_name: str | None = None,
    launcher: str | None = None,
    vectorize: bool = True,
    wrap_int: bool = True,
    backend_config: Any = None,
) -> Any:
    from .ir import Function, Module
    from .pipeline import Compilation, run_cuda
    from .runtime import driver as _drv
    from .target_spec import check_backend_config

    if not isinstance(f, (Function, Module)):
        conv = getattr(f, "__tirx_ir__", None)
        if conv is None:
            raise TypeError(f"tirx.compile: expected a tirx Function or Module, got {type(f).__name__}")
        f = conv()
    t0 = time.perf_counter()
    default = None
    if backend_config is not None:  # TIRx's tvm.compile(..., backend_config={"cuda": {...}})
        default = check_backend_config(backend_config).get("cuda", {})
        if t.arch and default.get("arch") and default["arch"] != t.arch:
            raise ValueError(
                f"tirx.compile: backend_config arch {default['arch']} conflicts with the target's {t.arch}"
            )
    arch = t.arch or (default or {}).get("arch")
    if arch is None:
        ok, _why = _drv.probe()
        arch = _drv.device_arch(_drv.current_device_index()) if ok else "sm_90a"
    opts = tuple(t.options) + tuple(options)
    names = tuple(g.name for g in (f.functions if isinstance(f, Module) else (f,)))
    c = Compilation(f, restrict=restrict, wrap_int=wrap_int, vectorize=vectorize, cache=cache, arch=arch, opts=opts,
                    default_config=default, source_name=source_name, launcher=launcher, names=names)  # fmt: skip
    k = run_cuda(c)  # tirx/pipeline.py: the stages, in order
    _LAST_TIMES["compile_s"] = time.perf_counter() - t0
    return k
