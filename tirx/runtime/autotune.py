"""Autotuning of ``@T.jit`` constexpr parameters: ``@T.autotune`` (issue #32), as Triton's
``triton.autotune``::

    @T.autotune(configs=[{"BLOCK": 128, "STAGES": 2}, {"BLOCK": 256, "STAGES": 4}], key=["N"])
    @T.jit
    def kernel(A, B, *, N: T.constexpr, BLOCK: T.constexpr = 64, STAGES: T.constexpr = 1): ...

    kernel(a, b, N=4096)  # the first call with N=4096 tunes, then every call runs the winner

On the first call with new values of the ``key`` arguments (constexprs or ordinary arguments;
an array stands for its shape and dtype), every config (its constexpr values merged with the
call's) is specialized and compiled, timed with ``tirx.testing.do_bench`` (CUDA events on a
GPU, ``time.perf_counter`` for the interpreter) and the fastest is kept for that key: in
memory, and on disk next to the compile cache (``$TIRX_CACHE_DIR/autotune/``: one JSON file
per function source, key values, device and config list), so a later process with the same
key reads the winner and times nothing. A config that fails to specialize (a
``T.static_assert``), to compile or to run is dropped with its reason
(``tuner.failures[key]``); when every config fails, :class:`AutotuneError` lists each reason.

CUDA candidates compile in worker processes (``concurrent.futures.ProcessPoolExecutor``,
forked where the platform can): NVRTC's work, most of a compile, runs in parallel; the
workers hand their binaries back and the tuner's own compile of each candidate is then a
compile-cache hit. Interpreter kernels compile in the process (their compiled form is Python
closures, which cannot travel between processes).

The decorator is ``T.autotune`` (``tirx.script.decorators.autotune``, which builds an
:class:`Autotuner` through the hook ``import tirx`` registers); docs/autotune.md.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import math
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..script.decorators import JitFunction, specialization_key

__all__ = ["WORKERS_ENV", "AutotuneError", "Autotuner", "build_candidates", "device_name", "precompile"]

#: worker processes for CUDA compiles (default: the CPU count; 0 or 1 compile in the process)
WORKERS_ENV = "TIRX_AUTOTUNE_WORKERS"
_FORMAT = 1  # of the disk entries (a change makes every old entry a miss)
_MAX_ENTRY_BYTES = 4 << 20
_REASON_LINES = 12  # lines of a failure's message kept


class AutotuneError(RuntimeError):
    """Every config failed (or ``prune_configs_by`` left none); ``failures`` holds
    ``(config, reason)`` pairs and the message lists each."""

    def __init__(self, message: str, failures: Sequence[tuple[dict, str]] = ()):
        self.failures = list(failures)
        lines = [message]
        for cfg, why in self.failures:
            text = why.replace("\n", "\n      ")
            lines.append(f"  - {cfg}: {text}")
        super().__init__("\n".join(lines))


# ---------------------------------------------------------------------------- values
def _key_part(v: Any) -> Any:
    """A hashable, printable stand-in for a key value: numbers, strings, None and bools as
    they are; an array as ``("array", shape, dtype)``; tuples and lists element by element."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    np = sys.modules.get("numpy")
    if np is not None and isinstance(v, np.generic):
        return v.item()
    shape, dtype = getattr(v, "shape", None), getattr(v, "dtype", None)
    if shape is not None and dtype is not None:
        return ("array", tuple(int(s) for s in shape), str(dtype))
    if isinstance(v, (tuple, list)):
        return tuple(_key_part(x) for x in v)
    try:
        hash(v)
    except TypeError:
        return ("repr", type(v).__qualname__, repr(v))
    return v


def _reason(e: BaseException) -> str:
    """The first lines of an exception's message (a located DiagnosticError keeps its
    location and caret lines)."""
    from ..errors import DiagnosticError

    text = str(e).strip()
    if not isinstance(e, DiagnosticError) or not text:
        text = f"{type(e).__name__}: {text}" if text else type(e).__name__
    lines = text.splitlines()
    if len(lines) > _REASON_LINES:
        lines = [*lines[:_REASON_LINES], f"... ({len(lines) - _REASON_LINES} more lines)"]
    return "\n".join(lines)


