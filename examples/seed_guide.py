# ruff: noqa: F821
# (``N`` in the @T.jit annotations is a T.constexpr parameter, bound by .specialize)
"""The TIRx metaprogramming guide's examples, with only the import changed (tvm_tirx -> tirx).

Run it: ``python examples/seed_guide.py`` prints the three kernels and, when a CUDA GPU
and torch are available, runs ``add_two_f16`` like the guide does.
"""

from __future__ import annotations

import tirx
from tirx.script import tirx as T

# -- Parameterizing kernels with captured values ------------------------------------


def make_add(dtype, value, block=256):
    n = T.dynamic("n")

    @T.function
    def add(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(n, block), block=block))
        i = T.cuda.block_idx("x") * block + T.cuda.thread_idx("x")
        if i < n:
            B[i] = A[i] + value

    return add


add_two_f16 = make_add(T.float16, 2, block=128)

# -- Reusable code fragments ----------------------------------------------------------


@T.inline
def add_one_if_valid(A, B, i, n):
    if i < n:
        B[i] = A[i] + 1


n = T.dynamic("n")


@T.function
def add_one_pairs(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(n, 512), block=256))
    i = (T.cuda.block_idx("x") * 256 + T.cuda.thread_idx("x")) * 2
    add_one_if_valid(A, B, i, n)
    add_one_if_valid(A, B, i + 1, n)


# -- Compile-time specialization ------------------------------------------------------


@T.jit
def add_one_fixed(
    A: T.Tensor((N,), T.float32),
    B: T.Tensor((N,), T.float32),
    *,
    N: T.constexpr,
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(N, 256), block=256))
    i = T.cuda.block_idx("x") * 256 + T.cuda.thread_idx("x")
    if i < N:
        B[i] = A[i] + 1


add_one_256 = add_one_fixed.specialize(N=256)


def main() -> None:
    for f in (add_two_f16, add_one_pairs, add_one_256):
        print(tirx.dumps(f))
    try:
        import torch

        if not torch.cuda.is_available():
            return
        add_two_f16_compiled = tirx.compile(add_two_f16, target="cuda")
    except Exception as e:  # no GPU, no torch, or no CUDA target in this checkout
        print(f"(not running on the GPU: {type(e).__name__}: {e})")
        return
    a = torch.arange(10, dtype=torch.float16, device="cuda")
    b = torch.empty_like(a)
    add_two_f16_compiled(a, b)
    print(b)


if __name__ == "__main__":
    main()
