"""One meaning per math op: the interpreter against the GPU, and against numpy/math references.

Every math op of the op table (and the arithmetic, min/max, division and cast nodes) runs on
edge inputs (ties 0.5/1.5/2.5/-0.5, +-0, +-inf, NaN, denormals, huge values, integer extremes)
for float32, float64, float16 and bfloat16 (integer ops for every integer width):

- ``test_math_kernels_compile`` (no GPU, runs in CI): every kernel goes through CUDA codegen
  and NVRTC to a cubin.
- ``test_interp_matches_reference`` (no GPU, runs in CI): the interpreter against references
  computed independently with Python's ``math``/``fractions`` and numpy in float64.
- ``test_interp_matches_gpu`` (marked ``gpu``, skipped without one): the same kernels on the
  GPU (NVRTC with ``--fmad=false``) against the interpreter. Run on a GPU host with
  ``python -m pytest tests/test_math_gpu.py``; a failure prints every mismatch (op, dtype,
  inputs, both results, distance in ulps).

Comparison (``_compare``): NaN equals NaN (any payload). Exact ops (rounding ops, abs, sqrt,
fmod, fma, + - * /, min/max, floor division/modulo, casts, predicates, integer ops) must agree
bit for bit, signed zeros included. Transcendental ops may differ by a few ulps of the dtype:
CUDA's documented maximum error (CUDA C++ Programming Guide, "Mathematical Functions") plus
the interpreter's own (float32 and the half types are computed in float64 and rounded once,
so about half an ulp; float64 uses numpy's float64 functions, within 2 ulps). Half types
(float16, bfloat16) compute the float32 function and round, so they may differ by 1 ulp of
the half type. Integer division by zero and INT_MIN / -1 are left out (undefined on the GPU;
the interpreter reports a division by zero, which the kernel therefore guards, and wraps the
quotient).
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np
import pytest

import tirx
import tirx.interp as ti
from tirx.ir import Add, Cast, Div, FloorDiv, FloorMod, Max, Min, Mod, Mul, Select, Sub, TensorType, const
from tirx.ir.op import all_ops, call
from tirx.ir.types import PrimType
from tirx.surface.builder import IRBuilder, launch_args
from tirx.testing.opcheck import (
    CUDA_ULP_F32,
    EXACT_OPTS,
    FLOATS,
    INTS,
    compare,
    gpu_tolerance,
    round_exact,
    values,
)
from tirx.testing.opcheck import as_dtype as _as_dtype
from tirx.testing.opcheck import fmt as _fmt
from tirx.testing.opcheck import from_torch as _from_torch
from tirx.testing.opcheck import gpu as _gpu
from tirx.testing.opcheck import np_dtype as _np
from tirx.testing.opcheck import to_torch as _to_torch

UNARY = (
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "tanh", "sin", "cos",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "erf", "sigmoid", "fabs", "abs", "floor", "ceil",
    "round", "trunc", "nearbyint",
)  # fmt: skip
BINARY_OPS = ("pow", "atan2", "fmod", "hypot", "copysign")
NODES = {"add": Add, "sub": Sub, "mul": Mul, "div": Div, "mod": Mod, "floordiv": FloorDiv,
         "floormod": FloorMod, "min": Min, "max": Max}  # fmt: skip
PREDICATES = ("isnan", "isinf", "isfinite")
INT_UNARY = ("abs", "fabs", "floor", "ceil", "round", "trunc", "nearbyint", "popcount", "clz")
INT_NODES = ("add", "sub", "mul", "div", "mod", "floordiv", "floormod", "min", "max")
CAST_TO = FLOATS + INTS + ("bool",)
EXACT = {
    "sqrt",
    "fabs",
    "abs",
    "floor",
    "ceil",
    "round",
    "trunc",
    "nearbyint",
    "fmod",
    "fma",
    "copysign",
} | set(NODES)

# ----------------------------------------------------------------------------- inputs
_F32_MAX = float(np.finfo(np.float32).max)
_EDGE = [
    0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 1.0, -1.0, 2.0, 0.1, -0.1, 3.7, -3.7, 0.25,
    0.49999997, 0.50000006, 1e-3, 7.0, 10.0, 20.5, 88.5, -88.5, 100.0, -103.0, 710.0, 1e5, 1e10,
    -1e10, 2.0**22 + 0.5, 2.0**23, 2.0**24 + 2, 2.0**31, -(2.0**31), 3e9, -3e9, 1e19, 2.0**63,
    -(2.0**63), 1e30, 3e38, _F32_MAX, -_F32_MAX, 1e300, 2.0**52 + 0.5, 1.1754944e-38, 1e-40, -1e-40,
    1.4e-45, 5e-324, 1e-310, 6e-5, 6e-8, 65504.0, 65520.0, 1000.5, math.pi, -math.pi, math.inf,
    -math.inf, math.nan,
]  # fmt: skip
_PAIR = [0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 1.0, -1.0, 2.0, 3.0, -7.0, 1e-40, 1e30, 65504.0, math.inf,
         -math.inf, math.nan]  # fmt: skip
_INT_EDGE = [0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100, 127, -128, 255, 32767, -32768, 65535,
             2**31 - 1, -(2**31), 2**32 - 1, 2**63 - 1, -(2**63), 2**64 - 1, 12345678901]  # fmt: skip


def float_inputs(dt: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A, B, C: the edge list (A alone drives unary ops), then every (A, B) pair of the pair
    list; C is B rolled (for fma)."""
    a = _EDGE + [x for x in _PAIR for _ in _PAIR]
    b = _EDGE[::-1] + [y for _ in _PAIR for y in _PAIR]
    c = b[7:] + b[:7]
    return tuple(_as_dtype(np.array(v, np.float64), dt) for v in (a, b, c))