def _snapshot(x: Any) -> Any:
    """A copy of array ``x`` (torch: ``clone``; numpy, CuPy: ``copy``)."""
    if callable(getattr(x, "clone", None)) and hasattr(x, "copy_"):
        return x.clone()
    if callable(getattr(x, "copy", None)):
        return x.copy()
    raise TypeError(f"cannot copy a {type(x).__name__} to restore it between timed runs")


def _put_back(x: Any, saved: Any) -> None:
    if callable(getattr(x, "copy_", None)):
        x.copy_(saved)
        return
    np = sys.modules.get("numpy")
    if np is not None and isinstance(x, np.ndarray):
        np.copyto(x, saved)
        return
    x[...] = saved


def _zero(x: Any) -> None:
    if callable(getattr(x, "zero_", None)):
        x.zero_()
        return
    x[...] = 0


# ---------------------------------------------------------------------------- where it runs
_DEVICE_NAMES: dict[tuple[str, int], str] = {}
_CPU: list[str] = []


def _cpu_name() -> str:
    if not _CPU:
        import platform

        name = ""
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if line.startswith("model name"):
                        name = line.split(":", 1)[1].strip()
                        break
        except OSError:
            pass
        _CPU.append(f"{platform.machine() or 'cpu'} {name}".strip())
    return _CPU[0]


def device_name(target: str) -> str:
    """What a tuning result is valid for: ``"cuda:<GPU name>:<arch>"`` of the current device,
    or ``"interp:<machine> <CPU model>"`` for the interpreter."""
    if target == "interp":
        return f"interp:{_cpu_name()}"
    from . import driver as drv

    idx = drv.current_device_index()
    name = _DEVICE_NAMES.get((target, idx))
    if name is None:
        drv.require()
        d = drv.driver()
        dev = drv.check(d.cuDeviceGet(idx), "cuDeviceGet")
        raw = drv.check(d.cuDeviceGetName(256, dev), "cuDeviceGetName")
        text = raw.split(b"\0", 1)[0].decode(errors="replace") if isinstance(raw, bytes) else str(raw)
        name = f"cuda:{text.strip()}:{drv.device_arch(idx)}"
        _DEVICE_NAMES[(target, idx)] = name
    return name


def _target_of(fname: str, values: Sequence[Any]) -> str:
    """``"cuda"`` or ``"interp"``, as a direct call picks it (``tirx.runtime.direct``)."""
    from . import direct, interpret

    if interpret.enabled():
        return "interp"
    sides = {direct.where(v) for v in values} - {None}
    if sides == {"gpu"}:
        return "cuda"
    if sides == {"host"}:
        return "interp"
    what = "arrays in both GPU and host memory" if sides else "no array argument"
    raise TypeError(
        f"{fname}(): {what}; @T.autotune tunes where the call runs (all arrays on the GPU: CUDA, "
        "all in host memory: the interpreter)"
    )


# ---------------------------------------------------------------------------- parallel compile
_FORKED: dict[int, tuple] = {}  # token -> (JitFunction, values), read by forked workers (inherited memory)
_TOKENS = itertools.count(1)


def _default_method() -> str:
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return "fork" if "fork" in methods and sys.platform != "darwin" else "spawn"


def _worker_count(jobs: int, workers: int | None) -> int:
    if workers is None:
        env = os.environ.get(WORKERS_ENV, "").strip()
        if env:
            try:
                workers = int(env)
            except ValueError:
                raise ValueError(f"{WORKERS_ENV} must be an integer, got {env!r}") from None
        else:
            try:
                workers = len(os.sched_getaffinity(0))  # the CPUs this process may run on
            except (AttributeError, OSError):
                workers = os.cpu_count() or 1
    return max(1, min(jobs, workers))


def _ref(fn: Any) -> tuple[str, str] | None:
    """(module, qualname) a spawned worker can import ``fn`` by, or None."""
    func = getattr(fn, "func", None)
    mod, qual = getattr(func, "__module__", None), getattr(func, "__qualname__", "")
    if not mod or mod == "__main__" or "<locals>" in qual:
        return None
    return mod, qual


def _resolve_ref(ref: tuple[str, str]) -> Any:
    import importlib

    obj: Any = importlib.import_module(ref[0])
    for part in ref[1].split("."):
        obj = getattr(obj, part)
    return getattr(obj, "fn", obj) if not isinstance(obj, JitFunction) else obj


