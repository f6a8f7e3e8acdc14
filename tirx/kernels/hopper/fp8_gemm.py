# ruff: noqa: F821
# (M, N, K, DT in the @T.jit annotations are T.constexpr parameters, bound by .specialize)
"""Hopper FP8 GEMM with per-tensor scales: C = scale_a * scale_b * (A @ B^T), e4m3 in, bf16 out.

A: (M, K), B: (N, K) row-major fp8 (K-major, the only layout fp8 wgmma reads), C: (M, N)
bf16, SA / SB: one float32 each in device memory (``torch._scaled_mm``'s per-tensor
``scale_a`` / ``scale_b``).

The schedule is the one of ``gemm.py`` (its helpers are imported, not copied): a TMA
producer warpgroup feeding a ``STAGES``-deep ring of shared-memory stages, two wgmma
consumer warpgroups (``64 x BN`` each), a persistent grid in ``GROUP_M`` row-block order and
an optional 2-CTA cluster multicasting the shared B tile. What fp8 changes:

* a tile row of ``BK = 128`` fp8 elements is one 128-byte swizzle row, so the wgmma
  descriptors (``gemm.DESC_HI``) and their 32-byte K steps are the same as for fp16 at
  ``BK = 64``; each k-block is ``BK / 32`` ``wgmma.mma_async.m64n{BN}k32.f32.e4m3.e4m3``;
* the epilogue multiplies the fp32 accumulators by ``SA[0] * SB[0]`` before the bf16
  conversion. ``EPI="direct"`` stores them from registers (``gemm.store_rows``);
  ``EPI="tma"`` writes each consumer's ``64 x BN`` block in ``64 x 64`` chunks into two
  alternating 8 KiB shared-memory buffers (the 128-byte swizzled layout TMA reads:
  16-byte chunk ``c`` of row ``r`` at ``c ^ (r % 8)``, bank-conflict free), and one thread
  of the warpgroup stores each chunk with ``cp.async.bulk.tensor`` (tensor map ``TC``), so
  the warpgroup moves on to its next tile while the copy engine drains the output.
"""

from __future__ import annotations

import functools

from tirx.kernels.hopper.gemm import (
    check_registers,
    init_stages,
    kblock_descs,
    mma_kblock,
    produce,
    release,
    store_rows,
    store_tma,
    tile_origin,
)
from tirx.script import tirx as T


