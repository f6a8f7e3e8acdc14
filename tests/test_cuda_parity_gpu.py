"""On a GPU (the lead runs these on the H200): the TIRx-parity CUDA ops of tirx/ops/cuda_convert.py,
cuda_timers.py, cuda_waits.py, cuda_mma.py, cuda_legacy.py and cuda_iket.py against the
interpreter (bit-exact), and cooperative launches / launch attributes through
tirx/runtime/cooperative.py (cuLaunchKernelEx). Skipped without a CUDA device."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from gpu_util import require_gpu

torch = require_gpu()

import tirx  # noqa: E402
from tirx.codegen import generate  # noqa: E402
from tirx.runtime import cooperative as co  # noqa: E402
from tirx.runtime import driver as drv  # noqa: E402
from tirx.runtime.nvrtc import compile_source  # noqa: E402
from tirx.script import tirx as T  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _sync():
    yield
    torch.cuda.synchronize()


def _both(f, *arrays):
    """Run ``f`` on the GPU (torch tensors) and in the interpreter (numpy); return both outputs."""
    outs_np = [a.copy() for a in arrays]
    tirx.compile(f, target="interp")(*outs_np)
    dev = [torch.from_numpy(a.copy()).cuda() for a in arrays]  # torch holds uint64 as uint64
    tirx.compile(f, target="cuda", cache=False)(*dev)
    torch.cuda.synchronize()
    got = [d.cpu().numpy() for d in dev]
    return got, outs_np


@T.function
def convert_kernel(
    A: T.Tensor((256,), T.float32), B: T.Tensor((256,), T.float16), C: T.Tensor((256,), T.float32)
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    t = T.cuda.thread_idx("x")
    T.cuda.float8tohalf8(T.address_of(A[t * 8]), T.address_of(B[t * 8]))
    T.cuda.half8tofloat8(T.address_of(B[t * 8]), T.address_of(C[t * 8]))
    T.cuda.float22half2(T.address_of(B[t * 8]), T.address_of(A[t * 8 + 6]))


@T.function
def pair_kernel(X: T.Tensor((256,), T.uint64), Y: T.Tensor((256,), T.uint64), S: T.Tensor((256,), T.uint64),
                P: T.Tensor((256,), T.uint64)):  # fmt: skip
    T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=128))
    i = T.cuda.block_idx("x") * 128 + T.cuda.thread_idx("x")
    S[i] = T.cuda.fadd2_rn(X[i], Y[i])
    P[i] = T.cuda.fmul2_rn(X[i], Y[i])


def _edge_floats(n: int, seed: int) -> np.ndarray:
    edge = np.array([0.0, -0.0, 1.0, -1.5, 65504.0, 65520.0, 1e-8, 6.1e-5, 5.9e-8, np.inf, -np.inf, np.nan,
                     3.4e38, 1.4e-45, 1.17549435e-38, 0.1], dtype=np.float32)  # fmt: skip
    r = np.random.default_rng(seed).standard_normal(n).astype(np.float32) * 1e3
    r[: len(edge)] = edge
    return r


def test_conversions_match_the_interpreter():
    A = _edge_floats(256, 1)
    got, want = _both(convert_kernel, A, np.zeros(256, np.float16), np.zeros(256, np.float32))
    np.testing.assert_array_equal(got[1].view(np.uint16), want[1].view(np.uint16))
    np.testing.assert_array_equal(got[2].view(np.uint32), want[2].view(np.uint32))


def test_fadd2_fmul2_match_the_interpreter_bit_for_bit():
    x = _edge_floats(512, 2)
    y = _edge_floats(512, 3)[::-1].copy()
    X = x.view(np.uint64).copy()
    Y = y.view(np.uint64).copy()
    got, want = _both(pair_kernel, X, Y, np.zeros(256, np.uint64), np.zeros(256, np.uint64))
    for g, w in zip(got[2:], want[2:]):
        np.testing.assert_array_equal(g, w)


@T.function
def timer_kernel(P: T.Tensor((256,), T.uint64)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=4, block=64))
    tag = T.alloc_local((1,), "uint64")
    off = T.alloc_local((1,), "uint32")
    T.cuda.timer_init(P.data, tag.data, off.data, 2, T.cuda.thread_idx("x") // 32)
    lead = T.cuda.thread_idx("x") % 32 == 0
    T.cuda.timer_start(9, P.data, tag.data, off.data, 8, lead)
    T.cuda.timer_end(9, P.data, tag.data, off.data, 8, lead)
    T.cuda.timer_finalize(P.data, tag.data, off.data, 8, lead)


def test_timers_write_the_interpreters_records_with_ordered_stamps():
    got, want = _both(timer_kernel, np.zeros(256, np.uint64))
    g, w = got[0], want[0]
    low = np.uint64(0xFFFFFFFF)
    np.testing.assert_array_equal(g & low, w & low)  # layout, tags, events, kinds
    assert g[0] == w[0]
    for slot in range(8):  # per (block, group): start <= end <= finalize on %globaltimer_lo
        stamps = [int(g[1 + slot + 8 * k]) >> 32 for k in range(3)]
        assert stamps[0] <= stamps[1] <= stamps[2] or stamps[0] > 2**31  # (a 32-bit wrap is possible)


@T.function
def wait_kernel(A: T.Tensor((8,), T.uint32), O: T.Tensor((64,), T.uint32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=32))
    v = T.alloc_local((1,), "uint32")
    v[0] = T.uint32(0)
    T.cuda.wait_until(v, T.address_of(A[4]), lambda x: x == T.uint32(7), backoff_ns=10)
    T.cuda.iket.mark("waited", v[0])
    O[T.cuda.block_idx("x") * 32 + T.cuda.thread_idx("x")] = v[0]


def test_wait_until_returns_the_word():
    A = np.zeros(8, np.uint32)
    A[4] = 7
    got, want = _both(wait_kernel, A, np.zeros(64, np.uint32))
    np.testing.assert_array_equal(got[1], want[1])
    assert (got[1] == 7).all()


@T.function
def wait_some_kernel(A: T.Tensor((8,), T.uint32), O: T.Tensor((32,), T.uint32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    v = T.alloc_local((1,), "uint32")
    v[0] = T.Cast("uint32", T.cuda.thread_idx("x"))
    T.cuda.wait_until(v, T.address_of(A[4]), v[0] >= T.uint32(16), "sys", "global", "u32", 0)
    O[T.cuda.thread_idx("x")] = v[0]


def test_wait_until_loads_only_where_the_condition_fails():
    A = np.zeros(8, np.uint32)
    A[4] = 99
    got, want = _both(wait_some_kernel, A, np.zeros(32, np.uint32))
    np.testing.assert_array_equal(got[1], want[1])


@T.function
def store_kernel(C: T.Tensor((16, 16), T.float32), R: T.Tensor((32, 8), T.float32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    t = T.cuda.thread_idx("x")
    c = T.alloc_local((8,), "float32")
    T.cuda.mma_fill(8, c.data, 0, ty="float32")
    for r in T.serial(8):
        c[r] = c[r] + R[t, r]
    T.cuda.mma_store(16, 16, C.data, c.data, 0, 16, ty="float32")


def test_mma_store_matches_the_interpreter():
    R = np.random.default_rng(4).standard_normal((32, 8)).astype(np.float32)
    got, want = _both(store_kernel, np.full((16, 16), np.nan, np.float32), R)
    np.testing.assert_array_equal(got[0], want[0])


_WAIT_ALL = (
    '__device__ void tirx_test_cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }'
)


@T.function
def copy_kernel(A: T.Tensor((64,), T.float16), O: T.Tensor((64,), T.float16)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    S = T.alloc_shared((64,), "float16")
    T.s_tir.cp_async_raw(S.data, 0, A.data, 8, 16)
    T.s_tir.cp_async_raw(S.data, 8, A.data, 40, 8)
    T.cuda.func_call("tirx_test_cp_async_wait_all", _WAIT_ALL)
    for i in T.serial(12):
        O[i] = S[i]


def test_cp_async_raw_on_the_gpu():
    A = np.arange(64).astype(np.float16)
    O = np.zeros(64, np.float16)
    k = tirx.compile(copy_kernel, target="cuda", cache=False)
    a, o = torch.from_numpy(A).cuda(), torch.from_numpy(O).cuda()
    k(a, o)
    torch.cuda.synchronize()
    got = o.cpu().numpy()
    np.testing.assert_array_equal(got[:8], A[8:16])
    np.testing.assert_array_equal(got[8:12], A[40:44])


# ------------------------------------------------------------------ cooperative launches
@T.function
def grid_kernel(A: T.Tensor((4096,), T.int32), S: T.Tensor((4,), T.int32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=264, block=128))
    b = T.cuda.block_idx("x")
    for rep in T.serial(3):
        if T.cuda.thread_idx("x") == 0:
            A[b] = b + rep
        T.cuda.grid_sync()
        if b == 0 and T.cuda.thread_idx("x") == 0:
            acc = T.alloc_local((1,), "int32")
            acc[0] = 0
            for j in T.serial(264):
                acc[0] = acc[0] + A[j]
            S[rep] = acc[0]
        T.cuda.grid_sync()


def _manual_launch(f, grid, tensors, opts=None, cooperative=True):
    """Compile ``f``, load it, launch it through tirx.runtime.cooperative (what kernel.py's hook does)."""
    src = generate(f)
    res = compile_source(src.text, drv.device_arch(0))
    _mod, fn = drv.load_function(res.cubin, src.kernels[0].name, 0)
    d = drv.driver()
    ptrs = tuple(t.data_ptr() for t in tensors)
    params = (ptrs, tuple(ctypes.c_void_p for _ in ptrs))
    stream = d.CUstream(torch.cuda.current_stream().cuda_stream)
    r = co.launch(d, fn, grid, (128, 1, 1), 0, stream, params, opts or {}, None,
                  cooperative=cooperative and co.is_cooperative(src.features, opts or {}), device=0)  # fmt: skip
    drv.check(r, "cuLaunchKernelEx")
    torch.cuda.synchronize()
    return src, fn


def test_grid_sync_in_a_cooperative_launch():
    A = torch.zeros(4096, dtype=torch.int32, device="cuda")
    S = torch.zeros(4, dtype=torch.int32, device="cuda")
    src, _fn = _manual_launch(grid_kernel, (264, 1, 1), (A, S))
    assert "cooperative" in src.features
    n = 264
    want = [n * (n - 1) // 2 + n * rep for rep in range(3)]
    assert S.cpu().tolist()[:3] == want


def test_an_oversized_cooperative_grid_is_refused_before_launch():
    src = generate(grid_kernel)
    res = compile_source(src.text, drv.device_arch(0))
    _mod, fn = drv.load_function(res.cubin, src.kernels[0].name, 0)
    with pytest.raises(ValueError, match="resident"):
        co.check_grid_fits(drv.driver(), fn, (100000, 1, 1), (128, 1, 1), 0, 0)


def test_kernel_py_launches_grid_sync_kernels_cooperatively():
    A = torch.zeros(4096, dtype=torch.int32, device="cuda")
    S = torch.zeros(4, dtype=torch.int32, device="cuda")
    tirx.compile(grid_kernel, target="cuda", cache=False)(A, S)
    torch.cuda.synchronize()
    assert S.cpu().tolist()[:3] == [264 * 263 // 2 + 264 * rep for rep in range(3)]


@T.function
def plain_kernel(A: T.Tensor((1024,), T.float32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=8, block=128))
    A[T.cuda.block_idx("x") * 128 + T.cuda.thread_idx("x")] = 3.0


def test_launch_attributes_are_accepted_by_the_driver():
    A = torch.zeros(1024, dtype=torch.float32, device="cuda")
    opts = {
        "priority": 0,
        "mem_sync_domain": 1,
        "mem_sync_domain_map": {"default": 0, "remote": 1},
        "access_policy_window": {
            "base_ptr": A.data_ptr(),
            "num_bytes": 4096,
            "hit_ratio": 0.5,
            "hit_prop": 2,
            "miss_prop": 0,
        },
        "programmatic_stream_serialization": 1,
        "cooperative": 1,
    }
    _manual_launch(plain_kernel, (8, 1, 1), (A,), opts)
    assert (A.cpu().numpy() == 3).all()
