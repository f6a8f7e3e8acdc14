"""The compile pipeline: what ``tirx.compile`` runs, stage by stage, in one place (issue #30).

``tirx.compile(f, target="cuda")`` runs ``CUDA_STAGES`` in order; ``target="interp"`` (and
``tirx.interp.compile``) runs ``INTERP_STAGES``. Each stage is a small function of the
:class:`Compilation` (the state one compile carries from stage to stage):

=========================  ======  ==================================================================
stage                      output  what it does
=========================  ======  ==================================================================
``vectorize-threads``      IR      ``tirx.passes.VectorizeThreads`` (cuda only; ``vectorize=False``: no-op)
``lower-layouts``          IR      ``tirx.passes.layout``: tensors with a layout addressed flat; the
                                   offsets' arithmetic (``layout_arith``, left unwrapped by codegen)
                                   is returned with the IR, not kept in the code generator
``launch-thread-entries``  IR      ``tirx.passes.thread_launch``: TIRx's ``launch_thread`` nests as
                                   device entries
``codegen``                CUDA    ``tirx.codegen.cuda.emit``: the CUDA C++ source
``nvrtc``                  PTX     NVRTC (or the cache: ``tirx/runtime/cache.py``), one build per group
                                   of device entries with equal ``backend_config`` settings
``load``                   kernel  the ``Kernel`` / ``CompiledModule`` (loaded on a device at first use)
``interp``                 kernel  ``tirx.interp.kernel.build``: the interpreter's kernel
=========================  ======  ==================================================================

``lower-layouts`` and ``launch-thread-entries`` prepare the IR for a backend: the compiled
kernel keeps the IR from before them (``Compilation.func``). ``tirx.codegen.generate(f)``
and ``tirx.interp.compile(f)`` run those two (``tirx.passes.lowering.prepare``, the same functions)
then ``emit`` / ``build``, so generating CUDA directly gives the same text.

``tirx.compile`` remembers the IR stages and ``codegen`` per function object
(``_LOWERED``: IR is immutable): a repeated compile of the same object starts at ``nvrtc``.
``with observe(obs):`` calls ``obs.before(stage, c)`` / ``obs.after(stage, c)`` around every
stage run (``tirx compile --print-after=STAGE`` prints with it; :func:`stage_text` is a
stage's output as text).
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import attrs

__all__ = [
    "CUDA_STAGES",
    "INTERP_STAGES",
    "Compilation",
    "Stage",
    "lower_cuda",
    "observe",
    "run_cuda",
    "run_interp",
    "stage_names",
    "stage_text",
]


@attrs.define
class Compilation:
    """One compile's state. ``ir``: the IR as the last IR stage left it; ``func``: the IR the
    compiled kernel keeps (after ``vectorize-threads``, before the backends' preparation);
    ``layout_arith``: the address arithmetic ``lower-layouts`` built; ``source``: the
    ``CudaSource``; ``builds``: one tuple per NVRTC build; ``result``: the kernel. The rest are
    the compile's settings (``tirx.target._compile_cuda`` resolves them)."""

    ir: Any
    func: Any = None
    layout_arith: Any = frozenset()
    source: Any = None
    builds: list = attrs.field(factory=list)
    result: Any = None
    restrict: bool = True
    wrap_int: bool = True
    vectorize: bool = True
    cache: bool = True
    arch: str = "sm_90a"
    opts: tuple = ()
    default_config: Any = None  # the compile's backend_config["cuda"] (None: none given)
    source_name: str | None = None
    launcher: str | None = None
    names: tuple = ()
    interp_options: dict = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        if self.func is None:
            self.func = self.ir


@attrs.define(frozen=True)
class Stage:
    """A named step: ``run(c)`` updates the :class:`Compilation`; ``input`` and ``output`` are
    what it takes and makes (``ir``, ``cuda``, ``ptx``, ``kernel``)."""

    name: str
    output: str
    run: Callable[[Compilation], None]
    input: str = "ir"


# ---------------------------------------------------------------- IR stages
def _vectorize(c: Compilation) -> None:
    if c.vectorize:
        from .passes.vectorize_threads import VectorizeThreads

        c.ir = VectorizeThreads()(c.ir)  # a Pass: the PassContext's instruments see it
    c.func = c.ir


def _sequence(c: Compilation) -> None:
    from .passes.sequence import SequenceEffects  # C leaves operand order open; the interpreter does not

    c.ir = SequenceEffects()(c.ir)


def _lower_layouts(c: Compilation) -> None:
    from .passes.lowering import lower_layouts_stage  # tensors with a layout: flat accesses at its offsets

    c.ir, c.layout_arith = lower_layouts_stage(c.ir)


def _launch_thread_entries(c: Compilation) -> None:
    from .passes.lowering import launch_threads_stage  # TIRx's kernels as launch_thread nests

    c.ir = launch_threads_stage(c.ir)


# ---------------------------------------------------------------- backend stages
def _codegen(c: Compilation) -> None:
    from .codegen.cuda import emit

    c.source = emit(c.ir, restrict=c.restrict, wrap_int=c.wrap_int, layout_arith=c.layout_arith)


def _nvrtc(c: Compilation) -> None:
    """Device entries with equal settings share one NVRTC build (TIRx groups its device
    functions by target and backend_config the same way); each group's source has only its
    kernels (the same names)."""
    from .codegen.cuda import emit
    from .errors import DiagnosticError

    groups: dict[tuple, list] = {}
    for info in c.source.kernels:
        g_arch, g_opts, fmt, resolved = _resolve_config(c.default_config, info.entry, c.arch, c.opts)
        groups.setdefault((g_arch, g_opts, fmt, repr(resolved)), [resolved]).append(info)
    if c.launcher is None:
        import os

        c.launcher = os.environ.get("TIRX_LAUNCHER", "bindings")
    if c.launcher not in ("bindings", "ctypes"):
        raise ValueError(f"tirx.compile: launcher must be 'bindings' or 'ctypes', got {c.launcher!r}")
    c.builds = []
    for (g_arch, g_opts, fmt, _r), (resolved, *infos) in groups.items():
        g_src = c.source
        if len(groups) > 1:
            g_src = emit(c.ir, restrict=c.restrict, wrap_int=c.wrap_int, layout_arith=c.layout_arith,
                         select={(i.func.name, i.index) for i in infos})  # fmt: skip
        try:
            built = _build(g_src, c.names, g_arch, g_opts, c.cache, c.source_name, c.restrict, c.wrap_int,
                           c.vectorize, fmt)  # fmt: skip
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
                f"flags given: {list(g_opts[len(c.opts) :])}",
                infos[0].entry,
            ) from None
        c.builds.append((*built, g_arch, g_opts, g_src, resolved, fmt))


