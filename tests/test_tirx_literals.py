"""A Python number beside an IR value builds what TIRx 0.1.0a4 builds (tirx/ir/fold.py).

``tests/data/tirx_golden/literals.json`` (made by ``tools/tirx_oracle/golden_literals.py``;
TIRx is not needed here) holds, for every dtype, literal, operator and operand order, TIRx's
printed binding of ``v = <expr>``: written in a kernel, and computed by a plain Python helper
called from the kernel. Each row is checked three ways: tirx's frontend build of the kernel,
and of the helper kernel, is structurally equal to ``tirx.loads`` of TIRx's text, or both
refuse (a located ``DiagnosticError`` here); and the helper's expression computed in host code
on the loaded kernel's own ``X[0]`` / ``C[0]`` is the expression TIRx bound (or a TypeError /
ValueError naming the operands). A hypothesis test then checks that the interpreter computes
such an expression as numpy computes the same casts.
"""

from __future__ import annotations

import json
import linecache
import math
import pathlib
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_frontend_util import load_module

import tirx
from tirx.errors import DiagnosticError
from tirx.ir import Bind, BufferLoad, IntImm, SeqStmt
from tirx.ir.arith import int_range
from tirx.ir.types import PrimType
from tirx.script import tirx as T

GOLDEN = json.loads((pathlib.Path(__file__).parent / "data" / "tirx_golden" / "literals.json").read_text())
ROWS = [dict(zip(GOLDEN["columns"], r)) for r in GOLDEN["rows"]]
IMPORT = "from tirx.script import tirx as T\n\n"


def _helper_expr(e: str) -> str:
    return e.replace("X[0]", "x").replace("C[0]", "c")


def _build(src: str, key: str):
    """The ``f`` of a kernel source (registered with linecache: the parser reads it there)."""
    name = f"<tirx literals {key}>"
    text = IMPORT + src
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    ns: dict = {"__name__": "tirx_literals_row"}
    exec(compile(text, name, "exec"), ns)  # the test's own generated kernel
    return ns["f"]


def _text(dtype: str, lines: str) -> str:
    return GOLDEN["text"].format(dtype=dtype, lines="\n".join("    " + ln for ln in lines.split("\n")))


def _helper_lines(row: dict) -> str:
    """TIRx's helper body, with a comparison TIRx left deferred (its ``==`` / ``!=`` in plain
    Python give an ``EqualOp`` that the binding keeps as a Python value, printed only where
    ``T.evaluate`` converts it) written as the binding tirx builds at once."""
    h = row["helper"]
    k = row["kernel"]
    if h is None:
        return k if k.startswith("ERR") else k + "\nT.evaluate(v)"
    if h.startswith("T.evaluate(") and "\n" not in h:
        return f"v: T.let[T.bool] = {h[len('T.evaluate(') : -1]}\nT.evaluate(v)"
    return h


def _bound(f) -> object:
    """The value the kernel binds to ``v`` (its first statement)."""
    s = f.body
    while isinstance(s, SeqStmt):
        s = s.stmts[0]
    assert isinstance(s, Bind), s
    return s.value


def _ids(r: dict) -> str:
    return f"{r['dtype']}: {r['expr']}"


def _python_literal_rule(row: dict) -> str | None:
    """Where tirx builds the Python's meaning instead of TIRx's row: an int literal beside
    ``& | ^ << >>`` that the other operand's dtype holds is kept (TIRx wraps it to 32 bits
    first: int64 ``x & 0xFFFFFFFF`` is ``x & -1`` there). The row's kernel line under that
    rule (``ERR`` for a shift amount past the width), or None where both agree."""
    m = re.fullmatch(r"X\[0\] (\S+) (\d+)|(\d+) (\S+) X\[0\]", row["expr"])
    if row["op"] not in ("&", "|", "^", "<<", ">>") or m is None:
        return None
    lit, first = (int(m.group(3)), True) if m.group(3) else (int(m.group(2)), False)
    t = PrimType(row["dtype"])
    if not t.is_int or t.is_bool:
        return None
    lo, hi = int_range(t)
    if not lo <= lit <= hi or ((lit + 2**31) % 2**32) - 2**31 == lit:
        return None
    if row["op"] in ("<<", ">>") and not first and not 0 <= lit < t.bits:
        return "ERR shift amount past the width"
    c = f"T.{row['dtype']}({lit})"
    e = f"{c} {row['op']} X[0]" if first else f"X[0] {row['op']} {c}"
    return f"v: T.let[T.{row['dtype']}] = {e}"


