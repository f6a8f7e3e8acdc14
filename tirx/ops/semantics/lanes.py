"""The lane model op semantics share with the interpreter engine: broadcasting a value to
the lanes, the launch a device op needs, block barriers and the shared-memory race stamps.

``c`` is the engine's ``Ctx`` and ``L`` its ``Launch`` (tirx/interp/state.py), read by
attribute only: these live here, below the op declarations, so that an op's interpreter
semantics (``declare(interp=...)``) never imports the interpreter.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tirx.ir.types import PrimType
from tirx.ops.semantics.errors import BarrierError, InterpError, OutOfBoundsError
from tirx.ops.semantics.memory import BLOCK, Mem

__all__ = [
    "ATOMIC_TAG",
    "TAG_BASE",
    "RaceState",
    "block_barrier",
    "full",
    "need_launch",
    "race_arrays",
    "race_state",
    "remote_base",
    "stamps",
    "unit_base",
]


def full(x: np.ndarray, N: int) -> np.ndarray:
    """Broadcast a per-lane value (length 1 when uniform) to ``N`` lanes."""
    if x.shape[0] == N:
        return x
    return np.broadcast_to(x, (N, *x.shape[1:]))


def need_launch(c: Any, what: str) -> Any:
    """The launch of ``c``; ``T.{what}`` outside a device entry is an error."""
    if c.launch is None:
        raise InterpError(f"T.{what} used outside a device entry (host code has no threads)")
    return c.launch


# ----------------------------------------------------------------------------- addresses
def remote_base(c: Any, rank: np.ndarray, row: int) -> np.ndarray:
    """Per lane, the row offset of the block of cluster rank ``rank`` in the lane's cluster."""
    L = c.launch
    if L is None:
        raise InterpError("a distributed shared memory pointer used outside a device entry")
    cx, cy, cz = L.cluster
    gx, gy, _ = L.grid
    rank = np.asarray(rank, dtype=np.int64)
    if ((rank < 0) | (rank >= cx * cy * cz)).any():
        bad = int(np.flatnonzero((rank < 0) | (rank >= cx * cy * cz))[0]) if rank.shape[0] > 1 else 0
        raise OutOfBoundsError(
            f"distributed shared memory: rank {int(rank.reshape(-1)[bad])} outside a cluster of {cx * cy * cz} "
            f"blocks, by {c.describe(bad)}"
        )
    bx, by, bz = (L.get(f"b.{a}").astype(np.int64) for a in "xyz")
    tx = bx - bx % cx + rank % cx
    ty = by - by % cy + (rank // cx) % cy
    tz = bz - bz % cz + rank // (cx * cy)
    local = tx + ty * gx + tz * gx * gy - L.b0
    return local * row


def unit_base(c: Any, mem: Mem, units: int, row: int) -> np.ndarray:
    """Per lane, the offset of its row of a per-block or per-thread allocation."""
    L = c.launch
    if L is None or units == 1:
        return np.zeros(1, dtype=np.int64)
    key = ("ub", mem.per, row)
    a = L._cache.get(key)
    if a is None:
        u = L.get("bl") if mem.per == BLOCK else L.get("lane")
        a = L._cache[key] = u.astype(np.int64) * row
    return a


# ----------------------------------------------------------------------------- races
# Shared-memory accesses are stamped ``epoch * TAG_BASE + thread`` (epoch: barriers this
# block has passed); ATOMIC_TAG in place of the thread marks an atomic write.
TAG_BASE = 2048
ATOMIC_TAG = TAG_BASE - 1


class RaceState:
    """Stamps of one shared allocation (seen as one dtype) plus two shortcuts: ``dirty``
    (written since the last barrier every block took: else no read can race with a write)
    and ``full`` (every element has been written: no read can see uninitialized memory)."""

    __slots__ = ("dirty", "full", "rst", "wst")

    def __init__(self, n: int):
        self.wst = np.full(n, -1, dtype=np.int64)
        self.rst = np.full(n, -1, dtype=np.int64)
        self.dirty = False
        self.full = False

    def __iter__(self):
        return iter((self.wst, self.rst))


def race_state(mem: Mem, t: PrimType) -> RaceState:
    r = mem.races.get(t.base)
    if r is None:
        r = mem.races[t.base] = RaceState(mem.view(t).size)
    return r


def race_arrays(mem: Mem, t: PrimType):
    """(write stamps, read stamps) of ``mem`` seen as ``t``, for a caller that writes."""
    st = race_state(mem, t)
    st.dirty = True  # callers write
    st.full = False
    return st.wst, st.rst


def stamps(L: Any):
    """(per lane, its block's epoch base; its stamp) for the launch ``L`` (cached)."""
    st = L._cache.get("stamps")
    if st is None:
        base = L.epoch[L.get("bl")] * TAG_BASE
        st = L._cache["stamps"] = (base, base + L.get("tid"))
    return st


# ----------------------------------------------------------------------------- barriers
def block_barrier(c: Any, what: str) -> None:
    """A block barrier for ``what`` (the op, as the messages name it)."""
    L = c.launch
    if L is None:
        raise InterpError(f"{what}() outside a device entry")
    L._cache.pop("stamps", None)
    if c.count == c.N and L.alive is None:
        L.epoch += 1
        _clean(c)
        return
    per_block = c.mask.reshape(L.nb, L.T).sum(axis=1)
    alive = np.full(L.nb, L.T) if L.alive is None else L.alive.reshape(L.nb, L.T).sum(axis=1)
    partial = (per_block != 0) & (per_block != alive)
    if partial.any():
        b = int(np.flatnonzero(partial)[0])
        lanes = np.flatnonzero(c.mask.reshape(L.nb, L.T)[b])
        missing = np.flatnonzero(
            ~c.mask.reshape(L.nb, L.T)[b] & (True if L.alive is None else L.alive.reshape(L.nb, L.T)[b])
        )
        raise BarrierError(
            f"divergent barrier: {what}() reached by {int(per_block[b])} of the {int(alive[b])} threads of a block "
            f"(e.g. {L.describe(b * L.T + int(lanes[0]))} arrives, {L.describe(b * L.T + int(missing[0]))} does not)"
        )
    L.epoch += (per_block != 0).astype(np.int64)
    if (per_block != 0).all():
        _clean(c)


def _clean(c: Any) -> None:
    """Every block passed a barrier: no shared write is pending in any phase."""
    for mem in c.allocs.values():
        if mem.per == BLOCK:
            for rs in mem.races.values():
                rs.dirty = False
