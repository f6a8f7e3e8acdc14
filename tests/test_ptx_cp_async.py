"""``T.ptx["cp.async.{ca,cg}.shared.global"]`` in the interpreter (tirx/ops/ptx_semantics_copy.py):
the bytes land as numpy says (src-size zero fill, ignore-src), a source outside its tensor is
located only for the lanes that read it, a read of the copied shared memory needs the barrier
after the wait; on a GPU the CUDA kernel gives the interpreter's bytes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
from tirx.interp.errors import InterpError, MisalignedError, OutOfBoundsError, RaceError
from tirx.script import tirx as T


def _kernel(cop: str, size: int, src_size: bool, ignore: bool, barrier: bool = True, alen: int = 256):
    """Thread t copies ``size`` bytes from element ``off[t]`` of A into shared slot t, then
    thread t reads slot ``31 - t`` (another thread's copy) into B."""
    op = f"cp.async.{cop}.shared.global"
    per = size // 2  # float16 elements a copy

    @T.function
    def k(
        A: T.Tensor((alen,), "float16"),
        off: T.Tensor((32,), "int32"),
        n: T.Tensor((32,), "uint32"),
        B: T.Tensor((32 * per,), "float16"),
    ):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        t = T.cuda.thread_idx("x")
        S = T.alloc_shared((32 * per,), "float16")
        for j in T.unroll(per):
            S[t * per + j] = T.float16(-1)
        T.cuda.cta_sync()
        if T.constexpr(src_size):
            T.ptx[op](S.ptr_to([t * per]), A.ptr_to([off[t]]), size, n[t])
        elif T.constexpr(ignore):
            T.ptx[op](S.ptr_to([t * per]), A.ptr_to([off[t]]), size, n[t] == T.uint32(0))
        else:
            T.ptx[op](S.ptr_to([t * per]), A.ptr_to([off[t]]), size)
        T.ptx["cp.async.commit_group"]()
        T.ptx["cp.async.wait_group"](0)
        if T.constexpr(barrier):
            T.cuda.cta_sync()
        for j in T.unroll(per):
            B[t * per + j] = S[(31 - t) * per + j]

    return k


def _expected(A, off, n, size, src_size, ignore):
    per = size // 2
    S = np.zeros((32, size), np.uint8)
    raw = A.view(np.uint8)
    for t in range(32):
        m = min(int(n[t]), size) if src_size else (0 if ignore and n[t] == 0 else size)
        S[t, :m] = raw[2 * off[t] : 2 * off[t] + m]
    return S.view(np.float16).reshape(32, per)[::-1].reshape(-1)


@given(
    form=st.sampled_from([("cg", 16), ("ca", 16), ("ca", 8), ("ca", 4)]),
    tail=st.sampled_from(["", "src_size", "ignore_src"]),
    seed=st.integers(0, 2**31),
)
@settings(max_examples=40, deadline=None)
def test_copies_the_bytes_numpy_says(form, tail, seed):
    cop, size = form
    g = np.random.default_rng(seed)
    per = size // 2
    A = g.standard_normal(256).astype(np.float16)
    off = (g.integers(0, (256 - per) // per, 32) * per).astype(np.int32)  # aligned to the copy
    n = g.integers(0, size + 1, 32).astype(np.uint32)
    B = np.zeros(32 * per, np.float16)
    k = _kernel(cop, size, tail == "src_size", tail == "ignore_src")
    tirx.compile(k, target="interp")(A, off, n, B)
    want = _expected(A, off, n, size, tail == "src_size", tail == "ignore_src")
    np.testing.assert_array_equal(B.view(np.uint16), want.view(np.uint16))


def test_a_source_past_the_tensor_is_located_only_where_bytes_are_read():
    k = _kernel("cg", 16, True, False, alen=252)
    A = np.zeros(252, np.float16)
    off = np.zeros(32, np.int32)
    off[5] = 248  # 16 bytes from here end 4 elements past A
    n = np.full(32, 16, np.uint32)
    n[5] = 8  # zero-filled past 8 bytes: nothing past A is read
    tirx.compile(k, target="interp")(A, off, n, np.zeros(256, np.float16))
    n[5] = 9
    with pytest.raises(OutOfBoundsError, match=r"thread \(5, 0, 0\)"):
        tirx.compile(k, target="interp")(A, off, n, np.zeros(256, np.float16))
    n[5] = 16
    off[5] = 244  # misaligned for a 16-byte copy: the GPU faults
    with pytest.raises(MisalignedError, match=r"global address .* not 16-byte aligned.*thread \(5, 0, 0\)"):
        tirx.compile(k, target="interp")(A, off, n, np.zeros(256, np.float16))


def test_a_src_size_past_the_copy_is_refused():
    """PTX leaves ``src-size > cp-size`` undefined (an H100 copied nothing where the model had
    copied the whole vector): a located error, not a guess."""
    k = _kernel("cg", 16, True, False)
    n = np.full(32, 16, np.uint32)
    n[9] = 17
    with pytest.raises(
        InterpError, match=r"src-size 17 is larger than the copy's 16 bytes.*thread \(9, 0, 0\)"
    ):
        tirx.compile(k, target="interp")(
            np.zeros(256, np.float16), np.zeros(32, np.int32), n, np.zeros(256, np.float16)
        )


def test_reading_another_threads_copy_needs_the_barrier():
    k = _kernel("cg", 16, False, False, barrier=False)
    A = np.zeros(256, np.float16)
    with pytest.raises(RaceError, match="missing barrier"):
        tirx.compile(k, target="interp")(
            A, np.zeros(32, np.int32), np.zeros(32, np.uint32), np.zeros(256, np.float16)
        )


def test_round_trip_and_cuda_text():
    k = _kernel("ca", 8, True, False)
    text = tirx.dumps(k)
    tirx.assert_structural_equal(tirx.loads(text), k)
    from tirx.codegen import generate

    cu = generate(k).text
    assert "cp.async.ca.shared.global [%0], [%1], %2, %3;" in cu
    assert "cp.async.commit_group;" in cu and "cp.async.wait_group %0;" in cu


@pytest.mark.gpu
@pytest.mark.parametrize("tail", ["", "src_size", "ignore_src"])
def test_cuda_gives_the_interpreters_bytes(tail):
    from gpu_util import require_gpu

    torch = require_gpu()
    g = np.random.default_rng(7)
    A = g.standard_normal(256).astype(np.float16)
    off = (g.integers(0, 31, 32) * 8).astype(np.int32)
    n = g.integers(0, 17, 32).astype(np.uint32)
    k = _kernel("cg", 16, tail == "src_size", tail == "ignore_src")
    cpu = np.zeros(256, np.float16)
    tirx.compile(k, target="interp")(A, off, n, cpu)
    dev = [torch.from_numpy(x.copy()).cuda() for x in (A, off, n, np.zeros(256, np.float16))]
    tirx.compile(k, target="cuda")(*dev)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(dev[3].cpu().numpy().view(np.uint16), cpu.view(np.uint16))
