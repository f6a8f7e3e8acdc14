# ruff: noqa: F821, UP037
# (DT, BM, ... in the @T.jit annotations are T.constexpr parameters, bound by .specialize; a string
# compared in an annotation, LOADER == "cp", is a value, not a quoted type)
"""Hopper GEMM for any shape: ``C = A @ B^T`` with the sizes as launch arguments.

A: (M, K) row-major, B: (N, K) row-major (K-major, wgmma's native layout), C: (M, N), fp16 or
bf16 in and out, fp32 accumulation; or fp8 (e4m3 / e5m2) in and bf16 out, scaled by
``SA[0] * SB[0]`` (one float32 each in device memory, ``torch._scaled_mm``'s per-tensor
scales) or, with ``SCALES="row"``, element ``(i, j)`` by ``SA[i] * SB[j]`` (``torch._scaled_mm``'s
rowwise scales: one per row of A and one per column of B) or, with ``SCALES="block"``, DeepGEMM's
block scales (``SA (M, ceil(K / 128))``, ``SB (ceil(K / 128), ceil(N / 128))``), each k-block's
product added to the sum times its scales (``promote``). A k-block is 128 bytes of K either way (64 fp16 or 128 fp8 elements, one 128-byte
swizzle row), so the wgmma descriptors and their 32-byte K steps are the same. The schedule is ``gemm.py``'s cooperative kernel (its
helpers are imported, not copied): a producer warpgroup streams ``BM x 64`` tiles of A and
``BN x 64`` tiles of B with TMA into a ring of ``STAGES`` shared-memory stages, ``BM / 64``
consumer warpgroups multiply them with ``wgmma`` and a persistent CTA walks the tiles in
``GROUP_M``-row groups. What differs is that nothing depends on the problem size at compile
time, so one compiled kernel per dtype and tile set serves every ``(M, N, K)``:

* ``M``, ``N`` and ``K`` are ``int32`` parameters; the tile counts (``ceil(M / BM)``, ...), the
  k-block count and the grid (``min(SMS, tiles)`` persistent CTAs, computed from ``M`` and
  ``N`` at launch) are computed from them.
* The edges need no padding copies: a TMA load of a box that reaches past ``M``, ``N`` or ``K``
  fills the missing elements with zeros (and still completes the stage's full byte count), so
  a partial k-block adds zeros and a partial tile computes zeros in its outside rows; the
  TMA-store epilogue (``EPI="tma"``) clips its boxes at ``M`` and ``N``.
* ``TRANS_B=True`` (fp16 / bf16) reads B as a row-major ``(K, N)`` matrix (``a @ b`` with
  ``b`` as torch stores it): each stage's B tile is ``BN / 64`` TMA boxes of 64 K-rows by 64
  columns (N-major, 128-byte swizzle), and wgmma reads it transposed (``imm-trans-b 1``, the
  N-major descriptor of the attention kernel's V: 64-column chunks ``64 * 128`` bytes apart,
  8-row groups 1024 bytes apart, a k16 step 16 rows further). ``N`` is then a multiple of 8.
* TMA needs 16-byte row pitches: ``K`` a multiple of 8 (fp8: 16) for A and B. C's TMA store needs ``N`` a
  multiple of 8 too; for other ``N`` the ``EPI="direct"`` epilogue stores each element from
  registers, checked against ``M`` and ``N``.

The host side (tensor maps, the cache of compiled kernels, the choice of tiles) is
``tirx.kernels.matmul``.
"""

from __future__ import annotations

from tirx.kernels.hopper.attention import desc, v_desc_hi, v_offset, wgmma_block
from tirx.kernels.hopper.gemm import (
    DESC_HI,
    check_registers,
    init_stages,
    kblock_descs,
    mma_kblock,
    produce,
    release,
    store_tma,
    tile_origin,
)
from tirx.script import tirx as T

FP8 = ("float8_e4m3fn", "float8_e5m2")
#: ``TRACE``: k-blocks of each CTA's first work unit stamped, and int64 slots per CTA (8 for the
#: start, the main loop's end and the epilogue's end, then 4 per k-block)
TRACE_KB = 64
TRACE_SLOTS = 8 + 4 * TRACE_KB


