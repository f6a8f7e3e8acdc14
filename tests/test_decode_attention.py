"""Decode attention (tirx/kernels/hopper/decode.py, ``tirx.kernels.decode_attention``) without a
GPU: both kernels in the interpreter (the scores on its warp MMA model) against a float64 numpy
reference, over batch, K / V heads, group size, cache length, valid lengths, head dim and chunk
length; every kernel compiles clean for sm_90a; the chunk choice."""

from __future__ import annotations

import numpy as np
import pytest
from hopper_util import compile_clean, no_disk_cache  # noqa: F401 (an autouse fixture)
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
from tirx.kernels import decode as KD
from tirx.kernels.hopper import decode as HD


def _bf16(x):
    """float32 values that bfloat16 holds exactly (the top 16 bits)."""
    return (x.astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)


def _bits(x):
    """What the interpreter takes for a tensor: float16 as is, bfloat16 values as bit patterns."""
    return (x.view(np.uint32) >> 16).astype(np.uint16) if x.dtype == np.float32 else x


def _reference(q, k, v, lens, G):
    B, H, D = q.shape
    out = np.zeros((B, H, D))
    for b in range(B):
        for h in range(H):
            n = lens[b]
            s = q[b, h].astype(np.float64) @ k[b, h // G, :n].astype(np.float64).T / np.sqrt(D)
            p = np.exp(s - s.max())
            out[b, h] = (p / p.sum()) @ v[b, h // G, :n].astype(np.float64)
    return out


@given(
    B=st.integers(1, 3),
    HKV=st.integers(1, 3),
    G=st.integers(1, 8),
    L=st.integers(1, 300),
    D=st.sampled_from([64, 128, 256]),
    tiles=st.integers(1, 3),
    page=st.sampled_from([0, 1, 16, 64]),
    dtype=st.sampled_from(["float16", "bfloat16"]),
    data=st.data(),
)
@settings(max_examples=30, deadline=None)
def test_split_and_combine_compute_attention(B, HKV, G, L, D, tiles, page, dtype, data):
    """Contiguous caches (``page`` 0) and paged ones (pages of ``page`` keys in a shuffled pool,
    some never used, vLLM's ``(pages, P, HKV, D)`` layout) against the same reference, each CTA
    taking ``tiles`` tiles of keys (the online softmax across them); bfloat16 values are handed
    over as their bit patterns. The interpreter's race detector checks the barriers of the
    ``cp.async`` ring and of the running statistics."""
    chunk = tiles * HD.tile_keys(D)
    lens = np.array(data.draw(st.lists(st.integers(1, L), min_size=B, max_size=B)), np.int32)
    g = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    H = HKV * G
    q = g.standard_normal((B, H, D)).astype(np.float16)
    k = g.standard_normal((B, HKV, L, D)).astype(np.float16)
    v = g.standard_normal((B, HKV, L, D)).astype(np.float16)
    if page == 0:
        bt = np.arange(B, dtype=np.int32).reshape(B, 1)
        kc, vc, P, strides, Lk = k, v, L, (HKV * L, 1, L), L
    else:
        P, npg = page, -(-L // page)
        pool = B * npg + 3  # pages no batch entry uses stay garbage
        bt = g.permutation(pool)[: B * npg].astype(np.int32).reshape(B, npg)
        kc = g.standard_normal((pool, P, HKV, D)).astype(np.float16)
        vc = g.standard_normal((pool, P, HKV, D)).astype(np.float16)
        for b in range(B):
            for j in range(L):
                kc[bt[b, j // P], j % P] = k[b, :, j]
                vc[bt[b, j // P], j % P] = v[b, :, j]
        strides, Lk = (P * HKV, HKV, 1), npg * P
    chunks = -(-Lk // chunk)
    part = np.full((chunks, B * H, D), np.nan, np.float32)
    ml = np.full((chunks, B * H, 2), np.nan, np.float32)
    out = np.full((B * H, D), np.nan, np.float16)
    if dtype == "bfloat16":  # the same values, rounded to bfloat16, as bit patterns
        q, k, kc, v, vc = (_bf16(x) for x in (q, k, kc, v, vc))
        out = np.full((B * H, D), 0x7FC0, np.uint16)
    split = tirx.compile(HD.make_decode_split(dtype, D, G), target="interp")
    split(
        _bits(q).reshape(B * H, D),
        _bits(kc).reshape(-1, D),
        _bits(vc).reshape(-1, D),
        bt,
        lens,
        part,
        ml,
        Lk,
        HKV,
        P,
        *strides,
        chunk,
    )
    tirx.compile(HD.make_decode_combine(dtype, D), target="interp")(part, ml, out)
    ref = _reference(q, k, v, lens, G)
    got = (
        ((out.astype(np.uint32) << 16).view(np.float32) if dtype == "bfloat16" else out)
        .reshape(B, H, D)
        .astype(np.float64)
    )
    tol = 2**-7 if dtype == "bfloat16" else 2e-3  # the output's rounding, plus float32 sums
    assert np.all(np.abs(got - ref) <= tol * np.abs(ref) + tol), np.abs(got - ref).max()


@pytest.mark.parametrize("name", sorted(HD.KERNELS))
def test_decode_kernels_compile_clean(name):
    compile_clean(HD.KERNELS[name]())


def test_decode_kernels_refuse_what_they_do_not_compute():
    with pytest.raises(ValueError, match=r"^G: expected 1 to 8 query rows"):
        HD.make_decode_split("bfloat16", 128, 9)
    with pytest.raises(ValueError, match=r"^D: head dim 96 is not supported \(64, 128 or 256\)"):
        HD.make_decode_split("bfloat16", 96, 1)


@given(L=st.integers(1, 1 << 17), heads=st.integers(1, 512), D=st.sampled_from([64, 128, 256]))
@settings(max_examples=100, deadline=None)
def test_decode_chunk_gives_each_sm_its_ctas(L, heads, D):
    """Whole tiles; at least ``CTAS_PER_SM`` CTAs per SM (132) and chunks of at most
    ``CHUNK_ELEMS / D`` keys where the cache has the tiles for it, as few chunks as that allows
    (one tile fewer a CTA would need more chunks than either aim)."""
    c = KD.decode_chunk(L, heads, D)
    tile = HD.tile_keys(D)
    assert c % tile == 0 and c >= tile
    chunks = -(-L // c)
    assert chunks * c >= L
    want = max(-(-KD.CTAS_PER_SM * 132 // heads), -(-L * D // KD.CHUNK_ELEMS))
    assert chunks <= max(want, 1) or c == tile
    if c > tile:
        assert -(-L // (c - tile)) > want  # a shorter chunk would exceed the aim
