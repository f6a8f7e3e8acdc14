"""``SMEMPool``: carve tensors out of one dynamic shared-memory window.

A pool made with no argument allocates a zero-sized ``uint8`` tensor in ``shared.dyn`` (the
kernel's dynamic shared memory: every such allocation starts at the window's base) and hands
out views of it, ``T.decl_tensor(T.ptr_byte_offset(base, offset, ty=...))``, at increasing
byte offsets. ``commit()`` records the largest offset reached on the enclosing device entry as
its ``"cuda.smem_required"`` attribute, so the launch reserves that much dynamic shared
memory. A pool given a pointer (``SMEMPool(buf.data)``) views that storage instead and
records nothing.

Offsets are Python ints decided while the kernel is built; only the views are IR.
"""

from __future__ import annotations

from typing import Any

from tirx.ir import IntImm, PrimExpr
from tirx.ir.types import PointerType, PrimType, TensorType, as_prim
from tirx.script import tirx as T
from tirx.script.parser import take_name
from tirx.surface.builder import IRBuilder

#: the attribute of the device entry that tells the launch how much dynamic shared memory
#: the kernel needs (TIRx's ``CudaSharedMemoryRequirement``)
SMEM_REQUIRED_KEY = "cuda.smem_required"

_NO_PTR = object()


def _builder() -> IRBuilder:
    b = IRBuilder.current()
    # Helpers name what they make ``v`` (as TIRx's builder receipts are named), never after
    # the assignment the call sits in: consume the pending target name, if any.
    take_name("v")
    return b


def _static_int(x: Any) -> int | None:
    """``x`` as a Python int when it is a constant integer, else None."""
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, IntImm) and x.ty.is_int:
        return x.value
    return None


def _positive(value: Any, name: str, where: str) -> int:
    """``value`` as a Python int >= 1 (a count the helpers need while the kernel is built)."""
    n = _static_int(value)
    if n is None:
        raise TypeError(f"{where}: {name} must be an int, got {value!r}")
    if n < 1:
        raise ValueError(f"{where}: {name} must be >= 1, got {n}")
    return n


def _dtype(dtype: Any, where: str) -> PrimType:
    try:
        t = as_prim(dtype, where)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{where}: {e}") from None
    if t.lanes != 1:
        raise TypeError(f"{where}: a scalar dtype is needed, got {t}")
    return t


