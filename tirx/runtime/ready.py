"""Ready kernels: a launchable kernel from the disk cache without running the frontend.

``tirx.compile``'s disk cache is keyed by the generated CUDA, so a new process still runs the
kernel's script, the passes and the code generator (26-110 ms a library kernel, and importing
a kernel's script module costs hundreds more) before it finds the cubin. A *ready record* is
keyed before all of that: by the name of the function that builds the kernel and its
arguments, the device's arch, the launcher, and a fingerprint of tirx's own source files (path,
size and modification time of each, as Python's bytecode cache checks its sources). It holds
the cubin and the kernel's fast-path launch plan: the generated Python source of the all-torch
``__call__`` (``kernel_fast.py``), the parameter pack format and offsets, the launch
dimensions' code, each tensor parameter's dtype and the dynamic shared memory. A
:class:`ReadyKernel` made from it launches through exactly that fast path; any call that
leaves it (another argument kind, a failed check, a keyword argument, an attribute such as
``source`` or ``func``) builds the real kernel once (``build()``, which finds its cubin in the
compile cache) and hands the call over, so errors and every other behaviour are the real
kernel's.

Records are entries of the compile cache (``tirx.runtime.cache``: private directory, atomic
writes, a checksum, the key stored inside; the fast path's source in a record is compiled and
run on the host, so only the user can choose it), so they are trusted, refused and switched off
(``TIRX_DISABLE_DISK_CACHE=1``) as compile-cache entries are. What the record does not key is
the NVRTC toolchain: a record made by another NVRTC version serves the binary it made, a valid
binary of the same source (``tirx cache clear`` or ``TIRX_DISABLE_DISK_CACHE`` make the next
call build afresh). Kernels whose launch the fast path does not cover (host programs, several
kernels, launch options, cooperative or NVSHMEM kernels, shared memory computed per call, PTX
images) get no record and are always built. ``TIRX_READY_CACHE=0`` turns records off (every
process builds its kernels, finding the cubins in the compile cache).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import warnings
from collections.abc import Callable
from typing import Any

from . import cache as _cache
from . import driver as _drv
from .kernel_fast import FastPathMixin, _int_literal
from .kernel_image import CompiledImage
from .kernel_launch import LaunchMixin, _stream_handle

__all__ = ["ReadyKernel", "compile_ready", "export", "fingerprint", "ready", "ready_key", "sources"]

_VERSION = 1  # of the record's layout
_FP: str | None = None


def fingerprint() -> str:
    """Digest of the path, size and modification time of every Python file of the tirx
    package (computed once per process, about a millisecond): a changed file changes every key."""
    global _FP
    if _FP is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        h = hashlib.sha256(b"tirx-ready")
        for path in sources(root):
            st = os.stat(path)
            h.update(f"{os.path.relpath(path, root)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
        _FP = h.hexdigest()[:32]
    return _FP


def sources(root: str) -> list[str]:
    """The Python files of the package at ``root``, in a fixed order. Subpackages that are links
    in a checkout (``tirx/passes`` -> ``passes/``, the printer, the grammar) are followed;
    ``tirx/tools`` (scripts and benchmarks, no part of a kernel) is not."""
    out = []
    for d, dirs, files in os.walk(root, followlinks=True):
        if d == root:
            dirs[:] = [x for x in dirs if x != "tools"]
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        out += [os.path.join(d, n) for n in sorted(files) if n.endswith(".py")]
    return out


def ready_key(name: str, args: tuple, arch: str, files: tuple[str, ...] = ()) -> str:
    """The cache key of the kernel ``name(*args)`` builds for ``arch`` (see the module docstring).
    ``args`` may hold str, int, float, bool, None and tuples of them (their ``repr`` is keyed);
    ``files``: source files outside tirx the build reads (a user's kernel scripts), keyed by
    path, size and modification time as tirx's own."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"ready: name must be a non-empty str, got {name!r}")
    _check_args(args)
    if isinstance(files, str) or not isinstance(files, (tuple, list)):
        raise TypeError(f"ready: files must be a tuple of paths, got {type(files).__name__}")
    stamps = []
    for f in files:
        try:
            st = os.stat(f)
        except (OSError, TypeError, ValueError) as e:
            raise ValueError(f"ready: files: cannot read {f!r}: {e}") from None
        stamps.append(f"{os.path.abspath(f)}\0{st.st_size}\0{st.st_mtime_ns}")
    launcher = os.environ.get("TIRX_LAUNCHER", "bindings")
    h = hashlib.sha256(b"tirx-ready-key-1")
    for part in (fingerprint(), name, repr(args), arch, launcher, *stamps):
        b = part.encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little") + b)
    return h.hexdigest()


def _check_args(args: Any) -> None:
    if isinstance(args, tuple):
        for a in args:
            _check_args(a)
    elif args is not None and not isinstance(args, (str, int, float, bool)):
        raise TypeError(
            f"ready: args must hold str, int, float, bool, None and tuples of them, got {type(args).__name__}"
        )


def export(kernel: Any) -> dict | None:
    """The record (JSON-able) of a compiled kernel's fast-path launch plan, or None when its
    launches need the general path (see the module docstring)."""
    from .kernel import Kernel

    try:
        kernel = _only(kernel)
    except ValueError:  # several kernels
        return None
    if not isinstance(kernel, Kernel):
        return None
    img = kernel.image
    if (
        not kernel._fast
        or not kernel._dims
        or img.image_format != "cubin"
        or "nvshmem" in img.features
        or len(kernel.module.images) != 1
        or _int_literal(kernel.smem_code) is None
    ):
        return None
    return {
        "ready": _VERSION,
        "name": kernel.name,
        "arch": kernel.arch,
        "params": list(kernel.pnames),
        "fast": kernel._fast,
        "fmt": kernel.fmt,
        "offsets": list(kernel.param_offsets),
        "size": kernel.param_size,
        "dims": kernel._dims,
        "packs": list(kernel.pack_exprs),
        "dtypes": [list(x) for x in kernel.tensor_dtypes],
        "cluster": kernel.cluster_code,
        "launcher": kernel.launcher,
        "smem": _int_literal(kernel.smem_code),
        "features": sorted(img.features),
    }


_ARCH: dict[int, str] = {}


def _arch() -> str:
    """The arch ``tirx.compile(..., target="cuda")`` picks here (the current device's)."""
    ok, _why = _drv.probe()
    if not ok:
        return "sm_90a"
    dev = _drv.current_device_index()
    a = _ARCH.get(dev)
    if a is None:
        a = _ARCH[dev] = _drv.device_arch(dev)
    return a


def ready(name: str, args: tuple, build: Callable[[], Any], files: tuple[str, ...] = ()) -> Any:
    """The kernel ``build()`` compiles (``tirx.compile`` of one kernel, for ``target="cuda"``),
    named ``name`` with arguments ``args``: a :class:`ReadyKernel` from the ready record when
    there is one, else ``build()``'s kernel, whose record is written for the next process.
    ``build`` must depend on tirx's own files, ``args`` and ``files`` only (the library's kernels
    depend on tirx's alone; a user's kernel lists its script files, e.g.
    ``files=(__file__,)``). Either is called with the device kernel's arguments
    (``T.NoneType()`` parameters are not among them)."""
    key = ready_key(name, args, _arch(), files)
    disk = _cache.cache_dir() is not None and os.environ.get("TIRX_READY_CACHE", "1").strip() != "0"
    if disk:
        entry = _cache.get(key)
        if entry is not None:
            try:
                return ReadyKernel(entry.meta, entry.cubin, build, key)
            except (KeyError, TypeError, ValueError):
                pass  # a record of another layout: built again and rewritten
    kernel = _only(build())
    if disk:
        rec = export(kernel)
        if rec is not None:
            _cache.put(key, _cache.CacheEntry("", "", kernel.cubin, "", rec))
    return kernel


def compile_ready(maker: str, *args: Any, **kwargs: Any) -> Any:
    """``tirx.compile(maker(*args, **kwargs), target="cuda")``'s kernel through :func:`ready`:
    ``maker`` is named ``"package.module:function"`` (a module of the tirx package), imported
    only when the kernel is built, so a process that finds the record imports no script."""
    mod, sep, fn = maker.partition(":")
    if not sep or not mod.startswith("tirx.") or not fn:
        raise ValueError(f"compile_ready: maker must be 'tirx.<module>:<function>', got {maker!r}")

    def build() -> Any:
        import importlib

        from ..target import compile as _compile

        return _compile(getattr(importlib.import_module(mod), fn)(*args, **kwargs), target="cuda")

    return ready(maker, (args, tuple(sorted(kwargs.items()))), build)


def _only(mod: Any) -> Any:
    """The one kernel of ``tirx.compile``'s result, called with the device kernel's arguments
    (a ``TakesNone`` wrapper's ``T.NoneType()`` parameters are not among them)."""
    from .none_params import TakesNone

    ks = getattr(mod, "kernels", None)
    if isinstance(ks, dict):
        if len(ks) != 1:
            raise ValueError(f"ready: build() must compile one kernel, got {len(ks)} ({', '.join(ks)})")
        mod = next(iter(ks.values()))
    return mod.kernel if isinstance(mod, TakesNone) else mod


class _Retry(threading.local):
    on = False


class ReadyKernel(LaunchMixin, FastPathMixin):
    """A compiled kernel made from its ready record: calls through the fast path; anything
    else builds the real kernel once (``build()``) and is its."""

    def __init__(self, rec: dict, cubin: bytes, build: Callable[[], Any], key: str = ""):
        if rec.get("ready") != _VERSION:
            raise ValueError("ready: a record of another layout")
        self.name = str(rec["name"])
        self.kname = f"{self.name}()"
        self.pnames = list(rec["params"])
        self._fast = str(rec["fast"])
        self.fmt = str(rec["fmt"])
        self.param_offsets = [int(x) for x in rec["offsets"]]
        self.param_size = int(rec["size"])
        self._dims = str(rec["dims"])
        self.pack_exprs = [str(x) for x in rec["packs"]]
        self.tensor_dtypes = [(int(i), str(d)) for i, d in rec["dtypes"]]
        self.cluster_code = None if rec["cluster"] is None else [str(x) for x in rec["cluster"]]
        self.launcher = str(rec["launcher"])
        self.smem = int(rec["smem"])
        self.image = CompiledImage(
            "", "", cubin, str(rec["arch"]), features=frozenset(map(str, rec["features"]))
        )
        self._build = build
        self._key = key
        self._rec = rec
        self._real: Any = None
        self._init_launch_state()
        self._retry = _Retry()
        self._call: Any = None  # the bound fast path (on the first call, once torch is there)

    def __repr__(self) -> str:
        return f"<tirx.ReadyKernel {self.name}({', '.join(self.pnames)}) for {self.arch}>"

    def __call__(self, *args: Any, stream: Any = None, **kwargs: Any) -> Any:
        call = self._call
        if call is None:
            call = self._bind_fast(*_launch_settings()) if self._real is None else None
            if call is None:  # no torch, or a launch the fast path cannot take here: the real kernel
                return self.materialize()(*args, stream=stream, **kwargs)
            self._call = call
        return call(self, *args, stream=stream, **kwargs)

    def _bind_kw(self, args: tuple, kwargs: dict) -> tuple:
        return self.materialize()._bind_kw(args, kwargs)

    def _general(self, args: tuple, stream: Any) -> Any:
        """A call the fast path refused: load the kernel on the tensors' device, make its context
        current and set up this thread's buffers and the stream (a fresh ready kernel has none
        of them), then try once more; a second refusal is the real kernel's call."""
        if self._real is None and not self._retry.on:
            dev = _device_of(args)
            if dev is not None:
                self._prepare_device(dev, stream)
                self._retry.on = True
                try:
                    return self._call(self, *args, stream=stream)
                finally:
                    self._retry.on = False
        return self.materialize()(*args, stream=stream)

    def _prepare_device(self, dev: int, stream: Any) -> None:
        if dev not in self._fns:  # loading makes the device's context current in this thread
            fn = self._function(dev)
            if self.smem > self._smem_max.get(dev, 48 * 1024):
                _drv.set_max_dynamic_smem(fn, self.smem)
                self._smem_max[dev] = self.smem
        else:  # another thread, which may have no current context yet
            _drv.context(dev)
        self._block()
        if self.launcher == "ctypes" or self.cluster_code is not None:
            self._exblock()
        with contextlib.suppress(TypeError):  # not a stream: the real kernel's call names it
            self._stream_obj(_stream_handle(stream, dev))

    def materialize(self) -> Any:
        """The real kernel (built once: the frontend, the passes, the code generator and the
        compile cache's cubin); checked against the record, which is rewritten if it differs."""
        real = self._real
        if real is None:
            with self._lock:
                real = self._real
                if real is None:
                    real = _only(self._build())
                    rec = export(real)
                    if rec != self._rec or real.cubin != self.cubin:
                        warnings.warn(
                            f"tirx: the ready record of {self.name} did not match the kernel built now "
                            "(rewritten; launches from it before this one used the recorded binary)",
                            RuntimeWarning,
                            stacklevel=3,
                        )
                        if rec is not None and self._key and _cache.cache_dir() is not None:
                            _cache.put(self._key, _cache.CacheEntry("", "", real.cubin, "", rec))
                    self._real = real
        return real

    def __getattr__(self, name: str) -> Any:
        # what a ready kernel does not hold (source, ptx, func, info, prepare, ...): the real one's
        if name.startswith("__") or name in _OWN:
            raise AttributeError(name)
        return getattr(self.materialize(), name)


_OWN = frozenset(("_real", "_build", "_rec", "_key", "_call", "_retry", "_lock", "image"))


def _launch_settings() -> tuple:
    """kernel.py's ``_FAST_CLUSTER`` and ``_ctypes_launch_ex``, read there on each bind (where
    tests and benchmarks set them), as ``Kernel.__call__`` reads them."""
    from . import kernel

    return kernel._FAST_CLUSTER, kernel._ctypes_launch_ex


def _device_of(args: tuple) -> int | None:
    """The device of the first tensor argument with a ``get_device`` (torch), if any."""
    for a in args:
        gd = getattr(a, "get_device", None)
        if gd is not None:
            try:
                dev = int(gd())
            except Exception:
                return None
            return dev if dev >= 0 else None
    return None
