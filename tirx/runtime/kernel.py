"""Compiled kernels: argument checks, launch configuration and launch.

A :class:`Kernel` is called with the function's arguments in order: tensors (torch,
CuPy, anything with ``__cuda_array_interface__`` or ``__dlpack__``) for tensor
parameters, Python numbers for scalar parameters. Before every launch it checks each
argument (dtype, rank, shape, device, contiguity, alignment, count, aliasing of
``__restrict__`` pointers) and raises ``TypeError``/``ValueError`` naming the parameter;
dynamic dims are read from the shapes and must agree across arguments; the grid comes
from the launch configuration evaluated on those values.

Two paths compute the same thing: a fast path, Python source generated per kernel
signature for all-torch arguments (a handful of attribute reads, one ``struct.pack_into``
and ``cuLaunchKernel``), and a general path that handles every argument kind and
produces the error messages. Any check that fails on the fast path hands the call to the
general path, which raises the precise error.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import numbers
import os
import struct
import sys
import threading
from typing import Any, cast

from ..ir import IntImm, PointerType, PrimType, Var
from . import driver as _drv
from .hostexpr import HOST_GLOBALS, HostExprError, to_python
from .prepared import PreparedLaunch

__all__ = ["CompiledImage", "CompiledModule", "HostFunction", "Kernel", "PreparedSequence"]

_PACK = {
    "bool": "?", "int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I",
    "int64": "q", "uint64": "Q", "float16": "e", "float32": "f", "float64": "d", "bfloat16": "H",
}  # fmt: skip
_TORCH_NAMES = {"float": "float32", "half": "float16", "double": "float64", "long": "int64", "int": "int32"}


def _bf16_bits(x: float) -> int:
    (u,) = struct.unpack("<I", struct.pack("<f", x))
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return 0x7FC0
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


class _View:
    """A device array seen through any of the supported protocols."""

    __slots__ = ("device", "dtype", "keep", "ptr", "shape", "strides")

    def __init__(
        self, ptr: int, shape: tuple, strides: tuple | None, dtype: str, device: int | None, keep: Any
    ):
        self.ptr, self.shape, self.strides, self.dtype, self.device, self.keep = (
            ptr,
            shape,
            strides,
            dtype,
            device,
            keep,
        )


def _dtype_name(dt: Any) -> str:
    s = str(dt)
    s = s.replace("torch.", "")
    return _TORCH_NAMES.get(s, s)


def _as_view(x: Any, pname: str, kname: str) -> _View:
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
        import numpy as np

        shape = tuple(int(s) for s in cai["shape"])
        try:
            dt = np.dtype(cai["typestr"])
            name = dt.name if dt.name != "bool" else "bool"
            item = dt.itemsize
        except TypeError:
            raise TypeError(
                f"{kname}: parameter {pname}: unsupported element type {cai['typestr']!r}"
            ) from None
        st = cai.get("strides")
        strides = None
        if st is not None:
            if any(s % item for s in st):
                raise ValueError(
                    f"{kname}: parameter {pname}: strides {st} are not a multiple of the element size"
                )
            strides = tuple(s // item for s in st)
        dev = getattr(getattr(x, "device", None), "id", None)
        if dev is None:
            dev = _pointer_device(int(cai["data"][0]))
        return _View(int(cai["data"][0]), shape, strides, name, dev, x)
    if hasattr(x, "__dlpack__"):
        dl_dev = None
        with contextlib.suppress(Exception):
            dl_dev = x.__dlpack_device__()
        if dl_dev is not None and int(dl_dev[0]) not in (2, 13):  # kDLCUDA, kDLCUDAManaged
            raise ValueError(
                f"{kname}: parameter {pname}: array is not on a CUDA device (DLPack device {dl_dev})"
            )
        if torch is not None:
            return _as_view(torch.from_dlpack(x), pname, kname)
        cupy = sys.modules.get("cupy")
        if cupy is not None:
            return _as_view(cupy.from_dlpack(x), pname, kname)
        raise TypeError(f"{kname}: parameter {pname}: reading a __dlpack__ array needs torch or cupy")
    if isinstance(x, (numbers.Number, bool)):
        raise TypeError(f"{kname}: parameter {pname}: expected a CUDA tensor, got the number {x!r}")
    if type(x).__module__ == "numpy" or hasattr(x, "__array_interface__"):
        raise ValueError(
            f"{kname}: parameter {pname}: a host (CPU) array was given, the kernel needs a CUDA tensor"
        )
    raise TypeError(f"{kname}: parameter {pname}: expected a CUDA tensor, got {type(x).__name__}")


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


def _stream_handle(stream: Any, device: int) -> int:
    if stream is None:
        torch = sys.modules.get("torch")
        if torch is not None:
            try:
                return int(torch._C._cuda_getCurrentRawStream(device))
            except Exception:
                return int(torch.cuda.current_stream(device).cuda_stream)
        cupy = sys.modules.get("cupy")
        if cupy is not None:
            return int(cupy.cuda.get_current_stream().ptr)
        return 0
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr", "handle"):
        v = getattr(stream, attr, None)
        if v is not None:
            return int(v)
    try:
        return int(stream)
    except Exception:
        raise TypeError(f"stream: cannot use {type(stream).__name__} as a CUDA stream") from None


class Kernel:
    """One ``__global__`` kernel: inspect ``source``/``ptx``/``cubin``; call it to launch."""

    def __init__(self, info: Any, module: CompiledModule, image: CompiledImage | None = None):
        self.info = info
        self.module = module
        self.image = module if image is None else image  # the NVRTC build holding its code
        self.name = info.name
        self.func = info.func
        self._fns: dict[int, Any] = {}
        self._fnp: dict[int, Any] = {}  # device -> the CUfunction as a ctypes.c_void_p (ctypes launcher)
        self._blocks: dict[int, tuple] = {}
        self._xblocks: dict[int, tuple] = {}  # thread -> cuLaunchKernelEx buffer (ctypes launcher)
        self._streams: dict[int, Any] = {}
        self._smem_max: dict[int, int] = {}
        self._lock = threading.Lock()
        self._plan()

    # -- inspection ---------------------------------------------------------------
    @property
    def source(self) -> str:
        return self.image.source

    @property
    def ptx(self) -> str:
        return self.image.ptx

    @property
    def cubin(self) -> bytes:
        return self.image.cubin

    @property
    def arch(self) -> str:
        return self.image.arch

    def __repr__(self) -> str:
        ps = ", ".join(p.name for p in self.func.params)
        return f"<tirx.Kernel {self.name}({ps}) for {self.arch}>"

    # -- planning -------------------------------------------------------------------
    def _plan(self) -> None:
        info = self.info
        f = info.func
        self.kname = f"{f.name}()"
        self.params = list(f.params)
        bufs = dict(f.buffer_map)
        self.pnames = [bufs[p].name if p in bufs else p.name for p in self.params]
        names: dict[Var, str] = {}
        for i, p in enumerate(self.params):
            if p not in bufs:
                names[p] = f"_a{i}"
        dyn = info.dyn_vars
        for j, v in enumerate(dyn):
            names[v] = f"_d{j}"
        # where each dyn var is first read: (param index, "shape"|"stride", dim)
        self.dyn_src: dict[Var, tuple] = {}
        for i, p in enumerate(self.params):
            b = bufs.get(p)
            if b is None:
                continue
            for k, s in enumerate(b.shape):
                if isinstance(s, Var) and s not in self.dyn_src and s in names:
                    self.dyn_src[s] = (i, "shape", k)
            for k, s in enumerate(b.strides):
                if isinstance(s, Var) and s not in self.dyn_src and s in names:
                    self.dyn_src[s] = (i, "stride", k)
        for v in dyn:
            if v not in self.dyn_src:
                raise ValueError(
                    f"{self.kname}: the dynamic dimension {v.name} is never a whole dimension of a tensor "
                    f"parameter, so it cannot be read from the arguments"
                )
        host_names = dict(names)
        self.host_binds: list[tuple[str, str, Any]] = []
        self.host_asserts: list[tuple[str, str]] = []
        self.return_code: str | None = None  # the host's `return <value>` after the launch
        for k, s in enumerate(info.host_stmts):
            from ..ir import Assert, Bind, Return

            if isinstance(s, Return):
                self.return_code = self._py(s.value, host_names, "the returned value")
            elif isinstance(s, Bind):
                code = self._py(s.value, host_names, "a host binding")
                host_names[s.var] = f"_h{k}"
                self.host_binds.append((f"_h{k}", code, s.var))
            elif isinstance(s, Assert):
                msg = " ".join(s.message) or "assertion failed"
                self.host_asserts.append((self._py(s.cond, host_names, "an assert"), f"{s.kind}: {msg}"))
        self.host_names = host_names
        e = info.entry
        self.grid_code = [self._py(x, host_names, "the grid") for x in e.grid]
        self.block_code = [self._py(x, host_names, "the block") for x in e.block]
        self.cluster_code = (
            None if e.cluster is None else [self._py(x, host_names, "the cluster") for x in e.cluster]
        )
        self.smem_code = self._py(e.dynamic_smem_bytes, host_names, "dynamic_smem_bytes")
        # TIRx's other launch options (priority, access_policy_window, cooperative, ...: launch
        # values beyond the shape) and grid_sync's cooperative launch go through
        # tirx.runtime.cooperative on the general path
        self.option_codes = [
            (fld, self._py(a, host_names, fld))
            for fld, a in zip(e.attrs["cuda.launch_fields"], e.args)
            if fld.split(".")[0] not in ("grid", "block", "cluster", "dynamic_smem_bytes")
        ]
        self.cooperative = "cooperative" in self.image.features
        # C parameter packing
        fmt = "="
        offs = []
        size = 0
        self.pack_exprs: list[str] = []
        for kp in info.params:
            if kp.kind == "tensormap":  # a 128-byte CUtensorMap by value, 64-byte aligned
                pad = (-size) % 64
                if pad:
                    fmt += f"{pad}x"
                    size += pad
                fmt += "128s"
                offs.append(size)
                size += 128
                self.pack_exprs.append(f"_p{self.params.index(kp.var)}")
                continue
            if kp.kind in ("buffer", "handle") or isinstance(kp.ty, PointerType):
                code, nb = "Q", 8
            else:
                t = kp.ty
                if not isinstance(t, PrimType) or t.base not in _PACK:
                    raise TypeError(
                        f"{self.kname}: parameter {kp.name}: type {t} cannot be passed to a kernel"
                    )
                code = _PACK[t.base]
                nb = struct.calcsize("=" + code)
            pad = (-size) % nb
            if pad:
                fmt += f"{pad}x"
                size += pad
            fmt += code
            offs.append(size)
            size += nb
            if kp.kind == "buffer" or kp.kind == "handle":
                self.pack_exprs.append(f"_p{self.params.index(kp.var)}")
            elif kp.kind == "scalar":
                self.pack_exprs.append(f"_a{self.params.index(kp.var)}")
            else:
                self.pack_exprs.append(host_names[kp.var])
        self.fmt = fmt
        self.param_offsets = offs
        self.param_size = max(size, 8)
        ns = dict(HOST_GLOBALS)
        self._eval_ns = ns
        self._fast = self._build_fast()

    def _py(self, e: Any, names: dict, what: str) -> str:
        try:
            return to_python(e, names)
        except HostExprError as err:
            raise ValueError(f"{self.kname}: {what} cannot be computed on the host: {err}") from None

    # -- per-device state --------------------------------------------------------------
    def _function(self, dev: int) -> Any:
        fn = self._fns.get(dev)
        if fn is None:
            with self._lock:
                fn = self._fns.get(dev)
                if fn is None:
                    fn = self.image._load(dev, self.name)
                    self._fnp[dev] = ctypes.c_void_p(int(fn))
                    self._fns[dev] = fn
        return fn

    def _block(self) -> tuple:
        ident = threading.get_ident()
        blk = self._blocks.get(ident)
        if blk is None:
            n = len(self.param_offsets)
            buf = (ctypes.c_char * self.param_size)()
            base = ctypes.addressof(buf)
            arr = (ctypes.c_void_p * max(n, 1))(*[base + o for o in self.param_offsets])
            blk = (buf, ctypes.addressof(arr), arr)
            self._blocks[ident] = blk
        return blk

    def _stream_obj(self, h: int) -> Any:
        s = self._streams.get(h)
        if s is None:
            s = _drv.driver().CUstream(h)
            if len(self._streams) > 64:
                self._streams.clear()
            self._streams[h] = s
        return s

    # -- general path ----------------------------------------------------------------
    def _check_and_launch(self, args: tuple, stream: Any) -> Any:
        ret, plan = self._check(args)
        if plan is not None:
            device, grid, block, cluster, smem, values, opts = plan
            self._launch(device, grid, block, cluster, smem, values, stream, opts)
        return ret

    def _check(self, args: tuple) -> tuple[Any, tuple | None]:
        """Every argument check of a call; (the host's return value, the launch or None).

        The launch is ``(device, grid, block, cluster, smem, values, opts)``, the arguments of
        :meth:`_launch` but the stream; None when the grid is empty (nothing to launch).
        """
        f = self.func
        kname = self.kname
        if len(args) != len(self.params):
            raise TypeError(
                f"{kname} takes {len(self.params)} argument(s) ({', '.join(self.pnames)}), got {len(args)}"
            )
        bufs = dict(f.buffer_map)
        env: dict[str, Any] = {}
        views: dict[int, _View] = {}
        device = None
        first_dev_param = None
        dyn_vals: dict[Var, tuple] = {}
        deferred: list[tuple] = []
        for i, (p, a) in enumerate(zip(self.params, args)):
            pname = self.pnames[i]
            b = bufs.get(p)
            if b is not None:
                v = _as_view(a, pname, kname)
                views[i] = v
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
                    v = _as_view(a, pname, kname)
                    views[i] = v
                    env[f"_p{i}"] = v.ptr
                    if v.device is not None and device is None:
                        device, first_dev_param = v.device, pname
            else:
                env[f"_a{i}"] = _scalar(a, p.ty, pname, kname)
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

    def _launch(self, device, grid, block, cluster, smem, values, stream, opts=None) -> None:
        d = _drv.driver()
        fn = self._function(device)
        if smem > self._smem_max.get(device, 48 * 1024):
            _drv.set_max_dynamic_smem(fn, smem)
            self._smem_max[device] = smem
        blk = self._block()
        struct.pack_into(self.fmt, blk[0], 0, *values)
        if opts is not None and opts.get("stream") is not None and stream is None:
            stream = opts["stream"]  # LaunchConfig(stream=...); a stream= argument of the call wins
        sh = self._stream_obj(_stream_handle(stream, device))
        if opts is not None:
            from . import cooperative as _coop

            if _coop.needs_ex(self.image.features, opts, cluster):
                coop = _coop.is_cooperative(self.image.features, opts)
                r = _coop.launch(
                    d, fn, grid, block, smem, sh, blk[1], opts, cluster, cooperative=coop, device=device
                )
                if int(r[0]) != 0:
                    _drv.context(device)
                    r = _coop.launch(d, fn, grid, block, smem, sh, blk[1], opts, cluster, cooperative=coop,
                                     device=device)  # fmt: skip
                    _drv.check(r, f"launching {self.name}")
                return
        if cluster is None:
            r = d.cuLaunchKernel(fn, *grid, *block, smem, sh, blk[1], 0)
        else:
            r = self._launch_ex(d, fn, grid, block, cluster, smem, sh, blk[1])
        if int(r[0]) != 0:
            # no current context in this thread (or another device's): make ours current and retry once
            _drv.context(device)
            if cluster is None:
                r = d.cuLaunchKernel(fn, *grid, *block, smem, sh, blk[1], 0)
            else:
                r = self._launch_ex(d, fn, grid, block, cluster, smem, sh, blk[1])
            _drv.check(r, f"launching {self.name}")

    def _launch_ex(self, d, fn, grid, block, cluster, smem, sh, params):
        cfg = d.CUlaunchConfig()
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = grid
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = block
        cfg.sharedMemBytes = smem
        cfg.hStream = sh
        attr = d.CUlaunchAttribute()
        attr.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster
        cfg.attrs = [attr]
        cfg.numAttrs = 1
        for g, c, ax in zip(grid, cluster, "xyz"):
            if g % c:
                raise ValueError(f"{self.kname}: grid.{ax}={g} is not a multiple of cluster.{ax}={c}")
        return d.cuLaunchKernelEx(cfg, fn, params, 0)

    # -- fast path ----------------------------------------------------------------------
    def _build_fast(self):
        """Source of the all-torch fast ``__call__``; None when the signature needs the general path.

        Straight-line code specialised for the signature: per tensor five torch reads
        (``get_device``, ``dtype`` compared by identity, ``is_contiguous``, ``shape`` unpacked
        to its rank, ``data_ptr``), integer comparisons for every check of the general path,
        then one precompiled ``struct.pack_into`` and the driver call (bound in
        :meth:`_bind_fast`, ``@TAIL@``/``@LAUNCH@``). Any failed check raises ``_Slow``
        inside the ``try``; the call then goes to the general path (``_general``), which
        raises the precise error or handles the other argument kinds. Nothing is launched
        unless every check passed.
        """
        if self.option_codes or self.cooperative or self.return_code is not None:
            # launch options / cooperative launches (cuLaunchKernelEx) and a host `return <value>`:
            # the general path
            return None
        f = self.func
        bufs = dict(f.buffer_map)
        n = len(self.params)
        argn = [f"x{i}" for i in range(n)]
        slow = "raise _Slow"
        body: list[str] = []
        if n:
            body.append(f"{', '.join(argn)}{',' if n == 1 else ''} = args")  # wrong count: ValueError
        else:
            body.append(f"if args: {slow}")
        seen_dyn: set = set()
        deferred = []
        ext = []
        tensors = [i for i, p in enumerate(self.params) if p in bufs]
        if not tensors:
            return None
        conds = [f"type({argn[i]}) is not _T" for i in tensors]
        body.append(f"if {' or '.join(conds)}: {slow}")
        first = True
        for i, p in enumerate(self.params):
            b = bufs.get(p)
            x = argn[i]
            if b is not None:
                if b.strides:
                    return None  # explicit strides: general path
                if first:
                    body.append(f"dev = {x}.get_device()")
                    body.append(f"if {x}.dtype is not _dt{i} or dev < 0 or not {x}.is_contiguous(): {slow}")
                    first = False
                else:
                    body.append(
                        f"if {x}.dtype is not _dt{i} or {x}.get_device() != dev or not {x}.is_contiguous(): "
                        f"{slow}"
                    )
                dims = [f"s{i}_{k}" for k in range(len(b.shape))]
                if dims:
                    body.append(f"{', '.join(dims)}{',' if len(dims) == 1 else ''} = {x}.shape")
                else:
                    body.append(f"if {x}.shape: {slow}")
                for k, d in enumerate(b.shape):
                    sk = dims[k]
                    if isinstance(d, IntImm):
                        body.append(f"if {sk} != {d.value}: {slow}")
                    elif isinstance(d, Var) and d in self.dyn_src:
                        nm = self.host_names[d]
                        if d in seen_dyn:
                            body.append(f"if {sk} != {nm}: {slow}")
                        else:
                            seen_dyn.add(d)
                            t = d.ty
                            hi = (1 << (t.bits - 1)) - 1 if t.kind == "int" else (1 << t.bits) - 1
                            body.append(f"{nm} = {sk}")
                            body.append(f"if {nm} > {hi}: {slow}")
                    else:
                        deferred.append((sk, d))
                body.append(f"_p{i} = {x}.data_ptr()")
                need = max(b.dtype.bytes, self._align(i), int(b.align or 0))
                if need > 1:
                    body.append(f"if _p{i} % {need}: {slow}")
                ext.append((i, b, dims))
            elif isinstance(p.ty, PointerType) and p.ty.scope == "tensormap":
                body.append(f"if type({x}) is not bytes or len({x}) != 128: {slow}")  # plan.param(t)
                body.append(f"_p{i} = {x}")
            elif isinstance(p.ty, PointerType):
                body.append(f"if type({x}) is not int: {slow}")  # a raw address (tensors: general path)
                body.append(f"_p{i} = {x}")
            else:
                t = p.ty
                if t.is_bool:
                    body.append(f"if type({x}) is not bool: {slow}")
                elif t.is_int:
                    lo, hi = (
                        (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1)
                        if t.kind == "int"
                        else (0, (1 << t.bits) - 1)
                    )
                    body.append(f"if type({x}) is not int or not {lo} <= {x} <= {hi}: {slow}")
                elif t.base in ("float32", "float64", "float16"):
                    body.append(f"if type({x}) is not float: {slow}")
                else:
                    return None
                body.append(f"_a{i} = {x}")
        for sk, d in deferred:
            body.append(f"if {sk} != {self._py(d, self.host_names, 'a shape')}: {slow}")
        if self.module.restrict:
            written = {q.var for q in self.info.params if q.written}
            for a in range(len(ext)):
                for c in range(a + 1, len(ext)):
                    (i, bi, di), (j, bj, dj) = ext[a], ext[c]
                    if self.params[i] in written or self.params[j] in written:
                        ni = " * ".join([*di, str(bi.dtype.bytes)])
                        nj = " * ".join([*dj, str(bj.dtype.bytes)])
                        body.append(f"if _p{i} < _p{j} + {nj} and _p{j} < _p{i} + {ni}: {slow}")
        for name, code, _var in self.host_binds:
            body.append(f"{name} = {code}")
        for code, _msg in self.host_asserts:
            body.append(f"if not {code}: {slow}")
        # grid 0 is a no-op and out-of-range grids are the driver's error: both on the general path;
        # constant dims are checked here and become literals
        dims = {}
        for pre, codes, lims in (
            ("g", self.grid_code, (2147483647, 65535, 65535)),
            ("b", self.block_code, (1024,) * 3),
        ):
            for ax, code, hi in zip("xyz", codes, lims):
                c = _int_literal(code)
                if c is None:
                    body.append(f"{pre}{ax} = {code}")
                    body.append(f"if not 0 < {pre}{ax} <= {hi}: {slow}")
                    dims[pre + ax] = f"{pre}{ax}"
                elif not 0 < c <= hi:
                    return None
                else:
                    dims[pre + ax] = str(c)
        bdims = [_int_literal(c) for c in self.block_code]
        if None in bdims:
            body.append(f"if {dims['bx']} * {dims['by']} * {dims['bz']} > 1024: {slow}")
        elif math.prod(bdims) > 1024:
            return None
        self._dims = ", ".join(dims[k] for k in ("gx", "gy", "gz", "bx", "by", "bz"))
        if self.cluster_code is not None:  # cuLaunchKernelEx with a cluster-dimension attribute
            cl = []
            for ax, code in zip("xyz", self.cluster_code):
                c = _int_literal(code)
                if c is None:
                    body.append(f"c{ax} = {code}")
                    body.append(f"if not 0 < c{ax} <= 65535 or {dims['g' + ax]} % c{ax}: {slow}")
                    cl.append(f"c{ax}")
                elif not 0 < c <= 65535:
                    return None
                else:
                    g = _int_literal(dims["g" + ax])
                    if g is None:
                        body.append(f"if g{ax} % {c}: {slow}")
                    elif g % c:
                        return None
                    cl.append(str(c))
            self._dims += ", sm, h, blk[4], 1, 4, " + ", ".join(cl)  # attrs, numAttrs, CLUSTER_DIMENSION
        else:
            self._dims += ", sm, h"
        sm = self.smem_code
        if sm != "0":
            body.append(f"sm = {sm}")
            body.append(f"if sm < 0 or sm > _smem.get(dev, 49152): {slow}")
        else:
            body.append("sm = 0")
        body.append("if stream is None: h = _raw(dev)")
        body.append("elif type(stream) is int and 0 <= stream <= 18446744073709551615: h = stream")
        body.append(f"else: {slow}")
        body.append("@TAIL@")
        lines = [
            "def __call__(self, *args, stream=None, **kw):",
            "    if kw: args = tuple(self.func.bind_args(args, kw))",
            "    fn = None",
            "    try:",
            *["        " + x for x in body],
            "    except Exception:",
            "        pass",
            "    if fn is None:",
            "        return self._general(args, stream)",
            "    @LAUNCH@",
            "    return None",
        ]
        return "\n".join(lines) + "\n"

    def _bind_fast(self) -> Any:
        """Compile the fast path once torch and the driver are there (after the first launch)."""
        src = self._fast
        if not src:
            return None
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        ns: dict[str, Any] = dict(HOST_GLOBALS)
        bufs = dict(self.func.buffer_map)
        for i, p in enumerate(self.params):
            b = bufs.get(p)
            if b is not None:
                tdt = getattr(torch, b.dtype.name, None)
                if tdt is None:
                    return None
                ns[f"_dt{i}"] = tdt
        try:
            raw = torch._C._cuda_getCurrentRawStream
        except AttributeError:
            return None
        packs = ", ".join(self.pack_exprs)
        if self.cluster_code is not None and not _FAST_CLUSTER:
            return None  # see _FAST_CLUSTER
        ex = self.module.launcher == "ctypes" or self.cluster_code is not None
        if ex and _ctypes_launch_ex() is not None:
            # cuLaunchKernelEx(&config, f, params, NULL) of libcuda through ctypes: the launch
            # config (grid, block, smem, stream) and the parameter values sit in one per-thread
            # buffer written by a single pack_into; the call's four arguments are prebuilt
            # ctypes objects (no per-call conversion of eleven Python ints). Cluster kernels
            # take it under either launcher: cuda-bindings' cuLaunchKernelEx needs a
            # CUlaunchConfig and a CUlaunchAttribute object built per call (~3 us)
            tail = (
                "blk = _xb.get(_ident()) or self._exblock()\n"
                "f = _fnp[dev]\n"
                f"_xpack(blk[0], 0, {self._dims}{', ' if packs else ''}{packs})\n"
                "fn = f"
            )
            launch = "if _launch(blk[1], fn, blk[2], None): return self._general(args, stream)"
            ns["_launch"] = _ctypes_launch_ex()
            head = _EX_HEAD if self.cluster_code is None else _EX_HEAD_CLUSTER
            ns["_xpack"] = struct.Struct(head + self.fmt[1:]).pack_into
            for dev, fn in self._fns.items():
                self._fnp[dev] = ctypes.c_void_p(int(fn))
        elif self.cluster_code is not None:
            return None  # cluster launches: the general path's cuLaunchKernelEx through cuda-bindings
        else:
            d = _drv.driver()
            tail = (
                f"blk = _blocks[_ident()]\nso = _streams[h]\nf = _fns[dev]\n_pack(blk[0], 0, {packs})\nfn = f"
            )
            launch = (
                f"if _launch(fn, {self._dims.replace(', sm, h', ', sm, so')}, blk[1], 0)[0] is not _OK: "
                "return self._general(args, stream)"
            )
            ns["_launch"] = d.cuLaunchKernel
            ns["_OK"] = d.CUresult.CUDA_SUCCESS
        src = src.replace("@TAIL@", tail.replace("\n", "\n        ")).replace("@LAUNCH@", launch)
        ns.update(
            _T=torch.Tensor,
            _Slow=_Slow,
            _fns=self._fns,
            _fnp=self._fnp,
            _blocks=self._blocks,
            _xb=self._xblocks,
            _streams=self._streams,
            _smem=self._smem_max,
            _ident=threading.get_ident,
            _pack=struct.Struct(self.fmt).pack_into,
            _raw=raw,
        )
        self.fast_source = src
        exec(compile(src, f"<tirx fast path {self.name}>", "exec"), ns)
        return ns["__call__"]

    def _exblock(self) -> tuple:
        """This thread's cuLaunchKernelEx buffer: a CUlaunchConfig, then the parameter values."""
        ident = threading.get_ident()
        blk = self._xblocks.get(ident)
        if blk is None:
            n = len(self.param_offsets)
            at = _EX_PARAMS if self.cluster_code is None else _EX_PARAMS_CLUSTER
            buf = (ctypes.c_char * (at + self.param_size))()
            base = ctypes.addressof(buf)
            arr = (ctypes.c_void_p * max(n, 1))(*[base + at + o for o in self.param_offsets])
            # (buffer, &config, kernelParams, keep-alive, &attribute: right after the 56-byte config)
            blk = (buf, ctypes.c_void_p(base), ctypes.c_void_p(ctypes.addressof(arr)), arr, base + 56)
            self._xblocks[ident] = blk
        return blk

    def _general(self, args: tuple, stream: Any) -> Any:
        return self._check_and_launch(args, stream)

    def prepare(self, *args: Any, **kwargs: Any) -> PreparedLaunch:
        """Check the arguments once and return a launch that reuses them (``launch()``).

        The checks are those of a call; the returned :class:`PreparedLaunch` launches with
        only the stream query and ``cuLaunchKernel`` left per call (see
        ``tirx.runtime.prepared`` for its contract).
        """
        if kwargs:
            args = tuple(self.func.bind_args(args, kwargs))
        ret, plan = self._check(args)
        return PreparedLaunch(self, args, ret, plan)

    def __call__(self, *args: Any, stream: Any = None, **kwargs: Any) -> Any:
        if kwargs:  # by parameter name: bound to positions once, then the same launch
            args = tuple(self.func.bind_args(args, kwargs))
        ret = self._check_and_launch(args, stream)
        if self._fast and self._fns and "torch" in sys.modules:
            # first launch done: switch this object to the generated fast __call__
            fast = self._bind_fast()
            if fast is None:
                self._fast = None
                return ret
            self._block()
            if stream is None or isinstance(stream, int):
                for dev in list(self._fns):
                    with contextlib.suppress(Exception):
                        self._stream_obj(_stream_handle(stream, dev))
            self._fast_fn = fast
            self.__class__ = type(f"Kernel_{self.name}", (Kernel,), {"__call__": fast, "__slots__": ()})
        return ret

    _fast_fn = None
    _dims = ""
    _stream_handle = staticmethod(_stream_handle)  # for PreparedLaunch (no import back into this module)


# Cluster launches on the fast path: libcuda's cuLaunchKernelEx through ctypes, the cluster
# attribute in the same per-thread buffer as the config and the parameters (under either
# launcher). TIRX_FAST_CLUSTER=0 sends cluster kernels to the general path instead (~150 us of
# host time a call on the H200 host, docs/benchmarks.md).
_FAST_CLUSTER = os.environ.get("TIRX_FAST_CLUSTER", "1") != "0"


class _Slow(Exception):
    """Raised inside the generated fast path: hand this call to the general path."""


# cuLaunchKernelEx's CUlaunchConfig (cuda.h): 7 unsigned ints (grid, block, sharedMemBytes),
# 4 bytes of padding, CUstream hStream at 32, CUlaunchAttribute* attrs at 40, unsigned numAttrs
# at 48; 56 bytes. Without a cluster the parameter values start at 64 (a multiple of every
# parameter alignment) and the 24 pad bytes written with the config keep attrs = NULL and
# numAttrs = 0. With a cluster, one CUlaunchAttribute follows at 56 (CUlaunchAttributeID id,
# 4 pad bytes, a 64-byte value union whose clusterDim is three unsigned ints; 72 bytes) and the
# parameters start at 128; attrs points at the attribute, numAttrs = 1, id = 4
# (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION).
_EX_HEAD = "=7I4xQ24x"
_EX_PARAMS = 64
_EX_HEAD_CLUSTER = "=7I4xQQI4xI4x3I52x"
_EX_PARAMS_CLUSTER = 128
assert struct.calcsize(_EX_HEAD) == _EX_PARAMS and struct.calcsize(_EX_HEAD_CLUSTER) == _EX_PARAMS_CLUSTER

_CT_LAUNCH: list = []
_CT_LAUNCH_EX: list = []


def _libcuda():
    return ctypes.CDLL("libcuda.so.1")


def _ctypes_launch():
    """``cuLaunchKernel`` from libcuda through ctypes (the library cuda-bindings loaded)."""
    if not _CT_LAUNCH:
        try:
            fn = _libcuda().cuLaunchKernel
            fn.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
            fn.restype = ctypes.c_int
            _CT_LAUNCH.append(fn)
        except (OSError, AttributeError):
            _CT_LAUNCH.append(None)
    return _CT_LAUNCH[0]


def _int_literal(code: str) -> int | None:
    """The value of ``code`` when it is an integer literal (``"128"``, ``"(1)"``, ``"-1"``), else None."""
    c = code.strip()
    while c.startswith("(") and c.endswith(")"):
        c = c[1:-1].strip()
    body = c[1:] if c.startswith("-") else c
    return int(c) if body.isdigit() else None


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


def _ctypes_launch_ex():
    """``cuLaunchKernelEx`` from libcuda through ctypes, called with ctypes objects only."""
    if not _CT_LAUNCH_EX:
        try:
            fn = _libcuda().cuLaunchKernelEx
            fn.restype = ctypes.c_int  # no argtypes: every argument is a c_void_p or None
            _CT_LAUNCH_EX.append(fn)
        except (OSError, AttributeError):
            _CT_LAUNCH_EX.append(None)
    return _CT_LAUNCH_EX[0]


def _contig(shape: tuple) -> tuple:
    out = []
    acc = 1
    for s in reversed(shape):
        out.append(acc)
        acc *= int(s)
    return tuple(reversed(out))


def _is_contig(shape: tuple, strides: tuple) -> bool:
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


class CompiledImage:
    """One NVRTC build: the CUDA source, its PTX and cubin for one arch and option list, loaded
    once per device. A module's kernels are one image, unless device entries ask for other
    compile settings (``backend_config``): then each group of equal settings is one image."""

    def __init__(self, source: str, ptx: str, cubin: bytes, arch: str, log: str = "", options: tuple = (),
                 cache_key: str = "", cache_hit: str = "", features: frozenset = frozenset(),
                 config: dict | None = None, image_format: str = "cubin"):  # fmt: skip
        self.features = frozenset(features)  # codegen features: "cooperative", "nvshmem", ...
        self.source = source
        self.ptx = ptx
        self.cubin = cubin
        self.arch = arch
        self.log = log
        self.options = options
        self.cache_key = cache_key
        self.cache_hit = cache_hit
        #: the resolved CUDA settings of backend_config (``{"arch", "compiler", "nvrtc", ...}``), or None
        self.config = config
        # "cubin", or "ptx" (backend_config target_format "ptx": the driver JIT-compiles it at load)
        self.image_format = image_format
        self._mods: dict[int, Any] = {}
        self._mlock = threading.Lock()

    def _image(self) -> bytes:
        return self.ptx.encode() + b"\0" if self.image_format == "ptx" else self.cubin

    def _load(self, dev: int, name: str) -> Any:
        with self._mlock:
            mod = self._mods.get(dev)
            d = _drv.driver()
            if mod is None:
                _drv.require()
                _drv.context(dev)
                mod = _drv.check(d.cuModuleLoadData(self._image()), "cuModuleLoadData")
                if "nvshmem" in getattr(self, "features", ()):  # its NVSHMEM device state
                    from . import nvshmem

                    nvshmem.module_loaded(mod)
                self._mods[dev] = mod
            return _drv.check(d.cuModuleGetFunction(mod, name.encode()), f"cuModuleGetFunction({name})")


class HostFunction:
    """A function whose host code launches several kernels, in order: one per device entry
    (TIRx's ``with T.device_entry(...)`` blocks one after another, or top-level
    ``T.launch_thread`` nests). A call checks the arguments and launches each kernel on the
    same stream, as the function's host code does, and returns the host's final ``return``
    value. ``kernels`` maps each kernel's C name to its :class:`Kernel`."""

    def __init__(self, name: str, kernels: list, module: CompiledModule):
        self.name = name
        self.module = module
        self.func = kernels[0].func
        self.kernels = {k.name: k for k in kernels}
        self._seq = tuple(kernels)

    @property
    def source(self) -> str:
        return self._seq[0].source

    @property
    def ptx(self) -> str:
        return self._seq[0].ptx

    @property
    def cubin(self) -> bytes:
        return self._seq[0].cubin

    @property
    def arch(self) -> str:
        return self._seq[0].arch

    def __repr__(self) -> str:
        ps = ", ".join(p.name for p in self.func.params)
        return f"<tirx.HostFunction {self.name}({ps}) launching {', '.join(self.kernels)} for {self.arch}>"

    def __call__(self, *args: Any, stream: Any = None, **kwargs: Any) -> Any:
        if kwargs:
            args = tuple(self.func.bind_args(args, kwargs))
        ret = None
        for k in self._seq:  # each launch after the host statements before it (checked per kernel)
            ret = k(*args, stream=stream)
        return ret

    def prepare(self, *args: Any, **kwargs: Any) -> PreparedSequence:
        """Every launch prepared (:meth:`Kernel.prepare`); calling the result launches them in order."""
        if kwargs:
            args = tuple(self.func.bind_args(args, kwargs))
        return PreparedSequence(self, [k.prepare(*args) for k in self._seq])


class PreparedSequence:
    """``HostFunction.prepare(*args)``: the prepared launches of its kernels, launched in order."""

    __slots__ = ("_launches", "function")

    def __init__(self, function: HostFunction, launches: list):
        self.function = function
        self._launches = tuple(launches)

    @property
    def launches(self) -> tuple:
        return self._launches

    def __repr__(self) -> str:
        return f"<tirx.PreparedSequence of {self.function.name}: {len(self._launches)} launches>"

    def __call__(self, stream: Any = None) -> Any:
        ret = None
        for p in self._launches:
            ret = p(stream)
        return ret


class CompiledModule(CompiledImage):
    """The result of ``tirx.compile``: one cubin with one or more kernels.

    A module with one kernel is callable directly; otherwise pick a kernel with
    ``mod["name"]`` or ``mod.name``. ``kernels`` maps each function to its :class:`Kernel`, or
    to a :class:`HostFunction` when its host code launches several. Device entries with their
    own compile settings (``backend_config``) are built apart: ``images`` lists every build
    (the module itself is the first; ``source``/``ptx``/``cubin`` are its).
    """

    def __init__(self, ir: Any, source: str, ptx: str, cubin: bytes, arch: str, infos: list, restrict: bool,
                 log: str = "", options: tuple = (), cache_key: str = "", cache_hit: str = "",
                 launcher: str = "bindings", features: frozenset = frozenset(), config: dict | None = None,
                 image_format: str = "cubin", groups: tuple = ()):  # fmt: skip
        super().__init__(source, ptx, cubin, arch, log, options, cache_key, cache_hit, features, config,
                         image_format)  # fmt: skip
        self.ir = ir
        self.restrict = restrict
        self.launcher = launcher
        #: every build: this module's, then those of the other backend_config groups
        self.images: list[CompiledImage] = [self, *(img for img, _infos in groups)]
        built = [Kernel(i, self) for i in infos]
        for img, more in groups:
            built += [Kernel(i, self, img) for i in more]
        fns = ir.functions if hasattr(ir, "functions") else (ir,)
        order = {f.name: n for n, f in enumerate(fns)}
        built.sort(key=lambda k: (order.get(k.func.name, len(order)), k.info.index))
        by_func: dict[str, list] = {}
        for k in built:
            by_func.setdefault(k.func.name, []).append(k)
        self.kernels: dict[str, Any] = {
            name: ks[0] if len(ks) == 1 else HostFunction(name, ks, self) for name, ks in by_func.items()
        }

    def __getitem__(self, name: str) -> Any:
        try:
            return self.kernels[name]
        except KeyError:
            raise KeyError(
                f"compiled module has no kernel {name!r} (kernels: {', '.join(self.kernels)})"
            ) from None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "kernels":
            raise AttributeError(name)
        ks = self.__dict__.get("kernels") or {}
        if name in ks:
            return ks[name]
        raise AttributeError(name)

    def __call__(self, *args: Any, stream: Any = None, **kwargs: Any) -> Any:
        if len(self.kernels) != 1:
            raise TypeError(
                f"this module has {len(self.kernels)} kernels ({', '.join(self.kernels)}); call one of them, "
                f"e.g. mod[{next(iter(self.kernels))!r}](...)"
            )
        return next(iter(self.kernels.values()))(*args, stream=stream, **kwargs)

    def prepare(self, *args: Any, **kwargs: Any) -> Any:
        """:meth:`Kernel.prepare` of the module's only kernel."""
        if len(self.kernels) != 1:
            raise TypeError(
                f"this module has {len(self.kernels)} kernels ({', '.join(self.kernels)}); prepare one of "
                f"them, e.g. mod[{next(iter(self.kernels))!r}].prepare(...)"
            )
        return next(iter(self.kernels.values())).prepare(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<tirx.CompiledModule {', '.join(self.kernels)} for {self.arch}>"
