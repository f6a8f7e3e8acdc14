"""Layouts (issue #14, TIRx's ``T.TileLayout`` / ``T.ComposeLayout`` / ``T.S`` / ``T.R`` / axes):
what a layout maps an element to (values TIRx gives, recorded from apache-tvm-tirx 0.1.0a4),
the nodes' structural equality, print -> load, and that an element written through a layout
lands in storage where the layout says (interpreter, numpy reference; CUDA through NVRTC).
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import tirx
import tirx.interp as ti
from tirx.codegen import generate
from tirx.ir import Buffer
from tirx.ir.layout import (
    Axis,
    ComposeLayout,
    Iter,
    LayoutError,
    TileLayout,
    alloc_span,
    enumerate_offsets,
    vector_run,
)
from tirx.ir.types import TensorType, float32, int32
from tirx.ir.visitor import post_order
from tirx.script import tirx as T
from tirx.surface.builder import IRBuilder

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
lane, warp = T.cuda.Axis.laneid, T.cuda.Axis.warpid


# ------------------------------------------------------------------ what TIRx computes
def test_spec_builders_make_the_iters_tirx_makes():
    assert tirx.structural_equal(T.TileLayout(T.S[4, 8]), TileLayout.from_iters([Iter(4, 8), Iter(8, 1)]))
    lay = T.TileLayout(T.S[(4, 8) : (1 @ lane, 2)] + T.R[2 : 4 @ lane] + 1 @ warp + 3)
    want = TileLayout.from_iters(
        shard=[Iter(4, 1, "laneid"), Iter(8, 2, "m")],
        replica=[Iter(2, 4, "laneid")],
        offset={"warpid": 1, "m": 3},
    )
    assert tirx.structural_equal(lay, want)
    assert lay.offset_axes == ("m", "warpid")  # sorted by name, as TIRx prints them
    # a string stride is stride 1 on that axis; a (value, axis) pair names both
    assert tirx.structural_equal(
        T.TileLayout(T.S[(2, 3) : ("laneid", (5, "warpid"))]),
        TileLayout.from_iters([Iter(2, 1, "laneid"), Iter(3, 5, "warpid")]),
    )


def test_apply_size_span_match_tirx():
    # values printed by TIRx 0.1.0a4 for the same layouts
    assert T.TileLayout(T.S[(4, 16) : (16, 1)]).apply(37) == {"m": 37}
    assert T.TileLayout(T.S[(4, 16) : (16, 1)]).apply(2, 5, shape=[8, 8]) == {"m": 21}
    lay = T.TileLayout(T.S[(4, 8) : (1 @ lane, 2)] + T.R[2 : 4 @ lane] + 1 @ warp + 3)
    assert lay.apply(2, 3) == {"laneid": 2, "m": 9, "warpid": 1}
    assert (lay.size(), lay.layout_span(), lay.layout_span("laneid"), lay.layout_span("warpid")) == (
        32,
        18,
        8,
        2,
    )
    assert lay.size("laneid") == 4
    assert T.ComposeLayout(0, 2, 3, T.TileLayout(T.S[8, 8])).apply(1, 2) == {"m": 11}  # TIRx's docstring
    c = T.ComposeLayout(1, 2, 4, T.TileLayout(T.S[8, 64] + 3), swizzle_inner=False)
    assert c.apply(1, 2) == {"m": 5} and c.apply(66) == {"m": 5}
    assert T.TileLayout(T.S[(4, 16) : (16, 3)] + 7).layout_span("m") == 101
    # allocation sizes TIRx's CUDA declares for these shared tensors
    assert alloc_span(c) == 640
    assert alloc_span(T.ComposeLayout(0, 3, 3, T.TileLayout(T.S[10, 10]))) == 104
    assert alloc_span(T.ComposeLayout(0, 2, 2, T.TileLayout(T.S[(10, 10) : (1, 12)]))) == 120


def _swizzle(o: int, p: int, s: int, a: int, inner: bool) -> int:
    """The XOR swizzle as TIRx's ComposeLayout applies it (checked against TIRx for all offsets < 1024)."""
    mask = (1 << s) - 1
    if inner:
        return o ^ (((o >> (p + a)) & mask) << p)
    return o ^ (((o >> p) & mask) << (p + a))


@given(p=st.integers(0, 3), s=st.integers(0, 3), extra=st.integers(0, 2), inner=st.booleans())
@SETTINGS
def test_compose_is_the_xor_swizzle(p, s, extra, inner):
    a = s + extra
    c = ComposeLayout(p, s, a, TileLayout(T.S[1024]), inner)
    for o in range(0, 1024, 7):
        assert c.apply(o)["m"] == _swizzle(o, p, s, a, inner)


