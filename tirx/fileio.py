"""Files tirx writes and reads back: ``tirx.save``, private cache files, stale temp files.

One place for the rules every file tirx touches follows:

* Writes are atomic: the data goes to a temporary file in the target's directory, named
  ``.<name>.tirx-tmp-<pid>-<8 hex>``, then ``os.replace`` moves it over the target, so a
  reader sees the old file or the new one, never a torn one. A process killed mid-write
  leaves only such a temporary file; the next write into that directory removes the ones
  that are stale (their process is gone and they are over a minute old, or they are over a
  day old), and only regular files of the current user with exactly that name shape.
* ``save`` writes *through* a symlink (to the file it points to; the link stays) and refuses
  to replace anything that is not a regular file (a FIFO, a device, a socket, a directory):
  :class:`NotARegularFile` (an ``OSError`` and a ``ValueError``) naming the path and what
  it is.
* Reads of user files (``tirx.load``, every file the ``tirx`` command reads) go through
  :func:`read_file`: it opens without blocking (``O_NONBLOCK``) and then checks with
  ``fstat`` what it opened, so a FIFO, device, socket or directory named ``*.tirx`` is
  refused with :class:`NotARegularFile` (``PATH: not a regular file``) instead of hanging.
  (Open then ``fstat``, not ``stat`` then open: the name may change in between.)
* Files the ``tirx`` command writes (``opt -o``, ``compile -o``, ``fmt``) go through
  :func:`write_file`, the writer ``save`` uses: atomic, so a failed write (a full disk)
  leaves the old file byte for byte.
* Cache files are private: :func:`private_dir` creates a directory ``0o700`` and refuses one
  not owned by the current user or writable by group or others; :func:`read_private`
  opens an entry without following a symlink and without blocking (``O_NOFOLLOW |
  O_NONBLOCK``), checks with ``fstat`` that it is a regular file of the current user that
  only the user can write, and reads at most a bounded number of bytes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import threading
import time
import warnings
from typing import Any

from .ir.node import print_text

__all__ = [
    "ChangedWhileOpened",
    "NotARegularFile",
    "Untrusted",
    "atomic_write",
    "clean_stale_temps",
    "file_kind",
    "private_dir",
    "read_file",
    "read_private",
    "reset_state",
    "save",
    "warn_once",
    "write_file",
]

TMP_MARK = ".tirx-tmp-"
_TMP_RE = re.compile(r"^\..*\.tirx-tmp-(\d+)-[0-9a-f]{8}$", re.S)
STALE_DEAD_S = 60.0  # a temp file whose process is gone, older than this, is stale
STALE_ANY_S = 86400.0  # any temp file older than this is stale (pid reuse, other hosts)
_RESCAN_S = 60.0  # a directory is scanned for stale temp files at most this often
_SCANNED: dict[str, float] = {}
_WARNED: set[str] = set()
_LOCK = threading.Lock()


class Untrusted(Exception):
    """A file or directory that tirx refuses to read from (the message says why)."""


class ChangedWhileOpened(Untrusted):
    """The name was replaced by another regular file between its ``lstat`` and its
    ``open`` (an atomic write racing the read): not a trust problem; reading again may
    succeed (``tirx.runtime.cache`` retries, then counts a miss, silently)."""


class NotARegularFile(OSError, ValueError):
    """``save`` was given a path that is a FIFO, device, socket or directory. Both an
    ``OSError`` (``errno`` EISDIR or EINVAL, ``filename`` the refused path: tools report it
    like any file error) and a ``ValueError`` (the ``path`` argument is wrong)."""


def file_kind(mode: int) -> str:
    """'a FIFO', 'a directory', ... for an ``st_mode`` (for error messages)."""
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "a special file"


def warn_once(message: str, stacklevel: int = 3) -> None:
    """A ``RuntimeWarning``, once per process per message (a refused cache is not an error:
    tirx compiles without it, and says so once instead of on every compile)."""
    with _LOCK:
        if message in _WARNED:
            return
        _WARNED.add(message)
    warnings.warn(message, RuntimeWarning, stacklevel=stacklevel)


def reset_state() -> None:
    """Forget which warnings were given and which directories were scanned (tests)."""
    with _LOCK:
        _WARNED.clear()
        _SCANNED.clear()


# ------------------------------------------------------------------ trust checks
def _ownership_problem(st: os.stat_result, path: str) -> str | None:
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    if euid is not None and st.st_uid != euid:
        return f"{path} is owned by uid {st.st_uid}, not by the current user (uid {euid})"
    who = [w for bit, w in ((stat.S_IWGRP, "group"), (stat.S_IWOTH, "others")) if st.st_mode & bit]
    if who:
        return f"{path} is writable by {' and '.join(who)} (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def private_dir(path: str, create: bool) -> str | None:
    """Check (and with ``create``, make with mode 0o700) a directory only the current user can
    write. Returns the path, or None when it does not exist and ``create`` is false. Raises
    :class:`Untrusted` when it is not a directory, is another user's, or others can write it."""
    if create:
        os.makedirs(path, mode=0o700, exist_ok=True)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        raise Untrusted(f"{path} is {file_kind(st.st_mode)}, not a directory")
    why = _ownership_problem(st, path)
    if why is not None:
        raise Untrusted(why)
    return path


