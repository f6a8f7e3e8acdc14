"""Reading a device array from its protocol alone (issue #32): ``__cuda_array_interface__``
(versions 2 and 3) and ``__dlpack__``/``__dlpack_device__`` (a DLPack capsule read with
ctypes), so a compiled CUDA kernel takes arrays of any library, torch and CuPy not needed.

Both return ``(ptr, shape, strides, dtype, device, readonly, sync, keep)``: strides in
elements or None (C-contiguous), ``dtype`` a tirx dtype name, ``device`` the CUDA ordinal
(None when unknown), ``sync`` the producer's stream the consumer must order itself after
(``__cuda_array_interface__`` v3 ``stream``; None: nothing to wait for), ``keep`` what must
live while the data is used (for DLPack, the owner that calls the capsule's deleter).

DLPack protocol: the capsule (``"dltensor"`` or, when the producer took ``max_version``,
``"dltensor_versioned"``) is renamed ``"used_..."`` when read, which hands its ownership to
us (the producer's capsule destructor then does nothing), and its deleter is called once
when the owner goes (after the call's arguments are read; the array object passed to the
call keeps the memory alive for the launch, as for a torch tensor). The consumer's stream is
passed to ``__dlpack__(stream=...)``, so the producer orders its pending work before it.
"""

from __future__ import annotations

import contextlib
import ctypes
from typing import Any

__all__ = ["DL_CUDA", "from_cai", "from_dlpack"]

DL_CUDA = (2, 13)  # kDLCUDA, kDLCUDAManaged

# dlpack.h DLDataTypeCode -> tirx name (bits == 8 for the minifloats: one element a byte, as tirx
# stores them; packed fp4/fp6 are refused)
_DL_FLOAT8 = {
    7: "float8_e3m4",
    8: "float8_e4m3",
    9: "float8_e4m3b11fnuz",
    10: "float8_e4m3fn",
    11: "float8_e4m3fnuz",
    12: "float8_e5m2",
    13: "float8_e5m2fnuz",
    14: "float8_e8m0fnu",
}
_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


# the deleter runs with the GIL held (PYFUNCTYPE): a producer's deleter may drop Python references
_DELETER = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)
_capi = ctypes.pythonapi
_IsValid = _capi.PyCapsule_IsValid
_IsValid.restype, _IsValid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
_GetPointer = _capi.PyCapsule_GetPointer
_GetPointer.restype, _GetPointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_SetName = _capi.PyCapsule_SetName
_SetName.restype, _SetName.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
# PyCapsule_SetName keeps the pointer: these module constants outlive every capsule renamed
_NAME, _USED = b"dltensor", b"used_dltensor"
_VNAME, _VUSED = b"dltensor_versioned", b"used_dltensor_versioned"


class _Owner:
    """Owns a consumed DLPack capsule's tensor: calls its deleter once, when dropped."""

    __slots__ = ("addr", "capsule", "deleter")

    def __init__(self, capsule: Any, addr: int, deleter: int | None):
        self.capsule, self.addr, self.deleter = capsule, addr, deleter

    def release(self) -> None:
        d, self.deleter = self.deleter, None
        if d:
            _DELETER(d)(self.addr)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown
            self.release()


def _err(kname: str, pname: str, msg: str) -> str:
    return f"{kname}: parameter {pname}: {msg}"


