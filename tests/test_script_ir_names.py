"""TIRx's IR class and type names in ``T`` (tirx/script/ir_names.py, issue #14): each builds
tirx's own node / type / value with TIRx's meaning; ``T.Shuffle`` is an IR node
(tirx/ir/shuffle.py) that prints, loads, generates CUDA and runs on the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
import tirx.interp as ti
from tirx.codegen import generate
from tirx.ir import Bind, BufferLoad, FloatImm, IntImm, PointerType, StringImm, Var, prim
from tirx.ir.host_types import FuncType, MissingType, OpaqueType, StringType, TupleType
from tirx.ir.shuffle import Shuffle
from tirx.ir.types import void
from tirx.script import tirx as T

BRIEF = [
    "Var", "IntImm", "FloatImm", "StringImm", "DataTypeImm", "GenericConst", "Range", "Shuffle", "TensorLoad",
    "TensorRegion", "TensorRegionType", "Bind", "Op", "Prim", "PrimType", "Func", "FuncType", "Type", "Missing",
    "MissingType", "MISSING", "Opaque", "String", "StringType", "Tuple", "CallEffectKind", "MemoryScope",
    "ThreadScope", "dtype", "ptr", "LetAnnotation", "Optional", "Lambda", "make_node", "index_map", "meta_class",
    "target",
]  # fmt: skip


@pytest.mark.parametrize("name", BRIEF)
def test_every_name_resolves(name):
    assert getattr(T, name) is not None
    assert name in T.__all__


# ------------------------------------------------------------------ constants and vars
def test_constants_build_tirx_nodes():
    c = T.IntImm("int32", 3)
    assert type(c) is IntImm and c.value == 3 and c.ty == prim("int32")
    assert isinstance(c, T.IntImm) and not isinstance(c, T.FloatImm)
    assert T.IntImm(T.int64, 5).ty == prim("int64")
    assert T.IntImm("bool", 1).ty == prim("bool")
    f = T.FloatImm("float16", 1)
    assert type(f) is FloatImm and f.value == 1.0 and f.ty == prim("float16")
    s = T.StringImm("abc")
    assert type(s) is StringImm and s.value == "abc"


def test_constant_misuse_names_the_problem():
    with pytest.raises(ValueError, match="does not fit"):
        T.IntImm("int8", 300)
    with pytest.raises(TypeError, match="integer or bool dtype"):
        T.IntImm("float32", 2)
    with pytest.raises(TypeError, match="value must be an int"):
        T.IntImm("int32", 2.5)
    with pytest.raises(TypeError, match="float dtype"):
        T.FloatImm("int32", 1.0)
    with pytest.raises(TypeError, match="must be a str"):
        T.StringImm(3)
    with pytest.raises(TypeError, match="non-primitive"):
        T.GenericConst(T.int32, 3)


def test_var_and_ptr():
    v = T.Var("n", "int32")
    assert type(v) is Var and v.name == "n" and v.ty == prim("int32")
    assert T.Var(name_hint="y", ty=T.float16).name == "y"
    p = T.ptr("float32", "shared")
    assert type(p) is Var and p.ty == PointerType(prim("float32"), "shared")
    assert T.ptr("float16").ty.scope == "global"
    assert T.ptr("int8", T.MemoryScope("shared.dyn")).ty.scope == "shared.dyn"
    with pytest.raises(TypeError, match="ty is required"):
        T.Var("x")
    with pytest.raises(TypeError, match=r"T\.Tensor parameter"):
        T.Var("x", T.Tensor((4,), "float32"))


def test_types():
    assert T.PrimType("float32x4") == prim("float32", 4)
    assert T.Prim is T.PrimType and T.PrimType("void") is void
    assert isinstance(prim("int8"), T.PrimType) and isinstance(void, T.PrimType)
    assert isinstance(prim("int8"), T.Type)
    t = T.Tuple(T.int32, T.float32)
    assert (
        isinstance(t, TupleType)
        and t == TupleType(["int32", "float32"])
        and hash(t) == hash(T.Tuple("int32", T.float32))
    )
    assert t != T.Tuple(T.float32, T.int32)
    assert str(t) == "Tuple(T.int32, T.float32)"
    fn = T.Func([T.int32], T.float32)
    assert (
        isinstance(fn, FuncType) and fn.ret_type == prim("float32") and fn == T.FuncType([T.int32], "float32")
    )
    assert str(fn) == "Func([T.int32], T.float32)"
    assert (
        T.String() == T.StringType() == StringType()
        and T.Missing() == MissingType()
        and T.Opaque() == OpaqueType()
    )
    assert T.String() != T.Opaque()
    assert tirx.structural_hash(T.Tuple(T.int32)) == tirx.structural_hash(T.Tuple(T.int32))
    assert repr(T.MISSING) == "<MISSING>" and not T.MISSING and T.MISSING is type(T.MISSING)()
    with pytest.raises(TypeError, match="list of types"):
        T.Func(T.int32, T.int32)


def test_dtype_values():
    # TIRx's DataTypeImm: a dtype-valued argument (type T.Any()) that also stands for its dtype
    d = T.dtype("float16")
    assert d.value == prim("float16") and d.ty == T.Any() and T.DataTypeImm("int8x4").value == prim("int8", 4)
    assert isinstance(d, tirx.ir.PrimExpr) and tirx.structural_equal(d, T.dtype(T.float16))
    assert T.reinterpret(T.float32(1.0), ty=T.dtype("int32")).ty == prim("int32")
    assert tirx.ir.types.as_type(d) == prim("float16")
    with pytest.raises(TypeError, match="primitive dtype"):
        T.dtype(T.Ptr(T.float32))
    text = "\n".join([
        "@T.function",
        "def f(A: T.Tensor((4,), T.int32)):",
        "    with T.device_entry(1, 1, 1, 1, 1, 1):",
        '        A[0] = T.call_extern("g", T.dtype("int8x4"), ty=T.int32)',
    ])  # fmt: skip
    f = tirx.loads(text)
    assert 'T.call_extern("g", T.dtype("int8x4"), ty=T.int32)' in tirx.dumps(f)
    with pytest.raises(
        tirx.DiagnosticError, match=r"T\.dtype\(\"int8x4\"\) is not supported by the CUDA backend"
    ):
        generate(f)


def test_let_annotation_is_the_let_marker():
    assert isinstance(T.let, T.LetAnnotation)
    assert isinstance(T.let[T.int32], T.LetAnnotation)


# ------------------------------------------------------------------ ranges, loads, regions
def test_range():
    r = T.Range(2, 10)
    assert r.begin.value == 2 and r.extent.value == 8 and r.end.value == 10
    assert T.Range(4).begin.value == 0 and T.Range(4).extent.value == 4
    n = T.Var("n", "int32")
    r = T.Range(n, n + 4)
    assert r.begin is n and r.extent.value == 4
    r = T.Range.from_min_extent(3, 4)
    assert (r.begin.value, r.extent.value, r.end.value) == (3, 4, 7)
    with pytest.raises(TypeError, match="scalar integer"):
        T.Range(0.5, 2.0)


def test_tensor_load_and_region():
    A = tirx.ir.Buffer("A", Var("A", PointerType(prim("float32"))), prim("float32"), (8, 4))
    i = T.Var("i", "int32")
    ld = T.TensorLoad(A, [i, 1])
    assert type(ld) is BufferLoad and ld.buffer is A and ld.indices[0] is i and ld.ty == prim("float32")
    reg = T.TensorRegion(A, [T.Range(0, 4), T.Range(1, 3)])
    assert [e.value for e in reg.shape] == [4, 2] and reg.ty == T.TensorRegionType()
    with pytest.raises(ValueError, match="rank-2"):
        T.TensorRegion(A, [T.Range(0, 4)])
    with pytest.raises(TypeError, match="source must be a tensor"):
        T.TensorLoad(i, [0])


# ------------------------------------------------------------------ ops, effects, scopes
def test_op_lookup_and_effects():
    assert T.Op.get("exp") is T.Op.get("prim.exp") is T.Op.get("tirx.exp")
    assert isinstance(T.Op.get("exp"), T.Op)
    assert "exp" in T.Op.list_op_names()
    with pytest.raises(ValueError, match="no op named"):
        T.Op.get("prim.no_such_op")
    assert T.CallEffectKind.of("exp") is T.CallEffectKind.Pure
    assert T.CallEffectKind.of(T.Op.get("cuda.cta_sync")) is T.CallEffectKind.UpdateState
    assert [k.value for k in T.CallEffectKind] == list(range(7))


def test_scopes():
    s = T.MemoryScope("shared")
    assert s == "shared" and isinstance(s, str) and s.name == "shared" and T.MemoryScope(s) is s
    assert "shared.dyn" in list(T.MemoryScope) and "tmem" in list(T.MemoryScope)
    with pytest.raises(ValueError, match="not a valid MemoryScope"):
        T.MemoryScope("nope")
    w = T.ThreadScope.get("cuda.warp")
    assert (w.name, w.backend, w.local_name, w.rank) == ("cuda.warp", "cuda", "warp", 3)
    assert T.ThreadScope.get("cuda.kernel").rank < T.ThreadScope.get("cuda.cta").rank < w.rank
    assert [t.name for t in T.ThreadScope][:2] == ["cuda.kernel", "cuda.cluster"]
    with pytest.raises(ValueError, match="no thread scope"):
        T.ThreadScope.get("cuda.grid")


# ------------------------------------------------------------------ Python-side helpers
def test_lambda_applies_like_tirx():
    lam = T.Lambda([T.float32, T.float32], lambda a, b: (a + b,))
    assert [v.name for v in lam.vars] == ["arg0", "arg1"] and lam.ret_type == prim("float32")
    (r,) = lam.apply([T.float32(1), T.float32(2)])
    assert tirx.structural_equal(r, T.Add(T.float32(1), T.float32(2)))
    assert tirx.structural_equal(lam(T.float32(1), T.float32(2)), r)
    two = T.Lambda(["int32"], lambda a: (a, a * 2), ret_type=[T.int32, T.int32])
    assert two.ret_type == T.Tuple(T.int32, T.int32)
    with pytest.raises(TypeError, match="ret_type"):
        T.Lambda([T.float32], lambda a: a, ret_type=T.int32)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        lam.apply([T.float32(1)])


def test_index_map():
    m = T.index_map(lambda i, j: (j, i * 4))
    assert [v.name for v in m.initial_indices] == ["i", "j"] and m.initial_indices[0].ty == prim("int64")
    a, b = m.map_indices([1, 2])
    assert a.value == 2 and tirx.structural_equal(b, T.Mul(T.int64(1), T.int64(4)))
    with pytest.raises(TypeError, match="takes 2 indices"):
        m.map_indices([1])


def test_make_node_by_type_key():
    assert T.make_node("ir.IntImm", ty="int32", value=3).value == 3
    assert T.make_node("ir.Var", name="x", ty="float32").ty == prim("float32")
    v = T.Var("x", "int32")
    assert type(T.make_node("tirx.Bind", var=v, value=1)) is Bind
    with pytest.raises(ValueError, match="no tirx node"):
        T.make_node("ir.Nope")


def test_target():
    t = T.target({"kind": "cuda", "arch": "sm_90a"})
    assert (t.kind, t.arch) == ("cuda", "sm_90a")
    assert T.target("cuda -arch=sm_80").arch == "sm_80"
    full = {"kind": "cuda", "arch": "sm_90a", "keys": ["cuda", "gpu"], "max_num_threads": 1024,
            "tag": "", "thread_warp_size": 32}  # fmt: skip
    assert T.target(full) == t
    with pytest.raises(ValueError, match="only 'cuda' and 'llvm'"):
        T.target({"kind": "rocm"})
    assert T.target({"kind": "llvm"}).kind == "llvm"  # TIRx's host target (run on the interpreter)
    with pytest.raises(ValueError, match="thread_warp_size"):
        T.target({"kind": "cuda", "thread_warp_size": 64})


def test_meta_class_instances_are_python_values_in_kernels():
    @T.meta_class
    class Acc:
        def __init__(self, buf, k):
            self.buf = buf
            self.k = k

        @T.inline
        def add(self, v):
            self.buf[self.k] = self.buf[self.k] + v

    assert Acc.__tirx_meta_class__ is True

    @T.function
    def f(A: T.Tensor((8,), T.int32)):
        acc = Acc(A, 2)
        acc.add(5)

    assert "A[2] = A[2] + 5" in tirx.dumps(f)
    with pytest.raises(TypeError, match="decorates a class"):
        T.meta_class(3)


def test_bind_and_var_annotations_in_a_kernel():
    @T.function
    def f(A: T.Tensor((8,), T.int32), n: T.Var("m", "int32"), p: T.ptr("float32", "shared")):
        x = T.Var("x", "int32")
        T.Bind(x, A[0] + n)
        A[1] = x

    assert [p.ty for p in f.params[1:]] == [prim("int32"), PointerType(prim("float32"), "shared")]
    assert [p.name for p in f.params] == ["A", "n", "p"]
    text = tirx.dumps(f)
    assert "x: T.let[T.int32] = A[0] + n" in text and 'p: T.Ptr(T.float32, "shared")' in text
    tirx.assert_structural_equal(tirx.loads(text), f)
    with pytest.raises(TypeError, match="differs"):
        T.Bind(T.Var("y", "int32"), T.float32(1))


def test_optional_jit_parameter():
    @T.jit
    def g(A: T.Tensor((8,), T.float32), Bias: T.Optional(T.Tensor((8,), T.float32)), *, s: T.constexpr = 2):
        for i in range(8):
            A[i] = A[i] * s

    assert [p.name for p in g.specialize().params] == ["A", "Bias"]
    h = g.specialize(Bias=None)
    assert [(p.name, type(p.ty).__name__) for p in h.params][1] == ("Bias", "VoidType")  # TIRx: T.NoneType()
    assert "T.Optional" in repr(T.Optional(T.int32))


# ------------------------------------------------------------------ T.Shuffle
def _vec_kernel(idx: list, second_scalar: bool = False):
    @T.function
    def f(A: T.Tensor((8,), T.float32), B: T.Tensor((8,), T.float32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        v = A[T.ramp(0, 1, 4)]
        w = A[T.ramp(4, 1, 4)]
        if T.constexpr(second_scalar):
            s = T.Shuffle([v, A[7]], idx)
        else:
            s = T.Shuffle([v, w], idx)
        if T.constexpr(len(idx) == 1):
            B[0] = s
        else:
            for k in range(len(idx)):
                B[k] = T.Shuffle([s], [k])

    return f


def test_shuffle_node_checks():
    a = T.Ramp(T.float32(0), T.float32(1), 4)
    s = Shuffle([a, a], [T.int32(7), T.int32(0)])
    assert s.ty == prim("float32", 2) and isinstance(s.vectors, tuple)
    assert Shuffle([a], [T.int32(1)]).ty == prim("float32")
    with pytest.raises(ValueError, match="out of range"):
        Shuffle([a], [T.int32(4)])
    with pytest.raises(TypeError, match="element dtype"):
        Shuffle([a, T.Ramp(0, 1, 4)], [T.int32(0)])
    with pytest.raises(TypeError, match="scalar integer"):
        Shuffle([a], [T.float32(0)])
    with pytest.raises(ValueError, match="must not be empty"):
        Shuffle([a], [])
    with pytest.raises(TypeError, match=r"T\.Shuffle: vectors must be a list"):
        T.Shuffle(a, [0])


def test_shuffle_round_trips_and_errors_in_text():
    f = _vec_kernel([7, 6, 1, 0])
    text = tirx.dumps(f)
    assert "T.Shuffle([v, w], [T.int32(7), T.int32(6), T.int32(1), T.int32(0)])" in text  # TIRx's text
    tirx.assert_structural_equal(tirx.loads(text), f)
    assert tirx.dumps(tirx.loads(text)) == text
    bare = text.replace("[T.int32(7), T.int32(6), T.int32(1), T.int32(0)]", "[7, 6, 1, 0]")
    tirx.assert_structural_equal(tirx.loads(bare), f)  # the bare spelling loads the same
    with pytest.raises(tirx.DiagnosticError, match="out of range"):
        tirx.loads(bare.replace("[7, 6, 1, 0]", "[8, 6, 1, 0]"))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=1, max_size=4), st.booleans())
def test_shuffle_interp_matches_numpy(idx, scalar):
    if scalar:
        idx = [i % 5 for i in idx]
    f = _vec_kernel(idx, scalar)
    A = np.arange(8, dtype=np.float32) * 1.5 + 1
    B = np.zeros(8, np.float32)
    ti.compile(f)(A, B)
    lanes = np.concatenate([A[:4], A[7:8]]) if scalar else A
    np.testing.assert_array_equal(B[: len(idx)], lanes[idx])


def test_shuffle_dynamic_index_and_half2():
    @T.function
    def f(A: T.Tensor((8,), T.float16), B: T.Tensor((8,), T.float16), K: T.Tensor((2,), T.int32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        h = A[T.ramp(0, 1, 2)]
        g = A[T.ramp(2, 1, 2)]
        s = T.Shuffle([h, g], [K[0], K[1]])
        B[0] = T.Shuffle([s], [0])
        B[1] = T.Shuffle([s], [1])

    A = np.arange(8, dtype=np.float16)
    B = np.zeros(8, np.float16)
    ti.compile(f)(A, B, np.array([3, 0], np.int32))
    assert list(B[:2]) == [3.0, 0.0]
    src = generate(f).text
    assert "__halves2half2(" in src and ".x" in src
    _nvrtc(src)


def test_shuffle_cuda_compiles():
    src = generate(_vec_kernel([7, 6, 1, 0])).text
    assert "shuffle_lanes[7]" in src
    _nvrtc(src)
    _nvrtc(generate(_vec_kernel([4, 0], True)).text)


def _nvrtc(src: str) -> None:
    pytest.importorskip("cuda.bindings.nvrtc")
    from tirx.runtime.nvrtc import compile_source

    assert compile_source(src, "sm_90a").cubin


def test_optional_outside_jit_is_a_located_error():
    """``T.Optional`` means "may be None at specialization": only ``@T.jit`` can drop such a
    parameter, so elsewhere it is refused at the annotation, as TIRx refuses it."""
    import tirx as _tirx

    with pytest.raises(_tirx.DiagnosticError, match=r"T\.Optional is only supported by @T\.jit") as ei:

        @T.function
        def invalid(value: T.Optional(T.handle)):
            T.evaluate(0)

    assert ei.value.span is not None and ei.value.span.line > 0


# ------------------------------------------------------------------ meta_class scalar cells
def _load_case(name: str):
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parent / "data" / "tirx_golden" / "frontend" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"case_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.f


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_meta_class_cell_fields_are_stored_not_rebound(seed):
    # `self.count = self.count + 1` in an inline method stores into the cell: rebinding the
    # field to the expression instead (as tirx did) pushes every value into regs[0] and
    # leaves count 0 -- a silent wrong result
    f = _load_case("meta_class_cells")
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 8, size=(32, 8)).astype(np.float32)
    b = np.zeros(32, np.float32)
    c = np.zeros(32, np.int32)
    ti.compile(f)(a, b, c)
    regs = np.zeros((32, 4), np.float32)
    for j in range(8):
        regs[:, j % 4] += a[:, j] * np.float32(j + 1)
    np.testing.assert_array_equal(b, regs.sum(axis=1, dtype=np.float32))
    np.testing.assert_array_equal(c, np.full(32, 8))


def test_meta_class_constructor_must_keep_what_it_allocates():
    @T.meta_class
    class Leaky:
        def __init__(self):
            tmp = T.alloc_local((2,), "int32")  # noqa: F841 - the point: no field holds it
            self.ok = 1

    @T.meta_class
    class Keeps:
        def __init__(self):
            self.parts = [T.alloc_local((2,), "int32"), {"c": T.local_scalar("int32")}]

    with pytest.raises(
        tirx.DiagnosticError,
        match=r"T.meta_class Leaky: its constructor allocated a local tensor \(2\) int32 that no field",
    ):

        @T.function
        def bad(A: T.Tensor((32,), "int32")):
            T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
            tx = T.cuda.thread_idx("x")
            x = Leaky()
            A[tx] = x.ok

    @T.function
    def good(A: T.Tensor((32,), "int32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        tx = T.cuda.thread_idx("x")
        k = Keeps()
        k.parts[0][0] = tx
        A[tx] = k.parts[0][0]

    a = np.zeros(32, np.int32)
    ti.compile(good)(a)
    np.testing.assert_array_equal(a, np.arange(32))
