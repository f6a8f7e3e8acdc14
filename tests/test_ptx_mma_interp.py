"""CPU semantics of the warp-level MMA ``mma.sync.aligned`` (tirx/ops/ptx_semantics_mma.py):
m16n8k16 and m16n8k8, .row.col, .f16/.bf16 inputs, .f32 accumulators.

Each kernel loads its lane's fragments (A and B packed on the host into uint32 registers, two
16-bit values each, the first in the low bits; C as float32), runs the mma in place on the
accumulators and stores D per the C layout. The packing and unpacking here are written from
the PTX ISA's fragment tables ("Matrix Fragments for mma.m16n8k16 / mma.m16n8k8 with floating
point type"), independently of the module. Results are compared with numpy within a few
float32 ulps of the terms' magnitude (the GPU's accumulation order is unspecified).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from test_frontend_util import load_module

import tirx
from tirx.errors import OpError
from tirx.interp.errors import InterpError

_SRC = """
from tirx.script import tirx as T

@T.function
def f(A: T.Tensor(({n}, {na}), "uint32"), B: T.Tensor(({n}, {nb}), "uint32"),
      C: T.Tensor(({n}, 4), "float32"), D: T.Tensor(({n}, 4), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid={grid}, block={block}))
    i = T.cuda.block_idx("x") * {block} + T.cuda.thread_idx("x")
    a = T.alloc_local((4,), "uint32")
    b = T.alloc_local((2,), "uint32")
    acc = T.alloc_local((4,), "float32")
    for r in T.serial({na}):
        a[r] = A[i, r]
    for r in T.serial({nb}):
        b[r] = B[i, r]
    for r in T.serial(4):
        acc[r] = C[i, r]
    if {cond}:
        T.ptx.mma.sync.aligned.{shape}.row.col.f32.{t}.{t}.f32(acc[0], acc[1], acc[2], acc[3], {regs}, acc[0],
                                                              acc[1], acc[2], acc[3])
    for r in T.serial(4):
        D[i, r] = acc[r]
