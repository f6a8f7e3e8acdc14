# ruff: noqa: B023
# (the timing lambdas run before the loop moves on)
"""The kernel library (tirx.kernels) against torch on the same GPU, in one run (issue #33).

    python tools/bench/bench_library.py [--quick] [--out DIR]

GEMM: ``tirx.kernels.linear(x, w)`` (x @ w.T, bf16 and fp16) against ``torch.matmul(x, w.t())``
(cuBLAS) on a grid with sizes that are no tile multiple, skinny M (decode), tall-skinny and
large-K shapes; FP8: ``tirx.kernels.scaled_matmul`` against ``torch._scaled_mm`` (bf16 out,
per-tensor scales) where torch takes the shape (dims multiples of 16). Each case is timed
paired and interleaved (tirx, torch, tirx, torch, ... on rotating input sets, CUDA events
around each launch, medians) after a correctness check against a float32 reference with the
output poisoned with NaN; the events time the GPU's work alone (each pair queued behind a
sleep kernel). Host cost: microseconds of Python per call (a loop of calls on tiny
shapes, the GPU never the bottleneck) for a cached shape and for a first call at a new shape
with the kernel already compiled, and for ``tirx.kernels.attention`` against SDPA.
Prints one row per case and the ratios (torch time / tirx time: > 1 is faster than torch).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

import torch  # noqa: E402

import tirx.kernels as K  # noqa: E402
from tirx.kernels import decode as KD  # noqa: E402
from tirx.kernels import gemm as MM  # noqa: E402

LOG: list[str] = []


def log(*a) -> None:
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.append(s)


def paired(fa, fb, sets: int, reps: int = 25, warm: int = 5) -> tuple[float, float]:
    """Median GPU ms of fa(i) and fb(i), interleaved launch by launch over rotating input sets.
    Each pair is queued behind a 0.2 ms sleep kernel, so the events time the GPU's work alone,
    not the host's time to issue it (measured apart: ``host_us``)."""
    for i in range(warm):
        fa(i % sets)
        fb(i % sets)
    ta, tb = [], []
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
    for i in range(reps):
        j = i % sets
        torch.cuda._sleep(400_000)
        ev[0].record()
        fa(j)
        ev[1].record()
        fb(j)
        ev[2].record()
        ev[2].synchronize()
        ta.append(ev[0].elapsed_time(ev[1]))
        tb.append(ev[1].elapsed_time(ev[2]))
    return statistics.median(ta), statistics.median(tb)


def rel(out, ref) -> float:
    return float((out.double() - ref.double()).norm() / ref.double().norm())


GEMM_GRID = [
    # (M, N, K): square and rectangular multiples, then non-multiples, skinny M, tall-skinny, large K
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (6144, 6144, 6144),
    (4096, 4096, 4000),
    (3000, 4096, 4096),
    (5000, 5000, 5000),
    (4095, 4097, 4096),
    (1, 4096, 4096),
    (16, 4096, 4096),
    (64, 8192, 8192),
    (128, 8192, 8192),
    (200, 12288, 4096),
    (16384, 1024, 1024),
    (65536, 128, 4096),
    (1024, 1024, 65536),
    (2048, 2048, 32768),
]
QUICK = [(4096, 4096, 4096), (4096, 4096, 4000), (3000, 4096, 4096), (16, 4096, 4096), (1024, 1024, 65536)]


