"""Constant folding of floats computes what the program computes (issue #29 item 1).

A ``FloatImm`` keeps the literal as written (``T.float16(0.1).value == 0.1``); the program
(interpreter and GPU) rounds it to its dtype first. Every fold — Simplify's (``fold_expr``),
the frontend's as it builds (``tirx.ir.fold.fold`` / ``fold_cast``) — must round each operand
to its dtype, compute in the dtype's arithmetic and convert integers with one rounding. The
judge is the interpreter running the unfolded expression, compared bit for bit.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx
import tirx.interp as ti
from tirx.ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    Cast,
    Div,
    FloatImm,
    IntImm,
    Max,
    Min,
    Mul,
    Sub,
    TensorType,
    const,
)
from tirx.ir.fold import fold, fold_cast
from tirx.ir.types import PrimType
from tirx.passes.simplify import fold_expr
from tirx.script import tirx as T
from tirx.surface.builder import IRBuilder, launch_args

F16, BF16, F32, F64 = (PrimType(n) for n in ("float16", "bfloat16", "float32", "float64"))
I32, I64 = PrimType("int32"), PrimType("int64")
FLOATS = [
    PrimType(n)
    for n in (
        "float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "float8_e3m4",
        "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
        "float4_e2m1fn",
    )
]  # fmt: skip
INTS = [PrimType(n) for n in ("int8", "int16", "int32", "int64", "uint8", "uint32", "uint64", "bool")]
ARITH = [Add, Sub, Mul, Div, Min, Max]
CMPS = [EQ, NE, LT, LE, GT, GE]

EDGE = [
    0.0, -0.0, 1.0, -1.0, 0.1, 0.2, 1e-08, -1e-08, 6e-08, 3e-05, 65504.0, 65519.0, 65520.0,
    65536.0, 448.0, 464.0, 480.0, 57344.0, 61440.0, 1.00048828125, 1.0009765625, 2049.0,
    16777217.0, 3.4028234663852886e38, 3.4028235677973366e38, 1e39, 1e300, 5e-324,
    2.0**-127, 2.0**127, math.inf, -math.inf, math.nan,
]  # fmt: skip


def few_bits() -> st.SearchStrategy[float]:
    """Values with a few significant bits: exact ties of the narrow dtypes, often."""
    return st.builds(
        lambda m, e, s: s * m * 2.0**e,
        st.integers(0, 1 << 13),
        st.integers(-150, 130),
        st.sampled_from([1, -1]),
    )


FLOAT_VALUES = st.one_of(st.sampled_from(EDGE), few_bits(), st.floats(width=64))


def big_ints() -> st.SearchStrategy[int]:
    """Integers just off a rounding boundary of float16/32/64: ``2**a + 2**(a - d) + c``, where
    ``d`` = 11, 24 or 53 puts ``2**(a - d)`` on that dtype's midpoint (float64 rounds
    ``2**60 + 2**36 + 1`` onto float32's midpoint: a float64 detour rounds twice)."""
    return st.builds(
        lambda a, d, c, s: s * ((1 << a) + (1 << max(a - d, 0)) + c),
        st.one_of(st.integers(54, 62), st.integers(0, 62)),  # 54+: the low bits are lost in float64
        st.one_of(st.sampled_from([11, 12, 24, 25, 53, 54]), st.integers(0, 62)),
        st.integers(-2, 2),
        st.sampled_from([1, -1]),
    )


# ------------------------------------------------------------------ the judge


def _out_array(t: PrimType) -> np.ndarray:
    if t.is_bool:
        return np.zeros(2, np.bool_)
    if t.base == "bfloat16":
        return np.zeros(2, np.uint16)  # bit patterns
    if t.is_minifloat:
        return np.zeros(2, np.uint8)  # codes
    return np.zeros(2, t.name)


def run_both(unfolded, folded) -> tuple[bytes, bytes, bool]:
    """The interpreter's bits of ``unfolded`` and of the constant ``folded`` (both stored to a
    buffer of their dtype), and whether the first is a NaN."""
    t = unfolded.ty
    b = IRBuilder()
    with b, b.function("k"):
        C = b.param("C", TensorType((2,), t))
        with b.device_entry(*launch_args(1, 1)):
            b.store(C, (const(0),), unfolded)
            b.store(C, (const(1),), folded)
    out = _out_array(t)
    ti.compile(b.get())(out)
    nan = False
    if t.is_float:
        from tirx.ops.semantics.dtypes import from_storage

        nan = bool(np.isnan(from_storage(out[:1], t))[0])
    return out[:1].tobytes(), out[1:].tobytes(), nan