def _load(c: Compilation) -> None:
    from .ir import Function
    from .runtime.kernel import CompiledImage, CompiledModule

    (entry, key, hit, g_arch, g_opts, g_src, resolved, fmt), *rest = c.builds
    mod = CompiledModule(
        c.func,
        entry.source,
        entry.ptx,
        entry.cubin,
        g_arch,
        g_src.kernels,
        c.restrict,
        entry.log,
        g_opts,
        key,
        hit,
        c.launcher or "bindings",  # the nvrtc stage resolved it
        features=g_src.features,  # cooperative launches (grid_sync), NVSHMEM module registration
        config=resolved,
        image_format=fmt,
        groups=tuple(
            (CompiledImage(e.source, e.ptx, e.cubin, a, e.log, o, k, h, s2.features, r, fm), s2.kernels)
            for e, k, h, a, o, s2, r, fm in rest
        ),
    )
    if c.source.host_only:  # a module's host-only functions (TIRx's host code) run on the CPU
        from .runtime.host_function import HostOnlyFunction

        _refuse_device_ops_in_host(c.func, c.source.host_only)
        for name in c.source.host_only:
            mod.kernels[name] = HostOnlyFunction(c.func, name)
    c.result = next(iter(mod.kernels.values())) if isinstance(c.func, Function) else mod


def _refuse_device_ops_in_host(module: Any, names: tuple) -> None:
    """A device-only op (``T.cuda.*``, ``T.ptx.*``) in a host-only function is the verifier's
    located error, as for any host code the cuda target builds."""
    from .ir.verify import raise_errors, verify_well_formed

    found = [
        x
        for f in module.functions
        if f.name in names
        for x in verify_well_formed(f)
        if x.check == "device_only"
    ]
    if found:
        raise_errors(found, header="the cuda target cannot compile this host code")