def gemm_case(M: int, N: int, Kd: int, dt: str) -> tuple:
    dtype = getattr(torch, dt)
    sets = 2 if M * Kd + N * Kd < (1 << 28) else 1
    xs = [torch.randn(M, Kd, device="cuda", dtype=dtype) for _ in range(sets)]
    ws = [torch.randn(N, Kd, device="cuda", dtype=dtype) / Kd**0.5 for _ in range(sets)]
    out = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
    K.linear(xs[0], ws[0], out=out)
    err = rel(out, xs[0].float() @ ws[0].float().t())
    tt, tc = paired(lambda i: K.linear(xs[i], ws[i], out=out), lambda i: torch.matmul(xs[i], ws[i].t()), sets)
    tf = 2 * M * N * Kd / (tt * 1e-3) / 1e12
    cfg = MM.swap_config(M) if MM.swapped(M, N, dt, False, False, None) else MM.config(M, N, Kd, dt)
    what = "swapped " if cfg.get("TRANS_C") else ""
    log(
        f"gemm {dt:8s} {M:>6}x{N:<6}x{Kd:<6} err {err:.1e}  tirx {tt:8.4f} ms {tf:6.1f} TFLOP/s  "
        f"torch {tc:8.4f} ms  torch/tirx {tc / tt:6.3f}  tiles {what}{cfg['BM']}x{cfg['BN']} {cfg['EPI']}"
    )
    return err, tc / tt


def fixed_case(S: int, dt: str = "bfloat16") -> None:
    """The cost of shape freedom: the fixed-shape kernel (gemm.py, sizes compiled in,
    ``best_config``) against the any-shape one on the same inputs, both GPU-only."""
    import tirx
    from tirx.kernels.hopper import gemm as G

    dtype = getattr(torch, dt)
    x = torch.randn(S, S, device="cuda", dtype=dtype)
    w = torch.randn(S, S, device="cuda", dtype=dtype) / S**0.5
    out = torch.empty(S, S, device="cuda", dtype=dtype)
    cfg = G.best_config(S, S, S, dt)
    k = tirx.compile(G.make_gemm(S, S, S, dt, **cfg), target="cuda")
    pa, pb = G.plans_for(S, S, S, dt, cfg)
    args = (x, w, out, pa.param(x), pb.param(w), G.c_plan(S, S, dt).param(out))
    tf, ta = paired(lambda i: k(*args), lambda i: K.linear(x, w, out=out), 1)
    log(f"fixed {dt} {S}^3: gemm.py best_config {tf:.4f} ms, any-shape {ta:.4f} ms, fixed/any {tf / ta:.3f}")


def decode_variant(M: int, N: int, Kd: int, dt: str = "bfloat16") -> None:
    """Skinny M: the default tiles (64 x BN) against 64 x 32 tiles with 12 stages and the
    direct epilogue (twice the CTAs streaming B), GPU-only, and torch."""
    from tirx.kernels._host import tensor_map

    dtype = getattr(torch, dt)
    x = torch.randn(M, Kd, device="cuda", dtype=dtype)
    w = torch.randn(N, Kd, device="cuda", dtype=dtype) / Kd**0.5
    out = torch.empty(M, N, device="cuda", dtype=dtype)
    cfg = dict(MM.config(M, N, Kd, dt), BN=32, STAGES=12, EPI="direct")
    k = MM._kernel(dt, tuple(sorted(cfg.items())))
    ta, tb = tensor_map(x, M, Kd, (64, 64), dt), tensor_map(w, N, Kd, (32, 64), dt)
    k(M, N, Kd, ta, tb, out)
    err = rel(out, x.float() @ w.float().t())
    tv, td = paired(lambda i: k(M, N, Kd, ta, tb, out), lambda i: K.linear(x, w, out=out), 1)
    _, tt = paired(lambda i: None, lambda i: torch.matmul(x, w.t(), out=out), 1)
    log(
        f"decode {dt} {M}x{N}x{Kd}: 64x32 direct {tv:.4f} ms (err {err:.1e}), default "
        f"{MM.config(M, N, Kd, dt)['BN']} {td:.4f} ms, torch {tt:.4f} ms; torch/64x32 {tt / tv:.3f}, "
        f"torch/default {tt / td:.3f}"
    )


