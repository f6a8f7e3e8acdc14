"""Every op tirx shares with TIRx takes TIRx's keywords: a TIRx program calls ``T.fabs(x=v)``,
``T.cuda.thread_idx(axis="x")``, ``T.if_then_else(condition=..., true_value=...,
false_value=...)``. The names are TIRx's own, recorded by ``tools/tirx_oracle/golden_op_params.py``
(``tests/data/tirx_golden/op_params.json``); this runs without TIRx."""

from __future__ import annotations

import json
import pathlib

import pytest

from tirx.ir import op as O

TABLE: dict = json.loads(
    (pathlib.Path(__file__).parent / "data" / "tirx_golden" / "op_params.json").read_text()
)

#: tirx ops whose keywords differ from TIRx's on purpose: (op, why)
DIFFERENT = {
    "cuda.thread_fence": "TIRx's Python wrapper takes scope= and ignores it; tirx emits that scope's fence",
    "cuda.elect_sync": "TIRx's Python wrapper takes the member mask; its registered op has no argument",
    "cuda.tcgen05_encode_instr_descriptor": "TIRx passes the descriptor's fields as attributes",
    "cuda.tcgen05_encode_instr_descriptor_block_scaled": "TIRx passes the descriptor's fields as attributes",
    "call_packed_lowered": "host-runtime internals (TIRx's lowered stack form); tirx keeps them variadic as "
    "call_packed, and neither CUDA backend compiles them",
    "call_cpacked_lowered": "as call_packed_lowered",
}


def _shared() -> list[tuple[str, list]]:
    out = []
    for name in O.all_ops(builtin_only=True):
        for theirs in (f"prim.{name}", f"tirx.{name}"):
            if theirs in TABLE:
                out.append((name, TABLE[theirs]))
                break
    return out


SHARED = _shared()


def test_the_table_covers_the_families_programs_use():
    names = {n for n, _ in SHARED}
    for want in ("fabs", "if_then_else", "cuda.thread_idx", "cuda.atomic_add", "cuda.__shfl_sync", "reinterpret"):
        assert want in names, want
    assert len(SHARED) > 100


@pytest.mark.parametrize("name, theirs", SHARED, ids=[n for n, _ in SHARED])
def test_an_op_takes_tirx_s_keywords(name, theirs):
    op = O.lookup(name)
    assert op is not None
    if name in DIFFERENT:
        assert list(op.params) != theirs, f"{name} matches TIRx now: drop it from DIFFERENT"
        return
    assert list(op.params) == theirs, f"T.{name}: tirx takes {list(op.params)}, TIRx {theirs}"
