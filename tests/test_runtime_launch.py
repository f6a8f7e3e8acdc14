"""The generated fast launch path without a GPU: a fake ``torch`` module and fake driver calls.

Every call goes through the fast path (``launcher="ctypes"``: one ``pack_into`` into a
``CUlaunchConfig`` + parameter buffer and ``cuLaunchKernelEx``; ``launcher="bindings"``:
``cuda.bindings`` ``cuLaunchKernel``) and through the general path; both must launch the
same thing, and every bad argument must be refused with the general path's error and
without a launch.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import struct
import sys
import threading
import types

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

import tirx
from tirx.ir import TensorType, Var, const
from tirx.ir.op import call
from tirx.ir.types import float16, int32
from tirx.runtime import cache as C
from tirx.runtime import driver as D
from tirx.runtime import kernel as K
from tirx.surface.builder import IRBuilder, launch_args

ARCH = "cuda -arch=sm_90a"
FN = 0xF00D000  # the fake CUfunction handle
RAW_STREAM = 0x5E0000


class _DType:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


def make_fake_torch():
    torch = types.ModuleType("torch")
    for nm in ("float16", "float32", "float64", "bfloat16", "int32", "int64", "uint8", "bool"):
        setattr(torch, nm, _DType(nm))

    class Tensor:
        def __init__(self, shape, dtype, ptr, dev=0, strides=None):
            self.shape = tuple(shape)
            self.dtype = dtype
            self._ptr = ptr
            self._dev = dev
            self._strides = strides if strides is not None else K._contig(self.shape)

        def get_device(self):
            return self._dev

        @property
        def is_cuda(self):
            return self._dev >= 0

        @property
        def device(self):
            return f"cuda:{self._dev}" if self._dev >= 0 else "cpu"

        def data_ptr(self):
            return self._ptr

        def stride(self):
            return self._strides

        def is_contiguous(self):
            return K._is_contig(self.shape, self._strides)

    torch.Tensor = Tensor
    torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda dev: RAW_STREAM + dev)
    torch.cuda = types.SimpleNamespace(current_stream=lambda dev=None: types.SimpleNamespace(cuda_stream=0))
    return torch


class Recorder:
    def __init__(self):
        self.calls = []

    # general path: Kernel._launch(device, grid, block, cluster, smem, values, stream)
    def general(self, kern, device, grid, block, cluster, smem, values, stream, opts=None):
        assert opts is None  # these kernels have no launch options
        self.cluster_general = None if cluster is None else tuple(cluster)
        kern._function(device)
        kern._block()
        h = K._stream_handle(stream, device)
        kern._stream_obj(h)
        vals = list(struct.unpack(kern.fmt, struct.pack(kern.fmt, *values)))
        self.calls.append(("general", device, tuple(grid), tuple(block), smem, h, vals))

    # ctypes fast path: cuLaunchKernelEx(&config, f, kernelParams, NULL)
    def ex(self, cfgp, fn, parp, extra):
        assert extra is None and fn.value == FN
        kern = self.kern
        head = struct.unpack_from("=7I4xQ", ctypes.string_at(cfgp.value, 40))
        attrs, nattrs = struct.unpack_from("=QI", ctypes.string_at(cfgp.value + 40, 12))
        cluster = None
        if kern.cluster_code is None:
            assert attrs == 0 and nattrs == 0
        else:
            assert attrs == cfgp.value + 56 and nattrs == 1
            aid, *cluster = struct.unpack_from("=I4x3I", ctypes.string_at(attrs, 20))
            assert aid == 4  # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
            cluster = tuple(cluster)
        self.cluster = cluster
        ptrs = (ctypes.c_void_p * max(len(kern.param_offsets), 1)).from_address(parp.value)
        vals = []
        codes = [n + c for n, c in re.findall(r"(\d*)([a-zA-Z?])", kern.fmt) if c != "x"]
        for k, code in enumerate(codes):
            vals.append(struct.unpack(code, ctypes.string_at(ptrs[k], struct.calcsize(code)))[0])
        self.calls.append(("fast", None, head[0:3], head[3:6], head[6], head[7], vals))
        return 0

    # bindings fast path: cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra)
    def bindings(self, fn, gx, gy, gz, bx, by, bz, sm, so, paddr, extra):
        kern = self.kern
        blk = kern._blocks[threading.get_ident()]
        assert paddr == blk[1]
        vals = list(struct.unpack_from(kern.fmt, blk[0], 0))
        self.calls.append(("fast", None, (gx, gy, gz), (bx, by, bz), sm, so, vals))
        return (FakeDriver.CUresult.CUDA_SUCCESS,)


class FakeDriver:
    class CUresult:
        CUDA_SUCCESS = object()

    class CUfunction_attribute:
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = "shared_size_bytes"

    @staticmethod
    def CUstream(h):
        return h

    @staticmethod
    def cuFuncGetAttribute(attr, fn):
        """The fake kernels have no static shared arrays."""
        assert attr == "shared_size_bytes"
        return (0, 0)


@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    C.clear_memory()
    torch = make_fake_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    rec = Recorder()
    monkeypatch.setattr(K.Kernel, "_launch", lambda self, *a: rec.general(self, *a))
    monkeypatch.setattr(K.CompiledModule, "_load", lambda self, dev, name: FN)
    monkeypatch.setattr(K, "_ctypes_launch_ex", lambda: rec.ex)
    drv = FakeDriver()
    drv.cuLaunchKernel = rec.bindings
    monkeypatch.setattr(D, "driver", lambda: drv)
    yield torch, rec
    C.clear_memory()


def make_add(block=128, dtype=float16, scalar=False):
    b = IRBuilder("launch_test.py")
    with b, b.function("add"):
        n = Var("n")
        A = b.param("A", TensorType((n,), dtype))
        B = b.param("B", TensorType((n,), dtype))
        s = b.param("s", int32) if scalar else None
        with b.device_entry(*launch_args((n + block - 1) // block, block)):
            i = b.bind("i", call("cuda.block_idx", "x") * block + call("cuda.thread_idx", "x"))
            with b.if_(i < n):
                v = A[i] + const(2.0, dtype)
                if s is not None:
                    v = v + s.astype(dtype.base)
                b.store(B, (i,), v)
    return b.get()


def compiled(rec, launcher, vectorize=False, **kw):
    # the launch plumbing of the kernel as written (VectorizeThreads has its own test below)
    k = tirx.compile(make_add(**kw), target=ARCH, cache=False, launcher=launcher, vectorize=vectorize)
    rec.kern = k
    return k


def _both(rec, k, *args, **kw):
    """Launch once through the fast path and once through the general path; return both records."""
    k(*args, **kw)  # bindings: the first launch on a new stream wraps it on the general path
    rec.calls.clear()
    k(*args, **kw)
    K.Kernel._general(k, args, kw.get("stream"))
    assert [c[0] for c in rec.calls] == ["fast", "general"], rec.calls
    return rec.calls[0][2:], rec.calls[1][2:]


@pytest.mark.parametrize("launcher", ["ctypes", "bindings"])
def test_fast_path_launches_what_the_general_path_launches(env, launcher):
    torch, rec = env
    k = compiled(rec, launcher, scalar=True)
    a = torch.Tensor((1000,), torch.float16, 0x10000)
    b = torch.Tensor((1000,), torch.float16, 0x20000)
    k(a, b, 3)  # first call: general path, then the object switches
    assert type(k).__name__ != "Kernel"
    assert "raise _Slow" in k.fast_source
    for n, s, stream in ((1000, 3, None), (1, -7, None), (129, 2**31 - 1, 0x777), (4096, 0, 0)):
        a = torch.Tensor((n,), torch.float16, 0x10000)
        b = torch.Tensor((n,), torch.float16, 0x30000)
        fast, general = _both(rec, k, a, b, s, stream=stream)
        assert fast == general
        assert fast[0] == ((n + 127) // 128, 1, 1) and fast[1] == (128, 1, 1)
        assert fast[3] == (RAW_STREAM if stream is None else stream)
        assert fast[4] == [0x10000, 0x30000, s, n]


@pytest.mark.parametrize("launcher", ["ctypes", "bindings"])
def test_vectorized_kernel_fast_path_launches_what_the_general_path_launches(env, launcher):
    """VectorizeThreads: the grid is ceil(G / 8) of the original G, and the original G travels
    as a host-computed parameter after the written ones."""
    torch, rec = env
    k = compiled(rec, launcher, vectorize=True, scalar=True)
    assert "grid_x" in k.source
    for n in (1000, 1, 129, 4096, 2**31 - 1):
        a = torch.Tensor((n,), torch.float16, 0x10000)
        b = torch.Tensor((n,), torch.float16, 0x30000 + 2 * n)
        fast, general = _both(rec, k, a, b, 5)
        assert fast == general
        g = (n + 127) // 128
        assert fast[0] == ((g - 1) // 8 + 1, 1, 1) and fast[1] == (128, 1, 1)
        assert fast[4] == [0x10000, 0x30000 + 2 * n, 5, n, g]


@pytest.mark.parametrize("launcher", ["ctypes", "bindings"])
def test_bad_arguments_are_refused_without_a_launch(env, launcher):
    torch, rec = env
    k = compiled(rec, launcher, scalar=True)
    T = torch.Tensor
    good = (T((64,), torch.float16, 0x10000), T((64,), torch.float16, 0x20000), 1)
    k(*good)
    assert type(k).__name__ != "Kernel"
    bad = [
        ((good[0], good[1]), TypeError, r"takes 3 argument\(s\)"),
        ((*good, 1), TypeError, r"takes 3 argument\(s\)"),
        ((T((64,), torch.float32, 0x10000), good[1], 1), TypeError, "parameter A: expected dtype float16"),
        ((T((8, 8), torch.float16, 0x10000), good[1], 1), ValueError, "parameter A: expected rank 1"),
        ((good[0], T((65,), torch.float16, 0x20000), 1), ValueError, "dynamic dimension n disagrees"),
        ((good[0], T((64,), torch.float16, 0x20000, dev=1), 1), ValueError, "B is on cuda:1"),
        ((good[0], T((64,), torch.float16, 0x20000, dev=-1), 1), ValueError, "parameter B: tensor is on cpu"),
        ((T((64,), torch.float16, 0x10000, strides=(2,)), good[1], 1), ValueError, "not contiguous"),
        ((good[0], T((64,), torch.float16, 0x20001), 1), ValueError, "not aligned to 2 bytes"),
        ((good[0], T((64,), torch.float16, 0x10040), 1), ValueError, "parameters A and B overlap"),
        ((*good[:2], 2**31), ValueError, "parameter s: 2147483648 does not fit in int32"),
        ((*good[:2], 1.5), TypeError, "parameter s: expected an int"),
        ((good[0], object(), 1), TypeError, "parameter B: expected a CUDA tensor"),
    ]
    for args, exc, msg in bad:
        rec.calls.clear()
        with pytest.raises(exc, match=msg):
            k(*args)
        assert rec.calls == [], (msg, rec.calls)
    with pytest.raises(TypeError, match="stream"):
        k(*good, stream="s")
    rec.calls.clear()
    with contextlib.suppress(TypeError, ValueError, OverflowError):
        k(*good, stream=-1)  # a negative handle is never packed by the fast path (the driver refuses it)
    assert not any(c[0] == "fast" for c in rec.calls)
    # empty tensors: grid 0, no launch at all
    rec.calls.clear()
    k(T((0,), torch.float16, 0x10000), T((0,), torch.float16, 0x20000), 1)
    assert rec.calls == []
    # int32 n overflow
    big = 2**31
    with pytest.raises(ValueError, match="does not fit in int32"):
        k(T((big,), torch.float16, 0x10000), T((big,), torch.float16, 0x10000 + 2**33), 1)
    # and good calls still take the fast path
    fast, general = _both(rec, k, *good)
    assert fast == general


def in_threads(step, ns=(100, 200, 300), times: int = 50) -> None:
    """``step(n)`` ``times`` times in one thread per ``n``, all started together; no errors."""
    errors = []
    start = threading.Barrier(len(ns))

    def worker(n):
        try:
            start.wait()
            for _ in range(times):
                step(n)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(n,)) for n in ns]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def test_fast_path_per_thread_buffers(env):
    torch, rec = env
    k = compiled(rec, "ctypes")
    T = torch.Tensor
    k(T((64,), torch.float16, 0x10000), T((64,), torch.float16, 0x20000))
    in_threads(lambda n: k(T((n,), torch.float16, 0x10000), T((n,), torch.float16, 0x20000 + 64 * n)))
    assert len(k._xblocks) == 3  # one buffer per thread
    assert sum(c[0] == "fast" for c in rec.calls) >= 147
    for c in rec.calls:
        assert c[6][1] == 0x20000 + 64 * c[6][2] or c[6][2] == 64  # params belong to one call


def make_cluster_tma(cluster=2):
    from tirx.ir.types import PointerType, uint8

    b = IRBuilder("launch_test.py")
    with b, b.function("clus"):
        n = Var("n")
        A = b.param("A", TensorType((n, 64), int32))
        tm = b.param("tm", PointerType(uint8, "tensormap"))  # a 128-byte by-value parameter before n
        with b.device_entry(*launch_args(n, 64, cluster=cluster)):
            t = b.bind("t", call("cuda.thread_idx", "x"))
            b.store(A, (call("cuda.block_idx", "x"), t), n * 100 + t)
            _ = tm
    return b.get()


def test_cluster_and_tensormap_take_the_fast_path(env, monkeypatch):
    torch, rec = env
    monkeypatch.setattr(K, "_FAST_CLUSTER", True)
    k = tirx.compile(make_cluster_tma(), target=ARCH, cache=False, launcher="ctypes")
    rec.kern = k
    T = torch.Tensor
    a = T((8, 64), torch.int32, 0x10000)
    tm = bytes(range(128))
    k(a, tm)
    assert type(k).__name__ != "Kernel"
    fast, general = _both(rec, k, a, tm)
    assert fast == general and rec.cluster == rec.cluster_general == (2, 1, 1)
    assert "if gx % 2: raise _Slow" in k.fast_source
    assert fast[0] == (8, 1, 1) and fast[4] == [0x10000, tm, 8]
    # grid.x = 5 is not a multiple of cluster.x = 2: handed to the general path (whose launch,
    # faked here, raises the error)
    rec.calls.clear()
    k(T((5, 64), torch.int32, 0x10000), tm)
    assert [c[0] for c in rec.calls] == ["general"]
    rec.calls.clear()
    with pytest.raises(TypeError, match="128-byte TMA descriptor"):
        k(a, tm[:64])
    assert rec.calls == []
    # bytearray / TensorMap-like objects: the general path
    k(a, bytearray(tm))
    assert [c[0] for c in rec.calls] == ["general"]


def test_cluster_fast_path_can_be_turned_off(env, monkeypatch):
    torch, rec = env
    default_on = os.environ.get("TIRX_FAST_CLUSTER", "1") != "0"
    assert default_on is K._FAST_CLUSTER
    monkeypatch.setattr(K, "_FAST_CLUSTER", False)
    k = tirx.compile(make_cluster_tma(), target=ARCH, cache=False, launcher="ctypes")
    rec.kern = k
    k(torch.Tensor((8, 64), torch.int32, 0x10000), bytes(128))
    assert type(k).__name__ == "Kernel" and k._fast is None


def test_cluster_fast_path_under_the_bindings_launcher(env, monkeypatch):
    """Cluster kernels launch through libcuda's cuLaunchKernelEx (ctypes) under either launcher:
    the same packed config, attribute and parameters as launcher="ctypes"."""
    torch, rec = env
    monkeypatch.setattr(K, "_FAST_CLUSTER", True)
    k = tirx.compile(make_cluster_tma(), target=ARCH, cache=False, launcher="bindings")
    rec.kern = k
    a = torch.Tensor((8, 64), torch.int32, 0x10000)
    tm = bytes(range(128))
    k(a, tm)
    assert type(k).__name__ != "Kernel" and "_xpack(blk[0]" in k.fast_source
    fast, general = _both(rec, k, a, tm)
    assert fast == general and rec.cluster == rec.cluster_general == (2, 1, 1)


# ---------------------------------------------- ready kernels (tirx.runtime.ready): the same launches
def _ready_pair(monkeypatch, launcher, make=None, **kw):
    """A compiled kernel and the ReadyKernel made from its record (the build counted; the
    ``env`` fixture's fake torch and driver in place)."""
    from tirx.runtime import kernel_image
    from tirx.runtime import ready as R

    monkeypatch.setattr(kernel_image.CompiledImage, "_load", lambda self, dev, name: FN)
    monkeypatch.setattr(D, "context", lambda dev: None)
    mod = tirx.compile((make or make_add)(**kw), target=ARCH, cache=False, launcher=launcher)
    record = R.export(mod)
    assert record is not None and record["launcher"] == launcher
    builds = []

    def build():
        builds.append(1)
        return mod

    return mod, R.ReadyKernel(record, mod.cubin, build), builds


@pytest.mark.parametrize("launcher", ["ctypes", "bindings"])
def test_ready_kernel_launches_what_the_compiled_kernel_launches(env, monkeypatch, launcher):
    """A ReadyKernel launches through the recorded fast path exactly what the kernel it was
    recorded from launches (grid, block, shared memory, stream, packed values), without
    building anything; a call the fast path refuses builds the real kernel once and is its."""
    torch, rec = env
    k, rk, builds = _ready_pair(monkeypatch, launcher, scalar=True)
    T = torch.Tensor
    for n, s, stream in ((1000, 3, None), (1, -7, None), (129, 2**31 - 1, 0x777), (4096, 0, 0)):
        args = (T((n,), torch.float16, 0x10000), T((n,), torch.float16, 0x30000), s)
        rec.kern = k
        k(*args, stream=stream)
        k(*args, stream=stream)  # the first launch on a stream may take the general path
        rec.calls.clear()
        k(*args, stream=stream)
        rec.kern = rk
        rk(*args, stream=stream)
        rk(*args, stream=stream)
        assert [c[0] for c in rec.calls] == ["fast", "fast", "fast"], rec.calls
        assert rec.calls[0][2:] == rec.calls[1][2:] == rec.calls[2][2:]
    assert builds == [] and rk._real is None and "raise _Slow" in rk.fast_source
    # a refused call: the real kernel's error, no launch, one build
    rec.calls.clear()
    with pytest.raises(TypeError, match="parameter A: expected dtype float16"):
        rk(T((64,), torch.float32, 0x10000), T((64,), torch.float16, 0x20000), 1)
    assert rec.calls == [] and builds == [1] and rk._real is k
    with pytest.raises(ValueError, match="parameters A and B overlap"):
        rk(T((64,), torch.float16, 0x10000), T((64,), torch.float16, 0x10040), 1)
    assert builds == [1]
    # keyword arguments and what the record does not hold come from the real kernel
    rk(A=T((64,), torch.float16, 0x10000), B=T((64,), torch.float16, 0x20000), s=1)
    assert rk.source == k.source and rk.func is k.func and rec.calls[-1][0] == "fast"


@pytest.mark.parametrize("launcher", ["ctypes", "bindings"])
def test_ready_kernel_from_threads(env, monkeypatch, launcher):
    """Each thread's first call sets up its buffers and retries the fast path: nothing is built."""
    torch, rec = env
    _k, rk, builds = _ready_pair(monkeypatch, launcher)
    rec.kern = rk
    T = torch.Tensor
    in_threads(lambda n: rk(T((n,), torch.float16, 0x10000), T((n,), torch.float16, 0x20000 + 64 * n)))
    assert builds == [] and rk._real is None
    assert sum(c[0] == "fast" for c in rec.calls) == 150
    assert len(rk._xblocks if launcher == "ctypes" else rk._blocks) == 3  # one buffer per thread
    for c in rec.calls:
        assert c[6][1] == 0x20000 + 64 * c[6][2]  # params belong to one call


def test_ready_kernel_without_torch_is_the_real_kernel(monkeypatch, tmp_path):
    """Where the fast path cannot be bound (no torch), every call is the real kernel's."""
    from tirx.runtime import ready as R

    monkeypatch.setitem(sys.modules, "torch", None)
    mod = tirx.compile(make_add(), target=ARCH, cache=False)
    builds = []
    rk = R.ReadyKernel(R.export(mod), mod.cubin, lambda: builds.append(1) or mod)
    with pytest.raises(TypeError, match=r"takes 2 argument\(s\)"):
        rk(1)
    assert builds == [1] and repr(rk) == "<tirx.ReadyKernel add_kernel(A, B) for sm_90a>"


def test_ready_records_only_what_the_fast_path_launches(env, monkeypatch):
    """Kernels the fast path does not take (a host ``return``, several kernels, ...) get no record;
    a record of another layout is refused when read."""
    from tirx.runtime import ready as R

    mod = tirx.compile(make_add(), target=ARCH, cache=False)
    rec = R.export(mod)
    assert R.export(object()) is None
    for bad in ({**rec, "ready": 0}, {k: v for k, v in rec.items() if k != "fmt"}):
        with pytest.raises((KeyError, ValueError)):
            R.ReadyKernel(bad, mod.cubin, lambda: mod)
    monkeypatch.setattr(mod, "_fast", None)
    assert R.export(mod) is None


# ------------------------------------------------------------------ on a GPU (skipped without one)
def _gpu():
    ok, why = D.probe()
    if not ok:
        pytest.skip(f"no CUDA device: {why}")
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "cuda") or not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch


