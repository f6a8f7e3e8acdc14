# ruff: noqa: B023
# (the timing lambdas run before the loop moves on)
"""Tile sets of the any-shape GEMM at the shapes where ``tirx.kernels.linear`` trails cuBLAS.

    python tools/bench/gemm_explore.py [--out DIR] [--only NAME,...]

For each shape, ``config``'s tile set and the candidates below run on the same inputs (checked
against a float32 reference, output poisoned with NaN), each timed paired with
``torch.matmul(x, w.t())`` (``bench_library.paired``: GPU time alone) over weights rotating
through at least 256 MiB, so B streams from HBM as in a model's layers. Prints torch/tirx per
candidate and the best per shape: the evidence for ``config``'s and ``decode_path``'s rules
(issue #33).
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools", "bench"))

_A = dict(EPI="atomic")


def _t(bm: int, bn: int, **kw) -> dict:
    """A tile set with as many stages as fit (``config``'s rule)."""
    c_bytes = 0 if kw.get("EPI") in ("atomic", "direct") else (bm // 64) * 16384
    stages = min(8, (232448 - 1024 - c_bytes) // ((bm + bn) * 128))
    regs = {"CONSUMER_REGS": 160, "PRODUCER_REGS": 24} if bm == 192 else {}  # three consumers
    return dict(BM=bm, BN=bn, STAGES=stages, GROUP_M=8, EPI="tma", SMS=132) | regs | kw


#: name -> ((M, N, K), candidate tile sets; "mma" / "mma:WARPS:UNROLL" = the tensor-core GEMV).
#: (The twenty-sixth session also tried the TMA loads' L2 promotion here, 0 / 64 / 128 / 256
#: bytes: no effect worth a knob, docs/benchmarks.md.)
CASES = {
    # skinny M: 64 CTAs of 64 x 64 tiles stream B at about 1.6 TB/s where cuBLAS reaches 2.9.
    # Independent accumulators (NACC, twenty-sixth session) did not help (0.52-0.56 against
    # 0.55-0.61, docs/benchmarks.md) and were removed; here: twice the CTAs (32-column tiles, or
    # two shares of K) with deeper rings
    "16rows": (
        (16, 4096, 4096),
        [
            _t(64, 32, STAGES=16, EPI="direct"),
            _t(64, 64, SPLIT_K=2, **_A),
            _t(64, 32, STAGES=12, EPI="direct"),
        ],
    ),
    "64rows": ((64, 4096, 4096), [_t(64, 32, STAGES=16, EPI="direct"), _t(64, 64, SPLIT_K=2, **_A)]),
    "8192x192": ((8192, 192, 4096), [_t(128, 192)]),
}
# split-K summed in the kernel (thirty-first session) against the atomic epilogue, at the shapes
# the calls split and the model's split candidates: the data for the model's split terms
_S = {
    "s65": ((65, 4096, 4096), [(128, 4), (128, 2), (64, 2), (128, 8), (256, 4), (64, 1), (64, 4)]),
    "s16": ((16, 4096, 4096), [(64, 2), (128, 4), (64, 4), (128, 2)]),
    "s64": ((64, 4096, 4096), [(64, 2), (128, 4), (64, 4), (128, 2)]),
    "s100": ((100, 4096, 4096), [(64, 2), (128, 2), (128, 4), (64, 4)]),
    "s300": ((300, 4096, 4096), [(128, 2), (256, 2), (64, 2)]),
    "s128x1024": ((128, 1024, 16384), [(64, 8), (128, 8), (128, 4), (256, 8)]),
    "s1000": ((1000, 1000, 16384), [(256, 4), (128, 2), (128, 4), (256, 2)]),
    "s1024": ((1024, 1024, 65536), [(256, 4), (128, 4), (256, 8), (128, 8)]),
    "s2048x512": ((2048, 512, 8192), [(128, 2), (64, 2), (256, 4), (128, 4)]),
    "s16x1024": ((16, 1024, 8192), [(128, 8), (64, 8), (128, 4)]),
}
# the swapped product C^T = W x^T for a few rows (TRANS_C): W's rows fill 128- or 64-row tiles,
# x's rows a narrow BN; deeper rings (a stage is mostly W)
_W = dict(EPI="direct", TRANS_C=True)
CASES["w16"] = (
    (16, 4096, 4096),
    [
        _t(128, 16, SPLIT_K=4, STAGES=12, **_W),
        _t(64, 16, SPLIT_K=2, STAGES=16, **_W),
        _t(128, 16, SPLIT_K=2, STAGES=12, **_W),
        _t(64, 16, SPLIT_K=4, STAGES=16, **_W),
        _t(128, 16, STAGES=12, **_W),
    ],
)
CASES["w64"] = (
    (64, 4096, 4096),
    [
        _t(128, 64, SPLIT_K=4, STAGES=9, **_W),
        _t(64, 64, SPLIT_K=2, STAGES=13, **_W),
        _t(128, 64, SPLIT_K=2, STAGES=9, **_W),
    ],
)
CASES["w32x14336"] = (
    (32, 14336, 4096),
    [_t(128, 32, STAGES=11, **_W), _t(64, 32, STAGES=14, **_W), _t(128, 32, SPLIT_K=2, STAGES=11, **_W)],
)
# two k-blocks a stage (KPACK=2): half the barrier round trips and consumer iterations per byte
# (the consumer loop's own ~190 ns a k-block sets skinny M's pace: tools/bench/gemm_trace.py)
_P = dict(KPACK=2)
CASES["k16"] = (
    (16, 4096, 4096),
    [_t(64, 64, STAGES=4, **_P), _t(64, 64, STAGES=6, **_P), _t(64, 64, STAGES=6, SPLIT_K=2, **_P),
     _t(64, 128, STAGES=4, **_P), _t(128, 16, STAGES=6, **_W, **_P)],
)  # fmt: skip
CASES["k64"] = ((64, 4096, 4096), [_t(64, 64, STAGES=6, **_P), _t(64, 64, STAGES=6, SPLIT_K=2, **_P)])
CASES["k65"] = (
    (65, 4096, 4096),
    [
        _t(128, 64, STAGES=4, SPLIT_K=2, **_P),
        _t(128, 64, STAGES=4, **_P),
        _t(128, 128, STAGES=3, SPLIT_K=2, **_P),
    ],
)
CASES["k100"] = ((100, 4096, 4096), [_t(128, 64, STAGES=4, **_P), _t(128, 64, STAGES=4, SPLIT_K=2, **_P)])
CASES["k300"] = ((300, 4096, 4096), [_t(128, 128, STAGES=3, **_P)])
CASES["k4096"] = ((4096, 4096, 4096), [_t(128, 256, STAGES=2, **_P), _t(128, 128, STAGES=3, **_P)])
# the swapped product with two or four k-blocks a stage, for a few rows
_SW = dict(EPI="direct", TRANS_C=True)
for _m in (9, 16, 32, 64):
    _bn = max(16, _m + (-_m % 16)) if _m <= 32 else 64
    _sub = (128 + _bn) * 128  # bytes of one k-block's W and x tiles
    CASES[f"p{_m}"] = (
        (_m, 4096, 4096),
        [
            _t(128, _bn, KPACK=2, STAGES=(232448 - 1024) // (2 * _sub), **_SW),
            _t(128, _bn, KPACK=4, STAGES=(232448 - 1024) // (4 * _sub), **_SW),
            _t(64, _bn, KPACK=2, STAGES=min(8, (232448 - 1024) // (2 * (64 + _bn) * 128)), **_SW),
            _t(128, _bn, KPACK=2, SPLIT_K=2, STAGES=(232448 - 1024) // (2 * _sub), **_SW),
        ],
    )
for _m in (65, 100, 128):  # past 64 rows: x's rows a BN of 128
    CASES[f"p{_m}"] = (
        (_m, 4096, 4096),
        [
            _t(64, 128, KPACK=2, STAGES=4, **_SW),
            _t(128, 128, KPACK=2, STAGES=3, **_SW),
            _t(64, 128, KPACK=2, STAGES=4, SPLIT_K=2, **_SW),
            _t(128, 128, KPACK=2, STAGES=3, SPLIT_K=2, **_SW),
        ],
    )
for _m, _bn in ((65, 80), (80, 80), (100, 112), (128, 128)):  # x's rows a BN of a multiple of 16
    CASES[f"q{_m}"] = (
        (_m, 4096, 4096),
        [
            _t(64, _bn, KPACK=2, STAGES=(232448 - 1024) // (2 * (64 + _bn) * 128), **_SW),
            _t(64, _bn, KPACK=2, STAGES=(232448 - 1024) // (2 * (64 + _bn) * 128), SPLIT_K=2, **_SW),
        ],
    )


def _tiles(M: int, N: int, K: int) -> dict:
    """The 128- / 64-row tiles ``config`` picks (what ran before the swapped product)."""
    from tirx.kernels import gemm as MM

    return MM.config(M, N, K, "bfloat16", split_k=MM.auto_split_k(M, N, K, "bfloat16"))


# the swapped product (the calls' choice, first row) against the tiles at other N and K
for _m, _n, _k in (
    (100, 14336, 4096),
    (80, 8192, 8192),
    (112, 4096, 14336),
    (40, 28672, 4096),
    (24, 1024, 8192),
):
    CASES[f"r{_m}x{_n}x{_k}"] = ((_m, _n, _k), [_tiles(_m, _n, _k)])
CASES["p16x14336"] = (
    (16, 14336, 4096),
    [_t(128, 16, KPACK=2, STAGES=6, **_SW), _t(128, 16, KPACK=4, STAGES=3, **_SW)],
)
CASES["p16x4096x14336"] = (
    (16, 4096, 14336),
    [_t(128, 16, KPACK=2, STAGES=6, **_SW), _t(128, 16, KPACK=2, STAGES=6, SPLIT_K=2, **_SW)],
)
# K row pitch of 16 mod 32 bytes (K = 5000: 0.55 of cuBLAS at 4096 x 4096, whose kernel loads the
# same 64-element k-blocks and is not slowed): whether deeper rings or narrower tiles hide what the
# misaligned rows cost (a latency, if more stages help) against the aligned pitch 5008
CASES["z5000"] = (
    (4096, 4096, 5000),
    [_t(128, 256, LOADER="tma"), _t(128, 256, LOADER="cp"), _t(128, 192, LOADER="cp"),
     _t(128, 128, LOADER="cp"), _t(128, 256, STAGES=3, LOADER="cp")],
)  # fmt: skip
CASES["z5000min"] = ((4096, 4096, 5000), [_t(128, 256, LOADER="tma"), _t(128, 256, LOADER="cp")])
CASES["z5008"] = ((4096, 4096, 5008), [_t(128, 256), _t(128, 256, LOADER="cp")])
# cp.async's loads where TMA is fast: what the copies cost the producer (thirty-fourth session)
CASES["cp4096"] = ((4096, 4096, 4096), [_t(128, 256), _t(128, 256, LOADER="cp")])
CASES["cp5000"] = ((5000, 5000, 5000), [_t(128, 256, LOADER="tma"), _t(128, 256, LOADER="cp")])
CASES["cp_skinny"] = ((200, 12288, 1000), [_t(128, 192, LOADER="tma"), _t(128, 192, LOADER="cp")])
for _name, ((_m, _n, _k), _sets) in _S.items():
    _bm = 64 if _m <= 64 else 128
    CASES[_name] = (
        (_m, _n, _k),
        [_t(_bm, bn, SPLIT_K=sp) if sp > 1 else _t(_bm, bn) for bn, sp in _sets]
        + [_t(_bm, bn, SPLIT_K=sp, **_A) for bn, sp in _sets[:1] if sp > 1],
    )


def run(names: list[str], out_dir: str | None) -> None:
    import torch
    from bench_library import LOG, log, paired, rel

    import tirx
    from tirx.kernels import gemm as MM
    from tirx.kernels.hopper.gemv import make_gemv_mma

    dt = "bfloat16"
    dtype = torch.bfloat16
    torch.backends.cuda.matmul.allow_tf32 = False
    log(torch.cuda.get_device_name())
    for name in names:
        (M, N, Kd), cands = CASES[name]
        sets = max(1, min(8, -(-(256 << 20) // (N * Kd * 2 + M * Kd * 2))))
        xs = [torch.randn(M, Kd, device="cuda", dtype=dtype) for _ in range(sets)]
        ws = [torch.randn(N, Kd, device="cuda", dtype=dtype) / Kd**0.5 for _ in range(sets)]
        out = torch.empty((M, N), device="cuda", dtype=dtype)
        ref = xs[0].float() @ ws[0].float().t()
        rows = []
        for c in [None, *cands]:
            if isinstance(c, str):  # "mma" or "mma:WARPS:UNROLL": the tensor-core GEMV
                shape = tuple(int(x) for x in c.split(":")[1:]) or MM.MMA_GEMV
                k = tirx.compile(make_gemv_mma(dt, M, *shape), target="cuda")

                def call(i, k=k):
                    return k(xs[i], ws[i], out)

                label = f"mma GEMV {shape}"
            else:

                def call(i, c=c):
                    return MM._gemm(xs[i], ws[i], out, dt, cfg=c)

                cc = c or MM.config(M, N, Kd, dt, split_k=MM.auto_split_k(M, N, Kd, dt))
                label = ("config " if c is None else "") + " ".join(
                    f"{k}={v}" for k, v in cc.items() if k not in ("SMS",)
                )
            out.fill_(float("nan"))
            call(0)
            err = rel(out, ref)
            tt, tc = paired(call, lambda i: torch.matmul(xs[i], ws[i].t()), sets)
            rows.append((tc / tt, label))
            log(
                f"{name:>14} {M}x{N}x{Kd} err {err:.1e} tirx {tt:.4f} ms torch {tc:.4f} ms torch/tirx {tc / tt:6.3f}  {label}"
            )
        best = max(rows)
        log(f"best {name}: {best[0]:.3f} {best[1]} (config: {rows[0][0]:.3f})")
        if out_dir:  # what ran so far survives a run cut short
            with open(os.path.join(out_dir, "gemm_explore.txt"), "w") as fh:
                fh.write("\n".join(LOG) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None, help="case names, comma-separated (default: all)")
    a = ap.parse_args()
    run(a.only.split(",") if a.only else list(CASES), a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
