"""The 4/6/8-bit float dtypes (TIRx's float4_e2m1fn ... float8_e8m0fnu): names, text, the
interpreter's exact encode/decode (every bit pattern, against a reference computed here from
the format definitions with exact rationals) and the CUDA types they map to."""

from __future__ import annotations

import bisect
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tirx
from tirx.interp import minifloat as mf
from tirx.ir import FloatImm
from tirx.ir.types import DTYPE_NAMES, MINIFLOAT_LIMITS, parse_dtype, prim
from tirx.ops.semantics.dtypes import f8_from_bits, round_f8
from tirx.script import tirx as T

# name: (exponent bits, mantissa bits, bias, special values, signed); from the OCP MX / ML
# format definitions (what ml_dtypes and TIRx name them)
SPECS = {
    "float8_e4m3fn": (4, 3, 7, "fn", True),
    "float8_e4m3": (4, 3, 7, "ieee", True),
    "float8_e5m2": (5, 2, 15, "ieee", True),
    "float8_e3m4": (3, 4, 3, "ieee", True),
    "float8_e4m3fnuz": (4, 3, 8, "fnuz", True),
    "float8_e4m3b11fnuz": (4, 3, 11, "fnuz", True),
    "float8_e5m2fnuz": (5, 2, 16, "fnuz", True),
    "float8_e8m0fnu": (8, 0, 127, "e8m0", False),
    "float6_e2m3fn": (2, 3, 1, "none", True),
    "float6_e3m2fn": (3, 2, 3, "none", True),
    "float4_e2m1fn": (2, 1, 1, "none", True),
}
NEW = [n for n in SPECS if n not in ("float8_e4m3fn", "float8_e5m2")]
CUDA_TYPES = {
    "float8_e8m0fnu": ("__nv_fp8_e8m0", "cuda_fp8.h"),
    "float6_e2m3fn": ("__nv_fp6_e2m3", "cuda_fp6.h"),
    "float6_e3m2fn": ("__nv_fp6_e3m2", "cuda_fp6.h"),
    "float4_e2m1fn": ("__nv_fp4_e2m1", "cuda_fp4.h"),
}
NO_CUDA = ["float8_e3m4", "float8_e4m3", "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2fnuz"]
LANES = [2, 4, 8, 16, 32, 64]
NAN = "nan"


# ------------------------------------------------------------------ the reference
def _nbits(name: str) -> int:
    eb, mb, _, _, signed = SPECS[name]
    return eb + mb + int(signed)


def ref_value(name: str, code: int):
    """The exact value of a code: a Fraction, +-math.inf, or NAN; -0 is ("-0")."""
    eb, mb, bias, special, signed = SPECS[name]
    neg = signed and bool(code >> (eb + mb) & 1)
    e = (code >> mb) & ((1 << eb) - 1)
    m = code & ((1 << mb) - 1)
    top = (1 << eb) - 1
    if special == "ieee" and e == top:
        return NAN if m else (-math.inf if neg else math.inf)
    if special == "fn" and e == top and m == (1 << mb) - 1:
        return NAN
    if special == "fnuz" and neg and e == 0 and m == 0:
        return NAN
    if special == "e8m0":
        return NAN if e == top else Fraction(2) ** (e - bias)
    if e == 0:
        v = Fraction(m, 1 << mb) * Fraction(2) ** (1 - bias)
    else:
        v = (1 + Fraction(m, 1 << mb)) * Fraction(2) ** (e - bias)
    if neg:
        return "-0" if v == 0 else -v
    return v


def _finite_nonneg(name: str) -> list[tuple[Fraction, int]]:
    out = []
    for c in range(1 << _nbits(name)):
        v = ref_value(name, c)
        if isinstance(v, Fraction) and v >= 0:
            out.append((v, c))
    out.sort()
    return out


_TABLE = {n: _finite_nonneg(n) for n in SPECS}


def ref_nan_code(name: str) -> int:
    special = SPECS[name][3]
    n = _nbits(name)
    if special == "fnuz":
        return 1 << (n - 1)
    if special == "none":  # no NaN: CUDA's conversion gives +largest
        return _TABLE[name][-1][1]
    if special == "e8m0":
        return (1 << n) - 1
    return (1 << (n - 1)) - 1  # S=0, all ones