def _picklable(x: Any) -> bool:
    import pickle

    try:
        pickle.dumps(x)
    except Exception:
        return False
    return True


def _images(kernel: Any) -> list[tuple]:
    mod = getattr(kernel, "module", None)
    out = []
    for img in getattr(mod, "images", None) or ():
        key = getattr(img, "cache_key", "")
        if key:
            out.append((key, img.source, img.ptx, img.cubin, img.log, img.arch))
    return out


def _compile_one(fn: Any, values: dict, target: str) -> tuple:
    """Specialize and compile one candidate: ``(None, images, seconds)`` or ``(reason, [],
    seconds)``."""
    t0 = time.perf_counter()
    try:
        from ..target import compile as _compile

        k = _compile(fn.specialize(**values), target)
        return None, _images(k), time.perf_counter() - t0
    except Exception as e:
        return _reason(e), [], time.perf_counter() - t0


def _compile_job(
    token: int, index: int, ref: tuple[str, str] | None, values: dict | None, target: str
) -> tuple:
    """In a worker: :func:`_compile_one` of candidate ``index``, from what a forked worker
    inherited (``_FORKED[token]``: the function and every candidate's values, never pickled)
    or what a spawned one imports (``ref``) and was sent (``values``)."""
    try:
        got = _FORKED.get(token)
        if got is not None:
            fn, values = got[0], got[1][index]
            fn._lock = threading.Lock()  # forked while another thread of the parent may have held it
        elif ref is None or values is None:
            raise RuntimeError("the worker cannot find the @T.jit function")
        else:
            fn = _resolve_ref(ref)
    except Exception as e:
        return _reason(e), [], 0.0
    return _compile_one(fn, dict(values), target)


def _precompiled(
    fn: JitFunction, values: Sequence[dict], target: str, workers: int | None, mp_context: str | None
) -> Iterator[tuple[int, str | None]]:
    """``(index, None or the reason it failed)`` per candidate, as the workers finish them
    (see :func:`precompile`)."""
    from . import cache as _cache

    n = _worker_count(len(values), workers)
    method = mp_context or _default_method()
    ref = _ref(fn)
    if method != "fork" and (ref is None or not _picklable(values)):
        n = 1  # a spawned worker could not import the function or get the values: compile here
    if n <= 1:
        for i, v in enumerate(values):
            yield i, _compile_one(fn, dict(v), target)[0]
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    token = next(_TOKENS)
    fork = method == "fork"
    if fork:
        _FORKED[token] = (fn, list(values))
    try:
        with warnings.catch_warnings():
            # Python >= 3.12 warns that forking a process with threads may deadlock; the workers
            # only specialize and compile (no GPU, no locks held across the fork by tirx)
            warnings.filterwarnings("ignore", ".*fork.*", DeprecationWarning)
            ctx = multiprocessing.get_context(method)
            with ProcessPoolExecutor(max_workers=n, mp_context=ctx) as ex:
                futs = {
                    ex.submit(_compile_job, token, i, ref, None if fork else dict(v), target): i
                    for i, v in enumerate(values)
                }
                for fut in as_completed(futs):
                    try:
                        why, images, _s = fut.result()
                    except Exception as e:  # a worker died (BrokenProcessPool) or could not unpickle
                        why, images = f"the compile worker failed: {_reason(e)}", []
                    for key, source, ptx, cubin, log, arch in images:
                        entry = _cache.CacheEntry(source, ptx, cubin, log, {"arch": arch})
                        _cache.put(key, entry, disk=False)
                    yield futs[fut], why
    finally:
        _FORKED.pop(token, None)


def precompile(
    fn: JitFunction,
    values: Sequence[dict],
    target: str,
    workers: int | None = None,
    mp_context: str | None = None,
) -> list[str | None]:
    """Specialize ``fn`` with each dict of constexpr ``values`` and compile it for the CUDA
    ``target`` (give its ``-arch``: workers must not touch the GPU) in worker processes; each
    binary is put in this process's compile cache (``tirx.runtime.cache``; the workers also
    write the disk cache when it is on), so compiling the same specialization here afterwards
    is a cache hit. Returns, per candidate, None or the reason it failed."""
    reasons: list[str | None] = [None] * len(values)
    for i, why in _precompiled(fn, values, target, workers, mp_context):
        reasons[i] = why
    return reasons


