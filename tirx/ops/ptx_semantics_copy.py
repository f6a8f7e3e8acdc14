"""CPU semantics of the PTX table's ``cp.async.{ca,cg}`` rows and their groups.

The interpreter runs a block's threads in lockstep and has no asynchronous copy engine, so a
``cp.async`` copies its bytes when it is issued and ``commit_group`` / ``wait_group N`` /
``wait_all`` do nothing: a valid schedule of the hardware's (the copy is only observed after a
wait and a barrier). ``src-size`` (at most the copy's size: a larger one is undefined in PTX and refused)
zero-fills the bytes past it without reading them, and a
true ``ignore-src`` predicate copies zeros; both addresses must be aligned to the copy's
size (``MisalignedError`` where the GPU faults); the legacy ``T.s_tir.cp_async_raw`` has the same
model (tirx/ops/cuda_legacy.py). A raw 32-bit shared address (not ``cvta`` of a pointer) is
refused, as for ``ld`` / ``st``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .ptx_table import register_row_semantics

__all__: list[str] = []

_COPIES = {f"cp_async_{cop}{tail}" for cop in ("ca", "cg") for tail in ("", "_src_size", "_ignore_src")}
_GROUPS = {"cp_async_commit_group", "cp_async_wait_group", "cp_async_wait_all"}


def _copy_interp(fc: Any, call: Any) -> Callable:
    import numpy as np

    from ..ir.types import as_type
    from .ptx_semantics import _address, _Call, _offset
    from .semantics import full, need_launch, pointer_elements, shared_written
    from .semantics.errors import InterpError, MisalignedError

    cl = _Call(call)
    ops = {n: e for n, e, kind, tok in cl.ops}
    fdst, fsrc = _address(fc, ops["dst_mem"]), _address(fc, ops["src_mem"])
    n = int(ops["cp_size"].value)
    fsize = fc.expr(ops["src_size"]) if "src_size" in ops else None
    fignore = fc.expr(ops["ignore_src"]) if "ignore_src" in ops else None
    u8 = as_type("uint8")
    what = cl.what

    def aligned(c, p, side: str) -> None:
        off = full(np.asarray(p.off, dtype=np.int64).reshape(-1), c.N)
        bad = c.mask & (off % n != 0)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise MisalignedError(
                f"{what}: the {side} address (byte {int(off[k])} of buffer {p.mem.name}) is not "
                f"{n}-byte aligned (the GPU faults with 'misaligned address'), by {c.describe(k)}"
            )

    def ev(c):
        need_launch(c, what)
        dst, src = fdst(c), fsrc(c)
        aligned(c, dst, "shared")
        aligned(c, src, "global")
        size = np.full(c.N, n, dtype=np.int64)
        if fsize is not None:
            size = full(np.asarray(fsize(c), dtype=np.int64), c.N)
            over = c.mask & (size > n)
            if over.any():  # PTX leaves it undefined (an H100 copies nothing then)
                k = int(np.flatnonzero(over)[0])
                raise InterpError(
                    f"{what}: src-size {int(size[k])} is larger than the copy's {n} bytes (undefined in "
                    f"PTX), by {c.describe(k)}"
                )
        if fignore is not None:
            size = np.where(full(np.asarray(fignore(c)).astype(bool), c.N), 0, size)
        mask, count = c.mask, c.count
        for k in range(n):
            dv, di = pointer_elements(c, _offset(dst, k), u8, what)
            byte = np.zeros(c.N, dtype=dv.dtype)
            reads = mask & (size > k)
            if reads.any():
                try:  # only the lanes that read this byte are checked against the source
                    c.set_mask(reads)
                    sv, si = pointer_elements(c, _offset(src, k), u8, what)
                finally:
                    c.set_mask(mask, count)
                byte[reads] = sv[si[reads]]
            dv[di[mask]] = byte[mask]
            shared_written(c, dst.mem, u8, di, overlapping=True)
        return np.zeros(1, dtype=np.int32)

    return ev


def interp_for(row_name: str) -> Callable | None:
    if row_name in _COPIES:
        return _copy_interp
    if row_name in _GROUPS:  # no effect on a lockstep run, but only inside a launch
        from .cuda import _i_in_launch

        return _i_in_launch
    return None


register_row_semantics(interp_for)