@T.jit
def fp8_gemm_tn(
    A: T.Tensor((M, K), DT),
    B: T.Tensor((N, K), DT),
    C: T.Tensor((M, N), "bfloat16"),
    SA: T.Tensor((1,), "float32"),
    SB: T.Tensor((1,), "float32"),
    TA: T.Ptr(T.uint8, "tensormap"),
    TB: T.Ptr(T.uint8, "tensormap"),
    TC: T.Ptr(T.uint8, "tensormap"),
    *,
    M: T.constexpr,
    N: T.constexpr,
    K: T.constexpr,
    DT: T.constexpr = "float8_e4m3fn",
    BM: T.constexpr = 128,
    BN: T.constexpr = 256,
    BK: T.constexpr = 128,
    STAGES: T.constexpr = 4,
    SMS: T.constexpr = 132,
    GROUP_M: T.constexpr = 8,
    PRODUCER_REGS: T.constexpr = 40,
    CONSUMER_REGS: T.constexpr = 232,
    CLUSTER: T.constexpr = 1,
    EPI: T.constexpr = "tma",
):
    T.static_assert(DT in ("float8_e4m3fn", "float8_e5m2"), "DT is float8_e4m3fn or float8_e5m2")
    T.static_assert(BK == 128, "BK must be 128 (one 128-byte swizzle row of fp8)")
    T.static_assert(M % BM == 0 and N % BN == 0 and K % BK == 0, "sizes must be multiples of the tile")
    T.static_assert(CLUSTER in (1, 2) and (M // BM) % CLUSTER == 0, "CLUSTER is 1 or 2 and divides M // BM")
    T.static_assert(BM % 64 == 0 and BN % 8 == 0 and 8 <= BN <= 256, "BM = 64 * consumers, BN in 8..256")
    T.static_assert(
        EPI == "direct" or (EPI == "tma" and BN % 128 == 0), "EPI is 'direct' or 'tma' (BN % 128 == 0)"
    )
    consumers = T.meta_var(BM // 64)
    check_registers(consumers, PRODUCER_REGS, CONSUMER_REGS)
    threads = T.meta_var(128 * (1 + consumers))
    a_bytes = T.meta_var(BM * BK)
    stage_bytes = T.meta_var(BM * BK + BN * BK)
    c_base = T.meta_var(STAGES * (BM * BK + BN * BK))  # EPI="tma": 2 x 8 KiB per consumer from here
    smem_bytes = T.meta_var(c_base + (consumers * 16384 if EPI == "tma" else 0) + 1024)
    T.static_assert(smem_bytes + 16 * STAGES <= 232448, "shared memory exceeds 227 KiB: fewer STAGES")
    mt = T.meta_var(M // BM // CLUSTER)  # row-blocks of CLUSTER tiles
    ctas = T.meta_var(min(SMS, (M // BM) * (N // BN)) // CLUSTER * CLUSTER)
    b_half = T.meta_var(BN // CLUSTER * BK)
    ntiles = T.meta_var((M // BM) * (N // BN) // CLUSTER)
    kb_n = T.meta_var(K // BK)
    group = T.meta_var(GROUP_M * (N // BN))
    ab = T.meta_var("e4m3" if DT == "float8_e4m3fn" else "e5m2")
    shape = T.meta_var(f"m64n{BN}k32")
    T.device_entry(
        launch=T.cuda.LaunchConfig(
            grid=ctas,
            block=threads,
            cluster=CLUSTER if CLUSTER > 1 else None,
            dynamic_smem_bytes=smem_bytes,
        ),
        attrs={"cuda.kernel_attrs": {"min_blocks_per_sm": 1}},
    )
    tx = T.cuda.thread_idx("x")
    wg = tx // 128
    rank = T.cuda.cta_rank() if CLUSTER > 1 else 0
    unit0 = T.cuda.block_idx("x") // CLUSTER
    units = T.cuda.grid_dim("x") // CLUSTER
    dsm = T.alloc_buffer((smem_bytes,), "uint8", scope="shared.dyn")
    full = T.alloc_shared((STAGES,), "uint64")
    empty = T.alloc_shared((STAGES,), "uint64")
    sbase = (T.ptx.cvta_to_shared(T.address_of(dsm[0])) + T.uint32(1023)) & T.uint32(0xFFFFFC00)
    if tx == 0:
        # one signature for both epilogues: TC is always a valid map
        init_stages(full, empty, STAGES, consumers * CLUSTER, [TA, TB, TC])
    if T.constexpr(CLUSTER > 1):
        T.cuda.cluster_sync()
    else:
        T.cuda.cta_sync()
    if wg == 0:
        T.ptx.setmaxnreg_dec(PRODUCER_REGS)
        if tx == 0:
            produce(full, empty, sbase, TA, TB, unit0, ntiles, units, group, mt, GROUP_M, CLUSTER, rank,
                    BM, BN, BK, STAGES, kb_n, stage_bytes, a_bytes, b_half)  # fmt: skip
    else:
        T.ptx.setmaxnreg_inc(CONSUMER_REGS)
        acc = T.alloc_local((BN // 2,), "float32")
        ctid = tx - 128 * wg
        warp = ctid // 32
        lane = ctid % 32
        scale = SA[0] * SB[0]
        it: T.int32 = 0
        for tile in range(unit0, ntiles, units):
            m0, n0 = tile_origin(tile, group, mt, GROUP_M, CLUSTER, rank, BM, BN)
            for kb in range(kb_n):
                s = it % STAGES
                while not T.ptx.mbarrier_try_wait_parity(T.address_of(full[s]), (it // STAGES) & 1):
                    pass
                sa = sbase + T.cast(s * stage_bytes, "uint32")
                da, db = kblock_descs(sa, wg, a_bytes)  # a k-block: 128 fp8, one 128-byte row
                T.ptx.wgmma_fence()
                mma_kblock(acc, da, db, BK // 32, shape, ab, T.cast(kb > 0, "int32"))  # 32 fp8 a step
                T.ptx.wgmma_commit_group()
                T.ptx.wgmma_wait_group(1)
                if kb > 0 and ctid == 0:
                    release(empty, (it + STAGES - 1) % STAGES, CLUSTER)
                it = it + 1
            T.ptx.wgmma_wait_group(0)
            if ctid == 0:
                release(empty, (it + STAGES - 1) % STAGES, CLUSTER)
            for i in range(BN // 2):
                acc[i] = acc[i] * scale
            if T.constexpr(EPI == "tma"):
                store_tma(
                    TC, acc, sbase + T.uint32(c_base + (wg - 1) * 16384), wg, ctid, m0, n0, BN, "bfloat16"
                )
            else:
                out = T.alloc_local((2,), "bfloat16")
                store_rows(
                    C,
                    acc,
                    out,
                    0,
                    m0 + (wg - 1) * 64 + warp * 16 + lane // 4,
                    n0 + (lane % 4) * 2,
                    BN,
                    "bfloat16",
                )
        if EPI == "tma" and ctid == 0:
            T.ptx.tma_store_wait(0)  # shared memory stays until the last copy has read it
    if T.constexpr(CLUSTER > 1):
        # no CTA leaves while its partner may still multicast into it or arrive on its barriers
        T.cuda.cluster_sync()


@functools.cache
def make_fp8_gemm(M: int, N: int, K: int, dtype: str = "float8_e4m3fn", **tiles):
    """The specialized kernel (a ``T.function``) for one problem size, fp8 dtype and tile set."""
    return fp8_gemm_tn.specialize(M=M, N=N, K=K, DT=dtype, **tiles)


def best_config(M: int, N: int, K: int) -> dict:
    """Tiles measured best on the H200 (docs/benchmarks.md, "FP8 GEMM"): 128x256x128, 4 stages,
    TMA-store epilogue; a 2-CTA cluster from 8192^2 outputs up (at 8192^3 106.5 % of
    ``torch._scaled_mm`` against 105.6 % without; at 4096^3 and 8192 x 1024 x 8192 1-2 points
    behind the plain kernel)."""
    cfg = dict(BM=128, BN=256, STAGES=4, GROUP_M=8, EPI="tma")
    if M * N >= 8192 * 8192 and (M // 128) % 2 == 0:
        cfg["CLUSTER"] = 2
    return cfg


def plans(
    M: int, N: int, K: int, dtype: str = "float8_e4m3fn", BM: int = 128, BN: int = 256, CLUSTER: int = 1
):
    """Host TMA plans of A, B and C: ``BM x 128`` and ``BN / CLUSTER x 128`` byte boxes of the
    fp8 inputs, ``64 x 64`` bf16 boxes of C (``EPI="tma"``), all 128-byte swizzled."""
    from tirx.runtime.tma import TensorMapPlan

    return (
        TensorMapPlan(dtype, (M, K), (BM, 128), 128),
        TensorMapPlan(dtype, (N, K), (BN // CLUSTER, 128), 128),
        TensorMapPlan("bfloat16", (M, N), (64, 64), 128),
    )


KERNELS = {
    "fp8_gemm_4096": lambda: make_fp8_gemm(4096, 4096, 4096, **best_config(4096, 4096, 4096)),
    "fp8_gemm_8192_cluster2": lambda: make_fp8_gemm(8192, 8192, 8192, **best_config(8192, 8192, 8192)),
    "fp8_gemm_4096_bn128": lambda: make_fp8_gemm(4096, 4096, 4096, BN=128, STAGES=6),
    "fp8_gemm_4096_direct": lambda: make_fp8_gemm(4096, 4096, 4096, EPI="direct"),
    "fp8_gemm_8192_direct_cluster2": lambda: make_fp8_gemm(8192, 8192, 8192, EPI="direct", CLUSTER=2),
    "fp8_gemm_e5m2_1024": lambda: make_fp8_gemm(1024, 1024, 1024, "float8_e5m2"),
}
