"""Launching a compiled kernel: its CUfunction per device (loaded on first use), the
per-thread parameter buffer, CUDA streams, and the general path's launch through
``cuLaunchKernel`` / ``cuLaunchKernelEx`` (clusters) or ``tirx.runtime.cooperative``
(launch options, cooperative kernels); libcuda's launch calls through ctypes for the fast path.

A mixin of ``Kernel`` (``kernel.py``), split out by what it holds (issue #30); the parameter
layout (``fmt``, ``param_offsets``, ``param_size``) is made by ``Kernel._plan``.
"""

from __future__ import annotations

import ctypes
import struct
import sys
import threading
from typing import Any

from . import driver as _drv
from .kernel_state import KernelState

__all__ = ["LaunchMixin"]


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


class LaunchMixin(KernelState):
    """Per-device functions, parameter buffers and streams, and the launch itself."""

    def _init_launch_state(self) -> None:
        """Nothing loaded yet: no device's function, no thread's buffer, no stream."""
        self._fns = {}
        self._fnp = {}  # device -> the CUfunction as a ctypes.c_void_p (ctypes launcher)
        self._blocks = {}
        self._xblocks = {}  # thread -> cuLaunchKernelEx buffer (ctypes launcher)
        self._streams = {}
        self._smem_max = {}
        self._lock = threading.Lock()

    # -- the image launched ------------------------------------------------------------
    @property
    def cubin(self) -> bytes:
        return self.image.cubin

    @property
    def arch(self) -> str:
        return self.image.arch

    # -- per-device state --------------------------------------------------------------
    def _function(self, dev: int) -> Any:
        fn = self._fns.get(dev)
        if fn is None:
            with self._lock:
                fn = self._fns.get(dev)
                if fn is None:
                    fn = self.image._load(dev, self.name)
                    # the dynamic shared memory a launch may ask for without opting in: 48 KiB less
                    # the kernel's static shared arrays (a 48 KiB window beside a barrier array
                    # needs the attribute too)
                    static = _drv.func_attribute(fn, "CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES")
                    self._smem_max.setdefault(dev, max(48 * 1024 - static, 0))
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

    _stream_handle = staticmethod(_stream_handle)  # for PreparedLaunch (no import back into this module)


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