def _shape(shape: Any, where: str) -> tuple:
    if isinstance(shape, (int, PrimExpr)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not shape:
        raise TypeError(f"{where}: shape must be a non-empty tuple of extents, got {shape!r}")
    for d in shape:
        n = _static_int(d)
        if n is None and not (isinstance(d, PrimExpr) and isinstance(d.ty, PrimType) and d.ty.is_int):
            raise TypeError(f"{where}: shape extents must be integers, got {d!r}")
        if n is not None and n < 0:
            raise ValueError(f"{where}: shape extents must be >= 0, got {d!r}")
    return tuple(shape)


def _nbytes(shape: tuple, t: PrimType) -> Any:
    """Bytes of ``shape`` elements of ``t``, sub-byte dtypes rounded up to whole bytes."""
    n: Any = 1
    for d in shape:
        k = _static_int(d)
        n = n * (k if k is not None else d)
    return (n * t.bits + 7) // 8


@T.meta_class
class SMEMPool:
    """A bump allocator over dynamic shared memory (or over the storage ``ptr`` points to).

    ``alloc(shape, dtype, scope="shared.dyn", align=0, layout="default")`` returns a tensor view
    at the current offset (first rounded up to ``align`` bytes) and advances the offset by the
    tensor's size; ``move_base_to(offset)`` sets the offset (to reuse or skip bytes);
    ``commit(size=None)`` records ``size`` (default: the highest offset reached) as the
    kernel's dynamic shared memory requirement. ``offset`` and ``max_offset`` are readable.
    """

    def __init__(self, ptr: Any = _NO_PTR):
        self.buf: Any
        self.ptr: Any
        if ptr is _NO_PTR:
            b = _builder()
            self.buf = b.alloc("v", TensorType((0,), PrimType("uint8"), "shared.dyn"))
            self.ptr = self.buf.data
            self._owns_buffer = True
        else:
            if not (isinstance(ptr, PrimExpr) and isinstance(ptr.ty, PointerType)):
                raise TypeError(
                    f"SMEMPool: ptr must be a pointer (e.g. a shared tensor's .data), got {ptr!r}"
                )
            self.buf = None
            self.ptr = ptr
            self._owns_buffer = False
        self.offset: Any = 0
        self.max_offset: Any = 0

    def _reach(self) -> None:
        if not self._owns_buffer:
            return
        if not isinstance(self.offset, int):
            raise TypeError(
                "SMEMPool: the pool's offset must stay a Python int to size the kernel's shared "
                f"memory (static shapes, offsets and alignments), got {self.offset!r}"
            )
        self.max_offset = max(self.max_offset, self.offset)

    def alloc(self, shape: Any, dtype: Any = "float32", scope: str = "shared.dyn", align: int = 0,
              layout: Any = "default") -> Any:  # fmt: skip
        """A ``shape`` x ``dtype`` tensor view at the next offset that is a multiple of ``align``."""
        where = "SMEMPool.alloc"
        shape = _shape(shape, where)
        t = _dtype(dtype, f"{where} dtype")
        if not isinstance(scope, str) or not scope.startswith("shared"):
            raise ValueError(f"{where}: scope must be a shared-memory scope, got {scope!r}")
        if isinstance(align, bool) or not isinstance(align, int):
            raise TypeError(f"{where}: align must be an int (bytes), got {align!r}")
        if align < 0:
            raise ValueError(f"{where}: align must be >= 0, got {align}")
        if align > 0:
            self.offset = (self.offset + align - 1) // align * align
        b = _builder()
        data = T.ptr_byte_offset(self.ptr, self.offset, ty=PointerType(t, scope))
        ty = T.Tensor(shape, t, scope=scope, align=align, layout=layout)
        view = b.decl("v", ty, data, scope)
        self.offset = self.offset + _nbytes(shape, t)
        self._reach()
        return view

    def alloc_tcgen05_mma_AB(self, shape: Any, dtype: Any = "float16", swizzle_mode: Any = "auto",
                             align: int = 1024) -> Any:  # fmt: skip
        raise NotImplementedError(
            "SMEMPool.alloc_tcgen05_mma_AB: the swizzled tcgen05 (Blackwell) MMA operand layouts "
            "(TIRx's backend.cuda.layout.mma_shared_layout) are not in tirx; allocate with "
            "SMEMPool.alloc(..., layout=...) and an explicit layout"
        )

    def move_base_to(self, offset: Any) -> None:
        """Continue allocating at byte ``offset`` (earlier views stay where they are)."""
        n = _static_int(offset)
        if n is None:
            if self._owns_buffer or not isinstance(offset, PrimExpr):
                raise TypeError(f"SMEMPool.move_base_to: offset must be an int (bytes), got {offset!r}")
        elif n < 0:
            raise ValueError(f"SMEMPool.move_base_to: offset must be >= 0, got {offset}")
        self.offset = offset if n is None else n
        self._reach()

    def commit(self, size: Any = None) -> None:
        """Record the kernel's dynamic shared memory requirement: ``size`` bytes, by default
        the highest offset the pool reached. A pool over a given pointer records nothing."""
        if not self._owns_buffer:
            return
        if size is None:
            resolved = self.max_offset
        else:
            resolved = _static_int(size)
            if resolved is None:
                raise TypeError(f"SMEMPool.commit: size must be an int (bytes), got {size!r}")
            if resolved < self.max_offset:
                raise ValueError(
                    f"SMEMPool.commit: size={resolved} is smaller than the {self.max_offset} bytes "
                    "the pool's allocations reach"
                )
        try:
            IRBuilder.current().set_entry_attr(SMEM_REQUIRED_KEY, resolved)
        except ValueError:
            raise ValueError("SMEMPool.commit() must be called inside a T.device_entry") from None
