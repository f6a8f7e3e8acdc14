"""On a GPU, an independent implementation of each op's meaning: TIRx's own CUDA for
``O[i] = T.<op>(X[i], ...)`` (recorded by tools/tirx_oracle/golden_cuda.py, compiled here with
NVRTC) against tirx's kernel built from TIRx's printed text of the same kernel, on the same
edge inputs. Floats may differ by the ulps CUDA documents for the function
(tirx.testing.opcheck.gpu_tolerance); everything else must be bit-identical."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from gpu_util import require_gpu

torch = require_gpu()

from tirx_golden_cuda_util import ARCH, BUFFERS, CASES, N, cccl_include, inputs  # noqa: E402

import tirx  # noqa: E402
from tirx.runtime import driver as drv  # noqa: E402
from tirx.runtime.nvrtc import compile_source  # noqa: E402
from tirx.testing.opcheck import (  # noqa: E402
    EXACT_OPTS,
    compare,
    fmt,
    from_torch,
    gpu_tolerance,
    np_dtype,
    to_torch,
)

pytestmark = pytest.mark.gpu

#: ops whose TIRx CUDA differs from tirx on purpose, with why
KNOWN: dict[str, str] = {"cuda.clock64": "a cycle counter: two kernels never read the same values"}


def _tirx_cuda(case: dict, dev: dict, out: object) -> None:
    inc = cccl_include()
    if inc is None:
        pytest.skip("libcu++ headers (cuda/std/cstdint, which TIRx's CUDA includes) not found")
    res = compile_source(
        case["cuda"], drv.device_arch(0), name="tirx_golden.cu", options=(*EXACT_OPTS, f"-I{inc}")
    )
    _mod, fn = drv.load_function(res.cubin, "k_kernel", 0)
    ptrs = tuple((out if name == "O" else dev[name]).data_ptr() for name in case["cuda_params"])
    args = (ptrs, tuple(ctypes.c_void_p for _ in ptrs))
    drv.check(drv.driver().cuLaunchKernel(fn, N // 128, 1, 1, 128, 1, 1, 0, 0, args, 0), "cuLaunchKernel")
    torch.cuda.synchronize()


@pytest.mark.parametrize("op", list(CASES))
def test_tirx_cuda_and_tirx_agree(op, monkeypatch, tmp_path):
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path))
    from test_ops_generated import SKIP, skipped

    if skipped(op, "differential"):  # edge inputs are invalid for it (a mask without the lane)
        pytest.skip(SKIP[op][1])
    if op in ARCH and int("".join(filter(str.isdigit, drv.device_arch(0)))) < int(
        "".join(filter(str.isdigit, ARCH[op]))
    ):
        pytest.skip(
            f"TIRx's CUDA for T.{op} needs {ARCH[op]} (tirx's own kernel: tests/test_cuda_parity_gpu.py)"
        )
    case = CASES[op]
    ins = inputs(case)
    out_dt = case["out"]
    dev = {b: to_torch(torch, ins[b], BUFFERS[b]) for b in case["bufs"]}
    k = tirx.compile(tirx.loads(case["text"]), target="cuda", options=EXACT_OPTS, cache=False)
    o_ours = to_torch(torch, np.zeros(N, np_dtype(out_dt)), out_dt)
    k(*(dev[b] for b in case["bufs"]), o_ours)
    torch.cuda.synchronize()
    o_theirs = to_torch(torch, np.zeros(N, np_dtype(out_dt)), out_dt)
    _tirx_cuda(case, dev, o_theirs)
    ours, theirs = from_torch(torch, o_ours, out_dt), from_torch(torch, o_theirs, out_dt)
    bad = compare(out_dt, theirs, ours, gpu_tolerance(op, out_dt))
    if op in KNOWN:
        pytest.xfail(KNOWN[op])
    rows = [
        f"lane {k_}: inputs {[fmt(ins[b], k_, BUFFERS[b]) for b in case['bufs']]} TIRx {fmt(theirs, k_, out_dt)} "
        f"tirx {fmt(ours, k_, out_dt)} ({d} ulps)"
        for k_, d in bad[:10]
    ]
    assert not bad, f"{op}: {len(bad)} lanes differ\n" + "\n".join(rows)
