# ruff: noqa: B023
# (the timing lambdas run before the loop moves on)
"""Tile sets for the attention shapes where ``tirx.kernels.attention`` trails SDPA (issue #33).

    python tools/bench/attn_tile_sweep.py [--check] [--shapes 0,1] [--out DIR]

For each shape of the issue's grid that the last run measured below SDPA, every candidate tile
set runs through the public call (``attention(q, k, v, causal=..., **tiles)``), is checked
against a float32 reference, and is timed paired with SDPA (``bench_library.paired``: GPU time
alone, each pair behind a sleep kernel). Prints SDPA/tirx per candidate and the best per shape,
for ``config_for``'s rule. ``--check`` compiles every candidate for sm_90a without a GPU (the
tile sets are legal: static asserts, NVRTC).
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools", "bench"))

from attn_grid import BELOW_SDPA as SHAPES  # noqa: E402

_PP = dict(PINGPONG=True, OVERLAP=True, CHAINS=4)


def candidates(S: int, D: int, causal: bool) -> list[dict]:
    """Tile sets legal for ``S``: the rule's own, one-consumer 64-row tiles (twice the CTAs),
    64-key blocks, the grid instead of the persistent scheduler, deeper rings."""
    from tirx.kernels.attn import config_for

    out = [dict(config_for(S, D, causal))]
    if D == 256:  # Q's 64 KiB and the K / V stages must fit: 64-key blocks, 2 stages
        out += [
            dict(BM=128, BN=64, STAGES=2),
            dict(BM=128, BN=64, STAGES=2, PINGPONG=True),
            dict(BM=128, BN=64, STAGES=2, **dict(_PP, CHAINS=1)),
            dict(BM=128, BN=64, STAGES=2, **_PP, SCHED="lpt" if causal else "dynamic"),
            dict(BM=64, BN=64, STAGES=2),
            dict(BM=64, BN=64, STAGES=3, SCHED="dynamic"),
        ]
        return _legal(out, S)
    out += [
        dict(BM=64, BN=64, STAGES=2),
        dict(BM=64, BN=64, STAGES=3, SCHED="dynamic"),
        dict(BM=64, BN=128, STAGES=2),
        dict(BM=128, BN=64, STAGES=2, **_PP),
        dict(BM=128, BN=128, STAGES=2, **_PP, **({"REVERSE": True} if causal else {})),
        dict(BM=128, BN=128, STAGES=2, **_PP, SCHED="dynamic", **({"REVERSE": True} if causal else {})),
    ]
    if D == 64:
        out += [
            dict(BM=128, BN=128, STAGES=4, **_PP, CONSUMER_REGS=240, SCHED="dynamic"),
            dict(BM=192, BN=128, STAGES=4, **_PP, CONSUMER_REGS=160),
        ]
    return _legal(out, S)


def _legal(out: list[dict], S: int) -> list[dict]:
    """The tile sets no longer than the sequence, each once."""
    seen, legal = set(), []
    for c in out:
        key = tuple(sorted(c.items()))
        if key in seen or max(c["BM"], c["BN"]) > S:
            continue
        seen.add(key)
        legal.append(c)
    return legal


def check() -> int:
    import tirx
    from tirx.kernels.hopper.attention import make_attention

    n = 0
    for B, H, S, D, causal in SHAPES:
        for c in candidates(S, D, causal):
            f = make_attention(B, H, S, D, causal, **c)
            tirx.compile(f, target={"kind": "cuda", "arch": "sm_90a"})
            n += 1
    print(f"{n} candidate kernels compile for sm_90a")
    return 0


def sweep(which: list[int], out: str | None) -> int:
    import torch
    from bench_library import log, paired, rel

    import tirx.kernels as K

    print(torch.cuda.get_device_name(), flush=True)
    for B, H, S, D, causal in (SHAPES[i] for i in which):
        q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        ref = torch.nn.functional.scaled_dot_product_attention(
            q.float(), k.float(), v.float(), is_causal=causal
        )
        rows = []
        for c in candidates(S, D, causal):
            o = K.attention(q, k, v, causal=causal, **c)
            err = rel(o, ref)
            tt, ts = paired(
                lambda i: K.attention(q, k, v, causal=causal, **c),
                lambda i: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal),
                1,
            )
            rows.append((ts / tt, c))
            log(
                f"{B}x{H}x{S}x{D} causal={causal!s:5} err {err:.1e} tirx {tt:.4f} ms SDPA {ts:.4f} ms "
                f"SDPA/tirx {ts / tt:6.3f}  {c}"
            )
        best = max(rows, key=lambda r: r[0])
        log(f"best {B}x{H}x{S}x{D} causal={causal}: {best[0]:.3f} {best[1]} (rule: {rows[0][0]:.3f})")
        if out:  # what ran so far survives a run cut short
            from bench_library import LOG

            with open(os.path.join(out, "attn_sweep.txt"), "w") as fh:
                fh.write("\n".join(LOG) + "\n")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compile the candidates, no GPU")
    ap.add_argument("--shapes", default=None, help="indices into SHAPES, comma-separated (default: all)")
    ap.add_argument("--out", default=None, help="a folder for attn_sweep.txt")
    a = ap.parse_args()
    which = [int(x) for x in a.shapes.split(",")] if a.shapes else list(range(len(SHAPES)))
    return check() if a.check else sweep(which, a.out)


if __name__ == "__main__":
    sys.exit(main())
