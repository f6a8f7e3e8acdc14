"""On a GPU: the interpreter and the CUDA target agree on every compat kernel and on random
runnable kernels (bit-exact for integers; floats bit-exact with ``--fmad=false`` except
transcendental functions, which match within a few ulp).

Skipped cleanly without a CUDA driver/device (``cuInit`` is probed before torch is touched).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from examples_dir import load_example
from gpu_util import require_gpu

torch = require_gpu()

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_ptxas_neg_minmax import CASES as NEG_MINMAX_CASES  # noqa: E402
from test_ptxas_neg_minmax import kernel as neg_minmax_kernel  # noqa: E402

import tirx  # noqa: E402
import tirx.interp as ti  # noqa: E402
from tirx.testing.compat_kernels import KERNELS  # noqa: E402
from tirx.testing.elementwise import elementwise_kernels  # noqa: E402
from tirx.testing.gpu_compare import EXACT, cuda_check, run_cuda, run_interp, same  # noqa: E402
from tirx.testing.runnable import runnable_kernels  # noqa: E402

pytestmark = pytest.mark.gpu
# random examples per property; a longer campaign: TIRX_GPU_EXAMPLES=1000 pytest -m gpu ...
# (or `tirx fuzz --cuda --time SECONDS`, the same check as a campaign)
EXAMPLES = int(os.environ.get("TIRX_GPU_EXAMPLES", "60"))


rng = np.random.default_rng(7)
f32 = np.float32


def _inputs(name):
    r = rng
    return {
        "ew_add_f16_dyn": lambda: [r.standard_normal(5000).astype(np.float16), np.zeros(5000, np.float16)],
        "let_bind": lambda: [r.integers(-(2**31), 2**31 - 1, 128).astype(np.int32), np.zeros(128, np.int64)],
        "matmul_tiled_smem": lambda: (
            [r.standard_normal((512, 512)).astype(f32) for _ in range(2)] + [np.zeros((512, 512), f32)]
        ),
        "ptr_reinterpret": lambda: [r.standard_normal(256).astype(f32), 200, np.full(256, -1, np.int32)],
        "break_continue": lambda: [
            np.where(r.random((256, 64)) < 0.05, 42, r.integers(-5, 50, (256, 64))).astype(np.int32),
            np.zeros(256, np.int32),
            np.zeros(256, np.int32),
        ],
        "dyn_multi_shape": lambda: [
            r.standard_normal((3, 7, 64)).astype(f32),
            np.zeros((3, 64), f32),
            np.ones(40, f32),
        ],
        "reduce_smem_tree": lambda: [r.standard_normal(65536).astype(f32), np.zeros(256, f32)],
        "mutable_scalars": lambda: [(r.standard_normal(256) * 4).astype(f32), np.zeros(256, f32)],
        "inline_helpers": lambda: [r.standard_normal(2048).astype(f32), np.zeros(2048, f32)],
        "jit_specialize": lambda: [r.standard_normal(1000).astype(f32) for _ in range(2)],
    }[name]()


@pytest.mark.parametrize("name", [n for n in KERNELS if n not in ("module_multi_func", "loops_kinds_cpu")])
def test_compat_kernel_cuda_matches_interp(name):
    f = KERNELS[name]()
    args = _inputs(name)
    want = run_interp(ti.compile(f), args)
    got = run_cuda(tirx.compile(f, target="cuda", options=EXACT), args)
    same(want, got, ulp_ok=name in ("inline_helpers", "matmul_tiled_smem"))


def test_module_cuda_matches_interp():
    m = KERNELS["module_multi_func"]()
    A, B = rng.standard_normal(1024).astype(f32), rng.standard_normal(1024).astype(f32)
    mi, mc = ti.compile(m), tirx.compile(m, target="cuda", options=EXACT)
    for name, args in (("k_relu", [A, np.zeros(1024, f32)]), ("k_lerp", [A, B, np.zeros(1024, f32)])):
        same(run_interp(mi[name], args), run_cuda(mc[name], args))


# ptxas of CUDA 13.0 dropped an int32 negation feeding a three-input min / max it formed
# (``min(min(-s, i), 0)`` ran as ``min(s, i, 0)``; found by the random tests below on
# 2026-11-29); codegen now writes such negations as ``tirx_neg`` (tests/test_ptxas_neg_minmax.py
# checks the SASS without a GPU). Here the values, against the interpreter.
INT32_EDGES = (0, 1, -1, 7, -7, 2**31 - 1, -(2**31), 2**30, -(2**30) - 3)


def _neg_minmax_run(expr, s, t, o):
    f = neg_minmax_kernel(expr)
    args = [s, t, np.asarray(o, np.int32)]
    want = run_interp(ti.compile(f), args)
    got = run_cuda(tirx.compile(f, target="cuda", cache=False), args)
    same(want, got)


@pytest.mark.parametrize("expr", NEG_MINMAX_CASES)
def test_negation_into_int_minmax_cuda_matches_interp(expr):
    for s, t in ((1, 0), (5, -3), (-4, 9), (2**31 - 1, -(2**31)), (-(2**31), 3)):
        _neg_minmax_run(expr, s, t, [2, -6, 0, 0])


def _int_trees():
    # mostly values ptxas cannot fold; (v - v) and (s ^ s): zeros only NVVM sees (issue #29)
    leaves = st.sampled_from(["s", "t", "v", "i", "s", "v", "0", "-5", "(v - v)", "(s ^ s)"])

    def grow(sub):
        minmax = st.tuples(st.sampled_from(["T.min", "T.max"]), sub, sub)
        return st.one_of(  # min / max and negations drawn most (the shape ptxas 13.0 got wrong)
            minmax.map(lambda x: f"{x[0]}({x[1]}, {x[2]})"),
            minmax.map(lambda x: f"{x[0]}(-1 * ({x[1]}), {x[2]})"),
            minmax.map(lambda x: f"{x[0]}({x[0]}(0 - ({x[1]}), {x[2]}), i)"),
            sub.map(lambda x: f"0 - ({x})"),
            st.tuples(sub, st.sampled_from(["+", "-"]), sub).map(lambda x: f"({x[0]} {x[1]} {x[2]})"),
        )

    return st.recursive(leaves, grow, max_leaves=8)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    _int_trees(),
    st.sampled_from(INT32_EDGES) | st.integers(-(2**31), 2**31 - 1),
    st.sampled_from(INT32_EDGES) | st.integers(-(2**31), 2**31 - 1),
    st.sampled_from(INT32_EDGES) | st.integers(-(2**31), 2**31 - 1),
)
def test_random_int_minmax_negation_trees_cuda_matches_interp(expr, s, t, v):
    """Nested int32 min / max / negation / + / - (wrapping) on the GPU and the interpreter."""
    _neg_minmax_run(expr, s, t, [0, v, 0, 0])


FUZZ_1654884400 = """# from tirx.script import tirx as T