def read_private(path: str, limit: int) -> bytes | None:
    """The bytes of a cache file, or None when it does not exist. Never follows a symlink,
    never blocks on a FIFO or device, never reads more than ``limit`` bytes; raises
    :class:`Untrusted` for a file that is not a regular file of the current user that only
    the user can write, or that is larger than ``limit``."""
    try:
        lst = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(lst.st_mode):
        raise Untrusted(f"{path} is {file_kind(lst.st_mode)}, not a regular file")
    flags = os.O_RDONLY
    for name in ("O_NOFOLLOW", "O_NONBLOCK", "O_NOCTTY", "O_CLOEXEC", "O_BINARY"):
        flags |= getattr(os, name, 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EMLINK):
            raise Untrusted(f"{path} is a symbolic link, not a regular file") from None
        raise
    try:
        st = os.fstat(fd)  # what was opened, not what the name pointed to a moment before
        if not stat.S_ISREG(st.st_mode):
            raise Untrusted(
                f"{path} is {file_kind(st.st_mode)}, not a regular file (it changed while opened)"
            )
        if (st.st_dev, st.st_ino) != (lst.st_dev, lst.st_ino):
            raise ChangedWhileOpened(f"{path} was replaced while it was opened")
        why = _ownership_problem(st, path)
        if why is not None:
            raise Untrusted(why)
        if st.st_size > limit:
            raise Untrusted(f"{path} is larger than {limit} bytes")
        chunks: list[bytes] = []
        got = 0
        while got <= limit:
            b = os.read(fd, min(1 << 20, limit + 1 - got))
            if not b:
                break
            chunks.append(b)
            got += len(b)
        if got > limit:
            raise Untrusted(f"{path} is larger than {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _refuse(path: str, st: os.stat_result, why: str = "") -> NotARegularFile:
    code = errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL
    return NotARegularFile(code, f"not a regular file: it is {file_kind(st.st_mode)}{why}", path)


def read_file(path: Any) -> bytes:
    """The bytes of the regular file ``path`` (a symlink is followed). Opened without
    blocking, then checked with ``fstat``: a FIFO, device, socket or directory raises
    :class:`NotARegularFile` naming it instead of hanging the reader."""
    p = os.fspath(path)
    flags = os.O_RDONLY
    for name in ("O_NONBLOCK", "O_NOCTTY", "O_CLOEXEC", "O_BINARY"):
        flags |= getattr(os, name, 0)
    fd = os.open(p, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(os.fsdecode(p), st)
        chunks: list[bytes] = []
        while b := os.read(fd, 1 << 20):
            chunks.append(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


# ------------------------------------------------------------------ temporary files
def _pid_alive(pid: int) -> bool:
    if pid <= 0 or os.name != "posix":
        return pid > 0  # kill(0, ...) would mean the process group: never ask about it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, another user's
    except (OverflowError, OSError):
        return False
    return True


def clean_stale_temps(directory: str, force: bool = False) -> list[str]:
    """Remove the stale temporary files a killed tirx write left in ``directory`` (see the
    module docstring for which). Scans a directory at most once a minute per process unless
    ``force``. Returns the removed paths; never raises for an unreadable directory."""
    key = os.path.abspath(directory)
    now = time.monotonic()
    with _LOCK:
        last = _SCANNED.get(key)
        if not force and last is not None and now - last < _RESCAN_S:
            return []
        _SCANNED[key] = now
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    wall = time.time()
    removed: list[str] = []
    try:
        it = os.scandir(directory)
    except OSError:
        return removed
    with it:
        for ent in it:
            if TMP_MARK not in ent.name:
                continue
            m = _TMP_RE.match(ent.name)
            if m is None:
                continue
            try:
                st = ent.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode) or (euid is not None and st.st_uid != euid):
                continue
            age = wall - st.st_mtime
            if age > STALE_ANY_S or (age > STALE_DEAD_S and not _pid_alive(int(m.group(1)))):
                with contextlib.suppress(OSError):
                    os.unlink(ent.path)
                    removed.append(ent.path)
    return removed


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until all of ``data`` is written (a short write is not an error)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view[: 1 << 20]) :]


