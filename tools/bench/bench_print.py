"""Printer benchmark: ``tirx.dumps`` vs apache-tvm-tirx 0.1.0a4's ``.script()``.

Builds a ~3,000-line kernel through the IRBuilder (loops, binds, if/else, stores, casts,
op calls, shared allocation, barriers), prints it with ``tirx.dumps`` and reports printed
lines per second (best of several timed rounds). The *same text* (with the
``from tvm_tirx.script import tirx as T`` import) is parsed by
``tvm_tirx.script.from_source`` in a subprocess under ``--tvm-python`` and TIRx's
``.script()`` is timed the same way; the ratio is printed. Each toolkit's throughput is
counted in the lines *it* prints.

It also prints all the compat kernels (``shared/compat/tirx-0.1.0a4``; tirx builds them by
hand, tvm_tirx parses TIRx's own text) and reports the same numbers for them: small
kernels are where TIRx's printer is fastest (it slows down on large ones).

Usage::

    python tools/bench/bench_print.py [--blocks 330] [--rounds 7] [--tvm-python PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

TVM_PY = "/work/venv-tvm/bin/python"


def build_kernel(blocks: int):
    """One device entry; each block j is 10 printed lines."""
    from tirx.ir import Cast, ForKind, Max, Min, TensorType, Var, const
    from tirx.ir.op import call
    from tirx.ir.types import float32
    from tirx.surface.builder import IRBuilder, launch_args

    b = IRBuilder()
    n = Var("n")
    with b, b.function("bench"):
        A = b.param("A", TensorType((n,), float32))
        B = b.param("B", TensorType((n,), float32))
        C = b.param("C", TensorType((n,), float32))
        with b.device_entry(*launch_args((n + 255) // 256, 256)):
            tx = b.bind("tx", call("cuda.thread_idx", "x"))
            i = b.bind("i", call("cuda.block_idx", "x") * 256 + tx)
            S = b.alloc("S", TensorType((256,), float32, "shared"))
            acc = b.alloc("acc", TensorType((1,), float32, "local"))
            acc[0] = const(0.0, float32)
            for j in range(blocks):
                c = const(1.25 + j / 8.0, float32)
                with b.for_(f"k{j}", 0, 4) as k:
                    v = b.bind(f"v{j}", i * 4 + k)
                    with b.if_(v < n):
                        C[v] = A[v] * c + B[Min(v + (j + 1), n - 1)] - Cast(float32, k)
                    with b.else_():
                        C[Max(v - (j + 1), const(0))] = A[v % n] / const(2.0, float32) - const(0.5, float32)
                S[tx] = call("exp", A[i % n])
                b.evaluate(call("cuda.cta_sync"))
                with b.for_(f"u{j}", 0, 4, ForKind.UNROLLED) as u:
                    acc[0] = acc[0] + S[(tx + u) % 256] * const(0.25, float32)
            C[i % n] = acc[0]
    return b.get()


def _best_rate(fn, rounds: int, min_time: float = 0.2) -> tuple[float, int]:
    """(best seconds per call, lines of the output) over ``rounds`` rounds."""
    text = fn()
    lines = text.count("\n")
    best = float("inf")
    for _ in range(rounds):
        k = 0
        t0 = time.perf_counter()
        while True:
            fn()
            k += 1
            dt = time.perf_counter() - t0
            if dt >= min_time:
                break
        best = min(best, dt / k)
    return best, lines


_TVM_SCRIPT = r"""
import json, sys, time
import tvm_tirx
text, rounds = sys.stdin.read(), int(sys.argv[1])
f = tvm_tirx.script.from_source(text)
out = f.script()
lines = out.count("\n") + (0 if out.endswith("\n") else 1)
best = float("inf")
for _ in range(rounds):
    k = 0
    t0 = time.perf_counter()
    while True:
        f.script(); k += 1
        dt = time.perf_counter() - t0
        if dt >= 0.2:
            break
    best = min(best, dt / k)