"""

_K = {"m16n8k16": 16, "m16n8k8": 8}


def kernel(shape: str, t: str, grid: int = 1, block: int = 64, cond: str = "True"):
    k = _K[shape]
    na, nb = k // 4, k // 8
    regs = ", ".join([f"a[{r}]" for r in range(na)] + [f"b[{r}]" for r in range(nb)])
    src = _SRC.format(n=grid * block, na=na, nb=nb, grid=grid, block=block, cond=cond, shape=shape, t=t,
                      regs=regs)  # fmt: skip
    return load_module(src, "mmainterp").f


# ------------------------------------------------------------------ fragments (PTX ISA tables)
def _a_pairs(g, t, k):
    """A's registers of lane (g, t): the (row, col) of each one's low half (high: col + 1)."""
    return [(g, 2 * t), (g + 8, 2 * t), (g, 2 * t + 8), (g + 8, 2 * t + 8)][: k // 4]


def _b_pairs(g, t, k):
    """B's registers: the (row, col) of each one's low half (high: row + 1)."""
    return [(2 * t, g), (2 * t + 8, g)][: k // 8]


def _c_elems(g, t):
    return [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]


def _bits16(x, t: str):
    """uint16 bit patterns of exactly representable f16/bf16 values (float32 arrays)."""
    if t == "f16":
        return x.astype(np.float16).view(np.uint16)
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def pack(As, Bs, Cs, t: str):
    """Per lane of each warp: its A and B registers (uint32) and C values (float32)."""
    k = As.shape[2]
    pa, pb, pc = [], [], []
    for A, B, C in zip(As, Bs, Cs):
        ab, bb = _bits16(A, t).astype(np.uint32), _bits16(B, t).astype(np.uint32)
        for lane in range(32):
            g, tt = lane // 4, lane % 4
            pa.append([ab[r, c] | ab[r, c + 1] << 16 for r, c in _a_pairs(g, tt, k)])
            pb.append([bb[r, c] | bb[r + 1, c] << 16 for r, c in _b_pairs(g, tt, k)])
            pc.append([C[r, c] for r, c in _c_elems(g, tt)])
    return (np.array(pa, np.uint32), np.array(pb, np.uint32), np.array(pc, np.float32))


def unpack(D, warps: int):
    out = np.zeros((warps, 16, 8), np.float32)
    for w in range(warps):
        for lane in range(32):
            for v, (r, c) in zip(D[w * 32 + lane], _c_elems(lane // 4, lane % 4)):
                out[w, r, c] = v
    return out


def representable(x, t: str):
    """float32 values rounded to f16 / bf16 (nearest even), as float32."""
    x = np.asarray(x, np.float32)
    if t == "f16":
        return x.astype(np.float16).astype(np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    return u.view(np.float32)


def run(shape, t, As, Bs, Cs, grid=1, block=64, cond="True"):
    n = grid * block  # block 48: a partial second warp, its lanes beyond n left out
    pa, pb, pc = (x[:n] for x in pack(As, Bs, Cs, t))
    d = np.full(pc.shape, np.nan, np.float32)
    tirx.compile(kernel(shape, t, grid, block, cond), target="interp")(pa, pb, pc, d)
    return unpack(d, len(As))


# ------------------------------------------------------------------ against numpy
_BOUND = {"f16": 60000.0, "bf16": 2.0**40}


@st.composite
def problems(draw):
    shape = draw(st.sampled_from(sorted(_K)))
    t = draw(st.sampled_from(["f16", "bf16"]))
    grid, block = draw(st.sampled_from([(1, 64), (2, 32), (1, 32)]))
    w, k = grid * block // 32, _K[shape]
    el = st.floats(-_BOUND[t], _BOUND[t], width=32)
    As = representable(draw(hnp.arrays(np.float32, (w, 16, k), elements=el)), t)
    Bs = representable(draw(hnp.arrays(np.float32, (w, k, 8), elements=el)), t)
    Cs = draw(hnp.arrays(np.float32, (w, 16, 8), elements=st.floats(-(2.0**90), 2.0**90, width=32)))
    return shape, t, grid, block, As, Bs, Cs


@settings(max_examples=20, deadline=None)
@given(problems())
def test_mma_is_a_times_b_plus_c_per_warp(p):
    shape, t, grid, block, As, Bs, Cs = p
    got = run(shape, t, As, Bs, Cs, grid, block)
    want = As @ Bs + Cs  # float32 numpy matmul of the exactly converted inputs
    mag = np.abs(As.astype(np.float64)) @ np.abs(Bs.astype(np.float64)) + np.abs(Cs)
    assert np.isfinite(got).all()
    np.testing.assert_array_less(np.abs(got.astype(np.float64) - want), 2.0**-19 * mag + 2.0**-120)


def test_warps_are_separate_and_fragments_land_in_place():
    # small integers: every sum is exact, so D is exactly A @ B + C, element by element
    rng = np.random.default_rng(5)
    for shape in _K:
        for t in ("f16", "bf16"):
            k = _K[shape]
            As = rng.integers(-8, 8, (2, 16, k)).astype(np.float32)
            Bs = rng.integers(-8, 8, (2, k, 8)).astype(np.float32)
            Cs = rng.integers(-100, 100, (2, 16, 8)).astype(np.float32)
            np.testing.assert_array_equal(run(shape, t, As, Bs, Cs), As @ Bs + Cs)


def test_the_sum_is_rounded_once_to_float32():
    # the interpreter's documented numerics: exact products, a float64 sum, one rounding to
    # float32 (a float32 running sum would lose each 2**-25 against 1.0)
    As = np.full((2, 16, 16), 2.0**-13, np.float32)
    Bs = np.full((2, 16, 8), 2.0**-12, np.float32)
    Cs = np.ones((2, 16, 8), np.float32)
    got = run("m16n8k16", "f16", As, Bs, Cs)
    assert (got == np.float32(1 + 2.0**-21)).all()


def test_nan_and_infinities_follow_ieee_with_the_canonical_nan():
    As = np.zeros((2, 16, 16), np.float32)
    Bs = np.ones((2, 16, 8), np.float32)
    Cs = np.zeros((2, 16, 8), np.float32)
    As[0, 0, 0] = np.inf  # inf * 0 in row 0 of warp 0's D (B's column 3 has a 0 at k = 0)
    Bs[0, 0, 3] = 0.0
    As[1, 5, 2] = np.inf  # inf + -inf in warp 1
    As[1, 5, 7] = -np.inf
    got = run("m16n8k16", "bf16", As, Bs, Cs)
    assert got[0, 0, 0] == np.inf and np.isnan(got[0, 0, 3])
    assert got[0, 0, 3].view(np.uint32) == 0x7FFFFFFF
    assert np.isnan(got[1, 5]).all() and (got[1, :5] == 0).all()


def test_a_warp_uniform_branch_runs_only_its_warps():
    rng = np.random.default_rng(1)
    As = rng.integers(-4, 4, (2, 16, 8)).astype(np.float32)
    Bs = rng.integers(-4, 4, (2, 8, 8)).astype(np.float32)
    Cs = rng.integers(-4, 4, (2, 16, 8)).astype(np.float32)
    got = run("m16n8k8", "f16", As, Bs, Cs, cond="i >= 32")
    np.testing.assert_array_equal(got[0], Cs[0])  # warp 0 skipped it: its accumulators are C
    np.testing.assert_array_equal(got[1], As[1] @ Bs[1] + Cs[1])


# ------------------------------------------------------------------ errors
def _ones(shape="m16n8k16"):
    k = _K[shape]
    return np.ones((2, 16, k), np.float32), np.ones((2, k, 8), np.float32), np.ones((2, 16, 8), np.float32)


def test_a_divergent_mma_is_an_error():
    with pytest.raises(InterpError, match=r"T\.ptx\.mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32: "
                                          r"executed by 16 of the 32 lanes of a warp.*\.aligned"):  # fmt: skip
        run("m16n8k16", "f16", *_ones(), cond="i % 32 < 16")


def test_a_partial_warp_is_an_error():
    with pytest.raises(InterpError, match="not a multiple of 32"):
        run("m16n8k8", "bf16", *_ones("m16n8k8"), block=48)


_OTHER = """
from tirx.script import tirx as T

