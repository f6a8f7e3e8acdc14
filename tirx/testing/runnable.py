"""``runnable_kernels()``: random well-formed kernels *with inputs*, for differential testing.

Every generated kernel can run on the interpreter (and the CUDA backend): indices are in
bounds by construction (``FloorMod(e, n)``), divisors are never 0 or -1, shift amounts are
masked, loops are bounded and ``while`` loops count up to a small bound. Each draw is a
``Runnable``: the Function plus its arguments; ``Runnable.run(f)`` runs ``f`` (by default
the generated one) on fresh copies of the arguments and returns every array argument
after the run, so two versions of a kernel (before/after a pass, after a text round
trip) can be compared bit for bit::

    from hypothesis import given
    from tirx.testing.runnable import runnable_kernels

    @given(runnable_kernels())
    def test_my_pass_preserves_meaning(r):
        r.assert_same(r.run(), r.run(my_pass(r.func)))

Covered: int32 and float32 arithmetic (wrapping, truncating and floor division/modulo, by
computed or constant divisors,
shifts, bit ops, min/max, selects, casts both ways), detours through other integer types
(int8..uint64: wrapping, unsigned division and shifts) and through float16/bfloat16
arithmetic (rounding at every step), constants of float16/bfloat16/float64/float8 (edge
values, NaN, inf) and huge int64 ones cast, combined and compared (what constant folding must
round to their dtype first), loads of input buffers, scalar
params, Binds, local accumulators, ``if``/``else``, serial loops, ``while`` with
``break``/``continue``, dynamic or constant sizes, host-only loops or a device entry
(grid x block with a bounds guard), sometimes a shared-memory exchange with barriers and,
in blocks of whole warps, warp shuffles and butterfly reductions before the guard; in a device
entry, sometimes atomics on the thread's own output element whose old values expressions use
beside reads of it (the order C leaves open: ``sequence-effects``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from tirx.ir import expr as E
from tirx.ir.buffer import Buffer
from tirx.ir.function import Function
from tirx.ir.op import call
from tirx.ir.types import TensorType, bfloat16, float16, float32, int32, prim
from tirx.surface.builder import IRBuilder, launch_args

__all__ = ["Runnable", "runnable_kernels"]

_FCONSTS = (0.0, 1.0, -1.0, 0.5, -2.5, 0.125, 3.0, 1024.0, -0.0, 7.75)
_ITYPES = tuple(prim(n) for n in ("int64", "uint32", "int16", "uint8", "int8", "uint64"))
_ICONSTS = (0, 1, -1, 2, 3, 7, -8, 100, -1000, 2**31 - 1, -(2**31), 65535, 12345)
# constants of other float dtypes, which constant folding must round to their dtype first
# (issue #29): values that round differently in float16 / bfloat16 / float8, past a dtype's
# range, below its smallest subnormal, NaN and inf; int64 values float32 must round only once
_TC_TYPES = tuple(prim(n) for n in ("float16", "bfloat16", "float64", "float8_e4m3fn", "float8_e5m2"))
_TC_VALUES = (
    0.1, -0.3, 1e-08, 6e-08, 3e-05, 65504.0, 65519.0, 65520.0, 448.0, 464.0, 57344.0, 61440.0,
    1.0009765625, 1.00048828125, 2049.0, 1e10, -0.0, 2.5, -3.75, float("inf"), float("-inf"), float("nan"),
)  # fmt: skip
_TC_INTS = (2**60 + 2**36 + 1, 2**53 + 1, 2**24 + 1, -(2**40) - 2**16 - 1, 2**63 - 1, -(2**63), 16777217)


class Runnable:
    """A generated kernel and its arguments."""

    def __init__(self, func: Function, args: tuple, note: str = ""):
        self.func = func
        self.args = args
        self.note = note

    def fresh_args(self) -> list:
        return [a.copy() if isinstance(a, np.ndarray) else a for a in self.args]

    def run(self, func: Function | None = None, **options: Any) -> list[np.ndarray]:
        """Run ``func`` (default: the generated one) on the interpreter; return the arrays."""
        from tirx.interp import compile as icompile

        k = icompile(self.func if func is None else func, **options)
        args = self.fresh_args()
        k(*args)
        return [a for a in args if isinstance(a, np.ndarray)]

    @staticmethod
    def assert_same(a: list, b: list, what: str = "") -> None:
        for i, (x, y) in enumerate(zip(a, b)):
            if not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
                bad = np.flatnonzero(
                    ~((x == y) | (np.isnan(x) & np.isnan(y)) if x.dtype.kind == "f" else x == y)
                )
                k = int(bad[0])
                raise AssertionError(
                    f"{what}output {i} differs at element {k}: {x.reshape(-1)[k]!r} vs {y.reshape(-1)[k]!r}"
                )

    def __repr__(self) -> str:
        try:
            from tirx import dumps

            text = dumps(self.func)
        except Exception:
            text = repr(self.func)
        return f"Runnable({self.note})\n{text}\nargs={self.args!r}"


class _Gen:
    def __init__(self, draw, b: IRBuilder, X, F, s, N):
        self.draw = draw
        self.b = b
        self.X, self.F, self.s, self.N = X, F, s, N
        self.ivars: list = [s]
        self.fvars: list = []
        # the accumulators of the kernel body (None while its first values are drawn)
        self.acc: Buffer | None = None
        self.facc: Buffer | None = None
        self.loop_depth = 0
        self.budget = 0
        self.extra_types = True
        #: the thread's own output element in a device entry (``OI[i]``): read, or changed by
        #: an atomic whose old value an expression uses, beside other reads and effects (C
        #: leaves their order open; the CUDA must run them in the interpreter's order)
        self.own: Any = None

    # ------------------------------------------------------------- expressions
    def index(self, d: int):
        return E.FloorMod(self.iexpr(d + 1), self.N)

    def iexpr(self, d: int = 0) -> E.PrimExpr:
        draw = self.draw
        if d >= 3 or draw(st.integers(0, 9)) < 3:
            k = draw(st.integers(0, 3 if self.own is None else 5))
            if k == 4:
                return self.own
            if k == 5:
                assert self.own is not None  # k reaches 5 only with an own element
                op = draw(st.sampled_from(("cuda.atomic_add", "cuda.atomic_max", "cuda.atomic_exch")))
                return call(op, call("address_of", self.own), self.iexpr(d + 1))
            if k == 0 or not (self.ivars or self.acc):
                return E.const(draw(st.sampled_from(_ICONSTS)), int32)
            if k == 1 and self.acc is not None:
                return self.acc[0]
            if k == 2:
                return self.X[E.FloorMod(draw(st.sampled_from(self.ivars)), self.N)]
            return draw(st.sampled_from(self.ivars))
        k = draw(st.integers(0, 14 if self.extra_types else 13))
        a = self.iexpr(d + 1)
        if k == 14:  # a detour through another integer type (wraps / truncates / sign-changes)
            # int32 too: a cast to the type it has is no conversion, and its operand keeps its
            # own precedence (TIRx text keeps `T.Cast("int32", tx % 3)`; a codegen that dropped
            # the parentheses computed `c * tx % 3`: held-out round 13)
            t2 = draw(st.sampled_from((*_ITYPES, int32)))
            x, y = E.Cast(t2, a), E.Cast(t2, self.iexpr(d + 1))
            j = draw(st.integers(0, 5))
            if j <= 2:
                r = (E.Add, E.Sub, E.Mul)[j](x, y)
            elif j == 3:
                one = E.const(1, t2)
                den: E.PrimExpr = E.Add(E.BitAnd(y, E.const(7, t2)), one)
                if draw(st.booleans()):  # constant divisors, powers of two among them
                    den = E.const(draw(st.sampled_from((2, 4, 64, 3, 6))), t2)
                r = draw(st.sampled_from((E.Div, E.Mod, E.FloorDiv, E.FloorMod)))(x, den)
            elif j == 4:
                r = E.Shr(x, E.BitAnd(y, E.const(t2.bits - 1, t2)))
            else:
                r = (E.Min if draw(st.booleans()) else E.Max)(x, y)
            return E.Cast(int32, r)
        if k <= 5:
            cls = (E.Add, E.Sub, E.Mul, E.BitAnd, E.BitOr, E.BitXor)[k]
            return cls(a, self.iexpr(d + 1))
        if k == 6:
            return (E.Min if draw(st.booleans()) else E.Max)(a, self.iexpr(d + 1))
        if k == 7:
            den = E.Add(E.BitAnd(self.iexpr(d + 1), E.const(7, int32)), E.const(1, int32))
            if draw(st.booleans()):
                den = E.Sub(E.const(-1, int32), den)  # -2 .. -9, never -1
            if draw(st.integers(0, 2)) == 0:  # constant divisors, powers of two among them
                den = E.const(draw(st.sampled_from((2, 8, 1 << 16, 1 << 30, 3, -4, 12))), int32)
            cls = draw(st.sampled_from((E.Div, E.Mod, E.FloorDiv, E.FloorMod)))
            return cls(a, den)
        if k == 8:
            amt = E.BitAnd(self.iexpr(d + 1), E.const(15 if draw(st.booleans()) else 31, int32))
            return (E.Shl if draw(st.booleans()) else E.Shr)(a, amt)
        if k == 9:
            return E.Select(self.cond(d + 1), a, self.iexpr(d + 1))
        if k == 10:
            return self.X[self.index(d)]
        if k == 11:
            return E.Cast(int32, self.fexpr(d + 1))
        if k == 12:
            return E.BitNot(a)
        return E.Sub(E.const(0, int32), a)

    def fexpr(self, d: int = 0) -> E.PrimExpr:
        draw = self.draw
        if d >= 3 or draw(st.integers(0, 9)) < 3:
            k = draw(st.integers(0, 3))
            if k == 0:
                if self.extra_types and draw(st.integers(0, 3)) == 0:
                    return self.typed_consts()
                return E.const(draw(st.sampled_from(_FCONSTS)), float32)
            if k == 1 and self.facc is not None:
                return self.facc[0]
            if k == 2 and self.fvars:
                return draw(st.sampled_from(self.fvars))
            return self.F[self.index(d)]
        k = draw(st.integers(0, 7 if self.extra_types else 6))
        a = self.fexpr(d + 1)
        if k == 7:  # arithmetic in a half type, rounded at every step
            t2 = draw(st.sampled_from((float16, bfloat16)))
            x, y = E.Cast(t2, a), E.Cast(t2, self.fexpr(d + 1))
            j = draw(st.integers(0, 3))
            r = (E.Add, E.Sub, E.Mul, E.Max)[j](x, y)
            return E.Cast(float32, r)
        if k <= 2:
            return (E.Add, E.Sub, E.Mul)[k](a, self.fexpr(d + 1))
        if k == 3:
            return (E.Min if draw(st.booleans()) else E.Max)(a, self.fexpr(d + 1))
        if k == 4:
            return E.Cast(float32, self.iexpr(d + 1))
        if k == 5:
            return E.Select(self.cond(d + 1), a, self.fexpr(d + 1))
        return call(draw(st.sampled_from(("fabs", "floor", "trunc"))), a)

    def typed_const(self, t: Any) -> E.FloatImm:
        return E.FloatImm(self.draw(st.sampled_from(_TC_VALUES)), t)

    def typed_consts(self) -> E.PrimExpr:
        """A float32 value computed from constants of another dtype only: a cast of one, an
        operation on two, an int64 constant cast, a chain of casts (Simplify folds them all)."""
        draw = self.draw
        t = draw(st.sampled_from(_TC_TYPES))
        k = draw(st.integers(0, 4))
        if k == 0:
            return E.Cast(float32, self.typed_const(t))
        if k == 1:
            ops = (E.Add, E.Sub, E.Mul) if t.is_minifloat else (E.Add, E.Sub, E.Mul, E.Div, E.Min, E.Max)
            return E.Cast(float32, draw(st.sampled_from(ops))(self.typed_const(t), self.typed_const(t)))
        if k == 2:
            return E.Cast(float32, E.IntImm(draw(st.sampled_from(_TC_INTS)), prim("int64")))
        if k == 3:
            return E.Cast(float32, E.Cast(draw(st.sampled_from(_TC_TYPES)), self.typed_const(t)))
        return E.Cast(float32, E.Cast(int32, self.typed_const(t)))

    def cond(self, d: int = 0) -> E.PrimExpr:
        draw = self.draw
        k = draw(st.integers(0, 5))
        cmp = draw(st.sampled_from((E.LT, E.LE, E.GT, E.GE, E.EQ, E.NE)))
        if k == 5 and self.extra_types and draw(st.booleans()):  # two constants of one float dtype
            t = draw(st.sampled_from(_TC_TYPES))
            return cmp(self.typed_const(t), self.typed_const(t))
        if k <= 2:
            return cmp(self.iexpr(d + 1), self.iexpr(d + 1))
        if k == 3:
            return cmp(self.fexpr(d + 1), self.fexpr(d + 1))
        if k == 4 and d < 2:
            return (E.And if draw(st.booleans()) else E.Or)(self.cond(d + 1), self.cond(d + 1))
        return E.Not(cmp(self.iexpr(d + 1), self.iexpr(d + 1)))

    # ------------------------------------------------------------- statements
    def stmts(self, i, OI, OF, depth: int) -> None:
        draw = self.draw
        n = draw(st.integers(1, 4))
        saved_i, saved_f = list(self.ivars), list(self.fvars)
        for _ in range(n):
            if self.budget <= 0:
                break
            self.budget -= 1
            self.stmt(i, OI, OF, depth)
        self.ivars, self.fvars = saved_i, saved_f

    def stmt(self, i, OI, OF, depth: int) -> None:
        draw, b = self.draw, self.b
        k = draw(st.integers(0, 10))
        if k == 0:
            self.ivars.append(b.bind("v", self.iexpr()))
        elif k == 1:
            self.fvars.append(b.bind("f", self.fexpr()))
        elif k == 2:
            OI[i] = self.iexpr()
        elif k == 3:
            OF[i] = self.fexpr()
        elif k == 4:
            assert self.acc is not None  # statements are drawn after body() made the accumulators
            self.acc[0] = self.acc[0] + self.iexpr()
        elif k == 5:
            assert self.facc is not None  # as for acc
            self.facc[0] = self.facc[0] + self.fexpr()
        elif k == 6 and depth < 3:
            with b.if_(self.cond()):
                self.stmts(i, OI, OF, depth + 1)
            if draw(st.booleans()):
                with b.else_():
                    self.stmts(i, OI, OF, depth + 1)
        elif k == 7 and depth < 3:
            with b.for_("j", 0, draw(st.integers(0, 4))) as j:
                self.ivars.append(j)
                self.loop_depth += 1
                self.stmts(i, OI, OF, depth + 1)
                self.loop_depth -= 1
                self.ivars.remove(j)
        elif k == 8 and depth < 3:
            w = b.alloc("w", TensorType((1,), int32, "local"))
            w[0] = 0
            with b.while_(w[0] < draw(st.integers(0, 5))):
                w[0] = w[0] + 1
                self.loop_depth += 1
                self.stmts(i, OI, OF, depth + 1)
                self.loop_depth -= 1
        elif k == 9 and self.loop_depth > 0:
            with b.if_(self.cond()):
                if draw(st.booleans()):
                    b.break_()
                else:
                    b.continue_()
        else:
            OI[i] = OI[i] ^ self.iexpr()


#: block shapes by thread count (x, y, z), for 1, 4, 32 and 64 threads
_BLOCK_SHAPES = ((1, 1, 1), (4, 1, 1), (2, 2, 1), (1, 2, 2), (32, 1, 1), (16, 2, 1), (8, 2, 2), (4, 4, 2),
                 (64, 1, 1), (16, 2, 2), (32, 2, 1), (8, 8, 1))  # fmt: skip
#: thread-model ops whose values depend on the block's shape
_THREAD_OPS = (
    "cuda.lane_id",
    "cuda.warp_id",
    "cuda.warpgroup_id",
    "cuda.warp_in_warpgroup",
    "cuda.thread_in_warpgroup",
)

_SHUFFLES = ("cuda.shfl_sync", "cuda.shfl_xor_sync", "cuda.shfl_down_sync", "cuda.shfl_up_sync")
#: TIRx's CUDA-named shuffles: (mask, value, lane, width)
_CUDA_SHUFFLES = ("cuda.__shfl_sync", "cuda.__shfl_xor_sync", "cuda.__shfl_down_sync", "cuda.__shfl_up_sync")


def _warp_exchange(draw, b: IRBuilder, xi: E.PrimExpr, xf: E.PrimExpr, ivars: list, fvars: list) -> None:
    """One to three warp shuffles / butterfly reductions of an int32 or float32 value, bound
    where every lane of the (full) warps is active; the results join the body's variables."""
    for _ in range(draw(st.integers(1, 3))):
        use_f = draw(st.booleans())
        v = xf if use_f else xi
        if draw(st.integers(0, 2)):
            lane = E.const(draw(st.integers(0, 40)), int32)  # PTX reads the low 5 bits
            if draw(st.booleans()):
                w = b.bind("w", call(draw(st.sampled_from(_SHUFFLES)), v, lane))
            else:  # a full mask, a power-of-two lane group
                full = E.const(0xFFFFFFFF, prim("uint32"))
                width = E.const(draw(st.sampled_from((1, 2, 4, 8, 16, 32))), int32)
                w = b.bind("w", call(draw(st.sampled_from(_CUDA_SHUFFLES)), full, v, lane, width))
        else:
            how = draw(st.sampled_from(("sum", "max", "min")))
            w = b.bind("w", call("cuda.warp_reduce", v, how, draw(st.sampled_from((2, 4, 8, 16, 32)))))
        (fvars if use_f else ivars).append(w)