@pytest.mark.gpu
def test_gpu_ctypes_fast_path_streams_and_threads(tmp_path, monkeypatch):
    torch = _gpu()
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    k = tirx.compile(make_add(scalar=True), target="cuda", cache=False, launcher="ctypes")
    a = torch.randn(4096, device="cuda").half()
    b = torch.empty_like(a)
    k(a, b, 1)
    assert type(k).__name__ != "Kernel"

    def general(*args):
        raise AssertionError("the general path was used")

    k._general = general
    side = torch.cuda.Stream()
    for n, s in ((4096, 1), (129, -3), (1, 0)):
        x = torch.randn(n, device="cuda").half()
        y = torch.full_like(x, float("nan"))
        with torch.cuda.stream(side):
            k(x, y, s)  # the current (side) stream
        side.synchronize()
        assert torch.equal(y, x + 2 + s)
        y.fill_(float("nan"))
        torch.cuda.synchronize()
        k(x, y, s, stream=side.cuda_stream)
        side.synchronize()
        assert torch.equal(y, x + 2 + s)
    del k._general
    out = {}

    def worker():  # a fresh thread: its first launch may need the context made current
        x = torch.randn(1000, device="cuda").half()
        y = torch.full_like(x, float("nan"))
        for _ in range(3):
            k(x, y, 5)
        torch.cuda.synchronize()
        out["ok"] = bool(torch.equal(y, x + 2 + 5))  # two fp16 roundings, as in the kernel

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert out == {"ok": True}
    with pytest.raises(ValueError, match="parameters A and B overlap"):
        k(a, a, 1)