@T.function
def f(O: T.Tensor((32,), "int32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    i = T.cuda.thread_idx("x")
    y = T.alloc_local((8,), "uint32")
    z = T.alloc_local((8,), "{acc}")
    for r in T.serial(8):
        y[r] = T.uint32(0)
        z[r] = T.{acc}(0)
    {call}
    O[i] = T.int32(0)
"""


@pytest.mark.parametrize("acc,call,what", [
    ("int32", "T.ptx.mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32(z[0], z[1], z[2], z[3], y[0], y[1], "
              "y[2], y[3], y[4], y[5], z[4], z[5], z[6], z[7])", r"T\.ptx\.mma"),
    ("float32", "T.ptx.mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32(z[0], z[1], z[2], z[3], y[0], y[1], "
                "y[2], y[3], y[4], y[5], z[4], z[5], z[6], z[7])",
     r"T\.ptx\.mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.tf32\.tf32\.f32"),
    ("float32", "T.ptx.mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16(y[0], y[1], y[2], y[3], y[4], y[5], "
                "y[6], y[7], y[0], y[1])", r"T\.ptx\.mma"),
    # sparse A (no model of the metadata's decode): the table's refusal naming the form
    *(("int32", f"T.ptx.mma.{sp}.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16(y[0], y[1], y[0], y[1], y[2], "
                "y[3], y[4], y[5], y[7], 0)", r"T\.ptx\.mma .*mma\{\.sp\|\.sp::ordered_metadata\}")
      for sp in ("sp", "sp__ordered_metadata")),
])  # fmt: skip
def test_other_forms_still_cannot_run(acc, call, what):
    f = load_module(_OTHER.format(acc=acc, call=call), "mmaother").f
    with pytest.raises(OpError, match="the interpreter cannot run " + what):
        tirx.compile(f, target="interp")(np.zeros(32, np.int32))
