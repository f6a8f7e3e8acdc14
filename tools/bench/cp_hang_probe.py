"""Which cp.async-loader GEMM launches finish (a device probe: one subprocess per case, each with a
time limit; a hang prints its Python stack). Run by `bash tools/device_owed.sh cpfix`."""

from __future__ import annotations

import subprocess
import sys

CASES = [
    (257, 24, 8, {}, "cp"),
    (257, 24, 8, {}, "tma"),
    (257, 24, 8, {"BN": 256, "STAGES": 4}, "cp"),
    (257, 64, 8, {}, "cp"),
    (257, 24, 72, {}, "cp"),
    (128, 64, 8, {}, "cp"),
    (4096, 4096, 4000, {}, "cp"),
    (1000, 1001, 5000, {}, "cp"),
    (130, 1000, 4000, {}, "cp"),
    (64, 300, 40, {"BM": 64, "BN": 64, "STAGES": 3}, "cp"),
    (300, 1000, 5008, {"fp8": 1}, "cp"),
    (300, 1000, 5008, {"fp8": 1}, "tma"),
]

CHILD = r"""
import faulthandler, sys, time, torch
faulthandler.dump_traceback_later(90, exit=True)
import tirx.kernels.gemm as MM
MM.CP_LOADS = True
M, N, K, tiles, loader = eval(sys.argv[1])
fp8 = tiles.pop("fp8", 0)
dt = "float8_e4m3fn" if fp8 else "bfloat16"
x = torch.randn(M, K, device="cuda"); w = torch.randn(N, K, device="cuda") / K ** 0.5
x, w = x.to(getattr(torch, dt)), w.to(getattr(torch, dt))
sc = (torch.tensor([0.5], device="cuda"), torch.tensor([2.0], device="cuda")) if fp8 else ()
cfg = MM.config(M, N, K, dt) | tiles | {"LOADER": loader}
out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
t = time.time(); MM._gemm(x, w, out, dt, scales=sc, cfg=cfg); t1 = time.time(); torch.cuda.synchronize(); t2 = time.time()
ref = x.float() @ w.float().t()
err = float((out.double() - ref.double()).norm() / ref.double().norm())
print(f"cfg {cfg} call {t1-t:.1f}s sync {t2-t1:.3f}s err {err:.1e} nan {bool(out.isnan().any())}")
"""


def main() -> None:
    procs = []
    for M, N, K, tiles, loader in CASES:
        arg = repr((M, N, K, dict(tiles), loader))
        p = subprocess.Popen(
            [sys.executable, "-c", CHILD, arg], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        procs.append((arg, p))
    for arg, p in procs:
        try:
            out, _ = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            out = "killed"
        lines = [ln for ln in out.splitlines() if ln.strip()]
        tail = lines[-1] if lines and lines[-1].startswith("cfg") else " | ".join(lines[:10])
        print(arg, "->", tail[:1200], flush=True)


if __name__ == "__main__":
    main()
