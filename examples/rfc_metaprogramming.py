"""The TVMScript metaprogramming RFC's features F1-F4, written for tirx.

    python examples/rfc_metaprogramming.py     # prints every kernel

F1 template metaprogramming (captured values), F2 rank polymorphism (``T.BufferFrom``,
starred loop targets), F3 ``T.compute`` sugar, F4 plain Python helpers interleaved with
the kernel (the RFC's nms ``get_box_coordinates``).
"""

from __future__ import annotations

import numpy as np

import tirx
from tirx.script import tirx as T
from tirx.surface.builder import IRBuilder

# -- F1: the parsed result equals the function with the captured values written in -----


def gen_matmul(n, m, dtype="float32"):
    @T.function
    def matmul(A: T.Tensor((n, m), dtype), B: T.Tensor((m, n), dtype), C: T.Tensor((n, n), dtype)):
        for i, j in T.grid(n, n):
            acc: T.float32 = 0.0
            for k in range(m):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc

    return matmul


# -- F2: one generic definition for every rank --------------------------------------------


def broadcast_add(a, b, c):
    """C = A + B with numpy broadcasting, typed after example arrays (1-D to 4-D)."""

    @T.function
    def f(A: T.BufferFrom(a), B: T.BufferFrom(b), C: T.BufferFrom(c)):
        for i, i_a, i_b in T.broadcast_grid(C.shape, A.shape, B.shape):
            C[i] = A[i_a] + B[i_b]  # C[*i] = A[*i_a] + B[*i_b] on Python >= 3.11

    return f


def row_sum(a):
    """Reduce the last axis of a tensor of any rank."""

    @T.function
    def f(A: T.BufferFrom(a), Out: T.Tensor(a.shape[:-1] or (1,), str(a.dtype))):
        for *spatial, r in T.grid(*A.shape):
            if r == 0:
                Out[tuple(spatial) or (0,)] = A[(*spatial, r)]
            else:
                Out[tuple(spatial) or (0,)] = Out[tuple(spatial) or (0,)] + A[(*spatial, r)]

    return f


# -- F3: TE-compute sugar -------------------------------------------------------------------


@T.function
def te_compute_sugar(A: T.Tensor((128, 128), "float32"), B: T.Tensor((128, 128), "float32")):
    C = T.compute((128, 128), lambda i, j: A[i, j] + B[i, j])
    T.compute((128, 128), lambda i, j: C[i, j] * T.float32(0.5), out=B)


# -- F4: host Python building IR inside the kernel ------------------------------------------


def get_box_coordinates(output, batch_idx, box_idx, box_start_idx):
    """a method executed by the python interpreter"""
    box_l = T.min(output[batch_idx, box_idx, box_start_idx], output[batch_idx, box_idx, box_start_idx + 2])
    box_t = T.min(
        output[batch_idx, box_idx, box_start_idx + 1], output[batch_idx, box_idx, box_start_idx + 3]
    )
    box_r = T.max(output[batch_idx, box_idx, box_start_idx], output[batch_idx, box_idx, box_start_idx + 2])
    box_b = T.max(
        output[batch_idx, box_idx, box_start_idx + 1], output[batch_idx, box_idx, box_start_idx + 3]
    )
    return box_l, box_t, box_r, box_b


def clear_row(buf, row):
    """Emits statements directly through the active IRBuilder."""
    for k in range(buf.shape[1].value):
        IRBuilder.current().store(buf, (row, k), 0.0)


@T.function
def nms_iou(output: T.Tensor((4, 32, 6), "float32"), iou: T.Tensor((4, 32), "float32")):
    box_start_idx = T.meta_var(2)
    for batch_idx in range(4):
        clear_row(iou, batch_idx)
        for j in range(32):
            a_l, a_t, a_r, a_b = get_box_coordinates(output, batch_idx, j, box_start_idx)
            for k in range(j):
                b_l, b_t, b_r, b_b = get_box_coordinates(output, batch_idx, k, box_start_idx)
                w = T.max(T.float32(0), T.min(a_r, b_r) - T.max(a_l, b_l))
                h = T.max(T.float32(0), T.min(a_b, b_b) - T.max(a_t, b_t))
                iou[batch_idx, k] = T.max(iou[batch_idx, k], w * h)


def main() -> None:
    print(tirx.dumps(gen_matmul(64, 32)))
    for shapes in [((4,), (4,), (4,)), ((128, 1), (1, 128), (128, 128)), ((2, 3, 4, 5), (5,), (2, 3, 4, 5))]:
        print(tirx.dumps(broadcast_add(*(np.zeros(s, "float32") for s in shapes))))
    print(tirx.dumps(row_sum(np.zeros((2, 3, 8), "float32"))))
    print(tirx.dumps(te_compute_sugar))
    print(tirx.dumps(nms_iou))


if __name__ == "__main__":
    main()