def assert_fold_is_exact(unfolded, folded, who: str) -> None:
    if folded is unfolded or type(folded) not in (IntImm, FloatImm):
        return  # not folded (always correct)
    assert folded.ty == unfolded.ty, (who, unfolded, folded)
    want, got, nan = run_both(unfolded, folded)
    if nan:  # NaN bits are the interpreter's business; a fold must at least give a NaN
        assert type(folded) is FloatImm and math.isnan(folded.value), (who, unfolded, folded)
        return
    assert want == got, f"{who}: {unfolded!r} folds to {folded!r}, the program computes {want.hex()}"


def _folds(e):
    """(who, folded) for every folder of ``e``'s top node."""
    out = [("Simplify", fold_expr(e))]
    with contextlib.suppress(ZeroDivisionError):  # the frontend refuses a constant divisor 0, as TIRx
        out.append(("frontend", fold_cast(e) if type(e) is Cast else fold(e)))
    return out


# ------------------------------------------------------------------ differential (hypothesis)

_SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))


@_SETTINGS
@given(st.sampled_from(FLOATS), st.sampled_from(ARITH + CMPS), FLOAT_VALUES, FLOAT_VALUES)
def test_binary_folds_of_float_constants_match_the_interpreter(t, cls, x, y):
    e = cls(FloatImm(x, t), FloatImm(y, t))
    for who, r in _folds(e):
        assert_fold_is_exact(e, r, who)


@_SETTINGS
@given(st.sampled_from(FLOATS), st.sampled_from(FLOATS + INTS), FLOAT_VALUES)
def test_casts_of_float_constants_match_the_interpreter(src, dst, x):
    e = Cast(dst, FloatImm(x, src))
    for who, r in _folds(e):
        assert_fold_is_exact(e, r, who)


@_SETTINGS
@given(
    st.sampled_from([I64, I32, PrimType("uint64"), PrimType("int16")]), st.sampled_from(FLOATS), big_ints()
)
def test_casts_of_int_constants_match_the_interpreter(src, dst, v):
    lo, hi = (
        (0, (1 << src.bits) - 1)
        if src.kind == "uint"
        else (-(1 << (src.bits - 1)), (1 << (src.bits - 1)) - 1)
    )
    e = Cast(dst, IntImm(min(max(v, lo), hi), src))
    for who, r in _folds(e):
        assert_fold_is_exact(e, r, who)


def _round_int(v: int, mant: int, max_exp: int) -> float:
    """``v`` rounded once to a binary float with ``mant`` significand bits (ties to even),
    inf past ``2**max_exp``: exact integer arithmetic, the independent oracle."""
    a = abs(v)
    shift = max(a.bit_length() - mant, 0)
    q, rem = divmod(a, 1 << shift)
    half = (1 << shift) >> 1
    if shift and (rem > half or (rem == half and q & 1)):
        q += 1
    r = q << shift
    mag = math.inf if r >= 1 << max_exp else float(r)
    return -mag if v < 0 else mag


@settings(max_examples=300, deadline=None)
@given(big_ints(), st.sampled_from([(F16, 11, 16), (F32, 24, 128), (F64, 53, 1024)]))
def test_int64_to_float_rounds_once(v, case):
    t, mant, max_exp = case
    v = min(max(v, -(1 << 63)), (1 << 63) - 1)
    want = _round_int(v, mant, max_exp)
    e = Cast(t, IntImm(v, I64))
    r = fold_expr(e)
    assert type(r) is FloatImm and r.value == want, (v, t, r)
    r = fold_cast(e)  # the frontend folds to float16/float32 only (as TIRx), keeping TIRx's
    # float32 literal where it stands for the same float16 value
    with np.errstate(over="ignore"):  # a float32 literal past float16's range is its inf
        assert r is e or (type(r) is FloatImm and float(np.array([r.value]).astype(t.name)[0]) == want), (
            v,
            t,
            r,
        )


# ------------------------------------------------------------------ the issue's examples


def test_issue_examples_simplify():
    assert fold_expr(Cast(F32, FloatImm(0.1, F16))).value == 0.0999755859375
    assert fold_expr(Cast(I32, FloatImm(65504.0, BF16))).value == 65536
    assert fold_expr(EQ(FloatImm(0.0, F16), FloatImm(1e-08, F16))).value == 1
    v = 2**60 + 2**36 + 1  # above the float32 midpoint; float64 rounds it onto the midpoint
    assert fold_expr(Cast(F32, IntImm(v, I64))).value == 2**60 + 2**37
    # a float16 sum rounds to float16; an overflowing float16 constant is inf
    assert fold_expr(Add(FloatImm(1e-08, F16), FloatImm(1.0, F16))).value == 1.0
    assert fold_expr(Mul(FloatImm(70000.0, F16), FloatImm(0.5, F16))).value == math.inf
    # int <- float truncates the rounded value and saturates, as the program does
    assert fold_expr(Cast(I32, FloatImm(70000.0, F16))).value == 2**31 - 1


