"""CUDA runtime without a GPU: compile cache, argument checks, host expressions, driver probe."""

from __future__ import annotations

import os
import threading
import types

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

import tirx
from tirx.ir import Div, FloorDiv, FloorMod, IntImm, Mod, TensorType, Var, const
from tirx.ir.op import call
from tirx.ir.types import float16, float32, int32, int64
from tirx.runtime import cache as C
from tirx.runtime import driver as D
from tirx.runtime.hostexpr import HOST_GLOBALS, to_python
from tirx.surface.builder import IRBuilder, launch_args

ARCH = "cuda -arch=sm_90a"


@pytest.fixture(autouse=True)
def _cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    C.clear_memory()
    yield
    C.clear_memory()


def make_add(name="add", dtype=float16, block=128):
    b = IRBuilder("rt_test.py")
    with b, b.function(name):
        n = Var("n")
        A = b.param("A", TensorType((n,), dtype))
        B = b.param("B", TensorType((n,), dtype))
        with b.device_entry(*launch_args((n + block - 1) // block, block)):
            i = b.bind("i", call("cuda.block_idx", "x") * block + call("cuda.thread_idx", "x"))
            with b.if_(i < n):
                b.store(B, (i,), A[i] + const(2.0, dtype))
    return b.get()


# ------------------------------------------------------------------ cache
def test_cache_hit_in_memory_and_on_disk(tmp_path):
    f = make_add()
    k1 = tirx.compile(f, target=ARCH)
    assert k1.module.cache_hit == ""
    files = os.listdir(tmp_path / "cache")
    assert len([x for x in files if x.endswith(".tirxbin")]) == 1
    k2 = tirx.compile(f, target=ARCH)
    assert k2.module.cache_hit == "hit"
    assert k2.cubin == k1.cubin
    C.clear_memory()  # a new process: only the disk is left
    k3 = tirx.compile(make_add(), target=ARCH)
    assert k3.module.cache_hit == "hit" and k3.cubin == k1.cubin


def test_cache_key_covers_names_arch_and_options():
    f = make_add()
    g = make_add(name="add2")
    k1 = tirx.compile(f, target=ARCH)
    assert tirx.compile(g, target=ARCH).module.cache_key != k1.module.cache_key
    assert tirx.compile(f, target="cuda -arch=sm_80").module.cache_key != k1.module.cache_key
    assert tirx.compile(f, target=ARCH, options=("-lineinfo",)).module.cache_key != k1.module.cache_key
    assert tirx.compile(f, target=ARCH, restrict=False).module.cache_key != k1.module.cache_key
    assert tirx.compile(f, target=ARCH, vectorize=False).module.cache_key != k1.module.cache_key
    assert tirx.compile(f, target=ARCH, wrap_int=False).module.cache_key != k1.module.cache_key


def test_repeated_compile_of_one_object_skips_passes_and_codegen(monkeypatch):
    import tirx.codegen.cuda

    f = make_add()
    k1 = tirx.compile(f, target=ARCH)
    calls = []
    real = tirx.codegen.cuda.emit  # the pipeline's codegen stage (tirx/pipeline.py)
    monkeypatch.setattr(tirx.codegen.cuda, "emit", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    k2 = tirx.compile(f, target=ARCH)
    assert calls == [] and k2.source == k1.source and k2.cubin == k1.cubin
    tirx.compile(f, target=ARCH, vectorize=False)  # other options: lowered again
    tirx.compile(make_add(), target=ARCH)  # an equal but other object: lowered again
    assert len(calls) == 2


def test_cache_key_covers_the_code_generator_itself(monkeypatch):
    """A changed tirx (IR, passes, CUDA generator, NVRTC driver) never reuses an older binary:
    the key includes a digest of their source files."""
    import builtins

    opened: list = []
    real_open = builtins.open

    def spy(path, *a, **kw):
        opened.append(os.path.basename(str(path)))
        return real_open(path, *a, **kw)

    monkeypatch.setattr(C, "_CODEGEN_VERSION", None)
    monkeypatch.setattr(builtins, "open", spy)
    v = C.codegen_version()
    monkeypatch.setattr(builtins, "open", real_open)
    for name in (
        "cuda.py",
        "asm.py",
        "vectorize_threads.py",
        "bounds.py",
        "math.py",
        "hopper.py",
        "nvrtc.py",
    ):
        assert name in opened
    key = C.make_key("src", ("f",), "sm_90a", (13, 0), ())
    monkeypatch.setattr(C, "_CODEGEN_VERSION", v + "x")
    assert C.make_key("src", ("f",), "sm_90a", (13, 0), ()) != key


def test_corrupted_entries_are_ignored_and_rebuilt(tmp_path):
    f = make_add()
    k1 = tirx.compile(f, target=ARCH)
    path = tmp_path / "cache" / (k1.module.cache_key + ".tirxbin")
    good = path.read_bytes()
    for bad in (good[: len(good) // 2], b"garbage", good[:-1] + bytes([good[-1] ^ 1]), b""):
        path.write_bytes(bad)
        C.clear_memory()
        k = tirx.compile(f, target=ARCH)
        assert k.module.cache_hit == ""
        assert k.cubin == k1.cubin
        assert path.read_bytes() == good  # rewritten


def test_cache_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "x"))
    assert C.cache_dir() == str(tmp_path / "x")
    monkeypatch.delenv("TIRX_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert C.cache_dir() == str(tmp_path / "xdg" / "tirx")
    monkeypatch.setenv("TIRX_CACHE_DIR", "")
    assert C.cache_dir() is None


def test_concurrent_writers_leave_a_valid_entry(tmp_path):
    e = C.CacheEntry("src", "ptx", b"\x00cubin" * 1000, "", {"arch": "sm_90a"})
    errs = []

    def w():
        try:
            for _ in range(20):
                C.put("k" * 64, e)
        except Exception as x:  # pragma: no cover
            errs.append(x)

    ts = [threading.Thread(target=w) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errs
    C.clear_memory()
    got = C.get("k" * 64)
    assert got is not None and got.cubin == e.cubin
    assert not [x for x in os.listdir(tmp_path / "cache") if x.endswith(".tmp")]


def test_cache_hit_does_not_recompile(monkeypatch):
    """A second compile of the same IR is served from the cache: NVRTC is not called again."""
    from tirx.runtime import nvrtc

    f = make_add()
    first = tirx.compile(f, target=ARCH)

    def boom(*a, **k):
        raise AssertionError("NVRTC called on a cache hit")

    for name in dir(nvrtc):
        if name.startswith("compile") and callable(getattr(nvrtc, name)):
            monkeypatch.setattr(nvrtc, name, boom)
    again = tirx.compile(f, target=ARCH)
    assert again.cubin == first.cubin


# ------------------------------------------------------------------ host expressions
@pytest.mark.parametrize("a,b", [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 3)])
def test_host_division_semantics(a, b):
    x, y = Var("x"), Var("y")
    names = {x: "x", y: "y"}
    ns = dict(HOST_GLOBALS, x=a, y=b)
    assert eval(to_python(FloorDiv(x, y), names), ns) == a // b
    assert eval(to_python(FloorMod(x, y), names), ns) == a % b
    q = int(a / b)
    assert eval(to_python(Div(x, y), names), ns) == q
    assert eval(to_python(Mod(x, y), names), ns) == a - b * q
    _ = IntImm


# ------------------------------------------------------------------ argument checks (fake device arrays)
class FakeCuda:
    """Something with __cuda_array_interface__ on 'device 0' (no memory behind it)."""

    def __init__(self, shape, typestr="<f2", ptr=0x10000, strides=None, dev=0):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": typestr,
            "data": (ptr, False),
            "strides": strides,
            "version": 3,
        }
        self.device = types.SimpleNamespace(id=dev)


@pytest.fixture(scope="module")
def add_kernel():
    return tirx.compile(make_add(), target=ARCH, cache=False)


def test_arg_count(add_kernel):
    with pytest.raises(TypeError, match=r"add\(\) takes 2 argument\(s\) \(A, B\), got 1"):
        add_kernel(FakeCuda((8,)))


def test_arg_dtype(add_kernel):
    with pytest.raises(TypeError, match="parameter B: expected dtype float16, got float32"):
        add_kernel(FakeCuda((8,)), FakeCuda((8,), "<f4", ptr=0x20000))


def test_arg_rank(add_kernel):
    with pytest.raises(ValueError, match="parameter A: expected rank 1"):
        add_kernel(FakeCuda((8, 2)), FakeCuda((8,), ptr=0x20000))


def test_dynamic_dims_must_agree(add_kernel):
    with pytest.raises(ValueError, match="dynamic dimension n disagrees: 8 from A dimension 0, 9 from B"):
        add_kernel(FakeCuda((8,)), FakeCuda((9,), ptr=0x20000))


def test_non_contiguous(add_kernel):
    with pytest.raises(ValueError, match="parameter A: tensor is not contiguous"):
        add_kernel(FakeCuda((8,), strides=(4,)), FakeCuda((8,), ptr=0x20000))


def test_misaligned(add_kernel):
    with pytest.raises(ValueError, match="parameter B: data pointer 0x20001 is not aligned to 2 bytes"):
        add_kernel(FakeCuda((8,)), FakeCuda((8,), ptr=0x20001))


def test_device_mismatch(add_kernel):
    with pytest.raises(ValueError, match="parameter B is on cuda:1 but A is on cuda:0"):
        add_kernel(FakeCuda((8,)), FakeCuda((8,), ptr=0x20000, dev=1))


def test_overlapping_restrict_pointers(add_kernel):
    with pytest.raises(ValueError, match="parameters A and B overlap"):
        add_kernel(FakeCuda((8,)), FakeCuda((8,), ptr=0x10008))


def test_host_arrays_and_numbers_are_refused(add_kernel):
    np = pytest.importorskip("numpy")
    with pytest.raises(ValueError, match=r"parameter A: .*(CPU|not on a CUDA device)"):
        add_kernel(np.zeros(8, np.float16), FakeCuda((8,)))
    with pytest.raises(TypeError, match="parameter A: expected a CUDA tensor, got the number 3"):
        add_kernel(3, FakeCuda((8,)))
    with pytest.raises(TypeError, match="parameter A: expected a CUDA tensor, got str"):
        add_kernel("x", FakeCuda((8,)))


def test_static_shape_and_scalars():
    b = IRBuilder()
    with b, b.function("scale"):
        A = b.param("A", TensorType((4, 8), float32))
        s = b.param("s", float32)
        k = b.param("k", int32)
        with b.device_entry(*launch_args(1, 32)):
            t = b.bind("t", call("cuda.thread_idx", "x"))
            b.store(A, (t // 8, t % 8), A[t // 8, t % 8] * s + k.astype("float32"))
    kern = tirx.compile(b.get(), target=ARCH, cache=False)
    with pytest.raises(ValueError, match=r"parameter A: dimension 1 must be 8, got 9"):
        kern(FakeCuda((4, 9), "<f4"), 1.0, 2)
    with pytest.raises(TypeError, match="parameter s: expected a float"):
        kern(FakeCuda((4, 8), "<f4"), "1", 2)
    with pytest.raises(TypeError, match="parameter k: expected an int"):
        kern(FakeCuda((4, 8), "<f4"), 1.0, 2.5)
    with pytest.raises(ValueError, match="parameter k: 4294967296 does not fit in int32"):
        kern(FakeCuda((4, 8), "<f4"), 1.0, 2**32)


def test_int32_dynamic_dim_overflow(add_kernel):
    with pytest.raises(ValueError, match=r"dynamic dimension n = 2147483648 .* does not fit in int32"):
        add_kernel(FakeCuda((2**31,)), FakeCuda((2**31,), ptr=0x10000 + 2**33))


def test_valid_call_without_driver_is_clear(add_kernel):
    ok, _why = D.probe()
    if ok:
        pytest.skip("a CUDA driver is present")
    with pytest.raises(RuntimeError, match="cannot launch CUDA kernels here"):
        add_kernel(FakeCuda((8,)), FakeCuda((8,), ptr=0x20000))


def test_empty_launch_is_a_no_op(add_kernel):
    add_kernel(FakeCuda((0,)), FakeCuda((0,), ptr=0x20000))  # grid 0: nothing to launch, no driver needed


def test_undeducible_dynamic_dim_is_an_error():
    b = IRBuilder()
    with b, b.function("f"):
        n = Var("n")
        A = b.param("A", TensorType((n * n,), float32))  # n * 2 is solved (a * n + c); n * n is not
        with b.device_entry(*launch_args(1, 32)):
            b.store(A, (call("cuda.thread_idx", "x"),), const(0.0, float32))
    with pytest.raises(ValueError, match="dynamic dimension n is never a whole dimension"):
        tirx.compile(b.get(), target=ARCH, cache=False)


def test_fast_path_source_is_generated(add_kernel):
    assert "def __call__(self, *args, stream=None, **kw):" in add_kernel._fast
    assert "if kw: args = self._bind_kw(args, kw)" in add_kernel._fast
    assert "cuLaunchKernel" not in add_kernel._fast  # bound at first call, through _launch
    _ = int64


def test_nvrtc_buffers_do_not_corrupt_python_bytes():
    # NVRTC writes its (empty) log into the buffer it is given; a shared b" " would turn into b"\0"
    tirx.compile(make_add(name="clean_log"), target=ARCH, cache=False)
    space = b" "
    assert space == bytes([32]) and bytes([32]) == b" " * 1