@pytest.mark.parametrize("row", ROWS, ids=_ids)
def test_literal_row_builds_what_tirx_builds(row):
    rule = _python_literal_rule(row)
    if rule is not None:  # the Python's meaning, on purpose (docs/tirx_compat.md)
        row = {**row, "kernel": rule, "helper": None}
    dtype, expr = row["dtype"], row["expr"]
    for ctx, src, want in (
        ("kernel", GOLDEN["kernel_source"].format(dtype=dtype, expr=expr), row["kernel"]),
        ("helper", GOLDEN["helper_source"].format(dtype=dtype, expr=_helper_expr(expr)), _helper_lines(row)),
    ):
        if want.startswith("ERR"):
            with pytest.raises(DiagnosticError):
                _build(src, f"{ctx} {dtype} {expr}")
            continue
        ours = _build(src, f"{ctx} {dtype} {expr}")
        theirs = tirx.loads(_text(dtype, want))
        tirx.assert_structural_equal(ours, theirs)
    # host code: the helper's Python operators on the loaded kernel's own X[0] / C[0]
    want = _helper_lines(row)
    if want.startswith("ERR"):
        f = tirx.loads(_text(dtype, "T.evaluate(0)"))
    else:
        f = tirx.loads(_text(dtype, want))
    x, c = (BufferLoad(buf, (IntImm(0),)) for _, buf in f.buffer_map)
    h = eval(f"lambda x, c: {_helper_expr(expr)}", {"T": T})  # the row's own expression
    if want.startswith("ERR"):
        with pytest.raises((TypeError, ValueError, ZeroDivisionError)):
            h(x, c)
        return
    assert tirx.structural_equal(h(x, c), _bound(f)), (h(x, c), want)


def test_golden_table_covers_the_probe():
    dtypes = {r["dtype"] for r in ROWS}
    assert {"int8", "uint64", "bool", "float16", "bfloat16", "float64", "float8_e4m3fn"} <= dtypes
    ops = {r["op"] for r in ROWS}
    assert {"+", "/", "//", "%", "<<", "&", "==", "T.min", "T.if_then_else"} <= ops
    assert len(ROWS) >= 7000
    assert sum(r["kernel"].startswith("ERR") for r in ROWS) > 1000  # TIRx's refusals are rows too


def test_refusal_outside_a_kernel_names_the_operands():
    x = tirx.ir.Var("x", "int8")
    with pytest.raises(TypeError, match="int8"):
        x / 2
    with pytest.raises(TypeError, match=r"int8 and the float 2\.5"):
        x // 2.5
    with pytest.raises(ValueError, match="int8"):
        x & 300
    y = tirx.ir.Var("y", "float16")
    with pytest.raises(TypeError, match="float16"):
        y % 1


# ------------------------------------------------------------------ the interpreter agrees
_DT = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool",
       "float16", "float32", "float64"]  # fmt: skip
_OPS = ["+", "-", "*", "<", "<=", ">", ">=", "==", "!=", "T.min", "T.max"]
_NP_OPS = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "<": np.less, "<=": np.less_equal,
    ">": np.greater, ">=": np.greater_equal, "==": np.equal, "!=": np.not_equal,
    "T.min": np.minimum, "T.max": np.maximum,
}  # fmt: skip
_LIT_DT = {bool: "bool", int: "int32", float: "float32"}


def _np_dtype(d: str) -> np.dtype:
    return np.dtype("bool") if d == "bool" else np.dtype(d)


