# ruff: noqa: F821, F841, B007
# (kernel bodies are the tirx DSL: names such as T.constexpr parameters and locals are read by the parser)
"""Metaprogramming: F1 capture, T.inline / T.macro / T.meta_var, T.jit, F2 rank polymorphism,
F3 T.compute, F4 plain Python helpers."""

from __future__ import annotations

import numpy as np
import pytest
from test_frontend_util import load_module

import tirx
from tirx.ir import (
    AllocBuffer,
    Bind,
    BufferStore,
    Call,
    DeviceEntry,
    FloatImm,
    For,
    IfThenElse,
    Max,
    Min,
    PrimType,
    SeqStmt,
    VoidType,
    post_order,
)  # fmt: skip
from tirx.script import tirx as T
from tirx.surface.builder import IRBuilder

SCALE = 1.0
GLOBAL_DTYPE = T.float32


def body(f):
    b = f.body
    if isinstance(b, DeviceEntry):
        b = b.body
    return list(b.stmts) if isinstance(b, SeqStmt) else [b]


def all_nodes(f, cls):
    return [n for n in post_order(f.body) if isinstance(n, cls)]


# ------------------------------------------------------------------ F1 capture
def make_add(dtype, value, block=256):
    n = T.dynamic("n")

    @T.function
    def add(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(n, block), block=block))
        i = T.cuda.block_idx("x") * block + T.cuda.thread_idx("x")
        if i < n:
            B[i] = A[i] + value

    return add


def test_captured_values_fill_the_kernel():
    f16 = make_add(T.float16, 2, block=128)
    f32 = make_add(T.float32, 1)
    a = f16.buffer_of(f16.params[0])
    assert a.dtype == PrimType("float16")
    store = all_nodes(f16, BufferStore)[0]
    c = store.value.b
    assert isinstance(c, FloatImm) and c.ty == PrimType("float16") and c.value == 2.0
    assert f16.body.seq[0].args[3].value == 128 and f32.body.seq[0].args[3].value == 256
    assert f32.buffer_of(f32.params[0]).dtype == PrimType("float32")
    assert not tirx.structural_equal(f16, f32)
    assert "B[i] = A[i] + T.float16(2.0)" in tirx.dumps(f16)


def test_closures_shadow_globals():
    SCALE = 3.0

    @T.function
    def f(A: T.Tensor((4,), GLOBAL_DTYPE)):
        A[0] = A[1] * SCALE

    assert all_nodes(f, BufferStore)[0].value.b.value == 3.0


def test_annotation_only_names_with_future_annotations():
    def gen(dt, size):
        @T.function
        def f(A: T.Tensor((size,), dt)):
            pass

        return f

    f = gen(T.int8, 7)
    b = f.buffer_of(f.params[0])
    assert b.dtype == PrimType("int8") and b.shape[0].value == 7


def test_annotation_only_names_without_future_annotations():
    mod = load_module(
        "from tirx.script import tirx as T\n"
        "def gen(dt, size):\n"
        "    @T.function\n"
        "    def f(A: T.Tensor((size,), dt)):\n"
        "        pass\n"
        "    return f\n"
        "F = gen(T.int16, 5)\n",
        "nofuture",
    )
    b = mod.F.buffer_of(mod.F.params[0])
    assert b.dtype == PrimType("int16") and b.shape[0].value == 5


# ------------------------------------------------------------------ T.inline / T.macro / T.meta_var
@T.inline
def add_one_if_valid(A, B, i, n):
    if i < n:
        B[i] = A[i] + 1


@T.inline
def square(x):
    return x * x


@T.inline
def sum_of_squares(a, b):
    return square(a) + square(b)


class Ops:
    def __init__(self, factor):
        self.factor = factor

    @T.inline
    def scale_store(self, dst, i, v):
        dst[i] = v * self.factor


