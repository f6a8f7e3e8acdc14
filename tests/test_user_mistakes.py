"""Mistakes a user makes in the Python frontend (held-out round 24, TIRx's diagnostics as the
reference): each refused where it is written with a located error that names the fix, never
built into something else in silence; and the spellings TIRx accepts that tirx refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_frontend_util import load_module

import tirx
from tirx.ir.types import DTYPE_SHORT, parse_dtype

_MODULE = """
from tirx.script import tirx as T
from tirx.script import ir as I

@I.ir_module
class Module:
    @T.function
    def fill(A: T.Tensor((64,), "float32")):
        T.evaluate(0)

    @T.function
    def fill(A: T.Tensor((64,), "float32")):
        T.evaluate(1)
"""


def test_a_module_defining_a_function_twice_is_refused_at_the_second():
    """Python's class body keeps the last ``fill``: the first would be lost without a word."""
    with pytest.raises(tirx.DiagnosticError, match="'fill' is defined twice in module Module") as e:
        load_module(_MODULE, "dupmod")
    second = [n for n, ln in enumerate(_MODULE.split("\n"), 1) if "def fill" in ln][1]
    assert e.value.span is not None and e.value.span.line == second


_KERNEL = """
from tirx.script import tirx as T

@T.function
def f(A: T.Tensor((64,), {dtype!r}, scope={scope!r})):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
    i = T.cuda.thread_idx("x")
    {body}
"""


def _kernel(body: str, dtype: str = "float32", scope: str = "global"):
    return load_module(_KERNEL.format(dtype=dtype, scope=scope, body=body), "mistake").f


@pytest.mark.parametrize("scope,near", [("globl", "global"), ("shraed", "shared"), ("locl", "local")])
def test_a_misspelled_tensor_scope_is_refused_with_the_near_name(scope, near):
    with pytest.raises(
        (ValueError, tirx.DiagnosticError), match=f"unknown storage scope '{scope}'.*'{near}'"
    ):
        _kernel("A[i] = T.float32(0)", scope=scope)


@given(
    dt=st.sampled_from(["float16", "bfloat16", "float32", "float8_e4m3fn", "float8_e5m2"]),
    over=st.floats(1.0001, 1e6),
    sign=st.sampled_from([1, -1]),
)
@settings(max_examples=25, deadline=None)
def test_a_float_literal_beyond_its_dtype_is_refused(dt, over, sign):
    """``T.float16(65520.0)`` would be inf on the device: refused where written, as TIRx refuses
    it; the largest finite value, an infinity and a NaN are taken."""
    from tirx.script.tirx import _limits

    hi = _limits(dt)[1]
    v = sign * hi * over
    with pytest.raises(tirx.DiagnosticError, match=f"beyond {dt}'s finite range"):
        _kernel(f"A[i] = T.float32(T.{dt}({v!r}))")
    for ok in (repr(sign * hi), "'inf'", "'nan'"):
        _kernel(f"A[i] = T.float32(T.{dt}({ok}))")


def test_a_walrus_outside_t_let_says_where_it_binds():
    with pytest.raises(
        tirx.DiagnosticError, match=r"the walrus operator \(j := \.\.\.\) binds only inside T\.Let"
    ):
        _kernel("if (j := i + 1) < 64:\n        A[j] = T.float32(0)")


@pytest.mark.parametrize(
    "spelled,full",
    [("float", "float32"), ("int", "int32"), ("uint", "uint32"), ("floatx4", "float32x4"), ("bf16x2", "bfloat16x2"),
     *DTYPE_SHORT.items()],
)  # fmt: skip
def test_short_dtype_strings_are_taken_as_tirx_takes_them(spelled, full):
    """``T.Tensor((n,), "f16")``, ``"float"`` (32 bits), ``"int"``: TIRx's spellings, printed in full."""
    assert str(parse_dtype(spelled)) == full
    if "x" not in full:
        f = _kernel("A[i] = A[i]", dtype=spelled)
        assert f"T.Tensor((64,), T.{full})" in tirx.dumps(f)


_JIT = """
from __future__ import annotations
from tirx.script import tirx as T

@T.jit
def kernel(A: T.Tensor((4,), "float32"), B: T.Optional(T.Tensor((4,), "float32")),
           C: T.Tensor((4,), "float32") = None, *, N: T.constexpr = 4, M: T.constexpr):
    if T.constexpr(B is None):
        A[0] = T.float32(N + M)
    else:
        A[0] = B[0]
"""


def test_jit_introspection_names_constexprs_and_optional_tensors():
    """TIRx's ``constexpr_names`` / ``constexpr_defaults`` / ``optional_names`` (held-out round 25)."""
    k = load_module(_JIT, "jitnames").kernel
    assert k.constexpr_names == frozenset({"N", "M"})
    assert k.constexpr_defaults == {"N": 4}
    assert k.optional_names == frozenset({"B", "C"})
    assert "B: T.NoneType()" in tirx.dumps(k.specialize(M=1, B=None))


def test_a_structural_mismatch_begins_as_tirxs_does():
    """Test code written for TIRx matches ``"StructuralEqual check failed"``."""
    a, b = (
        load_module(_JIT, "jitnames2").kernel.specialize(M=1, B=None),
        load_module(_JIT, "jitnames3").kernel.specialize(M=2, B=None),
    )
    with pytest.raises(ValueError, match=r"^StructuralEqual check failed: structural mismatch at root"):
        tirx.assert_structural_equal(a, b)


_MEMBERS = """
from __future__ import annotations
from tirx.script import tirx as T
from tirx.script import ir as I

@T.jit
def fill(A: T.Tensor((N,), "float32"), *, N: T.constexpr, VALUE: T.constexpr = 0.0):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=N))
    A[T.cuda.thread_idx("x")] = T.float32(VALUE)

@I.ir_module
class Members:
    fill_ones = fill.specialize(N=64, VALUE=1.0).with_attr("global_symbol", "fill_ones")
    fill_twos = fill.specialize(N=64, VALUE=2.0)
"""


def test_a_public_function_renamed_into_a_module_keeps_its_symbol():
    """``fill_twos = fill.specialize(...)``: the member ``fill_twos`` keeps the symbol ``fill``, as
    TIRx keeps it (held-out round 25); printed, loaded back equal, compiled."""
    mod = load_module(_MEMBERS, "members").Members
    text = tirx.dumps(mod)
    assert (
        'def fill_twos(A: T.Tensor((64,), T.float32)):\n        T.func_attr({"global_symbol": "fill"})'
        in text
    )
    assert "def fill_ones(A: T.Tensor((64,), T.float32)):\n        with" in text
    tirx.assert_structural_equal(tirx.loads(text), mod)
    assert tirx.compile(mod, target="cuda -arch=sm_90a", cache=False) is not None