def test_cuda_layout_factories():
    atom = T.cuda.layout.mma_atom_layout("float16", T.cuda.layout.SwizzleMode.SWIZZLE_128B_ATOM)
    assert (atom.per_element, atom.swizzle_len, atom.atom_len) == (3, 3, 3)
    assert atom.tile_layout.size() == 512
    assert T.cuda.layout.mma_atom_shape("float16", 3) == [8, 64]
    d = T.cuda.layout.tmem_datapath_layout("F", 64, 32, sub_slab=1)
    assert d.apply(17, 3, shape=[64, 32]) == {"TLane": 32 + 16 + 1, "TCol": 3}
    assert T.cuda.Axis.get("TLane") is Axis.get("TLane") and Axis.m is Axis("m")
    with pytest.raises(ValueError, match="Unknown backend axis"):
        T.cuda.Axis.get("m")
    assert lane.is_thread() and not lane.is_memory() and Axis.m.is_memory()


# ------------------------------------------------------------------ bijection (hypothesis)
@st.composite
def compact_layouts(draw):
    """A permutation of row-major strides over random extents: a bijection onto [0, size)."""
    n = draw(st.integers(1, 4))
    ext = draw(st.lists(st.integers(1, 6), min_size=n, max_size=n))
    order = draw(st.permutations(range(n)))
    strides = [0] * n
    acc = 1
    for k in reversed(order):
        strides[k] = acc
        acc *= ext[k]
    return TileLayout.from_iters([Iter(e, s) for e, s in zip(ext, strides)]), ext


@given(lay=compact_layouts(), data=st.data())
@SETTINGS
def test_compact_tile_layouts_are_bijections_and_swizzles_keep_them(lay, data):
    tile, ext = lay
    size = int(np.prod(ext))
    offs = enumerate_offsets(tile, ext)
    assert sorted(offs) == list(range(size))  # onto [0, size): a bijection
    # the same layout over another shape of the same size: the row-major regrouping
    flat = enumerate_offsets(tile, (size,))
    assert flat == offs
    # a swizzle whose period divides the size permutes it again
    s = data.draw(st.integers(0, 2))
    a = data.draw(st.integers(s, 3))
    p = data.draw(st.integers(0, 2))
    inner = data.draw(st.booleans())
    c = ComposeLayout(p, s, a, tile, inner)
    sw = enumerate_offsets(c, ext)
    assert [_swizzle(o, p, s, a, inner) for o in offs] == sw
    period = 1 << ((p if inner else p + a) + s)
    if size % period == 0:
        assert sorted(sw) == list(range(size))
    assert max(sw) < alloc_span(c)


# ------------------------------------------------------------------ structural equality
def test_structural_equality_sees_every_field():
    base = ComposeLayout(0, 3, 3, TileLayout(T.S[8, 64] + 3))
    same = ComposeLayout(0, 3, 3, TileLayout(T.S[8, 64] + 3))
    assert tirx.structural_equal(base, same)
    assert tirx.structural_hash(base) == tirx.structural_hash(same)
    others = [
        ComposeLayout(1, 3, 3, TileLayout(T.S[8, 64] + 3)),
        ComposeLayout(0, 3, 3, TileLayout(T.S[8, 64] + 3), swizzle_inner=False),
        ComposeLayout(0, 3, 3, TileLayout(T.S[8, 64] + 4)),
        ComposeLayout(0, 3, 3, TileLayout(T.S[8, 64] + 3 @ lane)),
        ComposeLayout(0, 3, 3, TileLayout(T.S[(8, 64) : (64, 2)] + 3)),
        ComposeLayout(0, 3, 3, TileLayout(T.S[(8, 64) : (64, 1 @ lane)] + 3)),
    ]
    for o in others:
        assert not tirx.structural_equal(base, o), o


def _kernel(layout, shape=(8, 8)):
    b = IRBuilder()
    with b.function("f"):
        b.param("A", TensorType(shape, float32, layout=layout))
    return b.get()


def test_a_buffer_layout_takes_part_in_equality():
    one = _kernel(TileLayout(T.S[8, 8]))
    assert tirx.structural_equal(one, _kernel(TileLayout(T.S[8, 8])))
    assert not tirx.structural_equal(one, _kernel(TileLayout(T.S[(8, 8) : (1, 8)])))
    assert not tirx.structural_equal(one, _kernel(None))


# ------------------------------------------------------------------ print -> load
@st.composite
def layouts(draw):
    n = draw(st.integers(1, 3))
    axes = st.sampled_from(["m", "m", "laneid", "warpid", "TCol"])
    it = st.builds(lambda e, s, a: Iter(e, s, a), st.integers(1, 64), st.integers(0, 64), axes)
    shard = draw(st.lists(it, min_size=n, max_size=n))
    replica = draw(st.lists(it, max_size=2))
    off = draw(st.dictionaries(axes, st.integers(0, 9), max_size=2))
    tile = TileLayout.from_iters(shard, replica, off)
    if draw(st.booleans()):
        s = draw(st.integers(0, 3))
        return ComposeLayout(draw(st.integers(0, 3)), s, draw(st.integers(s, 4)), tile, draw(st.booleans()))
    return tile


@given(lay=layouts())
@SETTINGS
def test_print_load_round_trips(lay):
    f = _kernel(lay)
    text = tirx.dumps(f)
    g = tirx.loads(text)
    tirx.assert_structural_equal(f, g)
    assert tirx.dumps(g) == text
    assert tirx.structural_hash(f) == tirx.structural_hash(g)


