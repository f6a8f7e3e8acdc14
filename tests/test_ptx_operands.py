"""TIRx's PTX operand helpers (tirx/ops/ptx_operands.py): ``T.ptx.addr``, ``T.ptx.pred``,
``T.ptx.SINK``. TIRx's printed text with ``T.ptx.addr`` loads and equals the chain's IR in
tests/test_ptx_rows_{multimem,sm100}.py; here: what each helper builds, its lowering and
its interpreter value, and the SINK error."""

from __future__ import annotations

import numpy as np
import pytest
from ptx_rows_util import kernel
from test_frontend_util import load_module

import tirx
from tirx.codegen.cuda import generate

_K = """
from tirx.script import tirx as T

@T.function
def f(A: T.Tensor((128,), "uint32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    s = T.alloc_shared((64,), "uint32")
    i = T.cuda.thread_idx("x")
    s[i] = T.Cast("uint32", i)
    T.cuda.cta_sync()
    {body}
"""


def test_pred_is_the_value_itself():
    a = kernel("T.ptx.tcgen05.mma.cta_group__1.kind__f16(y[0], x[0], x[1], y[1], y[2], y[3], y[4], y[5], "
               "T.ptx.pred(y[6]))")  # fmt: skip
    b = kernel(
        "T.ptx.tcgen05.mma.cta_group__1.kind__f16(y[0], x[0], x[1], y[1], y[2], y[3], y[4], y[5], y[6])"
    )
    tirx.assert_structural_equal(a, b)
    assert "T.ptx.pred" not in tirx.dumps(a)


def test_sink_is_refused_with_what_tirx_does_instead():
    with pytest.raises(tirx.DiagnosticError) as ei:
        kernel("T.ptx.ld.global_.v2.u32(y[0], T.ptx.SINK, B.data)")
    assert "T.ptx.SINK" in str(ei.value) and "optional output" in str(ei.value)


def test_addr_offsets_an_address_in_bytes_on_the_interpreter():
    g = load_module(_K.replace("{body}", "A[i] = T.ptx.addr(T.uint32(100), 12) + s[i]"), "addr2").f
    A = np.zeros(128, np.uint32)
    tirx.compile(g, target="interp")(A)
    assert (A[:32] == 112 + np.arange(32)).all()
    assert "+ 12)" in generate(g).text


def test_addr_of_a_pointer_keeps_its_type_and_lowers_to_a_byte_offset():
    f = kernel("T.ptx.st.global_.u64(T.ptx.addr(B.data, 16), x[0])")
    src = generate(f).text
    assert "(char*)" in src and "+ 16" in src
    text = tirx.dumps(f)
    assert "T.ptx.addr(B.data, 16)" in text
    tirx.assert_structural_equal(tirx.loads(text), f)


def test_addr_needs_a_literal_offset():
    with pytest.raises(tirx.DiagnosticError, match="byte_offset must be an integer literal"):
        kernel("T.ptx.st.global_.u64(T.ptx.addr(B.data, x[0]), x[0])")
