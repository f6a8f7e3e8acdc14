"""Decode attention (flash-decoding): a few query rows per K / V head against a long cache.

At decode time each head has one new query row (``G`` rows per K / V head with grouped-query
attention) and a cache of ``L`` keys and values: the work is a stream of the cache, so it is
split along the sequence into chunks that fill the GPU, each chunk's partial result kept with
its softmax statistics, and a second small kernel combines the chunks:

* ``decode_split`` (grid: chunks x K / V heads, 4 warps): the scores of the chunk's keys against
  the head's ``G`` query rows on the tensor cores, as the decode GEMV does it (``mma.sync``
  m16n8k16 with 16 keys on the A side and the query rows as the 8 columns, each lane handing its
  own 16-byte loads to the MMAs: a dot product does not depend on the order of its terms); the
  scores go to shared memory, a warp per query row takes their max and the sum of the
  exponentials (base 2, the scale folded in), then ``P V`` on the CUDA cores with 16-byte loads
  of ``V`` (a thread: 8 columns of every ``n``-th key), the key groups added in shared memory.
  Keys at or past the batch entry's length are masked out; a chunk with none writes ``-inf``.
* ``decode_combine`` (grid: query rows, ``D`` threads): ``O = sum_c 2^(m_c - M) O_c /
  sum_c 2^(m_c - M) l_c`` over the chunks.

Sizes (batch, heads, cache length) are launch arguments; one pair of kernels per dtype, head dim,
group size and chunk length serves every cache.
"""

from __future__ import annotations

import functools
import math

from tirx.script import tirx as T

from .gemv import mma_k16

__all__ = ["cache_row", "make_decode_combine", "make_decode_split"]

LOG2E = 1.4426950408889634
_VEC = 8


