"""The interpreter core: IR -> a tree of Python closures over numpy lane vectors.

Every closure takes a ``Ctx``. A value is a numpy array with one entry per lane — shape
``(N,)`` (``(N, lanes)`` for vector dtypes) — or shape ``(1,)`` when it is uniform across
lanes (constants, loop counters, parameters); numpy broadcasting mixes the two. Statements
run under ``ctx.mask``, the lanes (threads) still executing; branches, loops, ``break``,
``continue`` and ``return`` shrink and re-grow the mask. Expressions are evaluated for all
lanes, but memory is only touched for active lanes, so a guarded ``A[i]`` never faults.

On the device, one lane is one thread; all blocks of a chunk of the grid run at once (a
barrier is a statement every thread of a block reaches together, so lockstep execution is a
valid schedule). On the host, there is one lane.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tirx.ops.semantics import dtypes as D
from tirx.ops.semantics import nan as _nan
from tirx.ops.semantics.errors import InterpError, LimitError, OutOfBoundsError, RaceError
from tirx.ops.semantics.lanes import ATOMIC_TAG as _ATOMIC_T
from tirx.ops.semantics.lanes import TAG_BASE as _TB
from tirx.ops.semantics.lanes import full as _full
from tirx.ops.semantics.lanes import race_state as _race_state
from tirx.ops.semantics.lanes import remote_base as _remote_base
from tirx.ops.semantics.lanes import stamps as _stamps
from tirx.ops.semantics.lanes import unit_base as _unit_base
from tirx.ops.semantics.memory import BLOCK, GLOBAL, THREAD, Mem, PtrVal

from ..errors import OpError
from ..ir import deep
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer
from ..ir.function import Function, Module
from ..ir.op import PTX, NoInterp, Op, impl
from ..ir.types import PointerType, PrimType, VoidType

# an op's interpreter form for a statement (its value unused): ``declare(interp_stmt=...)``
STMT_BACKEND = "interp.stmt"

Fn = Callable[["Ctx"], Any]


# ----------------------------------------------------------------------------- launch
class Launch:
    """The lane layout of one chunk of a grid: blocks ``b0 .. b0+nb`` x ``T`` threads."""

    def __init__(
        self,
        grid: tuple,
        block: tuple,
        b0: int,
        nb: int,
        cluster: tuple | None,
        gw: _GlobalWrites | None = None,
    ):
        self.grid = grid
        self.block = block
        self.cluster = cluster or (1, 1, 1)
        self.T = block[0] * block[1] * block[2]
        self.b0 = b0
        self.nb = nb
        self.N = nb * self.T
        self.epoch = np.zeros(nb, dtype=np.int64)
        self.alive = None  # lanes that have not returned (None: all)
        #: the launch's record of plain global stores, shared by its chunks (None: races unchecked)
        self.gw = gw
        self._cache: dict = {}

    def get(self, key: str) -> np.ndarray:
        a = self._cache.get(key)
        if a is None:
            a = self._cache[key] = self._make(key)
        return a

    def _make(self, key: str) -> np.ndarray:
        T, nb = self.T, self.nb
        if key == "tid":
            return np.tile(np.arange(T, dtype=np.int32), nb)
        if key == "bl":
            return np.repeat(np.arange(nb, dtype=np.int32), T)
        if key == "bid":
            return (self.get("bl") + np.int32(self.b0)).astype(np.int32)
        if key == "lane":
            return np.arange(self.N, dtype=np.int64)
        kind, axis = key.split(".")
        bx, by, _bz = self.block
        gx, gy, _gz = self.grid
        if kind == "t":
            t = self.get("tid")
            v = (t % bx, (t // bx) % by, t // (bx * by))["xyz".index(axis)]
        elif kind == "b":
            b = self.get("bid")
            v = (b % gx, (b // gx) % gy, b // (gx * gy))["xyz".index(axis)]
        else:
            raise InterpError(f"unknown lane array {key}")
        return np.ascontiguousarray(v, dtype=np.int32)

    def describe(self, lane: int) -> str:
        lane = int(lane)
        b = self.b0 + lane // self.T
        t = lane % self.T
        bx, by, _ = self.block
        gx, gy, _ = self.grid
        bi = (b % gx, (b // gx) % gy, b // (gx * gy))
        ti = (t % bx, (t // bx) % by, t // (bx * by))
        return f"block {bi}, thread {ti}"


class Loop:
    __slots__ = ("brk", "cont")

    def __init__(self):
        self.brk = None
        self.cont = None


# ----------------------------------------------------------------------------- budgets
#: what one loop iteration, call or chunk launch costs besides its lanes, in thread-steps:
#: interpreting a statement costs about as much fixed Python time as a thousand lanes of numpy
STEP = 1024


class Budget:
    """What is left of one kernel call's ``max_steps`` (shared by all its contexts)."""

    __slots__ = ("left", "limit")

    def __init__(self, limit: int):
        self.left = self.limit = limit


def where(node: Any) -> str:
    """``file:line:col`` of an IR node, for error messages."""
    sp = getattr(node, "span", None)
    return f"at {sp}" if sp is not None else "(no source location)"


_UNBOUND = object()  # env lookup default: the var had no binding
_RAISE = "raise it with tirx.interp.compile(f, {opt}=...) or tirx.compile(f, target='interp', {opt}=...)"


def over_budget(c: Ctx, cost: int, what: str) -> LimitError:
    lim = c.budget.limit
    return LimitError(
        f"{what} needs {cost} more thread-steps, past the run's budget max_steps={lim} "
        f"({lim - c.budget.left} used; a long or endless computation?); {_RAISE.format(opt='max_steps')}"
    )


def too_many_iters(s: Any, n: int, limit: int, what: str) -> LimitError:
    return LimitError(
        f"{what} {where(s)} runs {n} iterations, past max_loop_iters={limit} "
        f"(an endless loop?); {_RAISE.format(opt='max_loop_iters')}"
    )


def _loop_what(s: Any) -> str:
    if isinstance(s, S.While):
        return "while loop"
    return f"for loop over {s.var.name}"


def _exits_early(body: Any) -> bool:
    """May a loop with this body stop before its trip count (a ``break`` of its own, or a
    ``return``)? Conservative: True when unsure."""
    from ..ir.visitor import child_nodes

    stack = [(body, False)]
    while stack:
        n, nested = stack.pop()
        if isinstance(n, S.Return) or (isinstance(n, S.Break) and not nested):
            return True
        if isinstance(n, E.PrimExpr):
            continue
        inner = nested or isinstance(n, (S.For, S.While))
        stack.extend((ch, inner) for ch in child_nodes(n) if not isinstance(ch, E.PrimExpr))
    return False


