"""The FuncCompiler's expressions (``e_<node>``: arithmetic, logic, casts, lets, calls) and
the compile-time integer ranges that prove indices in bounds; a mixin of
``engine.FuncCompiler``, split from it by node family (issue #30)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from tirx.ops.semantics import dtypes as D
from tirx.ops.semantics import nan as _nan
from tirx.ops.semantics.errors import DivisionByZeroError, InterpError

from ..errors import OpError
from ..ir import expr as E
from ..ir.functor import Dispatch, Functor
from ..ir.op import PTX, NoInterp, Op, impl
from ..ir.types import PointerType, PrimType, VoidType
from .state import _UNBOUND, Fn, _lane_mask, where

if TYPE_CHECKING:
    from .engine import Program


def _int_trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.floor_divide(a, b)
    if a.dtype.kind == "u":
        return q
    r = np.remainder(a, b)
    adj = (r != 0) & ((a < 0) != (b < 0))
    return q + adj.astype(q.dtype)


def _first_active(z: np.ndarray, c: Any) -> int:
    """The first thread of ``c`` where ``z`` (per thread, or one value for all) holds."""
    if z.shape[0] == 1:
        return 0 if c.count == c.N else int(np.flatnonzero(c.mask)[0])
    return int(np.flatnonzero(z.reshape(z.shape[0], -1).any(axis=1))[0])


def _fl_floordiv(a, b):
    if a.dtype == np.float16:  # half types compute in float32 and round once
        return _fl_floordiv(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
    return np.floor(a / b).astype(a.dtype)


def _fl_floormod(a, b):
    if a.dtype == np.float16:
        return _fl_floormod(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
    return (a - np.floor(a / b) * b).astype(a.dtype)


def _can_fault(e: Any) -> bool:
    """Does evaluating ``e`` read memory or call something (so it needs the lane mask)?"""
    from ..ir.visitor import post_order

    return any(
        isinstance(n, (E.BufferLoad, E.Call, E.Div, E.Mod, E.FloorDiv, E.FloorMod)) for n in post_order(e)
    )


class ExprMixin(Functor):
    """Expressions into closures ``c -> lane array``."""

    prog: Program
    ranges: dict
    launch_dims: dict | None

    # ------------------------------------------------------------------ expressions
    _e_table = Dispatch("e_")

    def expr(self, e: Any) -> Fn:
        m = self._e_table[type(e)]
        if m is None:
            raise InterpError(f"the interpreter cannot evaluate {type(e).__name__} expressions")
        return m(self, e)

    def e_IntImm(self, e):
        v = D.make_const(e.value, e.ty)
        return lambda c: v

    def e_FloatImm(self, e):
        v = D.make_const(e.value, e.ty)
        return lambda c: v

    def e_StringImm(self, e):
        v = e.value
        return lambda c: v

    def e_Var(self, e):
        def ev(c, e=e):
            try:
                return c.env[e]
            except KeyError:
                raise InterpError(f"variable {e.name!r} is used where it has no value") from None

        return ev

    def e_GlobalVar(self, e):
        raise InterpError(f"function {e.name!r} used as a value (only calls are supported)")

    def _binop(self, e, fn, narrow: PrimType | None = None):
        fa, fb = self.expr(e.a), self.expr(e.b)
        if narrow is not None:
            return lambda c: D.round_to(fn(fa(c), fb(c)), narrow)
        return lambda c: fn(fa(c), fb(c))

    def _arith(self, e, fint, ffloat=None):
        t = e.ty
        el = t.element if isinstance(t, PrimType) else None
        if el is not None and el.is_bool and fint in (np.add, np.subtract, np.multiply):
            # one-bit arithmetic: computed as integers, a bool again (numpy has no bool
            # subtraction; the CUDA casts C's int result back to bool)
            return self._binop(e, lambda a, b: fint(a.astype(np.int8), b.astype(np.int8)) != 0)
        if el is not None and el.is_float:  # NaN results with the GPU's bits (tirx/ops/semantics/nan.py)
            rnd = (lambda r: D.round_to(r, el)) if D.needs_rounding(el) else None
            return self._binop(e, _nan.binary(ffloat or fint, el, type(e).__name__.lower(), rnd))
        return self._binop(e, fint)

    def e_Add(self, e):
        return self._arith(e, np.add)

    def e_Sub(self, e):
        return self._arith(e, np.subtract)

    def e_Mul(self, e):
        return self._arith(e, np.multiply)

    def _int_division(self, e, fint, ffloat):
        """A division or modulo: of integers, a zero divisor in a thread that evaluates it is a
        DivisionByZeroError (what the GPU gives is unspecified), not numpy's 0."""
        t = e.ty
        if not (isinstance(t, PrimType) and t.is_int):
            return self._arith(e, fint, ffloat)
        fa, fb = self.expr(e.a), self.expr(e.b)
        what = {"Div": "T.Div", "Mod": "T.truncmod", "FloorDiv": "T.floordiv", "FloorMod": "T.floormod"}
        name = what[type(e).__name__]

        def ev(c):
            a, b = fa(c), fb(c)
            z = b == 0
            if z.any():
                if z.shape[0] != 1 and c.count != c.N and z.shape[0] == c.N:
                    z = z & _lane_mask(c.mask, z)
                elif z.shape[0] == 1 and c.count == 0:
                    z = z & False
                if z.any():
                    if c.launch is None:
                        by = ""
                    else:
                        lane = _first_active(z, c)
                        by = f" by {c.describe(lane)}"
                    raise DivisionByZeroError(
                        f"integer division by zero ({name} {where(e)}{by}): undefined in CUDA C++, the "
                        "GPU gives an unspecified value"
                    )
            return fint(a, b)

        return ev

    def e_Div(self, e):
        return self._int_division(e, _int_trunc_div, np.divide)

    def e_Mod(self, e):
        return self._int_division(e, np.fmod, np.fmod)

    def e_FloorDiv(self, e):
        return self._int_division(e, np.floor_divide, _fl_floordiv)

    def e_FloorMod(self, e):
        return self._int_division(e, np.remainder, _fl_floormod)

    def e_Min(self, e):
        return self._arith(e, np.minimum, D.fmin)

    def e_Max(self, e):
        return self._arith(e, np.maximum, D.fmax)

    def e_BitAnd(self, e):
        return self._binop(e, np.bitwise_and)

    def e_BitOr(self, e):
        return self._binop(e, np.bitwise_or)

    def e_BitXor(self, e):
        return self._binop(e, np.bitwise_xor)

    def e_Shl(self, e):
        return self._binop(e, np.left_shift)

    def e_Shr(self, e):
        return self._binop(e, np.right_shift)

    def e_EQ(self, e):
        return self._binop(e, np.equal)

    def e_NE(self, e):
        return self._binop(e, np.not_equal)

    def e_LT(self, e):
        return self._binop(e, np.less)

    def e_LE(self, e):
        return self._binop(e, np.less_equal)

    def e_GT(self, e):
        return self._binop(e, np.greater)

    def e_GE(self, e):
        return self._binop(e, np.greater_equal)

    def _logic(self, e, is_and: bool):
        fa, fb = self.expr(e.a), self.expr(e.b)
        op = np.logical_and if is_and else np.logical_or
        if not _can_fault(e.b):
            return lambda c: op(fa(c), fb(c))

        def ev(c):
            a = fa(c)
            if a.shape[0] == 1 and a.ndim == 1:
                if bool(a[0]) != is_and:
                    return a
                return fb(c)
            saved, cnt = c.mask, c.count
            m = saved & (a if is_and else ~a)
            n = int(np.count_nonzero(m))
            if n == 0:
                return a
            c.set_mask(m, n)
            try:
                b = fb(c)
            finally:
                c.mask, c.count = saved, cnt
            return op(a, b)

        return ev

    def e_And(self, e):
        return self._logic(e, True)

    def e_Or(self, e):
        return self._logic(e, False)

    def e_Not(self, e):
        fa = self.expr(e.a)
        return lambda c: np.logical_not(fa(c))

    def e_BitNot(self, e):
        fa = self.expr(e.a)
        return lambda c: np.invert(fa(c))

    def _lazy_select(self, fc_, ft, ff, lazy: bool):
        def ev(c):
            cond = fc_(c)
            if cond.shape[0] == 1 and cond.ndim == 1:
                return ft(c) if cond[0] else ff(c)
            if not lazy:
                tv, fv = ft(c), ff(c)
                cm = cond if tv.ndim == 1 or cond.ndim > 1 else cond.reshape(-1, *([1] * (tv.ndim - 1)))
                return np.where(cm, tv, fv)
            saved, cnt = c.mask, c.count
            mt = saved & cond
            mf = saved & ~cond
            nt, nf = int(np.count_nonzero(mt)), int(np.count_nonzero(mf))
            try:
                tv = fv = None
                if nt:
                    c.set_mask(mt, nt)
                    tv = ft(c)
                if nf:
                    c.set_mask(mf, nf)
                    fv = ff(c)
            finally:
                c.mask, c.count = saved, cnt
            if tv is None:
                return fv
            if fv is None:
                return tv
            cm = cond if tv.ndim == 1 else cond.reshape(-1, *([1] * (tv.ndim - 1)))
            return np.where(cm, tv, fv)

        return ev

    def e_Select(self, e):
        lazy = _can_fault(e.true_value) or _can_fault(e.false_value)
        return self._lazy_select(self.expr(e.cond), self.expr(e.true_value), self.expr(e.false_value), lazy)

    def e_Cast(self, e):
        fv = self.expr(e.value)
        src, dst = e.value.ty, e.ty
        if isinstance(dst, PointerType) or isinstance(src, PointerType):
            if isinstance(dst, PointerType) and isinstance(src, PointerType):
                return fv
            raise InterpError(f"the interpreter cannot cast between {src} and {dst}")
        if src == dst:
            return fv
        fix = _nan.cast(src, dst) if isinstance(src, PrimType) and isinstance(dst, PrimType) else None
        if fix is not None:  # NaN results with the GPU's bits (tirx/ops/semantics/nan.py)

            def ev(c):
                x = fv(c)
                return fix(D.cast(x, src, dst), x)

            return ev
        return lambda c: D.cast(fv(c), src, dst)

    def e_Shuffle(self, e):
        from .shuffle import eval_shuffle  # TIRx's T.Shuffle (tirx/ir/shuffle.py)

        return eval_shuffle(self, e)

    def e_Let(self, e):
        fv, fb, var = self.expr(e.value), self.expr(e.body), e.var

        def ev(c):
            # the var is bound in the body only: an outer binding of the same var object
            # (a shadowed Bind / Let / loop var) is visible again afterwards
            env = c.env
            old = env.get(var, _UNBOUND)
            env[var] = fv(c)
            try:
                return fb(c)
            finally:
                if old is _UNBOUND:
                    env.pop(var, None)
                else:
                    env[var] = old

        return ev

    def e_Ramp(self, e):
        fb, fs, L = self.expr(e.base), self.expr(e.stride), e.lanes
        el = e.base.ty

        def ev(c):
            b, s = fb(c), fs(c)
            r = np.arange(L, dtype=b.dtype)
            out = b[:, None] + s[:, None] * r[None, :]
            return out.astype(b.dtype) if not D.needs_rounding(el) else D.round_to(out, el)

        return ev

    def e_Broadcast(self, e):
        fv, L = self.expr(e.value), e.lanes
        return lambda c: np.repeat(fv(c)[:, None], L, axis=1)

    def e_Call(self, e):
        if isinstance(e.op, E.GlobalVar):
            return self._call_global(e)
        op = e.op
        fn = impl("interp", op)
        if isinstance(fn, NoInterp):
            raise OpError(f"the interpreter cannot run T.{op.name}: {fn.reason}")
        if fn is None:
            cuda = impl("cuda", op)
            if isinstance(cuda, PTX):
                what = f" ({cuda.template!r})" if cuda.template else ""
                raise OpError(
                    f"the interpreter cannot run T.{op.name}: it is inline PTX{what} with no CPU model "
                    "(TMA, wgmma and mbarrier pipelines need the cuda target)"
                )
            raise OpError(f"op T.{op.name} has no handler in the interp backend")
        return fn(self, e)

    def _call_global(self, e):
        name = e.op.name
        prog = self.prog
        fargs = [self.expr(a) for a in e.args]
        ret_void = isinstance(e.ty, VoidType)
        cell: list = []

        def ev(c):
            if not cell:
                cell.append(prog.get(name))
            fc = cell[0]
            if len(fc.f.params) != len(fargs):
                raise InterpError(
                    f"call of {name!r} with {len(fargs)} arguments; it takes {len(fc.f.params)}"
                )
            args = [a(c) for a in fargs]
            r = fc.call(c, args)
            if r is None:
                if ret_void:
                    return np.zeros(1, dtype=np.int32)
                raise InterpError(f"function {name!r} returned no value")
            return r

        return ev

    # ------------------------------------------------------------------ ranges
    def range_of(self, e: Any) -> tuple[int, int] | None:
        """An inclusive integer range holding every value of ``e`` (without wraparound), or None."""
        r = self._range(e)
        if r is None:
            return None
        t = e.ty
        if not (isinstance(t, PrimType) and t.is_int and t.lanes == 1):
            return None
        lo, hi = D.int_bounds(t)
        if r[0] < lo or r[1] > hi:
            return None
        return r

    def _range(self, e: Any) -> tuple[int, int] | None:
        if isinstance(e, E.IntImm):
            return (e.value, e.value)
        if isinstance(e, E.Var):
            return self.ranges.get(e)
        if isinstance(e, E.Cast):
            if isinstance(e.value.ty, PrimType) and e.value.ty.is_int:
                return self.range_of(e.value)
            return None
        if isinstance(e, (E.Add, E.Sub, E.Mul, E.Min, E.Max)):
            a, b = self.range_of(e.a), self.range_of(e.b)
            if a is None or b is None:
                return None
            if isinstance(e, E.Add):
                return (a[0] + b[0], a[1] + b[1])
            if isinstance(e, E.Sub):
                return (a[0] - b[1], a[1] - b[0])
            if isinstance(e, E.Min):
                return (min(a[0], b[0]), min(a[1], b[1]))
            if isinstance(e, E.Max):
                return (max(a[0], b[0]), max(a[1], b[1]))
            ps = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
            return (min(ps), max(ps))
        if isinstance(e, (E.FloorMod, E.FloorDiv, E.BitAnd)):
            b = self.range_of(e.b)
            if b is None or b[0] != b[1]:
                return None
            c = b[0]
            if isinstance(e, E.BitAnd):
                return (0, c) if c >= 0 else None
            if c <= 0:
                return None
            if isinstance(e, E.FloorMod):
                return (0, c - 1)
            a = self.range_of(e.a)
            return None if a is None else (a[0] // c, a[1] // c)
        if isinstance(e, E.Call) and isinstance(e.op, Op) and self.launch_dims is not None:
            tr = e.op.traits
            if tr.range is not None:
                # the op's declared range given this launch's block/grid extents (others unknown)
                dims = self.launch_dims

                def dim(key: str):
                    if not key.startswith(("block.", "grid.")):
                        return None
                    d = dims.get(key, 1)
                    return (d, d) if d >= 1 else None

                ax = e.args[0].value if e.args and isinstance(e.args[0], E.StringImm) else None
                if e.args and ax is None:
                    return None
                r = tr.value_range(ax, dim)
                return r if r is not None and r[0] <= r[1] else None
        return None
