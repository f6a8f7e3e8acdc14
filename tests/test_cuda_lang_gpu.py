"""tirx.backend.cuda.lang kernels on a GPU: the golden helper kernels (their own tirx build)
against numpy, the schedulers against the interpreter, and a pool past 48 KiB (the launch opts
into the larger dynamic shared memory)."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_util import require_gpu

torch = require_gpu()

from test_frontend_util import load_module  # noqa: E402
from test_tirx_golden_frontend import build_case  # noqa: E402

import tirx  # noqa: E402

pytestmark = pytest.mark.gpu

if torch.cuda.get_device_capability() < (9, 0):  # pragma: no cover
    pytest.skip("the helpers' mbarrier and bulk-copy forms need sm_90", allow_module_level=True)

RNG = np.random.default_rng(0)


def _run(f, *arrays):
    # exact float arithmetic, as numpy's (no a * b + c contracted to one fma)
    k = tirx.compile(f, target="cuda", options=("--fmad=false",))
    ts = [torch.from_numpy(a).cuda() for a in arrays]
    k(*ts)
    torch.cuda.synchronize()
    return [t.cpu().numpy() for t in ts]


def test_pool_ring_of_bulk_copies():
    X = RNG.standard_normal((6, 64)).astype("float32")
    _, Y = _run(build_case("lang_pool_ring"), X, np.zeros(64, "float32"))
    want = np.array([max(X[r, (t + r) % 64] for r in range(6)) for t in range(64)], "float32")
    np.testing.assert_array_equal(Y, want)


def test_pipeline_in_a_jit_kernel():
    X = RNG.standard_normal((5, 32)).astype("float32")
    _, Y = _run(build_case("lang_pipeline_jit"), X, np.zeros(32, "float32"))
    acc = np.zeros(32, "float32")
    for kk in range(5):
        acc = acc + X[kk] * np.float32(kk + 1)
    np.testing.assert_array_equal(Y, acc)


def test_mbarriers_across_a_cluster():
    (C,) = _run(build_case("lang_mbarrier_cluster"), np.zeros((2, 64), "int32"))
    want = np.array([[r * 1000 + t * 10 + 1 for t in range(64)] for r in range(2)], "int32")
    np.testing.assert_array_equal(C, want)


def test_pool_offsets_and_alignments():
    A = RNG.standard_normal(32).astype("float16")
    _, B, _ = _run(build_case("lang_pool_offsets"), A, np.zeros(32, "float32"), np.zeros(32, "int32"))
    words = np.zeros((2, 16), "float32")
    for tx in range(32):
        words[tx // 16, tx % 16] = np.float32(A[31 - tx]) * 2
    np.testing.assert_array_equal(B, np.array([words[tx % 2, tx // 2] for tx in range(32)], "float32"))


def test_tile_schedulers_on_the_gpu_and_the_interpreter():
    f = build_case("lang_tile_sched")
    a = [np.full((4, 16, 2), -1, "int32"), np.full((3, 30, 3), -1, "int32")]
    ia = [x.copy() for x in a]
    tirx.compile(f, target="interp")(*ia)
    t1, t2 = _run(f, *a)
    np.testing.assert_array_equal(t1, ia[0])
    np.testing.assert_array_equal(t2, ia[1])


BIG = """from tirx.script import tirx as T
from tirx.backend.cuda.lang import SMEMPool


@T.function
def f(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    tx = T.cuda.thread_idx("x")
    pool = SMEMPool()
    lo = pool.alloc((128,), "float32")
    pool.move_base_to(90000)
    hi = pool.alloc((128,), "float32", align=16)
    pool.commit()
    lo[tx] = A[tx]
    hi[tx] = A[127 - tx] * T.float32(3)
    T.cuda.cta_sync()
    B[tx] = lo[tx] + hi[tx]
"""


def test_a_pool_past_48_kib_opts_into_the_larger_window():
    f = load_module(BIG, "lang_big_pool").f
    A = RNG.standard_normal(128).astype("float32")
    _, B = _run(f, A, np.zeros(128, "float32"))
    np.testing.assert_array_equal(B, A + A[::-1] * np.float32(3))
