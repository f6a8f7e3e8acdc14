"""Which kernels cuBLAS runs for ``torch.matmul(a, b.t())`` at given shapes (issue #33).

    python tools/bench/cublas_kernels.py [MxNxK ...]

The names tell how the peer handles a shape (TMA or not, tile sizes, split-K): evidence for the
row-pitch question (K = 5000: rows of 10,000 bytes, 16 mod 32) before changing how tirx's GEMM
loads such rows. bf16, one call each under ``torch.profiler``; prints shape and kernel names.
"""

from __future__ import annotations

import sys

DEFAULT = ["5000x5000x5000", "4992x4992x4992", "4096x4096x5000", "4096x4096x5008", "2048x2048x1000"]


def main(argv: list[str]) -> int:
    import torch
    from torch.profiler import ProfilerActivity, profile

    print(torch.cuda.get_device_name())
    for spec in argv or DEFAULT:
        M, N, K = (int(x) for x in spec.split("x"))
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        torch.matmul(a, b.t())
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            torch.matmul(a, b.t())
            torch.cuda.synchronize()
        names = sorted({e.key for e in prof.key_averages() if e.device_type.name == "CUDA"})
        print(f"{spec}: " + " | ".join(n[:140] for n in names))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