def test_issue_examples_frontend():
    """The frontend folds where TIRx folds, to the program's value (TIRx's own literal kept
    where it stands for that value, so the text prints what TIRx prints)."""
    assert fold_cast(Cast(F32, FloatImm(0.1, F16))).value == 0.0999755859375
    assert fold_cast(Cast(I32, FloatImm(65504.0, BF16))).value == 65536
    assert fold(EQ(FloatImm(0.0, F16), FloatImm(1e-08, F16))).value == 1
    assert fold_cast(Cast(F32, IntImm(2**60 + 2**36 + 1, I64))).value == 2**60 + 2**37
    kept = fold_cast(Cast(F16, FloatImm(0.1, F32)))
    assert kept.value == 0.10000000149011612  # TIRx's float32-rounded literal, same fp16 value
    # a float32 literal past float32's range is inf (it used to raise OverflowError)
    assert fold(Add(FloatImm(1e39, F32), FloatImm(1.0, F32))).value == math.inf
    # max(+0, -0) is +0 (fmaxf); min(NaN, 1) is 1 (NaN ignored), as the program computes
    r = fold(Max(FloatImm(0.0, F32), FloatImm(-0.0, F32)))
    assert r.value == 0.0 and math.copysign(1, r.value) == 1
    assert fold(Min(FloatImm(math.nan, F32), FloatImm(1.0, F32))).value == 1.0
    # inf * 0 is NaN in the program: TIRx's x * 0 -> 0 does not fold two constants to 0
    e = Mul(FloatImm(math.inf, F16), FloatImm(0.0, F16))
    assert fold(e) is e


def test_store_cast_folds_to_the_program_value():
    @T.function
    def f(B: T.Tensor((4,), T.float32), A: T.Tensor((4,), T.int32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        B[0] = T.float16(0.1)
        A[0] = T.bfloat16(65504.0)

    text = tirx.dumps(f)
    assert "B[0] = T.float32(0.0999755859375)" in text, text
    assert "A[0] = 65536" in text, text


def test_isinf_isfinite_of_a_constant_fold_its_rounded_value():
    """``T.isinf`` / ``T.isfinite`` build TIRx's comparisons; on a constant they fold, and a
    float16 70000.0 is inf in the program."""
    b = IRBuilder()
    with b, b.function("k"):
        C = b.param("C", TensorType((4,), PrimType("bool")))
        with b.device_entry(*launch_args(1, 1)):
            for i, e in enumerate(
                (
                    T.isinf(FloatImm(1e10, F16)),
                    T.isfinite(FloatImm(70000.0, F16)),
                    T.isinf(FloatImm(1e10, F32)),
                    T.isfinite(FloatImm(65504.0, F16)),
                )
            ):
                b.store(C, (const(i),), e)
    out = np.zeros(4, np.bool_)
    ti.compile(b.get())(out)
    assert out.tolist() == [True, False, False, True]


# ------------------------------------------------------------------ the campaign draws them


def test_semantic_campaign_generator_draws_typed_float_constants():
    """``tirx fuzz --semantic`` kernels include constants of other float dtypes (what found
    this bug: Simplify folded ``T.Cast("float32", T.float16(0.1))`` to 0.1)."""
    from hypothesis import find

    from tirx.testing.runnable import runnable_kernels

    def has_f16_const(r) -> bool:
        text = tirx.dumps(r.func)
        return 'T.Cast("float32", T.float16(' in text or 'T.Cast("float32", T.bfloat16(' in text

    find(runnable_kernels(), has_f16_const, settings=settings(max_examples=500, deadline=None, database=None))


@pytest.mark.parametrize("t", FLOATS, ids=lambda t: t.name)
def test_every_float_dtype_rounds_literals_before_folding(t):
    """Every dtype: literals that round to one value of ``t`` compare equal, a cast reads the
    rounded value, a sum adds the rounded values."""
    if t.base == "float8_e8m0fnu":  # rounds up, to a power of two
        pairs = [(1.0, 1.0 - 1e-9), (2.0, 2.0 - 2.0**-40)]
    else:  # float64 has no two literals of one value
        pairs = [] if t.bits == 64 else [(1.0, 1.0 + 1e-9), (0.1, 0.1 + 1e-12), (2.0, 2.0 - 2.0**-40)]
    for x, y in pairs:
        e = EQ(FloatImm(x, t), FloatImm(y, t))
        for who, r in _folds(e):
            assert type(r) is IntImm and r.value == 1, (who, e, r)
    for x, y in ((1.0, 2.0**-4), (1.0, 2.0**-11), (448.0, 16.0), (0.1, 0.2), (1e-08, 1.0)):
        for e in (Add(FloatImm(x, t), FloatImm(y, t)), Cast(F64, FloatImm(x + y, t))):
            for who, r in _folds(e):
                assert_fold_is_exact(e, r, who)
