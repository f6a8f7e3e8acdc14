"""The README's main job: build the seed guide's ``make_add`` kernel, print it, run it.

Runs on an NVIDIA GPU through the CUDA target when one is usable, otherwise on the CPU
through the interpreter target; it says which one it used.
"""

from __future__ import annotations

import sys

import numpy as np

import tirx
from tirx.script import tirx as T


def make_add(dtype, value, block=256):
    n = T.dynamic("n")

    @T.function
    def add(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(n, block), block=block))
        i = T.cuda.block_idx("x") * block + T.cuda.thread_idx("x")
        if i < n:
            B[i] = A[i] + value

    return add


def _gpu_available() -> tuple[bool, str]:
    """Whether a CUDA device can run the kernel (cuInit probed before anything else)."""
    try:
        from tirx.runtime.driver import probe
    except ImportError as e:  # cuda extra not installed
        return False, f"CUDA support not installed ({e})"
    ok, why = probe()
    if not ok:
        return False, why
    try:
        import torch
    except ImportError:
        return False, "torch is not installed"
    if not torch.cuda.is_available():
        return False, "torch sees no CUDA device"
    return True, ""


def main(argv: list[str] | None = None) -> int:
    add_two_f16 = make_add(T.float16, 2, block=128)
    print(tirx.dumps(add_two_f16))
    ok, why = _gpu_available()
    if ok:
        import torch

        kernel = tirx.compile(add_two_f16, target="cuda")
        a = torch.arange(10, dtype=torch.float16, device="cuda")
        b = torch.empty_like(a)
        kernel(a, b)
        print("target: cuda")
        print(b)
    else:
        kernel = tirx.compile(add_two_f16, target="interp")
        a = np.arange(10, dtype=np.float16)
        b = np.empty_like(a)
        kernel(a, b)
        print(f"target: interp (no usable GPU: {why}; ran on the CPU interpreter)")
        print(b)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
