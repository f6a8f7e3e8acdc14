"""On a GPU: constants of every float dtype the semantic campaign draws (issue #29 item 1)
compute the same on CUDA as on the interpreter, before and after Simplify folds them — so
folding through the interpreter's rounding is folding what the GPU computes.

One kernel holds every case (a store each): casts of each constant to float32 and int32,
casts through a second dtype, the arithmetic and comparisons of two constants, int64
constants cast to float32. NaN constants are left to the NaN bit tests.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gpu_util import require_gpu

require_gpu()

import tirx  # noqa: E402
import tirx.interp as ti  # noqa: E402
from tirx.ir import (  # noqa: E402
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    Cast,
    Div,
    FloatImm,
    IntImm,
    Max,
    Min,
    Mul,
    Sub,
    TensorType,
    const,
)
from tirx.ir.types import PrimType  # noqa: E402
from tirx.passes import Simplify  # noqa: E402
from tirx.surface.builder import IRBuilder, launch_args  # noqa: E402
from tirx.testing.gpu_compare import EXACT, run_cuda, run_interp, same  # noqa: E402
from tirx.testing.runnable import _TC_INTS, _TC_TYPES, _TC_VALUES  # noqa: E402

pytestmark = pytest.mark.gpu
F32, I32, I64, BOOL = PrimType("float32"), PrimType("int32"), PrimType("int64"), PrimType("bool")
VALUES = [v for v in _TC_VALUES if not math.isnan(v)]
PAIR_VALUES = [0.1, 1e-08, 65519.0, 464.0, 1.00048828125, 2049.0, -3.75, math.inf]


def _cases() -> tuple[list, list, list]:
    fl, it, bo = [], [], []
    for t in _TC_TYPES:
        for v in VALUES:
            fl.append(Cast(F32, FloatImm(v, t)))
            if math.isfinite(v) and abs(v) < 2**31:
                it.append(Cast(I32, FloatImm(v, t)))
            for t2 in _TC_TYPES:
                fl.append(Cast(F32, Cast(t2, FloatImm(v, t))))
        ops = (Add, Sub, Mul) if t.is_minifloat else (Add, Sub, Mul, Div, Min, Max)
        for x in PAIR_VALUES:
            for y in PAIR_VALUES:
                a, b = FloatImm(x, t), FloatImm(y, t)
                fl.extend(Cast(F32, op(a, b)) for op in ops)
                bo.extend(cmp(a, b) for cmp in (EQ, NE, LT, LE, GT, GE))
    fl.extend(Cast(F32, IntImm(v, I64)) for v in _TC_INTS)
    return fl, it, bo


def _kernel():
    fl, it, bo = _cases()
    b = IRBuilder()
    with b, b.function("consts"):
        OF = b.param("OF", TensorType((len(fl),), F32))
        OI = b.param("OI", TensorType((len(it),), I32))
        OB = b.param("OB", TensorType((len(bo),), BOOL))
        with b.device_entry(*launch_args(1, 1)):
            for buf, es in ((OF, fl), (OI, it), (OB, bo)):
                for k, e in enumerate(es):
                    b.store(buf, (const(k),), e)
    f = b.get()
    args = [np.zeros(len(fl), np.float32), np.zeros(len(it), np.int32), np.zeros(len(bo), np.bool_)]
    return f, args


def bits_same(want: list, got: list, what: str) -> None:
    """Bit for bit (the sign of a zero too); any NaN matches any NaN."""
    same(want, got)
    for i, (x, y) in enumerate(zip(want, got)):
        if x.dtype == np.float32:
            bad = (x.view(np.uint32) != y.view(np.uint32)) & ~(np.isnan(x) & np.isnan(y))
            assert not bad.any(), (
                f"{what}: output {i} element {np.flatnonzero(bad)[:5]}: {x[bad][:5]} vs {y[bad][:5]}"
            )


def test_typed_constants_agree_on_gpu_interpreter_and_after_simplify():
    f, args = _kernel()
    g = Simplify()(f)
    assert tirx.dumps(g) != tirx.dumps(f)  # Simplify folded (most of) them
    want = run_interp(ti.compile(f), args)
    bits_same(want, run_interp(ti.compile(g), args), "interpreter after Simplify")
    bits_same(want, run_cuda(tirx.compile(f, target="cuda", options=EXACT), args), "CUDA")
    bits_same(want, run_cuda(tirx.compile(g, target="cuda", options=EXACT), args), "CUDA after Simplify")
