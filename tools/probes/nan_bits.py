"""What NaN bits NVIDIA hardware produces, against tirx's interpreter (issue #29, item 3).

Runs one elementwise kernel per (dtype, operation) on every pair of special inputs (NaNs with
payloads and signs, infinities, zeros, ones) through ``tirx.compile(target="cuda")`` and the
interpreter, and prints each case where the bits differ. Needs a CUDA GPU.

    python tools/probes/nan_bits.py [--json OUT.json]
"""

from __future__ import annotations

import argparse
import itertools
import json

import numpy as np

import tirx
from tirx.testing.gpu_compare import EXACT, run_cuda, run_interp

BITS = {
    "float16": ("uint16", [0x7E00, 0x7E01, 0xFE00, 0x7D00, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x3C00, 0xBC00]),
    "bfloat16": ("uint16", [0x7FC0, 0x7FC1, 0xFFC0, 0x7FA0, 0x7F80, 0xFF80, 0x0000, 0x8000, 0x3F80, 0xBF80]),
    "float32": (
        "uint32",
        [
            0x7FC00000,
            0x7FC00001,
            0xFFC00000,
            0x7FA00000,
            0x7F800000,
            0xFF800000,
            0,
            0x80000000,
            0x3F800000,
            0xBF800000,
        ],
    ),
    "float64": (
        "uint64",
        [
            0x7FF8000000000000,
            0x7FF8000000000001,
            0xFFF8000000000000,
            0x7FF4000000000000,
            0x7FF0000000000000,
            0xFFF0000000000000,
            0,
            0x8000000000000000,
            0x3FF0000000000000,
            0xBFF0000000000000,
        ],
    ),
}
# float8: only casts to and from them (their NaN codes, infinities, zeros, ones); float6 and
# float4 have no NaN and no 1-byte reinterpret
MINI = {
    "float8_e4m3fn": ("uint8", [0x7F, 0xFF, 0x7E, 0xFE, 0x00, 0x80, 0x38, 0xB8, 0x01, 0x81]),
    "float8_e5m2": ("uint8", [0x7F, 0x7E, 0xFE, 0x7D, 0x7C, 0xFC, 0x00, 0x80, 0x3C, 0xBC]),
}
BINARY = ["x + y", "x - y", "x * y", "x / y", "T.max(x, y)", "T.min(x, y)"]
UNARY = ["-x", "T.fabs(x)", "T.sqrt(x)", "x", "x * T.{dt}(0)", "T.exp(x)", "T.floor(x)", "T.fma(x, y, x)"]
# more ops and fma operand orders (which NaN a float64 fma keeps)
MORE = [
    "T.log(x)",
    "T.tanh(x)",
    "T.fmod(x, y)",
    "T.fma(x, x, y)",
    "T.fma(y, x, x)",
    "T.pow(x, y)",
    "T.abs(x)",
]
CASTS = ["float16", "bfloat16", "float32", "float64"]

TEMPLATE = """
@T.function
def k(A: T.Tensor((100,), T.{ut}), C: T.Tensor((100,), T.{ut}), B: T.Tensor((100,), T.{ot})):
    with T.device_entry(1, 1, 1, 128, 1, 1):
        i: T.let[T.int32] = T.cuda.thread_idx("x")
        if i < 100:
            x: T.let[T.{dt}] = T.reinterpret("{dt}", A[i])
            y: T.let[T.{dt}] = T.reinterpret("{dt}", C[i])
            B[i] = T.reinterpret("{ot}", {expr})
"""


def cases():
    for dt in BITS:
        for e in BINARY + UNARY + MORE:
            yield dt, e.format(dt=dt), dt
        for to in CASTS + list(MINI):
            if to != dt:
                yield dt, f'T.Cast("{to}", x)', to
    for dt in MINI:
        for to in CASTS:
            yield dt, f'T.Cast("{to}", x)', to


def _bits(dt: str) -> tuple[str, list[int]]:
    return BITS[dt] if dt in BITS else MINI[dt]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    a = ap.parse_args()
    out = []
    for dt, expr, odt in cases():
        ut, vals = _bits(dt)
        ot = _bits(odt)[0]
        xs = np.array([v for v, _ in itertools.product(vals, vals)], ut)
        ys = np.array([w for _, w in itertools.product(vals, vals)], ut)
        text = TEMPLATE.format(ut=ut, ot=ot, dt=dt, expr=expr)
        row = {"dtype": dt, "expr": expr}
        try:
            f = tirx.loads(text)
            args = [xs, ys, np.zeros(100, ot)]
            got = run_cuda(tirx.compile(f, target="cuda", options=EXACT), args)[-1]
            want = run_interp(tirx.compile(f, target="interp"), args)[-1]
        except Exception as ex:  # a case tirx cannot build: report it, go on
            row["error"] = f"{type(ex).__name__}: {str(ex)[:300]}"
            print(dt, expr, row["error"])
            out.append(row)
            continue
        diff = sorted(
            {
                (hex(int(x)), hex(int(y)), hex(int(g)), hex(int(w)))
                for x, y, g, w in zip(xs, ys, got, want)
                if g != w
            }
        )
        gpu_nans = sorted({hex(int(g)) for g, in_ in zip(got, got)} & set())
        row["mismatch"] = diff
        row["x"] = [hex(int(v)) for v in xs]  # every case in full: the interpreter's test reads these
        row["y"] = [hex(int(v)) for v in ys]
        row["gpu"] = [hex(int(v)) for v in got]
        row["gpu_results"] = sorted({hex(int(g)) for g in got})
        print(f"{dt:9} {expr:28} gpu {row['gpu_results'][:6]} mismatches {len(diff)}: {diff[:4]}")
        del gpu_nans
        out.append(row)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