def build_candidates(
    fn: JitFunction,
    values: Sequence[dict],
    target: str,
    workers: int | None = None,
    mp_context: str | None = None,
) -> list[tuple[Any, Any, str | None]]:
    """``(Function, kernel, None)`` or ``(None, None, reason)`` per dict of constexpr values:
    each specialized and compiled for ``target`` (``"cuda"`` or ``"interp"``) as a direct
    call compiles it (the kernel is the one a later call of that specialization launches).
    For CUDA with more than one worker, NVRTC runs in worker processes (:func:`precompile`)
    while this process specializes and lowers each candidate a worker has finished, whose
    compile is then a cache hit."""
    from . import direct

    def here(v: dict) -> tuple[Any, Any, str | None]:
        try:
            f = fn.specialize(**v)
            return f, direct._compiled(f, target), None
        except Exception as e:
            return None, None, _reason(e)

    if not (target == "cuda" and len(values) > 1 and _worker_count(len(values), workers) > 1):
        return [here(v) for v in values]
    from . import driver as drv

    ok, _why = drv.probe()
    arch = drv.device_arch(drv.current_device_index()) if ok else "sm_90a"  # as tirx.compile picks it
    out: list[tuple[Any, Any, str | None]] = [(None, None, "not compiled")] * len(values)
    for i, why in _precompiled(fn, values, f"cuda -arch={arch}", workers, mp_context):
        out[i] = (None, None, why) if why is not None else here(values[i])
    return out


