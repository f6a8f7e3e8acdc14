"""Scalar integer semantics shared by constant folding and host evaluation."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tirx.ir.arith import trunc_div, trunc_mod, wrap
from tirx.ir.types import DTYPE_NAMES, prim

INT_TYPES = [prim(n) for n in DTYPE_NAMES if prim(n).is_int]
nonzero = st.integers(-(2**70), 2**70).filter(lambda b: b != 0)


@given(st.integers(-(2**70), 2**70), nonzero)
def test_trunc_div_mod_match_c(a, b):
    q, r = trunc_div(a, b), trunc_mod(a, b)
    assert q * b + r == a
    assert abs(r) < abs(b)
    assert r == 0 or (r > 0) == (a > 0)  # C: the remainder takes the dividend's sign


@given(st.integers(-(2**80), 2**80), st.sampled_from(INT_TYPES))
def test_wrap_is_twos_complement(v, t):
    w = wrap(v, t)
    lo, hi = (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1) if t.kind == "int" else (0, (1 << t.bits) - 1)
    assert lo <= w <= hi
    assert (w - v) % (1 << t.bits) == 0


def test_examples():
    assert (trunc_div(-7, 2), trunc_mod(-7, 2)) == (-3, -1)
    assert (trunc_div(7, -2), trunc_mod(7, -2)) == (-3, 1)
    assert wrap(2**31, prim("int32")) == -(2**31)
    assert wrap(-1, prim("uint8")) == 255
