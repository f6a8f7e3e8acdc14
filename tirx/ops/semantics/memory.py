"""Memory: allocations (global, per block, per thread) and pointer values."""

from __future__ import annotations

import numpy as np

from tirx.ir.types import PrimType
from tirx.ops.semantics.dtypes import storage_np

__all__ = ["Mem", "PtrVal"]

GLOBAL, BLOCK, THREAD = 0, 1, 2
_PER_NAME = {GLOBAL: "global", BLOCK: "shared", THREAD: "local"}


class Mem:
    """One allocation: ``data`` is a 2-D C-contiguous array (units, elements) — one row for
    global memory, one per block for shared memory, one per thread for local memory."""

    __slots__ = ("data", "name", "per", "races", "short", "views")

    def __init__(self, name: str, data: np.ndarray, per: int, short: int | None = None):
        self.name = name
        self.data = data
        self.per = per
        self.views: dict = {}
        self.races: dict = {}
        #: the bytes that exist where the buffer declares more (a ``shared.dyn`` buffer past the
        #: dynamic shared memory the launch gives): every access is checked against them, not
        #: against the shape; None: the whole buffer exists
        self.short = short

    @property
    def kind(self) -> str:
        return _PER_NAME[self.per]

    def view(self, t: PrimType) -> np.ndarray:
        """A 2-D view (units, n) of the raw storage as ``t``'s storage dtype."""
        key = t.base
        v = self.views.get(key)
        if v is None:
            dt = storage_np(t)
            if self.data.dtype == dt:
                v = self.data
            else:
                raw = self.data.view(np.uint8)
                usable = (raw.shape[1] // dt.itemsize) * dt.itemsize
                v = raw[:, :usable].view(dt)  # a view (never a copy): writes reach the memory
            self.views[key] = v
        return v

    def nbytes_row(self) -> int:
        return self.data.shape[1] * self.data.dtype.itemsize


class PtrVal:
    """A pointer value: an allocation plus a byte offset (an int, or one per lane).

    ``rank`` (None, or an int array per lane) makes a shared-memory pointer refer to the
    copy of the allocation in the block of that rank in the lane's cluster (``mapa``)."""

    __slots__ = ("mem", "off", "rank")

    def __init__(self, mem: Mem, off=0, rank=None):
        self.mem = mem
        self.off = off
        self.rank = rank

    def __repr__(self) -> str:
        return f"PtrVal({self.mem.name}, {self.off})"
