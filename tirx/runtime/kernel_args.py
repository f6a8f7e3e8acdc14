"""A compiled kernel's arguments: reading each one (torch, ``__cuda_array_interface__``,
``__dlpack__``, numbers, TMA descriptors) and the general path's checks of a call (dtype,
rank, shape, device, contiguity, alignment, aliasing of ``__restrict__`` pointers, dynamic
dims, the host's binds and asserts), which end in the launch plan.

A mixin of ``Kernel`` (``kernel.py``), split out by what it holds (issue #30); the signature
plan it reads (``params``, ``dyn_src``, ``host_names``, ``grid_code``, ...) is made by
``Kernel._plan``.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import struct
import sys
from typing import TYPE_CHECKING, Any, cast

from ..ir import IntImm, PointerType, PrimType, Var
from ..ir.affine import affine_text
from ..ir.types import tensormap_ptr
from . import device_array as _da
from . import driver as _drv
from .kernel_state import KernelState

if TYPE_CHECKING:
    pass

__all__ = ["ArgsMixin"]

_TORCH_NAMES = {"float": "float32", "half": "float16", "double": "float64", "long": "int64", "int": "int32"}


def _bf16_bits(x: float) -> int:
    (u,) = struct.unpack("<I", struct.pack("<f", x))
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return 0x7FC0
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


class _View:
    """A device array seen through any of the supported protocols.

    ``readonly``: the producer exported it read-only (``__cuda_array_interface__`` data
    flag, DLPack's read-only flag); ``sync``: the producer's stream to wait for before the
    launch (``__cuda_array_interface__`` v3 ``stream``), else None."""

    __slots__ = ("device", "dtype", "keep", "ptr", "readonly", "shape", "strides", "sync")

    def __init__(
        self,
        ptr: int,
        shape: tuple,
        strides: tuple | None,
        dtype: str,
        device: int | None,
        keep: Any,
        readonly: bool = False,
        sync: int | None = None,
    ):
        self.ptr, self.shape, self.strides, self.dtype, self.device, self.keep = (
            ptr,
            shape,
            strides,
            dtype,
            device,
            keep,
        )
        self.readonly, self.sync = readonly, sync


def _dtype_name(dt: Any) -> str:
    s = str(dt)
    s = s.replace("torch.", "")
    return _TORCH_NAMES.get(s, s)


def _consumer_stream(stream: Any, device: int) -> int:
    """The CUstream handle the call will launch on (``stream=`` of the call, else the current one)."""
    from .kernel_launch import _stream_handle

    return _stream_handle(stream, device)


def _as_view(x: Any, pname: str, kname: str, stream: Any = None) -> _View:
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        dev = x.get_device() if x.is_cuda else None
        if not x.is_cuda:
            raise ValueError(
                f"{kname}: parameter {pname}: tensor is on {x.device}, the kernel needs a CUDA tensor"
            )
        return _View(x.data_ptr(), tuple(x.shape), tuple(x.stride()), _dtype_name(x.dtype), dev, x)
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        ptr, shape, strides, name, readonly, sync = _da.from_cai(cai, pname, kname)
        dev = getattr(getattr(x, "device", None), "id", None)
        if not isinstance(dev, int) or isinstance(dev, bool):
            dev = _pointer_device(ptr)
        return _View(ptr, shape, strides, name, dev, x, readonly, sync)
    if hasattr(x, "__dlpack__"):
        dl_dev = None
        with contextlib.suppress(Exception):
            dl_dev = x.__dlpack_device__()
        if dl_dev is None or int(dl_dev[0]) not in _da.DL_CUDA:
            raise ValueError(
                f"{kname}: parameter {pname}: array is not on a CUDA device (DLPack device {dl_dev})"
            )
        s = _da.dlpack_stream(_consumer_stream(stream, int(dl_dev[1])))
        ptr, shape, strides, name, dev, readonly, owner = _da.from_dlpack(x, s, pname, kname)
        return _View(ptr, shape, strides, name, dev, (x, owner), readonly)
    if isinstance(x, (numbers.Number, bool)):
        raise TypeError(f"{kname}: parameter {pname}: expected a CUDA tensor, got the number {x!r}")
    if type(x).__module__ == "numpy" or hasattr(x, "__array_interface__"):
        raise ValueError(
            f"{kname}: parameter {pname}: a host (CPU) array was given, the kernel needs a CUDA tensor"
        )
    raise TypeError(f"{kname}: parameter {pname}: expected a CUDA tensor, got {type(x).__name__}")


def _sync_producers(views: dict, stream: Any, device: int) -> None:
    """``__cuda_array_interface__`` v3: wait for each producer stream that is not the launch's.

    The spec lets the consumer synchronize on the stream or enqueue its work on it; the
    checks run before the launch stream is set up (and once for a prepared launch), so this
    is a host-side ``cuStreamSynchronize`` of the producer's stream, skipped when it is the
    stream the kernel launches on (1, the legacy default stream, is handle 0 there too).
    """
    pending = {v.sync for v in views.values() if v.sync is not None}
    if not pending:
        return
    mine = _consumer_stream(stream, device)
    d = _drv.driver()
    for s in sorted(pending):
        if s == mine or (s == 1 and mine == 0):
            continue
        _drv.check(d.cuStreamSynchronize(d.CUstream(s)), "synchronizing a __cuda_array_interface__ stream")


def _pointer_device(ptr: int) -> int | None:
    if ptr == 0:
        return None
    d = _drv.driver()
    try:
        r = d.cuPointerGetAttribute(d.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr)
        if int(r[0]) == 0:
            return int(r[1])
    except Exception:
        pass
    return None


def _scalar(x: Any, t: PrimType, pname: str, kname: str) -> Any:
    if hasattr(x, "item") and not isinstance(x, (int, float, bool)):
        with contextlib.suppress(Exception):
            x = x.item()
    if t.is_bool:
        if isinstance(x, (bool, int)) and x in (0, 1):
            return bool(x)
        raise TypeError(f"{kname}: parameter {pname}: expected a bool, got {x!r}")
    if t.is_int:
        if isinstance(x, bool) or not isinstance(x, numbers.Integral):
            raise TypeError(
                f"{kname}: parameter {pname}: expected an int ({t}), got {type(x).__name__} {x!r}"
            )
        x = int(x)
        lo, hi = (
            (0, (1 << t.bits) - 1) if t.kind == "uint" else (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1)
        )
        if not lo <= x <= hi:
            raise ValueError(f"{kname}: parameter {pname}: {x} does not fit in {t}")
        return x
    if t.is_float:
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise TypeError(
                f"{kname}: parameter {pname}: expected a float ({t}), got {type(x).__name__} {x!r}"
            )
        x = float(x)
        return _bf16_bits(x) if t.base == "bfloat16" else x
    raise TypeError(f"{kname}: parameter {pname}: scalar parameters of type {t} are not supported")


def _tensormap_bytes(x: Any, pname: str, kname: str) -> bytes:
    """A TMA descriptor argument: 128 bytes (``bytes``, ``TensorMap`` from tirx.runtime.tma, ...)."""
    raw = getattr(x, "raw", x)
    if isinstance(raw, (bytes, bytearray, memoryview)) and len(raw) == 128:
        return bytes(raw)
    raise TypeError(
        f"{kname}: parameter {pname}: expected a 128-byte TMA descriptor (tirx.runtime.tma plan.encode(...)), "
        f"got {type(x).__name__}"
    )


class ArgsMixin(KernelState):
    """The general path's argument checks (``_check``)."""

    if TYPE_CHECKING:  # Kernel's methods the mixin calls

        def _py(self, e: Any, names: dict, what: str) -> str: ...

    def _check(self, args: tuple, stream: Any = None, outer: tuple | None = None) -> tuple[Any, tuple | None]:
        """Every argument check of a call; (the host's return value, the launch or None).

        ``outer``: the host values a host program passes at this launch (``info.outer``, in
        order; tirx.runtime.host_program). The launch is ``(device, grid, block, cluster, smem,
        values, opts)``, the arguments of
        :meth:`_launch` but the stream; None when the grid is empty (nothing to launch).
        ``stream`` (the call's ``stream=``; None: the current stream) is the one DLPack
        producers are asked to order their work before, and that ``__cuda_array_interface__``
        v3 producer streams are synchronized against.
        """
        if self.unreadable:
            raise ValueError(self.unreadable)
        f = self.func
        kname = self.kname
        if len(args) != len(self.params):
            raise TypeError(
                f"{kname} takes {len(self.params)} argument(s) ({', '.join(self.pnames)}), got {len(args)}"
            )
        bufs = dict(f.buffer_map)
        env: dict[str, Any] = {}
        if self.info.structured:
            if outer is None or len(outer) != len(self.info.outer):
                raise TypeError(
                    f"{kname}: kernel {self.name} is launched by the host code of {f.name} (it reads host "
                    f"values: {', '.join(v.name for v, _s in self.info.outer) or 'none'}); call the function"
                )
            for j, ((v, _src), val) in enumerate(zip(self.info.outer, outer)):
                if v.ty == tensormap_ptr:  # a descriptor the host encoded: its 128 bytes
                    env[f"_o{j}"] = _tensormap_bytes(val, v.name, kname)
                else:
                    env[f"_o{j}"] = (
                        int(val) if isinstance(v.ty, PointerType) else _scalar(val, v.ty, v.name, kname)
                    )
        views: dict[int, _View] = {}
        device = None
        first_dev_param = None
        dyn_vals: dict[Var, tuple] = {}
        deferred: list[tuple] = []
        written = None
        for i, (p, a) in enumerate(zip(self.params, args)):
            pname = self.pnames[i]
            b = bufs.get(p)
            if b is not None:
                v = _as_view(a, pname, kname, stream)
                views[i] = v
                if v.readonly:
                    written = self._refuse_readonly(kname, pname, p, written)
                # fp4/fp6 have no torch dtype: their tensors are uint8, one code per element
                codes = b.dtype.kind in ("float4", "float6") and v.dtype == "uint8"
                if v.dtype != b.dtype.name and not codes:
                    raise TypeError(
                        f"{kname}: parameter {pname}: expected dtype {b.dtype.name}, got {v.dtype}"
                    )
                if len(v.shape) != len(b.shape):
                    raise ValueError(
                        f"{kname}: parameter {pname}: expected rank {len(b.shape)} "
                        f"(shape {_fmt_shape(b.shape)}), got rank {len(v.shape)} (shape {list(v.shape)})"
                    )
                if v.device is None and v.ptr != 0:
                    raise ValueError(f"{kname}: parameter {pname}: array is not in CUDA device memory")
                if v.device is not None:
                    if device is None:
                        device, first_dev_param = v.device, pname
                    elif v.device != device:
                        raise ValueError(
                            f"{kname}: parameter {pname} is on cuda:{v.device} but {first_dev_param} is on "
                            f"cuda:{device}; all tensors must be on one device"
                        )
                self._match_dims(kname, pname, b.shape, v.shape, "dimension", dyn_vals, deferred)
                if b.strides:
                    vs = v.strides if v.strides is not None else _contig(v.shape)
                    self._match_dims(kname, pname, b.strides, vs, "stride", dyn_vals, deferred)
                elif v.strides is not None and not _is_contig(v.shape, v.strides):
                    raise ValueError(
                        f"{kname}: parameter {pname}: tensor is not contiguous (strides {list(v.strides)} for "
                        f"shape {list(v.shape)}); pass .contiguous()"
                    )
                el = b.dtype.bytes
                need = max(el, self._align(i), int(b.align or 0))
                if v.ptr % need:
                    raise ValueError(
                        f"{kname}: parameter {pname}: data pointer {v.ptr:#x} is not aligned to {need} bytes"
                    )
                env[f"_p{i}"] = v.ptr
            elif isinstance(p.ty, PointerType) and p.ty.scope == "tensormap":
                env[f"_p{i}"] = _tensormap_bytes(a, pname, kname)
            elif isinstance(p.ty, PointerType):
                if isinstance(a, int) and not isinstance(a, bool):
                    env[f"_p{i}"] = a
                else:
                    v = _as_view(a, pname, kname, stream)
                    views[i] = v
                    if v.readonly:
                        written = self._refuse_readonly(kname, pname, p, written)
                    env[f"_p{i}"] = v.ptr
                    if v.device is not None and device is None:
                        device, first_dev_param = v.device, pname
            else:
                env[f"_a{i}"] = _scalar(a, p.ty, pname, kname)
        for var, (i, k, a, c) in self.dyn_affine.items():  # a dimension a * n + c: n solved
            v = views.get(i)
            if v is None or var in dyn_vals:
                continue
            dim, pname = int(v.shape[k]), self.pnames[i]
            if (dim - c) % a:
                raise ValueError(
                    f"{kname}: parameter {pname}: dimension {k} is {dim}, which is not "
                    f"{affine_text(a, var.name, c)} for any integer {var.name}"
                )
            dyn_vals[var] = ((dim - c) // a, f"{pname} dimension {k}")
        for var, (val, _src) in dyn_vals.items():
            t = cast(PrimType, var.ty)  # T.dynamic makes integer PrimType variables only
            lo, hi = (
                (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1) if t.kind == "int" else (0, (1 << t.bits) - 1)
            )
            if not lo <= val <= hi:
                raise ValueError(
                    f"{kname}: dynamic dimension {var.name} = {val} (from {_src}) does not fit in {t}; "
                    f"declare it as T.dynamic({var.name!r}, 'int64')"
                )
            env[self.host_names[var]] = val
        ns = dict(self._eval_ns)
        ns.update(env)
        for pname, kind, k, code, actual in deferred:
            want = _ev(code, ns)
            if want != actual:
                raise ValueError(
                    f"{kname}: parameter {pname}: {kind} {k} is {actual}, but the signature requires {want}"
                )
        for name, code, _var in self.host_binds:
            ns[name] = _ev(code, ns)
        for code, msg in self.host_asserts:
            if not _ev(code, ns):
                raise ValueError(f"{kname}: {msg}")
        # aliasing of __restrict__ pointers
        if self.module.restrict:
            self._check_alias(kname, views)
        grid = [int(_ev(c, ns)) for c in self.grid_code]
        block = [int(_ev(c, ns)) for c in self.block_code]
        cluster = None if self.cluster_code is None else [int(_ev(c, ns)) for c in self.cluster_code]
        smem = int(_ev(self.smem_code, ns))
        if any(g < 0 for g in grid) or any(b <= 0 for b in block) or smem < 0:
            raise ValueError(f"{kname}: invalid launch configuration grid={grid} block={block} smem={smem}")
        if math.prod(block) > 1024:
            raise ValueError(f"{kname}: block {block} has {math.prod(block)} threads; the limit is 1024")
        ret = None if self.return_code is None else _ev(self.return_code, ns)
        if 0 in grid:
            return ret, None  # nothing to launch (e.g. n == 0)
        if device is None:
            device = _drv.current_device_index()
        _sync_producers(views, stream, device)
        values = []
        for code in self.pack_exprs:
            values.append(ns[code] if code in ns else _ev(code, ns))
        opts = None
        if self.option_codes or self.cooperative:
            from . import cooperative as _coop

            opts = _coop.options(
                [f for f, _ in self.option_codes], [_ev(c, ns) for _, c in self.option_codes]
            )
        return ret, (device, grid, block, cluster, smem, values, opts)

    def _refuse_readonly(self, kname: str, pname: str, p: Any, written: set | None) -> set:
        """A read-only array (``__cuda_array_interface__`` ``data[1]``, DLPack's read-only flag)
        is refused for a parameter the kernel writes; the written parameters, computed once."""
        if written is None:
            written = {q.var for q in self.info.params if q.written}
        if p in written:
            raise ValueError(
                f"{kname}: parameter {pname}: the array is read-only, but the kernel writes {pname}"
            )
        return written

    def _align(self, i: int) -> int:
        p = self.params[i]
        for kp in self.info.params:
            if kp.var is p:
                return kp.align
        return 0

    def _check_alias(self, kname: str, views: dict) -> None:
        ext = {}
        for i, v in views.items():
            if v.ptr == 0:
                continue
            n = math.prod(v.shape)
            if n == 0:
                continue
            item = (
                dict(self.func.buffer_map)[self.params[i]].dtype.bytes
                if self.params[i] in dict(self.func.buffer_map)
                else 1
            )
            if v.strides is None:
                span = n * item
            else:
                span = (sum((s - 1) * abs(st) for s, st in zip(v.shape, v.strides)) + 1) * item
            ext[i] = (v.ptr, v.ptr + span)
        written = {
            i for i, kp in enumerate(self.params) for q in self.info.params if q.var is kp and q.written
        }
        items = sorted(ext)
        for x in items:
            for y in items:
                if x < y and (x in written or y in written):
                    a, b = ext[x], ext[y]
                    if a[0] < b[1] and b[0] < a[1]:
                        raise ValueError(
                            f"{kname}: parameters {self.pnames[x]} and {self.pnames[y]} overlap in memory, but "
                            f"the kernel was compiled with __restrict__ pointers; compile with "
                            f"tirx.compile(..., restrict=False) to allow aliasing"
                        )

    def _match_dims(self, kname, pname, decl, actual, kind, dyn_vals, deferred) -> None:
        for k, (d, a) in enumerate(zip(decl, actual)):
            a = int(a)
            if isinstance(d, IntImm):
                if d.value != a:
                    raise ValueError(
                        f"{kname}: parameter {pname}: {kind} {k} must be {d.value}, got {a} "
                        f"(shape {_fmt_shape(decl)} vs {list(actual)})"
                    )
            elif isinstance(d, Var) and d in self.dyn_src:
                prev = dyn_vals.get(d)
                if prev is None:
                    dyn_vals[d] = (a, f"{pname} {kind} {k}")
                elif prev[0] != a:
                    raise ValueError(
                        f"{kname}: dynamic dimension {d.name} disagrees: {prev[0]} from {prev[1]}, "
                        f"{a} from {pname} {kind} {k}"
                    )
            else:
                deferred.append((pname, kind, k, self._py(d, self.host_names, f"{kind} of {pname}"), a))


_CODES: dict[str, Any] = {}


def _ev(code: str, ns: dict) -> Any:
    """``eval`` of a host expression the launcher generated from the kernel's IR, compiled
    once per text (compiling it again on every call cost the general path ~6 us an
    expression)."""
    c = _CODES.get(code)
    if c is None:
        if len(_CODES) > 8192:
            _CODES.clear()
        c = _CODES[code] = compile(code, "<tirx host expression>", "eval")
    return eval(c, ns)


def _contig(shape: tuple) -> tuple:
    out = []
    acc = 1
    for s in reversed(shape):
        out.append(acc)
        acc *= int(s)
    return tuple(reversed(out))


def _is_contig(shape: tuple, strides: tuple) -> bool:
    """Row-major strides (size-1 dimensions' strides do not matter, and a tensor of no elements
    is contiguous whatever its strides: torch and DLPack give such tensors zero strides)."""
    if 0 in shape:
        return True
    acc = 1
    for s, st in zip(reversed(shape), reversed(strides)):
        if s != 1 and st != acc:
            return False
        acc *= s
    return True


def _fmt_shape(shape: tuple) -> str:
    return (
        "["
        + ", ".join(str(d.value) if isinstance(d, IntImm) else getattr(d, "name", "?") for d in shape)
        + "]"
    )