class Ctx:
    """Execution state: lanes, active mask, variable values, allocations."""

    __slots__ = (
        "N",
        "allocs",
        "budget",
        "count",
        "depth",
        "env",
        "launch",
        "loops",
        "mask",
        "prog",
        "ret_mask",
        "ret_val",
    )

    def __init__(
        self,
        prog: Program,
        N: int,
        launch: Launch | None,
        env: dict,
        mask: np.ndarray | None = None,
        budget: Budget | None = None,
    ):
        self.prog = prog
        self.budget = Budget(prog.max_steps) if budget is None else budget
        self.N = N
        self.launch = launch
        self.env = env
        self.mask = np.ones(N, dtype=bool) if mask is None else mask
        self.count = N if mask is None else int(np.count_nonzero(mask))
        self.loops: list[Loop] = []
        self.ret_mask = None
        self.ret_val = None
        self.allocs: dict = {}
        self.depth = 0

    def set_mask(self, m: np.ndarray, count: int | None = None) -> None:
        self.mask = m
        self.count = int(np.count_nonzero(m)) if count is None else count

    def describe(self, lane: int) -> str:
        if self.launch is None:
            return "host"
        return self.launch.describe(lane)

    def lanes_arr(self) -> np.ndarray:
        if self.launch is not None:
            return self.launch.get("lane")
        return np.arange(self.N, dtype=np.int64)


# ----------------------------------------------------------------------------- helpers
def _lane_mask(mask: np.ndarray, like: np.ndarray) -> np.ndarray:
    if like.ndim == 1:
        return mask
    return mask.reshape(-1, *([1] * (like.ndim - 1)))


def _first_lane(bad: np.ndarray) -> int:
    flat = np.flatnonzero(bad.reshape(bad.shape[0], -1).any(axis=1)) if bad.ndim > 1 else np.flatnonzero(bad)
    return int(flat[0])


def _pick(x: np.ndarray, lane: int):
    x = np.asarray(x)
    if x.shape[0] == 1:
        lane = 0
    v = x[lane]
    return v.tolist() if isinstance(v, np.ndarray) else v.item()


def _int_trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.floor_divide(a, b)
    if a.dtype.kind == "u":
        return q
    r = np.remainder(a, b)
    adj = (r != 0) & ((a < 0) != (b < 0))
    return q + adj.astype(q.dtype)


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


def _out_of_range(ix: np.ndarray, dim: int) -> np.ndarray | None:
    """Lanes whose index is outside [0, dim), or None when all are inside."""
    k = ix.dtype
    if k.kind == "i" and k.itemsize >= 4 and dim <= (1 << (8 * k.itemsize - 1)):
        b = ix.view(np.uint32 if k.itemsize == 4 else np.uint64) >= dim
    elif k.kind == "u":
        b = ix >= dim
    else:
        b = (ix < 0) | (ix >= dim)
    return b if b.any() else None


# ----------------------------------------------------------------------------- program
class Program:
    """Compiled functions of one Function or Module, with the run options."""

    def __init__(
        self,
        root: Function | Module,
        check_races: bool = True,
        max_lanes: int = 1 << 15,
        max_loop_iters: int = 10_000_000,
        check_bounds: bool = True,
        max_steps: int = 1 << 31,
        max_alloc_bytes: int = 1 << 32,
    ):
        self.root = root
        self.check_races = check_races
        self.check_bounds = check_bounds
        self.max_lanes = max(1, int(max_lanes))
        self.max_loop_iters = _positive(max_loop_iters, "max_loop_iters")
        self.max_steps = _positive(max_steps, "max_steps")
        self.max_alloc_bytes = _positive(max_alloc_bytes, "max_alloc_bytes")
        self.funcs: dict[str, Function] = {}
        if isinstance(root, Module):
            for f in root.functions:
                self.funcs[f.name] = f
        else:
            self.funcs[root.name] = root
        self.compiled: dict[str, FuncCompiler] = {}
        #: some function was too deep to compile on the caller's thread: run on the deep worker
        self.needs_deep = False

    def get(self, name: str) -> FuncCompiler:
        fc = self.compiled.get(name)
        if fc is None:
            f = self.funcs.get(name)
            if f is None:
                raise InterpError(f"call of unknown function {name!r} (not in the module)")
            fc = deep.call(self._compile, name, f)
        return fc

    def _compile(self, name: str, f: Function) -> FuncCompiler:
        """Compile ``f`` (a side-effect-free retry on the large-stack worker if it is too
        deep for this thread; then its runs go to the worker too)."""
        fc = FuncCompiler(self, f)
        self.compiled[name] = fc
        try:
            fc.compile()
        except BaseException:
            self.compiled.pop(name, None)
            raise
        if deep.active():
            self.needs_deep = True
        return fc


def _allocate(c: Ctx, s: Any, name: str, units: int, n: int, dt: np.dtype) -> np.ndarray:
    """The zeroed storage of one allocation (``units`` copies of ``n`` elements), or a
    located LimitError past ``max_alloc_bytes`` or what numpy can give (never numpy's own
    MemoryError or "array is too big" ValueError, which name no buffer and no line)."""
    nbytes = units * n * dt.itemsize
    cap = c.prog.max_alloc_bytes
    what = f"allocation {name} {where(s)}: {units} x {n} elements of {dt} ({nbytes} bytes)"
    if nbytes > cap:
        raise LimitError(
            f"{what} is over the limit max_alloc_bytes={cap}; {_RAISE.format(opt='max_alloc_bytes')}"
        )
    try:
        return np.zeros((units, n), dtype=dt)
    except (MemoryError, ValueError) as e:
        raise LimitError(f"{what} cannot be allocated on this machine ({e})") from None


def _positive(v: Any, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"tirx.interp.compile: {name} must be a positive integer, got {v!r}")
    return int(v)


