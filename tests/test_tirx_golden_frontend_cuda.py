"""tirx compiles every frontend golden kernel that TIRx compiles (issue #14).

``tests/data/tirx_golden/frontend_cuda.json`` (recorded by
``tools/tirx_oracle/golden_frontend_cuda.py``) holds, per case of
``tests/data/tirx_golden/frontend/``, TIRx's CUDA for ``f`` and its arch, or TIRx's error.
Where TIRx's CUDA also compiles through NVRTC here, tirx's own build of the same Python
source must compile for the same arch. No GPU needed; the GPU comparison of the two kernels
is ``tests/test_tirx_golden_frontend_cuda_gpu.py``.
"""

from __future__ import annotations

import functools
import json
import pathlib

import pytest
from test_tirx_golden_frontend import CASES, build_case
from tirx_golden_cuda_util import cccl_include, nvrtc_source

import tirx
from tirx.runtime.nvrtc import compile_source

DATA = pathlib.Path(__file__).parent / "data" / "tirx_golden" / "frontend_cuda.json"
RECORDED: dict = json.loads(DATA.read_text())
COMPILED = sorted(c for c, e in RECORDED.items() if "cuda" in e)

#: cases whose TIRx CUDA compiles but tirx refuses on purpose: (the error tirx gives, why)
REFUSED: dict[str, tuple[str, str]] = {
    "cuda_tensormap": (
        "tensormap_encode_tiled",
        "T.cuda.tensormap_encode_tiled into D.data: TIRx's host writes the descriptor through a device "
        "pointer; tirx encodes into T.stack_alloca('tensormap', 1) storage only (case tma_host_encode) and "
        "refuses this where it is written",
    ),
}


@functools.cache
def tirx_cuda_compiles(case: str) -> str | None:
    """None when TIRx's recorded CUDA compiles with NVRTC, else why not."""
    inc = cccl_include()
    if inc is None:
        return "libcu++ headers (cuda/std/cstdint, which TIRx's CUDA includes) not found"
    e = RECORDED[case]
    try:
        compile_source(nvrtc_source(e["cuda"]), e["arch"], name=f"tirx_{case}.cu", options=(f"-I{inc}",))
    except Exception as err:
        return f"{type(err).__name__}: {str(err).splitlines()[0][:300]}"
    return None


def test_every_case_is_recorded():
    missing = sorted(set(CASES) - set(RECORDED))
    assert not missing, f"run tools/tirx_oracle/golden_frontend_cuda.py for: {missing}"
    assert len(COMPILED) >= 30, "fewer recorded TIRx builds than expected: the JSON was truncated?"


@pytest.mark.parametrize("case", COMPILED)
def test_tirx_compiles_what_tirx_compiles(case, monkeypatch, tmp_path):
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path))
    why = tirx_cuda_compiles(case)
    if why is not None:
        pytest.skip(f"TIRx generates CUDA for {case} that NVRTC rejects: {why}")
    arch = RECORDED[case]["arch"]
    if case in REFUSED:
        with pytest.raises((ValueError, tirx.DiagnosticError), match=REFUSED[case][0]):
            tirx.compile(build_case(case), target=f"cuda -arch={arch}")
        return
    k = tirx.compile(build_case(case), target=f"cuda -arch={arch}")
    assert k.cubin, f"{case}: no cubin"


def test_gpu_plan_maps_tirx_kernel_parameters_to_the_case():
    """The GPU comparison (test_tirx_golden_frontend_cuda_gpu.py) launches TIRx's kernel with the
    case's tensors and scalars in TIRx's parameter order and tirx's launch configuration."""
    from tirx_golden_frontend_plan import Plan, plan

    f = build_case("layout_symbolic")
    k = tirx.compile(f, target=f"cuda -arch={RECORDED['layout_symbolic']['arch']}")
    p = plan(f, RECORDED["layout_symbolic"]["cuda"], k)
    assert isinstance(p, Plan), p
    names = [f.params[i].name for _kind, i, *_ in p.order]
    kinds = [kind for kind, *_ in p.order]
    assert p.kernel == "f_kernel" and p.grid == (1, 1, 1) and p.block == (64, 1, 1) and p.smem == 0
    assert kinds == ["buffer", "scalar"] and names[1] == "n" and p.order[1][2] == "c_int32", p.order
    # a kernel with a pointer parameter is not run (no tensor to draw for it)
    f = build_case("irnames_values")
    k = tirx.compile(f, target=f"cuda -arch={RECORDED['irnames_values']['arch']}")
    assert plan(f, RECORDED["irnames_values"]["cuda"], k) == "pointer parameter p"
