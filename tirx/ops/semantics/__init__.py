"""What op implementations (``declare(interp=...)`` in ``tirx/ops``) are written against.

An interpreter implementation is ``impl(fc, call) -> ev``: ``fc`` compiles the call's
arguments (``fc.expr(arg)`` gives an evaluator), ``ev(ctx)`` returns one value per lane (a
numpy array, or a ``PtrVal``). This package holds what such code needs: the numpy forms of
dtypes (``dtypes``, ``nan``), memory and pointer values (``memory``), the errors, the lane
model (``lanes``: barriers, race stamps) and the NVSHMEM simulation (``nvshmem``). It sits
below the op declarations, and the interpreter (tirx/interp) builds on it; the op files
import it lazily (``import tirx`` must not import numpy).
"""

from __future__ import annotations

from tirx.ir.types import as_prim
from tirx.ops.semantics import dtypes
from tirx.ops.semantics.errors import InterpError, OutOfBoundsError, RaceError
from tirx.ops.semantics.lanes import (
    ATOMIC_TAG,
    TAG_BASE,
    block_barrier,
    full,
    need_launch,
    race_arrays,
    remote_base,
    stamps,
    unit_base,
)
from tirx.ops.semantics.memory import BLOCK, GLOBAL, THREAD, PtrVal


def require_true(c, cond, message: str) -> None:
    """Raise ``InterpError`` naming the first active thread where ``cond`` is false:
    ``{thread}`` in ``message`` is replaced by that thread (assumptions, traps)."""
    import numpy as np

    bad = c.mask & ~full(cond, c.N).astype(bool)
    if bad.any():
        raise InterpError(message.format(thread=c.describe(int(np.flatnonzero(bad)[0]))))


def element_writer(fc, load):
    """``write(c, value)`` storing a per-lane value into the buffer element ``load`` (a
    ``BufferLoad``: ``y[0]``, a ``T.local_scalar``) for the active lanes, as a
    ``BufferStore`` of it would (bounds, races, storage rounding): how instructions that
    write their results through operands (``T.ptx.add.u32(y[0], a, b)``) give them back."""
    from tirx.ir.expr import Var
    from tirx.ir.stmt import BufferStore

    slot = Var("tirx_out", load.buffer.dtype)
    store = fc.stmt(BufferStore(load.buffer, slot, load.indices))

    def write(c, value) -> None:
        c.env[slot] = value
        try:
            store(c)
        finally:
            c.env.pop(slot, None)

    return write


def pointer_elements(c, p, t, what: str):
    """(the flat storage view of ``p``'s allocation as dtype ``t``, the element index per
    lane) for an access of one ``t`` at the pointer value ``p`` (a ``PtrVal``); an access
    outside the allocation (active lanes) is an ``OutOfBoundsError``."""
    import numpy as np

    if not isinstance(p, PtrVal):
        raise InterpError(f"{what}: the address must be a pointer (buf.ptr_to([i]))")
    mem = p.mem
    view = mem.view(t)
    row = view.shape[1]
    size = dtypes.storage_np(t).itemsize
    off = np.asarray(p.off, dtype=np.int64).reshape(-1)
    flat = full(off // size, c.N)
    bad = c.mask & ((flat < 0) | (flat >= row) | (full(off % size, c.N) != 0))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise OutOfBoundsError(
            f"{what}: access of {t} on {mem.kind} buffer {mem.name} at byte {int(full(off, c.N)[k])} "
            f"(outside it or misaligned) by {c.describe(k)}"
        )
    flat = np.where(c.mask, flat, 0)
    if mem.per == GLOBAL:
        return view.reshape(-1), flat
    if p.rank is not None:
        return view.reshape(-1), flat + remote_base(c, p.rank, row)
    if mem.per == THREAD and view.shape[0] != c.N:
        return view.reshape(-1), flat
    return view.reshape(-1), flat + unit_base(c, mem, view.shape[0], row)


def shared_written(c, mem, t, idx, overlapping: bool = False) -> None:
    """Mark shared elements (``idx``: the flat indices of ``pointer_elements``) written by
    the active lanes, for the race checker, under every dtype of ``t``'s width (a buffer
    read back as float32 after a ``.b32`` store); ``overlapping``: also every wider element
    holding them (a copy written byte by byte, then read as float16 or float32)."""
    import numpy as np

    if not c.prog.check_races or mem.per != BLOCK or c.launch is None:
        return
    _, mine = stamps(c.launch)
    act = c.mask
    size = dtypes.storage_np(t).itemsize
    who = full(mine, c.N)[act]
    at = np.asarray(idx)[act]
    for base in ("int8", "uint8", "int16", "uint16", "float16", "bfloat16", "int32", "uint32", "float32",
                 "int64", "uint64", "float64"):  # fmt: skip
        ty = as_prim(base)
        width = dtypes.storage_np(ty).itemsize
        if width == size:
            wst, _ = race_arrays(mem, ty)
            wst[at] = who
        elif overlapping and width > size and mem.view(ty).shape[1] * width == mem.view(t).shape[1] * size:
            wst, _ = race_arrays(mem, ty)
            wst[at * size // width] = who


def shared_unwritten(c, mem, t, idx) -> int | None:
    """The first active lane whose shared element (``idx`` as in ``pointer_elements``) no
    thread wrote under any dtype of ``t``'s width, else None (race checks on)."""
    import numpy as np

    if not c.prog.check_races or mem.per != BLOCK or c.launch is None:
        return None
    size = dtypes.storage_np(t).itemsize
    idx = np.asarray(idx)
    written = np.zeros(idx.shape, dtype=bool)
    for base, rs in mem.races.items():
        if dtypes.storage_np(as_prim(base)).itemsize == size:
            written |= rs.wst[idx] >= 0
    bad = c.mask & ~written
    return int(np.flatnonzero(bad)[0]) if bad.any() else None


__all__ = [
    "ATOMIC_TAG",
    "BLOCK",
    "GLOBAL",
    "TAG_BASE",
    "InterpError",
    "OutOfBoundsError",
    "PtrVal",
    "RaceError",
    "block_barrier",
    "dtypes",
    "element_writer",
    "full",
    "need_launch",
    "pointer_elements",
    "race_arrays",
    "require_true",
    "shared_unwritten",
    "shared_written",
]