def ref_encode(name: str, x: float, rounding: str = "nearest") -> int:
    """The code a cast of the float ``x`` gives, by searching the exact values."""
    _, _, _, special, signed = SPECS[name]
    if math.isnan(x):
        return ref_nan_code(name)
    table = _TABLE[name]
    vals = [v for v, _ in table]
    if math.isinf(x):
        code = table[-1][1]  # saturates
    else:
        a = abs(Fraction(x))
        k = bisect.bisect_left(vals, a)
        if rounding == "up":
            code = table[min(k, len(table) - 1)][1]
        elif k == 0:
            code = table[0][1]
        elif k == len(vals):
            code = table[-1][1]
        else:
            (lo, clo), (hi, chi) = table[k - 1], table[k]
            dlo, dhi = a - lo, hi - a
            code = clo if dlo < dhi or (dlo == dhi and clo % 2 == 0) else chi
    if signed and math.copysign(1.0, x) < 0 and not (special == "fnuz" and code == 0):
        code |= 1 << (_nbits(name) - 1)
    return code


def _as_float(v) -> float:
    if v == NAN:
        return math.nan
    if v == "-0":
        return -0.0
    return float(v)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


def _probe_points(name: str) -> np.ndarray:
    """Every value, every midpoint and its float32 neighbours, beyond the range, specials."""
    vals = [float(v) for v, _ in _TABLE[name]]
    pts = list(vals)
    for lo, hi in itertools.pairwise(vals):
        mid = np.float32((lo + hi) / 2)
        pts += [
            float(mid),
            float(np.nextafter(mid, np.float32(np.inf))),
            float(np.nextafter(mid, np.float32(0))),
        ]
    top = vals[-1]
    pts += [top * 1.5, top * 4, 3.0e38, 1e-45, 1e-30, vals[1] / 2, vals[1] / 4, 0.0, math.inf, math.nan]
    pts = [p for p in pts if abs(p) <= 3.4e38 or math.isinf(p) or math.isnan(p)]
    a = np.array(pts, dtype=np.float32)
    return np.concatenate([a, -a])


# ------------------------------------------------------------------ names and text
def test_every_tirx_minifloat_name_exists():
    names = set(DTYPE_NAMES)
    for n in NEW:
        assert n in names
        assert parse_dtype(n).is_minifloat and parse_dtype(n).is_float
        for lanes in LANES:
            t = getattr(T, f"{n}x{lanes}")
            assert parse_dtype(f"{n}x{lanes}") == prim(n, lanes) == t
            assert prim(n, lanes).bytes == lanes  # one byte per element, 4/6-bit ones too
    assert prim("float4_e2m1fn").bits == 4 and prim("float6_e3m2fn").bits == 6


@pytest.mark.parametrize("name", NEW)
def test_literal_prints_and_loads(name):
    c = getattr(T, name)(0.5)
    assert isinstance(c, FloatImm) and c.ty == prim(name)
    assert tirx.dumps(c) == f"T.{name}(0.5)"


@pytest.mark.parametrize("name", NEW)
def test_kernel_text_round_trips(name):
    v4 = f"{name}x4"

    @T.function
    def f(A: T.Tensor((64,), name), B: T.Tensor((64,), "float32"), V: T.Tensor((16,), v4)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=16))
        i = T.cuda.thread_idx("x")
        B[i] = T.cast(A[i], "float32")
        A[i] = T.cast(B[i] * T.float32(2.0), name)
        V[i] = T.Broadcast(getattr(T, name)(1.5), 4)
        A[T.Ramp(i * 4, 1, 4)] = V[i]

    text = f.script()
    assert f"T.Tensor((64,), T.{name})" in text and f'T.Cast("{name}", ' in text
    assert f"T.Tensor((16,), T.{v4})" in text and f"T.{name}(1.5)" in text
    g = tirx.loads(text)
    assert tirx.structural_equal(f, g)
    assert tirx.dumps(g) == text


def test_max_and_min_value_are_the_formats_own():
    for n, (hi, lo) in MINIFLOAT_LIMITS.items():
        table = _TABLE[n]
        assert float(table[-1][0]) == hi
        assert T.max_value(n).value == hi and T.min_value(n).value == lo
        assert lo == (float(table[0][0]) if n == "float8_e8m0fnu" else -hi)