print(json.dumps({"seconds": best, "lines": lines}))
"""


def bench_tvm(text: str, rounds: int, py: str) -> dict | None:
    if not os.path.exists(py):
        return None
    tvm_text = text.replace("# from tirx.script import tirx as T", "from tvm_tirx.script import tirx as T")
    out = subprocess.run(
        [py, "-c", _TVM_SCRIPT, str(rounds)], input=tvm_text, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


_TVM_COMPAT = r"""
import json, sys, time
import tvm_tirx
texts = json.loads(sys.stdin.read())
fs = [tvm_tirx.script.from_source(t) for t in texts]
lines = sum(o.count("\n") + (0 if o.endswith("\n") else 1) for o in (f.script() for f in fs))
best = float("inf")
for _ in range(int(sys.argv[1])):
    k = 0
    t0 = time.perf_counter()
    while True:
        for f in fs:
            f.script()
        k += 1
        dt = time.perf_counter() - t0
        if dt >= 0.2:
            break
    best = min(best, dt / k)
print(json.dumps({"seconds": best, "lines": lines}))
"""


def bench_compat(rounds: int, py: str) -> dict:
    """All compat kernels (built by hand in tirx; parsed from TIRx's own text in tvm_tirx)."""
    import pathlib

    import tirx
    from tirx.testing.compat_kernels import KERNELS

    fs = [build() for build in KERNELS.values()]
    sec, _ = _best_rate(lambda: "".join(tirx.dumps(f) for f in fs), rounds)
    lines = sum(tirx.dumps(f).count("\n") for f in fs)
    res = {"compat_tirx_lines_per_s": lines / sec, "compat_lines": lines}
    d = pathlib.Path("/work/shared/compat/tirx-0.1.0a4")
    if os.path.exists(py) and d.is_dir():
        texts = [
            (d / f"{k}.tirx").read_text().replace("# from tvm_tirx.script", "from tvm_tirx.script")
            for k in KERNELS
        ]
        out = subprocess.run(
            [py, "-c", _TVM_COMPAT, str(rounds)],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
            check=True,
        )
        tvm = json.loads(out.stdout.strip().splitlines()[-1])
        res["compat_tvm_lines_per_s"] = tvm["lines"] / tvm["seconds"]
        res["compat_ratio"] = res["compat_tirx_lines_per_s"] / res["compat_tvm_lines_per_s"]
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=330, help="kernel size: 10 printed lines per block")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--tvm-python", default=TVM_PY)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args(argv)

    import tirx

    f = build_kernel(a.blocks)
    text = tirx.dumps(f)
    sec, lines = _best_rate(lambda: tirx.dumps(f), a.rounds)
    res = {"tirx_lines": lines, "tirx_seconds": sec, "tirx_lines_per_s": lines / sec}
    try:
        tvm = bench_tvm(text, a.rounds, a.tvm_python)
    except subprocess.CalledProcessError as e:  # pragma: no cover - environment
        print(f"tvm_tirx run failed:\n{e.stderr[-2000:]}", file=sys.stderr)
        tvm = None
    if tvm is not None:
        res.update(
            tvm_lines=tvm["lines"],
            tvm_seconds=tvm["seconds"],
            tvm_lines_per_s=tvm["lines"] / tvm["seconds"],
        )
        res["ratio"] = res["tirx_lines_per_s"] / res["tvm_lines_per_s"]
    try:
        res.update(bench_compat(a.rounds, a.tvm_python))
    except subprocess.CalledProcessError as e:  # pragma: no cover - environment
        print(f"tvm_tirx compat run failed:\n{e.stderr[-2000:]}", file=sys.stderr)
    if a.json:
        print(json.dumps(res))
        return 0
    print(f"kernel: {a.blocks} blocks, tirx prints {lines} lines")
    print(f"tirx.dumps        : {res['tirx_lines_per_s']:>10,.0f} lines/s  ({sec * 1e3:.2f} ms per print)")
    if tvm is None:
        print(f"tvm_tirx .script(): skipped ({a.tvm_python} not found)")
    else:
        print(
            f"tvm_tirx .script(): {res['tvm_lines_per_s']:>10,.0f} lines/s  ({res['tvm_seconds'] * 1e3:.2f} ms per "
            f"print, {res['tvm_lines']} lines)"
        )
        print(f"ratio tirx / tvm_tirx: {res['ratio']:.2f}x")
    print(f"compat kernels ({res['compat_lines']} lines in all):")
    print(f"  tirx.dumps        : {res['compat_tirx_lines_per_s']:>10,.0f} lines/s")
    if "compat_tvm_lines_per_s" in res:
        print(f"  tvm_tirx .script(): {res['compat_tvm_lines_per_s']:>10,.0f} lines/s")
        print(f"  ratio tirx / tvm_tirx: {res['compat_ratio']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
