"""TIRx's profiler timers, IKET annotations, waits and source-carrying calls
(tirx/ops/cuda_timers.py, cuda_iket.py, cuda_waits.py, cuda_func_call.py): the interpreter's
semantics, printing/round-trip, generated CUDA through NVRTC, and misuse errors."""

from __future__ import annotations

import numpy as np
import pytest

import tirx
from tirx.codegen import generate
from tirx.interp import InterpError
from tirx.script import tirx as T


@T.function
def timer_kernel(P: T.Tensor((64,), T.uint64)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=3, block=32))
    tag = T.alloc_local((1,), "uint64")
    off = T.alloc_local((1,), "uint32")
    T.cuda.timer_init(P.data, tag.data, off.data, 2, T.cuda.thread_idx("x") // 16)
    lead = T.cuda.thread_idx("x") % 16 == 0
    T.cuda.timer_start(5, P.data, tag.data, off.data, 6, lead)
    T.cuda.timer_end(5, P.data, tag.data, off.data, 6, lead)
    T.cuda.timer_finalize(P.data, tag.data, off.data, 6, lead)


@T.function
def iket_kernel(A: T.Tensor((8,), T.uint32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    T.cuda.iket.mark("m0", A[0])
    t = T.cuda.iket.range_start("r")
    T.cuda.iket.range_end(t)
    T.cuda.iket.range_push("p")
    T.cuda.iket.range_pop()
    A[3] = T.cuda.iket.official_event(7) + T.cuda.iket.sentinel_token("s") + 5


@T.function
def wait_kernel(A: T.Tensor((8,), T.uint32), O: T.Tensor((32,), T.uint32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    v = T.alloc_local((1,), "uint32")
    v[0] = T.uint32(0)
    T.cuda.wait_until(v, T.address_of(A[4]), lambda x: x == T.uint32(7), backoff_ns=20)
    O[T.cuda.thread_idx("x")] = v[0]


@T.function
def grid_sync_kernel(A: T.Tensor((8,), T.float32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=32))
    A[T.cuda.block_idx("x")] = 1.0
    T.cuda.grid_sync()


@T.function
def func_call_kernel(A: T.Tensor((8,), T.uint32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
    A[T.cuda.thread_idx("x")] = T.cuda.func_call(
        "tirx_test_twice", A[T.cuda.thread_idx("x")], "__device__ unsigned tirx_test_twice(unsigned x) { return 2 * x; }",
        ty="uint32",
    )  # fmt: skip


KERNELS = (timer_kernel, iket_kernel, wait_kernel, grid_sync_kernel, func_call_kernel)


@pytest.mark.parametrize("f", KERNELS, ids=lambda f: f.name)
def test_round_trip(f):
    text = tirx.dumps(f)
    tirx.assert_structural_equal(tirx.loads(text), f)
    assert tirx.dumps(tirx.loads(text)) == text


@pytest.mark.parametrize("f", KERNELS, ids=lambda f: f.name)
def test_generated_cuda_compiles(f):
    pytest.importorskip("cuda.bindings.nvrtc")
    from tirx.runtime.nvrtc import compile_source

    assert compile_source(generate(f).text, "sm_90a").cubin


def _decode(P: np.ndarray, n: int) -> list:
    return [
        (int(w) >> 32, (int(w) & 0xFFFFFFFF) >> 12, (int(w) >> 2) & 0x3FF, int(w) & 3) for w in P[1 : 1 + n]
    ]


def test_timers_record_layout_and_monotone_stamps():
    P = np.zeros(64, np.uint64)
    tirx.compile(timer_kernel, target="interp")(P)
    assert int(P[0]) == (2 << 32) | 3  # (num_groups << 32) | blocks
    slots = 3 * 2  # (block, group) streams, each written at 1 + slot, then every 6 words
    recs = {}
    for k in range(1, 1 + 3 * slots):
        w = int(P[k])
        assert w, k
        slot = (w & 0xFFFFFFFF) >> 12
        assert (k - 1) % slots == slot
        recs.setdefault(slot, []).append(((w >> 2) & 0x3FF, w & 3, w >> 32))
    assert sorted(recs) == list(range(slots))
    for slot, rs in recs.items():
        assert [(e, kind) for e, kind, _ in rs] == [(5, 0), (5, 1), (0, 3)], slot
        stamps = [s for _, _, s in rs]
        assert stamps == sorted(stamps) and len(set(stamps)) == 3  # a monotone counter


def test_iket_annotations_compile_to_nothing():
    A = np.zeros(8, np.uint32)
    tirx.compile(iket_kernel, target="interp")(A)
    assert A[3] == 5  # tokens and events are 0 outside an IKET trace
    src = generate(iket_kernel).text
    body = src.split('extern "C"')[1].split("{", 1)[1]
    assert "iket" not in body and "asm" not in body
    assert "T.cuda.iket_mark(" in tirx.dumps(iket_kernel)


def test_wait_until_reads_the_word_once_satisfied():
    A = np.zeros(8, np.uint32)
    A[4] = 7
    O = np.zeros(32, np.uint32)
    tirx.compile(wait_kernel, target="interp")(A, O)
    assert (O == 7).all()
    A[4] = 3
    with pytest.raises(InterpError, match="wait forever"):
        tirx.compile(wait_kernel, target="interp")(A, np.zeros(32, np.uint32))
    src = generate(wait_kernel).text
    assert (
        "ld.relaxed.gpu.global.u32" in src and "ld.acquire.gpu.global.u32" in src and "__nanosleep(20)" in src
    )


def test_grid_sync_marks_the_kernel_cooperative_and_the_interpreter_refuses():
    s = generate(grid_sync_kernel)
    assert "cooperative" in s.features
    assert "cooperative" not in generate(iket_kernel).features
    with pytest.raises(tirx.errors.OpError, match="grid"):
        tirx.compile(grid_sync_kernel, target="interp")


def test_func_call_emits_its_source_once():
    src = generate(func_call_kernel).text
    assert src.count("__device__ unsigned tirx_test_twice") == 1
    assert "tirx_test_twice(A[" in src
    with pytest.raises(tirx.errors.OpError, match="func_call"):
        tirx.compile(func_call_kernel, target="interp")


def test_misuse_is_located_or_named():
    from tirx.ir.op import call

    with pytest.raises(TypeError, match="scope"):
        call("cuda.wait_until", tirx.ir.Var("v", "uint32"), tirx.ir.Var("p", tirx.ir.PointerType(tirx.ir.types.uint32)),
             tirx.ir.const(True), "device", "global", "", 0)  # fmt: skip
    with pytest.raises(tirx.DiagnosticError, match="thread-local"):

        @T.function
        def bad(A: T.Tensor((8,), T.uint32)):
            T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
            T.cuda.wait_until(A[0], T.address_of(A[4]), A[0] == T.uint32(1))

        generate(bad)


@T.function
def wait_some_kernel(A: T.Tensor((8,), T.uint32), O: T.Tensor((32,), T.uint32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    v = T.alloc_local((1,), "uint32")
    v[0] = T.Cast("uint32", T.cuda.thread_idx("x"))
    T.cuda.wait_until(v, T.address_of(A[4]), v[0] >= T.uint32(16))
    O[T.cuda.thread_idx("x")] = v[0]


def test_wait_until_loads_only_where_the_condition_fails():
    A = np.zeros(8, np.uint32)
    A[4] = 99
    O = np.zeros(32, np.uint32)
    tirx.compile(wait_some_kernel, target="interp")(A, O)
    np.testing.assert_array_equal(O, [99] * 16 + list(range(16, 32)))