# ------------------------------------------------------------------ exact encode / decode
@pytest.mark.parametrize("name", list(SPECS))
def test_decode_every_code(name):
    codes = np.arange(1 << _nbits(name))
    got = mf.decode(codes, name)
    assert got.dtype == np.float32
    for c in codes:
        assert _same(float(got[c]), _as_float(ref_value(name, int(c)))), (name, c)


def test_format_anchors():
    """Facts of each format, independent of the field arithmetic above."""
    count = {n: sum(1 for c in range(1 << _nbits(n)) if ref_value(n, c) == NAN) for n in SPECS}
    assert count == {
        "float8_e4m3fn": 2,
        "float8_e4m3": 14,  # IEEE-style: the top exponent's 7 mantissas, both signs
        "float8_e5m2": 6,
        "float8_e3m4": 30,
        "float8_e4m3fnuz": 1,
        "float8_e4m3b11fnuz": 1,
        "float8_e5m2fnuz": 1,
        "float8_e8m0fnu": 1,
        "float6_e2m3fn": 0,
        "float6_e3m2fn": 0,
        "float4_e2m1fn": 0,
    }
    smallest = {n: _TABLE[n][1][0] for n in SPECS}
    assert smallest["float8_e4m3fnuz"] == Fraction(1, 2**10)
    assert smallest["float8_e4m3b11fnuz"] == Fraction(1, 2**13)
    assert smallest["float8_e5m2fnuz"] == Fraction(1, 2**17)
    assert smallest["float8_e3m4"] == Fraction(1, 2**6)
    assert smallest["float6_e2m3fn"] == Fraction(1, 8) and smallest["float4_e2m1fn"] == Fraction(1, 2)
    assert _TABLE["float8_e8m0fnu"][0][0] == Fraction(1, 2**127)  # no zero
    assert [float(v) for v, _ in _TABLE["float4_e2m1fn"]] == [0, 0.5, 1, 1.5, 2, 3, 4, 6]


@pytest.mark.parametrize("name", list(SPECS))
@pytest.mark.parametrize("rounding", ["nearest", "up"])
def test_decode_then_encode_is_the_identity(name, rounding):
    codes = np.arange(1 << _nbits(name))
    back = mf.encode(mf.decode(codes, name), name, rounding)
    for c in codes:
        v = ref_value(name, int(c))
        if v == NAN:
            assert back[c] == ref_nan_code(name)
        elif isinstance(v, float):  # +-inf saturates (__NV_SATFINITE)
            assert back[c] == ref_encode(name, v) == _TABLE[name][-1][1] | (c & 0x80)
        else:
            assert back[c] == c, (name, c, v)


@pytest.mark.parametrize("name", list(SPECS))
def test_encode_float32_against_the_reference(name):
    x = _probe_points(name)
    got = mf.encode(x, name, "nearest")
    want = np.array([ref_encode(name, float(v)) for v in x])
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(float(x[k]), int(got[k]), int(want[k])) for k in bad[:5]]
    if name == "float8_e8m0fnu":
        up = mf.encode(x, name, "up")
        want_up = np.array([ref_encode(name, float(v), "up") for v in x])
        assert np.array_equal(up, want_up)


def test_rules_per_format():
    enc = mf.encode
    assert enc([-0.0, -1e-30], "float8_e4m3fnuz").tolist() == [0, 0]  # no -0
    assert enc([math.nan], "float8_e5m2fnuz").tolist() == [0x80]
    assert enc([-0.0], "float4_e2m1fn").tolist() == [0x8]  # fn formats keep -0
    assert enc([math.nan, -math.nan], "float6_e3m2fn").tolist() == [31, 31]  # no NaN: +max
    assert enc([1e9, -math.inf], "float8_e3m4").tolist() == [0x6F, 0xEF]  # saturate, inf too
    # e8m0 casts take |x| rounded up to a power of two (CUDA's __nv_fp8_e8m0(float))
    r = mf.round_to_format(np.array([1.0, 1.5, -3.0, 0.0, 1e39, math.nan]), "float8_e8m0fnu")
    assert r[:3].tolist() == [1.0, 2.0, 4.0] and r[3] == 2.0**-127 and r[4] == 2.0**127 and np.isnan(r[5])
    assert enc([1.5, 1.75], "float8_e8m0fnu", "nearest").tolist() == [128, 128]  # tie -> even code
    with pytest.raises(ValueError, match="rounding"):
        enc([1.0], "float4_e2m1fn", "down")
    with pytest.raises(ValueError, match="float32"):
        mf.fmt("float32")


