"""TIRx's IR names and builder semantics that golden cases pin (issue #14), beyond the cases
themselves: ``T.isinf``/``T.isfinite`` build TIRx's comparisons, while the op calls (for the types
TIRx refuses, or made by the API) print with ``ty=`` and come back as op calls through both front
ends; the host-level types load from text."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx
import tirx.interp as ti
from tirx.ir import Call, Ramp, TensorType, const
from tirx.ir.expr import And, FloatImm, IntImm
from tirx.ir.op import call
from tirx.ir.types import PrimType
from tirx.script import tirx as T
from tirx.surface.builder import IRBuilder, launch_args


def _python_build(text: str, tmp_path, name: str = "k"):
    """The Python frontend's IR of printed text (the printer's output is also Python)."""
    p = tmp_path / f"{name}.py"
    p.write_text(text.replace("# from tirx.script import tirx as T", "from tirx.script import tirx as T"))
    spec = importlib.util.spec_from_file_location(name, p)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.f


def _kernel(dt: str, pred: str, lanes: int = 1):
    """``C[...] = <pred>(X[...])`` as the raw op call, built by the API."""
    b = IRBuilder()
    with b, b.function("f"):
        X = b.param("X", TensorType((8,), PrimType(dt)))
        C = b.param("C", TensorType((8,), PrimType("bool")))
        with b.device_entry(*launch_args(1, 1)):
            idx = (const(0),) if lanes == 1 else (Ramp(const(0), const(1), lanes),)
            b.store(C, idx, call(pred, X[idx]))
    return b.get()


@pytest.mark.parametrize("pred", ["isinf", "isfinite"])
@pytest.mark.parametrize(("dt", "lanes"), [("float32", 1), ("float16", 1), ("bfloat16", 1), ("float32", 4)])
def test_op_call_prints_with_ty_and_builds_back_in_both_front_ends(pred, dt, lanes, tmp_path):
    f = _kernel(dt, pred, lanes)
    text = tirx.dumps(f)
    assert f"T.{pred}(X[" in text and ("ty=T.bool)" if lanes == 1 else 'ty=T.PrimType("boolx4"))') in text
    for g in (tirx.loads(text), _python_build(text, tmp_path)):
        tirx.assert_structural_equal(g, f)
        assert tirx.dumps(g) == text


def test_the_spelling_builds_tirx_comparisons_or_the_op():
    x = T.Var("x", "float32")
    e = T.isinf(x)
    assert isinstance(e, And) and e.a.a.op.name == "fabs" and e.b.a.op.name == "isnan"
    assert isinstance(T.isinf(T.Var("n", "int32")), IntImm)  # an integer is never infinite
    assert T.isinf(x, ty=T.bool).op.name == "isinf"  # ty=: the op call itself
    h = T.Var("h", "bfloat16")  # TIRx refuses bfloat16, float8 and vectors: tirx keeps the op
    assert isinstance(T.isfinite(h), Call) and T.isfinite(h).op.name == "isfinite"
    assert T.isinf(T.float32(1.0)).value == 0 and T.isinf(2.5).value == 0
    with pytest.raises(TypeError, match=r"T\.isinf"):
        T.isinf("x")


_VALS = st.one_of(st.floats(width=32), st.sampled_from([math.inf, -math.inf, math.nan, 0.0, -0.0, 3e38]))


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_VALS, min_size=8, max_size=8), st.sampled_from(["float32", "float64", "float16"]))
def test_expansion_computes_what_the_op_computes(vals, dt):
    """TIRx's comparisons and tirx's op agree on the interpreter (NaN, +-inf, finite)."""
    b = IRBuilder()
    with b, b.function("k"):
        X = b.param("X", TensorType((8,), PrimType(dt)))
        C = b.param("C", TensorType((32,), PrimType("bool")))
        with b.device_entry(*launch_args(1, 1)):
            for i in range(8):
                x = X[const(i)]
                for k, pred in enumerate(("isinf", "isfinite")):
                    b.store(C, (const(4 * i + 2 * k),), getattr(T, pred)(x))
                    b.store(C, (const(4 * i + 2 * k + 1),), call(pred, x))
    k = b.get()
    with np.errstate(over="ignore"):
        a = np.array(vals, dtype=np.float64).astype(dt)
    c = np.zeros(32, dtype=bool)
    ti.compile(k)(a, c)
    assert (c[0::2] == c[1::2]).all(), (a, c)
    assert (c[0::4] == np.isinf(a)).all() and (c[2::4] == np.isfinite(a)).all()


def test_host_types_load_from_text():
    text = (
        "@T.function\ndef f(A: T.Tensor((4,), T.int32), s: T.String(), a: T.Any(), t: T.Tuple(T.int32, T.float32),"
        " g: T.Func([T.int32], T.int32), r: T.TensorRegionType(), m: T.MissingType(), o: T.Opaque()):\n"
        "    A[0] = 1\n"
    )
    f = tirx.loads(text)
    tys = [p.ty for p in f.params[1:]]
    assert tys == [T.String(), T.Any(), T.Tuple(T.int32, T.float32), T.Func([T.int32], T.int32),
                   T.TensorRegionType(), T.Missing(), T.Opaque()]  # fmt: skip
    assert "s: T.String(), a: T.Any()" in tirx.dumps(f)
    with pytest.raises(tirx.DiagnosticError, match="list of types"):
        tirx.loads("@T.function\ndef f(g: T.Func(T.int32, T.int32)):\n    pass\n")


def test_t_any_is_tirx_top_type_and_scopes_go_where_strings_go():
    assert T.Any() == T.Any() and T.Any() != T.Opaque() and str(T.Any()) == "Any()"
    ty = T.Tensor((4,), "int32", scope=T.MemoryScope("shared"))
    assert ty.scope == "shared" and type(ty.scope) is str
    assert isinstance(FloatImm(1.0, PrimType("float32")), T.FloatImm)


def test_target_attribute_prints_as_tirx_and_loads_back():
    from tirx.target import Target, parse_target

    t = T.target({"kind": "cuda", "arch": "sm_90a"})
    assert t == Target("cuda", "sm_90a") and t == parse_target("cuda -arch=sm_90a")
    keys = (
        '"keys": ["cuda", "gpu"], "kind": "cuda", "max_num_threads": 1024, "tag": "", "thread_warp_size": 32'
    )
    for tgt, shown in (
        ('T.target({"kind": "cuda"})', f"T.target({{{keys}}})"),
        ('T.target("cuda -arch=sm_80 -lineinfo")', 'T.target("cuda -arch=sm_80 -lineinfo")'),
        ('T.target("interp")', 'T.target("interp")'),
    ):
        text = f'@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n    T.func_attr({{"target": {tgt}}})\n    A[0] = 1\n'
        f = tirx.loads(text)
        out = tirx.dumps(f)
        assert shown in out
        assert tirx.structural_equal(tirx.loads(out), f) and tirx.dumps(tirx.loads(out)) == out
    bad = '@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n    T.func_attr({"target": T.target({"kind": "rocm"})})\n'
    with pytest.raises(tirx.DiagnosticError, match="only 'cuda' and 'llvm'") as ei:
        tirx.loads(bad + "    A[0] = 1\n")
    assert ":3:" in str(ei.value)
    with pytest.raises(ValueError, match="max_num_threads"):
        T.target({"kind": "cuda", "max_num_threads": 512})


def test_tcgen05_descriptor_records_are_the_keyword_options():
    rec = T.cuda.TCGen05InstrDescriptorAttrs("float32", "bfloat16", "bfloat16", 128, 256, 16, False, True)
    assert rec == T.cuda.TCGen05InstrDescriptorAttrs(
        d_dtype="float32",
        a_dtype="bfloat16",
        b_dtype="bfloat16",
        M=128,
        N=256,
        K=16,
        trans_a=False,
        trans_b=True,
    )
    y = T.Var("y", T.Ptr(T.uint32, "local"))
    by_rec = T.cuda.tcgen05_encode_instr_descriptor(y, attrs=rec)
    by_kw = T.cuda.tcgen05_encode_instr_descriptor(
        y,
        d_dtype="float32",
        a_dtype="bfloat16",
        b_dtype="bfloat16",
        M=128,
        N=256,
        K=16,
        trans_a=False,
        trans_b=True,
    )
    assert tirx.structural_equal(by_rec, by_kw)
    assert tirx.structural_equal(T.cuda.tcgen05.encode_instr_descriptor(y, attrs=rec), by_kw)
    with pytest.raises(TypeError, match="cannot mix"):
        T.cuda.tcgen05_encode_instr_descriptor(y, attrs=rec, M=64)
    with pytest.raises(TypeError, match="TCGen05InstrDescriptorBlockScaledAttrs"):
        T.cuda.tcgen05_encode_instr_descriptor_block_scaled(y, attrs=rec)


def finite_kernel(dt: str):
    """The kernel of tests/data/irnames/finite_kernel.py (shared with the GPU test)."""
    path = Path(__file__).parent / "data" / "irnames" / "finite_kernel.py"
    spec = importlib.util.spec_from_file_location("irnames_finite_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.kernel(dt)


@pytest.mark.parametrize("dt", ["float32", "float16", "float64"])
def test_finite_predicates_compile_through_nvrtc_and_agree_on_the_interpreter(dt):
    f = finite_kernel(dt)
    x = np.array([0.0, -0.0, 1.5, np.inf, -np.inf, np.nan, 6e4, -1e-3] * 8).astype(dt)
    c = np.zeros(256, dtype=bool)
    ti.compile(f)(x, c)
    assert (c[0::4] == np.isinf(x)).all() and (c[1::4] == np.isinf(x)).all()
    assert (c[2::4] == np.isfinite(x)).all() and (c[3::4] == np.isfinite(x)).all()
    pytest.importorskip("cuda.bindings.nvrtc")
    k = tirx.compile(f, target="cuda -arch=sm_90a", cache=False)
    assert len(k.cubin) > 0


def test_target_with_an_empty_arch_is_no_arch_and_round_trips():
    """Mutate fuzz seeds 874809885 and 306014528: ``"arch": ""`` loaded as arch "" but printed
    without the key, which loads as no arch; an empty arch is no arch."""
    from tirx.target import Target

    assert T.target({"kind": "cuda", "arch": ""}) == Target("cuda", None)
    text = (
        "@T.function\n"
        "def f(A: T.Tensor((8,), T.int32)):\n"
        '    T.func_attr({"target": T.target({"arch": "", "kind": "cuda"})})\n'
        "    with T.device_entry(1, 1, 1, 1, 1, 1):\n"
        "        A[0] = 1\n"
    )
    f = tirx.loads(text)
    g = tirx.loads(tirx.dumps(f))
    assert tirx.structural_equal(f, g) and tirx.dumps(g) == tirx.dumps(f)
