"""``pred=`` on a PTX table call with register outputs (TIRx's ``T.ptx.add.s32(d, a, b, pred=p,
preserve_dst=True)``, held-out round 24): printed with TIRx's marker (``pred`` / ``pred,keep``),
loaded back equal, the outputs read and written in CUDA (``+r``: where the guard is false the
destination keeps its value, which TIRx's plain ``pred`` leaves unspecified), compiled by NVRTC;
the interpreter, which has no model of what a false guard keeps, refuses it by name."""

from __future__ import annotations

import numpy as np
import pytest
from test_frontend_util import load_module

import tirx
from tirx.codegen import generate
from tirx.errors import OpError

_SRC = """
from tirx.script import tirx as T

@T.function
def inc(B: T.Tensor((64,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    i = T.cuda.thread_idx("x")
    d: T.int32 = 0
    T.ptx.add.s32(d, B[i], 3, pred=i < 32{keep})
    B[i] = d
"""


@pytest.mark.parametrize("keep,marker", [(False, "pred"), (True, "pred,keep")])
def test_a_guarded_output_round_trips_and_compiles(keep, marker):
    f = load_module(_SRC.format(keep=", preserve_dst=True" if keep else ""), "guarded").inc
    text = tirx.dumps(f)
    assert f'T.ptx.add(d[0], B[i], T.int32(3), i < 32, "", "s32", "{marker}")' in text
    tirx.assert_structural_equal(tirx.loads(text), f)
    line = next(ln for ln in str(generate(f)).splitlines() if "add.s32" in ln)
    assert "@G add.s32 %0" in line and '"+r"(d)' in line
    assert tirx.compile(f, target="cuda -arch=sm_90a", cache=False).cubin
    with pytest.raises(OpError, match="guarded by pred= with outputs"):
        tirx.compile(f, target="interp")(np.zeros(64, np.int32))


def test_preserve_dst_needs_a_guard():
    with pytest.raises(
        tirx.DiagnosticError, match="preserve_dst=True keeps the outputs where pred= is false"
    ):
        load_module(_SRC.replace("pred=i < 32{keep}", "preserve_dst=True"), "guarded2")
