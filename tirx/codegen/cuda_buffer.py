"""CodeGenCUDA's buffers: loads, stores, element addresses (``ptr_of``/``flat_index``/``access``,
which op lowerings use too) and the allocation and declaration statements.

A mixin of ``CodeGenCUDA`` (``cuda.py``), split out by node family (issue #30); the state it
keeps (``buf_ptr``, ``scalar_bufs``, ``tmem_vars``, ...) is initialized by CodeGenCUDA."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from ..ir import (
    Add,
    AllocBuffer,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Cast,
    DeclBuffer,
    IntImm,
    Mul,
    PointerType,
    PrimExpr,
    PrimType,
    Ramp,
)
from ..ir.arith import wrap
from .cuda_common import _PREC_PRIMARY, _add, _coerce, _comment, _error

if TYPE_CHECKING:
    from ..ir import Var
    from ..ir.dyn_smem import DynSmem


def _dims(buf: Buffer):
    for d in buf.shape:
        yield d.value if isinstance(d, IntImm) else getattr(d, "name", "?")


def _mul(a: Any, b: Any) -> PrimExpr:
    if isinstance(b, int):
        if b == 1:
            return a
        b = IntImm(b, a.ty.element) if isinstance(a.ty, PrimType) else IntImm(b)
    if isinstance(b, IntImm) and b.value == 1:
        return a
    if isinstance(a, IntImm) and a.value == 1:
        return b
    if isinstance(a, IntImm) and a.value == 0 and isinstance(b.ty, PrimType) and b.ty.lanes == 1:
        return IntImm(0, b.ty) if b.ty != a.ty else a
    if isinstance(a, IntImm) and isinstance(b, IntImm) and a.ty == b.ty:
        return IntImm(wrap(a.value * b.value, a.ty), a.ty)  # the IR's wrapping product
    return _coerce(Mul, a, b)


def flat_index(buf: Buffer, indices: tuple) -> PrimExpr:
    """The element offset of ``buf[indices]`` from the buffer's data pointer (row-major or the
    buffer's strides, plus its ``elem_offset``); a stride-1 ``T.Ramp`` in the last index stays a
    ramp, which the generated CUDA reads or writes as one vector (``is_vector_access``)."""
    if not indices:
        idx: PrimExpr = IntImm(0)
    else:
        strides = list(buf.strides) if buf.strides else None
        if strides is None:
            strides = []
            acc: Any = 1
            for s in reversed(buf.shape[1:]):
                acc = _mul(s, acc)
                strides.append(acc)
            strides = [*list(reversed(strides)), 1]
        idx = None  # type: ignore[assignment]
        for x, s in zip(indices, strides):
            term = _mul(x, s)
            idx = term if idx is None else _add(idx, term)
    if buf.elem_offset is not None and not (
        isinstance(buf.elem_offset, IntImm) and buf.elem_offset.value == 0
    ):
        idx = _add(idx, buf.elem_offset)
    return idx


def is_vector_access(idx: PrimExpr) -> bool:
    """Whether a flat index (``flat_index``) is accessed as one vector in the generated CUDA:
    ``*(float4*)(p + base)``. Such an access needs its first element aligned to the vector's
    width (``vector_alignment``): CUDA faults with "misaligned address" otherwise."""
    t = idx.ty
    return (
        isinstance(t, PrimType)
        and t.lanes > 1
        and isinstance(idx, Ramp)
        and isinstance(idx.stride, IntImm)
        and idx.stride.value == 1
    )


def vector_alignment(dtype: PrimType, lanes: int) -> int:
    """The alignment in bytes of a ``lanes``-wide vector of ``dtype`` in the generated CUDA
    (``half2``, ``tirx_vec<T, N>``'s ``alignas``): the largest power of two dividing its size,
    at most 16 (a 12-byte vector is 4-aligned, a 32-byte one 16-aligned)."""
    n = dtype.with_lanes(1).bytes * lanes
    return min(n & -n, 16)


class BufferMixin:
    """Buffer accesses and declarations."""

    if TYPE_CHECKING:  # CodeGenCUDA's (cuda.py) and ExprMixin's
        features: set[str]
        names: dict[Any, str]
        buf_ptr: dict[Buffer, str]
        scalar_bufs: set
        tmem_vars: set
        view_bytes: dict
        vec_align: dict
        dyn_smem: DynSmem
        dyn_align: int
        _address_arith: set
        bounds: Any  # tirx.ir.bounds.Bounds: value ranges of the expressions in scope

        def line(self, text: str, node: Any = None) -> None: ...
        def var_name(self, v: Var) -> str: ...
        def define(self, v: Var, hint: str | None = None) -> str: ...
        def ctype(self, t: Any, what: str = "type") -> str: ...
        def _lanes_in(self, e: PrimExpr) -> str: ...
        def _lanes_out(self, t: PrimType, s: str) -> str: ...
        def expr(self, e: PrimExpr) -> str: ...
        def wrap(self, e: PrimExpr, prec: int) -> str: ...

    # -- buffers ------------------------------------------------------------------
    def e_BufferLoad(self, e: BufferLoad):
        return self.access(e.buffer, e.indices, e), _PREC_PRIMARY

    def s_BufferStore(self, s: BufferStore) -> None:
        self.store(s)

    def ptr_of(self, buf: Buffer) -> str:
        p = self.buf_ptr.get(buf)
        if p is not None:
            return p
        if buf.data not in self.names:
            if buf.data in self.tmem_vars:
                self.var_name(buf.data)  # raises: a tmem buffer has no pointer
            raise _error(f"buffer {buf.name} is used outside of its scope", buf)
        base = self.var_name(buf.data)
        if buf.data in self.scalar_bufs:
            return f"(&{base})"
        el = cast(PointerType, buf.data.ty).element
        if el != buf.dtype:
            return f"(({self.ctype(buf.dtype)}*){base})"
        return base

    def flat_index(self, buf: Buffer, indices: tuple, node: Any = None) -> PrimExpr:
        if len(indices) != len(buf.shape):
            raise _error(f"buffer {buf.name} has rank {len(buf.shape)}, got {len(indices)} indices", node)
        idx = flat_index(buf, indices)
        # the arithmetic built here is addressing, not the IR's: never wrapped (int_overflows)
        own = {id(x) for x in (*indices, *buf.shape, *(buf.strides or ()), buf.elem_offset)}
        todo = [idx]
        while todo:
            x = todo.pop()
            if id(x) in own:
                continue
            if isinstance(x, (Add, Mul)):
                self._address_arith.add(x)
                todo += (x.a, x.b)
            elif isinstance(x, (Cast, Broadcast)):
                todo.append(x.value)
            elif isinstance(x, Ramp):
                todo += (x.base, x.stride)
        return idx

    def access(self, buf: Buffer, indices: tuple, node: Any = None) -> str:
        idx = self.flat_index(buf, indices, node)
        if buf.data in self.scalar_bufs and isinstance(idx, IntImm) and idx.value == 0:
            return self.var_name(buf.data)
        ptr = self.ptr_of(buf)
        t = idx.ty
        if isinstance(t, PrimType) and t.lanes > 1:
            lanes = t.lanes
            vt = self.ctype(buf.dtype.with_lanes(lanes))
            if is_vector_access(idx):
                return f"*({vt}*)({ptr} + {self.wrap(cast(Ramp, idx).base, 12)})"
            self.features.add("vec")
            # a half2 / __nv_bfloat162 result is packed from the gathered lanes
            return self._lanes_out(buf.dtype.with_lanes(lanes), f"tirx_gather({ptr}, {self.expr(idx)})")
        return f"{ptr}[{self.expr(idx)}]"

    def store(self, s: BufferStore) -> None:
        idx = self.flat_index(s.buffer, s.indices, s)
        t = idx.ty
        if isinstance(t, PrimType) and t.lanes > 1 and not is_vector_access(idx):
            self.features.add("vec")
            ptr = self.ptr_of(s.buffer)
            self.line(f"tirx_scatter({ptr}, {self.expr(idx)}, {self._lanes_in(s.value)});", s)
            return
        self.line(f"{self.access(s.buffer, s.indices, s)} = {self.expr(s.value)};", s)

    def _shape_size(self, buf: Buffer, node: Any) -> int:
        """Elements of an allocation: each extent a constant, or an expression the ranges pin
        to one value (``n: T.let[T.int32] = 4`` then ``T.alloc_local((n,), ...)``, as TIRx
        compiles it)."""
        n = 1
        for d in buf.shape:
            if not isinstance(d, IntImm):
                r = self.bounds(d)
                if r is None or r[0] != r[1]:
                    raise _error(
                        f"allocation {buf.name}: the shape must be constant on the cuda target", node
                    )
                n *= r[0]
                continue
            n *= d.value
        return n

    def s_AllocBuffer(self, s: AllocBuffer) -> None:
        buf = s.buffer
        scope = buf.scope
        if scope == "tmem":
            # a declaration only: tensor memory is allocated by tcgen05.alloc and addressed by tmem
            # addresses, never by a pointer (every use of the buffer is an error: var_name)
            self.tmem_vars.add(buf.data)
            dims = "x".join(str(d.value) if isinstance(d, IntImm) else "n" for d in buf.shape)
            self.line(f"// {buf.name}: tensor memory, {dims} {buf.dtype}", s)
            return
        el = cast(PointerType, buf.data.ty).element
        ct = self.ctype(el if isinstance(el, PrimType) else buf.dtype)
        n = self.define(buf.data, buf.name)
        if scope == "shared.dyn":
            self.features.add("dyn_smem")
            self.dyn_align = max(self.dyn_align, self.dyn_smem.align)  # the window's declaration
            off = self.dyn_smem.offsets[id(s)]  # tirx.ir.dyn_smem: the launcher sizes the window by it
            self.line(f"{ct}* const {n} = ({ct}*)(tirx_dyn_smem + {off});", s)
            return
        size = self._shape_size(buf, s)
        if scope in ("shared", "shared.static"):
            # at least 16 bytes (vector accesses); more where the tensor asks (TIRx's
            # data_alignment: TMA boxes want 128 bytes, 128-byte swizzles 1024)
            a = max(16, buf.align or 0)
            self.line(f"__shared__ __align__({a}) {ct} {n}[{size}];", s)
        elif scope in ("local", "register", "local.var"):
            view = self.view_bytes.get(buf.data, 0)  # the widest element a view reinterprets it as
            if size == 1 and len(buf.shape) <= 1 and el == buf.dtype and not view:
                # a mutable scalar cell: a plain C variable
                self.scalar_bufs.add(buf.data)
                self.line(f"{ct} {n};", s)
            else:
                # 16-byte aligned when whole vectors fit: vector accesses (uint4 etc.) need it;
                # aligned for the widest element a view of another dtype reads it as
                nb = size * (el.bytes if isinstance(el, PrimType) else buf.dtype.bytes)
                a = 16 if nb % 16 == 0 else 1
                if isinstance(el, PrimType) and view > el.bytes:
                    while a < min(view, 16):
                        a *= 2
                # aligned for its vector accesses: the interpreter checks them against this base
                a = max(a, self.vec_align.get(buf.data, 0))
                align = f"__align__({a}) " if a > 1 else ""
                self.line(f"{align}{ct} {n}[{size}];", s)
        else:
            raise _error(
                f"allocation {buf.name}: storage scope {scope!r} is not supported by the cuda target", s
            )

    def s_DeclBuffer(self, s: DeclBuffer) -> None:
        buf = s.buffer
        if buf.data not in self.names:
            raise _error(f"decl_buffer {buf.name}: its data pointer {buf.data.name} is not defined here", s)
        # the view's name is the data pointer, cast when the element types differ
        self.line(
            _comment(f"// {buf.name}: {buf.dtype}{list(_dims(buf))} view over {self.var_name(buf.data)}"), s
        )
