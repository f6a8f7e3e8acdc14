"""What a new process pays for the library's kernels when they are in the disk cache (issue #33:
at most 1 ms a kernel), against the compile cache alone and against torch's own first calls.

    python tools/bench/bench_new_process.py [--runs 5]

Each case runs in fresh Python processes (CUDA initialised by torch before any timing) sharing
one private cache directory: first one process that compiles everything (``cold``), then
``--runs`` processes each of ``ready`` (the ready records, ``tirx.runtime.ready``),
``compile-cache`` (``TIRX_READY_CACHE=0``: the frontend and code generator run, the cubin comes
from the compile cache) and ``torch`` (the same operations through torch: cuBLAS / SDPA loading
their kernels). Per case, the first call (kernel lookup or build, module load, descriptors,
launch, synchronize) minus the second call on the same tensors is what the process paid for the
kernel; medians over the runs. Also the import of ``tirx.kernels`` with the call modules.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHILD = r"""
import json, sys, time
import torch
torch.zeros(1, device="cuda"); torch.cuda.synchronize()
mode = sys.argv[1]
g = torch.Generator(device="cuda").manual_seed(1)
r = lambda *s, dt=torch.bfloat16: torch.randn(*s, device="cuda", dtype=dt, generator=g)
t0 = time.perf_counter()
spent = {"lookup": 0.0, "load": 0.0}
if mode != "torch":
    import tirx.kernels as K
    from tirx.kernels import attn, decode, gemm, rows  # the call modules (no script)
    F = torch.nn.functional
else:
    F = torch.nn.functional
imp = (time.perf_counter() - t0) * 1e3
if mode != "torch":  # where a first call's time goes: the record's lookup (or the build), the module load
    from tirx.runtime import ready as R

    def timed(fn, what):
        def call(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[what] += (time.perf_counter() - t) * 1e3
        return call

    R.ready = timed(R.ready, "lookup")
    R.ReadyKernel._prepare_device = timed(R.ReadyKernel._prepare_device, "load")
x, w = r(1000, 264), r(1001, 264)
x16, w16 = r(4096, 4096, dt=torch.float16), r(4096, 4096, dt=torch.float16)
xs = r(3, 4096, dt=torch.float16)
q, k, v = r(2, 8, 1000, 128), r(2, 2, 1000, 128), r(2, 2, 1000, 128)
q64 = r(4, 16, 2048, 64)
cu = torch.tensor([0, 300, 1000], device="cuda", dtype=torch.int32)
qv = r(1000, 8, 64)
y = r(64, 4096)
qd, kd, vd = r(8, 32, 128), r(8, 8, 4096, 128), r(8, 8, 4096, 128)
lens = torch.full((8,), 4096, device="cuda", dtype=torch.int32)
if mode == "torch":
    cases = {
        "linear bf16 1000x1001x264": lambda: F.linear(x, w),
        "linear fp16 4096^3": lambda: F.linear(x16, w16),
        "gemv fp16 M=3": lambda: F.linear(xs, w16),
        "attention gqa causal d128": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
        "attention d64": lambda: F.scaled_dot_product_attention(q64, q64, q64),
        "attention varlen d64": lambda: F.scaled_dot_product_attention(
            qv[:300].transpose(0, 1), qv[:300].transpose(0, 1), qv[:300].transpose(0, 1)),
        "softmax bf16 4096": lambda: torch.softmax(y, -1),
        "decode attention gqa": lambda: F.scaled_dot_product_attention(
            qd[:, :, None], kd, vd, enable_gqa=True),
    }
else:
    cases = {
        "linear bf16 1000x1001x264": lambda: K.linear(x, w),
        "linear fp16 4096^3": lambda: K.linear(x16, w16),
        "gemv fp16 M=3": lambda: K.linear(xs, w16),
        "attention gqa causal d128": lambda: K.attention(q, k, v, causal=True),
        "attention d64": lambda: K.attention(q64, q64, q64),
        "attention varlen d64": lambda: K.attention_varlen(qv, qv, qv, cu, max_seqlen_q=700),
        "softmax bf16 4096": lambda: K.softmax(y),
        "decode attention gqa": lambda: K.decode_attention(qd, kd, vd, lens),
    }
out = {"import_ms": imp, "cases": {}}
for name, f in cases.items():
    spent["lookup"] = spent["load"] = 0.0
    t0 = time.perf_counter(); f(); torch.cuda.synchronize()
    t1 = time.perf_counter(); f(); torch.cuda.synchronize()
    t2 = time.perf_counter()
    out["cases"][name] = [(t1 - t0) * 1e3, (t2 - t1) * 1e3, spent["lookup"], spent["load"]]
out["script"] = "tirx.script" in sys.modules
print(json.dumps(out))
"""


def run(mode: str, cache: str, extra: dict | None = None) -> dict:
    env = dict(
        os.environ, TIRX_CACHE_DIR=cache, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")
    )
    env.update(extra or {})
    p = subprocess.run(
        [sys.executable, "-c", CHILD, mode], env=env, capture_output=True, text=True, timeout=900
    )
    if p.returncode:
        raise SystemExit(f"{mode}: child failed\n{p.stderr[-4000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        cold = run("tirx", cache)
        modes = {
            "ready": [run("tirx", cache) for _ in range(a.runs)],
            "compile-cache": [run("tirx", cache, {"TIRX_READY_CACHE": "0"}) for _ in range(a.runs)],
            "torch": [run("torch", cache) for _ in range(a.runs)],
        }
    if any(r["script"] for r in modes["ready"]):
        print("WARNING: a ready process imported the script frontend (a kernel was built)")
    print(
        f"import of tirx.kernels and the call modules, ms: cold {cold['import_ms']:.1f}, "
        + ", ".join(
            f"{m} {statistics.median(r['import_ms'] for r in rs):.1f}"
            for m, rs in modes.items()
            if m != "torch"
        )
    )
    print(
        f"{'case':28s} {'cold':>9s} {'ready':>8s} {'cache':>8s} {'torch':>8s} {'cache/ready':>11s} {'lookup':>7s} "
        f"{'load':>6s}  (ms a process pays: first call - second; of ready's, the record's lookup and the module load)"
    )
    tot = {m: 0.0 for m in modes}
    for name in cold["cases"]:
        c = cold["cases"][name][0] - cold["cases"][name][1]
        med = {
            m: statistics.median(r["cases"][name][0] - r["cases"][name][1] for r in rs)
            for m, rs in modes.items()
        }
        for m in med:
            tot[m] += med[m]
        lk = statistics.median(r["cases"][name][2] for r in modes["ready"])
        ld = statistics.median(r["cases"][name][3] for r in modes["ready"])
        print(
            f"{name:28s} {c:9.1f} {med['ready']:8.2f} {med['compile-cache']:8.2f} {med['torch']:8.2f} "
            f"{med['compile-cache'] / max(med['ready'], 1e-3):11.1f} {lk:7.2f} {ld:6.2f}"
        )
    print(
        f"{'total':28s} {'':9s} {tot['ready']:8.2f} {tot['compile-cache']:8.2f} {tot['torch']:8.2f} "
        f"{tot['compile-cache'] / max(tot['ready'], 1e-3):11.1f}"
    )


if __name__ == "__main__":
    main()
