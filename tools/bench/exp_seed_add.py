"""Experiment: which CUDA shape of the seed's one-element-per-thread fp16 add reaches copy rate.

The seed kernel (``i = blockIdx.x * block + threadIdx.x; if (i < n) B[i] = A[i] + 2``) keeps
2 bytes per thread in flight. This script times hand-written CUDA variants of the same
computation on 2^31 fp16 elements to choose what tirx's code generation should emit:

* ``seed<B>``: the kernel as the guide writes it, block ``B``;
* ``coarse<C>``: block coarsening, each block does the work of ``C`` consecutive original
  blocks in an unrolled loop (grid / C);
* ``inter<C>``: the same, original blocks ``blockIdx.x + k * gridDim.x``;
* ``stride<U>``: a grid-stride loop over original blocks (``#pragma unroll U``), grid = one
  wave of resident blocks.

Needs cupy and a GPU: ``python tools/bench/exp_seed_add.py [--log2n 31]``.
"""

from __future__ import annotations

import argparse
import functools

BODY = """
    const long long i = bx * {block}LL + (long long)threadIdx.x;
    if (i < n) {{ B[i] = A[i] + half(2.0f); }}
"""

HEAD = (
    '#include <cuda_fp16.h>\nextern "C" __global__ void __launch_bounds__({block}) k(\n'
    "    const half* __restrict__ A, half* __restrict__ B, long long n, long long G) {{\n"
)


def source(kind: str, block: int, c: int) -> str:
    body = BODY.format(block=block)
    head = HEAD.format(block=block)
    if kind == "seed":
        return head + "  const long long bx = blockIdx.x;\n" + body + "}\n"
    if kind == "coarse":
        return (
            head
            + f"#pragma unroll\n  for (int k = 0; k < {c}; ++k) {{\n"
            + f"    const long long bx = (long long)blockIdx.x * {c} + k;\n    if (bx < G) {{"
            + body
            + "}\n  }\n}\n"
        )
    if kind == "inter":
        return (
            head
            + f"#pragma unroll\n  for (int k = 0; k < {c}; ++k) {{\n"
            + "    const long long bx = (long long)blockIdx.x + (long long)k * gridDim.x;\n"
            + "    if (bx < G) {"
            + body
            + "}\n  }\n}\n"
        )
    if kind == "stride":
        return (
            head
            + f"#pragma unroll {c}\n"
            + "  for (long long bx = blockIdx.x; bx < G; bx += gridDim.x) {"
            + body
            + "}\n}\n"
        )
    raise ValueError(kind)


def main() -> None:
    import cupy as cp

    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=31)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    n = 1 << args.log2n
    a = cp.random.standard_normal(n, dtype=cp.float32).astype(cp.float16)
    b = cp.empty_like(a)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]

    def timeit(fn) -> float:
        """Median seconds: events around each launch on CuPy's stream, one at a time, after 3
        warm-up launches (tirx.testing.do_bench; no L2 flush)."""
        from tirx.testing import do_bench

        ms = do_bench(fn, n_warmup=3, n_repeat=args.reps, flush_l2=False, sync_each=True, device="cuda")
        return ms / 1e3

    nbytes = 2 * n * 2
    rows = []
    t_copy = timeit(lambda: cp.copyto(b, a))
    rows.append(("copy", t_copy))
    ref = (a + cp.float16(2)).view(cp.uint16)
    variants = [("seed", 128, 1), ("seed", 256, 1), ("seed", 512, 1), ("seed", 1024, 1)]
    variants += [("coarse", 128, c) for c in (2, 4, 8, 16)] + [("coarse", 256, c) for c in (4, 8, 16)]
    variants += [("inter", 128, c) for c in (4, 8, 16)] + [("inter", 256, c) for c in (8,)]
    variants += [("stride", 128, w) for w in (1, 4, 8)] + [("stride", 256, w) for w in (4, 8)]
    for kind, block, c in variants:
        src = source(kind, block, c)
        mod = cp.RawModule(code=src, options=("-arch=sm_90a", "-std=c++17"))
        ker = mod.get_function("k")
        g = (n + block - 1) // block
        if kind in ("coarse", "inter"):
            grid = (g + c - 1) // c
        elif kind == "stride":
            grid = min(g, sms * (2048 // block))
        else:
            grid = g
        b.fill(cp.float16(float("nan")))
        launch = functools.partial(ker, (grid,), (block,), (a, b, cp.int64(n), cp.int64(g)))
        launch()
        ok = bool(cp.all(b.view(cp.uint16) == ref))
        t = timeit(launch)
        name = f"{kind}{'' if kind == 'seed' else c}/b{block}"
        rows.append((name + ("" if ok else " WRONG"), t))
    print(f"n = 2^{args.log2n} fp16, {sms} SMs; bytes moved {nbytes / 1e9:.2f} GB")
    print("| variant | ms | TB/s | % of copy |\n| --- | ---: | ---: | ---: |")
    for name, t in rows:
        print(f"| {name} | {t * 1e3:.3f} | {nbytes / t / 1e12:.2f} | {t_copy / t:.1%} |")


if __name__ == "__main__":
    main()
