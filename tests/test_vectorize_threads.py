"""VectorizeThreads: same results as the kernel as written (interpreter, bit for bit, on
random elementwise kernels), 16-byte accesses in the PTX, clear refusals elsewhere."""

from __future__ import annotations

import os

import numpy as np
import pytest
from examples_dir import load_example
from hypothesis import given, settings

import tirx
from tirx.ir import Cast, Let, TensorType, Var
from tirx.ir.op import call
from tirx.ir.types import float16, float32, int32
from tirx.passes import VectorizeThreads
from tirx.passes.vectorize_threads import explain
from tirx.surface.builder import IRBuilder, launch_args
from tirx.testing.elementwise import elementwise_kernels

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _example(stem: str):
    return load_example(f"kernels/{stem}.py")


@settings(max_examples=60)
@given(elementwise_kernels())
def test_rewrite_computes_what_the_kernel_computes(r):
    g = VectorizeThreads()(r.func)
    if explain(r.func) is None:
        assert g is not r.func
        text = tirx.dumps(g)
        assert "T.is_aligned" in text and "T.Ramp" in text
        # the rewritten kernel round-trips through the text form like any other IR
        tirx.assert_structural_equal(tirx.loads(text), g)
    else:
        assert g is r.func
    r.assert_same(r.run(), r.run(g))


def _seed(dtype=float16, block=128, index="int32", value=2.0):
    ex = _example("elementwise_add")
    from tirx.script import tirx as T

    return ex.make_add(T.float16 if dtype == float16 else T.float32, value, block=block, index_dtype=index)


@pytest.mark.parametrize("index", ["int32", "int64"])
@pytest.mark.parametrize("dtype", [float16, float32])
def test_seed_kernel_is_rewritten_and_matches_on_every_length(dtype, index):
    f = _seed(dtype, index=index)
    assert explain(f) is None
    g = VectorizeThreads()(f)
    npdt = np.float16 if dtype == float16 else np.float32
    k0, k1 = tirx.compile(f, target="interp"), tirx.compile(g, target="interp")
    for n in (1, 7, 8, 9, 127, 128, 129, 1023, 1024, 1025, 4099):
        a = np.random.default_rng(n).standard_normal(n + 1).astype(npdt)
        for lo in (0, 1):  # aligned, and a view one element in (the scalar path on a GPU)
            outs = []
            for k in (k0, k1):
                b = np.full(n + 1, np.nan, npdt)
                k(a[lo : lo + n], b[lo : lo + n])
                outs.append(b)
            assert np.array_equal(outs[1], outs[0], equal_nan=True)
            assert np.array_equal(outs[0][lo : lo + n], (a[lo : lo + n] + npdt(2)).astype(npdt))


def test_seed_kernel_ptx_uses_16_byte_accesses():
    pytest.importorskip("cuda.bindings.nvrtc")
    f = _seed(float16, index="int64", block=256)
    k = tirx.compile(f, target="cuda -arch=sm_90a", cache=False)
    assert k.module.log == ""
    assert "ld.global.nc.v4" in k.ptx and "st.global.v4" in k.ptx
    assert "const half* __restrict__ A" in k.source  # the input stays read-only
    plain = tirx.compile(f, target="cuda -arch=sm_90a", cache=False, vectorize=False)
    assert ".v4" not in plain.ptx
    # the caller owes no alignment: the kernel checks it and falls back to scalar lanes
    assert all(p.align == 0 for p in k.info.params if p.kind == "buffer")


@pytest.mark.parametrize(
    ("stem", "name", "why"),
    [
        ("reduce_smem", None, "AllocBuffer"),
        ("warp_reduce", None, "T.cuda."),
        ("matmul_tiled", None, "block is not"),
        ("elementwise_add", "add_vec_f16", "else"),
    ],
)
def test_kernels_outside_the_shape_are_left_alone_with_a_reason(stem, name, why):
    ex = _example(stem)
    kernels = ex.KERNELS if hasattr(ex, "KERNELS") else None
    f = kernels[name]() if name else next(iter(kernels.values()))()
    reason = explain(f)
    assert reason is not None and why in reason, reason
    assert VectorizeThreads()(f) is f


def _kernel(body, block=128, dtype=float32):
    b = IRBuilder("vt_test.py")
    with b, b.function("k"):
        n = Var("n")
        A = b.param("A", TensorType((n,), dtype))
        B = b.param("B", TensorType((n,), dtype))
        with b.device_entry(*launch_args((n + block - 1) // block, block)):
            i = b.bind("i", call("cuda.block_idx", "x") * block + call("cuda.thread_idx", "x"))
            body(b, A, B, i, n)
    return b.get()


def _let_i(i):
    v = Var("v")
    return Let(v, i, v)  # a lane-dependent Let var would look lane-invariant to a naive walk


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (lambda b, A, B, i, n: b.store(B, (i,), A[i * 2]), "load of A"),
        (lambda b, A, B, i, n: b.store(B, (i // 2,), A[i]), "store to B"),
        (lambda b, A, B, i, n: (b.store(B, (i,), A[i]), b.store(A, (i,), B[i])), "after a store"),
        (lambda b, A, B, i, n: b.store(B, (call("cuda.thread_idx", "y"),), A[i]), "threadIdx.y"),
        (lambda b, A, B, i, n: b.store(B, (Cast(int32, A[i]),), A[i]), "store to B"),
        (lambda b, A, B, i, n: b.store(B, (_let_i(i),), A[i]), "Let"),
    ],
)
def test_refusals_name_the_reason(body, why):
    f = _kernel(body)
    reason = explain(f)
    assert reason is not None and why in reason, reason
    assert VectorizeThreads()(f) is f


def test_block_size_must_hold_whole_lanes():
    f = _kernel(lambda b, A, B, i, n: b.store(B, (i,), A[i]), block=66)
    assert "multiple of 4 lanes" in explain(f)


@pytest.mark.parametrize("block", [2048, 2**31, 0])
def test_a_block_that_cannot_launch_is_left_alone(block):
    """Mutate-fuzz finds: a 2**31-thread block crashed the pass (an int32 constant overflowed),
    a 0-thread block divided by zero (seed 763225013); no CUDA block has more than 1024 threads
    or none, so the pass leaves the kernel to the launch."""
    f = tirx.loads(
        "@T.function\n"
        "def k(A: T.Tensor((64,), T.float32)):\n"
        f"    with T.device_entry(1, 1, 1, {block}, 1, 1):\n"
        '        i: T.let[T.int32] = T.cuda.thread_idx("x")\n'
        "        A[i] = A[i] * T.float32(2.0)\n"
    )
    assert "1024 threads" in explain(f)
    assert VectorizeThreads()(f) is f
