"""Running recursive traversals over deeply nested IR.

Every traversal in tirx (printer, structural equality and hash, verifier, passes, codegen,
interpreter, both front ends) is plain recursion over the tree: that is the fastest form
for the IR people write, whose depth is a few dozen levels. But depth is data-dependent:
``sum(A[j] for j in range(3000))`` or a 10,000-term chain in a ``.tirx`` file is legal IR
a few thousand levels deep, past Python's default recursion limit of 1000.

Rather than rewrite every traversal as an explicit-stack loop, tirx runs the deep cases on
one long-lived worker thread with a large stack (512 MiB of address space, committed only
as touched, created once) and a recursion limit of its own. Two ways in:

- ``call(fn, *args)`` for traversals *without side effects* (printing, comparing, hashing,
  verifying, running a pass, generating code, parsing text): run ``fn`` on the caller's
  thread and, only if it raises ``RecursionError``, run it again on the worker. Shallow IR
  pays nothing.
- ``run(fn, *args)`` runs ``fn`` on the worker unconditionally (for work that must not run
  twice, such as executing a kernel, once it is known to be deep).

Inside the worker a ``RecursionError`` means the IR is deeper than even the worker can
take (hundreds of thousands of levels); it becomes ``NestingTooDeep``, a ``ValueError``
with a message, never a bare ``RecursionError``. Code that turns ``RecursionError`` into
its own diagnostic must re-raise it unchanged when ``active()`` is False, so ``call`` can
retry.

Thread-local state that a traversal reads (the pass context stack) is carried to the
worker by functions registered with ``carry``.

Only the worker gets the high limit. ``sys.setrecursionlimit`` is process-wide: raising
it while a deep job runs would let every other thread recurse a million levels on its
normal 8 MiB stack and crash the process (a segfault) instead of raising RecursionError.
So the process-wide limit is left alone; the worker shifts its own thread state's
recursion counter instead (CPython keeps one per thread: the remaining depth from 3.11,
the depth in 3.10; only that counter is compared with the process-wide limit). The counter
is located by watching it change by one per call, and the result is verified by a probe
recursion past the normal limit (checked on CPython 3.10 to 3.13); an interpreter where that fails (another implementation or layout) falls back to
raising the process-wide limit while each job runs (``OWN_LIMIT`` tells which).
"""

from __future__ import annotations

import ctypes
import os
import queue
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["STACK_BYTES", "NestingTooDeep", "active", "call", "carry", "carry_stack", "run"]

R = TypeVar("R")

STACK_BYTES = 512 * 1024 * 1024
RECURSION_LIMIT = 1_000_000

_state = threading.local()
_lock = threading.Lock()  # starting the worker
_global_limit = threading.Lock()  # the fallback: one job at a time under the raised limit
_carriers: list[tuple[Callable[[], Any], Callable[[Any], None], Callable[[], None] | None]] = []
_jobs: queue.SimpleQueue = queue.SimpleQueue()
_worker: threading.Thread | None = None
#: whether the worker has a recursion limit of its own (None: no worker yet); False: each
#: deep job raises the process-wide limit while it runs (other threads are then exposed)
OWN_LIMIT: bool | None = None


class NestingTooDeep(ValueError):
    """The IR (or text) is nested more deeply than tirx can traverse, even on the
    large-stack worker."""


def active() -> bool:
    """True on the large-stack worker thread (a RecursionError there is final)."""
    return getattr(_state, "deep", False)


def carry(
    capture: Callable[[], Any], restore: Callable[[Any], None], clear: Callable[[], None] | None = None
) -> None:
    """Register thread-local state to copy into the worker: ``restore(capture())`` runs
    on the worker before the job, ``clear()`` (if given) after it (the worker outlives the
    job: its state must not leak into the next one)."""
    _carriers.append((capture, restore, clear))


def carry_stack(local: threading.local, attr: str = "stack") -> None:
    """Carry a thread-local list (a builder or context stack) to the worker as a copy of
    the list holding the same objects (the caller's thread waits while the worker runs)."""

    def capture() -> list | None:
        v = getattr(local, attr, None)
        return None if v is None else list(v)

    def restore(v: list | None) -> None:
        if v is None:
            clear()
        else:
            setattr(local, attr, v)

    def clear() -> None:
        if hasattr(local, attr):
            delattr(local, attr)

    carry(capture, restore, clear)


