# ruff: noqa: F821
# (B, H, S, D, ... in the @T.jit annotations are T.constexpr parameters, bound by .specialize)
"""FlashAttention-3-style forward attention for Hopper, O = softmax(Q K^T / sqrt(d)) V.

Q, K, V, O: bf16 (or fp16) tensors of shape ``(batch, heads, seq, head_dim)``, contiguous;
the kernel reads Q, K and V through TMA descriptors of their ``(batch * heads * seq, head_dim)``
matrices (its only arguments for them: a launch checks and packs nothing more) and writes O
through the same flattened view. Head dim 64, 128 or 256; ``CAUSAL`` masks keys after the
query (top-left aligned, like
``scaled_dot_product_attention(is_causal=True)`` for equal lengths).

Structure (one CTA per ``BM``-row query tile of one (batch, head), ``1 + BM / 64`` warpgroups):

* warpgroup 0 is the producer (``setmaxnreg.dec``): one thread loads the CTA's Q tile once and
  streams ``BN``-row K and V tiles with TMA (128-byte swizzle, one box per 64 columns of the
  head dim) into a ``STAGES``-deep ring; K and V of a stage complete on separate *full*
  mbarriers, so ``Q K^T`` starts before V has landed.
* warpgroups 1.. are consumers (``setmaxnreg.inc``), 64 query rows each:
  ``S = Q K^T`` by ``wgmma.mma_async`` with both operands from shared memory (K-major
  descriptors, as in the GEMM); the online softmax in registers (row max and sum over the 4
  threads of a quad with shuffles, ``ex2.approx`` on ``S * log2(e)/sqrt(d) - m``, the running
  output rescaled by ``exp2(m_old - m_new)``); P converted to bf16 pairs in registers (the
  ``S`` accumulator layout *is* the wgmma A-fragment layout, so no shuffles); ``O += P V`` by
  the register-A form of wgmma with V as an N-major (``trans_b``) descriptor; the stage is
  released on its *empty* barrier after the ``P V`` wgmma finished. Each GEMM's k16 steps are
  one inline-PTX statement (``wgmma_block``): less NVVM time than one statement a step, the
  same SASS.
* causal: key blocks after the tile's last query row are never loaded; blocks that cross
  the diagonal of a warpgroup's rows are masked element-wise.
* ``PINGPONG`` / ``OVERLAP`` (FlashAttention-3's schedule): a consumer issues
  ``O += P(j-1) V(j-1)`` and ``S(j) = Q K(j)^T`` back to back as one *turn*, then runs the
  softmax of ``S(j)``. ``PINGPONG``: the consumer warpgroups take turns round-robin (named
  barrier ``w`` is warpgroup ``w``'s), so one's softmax runs under the others' wgmma. ``OVERLAP``: the softmax starts
  when ``S(j)`` is done (``wgmma.wait_group 1``) while ``P(j-1) V(j-1)`` still runs; the
  output is rescaled and P repacked after it finished.
* ``ONE_LOOP`` (opt-in): the ping-pong / overlap consumer as one loop of ``nblk + 1`` steps
  with nothing peeled: step 0's ``P V`` and step ``nblk``'s ``S`` are one stand-in k16 step
  each (``O += 0 * V(0)``; a throw-away ``S`` of the ``V(nblk - 1)`` stage), so the softmax
  and each GEMM are in the kernel once: less compile time (NVVM and ptxas), but 2-9 % below
  the peeled form on the H200 (docs/benchmarks.md, "Compile time vs speed of the attention
  forms"), so not the default. ``UNIFORM`` (opt-in): the warpgroup index and the dynamic
  consumers' tile number through a lane-0 shuffle, so ptxas keeps the indices derived from
  them in uniform registers (+4 % for the causal one loop; docs/hopper.md).
* ``CHAINS`` (1 or 4): the softmax's row max and sum as that many independent chains. The loop
  is bound by instruction issue (docs/benchmarks.md, "Attention, paired"), hence also ``desc``:
  each wgmma descriptor one 32-bit add.
* epilogue: each row divided by its sum and stored from registers as bf16 pairs (the GEMM's
  ``store_rows``).
* ``SCHED`` (docs/hopper.md): ``"grid"`` (default) one CTA per tile, longest query block of a
  head first; ``"lpt"`` one CTA per tile in ``tile_coords`` order (L2 groups of ``HEADS_L2``
  heads, causal longest-first); ``"persistent"`` ``min(SMS, tiles)`` CTAs striding over that
  order; ``"dynamic"`` the same CTAs taking their next tile from a global counter (an extra
  argument, ``tile_counter``). Persistent CTAs keep the K / V ring running across tiles
  (phases from a running count) and free the Q buffer on a ``qempty`` mbarrier.

``make_attention(B, H, S, D, causal, dtype, **tiles)`` gives the specialized kernel. The host
side (tile choice, TMA descriptors, the tile counter, the ``attention`` / ``attention_varlen``
calls) is ``tirx/kernels/attn.py``: a process that finds its kernel in the ready cache never
imports this module (nor the script frontend).
"""

from __future__ import annotations

import functools
import math

from tirx.kernels.attn import best_config, config_varlen
from tirx.script import tirx as T

from .gemm import DESC_HI, check_registers, store_rows

LOG2E = 1.4426950408889634
NEG = -1.0e30  # "minus infinity" of masked scores and of the initial row max (finite: no inf - inf)


def v_desc_hi(BN: int) -> int:
    """High bits of an N-major (transposed) 128-byte-swizzle descriptor of a ``BN``-row V tile:
    leading byte offset = the distance between 64-column chunks (``BN`` rows of 128 B),
    stride byte offset 1024 B (8 rows of 128 B), layout type SWIZZLE_128B."""
    return ((BN * 128 >> 4) << 16) | (64 << 32) | (1 << 62)


@T.inline
def quad_max(x):
    """Max over the 4 threads of a quad (they hold one accumulator row)."""
    y = T.max(x, T.cuda.shfl_xor_sync(x, 1))
    return T.max(y, T.cuda.shfl_xor_sync(y, 2))


@T.inline
def quad_sum(x):
    """Sum over the 4 threads of a quad."""
    y = x + T.cuda.shfl_xor_sync(x, 1)
    return y + T.cuda.shfl_xor_sync(y, 2)


