"""A custom pass: strength-reduce ``x * 2**k`` to ``x << k`` for integers.

Run it: ``python examples/custom_pass.py``. The walkthrough is docs/custom_pass.md.
"""

from __future__ import annotations

import tirx
from tirx.ir import IntImm, Mul, Mutator, PrimType, Shl
from tirx.passes import PassContext, PrintIR, Sequential, Simplify, function_pass


def _log2_exact(value: int) -> int | None:
    """k when value == 2**k for some k >= 1, else None."""
    if value >= 2 and value & (value - 1) == 0:
        return value.bit_length() - 1
    return None


class _StrengthReduce(Mutator):
    def visit_Mul(self, e: Mul):
        e = self.generic_visit(e)  # rewrite the operands first (bottom-up)
        if not isinstance(e, Mul):
            return e
        t = e.ty
        if not (isinstance(t, PrimType) and t.is_int):
            return e  # floats (and bools) keep their multiply
        for x, c in ((e.a, e.b), (e.b, e.a)):
            if isinstance(c, IntImm):
                k = _log2_exact(c.value)
                if k is not None and k < t.bits:
                    return Shl(x, IntImm(k, t), span=e.span)
        return e


@function_pass
def StrengthReduceMul(func):
    """``x * 2**k`` -> ``x << k`` for integer ``x`` (wraparound makes them equal)."""
    return _StrengthReduce().visit(func)


# ------------------------------------------------------------------------ demo
def build_kernel():
    from tirx.script import tirx as T

    @T.function
    def scale(A: T.Tensor((64,), T.int32), B: T.Tensor((64,), T.int32), F: T.Tensor((64,), T.float32)):
        with T.device_entry(
            2,
            1,
            1,
            32,
            1,
            1,
            attrs={
                "cuda.kernel_attrs": {},
                "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"],
            },
        ):
            i: T.let[T.int32] = T.cuda.block_idx("x") * 32 + T.cuda.thread_idx("x")
            B[i] = A[i] * 8 + 4 * A[(i + 1) % 64] + A[i] * 3
            F[i] = F[i] * T.float32(2.0)

    return scale


def main() -> None:
    f = build_kernel()
    with PassContext([PrintIR()], verify=True):
        g = Sequential([Simplify(), StrengthReduceMul])(f)
    try:
        import numpy as np

        a = np.arange(64, dtype=np.int32) - 20
        outs = []
        for fn in (f, g):
            b = np.zeros(64, np.int32)
            fl = np.linspace(-1, 1, 64).astype(np.float32)
            tirx.compile(fn, target="interp")(a, b, fl)
            outs.append((b, fl))
        same = all(np.array_equal(x, y) for x, y in zip(outs[0], outs[1]))
        print("interpreter: same outputs before and after:", same)
    except Exception as e:  # the interpreter is optional for this demo
        print(f"(interpreter check skipped: {type(e).__name__}: {e})")


if __name__ == "__main__":
    main()
