# ruff: noqa: B023
# (the timing lambdas are run by bench() before the loop moves on)
"""tirx attention forward (tirx/kernels/hopper/attention.py) vs torch SDPA, side by side in one run.

    python tools/bench/bench_attention.py [--out DIR] [--quick | --sched]

For every shape (batch, heads, seq, head_dim) and mask: correctness of each tirx variant on
fresh random bf16 inputs (output poisoned with NaN first; relative L2 error against a float32
SDPA reference; torch's own bf16 error beside it), then the median time over rotating input
sets (CUDA events per launch, after warm-up) of torch SDPA (its default backend choice, and
the flash / cuDNN / efficient backends forced one at a time) and of each tirx variant.
TFLOP/s = 4 * b * h * s^2 * d (halved for causal) / time. With ``--out`` the SASS of each
tirx kernel (HGMMA / local-memory counts) and the full log go there. ``--sched``: only the
tile schedulers side by side, ``best_config`` with ``SCHED`` = ``"grid"`` (the default),
``"lpt"``, ``"persistent"`` and ``"dynamic"`` (``"dynamic"`` also head by head, ``HEADS_L2=1``,
and with 2 stages for head dim 128), SASS counts of every variant with ``--out``; the table then
lists every variant, not only the best. Two versions or variants against each other: the
paired ``ab_attention.py`` (interleaved launch by launch, so the clock drift of a loaded GPU
cancels; ``--baseline FILE`` for another version of the module).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from bench_hopper import bench, rel, sass_check  # noqa: E402  (CUDA-event timing and relative L2 error)

import tirx  # noqa: E402
from tirx.kernels import attn as AH  # noqa: E402
from tirx.kernels.hopper import attention as A  # noqa: E402

LOG: list[str] = []
ROWS: list[tuple] = []


def log(*a) -> None:
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.append(s)


def backends():
    """(name, context factory) for torch SDPA: the default choice, then each backend forced."""
    out = [("torch default", None)]
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        for name, be in (
            ("flash", SDPBackend.FLASH_ATTENTION),
            ("cudnn", getattr(SDPBackend, "CUDNN_ATTENTION", None)),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION),
        ):
            if be is not None:
                out.append((f"torch {name}", lambda be=be: sdpa_kernel(be)))
    except ImportError:
        pass
    return out


def sass_counts(k, name: str, out: str | None) -> str:
    return sass_check(k, name, out, ("HGMMA", "tnspB", "LDL", "STL", "MUFU.EX2", "USETMAXREG"))


def sched_variants(d: int) -> list[dict]:
    """``best_config`` under each tile scheduler (the default grid first)."""
    best = A.best_config(d)
    vs = [best] + [dict(best, SCHED=sc) for sc in ("lpt", "persistent", "dynamic")]
    vs.append(dict(best, SCHED="dynamic", HEADS_L2=1))  # head by head (the grid's order)
    if d == 128:
        vs.append(dict(best, SCHED="dynamic", STAGES=2))
    return vs


def variants(d: int, quick: bool) -> list[dict]:
    """The measured-best schedule first, then the simple one (step 1) and the alternatives."""
    best = A.best_config(d)
    plain = dict(BM=128, BN=128, PINGPONG=False, OVERLAP=False)
    vs = [best, dict(plain, STAGES=2)]
    if quick:
        return vs
    if d == 128:
        vs += [
            dict(plain, STAGES=3, PINGPONG=True),
            dict(plain, STAGES=3, OVERLAP=True),
            dict(plain, STAGES=2, PINGPONG=True, OVERLAP=True),
            dict(plain, BN=176, STAGES=2, PINGPONG=True, OVERLAP=True),
        ]
    else:
        vs += [
            dict(plain, STAGES=3, PINGPONG=True, OVERLAP=True),
            dict(plain, STAGES=4, PINGPONG=True),
            dict(plain, BN=176, STAGES=3, PINGPONG=True),
            dict(plain, BM=192, STAGES=4, OVERLAP=True, CONSUMER_REGS=160),
            dict(plain, BM=192, STAGES=4, PINGPONG=True, OVERLAP=True, CONSUMER_REGS=160),
            dict(plain, BM=192, STAGES=4, PINGPONG=True, CONSUMER_REGS=160),
        ]
    return vs


def check_small() -> bool:
    """A few small problems first (fail fast, before the large timings)."""
    ok = True
    for b, h, s, d, causal, cfg in (
        (1, 2, 256, 128, False, {}),
        (1, 2, 256, 128, True, {}),
        (2, 3, 512, 64, True, {}),
        (1, 2, 384, 128, True, {"BM": 64, "BN": 64}),
        (1, 2, 512, 128, True, {"OVERLAP": True}),
        (1, 2, 512, 64, False, {"OVERLAP": True, "STAGES": 3}),
        (1, 2, 128, 128, True, {"PINGPONG": True, "OVERLAP": True}),
        (2, 2, 640, 128, True, {"PINGPONG": True}),
        (2, 2, 1024, 128, False, {"PINGPONG": True, "OVERLAP": True, "STAGES": 3}),
        (1, 3, 768, 64, True, {"PINGPONG": True, "OVERLAP": True, "STAGES": 4}),
        (2, 2, 400, 128, False, {"BN": 176, "PINGPONG": True, "OVERLAP": True}),  # ragged keys and queries
        (2, 2, 528, 128, True, {"BN": 176, "PINGPONG": True, "OVERLAP": True}),
        (2, 3, 640, 64, False, {"BM": 192, "STAGES": 4, "OVERLAP": True, "CONSUMER_REGS": 160}),
        (
            2,
            3,
            640,
            64,
            True,
            {"BM": 192, "STAGES": 4, "PINGPONG": True, "OVERLAP": True, "CONSUMER_REGS": 160},
        ),
        (1, 2, 1024, 64, False, {"BM": 192, "STAGES": 4, "PINGPONG": True, "CONSUMER_REGS": 160}),
        # tile schedulers: several tiles per CTA (SMS), partial L2 head groups (HEADS_L2)
        (2, 5, 528, 128, True, dict(A.best_config(128), SCHED="persistent", SMS=7, HEADS_L2=3)),
        (2, 5, 528, 128, True, dict(A.best_config(128), SCHED="lpt", HEADS_L2=3)),
        (2, 3, 640, 64, True, dict(A.best_config(64), SCHED="persistent", SMS=3)),
        (1, 3, 384, 128, True, {"STAGES": 2, "SCHED": "persistent", "SMS": 2}),
        (2, 5, 528, 128, True, dict(A.best_config(128), SCHED="dynamic", SMS=7, HEADS_L2=3)),
        (2, 3, 640, 64, True, dict(A.best_config(64), SCHED="dynamic", SMS=3)),
        (1, 3, 384, 128, False, {"STAGES": 2, "SCHED": "dynamic", "SMS": 2}),
    ):
        q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        o = torch.full_like(q, float("nan"))
        kern = tirx.compile(A.make_attention(b, h, s, d, causal, **cfg), target="cuda")
        AH.run(kern, q, k, v, o, BM=cfg.get("BM", 128), BN=cfg.get("BN", 128), SCHED=cfg.get("SCHED", "grid"))
        torch.cuda.synchronize()
        ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
        err = rel(o, ref)
        good = err < 2e-2
        ok = ok and good
        log(f"small {b}x{h}x{s}x{d} causal={causal} {cfg}: rel err {err:.2e} {'ok' if good else 'WRONG'}")
    return ok


def section(b: int, h: int, s: int, d: int, causal: bool, out: str | None, quick: bool, sched: bool) -> None:
    sets = 2
    Qs = [torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
    Ks = [torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
    Vs = [torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
    Os = [torch.empty_like(Qs[0]) for _ in range(sets)]
    flops = 4 * b * h * s * s * d / (2 if causal else 1)
    shape = f"{b}x{h}x{s}x{d}{' causal' if causal else ''}"
    # correctness inputs (fresh) and the float32 reference
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    t_err = rel(F.scaled_dot_product_attention(q, k, v, is_causal=causal), ref)
    best_t = None
    for name, ctx in backends():
        try:
            if ctx is None:
                ms = bench(
                    lambda i: F.scaled_dot_product_attention(Qs[i], Ks[i], Vs[i], is_causal=causal), sets
                )
            else:
                with ctx():
                    ms = bench(
                        lambda i: F.scaled_dot_product_attention(Qs[i], Ks[i], Vs[i], is_causal=causal), sets
                    )
            tf = flops / (ms * 1e-3) / 1e12
            log(f"  {name:16s} {shape}: {ms:.3f} ms {tf:.0f} TFLOP/s")
            if best_t is None or tf > best_t[0]:
                best_t = (tf, name)
        except Exception as e:  # a backend may not support the shape
            log(f"  {name:16s} {shape}: unavailable ({type(e).__name__}: {str(e).splitlines()[0][:120]})")
    best = None
    for cfg in sched_variants(d) if sched else variants(d, quick):
        tag = "_".join(f"{kk}{v}" for kk, v in cfg.items())
        try:
            t0 = time.perf_counter()
            kern = tirx.compile(A.make_attention(b, h, s, d, causal, **cfg), target="cuda")
            tc = time.perf_counter() - t0
            o = torch.full_like(q, float("nan"))
            AH.run(kern, q, k, v, o, **cfg)
            torch.cuda.synchronize()
            err = rel(o, ref)
            # descriptors built once per input set (the timed loop launches only)
            args = [AH.launch_args(Qs[i], Ks[i], Vs[i], Os[i], **cfg) for i in range(sets)]
            ms = bench(lambda i: kern(*args[i]), sets)
            tf = flops / (ms * 1e-3) / 1e12
            log(
                f"  tirx {tag} {shape}: compile {tc:.2f}s err {err:.2e} (torch bf16 {t_err:.2e}) "
                f"{ms:.3f} ms {tf:.0f} TFLOP/s = {tf / best_t[0]:.1%} of best torch ({best_t[1]})"
            )
            if sched:
                log(f"    SASS {sass_counts(kern, f'attn_{b}x{h}x{s}x{d}_{int(causal)}_{tag}', out)}")
                ROWS.append((shape, tag, err, ms, tf, best_t[0], best_t[1]))
            if err < 2e-2 and (best is None or tf > best[0]):
                best = (tf, ms, err, tag, kern)
        except Exception as e:
            log(f"  tirx {tag} {shape}: FAILED {type(e).__name__}: {e}")
            LOG.append(traceback.format_exc())
    if best is not None and not sched:
        tf, ms, err, tag, kern = best
        sass = sass_counts(kern, f"attn_{b}x{h}x{s}x{d}_{int(causal)}_{tag}", out)
        log(f"  best {tag}: SASS {sass}")
        ROWS.append((shape, tag, err, ms, tf, best_t[0], best_t[1]))


# 8 x 16 x 2048 x 128: the shorter-sequence case where the old causal default fell to 92 % (2026-12-01)
SHAPES = [(4, 16, 4096, 128), (4, 16, 4096, 64), (1, 16, 16384, 128), (8, 16, 2048, 128)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sched", action="store_true", help="only best_config under each SCHED")
    a = ap.parse_args()
    log(
        f"device: {torch.cuda.get_device_name()} torch {torch.__version__} "
        f"cudnn {torch.backends.cudnn.version()} date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    if not check_small():
        log("small problems WRONG: skipping the timings")
    else:
        for b, h, s, d in SHAPES[:1] if a.quick else SHAPES:
            for causal in (False, True):
                try:
                    section(b, h, s, d, causal, a.out, a.quick, a.sched)
                except Exception as e:
                    log(f"section {b}x{h}x{s}x{d} causal={causal} FAILED {type(e).__name__}: {e}")
                    LOG.append(traceback.format_exc())
    log("")
    log(
        f"{'shape':26s} {'tirx variant':64s} {'rel err':>9s} {'ms':>8s} {'TFLOP/s':>8s} {'torch best':>10s} {'ratio':>7s}"
    )
    for shape, tag, err, ms, tf, tt, tname in ROWS:
        log(f"{shape:26s} {tag:64s} {err:9.2e} {ms:8.3f} {tf:8.0f} {tt:7.0f} ({tname}) {tf / tt:7.1%}")
    if a.out:
        with open(os.path.join(a.out, "bench_attention.log"), "w") as fh:
            fh.write("\n".join(LOG) + "\n")


if __name__ == "__main__":
    main()