def k_offset(kk, rows: int):
    """Address-field offset (16-byte units) of k16-step ``kk`` in a K-major, 128-byte-swizzled
    tile of ``rows`` rows: 32 bytes a step inside a 64-column chunk, the next chunk ``rows``
    rows of 128 bytes further. ``kk``: an int or the GEMM loop's variable."""
    return (kk // 4) * rows * 8 + 2 * (kk % 4)


def v_offset(k):
    """Address-field offset of k16-step ``k`` in an N-major V stage: 16 rows of 128 bytes."""
    return k * 16 * 8


@T.inline
def desc(hi, base, off):
    """A wgmma shared-memory descriptor: the constant fields ``hi`` (layout, strides) with the
    address field ``base + off`` (16-byte units). The address field is 14 bits wide and shared
    memory is below 256 KB, so the sum never carries out of the low word: one 32-bit add per
    descriptor and a constant high word, where the full 64-bit form took four or five uniform
    instructions per wgmma (-8 % instructions in the attention main loop)."""
    return T.cast(base + T.uint32(off + (hi & 0xFFFFFFFF)), "uint64") | T.uint64(hi & ~0xFFFFFFFF)


def key_block(j, nblk, REVERSE):
    """The key block of step ``j`` of a tile's ``nblk`` (``REVERSE``: from the last one down);
    the producer's loads and the consumers' masks both ask here."""
    return nblk - 1 - j if REVERSE else j


@T.inline
def mask_scores(sacc, j, nblk, row0, CAUSAL, mask_from, lane, BN, S):
    """The masks of score block ``j`` before its softmax: causal, keys after a row (only blocks
    reaching past column ``mask_from``, the warpgroup's first row); a ragged last block, keys
    past the sequence (they belong to the next head). Per-element branches; the same masks
    written as ``T.Select`` give the same SASS in all 29 attention kernels and the same NVVM
    time (2026-12-02, ``tools/bench/sass_diff.py``), so the 0.3-0.7 % a select form once
    measured slower on the H200 was the paired timing's noise."""
    if CAUSAL and j * BN + BN - 1 > mask_from:
        for i in range(BN // 8):
            for e in range(4):
                if j * BN + 8 * i + (lane % 4) * 2 + (e % 2) > row0 + 8 * (e // 2):
                    sacc[4 * i + e] = T.float32(NEG)
    if not CAUSAL and S % BN != 0 and j == nblk - 1:
        for i in range(BN // 8):
            for e in range(4):
                if j * BN + 8 * i + (lane % 4) * 2 + (e % 2) >= S:
                    sacc[4 * i + e] = T.float32(NEG)


@T.inline
def softmax_scores(sacc, m, l, corr, sl2, BN, red=None):
    """Online softmax of one ``64 x BN`` score block (``sacc``, masked by ``mask_scores``): new
    row maxima ``m``, ``P = exp2(S * sl2 - m * sl2)`` in place, the running sums ``l`` and the
    factors ``corr = exp2(m_old - m_new)`` that the output rows still need. ``red``: four floats
    of scratch for the row max and sum as four independent chains (``CHAINS=4``); None: one
    chain each."""
    for r in range(2):
        if T.constexpr(red is None):
            mx = T.max(sacc[2 * r], sacc[2 * r + 1])
            for i in range(1, BN // 8):
                mx = T.max(mx, T.max(sacc[4 * i + 2 * r], sacc[4 * i + 2 * r + 1]))
        else:  # four independent chains: a quarter of the dependent latency
            for a in range(4):
                red[a] = T.max(sacc[4 * a + 2 * r], sacc[4 * a + 2 * r + 1])
            for i in range(4, BN // 8):
                red[i % 4] = T.max(red[i % 4], T.max(sacc[4 * i + 2 * r], sacc[4 * i + 2 * r + 1]))
            mx = T.max(T.max(red[0], red[1]), T.max(red[2], red[3]))
        mnew = T.max(m[r], quad_max(mx))
        msc = mnew * T.float32(sl2)
        corr[r] = m[r] * T.float32(sl2) - msc
        T.ptx.ex2.approx.ftz.f32(corr[r], corr[r])
        m[r] = mnew
        if T.constexpr(red is None):
            rs = T.float32(0)
            for i in range(BN // 8):
                for e in range(2):
                    sacc[4 * i + 2 * r + e] = sacc[4 * i + 2 * r + e] * T.float32(sl2) - msc
                    T.ptx.ex2.approx.ftz.f32(sacc[4 * i + 2 * r + e], sacc[4 * i + 2 * r + e])
                    rs = rs + sacc[4 * i + 2 * r + e]
            l[r] = l[r] * corr[r] + rs
        else:
            for a in range(4):
                red[a] = T.float32(0)
            for i in range(BN // 8):
                for e in range(2):
                    sacc[4 * i + 2 * r + e] = sacc[4 * i + 2 * r + e] * T.float32(sl2) - msc
                    T.ptx.ex2.approx.ftz.f32(sacc[4 * i + 2 * r + e], sacc[4 * i + 2 * r + e])
                    red[(2 * i + e) % 4] = red[(2 * i + e) % 4] + sacc[4 * i + 2 * r + e]
            l[r] = l[r] * corr[r] + ((red[0] + red[1]) + (red[2] + red[3]))


@T.inline
def rescale_pack(o, sacc, pa, corr, BN, D, DT):
    """Output rows times ``corr``; P packed to pairs of ``DT`` (``pa``: the wgmma A fragments,
    read as ``DT`` by the ``P V`` wgmma)."""
    for r in range(2):
        for i in range(D // 8):
            o[4 * i + 2 * r] = o[4 * i + 2 * r] * corr[r]
            o[4 * i + 2 * r + 1] = o[4 * i + 2 * r + 1] * corr[r]
    for i in range(BN // 4):
        if T.constexpr(DT == "bfloat16"):
            pa[i] = T.cuda.float22bfloat162_rn(sacc[2 * i], sacc[2 * i + 1])
        else:
            pa[i] = T.cuda.float22half2_rn(sacc[2 * i], sacc[2 * i + 1])


@T.inline
def wait_bar(bar, phase):
    """Spin until mbarrier ``bar`` completed the phase of parity ``phase``."""
    while not T.ptx.mbarrier_try_wait_parity(T.address_of(bar), phase):
        pass


@T.inline
def release(bar, ctid):
    """A consumer warpgroup frees a K or V stage (one arrival, by its first thread)."""
    if ctid == 0:
        T.evaluate(T.ptx.mbarrier_arrive(T.address_of(bar)))


def _slots(first: int, n: int, mod: str = "") -> str:
    """Template placeholders ``{first}, ..., {first + n - 1}`` (``T.ptx.asm``'s language)."""
    return ", ".join(f"{{{first + i}{':' + mod if mod else ''}}}" for i in range(n))


def wgmma_block(n: int, ab: str, steps: int, a_regs: int = 0, trans_b: bool = False) -> str:
    """One inline-PTX block of ``steps`` consecutive ``wgmma.mma_async`` k16 steps into one
    accumulator (operands ``0 .. n/2 - 1``, read and written), ``m64n{n}k16``, fp32 += ``ab`` x
    ``ab``. Operands after the accumulator: A in shared memory (``a_regs == 0``): per step its
    A and B descriptors; A in registers (``a_regs`` of them, 4 a step; B N-major): those, then
    per step its B descriptor. The last operand is the first step's scale-d (0 / 1). ``trans_b``
    (A in shared memory): B N-major (imm-trans-b 1; f16 / bf16 only).

    One statement instead of one per step: NVVM's time grows faster than linearly in the
    number of statements with 64+ register operands each (2026-12-01: 8 k-steps of
    ``m64n128k16`` in one block 33 ms of NVVM optimizer against 94 ms as 8 statements). The
    descriptors come from ``desc`` outside the block (one 32-bit add each), so ptxas gets the
    same work as from one statement a step: the SASS of the causal head-dim-128 and both
    head-dim-64 ``best_config`` kernels is the statement form's, head dim 128 non-causal has 8
    instructions more (2026-12-02, ``tools/bench/sass_diff.py``; 64-bit adds inside the block
    had cost 1.5-3 % of speed)."""
    nacc = n // 2
    acc = "{{" + _slots(0, nacc, "inout") + "}}"
    first = nacc + a_regs
    sc = first + (1 if a_regs else 2) * steps
    lines = [".reg .pred p;", f"setp.ne.b32 p, {{{sc}}}, 0;"]
    for i in range(steps):
        if a_regs:
            src_a, src_b = "{{" + _slots(nacc + 4 * i, 4) + "}}", f"{{{first + i}}}"
        else:
            src_a, src_b = f"{{{first + 2 * i}}}", f"{{{first + 2 * i + 1}}}"
        # imm-scale-a/b 1, then B N-major (register A) / imm-trans-a 0 and imm-trans-b
        tail = "1, 1, 1" if a_regs else f"1, 1, 0, {int(trans_b)}"
        lines.append(
            f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ab}.{ab} {acc}, {src_a}, {src_b}, "
            f"{'p' if i == 0 else 1}, {tail};"
        )
    return "{{\n" + "\n".join(lines) + "\n}}"


@T.inline
def qk_gemm(sacc, qa, ka, BN, BM, D, ab, steps=None):
    """``sacc = Q K^T`` for 64 query rows (Q tile at shared address ``qa``: ``D / 64`` chunks of
    ``BM`` rows, this warpgroup's rows at offset ``qa``) and one K stage at ``ka``: the
    ``D / 16`` wgmma k-steps (or the first ``steps``) in one inline-PTX block, the first with
    scale-d 0 (``sacc``'s old values are not read)."""
    n = T.meta_var(D // 16 if steps is None else steps)
    T.ptx.wgmma_fence()
    qd = qa >> 4
    kd = ka >> 4
    T.ptx.asm(
        wgmma_block(BN, ab, n),
        *[sacc[i] for i in range(BN // 2)],
        *[
            d
            for kk in range(n)
            for d in (desc(DESC_HI, qd, k_offset(kk, BM)), desc(DESC_HI, kd, k_offset(kk, BN)))
        ],
        T.int32(0),
        ty="void",
    )
    T.ptx.wgmma_commit_group()


@T.inline
def pv_gemm(o, pa, va, BN, D, ab, steps=None):
    """``o += P V``: P from registers (``pa``), one V stage at ``va`` (N-major descriptor, 16
    rows of 128 bytes a k-step), the ``BN / 16`` k-steps (or the first ``steps``) in one
    inline-PTX block."""
    n = T.meta_var(BN // 16 if steps is None else steps)
    T.ptx.wgmma_fence()
    vd = va >> 4
    T.ptx.asm(
        wgmma_block(D, ab, n, 4 * n),
        *[o[i] for i in range(D // 2)],
        *[pa[i] for i in range(4 * n)],
        *[desc(v_desc_hi(BN), vd, v_offset(k)) for k in range(n)],
        T.int32(1),
        ty="void",
    )
    T.ptx.wgmma_commit_group()


@T.inline
def store_rows_below(C, acc, out, row, col, left, BN, DT):
    """``store_rows`` for a partial tile: this thread's rows ``row`` and ``row + 8`` only where
    they are among the ``left`` rows still inside the sequence."""
    for i in range(BN // 8):
        if left > 0:
            out[0] = T.cast(acc[4 * i], DT)
            out[1] = T.cast(acc[4 * i + 1], DT)
            C[row, T.Ramp(col + 8 * i, 1, 2)] = out[T.Ramp(0, 1, 2)]
        if left > 8:
            out[0] = T.cast(acc[4 * i + 2], DT)
            out[1] = T.cast(acc[4 * i + 3], DT)
            C[row + 8, T.Ramp(col + 8 * i, 1, 2)] = out[T.Ramp(0, 1, 2)]


L2_BYTES = 32 * 1024 * 1024  # K + V of the heads of one tile group should fit here (H200 L2: 50 MB)
SCHEDS = ("grid", "lpt", "persistent", "dynamic")


def heads_per_group(BH: int, S: int, D: int, l2_bytes: int = L2_BYTES) -> int:
    """(batch, head) pairs per L2 group of the ``tile_coords`` order (``SCHED`` other than
    ``"grid"``, ``HEADS_L2=0``): as many as have their K and V (``2 * S * D`` bf16 values each)
    in ``l2_bytes``, at least 1."""
    return max(1, min(BH, l2_bytes // (4 * S * D)))


def tile_order(t: int, BH: int, mblocks: int, HG: int, causal: bool) -> tuple[int, int]:
    """Pure-Python mirror of ``tile_coords`` (tests check that it is a permutation)."""
    g = t // (HG * mblocks)
    gsize = min(BH - g * HG, HG)
    w = t - g * (HG * mblocks)
    r = w // gsize
    return g * HG + w % gsize, (mblocks - 1 - r if causal else r)


@T.inline
def tile_coords(t, BH, mblocks, HG, CAUSAL):
    """``(bh, mb)`` of work tile ``t`` (``0 <= t < BH * mblocks``): the ``BH`` (batch, head)
    pairs are cut into groups of ``HG`` (the last one may be smaller) whose K and V fit in L2;
    a group's tiles go query block by query block, all ``HG`` heads of one block in a row,
    causal from the last block (the most key blocks) down (longest-processing-time first), so
    the short tiles fill the tail and concurrent CTAs share K / V in L2."""
    g = t // (HG * mblocks)
    gsize = T.min(BH - g * HG, HG)
    w = t - g * (HG * mblocks)
    r = w // gsize
    return g * HG + w % gsize, (mblocks - 1 - r if CAUSAL else r)


@T.inline
def varlen_rows(CU, NQ, sb):
    """``VARLEN``: the first row and the length of sequence ``sb`` of the packed tokens, from its
    offsets ``CU[sb]`` .. ``CU[sb + 1]`` clipped to the ``NQ`` tokens (offsets outside them never
    store out of bounds)."""
    q0 = T.max(CU[sb], 0)
    return q0, T.min(CU[sb + 1], NQ) - q0


@T.inline
def varlen_block(lq, x, BM, CAUSAL):
    """``VARLEN``: the query block CTA ``x`` takes of a sequence of ``lq`` rows (causal: from the
    last one down, the longest first; ``x`` past the sequence's blocks: none, the CTA returns)."""
    return (lq + (BM - 1)) // BM - 1 - x if CAUSAL else x


@T.inline
def varlen_lost(lq, gx, BM, CAUSAL):
    """``VARLEN``: ``(first, count)`` of a sequence's rows that a grid of ``gx`` query blocks
    (``MAXQ`` too small) leaves out; count <= 0: none. Causal CTAs take the last blocks
    (``varlen_block``), so the first rows are the ones left."""
    return (0 if CAUSAL else gx * BM), (((lq + (BM - 1)) // BM - gx) * BM if CAUSAL else lq - gx * BM)


@T.inline
def take_tile(Sem):
    """``SCHED="dynamic"``: the next tile of this CTA (the first wave is ``blockIdx.x``, then
    the counter ``Sem[0]`` hands out ``gridDim.x, gridDim.x + 1, ...`` in the order asked)."""
    return T.cuda.atomic_add(T.address_of(Sem[0]), 1) + T.cuda.grid_dim("x")


@T.inline
def tile_number(tid, UNIFORM):
    """The consumers' next tile (``SCHED="dynamic"``), as the producer left it in ``tid``;
    ``UNIFORM``: through a shuffle from lane 0, so ptxas knows it is warp-uniform."""
    return T.cuda.shfl_sync(tid[0], 0) if UNIFORM else tid[0]


@T.inline
def count_out(Sem):
    """The CTA took its last number; the last CTA out puts the counter back to zero for the next
    launch (every CTA has taken its last number before it counts itself out in ``Sem[1]``)."""
    T.cuda.thread_fence()
    if T.cuda.atomic_add(T.address_of(Sem[1]), 1) == T.cuda.grid_dim("x") - 1:
        T.evaluate(T.cuda.atomic_exch(T.address_of(Sem[0]), 0))
        T.evaluate(T.cuda.atomic_exch(T.address_of(Sem[1]), 0))


@T.inline
def key_blocks(m0, CAUSAL, S, BM, BN):
    """Key blocks of the query tile at row ``m0`` (causal: none after its last row; the last one
    may reach past the sequence: those columns are masked)."""
    return T.min((m0 + BM + BN - 1) // BN, (S + BN - 1) // BN) if CAUSAL else (S + BN - 1) // BN


@T.inline
def load_q(TQ, qfull, sbase, bh, m0, S, D, BM, q_bytes, rows):
    """Q's ``BM``-row tile at row ``m0`` of (batch, head) ``bh`` (``rows``: as in ``load_tile``),
    one TMA box per 64 columns, completing on ``qfull``."""
    T.evaluate(T.ptx.mbarrier_arrive_expect_tx(T.address_of(qfull[0]), q_bytes))
    for c in range(D // 64):
        T.ptx.tma_load_2d(
            sbase + T.uint32(c * BM * 128),
            TQ,
            c * 64 if rows is None else rows[1] + c * 64,
            bh * S + m0 if rows is None else rows[0] + m0,
            T.address_of(qfull[0]),
        )


@T.inline
def load_tile(
    TQ, TK, TV, qfull, qempty, kfull, vfull, kempty, vempty, sbase, kbase, vbase, bh, m0, nblk, kv0, qn,
    S, D, BM, BN, STAGES, q_bytes, kv_bytes, tid=None, t=0, REVERSE=False, G=1, rows=None,
):  # fmt: skip
    """Producer (one thread) of one query tile: Q, then K and V of every key block through the
    ring. ``kv0 is None``: the CTA's only tile (stage of block ``j`` is ``j % STAGES``).
    Persistent: ``kv0`` key blocks went through the ring before this tile (stage and phase follow
    the running count), ``qn`` tiles before it used the Q buffer (wait until the consumers freed
    it, on ``qempty``); Q is requested after K(0) so the ring keeps streaming meanwhile.
    ``tid`` (``"dynamic"``): the shared word that tells the consumers the tile number ``t``,
    written with the Q request (the consumers read it after ``qfull``). ``G``: query heads per
    K / V head (grouped-query attention): query head ``bh`` reads K / V head ``bh // G``.
    ``rows`` (``VARLEN``): ``(q_row, q_col, kv_row, kv_col)``, where the tile's sequence starts in
    the packed ``(tokens, heads * D)`` matrices (its first row, its head's first column); None:
    the ``(B * H * S, D)`` matrices, row ``bh * S`` (K / V: ``kvh * S``), column 0."""
    kvh = T.meta_var(bh if G == 1 or rows is not None else bh // G)  # (VARLEN: in rows)
    if T.constexpr(kv0 is None):
        load_q(TQ, qfull, sbase, bh, m0, S, D, BM, q_bytes, rows)
    for j in range(nblk):
        it = j if kv0 is None else kv0 + j
        s = it % STAGES
        kb = key_block(j, nblk, REVERSE)
        wait_bar(kempty[s], ((it // STAGES) & 1) ^ 1)
        T.evaluate(T.ptx.mbarrier_arrive_expect_tx(T.address_of(kfull[s]), kv_bytes))
        for c in range(D // 64):
            T.ptx.tma_load_2d(
                kbase + T.cast(s * kv_bytes + c * BN * 128, "uint32"),
                TK,
                c * 64 if rows is None else rows[3] + c * 64,
                kvh * S + kb * BN if rows is None else rows[2] + kb * BN,
                T.address_of(kfull[s]),
            )
        if kv0 is not None and j == 0:
            wait_bar(qempty[0], (qn & 1) ^ 1)
            if T.constexpr(tid is not None):
                tid[0] = t
            load_q(TQ, qfull, sbase, bh, m0, S, D, BM, q_bytes, rows)
        wait_bar(vempty[s], ((it // STAGES) & 1) ^ 1)
        T.evaluate(T.ptx.mbarrier_arrive_expect_tx(T.address_of(vfull[s]), kv_bytes))
        for c in range(D // 64):
            T.ptx.tma_load_2d(
                vbase + T.cast(s * kv_bytes + c * BN * 128, "uint32"),
                TV,
                c * 64 if rows is None else rows[3] + c * 64,
                kvh * S + kb * BN if rows is None else rows[2] + kb * BN,
                T.address_of(vfull[s]),
            )


@T.inline
def free_q(qempty, ctid, j, nblk, kv0):
    """Persistent: the tile's last ``S = Q K^T`` is done, so the producer may load the next Q."""
    if kv0 is not None and j == nblk - 1:
        release(qempty[0], ctid)


@T.inline
def attend_tile(
    O, o, sacc, pa, m, l, corr, out, qfull, qempty, kfull, vfull, kempty, vempty, sbase, kbase, vbase,
    bh, m0, nblk, kv0, qn, first, more, wg, ctid, lane, warp,
    CAUSAL, S, D, BM, BN, STAGES, kv_bytes, consumers, PINGPONG, OVERLAP, ab, sl2, DT, ONE_LOOP=False,
    red=None, REVERSE=False, rows=None,
):  # fmt: skip
    """One consumer warpgroup's 64 rows of one query tile, epilogue included. ``S``: the keys
    (``VARLEN``: this sequence's); ``rows`` (``VARLEN``): ``(o_row, o_col, queries)``, the
    sequence's first row and the head's first column in the packed output, and its query count;
    None: output row ``bh * S`` of ``(B * H * S, D)``, ``S`` queries. ``kv0``, ``qn``:
    as in ``load_tile`` (``None``: the CTA's only tile). ``first`` / ``more``: this is the CTA's
    first tile / another one follows -- with ``PINGPONG`` the turns then form one ring over all
    tiles (warpgroup 1 waits for the last one's final turn of the previous tile)."""
    for i in range(D // 2):
        o[i] = T.float32(0)
    for r in range(2):
        m[r] = T.float32(NEG)
        l[r] = T.float32(0)
    row0 = m0 + (wg - 1) * 64 + warp * 16 + lane // 4  # this thread's rows: row0 and row0 + 8
    qa = sbase + T.cast((wg - 1) * 64 * 128, "uint32")
    while not T.ptx.mbarrier_try_wait_parity(T.address_of(qfull[0]), 0 if kv0 is None else qn & 1):
        pass
    # REVERSE: key blocks from the diagonal down, so only a tile's first step can need the
    # causal mask when its rows lie within one key block (BN a multiple of BM)
    loop_mask = T.meta_var(not REVERSE or (CAUSAL and BN % BM != 0))
    if T.constexpr((PINGPONG or OVERLAP) and ONE_LOOP):
        # FlashAttention-3 order: step j issues S(j) = Q K(j)^T and O += P(j-1) V(j-1) back to
        # back as one "turn", then the softmax of S(j) runs while the tensor cores take the
        # other warpgroups' turns (PINGPONG: named barrier w is warpgroup w's turn) and, with
        # OVERLAP, while P(j-1) V(j-1) is still running (wait_group 1). One loop of nblk + 1
        # steps, nothing peeled: the softmax and each GEMM exist once in the kernel (about half
        # the code for NVVM and ptxas). Step 0 has no P V and step nblk no S: there one k16
        # step stands in (O += 0 * V(0), P still zero; a throw-away S of the V(nblk - 1) stage,
        # both buffers held until the step's end), so every path has the same accumulators
        # in flight, as ptxas needs to keep the wgmma pipeline (a branch around the wgmma or
        # an empty group serializes it, C7520; a narrower stand-in too, C7515). Cost: 1/8 of
        # a key block's tensor work per tile; measured 5-9 % slower than the peeled loop
        # below on the H200 (2026-12-01, cause not isolated), hence opt-in.
        for i in range(BN // 4):
            pa[i] = T.uint32(0)
        for j in range(nblk + 1):
            it = j if kv0 is None else kv0 + j
            s = it % STAGES
            iv = it - 1 if j > 0 else it  # V(j - 1); step 0: V(0), for the stand-in
            sv = iv % STAGES
            if j < nblk:
                wait_bar(kfull[s], (it // STAGES) & 1)
            wait_bar(vfull[sv], (iv // STAGES) & 1)
            if T.constexpr(PINGPONG):
                # warpgroup 1 opens the first turn (persistent: the ring's last turn did)
                if T.constexpr(kv0 is None):
                    if j > 0 or wg > 1:
                        T.ptx.bar.sync(wg, 256)
                elif j > 0 or wg > 1 or not first:
                    T.ptx.bar.sync(wg, 256)
            va = vbase + T.cast(sv * kv_bytes, "uint32")
            if j < nblk:
                qk_gemm(sacc, qa, kbase + T.cast(s * kv_bytes, "uint32"), BN, BM, D, ab)
            else:
                qk_gemm(sacc, va, va, BN, BN, D, ab, 1)  # (Q may hold the next tile's already)
            if j > 0:
                pv_gemm(o, pa, va, BN, D, ab)
            else:
                pv_gemm(o, pa, va, BN, D, ab, 1)
            if T.constexpr(PINGPONG):
                # the next warpgroup's turn; the last warpgroup's final turn opens warpgroup
                # 1's next tile (persistent, another tile follows) or nothing
                if T.constexpr(kv0 is None):
                    if j < nblk or wg < consumers:
                        T.ptx.bar.arrive(wg % consumers + 1, 256)
                elif j < nblk or wg < consumers or more:
                    T.ptx.bar.arrive(wg % consumers + 1, 256)
            T.ptx.wgmma_wait_group(1 if OVERLAP else 0)  # S(j) is done; P(j-1) V(j-1) may still run
            if j < nblk:
                release(kempty[s], ctid)
                free_q(qempty, ctid, j, nblk, kv0)
                if T.constexpr(loop_mask):
                    mask_scores(
                        sacc, key_block(j, nblk, REVERSE), nblk, row0, CAUSAL, m0 + (wg - 1) * 64, lane, BN, S
                    )
                elif j == 0:  # REVERSE: only the first key block (the diagonal one) needs masks
                    mask_scores(sacc, nblk - 1, nblk, row0, CAUSAL, m0 + (wg - 1) * 64, lane, BN, S)
                softmax_scores(sacc, m, l, corr, sl2, BN, red)
            if T.constexpr(OVERLAP):
                T.ptx.wgmma_wait_group(0)
            if j > 0:
                release(vempty[sv], ctid)
            if j < nblk:
                rescale_pack(o, sacc, pa, corr, BN, D, DT)
    elif T.constexpr(PINGPONG or OVERLAP):
        # FlashAttention-3 order: one "turn" issues O += P(j-1) V(j-1) and S(j) = Q K(j)^T
        # back to back, then the softmax of S(j) runs while the tensor cores take the
        # other warpgroup's turn (PINGPONG: named barriers 1 and 2 alternate the turns) and,
        # with OVERLAP, while P(j-1) V(j-1) is still running (wait_group 1). Without
        # ``loop_mask`` only the peeled step masks: the loop has no mask code
        wait_bar(kfull[0 if kv0 is None else kv0 % STAGES], 0 if kv0 is None else (kv0 // STAGES) & 1)
        if T.constexpr(PINGPONG):
            if T.constexpr(kv0 is None):
                if wg > 1:
                    T.ptx.bar.sync(wg, 256)
            elif wg > 1 or not first:
                T.ptx.bar.sync(wg, 256)
        qk_gemm(
            sacc,
            qa,
            kbase if kv0 is None else kbase + T.cast(kv0 % STAGES * kv_bytes, "uint32"),
            BN,
            BM,
            D,
            ab,
        )
        if T.constexpr(PINGPONG):
            T.ptx.bar.arrive(wg % consumers + 1, 256)
        T.ptx.wgmma_wait_group(0)
        release(kempty[0 if kv0 is None else kv0 % STAGES], ctid)
        free_q(qempty, ctid, 0, nblk, kv0)
        mask_scores(
            sacc, nblk - 1 if REVERSE else 0, nblk, row0, CAUSAL, m0 + (wg - 1) * 64, lane, BN, S
        )  # key_block(0, ...)
        softmax_scores(sacc, m, l, corr, sl2, BN, red)
        rescale_pack(o, sacc, pa, corr, BN, D, DT)
        for j in range(1, nblk):
            it = j if kv0 is None else kv0 + j
            s = it % STAGES
            sp = (it - 1) % STAGES
            wait_bar(kfull[s], (it // STAGES) & 1)
            wait_bar(vfull[sp], ((it - 1) // STAGES) & 1)
            if T.constexpr(PINGPONG):
                T.ptx.bar.sync(wg, 256)
            qk_gemm(sacc, qa, kbase + T.cast(s * kv_bytes, "uint32"), BN, BM, D, ab)
            pv_gemm(o, pa, vbase + T.cast(sp * kv_bytes, "uint32"), BN, D, ab)
            if T.constexpr(PINGPONG):
                T.ptx.bar.arrive(wg % consumers + 1, 256)
            T.ptx.wgmma_wait_group(1 if OVERLAP else 0)  # S(j) is done; P(j-1) V(j-1) may still run
            release(kempty[s], ctid)
            free_q(qempty, ctid, j, nblk, kv0)
            if T.constexpr(loop_mask):
                mask_scores(
                    sacc, key_block(j, nblk, REVERSE), nblk, row0, CAUSAL, m0 + (wg - 1) * 64, lane, BN, S
                )
            softmax_scores(sacc, m, l, corr, sl2, BN, red)
            if T.constexpr(OVERLAP):
                T.ptx.wgmma_wait_group(0)
            release(vempty[sp], ctid)
            rescale_pack(o, sacc, pa, corr, BN, D, DT)
        sl = (nblk - 1) % STAGES if kv0 is None else (kv0 + nblk - 1) % STAGES
        wait_bar(vfull[sl], ((nblk - 1) // STAGES) & 1 if kv0 is None else ((kv0 + nblk - 1) // STAGES) & 1)
        if T.constexpr(PINGPONG):
            T.ptx.bar.sync(wg, 256)
        pv_gemm(o, pa, vbase + T.cast(sl * kv_bytes, "uint32"), BN, D, ab)
        if PINGPONG and wg < consumers:
            T.ptx.bar.arrive(wg + 1, 256)
        if PINGPONG and kv0 is not None and wg == consumers and more:
            T.ptx.bar.arrive(1, 256)  # close the ring: warpgroup 1's next first turn
        T.ptx.wgmma_wait_group(0)
        release(vempty[sl], ctid)
    else:
        for j in range(nblk):
            it = j if kv0 is None else kv0 + j
            s = it % STAGES
            ph = (it // STAGES) & 1
            wait_bar(kfull[s], ph)
            qk_gemm(sacc, qa, kbase + T.cast(s * kv_bytes, "uint32"), BN, BM, D, ab)
            T.ptx.wgmma_wait_group(0)
            release(kempty[s], ctid)
            free_q(qempty, ctid, j, nblk, kv0)
            mask_scores(
                sacc, key_block(j, nblk, REVERSE), nblk, row0, CAUSAL, m0 + (wg - 1) * 64, lane, BN, S
            )
            softmax_scores(sacc, m, l, corr, sl2, BN, red)
            rescale_pack(o, sacc, pa, corr, BN, D, DT)
            wait_bar(vfull[s], ph)
            pv_gemm(o, pa, vbase + T.cast(s * kv_bytes, "uint32"), BN, D, ab)
            T.ptx.wgmma_wait_group(0)
            release(vempty[s], ctid)
    for r in range(2):
        inv = T.float32(1) / quad_sum(l[r])
        for i in range(D // 8):
            o[4 * i + 2 * r] = o[4 * i + 2 * r] * inv
            o[4 * i + 2 * r + 1] = o[4 * i + 2 * r + 1] * inv
    if T.constexpr(rows is not None):  # rows past the sequence belong to the next one: not stored
        store_rows_below(O, o, out, rows[0] + row0, rows[1] + (lane % 4) * 2, rows[2] - row0, D, DT)
    elif T.constexpr(S % BM == 0):
        store_rows(O, o, out, 0, bh * S + row0, (lane % 4) * 2, D, DT)
    else:  # rows past the sequence belong to the next head: not stored
        store_rows_below(O, o, out, bh * S + row0, (lane % 4) * 2, S - row0, D, DT)


@T.jit
def attention_fwd(
    O: T.Tensor((NQ, H, D) if VARLEN else (B, H, S, D), DT),
    TQ: T.Ptr(T.uint8, "tensormap"),
    TK: T.Ptr(T.uint8, "tensormap"),
    TV: T.Ptr(T.uint8, "tensormap"),
    Sem: T.Tensor((2,), "int32") = None,
    CUQ: T.Tensor((NB + 1,), "int32") = None,
    CUK: T.Tensor((NB + 1,), "int32") = None,
    NB: T.int32 = None,
    NQ: T.int32 = None,
    MAXQ: T.int32 = None,
    *,
    B: T.constexpr,
    H: T.constexpr,
    S: T.constexpr,
    D: T.constexpr,
    CAUSAL: T.constexpr = False,
    DT: T.constexpr = "bfloat16",
    BM: T.constexpr = 128,
    BN: T.constexpr = 128,
    STAGES: T.constexpr = 2,
    PRODUCER_REGS: T.constexpr = 24,
    CONSUMER_REGS: T.constexpr = 240,
    PINGPONG: T.constexpr = False,
    OVERLAP: T.constexpr = False,
    SCHED: T.constexpr = "grid",
    HEADS_L2: T.constexpr = 0,
    SMS: T.constexpr = 132,
    ONE_LOOP: T.constexpr = False,
    CHAINS: T.constexpr = 1,
    REVERSE: T.constexpr = False,
    UNIFORM: T.constexpr = False,
    HKV: T.constexpr = 0,
    VARLEN: T.constexpr = False,
):
    T.static_assert(D in (64, 128, 256), "head dim D must be 64, 128 or 256")
    T.static_assert(HKV >= 0 and H % (HKV if HKV else H) == 0, "HKV (K / V heads; 0: H) must divide H")
    G = T.meta_var(H // HKV if HKV else 1)  # query heads per K / V head (grouped-query attention)
    T.static_assert(
        BM in (64, 128, 192, 256) and BN in (64, 128, 176, 192, 256), "BM is 64 * consumers, BN 64..256"
    )
    T.static_assert(
        VARLEN or (S >= BM and S >= BN and S % 8 == 0), "seq must be a multiple of 8, at least BM and BN"
    )
    T.static_assert(not VARLEN or SCHED == "grid", "VARLEN takes one CTA per tile (SCHED='grid')")
    T.static_assert(not PINGPONG or BM >= 128, "PINGPONG alternates consumer warpgroups: BM >= 128")
    T.static_assert(SCHED in SCHEDS, "SCHED is 'grid', 'lpt', 'persistent' or 'dynamic'")
    T.static_assert(SMS >= 1 and HEADS_L2 >= 0, "SMS >= 1 persistent CTAs, HEADS_L2 >= 0 (0: from L2_BYTES)")
    T.static_assert(CHAINS in (1, 4), "CHAINS (softmax row max / sum chains) is 1 or 4")
    T.static_assert(
        not (REVERSE and CAUSAL) or BN % BM == 0,
        "REVERSE with causal masks needs BN a multiple of BM (else the first key block can be all masked "
        "for some rows: exp2 of the masked scores' rounding error)",
    )
    consumers = T.meta_var(BM // 64)
    check_registers(consumers, PRODUCER_REGS, CONSUMER_REGS)
    ab = T.meta_var("bf16" if DT == "bfloat16" else "f16")
    q_bytes = T.meta_var(BM * D * 2)
    kv_bytes = T.meta_var(BN * D * 2)
    smem_bytes = T.meta_var(q_bytes + 2 * STAGES * kv_bytes + 1024)
    mblocks = T.meta_var((S + BM - 1) // BM)  # the last query tile may be partial (rows >= S unused)
    sl2 = T.meta_var(LOG2E / math.sqrt(D))
    ntiles = T.meta_var(B * H * mblocks)
    hg = T.meta_var(HEADS_L2 if HEADS_L2 or VARLEN else heads_per_group(B * H, S, D))
    persistent = T.meta_var(SCHED in ("persistent", "dynamic"))
    grid = T.meta_var(
        ((MAXQ + (BM - 1)) // BM, H, NB)
        if VARLEN
        else (mblocks, B * H)
        if SCHED == "grid"
        else (ntiles if SCHED == "lpt" else min(SMS, ntiles))
    )
    T.device_entry(
        launch=T.cuda.LaunchConfig(grid=grid, block=128 * (1 + consumers), dynamic_smem_bytes=smem_bytes),
        attrs={"cuda.kernel_attrs": {"min_blocks_per_sm": 1}},
    )
    tx = T.cuda.thread_idx("x")
    # the output as rows of (batch, head, position); VARLEN: of tokens, a head's D columns each
    Of = O.view(NQ, H * D) if VARLEN else O.view(B * H * S, D)
    # UNIFORM: the warpgroup index (and the dynamic consumers' tile number) through a shuffle
    # from lane 0, which ptxas knows to be warp-uniform: what derives from them (stages, phases,
    # descriptors, turns) can then live in uniform registers
    wg = T.cuda.shfl_sync(tx // 128, 0) if UNIFORM else tx // 128
    rows = T.meta_var(None)  # VARLEN: where the tile's sequence starts (load_tile, attend_tile)
    if T.constexpr(VARLEN):
        # CTA (x, h, b): query block x of head h of sequence b (causal: longest first); the
        # sequence's rows are CUQ[b] .. CUQ[b + 1] of Q and O, its keys CUK[b] .. CUK[b + 1]
        bh = T.cuda.block_idx("y")
        sb = T.cuda.block_idx("z")
        q0, lq = varlen_rows(CUQ, NQ, sb)
        k0 = CUK[sb]
        lk = CUK[sb + 1] - k0
        first, lost = varlen_lost(lq, T.cuda.grid_dim("x"), BM, CAUSAL)
        if lost > 0 and T.cuda.block_idx("x") == 0:
            # MAXQ below this sequence's length: the rows the grid leaves out become NaN
            # instead of what memory held
            for i in range(tx, lost * D, 128 * (1 + consumers)):
                Of[q0 + first + i // D, bh * D + i % D] = T.cast(T.float32(math.nan), DT)
        if T.cuda.block_idx("x") * BM >= lq:
            return  # the grid covers the longest sequence (MAXQ): a shorter one has no block here
        m0 = varlen_block(lq, T.cuda.block_idx("x"), BM, CAUSAL) * BM
        if lk <= 0:  # no keys: zeros (FlashAttention's varlen call does the same)
            for i in range(tx, BM * D, 128 * (1 + consumers)):
                if m0 + i // D < lq:
                    Of[q0 + m0 + i // D, bh * D + i % D] = T.cast(0, DT)
            return
        nblk = key_blocks(m0, CAUSAL, lk, BM, BN)
        rows = T.meta_var((q0, bh * D, k0, (bh if G == 1 else bh // G) * D))
    elif T.constexpr(not persistent):
        if T.constexpr(SCHED == "lpt"):
            bh, mb = tile_coords(T.cuda.block_idx("x"), B * H, mblocks, hg, CAUSAL)
        else:
            # causal: the longest tiles first (they start first and the short ones fill in)
            mb = mblocks - 1 - T.cuda.block_idx("x") if CAUSAL else T.cuda.block_idx("x")
            bh = T.cuda.block_idx("y")
        m0 = mb * BM
        nblk = key_blocks(m0, CAUSAL, S, BM, BN)
    dsm = T.alloc_buffer((smem_bytes,), "uint8", scope="shared.dyn")
    qfull = T.alloc_shared((1,), "uint64")
    qempty = T.alloc_shared((1,), "uint64") if persistent else qfull  # consumers done with Q
    tid = T.alloc_shared((1,), "int32") if SCHED == "dynamic" else None  # the tile now in Q
    kfull = T.alloc_shared((STAGES,), "uint64")
    vfull = T.alloc_shared((STAGES,), "uint64")
    kempty = T.alloc_shared((STAGES,), "uint64")  # K(j) is released once S(j) is done,
    vempty = T.alloc_shared((STAGES,), "uint64")  # V(j) once P(j) V(j) is
    sbase = (T.ptx.cvta_to_shared(T.address_of(dsm[0])) + T.uint32(1023)) & T.uint32(0xFFFFFC00)
    kbase = sbase + T.uint32(q_bytes)
    vbase = kbase + T.uint32(STAGES * kv_bytes)
    if tx == 0:
        T.ptx.mbarrier_init(T.address_of(qfull[0]), 1)
        if T.constexpr(persistent):
            T.ptx.mbarrier_init(T.address_of(qempty[0]), consumers)
        for s in range(STAGES):
            T.ptx.mbarrier_init(T.address_of(kfull[s]), 1)
            T.ptx.mbarrier_init(T.address_of(vfull[s]), 1)
            T.ptx.mbarrier_init(T.address_of(kempty[s]), consumers)
            T.ptx.mbarrier_init(T.address_of(vempty[s]), consumers)
        T.ptx.fence_mbarrier_init()
        T.ptx.prefetch_tensormap(TQ)
        T.ptx.prefetch_tensormap(TK)
        T.ptx.prefetch_tensormap(TV)
    T.cuda.cta_sync()
    if wg == 0:
        T.ptx.setmaxnreg_dec(PRODUCER_REGS)
        if tx == 0:
            if T.constexpr(SCHED == "persistent"):
                # the K / V ring runs on over the CTA's tiles: stage and phase follow ``it``,
                # the key blocks loaded so far (the consumers count alike)
                it: T.int32 = 0
                bid = T.cuda.block_idx("x")
                for t in range(bid, ntiles, T.cuda.grid_dim("x")):
                    bh, mb = tile_coords(t, B * H, mblocks, hg, CAUSAL)
                    nblk = key_blocks(mb * BM, CAUSAL, S, BM, BN)
                    qn = (t - bid) // T.cuda.grid_dim("x")
                    load_tile(
                        TQ, TK, TV, qfull, qempty, kfull, vfull, kempty, vempty, sbase, kbase, vbase,
                        bh, mb * BM, nblk, it, qn, S, D, BM, BN, STAGES, q_bytes, kv_bytes,
                        REVERSE=REVERSE, G=G,
                    )  # fmt: skip
                    it = it + nblk
            elif T.constexpr(SCHED == "dynamic"):
                # tiles in tile_coords order, each CTA's next one taken from the counter when
                # it starts a tile (first wave: blockIdx.x); the tile number goes to the
                # consumers through ``tid`` with Q, ``ntiles`` tells them to stop
                it: T.int32 = 0
                n: T.int32 = 0
                t: T.int32 = T.cuda.block_idx("x")
                while t < ntiles:
                    nxt = take_tile(Sem)
                    bh, mb = tile_coords(t, B * H, mblocks, hg, CAUSAL)
                    nblk = key_blocks(mb * BM, CAUSAL, S, BM, BN)
                    load_tile(
                        TQ, TK, TV, qfull, qempty, kfull, vfull, kempty, vempty, sbase, kbase, vbase,
                        bh, mb * BM, nblk, it, n, S, D, BM, BN, STAGES, q_bytes, kv_bytes, tid, t,
                        REVERSE, G,
                    )  # fmt: skip
                    it = it + nblk
                    n = n + 1
                    t = nxt
                wait_bar(qempty[0], (n & 1) ^ 1)
                tid[0] = ntiles
                T.evaluate(T.ptx.mbarrier_arrive(T.address_of(qfull[0])))
                count_out(Sem)
            else:
                load_tile(
                    TQ, TK, TV, qfull, qempty, kfull, vfull, kempty, vempty, sbase, kbase, vbase,
                    bh, m0, nblk, None, 0, S, D, BM, BN, STAGES, q_bytes, kv_bytes,
                    REVERSE=REVERSE, G=G, rows=rows,
                )  # fmt: skip
    else:
        T.ptx.setmaxnreg_inc(CONSUMER_REGS)
        ctid = tx - 128 * wg
        warp = ctid // 32
        lane = ctid % 32
        o = T.alloc_local((D // 2,), "float32")
        sacc = T.alloc_local((BN // 2,), "float32")
        for i in range(BN // 2):  # the first S wgmma does not read it (scale-d 0); NVRTC wants it set
            sacc[i] = T.float32(0)
        pa = T.alloc_local((BN // 4,), "uint32")
        m = T.alloc_local((2,), "float32")
        l = T.alloc_local((2,), "float32")
        corr = T.alloc_local((2,), "float32")
        red = T.alloc_local((4,), "float32") if CHAINS == 4 else None  # softmax_scores' chains
        out = T.alloc_local((2,), DT)
        if T.constexpr(SCHED == "persistent"):
            it: T.int32 = 0
            bid = T.cuda.block_idx("x")
            for t in range(bid, ntiles, T.cuda.grid_dim("x")):
                bh, mb = tile_coords(t, B * H, mblocks, hg, CAUSAL)
                nblk = key_blocks(mb * BM, CAUSAL, S, BM, BN)
                attend_tile(
                    Of, o, sacc, pa, m, l, corr, out, qfull, qempty, kfull, vfull, kempty, vempty,
                    sbase, kbase, vbase, bh, mb * BM, nblk, it, (t - bid) // T.cuda.grid_dim("x"),
                    t == bid, t + T.cuda.grid_dim("x") < ntiles, wg, ctid, lane, warp,
                    CAUSAL, S, D, BM, BN, STAGES, kv_bytes, consumers, PINGPONG, OVERLAP, ab, sl2, DT,
                    ONE_LOOP, red, REVERSE,
                )  # fmt: skip
                it = it + nblk
        elif T.constexpr(SCHED == "dynamic"):
            it: T.int32 = 0
            n: T.int32 = 0
            wait_bar(qfull[0], 0)
            t: T.int32 = tile_number(tid, UNIFORM)
            while t < ntiles:
                bh, mb = tile_coords(t, B * H, mblocks, hg, CAUSAL)
                nblk = key_blocks(mb * BM, CAUSAL, S, BM, BN)
                attend_tile(
                    Of, o, sacc, pa, m, l, corr, out, qfull, qempty, kfull, vfull, kempty, vempty,
                    sbase, kbase, vbase, bh, mb * BM, nblk, it, n, n == 0, True, wg, ctid, lane, warp,
                    CAUSAL, S, D, BM, BN, STAGES, kv_bytes, consumers, PINGPONG, OVERLAP, ab, sl2, DT,
                    ONE_LOOP, red, REVERSE,
                )  # fmt: skip
                it = it + nblk
                n = n + 1
                wait_bar(qfull[0], n & 1)
                t = tile_number(tid, UNIFORM)
            if PINGPONG and wg == 1 and n > 0:
                T.ptx.bar.sync(1, 256)  # the last warpgroup's final turn closed the ring
        else:
            attend_tile(
                Of, o, sacc, pa, m, l, corr, out, qfull, qempty, kfull, vfull, kempty, vempty,
                sbase, kbase, vbase, bh, m0, nblk, None, 0,
                True, False, wg, ctid, lane, warp,
                CAUSAL, lk if VARLEN else S, D, BM, BN, STAGES, kv_bytes, consumers, PINGPONG, OVERLAP, ab, sl2,
                DT, ONE_LOOP, red, REVERSE, None if rows is None else (rows[0], rows[1], lq),
            )  # fmt: skip


@functools.cache
def make_attention(B: int, H: int, S: int, D: int, causal: bool = False, dtype: str = "bfloat16", **tiles):
    """The specialized kernel (a ``T.function``) for one problem shape, mask and tile set.
    With ``SCHED="dynamic"`` it takes a fifth argument, the tile counter (``tile_counter``)."""
    drop = {} if tiles.get("SCHED") == "dynamic" else {"Sem": None}
    drop.update(CUQ=None, CUK=None, NB=None, NQ=None, MAXQ=None)
    return attention_fwd.specialize(B=B, H=H, S=S, D=D, CAUSAL=causal, DT=dtype, **drop, **tiles)


@functools.cache
def make_attention_varlen(H: int, D: int, causal: bool = False, dtype: str = "bfloat16", **tiles):
    """The variable-length kernel (``VARLEN``) for ``H`` query heads of head dim ``D``: one
    compiled kernel serves every batch of sequences. Arguments: O ``(tokens, H, D)``, the TMA
    descriptors of the packed Q ``(tokens, H * D)`` and K / V ``(kv_tokens, HKV * D)`` matrices
    (``BM`` / ``BN``-row boxes), ``cu_seqlens_q`` and ``cu_seqlens_k`` (``batch + 1`` int32
    offsets), the batch, the tokens and the longest query sequence (the grid's x extent)."""
    return attention_fwd.specialize(
        B=1, H=H, S=0, D=D, CAUSAL=causal, DT=dtype, Sem=None, VARLEN=True, **tiles
    )


KERNELS = {
    # the measured-best FA3 schedule (ping-pong consumers; overlap for head dim 128)
    "attn_d128": lambda: make_attention(4, 16, 4096, 128, False, **best_config(128)),
    "attn_d128_causal": lambda: make_attention(4, 16, 4096, 128, True, **best_config(128)),
    "attn_d64": lambda: make_attention(4, 16, 4096, 64, False, **best_config(64)),
    "attn_d64_causal": lambda: make_attention(4, 16, 4096, 64, True, **best_config(64)),
    # the simple schedule (step 1: S, softmax, P V in order), 1 and 2 consumer warpgroups
    "attn_d128_simple": lambda: make_attention(4, 16, 4096, 128, False, BM=128, BN=128, STAGES=2),
    "attn_d64_simple_bm64": lambda: make_attention(1, 2, 256, 64, True, BM=64, BN=64),
    "attn_d128_overlap_only": lambda: make_attention(2, 4, 1024, 128, True, OVERLAP=True, STAGES=3),
    # ragged tiles: 176-key blocks (4096 = 23 * 176 + 48), 192-row query tiles with 3 consumers
    "attn_d128_bn176": lambda: make_attention(
        4, 16, 4096, 128, False, BN=176, STAGES=2, PINGPONG=True, OVERLAP=True
    ),
    "attn_d64_bm192": lambda: make_attention(
        4, 16, 4096, 64, True, BM=192, STAGES=4, PINGPONG=True, OVERLAP=True, CONSUMER_REGS=160
    ),
    # tile schedulers: one CTA per tile in L2-grouped longest-first order, and persistent CTAs
    "attn_d128_causal_lpt": lambda: make_attention(4, 16, 4096, 128, True, **best_config(128), SCHED="lpt"),
    "attn_d128_causal_persistent": lambda: make_attention(
        4, 16, 4096, 128, True, **best_config(128), SCHED="persistent"
    ),
    "attn_d64_causal_persistent": lambda: make_attention(
        4, 16, 4096, 64, True, **dict(best_config(64), SCHED="persistent")
    ),
    "attn_d128_causal_dynamic": lambda: make_attention(
        4, 16, 4096, 128, True, **best_config(128), SCHED="dynamic"
    ),
    # the causal best: key blocks from the diagonal down (REVERSE), dynamic scheduler
    "attn_d128_causal_best": lambda: make_attention(4, 16, 4096, 128, True, **best_config(128, True)),
    "attn_d128_causal_reverse_one_loop": lambda: make_attention(
        4, 16, 4096, 128, True, **best_config(128, True), ONE_LOOP=True
    ),
    # warp-uniform indices for ptxas (UNIFORM): +4 % for the causal one loop
    "attn_d128_causal_one_loop_uniform": lambda: make_attention(
        4, 16, 4096, 128, True, **best_config(128, True), ONE_LOOP=True, UNIFORM=True
    ),
    "attn_d64_causal_grid": lambda: make_attention(
        4, 16, 4096, 64, True, **dict(best_config(64, True), SCHED="grid")
    ),
    "attn_d128_dynamic_simple": lambda: make_attention(
        1, 3, 384, 128, False, BM=128, BN=128, STAGES=2, SCHED="dynamic", SMS=2
    ),
    "attn_d128_persistent_simple": lambda: make_attention(
        2, 5, 528, 128, True, BM=128, BN=128, STAGES=2, SCHED="persistent", SMS=7, HEADS_L2=3
    ),
    # ONE_LOOP: no peeled step (about 30 % less compile time, 5-9 % slower on the H200)
    "attn_d128_one_loop": lambda: make_attention(4, 16, 4096, 128, False, **best_config(128), ONE_LOOP=True),
    "attn_d64_causal_one_loop": lambda: make_attention(
        4, 16, 4096, 64, True, **best_config(64, True), ONE_LOOP=True
    ),
    "attn_d128_bn176_one_loop": lambda: make_attention(
        2, 2, 528, 128, True, BN=176, STAGES=2, PINGPONG=True, OVERLAP=True, ONE_LOOP=True
    ),
    "attn_d128_pingpong_one_loop": lambda: make_attention(
        2, 3, 640, 128, False, BM=128, BN=128, STAGES=3, PINGPONG=True, ONE_LOOP=True
    ),
    "attn_d64_overlap_one_loop": lambda: make_attention(
        2, 3, 640, 64, False, BM=192, STAGES=4, OVERLAP=True, CONSUMER_REGS=160, ONE_LOOP=True
    ),
    "attn_d128_causal_dynamic_one_loop": lambda: make_attention(
        4, 16, 4096, 128, True, **best_config(128), SCHED="dynamic", ONE_LOOP=True
    ),
    "attn_d128_persistent_one_loop": lambda: make_attention(
        2, 5, 528, 128, True, **best_config(128), SCHED="persistent", SMS=7, HEADS_L2=3, ONE_LOOP=True
    ),
    # variable-length batches (VARLEN): packed sequences, offsets on the device, one CTA per tile
    "attn_varlen_d128_causal": lambda: make_attention_varlen(16, 128, True, **config_varlen(128, True)),
    "attn_varlen_d64_gqa": lambda: make_attention_varlen(8, 64, False, **config_varlen(64), HKV=2),
    "attn_varlen_d256_causal": lambda: make_attention_varlen(4, 256, True, **config_varlen(256, True)),
}