@T.function
def ew(A: T.Tensor((12,), T.int32), B: T.Tensor((12,), T.float16), s: T.int32):
    with T.device_entry(1, 1, 1, 32, 1, 1):
        i: T.let[T.int32] = T.cuda.thread_idx("x")
        if i + 8 < 12:
            v: T.let[T.int32] = T.max(A[i] - A[i] - A[i], A[i])
            B[i] = T.Cast("float16", T.max(v, s))
"""


def test_fuzz_1654884400_hidden_zero_negation_cuda_matches_interp():
    """`tirx fuzz --cuda --seed 1654884400`: (a - a) - a is a negation to NVVM; ptxas 13.0
    dropped it inside max(max(., a), s) and gave -3 where the IR means 47 (A[3] = -47)."""
    f = tirx.loads(FUZZ_1654884400)
    a = np.array([70, 27, 2, -47, -39, -92, -85, -97, -65, 62, 29, 82], np.int32)
    args = [a, np.zeros(12, np.float16), -3]
    want = run_interp(ti.compile(f), args)
    assert want[1][3] == 47
    same(
        want,
        run_cuda(
            tirx.compile(f, target="cuda", options=EXACT, wrap_int=True, vectorize=False, cache=False), args
        ),
    )


# What these found (H200) and is fixed: signed int32 arithmetic emitted as plain C++ `+ - *`,
# whose overflow is undefined (nvcc folded `INT_MIN + INT_MIN` to something other than the
# IR's wrapped 0; now wrapping wherever the bounds analysis cannot rule overflow out); an int8
# `FloorMod` NVRTC rejected as ambiguous; float -> 8/16-bit casts (now saturating); ptxas
# 13.0's dropped negation (above). The interpreter's results are the IR's meaning.
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(runnable_kernels(extra_types=False))
def test_runnable_kernels_cuda_matches_interp(r):
    cuda_check(r)  # host-only kernels are passed over; signed overflow wraps as in the IR


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(elementwise_kernels())
def test_elementwise_kernels_cuda_matches_interp(r):
    """tirx.compile's VectorizeThreads (16-byte lanes, scalar fallback for tails and offsets
    that break alignment) against the interpreter running the kernel as written."""
    cuda_check(r)


def test_cpu_torch_tensors_on_interp():
    f = KERNELS["ew_add_f16_dyn"]()
    a = torch.arange(10, dtype=torch.float16)
    b = torch.empty_like(a)
    ti.compile(f)(a, b)
    assert b.tolist() == [float(x) for x in range(2, 12)]
    # CUDA tensors are copied to the host and back (TIRX_INTERPRET=1 runs GPU code unchanged)
    ca, cb = a.cuda(), torch.zeros_like(b).cuda()
    ti.compile(f)(ca, B=cb)
    assert cb.cpu().tolist() == [float(x) for x in range(2, 12)] and cb.is_cuda


def _example(path):
    return load_example(path)


EXAMPLE_CASES = {
    "add_f16": ("kernels/elementwise_add.py", lambda: [rng.standard_normal(4099).astype(np.float16), np.zeros(4099, np.float16)], False),
    "add_f32": ("kernels/elementwise_add.py", lambda: [rng.standard_normal(4099).astype(f32), np.zeros(4099, f32)], False),
    "add_f16_i64": ("kernels/elementwise_add.py", lambda: [rng.standard_normal(4099).astype(np.float16), np.zeros(4099, np.float16)], False),
    "add_vec_f16": ("kernels/elementwise_add.py", lambda: [rng.standard_normal(4099).astype(np.float16), np.zeros(4099, np.float16)], False),
    "matmul_256": ("kernels/matmul_tiled.py", lambda: [rng.standard_normal((256, 256)).astype(f32) for _ in range(2)] + [np.zeros((256, 256), f32)], False),
    "block_sum": ("kernels/reduce_smem.py", lambda: [rng.standard_normal(1000).astype(f32), np.zeros(4, f32)], False),
    "softmax_1024": ("kernels/softmax.py", lambda: [rng.standard_normal((3, 1024)).astype(f32), np.zeros((3, 1024), f32)], True),
    "row_reduce": ("kernels/warp_reduce.py", lambda: [rng.standard_normal((10, 256)).astype(f32), np.zeros(10, f32), np.zeros(10, f32)], True),
    "dsmem_exchange": ("kernels/dsmem_cluster.py", lambda: [np.zeros(1024, np.uint64)], False),
}  # fmt: skip


@pytest.mark.parametrize("name", list(EXAMPLE_CASES))
def test_example_kernel_cuda_matches_interp(name):
    path, inputs, ulp_ok = EXAMPLE_CASES[name]
    f = _example(path).KERNELS[name]()
    args = inputs()
    want = run_interp(ti.compile(f), args)
    got = run_cuda(tirx.compile(f, target="cuda", options=EXACT), args)
    same(want, got, ulp_ok=ulp_ok)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(runnable_kernels(extra_types=True))
def test_runnable_kernels_all_types_cuda_matches_interp(r):
    cuda_check(r)
