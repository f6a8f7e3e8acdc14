"""A float16 literal means its value rounded to float16 once (tirx.ir.numerics, the
interpreter). CUDA's ``half(1.00048828125f)`` rounds twice (double -> float -> half) and lands
on the other side of a half midpoint: such literals are written as their bits. No GPU needed:
the source and NVRTC; the interpreter gives the bits the source names."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
from tirx.codegen import generate

KERNEL = """# from tirx.script import tirx as T

@T.function
def k(B: T.Tensor((1,), T.float16)):
    with T.device_entry(1, 1, 1, 1, 1, 1):
        B[0] = T.float16(VALUE)
"""


def _kernel(v: float):
    return tirx.loads(KERNEL.replace("VALUE", repr(v)))


def _interp_bits(f) -> int:
    b = np.zeros(1, np.float16)
    tirx.compile(f, target="interp")(b)
    return int(b.view(np.uint16)[0])


def test_a_literal_half_rounds_twice_is_written_as_its_bits():
    v = 1 + 2**-11 + 2**-40  # float32 rounds it to the midpoint 1 + 2^-11; half then to 1.0
    f = _kernel(v)
    code = generate(f).text
    assert _interp_bits(f) == 0x3C01
    assert "__ushort_as_half((unsigned short)0x3c01)" in code
    pytest.importorskip("cuda.bindings.nvrtc")
    tirx.compile(f, target="cuda -arch=sm_90a", cache=False)  # NVRTC accepts it


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-70000, max_value=70000, allow_nan=False))
def test_every_half_literal_in_the_source_means_the_interpreters_bits(v):
    f = _kernel(v)
    body = generate(f).text.split("__global__", 1)[1]
    want = _interp_bits(f)
    if "__ushort_as_half" in body:
        assert f"0x{want:04x}" in body
    else:  # written as half(<float literal>): that float rounds to the same half
        lit = body.split("half(", 1)[1].split("f)", 1)[0]
        with np.errstate(over="ignore"):  # past 65504: inf, as the literal means
            got = int(np.float16(np.float32(float(lit))).view(np.uint16))
        assert got == want, (v, lit)