@pytest.mark.gpu
def test_gpu_cluster_and_tensormap_fast_path(tmp_path, monkeypatch):
    torch = _gpu()
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("clusters need sm_90")
    monkeypatch.setattr(K, "_FAST_CLUSTER", True)
    k = tirx.compile(make_cluster_tma(), target="cuda", cache=False, launcher="ctypes")
    for i, n in enumerate((8, 8, 64, 2)):
        A = torch.full((n, 64), -1, dtype=torch.int32, device="cuda")
        k(A, bytes(128))
        torch.cuda.synchronize()
        ref = (n * 100 + torch.arange(64, device="cuda", dtype=torch.int32)).expand(n, 64)
        assert torch.equal(A, ref), n
        if i:
            assert type(k).__name__ != "Kernel"
    with pytest.raises(ValueError, match="not a multiple of cluster"):
        k(torch.zeros((5, 64), dtype=torch.int32, device="cuda"), bytes(128))


# ------------------------------------------------------------------ prepared launches
class PreparedRecorder:
    """cuLaunchKernel of a prepared launch: its parameter values read through the pointers."""

    def __init__(self, rec):
        self.rec = rec

    def __call__(self, fn, gx, gy, gz, bx, by, bz, sm, so, paddr, extra):
        kern = self.rec.kern
        assert fn == FN and extra == 0
        assert all(paddr != blk[1] for blk in kern._blocks.values())  # its own buffer, not the call's
        ptrs = (ctypes.c_void_p * max(len(kern.param_offsets), 1)).from_address(paddr)
        codes = [n + c for n, c in re.findall(r"(\d*)([a-zA-Z?])", kern.fmt) if c != "x"]
        vals = [
            struct.unpack(c, ctypes.string_at(ptrs[k], struct.calcsize(c)))[0] for k, c in enumerate(codes)
        ]
        self.rec.calls.append(("prepared", None, (gx, gy, gz), (bx, by, bz), sm, so, vals))
        return (FakeDriver.CUresult.CUDA_SUCCESS,)


