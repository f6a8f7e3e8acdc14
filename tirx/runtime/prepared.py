"""Prepared launches: a kernel call whose arguments are checked once and launched many times.

``launch = kernel.prepare(*args)`` runs every check of a call (dtype, rank, shape, device,
contiguity, alignment, aliasing, host asserts, launch configuration) and packs the parameter
values into a buffer of its own; ``launch()`` then only asks for the stream and calls
``cuLaunchKernel``. It is for the same arguments launched again and again (a decode loop, a
benchmark), where the per-call checks are most of the host cost.

The contract is CUDA-graph replay's: the arguments are the ones given to ``prepare``. The
prepared launch keeps them alive and, before every launch, compares each torch tensor's data
pointer with the packed one, so a tensor whose memory moved (``resize_`` that reallocates,
``set_``) raises ``ValueError`` instead of launching on freed memory. Metadata changed in place
without moving the memory (``resize_`` to a smaller size, ``as_strided_``) is not seen: prepare
again after such a change.
"""

from __future__ import annotations

import ctypes
import struct
import sys
from typing import Any

from . import driver as _drv

__all__ = ["PreparedLaunch"]


class PreparedLaunch:
    """``kernel.prepare(*args)``: call it (``launch()``, ``launch(stream=s)``) to launch again."""

    __slots__ = (
        "_args", "_buf", "_call", "_dev", "_head", "_kernel", "_ok", "_params", "_plan", "_ptrs",
        "_raw", "_ret", "_streams",
    )  # fmt: skip

    def __init__(self, kernel: Any, args: tuple, ret: Any, plan: tuple | None):
        self._kernel = kernel
        self._args = args  # keeps the tensors (and so their memory) alive
        self._ret = ret
        self._plan = plan
        # (bound data_ptr, packed address, parameter index) of each torch tensor argument:
        # checked every launch
        torch = sys.modules.get("torch")
        ptrs = []
        if plan is not None and torch is not None:
            for i, a in enumerate(args):
                if isinstance(a, torch.Tensor) and a.is_cuda:
                    ptrs.append((a.data_ptr, a.data_ptr(), i))
        self._ptrs = tuple(ptrs)
        self._call = None
        self._raw = None
        self._streams = kernel._streams
        if plan is None:
            self._dev = -1
            return
        device, grid, block, cluster, smem, values, opts = plan
        self._dev = device
        fn = kernel._function(device)
        if smem > kernel._smem_max.get(device, 48 * 1024):
            _drv.set_max_dynamic_smem(fn, smem)
            kernel._smem_max[device] = smem
        # the parameter values in a buffer of this launch's own (never rewritten, so the same
        # prepared launch may be called from several threads at once)
        buf = (ctypes.c_char * kernel.param_size)()
        struct.pack_into(kernel.fmt, buf, 0, *values)
        base = ctypes.addressof(buf)
        n = len(kernel.param_offsets)
        arr = (ctypes.c_void_p * max(n, 1))(*[base + o for o in kernel.param_offsets])
        self._buf = (buf, arr)
        self._params = ctypes.addressof(arr)
        if cluster is None and opts is None:  # plain cuLaunchKernel; the rest: the kernel's _launch
            d = _drv.driver()
            self._call = d.cuLaunchKernel
            self._ok = d.CUresult.CUDA_SUCCESS
            self._head = (fn, *grid, *block, smem)
            if torch is not None:
                try:
                    self._raw = torch._C._cuda_getCurrentRawStream
                except AttributeError:
                    self._raw = None

    @property
    def kernel(self) -> Any:
        return self._kernel

    @property
    def args(self) -> tuple:
        return self._args

    def __repr__(self) -> str:
        return f"<tirx.PreparedLaunch of {self._kernel.name}>"

    def __call__(self, stream: Any = None) -> Any:
        """Launch on ``stream`` (None: the current stream of the arguments' device)."""
        for get, p, i in self._ptrs:
            if get() != p:
                raise ValueError(
                    f"{self._kernel.kname}: prepared launch: the memory of parameter {self._kernel.pnames[i]} "
                    f"moved (data pointer {p:#x} -> {get():#x}) since prepare(); prepare the launch again"
                )
        call = self._call
        if call is not None:
            if stream is None and self._raw is not None:
                h = self._raw(self._dev)
            elif type(stream) is int and 0 <= stream <= 0xFFFFFFFFFFFFFFFF:
                h = stream
            else:
                h = self._kernel._stream_handle(stream, self._dev)
                if not 0 <= h <= 0xFFFFFFFFFFFFFFFF:
                    raise ValueError(f"stream: {h} is not a CUDA stream handle")
            so = self._streams.get(h)
            if so is None:
                so = self._kernel._stream_obj(h)
            if call(*self._head, so, self._params, 0)[0] is self._ok:
                return self._ret
            # no current context in this thread (or another device's): the kernel's own launch
            # makes one current, retries once and raises the driver's error
        plan = self._plan
        if plan is not None:
            device, grid, block, cluster, smem, values, opts = plan
            self._kernel._launch(device, grid, block, cluster, smem, values, stream, opts)
        return self._ret