def test_bad_layout_values_are_diagnostics():
    with pytest.raises(tirx.DiagnosticError, match=r"layout must be a T\.TileLayout"):
        tirx.loads("@T.function\ndef f(A: T.Tensor((4,), T.float32, layout=3)):\n    pass\n")
    with pytest.raises(tirx.DiagnosticError, match=r"shard must be a list of T\.Iter"):
        tirx.loads(
            "@T.function\ndef f(A: T.Tensor((4,), T.float32, layout=T.TileLayout.from_iters(shard=3))):\n    pass\n"
        )
    with pytest.raises(ValueError, match="atom_len"):
        T.ComposeLayout(0, 3, 2, T.TileLayout(T.S[8]))
    with pytest.raises(TypeError, match="spec must be"):
        T.TileLayout(3)


# ------------------------------------------------------------------ storage (interpreter, CUDA)
LAYOUTS = {
    "row": T.TileLayout(T.S[8, 16]),
    "col": T.TileLayout(T.S[(8, 16) : (1, 8)]),
    "split": T.TileLayout(T.S[(2, 4, 4, 4) : (4, 1, 32, 8)]),
    "swz_in": T.ComposeLayout(0, 3, 3, T.TileLayout(T.S[8, 16])),
    "swz_out": T.ComposeLayout(1, 2, 3, T.TileLayout(T.S[(8, 16) : (1, 8)]), swizzle_inner=False),
}