@pytest.mark.parametrize("launcher", ["ctypes", "bindings"])
def test_prepared_launch_launches_what_a_call_launches(env, launcher):
    torch, rec = env
    k = compiled(rec, launcher, scalar=True)
    D.driver().cuLaunchKernel = PreparedRecorder(rec)
    T = torch.Tensor
    for n, s, stream in ((1000, 3, None), (1, -7, 0x777), (4096, 0, 0)):
        a, b = T((n,), torch.float16, 0x10000), T((n,), torch.float16, 0x30000)
        launch = k.prepare(a, b, s)
        assert rec.calls == []  # prepare checks, it does not launch
        K.Kernel._general(k, (a, b, s), stream)
        for _ in range(3):
            assert launch(stream=stream) is None
        kinds = [c[0] for c in rec.calls]
        assert kinds == ["general", "prepared", "prepared", "prepared"], kinds
        want = rec.calls[0][2:]
        assert all(c[2:] == want for c in rec.calls[1:])
        assert want[3] == (RAW_STREAM if stream is None else stream) and want[4] == [0x10000, 0x30000, s, n]
        rec.calls.clear()
    # by keyword, and the stream of each launch (the current one, or the one given)
    launch = k.prepare(B=T((64,), torch.float16, 0x20000), A=T((64,), torch.float16, 0x10000), s=5)
    launch()
    launch(stream=0x999)
    vals = [0x10000, 0x20000, 5, 64]
    assert [(c[5], c[6]) for c in rec.calls] == [(RAW_STREAM, vals), (0x999, vals)]
    assert launch.kernel is k and len(launch.args) == 3 and "add" in repr(launch)