def from_cai(cai: Any, pname: str, kname: str) -> tuple:
    """``__cuda_array_interface__`` (a dict) -> the fields above but ``device`` (the caller's)."""
    import numpy as np

    if not isinstance(cai, dict):
        raise TypeError(_err(kname, pname, f"__cuda_array_interface__ is a {type(cai).__name__}, not a dict"))
    version = cai.get("version")
    if not isinstance(version, int) or version < 2:
        raise TypeError(
            _err(kname, pname, f"__cuda_array_interface__ version {version!r} is not supported (2 or 3)")
        )
    if cai.get("mask") is not None:
        raise TypeError(_err(kname, pname, "masked __cuda_array_interface__ arrays are not supported"))
    shape = tuple(int(s) for s in cai["shape"])
    ts = cai["typestr"]
    try:
        dt = np.dtype(ts)
        if dt.kind not in "biuf" or dt.itemsize == 0:
            raise TypeError
    except TypeError:
        raise TypeError(_err(kname, pname, f"unsupported element type {ts!r}")) from None
    data = cai["data"]
    ptr, readonly = int(data[0] or 0), bool(data[1])
    st = cai.get("strides")
    strides = None
    if st is not None:
        item = dt.itemsize
        if any(int(s) % item for s in st):
            raise ValueError(
                _err(kname, pname, f"strides {tuple(st)} are not a multiple of the element size")
            )
        strides = tuple(int(s) // item for s in st)
    sync = None
    if version >= 3:
        s = cai.get("stream")
        if s is not None:
            if isinstance(s, bool) or not isinstance(s, int) or s == 0:
                # the spec forbids 0 (ambiguous between the legacy and the per-thread default stream)
                raise ValueError(_err(kname, pname, f"__cuda_array_interface__ stream {s!r} is not valid"))
            sync = s
    return ptr, shape, strides, dt.name, readonly, sync


def dl_dtype(code: int, bits: int, lanes: int) -> str | None:
    """A DLPack dtype's tirx name; None when tirx has none."""
    if lanes != 1:
        return None
    if code == 0 and bits in (8, 16, 32, 64):
        return f"int{bits}"
    if code == 1 and bits in (8, 16, 32, 64):
        return f"uint{bits}"
    if code == 2 and bits in (16, 32, 64):
        return f"float{bits}"
    if code == 4 and bits == 16:
        return "bfloat16"
    if code == 6 and bits == 8:
        return "bool"
    if code in _DL_FLOAT8 and bits == 8:
        return _DL_FLOAT8[code]
    return None


def dlpack_stream(handle: int) -> int:
    """A CUstream handle as DLPack's ``stream=`` argument (0, the legacy default stream, is 1 there)."""
    return 1 if handle == 0 else handle


def from_dlpack(x: Any, stream: int, pname: str, kname: str) -> tuple:
    """Export ``x`` with ``__dlpack__(stream=...)`` and read the capsule; the fields above."""
    try:
        cap = x.__dlpack__(stream=stream, max_version=(1, 1))
    except TypeError:  # a producer older than DLPack 1.0 (no max_version)
        cap = x.__dlpack__(stream=stream)
    if _IsValid(cap, _VNAME):
        addr = _GetPointer(cap, _VNAME)
        mt = DLManagedTensorVersioned.from_address(addr)
        if mt.major != 1:
            raise BufferError(_err(kname, pname, f"DLPack version {mt.major}.{mt.minor} is not supported"))
        if _SetName(cap, _VUSED):
            raise BufferError(_err(kname, pname, "cannot mark the DLPack capsule used"))
        owner = _Owner(cap, addr, mt.deleter)
        readonly = bool(mt.flags & _READ_ONLY)
    elif _IsValid(cap, _NAME):
        addr = _GetPointer(cap, _NAME)
        mt = DLManagedTensor.from_address(addr)  # type: ignore[assignment]
        if _SetName(cap, _USED):
            raise BufferError(_err(kname, pname, "cannot mark the DLPack capsule used"))
        owner = _Owner(cap, addr, mt.deleter)
        readonly = False
    else:
        raise TypeError(_err(kname, pname, "__dlpack__ did not return an unused DLPack capsule"))
    t = mt.dl_tensor
    if t.device.device_type not in DL_CUDA:
        raise ValueError(
            _err(
                kname,
                pname,
                f"array is not on a CUDA device (DLPack device {(t.device.device_type, t.device.device_id)})",
            )
        )
    name = dl_dtype(t.dtype.code, t.dtype.bits, t.dtype.lanes)
    if name is None:
        raise TypeError(
            _err(
                kname,
                pname,
                f"unsupported element type (DLPack code {t.dtype.code}, bits {t.dtype.bits}, "
                f"lanes {t.dtype.lanes})",
            )
        )
    nd = int(t.ndim)
    shape = tuple(int(t.shape[k]) for k in range(nd))
    strides = tuple(int(t.strides[k]) for k in range(nd)) if t.strides else None
    ptr = int(t.data or 0) + int(t.byte_offset)
    return ptr, shape, strides, name, int(t.device.device_id), readonly, owner