class FuncCompiler:
    """Compiles one Function body into closures."""

    def __init__(self, prog: Program, f: Function):
        self.prog = prog
        self.f = f
        self.body: Fn | None = None
        self.simple_bufs: set = set()
        self.in_device = False
        # compile-time integer ranges (inclusive) of vars, for proving indices in bounds
        self.ranges: dict = {}
        self.launch_dims: dict | None = None
        self._shape_cache: dict = {}  # id(shape tuple) -> (shape, evaluators): see _shape_fns

    def compile(self) -> None:
        for _, b in self.f.buffer_map:
            if b.elem_offset is None and not b.strides:
                self.simple_bufs.add(b)
        self.body = self.stmt(self.f.body)

    # ------------------------------------------------------------------ calls
    def call(self, c: Ctx, args: list, mask: np.ndarray | None = None) -> Any:
        """Run this function in a fresh scope on ``c``'s lanes with parameter values ``args``."""
        f = self.f
        env = {}
        for p, a in zip(f.params, args):
            env[p] = a
        if c.depth > 200:
            raise InterpError(f"call depth exceeded 200 calling {f.name!r} (unbounded recursion?)")
        b = c.budget
        if b.left < c.N + STEP:
            raise over_budget(c, c.N + STEP, f"the call of {f.name!r}")
        b.left -= c.N + STEP
        sub = Ctx(c.prog, c.N, c.launch, env, c.mask if mask is None else mask, b)
        sub.depth = c.depth + 1
        sub.allocs = {} if c.launch is None else c.allocs
        assert self.body is not None  # Program.get compiles a function before it can run
        try:
            self.body(sub)
        except RecursionError:
            raise InterpError(f"calls nest too deeply in {f.name!r} (unbounded recursion?)") from None
        return sub.ret_val

    # ------------------------------------------------------------------ expressions
    def expr(self, e: Any) -> Fn:
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            raise InterpError(f"the interpreter cannot evaluate {type(e).__name__} expressions")
        return m(e)

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

    def e_Div(self, e):
        return self._arith(e, _int_trunc_div, np.divide)

    def e_Mod(self, e):
        return self._arith(e, np.fmod, np.fmod)

    def e_FloorDiv(self, e):
        return self._arith(e, np.floor_divide, _fl_floordiv)

    def e_FloorMod(self, e):
        return self._arith(e, np.remainder, _fl_floormod)

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

    # ------------------------------------------------------------------ buffers
    def _shape_fns(self, exprs) -> list:
        """A buffer shape's evaluators, compiled once per shape per function (every access of
        a buffer shares them: a large shape expression is not recompiled per access)."""
        cache = self._shape_cache
        hit = cache.get(id(exprs))
        if hit is not None and hit[0] is exprs:
            return hit[1]
        out = self._compile_shape(exprs)
        cache[id(exprs)] = (exprs, out)
        return out

    def _compile_shape(self, exprs) -> list:
        out: list[int | Fn] = []
        for s in exprs:
            if isinstance(s, E.IntImm):
                out.append(s.value)
            else:
                f = self.expr(s)
                out.append(f)
        return out

    def locate(self, buf: Buffer, indices: tuple) -> Callable:
        """Compile an access: returns ``loc(c) -> (mem, view1d, flat)`` with bounds checked for
        the active lanes (out-of-range inactive lanes are redirected to element 0)."""
        st = buf.dtype
        itemsize = D.storage_np(st).itemsize * 1
        data = buf.data
        shape = self._shape_fns(buf.shape)
        rank = len(shape)
        if len(indices) != rank:
            raise InterpError(f"buffer {buf.name} has rank {rank}, accessed with {len(indices)} indices")
        idx_fns = [self.expr(i) for i in indices]
        # indices proven inside their (constant) dimension need no run-time check
        proven = [
            isinstance(dim, int) and (r := self.range_of(ix)) is not None and r[0] >= 0 and r[1] < dim
            for ix, dim in zip(indices, shape)
        ]
        strides = self._shape_fns(buf.strides) if buf.strides else None
        eoff = None if buf.elem_offset is None else self.expr(buf.elem_offset)
        simple = buf in self.simple_bufs
        name = buf.name
        check = self.prog.check_bounds
        consts = all(isinstance(s, int) for s in shape) and strides is None
        small = consts and math.prod(shape) < (1 << 31)
        if consts:
            cstr = []
            acc = 1
            for s in reversed(shape):
                cstr.append(acc)
                acc *= s
            cstr.reverse()
        else:
            cstr = None

        def loc(c):
            try:
                ptr = c.env[data]
            except KeyError:
                raise InterpError(f"buffer {name} is used where its data pointer has no value") from None
            if not isinstance(ptr, PtrVal):
                raise InterpError(f"buffer {name}: its data is not a pointer the interpreter can follow")
            mem = ptr.mem
            idx = [f(c) for f in idx_fns]
            shp = shape if consts else [s if isinstance(s, int) else int(s(c)[0]) for s in shape]
            if cstr is not None:
                strd = cstr
            elif strides is not None:
                strd = [s if isinstance(s, int) else int(s(c)[0]) for s in strides]
            else:
                strd = []
                acc = 1
                for s in reversed(shp):
                    strd.append(acc)
                    acc *= s
                strd.reverse()
            bad = None
            if check:
                for ix, dim, ok in zip(idx, shp, proven):
                    if ok:
                        continue
                    b = _out_of_range(ix, dim)
                    if b is not None:
                        bad = b if bad is None else (bad | b)
            if rank == 1:
                flat = idx[0]
                if flat.dtype.itemsize < 4 or flat.dtype == np.uint64:
                    flat = flat.astype(np.int64)
            elif rank == 0:
                flat = np.zeros(1, dtype=np.int64)
            elif small and all(ix.dtype == np.int32 for ix in idx):
                flat = idx[0] * strd[0]
                for ix, s in zip(idx[1:], strd[1:]):
                    flat = flat + ix * s
            else:
                flat = idx[0].astype(np.int64) * strd[0]
                for ix, s in zip(idx[1:], strd[1:]):
                    flat = flat + ix.astype(np.int64) * s
            if eoff is None:
                extra = 0
            else:
                ev_ = eoff(c)
                extra = int(ev_[0]) if ev_.shape[0] == 1 else ev_.astype(np.int64)
            off = ptr.off
            if not (isinstance(off, int) and off == 0):
                extra = extra + (
                    off // itemsize if isinstance(off, int) else (off // itemsize).astype(np.int64)
                )
            if not (isinstance(extra, int) and extra == 0):
                flat = flat + extra
            view = mem.view(st)
            row = view.shape[1]
            if check and not simple:
                b = (flat < 0) | (flat >= row)
                if b.any():
                    bad = b if bad is None else (bad | b)
            if bad is not None:
                real = bad
                if c.count != c.N and bad.shape[0] == c.N:
                    real = bad & _lane_mask(c.mask, bad)
                if real.any():
                    lane = _first_lane(real)
                    where = ", ".join(str(_pick(ix, lane)) for ix in idx)
                    raise OutOfBoundsError(
                        f"out-of-bounds access to buffer {name} (shape {tuple(shp)}) at index [{where}] by "
                        f"{c.describe(lane)}"
                    )
                flat = np.where(bad, 0, flat)
            if mem.per == GLOBAL:
                return mem, view[0], flat, flat
            if ptr.rank is not None:
                ub = _remote_base(c, ptr.rank, row)
            else:
                ub = _unit_base(c, mem, view.shape[0], row)
            if flat.ndim > 1:
                ub = ub[:, None]
            return mem, view.reshape(-1), flat + ub, flat

        return loc

    def _local_col(self, buf: Buffer, indices: tuple) -> int | None:
        """A constant element of a per-thread local buffer (``acc[0]``): its column, else None."""
        if buf.scope != "local" or buf.strides or buf.elem_offset is not None:
            return None
        if not all(isinstance(s, E.IntImm) for s in buf.shape):
            return None
        if not all(isinstance(i, E.IntImm) for i in indices):
            return None
        k = 0
        for i, s in zip(indices, buf.shape):
            if not 0 <= i.value < s.value:
                return None
            k = k * s.value + i.value
        return k

    def e_BufferLoad(self, e):
        buf = e.buffer
        st = buf.dtype
        col = self._local_col(buf, e.indices)
        data = buf.data
        loc = self.locate(buf, e.indices)
        races = self.prog.check_races
        if col is not None and st.lanes == 1:

            def ev_col(c):
                ptr = c.env.get(data)
                if isinstance(ptr, PtrVal) and ptr.off == 0 and ptr.mem.per == THREAD:
                    v = ptr.mem.view(st)
                    return D.from_storage(v[:, col].copy(), st)
                return ev(c)

        at = where(e) if getattr(e, "span", None) is not None else ""

        def ev(c):
            mem, v1, flat, _ = loc(c)
            if races and mem.per == BLOCK and c.launch is not None:
                _race_read(c, mem, st, flat, buf, at)
            return D.from_storage(v1[flat], st)

        return ev_col if col is not None and st.lanes == 1 else ev

    # ------------------------------------------------------------------ statements
    def stmt(self, s: Any) -> Fn:
        m = getattr(self, "s_" + type(s).__name__, None)
        if m is None:
            raise InterpError(f"the interpreter cannot execute {type(s).__name__} statements")
        f = m(s)
        return f

    def s_SeqStmt(self, s):
        fs = [self.stmt(x) for x in s.stmts]
        if not fs:
            return lambda c: None
        if len(fs) == 1:
            return fs[0]

        def ex(c):
            for f in fs:
                if c.count == 0:
                    return
                f(c)

        return ex

    def s_Bind(self, s):
        fv, var = self.expr(s.value), s.var
        r = self.range_of(s.value)
        if r is not None:
            self.ranges[var] = r
        else:  # a var bound again: the earlier value's range no longer holds
            self.ranges.pop(var, None)

        def ex(c):
            c.env[var] = fv(c)

        return ex

    def s_Evaluate(self, s):
        v = s.value
        stmt_form = impl(STMT_BACKEND, v.op) if isinstance(v, E.Call) and isinstance(v.op, Op) else None
        if stmt_form is not None:  # the op's declared form for an unused value (atomics)
            fv = stmt_form(self, v)
        else:
            fv = self.expr(v)

        def ex(c):
            fv(c)

        return ex

    def s_AttrStmt(self, s):
        return self.stmt(s.body)

    def s_RegionStmt(self, s):
        """TIRx's regions: ``launch_thread`` binds the thread/block index (no guard, as TIRx's
        CUDA); ``compute_scope`` and ``device_context`` only group their body; a
        ``parallel_launch`` worker team is not modelled."""
        if s.kind in ("compute_scope", "device_context", "device_scope"):
            return self.stmt(s.body)
        if s.kind != "launch_thread":
            raise InterpError(f"the interpreter cannot run T.{s.kind}")
        thread = s.args[0].value
        key = {"threadIdx": "t", "blockIdx": "b"}.get(thread.split(".")[0])
        axis = thread.split(".")[-1]
        if key is None or axis not in ("x", "y", "z"):
            raise InterpError(f"the interpreter cannot run T.launch_thread({thread!r}, ...)")
        var = s.params[0]
        vt = D.value_np(var.ty)
        body = self.stmt(s.body)

        def ex(c):
            if c.launch is None:
                raise InterpError(f"T.launch_thread({thread!r}, ...) outside a device entry")
            c.env[var] = c.launch.get(f"{key}.{axis}").astype(vt)
            body(c)

        return ex

    def s_BufferStore(self, s):
        buf = s.buffer
        st = buf.dtype
        fval = self.expr(s.value)
        col = self._local_col(buf, s.indices)
        data = buf.data
        loc = self.locate(buf, s.indices)
        races = self.prog.check_races
        name = buf.name
        at = where(s)

        def ex(c):
            val = fval(c)
            mem, v1, flat, _ = loc(c)
            if races and c.launch is not None:
                if mem.per == BLOCK:
                    _race_write(c, mem, st, flat, val, buf, at)
                elif mem.per == GLOBAL:
                    _global_conflict(c, flat, val, buf, st, at)
                    _global_order(c, mem, flat, val, buf, st, at)
            sv = D.to_storage(val, st)
            if c.count == c.N:
                if flat.shape == sv.shape or sv.shape[0] == 1:
                    v1[flat] = sv
                    return
                f2, v2 = np.broadcast_arrays(flat, sv)
                v1[f2] = v2
                return
            if flat.shape[0] == 1 and sv.shape[0] == 1:
                v1[flat] = sv
                return
            f2, v2 = np.broadcast_arrays(flat, sv)
            m = c.mask
            if f2.shape[0] != m.shape[0]:
                raise InterpError(f"store to {name}: lane count mismatch")
            v1[f2[m]] = v2[m]

        if col is not None and st.lanes == 1:

            def ex_col(c):
                ptr = c.env.get(data)
                if isinstance(ptr, PtrVal) and ptr.off == 0 and ptr.mem.per == THREAD:
                    colv = ptr.mem.view(st)[:, col]
                    val = D.to_storage(fval(c), st)
                    if c.count == c.N:
                        colv[...] = val
                    else:
                        np.copyto(colv, val, where=c.mask if colv.shape[0] == c.N else True)
                    return
                ex(c)

            return ex_col
        return ex

    def s_IfThenElse(self, s):
        fc_ = self.expr(s.cond)
        ft = self.stmt(s.then_case)
        fe = None if s.else_case is None else self.stmt(s.else_case)

        def ex(c):
            cond = fc_(c)
            if cond.shape[0] == 1:
                if cond[0]:
                    ft(c)
                elif fe is not None:
                    fe(c)
                return
            entry, cnt = c.mask, c.count
            mt = entry & cond
            nt = int(np.count_nonzero(mt))
            if nt == cnt:
                ft(c)
                return
            if nt == 0:
                if fe is not None:
                    fe(c)
                return
            c.set_mask(mt, nt)
            ft(c)
            end_t, cnt_t = c.mask, c.count
            if fe is not None:
                me = entry & ~cond
                c.set_mask(me, cnt - nt)
                fe(c)
                end_e, cnt_e = c.mask, c.count
            else:
                end_e, cnt_e = entry & ~cond, cnt - nt
            c.set_mask(end_t | end_e, cnt_t + cnt_e)

        return ex

    def _exit_mask(self, c: Ctx, entry: np.ndarray) -> None:
        """After a loop: the entry lanes minus those that returned inside it."""
        if c.ret_mask is not None:
            m = entry & ~c.ret_mask
            c.set_mask(m)
        else:
            c.set_mask(entry)

    def s_For(self, s):
        # the loop var is bound in the body only: an outer binding of the same var object
        # (its static range and its value) holds again after the loop
        var = s.var
        had, old_r = var in self.ranges, self.ranges.get(var)
        inner = self._thread_binding(s) if s.kind == S.ForKind.THREAD_BINDING else self._for(s)
        if had:
            self.ranges[var] = old_r
        else:
            self.ranges.pop(var, None)

        def ex(c):
            env = c.env
            old = env.get(var, _UNBOUND)
            try:
                inner(c)
            finally:
                if old is _UNBOUND:
                    env.pop(var, None)
                else:
                    env[var] = old

        return ex

    def _for(self, s):
        fstart, fext = self.expr(s.start), self.expr(s.extent)
        fstep = None if s.step is None else self.expr(s.step)
        rs, re_ = self.range_of(s.start), self.range_of(s.extent)
        unit_step = s.step is None or self.range_of(s.step) == (1, 1)
        if rs is not None and re_ is not None and unit_step and re_[1] >= 1:
            self.ranges[s.var] = (rs[0], rs[1] + re_[1] - 1)
        body = self.stmt(s.body)
        var = s.var
        vt = D.value_np(var.ty)
        limit = self.prog.max_loop_iters
        early = _exits_early(s.body)
        what = _loop_what(s)

        def ex(c):
            start, ext = fstart(c), fext(c)
            step = fstep(c) if fstep is not None else None
            entry, ecnt = c.mask, c.count
            lp = Loop()
            c.loops.append(lp)
            bud = c.budget
            cost = c.N + STEP  # per iteration
            try:
                if start.shape[0] == 1 and ext.shape[0] == 1 and (step is None or step.shape[0] == 1):
                    s0 = int(start[0])
                    e0 = s0 + int(ext[0])
                    st = 1 if step is None else int(step[0])
                    if st == 0:
                        raise InterpError(f"{what} {where(s)} has step 0")
                    trip = max(0, (e0 - s0 + st - (1 if st > 0 else -1)) // st)
                    if not early:  # it will run every iteration: refuse now rather than hang
                        if trip > limit:
                            raise too_many_iters(s, trip, limit, what)
                        if trip * cost > bud.left:
                            raise over_budget(c, trip * cost, f"{what} {where(s)} ({trip} iterations)")
                    mask, cnt = entry, ecnt
                    env = c.env
                    for n, k in enumerate(range(s0, e0, st), 1):
                        if n > limit:
                            raise too_many_iters(s, trip, limit, what)
                        if bud.left < cost:
                            raise over_budget(c, cost, f"{what} {where(s)} (iteration {n} of {trip})")
                        bud.left -= cost
                        env[var] = np.array([k], dtype=vt)
                        if c.mask is not mask:
                            c.set_mask(mask, cnt)
                        body(c)
                        if lp.cont is not None:
                            mask = c.mask | lp.cont
                            cnt = int(np.count_nonzero(mask))
                            lp.cont = None
                        else:
                            mask, cnt = c.mask, c.count
                        if cnt == 0:
                            break
                else:
                    end = start.astype(np.int64) + ext.astype(np.int64)
                    st = np.ones(1, dtype=np.int64) if step is None else step.astype(np.int64)
                    cur = _full(start.astype(np.int64), c.N).copy()
                    active = entry & (cur < end)
                    n = 0
                    while True:
                        cnt = int(np.count_nonzero(active))
                        if cnt == 0:
                            break
                        n += 1
                        if n > limit:
                            raise too_many_iters(s, n, limit, what)
                        if bud.left < cost:
                            raise over_budget(c, cost, f"{what} {where(s)} (iteration {n})")
                        bud.left -= cost
                        c.env[var] = cur.astype(vt)
                        c.set_mask(active, cnt)
                        body(c)
                        active = c.mask if lp.cont is None else (c.mask | lp.cont)
                        lp.cont = None
                        cur = cur + st
                        active = active & (cur < end)
            finally:
                c.loops.pop()
            self._exit_mask(c, entry)

        return ex

    def _thread_binding(self, s):
        thread = s.thread or ""
        fstart, fext = self.expr(s.start), self.expr(s.extent)
        body = self.stmt(s.body)
        var = s.var
        vt = D.value_np(var.ty)
        key = {"threadIdx": "t", "blockIdx": "b"}.get(thread.split(".")[0])
        axis = thread.split(".")[-1]
        if key is None or axis not in ("x", "y", "z"):
            raise InterpError(f"the interpreter cannot run a loop bound to thread {thread!r}")

        def ex(c):
            if c.launch is None:
                raise InterpError(f"loop bound to {thread} outside a device entry")
            idx = c.launch.get(f"{key}.{axis}")
            start, ext = fstart(c), fext(c)
            entry = c.mask
            inside = idx < ext
            m = entry & inside
            c.env[var] = (idx + start).astype(vt)
            c.set_mask(m)
            if c.count:
                body(c)
            c.set_mask(c.mask | (entry & ~inside))
            if c.ret_mask is not None:
                c.set_mask(c.mask & ~c.ret_mask)

        return ex

    def s_While(self, s):
        fcond = self.expr(s.cond)
        body = self.stmt(s.body)
        limit = self.prog.max_loop_iters
        what = _loop_what(s)

        def ex(c):
            entry = c.mask
            lp = Loop()
            c.loops.append(lp)
            try:
                n = 0
                while True:
                    cond = fcond(c)
                    if cond.shape[0] == 1:
                        if not cond[0]:
                            break
                    else:
                        m = c.mask & cond
                        c.set_mask(m)
                        if c.count == 0:
                            break
                    n += 1
                    if n > limit:
                        raise too_many_iters(s, n, limit, what)
                    bud = c.budget
                    if bud.left < c.N + STEP:
                        raise over_budget(c, c.N + STEP, f"{what} {where(s)} (iteration {n})")
                    bud.left -= c.N + STEP
                    body(c)
                    if lp.cont is not None:
                        c.set_mask(c.mask | lp.cont)
                        lp.cont = None
                    if c.count == 0:
                        break
            finally:
                c.loops.pop()
            self._exit_mask(c, entry)

        return ex

    def s_Break(self, s):
        def ex(c):
            if not c.loops:
                raise InterpError("break outside a loop")
            lp = c.loops[-1]
            lp.brk = c.mask if lp.brk is None else (lp.brk | c.mask)
            c.set_mask(np.zeros(c.N, dtype=bool), 0)

        return ex

    def s_Continue(self, s):
        def ex(c):
            if not c.loops:
                raise InterpError("continue outside a loop")
            lp = c.loops[-1]
            lp.cont = c.mask if lp.cont is None else (lp.cont | c.mask)
            c.set_mask(np.zeros(c.N, dtype=bool), 0)

        return ex

    def s_Return(self, s):
        fv = None if s.value is None else self.expr(s.value)

        def ex(c):
            m = c.mask
            if fv is not None:
                v = fv(c)
                if c.ret_val is None:
                    c.ret_val = _full(v, c.N).copy() if c.count != c.N else v
                else:
                    rv = c.ret_val
                    if rv.shape[0] != c.N:
                        rv = _full(rv, c.N).copy()
                    np.copyto(rv, _full(v, c.N), where=_lane_mask(m, rv))
                    c.ret_val = rv
            c.ret_mask = m if c.ret_mask is None else (c.ret_mask | m)
            c.set_mask(np.zeros(c.N, dtype=bool), 0)
            if c.launch is not None and c.depth == 0:
                al = c.launch.alive
                c.launch.alive = ~m if al is None else (al & ~m)

        return ex

    def s_Assert(self, s):
        fcond = self.expr(s.cond)
        kind = getattr(builtins, s.kind, None)
        if not (isinstance(kind, type) and issubclass(kind, Exception)):
            kind = AssertionError
        msg = "".join(s.message) or "assertion failed"

        def ex(c):
            cond = fcond(c)
            bad = ~cond
            if cond.shape[0] == c.N and c.count != c.N:
                bad = bad & c.mask
            if bad.any():
                lane = int(np.flatnonzero(bad)[0]) if bad.shape[0] > 1 else 0
                where = "" if c.launch is None else f" ({c.describe(lane)})"
                raise kind(msg + where)

        return ex

    def s_AllocBuffer(self, s):
        buf = s.buffer
        scope = buf.scope
        dt = D.storage_np(buf.dtype)
        shape = self._shape_fns(buf.shape)
        data = buf.data
        self.simple_bufs.add(buf) if (buf.elem_offset is None and not buf.strides) else None
        name = buf.name

        def ex(c):
            mem = c.allocs.get(s)
            if mem is None:
                n = 1
                for x in shape:
                    n *= x if isinstance(x, int) else int(x(c)[0])
                n *= buf.dtype.lanes
                if n < 0:
                    raise InterpError(f"allocation {name}: negative size {n} {where(s)}")
                if c.launch is None:
                    per, units = GLOBAL, 1
                elif scope.startswith("shared"):
                    per, units = BLOCK, c.launch.nb
                elif scope in ("global",):
                    per, units = GLOBAL, 1
                else:
                    per, units = THREAD, c.N
                n += ((-n * dt.itemsize) % 8) // dt.itemsize  # rows of whole 8-byte words
                raw = _allocate(c, s, name, units, n, dt)
                mem = Mem(name, raw, per)
                c.allocs[s] = mem
            c.env[data] = PtrVal(mem, 0)

        return ex

    def s_DeclBuffer(self, s):
        return lambda c: None

    def s_DeviceEntry(self, s):
        fargs = [self.expr(a) for a in s.args]
        fields = list(s.attrs[S.LAUNCH_FIELDS_KEY])
        prog = self.prog
        was, was_dims = self.in_device, self.launch_dims
        self.in_device = True
        if all(isinstance(a, E.IntImm) for a in s.args):
            self.launch_dims = {f: a.value for f, a in zip(fields, s.args)}
        else:
            self.launch_dims = None
        try:
            body = self.stmt(s.body)
        finally:
            self.in_device, self.launch_dims = was, was_dims

        def ex(c):
            if c.launch is not None:
                raise InterpError("a device entry inside a device entry")
            # the shape fields; the others (cooperative, events, ...) only configure a GPU launch
            shape = ("grid", "block", "cluster")
            vals = {f: int(a(c)[0]) for f, a in zip(fields, fargs) if f.split(".")[0] in shape}
            grid = tuple(vals.get(f"grid.{a}", 1) for a in "xyz")
            block = tuple(vals.get(f"block.{a}", 1) for a in "xyz")
            cluster = tuple(vals.get(f"cluster.{a}", 1) for a in "xyz") if "cluster.x" in vals else None
            for what, dims in (("grid", grid), ("block", block)):
                if any(d < 0 for d in dims):
                    raise InterpError(f"launch with negative {what} dimensions {dims}")
            T = block[0] * block[1] * block[2]
            nblocks = grid[0] * grid[1] * grid[2]
            if T == 0 or nblocks == 0:
                return
            if T > 1024:
                raise InterpError(f"launch with {T} threads per block; CUDA allows at most 1024")
            per = max(1, prog.max_lanes // T)
            if cluster is not None:
                cs = cluster[0] * cluster[1] * cluster[2]
                if cluster[1] * cluster[2] > 1 or grid[0] % cluster[0]:
                    per = nblocks  # clusters are not runs of consecutive blocks: one chunk
                else:
                    per = max(cs, (per // cs) * cs)
            # the whole grid is paid for before any block runs: a huge grid fails at once
            cost = nblocks * T + -(-nblocks // per) * STEP
            if cost > c.budget.left:
                raise over_budget(c, cost, f"the launch {where(s)} of {nblocks} blocks x {T} threads")
            c.budget.left -= cost
            gw = _GlobalWrites(nblocks) if prog.check_races else None
            with np.errstate(all="ignore"):
                for b0 in range(0, nblocks, per):
                    nb = min(per, nblocks - b0)
                    launch = Launch(grid, block, b0, nb, cluster, gw)
                    env = dict(c.env)
                    dc = Ctx(prog, launch.N, launch, env, budget=c.budget)
                    body(dc)
                    if gw is not None:
                        gw.epochs[b0 : b0 + nb] = launch.epoch  # the chunk's blocks are done

        return ex


# ----------------------------------------------------------------------------- races
# Shared-memory accesses are stamped ``epoch * _TB + thread`` (epoch: barriers this block
# has passed; tirx/ops/semantics/lanes.py). A read races when the element's last write stamp is from this epoch and
# another thread; a write races with another thread's write or read of this epoch.
class _Act:
    """The active lanes of an access: flat indices with their stamps (lazily their lanes)."""

    __slots__ = ("base", "fi", "lanes_of", "mine", "tid")

    def __init__(self, c: Ctx, flat: np.ndarray):
        L = c.launch
        assert L is not None  # race checks run only inside a launch
        base, mine = _stamps(L)
        m = None if c.count == c.N else c.mask
        if flat.ndim > 1:
            w = flat.shape[1]
            base = np.repeat(base, w)
            mine = np.repeat(mine, w)
            if m is not None:
                m = np.repeat(m, w)
            flat = flat.reshape(-1)
            div = w
        else:
            flat = _full(flat, c.N)
            div = 1
        if m is not None:
            flat, base, mine = flat[m], base[m], mine[m]
        self.fi, self.base, self.mine = flat, base, mine

        def lanes_of(k: int, m=m, div=div) -> int:
            pos = k if m is None else int(np.flatnonzero(m)[k])
            return pos // div

        self.lanes_of = lanes_of


def _index_str(buf: Buffer, row_flat: int) -> str:
    shp = []
    for s in buf.shape:
        if isinstance(s, E.IntImm):
            shp.append(s.value)
        else:
            return str(row_flat)
    if not shp:
        return "()"
    try:
        return str(tuple(int(x) for x in np.unravel_index(row_flat, shp)))
    except ValueError:
        return str(row_flat)


def _other(c: Ctx, lane: int, stamp: int) -> str:
    t = int(stamp) % _TB
    if t == _ATOMIC_T:
        return "an atomic operation"
    L = c.launch
    assert L is not None  # race checks run only inside a launch
    return c.describe(lane - lane % L.T + t)


def _race_read(c: Ctx, mem: Mem, t: PrimType, flat: np.ndarray, buf: Buffer, at: str = "") -> None:
    rs = _race_state(mem, t)
    wst, rst = rs.wst, rs.rst
    a = _Act(c, flat)
    if not rs.dirty:
        if not rs.full and (wst.min() >= 0 or len(mem.races) > 1):
            rs.full = True
        if rs.full:
            rst[a.fi] = a.mine
            return
    row = mem.view(t).shape[1]
    ws = wst[a.fi]
    # with views of several dtypes over one allocation, each view keeps its own stamps, so
    # "never written" cannot be told from "written through another view": not checked then
    if ws.size and ws.min() < 0 and len(mem.races) == 1:
        k = int(np.flatnonzero(ws < 0)[0])
        raise RaceError(
            f"read of shared buffer {buf.name} at index {_index_str(buf, int(a.fi[k]) % row)} that no thread "
            f"wrote, by {c.describe(a.lanes_of(k))} {at}"
        )
    bad = (ws >= a.base) & (ws != a.mine)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        lane = a.lanes_of(k)
        raise RaceError(
            f"missing barrier: shared buffer {buf.name} at index {_index_str(buf, int(a.fi[k]) % row)} is read by "
            f"{c.describe(lane)} after {_other(c, lane, ws[k])} wrote it with no cta_sync in between {at}"
        )
    rst[a.fi] = a.mine


def _same_note(same: Any) -> str:
    if bool(same):
        return " (both write the same value: still a race, which CUDA's racecheck reports as a warning)"
    return ""


def _race_write(
    c: Ctx, mem: Mem, t: PrimType, flat: np.ndarray, val: np.ndarray, buf: Buffer, at: str = ""
) -> None:
    rs = _race_state(mem, t)
    rs.dirty = True
    wst, rst = rs.wst, rs.rst
    view1 = mem.view(t).reshape(-1)
    row = mem.view(t).shape[1]
    a = _Act(c, flat)
    fi = a.fi
    sval = D.to_storage(val, t)
    if flat.ndim > 1:
        sv = np.broadcast_to(sval, flat.shape).reshape(-1)
        if c.count != c.N:
            sv = sv[np.repeat(c.mask, flat.shape[1])]
    else:
        sv = _full(sval, c.N)
        if c.count != c.N:
            sv = sv[c.mask]
    ws = wst[fi]
    waw = (ws >= a.base) & (ws != a.mine)
    if waw.any():
        k = int(np.flatnonzero(waw)[0])
        lane = a.lanes_of(k)
        raise RaceError(
            f"write-write race: shared buffer {buf.name} at index {_index_str(buf, int(fi[k]) % row)} is "
            f"written by {c.describe(lane)} and by {_other(c, lane, ws[k])} with no cta_sync in between {at}"
            + _same_note(view1[fi[k]] == sv[k])
        )
    rs = rst[fi]
    war = (rs >= a.base) & (rs != a.mine)
    if war.any():
        k = int(np.flatnonzero(war)[0])
        lane = a.lanes_of(k)
        raise RaceError(
            f"missing barrier: shared buffer {buf.name} at index {_index_str(buf, int(fi[k]) % row)} is written "
            f"by {c.describe(lane)} after {_other(c, lane, rs[k])} read it with no cta_sync in between {at}"
        )
    if fi.size > 1:
        order = np.argsort(fi, kind="stable")
        sf = fi[order]
        sm = a.mine[order]
        same = (sf[1:] == sf[:-1]) & (sm[1:] != sm[:-1])  # one address, two threads
        if same.any():
            k = int(np.flatnonzero(same)[0])
            la, lb = a.lanes_of(int(order[k])), a.lanes_of(int(order[k + 1]))
            raise RaceError(
                f"write-write race: shared buffer {buf.name} at index {_index_str(buf, int(sf[k]) % row)} is "
                f"written by {c.describe(la)} and {c.describe(lb)} in one statement {at}"
                + _same_note(sv[order[k]] == sv[order[k + 1]])
            )
    wst[fi] = a.mine


def _value_keys(val: np.ndarray, t: PrimType) -> np.ndarray:
    """The stored bits of values as unsigned integers, every NaN one key (a GPU's NaN
    payloads differ from numpy's), so equal keys are equal memory contents."""
    sv = np.ascontiguousarray(D.to_storage(val, t))
    keys = sv.view(f"uint{sv.dtype.itemsize * 8}").astype(np.uint64)
    if val.dtype.kind == "f":
        nan = np.isnan(val)
        if nan.any():
            keys = np.where(nan, np.uint64(2**64 - 1), keys)
    return keys


def _global_conflict(c: Ctx, flat: np.ndarray, val: np.ndarray, buf: Buffer, t: PrimType, at: str) -> None:
    """Two threads of one store statement writing different values to one global address,
    whether the address differs per thread or not (``A[0] = tid``). The same value from
    several threads is benign in global memory and not reported; atomics never come here."""
    if c.count < 2:
        return
    m = None if c.count == c.N else c.mask
    if flat.shape[0] > 1:
        f = (flat if m is None else flat[m]).reshape(-1)
        if (f[1:] > f[:-1]).all():  # strictly increasing: no address twice (the usual case)
            return
    if flat.ndim == 1 and val.shape[0] == 1 and val.ndim == 1:
        return  # one value for every thread
    w = flat.shape[1] if flat.ndim > 1 else 1
    act = np.arange(c.N) if m is None else np.flatnonzero(m)
    addr = np.broadcast_to(flat.reshape(flat.shape[0], w), (c.N, w))[act].reshape(-1)
    keys = _value_keys(val, t)
    keys = np.broadcast_to(keys.reshape(keys.shape[0], -1), (c.N, w))[act].reshape(-1)
    lanes = np.repeat(act, w)
    order = np.argsort(addr, kind="stable")
    sa, sk, sl = addr[order], keys[order], lanes[order]
    start = np.flatnonzero(np.r_[True, sa[1:] != sa[:-1]])
    bad = (np.minimum.reduceat(sl, start) != np.maximum.reduceat(sl, start)) & (
        np.minimum.reduceat(sk, start) != np.maximum.reduceat(sk, start)
    )
    if not bad.any():
        return
    g = int(np.flatnonzero(bad)[0])
    lo = int(start[g])
    hi = int(start[g + 1]) if g + 1 < len(start) else len(sa)
    gl, gk = sl[lo:hi], sk[lo:hi]
    # two writers of one address with different lanes and different values: one of them
    # differs from the first writer in both, or (else) the first lane wrote two values
    j = np.flatnonzero((gl != gl[0]) & (gk != gk[0]))
    if j.size:
        la, lb = int(gl[0]), int(gl[j[0]])
    else:
        la = int(gl[np.flatnonzero(gk != gk[0])[0]])
        lb = int(gl[np.flatnonzero(gl != gl[0])[0]])
    la, lb = min(la, lb), max(la, lb)
    raise RaceError(
        f"write-write race: global buffer {buf.name} at element {int(sa[lo])} is written with different "
        f"values by {c.describe(la)} and {c.describe(lb)} in one statement {at} (make one thread write it, "
        "or use an atomic)"
    )


class _GlobalWrites:
    """One launch's last plain store to each element of the global allocations it wrote, for
    write-write races between statements: per element the writer (``who``: global block *
    ``_TB`` + thread, -1: not written in this launch), that block's barrier count then
    (``ep``), the stored bits (``key``, see ``_value_keys``), the statement (``site``) and
    whether other threads stored the same bits unordered with it (``many``: then any
    thread's different value races, the recorded writer's too).
    ``epochs`` keeps the final barrier count of the blocks of finished chunks."""

    __slots__ = ("epochs", "sites", "state")

    def __init__(self, nblocks: int):
        self.epochs = np.zeros(nblocks, dtype=np.int64)
        self.sites: dict[str, int] = {}
        self.state: dict = {}

    def arrays(self, mem: Mem, t: PrimType) -> tuple:
        st = self.state.get((mem, t.base))
        if st is None:
            n = mem.view(t).shape[1]
            st = self.state[(mem, t.base)] = (
                np.full(n, -1, dtype=np.int64),
                np.zeros(n, dtype=np.int64),
                np.zeros(n, dtype=np.uint64),
                np.zeros(n, dtype=np.int32),
                np.zeros(n, dtype=bool),
            )
        return st

    def site(self, at: str) -> int:
        return self.sites.setdefault(at, len(self.sites))

    def site_name(self, k: int) -> str:
        return next((a for a, v in self.sites.items() if v == k), "")


def _one_cluster(L: Launch, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether global blocks ``a`` and ``b`` are in one cluster of the launch."""
    if L.cluster == (1, 1, 1):
        return a == b
    gx, gy, _ = L.grid
    cx, cy, cz = L.cluster

    def cid(g: np.ndarray) -> tuple:
        return (g % gx) // cx, ((g // gx) % gy) // cy, (g // (gx * gy)) // cz

    return np.logical_and.reduce([x == y for x, y in zip(cid(a), cid(b))])


def _global_order(
    c: Ctx, mem: Mem, flat: np.ndarray, val: np.ndarray, buf: Buffer, t: PrimType, at: str
) -> None:
    """A plain global store against the launch's earlier ones: a thread of the same block
    that stored a different value to an element with no block barrier since, or a thread of
    another block that stored one and has passed no barrier since (the interpreter cannot
    tell a cta_sync from a cluster barrier of its cluster, so a barrier in between hides the
    race there; a block of another cluster or chunk is never ordered with it),
    is a write-write race: the element's final value depends on which store lands last.
    Stores in one statement are ``_global_conflict``'s; atomics never come here."""
    L = c.launch
    assert L is not None  # race checks run only inside a launch
    gw = L.gw
    if gw is None or c.count == 0:
        return
    who, ep, key, site, many = gw.arrays(mem, t)
    N, m = c.N, (None if c.count == c.N else c.mask)
    keys = _value_keys(val, t)
    bl = L.get("bl")
    me = L.get("bid").astype(np.int64) * _TB + L.get("tid")
    mep = L.epoch[bl]
    if flat.ndim == 1 and m is None:
        addr, kk = _full(flat, N), _full(keys.reshape(-1), N)
    else:
        w = flat.shape[1] if flat.ndim > 1 else 1
        act = np.arange(N) if m is None else np.flatnonzero(m)
        addr = np.broadcast_to(flat.reshape(flat.shape[0], w), (N, w))[act].reshape(-1)
        kk = np.broadcast_to(keys.reshape(keys.shape[0], -1), (N, w))[act].reshape(-1)
        lanes = np.repeat(act, w)
        me, mep = me[lanes], mep[lanes]
    pw = who[addr]
    seen = np.flatnonzero(pw >= 0)
    conc = np.zeros(addr.shape[0], dtype=bool)  # an earlier store unordered with this one
    if seen.size:
        a, pws, pe = addr[seen], pw[seen], ep[addr[seen]]
        pg = pws // _TB
        same = pg == me[seen] // _TB
        cur = gw.epochs[pg]
        here = (pg >= L.b0) & (pg < L.b0 + L.nb)
        cur[here] = L.epoch[pg[here] - L.b0]
        # only a cluster barrier orders two blocks (and only of one cluster, always one chunk)
        apart = ~here | ~_one_cluster(L, pg, me[seen] // _TB)
        unordered = np.where(same, pe == mep[seen], apart | (pe == cur))
        other = unordered & ((pws != me[seen]) | many[a])
        bad = other & (key[a] != kk[seen])
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            j = int(seen[k])
            mine = int(me[j] // _TB - L.b0) * L.T + int(me[j] % _TB)
            theirs = int(pg[k] - L.b0) * L.T + int(pws[k] % _TB)
            who_else = L.describe(theirs) if theirs != mine else "several threads"
            before = gw.site_name(int(site[a[k]]))
            why = (
                "with no cta_sync in between" if bool(same[k]) else "and no barrier orders two blocks' stores"
            )
            raise RaceError(
                f"write-write race: global buffer {buf.name} at element {int(a[k])} is written with different "
                f"values by {who_else} {before} and by {L.describe(mine)} {at} {why} (make one "
                "thread write it, or use an atomic)"
            )
        conc[seen] = other  # same bits, another thread, unordered: later stores must agree with both
    if addr.shape[0] > 1 and not (addr[1:] > addr[:-1]).all():  # one element, several threads here
        order = np.argsort(addr, kind="stable")
        sa, sm = addr[order], me[order]
        dup = (sa[1:] == sa[:-1]) & (sm[1:] != sm[:-1])
        if dup.any():
            conc[order[1:][dup]] = True
            conc[order[:-1][dup]] = True
    many[addr] = False
    many[addr[conc]] = True
    who[addr] = me
    ep[addr] = mep
    key[addr] = kk
    site[addr] = gw.site(at)
