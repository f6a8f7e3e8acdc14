"""``elementwise_kernels()``: random one-thread-per-element kernels with inputs.

The shape :class:`tirx.passes.VectorizeThreads` rewrites — ``i = blockIdx.x * B +
threadIdx.x`` (int32 or int64), a guard, loads at ``i + c`` of 1-D inputs, an invariant
load and a scalar parameter, one or two stores at ``i + c`` — in many dtypes, block sizes
and offsets (offsets that break 16-byte alignment send lanes to the scalar path), so the
rewrite can be compared with the kernel as written on the interpreter, bit for bit.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tirx.ir import expr as E
from tirx.ir.function import Function
from tirx.ir.op import call
from tirx.ir.types import TensorType, prim
from tirx.surface.builder import IRBuilder, launch_args

from .runnable import Runnable

__all__ = ["elementwise_kernels"]

_DTYPES = ("float16", "float32", "float64", "int8", "int32", "int64", "uint8")
PAD = 8  # the guard keeps i + PAD < n, so offsets up to PAD stay in bounds


def _value(draw, leaves: list, t) -> E.PrimExpr:
    depth = draw(st.integers(0, 3))
    e = draw(st.sampled_from(leaves))
    for _ in range(depth):
        o = draw(st.sampled_from(leaves))
        kind = draw(st.sampled_from(("add", "sub", "mul", "max", "min")))
        if kind == "add":
            e = e + o
        elif kind == "sub":
            e = e - o
        elif kind == "mul":
            e = e * o
        else:
            e = E.Max(e, o) if kind == "max" else E.Min(e, o)
    return e if e.ty == t else E.Cast(t, e)


def _array(rng: np.random.Generator, t, n: int) -> np.ndarray:
    if t.is_float:
        return rng.standard_normal(n).astype(np.dtype(t.base))
    lo, hi = (-100, 100) if t.kind == "int" else (0, 200)
    return rng.integers(lo, hi, n).astype(np.dtype(t.base) if t.base != "bool" else np.bool_)


@st.composite
def elementwise_kernels(draw) -> Runnable:
    tin = prim(draw(st.sampled_from(_DTYPES)))
    tout = prim(draw(st.sampled_from(_DTYPES)))
    block = draw(st.sampled_from((32, 64, 128, 256)))
    idx_t = prim(draw(st.sampled_from(("int32", "int64"))))
    n_val = draw(st.integers(1, 3000))  # elements the guard lets through
    extra_blocks = draw(st.integers(0, 2))
    ca, cc, cb = (draw(st.sampled_from((0, 0, 1, 3, 8))) for _ in range(3))
    two_stores = draw(st.booleans())
    guard = draw(st.sampled_from(("lt", "lt_and_ge", "lt_and_param")))
    b = IRBuilder("elementwise_kernels")
    with b, b.function("ew"):
        n = E.Var("n", idx_t)
        A = b.param("A", TensorType((n,), tin))
        C = b.param("C", TensorType((n,), tin))
        S = b.param("S", TensorType((1,), tin))
        Bo = b.param("B", TensorType((n,), tout))
        D = b.param("D", TensorType((n,), tout)) if two_stores else None
        s = b.param("s", prim("int32"))
        grid = (n + (block - 1)) // block + extra_blocks
        with b.device_entry(*launch_args(grid, block)):
            bx = E.Cast(idx_t, call("cuda.block_idx", "x"))
            tx = E.Cast(idx_t, call("cuda.thread_idx", "x"))
            i = b.bind("i", bx * block + tx)
            cond = i + PAD < n
            if guard == "lt_and_ge":
                cond = E.And(cond, i >= E.IntImm(draw(st.integers(0, 40)), idx_t))
            elif guard == "lt_and_param":
                cond = E.And(cond, s > 0)
            with b.if_(cond):
                leaves = [A[i + ca], C[i + cc], S[0], E.Cast(tin, s), E.Cast(tin, i)]
                if draw(st.booleans()):  # an update in place: the stored element read first
                    old = Bo[i + cb]
                    leaves.append(old if tout == tin else E.Cast(tin, old))
                v = b.bind("v", _value(draw, leaves, tin))
                b.store(Bo, (i + cb,), _value(draw, [v, E.Cast(tin, s)], tout))
                if D is not None:
                    b.store(D, (i,), _value(draw, [v, A[i + ca]], tout))
    f = b.get()
    assert isinstance(f, Function)  # b.function() built it
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    size = n_val + PAD
    args: list = [_array(rng, tin, size), _array(rng, tin, size), _array(rng, tin, 1)]
    args += [_array(rng, tout, size)] * (2 if two_stores else 1)
    args.append(int(draw(st.sampled_from((-3, 0, 1, 7)))))
    return Runnable(f, tuple(args), f"n={size}")
