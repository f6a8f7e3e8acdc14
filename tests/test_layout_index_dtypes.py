"""A layout applied to an index of another integer width (an int64 coordinate, as
``tx // 2147483648`` is under TIRx's literal rules) casts the narrower side to the wider
instead of failing inside the layout (found by ``tirx fuzz --mutate``, seed 1812582295)."""

from __future__ import annotations

import numpy as np

import tirx

TEXT = """
@T.function
def f(A: T.Tensor((64, 64), T.int32, layout=T.TileLayout.from_iters(shard=[T.Iter(64, 1, "m"), T.Iter(64, 64, "m")], replica=[])), B: T.Tensor((64,), T.int32)):
    with T.device_entry(1, 1, 1, 64, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):
        tx: T.let[T.int32] = T.cuda.thread_idx("x")
        B[tx] = A[tx // 2147483648, tx]
"""


def test_an_int64_coordinate_through_a_layout_compiles_and_runs():
    f = tirx.loads(TEXT)
    a = np.arange(64 * 64, dtype=np.int32).reshape(64, 64)
    b = np.zeros(64, dtype=np.int32)
    tirx.compile(f, target="interp")(a, b)
    # the layout is column-major: A[0, tx] lives at element tx * 64 of the storage
    assert (b == np.arange(64, dtype=np.int32) * 64).all()


BIG_STRIDE = """
@T.function
def f[m, n](A: T.Tensor((m, n), T.float32, layout=T.TileLayout.from_iters(shard=[T.Iter(m, 1, "m"), T.Iter(n, 2147483648, "m")], replica=[])), B: T.Tensor((m, n), T.float32)):
    with T.device_entry(1, 1, 1, 32, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):
        r: T.let[T.int32] = T.cuda.thread_idx("x")
        if r < m:
            B[r, 0] = A[r, 0]
"""


def test_a_stride_past_int32_beside_a_symbolic_extent_widens_to_int64():
    # found by ``tirx fuzz --mutate`` (seed 512801254): the span (n - 1) * 2**31 + m of an
    # int32 extent raised "IntImm: 2147483648 does not fit in int32" inside the layout
    f = tirx.loads(BIG_STRIDE)
    span = f.buffer_of(f.params[0]).layout.layout_span()
    assert str(span.ty) == "int64"
    a = np.arange(4, dtype=np.float32).reshape(4, 1)
    b = np.zeros((4, 1), dtype=np.float32)
    tirx.compile(f, target="interp")(a, b)
    assert (b == a).all()
