"""The FuncCompiler's buffers and memory: locating an access (bounds checks, the lane's
copy of a shared or local allocation), loads, stores and allocations; a mixin of
``engine.FuncCompiler``, split from it by node family (issue #30)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from tirx.ops.semantics import dtypes as D
from tirx.ops.semantics.errors import InterpError, LimitError, MisalignedError, OutOfBoundsError
from tirx.ops.semantics.lanes import remote_base as _remote_base
from tirx.ops.semantics.lanes import unit_base as _unit_base
from tirx.ops.semantics.memory import BLOCK, GLOBAL, THREAD, Mem, PtrVal

from ..ir import expr as E
from ..ir.buffer import Buffer, constant_offset
from ..ir.types import PrimType
from .races import _global_conflict, _global_order, _race_read, _race_write
from .state import _RAISE, Ctx, Fn, _lane_mask, where

if TYPE_CHECKING:
    from .engine import Program


def _zero_size(shape: Any) -> bool:
    """A tensor with a constant 0 extent (TIRx's dynamic shared-memory window ``(0,)``)."""
    return any(isinstance(d, E.IntImm) and d.value == 0 for d in shape)


def _first_lane(bad: np.ndarray) -> int:
    flat = np.flatnonzero(bad.reshape(bad.shape[0], -1).any(axis=1)) if bad.ndim > 1 else np.flatnonzero(bad)
    return int(flat[0])


def _pick(x: np.ndarray, lane: int):
    x = np.asarray(x)
    if x.shape[0] == 1:
        lane = 0
    v = x[lane]
    return v.tolist() if isinstance(v, np.ndarray) else v.item()


def _out_of_range(ix: np.ndarray, dim: Any) -> np.ndarray | None:
    """Lanes whose index is outside [0, dim), or None when all are inside; ``dim`` may be one
    extent per thread (a view whose shape depends on the thread: ``A.sub[tx]``)."""
    if isinstance(dim, np.ndarray):
        d = dim[:, None] if ix.ndim == 2 else dim
        b = (ix < 0) | (ix >= d)
        return b if b.any() else None
    k = ix.dtype
    if k.kind == "i" and k.itemsize >= 4 and dim <= (1 << (8 * k.itemsize - 1)):
        b = ix.view(np.uint32 if k.itemsize == 4 else np.uint64) >= dim
    elif k.kind == "u":
        b = ix >= dim
    else:
        b = (ix < 0) | (ix >= dim)
    return b if b.any() else None


def _extent(v: np.ndarray) -> Any:
    """A shape or stride value: an int where every thread has the same, else one per thread."""
    if v.shape[0] == 1 or not (v != v[0]).any():
        return int(v[0])
    return v.astype(np.int64)


def _per_lane(s: Any, ix: np.ndarray) -> Any:
    """A per-thread stride against a (threads x lanes) vector index: one per row."""
    return s[:, None] if isinstance(s, np.ndarray) and ix.ndim == 2 else s


def _vector_alignment(buf: Buffer, indices: tuple) -> int:
    """The bytes a vector access ``buf[indices]`` must be aligned to in the generated CUDA
    (0 where the CUDA accesses it element by element or as a gather)."""
    from tirx.codegen.cuda_buffer import flat_index, is_vector_access, vector_alignment

    if not any(getattr(i.ty, "lanes", 1) > 1 for i in indices):
        return 0
    idx = flat_index(buf, indices)
    if not is_vector_access(idx):
        return 0
    return vector_alignment(buf.dtype, cast(PrimType, idx.ty).lanes)


def _check_aligned(c: Ctx, flat: np.ndarray, align: int, itemsize: int, name: str) -> None:
    """Raise ``MisalignedError`` where an active thread's vector starts off its alignment
    (``align`` in elements)."""
    first = flat[..., 0] if flat.ndim > 1 else flat[:1]
    bad = (first % align) != 0
    if bad.shape[0] == c.N and c.count != c.N:
        bad = bad & _lane_mask(c.mask, bad)
    if bad.any():
        lane = _first_lane(bad)
        k = int(first[lane] if first.shape[0] > 1 else first[0])
        raise MisalignedError(
            f"misaligned vector access to buffer {name}: it starts at element {k}, and a "
            f"{align * itemsize}-byte aligned start is needed (the GPU faults with "
            f"'misaligned address'), by {c.describe(lane)}"
        )


def _allocate(c: Ctx, s: Any, name: str, units: int, n: int, dt: np.dtype) -> np.ndarray:
    """The zeroed storage of one allocation (``units`` copies of ``n`` elements), or a
    located LimitError past ``max_alloc_bytes`` or what numpy can give (never numpy's own
    MemoryError or "array is too big" ValueError, which name no buffer and no line)."""
    nbytes = units * n * dt.itemsize
    cap = c.prog.max_alloc_bytes
    what = f"allocation {name} {where(s)}: {units} x {n} elements of {dt} ({nbytes} bytes)"
    if nbytes > cap:
        raise LimitError(
            f"{what} is over the limit max_alloc_bytes={cap}; {_RAISE.format(opt='max_alloc_bytes')}"
        )
    try:
        return np.zeros((units, n), dtype=dt)
    except (MemoryError, ValueError) as e:
        raise LimitError(f"{what} cannot be allocated on this machine ({e})") from None


class MemMixin:
    """Buffer accesses and allocations into closures."""

    prog: Program
    simple_bufs: set
    _shape_cache: dict

    if TYPE_CHECKING:  # ExprMixin's

        def expr(self, e: Any) -> Fn: ...

        def range_of(self, e: Any) -> tuple[int, int] | None: ...

    # ------------------------------------------------------------------ buffers
    def _shape_fns(self, exprs) -> list:
        """A buffer shape's evaluators, compiled once per shape per function (every access of
        a buffer shares them: a large shape expression is not recompiled per access)."""
        cache = self._shape_cache
        hit = cache.get(id(exprs))
        if hit is not None and hit[0] is exprs:
            return hit[1]
        out = self._compile_shape(exprs)
        cache[id(exprs)] = (exprs, out)
        return out

    def _compile_shape(self, exprs) -> list:
        out: list[int | Fn] = []
        for s in exprs:
            if isinstance(s, E.IntImm):
                out.append(s.value)
            else:
                f = self.expr(s)
                out.append(f)
        return out

    def locate(self, buf: Buffer, indices: tuple) -> Callable:
        """Compile an access: returns ``loc(c) -> (mem, view1d, flat)`` with bounds checked for
        the active lanes (out-of-range inactive lanes are redirected to element 0)."""
        st = buf.dtype
        itemsize = D.storage_np(st).itemsize * 1
        data = buf.data
        shape = self._shape_fns(buf.shape)
        rank = len(shape)
        if len(indices) != rank:
            raise InterpError(f"buffer {buf.name} has rank {rank}, accessed with {len(indices)} indices")
        idx_fns = [self.expr(i) for i in indices]
        # a vector index beside scalar ones (``W[row, T.Ramp(c, 1, 8)]``): known from the types
        mixed = len(indices) > 1 and any(getattr(i.ty, "lanes", 1) > 1 for i in indices)
        # indices proven inside their (constant) dimension need no run-time check
        proven = [
            isinstance(dim, int) and (r := self.range_of(ix)) is not None and r[0] >= 0 and r[1] < dim
            for ix, dim in zip(indices, shape)
        ]
        strides = self._shape_fns(buf.strides) if buf.strides else None
        eoff = None if buf.elem_offset is None else self.expr(buf.elem_offset)
        simple = buf in self.simple_bufs
        name = buf.name
        check = self.prog.check_bounds
        # a stride-1 ramp is one vector access in the generated CUDA: its first element must be
        # aligned to the vector's width (allocations are: the codegen aligns them for it)
        align = _vector_alignment(buf, indices) // itemsize
        # a tensor of vector elements (``T.Tensor((n,), "float32x4")`` over float storage): an
        # index counts vectors, and each access is ``vl`` consecutive scalars, aligned as the
        # CUDA's ``tirx_vec`` cast needs
        vl = st.lanes
        if vl > 1:
            if any(getattr(i.ty, "lanes", 1) > 1 for i in indices):
                raise InterpError(f"buffer {buf.name}: a vector index into a tensor of {st} elements")
            from tirx.codegen.cuda_buffer import vector_alignment

            align = max(align, vector_alignment(st, 1) // itemsize)
            lane_ix = np.arange(vl, dtype=np.int64)
        consts = all(isinstance(s, int) for s in shape) and strides is None
        small = consts and math.prod(shape) < (1 << 31)
        if consts:
            cstr = []
            acc = 1
            for s in reversed(shape):
                cstr.append(acc)
                acc *= s
            cstr.reverse()
        else:
            cstr = None

        def loc(c):
            try:
                ptr = c.env[data]
            except KeyError:
                raise InterpError(f"buffer {name} is used where its data pointer has no value") from None
            if not isinstance(ptr, PtrVal):
                raise InterpError(f"buffer {name}: its data is not a pointer the interpreter can follow")
            mem = ptr.mem
            idx = [f(c) for f in idx_fns]
            if mixed and any(ix.ndim == 2 for ix in idx):
                # a vector index (threads x lanes) beside a per-thread scalar one (``W[row,
                # T.Ramp(c, 1, 8)]`` with ``row`` from the thread index): the scalar spans the lanes
                idx = [ix[:, None] if ix.ndim == 1 else ix for ix in idx]
            shp = shape if consts else [s if isinstance(s, int) else _extent(s(c)) for s in shape]
            if cstr is not None:
                strd = cstr
            elif strides is not None:
                strd = [s if isinstance(s, int) else _extent(s(c)) for s in strides]
            else:
                strd = []
                acc = 1
                for s in reversed(shp):
                    strd.append(acc)
                    acc *= s
                strd.reverse()
            bad = None
            if check:
                for ix, dim, ok in zip(idx, shp, proven):
                    if ok:
                        continue
                    b = _out_of_range(ix, dim)
                    if b is not None:
                        bad = b if bad is None else (bad | b)
            if rank == 1:
                flat = idx[0]
                if flat.dtype.itemsize < 4 or flat.dtype == np.uint64:
                    flat = flat.astype(np.int64)
            elif rank == 0:
                flat = np.zeros(1, dtype=np.int64)
            elif small and all(ix.dtype == np.int32 for ix in idx):
                flat = idx[0] * strd[0]
                for ix, s in zip(idx[1:], strd[1:]):
                    flat = flat + ix * s
            else:
                flat = idx[0].astype(np.int64) * _per_lane(strd[0], idx[0])
                for ix, s in zip(idx[1:], strd[1:]):
                    flat = flat + ix.astype(np.int64) * _per_lane(s, ix)
            if eoff is None:
                extra = 0
            else:
                ev_ = eoff(c)
                extra = int(ev_[0]) if ev_.shape[0] == 1 else ev_.astype(np.int64)
            if vl > 1:  # vectors to scalars: the element offset counts vectors too
                flat = (flat + extra).astype(np.int64) * vl
                extra = 0
            off = ptr.off
            if not (isinstance(off, int) and off == 0):
                extra = extra + (
                    off // itemsize if isinstance(off, int) else (off // itemsize).astype(np.int64)
                )
            if not (isinstance(extra, int) and extra == 0):
                flat = flat + extra
            view = mem.view(st)
            row = view.shape[1]
            if check and (not simple or vl > 1 or mem.short is not None):
                lim = row if mem.short is None else mem.short // view.itemsize
                b = (flat < 0) | (flat + (vl - 1) >= lim)
                if b.any():
                    bad = b if bad is None else (bad | b)
            if bad is not None:
                real = bad
                if c.count != c.N and bad.shape[0] == c.N:
                    real = bad & _lane_mask(c.mask, bad)
                if real.any():
                    lane = _first_lane(real)
                    where = ", ".join(str(_pick(ix, lane)) for ix in idx)
                    dims = tuple(int(d[lane]) if isinstance(d, np.ndarray) else d for d in shp)
                    past = ""
                    if mem.short is not None:
                        have = c.launch.dyn_smem if c.launch is not None else "too few"
                        past = f" (past the {have} bytes of dynamic shared memory the launch gives)"
                    raise OutOfBoundsError(
                        f"out-of-bounds access to buffer {name} (shape {dims}) at index [{where}]{past} by "
                        f"{c.describe(lane)}"
                    )
                flat = np.where(bad, 0, flat)
            if align > 1:
                _check_aligned(c, flat, align, itemsize, name)
            if vl > 1:
                flat = flat[..., None] + lane_ix
            if mem.per == GLOBAL:
                return mem, view[0], flat, flat
            if ptr.rank is not None:
                ub = _remote_base(c, ptr.rank, row)
            else:
                ub = _unit_base(c, mem, view.shape[0], row)
            if flat.ndim > 1:
                ub = ub[:, None]
            return mem, view.reshape(-1), flat + ub, flat

        return loc

    def _local_col(self, buf: Buffer, indices: tuple) -> int | None:
        """A constant element of a per-thread local buffer (``acc[0]``): its column, else None."""
        if buf.scope != "local" or buf.strides or buf.elem_offset is not None:
            return None
        return constant_offset(buf.shape, indices)

    def e_BufferLoad(self, e):
        buf = e.buffer
        st = buf.dtype
        col = self._local_col(buf, e.indices)
        data = buf.data
        loc = self.locate(buf, e.indices)
        races = self.prog.check_races
        if col is not None and st.lanes == 1:

            def ev_col(c):
                ptr = c.env.get(data)
                if isinstance(ptr, PtrVal) and ptr.off == 0 and ptr.mem.per == THREAD:
                    v = ptr.mem.view(st)
                    return D.from_storage(v[:, col].copy(), st)
                return ev(c)

        at = where(e) if getattr(e, "span", None) is not None else ""

        def ev(c):
            mem, v1, flat, _ = loc(c)
            if races and mem.per == BLOCK and c.launch is not None:
                _race_read(c, mem, st, flat, buf, at)
            return D.from_storage(v1[flat], st)

        return ev_col if col is not None and st.lanes == 1 else ev

    def s_BufferStore(self, s):
        buf = s.buffer
        st = buf.dtype
        fval = self.expr(s.value)
        col = self._local_col(buf, s.indices)
        data = buf.data
        loc = self.locate(buf, s.indices)
        races = self.prog.check_races
        name = buf.name
        at = where(s)

        def ex(c):
            val = fval(c)
            mem, v1, flat, _ = loc(c)
            if races and c.launch is not None:
                if mem.per == BLOCK:
                    _race_write(c, mem, st, flat, val, buf, at)
                elif mem.per == GLOBAL:
                    _global_conflict(c, flat, val, buf, st, at)
                    _global_order(c, mem, flat, val, buf, st, at)
            sv = D.to_storage(val, st)
            if c.count == c.N:
                if flat.shape == sv.shape or sv.shape[0] == 1:
                    v1[flat] = sv
                    return
                f2, v2 = np.broadcast_arrays(flat, sv)
                v1[f2] = v2
                return
            if flat.shape[0] == 1 and sv.shape[0] == 1:
                v1[flat] = sv
                return
            f2, v2 = np.broadcast_arrays(flat, sv)
            m = c.mask
            if f2.shape[0] != m.shape[0]:
                raise InterpError(f"store to {name}: lane count mismatch")
            v1[f2[m]] = v2[m]

        if col is not None and st.lanes == 1:

            def ex_col(c):
                ptr = c.env.get(data)
                if isinstance(ptr, PtrVal) and ptr.off == 0 and ptr.mem.per == THREAD:
                    colv = ptr.mem.view(st)[:, col]
                    val = D.to_storage(fval(c), st)
                    if c.count == c.N:
                        colv[...] = val
                    else:
                        np.copyto(colv, val, where=c.mask if colv.shape[0] == c.N else True)
                    return
                ex(c)

            return ex_col
        return ex

    def s_AllocBuffer(self, s):
        buf = s.buffer
        scope = buf.scope
        dt = D.storage_np(buf.dtype)
        shape = self._shape_fns(buf.shape)
        data = buf.data
        self.simple_bufs.add(buf) if (buf.elem_offset is None and not buf.strides) else None
        name = buf.name
        # where it lies in the dynamic shared-memory window (None: not a shared.dyn allocation
        # of a device entry, or bounds unchecked)
        dyn_off = self.dyn_offsets.get(id(s)) if scope == "shared.dyn" and self.prog.check_bounds else None
        # a zero-sized shared.dyn tensor is the window itself (TIRx's idiom: an SMEMPool's base,
        # views at byte offsets into it): it holds what the launch gives from its offset on
        win_off = self.dyn_offsets.get(id(s)) if scope == "shared.dyn" and _zero_size(buf.shape) else None

        def ex(c):
            mem = c.allocs.get(s)
            if mem is None:
                n = 1
                for x in shape:
                    n *= x if isinstance(x, int) else int(x(c)[0])
                n *= buf.dtype.lanes
                if n < 0:
                    raise InterpError(f"allocation {name}: negative size {n} {where(s)}")
                if c.launch is None:
                    per, units = GLOBAL, 1
                elif scope.startswith("shared"):
                    per, units = BLOCK, c.launch.nb
                elif scope in ("global",):
                    per, units = GLOBAL, 1
                else:
                    per, units = THREAD, c.N
                short = None
                if win_off is not None and c.launch is not None and c.launch.dyn_smem is not None:
                    n = -(-max(0, c.launch.dyn_smem - win_off) // dt.itemsize)
                elif dyn_off is not None and c.launch is not None and c.launch.dyn_smem is not None:
                    # only the bytes inside what the launch gives exist (a GPU faults, or reads
                    # other memory, past them): accesses beyond are out of bounds
                    fit = max(0, c.launch.dyn_smem - dyn_off)
                    if fit < n * dt.itemsize:
                        n, short = -(-fit // dt.itemsize), fit
                n += ((-n * dt.itemsize) % 8) // dt.itemsize  # rows of whole 8-byte words
                raw = _allocate(c, s, name, units, n, dt)
                mem = Mem(name, raw, per, short)
                c.allocs[s] = mem
            c.env[data] = PtrVal(mem, 0)

        return ex

    def s_DeclBuffer(self, s):
        return lambda c: None
