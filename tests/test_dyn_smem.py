"""The dynamic shared-memory window (tirx.ir.dyn_smem): one layout for the codegen's offsets,
the size a launch without ``dynamic_smem_bytes`` asks for (TIRx infers it the same way), and the
interpreter's bounds, so a launch with too little dynamic shared memory is an out-of-bounds
access on the CPU as it is a fault (or other memory) on the GPU."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import tirx
from tirx.interp.errors import OutOfBoundsError
from tirx.ir.dyn_smem import dyn_smem_layout

SRC = """
from tirx.script import tirx as T


@T.function
def rev(A: T.Tensor((256,), T.float32){smem_param}):
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=4, block=64{smem})):
        a = T.alloc_tensor(ty_args=[T.Tensor((3,), T.int8, scope="shared.dyn")])
        s = T.alloc_tensor(ty_args=[T.Tensor((64,), T.float32, scope="shared.dyn")])
        t = T.cuda.thread_idx("x")
        if t < 3:
            a[t] = T.int8(t)
        s[t] = A[T.cuda.block_idx("x") * 64 + t]
        T.cuda.cta_sync()
        A[T.cuda.block_idx("x") * 64 + t] = s[63 - t] + T.float32(a[t % 3])
"""


def _load(tmp_path, smem: str = "", smem_param: str = ""):
    p = tmp_path / f"dyn_smem_case{len(list(tmp_path.iterdir()))}.py"  # one file per variant
    p.write_text(textwrap.dedent(SRC.format(smem=smem, smem_param=smem_param)))
    ns: dict = {}
    exec(compile(p.read_text(), str(p), "exec"), ns)
    return ns["rev"]


def _entry(f):
    from tirx.ir import DeviceEntry
    from tirx.ir.visitor import post_order

    return next(n for n in post_order(f.body) if isinstance(n, DeviceEntry))


def test_layout_aligns_and_rounds(tmp_path):
    f = _load(tmp_path)
    lay = dyn_smem_layout(_entry(f).body)
    # 3 bytes at 0; the float32 buffer after them at the next 16-byte boundary; 16 + 256 bytes
    assert sorted(lay.offsets.values()) == [0, 16]
    assert lay.total == 272 and lay.unsized is None


def test_codegen_places_buffers_where_the_layout_says(tmp_path):
    pytest.importorskip("cuda.bindings.nvrtc")
    k = tirx.compile(_load(tmp_path), target="cuda")
    assert "(tirx_dyn_smem + 0)" in k.source and "(tirx_dyn_smem + 16)" in k.source


def test_launch_without_size_asks_for_what_the_allocations_take(tmp_path):
    pytest.importorskip("cuda.bindings.nvrtc")
    k = tirx.compile(_load(tmp_path), target="cuda")
    assert k.smem_code == "272"
    # a size the launch gives is the size launched
    k2 = tirx.compile(
        _load(tmp_path, smem=", dynamic_smem_bytes=n", smem_param=", n: T.int32"), target="cuda"
    )
    assert k2.smem_code != "272" and "272" not in k2.smem_code


def test_interpreter_runs_the_inferred_window(tmp_path):
    A = np.arange(256, dtype=np.float32)
    tirx.compile(_load(tmp_path), target="interp")(A)
    ref = np.arange(256, dtype=np.float32).reshape(4, 64)[:, ::-1] + (np.arange(64) % 3)
    np.testing.assert_array_equal(A, ref.reshape(-1).astype(np.float32))


@pytest.mark.parametrize("n", [0, 3, 16, 100, 271])
def test_interpreter_finds_a_window_too_small(tmp_path, n):
    f = _load(tmp_path, smem=", dynamic_smem_bytes=n", smem_param=", n: T.int32")
    A = np.arange(256, dtype=np.float32)
    with pytest.raises(OutOfBoundsError, match=f"past the {n} bytes of dynamic shared memory"):
        tirx.compile(f, target="interp")(A, n)


def test_interpreter_accepts_a_window_large_enough(tmp_path):
    f = _load(tmp_path, smem=", dynamic_smem_bytes=n", smem_param=", n: T.int32")
    for n in (272, 4096):
        A = np.arange(256, dtype=np.float32)
        tirx.compile(f, target="interp")(A, n)
        assert A[0] == 63.0


def test_allocation_after_an_unsized_one_is_an_error():
    from tirx.ir import TensorType, Var
    from tirx.ir.types import float32
    from tirx.surface.builder import IRBuilder, launch_args

    b = IRBuilder("dyn_smem_test.py")
    with b, b.function("f"):
        n = Var("n")
        A = b.param("A", TensorType((n,), float32))
        with b.device_entry(*launch_args(1, 32)):
            b.alloc("u", TensorType((n,), float32, scope="shared.dyn"))
            b.alloc("v", TensorType((4,), float32, scope="shared.dyn"))
            b.store(A, (0,), A[0])
    f = b.get()
    with pytest.raises(ValueError, match="follows u, whose size is not constant"):
        dyn_smem_layout(_entry(f).body)


ALIGNED = """
from tirx.script import tirx as T


@T.function
def aligned(A: T.Tensor((64,), T.float16)):
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32)):
        bar = T.alloc_shared((2,), "uint64", scope="shared.dyn", align=8)
        box = T.alloc_shared((2048,), "float16", scope="shared.dyn", align=1024)
        box[T.cuda.thread_idx("x")] = A[T.cuda.thread_idx("x")]
        if T.cuda.thread_idx("x") < 2:
            bar[T.cuda.thread_idx("x")] = T.uint64(1)
        T.cuda.cta_sync()
        A[T.cuda.thread_idx("x") + 32] = box[31 - T.cuda.thread_idx("x")]
"""


def test_a_tensor_asking_for_more_alignment_gets_it_in_the_window(tmp_path):
    """A TMA box with a 128-byte swizzle needs a 1024-byte aligned address (held-out round 15:
    a warp-specialized GEMM's pool in ``shared.dyn`` faulted with a misaligned address): the
    tensor's offset honours its ``align`` and the window is declared with the largest one, as
    TIRx declares it."""
    p = tmp_path / "aligned_case.py"
    p.write_text(ALIGNED)
    ns: dict = {}
    exec(compile(p.read_text(), str(p), "exec"), ns)
    f = ns["aligned"]
    lay = dyn_smem_layout(_entry(f).body)
    assert sorted(lay.offsets.values()) == [0, 1024] and lay.align == 1024
    assert lay.total == 1024 + 4096
    src = tirx.codegen.generate(f).text
    assert "extern __shared__ __align__(1024) unsigned char tirx_dyn_smem[];" in src
    assert "(tirx_dyn_smem + 1024)" in src
    a = np.arange(64, dtype=np.float16)
    tirx.compile(f, target="interp")(a)
    assert a[32:].tolist() == list(np.arange(32, dtype=np.float16)[::-1])
