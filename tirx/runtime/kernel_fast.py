"""A compiled kernel's fast path: Python source generated per kernel signature for all-torch
arguments (a handful of attribute reads, integer comparisons for every check of the general
path, one ``struct.pack_into`` and the driver call), compiled and bound once torch and the
driver are there; any failed check hands the call to the general path (``_Slow``).

A mixin of ``Kernel`` (``kernel.py``), split out by what it holds (issue #30); the signature
plan it specialises (``params``, ``dyn_src``, ``host_names``, ``grid_code``, ``fmt``, ...) is
made by ``Kernel._plan``, the per-device state by ``kernel_launch.py``.
"""

from __future__ import annotations

import ctypes
import math
import struct
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..ir import IntImm, PointerType, Var
from . import driver as _drv
from .hostexpr import HOST_GLOBALS
from .kernel_state import KernelState

if TYPE_CHECKING:
    pass

__all__ = ["FastPathMixin"]


class FastPathMixin(KernelState):
    """The generated ``__call__`` (``_build_fast``: its source; ``_bind_fast``: the function)."""

    if TYPE_CHECKING:  # Kernel's methods the mixin calls

        def _py(self, e: Any, names: dict, what: str) -> str: ...
        def _align(self, i: int) -> int: ...

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
        if self.option_codes or self.cooperative or self.return_code is not None or self.info.structured:
            # launch options / cooperative launches (cuLaunchKernelEx), a host `return <value>` and
            # a launch of a host program (host values passed at each launch): the general path
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
        for d, (i, k, a, c) in self.dyn_affine.items():  # n of a dimension a * n + c (checked below)
            nm, t = self.host_names[d], d.ty
            hi = (1 << (t.bits - 1)) - 1 if t.kind == "int" else (1 << t.bits) - 1
            body.append(f"{nm} = (s{i}_{k} - {c}) // {a}")
            body.append(f"if not 0 <= {nm} <= {hi}: {slow}")
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
            body.append(f"if sm < 0 or sm > _smem.get(dev, -1): {slow}")  # unknown until loaded
        else:
            body.append("sm = 0")
        body.append("if stream is None: h = _raw(dev)")
        body.append("elif type(stream) is int and 0 <= stream <= 18446744073709551615: h = stream")
        body.append(f"else: {slow}")
        body.append("@TAIL@")
        lines = [
            "def __call__(self, *args, stream=None, **kw):",
            "    if kw: args = self._bind_kw(args, kw)",
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

    def _bind_fast(self, fast_cluster: bool, ctypes_launch_ex: Callable[[], Any]) -> Any:
        """Compile the fast path once torch and the driver are there (after the first launch).

        ``fast_cluster`` and ``ctypes_launch_ex`` are kernel.py's ``_FAST_CLUSTER`` and
        ``_ctypes_launch_ex``, read there on each call (where tests and benchmarks set them)."""
        src = self._fast
        if not src:
            return None
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        ns: dict[str, Any] = dict(HOST_GLOBALS)
        for i, dt in self.tensor_dtypes:
            tdt = getattr(torch, dt, None)
            if tdt is None:
                return None
            ns[f"_dt{i}"] = tdt
        try:
            raw = torch._C._cuda_getCurrentRawStream
        except AttributeError:
            return None
        packs = ", ".join(self.pack_exprs)
        if self.cluster_code is not None and not fast_cluster:
            return None  # TIRX_FAST_CLUSTER=0 (kernel.py's _FAST_CLUSTER)
        ex = self.launcher == "ctypes" or self.cluster_code is not None
        if ex and ctypes_launch_ex() is not None:
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
            ns["_launch"] = ctypes_launch_ex()
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

    _fast_fn = None
    _dims = ""


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


def _int_literal(code: str) -> int | None:
    """The value of ``code`` when it is an integer literal (``"128"``, ``"(1)"``, ``"-1"``), else None."""
    c = code.strip()
    while c.startswith("(") and c.endswith(")"):
        c = c[1:-1].strip()
    body = c[1:] if c.startswith("-") else c
    return int(c) if body.isdigit() else None