@st.composite
def runnable_kernels(draw, max_stmts: int = 12, extra_types: bool = True) -> Runnable:
    """A random kernel (host-only or with a device entry) and inputs for it.

    ``extra_types=False`` keeps all arithmetic in int32 and float32 (no detours through
    other integer widths or half types)."""
    n = draw(st.integers(1, 40))
    dyn = draw(st.booleans())
    device = draw(st.booleans())
    smem = device and draw(st.integers(0, 3)) == 0
    block = draw(st.sampled_from((1, 4, 32, 64))) if device else 1
    b = IRBuilder()
    nvar = E.Var("n") if dyn else None
    size = nvar if dyn else n
    with b, b.function("kern"):
        X = b.param("X", TensorType((size,), int32))
        F = b.param("F", TensorType((size,), float32))
        s = b.param("s", int32)
        OI = b.param("OI", TensorType((size,), int32))
        OF = b.param("OF", TensorType((size,), float32))
        N = nvar if nvar is not None else E.const(n, int32)  # nvar is set exactly when dyn
        g = _Gen(draw, b, X, F, s, N)
        g.extra_types = extra_types
        g.budget = draw(st.integers(1, max_stmts))

        # a vector-element view of X or F (float32x2 / int32x4 ...), static shapes only
        vec_lanes = draw(st.sampled_from((0, 0, 0, 2, 4))) if device and not dyn else 0
        if vec_lanes > n:
            vec_lanes = 0
        warp_i: list = []  # values exchanged across the warp before the bounds guard
        warp_f: list = []

        def body(i):
            g.ivars.append(i)
            g.ivars.extend(warp_i)
            g.fvars.extend(warp_f)
            g.acc = g.facc = None
            init_i, init_f = g.iexpr(), g.fexpr()  # before the accumulators exist: no reads of them
            acc = b.alloc("acc", TensorType((1,), int32, "local"))
            facc = b.alloc("facc", TensorType((1,), float32, "local"))
            acc[0] = init_i
            facc[0] = init_f
            g.acc, g.facc = acc, facc
            if vec_lanes:  # a view of vector elements over an input (the interpreter once
                # indexed it in scalars where the CUDA indexes vectors)
                src, et = (F, float32) if draw(st.booleans()) else (X, int32)
                vt = prim(et.base, vec_lanes)
                view = b.decl("xv", TensorType((n // vec_lanes,), vt, "global"), src.data)
                lanes = b.alloc("lv", TensorType((vec_lanes,), et, "local"))
                lv = b.decl("lvv", TensorType((1,), vt, "local"), lanes.data, "local")
                lv[0] = view[E.FloorMod(i, E.const(n // vec_lanes, int32))]
                got = lanes[draw(st.integers(0, vec_lanes - 1))] - lanes[vec_lanes - 1]
                (g.fvars if et is float32 else g.ivars).append(b.bind("q", got))
            if device and draw(st.booleans()):
                g.own = OI[i]
            g.stmts(i, OI, OF, 0)
            g.own = None
            OI[i] = OI[i] + g.acc[0]
            OF[i] = OF[i] + g.facc[0]

        if device:
            grid = (N + (block - 1)) // block if dyn else (n + block - 1) // block
            # the block as 1, 2 or 3 dimensions of the same thread count: warps are formed from
            # the linear index, so lane / warp indices must not read threadIdx.x alone
            shape = draw(st.sampled_from([d for d in _BLOCK_SHAPES if d[0] * d[1] * d[2] == block]))
            with b.device_entry(*launch_args(grid, shape if shape[1:] != (1, 1) else block)):
                if shape[1:] == (1, 1) and draw(st.booleans()):
                    t = b.bind("t", call("cuda.thread_idx", "x"))
                else:
                    t = b.bind("t", call("cuda.linear_thread_id"))
                i = b.bind("i", call("cuda.block_idx", "x") * block + t)
                for op in draw(st.lists(st.sampled_from(_THREAD_OPS), max_size=2, unique=True)):
                    warp_i.append(b.bind("w", call(op)))
                if smem:
                    sh = b.alloc("sh", TensorType((block,), int32, "shared"))
                    sh[t] = X[E.FloorMod(i, N)] * 3 + t
                    b.evaluate(call("cuda.cta_sync"))
                    with b.if_(i < N):
                        OI[i] = sh[E.FloorMod(t + draw(st.integers(1, 70)), E.const(block, int32))]
                    b.evaluate(call("cuda.cta_sync"))
                if block >= 32 and draw(st.integers(0, 2)) == 0:
                    _warp_exchange(draw, b, X[E.FloorMod(i, N)], F[E.FloorMod(i, N)], warp_i, warp_f)
                with b.if_(i < N):
                    body(i)
        else:
            with b.for_("i", 0, N) as i:
                body(i)
    f = b.get()
    assert isinstance(f, Function)  # b.function() built it
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    xs = rng.integers(-1000, 1000, n).astype(np.int32)
    if n > 2 and draw(st.booleans()):
        xs[:2] = (2**31 - 1, -(2**31))
    fs = (rng.standard_normal(n) * 8).round(2).astype(np.float32)
    sval = int(draw(st.sampled_from((0, 1, -3, 17, 2**31 - 1))))
    args = (xs, fs, sval, np.zeros(n, np.int32), np.zeros(n, np.float32))
    return Runnable(f, args, note=f"n={n} dyn={dyn} device={device} block={block} smem={smem}")
