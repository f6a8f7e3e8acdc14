"""``softmax`` and ``rms_norm`` over the last dimension of torch CUDA tensors.

The kernels are ``tirx/kernels/hopper/memory.py``'s (one CTA per row, the row in registers,
16-byte accesses, fp32 arithmetic); a row length compiles once, then every row count runs on
that kernel. Row lengths the kernels tile (the row split into 128 to 1024 threads of 1 to 8
16-byte vectors: multiples of 1024 elements for fp16/bf16 up to 65536) are taken; others are
refused with the lengths that are.
"""

from __future__ import annotations

import functools
from typing import Any

from tirx.kernels._host import check_cuda, takes_arrays

__all__ = ["rms_norm", "softmax"]

_DT = ("float16", "bfloat16", "float32")
_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4}


def vec_elems(dtype: str) -> int:
    """Elements of ``dtype`` in a 16-byte vector (the kernels' accesses)."""
    return 16 // _BYTES[dtype]


def softmax_block(N: int, dtype: str = "float16") -> int:
    """Threads per row of the row kernels (``tirx/kernels/hopper/memory.py``): 16-byte vectors,
    2-4 vectors per thread, 128..1024 threads."""
    vecs = N // vec_elems(dtype)
    for per in (2, 4, 1, 8):
        b = vecs // per
        if 128 <= b <= 1024 and b % 32 == 0 and b * per == vecs:
            return b
    raise ValueError(f"no block shape for N={N}")


@functools.cache
def _softmax(N: int, dtype: str) -> Any:
    from tirx.runtime.ready import compile_ready

    return compile_ready("tirx.kernels.hopper.memory:make_softmax", N, dtype, softmax_block(N, dtype))


@functools.cache
def _rmsnorm(N: int, dtype: str, eps: float) -> Any:
    from tirx.runtime.ready import compile_ready

    return compile_ready("tirx.kernels.hopper.memory:make_rmsnorm", N, dtype, softmax_block(N, dtype), eps)


def _block(name: str, N: int, dtype: str) -> None:
    try:
        softmax_block(N, dtype)
    except ValueError:
        vec = vec_elems(dtype)
        raise ValueError(
            f"{name}: rows of {N} elements are not supported; the kernels take multiples of "
            f"{128 * vec} {dtype} elements from {128 * vec} to {1024 * 8 * vec}"
        ) from None


def _rows(name: str, x: Any) -> Any:
    if x.dim() < 1 or not x.is_contiguous():
        raise ValueError(f"{name}: expected a contiguous tensor of at least one dimension")
    return x.reshape(-1, x.shape[-1])


@takes_arrays("x")
def softmax(x: Any) -> Any:
    """``torch.softmax(x, dim=-1)`` for a contiguous fp16 / bf16 / fp32 CUDA tensor."""
    import torch

    dt = check_cuda("x", x, _DT)
    _block("x", x.shape[-1], dt)
    x2 = _rows("x", x)
    y = torch.empty_like(x2)
    if x2.shape[0]:
        _softmax(x2.shape[1], dt)(x2, y)
    return y.view(x.shape)


@takes_arrays("x", "weight")
def rms_norm(x: Any, weight: Any, eps: float = 1e-6) -> Any:
    """``torch.nn.functional.rms_norm(x, (N,), weight, eps)``: ``x * rsqrt(mean(x^2) + eps) *
    weight`` over the last dimension, fp32 arithmetic."""
    import torch

    dt = check_cuda("x", x, _DT)
    check_cuda("weight", weight, (dt,), 1)
    if weight.shape[0] != x.shape[-1]:
        raise ValueError(
            f"weight: shape {tuple(weight.shape)} does not match x's last dimension {x.shape[-1]}"
        )
    _block("x", x.shape[-1], dt)
    x2 = _rows("x", x)
    y = torch.empty_like(x2)
    if x2.shape[0]:
        _rmsnorm(x2.shape[1], dt, float(eps))(x2, weight.contiguous(), y)
    return y.view(x.shape)
