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

from tirx.kernels.decode import tile_keys
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


def split_smem_bytes(D: int) -> int:
    """The split kernel's dynamic shared memory: two stages of K (rows padded) and V."""
    tile = tile_keys(D)
    return 2 * tile * (2 * D + _KPAD) * 2


#: K rows in shared memory are padded by 32 elements (64 bytes): a row is then 4 mod 8 16-byte
#: units long, so the 8 lanes of a quarter warp (rows g, g + 1; columns q) read 8 different
#: bank groups when they load their MMA operands
_KPAD = 32


@functools.cache
def make_decode_split(dtype: str = "bfloat16", D: int = 128, G: int = 1):
    """Partial attention of ``CH`` keys (a launch argument, a multiple of ``tile_keys(D)``) of one
    K / V head against its ``G`` query rows: ``Op[c, r, :]`` (float32, unnormalized) and
    ``ML[c, r] = (max, sum)`` in base-2 units.

    The CTA streams its keys in tiles through a two-stage ``cp.async`` ring (the next tile's
    copies are in flight while this one is computed) and keeps an online softmax: per tile the
    scores (tensor cores), a warp per query row for the new running max and the rescaled sum,
    then ``P V`` on the CUDA cores, the accumulators rescaled by ``2^(m_old - m_new)``."""
    if dtype not in ("float16", "bfloat16"):
        raise ValueError(f"dtype: expected 'float16' or 'bfloat16', got {dtype!r}")
    if D not in (64, 128, 256):
        raise ValueError(f"D: head dim {D} is not supported (64, 128 or 256)")
    if not 1 <= G <= 8:
        raise ValueError(f"G: expected 1 to 8 query rows per K / V head, got {G}")
    warps = 4
    threads = warps * 32
    vec = _VEC
    TILE = tile_keys(D)
    KS = D + _KPAD  # a K row in shared memory (elements)
    KE = TILE * KS  # K of a stage
    SE = KE + TILE * D  # a stage: K, then V
    smem = split_smem_bytes(D)
    per_row = D // vec  # 16-byte vectors of a row
    copies = TILE * per_row // threads  # of K (and of V) each thread issues per tile
    nvec = D // 32  # 16-byte vectors of a row a lane loads (lanes q = 0..3 interleave)
    nvc = min(nvec, 4)  # of them at a time (head dim 256: two halves, so nothing spills)
    mt = TILE // 16  # MMA tiles of 16 keys
    slices = D // vec  # threads per key row in P V
    groups = threads // slices  # keys P V takes at once
    assert groups * G * D * 4 <= smem  # the accumulators meet where the stages were
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
        CH: T.int32,
    ):
        T.device_entry(
            launch=T.cuda.LaunchConfig(grid=(chunks, rows // G), block=threads, dynamic_smem_bytes=smem),
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
        start = c * CH
        end = T.min(start + CH, n)
        ntiles = T.max(end - start + (TILE - 1), 0) // TILE
        qr = kvh * G + T.min(g, G - 1)  # B's column g: query row g (rows past G repeat the last)
        dsm = T.alloc_buffer((smem,), "uint8", scope="shared.dyn")
        st = dsm.view(dtype)
        red = dsm.view("float32")
        sc = T.alloc_shared((G * TILE,), "float32")
        # the running max (base 2) and sum, read from one half and written to the other by
        # turns (tile i reads half i % 2), so no reader of a warp meets its lane 0's store
        mrun = T.alloc_shared((2 * G,), "float32")
        lrun = T.alloc_shared((2 * G,), "float32")
        alpha = T.alloc_shared((G,), "float32")  # this tile's rescale of the accumulators
        d = T.alloc_local((4,), "float32")
        e = T.alloc_local((nvc * vec,), dtype)
        f = T.alloc_local((nvc * vec,), dtype)
        xv = T.alloc_local((nvec * vec,), dtype)
        eu = e.view("uint32")
        fu = f.view("uint32")
        xu = xv.view("uint32")
        col = (tx % slices) * vec  # P V: columns col .. col + 7 of every groups-th key
        grp = tx // slices
        acc = T.alloc_local((G * vec,), "float32")
        vv = T.alloc_local((vec,), dtype)
        for i in T.unroll(G * vec):
            acc[i] = T.float32(0)
        if tx < G:
            mrun[tx] = T.float32("-inf")
            lrun[tx] = T.float32(0)

        @T.inline
        def load_tile(i, s):
            for u in T.unroll(copies):
                v = u * threads + tx
                r = v // per_row
                cv = (v % per_row) * vec
                row = cache_row(BT, b, kvl, T.min(start + i * TILE + r, last), P, S_page, S_tok, S_head)
                T.ptx["cp.async.cg.shared.global"](st.ptr_to([s * SE + r * KS + cv]), K.ptr_to([row, cv]), 16)
                T.ptx["cp.async.cg.shared.global"](
                    st.ptr_to([s * SE + KE + r * D + cv]), V.ptr_to([row, cv]), 16
                )
            T.ptx["cp.async.commit_group"]()

        if ntiles > 0:
            load_tile(0, 0)
        for j in T.unroll(nvec):
            xv[T.Ramp(j * vec, 1, vec)] = Q[qr, T.Ramp(j * 32 + q * vec, 1, vec)]
        for i in T.serial(ntiles):
            s = i % 2
            if i + 1 < ntiles:
                load_tile(i + 1, 1 - s)
                T.ptx["cp.async.wait_group"](1)
            else:
                T.ptx["cp.async.wait_group"](0)
            T.cuda.cta_sync()
            # scores of the tile: 16 keys an MMA, a warp each
            for t in T.serial(warp, mt, step=warps):
                for a in T.unroll(4):
                    d[a] = T.float32(0)
                for half in T.unroll(nvec // nvc):
                    for j in T.unroll(nvc):
                        cj = (half * nvc + j) * 32 + q * vec
                        e[T.Ramp(j * vec, 1, vec)] = st[T.Ramp(s * SE + (t * 16 + g) * KS + cj, 1, vec)]
                        f[T.Ramp(j * vec, 1, vec)] = st[T.Ramp(s * SE + (t * 16 + g + 8) * KS + cj, 1, vec)]
                    for h in T.unroll(2 * nvc):
                        mma_k16(d, eu, fu, xu, h, ab, half * 2 * nvc + h)
                for a in T.unroll(4):
                    m = 2 * q + a % 2  # D's column: a query row; its row: key g or g + 8
                    kt = t * 16 + g + (a // 2) * 8
                    if m < G:
                        sc[m * TILE + kt] = T.if_then_else(
                            start + i * TILE + kt < end, d[a] * T.float32(scale), T.float32("-inf")
                        )
            T.cuda.cta_sync()
            # online softmax: a warp per query row
            for m in T.serial(warp, G, step=warps):
                mx: T.float32 = T.float32("-inf")
                for kk in T.unroll(TILE // 32):
                    mx = T.max(mx, sc[m * TILE + kk * 32 + lane])
                mx = T.cuda.warp_max(mx)
                mo = mrun[s * G + m]
                mn = T.max(mo, mx)
                sm: T.float32 = T.float32(0)
                for kk in T.unroll(TILE // 32):
                    p = T.if_then_else(
                        mn == T.float32("-inf"), T.float32(0), T.exp2(sc[m * TILE + kk * 32 + lane] - mn)
                    )
                    sc[m * TILE + kk * 32 + lane] = p
                    sm = sm + p
                sm = T.cuda.warp_sum(sm)
                if lane == 0:
                    a0 = T.if_then_else(mo == T.float32("-inf"), T.float32(0), T.exp2(mo - mn))
                    alpha[m] = a0
                    mrun[(1 - s) * G + m] = mn
                    lrun[(1 - s) * G + m] = lrun[s * G + m] * a0 + sm
            T.cuda.cta_sync()
            # P V of the tile
            for m in T.unroll(G):
                a1 = alpha[m]
                for j in T.unroll(vec):
                    acc[m * vec + j] = acc[m * vec + j] * a1
            for u in T.unroll(TILE // groups):
                kk = u * groups + grp
                vv[T.Ramp(0, 1, vec)] = st[T.Ramp(s * SE + KE + kk * D + col, 1, vec)]
                for m in T.unroll(G):
                    p = sc[m * TILE + kk]
                    for j in T.unroll(vec):
                        acc[m * vec + j] = acc[m * vec + j] + p * T.cast(vv[j], "float32")
            T.cuda.cta_sync()  # the stage is refilled two tiles on
        # the key groups' accumulators meet in shared memory (where the stages were)
        for m in T.unroll(G):
            for j in T.unroll(vec):
                red[(grp * G + m) * D + col + j] = acc[m * vec + j]
        T.cuda.cta_sync()
        for o in T.serial(tx, G * D, step=threads):
            tot: T.float32 = red[o]
            for w in T.unroll(1, groups):
                tot = tot + red[w * G * D + o]
            Op[c, kvh * G + o // D, o % D] = tot
        if tx < G:
            ML[c, kvh * G + tx, 0] = mrun[ntiles % 2 * G + tx]
            ML[c, kvh * G + tx, 1] = lrun[ntiles % 2 * G + tx]

    return decode_split


@functools.cache
def make_decode_combine(dtype: str = "bfloat16", D: int = 128):
    """``O[r, :]`` from the chunks' partial results: each rescaled by ``2^(m_c - M)``.

    A block of ``D x S`` threads per query row: thread ``(x, y)`` takes column ``x`` of every
    ``S``-th chunk (``S = 1024 / D``, at most 8), so a row with hundreds of chunks (one K / V head
    over a long cache) waits for ``chunks / S`` rounds of loads, not ``chunks``; the ``S``
    partial maxima and sums meet in shared memory."""
    S = min(8, 1024 // D)
    rows = T.dynamic("rows")
    chunks = T.dynamic("chunks")

    @T.function
    def decode_combine(
        Op: T.Tensor((chunks, rows, D), "float32"),
        ML: T.Tensor((chunks, rows, 2), "float32"),
        O: T.Tensor((rows, D), dtype),
    ):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=rows, block=(D, S)))
        r = T.cuda.block_idx("x")
        tx = T.cuda.thread_idx("x")
        ty = T.cuda.thread_idx("y")
        tops = T.alloc_shared((S,), "float32")
        nums = T.alloc_shared((S * D,), "float32")
        dens = T.alloc_shared((S,), "float32")
        top: T.float32 = T.float32("-inf")
        for c in T.serial(ty, chunks, step=S, unroll=4):  # independent loads: several in flight
            top = T.max(top, ML[c, r, 0])
        if tx == 0:
            tops[ty] = top
        T.cuda.cta_sync()
        top = tops[0]
        for y in T.unroll(1, S):
            top = T.max(top, tops[y])
        num: T.float32 = T.float32(0)
        den: T.float32 = T.float32(0)
        for c in T.serial(ty, chunks, step=S, unroll=4):
            w = T.if_then_else(ML[c, r, 0] == T.float32("-inf"), T.float32(0), T.exp2(ML[c, r, 0] - top))
            num = num + w * Op[c, r, tx]
            den = den + w * ML[c, r, 1]
        nums[ty * D + tx] = num
        if tx == 0:
            dens[ty] = den
        T.cuda.cta_sync()
        if ty == 0:
            tot: T.float32 = nums[tx]
            dt: T.float32 = dens[0]
            for y in T.unroll(1, S):
                tot = tot + nums[y * D + tx]
                dt = dt + dens[y]
            O[r, tx] = T.cast(tot / dt, dtype)

    return decode_combine


KERNELS = {
    "decode_split_bf16_d128_g8": lambda: make_decode_split("bfloat16", 128, 8),
    "decode_split_f16_d64_g1": lambda: make_decode_split("float16", 64, 1),
    "decode_combine_bf16_d128": lambda: make_decode_combine("bfloat16", 128),
    "decode_split_bf16_d256_g8": lambda: make_decode_split("bfloat16", 256, 8),
    "decode_combine_bf16_d256": lambda: make_decode_combine("bfloat16", 256),
}
