"""Device arrays of any library (issue #32) without a GPU: fake objects exposing only
``__cuda_array_interface__`` or only ``__dlpack__``/``__dlpack_device__`` (a real DLPack
capsule built with ctypes), no torch, no CuPy. The argument reading and every check up to
the launch (a recorded ``Kernel._launch``), and the DLPack ownership protocol.
"""

from __future__ import annotations

import ctypes
import sys
import types

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

import tirx
from tirx.ir import TensorType, Var, const
from tirx.ir.op import call
from tirx.ir.types import float16
from tirx.runtime import cache as C
from tirx.runtime import driver as D
from tirx.runtime import kernel as K
from tirx.surface.builder import IRBuilder, launch_args

ARCH = "cuda -arch=sm_90a"


def make_add(block=128, dtype=float16):
    b = IRBuilder("device_arrays_test.py")
    with b, b.function("add"):
        n = Var("n")
        A = b.param("A", TensorType((n,), dtype))
        B = b.param("B", TensorType((n,), dtype))
        with b.device_entry(*launch_args((n + block - 1) // block, block)):
            i = b.bind("i", call("cuda.block_idx", "x") * block + call("cuda.thread_idx", "x"))
            with b.if_(i < n):
                b.store(B, (i,), A[i] + const(2.0, dtype))
    return b.get()


class FakeDriver:
    class CUresult:
        CUDA_SUCCESS = 0

    def __init__(self):
        self.synced = []

    @staticmethod
    def CUstream(h):
        return h

    def cuStreamSynchronize(self, s):
        self.synced.append(s)
        return (0,)


@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    C.clear_memory()
    for m in ("torch", "cupy"):  # neither library: the protocols alone
        monkeypatch.delitem(sys.modules, m, raising=False)
    calls = []

    def launch(self, device, grid, block, cluster, smem, values, stream, opts=None):
        calls.append((device, tuple(grid), tuple(block), list(values), stream))

    monkeypatch.setattr(K.Kernel, "_launch", launch)
    drv = FakeDriver()
    monkeypatch.setattr(D, "driver", lambda: drv)
    k = tirx.compile(make_add(), target=ARCH, cache=False)
    yield k, calls, drv
    C.clear_memory()


class CAI:
    """Only ``__cuda_array_interface__`` (and a CuPy-like ``device.id``)."""

    def __init__(self, shape, typestr="<f2", ptr=0x10000, dev=0, strides=None, readonly=False, version=3,
                 stream=None, **extra):  # fmt: skip
        self.__cuda_array_interface__ = dict(
            shape=tuple(shape),
            typestr=typestr,
            data=(ptr, readonly),
            strides=strides,
            version=version,
            **extra,
        )
        if stream is not None:
            self.__cuda_array_interface__["stream"] = stream
        self.device = types.SimpleNamespace(id=dev)


# -- a real DLPack capsule, built with ctypes ---------------------------------------------
class _Dev(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DT(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _Dev),
        ("ndim", ctypes.c_int32),
        ("dtype", _DT),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_DELETER = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


class _Versioned(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", _DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _Tensor),
    ]


_New = ctypes.pythonapi.PyCapsule_New
_New.restype, _New.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_Name = ctypes.pythonapi.PyCapsule_GetName
_Name.restype, _Name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_NAMES = {False: b"dltensor", True: b"dltensor_versioned"}


class DL:
    """Only ``__dlpack__``/``__dlpack_device__``; records the stream asked for and the deleter calls."""

    def __init__(self, shape, code=2, bits=16, ptr=0x10000, dev=(2, 0), strides=None, offset=0, versioned=False,
                 readonly=False, lanes=1):  # fmt: skip
        self.args = (tuple(shape), code, bits, ptr, dev, strides, offset, versioned, readonly, lanes)
        self.streams, self.deleted, self.capsules, self._keep = [], [], [], []

    def __dlpack_device__(self):
        return self.args[4]

    def __dlpack__(self, stream=None, max_version=None):
        shape, code, bits, ptr, dev, strides, offset, versioned, readonly, lanes = self.args
        self.streams.append(stream)
        versioned = versioned and max_version is not None and max_version >= (1, 0)
        mt = (_Versioned if versioned else _Managed)()
        t = mt.dl_tensor
        t.data, t.device.device_type, t.device.device_id = ptr, *dev
        t.ndim, t.dtype.code, t.dtype.bits, t.dtype.lanes = len(shape), code, bits, lanes
        sh = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        st = None if strides is None else (ctypes.c_int64 * max(len(shape), 1))(*strides)
        t.shape = ctypes.cast(sh, ctypes.POINTER(ctypes.c_int64))
        if st is not None:
            t.strides = ctypes.cast(st, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = offset
        if versioned:
            mt.major, mt.minor, mt.flags = 1, 1, int(readonly)
        addr = ctypes.addressof(mt)

        def deleter(p):
            self.deleted.append(p)

        cb = _DELETER(deleter)
        mt.deleter = cb
        self._keep.append((mt, sh, st, cb))
        cap = _New(addr, _NAMES[versioned], None)  # no destructor: a test producer
        self.capsules.append((cap, addr))
        return cap


def test_cai_array_is_read_and_launched(env):
    k, calls, drv = env
    k(CAI((64,), ptr=0x10000), CAI((64,), ptr=0x20000))
    ((device, grid, block, values, _stream),) = calls
    assert device == 0 and grid == (1, 1, 1) and block == (128, 1, 1)
    assert 0x10000 in values and 0x20000 in values and 64 in values
    assert drv.synced == []
    # explicit C-contiguous byte strides and version 2 are read as well
    calls.clear()
    k(CAI((64,), strides=(2,), version=2), CAI((64,), ptr=0x20000, dev=0))
    assert len(calls) == 1


def test_cai_errors_name_the_parameter(env):
    k, calls, drv = env
    good = CAI((64,), ptr=0x20000)
    bad = [
        (CAI((64,), typestr="<f4"), TypeError, "parameter A: expected dtype float16, got float32"),
        (CAI((8, 8)), ValueError, "parameter A: expected rank 1"),
        (CAI((64,), strides=(4,)), ValueError, "parameter A: tensor is not contiguous"),
        (CAI((64,), strides=(3,)), ValueError, "parameter A: strides .* not a multiple of the element size"),
        (CAI((64,), ptr=0x10001), ValueError, "parameter A: data pointer 0x10001 is not aligned to 2 bytes"),
        (CAI((64,), dev=1), ValueError, "parameter B is on cuda:0 but A is on cuda:1"),
        (
            CAI((64,), version=1),
            TypeError,
            "parameter A: __cuda_array_interface__ version 1 is not supported",
        ),
        (CAI((64,), mask=object()), TypeError, "parameter A: masked"),
        (CAI((64,), typestr="|O"), TypeError, "parameter A: unsupported element type"),
        (CAI((64,), stream=0), ValueError, "parameter A: __cuda_array_interface__ stream 0 is not valid"),
    ]
    for a, exc, msg in bad:
        with pytest.raises(exc, match=msg):
            k(a, good)
    with pytest.raises(ValueError, match="dynamic dimension n disagrees"):
        k(CAI((64,)), CAI((65,), ptr=0x20000))
    assert calls == [] and drv.synced == []


def test_cai_readonly_refused_where_written(env):
    k, calls, _drv = env
    k(CAI((64,), readonly=True), CAI((64,), ptr=0x20000))  # A is only read: fine
    assert len(calls) == 1
    with pytest.raises(ValueError, match="parameter B: the array is read-only, but the kernel writes B"):
        k(CAI((64,)), CAI((64,), ptr=0x20000, readonly=True))
    assert len(calls) == 1


def test_cai_v3_stream_is_synchronized(env):
    k, calls, drv = env
    k(CAI((64,), stream=0x77), CAI((64,), ptr=0x20000, stream=0x77))
    assert drv.synced == [0x77] and len(calls) == 1  # once per stream
    drv.synced.clear()
    # the legacy default stream (1) is the stream the call launches on (0): nothing to wait for
    k(CAI((64,), stream=1), CAI((64,), ptr=0x20000))
    assert drv.synced == []
    # v2 has no stream field: ignored
    k(CAI((64,), version=2, stream=0x77), CAI((64,), ptr=0x20000))
    assert drv.synced == []
    # no launch (errors, or an empty grid): no wait either
    k(CAI((0,), stream=0x77), CAI((0,), ptr=0x20000))
    assert drv.synced == []


@pytest.mark.parametrize("versioned", [False, True])
def test_dlpack_array_is_read_and_launched(env, versioned):
    k, calls, _drv = env
    a = DL((64,), ptr=0x10000, versioned=versioned)
    b = DL((64,), ptr=0x1FFF0, offset=0x10, dev=(2, 0), strides=(1,), versioned=versioned)
    k(a, b)
    ((device, grid, _block, values, _stream),) = calls
    assert device == 0 and grid == (1, 1, 1)
    assert 0x10000 in values and 0x20000 in values and 64 in values  # data + byte_offset
    # the consumer's stream (the legacy default stream, no torch/CuPy) was passed: 1, never 0
    assert a.streams == [1] and b.streams == [1]
    for x in (a, b):
        ((cap, addr),) = x.capsules
        assert _Name(cap) == b"used_" + _NAMES[versioned]  # consumed
        assert x.deleted == [addr]  # the deleter ran exactly once


def test_dlpack_errors_name_the_parameter(env):
    k, calls, _drv = env
    good = DL((64,), ptr=0x20000)
    bad = [
        (DL((64,), code=2, bits=32), TypeError, "parameter A: expected dtype float16, got float32"),
        (DL((8, 8)), ValueError, "parameter A: expected rank 1"),
        (DL((64,), strides=(2,)), ValueError, "parameter A: tensor is not contiguous"),
        (DL((64,), ptr=0x10001), ValueError, "parameter A: data pointer 0x10001 is not aligned to 2 bytes"),
        (DL((64,), dev=(2, 1)), ValueError, "parameter B is on cuda:0 but A is on cuda:1"),
        (DL((64,), dev=(1, 0)), ValueError, "parameter A: array is not on a CUDA device"),
        (DL((64,), lanes=2), TypeError, "parameter A: unsupported element type"),
        (DL((64,), code=5, bits=32), TypeError, "parameter A: unsupported element type"),
    ]
    for a, exc, msg in bad:
        with pytest.raises(exc, match=msg):
            k(a, good)
        # whatever was exported was handed back
        assert len(a.deleted) == len(a.capsules)
    assert calls == []
    ro = DL((64,), ptr=0x20000, versioned=True, readonly=True)
    with pytest.raises(ValueError, match="parameter B: the array is read-only, but the kernel writes B"):
        k(DL((64,)), ro)
    assert ro.deleted and calls == []
    k(DL((64,), versioned=True, readonly=True), DL((64,), ptr=0x20000))  # A is only read
    assert len(calls) == 1


def test_dlpack_dtypes():
    from tirx.runtime.device_array import dl_dtype, dlpack_stream

    assert dl_dtype(4, 16, 1) == "bfloat16"
    assert dl_dtype(6, 8, 1) == "bool"
    assert dl_dtype(0, 64, 1) == "int64" and dl_dtype(1, 8, 1) == "uint8"
    assert dl_dtype(10, 8, 1) == "float8_e4m3fn" and dl_dtype(12, 8, 1) == "float8_e5m2"
    assert dl_dtype(17, 4, 1) is None  # packed fp4: not one element a byte
    assert dlpack_stream(0) == 1 and dlpack_stream(0x1234) == 0x1234


def test_empty_array_is_contiguous_whatever_its_strides(env):
    # torch and DLPack give a tensor of no elements zero strides: it is still contiguous
    k, calls, _drv = env
    k(CAI((0,), strides=(0,)), CAI((0,), ptr=0x20000, strides=(0,)))
    assert len(calls) <= 1  # launched, or skipped as an empty grid: never refused
    with pytest.raises(ValueError, match="parameter A: tensor is not contiguous"):
        k(CAI((64,), strides=(0,)), CAI((64,), ptr=0x20000))
