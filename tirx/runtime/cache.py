"""Compile cache: in memory and on disk.

Key: sha256 over the code generator's version — a digest of the source of everything that
turns IR into a cubin (``tirx.ir``, ``tirx.passes``, ``tirx.codegen``, the NVRTC driver), so
a changed tirx never reuses a binary an older one built —, the structural hash of the IR, the function names
(they are C symbols), the arch, the NVRTC version and the compile options. Entries are
one file each, ``<key>.tirxbin``: a header line, a JSON meta block and the payloads
(source, PTX, cubin), with a sha256 over all of it. Writes go to a temporary file in
the same directory and ``os.replace`` it in (atomic on POSIX), so concurrent writers
never leave a torn entry; a corrupted or truncated entry is ignored and rebuilt.

Directory: ``$TIRX_CACHE_DIR``, else ``$XDG_CACHE_HOME/tirx``, else ``~/.cache/tirx``.
``TIRX_CACHE_DIR=`` (empty) or ``TIRX_DISABLE_DISK_CACHE=1`` turn the disk cache off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from collections import OrderedDict
from typing import Any

__all__ = ["CacheEntry", "cache_dir", "clear_memory", "get", "make_key", "put"]

_CODEGEN_VERSION: str | None = None


def codegen_version() -> str:
    """Digest of the source files of the IR, the passes, the CUDA generator and the NVRTC
    driver (computed once per process): any change to how IR becomes a cubin changes it."""
    global _CODEGEN_VERSION
    if _CODEGEN_VERSION is None:
        import tirx.codegen
        import tirx.ir
        import tirx.passes

        h = hashlib.sha256(b"tirx-cuda")
        files = [os.path.join(os.path.dirname(__file__), "nvrtc.py")]
        for pkg in (tirx.ir, tirx.passes, tirx.codegen):
            d = os.path.dirname(pkg.__file__)
            files += [os.path.join(d, n) for n in sorted(os.listdir(d)) if n.endswith(".py")]
        for path in files:
            with open(path, "rb") as fh:
                h.update(os.path.basename(path).encode() + b"\x00" + fh.read() + b"\x00")
        _CODEGEN_VERSION = h.hexdigest()[:16]
    return _CODEGEN_VERSION


_MAGIC = b"TIRXBIN1\n"
_MEM: OrderedDict[str, CacheEntry] = OrderedDict()
_MEM_MAX = 512
_LOCK = threading.Lock()


class CacheEntry:
    __slots__ = ("cubin", "log", "meta", "ptx", "source")

    def __init__(self, source: str, ptx: str, cubin: bytes, log: str = "", meta: dict | None = None):
        self.source = source
        self.ptx = ptx
        self.cubin = cubin
        self.log = log
        self.meta = meta or {}


def cache_dir() -> str | None:
    if os.environ.get("TIRX_DISABLE_DISK_CACHE", "") not in ("", "0"):
        return None
    d = os.environ.get("TIRX_CACHE_DIR")
    if d is not None:
        return d or None
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "tirx")


def make_key(shash: int, names: tuple, arch: str, nvrtc: tuple, options: tuple) -> str:
    h = hashlib.sha256()
    for part in (
        codegen_version(),
        str(shash),
        "|".join(names),
        arch,
        ".".join(map(str, nvrtc)),
        "\x00".join(options),
    ):
        h.update(part.encode())
        h.update(b"\x00")
    return h.hexdigest()


def clear_memory() -> None:
    with _LOCK:
        _MEM.clear()


def get(key: str, disk: bool = True) -> CacheEntry | None:
    with _LOCK:
        e = _MEM.get(key)
        if e is not None:
            _MEM.move_to_end(key)
            return e
    if not disk:
        return None
    d = cache_dir()
    if d is None:
        return None
    e = _read(os.path.join(d, key + ".tirxbin"))
    if e is not None:
        _remember(key, e)
    return e


def put(key: str, entry: CacheEntry, disk: bool = True) -> None:
    _remember(key, entry)
    if not disk:
        return
    d = cache_dir()
    if d is None:
        return
    # a read-only or full cache directory only costs a recompile
    with contextlib.suppress(OSError):
        _write(d, key, entry)


def _remember(key: str, e: CacheEntry) -> None:
    with _LOCK:
        _MEM[key] = e
        _MEM.move_to_end(key)
        while len(_MEM) > _MEM_MAX:
            _MEM.popitem(last=False)


def _encode(e: CacheEntry) -> bytes:
    src, ptx, log = e.source.encode(), e.ptx.encode(), e.log.encode()
    meta = dict(e.meta)
    meta["sizes"] = [len(src), len(ptx), len(e.cubin), len(log)]
    mb = json.dumps(meta, sort_keys=True).encode()
    body = len(mb).to_bytes(8, "little") + mb + src + ptx + e.cubin + log
    return _MAGIC + hashlib.sha256(body).digest() + body


def _decode(data: bytes) -> CacheEntry | None:
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 40:
        return None
    p = len(_MAGIC)
    digest, body = data[p : p + 32], data[p + 32 :]
    if hashlib.sha256(body).digest() != digest:
        return None
    n = int.from_bytes(body[:8], "little")
    meta = json.loads(body[8 : 8 + n].decode())
    sizes = meta.pop("sizes")
    off = 8 + n
    parts = []
    for s in sizes:
        parts.append(body[off : off + s])
        off += s
    if off != len(body):
        return None
    src, ptx, cubin, log = parts
    return CacheEntry(src.decode(), ptx.decode(), bytes(cubin), log.decode(), meta)


def _read(path: str) -> CacheEntry | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    try:
        return _decode(data)
    except Exception:
        return None  # corrupted: ignored, rebuilt and overwritten by the caller


def _write(d: str, key: str, e: CacheEntry) -> None:
    os.makedirs(d, exist_ok=True)
    data = _encode(e)
    fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, os.path.join(d, key + ".tirxbin"))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _unused(_: Any) -> None:  # pragma: no cover
    pass
