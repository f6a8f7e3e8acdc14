"""Types: dtype parsing (all dtypes, vector lanes, float8, bfloat16), pointers, void/handle."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tirx.ir import PointerType, PrimType, TensorType, VoidType, as_type, parse_dtype, prim
from tirx.ir.types import DTYPE_NAMES, as_prim, handle, void

KINDS = {
    "bool": ("bool", 1),
    "int8": ("int", 8),
    "int16": ("int", 16),
    "int32": ("int", 32),
    "int64": ("int", 64),
    "uint8": ("uint", 8),
    "uint16": ("uint", 16),
    "uint32": ("uint", 32),
    "uint64": ("uint", 64),
    "float16": ("float", 16),
    "float32": ("float", 32),
    "float64": ("float", 64),
    "bfloat16": ("bfloat", 16),
    "float8_e4m3fn": ("float8", 8),
    "float8_e4m3": ("float8", 8),
    "float8_e5m2": ("float8", 8),
    "float8_e3m4": ("float8", 8),
    "float8_e4m3fnuz": ("float8", 8),
    "float8_e4m3b11fnuz": ("float8", 8),
    "float8_e5m2fnuz": ("float8", 8),
    "float8_e8m0fnu": ("float8", 8),
    "float6_e2m3fn": ("float6", 6),
    "float6_e3m2fn": ("float6", 6),
    "float4_e2m1fn": ("float4", 4),
}


def test_every_dtype_is_known():
    assert set(DTYPE_NAMES) == set(KINDS)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_scalar_dtypes(name):
    t = parse_dtype(name)
    assert isinstance(t, PrimType)
    assert (t.kind, t.bits, t.lanes) == (*KINDS[name], 1)
    assert str(t) == t.name == name
    assert t.script() == f"T.{name}"
    assert t.element is t
    assert parse_dtype(name) is t is prim(name)  # interned
    assert t.is_int == (t.kind in ("int", "uint"))
    assert t.is_float == (t.kind in ("float", "bfloat", "float8", "float6", "float4"))
    assert t.is_minifloat == (t.kind in ("float8", "float6", "float4"))
    assert t.is_bool == (name == "bool")
    assert t.bytes == max(1, KINDS[name][1] // 8)


@pytest.mark.parametrize("name", sorted(KINDS))
@pytest.mark.parametrize("lanes", [2, 4, 8, 16])
def test_vector_lanes(name, lanes):
    t = parse_dtype(f"{name}x{lanes}")
    assert (t.base, t.lanes) == (name, lanes)
    assert str(t) == f"{name}x{lanes}"
    assert t.element is prim(name)
    assert t == PrimType(name, lanes) and hash(t) == hash(PrimType(name, lanes))
    assert t.with_lanes(1) is prim(name)
    assert t.bytes == max(1, KINDS[name][1] // 8) * lanes


@pytest.mark.parametrize(
    "alias, canonical",
    [
        ("e4m3", "float8_e4m3fn"),
        ("e5m2", "float8_e5m2"),
        ("e4m3x4", "float8_e4m3fnx4"),
    ],
)
def test_float8_aliases(alias, canonical):
    assert parse_dtype(alias) == parse_dtype(canonical)


def test_float8_e4m3_is_not_float8_e4m3fn():
    """TIRx's (and ml_dtypes') float8_e4m3 is IEEE-style (inf, NaNs, largest 240), a dtype of its own."""
    assert parse_dtype("float8_e4m3") != parse_dtype("float8_e4m3fn")
    assert parse_dtype("float8_e4m3").name == "float8_e4m3"


def test_bfloat16_is_not_float16():
    assert parse_dtype("bfloat16") != parse_dtype("float16")
    assert parse_dtype("bfloat16").kind == "bfloat"


@pytest.mark.parametrize(
    "bad", ["float33", "half", "fp16", "b32", "float32x", "float32x0", "", "x4", "Float32", "int32 "]
)  # ("float", "int", "floatx4": TIRx's 32-bit spellings, tests/test_user_mistakes.py)
def test_bad_dtype_names(bad):
    with pytest.raises(ValueError, match=r"dtype|lanes"):
        parse_dtype(bad)


def test_primtype_constructor_validates():
    with pytest.raises(ValueError, match=r"PrimType\.base"):
        PrimType("float33")
    with pytest.raises(ValueError, match=r"PrimType\.lanes"):
        PrimType("float32", 0)
    with pytest.raises(ValueError, match=r"PrimType\.lanes"):
        PrimType("float32", True)


def test_void_and_handle():
    assert parse_dtype("void") is void
    assert isinstance(void, VoidType) and VoidType() == void
    assert str(void) == "void" and void.script() == "T.void"
    h = parse_dtype("handle")
    assert h is handle
    assert isinstance(h, PointerType) and h.element == void and h.scope == "global"
    assert h.script() == "T.Ptr(T.void)"


def test_pointer_type():
    p = PointerType(prim("float32"))
    assert p.scope == "global"
    assert p == PointerType(prim("float32"), "global") and hash(p) == hash(PointerType(prim("float32")))
    assert p != PointerType(prim("float32"), "shared")
    assert p != PointerType(prim("float16"))
    assert str(p) == "float32*"
    assert str(PointerType(prim("uint8"), "shared.dyn")) == "uint8*@shared.dyn"
    assert p.script() == "T.Ptr(T.float32)"
    assert PointerType(prim("uint64"), "shared").script() == 'T.Ptr(T.uint64, "shared")'
    for scope in ("global", "shared", "shared.dyn", "local"):
        assert PointerType(prim("int8"), scope).scope == scope
    pp = PointerType(PointerType(prim("float32"), "shared"))
    assert pp.element == PointerType(prim("float32"), "shared")


def test_pointer_type_validates_fields():
    with pytest.raises(TypeError, match=r"PointerType\.element"):
        PointerType("float32")
    with pytest.raises(TypeError, match=r"PointerType\.scope"):
        PointerType(prim("float32"), 3)


def test_tensor_type():
    t = TensorType((16, 16), prim("float32"), scope="shared")
    assert t.scope == "shared" and t.dtype == prim("float32")
    assert "Tensor" in str(t)


def test_as_type_coercions():
    assert as_type("float16x4") is prim("float16", 4)
    assert as_type(prim("int8")) is prim("int8")

    class Custom:
        def __tirx_type__(self):
            return prim("bfloat16")

    assert as_type(Custom()) is prim("bfloat16")
    with pytest.raises(ValueError, match="unknown dtype"):
        as_type("nope")
    with pytest.raises(TypeError, match="cannot interpret"):
        as_type(3.5)
    with pytest.raises(TypeError, match="primitive"):
        as_prim("handle")


def test_as_type_numpy_dtypes():
    np = pytest.importorskip("numpy")
    assert as_type(np.dtype("float16")) is prim("float16")
    assert as_type(np.int64) is prim("int64")
    assert as_type(np.dtype("bool")) is prim("bool")


def test_types_are_values():
    # value equality (with an identity fast path) and hashing that agrees with it
    a, b = PrimType("int32"), prim("int32")
    assert a is not b and a == b and (a != b) is False and hash(a) == hash(b)
    assert {a: 1}[b] == 1
    assert prim("int32") != prim("uint32") and prim("int32") != "uint32"
    assert prim("int32") == "int32"  # a dtype equals its name, as TIRx's does
    assert (prim("float32") == handle) is False


def test_structural_type_hash_is_stable():
    # the per-type structural hash is computed from the name, not Python's seeded str hash
    assert PrimType("float32")._sh == prim("float32")._sh
    assert PointerType(prim("float32"))._sh == PointerType(PrimType("float32"))._sh
    shs = {parse_dtype(n)._sh for n in KINDS} | {parse_dtype(n + "x4")._sh for n in KINDS}
    shs |= {void._sh, handle._sh, PointerType(prim("float32"), "shared")._sh}
    assert len(shs) == 2 * len(KINDS) + 3


@given(
    base=st.sampled_from(["int8", "int32", "uint16", "float16", "bfloat16", "float32", "float64", "bool"]),
    lanes=st.sampled_from([1, 2, 4, 8]),
    other=st.sampled_from(["int8", "int32", "float32", "float16x2", "float32x4", "bool", "handle", ""]),
)
def test_a_dtype_equals_its_name_and_hashes_as_it(base, lanes, other):
    """``A.dtype == "float32"`` in a kernel (TIRx's dtypes compare with their names), with
    equal objects hashing alike (a dtype and its name are one dict key)."""
    t = prim(base, lanes)
    assert t == t.name and (t != t.name) is False and hash(t) == hash(t.name)
    assert (t == other) == (t.name == other) and (t != other) == (t.name != other)
    assert {t: 1}.get(t.name) == 1


@pytest.mark.parametrize(
    "name,kind,bits", [("int4", "int", 4), ("uint4", "uint", 4), ("int2", "int", 2), ("uint2", "uint", 2)]
)
def test_integers_narrower_than_a_byte_load_print_and_are_refused_by_the_backends(name, kind, bits):
    """TIRx's IR has int4 / uint4 / int2 / uint2 (``T.PrimType("int4")``: ``T`` has no name for
    them): text that names them loads, prints the same and compares; CUDA codegen and the
    interpreter refuse their values with a message that says what to do instead (TIRx packs
    eight int4 in an ``int`` and its element stores overwrite their neighbours)."""
    import numpy as np

    import tirx
    from tirx.ir.types import SUBBYTE_INTS

    t = as_type(name)
    assert (t.kind, t.bits, t.bytes, t.lanes) == (kind, bits, 1, 1) and t.is_int
    assert (
        t.script() == f'T.PrimType("{name}")' and as_type(f"{name}x2").script() == f'T.PrimType("{name}x2")'
    )
    assert name in SUBBYTE_INTS and name not in DTYPE_NAMES  # the fuzzers' programs do not draw them
    src = f"""# from tirx.script import tirx as T

