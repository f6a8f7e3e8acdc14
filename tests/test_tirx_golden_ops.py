"""Every op tirx shares with TIRx: the text TIRx 0.1.0a4 printed for a call of it
(tests/data/tirx_golden/ops.json, made by tools/tirx_oracle/golden_ops.py) loads in tirx, and
tirx prints the call back exactly as TIRx did. The golden file is data; TIRx is not needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tirx

GOLDEN = json.loads((Path(__file__).parent / "data" / "tirx_golden" / "ops.json").read_text())
PRINTED = {k: v for k, v in sorted(GOLDEN["ops"].items()) if "text" in v}
REFUSED = {k: v for k, v in sorted(GOLDEN["ops"].items()) if "text" not in v}

#: ops whose TIRx text is not a call of the op itself, with why
EXPANDED = {
    "isinf": "TIRx expands T.isinf(x) into |x| == inf and not isnan(x) as it builds",
    "isfinite": "TIRx expands T.isfinite(x) into comparisons as it builds",
    "abs": "TIRx builds T.abs of a float as T.fabs (tirx does the same)",
    # TIRx's PTX operand helpers are Python objects, not IR: a call statement of one prints nothing
    # (tests/test_ptx_operands.py and the row tests check them inside T.ptx operands)
    "ptx.addr": "TIRx's T.ptx.addr is an operand object, IR only inside a T.ptx call",
    "ptx.pred": "TIRx's T.ptx.pred is an operand tag that leaves no IR",
}


def _stmt(text: str) -> str:
    return text.strip().splitlines()[-1].strip()


@pytest.mark.parametrize("name", list(PRINTED))
def test_tirx_text_of_the_op_loads_and_prints_back_the_same(name):
    text = PRINTED[name]["text"]
    f = tirx.loads(text)
    ours = tirx.dumps(f)
    assert _stmt(text) in ours, (text, ours)
    if name not in EXPANDED:
        assert f"T.{name}(" in _stmt(text)
    assert tirx.structural_equal(tirx.loads(ours), f)


def test_golden_file_covers_the_shared_ops():
    # the ops TIRx could not print are tirx's own (absent from TIRx) or need arguments the
    # generator does not make (a function name and ty=, a template, a wgmma shape)
    assert len(PRINTED) >= 108, len(PRINTED)
    own = {"cuda.atomic_max", "cuda.atomic_min", "cuda.atomic_exch", "cuda.cta_rank", "cuda.shfl_sync",
           "cuda.shfl_up_sync", "cuda.shfl_down_sync", "cuda.shfl_xor_sync", "is_aligned", "ptr_byte_offset",
           "ptx.mbarrier_arrive_cluster", "ptx.tma_load_2d", "ptx.tma_load_2d_multicast", "ptx.tma_load_3d",
           "ptx.tma_store_2d", "call_extern", "call_pure_extern", "ptx.asm", "ptx.wgmma_mma_async",
           "reinterpret",
           "cuda.wait_until"}  # fmt: skip  # wait_until: TIRx refuses the ptx_type "" it prints (goldens: frontend case)
    # TIRx takes a tensor variable (masked_load), a vector (vector_low/high), or an LLVM
    # intrinsic's name with ty= (the generator makes neither): tests/test_ops_vector.py and
    # tests/test_ops_host_calls.py check their printed forms
    own |= {"masked_load", "vector_low", "vector_high", "call_llvm_intrin", "call_llvm_pure_intrin"}
    # keyword options after 4 * rank + 1 operands (frontend case cuda_tensormap checks its printed form)
    own |= {"cuda.tensormap_encode_tiled"}
    # dtype/shape options the generator does not draw; tests/test_tcgen05.py checks every
    # combination against TIRx's recorded values (tests/data/tirx_golden/tcgen05_desc.json)
    own |= {"cuda.tcgen05_encode_instr_descriptor", "cuda.tcgen05_encode_instr_descriptor_block_scaled"}
    assert set(REFUSED) <= own, sorted(set(REFUSED) - own)