@T.inline
def store_checked(C, acc, M, N, row0, col0, BN, DT, ADD=False, TRANS_C=False):
    """Epilogue of one 64-row accumulator for any ``N``: this thread's values of rows ``row0``
    and ``row0 + 8`` stored one element at a time, each only inside ``M x N``; ``ADD``: added
    to the float32 ``C`` atomically instead (a split-K share of the sum); ``TRANS_C``: element
    ``(r, col)`` goes to ``C[col, r]`` (the swapped product of a few rows, ``C^T = B A^T``)."""
    for i in range(BN // 8):
        for h in range(2):
            for c in range(2):
                r = row0 + 8 * h
                col = col0 + 8 * i + c
                if r < M and col < N:
                    if T.constexpr(ADD):
                        if T.constexpr(TRANS_C):
                            T.evaluate(T.cuda.atomic_add(T.address_of(C[col, r]), acc[4 * i + 2 * h + c]))
                        else:
                            T.evaluate(T.cuda.atomic_add(T.address_of(C[r, col]), acc[4 * i + 2 * h + c]))
                    elif T.constexpr(TRANS_C):
                        C[col, r] = T.cast(acc[4 * i + 2 * h + c], DT)
                    else:
                        C[r, col] = T.cast(acc[4 * i + 2 * h + c], DT)


@T.inline
def scale_rows(acc, SA, SB, M, N, row0, col0, BN):
    """Rowwise fp8 scales on one 64-row accumulator: this thread's element of row ``r`` and
    column ``col`` times ``SA[r] * SB[col]``. The indices are clamped into ``M x N``: an element
    outside is never stored, and the scales are read in bounds."""
    for h in range(2):
        sa = SA[T.min(row0 + 8 * h, M - 1)]
        for i in range(BN // 8):
            for c in range(2):
                acc[4 * i + 2 * h + c] = acc[4 * i + 2 * h + c] * (sa * SB[T.min(col0 + 8 * i + c, N - 1)])


@T.inline
def add_shares(acc, P, CNT, ticket, wg, ctid, share, shares, out, ntiles, consumers, row0, M, BN):
    """Split-K in the kernel (``SPLIT_K > 1`` with the ``"tma"`` or ``"direct"`` epilogue): this
    consumer warpgroup's ``64 x BN`` share of tile ``out`` goes to its slot of the float32
    partials ``P`` (element ``j`` of thread ``ctid`` at ``j * 128 + ctid``: each store and load a
    warpgroup makes is 512 contiguous bytes; rows past ``M`` neither stored nor read), a fence
    makes it visible at the GPU's scope, and one thread takes a ticket from the tile's counter
    (``CNT[out * consumers + wg - 1]``) into ``ticket`` (shared). The share that takes the last
    ticket sums all ``shares`` slots in their order (so the result does not depend on which
    share finished last) into ``acc`` and sets the counter back to zero for the next launch on
    the stream; the caller stores ``acc`` where ``ticket`` says it is the last."""
    cidx = out * consumers + (wg - 1)
    slot = T.cast((share * ntiles + out) * consumers + (wg - 1), "int64") * (64 * BN) + ctid
    for i in range(BN // 8):
        for h in range(2):
            if row0 + 8 * h < M:
                for c in range(2):
                    P[slot + (4 * i + 2 * h + c) * 128] = acc[4 * i + 2 * h + c]
    T.cuda.thread_fence()
    T.ptx.bar.sync(wg, 128)
    if ctid == 0:
        ticket[wg - 1] = T.cuda.atomic_add(T.address_of(CNT[cidx]), 1)
    T.ptx.bar.sync(wg, 128)
    if ticket[wg - 1] == shares - 1:
        T.cuda.thread_fence()
        if ctid == 0:
            CNT[cidx] = 0
        for j in range(BN // 2):
            acc[j] = T.float32(0)
        for sh in range(shares):
            base = T.cast((sh * ntiles + out) * consumers + (wg - 1), "int64") * (64 * BN) + ctid
            for i in range(BN // 8):
                for h in range(2):
                    if row0 + 8 * h < M:
                        for c in range(2):
                            acc[4 * i + 2 * h + c] = (
                                acc[4 * i + 2 * h + c] + P[base + (4 * i + 2 * h + c) * 128]
                            )


@T.inline
def promote(acc, part, SA, SB, M, kb, row0, n0, BN):
    """Block scales (``SCALES="block"``): ``acc += part * SA[row, kb] * SB[kb, n0 // 128]`` for this
    thread's rows ``row0`` and ``row0 + 8`` (clamped into ``M``: rows outside are never stored),
    ``part`` being k-block ``kb``'s product; a tile of at most 128 columns lies in one block of B.
    The scales are read before the wait for the k-block's wgmma, so their latency hides under it."""
    sb = SB[kb, n0 // 128]
    sa0 = SA[T.min(row0, M - 1), kb] * sb
    sa1 = SA[T.min(row0 + 8, M - 1), kb] * sb
    T.ptx.wgmma_wait_group(0)
    for i in range(BN // 8):
        for c in range(2):
            acc[4 * i + c] = acc[4 * i + c] + part[4 * i + c] * sa0
            acc[4 * i + 2 + c] = acc[4 * i + 2 + c] + part[4 * i + 2 + c] * sa1


@T.inline
def finish(
    acc, C, SA, SB, tc, sbase, c_base, wg, ctid, warp, lane, M, N, m0, n0, BN, OUT, fp8, SCALES, EPI, TRANS_C
):
    """A consumer warpgroup's epilogue of one tile: fp8's tensor or row scales, then the TMA
    store (``EPI="tma"``) or the checked register stores (``"direct"``; ``"atomic"``: added to
    the float32 ``C``)."""
    if T.constexpr(fp8 and SCALES == "row"):
        scale_rows(acc, SA, SB, M, N, m0 + (wg - 1) * 64 + warp * 16 + lane // 4, n0 + (lane % 4) * 2, BN)
    elif T.constexpr(fp8 and SCALES == "tensor"):
        scale = SA[0] * SB[0]
        for i in range(BN // 2):
            acc[i] = acc[i] * scale
    if T.constexpr(EPI == "tma"):
        store_tma(tc, acc, sbase + T.uint32(c_base + (wg - 1) * 16384), wg, ctid, m0, n0, BN, OUT)
    else:
        store_checked(
            C,
            acc,
            M,
            N,
            m0 + (wg - 1) * 64 + warp * 16 + lane // 4,
            n0 + (lane % 4) * 2,
            BN,
            OUT,
            EPI == "atomic",
            TRANS_C,
        )


@T.inline
def stamp_kblock(tr, row, j, unit0, tile, tx, TRACE):
    """``TRACE``: the first consumer thread's cycle counter at k-block ``j`` of the CTA's first
    work unit, into row ``row`` of its trace (1: before the data wait, 2: after it, 3: after
    the previous k-block's wgmma; row 0 is the producer's)."""
    if T.constexpr(TRACE):  # noqa: SIM102 (decided while parsing)
        if tile == unit0 and j < TRACE_KB and tx == 128:
            tr[unit0 * TRACE_SLOTS + 8 + row * TRACE_KB + j] = T.cast(T.cuda.clock64(), "int64")


@T.inline
def unit_span(tile, ntiles, kb_n, SPLIT_K):
    """Work unit ``tile``'s ``(k-blocks a share, first k-block, end, output tile)``: with
    ``SPLIT_K > 1``, round ``tile // ntiles`` over the output tiles, i.e. tile ``tile % ntiles``'s
    share of k-blocks (empty when K has fewer k-blocks than shares); else the tile and all its
    k-blocks (compile-time values: no code). The producers and the consumers derive it alike."""
    kb_per = T.meta_var(kb_n) if SPLIT_K == 1 else (kb_n + (SPLIT_K - 1)) // SPLIT_K
    kb_lo = T.meta_var(0) if SPLIT_K == 1 else (tile // ntiles) * kb_per
    kb_hi = T.meta_var(kb_n) if SPLIT_K == 1 else T.min(kb_lo + kb_per, kb_n)
    out = T.meta_var(tile) if SPLIT_K == 1 else tile % ntiles
    return kb_per, kb_lo, kb_hi, out


@T.inline
def produce_units(full, empty, sbase, TA, TB, unit0, nunits, ntiles, units, group, mt, GROUP_M, BM, BN, BK,
                  STAGES, kb_n, stage_bytes, a_bytes, TRANS_B, SPLIT_K, TR=None, KPACK=1,
                  CP=False, M=None, N=None, K=None, ptx=None, ESZ=2):  # fmt: skip
    """The producer thread for split-K work units (see the consumer's loop) or an N-major B (``TRANS_B``):
    per k-block, the ``BM x BK`` A tile as in ``gemm.produce`` and the B tile, K-major as there
    or N-major as ``BN / 64`` boxes of 64 K-rows by 64 columns, 8 KiB apart. ``TR`` (``TRACE``):
    the cycle each of the first unit's k-blocks found its stage empty. ``CP`` (``LOADER="cp"``):
    run by the warpgroup's 128 threads (``ptx``), each copying its share of a k-block
    (``copy_kblock``; ``TA`` and ``TB`` are then the addresses of A and B); a stage goes to the
    consumers ``STAGES - 2`` k-blocks later: ``cp.async.wait_group`` (this thread's copies of it
    have landed), the async-proxy fence (wgmma reads through it) and one arrival per thread on
    *full* (128 expected); the last stages arrive after the units. Handing over at most ``STAGES -
    2`` behind keeps the ring moving: the stage a thread waits to refill was freed by a consumer
    that had only stages the thread had already handed over."""
    it: T.int32 = 0
    for tile in range(unit0, nunits, units):  # work units: tiles, or shares of tiles
        # the unit's tile and k-blocks [kb_lo, kb_hi), as the consumers derive them (matmul_sm90)
        _, kb_lo, kb_hi, out = unit_span(tile, ntiles, kb_n, SPLIT_K)
        m0, n0 = tile_origin(out, group, mt, GROUP_M, 1, 0, BM, BN)
        for kb in range(kb_lo, kb_hi):
            s = it % STAGES
            while not T.ptx.mbarrier_try_wait_parity(T.address_of(empty[s]), ((it // STAGES) & 1) ^ 1):
                pass
            if T.constexpr(CP):
                copy_kblock(sbase + T.cast(s * stage_bytes, "uint32"), TA, TB, M, N, K, ptx, m0, n0, kb,
                            BM, BN, BK, a_bytes, ESZ)  # fmt: skip
                if it >= STAGES - 2:
                    T.ptx["cp.async.wait_group"](STAGES - 2)
                    T.ptx.fence_proxy_async()
                    T.evaluate(T.ptx.mbarrier_arrive(T.address_of(full[(it - (STAGES - 2)) % STAGES])))
            else:
                if T.constexpr(TR is not None):  # noqa: SIM102 (decided while parsing)
                    if tile == unit0 and kb - kb_lo < TRACE_KB:
                        TR[unit0 * TRACE_SLOTS + 8 + (kb - kb_lo)] = T.cast(T.cuda.clock64(), "int64")
                T.evaluate(T.ptx.mbarrier_arrive_expect_tx(T.address_of(full[s]), stage_bytes))
                sa = sbase + T.cast(s * stage_bytes, "uint32")
                if T.constexpr(KPACK > 1):  # k-blocks kb * KPACK + j, each an A and a B tile, one after the other
                    for j in range(KPACK):
                        sj = sa + T.uint32(j * (stage_bytes // KPACK))
                        T.ptx.tma_load_2d(sj, TA, (kb * KPACK + j) * BK, m0, T.address_of(full[s]))
                        T.ptx.tma_load_2d(
                            sj + T.uint32(a_bytes), TB, (kb * KPACK + j) * BK, n0, T.address_of(full[s])
                        )
                else:
                    T.ptx.tma_load_2d(sa, TA, kb * BK, m0, T.address_of(full[s]))
                    if T.constexpr(TRANS_B):
                        for c in range(BN // 64):
                            T.ptx.tma_load_2d(
                                sa + T.uint32(a_bytes + c * 8192),
                                TB,
                                n0 + 64 * c,
                                kb * 64,
                                T.address_of(full[s]),
                            )
                    else:
                        T.ptx.tma_load_2d(sa + T.uint32(a_bytes), TB, kb * BK, n0, T.address_of(full[s]))
            it = it + 1
    if T.constexpr(CP):  # the last stages: every copy landed, then handed over
        T.ptx["cp.async.wait_group"](0)
        T.ptx.fence_proxy_async()
        for d in range(STAGES - 2):
            if it - (STAGES - 2) + d >= 0:
                T.evaluate(T.ptx.mbarrier_arrive(T.address_of(full[(it - (STAGES - 2) + d) % STAGES])))


@T.inline
def copy_kblock(dst, XA, XB, M, N, K, ptx, m0, n0, kb, BM, BN, BK, a_bytes, ESZ):
    """``LOADER="cp"``: producer thread ``ptx`` (of 128) copies its share of k-block ``kb``'s A
    and B tiles into the stage at ``dst`` with ``cp.async``, for row pitches TMA reads slowly (16
    modulo 32 bytes: 4096 x 4096 x 5000 ran at 0.55 of cuBLAS, x 5008 at 0.97, docs/benchmarks.md
    "Row pitch"). The thread takes 16-byte piece ``ptx % 8`` of rows ``ptx // 8 + 16 i`` and
    writes it where the 128-byte swizzle puts it (piece ``j ^ (row % 8)`` of the row), so wgmma
    reads the layout TMA writes; a piece outside ``M x K`` (``N x K``) is zero-filled (src-size 0,
    read from the matrix's first byte). One pointer a matrix, stepped 16 rows a copy: few live
    registers (the producer runs on ``PRODUCER_REGS``)."""
    piece = ptx % 8
    r0 = ptx // 8
    at = dst + T.cast(r0 * 128 + (piece ^ (r0 % 8)) * 16, "uint32")  # the piece's swizzled place
    pitch = T.cast(K, "int64") * ESZ  # bytes a row
    step = T.cast(pitch * 16, "uint64")
    col = kb * BK + piece * (BK // 8)
    kin = col < K
    pa: T.uint64 = XA + T.cast(T.cast(m0 + r0, "int64") * pitch + col * ESZ, "uint64")
    for i in range(BM // 16):
        ok = kin and m0 + r0 + 16 * i < M
        T.ptx["cp.async.cg.shared.global"](
            at + T.uint32(i * 2048),
            T.if_then_else(ok, pa, XA),
            16,
            T.if_then_else(ok, T.uint32(16), T.uint32(0)),
        )
        pa = pa + step
    pb: T.uint64 = XB + T.cast(T.cast(n0 + r0, "int64") * pitch + col * ESZ, "uint64")
    for i in range(BN // 16):
        ok = kin and n0 + r0 + 16 * i < N
        T.ptx["cp.async.cg.shared.global"](
            at + T.uint32(a_bytes + i * 2048),
            T.if_then_else(ok, pb, XB),
            16,
            T.if_then_else(ok, T.uint32(16), T.uint32(0)),
        )
        pb = pb + step
    T.ptx["cp.async.commit_group"]()


@T.inline
def patch_maps(tm, WS, ws, TA, TC, A, C, M, tx, EPI):
    """``ROWS_ON_DEVICE``: warp 0 writes this CTA's descriptors of A and C (``WS[ws:ws + 32]``,
    global memory) from their templates (``TA``, ``TC``: the host's encodes of the same row
    pitch, box and swizzle at another address and row count) with A's and C's addresses and
    ``M`` rows: lanes 0-15 copy A's 16 words into shared memory at ``tm`` (a 32-bit shared
    address, 128-byte aligned), lanes 16-31 C's, ``tensormap.replace`` sets the two fields, and
    ``tensormap.cp_fenceproxy`` copies each to global memory with a release fence of the
    tensor-map proxy. Each thread that uses one runs the proxy's acquire fence on it first."""
    if tx < 32:
        if tx < 16:
            T.ptx.st.shared__cta.b64(tm + T.cast(tx * 8, "uint32"), TA[tx])
        elif T.constexpr(EPI == "tma"):
            T.ptx.st.shared__cta.b64(tm + T.cast(tx * 8, "uint32"), TC[tx - 16])
        T.cuda.warp_sync()
        if tx == 0:
            T.ptx.tensormap_replace.tile.global_address.shared__cta.b1024.b64(tm, A)
            T.ptx.tensormap_replace.tile.global_dim.shared__cta.b1024.b32(tm, 1, M)
            if T.constexpr(EPI == "tma"):
                T.ptx.tensormap_replace.tile.global_address.shared__cta.b1024.b64(
                    tm + T.uint32(128), T.reinterpret(C.data, ty=T.uint64)
                )
                T.ptx.tensormap_replace.tile.global_dim.shared__cta.b1024.b32(tm + T.uint32(128), 1, M)
        T.cuda.warp_sync()
        T.ptx.tensormap_cp_fenceproxy.global_.shared__cta.tensormap__generic.release.gpu.sync.aligned(
            T.address_of(WS[ws]), tm
        )
        if T.constexpr(EPI == "tma"):
            T.ptx.tensormap_cp_fenceproxy.global_.shared__cta.tensormap__generic.release.gpu.sync.aligned(
                T.address_of(WS[ws + 16]), tm + T.uint32(128)
            )


@T.jit
def matmul_sm90(
    M: T.int32,
    N: T.int32,
    K: T.int32,
    TA: T.uint64 if LOADER == "cp" else T.Ptr(T.uint64) if ROWS_ON_DEVICE else T.Ptr(T.uint8, "tensormap"),
    TB: T.uint64 if LOADER == "cp" else T.Ptr(T.uint8, "tensormap"),
    TC: (T.Ptr(T.uint64) if ROWS_ON_DEVICE else T.Ptr(T.uint8, "tensormap")) = None,
    C: T.Tensor(
        (N, M) if TRANS_C else (M, N), "float32" if EPI == "atomic" else "bfloat16" if DT in FP8 else DT
    ) = None,
    SA: T.Tensor(
        (M,) if SCALES == "row" else (M, (K + 127) // 128) if SCALES == "block" else (1,), "float32"
    ) = None,
    SB: T.Tensor(
        (N,) if SCALES == "row" else ((K + 127) // 128, (N + 127) // 128) if SCALES == "block" else (1,),
        "float32",
    ) = None,
    A: T.uint64 = None,
    WS: T.Ptr(T.uint64) = None,
    SP: T.Ptr(T.float32) = None,
    SC: T.Ptr(T.int32) = None,
    TR: T.Ptr(T.int64) = None,
    *,
    DT: T.constexpr = "float16",
    BM: T.constexpr = 128,
    BN: T.constexpr = 256,
    STAGES: T.constexpr = 4,
    SMS: T.constexpr = 132,
    GROUP_M: T.constexpr = 8,
    PRODUCER_REGS: T.constexpr = 40,
    CONSUMER_REGS: T.constexpr = 232,
    EPI: T.constexpr = "tma",
    TRANS_B: T.constexpr = False,
    SPLIT_K: T.constexpr = 1,
    SCALES: T.constexpr = "tensor",
    ROWS_ON_DEVICE: T.constexpr = False,
    TRANS_C: T.constexpr = False,
    TRACE: T.constexpr = False,
    KPACK: T.constexpr = 1,
    LOADER: T.constexpr = "tma",
):
    T.static_assert(DT in ("float16", "bfloat16", *FP8), "DT is float16, bfloat16 or an fp8 type")
    T.static_assert(BM in (64, 128, 192), "BM = 64 * consumer warpgroups (1 to 3)")
    T.static_assert(
        BN in (64, 128, 192, 256) or (BN % 16 == 0 and 16 <= BN <= 256 and EPI != "tma" and not TRANS_B),
        "BN is 64, 128, 192 or 256 (any multiple of 16 up to 256: a register epilogue, B K-major)",
    )
    T.static_assert(
        EPI in ("direct", "tma", "atomic"),
        "EPI is 'tma' (N a multiple of 8), 'direct' (any N) or 'atomic' (added to a float32 C)",
    )
    T.static_assert(SPLIT_K >= 1, "SPLIT_K is at least 1")
    # SPLIT_K > 1: the shares add atomically into a float32 C (EPI="atomic"), or (EPI "tma" /
    # "direct") the last share of each tile sums the others' partials (SP, SC) and stores C
    reduce = T.meta_var(SPLIT_K > 1 and EPI != "atomic")
    T.static_assert(not TRANS_B or DT not in FP8, "TRANS_B: fp8 wgmma reads B K-major only")
    T.static_assert(
        KPACK in (1, 2, 4) and (KPACK == 1 or (not TRANS_B and SCALES != "block")),
        "KPACK (k-blocks a stage holds) is 1, 2 or 4; more than 1 with a K-major B and no block scales",
    )
    T.static_assert(
        not TRANS_C or (EPI != "tma" and SCALES == "tensor" and not ROWS_ON_DEVICE),
        "TRANS_C (C stored transposed) takes the register epilogue ('direct' / 'atomic')",
    )
    T.static_assert(
        SCALES == "tensor"
        or (SCALES == "row" and DT in FP8)
        or (SCALES == "block" and DT in FP8 and BN in (64, 128) and not TRANS_B),
        "SCALES is 'tensor' (one scale each), 'row' (fp8: one per row of A and column of B) or 'block' "
        "(fp8, BN 64 or 128: one per row of A and 128 of K, one per 128 x 128 block of B)",
    )
    T.static_assert(
        LOADER == "tma"
        or (
            LOADER == "cp" and not TRANS_B and KPACK == 1 and not ROWS_ON_DEVICE and not TRACE and STAGES >= 3
        ),
        "LOADER is 'tma' or 'cp' (cp.async: a K-major B, KPACK 1, at least 3 stages, the host's descriptor of C)",
    )
    consumers = T.meta_var(BM // 64)
    threads = T.meta_var(128 * (1 + consumers))
    check_registers(consumers, PRODUCER_REGS, CONSUMER_REGS)
    fp8 = T.meta_var(DT in FP8)
    BK = T.meta_var(128 if fp8 else 64)  # elements of a 128-byte k-block row
    kstep = T.meta_var(32 if fp8 else 16)  # K of one wgmma (32 bytes)
    OUT = T.meta_var("bfloat16" if fp8 else DT)
    a_bytes = T.meta_var(BM * 128)
    stage_bytes = T.meta_var(KPACK * (BM * 128 + BN * 128))  # KPACK k-blocks, each A then B
    c_base = T.meta_var(STAGES * stage_bytes)  # EPI="tma": 2 x 8 KiB of C staging per consumer
    tm_off = T.meta_var(c_base + (consumers * 16384 if EPI == "tma" else 0))  # ROWS_ON_DEVICE's maps
    smem_bytes = T.meta_var(tm_off + (256 if ROWS_ON_DEVICE else 0) + 1024)
    T.static_assert(smem_bytes <= 232448, "shared memory (stages + C staging) exceeds 227 KiB")
    ab = T.meta_var(
        {"bfloat16": "bf16", "float16": "f16", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}[DT]
    )
    shape = T.meta_var(f"m64n{BN}k{kstep}")
    T.device_entry(
        launch=T.cuda.LaunchConfig(
            grid=T.min(SMS, ((M + (BM - 1)) // BM) * ((N + (BN - 1)) // BN) * SPLIT_K),
            block=threads,
            dynamic_smem_bytes=smem_bytes,
        ),
        attrs={"cuda.kernel_attrs": {"min_blocks_per_sm": 1}},
    )
    mt = (M + (BM - 1)) // BM  # row-blocks
    nt = (N + (BN - 1)) // BN  # column-blocks
    ntiles = mt * nt
    nunits = (
        T.meta_var(ntiles) if SPLIT_K == 1 else ntiles * SPLIT_K
    )  # work units: tiles, or SPLIT_K rounds of them
    # k-blocks (KPACK > 1: stages of KPACK k-blocks); the last may reach past K (TMA fills zeros)
    kb_n = (K + (BK * KPACK - 1)) // (BK * KPACK)
    group = GROUP_M * nt
    tx = T.cuda.thread_idx("x")
    wg = tx // 128
    unit0 = T.cuda.block_idx("x")
    units = T.cuda.grid_dim("x")
    dsm = T.alloc_buffer((smem_bytes,), "uint8", scope="shared.dyn")
    full = T.alloc_shared((STAGES,), "uint64")
    empty = T.alloc_shared((STAGES,), "uint64")
    ticket = T.alloc_shared((consumers,), "int32") if reduce else None  # add_shares' tickets
    # 1024-byte aligned base of the stages (128-byte swizzle atoms repeat every 1024 B)
    sbase = (T.ptx.cvta_to_shared(T.address_of(dsm[0])) + T.uint32(1023)) & T.uint32(0xFFFFFC00)
    # the descriptors of A and C the TMA copies read: the host's (by value), or this CTA's own,
    # written from the templates by ``patch_maps`` (ROWS_ON_DEVICE)
    if T.constexpr(reduce):  # the partials and the tile counters as tensors over the addresses passed
        sp_t = T.decl_buffer((1 << 30,), "float32", data=SP)
        sc_t = T.decl_buffer((1 << 24,), "int32", data=SC)
    if T.constexpr(ROWS_ON_DEVICE):  # the templates and the space as tensors over the addresses passed
        ws_t = T.decl_buffer((SMS * 32,), "uint64", data=WS)
        ta_t = T.decl_buffer((16,), "uint64", data=TA)
        tc_t = T.decl_buffer((16,), "uint64", data=TC) if EPI == "tma" else None
        patch_maps(sbase + T.uint32(tm_off), ws_t, unit0 * 32, ta_t, tc_t, A, C, M, tx, EPI)
    ta = T.meta_var(T.address_of(ws_t[unit0 * 32]) if ROWS_ON_DEVICE else TA)
    tc = T.meta_var(T.address_of(ws_t[unit0 * 32 + 16]) if ROWS_ON_DEVICE and EPI == "tma" else TC)
    tr = T.decl_buffer((SMS * TRACE_SLOTS,), "int64", data=TR) if TRACE else None
    if T.constexpr(TRACE):  # noqa: SIM102 (decided while parsing)
        if tx == 0:
            tr[unit0 * TRACE_SLOTS] = T.cuda.mov_sreg(64, "globaltimer")
            tr[unit0 * TRACE_SLOTS + 1] = T.cast(T.cuda.clock64(), "int64")
    if tx == 0:
        if T.constexpr(ROWS_ON_DEVICE):
            T.ptx.fence.proxy.tensormap__generic.acquire.gpu(ta)
            if T.constexpr(EPI == "tma"):
                T.ptx.fence.proxy.tensormap__generic.acquire.gpu(tc)
        if T.constexpr(LOADER == "cp"):  # every producer thread arrives on *full*; no descriptors of A and B
            init_stages(full, empty, STAGES, consumers, [tc] if EPI == "tma" else [], 128)
        else:
            init_stages(full, empty, STAGES, consumers, [ta, TB, tc] if EPI == "tma" else [ta, TB])
    T.cuda.cta_sync()
    if wg == 0:
        T.ptx.setmaxnreg_dec(PRODUCER_REGS)
        if T.constexpr(LOADER == "cp"):
            produce_units(full, empty, sbase, TA, TB, unit0, nunits, ntiles, units, group, mt, GROUP_M, BM, BN, BK,
                          STAGES, kb_n, stage_bytes, a_bytes, False, SPLIT_K, None, 1, True, M, N, K, tx,
                          1 if fp8 else 2)  # fmt: skip
        elif tx == 0:
            if T.constexpr(TRANS_B or SPLIT_K > 1 or TRACE or KPACK > 1):
                produce_units(full, empty, sbase, ta, TB, unit0, nunits, ntiles, units, group, mt, GROUP_M,
                              BM, BN, BK, STAGES, kb_n, stage_bytes, a_bytes, TRANS_B, SPLIT_K, tr, KPACK)  # fmt: skip
            else:
                produce(full, empty, sbase, ta, TB, unit0, ntiles, units, group, mt, GROUP_M, 1, 0,
                        BM, BN, BK, STAGES, kb_n, stage_bytes, a_bytes, 0)  # fmt: skip
    else:
        T.ptx.setmaxnreg_inc(CONSUMER_REGS)
        acc = T.alloc_local((BN // 2,), "float32")
        part = T.alloc_local((BN // 2,), "float32") if SCALES == "block" else None  # one k-block's
        ctid = tx - 128 * wg
        warp = ctid // 32
        lane = ctid % 32
        if T.constexpr(ROWS_ON_DEVICE and EPI == "tma"):  # noqa: SIM102 (decided while parsing; ctid == 0 is not)
            if ctid == 0:
                T.ptx.fence.proxy.tensormap__generic.acquire.gpu(tc)  # this thread's TMA stores read it
        it: T.int32 = 0
        for tile in range(unit0, nunits, units):  # work units: tiles, or shares of tiles
            # with SPLIT_K > 1, unit ``tile`` is round ``tile // ntiles`` over the output tiles:
            # tile ``out``'s share of k-blocks [kb_lo, kb_hi) (empty when K has fewer k-blocks
            # than shares); else the tile and all its k-blocks (compile-time values, no code)
            kb_per, kb_lo, kb_hi, out = unit_span(tile, ntiles, kb_n, SPLIT_K)
            if SPLIT_K > 1 and kb_hi <= kb_lo:
                continue  # a share with no k-blocks (K shorter than SPLIT_K k-blocks): nothing to add
            m0, n0 = tile_origin(out, group, mt, GROUP_M, 1, 0, BM, BN)
            if T.constexpr(SCALES == "block"):
                for i in range(BN // 2):
                    acc[i] = T.float32(0)
            for kb in range(kb_lo, kb_hi):
                s = it % STAGES
                stamp_kblock(tr, 1, kb - kb_lo, unit0, tile, tx, TRACE)
                while not T.ptx.mbarrier_try_wait_parity(T.address_of(full[s]), (it // STAGES) & 1):
                    pass
                stamp_kblock(tr, 2, kb - kb_lo, unit0, tile, tx, TRACE)
                sa = sbase + T.cast(s * stage_bytes, "uint32")
                T.ptx.wgmma_fence()
                if T.constexpr(TRANS_B):
                    # one inline-PTX block of the four k16 steps, B read N-major (imm-trans-b 1)
                    ad = (sa + T.cast((wg - 1) * 64 * 128, "uint32")) >> 4
                    bd = (sa + T.uint32(a_bytes)) >> 4
                    T.ptx.asm(
                        wgmma_block(BN, ab, BK // 16, trans_b=True),
                        *[acc[i] for i in range(BN // 2)],
                        *[
                            d
                            for kk in range(BK // 16)
                            for d in (desc(DESC_HI, ad, 2 * kk), desc(v_desc_hi(64), bd, v_offset(kk)))
                        ],
                        T.cast(kb > kb_lo, "int32"),
                        ty="void",
                    )
                elif T.constexpr(SCALES == "block"):
                    # the k-block's product alone (scale-d 0), added to the sum times its scales
                    # (DeepGEMM's promotion): the k-block is the 128 elements a scale covers
                    da, db = kblock_descs(sa, wg, a_bytes)
                    mma_kblock(part, da, db, BK // kstep, shape, ab, 0)
                elif T.constexpr(KPACK > 1):  # the stage's k-blocks one after the other into the sum
                    for j in range(KPACK):
                        da, db = kblock_descs(sa + T.uint32(j * (stage_bytes // KPACK)), wg, a_bytes)
                        mma_kblock(
                            acc, da, db, BK // kstep, shape, ab, T.cast(kb > kb_lo, "int32") if j == 0 else 1
                        )
                else:
                    da, db = kblock_descs(sa, wg, a_bytes)
                    mma_kblock(acc, da, db, BK // kstep, shape, ab, T.cast(kb > kb_lo, "int32"))
                T.ptx.wgmma_commit_group()
                if T.constexpr(SCALES == "block"):
                    promote(acc, part, SA, SB, M, kb, m0 + (wg - 1) * 64 + warp * 16 + lane // 4, n0, BN)
                    if ctid == 0:
                        release(empty, s, 1)
                else:
                    T.ptx.wgmma_wait_group(1)
                    stamp_kblock(tr, 3, kb - kb_lo, unit0, tile, tx, TRACE)
                    if kb > kb_lo and ctid == 0:
                        release(empty, (it + STAGES - 1) % STAGES, 1)
                it = it + 1
            if T.constexpr(SCALES != "block"):  # (each k-block's stage was freed after its promotion)
                T.ptx.wgmma_wait_group(0)
                if ctid == 0:
                    release(empty, (it + STAGES - 1) % STAGES, 1)
            if T.constexpr(TRACE):  # noqa: SIM102 (decided while parsing)
                if tile == unit0 and tx == 128:
                    tr[unit0 * TRACE_SLOTS + 2] = T.cast(T.cuda.clock64(), "int64")
            if T.constexpr(reduce):
                # a warpgroup whose rows all lie past M has nothing to store in any share
                if m0 + (wg - 1) * 64 < M:
                    shares = (kb_n + (kb_per - 1)) // kb_per  # the shares with k-blocks
                    add_shares(acc, sp_t, sc_t, ticket, wg, ctid, tile // ntiles, shares,
                               out, ntiles, consumers, m0 + (wg - 1) * 64 + warp * 16 + lane // 4, M, BN)  # fmt: skip
                    if ticket[wg - 1] == shares - 1:
                        finish(acc, C, SA, SB, tc, sbase, c_base, wg, ctid, warp, lane, M, N, m0, n0, BN, OUT,
                               fp8, SCALES, EPI, TRANS_C)  # fmt: skip
            else:
                finish(acc, C, SA, SB, tc, sbase, c_base, wg, ctid, warp, lane, M, N, m0, n0, BN, OUT,
                       fp8, SCALES, EPI, TRANS_C)  # fmt: skip
            if T.constexpr(TRACE):  # noqa: SIM102 (decided while parsing)
                if tile == unit0 and tx == 128:
                    tr[unit0 * TRACE_SLOTS + 3] = T.cast(T.cuda.clock64(), "int64")
                    tr[unit0 * TRACE_SLOTS + 4] = T.cuda.mov_sreg(64, "globaltimer")
        if EPI == "tma" and ctid == 0:
            T.ptx.tma_store_wait(0)  # the last stores have read shared memory before the CTA exits


def make(dtype: str = "float16", **tiles):
    """The kernel (a ``T.function``) for one dtype and tile set; every problem size runs on it.
    Its parameters: ``(M, N, K, TA, TB)``, ``TC`` (``EPI="tma"``, the default), ``C``, then for
    fp8 the scales ``SA, SB``. ``C`` is taken by the TMA-store kernel too: the launch checks it
    (dtype, ``(M, N)``, contiguous, one device) and takes its device and the fast launch path.
    ``ROWS_ON_DEVICE=True``: ``TA`` and ``TC`` are the addresses of templates (16 uint64
    words: a descriptor of the same row pitch, box and swizzle at any address and row count)
    and the kernel also takes ``A`` (its address, a uint64) and ``WS`` (the address of
    ``SMS * 32`` uint64 words: two descriptors per CTA, one space per stream); each CTA writes
    A's and C's descriptors there itself. Addresses, not tensors: the library owns the three
    buffers and has checked A, and an address costs the launch nothing to check. ``SPLIT_K > 1``
    with the ``"tma"`` or ``"direct"`` epilogue (split-K summed in the kernel): the kernel also
    takes ``SP``, the address of ``SPLIT_K * tiles * BM * BN`` float32 partials, and ``SC``, of
    ``tiles * BM / 64`` int32 tile counters, zero before the launch and left zero after it."""
    if tiles.get("LOADER") == "cp":  # the cp.async producer's pointers need 48 registers (40 spill)
        tiles.setdefault("PRODUCER_REGS", 48)
        if tiles.get("BM", 128) == 128:  # 48 + 2 x 224 of the CTA's 3 x 168 (no spill, ptxas -v)
            tiles.setdefault("CONSUMER_REGS", 224)
    drop = {} if tiles.get("EPI", "tma") == "tma" else {"TC": None}
    if dtype not in FP8:
        drop.update(SA=None, SB=None)
    if not tiles.get("ROWS_ON_DEVICE"):
        drop.update(A=None, WS=None)
    if tiles.get("SPLIT_K", 1) == 1 or tiles.get("EPI", "tma") == "atomic":
        drop.update(SP=None, SC=None)
    if not tiles.get("TRACE"):
        drop.update(TR=None)
    return matmul_sm90.specialize(DT=dtype, **drop, **tiles)


KERNELS = {
    "matmul_any_f16": lambda: make("float16"),
    "matmul_any_bf16_direct": lambda: make("bfloat16", EPI="direct"),
    "matmul_any_f16_bm64": lambda: make("float16", BM=64, BN=128, STAGES=8),
    "matmul_any_bf16_nmajor": lambda: make("bfloat16", TRANS_B=True),
    "matmul_any_f16_nmajor_bm64": lambda: make("float16", BM=64, BN=64, STAGES=8, TRANS_B=True),
    "matmul_any_bf16_bm64_bn32": lambda: make("bfloat16", BM=64, BN=32, STAGES=12, EPI="direct"),
    "matmul_any_e4m3": lambda: make("float8_e4m3fn"),
    "matmul_any_e4m3_direct": lambda: make("float8_e4m3fn", EPI="direct", BN=128, STAGES=6),
    "matmul_any_bf16_bm64_splitk": lambda: make("bfloat16", BM=64, BN=128, STAGES=8, EPI="atomic", SPLIT_K=4),
    "matmul_any_f16_nmajor_bm64_splitk": lambda: make(
        "float16", BM=64, BN=64, STAGES=8, TRANS_B=True, EPI="atomic", SPLIT_K=3
    ),
    "matmul_any_e4m3_rows": lambda: make("float8_e4m3fn", SCALES="row"),
    "matmul_any_e4m3_blocks": lambda: make("float8_e4m3fn", BN=128, STAGES=6, SCALES="block"),
    "matmul_any_e4m3_blocks_bm64_direct": lambda: make(
        "float8_e4m3fn", BM=64, BN=64, STAGES=8, EPI="direct", SCALES="block"
    ),
    "matmul_any_e4m3_rows_direct": lambda: make(
        "float8_e4m3fn", EPI="direct", BN=128, STAGES=6, SCALES="row"
    ),
    "matmul_any_e4m3_splitk": lambda: make("float8_e4m3fn", BN=128, STAGES=6, EPI="atomic", SPLIT_K=2),
    # 128 x 192 tiles (config's model picks them where they make one wave of whole tiles)
    "matmul_any_bf16_bn192": lambda: make("bfloat16", BN=192, STAGES=4),
    "matmul_any_e4m3_bn192_direct": lambda: make("float8_e4m3fn", BN=192, STAGES=4, EPI="direct"),
    "matmul_any_bf16_splitk4": lambda: make("bfloat16", STAGES=4, EPI="atomic", SPLIT_K=4),
    # split-K summed in the kernel (the last share of a tile adds the others' partials)
    "matmul_any_bf16_splitk4_sum": lambda: make("bfloat16", BN=128, STAGES=6, SPLIT_K=4),
    "matmul_any_f16_bm64_splitk3_sum": lambda: make(
        "float16", BM=64, BN=128, STAGES=8, EPI="direct", SPLIT_K=3
    ),
    # cp.async loads (row pitches of 16 modulo 32 bytes), and with split-K summed in the kernel
    "matmul_any_bf16_cp": lambda: make("bfloat16", LOADER="cp"),
    "matmul_any_e4m3_bm64_cp_splitk_sum": lambda: make(
        "float8_e4m3fn", BM=64, BN=128, STAGES=8, EPI="direct", SPLIT_K=2, LOADER="cp"
    ),
}
