"""Compile cache: in memory and on disk.

Key: sha256 over the exact generated CUDA source (what NVRTC compiles: a binary is a function
of it, the options and the toolchain, so two kernels share a binary only when NVRTC would be
given the same input), the function names and source name, the arch, the full NVRTC option
list, the toolchain (``nvrtc.toolchain_id``: NVRTC and CUDA wheel versions, the headers) and
the code generator's version (a digest of the source of ``tirx.ir``, ``tirx.passes``,
``tirx.codegen`` and the NVRTC driver). Never the 61-bit ``structural_hash``: constants
equal modulo 2^61-1 hash alike. A hit is also checked against the source it was asked for.

Entries are one file each, ``<key>.tirxbin``: a header line, a JSON meta block and the
payloads (source, PTX, cubin), with a sha256 over all of it. Writes are atomic
(``tirx.fileio.atomic_write``), so concurrent writers never leave a torn entry; a corrupted
or truncated entry is ignored and rebuilt. An entry holds the key it was written under and
is served only for that key: a file copied, renamed or synced under another key (the same
source for another arch or other options) is a miss, never another key's binary. A read
racing an atomic replace of the entry reads again, then counts a miss, silently.

Trust: the directory must be the current user's and not writable by group or others (it is
created 0o700; entries 0o600); an entry must be a regular file of the user's that only the
user can write, at most ``MAX_ENTRY_BYTES``. It is opened without following symlinks and
without blocking. Anything else is refused with one ``RuntimeWarning`` and tirx compiles
without it: a refused entry is never served.

Directory: ``$TIRX_CACHE_DIR``, else ``$XDG_CACHE_HOME/tirx``, else the platform's user cache
directory: ``~/.cache/tirx`` (Linux), ``~/Library/Caches/tirx`` (macOS),
``%LOCALAPPDATA%\\tirx\\Cache`` (Windows).
``TIRX_CACHE_DIR=`` (empty) or ``TIRX_DISABLE_DISK_CACHE=1`` turn the disk cache off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import sys
import threading
from collections import OrderedDict

from .. import fileio

__all__ = ["CacheEntry", "cache_dir", "clear", "clear_memory", "get", "listing", "make_key", "put"]

_CODEGEN_VERSION: str | None = None


def codegen_version() -> str:
    """Digest of the source files of the IR, the op declarations (their lowerings), the
    passes, the CUDA generator and the NVRTC driver (computed once per process): any change
    to how IR becomes a cubin changes it."""
    global _CODEGEN_VERSION
    if _CODEGEN_VERSION is None:
        import tirx.codegen
        import tirx.ir
        import tirx.ops
        import tirx.passes

        h = hashlib.sha256(b"tirx-cuda")
        files = [os.path.join(os.path.dirname(__file__), "nvrtc.py")]
        for pkg in (tirx.ir, tirx.ops, tirx.passes, tirx.codegen):
            assert pkg.__file__ is not None  # regular packages (an __init__.py), not namespace ones
            d = os.path.dirname(pkg.__file__)
            files += [os.path.join(d, n) for n in sorted(os.listdir(d)) if n.endswith(".py")]
        for path in files:
            with open(path, "rb") as fh:
                rel = os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))
                h.update(rel.encode() + b"\x00" + fh.read() + b"\x00")
        _CODEGEN_VERSION = h.hexdigest()[:16]
    return _CODEGEN_VERSION


_MAGIC = b"TIRXBIN1\n"
MAX_ENTRY_BYTES = 256 << 20  # an entry larger than this is refused, not read
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
    return _platform_cache_dir()


def _platform_cache_dir() -> str:
    """The user cache directory by the platform's convention (platformdirs' rules, written out):
    ``$XDG_CACHE_HOME/tirx`` wherever it is set, else ``~/Library/Caches/tirx`` on macOS,
    ``%LOCALAPPDATA%\\tirx\\Cache`` on Windows and ``~/.cache/tirx`` elsewhere."""
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    if xdg:
        return os.path.join(xdg, "tirx")
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Caches", "tirx")
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA", "").strip() or os.path.join(home, "AppData", "Local")
        return os.path.join(local, "tirx", "Cache")
    return os.path.join(home, ".cache", "tirx")


def make_key(source: str, names: tuple, arch: str, toolchain: tuple | str, options: tuple) -> str:
    """sha256 over the generated ``source`` text and everything else that decides the binary.
    Each part is length-prefixed and the lists are counted, so no two different inputs give
    the same byte stream."""
    if not isinstance(source, str):
        raise TypeError(
            f"make_key: source must be the generated CUDA source (str), got {type(source).__name__}"
        )
    tc = toolchain if isinstance(toolchain, str) else ".".join(map(str, toolchain))
    h = hashlib.sha256(b"tirx-cache-key-2")
    parts = (codegen_version(), source, len(names), *names, arch, tc, len(options), *options)
    for part in parts:
        b = str(part).encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def clear_memory() -> None:
    with _LOCK:
        _MEM.clear()


def get(key: str, disk: bool = True, source: str | None = None) -> CacheEntry | None:
    """The entry for ``key`` (memory first, then disk), or None. With ``source``, an entry
    whose source differs from it is not a hit (checked on every hit, whatever the key)."""
    with _LOCK:
        e = _MEM.get(key)
        if e is not None:
            _MEM.move_to_end(key)
    if e is None and disk:
        d = _trusted_dir(create=False)
        if d is not None:
            e = _read(os.path.join(d, key + ".tirxbin"), key)
            if e is not None and (source is None or e.source == source):
                _remember(key, e)
    if e is not None and source is not None and e.source != source:
        return None
    return e


def put(key: str, entry: CacheEntry, disk: bool = True) -> None:
    _remember(key, entry)
    if not disk:
        return
    d = _trusted_dir(create=True)
    if d is None:
        return
    # a read-only or full cache directory only costs a recompile
    with contextlib.suppress(OSError):
        _write(d, key, entry)


def _trusted_dir(create: bool) -> str | None:
    """The disk cache directory when it is on and private (see the module docstring)."""
    d = cache_dir()
    if d is None:
        return None
    try:
        return fileio.private_dir(d, create=create)
    except fileio.Untrusted as e:
        fileio.warn_once(
            f"tirx: not using the disk cache: {e}. Make it private to you (chmod 700, owned by you), "
            "or set TIRX_CACHE_DIR to a private directory (TIRX_DISABLE_DISK_CACHE=1 turns it off)",
            stacklevel=4,
        )
    except OSError:
        pass  # cannot be created or examined: compile without it
    return None


def _remember(key: str, e: CacheEntry) -> None:
    with _LOCK:
        _MEM[key] = e
        _MEM.move_to_end(key)
        while len(_MEM) > _MEM_MAX:
            _MEM.popitem(last=False)


def _encode(e: CacheEntry, key: str | None = None) -> bytes:
    """The entry's bytes; ``key`` is stored and compared on read (an entry without one, or
    with another, is never served)."""
    src, ptx, log = e.source.encode(), e.ptx.encode(), e.log.encode()
    meta = dict(e.meta)
    if key is not None:
        meta["key"] = key
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


_READ_TRIES = 3  # reads of an entry that writers keep replacing, before it counts as a miss


def _read(path: str, key: str) -> CacheEntry | None:
    """The entry at ``path`` if it is trusted, whole and written under ``key``; else None."""
    for _ in range(_READ_TRIES):
        try:
            data = fileio.read_private(path, MAX_ENTRY_BYTES)
            break
        except fileio.ChangedWhileOpened:
            continue  # a writer replaced it while it was opened: read the new one
        except fileio.Untrusted as why:
            fileio.warn_once(f"tirx: not using the disk cache entry: {why}; it is recompiled", stacklevel=5)
            return None
        except OSError:
            return None
    else:
        return None
    if data is None:
        return None
    try:
        entry = _decode(data)
    except Exception:
        return None  # corrupted: ignored, rebuilt and overwritten by the caller
    if entry is None or entry.meta.pop("key", None) != key:
        return None  # written under another key (copied or renamed): not this key's binary
    return entry


def _write(d: str, key: str, e: CacheEntry) -> None:
    # private (0o600), atomic; a stale temp file of a killed writer is removed on the way
    fileio.atomic_write(os.path.join(d, key + ".tirxbin"), _encode(e, key), mode=0o600, durable=False)


_ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.tirxbin")


def _entry_meta(path: str) -> dict | None:
    """The JSON meta block of the entry at ``path`` (its header only: no checksum; for listing)."""
    try:
        data = fileio.read_private(path, MAX_ENTRY_BYTES)
    except (fileio.Untrusted, OSError):
        return None
    if not data or not data.startswith(_MAGIC):
        return None
    p = len(_MAGIC) + 32
    try:
        n = int.from_bytes(data[p : p + 8], "little")
        meta = json.loads(data[p + 8 : p + 8 + n].decode())
    except Exception:
        return None
    return meta if isinstance(meta, dict) else None


def listing() -> dict:
    """What the disk cache holds: ``{"dir", "entries", "ready", "bytes", "other"}``: entries
    (``<key>.tirxbin`` regular files), of which ready records (``tirx.runtime.ready``), their
    bytes, and other names in the directory (left alone). ``dir`` is None when the disk cache is
    off. Raises ``fileio.Untrusted`` for a directory tirx refuses to use."""
    d = cache_dir()
    out: dict = {"dir": d, "entries": 0, "ready": 0, "bytes": 0, "other": 0}
    if d is None or fileio.private_dir(d, create=False) is None:
        return out
    for name, st in _scan(d):
        if st is None:
            out["other"] += 1
            continue
        out["entries"] += 1
        out["bytes"] += st.st_size
        meta = _entry_meta(os.path.join(d, name))
        if meta is not None and "ready" in meta:
            out["ready"] += 1
    return out


def clear(ready_only: bool = False) -> tuple[int, int]:
    """Remove the disk cache's entries (``ready_only``: the ready records alone), and the memory
    cache; ``(files removed, bytes)``. Only ``<key>.tirxbin`` regular files of the current user
    are removed; anything else in the directory is left. Raises ``fileio.Untrusted`` for a
    directory tirx refuses to use."""
    clear_memory()
    d = cache_dir()
    if d is None or fileio.private_dir(d, create=False) is None:
        return 0, 0
    n = size = 0
    for name, st in _scan(d):
        if st is None:
            continue
        path = os.path.join(d, name)
        if ready_only:
            meta = _entry_meta(path)
            if meta is None or "ready" not in meta:
                continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
            n += 1
            size += st.st_size
    return n, size


def _scan(d: str):
    """``(name, lstat)`` of each entry of ``d`` (a ``<key>.tirxbin`` regular file of the current
    user), ``(name, None)`` for any other name."""
    uid = getattr(os, "getuid", lambda: None)()
    with os.scandir(d) as it:
        for e in sorted(it, key=lambda e: e.name):
            st = None
            if _ENTRY_NAME.fullmatch(e.name):
                try:
                    lst = os.lstat(e.path)
                except FileNotFoundError:
                    continue
                if stat.S_ISREG(lst.st_mode) and (uid is None or lst.st_uid == uid):
                    st = lst
            yield e.name, st