def int_inputs(dt: str) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dt)
    vals = sorted(
        {int(np.array(v).astype(np.int64 if v < 2**63 else np.uint64).astype(dt)) for v in _INT_EDGE}
    )
    vals = [v for v in vals if info.min <= v <= info.max]
    a = [x for x in vals for _ in vals]
    b = [y for _ in vals for y in vals]
    return np.array(a, dtype=dt), np.array(b, dtype=dt)


# ----------------------------------------------------------------------------- kernels
def _outputs_float(dt: str) -> list[tuple[str, str]]:
    """(output label, output dtype) of the float kernel of ``dt``."""
    outs = [(op, dt) for op in UNARY + BINARY_OPS + ("fma",) + tuple(NODES)]
    outs += [(p, "bool") for p in PREDICATES]
    outs += [(f"cast:{to}", to) for to in CAST_TO if to != dt]
    return outs


def _outputs_int(dt: str) -> list[tuple[str, str]]:
    outs = [(op, "int32" if op == "clz" else dt) for op in INT_UNARY + INT_NODES]  # T.clz is int32
    outs += [(f"cast:{to}", to) for to in CAST_TO if to != dt]
    return outs


def _expr(label: str, a, b, c, out_dt: str):
    if label.startswith("cast:"):
        return Cast(PrimType(out_dt), a)
    if label in NODES:
        e = NODES[label](a, b)
        if label in ("div", "mod", "floordiv", "floormod") and PrimType(out_dt).is_int:
            # by zero: undefined (the interpreter's DivisionByZeroError); those lanes are
            # skipped (_skip_mask), so the division is taken only where the divisor is not 0
            e = Select(b != const(0, b.ty), e, const(0, e.ty))
        return e
    if label in BINARY_OPS:
        return call(label, a, b)
    if label == "fma":
        return call("fma", a, b, c)
    return call(label, a)


