"""TIRx's own kernels for the ops both systems have (tests/data/tirx_golden/cuda.json): the
text TIRx printed loads in tirx and prints back the same, and the CUDA TIRx generated compiles
with tirx's NVRTC setup (no GPU). tests/test_tirx_golden_cuda_gpu.py runs both on a GPU."""

from __future__ import annotations

import pytest
from tirx_golden_cuda_util import ARCH, CASES, cccl_include

import tirx


@pytest.mark.parametrize("op", list(CASES))
def test_tirx_text_of_the_kernel_loads_and_prints_back(op):
    text = CASES[op]["text"]
    f = tirx.loads(text)
    ours = tirx.dumps(f)
    assert text.strip().splitlines()[-1].strip() in ours  # the statement with the op
    assert tirx.structural_equal(tirx.loads(ours), f)


def test_tirx_cuda_compiles_with_nvrtc():
    pytest.importorskip("cuda.bindings.nvrtc")
    from tirx.runtime.nvrtc import compile_source

    inc = cccl_include()
    if inc is None:
        pytest.skip("libcu++ headers (cuda/std/cstdint, which TIRx's CUDA includes) not found")
    for op, case in CASES.items():
        res = compile_source(
            case["cuda"], ARCH.get(op, "sm_90a"), name=f"tirx_{op}.cu", options=(f"-I{inc}",)
        )
        assert res.cubin, op


def test_golden_covers_the_shared_ops():
    assert len(CASES) >= 75
