"""Shared by the TIRx-CUDA golden tests: the recorded kernels (tests/data/tirx_golden/cuda.json,
made by tools/tirx_oracle/golden_cuda.py) and their edge inputs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

GOLDEN = json.loads((Path(__file__).parent / "data" / "tirx_golden" / "cuda.json").read_text())
N = GOLDEN["n"]
BUFFERS = GOLDEN["buffers"]
CASES = {k: v for k, v in sorted(GOLDEN["ops"].items()) if "cuda" in v}
#: ops whose TIRx CUDA needs a newer GPU than sm_90a (compiled for this arch; not run on an H200)
ARCH = {"cuda.fadd2_rn": "sm_100a", "cuda.fmul2_rn": "sm_100a"}  # TIRx calls __fadd2_rn/__fmul2_rn


def inputs(case: dict) -> dict:
    """Edge values for each input buffer (tests/test_ops_generated.py's lists), as stored."""
    from test_ops_generated import _float_lanes, _int_lanes

    from tirx.testing.opcheck import FLOATS

    out = {}
    for b in case["bufs"]:
        dt = BUFFERS[b]
        lanes = _float_lanes(dt) if dt in FLOATS else _int_lanes(dt)
        out[b] = np.resize(lanes[0], N)
    return out


def cccl_include() -> str | None:
    """A directory holding libcu++'s ``cuda/std/cstdint`` (TIRx's CUDA includes it under
    NVRTC): next to tirx's NVRTC include dirs, a CUDA toolkit, or a Python package."""
    import glob
    import os
    import site
    import sys

    from tirx.runtime.nvrtc import include_dirs

    roots = [*include_dirs(), *glob.glob("/usr/local/cuda*/include")]
    cands = [os.path.join(r, "cccl") for r in roots] + list(roots)
    for sp in [*site.getsitepackages(), sys.prefix]:
        cands += glob.glob(os.path.join(sp, "**", "include", "cccl"), recursive=True)
        cands += glob.glob(os.path.join(sp, "cupy", "_core", "include", "cupy", "_cccl", "libcudacxx"))
    for c in cands:
        if os.path.isfile(os.path.join(c, "cuda", "std", "cstdint")):
            return c
    return None


#: cuda.h's CUtensorMap (64-byte aligned, 16 words), which TIRx's CUDA names for a host-encoded
#: TMA descriptor parameter but includes cuda.h only outside NVRTC
_CU_TENSOR_MAP = "typedef struct CUtensorMap_st { alignas(64) unsigned long long opaque[16]; } CUtensorMap;\n"


#: math.h's float constants, which TIRx's CUDA names (nvcc includes math.h; NVRTC does not):
#: the same float values
_MATH_CONSTANTS = {
    "INFINITY": "#ifndef INFINITY\n#define INFINITY __int_as_float(0x7f800000)\n#endif\n",
    "NAN": "#ifndef NAN\n#define NAN __int_as_float(0x7fc00000)\n#endif\n",
}


def nvrtc_source(cuda: str) -> str:
    """TIRx's recorded CUDA as NVRTC compiles it: with ``CUtensorMap`` declared where the code
    uses it (TIRx compiles with nvcc and cuda.h; the declaration is cuda.h's layout), and
    math.h's ``INFINITY`` / ``NAN`` defined where it names them."""
    pre = ""
    if "CUtensorMap" in cuda and "struct CUtensorMap" not in cuda and "CUtensorMap_st" not in cuda:
        pre += _CU_TENSOR_MAP
    for name, text in _MATH_CONSTANTS.items():
        if re.search(rf"\b{name}\b", cuda) and f"#define {name}" not in cuda:
            pre += text
    return pre + cuda