@T.inline
def cache_row(BT, b, kvl, key, P, S_page, S_tok, S_head):
    """The cache row of key ``key`` of K / V head ``kvl`` of batch entry ``b``: page
    ``BT[b, key // P]``, then strides. A contiguous ``(B, HKV, L, D)`` cache is one page of
    ``L`` keys per batch entry (``BT[b, 0] = b``); a paged ``(pages, P, HKV, D)`` one has its
    block table."""
    return (
        T.cast(BT[b, key // P], "int64") * S_page
        + T.cast(key % P, "int64") * S_tok
        + T.cast(kvl, "int64") * S_head
    )


@functools.cache
def make_decode_split(dtype: str = "bfloat16", D: int = 128, G: int = 1, CHUNK: int = 256):
    """Partial attention of ``CHUNK`` keys of one K / V head against its ``G`` query rows:
    ``Op[c, r, :]`` (float32, unnormalized) and ``ML[c, r] = (max, sum)`` in base-2 units."""
    if dtype not in ("float16", "bfloat16"):
        raise ValueError(f"dtype: expected 'float16' or 'bfloat16', got {dtype!r}")
    if D not in (64, 128, 256):
        raise ValueError(f"D: head dim {D} is not supported (64, 128 or 256)")
    if not 1 <= G <= 8:
        raise ValueError(f"G: expected 1 to 8 query rows per K / V head, got {G}")
    if CHUNK not in (64, 128, 256):
        raise ValueError(f"CHUNK: expected 64, 128 or 256 keys, got {CHUNK}")
    warps = 4
    vec = _VEC
    nvec = D // 32  # 16-byte vectors of a row a lane loads (lanes q = 0..3 interleave)
    nvc = min(nvec, 4)  # of them at a time (head dim 256: two halves, so nothing spills)
    tiles = CHUNK // 16
    slices = D // vec  # threads per key row in P V
    groups = warps * 32 // slices  # keys P V takes at once
    ab = "bf16" if dtype == "bfloat16" else "f16"
    scale = LOG2E / math.sqrt(D)
    rows = T.dynamic("rows")  # query rows: batch x heads
    kvrows = T.dynamic("kvrows")  # cache rows (of D elements), contiguous or paged
    chunks = T.dynamic("chunks")
    nb = T.dynamic("nb")  # batch
    maxp = T.dynamic("maxp")  # pages a batch entry may have

    @T.function
    def decode_split(
        Q: T.Tensor((rows, D), dtype),
        K: T.Tensor((kvrows, D), dtype),
        V: T.Tensor((kvrows, D), dtype),
        BT: T.Tensor((nb, maxp), "int32"),
        lens: T.Tensor((nb,), "int32"),
        Op: T.Tensor((chunks, rows, D), "float32"),
        ML: T.Tensor((chunks, rows, 2), "float32"),
        L: T.int32,
        HKV: T.int32,
        P: T.int32,
        S_page: T.int64,
        S_tok: T.int64,
        S_head: T.int64,
    ):
        T.device_entry(
            launch=T.cuda.LaunchConfig(grid=(chunks, rows // G), block=warps * 32),
            attrs={"cuda.kernel_attrs": {"min_blocks_per_sm": 4}},
        )
        tx = T.cuda.thread_idx("x")
        lane = tx % 32
        warp = tx // 32
        g = lane // 4
        q = lane % 4
        c = T.cuda.block_idx("x")
        kvh = T.cuda.block_idx("y")  # batch entry * HKV + K / V head
        b = kvh // HKV
        kvl = kvh % HKV
        n = T.min(lens[b], L)
        last = T.max(n - 1, 0)  # keys past the length load this one's row (masked later)
        start = c * CHUNK
        end = T.min(start + CHUNK, n)
        qr = kvh * G + T.min(g, G - 1)  # B's column g: query row g (rows past G repeat the last)
        sc = T.alloc_shared((G * CHUNK,), "float32")
        stat = T.alloc_shared((2 * G,), "float32")
        red = T.alloc_shared((groups * G * D,), "float32")
        d = T.alloc_local((4,), "float32")
        e = T.alloc_local((nvc * vec,), dtype)
        f = T.alloc_local((nvc * vec,), dtype)
        xv = T.alloc_local((nvec * vec,), dtype)
        eu = e.view("uint32")
        fu = f.view("uint32")
        xu = xv.view("uint32")
        for j in T.unroll(nvec):
            xv[T.Ramp(j * vec, 1, vec)] = Q[qr, T.Ramp(j * 32 + q * vec, 1, vec)]
        # scores: 16 keys a tile, the warps taking every 4th tile
        for t in T.serial(warp, tiles, step=warps):
            k0 = start + t * 16
            ra = cache_row(BT, b, kvl, T.min(k0 + g, last), P, S_page, S_tok, S_head)
            rb = cache_row(BT, b, kvl, T.min(k0 + g + 8, last), P, S_page, S_tok, S_head)
            for i in T.unroll(4):
                d[i] = T.float32(0)
            for half in T.unroll(nvec // nvc):
                for j in T.unroll(nvc):
                    cj = (half * nvc + j) * 32 + q * vec
                    e[T.Ramp(j * vec, 1, vec)] = K[ra, T.Ramp(cj, 1, vec)]
                    f[T.Ramp(j * vec, 1, vec)] = K[rb, T.Ramp(cj, 1, vec)]
                for h in T.unroll(2 * nvc):
                    mma_k16(d, eu, fu, xu, h, ab, half * 2 * nvc + h)
            for i in T.unroll(4):
                m = 2 * q + i % 2  # D's column: a query row; its row: key g or g + 8
                key = k0 + g + (i // 2) * 8
                if m < G:
                    sc[m * CHUNK + t * 16 + g + (i // 2) * 8] = T.if_then_else(
                        key < end, d[i] * T.float32(scale), T.float32("-inf")
                    )
        T.cuda.cta_sync()
        # softmax statistics of the chunk: a warp per query row
        for m in T.serial(warp, G, step=warps):
            mx: T.float32 = T.float32("-inf")
            for kk in T.serial(lane, CHUNK, step=32):
                mx = T.max(mx, sc[m * CHUNK + kk])
            mx = T.cuda.warp_max(mx)
            sm: T.float32 = T.float32(0)
            for kk in T.serial(lane, CHUNK, step=32):
                p = T.if_then_else(mx == T.float32("-inf"), T.float32(0), T.exp2(sc[m * CHUNK + kk] - mx))
                sc[m * CHUNK + kk] = p
                sm = sm + p
            sm = T.cuda.warp_sum(sm)
            if lane == 0:
                stat[2 * m] = mx
                stat[2 * m + 1] = sm
        T.cuda.cta_sync()
        # P V: thread tx takes columns (tx % slices) * 8 .. + 7 of every groups-th key
        col = (tx % slices) * vec
        grp = tx // slices
        acc = T.alloc_local((G * vec,), "float32")
        vv = T.alloc_local((vec,), dtype)
        for i in T.unroll(G * vec):
            acc[i] = T.float32(0)
        # the key's page and row, stepped along instead of divided for every key
        pg: T.int32 = (start + grp) // P
        pr: T.int32 = (start + grp) % P
        for kk in T.serial(grp, end - start, step=groups):
            vr = (
                T.cast(BT[b, pg], "int64") * S_page
                + T.cast(pr, "int64") * S_tok
                + T.cast(kvl, "int64") * S_head
            )
            vv[T.Ramp(0, 1, vec)] = V[vr, T.Ramp(col, 1, vec)]
            pr = pr + groups
            while pr >= P:
                pr = pr - P
                pg = pg + 1
            for m in T.unroll(G):
                p = sc[m * CHUNK + kk]
                for j in T.unroll(vec):
                    acc[m * vec + j] = acc[m * vec + j] + p * T.cast(vv[j], "float32")
        for m in T.unroll(G):
            for j in T.unroll(vec):
                red[(grp * G + m) * D + col + j] = acc[m * vec + j]
        T.cuda.cta_sync()
        for o in T.serial(tx, G * D, step=warps * 32):
            tot: T.float32 = red[o]
            for w in T.unroll(1, groups):
                tot = tot + red[w * G * D + o]
            Op[c, kvh * G + o // D, o % D] = tot
        if tx < G:
            ML[c, kvh * G + tx, 0] = stat[2 * tx]
            ML[c, kvh * G + tx, 1] = stat[2 * tx + 1]

    return decode_split


@functools.cache
def make_decode_combine(dtype: str = "bfloat16", D: int = 128):
    """``O[r, :]`` from the chunks' partial results: each rescaled by ``2^(m_c - M)``."""
    rows = T.dynamic("rows")
    chunks = T.dynamic("chunks")

    @T.function
    def decode_combine(
        Op: T.Tensor((chunks, rows, D), "float32"),
        ML: T.Tensor((chunks, rows, 2), "float32"),
        O: T.Tensor((rows, D), dtype),
    ):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=rows, block=D))
        r = T.cuda.block_idx("x")
        tx = T.cuda.thread_idx("x")
        top: T.float32 = T.float32("-inf")
        for c in T.serial(chunks):
            top = T.max(top, ML[c, r, 0])
        num: T.float32 = T.float32(0)
        den: T.float32 = T.float32(0)
        for c in T.serial(chunks):
            w = T.if_then_else(ML[c, r, 0] == T.float32("-inf"), T.float32(0), T.exp2(ML[c, r, 0] - top))
            num = num + w * Op[c, r, tx]
            den = den + w * ML[c, r, 1]
        O[r, tx] = T.cast(num / den, dtype)

    return decode_combine


KERNELS = {
    "decode_split_bf16_d128_g8": lambda: make_decode_split("bfloat16", 128, 8, 256),
    "decode_split_f16_d64_g1": lambda: make_decode_split("float16", 64, 1, 64),
    "decode_combine_bf16_d128": lambda: make_decode_combine("bfloat16", 128),
    "decode_split_bf16_d256_g8": lambda: make_decode_split("bfloat16", 256, 8, 128),
    "decode_combine_bf16_d256": lambda: make_decode_combine("bfloat16", 256),
}