def _matched(xd: str, lit: object) -> str:
    """The dtype TIRx computes ``x op lit`` in (its BinaryOpMatchTypes on the literal's own
    dtype): the reference the interpreter's result is checked against."""
    ld = _LIT_DT[type(lit)]
    if type(lit) is int and not -(2**31) <= lit < 2**31:
        ld = "int64"
    if xd == ld:
        return xd
    xf, lf = xd.startswith("float"), ld.startswith("float")
    if xf and lf:
        return xd if int(xd[5:]) >= int(ld[5:]) else ld
    if xf or lf:
        return xd if xf else ld

    def kb(d: str) -> tuple[str, int]:
        return (
            ("uint", 1)
            if d == "bool"
            else (("uint", int(d[4:])) if d.startswith("uint") else ("int", int(d[3:])))
        )

    (kx, bx), (_, bl) = kb(xd), kb(ld)
    if bx != bl:
        return xd if bx > bl else ld
    return xd if kx == "uint" else ld


def _value(d: str, draw_int: int, draw_float: float) -> object:
    if d == "bool":
        return bool(draw_int & 1)
    if d.startswith("float"):
        return np.array(draw_float, np.float64).astype(d).item()
    info = np.iinfo(d)
    return int(info.min + draw_int % (int(info.max) - int(info.min) + 1))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    xd=st.sampled_from(_DT),
    op=st.sampled_from(_OPS),
    lit=st.one_of(
        st.booleans(),
        st.integers(-(2**31), 2**31 - 1),
        st.sampled_from([0, 1, -1, 2, 127, 255, 2**31 - 1]),
        st.floats(-1e4, 1e4, allow_nan=False, width=32),
        st.sampled_from([0.1, 2.5, -0.0, 0.5, 1.0]),
    ),
    left=st.booleans(),
    xi=st.integers(0, 2**64),
    xf=st.floats(-1e4, 1e4, allow_nan=False, width=32),
)
def test_interpreter_computes_the_casts_numpy_computes(xd, op, lit, left, xi, xf):
    """``v = x op lit`` (either order) on the interpreter equals numpy on both operands cast to
    the dtype TIRx matched them to, then the op in that dtype (comparisons give a bool)."""
    md = _matched(xd, lit)
    if md == "bool" and op in ("+", "-", "*"):
        return  # bool arithmetic: TIRx builds it, the program's meaning is C++'s (not numpy's)
    a, b = ("X[0]", repr(lit)) if left else (repr(lit), "X[0]")
    expr = f"{op}({a}, {b})" if op.startswith("T.") else f"{a} {op} {b}"
    src = (
        "@T.function\n"
        f'def f(X: T.Tensor((1,), "{xd}"), O: T.Tensor((1,), "float64")):\n'
        "    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))\n"
        f'    O[0] = T.Cast("float64", {expr})\n'
    )
    f = _build(src, f"hyp {xd} {expr}")
    xv = _value(xd, xi, xf)
    X = np.array([xv], _np_dtype(xd))
    O = np.zeros(1, np.float64)
    tirx.compile(f, target="interp")(X, O)
    with np.errstate(all="ignore"):
        xa = X.astype(_np_dtype(md))
        ld = "int64" if type(lit) is int and not -(2**31) <= lit < 2**31 else _LIT_DT[type(lit)]
        la = np.array([lit], _np_dtype(ld)).astype(_np_dtype(md))  # the literal in its own dtype first
        p, q = (xa, la) if left else (la, xa)
        want = _NP_OPS[op](p, q).astype(_np_dtype(md) if op in ("+", "-", "*", "T.min", "T.max") else bool)
    w = float(want.astype(np.float64)[0])
    got = float(O[0])
    assert (math.isnan(w) and math.isnan(got)) or w == got, (expr, xd, xv, md, w, got, tirx.dumps(f))