def test_the_float8_the_interpreter_had_agrees():
    for name in ("float8_e4m3fn", "float8_e5m2"):
        codes = np.arange(256, dtype=np.uint8)
        np.testing.assert_array_equal(f8_from_bits(codes, name), mf.decode(codes, name))
        x = _probe_points(name)
        np.testing.assert_array_equal(round_f8(x, name), mf.round_to_format(x, name))


@given(st.sampled_from(list(SPECS)), st.floats(width=32))
def test_float32_to_format_to_float32(name, x):
    code = int(mf.encode(np.array([x], np.float32), name)[0])
    assert code == ref_encode(name, x, mf.fmt(name).rounding)
    y = float(mf.decode(np.array([code]), name)[0])
    # a value of the format, and converting it again changes nothing
    assert int(mf.encode(np.array([y], np.float32), name)[0]) == code or math.isnan(y)
    if math.isfinite(x) and mf.fmt(name).rounding == "nearest":
        # no representable value is nearer than y (within range)
        vals = [v for v, _ in _TABLE[name]]
        if abs(Fraction(x)) <= vals[-1]:
            d = abs(abs(Fraction(x)) - Fraction(abs(y)))
            assert all(abs(abs(Fraction(x)) - v) >= d for v in vals)


# ------------------------------------------------------------------ the interpreter
def _cast_kernel(name: str):
    @T.function
    def f(
        A: T.Tensor((64,), name),
        B: T.Tensor((64,), "float32"),
        C: T.Tensor((64,), name),
        D: T.Tensor((64,), "float64"),
        E: T.Tensor((64,), name),
        S: T.Tensor((64,), name),
    ):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
        i = T.cuda.thread_idx("x")
        B[i] = T.cast(A[i], "float32")
        C[i] = T.cast(B[i] * T.float32(3.0), name)
        E[i] = T.cast(D[i], name)
        S[i] = A[i] + A[63 - i]

    return f


@pytest.mark.parametrize("name", NEW)
def test_interp_scalar_load_store_cast(name):
    k = tirx.compile(_cast_kernel(name), target="interp")
    rng = np.random.default_rng(len(name))
    nan = ref_nan_code(name)
    a = rng.integers(0, 1 << _nbits(name), 64).astype(np.uint8)
    a[a == nan] = 0
    top = float(_TABLE[name][-1][0])
    d = rng.uniform(-top * 1.2, top * 1.2, 64)
    b, c, e, s = np.zeros(64, np.float32), *(np.zeros(64, np.uint8) for _ in range(3))
    k(a, b, c, d, e, s)
    av = [_as_float(ref_value(name, int(v))) for v in a]
    rnd = mf.fmt(name).rounding
    for i in range(64):
        assert _same(float(b[i]), av[i])
        assert c[i] == ref_encode(name, float(np.float32(av[i]) * np.float32(3)), rnd)
        assert e[i] == ref_encode(name, float(d[i]), rnd)  # float64 rounded once
        assert s[i] == ref_encode(name, float(np.float32(av[i]) + np.float32(av[63 - i])), rnd)


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("lanes", LANES)
def test_interp_vector_load_store_cast(name, lanes):
    n = 64 // lanes
    vt, ft = f"{name}x{lanes}", f"float32x{lanes}"

    @T.function
    def f(
        A: T.Tensor((64,), name),
        B: T.Tensor((64,), "float32"),
        C: T.Tensor((64,), name),
        V: T.Tensor((64,), name),
    ):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=n))
        i = T.cuda.thread_idx("x")
        V[T.Ramp((n - 1 - i) * lanes, 1, lanes)] = A[T.Ramp(i * lanes, 1, lanes)]
        B[T.Ramp(i * lanes, 1, lanes)] = T.cast(A[T.Ramp(i * lanes, 1, lanes)], ft)
        C[T.Ramp(i * lanes, 1, lanes)] = T.cast(
            B[T.Ramp(i * lanes, 1, lanes)] * T.Broadcast(T.float32(0.5), lanes), vt
        )

    k = tirx.compile(f, target="interp")
    a = ((np.arange(64) * 37 + 3) % (1 << _nbits(name))).astype(np.uint8)  # NaN codes too
    b, c, v = np.zeros(64, np.float32), np.zeros(64, np.uint8), np.zeros(64, np.uint8)
    k(a, b, c, v)
    # a copy keeps every code (NaNs become the format's one NaN code)
    kept = np.array([ref_nan_code(name) if ref_value(name, int(x)) == NAN else x for x in a], np.uint8)
    np.testing.assert_array_equal(v.reshape(n, lanes), kept.reshape(n, lanes)[::-1])
    np.testing.assert_array_equal(b, mf.decode(a, name))
    want = [ref_encode(name, float(np.float32(x) * np.float32(0.5)), mf.fmt(name).rounding) for x in b]
    np.testing.assert_array_equal(c, want)