# ---------------------------------------------------------------------------- the tuner
class Autotuner:
    """``@T.autotune`` around a ``@T.jit`` function (docs/autotune.md).

    - ``configs``: dicts of constexpr values, one per candidate.
    - ``key``: argument names (constexprs or ordinary arguments) whose values pick a tuning;
      a new combination tunes again.
    - ``warmup``, ``rep``: ``do_bench``'s time budgets in ms.
    - ``restore_value``: arguments copied before tuning and put back before every timed run
      (kernels that accumulate into them see the same values each run); ``reset_to_zero``:
      arguments zeroed before every timed run. Both hold their values from before the call
      again when tuning ends, and the winner then runs once on them.
    - ``prune_configs_by``: ``fn(configs, args) -> configs`` (``args``: the call's arguments
      and constexprs by name), or Triton's dict (``early_config_prune``, ``perf_model``,
      ``top_k``).
    - ``prepare_args``: ``fn(config, args) -> {name: value}``, the arguments that depend on the
      config (``args``: the call's arguments and constexprs by name): each candidate, and then
      the winner, runs with the call's arguments updated by it. A kernel whose launch needs
      something built for its tiles (TMA descriptors with the tile as their box, a workspace
      sized by the split) takes it this way; the values may be new arguments the caller left
      out, or ``None`` to drop an optional tensor.
    - ``do_bench``: ``fn(run) -> ms`` instead of ``tirx.testing.do_bench``.
    - ``workers``: processes compiling CUDA candidates (default ``$TIRX_AUTOTUNE_WORKERS`` or
      the CPU count; 1: in this process); ``mp_context``: their start method.
    - ``disk_cache``: keep winners in ``<compile cache dir>/autotune`` (``TIRX_CACHE_DIR``;
      off with the compile cache's ``TIRX_DISABLE_DISK_CACHE=1``).

    ``best_config(key)`` is the winner for a key, ``timings[key]`` the measured
    ``(config, ms)`` pairs, ``failures[key]`` the dropped ``(config, reason)`` pairs,
    ``stats[key]`` where the winner came from (``"tuned"``, ``"disk"`` or ``"only"``) and
    how long compiling and timing took.
    """

    def __init__(
        self,
        fn: JitFunction,
        configs: Sequence[dict],
        key: Sequence[str] | str = (),
        *,
        warmup: float = 25,
        rep: float = 100,
        restore_value: Sequence[str] = (),
        reset_to_zero: Sequence[str] = (),
        prune_configs_by: Any = None,
        prepare_args: Callable[[dict, dict], dict] | None = None,
        do_bench: Callable[[Callable[[], Any]], float] | None = None,
        workers: int | None = None,
        mp_context: str | None = None,
        disk_cache: bool = True,
    ):
        if not isinstance(fn, JitFunction):
            raise TypeError(f"@T.autotune tunes a @T.jit function, got {type(fn).__name__}")
        self.fn = fn
        self.configs = self._check_configs(configs, "configs")
        if not self.configs:
            raise ValueError(f"@T.autotune {fn.__name__}: configs is empty")
        self.key = (key,) if isinstance(key, str) else tuple(key)
        self.restore_value = (restore_value,) if isinstance(restore_value, str) else tuple(restore_value)
        self.reset_to_zero = (reset_to_zero,) if isinstance(reset_to_zero, str) else tuple(reset_to_zero)
        for what, v in (("warmup", warmup), ("rep", rep)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise ValueError(
                    f"@T.autotune {fn.__name__}: {what} must be a positive number of ms, got {v!r}"
                )
        if (
            prune_configs_by is not None
            and not callable(prune_configs_by)
            and not isinstance(prune_configs_by, dict)
        ):
            raise TypeError(
                "@T.autotune: prune_configs_by is a function (configs, args) -> configs or a dict"
            )
        if do_bench is not None and not callable(do_bench):
            raise TypeError("@T.autotune: do_bench must be callable")
        if prepare_args is not None and not callable(prepare_args):
            raise TypeError("@T.autotune: prepare_args must be a function (config, args) -> dict")
        self.prepare_args = prepare_args
        self.warmup, self.rep = warmup, rep
        self.prune_configs_by = prune_configs_by
        self.do_bench = do_bench
        self.workers = workers
        self.mp_context = mp_context
        self.disk_cache = disk_cache
        self.timings: dict[tuple, list[tuple[dict, float]]] = {}
        self.failures: dict[tuple, list[tuple[dict, str]]] = {}
        self.stats: dict[tuple, dict] = {}
        self.last_key: tuple | None = None
        self._best: dict[tuple[str, tuple], dict] = {}  # (device, key) -> config
        self._latest: dict[tuple, dict] = {}  # key -> the config most recently chosen for it
        self._lock = threading.RLock()
        self._checked = False
        self._hash: str | None = None
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __repr__(self) -> str:
        return f"<T.autotune {self.fn.func.__qualname__}: {len(self.configs)} configs, key={list(self.key)}>"

    # -- checks ---------------------------------------------------------------------------
    def _check_configs(self, configs: Any, what: str) -> list[dict]:
        if isinstance(configs, dict) or not isinstance(configs, (list, tuple)):
            raise TypeError(f"@T.autotune {self.fn.__name__}: {what} must be a list of dicts")
        out = []
        for i, c in enumerate(configs):
            if not isinstance(c, dict) or not all(isinstance(k, str) for k in c):
                raise TypeError(
                    f"@T.autotune {self.fn.__name__}: {what}[{i}] must be a dict of constexpr values "
                    f"by name, got {c!r}"
                )
            for k, v in c.items():
                specialization_key(v, f"{what}[{i}][{k!r}]")  # hashable, as a specialization needs
            out.append(dict(c))
        return out

    def _check(self) -> None:
        if self._checked:
            return
        _src, consts, others = self.fn._signature()
        name = self.fn.__name__
        tuned = {k for c in self.configs for k in c}
        bad = sorted(tuned - set(consts))
        if bad:
            raise TypeError(
                f"@T.autotune {name}: configs set {bad}, which are not T.constexpr parameters of it"
            )
        for k in self.key:
            if k not in consts and k not in others:
                raise TypeError(f"@T.autotune {name}: key names {k!r}, which is not a parameter of it")
            if k in tuned:
                raise TypeError(f"@T.autotune {name}: key {k!r} is also tuned by the configs")
        for what, names in (("restore_value", self.restore_value), ("reset_to_zero", self.reset_to_zero)):
            for k in names:
                if k not in others:
                    raise TypeError(
                        f"@T.autotune {name}: {what} names {k!r}, which is not an array parameter of it"
                    )
        self._tuned = tuned
        self._checked = True

    # -- what a call is -------------------------------------------------------------------
    def _named(self, args: tuple, kwargs: dict) -> dict:
        """Every argument of the call by parameter name, constexpr defaults filled in."""
        _src, consts, others = self.fn._signature()
        named = dict(zip(others, args))
        named.update(kwargs)
        for k, d in consts.items():
            if k not in named and d is not inspect.Parameter.empty:
                named[k] = d
        return named

    def key_of(self, named: dict) -> tuple:
        """The tuning key of a call's arguments by name (see ``key``)."""
        missing = [k for k in self.key if k not in named]
        if missing:
            raise TypeError(f"{self.fn.__name__}(): no value for the autotune key {missing}")
        return tuple(_key_part(named[k]) for k in self.key)

    def best_config(self, key: Any = None) -> dict | None:
        """The config chosen for ``key`` (a tuple of the key values in ``key`` order, a dict by
        name, or one value for a one-name key; None: the last call's), or None when not tuned."""
        if key is None:
            key = self.last_key
            if key is None:
                return None
        elif isinstance(key, dict):
            key = self.key_of(key)
        elif not isinstance(key, tuple) or (len(self.key) == 1 and len(key) != 1):
            key = (key,)
        cfg = self._latest.get(tuple(_key_part(k) for k in key))
        return None if cfg is None else dict(cfg)

    # -- calls ----------------------------------------------------------------------------
    def specialize(self, **values: Any) -> Any:
        """``fn.specialize`` (no tuning)."""
        return self.fn.specialize(**values)

    @property
    def constexpr_params(self) -> tuple:
        return self.fn.constexpr_params

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._check()
        const, dropped, kept, kw = self.fn.split_call(args, kwargs)
        clash = sorted(self._tuned & set(const))
        if clash:
            raise TypeError(f"{self.fn.__name__}(): {clash} are chosen by @T.autotune; do not pass them")
        named = self._named(args, kwargs)
        key = self.key_of(named)
        _src, consts, _others = self.fn._signature()
        target = _target_of(self.fn.__name__, [v for k, v in named.items() if k not in consts])
        device = device_name(target)
        cfg = self._best.get((device, key))
        if cfg is None:
            with self._lock:
                cfg = self._best.get((device, key))
                if cfg is None:
                    cfg = self._tune(named, const, dropped, kept, kw, key, target, device)
        self.last_key = key
        self._latest[key] = cfg
        if self.prepare_args is not None:
            return self.fn(**self._prepared(self.prepare_args(dict(cfg), dict(named)), named), **const, **cfg)
        return self.fn(*args, **kwargs, **cfg)

    def _prepared(self, got: Any, named: dict) -> dict:
        """The call's ordinary arguments by name, updated by what ``prepare_args`` returned."""
        _src, _consts, others = self.fn._signature()
        if not isinstance(got, dict):
            raise TypeError(
                f"@T.autotune {self.fn.__name__}: prepare_args returned {type(got).__name__}, "
                "expected a dict of arguments by name"
            )
        bad = sorted(k for k in got if k not in others)
        if bad:
            raise TypeError(
                f"@T.autotune {self.fn.__name__}: prepare_args returned {bad}, which are not "
                "(non-constexpr) parameters of it"
            )
        byname = {k: v for k, v in named.items() if k in others}
        byname.update(got)
        return byname

    # -- tuning ---------------------------------------------------------------------------
    def _candidates(self, named: dict) -> list[dict]:
        cands = [dict(c) for c in self.configs]
        p = self.prune_configs_by
        if p is not None:
            if isinstance(p, dict):
                early, perf, top_k = p.get("early_config_prune"), p.get("perf_model"), p.get("top_k", 1.0)
                if early is not None:
                    cands = list(early(cands, dict(named)))
                if perf is not None:
                    if isinstance(top_k, float) and top_k <= 1.0:
                        top_k = max(1, int(len(cands) * top_k))
                    if isinstance(top_k, bool) or not isinstance(top_k, int):
                        raise TypeError(
                            f"@T.autotune: prune_configs_by top_k must be an int or a fraction, got {top_k!r}"
                        )
                    if len(cands) > top_k:
                        est = [float(perf(**{**named, **c})) for c in cands]
                        order = sorted(range(len(cands)), key=lambda i: est[i])
                        cands = [cands[i] for i in order[:top_k]]
            else:
                cands = list(p(cands, dict(named)))
            cands = self._check_configs(cands, "prune_configs_by's configs")
            extra = sorted({k for c in cands for k in c} - set(self.fn._signature()[1]))
            if extra:
                raise TypeError(
                    f"@T.autotune {self.fn.__name__}: prune_configs_by returned configs setting {extra}"
                )
        seen: set = set()
        out = []
        for c in cands:
            k = tuple(sorted((n, specialization_key(v)) for n, v in c.items()))
            if k not in seen:
                seen.add(k)
                out.append(c)
        if not out:
            raise AutotuneError(f"{self.fn.__name__}: prune_configs_by left no config to tune")
        return out

    def _bench(self, run: Callable[[], Any], target: str) -> float:
        if self.do_bench is not None:
            return float(self.do_bench(run))
        from tirx.runtime.bench import do_bench

        ms = do_bench(run, warmup=self.warmup, rep=self.rep, device="cpu" if target == "interp" else "cuda")
        return float(ms)

    def _tune(self, named: dict, const: dict, dropped: dict, kept: list, kw: dict, key: tuple, target: str,
              device: str) -> dict:  # fmt: skip
        t0 = time.perf_counter()
        hit = self._disk_load(key, device)
        if hit is not None:
            self._record(key, device, hit, [], [], {"source": "disk", "lookup_s": time.perf_counter() - t0})
            return hit
        cands = self._candidates(named)
        if len(cands) == 1:  # nothing to compare (as Triton: no timing)
            self._record(key, device, cands[0], [], [], {"source": "only"})
            return cands[0]
        failures: list[tuple[dict, str]] = []
        calls: list[tuple[dict, dict, list, dict] | None] = []  # per candidate: split_call's parts
        for c in cands:
            if self.prepare_args is None:
                calls.append((const, dropped, kept, kw))
                continue
            try:  # the hook may refuse a config (it cannot prepare for those tiles): a failure
                got = self.prepare_args(dict(c), dict(named))
            except Exception as e:
                failures.append((c, _reason(e)))
                calls.append(None)
                continue
            calls.append(self.fn.split_call((), {**self._prepared(got, named), **const}))
        ok = [(i, parts) for i, parts in enumerate(calls) if parts is not None]
        built_ok = build_candidates(self.fn, [{**parts[0], **cands[i], **parts[1]} for i, parts in ok], target,
                                    self.workers, self.mp_context)  # fmt: skip
        built: list = [None] * len(cands)
        for (i, _parts), b in zip(ok, built_ok):
            built[i] = b
        t1 = time.perf_counter()
        runs = []
        for c, b, parts in zip(cands, built, calls):
            if parts is None:
                continue  # prepare_args failed: recorded above
            f, k, why = b
            if why is not None:
                failures.append((c, why))
                continue
            _const, _dropped, kept, kw = parts
            try:
                args = dict(kw)
                stream = args.pop("stream", None) if not any(p.name == "stream" for p in f.params) else None
                runs.append((c, k, f.bind_args(tuple(kept), args), stream))
            except Exception as e:
                failures.append((c, _reason(e)))
        watched = [
            n for n in dict.fromkeys((*self.restore_value, *self.reset_to_zero)) if named.get(n) is not None
        ]
        saved = {n: _snapshot(named[n]) for n in watched}
        zeroed = [n for n in self.reset_to_zero if n in saved]

        def reset() -> None:
            for n, s in saved.items():
                _put_back(named[n], s)
            for n in zeroed:
                _zero(named[n])

        timings: list[tuple[dict, float]] = []
        try:
            for c, k, vals, stream in runs:

                def run(k: Any = k, vals: list = vals, stream: Any = stream) -> Any:
                    reset()
                    return k(*vals) if stream is None else k(*vals, stream=stream)

                try:
                    ms = self._bench(run, target)
                except Exception as e:
                    failures.append((c, _reason(e)))
                    continue
                if not math.isfinite(ms) or ms < 0:
                    failures.append((c, f"the timing was {ms!r} ms"))
                    continue
                timings.append((c, ms))
        finally:
            for n, s in saved.items():
                _put_back(named[n], s)
        t2 = time.perf_counter()
        if not timings:
            raise AutotuneError(f"{self.fn.__name__}: every autotune config failed for key {key}:", failures)
        best = min(timings, key=lambda t: t[1])[0]
        stats = {"source": "tuned", "compile_s": t1 - t0, "bench_s": t2 - t1, "candidates": len(cands)}
        self._record(key, device, best, timings, failures, stats)
        self._disk_store(key, device, best, timings, failures)
        return best

    def _record(self, key: tuple, device: str, cfg: dict, timings: list, failures: list, stats: dict) -> None:
        self._best[(device, key)] = cfg
        self._latest[key] = cfg
        self.timings[key] = list(timings)
        self.failures[key] = list(failures)
        self.stats[key] = dict(stats, device=device)

    # -- the disk ---------------------------------------------------------------------------
    def content_hash(self) -> str:
        """A digest of what the tuning depends on besides the key and the device: the function's
        module source (or its own source), its name and tirx's code generator
        (``tirx.runtime.cache.codegen_version``)."""
        if self._hash is None:
            from .cache import codegen_version

            func = self.fn.func
            text = ""
            try:
                path = inspect.getsourcefile(func)
                if path:
                    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                        text = fh.read()
            except (OSError, TypeError):
                text = ""
            if not text:
                try:
                    text = inspect.getsource(func)
                except (OSError, TypeError):
                    text = repr(func.__code__.co_code)
            h = hashlib.sha256(f"tirx-autotune-{_FORMAT}\0{func.__module__}\0{func.__qualname__}\0".encode())
            h.update(text.encode("utf-8", "surrogateescape"))
            h.update(codegen_version().encode())
            self._hash = h.hexdigest()
        return self._hash

    def _entry_path(self, key: tuple, device: str) -> str | None:
        if not self.disk_cache:
            return None
        from .cache import cache_dir

        d = cache_dir()
        if d is None:
            return None
        h = hashlib.sha256()
        for part in (
            str(_FORMAT),
            self.content_hash(),
            repr(self.key),
            repr(key),
            device,
            repr(self.configs),
        ):
            b = part.encode("utf-8", "surrogatepass")
            h.update(len(b).to_bytes(8, "little") + b)
        return os.path.join(d, "autotune", h.hexdigest()[:40] + ".json")

    def _meta(self, key: tuple, device: str) -> dict:
        return {"format": _FORMAT, "function": self.content_hash(), "name": self.fn.func.__qualname__,
                "key_names": list(self.key), "key": repr(key), "device": device}  # fmt: skip

    def _disk_load(self, key: tuple, device: str) -> dict | None:
        """The winner stored for ``key`` on ``device``, when the entry is trusted, whole, written
        for this function, key, device and config list, and names one of the configs."""
        from .. import fileio

        path = self._entry_path(key, device)
        if path is None:
            return None
        try:
            if fileio.private_dir(os.path.dirname(path), create=False) is None:
                return None
            data = fileio.read_private(path, _MAX_ENTRY_BYTES)
        except fileio.Untrusted as why:
            fileio.warn_once(f"tirx: not using the autotune cache entry: {why}; tuning again", stacklevel=5)
            return None
        except OSError:
            return None
        if data is None:
            return None
        try:
            obj = json.loads(data.decode("utf-8"))
            if not isinstance(obj, dict) or any(obj.get(k) != v for k, v in self._meta(key, device).items()):
                return None
            i = obj["index"]
            if type(i) is not int or not 0 <= i < len(self.configs) or obj["config"] != repr(self.configs[i]):
                return None
        except (ValueError, KeyError, TypeError):
            return None  # corrupted: tuned again and overwritten
        return dict(self.configs[i])

    def _disk_store(self, key: tuple, device: str, best: dict, timings: list, failures: list) -> None:
        from .. import fileio

        path = self._entry_path(key, device)
        if path is None:
            return
        index = next((i for i, c in enumerate(self.configs) if c == best), None)
        if index is None:  # a config prune_configs_by made up: not one a later process could name
            return
        obj = dict(self._meta(key, device), index=index, config=repr(best),
                   timings=[[repr(c), ms] for c, ms in timings],
                   failures=[[repr(c), why] for c, why in failures])  # fmt: skip
        try:
            base = os.path.dirname(path)
            d = fileio.private_dir(os.path.dirname(base), create=True) and fileio.private_dir(
                base, create=True
            )
            if d is not None:
                data = json.dumps(obj, indent=1).encode()
                fileio.atomic_write(path, data, mode=0o600, durable=False)
        except fileio.Untrusted as why:
            fileio.warn_once(f"tirx: not writing the autotune cache: {why}", stacklevel=5)
        except OSError:
            pass  # a read-only or full cache directory only costs tuning again