def test_prepared_launch_refuses_what_a_call_refuses(env):
    torch, rec = env
    k = compiled(rec, "bindings", scalar=True)
    D.driver().cuLaunchKernel = PreparedRecorder(rec)
    T = torch.Tensor
    good = (T((64,), torch.float16, 0x10000), T((64,), torch.float16, 0x20000), 1)
    bad = [
        ((good[0], good[1]), TypeError, r"takes 3 argument\(s\)"),
        ((T((64,), torch.float32, 0x10000), good[1], 1), TypeError, "parameter A: expected dtype float16"),
        ((good[0], T((65,), torch.float16, 0x20000), 1), ValueError, "dynamic dimension n disagrees"),
        ((good[0], T((64,), torch.float16, 0x20000, dev=1), 1), ValueError, "B is on cuda:1"),
        ((T((64,), torch.float16, 0x10000, strides=(2,)), good[1], 1), ValueError, "not contiguous"),
        ((good[0], T((64,), torch.float16, 0x10040), 1), ValueError, "parameters A and B overlap"),
        ((*good[:2], 2**31), ValueError, "parameter s: 2147483648 does not fit in int32"),
    ]
    for args, exc, msg in bad:
        with pytest.raises(exc, match=msg):
            k.prepare(*args)
    with pytest.raises(TypeError, match="unexpected keyword argument 'stream'"):
        k.prepare(*good, stream=0)
    launch = k.prepare(*good)
    for s in (-1, 2**64, "s"):
        with pytest.raises((TypeError, ValueError)):
            launch(stream=s)
    assert rec.calls == []
    # the memory of a tensor moved since prepare (torch's resize_ / set_): refused, nothing launched
    good[1]._ptr = 0x40000
    with pytest.raises(ValueError, match=r"parameter B moved \(data pointer 0x20000 -> 0x40000\)"):
        launch()
    assert rec.calls == []
    # an empty grid: prepared, nothing to launch
    empty = k.prepare(T((0,), torch.float16, 0x10000), T((0,), torch.float16, 0x20000), 1)
    assert empty() is None and rec.calls == []


