# ruff: noqa: F821
# (M, N, K, DT in the @T.jit annotations are T.constexpr parameters, bound by .specialize)
"""Warp-specialized Hopper GEMM, C = A @ B^T (fp16 / bf16 in, fp32 accumulate, fp16 / bf16 out).

A: (M, K) row-major, B: (N, K) row-major (both K-major, wgmma's native layout), C: (M, N).

Structure (one persistent CTA per SM, ``1 + CONSUMERS`` warpgroups):

* warpgroup 0 is the producer: it lowers its register cap (``setmaxnreg.dec``) and one
  thread streams ``BM x BK`` tiles of A and ``BN x BK`` tiles of B with TMA
  (``cp.async.bulk.tensor.2d``, 128-byte swizzle) into a ``STAGES``-deep ring of
  shared-memory stages; each stage's *full* mbarrier completes on the copied bytes
  (``mbarrier.arrive.expect_tx`` + ``complete_tx``).
* warpgroups 1.. are consumers (``setmaxnreg.inc``): each owns ``64 x BN`` of the tile,
  waits on the stage's *full* barrier (phase parity), issues ``BK / 16``
  ``wgmma.mma_async.m64n{BN}k16`` from shared-memory descriptors into a register
  accumulator (a local float32 array indexed only by constants), commits, and releases
  the previous stage on its *empty* barrier once ``wgmma.wait_group 1`` says it was read.
* tiles are walked persistently (``tile = blockIdx.x, += gridDim.x``) in groups of
  ``GROUP_M`` row-blocks so concurrently running CTAs share A and B tiles in L2; the
  epilogue converts the accumulators and stores them straight from registers
  (4-byte ``half2`` stores).
* ``CLUSTER=2``: 2-CTA clusters own vertically adjacent tiles that share their B tile;
  each CTA loads its A tile and half of B with ``.multicast::cluster`` into both CTAs, and
  its consumers release a stage in both CTAs (``mapa`` + remote ``mbarrier.arrive``), so
  each *empty* barrier counts the consumers of the whole cluster. ``SHARE="A"`` turns the
  pair sideways: the two CTAs own horizontally adjacent tiles, load their own B tile and
  multicast half of the shared A tile each (meant for few row-blocks, e.g. M = 128, where
  every CTA reads the same A tile through L2; measured slower than the plain kernel there on
  the H200, docs/benchmarks.md, so ``best_config`` does not use it).

The tensor maps come from ``tirx.runtime.tma.TensorMapPlan`` on the host. With
``TMAP="param"`` (default) they are kernel parameters passed by value
(``T.Ptr(T.uint8, "tensormap")``, generated as ``const __grid_constant__``; pass
``plan.param(tensor)``); with ``TMAP="global"`` they are 128-byte descriptors in global
memory (``(16,)`` uint64 tensors; pass ``plan.device(tensor)``).
``@T.jit`` specializes over the problem size, dtype, tile shape and pipeline depth.
"""

from __future__ import annotations

import functools
from typing import Any

from tirx.script import tirx as T

# wgmma smem descriptor, K-major, 128-byte swizzle: LBO 16 B (encoded 1), SBO 1024 B
# (8 rows of 128 B, encoded 64), layout type 1 (SWIZZLE_128B) in bits 62-63.
DESC_HI = (1 << 16) | (64 << 32) | (1 << 62)
BY_VALUE = "param"  # TMAP: tensor maps as __grid_constant__ parameters ("global": in device memory)


@T.inline
def release(empty, s, cluster):
    """A consumer warpgroup frees stage ``s``: arrive on its *empty* barrier in every CTA
    of the cluster (their producers multicast into this CTA's stage too)."""
    if T.constexpr(cluster > 1):
        for r in range(cluster):
            T.ptx.mbarrier_arrive_cluster(T.ptx.cvta_to_shared(T.address_of(empty[s])), r)
    else:
        T.evaluate(T.ptx.mbarrier_arrive(T.address_of(empty[s])))