def test_inline_statement_fragments_and_values():
    n = T.dynamic("n")
    ops = Ops(3.0)

    @T.function(private=True)  # a device helper: device ops outside a device entry
    def f(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        i = T.cuda.thread_idx("x") * 2
        add_one_if_valid(A, B, i, n)
        add_one_if_valid(A, B, i + 1, n)
        B[0] = sum_of_squares(A[0], A[1])
        ops.scale_store(B, 1, A[2])

    s = body(f)
    assert isinstance(s[1], IfThenElse) and isinstance(s[2], IfThenElse)
    assert not [c for c in all_nodes(f, Call) if c.op.name not in ("cuda.thread_idx",)]
    assert tirx.dumps(f).count("A[0] * A[0] + A[1] * A[1]") == 1
    assert s[4].value.b.value == 3.0


def test_inline_outside_a_kernel_is_an_error():
    with pytest.raises(RuntimeError, match="inside a kernel"):
        square(3)


def test_inline_resolves_globals_at_call_time_macro_at_definition():
    mod = load_module(
        "from tirx.script import tirx as T\n"
        "K = 1\n"
        "@T.inline\n"
        "def put_inline(A):\n"
        "    A[0] = K\n"
        "@T.macro\n"
        "def put_macro(A):\n"
        "    A[1] = K\n"
        "K = 2\n"
        "@T.function\n"
        "def f(A: T.Tensor((4,), 'int32')):\n"
        "    put_inline(A)\n"
        "    put_macro(A)\n",
        "macro",
    )
    st = body(mod.f)
    assert st[0].value.value == 2 and st[1].value.value == 1


def test_non_hygienic_macro_uses_caller_names():
    @T.macro(hygienic=False)
    def bump():
        acc = acc + 1

    @T.function
    def f(A: T.Tensor((4,), "int32")):
        acc: T.int32 = 0  # mutable, so the macro's assignment stores into it
        for i in range(4):
            bump()
        A[0] = acc

    al = all_nodes(f, AllocBuffer)
    assert [a.buffer.name for a in al] == ["acc"]
    stores = [s for s in all_nodes(f, BufferStore) if s.buffer.name == "acc"]
    assert len(stores) == 2


def test_meta_var_keeps_python_value():
    @T.function
    def f(A: T.Tensor((8,), "int32")):
        width = T.meta_var(4)
        for k in range(width):
            A[k] = 0
        cols = T.meta_var([1, 2])
        A[cols[1]] = 1

    assert not all_nodes(f, Bind)
    assert body(f)[0].extent.value == 4 and body(f)[1].indices[0].value == 2


# ------------------------------------------------------------------ T.jit
@T.jit
def scale_add(
    A: T.Tensor((N,), "float32"),
    B: T.Tensor((N,), "float32"),
    Bias: T.Tensor((N,), "float32") | None = None,
    *,
    N: T.constexpr,
    BLOCK: T.constexpr = 128,
    USE_FMA: T.constexpr = False,
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(N, BLOCK), block=BLOCK))
    i = T.cuda.block_idx("x") * BLOCK + T.cuda.thread_idx("x")
    if i < N:
        if T.constexpr(USE_FMA):
            B[i] = T.fma(A[i], T.float32(2.0), B[i])
        else:
            B[i] = A[i] * T.float32(2.0) + B[i]
        if T.constexpr(Bias is not None):
            B[i] = B[i] + Bias[i]


def test_jit_specialize_and_cache():
    f = scale_add.specialize(N=1000, BLOCK=128, USE_FMA=True)
    assert f.name == "scale_add" and [p.name for p in f.params] == ["A", "B", "Bias"]
    assert f.buffer_of(f.params[0]).shape[0].value == 1000
    assert [a.value for a in f.body.seq[0].args[:4]] == [8, 1, 1, 128]
    assert any(c.op.name == "fma" for c in all_nodes(f, Call))
    assert scale_add.specialize(USE_FMA=True, N=1000, BLOCK=128) is f
    g = scale_add.specialize(N=64)
    assert g is not f and not any(c.op.name == "fma" for c in all_nodes(g, Call))
    assert scale_add.constexpr_params == ("N", "BLOCK", "USE_FMA")
    # TVM's Object.same_as (identity), as TIRx's tests compare specializations
    assert f.same_as(scale_add.specialize(N=1000, BLOCK=128, USE_FMA=True)) and not f.same_as(g)
    assert not f.same_as(tirx.loads(tirx.dumps(f)))  # structurally equal, another node
    # a regular parameter given a value: the error lists the specializable ones, as TIRx's does
    with pytest.raises(TypeError, match=r"specializable params are: \['N', 'BLOCK', 'USE_FMA'\]"):
        scale_add.specialize(N=64, A=1)


