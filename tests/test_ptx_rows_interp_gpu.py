"""On a GPU: every kernel of tests/test_ptx_rows_interp.py (the PTX rows with CPU semantics)
runs through CUDA and through the interpreter on the same inputs, and the outputs agree
bit for bit (two input seeds each). Skipped cleanly without a CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest
from gpu_util import require_gpu

torch = require_gpu()

from test_ptx_rows_interp import CASES, SM100, N, inputs, kernel  # noqa: E402

import tirx  # noqa: E402

pytestmark = pytest.mark.gpu
EXACT = ("--fmad=false",)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(f"uint{a.itemsize * 8}")


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("seed", [0, 1])
def test_row_agrees_bit_exactly_with_cuda(case, seed):
    if case[0] in SM100 and torch.cuda.get_device_capability()[0] < 10:
        pytest.skip(f"{case[0]} needs sm_100")
    f = kernel(case[1], *case[2:6])
    x, y, z = inputs(case, seed)
    o_cpu = np.zeros(N, dtype=case[5])
    tirx.compile(f, target="interp")(x.copy(), y.copy(), z.copy(), o_cpu)
    dev = [torch.from_numpy(a.copy()).cuda() for a in (x, y, z, np.zeros(N, dtype=case[5]))]
    tirx.compile(f, target="cuda", options=EXACT)(*dev)
    torch.cuda.synchronize()
    o_gpu = dev[3].cpu().numpy()
    bad = np.flatnonzero(_bits(o_cpu) != _bits(o_gpu))
    if bad.size:
        k = int(bad[0])
        raise AssertionError(
            f"{case[0]}: {bad.size} lane(s) differ; lane {k}: inputs {x[k]!r}, {y[k]!r}, {z[k]!r}: "
            f"interpreter {o_cpu[k]!r} ({int(_bits(o_cpu)[k]):#x}), cuda {o_gpu[k]!r} ({int(_bits(o_gpu)[k]):#x})"
        )