def test_a_mask_past_32_bits_keeps_its_value_as_the_python_says():
    """int64 ``x & 0xFFFFFFFF`` masks the low 32 bits and ``x & 2**40`` tests bit 40 (TIRx wraps
    the literal to 32 bits first: ``x & -1``, ``x & 0``, found by held-out round 15); uint32
    ``u & 0xFFFFFFFF`` is accepted (TIRx: "cannot make uint from negative value")."""
    src = (
        "from tirx.script import tirx as T\n\n"
        "@T.function\n"
        "def f(A: T.Tensor((4,), 'int64'), B: T.Tensor((4,), 'int64'), U: T.Tensor((4,), 'uint32'),\n"
        "      V: T.Tensor((4,), 'uint32')):\n"
        "    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=4))\n"
        "    tx = T.cuda.thread_idx('x')\n"
        "    B[tx] = (A[tx] & 0xFFFFFFFF) + (A[tx] & 2**40)\n"
        "    V[tx] = U[tx] & 0xFFFFFFFF ^ 0x80000000\n"
    )
    f = load_module(src, "mask").f
    a = np.array([2**41 + 2**40 + 5, -1, 7, 2**33 + 2**32 + 9], np.int64)
    u = np.array([1, 2, 3, 0xFFFFFFFF], np.uint32)
    b, v = np.zeros(4, np.int64), np.zeros(4, np.uint32)
    tirx.compile(f, target="interp")(a, b, u, v)
    assert b.tolist() == [int((x & 0xFFFFFFFF) + (x & 2**40)) for x in a.tolist()]
    assert v.tolist() == [(x & 0xFFFFFFFF) ^ 0x80000000 for x in u.tolist()]
    cuda = tirx.codegen.generate(f).text
    assert "& 4294967295LL" in cuda and "& 1099511627776LL" in cuda
    with pytest.raises(DiagnosticError, match="shift amount 2147483648"):  # past any width
        load_module(src.replace("& 2**40", "<< 2**31"), "shift")


@pytest.mark.parametrize("name", ["pow", "atan2", "fmod", "hypot", "copysign", "nextafter"])
def test_two_argument_math_keeps_a_literal_s_own_dtype(name):
    """TIRx's ``T.hypot(x, 2.0)`` with a float64 ``x`` is ``T.hypot(x, T.float32(2.0))`` (a Python
    float is float32, an int int32: not the other argument's dtype, as ``T.max`` would make it;
    held-out round 20). tirx builds the same IR, prints it as TIRx does, its CUDA converts the
    float32 argument to double (``pow(double, float)`` is ambiguous in C++), and the
    interpreter computes with the float32 value."""
    src = f"""
from tirx.script import tirx as T

@T.function
def f(x: T.Tensor((8,), "float64"), y: T.Tensor((8,), "float64"), z: T.Tensor((8,), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
    i = T.cuda.thread_idx("x")
    y[i] = T.{name}(x[i], 1.1)
    z[i] = T.{name}(z[i], 2)
"""
    f = load_module(src, name).f
    text = tirx.dumps(f)
    assert re.search(rf"y\[i\] = T\.{name}\(x\[i\], T\.float32\(1\.1[0-9]*\)\)", text), text
    assert f"z[i] = T.{name}(z[i], 2)" in text
    assert tirx.structural_equal(tirx.loads(text), f)
    cuda = tirx.codegen.generate(f).text
    assert re.search(rf"y\[i\] = {name}\(x\[i\], \(\(double\)[^;]*f\)\);", cuda), cuda
    assert f"z[i] = {name}f(z[i], 2);" in cuda
    x = np.linspace(0.5, 4.0, 8)
    y = np.zeros(8)
    z = np.linspace(1.0, 2.0, 8).astype(np.float32)
    ref = {"pow": np.power, "atan2": np.arctan2, "fmod": np.fmod, "hypot": np.hypot,
           "copysign": np.copysign, "nextafter": np.nextafter}[name]  # fmt: skip
    tirx.compile(f, target="interp")(x, y, z)
    np.testing.assert_allclose(y, ref(x, np.float64(np.float32(1.1))), rtol=1e-12)
    assert not np.allclose(y, ref(x, 1.1), rtol=1e-12, atol=0) or name in ("copysign", "nextafter")