def call(fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """Run a side-effect-free traversal; retry it on the large-stack worker if it recurses
    too deeply on this thread."""
    if active():
        return fn(*args, **kwargs)
    try:
        return fn(*args, **kwargs)
    except RecursionError:
        pass
    return run(fn, *args, **kwargs)


def _own_limit(extra: int) -> bool:
    """Let the calling thread recurse ``extra`` levels deeper than the process-wide limit,
    leaving that limit, and every other thread's, as they are. False (nothing changed)
    where the interpreter's per-thread counter cannot be found and verified.

    CPython keeps the count in the thread state, after its prev/next/interp pointers: from
    3.11 a remaining-depth counter followed by the limit it was set from (one less per call:
    raise it), in 3.10 the depth itself (one more per call: lower it)."""
    if sys.implementation.name != "cpython":
        return False
    try:
        get = ctypes.pythonapi.PyThreadState_Get
        get.restype, get.argtypes = ctypes.c_void_p, []
        start = get() + 3 * ctypes.sizeof(ctypes.c_void_p)

        def ints() -> list[int]:
            return [ctypes.c_int.from_address(start + 4 * i).value for i in range(8)]

        def one_deeper() -> list[list[int]]:
            return [ints(), two_deeper()]

        def two_deeper() -> list[int]:
            return ints()

        here = ints()
        d1, d2 = one_deeper()
        limit = sys.getrecursionlimit()
        found = []
        for i in range(7):
            steps = (here[i] - d1[i], d1[i] - d2[i])
            if steps == (1, 1) and here[i + 1] == d1[i + 1] == d2[i + 1] == limit and 0 < here[i] <= limit:
                found.append((i, extra))  # remaining (3.11+): more room
            elif steps == (-1, -1) and sys.version_info < (3, 11) and 0 < here[i] < limit:
                found.append((i, -extra))  # depth (3.10): counted from further down
        if len(found) != 1:
            return False
        i, delta = found[0]
        field = ctypes.c_int.from_address(start + 4 * i)
        if not -(2**31) < field.value + delta < 2**31:
            return False
        field.value += delta
    except (AttributeError, OSError, ValueError, TypeError):  # pragma: no cover - no ctypes API
        return False

    def down(n: int) -> int:
        return 0 if n == 0 else 1 + down(n - 1)

    try:  # the counter really is this thread's allowance: past the shared limit, no error
        down(sys.getrecursionlimit() + 100)
    except RecursionError:
        field.value -= delta
        return False
    return True


def _serve() -> None:
    """The worker's loop: one job at a time, for the life of the process."""
    global OWN_LIMIT
    _state.deep = True
    try:
        OWN_LIMIT = _own_limit(RECURSION_LIMIT)
    finally:
        _started.set()
    while True:
        job = _jobs.get()
        job()


_started = threading.Event()


def _start_worker() -> None:
    global _worker
    with _lock:
        if _worker is not None:
            return
        # threading.stack_size is process-wide too: set only while this one thread starts
        old_size = threading.stack_size()
        try:
            try:
                threading.stack_size(STACK_BYTES)
            except (ValueError, RuntimeError):  # pragma: no cover - platform limits
                threading.stack_size(64 * 1024 * 1024)
            w = threading.Thread(target=_serve, name="tirx-deep", daemon=True)
            w.start()
        finally:
            threading.stack_size(old_size)
        _worker = w
    _started.wait()


def _forget_worker() -> None:
    """In a forked child: the worker thread was not copied; the next deep job starts one."""
    global _worker, _jobs, _started, _lock, _global_limit, OWN_LIMIT
    _worker, OWN_LIMIT = None, None
    _jobs, _started = queue.SimpleQueue(), threading.Event()
    _lock, _global_limit = threading.Lock(), threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_worker)


def run(fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """Run ``fn`` on the large-stack worker thread (directly if already there)."""
    if active():
        return fn(*args, **kwargs)
    _start_worker()
    carried = [(restore, clear, capture()) for capture, restore, clear in _carriers]
    box: list[Any] = []
    done = threading.Event()

    def job() -> None:
        try:
            for restore, _clear, value in carried:
                restore(value)
            box.append((True, fn(*args, **kwargs)))
        except RecursionError as e:
            err = NestingTooDeep(
                "the IR is nested too deeply for tirx to traverse "
                f"(deeper than a recursion limit of {RECURSION_LIMIT} allows)"
            )
            err.__cause__ = e
            box.append((False, err))
        except BaseException as e:  # re-raised on the caller's thread
            box.append((False, e))
        finally:
            for _restore, clear, _value in carried:
                if clear is not None:
                    clear()
            done.set()

    if OWN_LIMIT:
        _jobs.put(job)
        done.wait()
    else:  # fallback: the process-wide limit, raised for this one job
        with _global_limit:
            old_limit = sys.getrecursionlimit()
            try:
                sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))
                _jobs.put(job)
                done.wait()
            finally:
                sys.setrecursionlimit(old_limit)
    ok, value = box[0]
    if ok:
        return value
    raise value
