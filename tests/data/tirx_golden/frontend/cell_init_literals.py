# `x: T.<dtype> = <Python number>`: TIRx's literal (int32 / float32) cast to the dtype, folded where
# TIRx folds: a float64 cell starts from T.Cast("float64", T.float32(0.1)) (float32 precision, as
# `acc += 0.1` has), a float16 one from the float32-rounded value, an int from T.Cast or a fold.
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), "float64")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    a: T.float64 = 0.1
    b: T.float16 = 0.1
    c: T.int64 = 3
    d: T.float64 = 2
    e: T.bfloat16 = 1.5
    g: T.float32 = 7
    h: T.uint8 = 5
    exact: T.float64 = T.float64(0.1)
    a += 1
    b += 1
    A[0] = a + T.cast(b, "float64") + T.cast(c, "float64") + d + T.cast(e, "float64")
    A[1] = T.cast(g, "float64") + T.cast(h, "float64") + exact
