"""NVRTC through cuda-python: CUDA C++ -> PTX + cubin, without a GPU or a driver.

Compile errors become ``DiagnosticError``: the NVRTC log is kept whole, and the first
error's generated line is mapped back to the IR span that produced it.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from typing import Any

from ..errors import DiagnosticError

__all__ = ["CompileResult", "compile_source", "include_dirs", "nvrtc_version", "toolchain_id"]

_LOCK = threading.Lock()


class CompileResult:
    __slots__ = ("cubin", "log", "options", "ptx")

    def __init__(self, ptx: str, cubin: bytes, log: str, options: tuple):
        self.ptx = ptx
        self.cubin = cubin
        self.log = log
        self.options = options


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            "tirx: the cuda target needs cuda-bindings and nvidia-cuda-nvrtc "
            "(pip install 'tirx-toolkit[cuda]')"
        ) from e
    return nvrtc


@functools.lru_cache(maxsize=1)
def nvrtc_version() -> tuple[int, int]:
    nv = _nvrtc()
    err, major, minor = nv.nvrtcVersion()
    _check(nv, err, "nvrtcVersion")
    return int(major), int(minor)


@functools.lru_cache(maxsize=1)
def toolchain_id() -> str:
    """What besides the source and the options decides the binary (part of the cache key):
    the NVRTC version, the versions of the CUDA wheels (a patch release of NVRTC keeps
    ``nvrtcVersion``), and the name, size and mtime of every header in the include
    directories (``cuda_fp16.h`` & co and what they include)."""
    import hashlib
    import importlib.metadata as md

    h = hashlib.sha256(".".join(map(str, nvrtc_version())).encode())
    for dist in ("cuda-bindings", "nvidia-cuda-nvrtc", "nvidia-cuda-runtime"):
        try:
            h.update(f"\0{dist}={md.version(dist)}".encode())
        except md.PackageNotFoundError:
            h.update(f"\0{dist}=-".encode())
    for d in include_dirs():
        h.update(b"\0dir=" + os.fsencode(d))
        try:
            with os.scandir(d) as it:
                ents = sorted((e.name, e.stat()) for e in it if e.is_file())
        except OSError:
            continue
        for name, st in ents:
            h.update(f"\0{name}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:32]


@functools.lru_cache(maxsize=1)
def include_dirs() -> tuple[str, ...]:
    """Directories with cuda_fp16.h & co (the nvidia-cuda-runtime wheel, or CUDA_HOME)."""
    dirs: list[str] = []
    env = os.environ.get("TIRX_CUDA_INCLUDE")
    if env:
        dirs.extend(p for p in env.split(os.pathsep) if p)
    try:
        import cuda.pathfinder as pf

        d = pf.find_nvidia_header_directory("cudart")
        if d:
            dirs.append(str(d))
    except Exception:
        pass
    if not dirs:
        try:
            import nvidia

            for base in getattr(nvidia, "__path__", []):
                for sub in ("cu13/include", "cuda_runtime/include"):
                    p = os.path.join(base, sub)
                    if os.path.exists(os.path.join(p, "cuda_fp16.h")):
                        dirs.append(p)
        except ImportError:
            pass
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and os.path.exists(os.path.join(home, "include", "cuda_fp16.h")):
            dirs.append(os.path.join(home, "include"))
    seen: dict[str, None] = {}
    for d in dirs:
        seen.setdefault(d, None)
    return tuple(seen)


def _check(nv: Any, err: Any, what: str) -> None:
    if int(err) != 0:
        try:
            _, msg = nv.nvrtcGetErrorString(err)
            msg = msg.decode() if isinstance(msg, bytes) else str(msg)
        except Exception:
            msg = str(err)
        raise RuntimeError(f"NVRTC {what} failed: {msg}")


def base_options(arch: str, extra: tuple = ()) -> tuple[str, ...]:
    opts = [f"-arch={arch}", "-std=c++17", "--device-as-default-execution-space"]
    for d in include_dirs():
        opts.append(f"-I{d}")
    opts.extend(extra)
    return tuple(opts)


_LINE_RE = re.compile(r"^(?P<file>[^\s(]+)\((?P<line>\d+)\): (?P<sev>error|warning)[^:]*: (?P<msg>.*)$", re.M)


def compile_source(
    text: str,
    arch: str,
    name: str = "tirx_kernel.cu",
    options: tuple = (),
    line_spans: dict | None = None,
) -> CompileResult:
    nv = _nvrtc()
    opts = base_options(arch, tuple(options))
    with _LOCK:
        err, prog = nv.nvrtcCreateProgram(text.encode(), name.encode(), 0, [], [])
        _check(nv, err, "nvrtcCreateProgram")
        try:
            (res,) = nv.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
            err, n = nv.nvrtcGetProgramLogSize(prog)
            # fresh mutable buffers: ``b" " * 1`` is Python's shared one-byte object, and NVRTC
            # writing into it corrupts every b" " in the process
            logb = bytearray(n)
            nv.nvrtcGetProgramLog(prog, logb)
            log = bytes(logb).rstrip(b"\x00 ").decode(errors="replace").strip()
            if int(res) != 0:
                raise _compile_error(text, log, line_spans or {}, name, arch)
            err, n = nv.nvrtcGetPTXSize(prog)
            _check(nv, err, "nvrtcGetPTXSize")
            ptxb = bytearray(n)
            nv.nvrtcGetPTX(prog, ptxb)
            err, n = nv.nvrtcGetCUBINSize(prog)
            _check(nv, err, "nvrtcGetCUBINSize")
            cubin = bytearray(n)
            nv.nvrtcGetCUBIN(prog, cubin)
        finally:
            nv.nvrtcDestroyProgram(prog)
    return CompileResult(bytes(ptxb).rstrip(b"\x00").decode(errors="replace"), bytes(cubin), log, opts)


def _compile_error(text: str, log: str, line_spans: dict, name: str, arch: str) -> DiagnosticError:
    lines = text.split("\n")
    span = None
    first = None
    for m in _LINE_RE.finditer(log):
        if m.group("sev") != "error":
            continue
        ln = int(m.group("line"))
        first = (ln, m.group("msg"))
        span = line_spans.get(ln)
        break
    parts = ["NVRTC failed to compile the generated CUDA code"]
    if first is not None:
        ln, msg = first
        src_line = lines[ln - 1].strip() if 0 < ln <= len(lines) else ""
        where = f" (from {getattr(span, 'innermost', span)})" if span is not None else ""
        parts[0] = f"{parts[0]}: {msg}{where}"
        parts.append(f"  generated line {ln}: {src_line}")
    parts.append(f"  arch {arch}; full NVRTC log:")
    parts.append("\n".join("    " + x for x in log.splitlines()))
    msg = "\n".join(parts)
    if span is not None:
        inner = getattr(span, "innermost", span)
        return DiagnosticError(msg, span=span, rendered=f"{inner}: error: {msg}")
    return DiagnosticError(msg)
