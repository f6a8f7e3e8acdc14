"""Running recursive traversals over deeply nested IR.

Every traversal in tirx (printer, structural equality and hash, verifier, passes, codegen,
interpreter, both front ends) is plain recursion over the tree: that is the fastest form
for the IR people write, whose depth is a few dozen levels. But depth is data-dependent:
``sum(A[j] for j in range(3000))`` or a 10,000-term chain in a ``.tirx`` file is legal IR
a few thousand levels deep, past Python's default recursion limit of 1000.

Rather than rewrite every traversal as an explicit-stack loop, tirx runs the deep cases on
a worker thread with a large stack (512 MiB of address space, committed only as touched)
and a raised recursion limit. Two ways in:

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
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["STACK_BYTES", "NestingTooDeep", "active", "call", "carry", "carry_stack", "run"]

R = TypeVar("R")

STACK_BYTES = 512 * 1024 * 1024
RECURSION_LIMIT = 1_000_000

_state = threading.local()
_lock = threading.Lock()
_carriers: list[tuple[Callable[[], Any], Callable[[Any], None]]] = []


class NestingTooDeep(ValueError):
    """The IR (or text) is nested more deeply than tirx can traverse, even on the
    large-stack worker."""


def active() -> bool:
    """True on the large-stack worker thread (a RecursionError there is final)."""
    return getattr(_state, "deep", False)


def carry(capture: Callable[[], Any], restore: Callable[[Any], None]) -> None:
    """Register thread-local state to copy into the worker: ``restore(capture())`` runs
    on the worker before the job."""
    _carriers.append((capture, restore))


def carry_stack(local: threading.local, attr: str = "stack") -> None:
    """Carry a thread-local list (a builder or context stack) to the worker as a copy of
    the list holding the same objects (the caller's thread waits while the worker runs)."""

    def capture() -> list | None:
        v = getattr(local, attr, None)
        return None if v is None else list(v)

    def restore(v: list | None) -> None:
        if v is not None:
            setattr(local, attr, v)

    carry(capture, restore)


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


def run(fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """Run ``fn`` on the large-stack worker thread (directly if already there)."""
    if active():
        return fn(*args, **kwargs)
    carried = [(restore, capture()) for capture, restore in _carriers]
    box: list[Any] = []

    def work() -> None:
        _state.deep = True
        try:
            for restore, value in carried:
                restore(value)
            box.append((True, fn(*args, **kwargs)))
        except RecursionError as e:
            err = NestingTooDeep(
                "the IR is nested too deeply for tirx to traverse "
                f"(deeper than Python's recursion limit of {RECURSION_LIMIT} allows)"
            )
            err.__cause__ = e
            box.append((False, err))
        except BaseException as e:  # re-raised on the caller's thread
            box.append((False, e))

    # Stack size and recursion limit are process-wide settings: one deep job at a time.
    with _lock:
        old_limit = sys.getrecursionlimit()
        old_size = threading.stack_size()
        try:
            try:
                threading.stack_size(STACK_BYTES)
            except (ValueError, RuntimeError):  # pragma: no cover - platform limits
                threading.stack_size(64 * 1024 * 1024)
            sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))
            worker = threading.Thread(target=work, name="tirx-deep", daemon=True)
            worker.start()
            threading.stack_size(old_size)
            worker.join()
        finally:
            threading.stack_size(old_size)
            sys.setrecursionlimit(old_limit)
    ok, value = box[0]
    if ok:
        return value
    raise value
