"""Kernels whose host code has control flow around device entries (TIRx's host programs),
shared by tests/test_host_program.py (builds, the host code's launches, errors) and
tests/test_host_program_gpu.py (GPU against the interpreter)."""

from __future__ import annotations

from tirx.script import tirx as T


@T.function
def loop_launch(A: T.Tensor((4, 128), "float32"), skip: T.int32):
    T.assume_aligned(A, 128)
    for it in range(4):
        if skip != it:
            with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128)):
                t = T.cuda.thread_idx("x")
                A[it, t] = A[it, t] * T.float32(2) + T.Cast("float32", it)


@T.function
def host_scalar(A: T.Tensor((128,), "int32"), n: T.int32):
    m: T.int32 = n * 2
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128)):
        t = T.cuda.thread_idx("x")
        A[t] = t + m
    m = m + 1
    with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32)):
        t = T.cuda.thread_idx("x")
        A[t] = A[t] * m


@T.function
def if_else_launch(A: T.Tensor((128,), "float32"), flag: T.int32):
    if flag != 0:
        with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128)):
            A[T.cuda.thread_idx("x")] = T.float32(1)
    else:
        with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64)):
            A[T.cuda.thread_idx("x") * 2] = T.float32(-1)


@T.function
def while_steps(A: T.Tensor((256,), "int32"), n: T.int32) -> T.int32:
    """Doubling steps while the host's width is below n; the grid grows with it; returns the
    number of launches."""
    w: T.int32 = 1
    steps: T.int32 = 0
    while w < n:
        if w > 64:
            break
        with T.device_entry(launch=T.cuda.LaunchConfig(grid=(w + 31) // 32, block=32)):
            i = T.cuda.block_idx("x") * 32 + T.cuda.thread_idx("x")
            if i < w:
                A[i + w] = A[i] + w
        w = w * 2
        steps = steps + 1
    return steps


@T.function
def nested_loops(A: T.Tensor((3, 4, 32), "int32"), lo: T.int32):
    for i in range(3):
        for j in range(lo, 4):
            base = i * 10 + j
            if j == 2:
                continue
            with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32)):
                t = T.cuda.thread_idx("x")
                A[i, j, t] = base * 100 + t


@T.function
def host_reads_device(A: T.Tensor((32,), "int32"), L: T.Tensor((2, 4), "int32")) -> T.int32:
    """Host code reads lengths from device memory, sums them, writes the sum back, and launches
    with what it read (TIRx's host code reading a tensor; tirx copies each element)."""
    n = L[0, 0]
    total: T.int32 = 0
    for k in range(4):
        total = total + L[1, k]
    L[0, 1] = total
    if n > 0:
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        tx = T.cuda.thread_idx("x")
        A[tx] = n * 100 + total
        L[1, 0] = 7
    return total + L[1, 0]


_n = T.dynamic("n")


@T.function
def affine_loop(A: T.Tensor((2 * _n + 1,), "int32")):
    # n is read from A's length (2 * n + 1) by the host program itself: its loop runs n times
    for it in range(_n):
        with T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32)):
            t = T.cuda.thread_idx("x")
            if t == 0:
                A[2 * it + 1] = A[2 * it] + it