def splitk_case(M: int, N: int, Kd: int, dt: str = "bfloat16") -> None:
    """Split-K: the kernel with its k-blocks shared by 1, 2, 4, 8 work units per tile (the
    float32 sum zeroed and converted by the host, timed with it) against torch, GPU-only."""
    dtype = getattr(torch, dt)
    x = torch.randn(M, Kd, device="cuda", dtype=dtype)
    w = torch.randn(N, Kd, device="cuda", dtype=dtype) / Kd**0.5
    out = torch.empty(M, N, device="cuda", dtype=dtype)
    ref = x.float() @ w.float().t()
    cells = []
    for split in (1, 2, 4, 8):
        MM._gemm(x, w, out, dt, split_k=split)
        err = rel(out, ref)
        ts, tt = paired(
            lambda i, s=split: MM._gemm(x, w, out, dt, split_k=s), lambda i: torch.matmul(x, w.t()), 1
        )
        cells.append(f"split {split}: {ts:.4f} ms torch/tirx {tt / ts:.3f} (err {err:.1e})")
    cfg = MM.config(M, N, Kd, dt)
    tiles = MM.tiles(M, N, cfg)
    log(f"splitk {dt} {M}x{N}x{Kd} ({tiles} tiles): " + "; ".join(cells))


def gemv_case(N: int, Kd: int, dt: str = "bfloat16") -> None:
    """Decode: the GEMV (one warp per row of w; block x unroll variants) against the
    tensor-core kernel and torch for M = 1 to 16 rows, GPU-only; prints the fastest GEMV variant
    and the weight's streaming rate (bytes of w over the time). The launches rotate over as
    many weights as make 256 MiB (5x the H100's L2), so every launch streams its weight from
    HBM as a decode step does (a new layer's weight each time): one weight reused launch after
    launch stays partly in L2 and overstates the rate (the first run of this bench did that)."""
    import tirx
    from tirx.kernels.hopper.gemv import MAX_M, make_gemv, make_gemv_mma

    dtype = getattr(torch, dt)
    sets = max(1, min(16, -(-(256 << 20) // (N * Kd * 2))))
    ws = [torch.randn(N, Kd, device="cuda", dtype=dtype) / Kd**0.5 for _ in range(sets)]
    w = ws[0]
    for M in (1, 2, 4, 8, 16):
        x = torch.randn(M, Kd, device="cuda", dtype=dtype)
        out = torch.empty(M, N, device="cuda", dtype=dtype)
        ref = x.float() @ w.float().t()
        cells = []
        best = None
        auto = MM.gemv_config(N)
        shapes = [
            (128, 4, 1), (128, 2, 1), (256, 4, 1), (128, 8, 1), (128, 16, 1), (128, 4, 2), (128, 4, 4),
            (128, 8, 4), (256, 4, 8),
        ]  # fmt: skip
        for block, unroll, split in ([auto] + [v for v in shapes if v != auto]) if M <= MAX_M else ():
            k = tirx.compile(make_gemv(dt, M, block, unroll, split), target="cuda")
            out.fill_(float("nan"))
            k(x, w, out)
            err = rel(out, ref)
            tv, tt = paired(lambda i: k(x, ws[i], out), lambda i: torch.matmul(x, ws[i].t()), sets)
            tag = f"{block}x{unroll}/{split}" + (" (auto)" if (block, unroll, split) == auto else "")
            cells.append(f"{tag} {tv:.4f} ({tt / tv:.3f}, err {err:.0e})")
            if best is None or tv < best[0]:
                best = (tv, tag)
        mcells = []
        mbest = None
        for warps, unroll in ((4, 2), (8, 2), (16, 2), (8, 4), (16, 4), (16, 8)) if M <= 8 else ():
            k = tirx.compile(make_gemv_mma(dt, M, warps, unroll), target="cuda")
            out.fill_(float("nan"))
            k(x, w, out)
            err = rel(out, ref)
            tv, tt = paired(lambda i: k(x, ws[i], out), lambda i: torch.matmul(x, ws[i].t()), sets)
            mcells.append(f"mma {warps}w x{unroll} {tv:.4f} ({tt / tv:.3f}, err {err:.0e})")
            if mbest is None or tv < mbest[0]:
                mbest = (tv, f"mma {warps}w x{unroll}")
        cfg = MM.config(M, N, Kd, dt)
        kt = MM._kernel(dt, tuple(sorted(cfg.items())))
        from tirx.kernels._host import tensor_map

        ta = tensor_map(x, M, Kd, (cfg["BM"], 64), dt)
        tc_ = tensor_map(out, M, N, (64, 64), dt)
        targs = [
            (M, N, Kd, ta, tensor_map(wi, N, Kd, (cfg["BN"], 64), dt))
            + ((tc_, out) if cfg["EPI"] == "tma" else (out,))
            for wi in ws
        ]
        tc, tt = paired(lambda i: kt(*targs[i]), lambda i: torch.matmul(x, ws[i].t()), sets)
        gbs = N * Kd * 2 / (best[0] * 1e-3) / 1e9 if best else 0.0
        log(
            f"gemv {dt} {M}x{N}x{Kd} ({sets} weights): torch {tt:.4f} ms; tensor-core {tc:.4f} ms (torch/tc {tt / tc:.3f})"
            + (
                f"; best gemv {best[1]} {best[0]:.4f} ms (torch/gemv {tt / best[0]:.3f}, {gbs:.0f} GB/s)"
                if best
                else ""
            )
            + (f"; best mma {mbest[1]} {mbest[0]:.4f} ms (torch/mma {tt / mbest[0]:.3f})" if mbest else "")
            + ("; " + "; ".join(cells + mcells) if cells or mcells else "")
        )


def fp8_case(M: int, N: int, Kd: int) -> tuple:
    if Kd % 16:  # fp8 rows must be 16-byte aligned for TMA (and for torch._scaled_mm)
        return None, None
    a = (torch.randn(M, Kd, device="cuda") * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(N, Kd, device="cuda") * 2).to(torch.float8_e4m3fn)
    sa = torch.tensor([0.5], device="cuda")
    sb = torch.tensor([0.25], device="cuda")
    out = K.scaled_matmul(a, b.t(), sa, sb)
    err = rel(out, (a.float() @ b.float().t()) * 0.125)
    torch_ok = M % 16 == 0 and N % 16 == 0
    if not torch_ok:
        tt, _ = paired(lambda i: K.scaled_matmul(a, b.t(), sa, sb), lambda i: None, 1)
        log(
            f"fp8  e4m3     {M:>6}x{N:<6}x{Kd:<6} err {err:.1e}  tirx {tt:8.4f} ms  (torch._scaled_mm refuses this shape)"
        )
        return err, None
    tt, tc = paired(
        lambda i: K.scaled_matmul(a, b.t(), sa, sb),
        lambda i: torch._scaled_mm(a, b.t(), sa, sb, out_dtype=torch.bfloat16),
        1,
    )
    tf = 2 * M * N * Kd / (tt * 1e-3) / 1e12
    log(
        f"fp8  e4m3     {M:>6}x{N:<6}x{Kd:<6} err {err:.1e}  tirx {tt:8.4f} ms {tf:6.1f} TFLOP/s  "
        f"torch {tc:8.4f} ms  torch/tirx {tc / tt:6.3f}"
    )
    return err, tc / tt


def fp8_block_case(M: int, N: int, Kd: int) -> None:
    """``scaled_matmul`` with DeepGEMM's block scales (``(M, K/128)`` and ``(K/128, N/128)``)
    against ``torch._scaled_mm`` with per-tensor scales (the same product without the per-block
    promotion: what block scales cost) and, where this torch takes them, its blockwise scales."""
    a = (torch.randn(M, Kd, device="cuda") * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(N, Kd, device="cuda") * 2).to(torch.float8_e4m3fn)
    kb, nb = -(-Kd // 128), -(-N // 128)
    sa = torch.rand(M, kb, device="cuda") + 0.5
    sb = torch.rand(kb, nb, device="cuda") + 0.5
    out = K.scaled_matmul(a, b.t(), sa, sb)
    af = a.float() * sa.repeat_interleave(128, 1)[:, :Kd]
    bf = b.float() * sb.t().repeat_interleave(128, 0).repeat_interleave(128, 1)[:N, :Kd]
    err = rel(out, af @ bf.t())
    one = torch.tensor([1.0], device="cuda")
    tt, tc = paired(
        lambda i: K.scaled_matmul(a, b.t(), sa, sb),
        lambda i: torch._scaled_mm(a, b.t(), one, one, out_dtype=torch.bfloat16),
        1,
    )
    tf = 2 * M * N * Kd / (tt * 1e-3) / 1e12
    blk = ""
    try:  # torch's blockwise form wants the scales outer-dim-major
        sat, sbt = sa.t().contiguous().t(), sb.t().contiguous().t()
        torch._scaled_mm(a, b.t(), sat, sbt, out_dtype=torch.bfloat16)
        _, tbw = paired(
            lambda i: K.scaled_matmul(a, b.t(), sa, sb),
            lambda i: torch._scaled_mm(a, b.t(), sat, sbt, out_dtype=torch.bfloat16),
            1,
        )
        blk = f"  torch blockwise {tbw:8.4f} ms  ratio {tbw / tt:6.3f}"
    except Exception as e:  # an older torch: no blockwise scales
        blk = f"  (torch blockwise: {type(e).__name__})"
    log(
        f"fp8 blocks    {M:>6}x{N:<6}x{Kd:<6} err {err:.1e}  tirx {tt:8.4f} ms {tf:6.1f} TFLOP/s  "
        f"torch per-tensor {tc:8.4f} ms  ratio {tc / tt:6.3f}{blk}"
    )


def host_us(fn, n: int = 400) -> float:
    """Microseconds of host time per call (calls queue up on the GPU; tiny shapes keep it ahead)."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def host_section() -> None:
    x = torch.randn(64, 256, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(64, 256, device="cuda", dtype=torch.bfloat16)
    tl = host_us(lambda: K.linear(x, w, out=out))
    tt = host_us(lambda: torch.matmul(x, w.t(), out=out))
    log(f"host: linear, cached shape        {tl:7.1f} us/call   torch.matmul {tt:7.1f} us/call")
    # a first call at a new shape, kernel compiled: new descriptors, no compile
    news = []
    for m in range(1, 41):
        xm = torch.randn(m, 256, device="cuda", dtype=torch.bfloat16)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        K.linear(xm, w)
        news.append((time.perf_counter() - t0) * 1e6)
    log(
        f"host: linear, new M (1..40) median {statistics.median(news[8:]):7.1f} us/call (first {news[0]:.0f} us)"
    )
    q, k, v = (torch.randn(1, 8, 256, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ta = host_us(lambda: K.attention(q, k, v), 200)
    ts = host_us(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v), 200)
    log(f"host: attention, cached shape     {ta:7.1f} us/call   SDPA {ts:7.1f} us/call")
    # where an attention call's host time goes: the launch of prepared arguments, building them,
    # the output's allocation, the checks and lookups (the rest)
    from tirx.kernels import attn as AH

    cfg, key = AH._best(256, 128, False)
    kern = AH._compiled(1, 8, 256, 128, False, "bfloat16", key)
    o = torch.empty_like(q)
    args = AH.launch_args(q, k, v, o, **cfg)
    al = host_us(lambda: kern(*args), 200)
    ab = host_us(lambda: AH.launch_args(q, k, v, o, **cfg), 200)
    ae = host_us(lambda: torch.empty_like(q), 200)
    from tirx.kernels._host import check_cuda

    ac = host_us(lambda: check_cuda("q", q, ("float16", "bfloat16"), 4), 200)
    ak = host_us(lambda: AH._compiled(1, 8, 256, 128, False, "bfloat16", key), 200)
    ad = host_us(lambda: AH.attention(q, k, v), 200)
    log(
        f"host: attention parts: launch {al:.1f} us, launch_args {ab:.1f} us, empty_like {ae:.1f} us, "
        f"rest {ta - al - ab - ae:.1f} us (one check_cuda {ac:.1f} us, the kernel's lookup {ak:.1f} us; "
        f"the call without the package's attribute lookup {ad:.1f} us)"
    )
    # and a linear call's: the launch of prepared arguments against the whole call
    from tirx.kernels._host import tensor_map

    cfg = MM.config(64, 256, 256, "bfloat16")
    kl = MM._kernel("bfloat16", tuple(sorted(cfg.items())))
    ta_ = tensor_map(x, 64, 256, (cfg["BM"], 64), "bfloat16")
    tb_ = tensor_map(w, 256, 256, (cfg["BN"], 64), "bfloat16")
    tc_ = tensor_map(out, 64, 256, (64, 64), "bfloat16")
    tk = host_us(lambda: kl(64, 256, 256, ta_, tb_, tc_, out), 200)
    log(f"host: linear parts: launch {tk:.1f} us of {tl:.1f} us")
    # where the Python time goes (cProfile's own time per function, the top ones)
    import cProfile
    import io
    import pstats

    for what, fn, n in (
        ("attention, cached shape", lambda i: K.attention(q, k, v), 300),
        ("linear, cached shape", lambda i: K.linear(x, w, out=out), 300),
        ("linear, new M", lambda i: K.linear(xs_new[i], w), 32),
    ):
        xs_new = [torch.randn(100 + m, 256, device="cuda", dtype=torch.bfloat16) for m in range(32)]
        torch.cuda.synchronize()
        pr = cProfile.Profile()
        pr.enable()
        for i in range(n):
            fn(i)
        pr.disable()
        torch.cuda.synchronize()
        buf = io.StringIO()
        pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(12)
        log(f"host profile: {what}, {n} calls\n" + buf.getvalue().split("\n\n", 1)[-1].rstrip())


def decode_section() -> None:
    """``decode_attention`` (one query row per head, a full cache) against SDPA with the same
    grouped K / V heads (``enable_gqa``), GPU-only, paired; the cache's bytes over the time."""
    for B, H, HKV, L, D in (
        (1, 32, 8, 4096, 128),
        (1, 32, 8, 32768, 128),
        (8, 32, 8, 8192, 128),
        (16, 32, 32, 2048, 128),
        (4, 64, 8, 16384, 128),
        (32, 16, 2, 1024, 64),
        (1, 8, 1, 65536, 128),
    ):
        q = torch.randn(B, H, D, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(B, HKV, L, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        o = K.decode_attention(q, k, v)
        sdpa = torch.nn.functional.scaled_dot_product_attention
        ref = sdpa(q[:, :, None].float(), k.float(), v.float(), enable_gqa=True)[:, :, 0]
        err = rel(o, ref)
        tt, ts = paired(
            lambda i: K.decode_attention(q, k, v), lambda i: sdpa(q[:, :, None], k, v, enable_gqa=True), 1
        )
        gbs = 2 * k.numel() * 2 / (tt * 1e-3) / 1e9
        log(
            f"decode {B}x{H}/{HKV}x{L}x{D}: err {err:.1e}  tirx {tt:.4f} ms ({gbs:.0f} GB/s)  SDPA {ts:.4f} ms"
            f"  SDPA/tirx {ts / tt:6.3f}  (chunk {KD.decode_chunk(L, B * HKV, D)} keys)"
        )
        sweep = []  # the chunk rule's aims (CTAs per SM, longest chunk), each against the same SDPA run
        default = KD.CTAS_PER_SM, KD.CHUNK_ELEMS
        for per_sm, elems in ((1, 90_112), (4, 90_112), (2, 45_056), (2, 180_224), (2, 1 << 30)):
            KD.CTAS_PER_SM, KD.CHUNK_ELEMS = per_sm, elems
            KD.decode_chunk.cache_clear()
            tv, _ = paired(lambda i: K.decode_attention(q, k, v), lambda i: None, 1)
            top = "any" if elems >= 1 << 30 else f"{elems // D}"
            sweep.append(f"{per_sm}/SM <={top}: {KD.decode_chunk(L, B * HKV, D)} keys {ts / tv:.3f}")
        KD.CTAS_PER_SM, KD.CHUNK_ELEMS = default
        KD.decode_chunk.cache_clear()
        log("  chunk aims (SDPA/tirx): " + "; ".join(sweep))
        if L % 16 == 0 and B * L <= 1 << 17:  # the same cache paged: 16-key pages in a shuffled pool
            npg = L // 16
            bt = torch.randperm(B * npg, device="cuda").to(torch.int32).view(B, npg).contiguous()
            kc, vc = (torch.empty(B * npg, 16, HKV, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
            kc[bt.view(-1).long()] = (
                k.view(B, HKV, npg, 16, D).permute(0, 2, 3, 1, 4).reshape(B * npg, 16, HKV, D)
            )
            vc[bt.view(-1).long()] = (
                v.view(B, HKV, npg, 16, D).permute(0, 2, 3, 1, 4).reshape(B * npg, 16, HKV, D)
            )
            po = K.decode_attention(q, kc, vc, block_table=bt)
            tp, _ = paired(lambda i: K.decode_attention(q, kc, vc, block_table=bt), lambda i: None, 1)
            log(
                f"  paged (16-key pages): err vs contiguous {rel(po, o):.1e}  tirx {tp:.4f} ms  SDPA/tirx {ts / tp:6.3f}"
            )


def attention_section(quick: bool) -> None:
    from attn_grid import GRID as shapes

    for B, H, S, D, causal in shapes[:2] if quick else shapes:
        q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        o = K.attention(q, k, v, causal=causal)
        ref = torch.nn.functional.scaled_dot_product_attention(
            q.float(), k.float(), v.float(), is_causal=causal
        )
        err = rel(o, ref)
        tt, ts = paired(
            lambda i: K.attention(q, k, v, causal=causal),
            lambda i: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal),
            1,
        )
        log(
            f"attn {B}x{H}x{S}x{D} causal={causal!s:5}: err {err:.1e}  tirx {tt:.4f} ms  SDPA {ts:.4f} ms  SDPA/tirx {ts / tt:6.3f}"
        )


VARLEN_GRID = [
    # (sequences, shortest, longest, H, HKV, D, causal): lengths uniform in [shortest, longest]
    (16, 256, 4096, 16, 16, 128, True),
    (16, 256, 4096, 16, 16, 128, False),
    (64, 64, 1024, 32, 8, 128, True),
    (32, 128, 2048, 16, 16, 64, False),
    (8, 1000, 3000, 8, 8, 256, True),
    (128, 16, 256, 16, 16, 128, True),  # many short sequences (a prefill batch of prompts)
    (128, 16, 256, 16, 16, 128, False),
]
#: tile sets timed besides ``config_varlen``'s on the short-sequence cases
VARLEN_SHORT_TILES = (dict(BM=64, BN=64, STAGES=2), dict(BM=64, BN=128, STAGES=2))


def varlen_section() -> None:
    """``tirx.kernels.attention_varlen`` against SDPA on torch's jagged nested tensors (the
    packed sequences as one ``(B, H, j, D)`` batch: torch's variable-length path), GPU time."""
    g = torch.Generator().manual_seed(0)
    for nb, lo, hi, H, hkv, D, causal in VARLEN_GRID:
        lens = torch.randint(lo, hi + 1, (nb,), generator=g).tolist()
        cq = [0]
        for n in lens:
            cq.append(cq[-1] + n)
        cu = torch.tensor(cq, device="cuda", dtype=torch.int32)
        tot = cq[-1]
        q = torch.randn(tot, H, D, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(tot, hkv, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        mx = max(lens)
        off = cu.long()
        nt = [
            torch.nested.nested_tensor_from_jagged(t, off, max_seqlen=mx).transpose(1, 2)
            for t in (
                q,
                k.repeat_interleave(H // hkv, 1) if hkv != H else k,
                v.repeat_interleave(H // hkv, 1) if hkv != H else v,
            )
        ]

        def sd(i, nt=nt, causal=causal):
            return torch.nn.functional.scaled_dot_product_attention(*nt, is_causal=causal)

        ref = sd(0).transpose(1, 2).values()
        for tiles in ({}, *(VARLEN_SHORT_TILES if hi <= 256 else ())):
            o = K.attention_varlen(q, k, v, cu, max_seqlen_q=mx, causal=causal, **tiles)
            err = rel(o, ref)
            tt, ts = paired(
                lambda i: K.attention_varlen(q, k, v, cu, max_seqlen_q=mx, causal=causal, **tiles), sd, 1
            )
            log(
                f"varlen {nb} seqs {lo}..{hi} (tokens {tot}) H {H}/{hkv} D {D} causal={causal!s:5}: err {err:.1e}  "
                f"tirx {tt:.4f} ms  SDPA(jagged) {ts:.4f} ms  SDPA/tirx {ts / tt:6.3f}  {tiles or 'config_varlen'}"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument(
        "--only",
        choices=(
            "gemm",
            "fp8",
            "fp8blocks",
            "host",
            "attn",
            "varlen",
            "variants",
            "splitk",
            "gemv",
            "decode",
        ),
        default=None,
    )
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    log(
        f"device: {torch.cuda.get_device_name()} torch {torch.__version__} date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    t0 = time.time()
    grid = QUICK if a.quick else GEMM_GRID
    ratios = []
    if a.only in (None, "host"):
        host_section()
    if a.only in (None, "gemm"):
        for dt in ("bfloat16", "float16"):  # the whole grid in bf16, the quick one in fp16
            for M, N, Kd in grid if dt == "bfloat16" else QUICK:
                ratios.append(gemm_case(M, N, Kd, dt)[1])
        log(
            f"gemm: torch/tirx geometric mean {statistics.geometric_mean(ratios):.3f} over {len(ratios)} cases, min {min(ratios):.3f}"
        )
    if a.only in (None, "variants"):
        for S in (4096, 8192):
            fixed_case(S)
        for M, N, Kd in ((1, 4096, 4096), (16, 4096, 4096), (64, 8192, 8192), (8, 14336, 4096)):
            decode_variant(M, N, Kd)
    if a.only in (None, "splitk"):
        for M, N, Kd in ((1, 4096, 4096), (16, 4096, 4096), (1, 8192, 8192), (64, 8192, 8192),
                         (1024, 1024, 65536), (200, 12288, 4096), (128, 1024, 16384)):  # fmt: skip
            splitk_case(M, N, Kd)
    if a.only in (None, "gemv"):
        for N, Kd in ((4096, 4096), (14336, 4096), (4096, 14336), (1024, 8192), (128256, 4096)):
            gemv_case(N, Kd)
    if a.only in (None, "fp8"):
        fr = [r for M, N, Kd in grid if (r := fp8_case(M, N, Kd)[1]) is not None]
        if fr:
            log(
                f"fp8: torch/tirx geometric mean {statistics.geometric_mean(fr):.3f} over {len(fr)} cases, min {min(fr):.3f}"
            )
    if a.only in (None, "fp8blocks"):
        for M, N, Kd in (
            (4096, 4096, 4096),
            (8192, 8192, 8192),
            (64, 7168, 2048),
            (4096, 7168, 2048),
            (3000, 4096, 1024),
        ):
            fp8_block_case(M, N, Kd)
    if a.only in (None, "attn"):
        attention_section(a.quick)
    if a.only in (None, "varlen"):
        varlen_section()
    if a.only in (None, "decode"):
        decode_section()
    log(f"compiled kernels: {MM._kernel.cache_info().currsize}; wall {time.time() - t0:.0f} s")
    if a.out:
        with open(os.path.join(a.out, "bench_library.log"), "w") as fh:
            fh.write("\n".join(LOG) + "\n")


if __name__ == "__main__":
    main()