def _interp(c: Compilation) -> None:
    from .interp.kernel import build

    c.result = build(c.ir, c.interp_options)


_PREPARE = (
    Stage("lower-layouts", "ir", _lower_layouts),
    Stage("launch-thread-entries", "ir", _launch_thread_entries),
)
CUDA_STAGES: tuple[Stage, ...] = (
    Stage("vectorize-threads", "ir", _vectorize),
    Stage("sequence-effects", "ir", _sequence),
    *_PREPARE,
    Stage("codegen", "cuda", _codegen),
    Stage("nvrtc", "ptx", _nvrtc, input="cuda"),
    Stage("load", "kernel", _load, input="ptx"),
)
INTERP_STAGES: tuple[Stage, ...] = (*_PREPARE, Stage("interp", "kernel", _interp))


def stage_names(target: str = "cuda") -> list[str]:
    """The stage names of a target kind's pipeline (``"cuda"`` or ``"interp"``), in order."""
    return [s.name for s in (INTERP_STAGES if target == "interp" else CUDA_STAGES)]


# ---------------------------------------------------------------- running
_OBSERVERS = threading.local()


@contextlib.contextmanager
def observe(observer: Any) -> Iterator[Any]:
    """Call ``observer.before(stage, c)`` and ``observer.after(stage, c)`` around each stage
    this thread runs inside the block."""
    stack = getattr(_OBSERVERS, "stack", None)
    if stack is None:
        stack = _OBSERVERS.stack = []
    stack.append(observer)
    try:
        yield observer
    finally:
        stack.pop()


def _run(
    stages: tuple[Stage, ...], c: Compilation, start: str | None = None, stop: str | None = None
) -> None:
    """Run ``stages`` from ``start`` through ``stop`` (names; None: the first / the last)."""
    names = [s.name for s in stages]
    lo = names.index(start) if start else 0
    hi = names.index(stop) + 1 if stop else len(stages)
    watching = list(getattr(_OBSERVERS, "stack", ()))
    for st in stages[lo:hi]:
        for o in watching:
            o.before(st, c)
        st.run(c)
        for o in watching:
            o.after(st, c)


def stage_text(c: Compilation, output: str) -> str:
    """What a stage of this ``output`` kind left in ``c``, as text."""
    if output == "ir":
        from .passes.infra import ir_text

        return ir_text(c.ir)
    if output == "cuda":
        return c.source.text
    if output == "ptx":
        return "".join(b[0].ptx or "" for b in c.builds)
    return repr(c.result) + "\n"


_LOWERED: OrderedDict = OrderedDict()
_LOWERED_MAX = 128
_LOWERED_LOCK = threading.Lock()


def lower_cuda(c: Compilation) -> Compilation:
    """The cuda pipeline's IR stages and ``codegen`` on ``c``, remembered per function object
    (IR is immutable): a repeated ``tirx.compile`` of the same object skips them."""
    f = c.ir
    key = (id(f), c.vectorize, c.restrict, c.wrap_int)
    with _LOWERED_LOCK:
        hit = _LOWERED.get(key)
        if hit is not None and hit[0] is f:
            _LOWERED.move_to_end(key)
            c.func, c.ir, c.layout_arith, c.source = hit[1:]
            return c
    _run(CUDA_STAGES, c, stop="codegen")
    with _LOWERED_LOCK:
        _LOWERED[key] = (f, c.func, c.ir, c.layout_arith, c.source)
        if len(_LOWERED) > _LOWERED_MAX:
            _LOWERED.popitem(last=False)
    return c


def run_cuda(c: Compilation) -> Any:
    """``CUDA_STAGES`` on ``c`` (the IR stages and codegen through :func:`lower_cuda`): the kernel."""
    lower_cuda(c)
    _run(CUDA_STAGES, c, start="nvrtc")
    return c.result


def run_interp(f: Any, options: dict) -> Any:
    """``INTERP_STAGES`` on ``f``: the interpreter's kernel (``tirx.compile(f, target="interp")``)."""
    from .interp.kernel import check_options

    check_options(options)
    c = Compilation(f, interp_options=options)
    _run(INTERP_STAGES, c)
    return c.result


# ---------------------------------------------------------------- the nvrtc stage's helpers
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