def test_prepared_launch_from_threads(env):
    torch, rec = env
    k = compiled(rec, "bindings")
    D.driver().cuLaunchKernel = PreparedRecorder(rec)
    T = torch.Tensor
    launches = {
        n: k.prepare(T((n,), torch.float16, 0x10000), T((n,), torch.float16, 0x20000 + 64 * n))
        for n in (100, 200, 300)
    }
    in_threads(lambda n: (launches[n](), launches[400 - n if n != 200 else 200]()))
    assert len(rec.calls) == 300
    for c in rec.calls:
        assert c[6][1] == 0x20000 + 64 * c[6][2]  # each launch's values are one prepared set


def test_prepared_launch_on_the_interpreter(monkeypatch):
    np = pytest.importorskip("numpy")
    monkeypatch.setenv("TIRX_INTERPRET", "1")
    k = tirx.compile(make_add(scalar=True), target="cuda")
    a = np.arange(300, dtype=np.float16)
    b = np.zeros_like(a)
    launch = k.prepare(a, b, 4)
    assert not b.any()
    launch(stream=0)
    assert np.array_equal(b, a + np.float16(6))
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        k.prepare(a, b, 4, stream=0)


@pytest.mark.gpu
def test_gpu_prepared_launch(tmp_path, monkeypatch):
    torch = _gpu()
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    for launcher in ("bindings", "ctypes"):
        k = tirx.compile(make_add(scalar=True), target="cuda", cache=False, launcher=launcher)
        x = torch.randn(5000, device="cuda").half()
        y = torch.full_like(x, float("nan"))
        launch = k.prepare(x, y, 3)
        torch.cuda.synchronize()
        assert torch.isnan(y).all()  # prepare launches nothing
        launch()
        torch.cuda.synchronize()
        assert torch.equal(y, x + 2 + 3)
        # the same launch on another stream, after the input changed in place (same memory)
        side = torch.cuda.Stream()
        x.mul_(2)
        y.fill_(float("nan"))
        torch.cuda.synchronize()
        launch(stream=side)
        side.synchronize()
        assert torch.equal(y, x + 2 + 3)
        with torch.cuda.stream(side):
            y.fill_(float("nan"))
            launch()  # the current (side) stream
        side.synchronize()
        assert torch.equal(y, x + 2 + 3)
        # captured into a CUDA graph and replayed
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.cuda.graph(g, stream=s):
            launch()
        torch.cuda.synchronize()
        x.add_(1)
        y.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(y, x + 2 + 3)
        # memory moved under the prepared launch: refused
        y.resize_(1 << 20)
        with pytest.raises(ValueError, match="parameter B moved"):
            launch()