@T.function
def convert(a: T.Tensor((16,), T.float32), b: T.Tensor((16,), T.PrimType("{name}"))):
    with T.device_entry(1, 1, 1, 16, 1, 1):
        i: T.let[T.int32] = T.cuda.thread_idx("x")
        b[i] = T.Cast("{name}", a[i])
"""
    f = tirx.loads(src)
    text = tirx.dumps(f)
    assert f'T.PrimType("{name}")' in text and f'T.Cast("{name}", a[i])' in text
    assert tirx.structural_equal(tirx.loads(text), f) and tirx.dumps(tirx.loads(text)) == text
    # a folded constant of the type prints as TIRx spells it and loads back
    from tirx.passes import Simplify

    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if kind == "int" else (0, (1 << bits) - 1)
    for v in range(lo, hi + 1):
        src_v = src.replace(f'T.Cast("{name}", a[i])', f'T.Cast("{name}", {v}) + T.Cast("{name}", 0)')
        g = Simplify()(tirx.loads(src_v))
        text_v = tirx.dumps(g)
        assert f'b[i] = T.IntImm("{name}", {v})' in text_v
        assert tirx.structural_equal(tirx.loads(text_v), g)
    with pytest.raises(tirx.DiagnosticError, match=f"dtype {name}: integers narrower than a byte"):
        tirx.codegen.generate(f)
    with pytest.raises(RuntimeError, match=f"dtype {name}: integers narrower than a byte are not modelled"):
        tirx.compile(f, target="interp")(np.zeros(16, np.float32), np.zeros(16, np.int8))