def temp_path(directory: str, base: str) -> str:
    """``<directory>/.<base>.tirx-tmp-<pid>-<8 hex>``: recognisable, so it can be cleaned."""
    return os.path.join(directory, f".{base}{TMP_MARK}{os.getpid()}-{secrets.token_hex(4)}")


def atomic_write(
    target: str,
    data: bytes,
    mode: int | None = None,
    like: os.stat_result | None = None,
    durable: bool = True,
) -> None:
    """Replace ``target`` with ``data`` atomically (temp file in the same directory, then
    ``os.replace``). Permissions: ``mode`` if given; else those of ``like`` (the file being
    replaced; its owner and group too where allowed); else 0o666 less the umask. ``durable``
    fsyncs the file before the rename and the directory after it. On any failure the old
    file is untouched and the temporary file removed."""
    directory = os.path.dirname(target) or "."
    clean_stale_temps(directory)
    tmp = temp_path(directory, os.path.basename(target))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    for name in ("O_NOFOLLOW", "O_CLOEXEC", "O_BINARY"):
        flags |= getattr(os, name, 0)
    try:
        fd = os.open(tmp, flags, 0o600 if mode is not None or like is not None else 0o666)
        try:
            _write_all(fd, data)
            if like is not None:
                mine = os.fstat(fd)
                if hasattr(os, "fchown") and (like.st_uid, like.st_gid) != (mine.st_uid, mine.st_gid):
                    with contextlib.suppress(OSError):  # only root may give a file away
                        os.fchown(fd, like.st_uid, like.st_gid)
                if mode is None:
                    mode = stat.S_IMODE(like.st_mode)
            if mode is not None:
                os.chmod(fd, mode)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.filename == tmp:
            e.filename = target  # the user named the target; the temporary name is noise
        raise
    if durable and hasattr(os, "O_DIRECTORY"):
        with contextlib.suppress(OSError):
            dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)


# ------------------------------------------------------------------ tirx.save
def _save_target(path: str) -> tuple[str, os.stat_result | None]:
    """Where ``save`` writes: ``path`` itself, or the file a symlink (chain) points to; and
    that file's stat when it exists. Refuses anything but a regular file."""
    target = path
    if os.path.islink(path):
        try:
            target = os.path.realpath(path, strict=True)
        except FileNotFoundError:
            target = os.path.realpath(path)  # a dangling link: create the file it names
        except OSError as e:
            raise NotARegularFile(
                e.errno or errno.EINVAL,
                f"a symbolic link that cannot be resolved ({e.strerror or e})",
                path,
            ) from e
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return target, None
    if not stat.S_ISREG(st.st_mode):
        via = f" (the target of the symlink {path!r})" if target != path else ""
        raise _refuse(target, st, f"; tirx does not replace it{via}")
    return target, st


def _write_device(path: str, data: bytes) -> bool:
    """Write ``data`` straight to ``path`` when it is a FIFO or character device (there is no
    file to replace atomically); False, having written nothing, when it is anything else."""
    special = (stat.S_ISFIFO, stat.S_ISCHR)
    try:
        st = os.stat(path)
    except OSError:
        return False
    if not any(t(st.st_mode) for t in special):
        return False
    flags = os.O_WRONLY
    for name in ("O_NOCTTY", "O_CLOEXEC", "O_BINARY"):
        flags |= getattr(os, name, 0)
    fd = os.open(path, flags)  # no O_CREAT / O_TRUNC: if the name changed, nothing is cut
    try:
        if not any(t(os.fstat(fd).st_mode) for t in special):
            return False  # replaced by a file since the stat: write it atomically instead
        _write_all(fd, data)
    finally:
        os.close(fd)
    return True


def write_file(path: Any, data: bytes, devices: bool = False) -> None:
    """Write ``data`` to ``path`` the way ``save`` does: through a symlink, atomically (a
    failed write leaves the old file as it was), keeping the replaced file's permissions;
    a directory, socket, ... raises :class:`NotARegularFile`. With ``devices``, an existing
    FIFO or character device (``-o /dev/null``) is written directly instead of refused."""
    p = os.fspath(path)
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    if devices and _write_device(p, data):
        return
    target, st = _save_target(p)
    atomic_write(target, data, like=st)


def save(obj: Any, path: Any) -> None:
    """Write ``tirx.dumps(obj)`` to ``path``: UTF-8, one trailing newline, atomic.

    A symlink is written through (its target is replaced; the link stays); a path that is a
    FIFO, device, socket or directory raises :class:`NotARegularFile` (``OSError`` and
    ``ValueError``) naming it, before anything is written. The replaced file
    keeps its permission bits; a new file gets 0o666 less the umask.
    """
    p = os.fspath(path)
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    target, st = _save_target(p)
    text = print_text(obj)  # the registered printer: tirx.printer.dumps
    if not text.endswith("\n"):
        text += "\n"
    atomic_write(target, text.encode("utf-8"), like=st)
