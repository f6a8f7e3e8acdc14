"""Interpreter semantics of the NVSHMEM ops (``tirx/ops/nvshmem.py``): one PE, or N PEs
simulated on the CPU.

Without a :class:`World`, a kernel runs as the only PE: ``my_pe() == 0``, ``n_pes() == 1``,
put/get to PE 0 copy between the two local pointers, ``barrier_all`` is a no-op, and a
``wait_until`` whose condition is false is an error (nothing else could ever change it).

``World(n)`` simulates n PEs: a symmetric heap per PE (``world.alloc`` gives one array per
PE at the same heap offset, as ``nvshmem_malloc`` does), and ``world.run(fn)`` calls
``fn(pe)`` on n threads, each the PE of the interpreted kernels it runs. A remote address is
the local one translated by its heap offset, as NVSHMEM translates symmetric addresses;
puts complete at once (so ``fence``/``quiet`` have nothing to wait for), ``barrier_all`` is a
barrier of the n threads and ``wait_until`` polls the local word until another PE's put or
signal makes it true (or ``timeout`` seconds pass: a deadlock error).

NVSHMEM's rules the interpreter checks: remote addresses must be symmetric (inside the
heap), a thread-scope ``barrier_all`` is called by one thread per PE, signal words are
8-byte aligned ``uint64``. Warp/block-scope calls make one transfer per warp/block with the
arguments of its first active thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from tirx.ir import deep
from tirx.ir.types import as_prim
from tirx.ops.semantics import InterpError, OutOfBoundsError, PtrVal, full, need_launch, pointer_elements

__all__ = ["World", "compile_op", "current"]

_U8 = as_prim("uint8")
_TLS = threading.local()
_ZERO = np.zeros(1, dtype=np.int32)
_NP_WAIT = {"uint64": np.uint64, "int64": np.int64, "uint32": np.uint32, "int32": np.int32}
_CMP = {
    "eq": np.equal,
    "ne": np.not_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "lt": np.less,
    "le": np.less_equal,
}

deep.carry(lambda: getattr(_TLS, "cur", None), lambda v: setattr(_TLS, "cur", v))


class World:
    """N PEs simulated on the CPU, each with a symmetric heap of ``heap_bytes`` bytes."""

    def __init__(self, n_pes: int, heap_bytes: int = 1 << 20, timeout: float = 10.0):
        if not isinstance(n_pes, int) or isinstance(n_pes, bool) or n_pes < 1:
            raise ValueError(f"World: n_pes must be a positive int, got {n_pes!r}")
        if not isinstance(heap_bytes, int) or heap_bytes < 1:
            raise ValueError(f"World: heap_bytes must be a positive int, got {heap_bytes!r}")
        self.n_pes = n_pes
        self.timeout = float(timeout)
        self.heaps = [np.zeros(heap_bytes, dtype=np.uint8) for _ in range(n_pes)]
        self._bases = [h.__array_interface__["data"][0] for h in self.heaps]
        self._top = 0
        self._barrier = threading.Barrier(n_pes)
        self._lock = threading.Lock()
        self._failed = False

    def alloc(self, shape: Any, dtype: Any = "float32") -> list[np.ndarray]:
        """One zeroed array per PE at the same heap offset (``nvshmem_malloc``)."""
        dt = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        off = -(-self._top // 256) * 256
        if off + n > self.heaps[0].size:
            raise ValueError(
                f"World.alloc: {n} bytes do not fit the {self.heaps[0].size}-byte symmetric heap"
            )
        self._top = off + n
        return [h[off : off + n].view(dt).reshape(shape) for h in self.heaps]

    def run(self, fn: Callable[[int], Any]) -> list[Any]:
        """``fn(pe)`` for every PE, concurrently (one thread each); their results by PE. The
        first PE's error (by PE number) is raised after all threads have stopped."""
        results: list[Any] = [None] * self.n_pes
        errors: list[BaseException | None] = [None] * self.n_pes
        self._failed = False
        self._barrier.reset()

        def work(pe: int) -> None:
            _TLS.cur = (self, pe)
            try:
                results[pe] = fn(pe)
            except BaseException as e:  # re-raised by run(), after every thread stopped
                errors[pe] = e
                self._failed = True
                self._barrier.abort()
            finally:
                _TLS.cur = None

        threads = [threading.Thread(target=work, args=(pe,), name=f"tirx-pe{pe}") for pe in range(self.n_pes)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        first = next((e for e in errors if e is not None and not isinstance(e, _PeerFailed)), None)
        first = first or next((e for e in errors if e is not None), None)
        if first is not None:
            raise first
        return results

    # ---- used by the ops
    def barrier(self, what: str) -> None:
        try:
            self._barrier.wait(self.timeout)
        except threading.BrokenBarrierError:
            if self._failed:
                raise _PeerFailed(f"{what}: another PE failed") from None
            raise InterpError(
                f"{what}: not every PE reached the barrier within {self.timeout:g} s (deadlock)"
            ) from None

    def heap_offset(self, pe: int, view: np.ndarray, what: str) -> int:
        addr = view.__array_interface__["data"][0]
        off = addr - self._bases[pe]
        if not (off >= 0 and off + view.size <= self.heaps[pe].size):
            raise InterpError(
                f"{what}: the remote address is not symmetric (not in the symmetric heap; allocate it with "
                f"World.alloc, as nvshmem_malloc on the GPU)"
            )
        return off


class _PeerFailed(InterpError):
    """A PE stopped because another one failed (the other's error is the one reported)."""


def current() -> tuple[World | None, int]:
    """(the simulated world, this thread's PE); (None, 0) outside ``World.run``."""
    cur = getattr(_TLS, "cur", None)
    return (None, 0) if cur is None else cur


# ----------------------------------------------------------------------------- memory
def _local(c: Any, p: Any, lane: int, nbytes: int, what: str) -> np.ndarray:
    """The bytes [p, p + nbytes) of ``lane``'s pointer ``p`` (a writable view)."""
    if not isinstance(p, PtrVal):
        raise InterpError(f"{what}: the address must be a pointer (an element address: buf.ptr_to([i]))")
    if nbytes < 0:
        raise InterpError(f"{what}: negative byte count {nbytes}")
    flat, idx = pointer_elements(c, p, _U8, what)
    start = int(idx[lane])
    row = p.mem.view(_U8).shape[1]
    if start + nbytes > (start // row + 1) * row:
        raise OutOfBoundsError(
            f"{what}: {nbytes} bytes at byte {start % row} run past the end of {p.mem.kind} buffer {p.mem.name} "
            f"({row} bytes) for {c.describe(lane)}"
        )
    return flat[start : start + nbytes]


def _remote(c: Any, p: Any, lane: int, nbytes: int, pe: int, what: str) -> np.ndarray:
    """The bytes at the symmetric address ``p`` on PE ``pe``."""
    world, me = current()
    n = 1 if world is None else world.n_pes
    if not 0 <= pe < n:
        more = "" if world is not None else " (simulate more PEs with tirx.interp.nvshmem.World)"
        raise InterpError(
            f"{what}: PE {pe} does not exist: there {'is' if n == 1 else 'are'} {n} PE(s){more}"
        )
    mine = _local(c, p, lane, nbytes, what)
    if world is None:
        return mine
    off = world.heap_offset(me, mine, what)
    return world.heaps[pe][off : off + nbytes]


# ----------------------------------------------------------------------------- ops
def _groups(c: Any, scope: str) -> np.ndarray:
    """The lanes that act: every active lane, or the first active lane of each warp/block."""
    lanes = np.flatnonzero(c.mask)
    if scope == "thread" or lanes.size == 0:
        return lanes
    L = c.launch
    bl = L.get("bl")[lanes].astype(np.int64)
    key = bl if scope == "block" else bl * (L.T // 32 + 1) + L.get("tid")[lanes] // 32
    _, first = np.unique(key, return_index=True)
    return lanes[np.sort(first)]


def _signal(c: Any, p: Any, lane: int, value: int, op: str, pe: int, what: str) -> None:
    world, _ = current()
    word = _remote(c, p, lane, 8, pe, what)
    if word.__array_interface__["data"][0] % 8:
        raise InterpError(f"{what}: the signal address is not 8-byte aligned")
    w = word.view(np.uint64)
    v = np.uint64(value & 0xFFFFFFFFFFFFFFFF)
    lock = world._lock if world is not None else threading.Lock()
    with lock:
        w[0] = v if op == "set" else w[0] + v


def compile_op(kind: str, scope: str, fc: Any, call: Any, wait_dtype: str = "uint64") -> Callable:
    """The evaluator of one NVSHMEM op call (``declare(interp=...)`` in tirx/ops/nvshmem.py;
    ``wait_dtype``: the dtype of ``wait_until``'s word)."""
    name = call.op.name
    what = f"T.{name}"
    args = [
        fc.expr(a) if not hasattr(a, "value") or not isinstance(a.value, str) else None for a in call.args
    ]
    lits = [a.value if args[i] is None else None for i, a in enumerate(call.args)]

    def ex(i: int) -> Callable[[Any], Any]:
        """The evaluator of argument ``i``, an expression by the op's argument kinds."""
        f = args[i]
        assert f is not None  # tirx/ops/nvshmem.py declares argument i an expression
        return f

    def lit(i: int) -> str:
        """The value of argument ``i``, a string literal by the op's argument kinds."""
        v = lits[i]
        assert v is not None  # tirx/ops/nvshmem.py declares argument i a string literal
        return v

    def ints(c: Any, i: int) -> np.ndarray:
        return full(np.asarray(ex(i)(c)), c.N).astype(np.int64)

    if kind in ("my_pe", "n_pes"):

        def ev_pe(c: Any) -> np.ndarray:
            need_launch(c, name)
            world, me = current()
            v = me if kind == "my_pe" else (1 if world is None else world.n_pes)
            return np.full(1, v, dtype=np.int32)

        return ev_pe

    if kind == "fence":

        def ev_fence(c: Any) -> np.ndarray:
            need_launch(c, name)  # puts complete at once on the CPU: nothing to order or wait for
            return _ZERO

        return ev_fence

    if kind == "barrier_all":

        def ev_barrier(c: Any) -> np.ndarray:
            need_launch(c, name)
            k = int(c.mask.sum())
            if k == 0:
                return _ZERO
            if k > 1:
                raise InterpError(
                    f"{what}: called by {k} threads of one PE at once; NVSHMEM's barrier_all is called by one "
                    f"thread per PE (guard it, e.g. `if tid == 0:`)"
                )
            world, _ = current()
            if world is not None:
                world.barrier(what)
            return _ZERO

        return ev_barrier

    if kind in ("get", "put", "put_signal"):

        def ev_rma(c: Any) -> np.ndarray:
            need_launch(c, name)
            lanes = _groups(c, scope)
            if lanes.size == 0:
                return _ZERO
            dst, src = ex(0)(c), ex(1)(c)
            nb = ints(c, 2)
            pe = ints(c, 3 if kind != "put_signal" else 6)
            for lane in lanes.tolist():
                n, q = int(nb[lane]), int(pe[lane])
                if kind == "get":
                    _local(c, dst, lane, n, what)[:] = _remote(c, src, lane, n, q, what).copy()
                else:
                    _remote(c, dst, lane, n, q, what)[:] = _local(c, src, lane, n, what).copy()
                if kind == "put_signal":
                    sig = int(full(np.asarray(ex(4)(c)), c.N)[lane])
                    _signal(c, ex(3)(c), lane, sig, lit(5), q, what)
            return _ZERO

        return ev_rma

    if kind == "signal_op":

        def ev_signal(c: Any) -> np.ndarray:
            need_launch(c, name)
            lanes = np.flatnonzero(c.mask)
            if lanes.size == 0:
                return _ZERO
            p, v, pe = ex(0)(c), full(np.asarray(ex(1)(c)), c.N), ints(c, 3)
            for lane in lanes.tolist():
                _signal(c, p, lane, int(v[lane]), lit(2), int(pe[lane]), what)
            return _ZERO

        return ev_signal

    if kind == "wait_until":
        npt = np.dtype(_NP_WAIT[wait_dtype])
        cmp = _CMP[lit(1)]

        def ev_wait(c: Any) -> np.ndarray:
            need_launch(c, name)
            lanes = np.flatnonzero(c.mask)
            if lanes.size == 0:
                return _ZERO
            p, want = ex(0)(c), full(np.asarray(ex(2)(c)), c.N)
            world, _ = current()
            for lane in lanes.tolist():
                word = _local(c, p, lane, npt.itemsize, what).view(npt)
                target = np.asarray(want[lane]).astype(npt)
                deadline = None
                while not cmp(word[0], target):
                    if world is None:
                        raise InterpError(
                            f"{what}: waits forever: the word is {word[0]} and no other PE can change it "
                            f"(one PE; simulate several with tirx.interp.nvshmem.World)"
                        )
                    if world._failed:
                        raise _PeerFailed(f"{what}: another PE failed")
                    now = time.monotonic()
                    deadline = deadline or now + world.timeout
                    if now > deadline:
                        raise InterpError(
                            f"{what}: the word stayed {word[0]} (waiting for {lit(1)} {target}) for "
                            f"{world.timeout:g} s (deadlock)"
                        )
                    time.sleep(0.0005)
            return _ZERO

        return ev_wait

    raise InterpError(f"{what}: no interpreter semantics ({kind})")