# ------------------------------------------------------------------ CUDA
def _cuda_kernel(name: str, lanes: int = 4):
    vt, ft = f"{name}x{lanes}", f"float32x{lanes}"

    @T.function
    def f(A: T.Tensor((256,), name), B: T.Tensor((256,), "float32"), D: T.Tensor((256,), "float64")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64 // lanes))
        i = T.cuda.thread_idx("x")
        B[i] = T.cast(A[i], "float32")
        A[i + 64] = T.cast(B[i], name)
        A[i + 128] = T.cast(D[i], name)
        A[i + 192] = A[i] + A[i + 1]
        B[T.Ramp(i * lanes + 64, 1, lanes)] = T.cast(A[T.Ramp(i * lanes, 1, lanes)], ft)
        A[T.Ramp(i * lanes + 128, 1, lanes)] = T.cast(B[T.Ramp(i * lanes, 1, lanes)], vt)
        A[T.Ramp(i * lanes + 192, 1, lanes)] = A[T.Ramp(i * lanes, 1, lanes)]

    return f


@pytest.mark.parametrize("name", list(CUDA_TYPES))
def test_cuda_types(name):
    from tirx.codegen import generate

    ctype, header = CUDA_TYPES[name]
    src = generate(_cuda_kernel(name)).text
    assert f"#include <{header}>" in src
    assert f"{ctype}* __restrict__ A" in src
    assert f"{ctype}(D[i])" in src  # float64 rounds once (the double constructor)
    assert f"{ctype}(float(A[i]) + float(A[i + 1]))" in src


@pytest.mark.parametrize("name", list(CUDA_TYPES))
@pytest.mark.parametrize("lanes", [2, 4, 16, 64])
def test_cuda_compiles(name, lanes, monkeypatch, tmp_path):
    pytest.importorskip("cuda.bindings.nvrtc")
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    k = tirx.compile(_cuda_kernel(name, lanes), target="cuda")
    assert len(k.cubin) > 0
    m = k.module if hasattr(k, "info") else k
    assert m.log == "", m.log


@pytest.mark.parametrize("name", NO_CUDA)
def test_no_cuda_type_is_a_clear_error(name):
    from tirx.codegen import generate

    with pytest.raises(tirx.DiagnosticError, match=f"dtype {name} has no CUDA type"):
        generate(_cuda_kernel(name))


def test_literals_round_once_in_both_backends():
    from tirx.codegen import generate

    @T.function
    def f(A: T.Tensor((2,), "float4_e2m1fn")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        A[0] = T.float4_e2m1fn(0.25000000001)  # float32 would make it the tie 0.25 -> 0
        A[1] = T.float4_e2m1fn(0.25)

    a = np.zeros(2, np.uint8)
    tirx.compile(f, target="interp")(a)
    assert mf.decode(a, "float4_e2m1fn").tolist() == [0.5, 0.0]
    src = generate(f).text
    assert "__nv_fp4_e2m1(0.25000000001)" in src and "__nv_fp4_e2m1(0.25)" in src
