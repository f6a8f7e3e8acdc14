"""``decode_attention``: one query row per head against a K / V cache, on torch CUDA tensors.

The kernels are ``tirx/kernels/hopper/decode.py``'s (flash-decoding: the cache split into
chunks that fill the GPU, each streamed through a ``cp.async`` ring with an online softmax,
scores on the tensor cores, a combine kernel). One pair of kernels per dtype, head dim and
group size serves every batch, head count, cache length and chunk length.
"""

from __future__ import annotations

import functools
from typing import Any

from tirx.kernels._host import check_cuda, sm_count, takes_arrays

__all__ = ["decode_attention", "decode_chunk"]

_DT = ("float16", "bfloat16")


#: CTAs of the split kernel per SM the chunk length aims at, at least (a CTA holds 40-72 KiB
#: of shared memory: 3 to 5 fit on an SM)
CTAS_PER_SM = 2
#: keys x head dim a CTA takes at most (704 keys at D = 128): a longer chunk has too few copies
#: in flight per byte (an H100 sweep, 2026-12-06: 0.53-0.65 of SDPA at 1,200-2,000 keys a CTA,
#: 0.72-0.84 at 512-704)
CHUNK_ELEMS = 90_112


def tile_keys(D: int) -> int:
    """Keys a pipeline stage of the split kernel holds (``tirx/kernels/hopper/decode.py``): K and
    V of that many keys (32 at head dim 256, where they fill 32 KiB) go to shared memory in one
    group of 16-byte ``cp.async`` copies."""
    return 32 if D == 256 else 64


@functools.lru_cache(maxsize=1024)
def decode_chunk(L: int, heads: int, D: int = 128, sms: int = 132) -> int:
    """Keys a CTA takes (a multiple of the kernel's tile): the cache split into enough chunks
    for ``CTAS_PER_SM`` CTAs per SM over ``heads`` (batch x K / V heads) and for chunks of at
    most ``CHUNK_ELEMS / D`` keys, the larger count; never less than one tile a CTA."""
    tile = tile_keys(D)
    tiles = -(-L // tile)
    want = max(1, -(-CTAS_PER_SM * sms // heads), -(-L * D // CHUNK_ELEMS))  # chunks per head
    return -(-tiles // min(want, tiles)) * tile


@functools.cache
def _split(dtype: str, D: int, G: int) -> Any:
    from tirx.runtime.ready import compile_ready

    return compile_ready("tirx.kernels.hopper.decode:make_decode_split", dtype, D, G)


@functools.cache
def _combine(dtype: str, D: int) -> Any:
    from tirx.runtime.ready import compile_ready

    return compile_ready("tirx.kernels.hopper.decode:make_decode_combine", dtype, D)


@functools.lru_cache(maxsize=64)
def _full_lengths(B: int, L: int, device: Any) -> Any:
    """``lens`` left out: every batch entry has all ``L`` keys (made once, not per call)."""
    import torch

    return torch.full((B,), L, dtype=torch.int32, device=device)


@functools.lru_cache(maxsize=64)
def _one_page_each(B: int, device: Any) -> Any:
    """The block table of a contiguous cache: batch entry ``b`` is page ``b``."""
    import torch

    return torch.arange(B, dtype=torch.int32, device=device).view(B, 1)


@takes_arrays("q", "k", "v", "lens", "block_table")
def decode_attention(q: Any, k: Any, v: Any, lens: Any = None, *, block_table: Any = None) -> Any:
    """``softmax(q k^T / sqrt(D)) v`` for a decode step: ``q (B, H, D)`` (one query row per head)
    against the K / V caches, fp16 / bf16, D 64, 128 or 256, on one CUDA device, contiguous:

    - ``k`` / ``v`` ``(B, HKV, L, D)``; or, with ``block_table (B, max_pages)`` int32, paged caches
      ``(pages, P, HKV, D)`` whose batch entry ``b`` holds its key ``j`` in page
      ``block_table[b, j // P]`` at row ``j % P`` (vLLM's layout);
    - ``H`` a multiple of ``HKV``, at most 8 query heads per K / V head (grouped-query and
      multi-query attention);
    - ``lens (B,)`` int32: the valid keys of each batch entry, at least 1 (default: all ``L``, or
      ``max_pages * P`` keys when paged).

    Returns ``(B, H, D)``."""
    import torch

    dt = check_cuda("q", q, _DT, 3)
    for name, t in (("k", k), ("v", v)):
        check_cuda(name, t, (dt,), 4)
    B, H, D = q.shape
    if D not in (64, 128, 256):
        raise ValueError(f"q: head dim {D} is not supported (64, 128 or 256)")
    if k.shape != v.shape or k.shape[3] != D:
        raise ValueError(
            f"k: expected a cache of head dim {D} with v of the same shape, got k {tuple(k.shape)}, v {tuple(v.shape)}"
        )
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not t.is_contiguous():
            raise ValueError(f"{name}: expected a contiguous tensor")
        if t.data_ptr() % 16:  # rows are read by 16-byte copies, which fault off alignment
            raise ValueError(f"{name}: the tensor's address must be 16-byte aligned")
    if block_table is None:
        if k.shape[0] != B:
            raise ValueError(f"k: expected (B={B}, HKV, L, D={D}), got {tuple(k.shape)}")
        HKV, L = k.shape[1], k.shape[2]
        P, strides = L, (HKV * L, 1, L)
        bt = _one_page_each(B, q.device)
    else:
        check_cuda("block_table", block_table, ("int32",), 2)
        if block_table.shape[0] != B or not block_table.is_contiguous():
            raise ValueError(
                f"block_table: expected a contiguous ({B}, max_pages) tensor, got {tuple(block_table.shape)}"
            )
        P, HKV = k.shape[1], k.shape[2]
        L = block_table.shape[1] * P
        strides, bt = (P * HKV, HKV, 1), block_table
    if HKV == 0 or H % HKV or not 1 <= H // HKV <= 8:
        raise ValueError(f"k: {HKV} K / V heads for {H} query heads (H must be 1 to 8 times HKV)")
    if L == 0:
        raise ValueError("k: the cache has no keys")
    if lens is None:
        lens = _full_lengths(B, L, q.device)
    else:
        check_cuda("lens", lens, ("int32",), 1)
        if lens.shape[0] != B:
            raise ValueError(f"lens: expected ({B},) lengths, got shape {tuple(lens.shape)}")
    G = H // HKV
    chunk = decode_chunk(L, B * HKV, D, sm_count(q.device.index or 0))
    chunks = -(-L // chunk)
    part = torch.empty((chunks, B * H, D), dtype=torch.float32, device=q.device)
    ml = torch.empty((chunks, B * H, 2), dtype=torch.float32, device=q.device)
    out = torch.empty((B, H, D), dtype=q.dtype, device=q.device)
    kv = (k.view(-1, D), v.view(-1, D))
    _split(dt, D, G)(q.view(B * H, D), *kv, bt, lens, part, ml, L, HKV, P, *strides, chunk)
    _combine(dt, D)(part, ml, out.view(B * H, D))
    return out
