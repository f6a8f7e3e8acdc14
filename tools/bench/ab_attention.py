"""Interleaved A/B rounds of attention variants against torch SDPA on one shape.

    python tools/bench/ab_attention.py --shape 4,16,4096,128 [--causal] \
        [--cfg STAGES=2 --cfg SCHED=persistent,STAGES=2 ...] [--rounds 6 --cycles 20] [--baseline OLD.py --cfg BASE=OLD]

``bench_attention.py`` times each variant in its own block of launches; under sustained load
the H200's clocks drop (both torch's and tirx's kernels run ~12 % slower after a few hundred
ms), so two blocks can differ by more than the variants do. Here the launches interleave:
each cycle launches every variant (``best_config``, each ``--cfg`` overlaid on it, torch's
default SDPA and its forced cuDNN / flash backends) once in a rotated order, each between its
own CUDA events, and the table gives per variant the median TFLOP/s and the median of the
*paired* ratio to the best torch backend of the same cycle. Rounds of ``--cycles`` cycles start
after an idle pause, so both the cool and the hot clocks are sampled. Correctness of each
variant is checked first on fresh inputs against a float32 reference.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

import baseline  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from bench_attention import backends  # noqa: E402
from bench_hopper import rel  # noqa: E402

import tirx  # noqa: E402
from tirx.kernels import attn as AH  # noqa: E402
from tirx.kernels.hopper import attention as A  # noqa: E402


def parse_cfg(text: str) -> dict:
    """``"STAGES=2,SCHED=persistent"`` -> ``{"STAGES": 2, "SCHED": "persistent"}``."""
    out: dict = {}
    for item in filter(None, text.split(",")):
        key, _, val = item.partition("=")
        if not key or not val:
            raise ValueError(f"--cfg item {item!r} is not KEY=VALUE")
        out[key] = int(val) if val.lstrip("-").isdigit() else {"True": True, "False": False}.get(val, val)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="4,16,4096,128", help="batch,heads,seq,head_dim")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--cfg", action="append", default=[], help="KEY=VALUE,... overlaid on best_config")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--cycles", type=int, default=20, help="launches of each variant per round")
    ap.add_argument("--pause", type=float, default=1.0, help="idle seconds before each round")
    ap.add_argument(
        "--baseline", action="append", default=[], help="another attention.py; select it by --cfg BASE=<stem>"
    )
    a = ap.parse_args()
    bases = {baseline.label(p): baseline.load(p) for p in a.baseline}
    b, h, s, d = (int(x) for x in a.shape.split(","))
    causal = a.causal
    best = A.best_config(d, causal)
    cfgs = [("best_config", best)] + [(c, dict(best, **parse_cfg(c))) for c in a.cfg]
    flops = 4 * b * h * s * s * d / (2 if causal else 1)
    sets = 2
    Qs, Ks, Vs = (
        [torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(sets)] for _ in "qkv"
    )
    Os = [torch.empty_like(Qs[0]) for _ in range(sets)]
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    runs: dict[str, object] = {}
    for name, cfg in cfgs:
        make = A.make_attention
        if "BASE" in cfg:  # a --baseline version of the module, by its file's stem
            if cfg["BASE"] not in bases:
                raise SystemExit(f"--cfg BASE={cfg['BASE']}: no --baseline file of that name")
            make = bases[cfg["BASE"]].make_attention
        cfg = {kk: vv for kk, vv in cfg.items() if kk != "BASE"}
        kern = tirx.compile(make(b, h, s, d, causal, **cfg), target="cuda")
        o = torch.full_like(q, float("nan"))
        AH.run(kern, q, k, v, o, **cfg)
        torch.cuda.synchronize()
        err = rel(o, ref)
        print(f"{name}: {cfg} rel err {err:.2e}", flush=True)
        if not err < 2e-2:
            print(f"  WRONG: {name} left out", flush=True)
            continue
        args = [AH.launch_args(Qs[i], Ks[i], Vs[i], Os[i], **cfg) for i in range(sets)]
        runs[name] = lambda i, kern=kern, args=args: kern(*args[i])
    torch_names = []
    for name, ctx in backends():
        if name == "torch efficient":
            continue  # far behind (docs/benchmarks.md); not a contender

        def sdpa(i: int) -> None:
            F.scaled_dot_product_attention(Qs[i], Ks[i], Vs[i], is_causal=causal)

        if ctx is None:
            runs[name] = sdpa
        else:
            runs[name] = lambda i, ctx=ctx: _in(ctx, sdpa, i)
        torch_names.append(name)
    names = list(runs)
    # every cycle launches each variant once (rotated order), each between its own pair of
    # events: neighbours in a cycle run at the same clocks, which drift under sustained load
    # (seen on the H200: ~680 TFLOP/s cool, ~600 after a few hundred ms at full power, for
    # torch and tirx alike), so the ratio is taken per cycle; rounds start after an idle pause
    for n in names:
        for i in range(3):
            runs[n](i % sets)
    torch.cuda.synchronize()
    tf: dict[str, list[float]] = {n: [] for n in names}
    ratio: dict[str, list[float]] = {n: [] for n in names}
    for r in range(a.rounds):
        time.sleep(a.pause)
        ev = []
        for c in range(a.cycles):
            k = (r * a.cycles + c) % len(names)
            cyc = []
            for n in names[k:] + names[:k]:
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                runs[n](c % sets)
                e1.record()
                cyc.append((n, e0, e1))
            ev.append(cyc)
        torch.cuda.synchronize()
        for cyc in ev:
            got = {n: flops / (e0.elapsed_time(e1) * 1e-3) / 1e12 for n, e0, e1 in cyc}
            top = max(got[n] for n in torch_names)
            for n in names:
                tf[n].append(got[n])
                ratio[n].append(got[n] / top)
        print(
            f"round {r}: " + ", ".join(f"{n} {statistics.median(tf[n][-a.cycles :]):.0f}" for n in names),
            flush=True,
        )
    shape = f"{b}x{h}x{s}x{d}{' causal' if causal else ''}"
    print(
        f"\n{shape}, {a.rounds} rounds of {a.cycles} cycles; TFLOP/s median [10th-90th percentile]; "
        "ratio to the best torch backend of the same cycle, median [10th-90th]"
    )
    for n in names:
        qt = statistics.quantiles(tf[n], n=10)
        qr = statistics.quantiles(ratio[n], n=10)
        print(
            f"{n:40s} {statistics.median(tf[n]):6.0f} [{qt[0]:.0f}-{qt[-1]:.0f}]  "
            f"{statistics.median(ratio[n]):7.1%} [{qr[0]:.1%}-{qr[-1]:.1%}]"
        )


def _in(ctx, fn, i: int) -> None:
    with ctx():
        fn(i)


if __name__ == "__main__":
    main()