@T.inline
def tile_origin(tile, group, mt, GROUP_M, CLUSTER, rank, BM, BN, SHARE="B"):
    """The first row and column of work unit ``tile``: grouped order (``GROUP_M`` row-blocks of
    work units share their B tiles in L2), this CTA's tile of the cluster by ``rank``: the
    ``CLUSTER`` tiles of a unit are vertically adjacent (``SHARE="B"``) or side by side
    (``"A"``)."""
    gm = tile // group
    first_m = gm * GROUP_M
    gsize = T.min(mt - first_m, GROUP_M)
    if T.constexpr(SHARE == "A"):
        m0 = (first_m + (tile % group) % gsize) * BM
        n0 = (((tile % group) // gsize) * CLUSTER + rank) * BN
    else:
        m0 = ((first_m + (tile % group) % gsize) * CLUSTER + rank) * BM
        n0 = ((tile % group) // gsize) * BN
    return m0, n0


@T.inline
def kblock_descs(sa, wg, a_bytes):
    """The wgmma descriptors of one stage (at shared address ``sa``): consumer warpgroup ``wg``'s
    64 rows of the A tile and the B tile ``a_bytes`` after it (128-byte swizzled, K-major,
    ``DESC_HI``'s strides; a k-block is one 128-byte row of K)."""
    da = T.uint64(DESC_HI) | T.cast((sa + T.cast((wg - 1) * 64 * 128, "uint32")) >> 4, "uint64")
    db = T.uint64(DESC_HI) | T.cast((sa + T.uint32(a_bytes)) >> 4, "uint64")
    return da, db


@T.inline
def mma_kblock(acc, da, db, steps, shape, ab, first):
    """One k-block's ``steps`` wgmmas (32 bytes of K each: +2 in the descriptors' addresses) into
    the accumulator ``acc``; ``first``: the first step's scale-d (0 overwrites)."""
    for kk in range(steps):
        T.ptx.wgmma_mma_async(
            shape,
            ab,
            T.address_of(acc[0]),
            da + T.uint64(2 * kk),
            db + T.uint64(2 * kk),
            first if kk == 0 else 1,
        )


@T.inline
def check_registers(consumers, PRODUCER_REGS, CONSUMER_REGS):
    """The producer's and ``consumers`` warpgroups' ``setmaxnreg`` counts fit the CTA: setmaxnreg
    moves registers between the CTA's own warps, which share what the launch gave each thread
    (ptxas: the most setmaxnreg asks, at most 65536 / threads in steps of 8, so 168 for 384
    threads); a warp asking for more than is left waits forever (the cp.async GEMM's 48 + 2 x 232
    hung an H100, 2026-12-07)."""
    threads = T.meta_var(128 * (1 + consumers))
    T.static_assert(
        consumers * 128 * CONSUMER_REGS + 128 * PRODUCER_REGS
        <= threads * min(max(CONSUMER_REGS, PRODUCER_REGS), 65536 // threads // 8 * 8),
        "setmaxnreg budget exceeds the registers the launch gives the CTA (each thread's share of "
        "the register file, 168 for 384 threads)",
    )


@T.inline
def init_stages(full, empty, STAGES, arrivals, tmaps, fills=1):
    """Thread 0: the stage ring's mbarriers (*full*: ``fills`` arrivals -- the TMA producer's
    one plus the bytes, or each cp.async producer thread's -- ; *empty*: ``arrivals`` consumer
    releases) made visible to the cluster, and the tensor maps prefetched."""
    for s in range(STAGES):
        T.ptx.mbarrier_init(T.address_of(full[s]), fills)
        T.ptx.mbarrier_init(T.address_of(empty[s]), arrivals)
    T.ptx.fence_mbarrier_init()
    for tm in tmaps:
        T.ptx.prefetch_tensormap(tm)


@T.inline
def produce(full, empty, sbase, TA, TB, unit0, ntiles, units, group, mt, GROUP_M, CLUSTER, rank, BM, BN, BK,
            STAGES, kb_n, stage_bytes, a_bytes, b_half, SHARE="B"):  # fmt: skip
    """The producer thread: for every k-block of every tile of this CTA, wait until the stage is
    free (*empty*, parity of the previous round), expect its bytes on *full*, and load the
    ``BM x BK`` A tile and the ``BN x BK`` B tile with TMA (with ``CLUSTER=2`` this CTA's half
    of the shared B tile -- or of the shared A tile, ``SHARE="A"`` -- goes to both CTAs of the
    cluster, multicast)."""
    it: T.int32 = 0
    for tile in range(unit0, ntiles, units):
        m0, n0 = tile_origin(tile, group, mt, GROUP_M, CLUSTER, rank, BM, BN, SHARE)
        for kb in range(kb_n):
            s = it % STAGES
            ph = ((it // STAGES) & 1) ^ 1
            while not T.ptx.mbarrier_try_wait_parity(T.address_of(empty[s]), ph):
                pass
            T.evaluate(T.ptx.mbarrier_arrive_expect_tx(T.address_of(full[s]), stage_bytes))
            sa = sbase + T.cast(s * stage_bytes, "uint32")
            # the tile a cluster shares (A or B) comes half from each CTA, multicast to both
            if T.constexpr(CLUSTER > 1 and SHARE == "A"):
                T.ptx.tma_load_2d_multicast(
                    sa + T.cast(rank * (a_bytes // CLUSTER), "uint32"),
                    TA,
                    kb * BK,
                    m0 + rank * (BM // CLUSTER),
                    T.address_of(full[s]),
                    T.uint16((1 << CLUSTER) - 1),
                )
            else:
                T.ptx.tma_load_2d(sa, TA, kb * BK, m0, T.address_of(full[s]))
            if T.constexpr(CLUSTER > 1 and SHARE == "B"):
                T.ptx.tma_load_2d_multicast(
                    sa + T.uint32(a_bytes) + T.cast(rank * b_half, "uint32"),
                    TB,
                    kb * BK,
                    n0 + rank * (BN // CLUSTER),
                    T.address_of(full[s]),
                    T.uint16((1 << CLUSTER) - 1),
                )
            else:
                T.ptx.tma_load_2d(sa + T.uint32(a_bytes), TB, kb * BK, n0, T.address_of(full[s]))
            it = it + 1


@T.inline
def store_rows(C, acc, out, a0, row0, col0, BN, DT):
    """Epilogue of one 64-row wgmma accumulator (``acc[a0:a0 + BN / 2]``): this thread's values
    of rows ``row0`` and ``row0 + 8``, converted and stored as 2-element vectors."""
    row = row0
    col = col0
    for i in range(BN // 8):
        out[0] = T.cast(acc[a0 + 4 * i], DT)
        out[1] = T.cast(acc[a0 + 4 * i + 1], DT)
        C[row, T.Ramp(col + 8 * i, 1, 2)] = out[T.Ramp(0, 1, 2)]
        out[0] = T.cast(acc[a0 + 4 * i + 2], DT)
        out[1] = T.cast(acc[a0 + 4 * i + 3], DT)
        C[row + 8, T.Ramp(col + 8 * i, 1, 2)] = out[T.Ramp(0, 1, 2)]


@T.inline
def store_tma(TC, acc, cbuf, wg, ctid, m0, n0, BN, DT):
    """TMA-store epilogue of one consumer warpgroup's ``64 x BN`` block of the fp32 ``acc``
    (converted to ``DT``, fp16 or bf16), ``64 x 64`` at a time through two alternating 8 KiB
    shared-memory buffers at ``cbuf`` (a 32-bit shared address, 1024-byte aligned) in the
    128-byte swizzled layout TMA reads (16-byte chunk ``c`` of row ``r`` at ``c ^ (r % 8)``: a
    warp's 4-byte stores hit 32 banks). One thread stores each chunk with
    ``cp.async.bulk.tensor`` (tensor map ``TC``, ``64 x 64`` boxes) and the warpgroup moves on
    while the copy engine drains it; a buffer is rewritten only after the copy two chunks back
    has read it (``wait_group.read 1``). Named barrier ``wg`` (1 or 2) syncs the warpgroup."""
    pk = T.alloc_local((2,), "uint32")
    lane = ctid % 32
    r0 = (ctid // 32) * 16 + lane // 4
    for j in range(BN // 64):
        buf = cbuf + T.uint32((j % 2) * 8192)
        if ctid == 0:
            T.ptx.tma_store_wait(1)
        T.ptx.bar.sync(wg, 128)
        for ii in range(8):
            i = 8 * j + ii
            off = T.cast(r0 * 128 + ((ii ^ (lane // 4)) * 16) + (lane % 4) * 4, "uint32")
            # cvt.rn.{bf16,f16}x2.f32 d, hi, lo: the lower column is the lower half
            if T.constexpr(DT == "bfloat16"):
                T.ptx.cvt.rn.bf16x2.f32(pk[0], acc[4 * i + 1], acc[4 * i])
                T.ptx.cvt.rn.bf16x2.f32(pk[1], acc[4 * i + 3], acc[4 * i + 2])
            else:
                T.ptx.cvt.rn.f16x2.f32(pk[0], acc[4 * i + 1], acc[4 * i])
                T.ptx.cvt.rn.f16x2.f32(pk[1], acc[4 * i + 3], acc[4 * i + 2])
            T.ptx.st.shared__cta.b32(buf + off, pk[0])
            T.ptx.st.shared__cta.b32(buf + off + T.uint32(8 * 128), pk[1])
        T.ptx.fence_proxy_async()  # generic-proxy writes before the copy engine reads them
        T.ptx.bar.sync(wg, 128)
        if ctid == 0:
            T.ptx.tma_store_2d(TC, n0 + 64 * j, m0 + (wg - 1) * 64, buf)
            T.ptx.tma_store_commit()


@T.jit
def gemm_tn(
    A: T.Tensor((M, K), DT),
    B: T.Tensor((N, K), DT),
    C: T.Tensor((M, N), DT),
    TA: T.Ptr(T.uint8, "tensormap") if TMAP == BY_VALUE else T.Tensor((16,), "uint64"),
    TB: T.Ptr(T.uint8, "tensormap") if TMAP == BY_VALUE else T.Tensor((16,), "uint64"),
    TC: T.Ptr(T.uint8, "tensormap") = None,
    *,
    M: T.constexpr,
    N: T.constexpr,
    K: T.constexpr,
    DT: T.constexpr = "float16",
    BM: T.constexpr = 128,
    BN: T.constexpr = 256,
    BK: T.constexpr = 64,
    STAGES: T.constexpr = 4,
    SMS: T.constexpr = 132,
    GROUP_M: T.constexpr = 16,
    PRODUCER_REGS: T.constexpr = 40,
    CONSUMER_REGS: T.constexpr = 232,
    CLUSTER: T.constexpr = 1,
    SHARE: T.constexpr = "B",
    TMAP: T.constexpr = BY_VALUE,
    PINGPONG: T.constexpr = False,
    EPI: T.constexpr = "direct",
):
    T.static_assert(BK == 64, "BK must be 64 (one 128-byte swizzle row of fp16/bf16)")
    T.static_assert(M % BM == 0 and N % BN == 0 and K % BK == 0, "sizes must be multiples of the tile")
    T.static_assert(SHARE in ("A", "B"), "SHARE is 'B' (clusters of vertically adjacent tiles) or 'A'")
    T.static_assert(
        CLUSTER in (1, 2) and ((M // BM) if SHARE == "B" else (N // BN)) % CLUSTER == 0,
        "CLUSTER is 1 or 2 and divides M // BM (SHARE='B') or N // BN (SHARE='A')",
    )
    T.static_assert(BM % 64 == 0 and BN % 8 == 0 and 8 <= BN <= 256, "BM = 64 * consumers, BN in 8..256")
    T.static_assert(not PINGPONG or (BM in (64, 128) and CLUSTER == 1), "PINGPONG: BM 64 or 128, no cluster")
    T.static_assert(EPI in ("direct", "tma"), "EPI is 'direct' (stores from registers) or 'tma'")
    T.static_assert(
        EPI == "direct" or (not PINGPONG and TMAP == BY_VALUE and BN % 64 == 0),
        "EPI='tma': the cooperative kernel, tensor maps by value, BN a multiple of 64",
    )
    consumers = T.meta_var(2 if PINGPONG else BM // 64)
    check_registers(consumers, PRODUCER_REGS, CONSUMER_REGS)
    threads = T.meta_var(128 * (1 + consumers))
    per_stage = T.meta_var(1 if PINGPONG else consumers)  # consumer warpgroups reading each stage
    a_bytes = T.meta_var(BM * BK * 2)
    stage_bytes = T.meta_var(BM * BK * 2 + BN * BK * 2)
    c_base = T.meta_var(STAGES * stage_bytes)  # EPI="tma": 2 x 8 KiB of C staging per consumer
    smem_bytes = T.meta_var(c_base + (consumers * 16384 if EPI == "tma" else 0) + 1024)
    T.static_assert(smem_bytes <= 232448, "shared memory (stages + C staging) exceeds 227 KiB")
    mt = T.meta_var(M // BM // (CLUSTER if SHARE == "B" else 1))  # row-blocks of work units
    ctas = T.meta_var(min(SMS, (M // BM) * (N // BN)) // CLUSTER * CLUSTER)
    b_half = T.meta_var(BN // CLUSTER * BK * 2)
    ntiles = T.meta_var((M // BM) * (N // BN) // CLUSTER)  # work units: CLUSTER adjacent tiles
    kb_n = T.meta_var(K // BK)
    nacc = T.meta_var(BN // 2 * (BM // 64 if PINGPONG else 1))
    # a consumer thread holds nacc fp32 accumulators: 256 (ping-pong 128 x 256) spill under any
    # register cap (ptxas: 2 KB stack, ~900 LDL/STL, wgmma serialized) -- refuse, do not run slow
    T.static_assert(
        nacc <= 128, "PINGPONG: BM * BN / 128 accumulators per thread must be <= 128 (e.g. BN=128)"
    )
    group = T.meta_var(GROUP_M * (N // BN // (CLUSTER if SHARE == "A" else 1)))
    ab = T.meta_var("bf16" if DT == "bfloat16" else "f16")
    shape = T.meta_var(f"m64n{BN}k16")
    T.device_entry(
        launch=T.cuda.LaunchConfig(
            grid=ctas,
            block=threads,
            cluster=CLUSTER if CLUSTER > 1 else None,
            dynamic_smem_bytes=smem_bytes,
        ),
        attrs={"cuda.kernel_attrs": {"min_blocks_per_sm": 1}},
    )
    tma_a = TA if TMAP == BY_VALUE else T.address_of(TA[0])
    tma_b = TB if TMAP == BY_VALUE else T.address_of(TB[0])
    tx = T.cuda.thread_idx("x")
    wg = tx // 128
    rank = T.cuda.cta_rank() if CLUSTER > 1 else 0
    unit0 = T.cuda.block_idx("x") // CLUSTER
    units = T.cuda.grid_dim("x") // CLUSTER
    dsm = T.alloc_buffer((smem_bytes,), "uint8", scope="shared.dyn")
    full = T.alloc_shared((STAGES,), "uint64")
    empty = T.alloc_shared((STAGES,), "uint64")
    # 1024-byte aligned base of the stages (128-byte swizzle atoms repeat every 1024 B)
    sbase = (T.ptx.cvta_to_shared(T.address_of(dsm[0])) + T.uint32(1023)) & T.uint32(0xFFFFFC00)
    if tx == 0:
        init_stages(
            full, empty, STAGES, per_stage * CLUSTER, [tma_a, tma_b, TC] if EPI == "tma" else [tma_a, tma_b]
        )
    if T.constexpr(CLUSTER > 1):
        T.cuda.cluster_sync()
    else:
        T.cuda.cta_sync()
    if wg == 0:
        T.ptx.setmaxnreg_dec(PRODUCER_REGS)
        if tx == 0:
            produce(full, empty, sbase, tma_a, tma_b, unit0, ntiles, units, group, mt, GROUP_M, CLUSTER, rank,
                    BM, BN, BK, STAGES, kb_n, stage_bytes, a_bytes, b_half, SHARE)  # fmt: skip
    else:
        T.ptx.setmaxnreg_inc(CONSUMER_REGS)
        acc = T.alloc_local((nacc,), "float32")
        ctid = tx - 128 * wg
        warp = ctid // 32
        lane = ctid % 32
        if T.constexpr(PINGPONG):
            # each consumer warpgroup owns every other tile of this CTA (BM x BN, BM / 64 wgmma
            # per k-step). Their main loops take turns (named barriers 1 and 2): one warpgroup's
            # epilogue runs under the other's tensor-core work, and the turns are also what
            # keeps the stage ring sound -- a warpgroup starts tile j only after every stage of
            # tile j - 1 was waited for, so it never waits on a stage two phases ahead (the
            # parity wait could not tell those apart)
            me = wg - 1
            out = T.alloc_local((2,), DT)
            nloc = (ntiles - unit0 + units - 1) // units  # tiles of this CTA
            for tile in range(unit0 + me * units, ntiles, 2 * units):
                j = (tile - unit0) // units  # this CTA's tile number: stages j*kb_n ...
                m0, n0 = tile_origin(tile, group, mt, GROUP_M, 1, 0, BM, BN)
                if j > 0:
                    T.ptx.bar.sync(1 + me, 256)  # my turn: the other main loop has finished
                for kb in range(kb_n):
                    it = j * kb_n + kb
                    s = it % STAGES
                    while not T.ptx.mbarrier_try_wait_parity(T.address_of(full[s]), (it // STAGES) & 1):
                        pass
                    sa = sbase + T.cast(s * stage_bytes, "uint32")
                    db = T.uint64(DESC_HI) | T.cast((sa + T.uint32(a_bytes)) >> 4, "uint64")
                    T.ptx.wgmma_fence()
                    for kk in range(BK // 16):
                        for h in range(BM // 64):
                            T.ptx.wgmma_mma_async(
                                shape,
                                ab,
                                T.address_of(acc[h * (BN // 2)]),
                                T.uint64(DESC_HI)
                                | T.cast((sa + T.uint32(h * 64 * 128)) >> 4, "uint64") + T.uint64(2 * kk),
                                db + T.uint64(2 * kk),
                                T.cast(kb > 0, "int32") if kk == 0 else 1,
                            )
                    T.ptx.wgmma_commit_group()
                    T.ptx.wgmma_wait_group(1)
                    if kb > 0 and ctid == 0:
                        release(empty, (it + STAGES - 1) % STAGES, 1)
                if j + 1 < nloc:
                    T.ptx.bar.arrive(2 - me, 256)  # the other warpgroup's turn
                T.ptx.wgmma_wait_group(0)
                if ctid == 0:
                    release(empty, (j * kb_n + kb_n - 1) % STAGES, 1)
                for h in range(BM // 64):
                    store_rows(
                        C,
                        acc,
                        out,
                        h * (BN // 2),
                        m0 + h * 64 + warp * 16 + lane // 4,
                        n0 + (lane % 4) * 2,
                        BN,
                        DT,
                    )
        else:
            it: T.int32 = 0
            for tile in range(unit0, ntiles, units):
                m0, n0 = tile_origin(tile, group, mt, GROUP_M, CLUSTER, rank, BM, BN, SHARE)
                for kb in range(kb_n):
                    s = it % STAGES
                    ph = (it // STAGES) & 1
                    while not T.ptx.mbarrier_try_wait_parity(T.address_of(full[s]), ph):
                        pass
                    sa = sbase + T.cast(s * stage_bytes, "uint32")
                    da, db = kblock_descs(sa, wg, a_bytes)
                    T.ptx.wgmma_fence()
                    mma_kblock(acc, da, db, BK // 16, shape, ab, T.cast(kb > 0, "int32"))
                    T.ptx.wgmma_commit_group()
                    T.ptx.wgmma_wait_group(1)
                    if kb > 0 and ctid == 0:
                        release(empty, (it + STAGES - 1) % STAGES, CLUSTER)
                    it = it + 1
                T.ptx.wgmma_wait_group(0)
                if ctid == 0:
                    release(empty, (it + STAGES - 1) % STAGES, CLUSTER)
                if T.constexpr(EPI == "tma"):
                    store_tma(TC, acc, sbase + T.uint32(c_base + (wg - 1) * 16384), wg, ctid, m0, n0, BN, DT)
                else:
                    out = T.alloc_local((2,), DT)
                    store_rows(
                        C,
                        acc,
                        out,
                        0,
                        m0 + (wg - 1) * 64 + warp * 16 + lane // 4,
                        n0 + (lane % 4) * 2,
                        BN,
                        DT,
                    )
            if EPI == "tma" and ctid == 0:
                T.ptx.tma_store_wait(0)  # the last stores have read shared memory before the CTA exits
    if T.constexpr(CLUSTER > 1):
        # no CTA leaves while its partner may still multicast into it or arrive on its barriers
        T.cuda.cluster_sync()


@functools.cache
def make_gemm(M: int, N: int, K: int, dtype: str = "float16", **tiles):
    """The specialized kernel (a ``T.function``) for one problem size, dtype and tile set.
    With ``EPI="tma"`` it takes a third tensor map, ``c_plan(...).param(C)``."""
    drop = {} if tiles.get("EPI") == "tma" else {"TC": None}
    return gemm_tn.specialize(M=M, N=N, K=K, DT=dtype, **drop, **tiles)


def c_plan(M: int, N: int, dtype: str = "float16"):
    """Host TMA plan of C for ``EPI="tma"``: 64 x 64 boxes, 128-byte swizzle."""
    from tirx.runtime.tma import TensorMapPlan

    return TensorMapPlan(dtype, (M, N), (64, 64), 128)


# (BN, STAGES) from the widest tile down: 227 KiB holds 4 stages of 128x256 (+ the C staging
# tile), 6 of 128x128, 8 of 128x64
_BN_STAGES = ((256, 4), (128, 6), (64, 8))


def best_config(M: int, N: int, K: int, dtype: str = "float16", sms: int = 132) -> dict:
    """Tiles measured best on the H200 (docs/benchmarks.md, "Hopper kernels"): 128x256x64,
    4 stages, GROUP_M 8, the TMA-store epilogue (``EPI="tma"``: pass ``c_plan(...).param(C)``
    as the sixth argument). When 128x256 tiles would leave SMs idle (fewer tiles than 3/4 of
    ``sms``, e.g. M = 128), the tile narrows to the widest of 128 / 64 columns that keeps
    them busy (or 64), with a deeper ring: those shapes stream B, and more CTAs stream it
    faster (128 x 8192 x 8192 on the H200: BN 64 95-141 % of cuBLAS across runs, BN 128
    87-130 %, BN 256 63-73 %; cuBLAS itself moved between 295 and 441 TFLOP/s there)."""
    rows = max(M // 128, 1)
    bn, stages = _BN_STAGES[-1]
    for cand, st in _BN_STAGES:
        if N % cand == 0 and rows * (N // cand) * 4 >= sms * 3:
            bn, stages = cand, st
            break
    return dict(BM=128, BN=bn, STAGES=stages, GROUP_M=min(8, rows), EPI="tma")


def plans(
    M: int,
    N: int,
    K: int,
    dtype: str = "float16",
    BM: int = 128,
    BN: int = 256,
    BK: int = 64,
    CLUSTER: int = 1,
    SHARE: str = "B",
):
    """Host TMA plans of A and B for ``make_gemm`` (tirx.runtime.tma.TensorMapPlan); with a
    2-CTA cluster each CTA loads half of the shared B tile (``SHARE="A"``: of the A tile),
    multicast."""
    from tirx.runtime.tma import TensorMapPlan

    a_split, b_split = (CLUSTER, 1) if SHARE == "A" else (1, CLUSTER)
    return (
        TensorMapPlan(dtype, (M, K), (BM // a_split, BK), 128),
        TensorMapPlan(dtype, (N, K), (BN // b_split, BK), 128),
    )


def plans_for(M: int, N: int, K: int, dtype: str, tiles: dict):
    """``plans`` for a ``make_gemm`` tile set (``best_config``'s or a bench's): its BM, BN,
    CLUSTER and SHARE, the kernel's defaults for the ones it leaves out."""
    return plans(M, N, K, dtype, **{k: tiles[k] for k in ("BM", "BN", "CLUSTER", "SHARE") if k in tiles})


#: the tile sets ``best_config`` chooses among, as ``@T.autotune`` configs (``gemm_tuned``)
CANDIDATES: list[dict] = [dict(BM=128, BN=bn, STAGES=st, GROUP_M=8, EPI="tma") for bn, st in _BN_STAGES] + [
    dict(BM=128, BN=256, STAGES=3, GROUP_M=8, EPI="tma"),
    dict(BM=128, BN=128, STAGES=4, GROUP_M=16, EPI="tma"),
]


def _fits(configs: list, args: dict) -> list:
    """Candidates whose tiles divide the problem (the kernel's shapes are multiples of its tile);
    GROUP_M no larger than the tile rows, as ``best_config`` has it."""
    M, N = args["M"], args["N"]
    out = [dict(c, GROUP_M=min(c["GROUP_M"], max(M // c["BM"], 1))) for c in configs]
    return [c for c in out if M % c["BM"] == 0 and N % c["BN"] == 0]


def _tensor_maps(config: dict, args: dict) -> dict:
    """The TMA descriptors of one candidate: their boxes are its tiles."""
    M, N, K, dt = args["M"], args["N"], args["K"], args.get("DT", "float16")
    pa, pb = plans_for(M, N, K, dt, config)
    tc = c_plan(M, N, dt).param(args["C"]) if config.get("EPI") == "tma" else None
    return {"TA": pa.param(args["A"]), "TB": pb.param(args["B"]), "TC": tc}


def _tuned() -> Any:
    return T.autotune(
        gemm_tn,
        configs=CANDIDATES,
        key=["M", "N", "K", "DT"],
        prune_configs_by=_fits,
        prepare_args=_tensor_maps,
    )


#: ``best_config`` as one use of ``@T.autotune``: ``gemm_tuned(A, B, C, M=, N=, K=, DT=)``
#: times every fitting candidate on the call's own tensors (their TMA descriptors built per
#: candidate by ``prepare_args``), keeps the winner per shape and dtype on disk, and runs it;
#: ``gemm_tuned.best_config((M, N, K, DT))`` is the measured choice to set beside ``best_config``'s
gemm_tuned = _tuned()


KERNELS = {
    "gemm_f16_4096": lambda: make_gemm(4096, 4096, 4096, "float16", **best_config(4096, 4096, 4096)),
    "gemm_bf16_8192": lambda: make_gemm(8192, 8192, 8192, "bfloat16", **best_config(8192, 8192, 8192)),
    "gemm_f16_4096_cluster2": lambda: make_gemm(4096, 4096, 4096, "float16", CLUSTER=2),
    "gemm_bf16_4096_global_tmap": lambda: make_gemm(4096, 4096, 4096, "bfloat16", TMAP="global"),
    "gemm_f16_4096_tma_store": lambda: make_gemm(4096, 4096, 4096, "float16", EPI="tma", STAGES=4),
}