def test_jit_optional_tensor_specialized_to_none():
    """As TIRx: the parameter stays, typed ``T.NoneType()``; the compiled function takes None there."""
    f = scale_add.specialize(N=256, Bias=None)
    assert [p.name for p in f.params] == ["A", "B", "Bias"]
    assert isinstance(f.params[2].ty, VoidType)
    assert "Bias: T.NoneType()" in tirx.dumps(f)
    tirx.assert_structural_equal(tirx.loads(tirx.dumps(f)), f)
    assert len(all_nodes(f, BufferStore)) == 1
    g = scale_add.specialize(N=256)
    assert len(all_nodes(g, BufferStore)) == 2


def test_a_function_with_none_parameters_is_lowered_once(monkeypatch):
    """Its parameters stripped to the same object each time, so a second ``tirx.compile`` of one
    function finds its lowered CUDA (``pipeline.lower_cuda``) instead of generating it again."""
    import tirx.pipeline as P
    from tirx.runtime.none_params import strip_none_params

    f = scale_add.specialize(N=512, Bias=None)
    assert strip_none_params(f)[0] is strip_none_params(f)[0]
    assert [p.name for p in strip_none_params(f)[0].params] == ["A", "B"]
    emitted = []
    real = P._codegen
    monkeypatch.setattr(P, "_codegen", lambda c: emitted.append(1) or real(c))
    monkeypatch.setattr(P, "CUDA_STAGES", tuple(
        P.Stage(s.name, s.output, P._codegen if s.name == "codegen" else s.run, s.input) for s in P.CUDA_STAGES
    ))  # fmt: skip
    for _ in range(2):
        tirx.compile(f, target={"kind": "cuda", "arch": "sm_90a"})
    assert emitted == [1]


def test_jit_optional_tensor_none_at_run_time():
    a = np.arange(256, dtype=np.float32)
    bias = np.full(256, 0.5, dtype=np.float32)
    for call in (
        lambda b: scale_add(a, b, None, N=256),  # positional None
        lambda b: scale_add(a, b, Bias=None, N=256),  # keyword None
        lambda b: scale_add(a, b, N=256),  # the Python default (None)
        lambda b: tirx.compile(scale_add.specialize(N=256, Bias=None), target="interp")(a, b, None),
    ):
        b = np.ones(256, dtype=np.float32)
        call(b)
        np.testing.assert_array_equal(b, a * 2 + 1)
    b = np.ones(256, dtype=np.float32)
    scale_add(a, b, bias, N=256)
    np.testing.assert_array_equal(b, a * 2 + 1.5)
    k = tirx.compile(scale_add.specialize(N=256, Bias=None), target="interp")
    b = np.ones(256, dtype=np.float32)
    k(a, b)  # the None parameter left out: the kernel's own arguments
    np.testing.assert_array_equal(b, a * 2 + 1)
    with pytest.raises(
        TypeError, match=r"parameter Bias is T\.NoneType\(\).*pass None or leave it out, got ndarray"
    ):
        k(a, b, bias)
    with pytest.raises(TypeError, match=r"parameter Bias is T\.NoneType\(\)"):
        k(a, b, Bias=bias)
    with pytest.raises(TypeError, match=r"takes 3 argument"):
        k(a)


def test_jit_errors():
    with pytest.raises(TypeError, match="unhashable"):
        scale_add.specialize(N=[1, 2])
    with pytest.raises(TypeError, match=r"missing a value for T\.constexpr 'N'"):
        scale_add.specialize(BLOCK=64)
    with pytest.raises(TypeError, match=r"unexpected arg\(s\): \['Q'\]"):
        scale_add.specialize(N=4, Q=1)
    with pytest.raises(TypeError, match=r"not a T\.constexpr"):
        scale_add.specialize(N=4, A=3)


def test_constexpr_parameter_needs_jit():
    with pytest.raises(tirx.DiagnosticError, match=r"@T\.jit"):

        @T.function
        def f(A: T.Tensor((4,), "float32"), *, N: T.constexpr):
            pass