def build_kernel(dt: str, n: int):
    """``O_k[i] = op_k(A[i], B[i], C[i])`` for every output of ``dt``'s kernel."""
    outs = _outputs_float(dt) if dt in FLOATS else _outputs_int(dt)
    bld = IRBuilder()
    with bld, bld.function(f"math_{dt}"):
        ins = [bld.param(nm, TensorType((n,), PrimType(dt), "global")) for nm in "ABC"]
        os_ = [
            bld.param(f"O{k}", TensorType((n,), PrimType(odt), "global")) for k, (_, odt) in enumerate(outs)
        ]
        with bld.device_entry(*launch_args((n + 127) // 128, 128)):
            i = bld.bind("i", call("cuda.block_idx", "x") * 128 + call("cuda.thread_idx", "x"))
            with bld.if_(i < n):
                a, b, c = (x[i] for x in ins)
                for (label, odt), o in zip(outs, os_):
                    o[i] = _expr(label, a, b, c, odt)
    return bld.get(), outs


def kernel_inputs(dt: str) -> list[np.ndarray]:
    if dt in FLOATS:
        return list(float_inputs(dt))
    a, b = int_inputs(dt)
    return [a, b, b[::-1].copy()]


def _out_arrays(outs, n):
    return [np.zeros(n, dtype=_np(odt) if odt != "bool" else np.bool_) for _, odt in outs]


def run_interp(dt: str) -> tuple[list, list[np.ndarray], list[np.ndarray]]:
    ins = kernel_inputs(dt)
    f, outs = build_kernel(dt, len(ins[0]))
    res = _out_arrays(outs, len(ins[0]))
    ti.compile(f)(*ins, *res)
    return outs, ins, res


# ----------------------------------------------------------------------------- comparison
def _skip_mask(label: str, dt: str, ins: list[np.ndarray]) -> np.ndarray:
    """Lanes whose result the GPU leaves undefined (integer division by 0, INT_MIN / -1)."""
    n = len(ins[0])
    if dt in FLOATS or label not in ("div", "mod", "floordiv", "floormod"):
        return np.zeros(n, bool)
    a, b = ins[0].astype(object), ins[1].astype(object)
    bad = b == 0
    if np.dtype(dt).kind == "i":
        bad |= (a == np.iinfo(dt).min) & (b == -1)
    return bad.astype(bool)


def report(rows: list[tuple], title: str) -> str:
    lines = [f"{len(rows)} mismatch(es) {title}:", "op | dtype | inputs | expected | got | ulps"]
    lines += [" | ".join(str(c) for c in r) for r in rows[:200]]
    return "\n".join(lines)


def _diff(dt, outs, ins, want, got, tol_of):
    rows = []
    for (label, odt), w, g in zip(outs, want, got):
        skip = _skip_mask(label, dt, ins)
        for k, d in compare(odt, w, g, tol_of(label, odt), skip):
            args = ", ".join(_fmt(x, k, dt) for x in ins[: _arity(label)])
            rows.append((label, dt, args, _fmt(w, k, odt), _fmt(g, k, odt), d))
    return rows


def _arity(label: str) -> int:
    if label == "fma":
        return 3
    if label in BINARY_OPS or label in NODES:
        return 2
    return 1


# ----------------------------------------------------------------------------- references
def _f64_fn(op: str):
    f = {
        "exp": math.exp, "exp2": lambda x: 2.0**x, "exp10": lambda x: 10.0**x, "log": math.log,
        "log2": math.log2, "log10": math.log10, "log1p": math.log1p, "sqrt": math.sqrt,
        "rsqrt": lambda x: 1.0 / math.sqrt(x), "tanh": math.tanh, "sin": math.sin, "cos": math.cos,
        "tan": math.tan, "asin": math.asin, "acos": math.acos, "atan": math.atan, "sinh": math.sinh,
        "cosh": math.cosh, "erf": math.erf, "sigmoid": lambda x: 1.0 / (1.0 + math.exp(-x)),
        "pow": math.pow, "atan2": math.atan2, "hypot": math.hypot,
    }[op]  # fmt: skip

    def g(*xs):
        try:
            return f(*xs)
        except (ValueError, ZeroDivisionError):
            return _special(op, *xs)
        except OverflowError:
            return _overflow(op, *xs)

    return g


def _special(op, *xs):
    x = xs[0]
    if op in ("log", "log2", "log10") and x == 0:
        return -math.inf
    if op == "log1p" and x == -1:
        return -math.inf
    if op == "rsqrt" and x == 0:
        return math.copysign(math.inf, x)
    if op == "pow":
        return float(np.power(np.float64(xs[0]), np.float64(xs[1])))
    return math.nan


def _overflow(op, *xs):
    x = xs[0]
    if op == "sigmoid":
        return 0.0
    if op in ("sinh", "tanh"):
        return math.copysign(math.inf, x)
    if op == "pow":
        return float(np.power(np.float64(xs[0]), np.float64(xs[1])))
    return math.inf


def _ref_fma(a: float, b: float, c: float) -> float | Fraction:
    """a * b + c exactly (a Fraction) where finite, else its IEEE special value."""
    if all(math.isfinite(v) for v in (a, b, c)):
        if a == 0 or b == 0:
            return (a * b) + c  # an exact zero product: keeps the IEEE sign of zero rules
        v = Fraction(a) * Fraction(b) + Fraction(c)
        return v if v != 0 else 0.0
    if math.isfinite(a) and math.isfinite(b):
        return c
    with np.errstate(all="ignore"):
        return float(np.float64(a) * np.float64(b) + np.float64(c))


def _ref_min(a, b, is_max=False):
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    if a == b == 0:  # -0 < +0
        neg = math.copysign(1, a) < 0 or math.copysign(1, b) < 0
        pos = math.copysign(1, a) > 0 or math.copysign(1, b) > 0
        return (0.0 if pos else -0.0) if is_max else (-0.0 if neg else 0.0)
    return max(a, b) if is_max else min(a, b)


def _ref_float_exact(label: str, a: float, b: float, c: float) -> float:
    """Exact ops on float64 numbers (then rounded once to the dtype by the caller)."""
    if label in ("fabs", "abs"):
        return abs(a)
    if label == "copysign":
        return math.copysign(a, b)
    if label == "floor":
        return math.floor(a) if math.isfinite(a) else a
    if label == "ceil":
        return math.ceil(a) if math.isfinite(a) else a
    if label == "trunc":
        return math.trunc(a) if math.isfinite(a) else a
    if label in ("round", "nearbyint"):
        return round(a) if math.isfinite(a) else a  # Python's round: ties to even
    if label == "sqrt":
        return math.sqrt(a) if a >= 0 or a != a else (-0.0 if a == 0 else math.nan)
    if label in ("fmod", "mod"):
        return (
            math.fmod(a, b)
            if math.isfinite(a) and b != 0 and b == b
            else (a if math.isinf(b) and math.isfinite(a) else math.nan)
        )
    if label == "min":
        return _ref_min(a, b)
    if label == "max":
        return _ref_min(a, b, True)
    raise KeyError(label)


def _signed_int(v: float, zero_sign: float) -> float:
    """Integer-valued results keep the sign of zero (floor(-0.5) is -0.0)."""
    return math.copysign(0.0, zero_sign) if v == 0 else float(v)


def _round_to(x64: float, dt: str) -> np.ndarray:
    """One float64 number rounded once to ``dt`` (as a 1-element stored array)."""
    return _as_dtype(np.array([x64], np.float64), dt)


def reference_float(dt: str, label: str, a: float, b: float, c: float) -> np.ndarray:
    """The op's meaning on stored values a, b, c of ``dt`` (float64 numbers), as a stored
    1-element array of the output dtype."""
    half = dt in ("float16", "bfloat16")
    via = "float32" if half else dt  # half types: the float32 op, then rounded
    if label.startswith("cast:"):
        to = label[5:]
        if to == "bool":
            return np.array([a != 0], np.bool_)
        if to in FLOATS:
            return _round_to(a, to)
        info = np.iinfo(to)
        if math.isnan(a):
            v = 0
        elif a == math.inf or a >= info.max:
            v = info.max
        elif a == -math.inf or a <= info.min:
            v = info.min
        else:
            v = max(info.min, min(info.max, math.trunc(a)))
        return np.array([v], dtype=to)
    if label in PREDICATES:
        return np.array([{"isnan": math.isnan, "isinf": math.isinf, "isfinite": math.isfinite}[label](a)])
    if label in ("add", "sub", "mul", "div"):
        with np.errstate(all="ignore"):
            x, y = np.array([a], via), np.array([b], via)
            r = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[label](x, y)
        return _round_to(float(r[0]), dt)
    if label in ("floordiv", "floormod"):  # a - floor(a / b) * b, each step rounded to `via`
        with np.errstate(all="ignore"):
            x, y = np.array([a], via), np.array([b], via)
            q = np.floor(x / y)
            r = q if label == "floordiv" else x - q * y
        return _round_to(float(r[0]), dt)
    if label == "fma":
        r = _ref_fma(a, b, c)
        return _round_to(round_exact(r, via), dt)
    if label in EXACT or label in ("min", "max", "mod"):
        r = _ref_float_exact(label, a, b, c)
        if label in ("floor", "ceil", "trunc", "round", "nearbyint"):
            r = _signed_int(r, a)
        return _round_to(r, dt)
    r = _f64_fn(label)(*((a, b) if label in BINARY_OPS else (a,)))
    if half:
        r = float(np.float32(r)) if math.isfinite(r) or math.isnan(r) else r
    return _round_to(r, dt)


def _wrap(v: int, dt: str) -> int:
    info = np.iinfo(dt)
    m = 1 << (8 * np.dtype(dt).itemsize)
    v %= m
    return v - m if v > info.max else v


def reference_int(dt: str, label: str, a: int, b: int) -> np.ndarray:
    bits = 8 * np.dtype(dt).itemsize
    if label.startswith("cast:"):
        to = label[5:]
        if to == "bool":
            return np.array([a != 0])
        if to in FLOATS:
            return _round_to(round_exact(a, to), to)
        return np.array([_wrap(a, to)], dtype=to)
    if label in ("abs", "fabs"):
        r = abs(a)
    elif label in ("floor", "ceil", "round", "trunc", "nearbyint"):
        r = a
    elif label == "popcount":
        r = bin(a % (1 << bits)).count("1")
    elif label == "clz":
        return np.array([bits - (a % (1 << bits)).bit_length()], dtype="int32")  # T.clz is int32
    elif label in ("div", "mod", "floordiv", "floormod") and (b == 0 or (a == np.iinfo(dt).min and b == -1)):
        r = 0  # left out of the comparison
    elif label == "div":
        r = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    elif label == "mod":
        r = a - b * (abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1))
    elif label == "floordiv":
        r = a // b
    elif label == "floormod":
        r = a % b
    else:
        r = {"add": a + b, "sub": a - b, "mul": a * b, "min": min(a, b), "max": max(a, b)}[label]
    return np.array([_wrap(r, dt)], dtype=dt)


def _ref_tolerance(label: str, dt: str) -> int:
    """Interpreter vs the references: exact ops bitwise; float32/half functions are the
    float64 function rounded once (1 ulp for the reference's own float64 error);
    float64 numpy functions vs Python's math within 2 ulps."""
    if label in EXACT or label in PREDICATES or label.startswith("cast:") or label not in CUDA_ULP_F32:
        return 0
    return 2 if dt == "float64" else 1


# ----------------------------------------------------------------------------- tests
ALL_DTYPES = FLOATS + INTS


def test_every_math_op_is_covered():
    """A math op added to the op table must be added here (and so checked on the GPU)."""
    not_math = {"address_of", "reinterpret", "call_extern", "call_pure_extern", "ptr_byte_offset",
                "is_aligned", "if_then_else"}  # fmt: skip
    table = {n for n in all_ops(builtin_only=True) if "." not in n} - not_math
    # nextafter (its reference is per dtype) and ldexp (an integer exponent) are compared with the
    # interpreter on the GPU by the generated per-op tests (tests/test_ops_generated.py)
    covered = (
        set(UNARY) | set(BINARY_OPS) | {"fma"} | set(PREDICATES) | set(INT_UNARY) | {"nextafter", "ldexp"}
    )
    # ops added since (acosh, likely, gpu_dp4a, ...) are compared by the generated per-op
    # differential tests, unless that file skips them with a reason (assume: tested apart)
    from test_ops_generated import skipped

    from tirx.ir.op import impl

    ops = all_ops(builtin_only=True)
    covered |= {
        n
        for n in table
        if impl("cuda", ops[n]) and callable(impl("interp", ops[n])) and not skipped(n, "differential")
    }
    covered |= {n for n in table if skipped(n, "differential")}
    # ops the CUDA backend refuses by name (host runtime, LLVM, WMMA: tirx/ops/gpu_generic.not_on_cuda)
    covered |= {n for n in table if getattr(impl("cuda", ops[n]), "refuses", None)}
    assert table <= covered, f"math ops without an interpreter-vs-GPU check: {sorted(table - covered)}"


def test_round_is_ties_to_even():
    """Item #12.4: T.round is rintf (ties to even) in the interpreter, as CUDA lowers it."""
    _, ins, res = run_interp("float32")
    outs = _outputs_float("float32")
    got = dict(zip((lb for lb, _ in outs), res))
    x = ins[0][:9]  # 0, -0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5
    np.testing.assert_array_equal(got["round"][:9], [0, -0.0, 0, -0.0, 2, -2, 2, -2, 4])
    assert list(np.signbit(got["round"][:9])) == list(np.signbit(x))
    np.testing.assert_array_equal(got["round"], got["nearbyint"])


@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_interp_matches_reference(dt):
    outs, ins, res = run_interp(dt)
    want = []
    for label, odt in outs:
        col = []
        for k in range(len(ins[0])):
            if dt in FLOATS:
                a, b, c = (float(values(x[k : k + 1], dt)[0]) for x in ins)
                with np.errstate(all="ignore"):
                    col.append(reference_float(dt, label, a, b, c))
            else:
                col.append(reference_int(dt, label, int(ins[0][k]), int(ins[1][k])))
        want.append(np.concatenate(col).astype(_np(odt) if odt != "bool" else np.bool_))
    rows = _diff(dt, outs, ins, want, res, _ref_tolerance)
    assert not rows, report(rows, f"interpreter (got) vs reference (expected), {dt}")


@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_math_kernels_compile(dt, monkeypatch, tmp_path):
    """CUDA codegen + NVRTC for every kernel (no GPU needed)."""
    pytest.importorskip("cuda.bindings.nvrtc")
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    f, _ = build_kernel(dt, len(kernel_inputs(dt)[0]))
    k = tirx.compile(f, target="cuda -arch=sm_90a", options=EXACT_OPTS, cache=False)
    assert len(k.cubin) > 0


@pytest.mark.gpu
@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_interp_matches_gpu(dt):
    torch, why = _gpu()
    if torch is None:
        pytest.skip(why)
    outs, ins, res = run_interp(dt)
    f, _ = build_kernel(dt, len(ins[0]))
    k = tirx.compile(f, target="cuda", options=EXACT_OPTS, cache=False)
    dev_in = [_to_torch(torch, x, dt) for x in ins]
    dev_out = [_to_torch(torch, np.zeros_like(r), odt) for r, (_, odt) in zip(res, outs)]
    k(*dev_in, *dev_out)
    torch.cuda.synchronize()
    got = [_from_torch(torch, t, odt) for t, (_, odt) in zip(dev_out, outs)]
    rows = _diff(dt, outs, ins, res, got, lambda label, odt: gpu_tolerance(label, odt))
    if rows:
        print(report(rows, f"interpreter (expected) vs GPU (got), {dt}"))
    assert not rows, report(rows, f"interpreter (expected) vs GPU (got), {dt}")


def test_reference_helpers_are_exact():
    """The test's own rounding (the reference for every cast and half-type result)."""
    assert round_exact(1.0 + 2**-8, "bfloat16") == 1.0  # tie -> even
    assert round_exact(1.0 + 3 * 2**-8, "bfloat16") == 1.0 + 2**-6
    assert round_exact(2**24 + 2**16 + 1, "bfloat16") == 2**24 + 2**17  # no detour via float32
    assert round_exact(65520.0, "float16") == math.inf and round_exact(65519.0, "float16") == 65504.0
    assert (
        round_exact(2.0**-1075, "float64") == 0.0
        and round_exact(Fraction(3, 2**1076), "float64") == 2.0**-1074
    )
    assert (
        round_exact(-(2**-150), "float32") == -0.0
        and math.copysign(1, round_exact(-(2**-150), "float32")) < 0
    )
    x = struct.unpack("<f", struct.pack("<I", 0x3F800001))[0]
    assert round_exact(x, "float32") == x