def test_an_image_for_another_arch_names_both_archs(monkeypatch):
    """A cubin for sm_100a (a backend_config's arch) on an sm_90 device: the driver's
    CUDA_ERROR_NO_BINARY_FOR_GPU becomes an error naming the kernel's and the device's arch."""
    from tirx.runtime import driver as D
    from tirx.runtime.kernel_image import CompiledImage

    class Err:  # a cuda-bindings result code: int() and a name
        def __int__(self):
            return 209

    class Drv:
        def cuModuleLoadData(self, image):
            return (Err(), None)

    monkeypatch.setattr(D, "driver", lambda: Drv())
    monkeypatch.setattr(D, "require", lambda: None)
    monkeypatch.setattr(D, "context", lambda dev: None)
    monkeypatch.setattr(D, "_name", lambda err: "CUDA_ERROR_NO_BINARY_FOR_GPU")
    monkeypatch.setattr(D, "device_arch", lambda dev=0: "sm_90a")
    img = CompiledImage("", "", b"\0", "sm_100a", config={"arch": "sm_100a"})
    with pytest.raises(
        RuntimeError,
        match=r"compiled for sm_100a \(its backend_config\), which device 0 \(sm_90a\) cannot run",
    ) as e:
        img._load(0, "main")
    assert "NO_BINARY_FOR_GPU" in str(e.value.__cause__)


