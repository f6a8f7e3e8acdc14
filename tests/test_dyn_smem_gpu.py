"""On the GPU: a kernel whose launch gives no dynamic_smem_bytes runs with the window its
shared.dyn allocations take (tirx.ir.dyn_smem), giving the interpreter's result; an extern
function called with a vector type runs lane by lane."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_util import require_gpu
from test_dyn_smem import _load

torch = require_gpu()

import tirx  # noqa: E402

pytestmark = pytest.mark.gpu


def test_inferred_window_on_the_gpu(tmp_path):
    f = _load(tmp_path)
    A = np.random.default_rng(0).standard_normal(256).astype(np.float32)
    want = A.copy()
    tirx.compile(f, target="interp")(want)
    t = torch.from_numpy(A).cuda()
    tirx.compile(f, target="cuda")(t)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(t.cpu().numpy(), want)


def test_extern_of_a_vector_type_runs_per_lane(tmp_path):
    p = tmp_path / "extern_lanes.py"
    p.write_text(
        "from tirx.script import tirx as T\n\n\n"
        "@T.function\n"
        "def f(A: T.Tensor((256,), T.float32), B: T.Tensor((256,), T.float32)):\n"
        "    with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64)):\n"
        "        i = T.cuda.thread_idx('x')\n"
        "        v = T.Ramp(i * 4, 1, 4)\n"
        "        B[v] = T.call_pure_extern('fmaxf', A[v], T.float32(0.25), ty=T.float32x4)\n"
    )
    ns: dict = {}
    exec(compile(p.read_text(), str(p), "exec"), ns)
    a = torch.randn(64 * 4, device="cuda")
    b = torch.zeros(64 * 4, device="cuda")
    k = tirx.compile(ns["f"], target="cuda")
    assert "_r.v[_l] = fmaxf(" in k.source
    k(a, b)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(b.cpu().numpy(), np.maximum(a.cpu().numpy(), 0.25))