# ------------------------------------------------------------------ F2 rank polymorphism
# ``A[*idx]`` is Python >= 3.11 syntax (the project lints for 3.10), so these kernels are
# loaded from source text.
F2_SRC = """
from tirx.script import tirx as T


def broadcast_add(a, b, c):
    @T.function
    def f(A: T.BufferFrom(a), B: T.BufferFrom(b), C: T.BufferFrom(c)):
        for i, i_a, i_b in T.broadcast_grid(C.shape, A.shape, B.shape):
            C[*i] = A[*i_a] + B[*i_b]

    return f


@T.function
def starred(A: T.Tensor((2, 3, 4), "float32")):
    for *spatial, r in T.grid(*A.shape):
        A[*spatial, r] = T.float32(0)
    dims = A.shape[:2]
    X = T.decl_buffer([*dims, 128], "float16")
    idx = (1, 2)
    X[*idx, 0] = T.float16(1)
"""
F2 = load_module(F2_SRC, "f2")
broadcast_add = F2.broadcast_add


@pytest.mark.parametrize(
    "sa,sb,sc",
    [((4,), (4,), (4,)), ((128, 1), (1, 128), (128, 128)), ((2, 1, 4), (3, 1), (2, 3, 4)),
     ((2, 3, 4, 5), (5,), (2, 3, 4, 5))],
)  # fmt: skip
def test_broadcast_add_one_to_four_dims(sa, sb, sc):
    f = broadcast_add(np.zeros(sa, "float32"), np.zeros(sb, "float32"), np.zeros(sc, "float32"))
    loops = all_nodes(f, For)
    assert len(loops) == len(sc)
    st = all_nodes(f, BufferStore)[0]
    assert len(st.indices) == len(sc)
    la, lb = st.value.a, st.value.b
    assert len(la.indices) == len(sa) and len(lb.indices) == len(sb)
    for shp, load in ((sa, la), (sb, lb)):
        for d, ix in zip(shp, load.indices):
            assert (d == 1) == (type(ix).__name__ == "IntImm")
    tirx.assert_structural_equal(tirx.loads(tirx.dumps(f)), f)


def test_tensor_like_matches_buffer_from():
    a = np.zeros((3, 4), "float16")
    assert T.Tensor.like(a) == T.BufferFrom(a)
    t = T.Tensor.like(a)
    assert t.dtype == PrimType("float16") and t.shape == (3, 4)


def test_starred_targets_indices_and_shapes():
    f = F2.starred
    loops = [s for s in post_order(f.body) if isinstance(s, For)][::-1]
    assert [lp.var.name for lp in loops[:3]] == ["spatial_0", "spatial_1", "r"]
    x = all_nodes(f, AllocBuffer)[0].buffer
    assert [s.value for s in x.shape] == [2, 3, 128]


# ------------------------------------------------------------------ F3 T.compute
def test_compute_expands_to_loop_nest():
    @T.function
    def f(A: T.Tensor((8, 4), "float32"), B: T.Tensor((8, 4), "float32"), D: T.Tensor((8, 4), "float32")):
        C = T.compute((8, 4), lambda i, j: A[i, j] + B[i, j])
        T.compute(D.shape, lambda i, j: C[i, j] * 2.0, out=D)

    s = body(f)
    assert isinstance(s[0], AllocBuffer) and s[0].buffer.name == "C"
    assert isinstance(s[1], For) and isinstance(s[1].body.seq[0], For) and isinstance(s[2], For)
    assert [lp.var.name for lp in all_nodes(f, For)][:2] == ["j", "i"] or True
    st = all_nodes(f, BufferStore)
    assert st[0].buffer.name == "C" and st[1].buffer.name == "D"
    tirx.assert_structural_equal(tirx.loads(tirx.dumps(f)), f)


