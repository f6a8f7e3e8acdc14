"""TIRx's runtime tensors: ``tirx.runtime.tensor(arr, device=None)``, ``tirx.cpu(i)``,
``tirx.cuda(i)``.

Code written for TIRx copies numpy arrays into its ``Tensor`` (``tvm.runtime.tensor(a)``),
passes them to a compiled function and reads them back with ``.numpy()``. tirx's kernels
take numpy, DLPack and CUDA-array-interface arrays directly, so a tensor here is a thin owner
of a copy: on the CPU a numpy array (the interpreter's kernels write into it through
``__array_interface__``), on a CUDA device a ``cuMemAlloc`` block that a CUDA kernel reads
through ``__cuda_array_interface__``. Nothing is shared with the source array, as in TIRx.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Device", "Tensor", "cpu", "cuda", "device", "tensor"]

_KINDS = {"cpu": 1, "llvm": 1, "cuda": 2, "gpu": 2}  # DLPack's device type codes
_NAMES = {1: "cpu", 2: "cuda"}


class Device:
    """A device as TIRx names it (``cpu:0``, ``cuda:0``): DLPack's type code and an index."""

    __slots__ = ("device_id", "device_type")

    def __init__(self, device_type: int, device_id: int = 0) -> None:
        if device_type not in _NAMES:
            raise ValueError(f"Device: device_type must be 1 (cpu) or 2 (cuda), got {device_type!r}")
        if not isinstance(device_id, int) or isinstance(device_id, bool) or device_id < 0:
            raise ValueError(f"Device: device_id must be an int >= 0, got {device_id!r}")
        self.device_type = device_type
        self.device_id = device_id

    @property
    def kind(self) -> str:
        return _NAMES[self.device_type]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and (other.device_type, other.device_id) == (
            self.device_type,
            self.device_id,
        )

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        return f"{self.kind}:{self.device_id}"

    __str__ = __repr__

    def __dlpack_device__(self) -> tuple[int, int]:
        return (self.device_type, self.device_id)

    @property
    def exist(self) -> bool:
        """Whether the device is there (TIRx's ``tvm.cuda().exist``, read by skip marks): the CPU
        always, a CUDA device when the driver loads and has that many devices."""
        if self.device_type == 1:
            return True
        from .driver import check, driver, probe

        if not probe()[0]:
            return False
        return self.device_id < int(check(driver().cuDeviceGetCount(), "cuDeviceGetCount"))

    @property
    def compute_version(self) -> str:
        """``"9.0"`` for an H100 (TIRx's ``Device.compute_version``); the CPU has none."""
        if self.device_type == 1:
            raise ValueError("compute_version: the CPU has no compute capability")
        from .driver import device_arch

        digits = device_arch(self.device_id)[3:].rstrip("a")
        return f"{digits[:-1]}.{digits[-1]}"

    def sync(self) -> None:
        """Wait for the device's work (TIRx's ``Device.sync``); nothing to wait for on the CPU."""
        if self.device_type == 2:
            from .driver import check, context, driver

            context(self.device_id)
            check(driver().cuCtxSynchronize(), "cuCtxSynchronize")


def device(kind: str | Device, index: int = 0) -> Device:
    """``tirx.device("cuda", 0)``; also ``"cuda:1"``."""
    if isinstance(kind, Device):
        return kind
    if not isinstance(kind, str):
        raise TypeError(f"device: kind must be a str, got {type(kind).__name__}")
    name, _, idx = kind.partition(":")
    if name not in _KINDS:
        raise ValueError(f"device: unknown kind {kind!r} (use 'cpu' or 'cuda')")
    return Device(_KINDS[name], int(idx) if idx else index)


def cpu(index: int = 0) -> Device:
    return Device(1, index)


def cuda(index: int = 0) -> Device:
    return Device(2, index)


class Tensor:
    """A copy of an array on ``device``: ``.numpy()`` reads it back (a new numpy array)."""

    def __init__(self, arr: np.ndarray, dev: Device) -> None:
        self.device = dev
        self.shape = tuple(int(n) for n in arr.shape)
        self.dtype = str(arr.dtype)
        self._host: np.ndarray | None = None
        self._ptr = 0
        self._nbytes = int(arr.nbytes)
        if dev.device_type == 1:
            self._host = np.array(arr, copy=True, order="C")
        else:
            self._ptr = _cuda_copy_in(np.require(arr, requirements="C"), dev.device_id)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def numpy(self) -> np.ndarray:
        if self._host is not None:
            return self._host.copy()
        out = np.empty(self.shape, dtype=self.dtype)
        _cuda_copy_out(out, self._ptr, self.device.device_id)
        return out

    def copyfrom(self, source: Any) -> Tensor:
        """Overwrite the tensor with ``source`` (same shape; converted to this dtype)."""
        a = np.require(np.asarray(source, dtype=self.dtype), requirements="C")
        if a.shape != self.shape:
            raise ValueError(f"Tensor.copyfrom: source shape {a.shape} differs from {self.shape}")
        if self._host is not None:
            self._host[...] = a
        else:
            _cuda_copy_in(a, self.device.device_id, self._ptr)
        return self

    @property
    def __array_interface__(self) -> dict:
        if self._host is None:
            raise AttributeError("__array_interface__: a CUDA tensor has __cuda_array_interface__")
        return self._host.__array_interface__

    @property
    def __cuda_array_interface__(self) -> dict:
        if self._host is not None:
            raise AttributeError("__cuda_array_interface__: a CPU tensor has __array_interface__")
        return {
            "shape": self.shape,
            "typestr": np.dtype(self.dtype).str,
            "data": (self._ptr, False),
            "strides": None,
            "version": 3,
            "stream": None,
        }

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self) -> str:
        return f"<tirx.runtime.Tensor shape={self.shape} dtype={self.dtype} device={self.device}>"

    def __del__(self) -> None:
        if self._ptr:
            try:
                from .driver import driver

                driver().cuMemFree(self._ptr)
            except Exception:  # the process is ending or the context is gone
                pass
            self._ptr = 0


def tensor(arr: Any, device: Device | None = None, mem_scope: Any = None) -> Tensor:
    """TIRx's ``tvm.runtime.tensor``: a copy of ``arr`` (anything numpy reads) on ``device``
    (default the CPU)."""
    if mem_scope is not None:
        raise ValueError(f"tensor: mem_scope is not supported by tirx (got {mem_scope!r})")
    if device is None:
        device = cpu(0)
    if not isinstance(device, Device):
        raise TypeError(
            f"tensor: device must be a Device (tirx.cpu(0), tirx.cuda(0)), got {type(device).__name__}"
        )
    a = arr.numpy() if isinstance(arr, Tensor) else np.asarray(arr)
    return Tensor(a, device)


def _cuda_copy_in(a: np.ndarray, index: int, ptr: int = 0) -> int:
    from .driver import check, context, driver

    context(index)
    d = driver()
    if not ptr:
        ptr = int(check(d.cuMemAlloc(max(1, a.nbytes)), "cuMemAlloc"))
    if a.nbytes:
        check(d.cuMemcpyHtoD(ptr, a.ctypes.data, a.nbytes), "cuMemcpyHtoD")
    return ptr


def _cuda_copy_out(out: np.ndarray, ptr: int, index: int) -> None:
    from .driver import check, context, driver

    context(index)
    if out.nbytes:
        check(driver().cuCtxSynchronize(), "cuCtxSynchronize")
        check(driver().cuMemcpyDtoH(out.ctypes.data, ptr, out.nbytes), "cuMemcpyDtoH")
