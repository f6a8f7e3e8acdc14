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

import threading
import time
from collections import OrderedDict
from typing import Any

from .target_spec import Target, parse_target  # the target value lives in a leaf module

__all__ = ["Target", "compile", "parse_target"]

_LAST_TIMES: dict[str, float] = {}


def compile(f: Any, target: Any = "cuda", **options: Any) -> Any:
    """``tirx.compile`` (the facade's overloads say what each target and input give)."""
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


def _entry_error(msg: str, entry: Any) -> Exception:
    from .errors import DiagnosticError

    span = getattr(entry, "span", None)
    if span is None:
        return DiagnosticError(msg)
    return DiagnosticError(f"{getattr(span, 'innermost', span)}: error: {msg}", span=span)


def _resolve_config(default: dict | None, entry: Any, base_arch: str, base_opts: tuple) -> tuple:
    """``(arch, NVRTC options, image format, resolved config or None)`` for one device entry:
    TIRx's ``backend_config`` layering (the compile's ``backend_config=``, then the entry's
    ``attrs["backend_config"]``; an entry's ``arch`` wins over the target's). Without either
    config: the target's arch and options, as always.

    What tirx honours: ``arch``; the flag list of ``compiler`` (``nvrtc``, or ``nvcc``: NVRTC is
    nvcc's device compiler as a library and takes the same device flags; one it does not take is
    a located error naming the setting); ``ptxas`` (each as ``--ptxas-options=``);
    ``target_format`` ``ptx`` (the driver JIT-compiles the PTX at load) or ``cubin``/``fatbin``
    (the cubin for the arch, which a fatbin holds). TIRx's default flags when the config omits
    them (``--use_fast_math``, verbose ptxas) are not tirx's: it never adds fast math itself."""
    from .target_spec import parse_backend_config

    raw = entry.attrs.get("backend_config")
    if default is None and raw is None:
        return base_arch, base_opts, "cubin", None
    local: dict = {}
    if raw is not None:
        try:
            local = parse_backend_config(raw).get("cuda", {})
        except (TypeError, ValueError) as e:
            raise _entry_error(f"device entry backend_config: {e}", entry) from None
    cfg = {**(default or {}), **local}
    compiler = cfg.get("compiler", "nvrtc")
    flags = list(cfg.get(compiler, []))
    ptxas = list(cfg.get("ptxas", []))
    fmt = cfg.get("target_format") or "cubin"
    arch = cfg.get("arch", base_arch)
    resolved = {
        "arch": arch,
        "compiler": compiler,
        "nvcc": list(cfg.get("nvcc", [])),
        "nvrtc": list(cfg.get("nvrtc", [])),
        "ptxas": ptxas,
        "target_format": fmt,
    }
    opts = (*base_opts, *flags, *(f"--ptxas-options={p}" for p in ptxas))
    return arch, opts, "ptx" if fmt == "ptx" else "cubin", resolved


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
    from . import codegen
    from .errors import DiagnosticError
    from .ir import Function, Module
    from .runtime import driver as _drv
    from .runtime.kernel import CompiledImage, CompiledModule
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
    f, src = _lower(f, vectorize, restrict, wrap_int)
    # compilation groups: device entries with equal settings share one NVRTC build (TIRx groups
    # its device functions by target and backend_config the same way)
    groups: dict[tuple, list] = {}
    for info in src.kernels:
        g_arch, g_opts, fmt, resolved = _resolve_config(default, info.entry, arch, opts)
        groups.setdefault((g_arch, g_opts, fmt, repr(resolved)), [resolved]).append(info)
    if launcher is None:
        import os

        launcher = os.environ.get("TIRX_LAUNCHER", "bindings")
    if launcher not in ("bindings", "ctypes"):
        raise ValueError(f"tirx.compile: launcher must be 'bindings' or 'ctypes', got {launcher!r}")
    built = []
    for (g_arch, g_opts, fmt, _r), (resolved, *infos) in groups.items():
        g_src = src
        if len(groups) > 1:  # this group's kernels only (the same names)
            g_src = codegen.generate(f, restrict=restrict, wrap_int=wrap_int,
                                     select={(i.func.name, i.index) for i in infos})  # fmt: skip
        try:
            built.append((*_build(g_src, names, g_arch, g_opts, cache, source_name, restrict, wrap_int, vectorize, fmt),
                          g_arch, g_opts, g_src, resolved, fmt))  # fmt: skip
        except DiagnosticError as e:
            # a flag NVRTC or ptxas refuses: "nvrtc: error: unrecognized option ...", "ptxas fatal : ..."
            bad = [
                ln.strip()
                for ln in str(e).splitlines()
                if ln.strip().startswith(("nvrtc: error:", "ptxas fatal"))
            ]
            if resolved is None or not bad:
                raise
            lists = [k for k in (resolved["compiler"], "ptxas") if any(x in bad[0] for x in resolved[k])]
            if not lists and bad[0].startswith("ptxas"):
                lists = ["ptxas"]
            where = ", ".join(f"cuda.{k}" for k in lists or (resolved["compiler"], "ptxas"))
            raise _entry_error(
                f"backend_config {where}: NVRTC (tirx's CUDA compiler) refuses a flag ({bad[0]}); "
                f"flags given: {list(g_opts[len(opts) :])}",
                infos[0].entry,
            ) from None
    (entry, key, hit, g_arch, g_opts, g_src, resolved, fmt), *rest = built
    mod = CompiledModule(
        f,
        entry.source,
        entry.ptx,
        entry.cubin,
        g_arch,
        g_src.kernels,
        restrict,
        entry.log,
        g_opts,
        key,
        hit,
        launcher,
        features=g_src.features,  # cooperative launches (grid_sync), NVSHMEM module registration
        config=resolved,
        image_format=fmt,
        groups=tuple(
            (CompiledImage(e.source, e.ptx, e.cubin, a, e.log, o, k, h, s2.features, r, fm), s2.kernels)
            for e, k, h, a, o, s2, r, fm in rest
        ),
    )
    _LAST_TIMES["compile_s"] = time.perf_counter() - t0
    if isinstance(f, Function):
        return next(iter(mod.kernels.values()))
    return mod


def _build(src: Any, names: tuple, arch: str, opts: tuple, cache: bool, source_name: str | None, restrict: bool,
           wrap_int: bool, vectorize: bool, fmt: str) -> tuple:  # fmt: skip
    """NVRTC (or the cache) for one source: ``(cache entry, key, "hit" or "")``."""
    from .runtime import cache as _cache
    from .runtime import nvrtc as _nvrtc

    build = _nvrtc.compile_source
    if "nvshmem" in src.features:  # relocatable code linked with NVSHMEM's device library
        from .runtime import nvshmem as _nvshmem

        opts += _nvshmem.compile_options()
        build = _nvshmem.compile_source
    cu_name = source_name or f"{names[0]}.cu"
    key = ""
    entry = None
    hit = ""
    if cache:
        # keyed by the exact CUDA source NVRTC would compile (never by structural_hash), and a
        # hit must carry that same source: a binary is only ever served for its own code
        key = _cache.make_key(
            src.text,
            (
                *names,
                cu_name,
                f"restrict={restrict}",
                f"wrap_int={wrap_int}",
                f"vectorize={vectorize}",
                *((f"format={fmt}",) if fmt != "cubin" else ()),
            ),
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
    return entry, key, hit