def _store_kernel(layout):
    @T.function
    def f(A: T.Tensor((8, 16), "int32", layout=layout), R: T.Tensor((8, 16), "int32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
        tx = T.cuda.thread_idx("x")
        S = T.alloc_shared((8, 16), "int32", layout=layout)
        A[tx // 16, tx % 16] = tx
        S[tx // 16, tx % 16] = tx * 3
        T.cuda.cta_sync()
        R[tx % 8, tx // 8] = S[tx % 8, tx // 8]

    return f


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_elements_land_where_the_layout_says(name):
    layout = LAYOUTS[name]
    f = _store_kernel(layout)
    assert "layout=" in tirx.dumps(f)
    A = np.full((8, 16), -1, np.int32)
    R = np.zeros((8, 16), np.int32)
    ti.compile(f)(A, R)
    offs = enumerate_offsets(layout, (8, 16))
    assert sorted(offs) == list(range(128))
    flat = A.reshape(-1)
    for lin, o in enumerate(offs):  # the parameter's storage holds element lin at the layout's offset
        assert flat[o] == lin, (lin, o)
    # shared storage addressed through the same layout reads back the logical tensor
    np.testing.assert_array_equal(R, (np.arange(128).reshape(8, 16) * 3))


def test_cuda_addresses_through_the_layout():
    src = generate(_store_kernel(LAYOUTS["swz_in"])).text
    assert "int S[128]" in src and "^" in src
    pytest.importorskip("cuda.bindings.nvrtc")
    from tirx.runtime.nvrtc import compile_source

    for name in LAYOUTS:
        assert compile_source(generate(_store_kernel(LAYOUTS[name])).text, "sm_90a").cubin


def test_thread_axis_layouts_cannot_be_addressed_elementwise():
    @T.function
    def f(A: T.Tensor((4,), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        L = T.alloc_local((4,), "float32", layout=T.TileLayout(T.S[4 : 1 @ lane]))
        L[0] = A[0]

    with pytest.raises(tirx.DiagnosticError, match="laneid"):
        generate(f)
    with pytest.raises(tirx.DiagnosticError, match="laneid"):
        ti.compile(f)


def test_layout_of_a_symbolic_shape():
    b = IRBuilder()
    with b.function("f"):
        n = b.param("n", int32)
        b.param("A", TensorType((n, 4), float32, layout=TileLayout.from_iters([Iter(n, 1), Iter(4, n)])))
    f = b.get()
    assert tirx.structural_equal(tirx.loads(tirx.dumps(f)), f)
    with pytest.raises(LayoutError):
        T.TileLayout(T.S[4 : 1 @ lane]).pack(2)


# ------------------------------------------------------------------ against TIRx's own offsets
GOLDEN = pathlib.Path(__file__).parent / "data" / "tirx_golden" / "layouts.json"


def test_offsets_and_text_match_tirx():
    """200 random (swizzled) tile layouts over tensors of another shape: tirx gives the
    offsets TIRx computed (tools/tirx_oracle/golden_layouts.py), prints TIRx's text, and
    TIRx's text loads to the same layout."""
    recs = json.loads(GOLDEN.read_text())["apply"]
    assert len(recs) == 200
    for r in recs:
        lay = T.TileLayout(T.S[tuple(r["ext"]) : tuple(r["strides"])] + r["offset"])
        if r["swizzle"]:
            p, s, a, inner = r["swizzle"]
            lay = T.ComposeLayout(p, s, a, lay, swizzle_inner=inner)
        got = [int(lay.apply(*c, shape=r["shape"])["m"]) for c in r["coords"]]
        assert got == r["m"], r
        assert tirx.dumps(lay) == r["text"]
        f = _kernel(lay, tuple(r["shape"]))
        assert tirx.structural_equal(tirx.loads(tirx.dumps(f).replace(tirx.dumps(lay), r["text"])), f)


@given(lay=compact_layouts(), data=st.data())
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_interpreter_places_elements_for_random_layouts(lay, data):
    """A random bijective tile layout, maybe swizzled, over a tensor of another shape of the
    same size: the interpreter stores element k at the offset the layout gives (numpy)."""
    tile, ext = lay
    size = int(np.prod(ext))
    s = data.draw(st.integers(0, 2))
    layout = ComposeLayout(0, s, data.draw(st.integers(s, 3)), tile, data.draw(st.booleans()))
    if size % (1 << (layout.atom_len + s)) or data.draw(st.booleans()):
        layout = tile  # a swizzle that would leave the tensor's storage
    rows = data.draw(st.sampled_from([d for d in range(1, size + 1) if size % d == 0]))
    shape = (rows, size // rows)
    b = IRBuilder()
    with b.function("f"):
        A = b.param("A", TensorType(shape, int32, layout=layout))
        with b.for_("i", 0, shape[0]) as i, b.for_("j", 0, shape[1]) as j:
            b.store(A, (i, j), i * shape[1] + j)
    f = b.get()
    out = np.full(shape, -1, np.int32)
    ti.compile(f)(out)
    want = np.empty(size, np.int32)
    want[enumerate_offsets(layout, shape)] = np.arange(size, dtype=np.int32)
    np.testing.assert_array_equal(out.reshape(-1), want)


def test_cuda_factories_match_tirx():
    """``T.cuda.layout`` factories over a grid of arguments give TIRx's layouts, and refuse
    what TIRx refuses. One deviation: a swizzled MMA layout of a shape that is not a whole
    number of atoms, where TIRx returns a layout smaller than the tensor, is an error."""
    facts = json.loads(GOLDEN.read_text())["factories"]
    assert sum(not r["text"].startswith("error") for r in facts) > 100
    for r in facts:
        fn = getattr(T.cuda.layout, r["factory"])
        try:
            got = tirx.dumps(fn(*r["args"], **r["kwargs"]))
        except (ValueError, TypeError, KeyError) as e:
            got = f"error: {type(e).__name__}"
        if r["text"].startswith("error"):
            assert got.startswith("error"), r
        elif got.startswith("error"):
            dt, mode, shape = r["args"]
            assert (
                r["factory"] == "mma_shared_layout" and shape[-1] % T.cuda.layout.mma_atom_shape(dt, mode)[-1]
            ), r
        else:
            assert got == r["text"], r


def test_layout_algebra_matches_tirx():
    # printed by TIRx 0.1.0a4 for the same calls
    def text(lay):
        return tirx.dumps(lay)

    it = "T.TileLayout.from_iters(shard=[{}], replica=[])".format
    assert text(T.TileLayout(T.S[(4, 1, 8) : (8, 5, 1)]).canonicalize()) == it('T.Iter(32, 1, "m")')
    assert text(T.TileLayout(T.S[(2, 4, 8) : (4, 1, 8)]).canonicalize()) == it(
        'T.Iter(8, 1, "m"), T.Iter(8, 8, "m")'
    )
    assert text(T.TileLayout(T.S[(4, 8) : (8, 1)] + 0).canonicalize()) == it('T.Iter(32, 1, "m")')
    tiled = T.TileLayout(T.S[8, 64]).tile_to([16, 128], [8, 64])
    assert text(tiled) == it(
        'T.Iter(2, 1024, "m"), T.Iter(8, 64, "m"), T.Iter(2, 512, "m"), T.Iter(64, 1, "m")'
    )
    grouped, seps = T.TileLayout(T.S[512]).group([8, 64])
    assert seps == [0, 1, 2] and text(grouped) == it('T.Iter(8, 64, "m"), T.Iter(64, 1, "m")')
    perm = T.TileLayout(T.S[(2, 3, 4) : (12, 4, 1)]).permute_by_groups([0, 1, 3], [1, 0])
    assert text(perm) == it('T.Iter(3, 4, "m"), T.Iter(4, 1, "m"), T.Iter(2, 12, "m")')
    flags = [
        (T.TileLayout(T.S[8, 8]), True, True),
        (T.TileLayout(T.S[(8, 8) : (1, 8)]), False, False),
        (T.TileLayout(T.S[8, 8] + 3), True, False),
        (T.TileLayout(T.S[(8, 8) : (1 @ lane, 1)]), False, False),
        (T.TileLayout(T.S[(4, 8) : (8, 1)] + T.R[2:64]), False, False),
    ]
    for lay, contiguous, trivial in flags:
        assert (lay.is_contiguous(), lay.is_trivial()) == (contiguous, trivial), lay
    with pytest.raises(LayoutError):
        T.TileLayout(T.S[8, 8]).tile_to([12, 8], [8, 8])


def test_a_tensor_larger_than_its_layout_is_an_error():
    @T.function
    def f(B: T.Tensor((128,), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
        tx = T.cuda.thread_idx("x")
        Q = T.alloc_shared((8, 64), "float32", layout=T.TileLayout(T.S[8, 8]))
        Q[tx // 64, tx % 64] = B[tx]

    with pytest.raises(tirx.DiagnosticError, match="512 elements but its layout places only 64"):
        generate(f)


# ------------------------------------------------------------------ TIRx's kernel, run here
STORAGE = json.loads((GOLDEN.parent / "layouts_cuda.json").read_text())["layout_storage"]


def storage_reference(a: np.ndarray, f) -> np.ndarray:
    """What ``layout_storage`` writes to B for parameter storage ``a``, from numpy and the
    layouts' offsets: the raw storage of S and W after the stores."""
    bufs = {b.name: b for b in post_order(f) if type(b) is Buffer}
    logical_a = a.reshape(-1)[np.array(enumerate_offsets(bufs["A"].layout, (64, 64)))].reshape(64, 64)
    s_val = logical_a * 3 + (np.arange(64) % 32)[None, :]
    raw_s = np.zeros(4096, np.int32)
    raw_s[np.array(enumerate_offsets(bufs["S"].layout, (64, 64)))] = s_val.reshape(-1)
    raw_w = np.zeros(128, np.int32)
    raw_w[np.array(enumerate_offsets(bufs["W"].layout, (8, 16)))] = np.arange(128, dtype=np.int32)
    return np.concatenate([raw_s, raw_w])


def test_tirx_kernel_text_runs_as_numpy_says():
    f = tirx.loads(STORAGE["text"])
    a = np.random.default_rng(3).integers(-1000, 1000, (64, 64)).astype(np.int32)
    b = np.zeros(4224, np.int32)
    ti.compile(f)(a, b)
    np.testing.assert_array_equal(b, storage_reference(a, f))


def test_storage_kernel_compiles_both_ways():
    """tirx's CUDA of TIRx's text and TIRx's own CUDA both compile with NVRTC (the GPU run is
    tests/test_layout_gpu.py)."""
    pytest.importorskip("cuda.bindings.nvrtc")
    from tirx_golden_cuda_util import cccl_include

    from tirx.runtime.nvrtc import compile_source

    assert compile_source(generate(tirx.loads(STORAGE["text"])).text, "sm_90a").cubin
    inc = cccl_include()
    if inc is None:
        pytest.skip("libcu++ headers (cuda/std/cstdint, which TIRx's CUDA includes) not found")
    assert compile_source(STORAGE["cuda"], "sm_90a", name="tirx_layout.cu", options=(f"-I{inc}",)).cubin


@given(
    ext=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    strides=st.lists(st.integers(0, 30), min_size=3, max_size=3),
    off=st.integers(0, 5),
)
@SETTINGS
def test_contiguous_layouts_are_bijections(ext, strides, off):
    """Where the layout says it is contiguous (TIRx's ``is_contiguous``), its offsets are a
    bijection onto ``[offset, offset + size)``; every offset is below the layout's span."""
    lay = TileLayout.from_iters([Iter(e, s) for e, s in zip(ext, strides)], offset={"m": off})
    size = int(np.prod(ext))
    offs = enumerate_offsets(lay, ext)
    if lay.is_contiguous():
        assert sorted(offs) == list(range(off, off + size))
    assert max(offs) < lay.layout_span("m")


@st.composite
def inner_run_layouts(draw):
    """Layouts whose innermost iter is the stride-1 one (what vector runs need)."""
    n = draw(st.integers(1, 3))
    ext = draw(st.lists(st.sampled_from([2, 4, 8, 16]), min_size=n, max_size=n))
    order = [*draw(st.permutations(range(n - 1))), n - 1]
    strides, acc = [0] * n, 1
    for k in reversed(order):
        strides[k] = acc
        acc *= ext[k]
    if draw(st.booleans()):  # other strides anything (not a bijection: the property still holds)
        strides[:-1] = draw(st.lists(st.integers(1, 40), min_size=n - 1, max_size=n - 1))
    off = draw(st.sampled_from([0, 0, 8, 3]))
    return TileLayout.from_iters([Iter(e, st_) for e, st_ in zip(ext, strides)], offset={"m": off}), ext


@given(lay=inner_run_layouts(), data=st.data())
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_vector_runs_are_consecutive(lay, data):
    """Where a vector access of ``lanes`` elements is addressed as one contiguous run
    (``vector_run``), the layout does put those elements at consecutive offsets."""
    tile, ext = lay
    size = int(np.prod(ext))
    rows = data.draw(st.sampled_from([d for d in range(1, size + 1) if size % d == 0]))
    shape = (rows, size // rows)
    s = data.draw(st.integers(1, 2))
    p = data.draw(st.integers(0, 3))
    layout = data.draw(
        st.sampled_from(
            [tile, ComposeLayout(p, s, data.draw(st.integers(s, 3)), tile, data.draw(st.booleans()))]
        )
    )
    lanes = data.draw(st.sampled_from([2, 4, 8]))
    runs = 0
    for r in range(rows):
        for base in range(0, shape[1] - lanes + 1, lanes):
            if vector_run(layout, shape, base, lanes):
                runs += 1
                offs = [int(layout.apply(r, base + k, shape=shape)["m"]) for k in range(lanes)]
                assert offs == list(range(offs[0], offs[0] + lanes)), (r, base, offs)
    event(f"vector runs: {'some' if runs else 'none'}")


def test_swizzled_vector_stores_stay_vectors():
    lay = T.ComposeLayout(3, 3, 3, T.TileLayout(T.S[8, 64]))

    @T.function
    def f(A: T.Tensor((8, 64), "int32", layout=lay), B: T.Tensor((512,), "int32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
        tx = T.cuda.thread_idx("x")
        A[tx // 8, T.Ramp(tx % 8 * 8, 1, 8)] = B[T.Ramp(tx * 8, 1, 8)]

    a, b = np.zeros((8, 64), np.int32), np.arange(512, dtype=np.int32)
    ti.compile(f)(a, b)
    want = np.empty(512, np.int32)
    want[enumerate_offsets(lay, (8, 64))] = b
    np.testing.assert_array_equal(a.reshape(-1), want)
    src = generate(f).text
    assert "tirx_scatter(A" not in src and "*(tirx_vec<int, 8>*)(A + " in src


# ------------------------------------------------------------------ tensor views
def _views_kernel(layout):
    @T.function
    def f(A: T.Tensor((8, 16), "int32"), O: T.Tensor((512,), "int32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        S = T.alloc_shared((8, 16), "int32", layout=layout)
        for i, j in T.grid(8, 16):
            S[i, j] = A[i, j]
        P = S.permute(1, 0)
        V = S.view(4, 32)
        U = S.sub[2:6, 4:12]
        W = P.sub[3, 1:5]
        R = S.sub[5, :]
        for i, j in T.grid(16, 8):
            O[i * 8 + j] = P[i, j]
        for i, j in T.grid(4, 32):
            O[128 + i * 32 + j] = V[i, j]
        for i, j in T.grid(4, 8):
            O[256 + i * 8 + j] = U[i, j]
        for i in range(4):
            O[288 + i] = W[i]
        for j in range(16):
            O[292 + j] = R[j]

    return f


@pytest.mark.parametrize("name", ["row", "swz_in", "col"])
def test_views_read_what_numpy_views_read(name):
    lay = {
        "row": None,
        "swz_in": T.ComposeLayout(0, 3, 3, T.TileLayout(T.S[8, 16])),
        "col": T.TileLayout(T.S[(8, 16) : (1, 8)]),
    }[name]
    f = _views_kernel(lay)
    a = np.arange(128, dtype=np.int32).reshape(8, 16) * 7
    o = np.zeros(512, np.int32)
    ti.compile(f)(a, o)
    np.testing.assert_array_equal(o[:128], a.T.reshape(-1))
    np.testing.assert_array_equal(o[256:288], a[2:6, 4:12].reshape(-1))
    np.testing.assert_array_equal(o[288:292], a.T[3, 1:5])
    np.testing.assert_array_equal(o[292:308], a[5, :])
    np.testing.assert_array_equal(o[128:256], a.reshape(-1))  # a view reads in logical order
    tirx.assert_structural_equal(tirx.loads(tirx.dumps(f)), f)


def test_bad_views_are_located_errors():
    with pytest.raises(tirx.DiagnosticError, match=r"exceeds dim 0 extent 8"):

        @T.function
        def f(A: T.Tensor((8, 16), "int32")):
            U = A.sub[4:12, :]  # noqa: F841

    with pytest.raises(tirx.DiagnosticError, match="not compatible"):

        @T.function
        def g(A: T.Tensor((8, 16), "int32")):
            V = A.view(5, 5)  # noqa: F841

    with pytest.raises(tirx.DiagnosticError, match="invalid dimensions"):

        @T.function
        def h(A: T.Tensor((8, 16), "int32")):
            P = A.permute(0, 0)  # noqa: F841


def test_deep_expressions_with_layouts_compile_for_the_interpreter():
    """Mutate fuzz seed 973018180: lowering layouts is a traversal; a 3,000-deep index next to a
    layout tensor compiled for the interpreter raised RecursionError (now retried on the
    large-stack thread like every other traversal)."""
    chain = " + ".join(["tx % 64"] + ["0"] * 3000)
    text = (
        "@T.function\n"
        "def f(B: T.Tensor((64,), T.float32)):\n"
        '    with T.device_entry(1, 1, 1, 64, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": '
        '["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):\n'
        '        tx: T.let[T.int32] = T.cuda.thread_idx("x")\n'
        '        M = T.alloc_tensor(ty_args=[T.Tensor((64,), T.float32, scope="shared", '
        'layout=T.TileLayout.from_iters(shard=[T.Iter(64, 1, "m")], replica=[]))])\n'
        "        M[tx] = T.float32(2.0)\n"
        f"        B[tx] = M[{chain}]\n"
    )
    f = tirx.loads(text)
    k = tirx.compile(f, target="interp")
    b = np.zeros(64, np.float32)
    k(b)
    assert (b == 2).all()


def test_a_layout_offset_past_the_index_type_is_a_located_error():
    """Mutate fuzz seed 1338261887: a stride of 2**31 made the lowering build an int32 constant
    that does not fit (an internal ValueError); now a located error naming the tensor."""
    text = (
        "@T.function\n"
        "def f(A: T.Tensor((64,), T.float16), B: T.Tensor((64,), T.float16)):\n"
        '    with T.device_entry(1, 1, 1, 32, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": '
        '["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):\n'
        "        v = T.decl_tensor(A.data, ty_args=[T.Tensor((32,), T.float16, layout=T.TileLayout.from_iters("
        'shard=[T.Iter(32, 2147483648, "m")], replica=[]))])\n'
        "        B[0] = v[4]\n"
    )
    f = tirx.loads(text)
    for target in ("interp", "cuda -arch=sm_90a"):
        with pytest.raises(
            tirx.DiagnosticError, match="tensor v: its layout puts this element at an offset"
        ) as ei:
            tirx.compile(f, target=target) if target == "interp" else generate(f)
        assert ":6:" in str(ei.value) or "line 6" in str(ei.value) or "<string>" in str(ei.value)


def test_a_swizzle_too_wide_for_the_offset_type_is_a_located_error():
    """Mutate fuzz seed 207343794: ComposeLayout(per_element, swizzle_len, atom_len) whose bits pass
    int32 built an IntImm that does not fit (internal ValueError); now a located error."""
    text = (
        "@T.function\n"
        "def f(B: T.Tensor((64,), T.float16)):\n"
        '    with T.device_entry(1, 1, 1, 32, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": '
        '["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):\n'
        '        tx: T.let[T.int32] = T.cuda.thread_idx("x")\n'
        '        S = T.alloc_tensor(ty_args=[T.Tensor((64,), T.float16, scope="shared", layout=T.ComposeLayout('
        '0, 32, 32, T.TileLayout.from_iters(shard=[T.Iter(64, 1, "m")], replica=[])))])\n'
        "        B[tx] = S[tx]\n"
    )
    f = tirx.loads(text)
    with pytest.raises(tirx.DiagnosticError, match=r"swizzle .* does not fit the int32 offset"):
        tirx.compile(f, target="interp")
    # mutate fuzz seed 1114271779: swizzle parameters of 2**31 or 2**64 ran out of memory (or
    # time) computing 1 << bits; past a 64-bit offset they are refused where the layout is built
    for bad in ("2147483648, 1, 3", "1, 2, 18446744073709551616"):
        with pytest.raises(tirx.DiagnosticError, match="must be at most 64"):
            tirx.loads(text.replace("0, 32, 32,", bad + ","))


def test_layout_arithmetic_past_int32_widens_to_int64():
    """Mutate fuzz seed 1232310613: an Iter extent of 2**31 made the index regrouping build an
    out-of-range int32 constant (an internal ValueError). Since seed 512801254 the literal widens
    the arithmetic to int64, as TIRx's literal rules do: the CUDA addresses in 64 bits, and the
    8 GiB shared allocation is the interpreter's located limit error, not an internal one."""
    text = (
        "@T.function\n"
        "def f(B: T.Tensor((64,), T.float32)):\n"
        '    with T.device_entry(1, 1, 1, 32, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": '
        '["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):\n'
        '        tx: T.let[T.int32] = T.cuda.thread_idx("x")\n'
        '        W = T.alloc_tensor(ty_args=[T.Tensor((8, 8), T.float32, scope="shared", '
        'layout=T.TileLayout.from_iters(shard=[T.Iter(2, 4, "m"), T.Iter(2147483648, 1, "m"), '
        'T.Iter(8, 8, "m")], replica=[]))])\n'
        "        W[tx % 8, tx // 16] = B[tx % 64]\n"
    )
    f = tirx.loads(text)
    src = generate(f).text
    assert "% 2147483648LL" in src and "(int64_t)" in src
    k = tirx.compile(f, target="interp")
    with pytest.raises(ti.LimitError, match=r"allocation W at <string>:5:9"):
        k(np.zeros(64, np.float32))


def test_constant_sum_extents_fold_in_addresses():
    """Text keeps ``T.Iter(64 + 64, ...)`` as written; the address arithmetic folds it instead
    of copying the sum into every access (mutate fuzz seed 1437615899: a 50-term sum made the
    interpreter compile 26,000 arithmetic nodes)."""
    from tirx.ir import Add, IntImm, Var
    from tirx.ir.layout import memory_offset

    total = IntImm(64, int32)
    for _ in range(49):
        total = Add(total, IntImm(64, int32))
    lay = TileLayout(shard=(Iter(8, total, "m"), Iter(total, 1, "m")))
    i, j = Var("i", int32), Var("j", int32)
    off = memory_offset(lay, (i, j), (8, 3200))
    assert not any(isinstance(n, Add) and isinstance(n.a, IntImm) and isinstance(n.b, IntImm)
                   for n in post_order(off))  # fmt: skip
    assert lay.size() == 8 * 3200 and lay.layout_span() == 8 * 3200
    # a sum that overflows its dtype is not folded (the IR would wrap it): it stays an expression
    big = Add(IntImm(2**31 - 1, int32), IntImm(1, int32))
    assert isinstance(TileLayout(shard=(Iter(4, 1, "m"), Iter(2, big, "m"))).layout_span(), Add)


@settings(max_examples=20, deadline=None)
@given(k=st.sampled_from((2, 4, 8)), data=st.data())
def test_stepped_sub_reads_every_kth_element(k, data):
    s = data.draw(st.integers(0, k - 1))
    sl = slice(s, None, k)

    @T.function
    def f(A: T.Tensor((8, 16), "int32"), B: T.Tensor((8, 16 // k), "int32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
        r = T.cuda.thread_idx("x")
        v = A.sub[r, sl]
        for j in range(16 // k):
            B[r, j] = v[j]

    a = np.arange(128, dtype=np.int32).reshape(8, 16)
    b = np.zeros((8, 16 // k), np.int32)
    ti.compile(f)(a, b)
    np.testing.assert_array_equal(b, a[:, s::k])


def test_stepped_sub_refuses_what_tirx_refuses():
    for bad, msg in ((slice(3, None, 2), r"start 3 must be in \[0, 2\)"), (slice(0, 8, 2), "stop bound")):
        with pytest.raises(tirx.DiagnosticError, match=msg):

            @T.function
            def f(A: T.Tensor((8, 16), "int32")):
                T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
                r = T.cuda.thread_idx("x")
                v = A.sub[r, bad]  # noqa: B023 - parsed now, while bad is this one
                A[r, 0] = v[0]


@settings(max_examples=20, deadline=None)
@given(lo=st.integers(0, 8), n=st.integers(1, 8))
def test_views_that_depend_on_the_thread_run_in_the_interpreter(lo, n):
    # the lowered view's extent is r * 16 + ...: one per thread; checking every thread against
    # thread 0's extent reported an out-of-bounds access for thread 1 on (a false positive)
    @T.function
    def f(A: T.Tensor((8, 16), "int32"), B: T.Tensor((8, 8), "int32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
        r = T.cuda.thread_idx("x")
        row = A.sub[r]
        part = A.sub[r, lo : lo + n]
        for j in range(n):
            B[r, j] = part[j] + row[15 - j]

    a = np.arange(128, dtype=np.int32).reshape(8, 16)
    b = np.zeros((8, 8), np.int32)
    ti.compile(f)(a, b)
    np.testing.assert_array_equal(b[:, :n], a[:, lo : lo + n] + a[:, 15 : 15 - n : -1])
    with pytest.raises(ti.OutOfBoundsError, match=r"buffer v\S* \(shape \(64,\)\) at index \[64\] by .*thread \(3"):

        @T.function
        def g(A: T.Tensor((8, 16), "int32"), B: T.Tensor((8, 8), "int32")):
            T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
            r = T.cuda.thread_idx("x")
            row = A.sub[r]
            if r == 3:
                B[r, 0] = row[16]  # past its row: still caught, for the thread that does it

        ti.compile(g, check_bounds=True)(a, b)


@settings(max_examples=15, deadline=None)
@given(a=st.sampled_from((1, 2, 4, 8, 16)), swap=st.booleans())
def test_rearrange_means_what_einops_means(a, swap):
    pattern = "r (a b) -> (b r) a" if swap else "r (a b) -> (r a) b"
    rows = 16 // a * 8 if swap else 8 * a
    cols = 128 // rows

    @T.function
    def f(A: T.Tensor((8, 16), "int32"), B: T.Tensor((rows, cols), "int32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
        tx = T.cuda.thread_idx("x")
        V = A.rearrange(pattern, a=a)
        B[tx // cols, tx % cols] = V[tx // cols, tx % cols]

    x = np.arange(128, dtype=np.int32).reshape(8, 16)
    b = np.zeros((rows, cols), np.int32)
    ti.compile(f)(x, b)
    v = x.reshape(8, a, 16 // a)  # numpy's einops: r (a b) -> ...
    want = v.transpose(2, 0, 1).reshape(rows, cols) if swap else v.reshape(rows, cols)
    np.testing.assert_array_equal(b, want)


def test_rearrange_errors_name_the_problem():
    A = tirx.ir.Buffer("A", tirx.ir.Var("A", tirx.ir.PointerType(tirx.ir.PrimType("int32"))), "int32", (8, 16))
    for pattern, kw, msg in (
        ("r c -> c", {}, "same, each once"),
        ("r (a b) -> r a b", {}, "all but one"),
        ("r (a b) -> r a b", {"a": 3}, "does not split"),
        ("r ... -> r", {}, "not an axis name"),
        ("r c", {}, "left -> right"),
    ):
        with pytest.raises(ValueError, match=msg):
            A.rearrange(pattern, **kw)