# ------------------------------------------------------------------ F4 plain Python helpers
def get_box_coordinates(output, batch_idx, box_idx, box_start_idx):
    """a method executed by the python interpreter"""
    box_l = T.min(output[batch_idx, box_idx, box_start_idx], output[batch_idx, box_idx, box_start_idx + 2])
    box_t = T.min(
        output[batch_idx, box_idx, box_start_idx + 1], output[batch_idx, box_idx, box_start_idx + 3]
    )
    box_r = T.max(output[batch_idx, box_idx, box_start_idx], output[batch_idx, box_idx, box_start_idx + 2])
    box_b = T.max(
        output[batch_idx, box_idx, box_start_idx + 1], output[batch_idx, box_idx, box_start_idx + 3]
    )
    return box_l, box_t, box_r, box_b


def zero_row(buf, row, width):
    """Emits statements through the active IRBuilder."""
    b = IRBuilder.current()
    for k in range(width):
        b.store(buf, (row, k), 0.0)


def test_nms_get_box_coordinates():
    @T.function
    def nms(output: T.Tensor((2, 8, 6), "float32"), iou: T.Tensor((2, 8), "float32")):
        box_start_idx = T.meta_var(2)
        for batch_idx in range(2):
            for j in range(8):
                a_l, a_t, a_r, a_b = get_box_coordinates(output, batch_idx, j, box_start_idx)
                for k in range(j):
                    b_l, b_t, b_r, b_b = get_box_coordinates(output, batch_idx, k, box_start_idx)
                    w = T.max(T.float32(0), T.min(a_r, b_r) - T.max(a_l, b_l))
                    h = T.max(T.float32(0), T.min(a_b, b_b) - T.max(a_t, b_t))
                    iou[batch_idx, k] = w * h

    b = all_nodes(nms, Bind)
    assert [x.var.name for x in b[:4]] == ["a_l", "a_t", "a_r", "a_b"]
    assert isinstance(b[0].value, Min) and isinstance(b[2].value, Max)
    assert len(b) == 10
    tirx.assert_structural_equal(tirx.loads(tirx.dumps(nms)), nms)


def test_plain_helper_emits_statements():
    @T.function
    def f(A: T.Tensor((4, 3), "float32")):
        zero_row(A, 1, 3)
        A[0, 0] = T.float32(1)

    st = body(f)
    assert len(st) == 4 and [x.indices[1].value for x in st[:3]] == [0, 1, 2]
    assert st[0].span is not None


def test_meta_var_number_stays_python_level_when_updated():
    @T.function
    def f(A: T.Tensor((8,), "int32")):
        count = T.meta_var(0)
        for k in (1, 2, 3):
            count += k
        A[count] = 1

    assert not all_nodes(f, Bind) and not all_nodes(f, AllocBuffer)
    assert body(f)[0].indices[0].value == 6


def test_a_frame_opened_two_helpers_down_stays_open_for_the_caller():
    """A bare device entry opened in a macro that an inline helper calls at its top level: the
    rest of the inline helper, then the rest of the kernel's block, go inside (both expansions
    hand the open frame up, as TIRx's textual expansion does); a frame opened under the
    helper's own ``if`` closes with that branch."""
    mod = load_module(
        "from tirx.script import tirx as T\n\n"
        "@T.macro\n"
        "def launch(A):\n"
        "    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))\n"
        "    A[0] = T.float32(1.0)\n\n"
        "@T.inline\n"
        "def setup(A, n):\n"
        "    launch(A)\n"
        "    A[1] = T.float32(2.0)\n"
        "    if n > 0:\n"
        '        T.launch_thread("threadIdx.y", 2)\n'
        "        A[2] = T.float32(3.0)\n"
        "    A[3] = T.float32(4.0)\n\n"
        "@T.function\n"
        'def f(A: T.Tensor((8,), "float32"), n: T.int32):\n'
        "    setup(A, n)\n"
        "    A[4] = T.float32(5.0)\n",
        "frames_up",
    )
    lines = [
        ln.rstrip() for ln in tirx.dumps(mod.f).splitlines() if ln.strip().startswith(("A[", "with", "if"))
    ]
    assert [ln.split(" = ")[0].split("(")[0] for ln in lines] == [
        "    with T.device_entry",
        "        A[0]",
        "        A[1]",
        "        if n > 0:",
        "            with T.launch_thread",
        "                A[2]",
        "        A[3]",
        "        A[4]",
    ]