@pytest.mark.parametrize("launcher", ["ctypes", "bindings"])
def test_a_dimension_only_written_a_n_plus_c_is_solved(env, launcher):
    """``A: (n * 2,)``, ``O: (n + 1,)`` and nothing of shape ``(n,)``: n is solved from the
    first such dimension (as TIRx's host code binds it), the others are checked against it,
    and a dimension no integer n gives is refused before any launch; fast and general paths
    agree."""
    torch, rec = env
    b = IRBuilder("launch_test.py")
    with b, b.function("pairs"):
        n = Var("n")
        A = b.param("A", TensorType((n * 2,), float16))
        O = b.param("O", TensorType((n + 1,), int32))
        with b.device_entry(*launch_args((n + 127) // 128, 128)):
            i = b.bind("i", call("cuda.block_idx", "x") * 128 + call("cuda.thread_idx", "x"))
            with b.if_(i < n):
                b.store(O, (i,), i)
                b.store(A, (i * 2,), const(1.0, float16))
    k = tirx.compile(b.get(), target=ARCH, cache=False, launcher=launcher)
    rec.kern = k
    T = torch.Tensor
    for m in (1, 300, 4096):
        fast, general = _both(rec, k, T((2 * m,), torch.float16, 0x10000), T((m + 1,), torch.int32, 0x90000))
        assert fast == general and fast[4][-1] == m and fast[0] == ((m + 127) // 128, 1, 1)
    for a_len, o_len, msg in ((7, 4, "which is not 2 \\* n for any integer n"), (8, 6, "dimension 0 is 6")):
        rec.calls.clear()
        with pytest.raises(ValueError, match=msg):
            k(T((a_len,), torch.float16, 0x10000), T((o_len,), torch.int32, 0x90000))
        assert rec.calls == []


def test_the_dynamic_shared_memory_a_launch_may_take_without_opting_in(env, monkeypatch):
    """48 KiB less the kernel's static shared arrays: a 48 KiB window beside a barrier array
    needs the opt-in attribute too (held-out round 15: such a launch failed with
    CUDA_ERROR_INVALID_VALUE). The fast path waits until the function is loaded to know it."""
    _torch, rec = env
    k = compiled(rec, "ctypes")
    monkeypatch.setattr(FakeDriver, "cuFuncGetAttribute", staticmethod(lambda attr, fn: (0, 1024)))
    assert 0 not in k._smem_max
    k._function(0)
    assert k._smem_max[0] == 48 * 1024 - 1024
