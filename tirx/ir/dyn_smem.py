"""Where each ``shared.dyn`` allocation of a device entry lies in the kernel's one dynamic
shared-memory window, and how many bytes that window needs.

One rule for three readers: the CUDA codegen places the allocations at these offsets, the
launcher asks the driver for ``total`` bytes when the launch gives no ``dynamic_smem_bytes``
(TIRx infers the size the same way), and the interpreter checks every access against the bytes
the launch gives, so a kernel launched with too little dynamic shared memory is an
out-of-bounds access there, not a fault (or silently wrong memory) on the GPU only.
"""

from __future__ import annotations

from typing import Any

import attrs

from .expr import IntImm
from .stmt import AllocBuffer
from .types import PointerType, PrimType
from .visitor import post_order

__all__ = ["DynSmem", "dyn_smem_layout"]


@attrs.frozen
class DynSmem:
    """``offsets``: each ``shared.dyn`` AllocBuffer (by identity) -> its byte offset;
    ``total``: the bytes the window needs (a multiple of 16), ``None`` when an allocation's size
    is not constant (``unsized`` names it)."""

    offsets: dict
    total: int | None
    unsized: str | None = None
    align: int = 16  # the window's alignment: the largest a tensor in it asks for (at least 16)


def element_bytes(buf: Any) -> int:
    """The bytes of one element as the kernel addresses it (the pointer's element type)."""
    el = buf.data.ty.element if isinstance(buf.data.ty, PointerType) else buf.dtype
    return el.bytes if isinstance(el, PrimType) else buf.dtype.bytes


def dyn_smem_layout(body: Any) -> DynSmem:
    """The layout of ``body``'s ``shared.dyn`` allocations, in program order: each starts at the
    first offset aligned to its element's size, or to the alignment the tensor asks for
    (``T.alloc_shared(..., align=1024)``: a TMA box with a 128-byte swizzle), after the previous
    one (rounded up to 16 bytes); the window is aligned to the largest such alignment. An allocation after one whose size is not constant has no offset: a ValueError
    naming both (placing it at the unsized one's start would overlap them)."""
    offsets: dict = {}
    off = 0
    align = 16
    unsized: str | None = None
    for n in post_order(body):
        if not isinstance(n, AllocBuffer) or n.buffer.scope != "shared.dyn":
            continue
        buf = n.buffer
        if unsized is not None:
            raise ValueError(
                f"shared.dyn allocation {buf.name} follows {unsized}, whose size is not constant: "
                "its offset in the dynamic shared-memory window is unknown (allocate the sized "
                "buffers first, or one window and views of it)"
            )
        eb = element_bytes(buf)
        a = max(eb, buf.align or 1)
        align = max(align, buf.align or 1)
        if a > 1 and off % a:
            off += a - off % a
        offsets[id(n)] = off
        size = 1
        for d in buf.shape:
            if not isinstance(d, IntImm):
                unsized = buf.name
                break
            size *= d.value
        if unsized is None:
            off = (off + size * eb + 15) // 16 * 16
    return DynSmem(offsets, None if unsized is not None else off, unsized, align)
