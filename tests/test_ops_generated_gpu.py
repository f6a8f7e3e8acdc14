"""Generated per-op tests on a GPU (issue #13): every differential kernel of
``tests/test_ops_generated.py`` (each op with a CUDA lowering and interpreter semantics, on
edge inputs, one kernel per dtype) runs on the GPU and is compared with the interpreter:
every output and every array an op writes through a pointer argument, bit for bit (NaN
equals NaN, any payload) or within the op's documented ulp tolerance
(``tirx.testing.opcheck.gpu_tolerance``: CUDA's documented error plus the interpreter's).

Marked ``gpu`` and skipped without a device (as tests/test_math_gpu.py): run on a GPU host
with ``python -m pytest tests/test_ops_generated_gpu.py``; a failure lists every mismatch
(op[dtype], array, lane, inputs, interpreter, GPU, ulps).
"""

from __future__ import annotations

import pytest
from test_ops_generated import (
    DTYPES,
    build_differential,
    differential_cases,
    kernel_arrays,
    mismatches,
    report,
    run_interp,
    skipped,
)

import tirx
from tirx.testing.opcheck import EXACT_OPTS, from_torch, gpu, gpu_tolerance, to_torch


@pytest.mark.gpu
@pytest.mark.parametrize("dt", (*DTYPES, None), ids=lambda dt: dt or "plain")
def test_differential_gpu_vs_interp(dt):
    torch, why = gpu()
    if torch is None:
        pytest.skip(why)
    cases = [c for c in differential_cases()[dt] if not skipped(c.op.name, "gpu")]
    f = build_differential(cases, dt, f"ops_gpu_{dt or 'plain'}")
    want = run_interp(f, dt)
    arrays = kernel_arrays(f, dt)
    dtypes = {b.name: str(b.dtype) for _, b in f.buffer_map}
    k = tirx.compile(f, target="cuda", options=EXACT_OPTS, cache=False)
    dev = {nm: to_torch(torch, a, dtypes[nm]) for nm, a in arrays.items()}
    k(*dev.values())
    torch.cuda.synchronize()
    got = {nm: from_torch(torch, t, dtypes[nm]) for nm, t in dev.items()}
    rows = mismatches(
        cases, f, got, lambda c, nm, odt: want[nm], lambda c, odt: gpu_tolerance(c.op.name, odt), dt
    )
    assert not rows, report(rows, f"interpreter (expected) vs GPU (got), {dt}")
