"""``tirx.testing.gpu_compare`` without a GPU: ``DeviceArray`` against a stand-in driver that
keeps "device memory" in host buffers (the calls, their argument order and the
``__cuda_array_interface__`` it hands to kernels), and ``same``'s verdicts. The real driver
runs in tests/test_interp_gpu.py and ``tirx fuzz --cuda`` on a GPU."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from tirx.runtime import driver as drv
from tirx.testing import gpu_compare as G


class FakeDriver:
    """cuMemAlloc / cuMemcpyHtoD / cuMemcpyDtoH / cuMemFree / cuCtxSynchronize over host buffers,
    returning cuda-bindings' ``(err, value)`` tuples."""

    def __init__(self):
        self.mem: dict[int, ctypes.Array] = {}
        self.freed: list[int] = []
        self.synced = 0

    def cuMemAlloc(self, n):
        buf = ctypes.create_string_buffer(n)
        self.mem[ctypes.addressof(buf)] = buf
        return (0, ctypes.addressof(buf))

    def cuMemcpyHtoD(self, dst, src, n):
        assert dst in self.mem and len(self.mem[dst]) >= n
        ctypes.memmove(dst, src, n)
        return (0,)

    def cuMemcpyDtoH(self, dst, src, n):
        assert src in self.mem and len(self.mem[src]) >= n
        ctypes.memmove(dst, src, n)
        return (0,)

    def cuCtxSynchronize(self):
        self.synced += 1
        return (0,)

    def cuMemFree(self, ptr):
        self.freed.append(ptr)
        return (0,)


@pytest.fixture
def fake(monkeypatch):
    d = FakeDriver()
    monkeypatch.setattr(drv, "driver", lambda: d)
    monkeypatch.setattr(drv, "context", lambda index: None)
    return d


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "uint64", "bool"])
def test_device_array_round_trip(fake, dtype):
    host = (np.arange(24) % 7).astype(dtype).reshape(2, 3, 4)
    a = G.DeviceArray(host)
    cai = a.__cuda_array_interface__
    assert cai["shape"] == (2, 3, 4) and np.dtype(cai["typestr"]) == host.dtype
    assert cai["data"] == (a.ptr, False) and cai["version"] == 3
    host[...] = 0  # the device copy is independent of the host array
    back = a.numpy()
    assert fake.synced == 1  # the kernel's work is waited for before reading
    np.testing.assert_array_equal(back, (np.arange(24) % 7).astype(dtype).reshape(2, 3, 4))
    ptr = a.ptr
    del a
    assert fake.freed == [ptr]


def test_device_array_of_nothing(fake):
    a = G.DeviceArray(np.zeros((0, 5), np.int32))
    assert a.numpy().shape == (0, 5)


def test_run_cuda_passes_scalars_and_returns_arrays(fake):
    seen = []

    def kernel(*args):
        seen.extend(args)
        ptr = args[0].__cuda_array_interface__["data"][0]
        ctypes.memmove(ptr, np.full(4, 9, np.int32).ctypes.data, 16)  # "the kernel" writes

    out = G.run_cuda(kernel, [np.zeros(4, np.int32), 3, np.ones(2, np.float32)])
    assert seen[1] == 3 and isinstance(seen[0], G.DeviceArray)
    np.testing.assert_array_equal(out[0], [9, 9, 9, 9])
    np.testing.assert_array_equal(out[1], [1, 1])


def test_same_is_bit_exact_unless_told():
    x = np.array([1.0, np.nan, -0.0], np.float32)
    G.same([x], [x.copy()])
    with pytest.raises(AssertionError, match="output 0"):
        G.same([x], [np.nextafter(x, np.float32(2))])
    G.same([x[:1]], [np.nextafter(x[:1], np.float32(2))], ulp_ok=True)
    with pytest.raises(AssertionError):
        G.same([np.array([3], np.int64)], [np.array([4], np.int64)])


def test_same_compares_nan_bits():
    """A NaN matches only the NaN with its very bits (issue #29: the GPU's NaNs are
    canonical, and the interpreter now produces them; a payload or sign difference is a bug)."""
    x = np.array([1.0, np.nan], np.float32)
    y = x.copy()
    y.view(np.uint32)[1] = 0xFFC00000
    with pytest.raises(AssertionError, match="NaN bits differ at \\[1\\]: 0x7fc00000 vs 0xffc00000"):
        G.same([x], [y])
    h = np.array([np.nan], np.float16)
    G.same([h], [h.copy()])
