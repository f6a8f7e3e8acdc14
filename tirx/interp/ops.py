"""Interpreter handlers, one per op name (``register_handler("interp", name)``).

A handler takes the FuncCompiler and the Call node and returns a closure ``ev(ctx)``.
Ops the interpreter cannot run (inline PTX, extern calls, ...) have a handler that raises
a clear ``OpError`` when the kernel is compiled.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import OpError
from ..ir import expr as E
from ..ir.op import lookup
from ..ir.op import register_handler as _register_handler
from ..ir.types import PointerType, PrimType
from . import dtypes as D
from .engine import BLOCK, GLOBAL, STMT_BACKEND, _full, barrier, need_launch
from .errors import InterpError, OutOfBoundsError, RaceError
from .memory import PtrVal

_R = "interp"
_R_STMT = STMT_BACKEND


def register_handler(backend: str, name: str):
    """Register a handler, skipping ops the table no longer declares (never break import)."""
    if lookup(name) is None:
        return lambda fn: fn
    return _register_handler(backend, name)


def _ty(e) -> PrimType:
    return e.ty


# ----------------------------------------------------------------------------- math
# One meaning per math op (docs/interp.md, "Math functions"): float32 and float64 ops are the
# exact mathematical function rounded once to the type (computed in float64 and rounded for
# float32, so the result does not depend on the host's SIMD libm); half types (float16,
# bfloat16, float8) compute the float32 op and round, as the CUDA code does. ``round`` is
# ties-to-even (``rintf``). Integer arguments: ``abs``/``fabs`` wrap, the rounding ops are the
# identity, every other math op is refused by both backends.
_INT_IDENTITY = ("floor", "ceil", "round", "trunc", "nearbyint")


def _via_f64(fn):
    """``fn`` computed in float64 and rounded once to the argument's float type."""

    def g(*xs):
        dt = xs[0].dtype
        if dt == np.float64:
            return fn(*xs)
        return fn(*[x.astype(np.float64) for x in xs]).astype(dt)

    return g


def _float_unary(name: str, fn):
    @register_handler(_R, name)
    def h(fc, call, fn=fn):
        fa = fc.expr(call.args[0])
        t = call.ty
        if not (isinstance(t, PrimType) and t.is_float):
            return _int_unary(name, fa, t)
        if t.element.base in ("float32", "float64"):
            return lambda c: fn(fa(c)).astype(D.value_np(t.element), copy=False)
        if t.element.base == "float16":
            return lambda c: fn(fa(c).astype(np.float32)).astype(np.float16)
        el = t.element
        return lambda c: D.round_to(fn(fa(c)), el)

    return h


def _int_unary(name, fa, t):
    if name in ("abs", "fabs"):
        return lambda c: np.abs(fa(c))
    if name in _INT_IDENTITY:
        return fa
    raise OpError(f"T.{name} needs a float argument, got {t} (interpreter)")


def _erf(x):
    v = np.frompyfunc(math.erf, 1, 1)(x.astype(np.float64))
    return np.asarray(v, dtype=np.float64).astype(x.dtype)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _rsqrt(x):
    return 1.0 / np.sqrt(x)


def _exp10(x):
    return np.power(10.0, x)


_UNARY = {
    "exp": np.exp, "exp2": np.exp2, "exp10": _exp10, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": _rsqrt, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "erf": _erf, "sigmoid": _sigmoid, "fabs": np.abs, "abs": np.abs, "floor": np.floor, "ceil": np.ceil,
    "round": np.rint, "trunc": np.trunc, "nearbyint": np.rint,
}  # fmt: skip
_EXACT = {"fabs", "abs", "floor", "ceil", "round", "trunc", "nearbyint"}  # exact in any precision
for _n, _f in _UNARY.items():
    _float_unary(_n, _f if _n in _EXACT else _via_f64(_f))


def _float_binary(name: str, fn):
    @register_handler(_R, name)
    def h(fc, call, fn=fn):
        fs = [fc.expr(a) for a in call.args]
        t = call.ty
        if not (isinstance(t, PrimType) and t.is_float):
            raise OpError(f"T.{name} needs float arguments, got {t} (interpreter)")
        if t.element.base in ("float32", "float64"):
            return lambda c: fn(*[f(c) for f in fs]).astype(D.value_np(t.element), copy=False)
        if t.element.base == "float16":
            return lambda c: fn(*[f(c).astype(np.float32) for f in fs]).astype(np.float16)
        el = t.element
        return lambda c: D.round_to(fn(*[f(c) for f in fs]), el)

    return h


def _fma(a, b, c):
    """``a * b + c`` rounded once (``fmaf``/``fma``)."""
    return D.fma(a, b, c)


_float_binary("pow", _via_f64(np.power))
_float_binary("atan2", _via_f64(np.arctan2))
_float_binary("fmod", np.fmod)
_float_binary("fma", _fma)


def _float_predicate(name: str, fn, for_ints: bool):
    """``T.isnan``/``isinf``/``isfinite``: integers are never NaN or infinite."""

    @register_handler(_R, name)
    def _h(fc, call):
        fa = fc.expr(call.args[0])
        if not call.args[0].ty.is_float:
            fill = np.ones_like if for_ints else np.zeros_like
            return lambda c: fill(fa(c), dtype=bool)
        return lambda c: fn(fa(c))


_float_predicate("isnan", np.isnan, False)
_float_predicate("isinf", np.isinf, False)
_float_predicate("isfinite", np.isfinite, True)


@register_handler(_R, "popcount")
def _popcount(fc, call):
    fa = fc.expr(call.args[0])
    t = call.ty
    ut = np.dtype(f"uint{max(t.bits, 8)}")  # the bits of a negative value, not of its magnitude
    return lambda c: np.bitwise_count(fa(c).astype(ut)).astype(D.value_np(t))


@register_handler(_R, "clz")
def _clz(fc, call):
    fa = fc.expr(call.args[0])
    t = call.ty
    bits = t.bits
    ut = np.dtype(f"uint{bits}") if bits >= 8 else np.dtype("uint8")

    def ev(c):
        x = fa(c).astype(ut)
        n = np.zeros(x.shape, dtype=np.int64)
        shift = bits // 2
        while shift:
            mask = x < (ut.type(1) << ut.type(bits - shift))
            n = n + np.where(mask, shift, 0)
            x = np.where(mask, x << ut.type(shift), x)
            shift //= 2
        n = n + (x == 0)
        return n.astype(D.value_np(t))

    return ev


@register_handler(_R, "if_then_else")
def _ite(fc, call):
    return fc._lazy_select(fc.expr(call.args[0]), fc.expr(call.args[1]), fc.expr(call.args[2]), True)


# ----------------------------------------------------------------------------- pointers
@register_handler(_R, "address_of")
def _address_of(fc, call):
    load = call.args[0]
    if not isinstance(load, E.BufferLoad):
        raise OpError("T.address_of takes a buffer element (interpreter)")
    loc = fc.locate(load.buffer, load.indices)
    itemsize = D.storage_np(load.buffer.dtype).itemsize

    def ev(c):
        mem, _v1, _full_flat, flat = loc(c)
        off = flat * itemsize
        if off.shape[0] == 1 and off.ndim == 1:
            return PtrVal(mem, int(off[0]))
        return PtrVal(mem, off)

    return ev


@register_handler(_R, "ptr_byte_offset")
def _ptr_byte_offset(fc, call):
    fp, fo = fc.expr(call.args[0]), fc.expr(call.args[1])

    def ev(c):
        p, o = fp(c), fo(c)
        if not isinstance(p, PtrVal):
            raise InterpError("T.ptr_byte_offset of a value that is not a pointer")
        o = int(o[0]) if o.shape[0] == 1 else o.astype(np.int64)
        return PtrVal(p.mem, p.off + o, p.rank)

    return ev


@register_handler(_R, "is_aligned")
def _is_aligned(fc, call):
    """Every interpreter allocation starts 256-byte aligned (as cudaMalloc's do); the
    pointer's byte offset decides."""
    fp, n = fc.expr(call.args[0]), call.args[1]
    if not isinstance(n, E.IntImm) or n.value <= 0 or n.value & (n.value - 1) or n.value > 256:
        raise OpError("T.is_aligned: the alignment must be a power-of-two integer literal <= 256")
    m = n.value - 1

    def ev(c):
        p = fp(c)
        if not isinstance(p, PtrVal):
            raise InterpError("T.is_aligned of a value that is not a pointer")
        return np.atleast_1d((np.asarray(p.off, dtype=np.int64) & m) == 0)

    return ev


@register_handler(_R, "reinterpret")
def _reinterpret(fc, call):
    src, dst = call.args[0].ty, call.ty
    fa = fc.expr(call.args[0])
    if isinstance(src, PointerType) and isinstance(dst, PointerType):
        return fa
    if isinstance(src, PointerType) or isinstance(dst, PointerType):
        # only a pointer that travelled as an integer (mapa's raw address) turns back into one
        def ev_ptr(c):
            v = fa(c)
            if isinstance(v, PtrVal):
                return v
            raise InterpError(
                f"the interpreter cannot reinterpret between {src} and {dst}: raw integer addresses are not modelled"
            )

        return ev_ptr
    if src.bits * src.lanes != dst.bits * dst.lanes:
        raise OpError(f"T.reinterpret: {src} and {dst} differ in size")
    sd, dd = D.storage_np(src.element), D.storage_np(dst.element)

    def ev(c):
        x = D.to_storage(fa(c), src)
        x = np.ascontiguousarray(x, dtype=sd)
        if src.lanes == 1 and dst.lanes > 1:
            x = x.reshape(-1, 1)
        y = x.view(dd)
        if dst.lanes == 1 and y.ndim > 1:
            y = y.reshape(-1)
        return D.from_storage(y.copy(), dst)

    return ev


def _unsupported(name: str, why: str):
    @register_handler(_R, name)
    def h(fc, call):
        raise OpError(f"the interpreter cannot run T.{name}: {why}")

    return h


_unsupported("call_extern", "it calls external C/CUDA code")
_unsupported("call_pure_extern", "it calls external C/CUDA code")
_unsupported("ptx.asm", "inline PTX (TMA, wgmma, mbarriers, ...) has no CPU meaning")


def _mapa(name: str):
    @register_handler(_R, name)
    def h(fc, call):
        fp, fr = fc.expr(call.args[0]), fc.expr(call.args[1])

        def ev(c):
            need_launch(c, name)
            p, r = fp(c), fr(c)
            if not isinstance(p, PtrVal) or p.mem.per != BLOCK:
                raise InterpError(f"T.{name} takes a pointer into shared memory (e.g. buf.ptr_to([0]))")
            return PtrVal(p.mem, p.off, r)

        return ev

    return h


_mapa("ptx.map_shared_rank")
_mapa("ptx.mapa")
_unsupported("ptx.cvta_to_shared", "raw shared-window addresses are not modelled")


# ----------------------------------------------------------------------------- thread model
def _axis_op(name: str, key: str):
    @register_handler(_R, name)
    def h(fc, call):
        a = call.args[0]
        axis = a.value if isinstance(a, E.StringImm) else None
        if axis not in ("x", "y", "z"):
            raise OpError(f'T.{name}: axis must be "x", "y" or "z", got {axis!r}')
        i = "xyz".index(axis)

        def ev(c):
            L = need_launch(c, name)
            if key == "t":
                return L.get(f"t.{axis}")
            if key == "b":
                return L.get(f"b.{axis}")
            if key == "bd":
                return np.array([L.block[i]], dtype=np.int32)
            if key == "gd":
                return np.array([L.grid[i]], dtype=np.int32)
            if key == "cd":
                return np.array([L.cluster[i]], dtype=np.int32)
            b = L.get(f"b.{axis}")
            if key == "ci":
                return (b // np.int32(L.cluster[i])).astype(np.int32)
            return (b % np.int32(L.cluster[i])).astype(np.int32)  # block_idx_in_cluster

        return ev

    return h


_axis_op("cuda.thread_idx", "t")
_axis_op("cuda.block_idx", "b")
_axis_op("cuda.block_dim", "bd")
_axis_op("cuda.grid_dim", "gd")
_axis_op("cuda.cluster_dim", "cd")
_axis_op("cuda.cluster_idx", "ci")
_axis_op("cuda.block_idx_in_cluster", "bic")


@register_handler(_R, "cuda.lane_id")
def _lane_id(fc, call):
    return lambda c: (need_launch(c, "cuda.lane_id").get("tid") % np.int32(32)).astype(np.int32)


@register_handler(_R, "cuda.warp_id")
def _warp_id(fc, call):
    return lambda c: (need_launch(c, "cuda.warp_id").get("tid") // np.int32(32)).astype(np.int32)


@register_handler(_R, "cuda.cta_rank")
def _cta_rank(fc, call):
    def ev(c):
        L = need_launch(c, "cuda.cta_rank")
        cx, cy, _ = L.cluster
        bx, by, bz = (L.get(f"b.{a}") for a in "xyz")
        return ((bx % cx) + (by % cy) * cx + (bz % L.cluster[2]) * cx * cy).astype(np.int32)

    return ev


_ZERO = np.zeros(1, dtype=np.int32)


@register_handler(_R, "cuda.cta_sync")
def _cta_sync(fc, call):
    def ev(c):
        barrier(c)
        return _ZERO

    return ev


@register_handler(_R, "cuda.cluster_sync")
def _cluster_sync(fc, call):
    def ev(c):
        need_launch(c, "cuda.cluster_sync")
        barrier(c, "T.cuda.cluster_sync")  # every block of a chunk runs in lockstep
        return _ZERO

    return ev


@register_handler(_R, "cuda.warp_sync")
def _warp_sync(fc, call):
    def ev(c):
        need_launch(c, "cuda.warp_sync")
        return _ZERO

    return ev


@register_handler(_R, "cuda.threadfence")
def _threadfence(fc, call):
    return lambda c: _ZERO


# ----------------------------------------------------------------------------- warps
def _src_check(c, src, what):
    """``src``: source lane per lane. Inactive source lanes are an error."""
    if c.count != c.N:
        bad = c.mask & ~c.mask[src]
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise InterpError(
                f"T.{what}: {c.describe(k)} reads from {c.describe(int(src[k]))}, which is not active "
                "(warp shuffles need every source lane converged)"
            )


def _shfl(name: str, mode: str):
    @register_handler(_R, name)
    def h(fc, call):
        fv, fl = fc.expr(call.args[0]), fc.expr(call.args[1])

        def ev(c):
            L = need_launch(c, name)
            v, a = fv(c), fl(c)
            tid = L.get("tid")
            lane = tid % 32
            base = L.get("lane") - lane
            a = a.astype(np.int64)
            if mode == "idx":
                s = a % 32
            elif mode == "xor":
                s = lane ^ a
            elif mode == "down":
                s = lane + a
            else:
                s = lane - a
            ok = (s >= 0) & (s < 32) & ((tid - lane + s) < L.T)
            src = np.where(ok, base + s, L.get("lane"))
            _src_check(c, src, name)
            if v.shape[0] == 1:
                return v
            return v[src]

        return ev

    return h


_shfl("cuda.shfl_sync", "idx")
_shfl("cuda.shfl_xor_sync", "xor")
_shfl("cuda.shfl_down_sync", "down")
_shfl("cuda.shfl_up_sync", "up")


def _warp_reduce(name: str, kind: str):
    @register_handler(_R, name)
    def h(fc, call):
        fv = fc.expr(call.args[0])
        t = call.ty
        is_f = t.is_float
        bf = D.needs_rounding(t.element)
        if kind == "sum":
            op = np.add
        elif kind == "max":
            op = D.fmax if is_f else np.maximum
        else:
            op = D.fmin if is_f else np.minimum

        def ev(c):
            L = need_launch(c, name)
            v = _full(fv(c), c.N)
            if L.T % 32:
                raise InterpError(f"T.{name} in a block of {L.T} threads: the last warp is partial")
            lane_g = L.get("lane")
            lane = L.get("tid") % 32
            for off in (16, 8, 4, 2, 1):
                src = lane_g - lane + (lane ^ off)
                if off == 16:
                    _src_check(c, src, name)
                v = op(v, v[src])
                if bf:
                    v = D.round_to(v, t.element)
            return v

        return ev

    return h


_warp_reduce("cuda.warp_sum", "sum")
_warp_reduce("cuda.warp_max", "max")
_warp_reduce("cuda.warp_min", "min")


# ----------------------------------------------------------------------------- atomics
_ATOMIC_OPS = {
    "cuda.atomic_add": "add",
    "cuda.atomic_max": "max",
    "cuda.atomic_min": "min",
    "cuda.atomic_exch": "exch",
    "cuda.atomic_cas": "cas",
}


def compile_atomic(fc, call, want_old: bool = True):
    kind = _ATOMIC_OPS[call.op.name]
    fp = fc.expr(call.args[0])
    fvs = [fc.expr(a) for a in call.args[1:]]
    t: PrimType = call.args[1].ty
    name = call.op.name
    races = fc.prog.check_races
    is_f = t.is_float

    def apply(old, v, cmp=None):
        if kind == "add":
            r = old + v
            return D.round_to(r, t)
        if kind == "max":
            return D.fmax(old, v) if is_f else np.maximum(old, v)
        if kind == "min":
            return D.fmin(old, v) if is_f else np.minimum(old, v)
        if kind == "exch":
            return v
        return np.where(old == cmp, v, old)

    def ev(c):
        p = fp(c)
        if not isinstance(p, PtrVal):
            raise InterpError(f"T.{name}: the first argument must be a pointer (T.address_of(A[i]))")
        vals = [_full(f(c), c.N) for f in fvs]
        mem = p.mem
        view = mem.view(t)
        row = view.shape[1]
        itemsize = D.storage_np(t).itemsize
        off = p.off
        flat = np.full(1, off // itemsize, dtype=np.int64) if isinstance(off, int) else (off // itemsize)
        flat = _full(flat, c.N)
        m = c.mask
        bad = ((flat < 0) | (flat >= row)) & m
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise OutOfBoundsError(
                f"T.{name}: out-of-bounds atomic on {mem.kind} buffer {mem.name} at element {int(flat[k])} "
                f"by {c.describe(k)}"
            )
        if mem.per == GLOBAL:
            units = 0
        elif mem.per == BLOCK:
            units = c.launch.get("bl").astype(np.int64) * row
        else:
            units = (c.lanes_arr() if view.shape[0] == c.N else 0) * row
        full = flat + units
        act = np.flatnonzero(m)
        idx = full[act]
        vs = [v[act] for v in vals]
        v1 = view.reshape(-1)
        if races and mem.per == BLOCK and c.launch is not None:
            from .engine import _ATOMIC_T, _TB, _race_arrays

            wst, _rst = _race_arrays(mem, t)
            unw = wst[idx] < 0
            if unw.any():
                k = int(np.flatnonzero(unw)[0])
                raise RaceError(
                    f"T.{name} on shared buffer {mem.name} at element {int(flat[act[k]])} that no thread wrote, "
                    f"by {c.describe(act[k])}"
                )
        old = np.zeros(len(idx), dtype=D.value_np(t))
        uniq = len(idx) <= 1 or np.unique(idx).size == len(idx)
        if uniq:
            o = D.from_storage(v1[idx], t)
            old[:] = o
            v1[idx] = D.to_storage(apply(o, *vs) if kind != "cas" else apply(o, vs[1], vs[0]), t)
        elif kind == "add" and not is_f:
            order = np.argsort(idx, kind="stable")
            si, sv = idx[order], vs[0][order]
            cs = np.cumsum(sv, dtype=sv.dtype)
            excl = cs - sv
            start = np.ones(len(si), dtype=bool)
            start[1:] = si[1:] != si[:-1]
            gid = np.cumsum(start) - 1
            base = excl[start][gid]
            before = (excl - base).astype(sv.dtype)
            o = v1[si] + before
            res = np.empty_like(o)
            res[order] = o
            old[:] = res
            np.add.at(v1, idx, vs[0])
        elif kind in ("add", "max", "min") and not want_old and not D.needs_rounding(t):
            ufunc = {
                "add": np.add,
                "max": np.fmax if is_f else np.maximum,
                "min": np.fmin if is_f else np.minimum,
            }[kind]
            ufunc.at(v1, idx, vs[0].astype(v1.dtype))
        else:  # serial in lane order
            for j in range(len(idx)):
                o = D.from_storage(v1[idx[j : j + 1]], t)
                old[j] = o[0]
                args = [v[j : j + 1] for v in vs]
                nv = apply(o, *args) if kind != "cas" else apply(o, args[1], args[0])
                v1[idx[j : j + 1]] = D.to_storage(nv, t)
        if races and mem.per == BLOCK and c.launch is not None:
            wst[idx] = c.launch.epoch[c.launch.get("bl")[act]] * _TB + _ATOMIC_T
        out = np.zeros(c.N, dtype=D.value_np(t))
        out[act] = old
        return out

    return ev


def _compile_atomic_stmt(fc, call):
    return compile_atomic(fc, call, want_old=False)


for _n in _ATOMIC_OPS:
    register_handler(_R, _n)(compile_atomic)
    # as a statement (the old value unused): the engine looks this up by backend, so it
    # does not import this module (no engine <-> ops cycle)
    register_handler(_R_STMT, _n)(_compile_atomic_stmt)


# ----------------------------------------------------------------------------- typed PTX
def _noop(name: str):
    @register_handler(_R, name)
    def h(fc, call):
        def ev(c):
            need_launch(c, name)
            return _ZERO

        return ev

    return h


for _n in ("ptx.fence_proxy_async", "ptx.fence_mbarrier_init", "ptx.setmaxnreg_inc", "ptx.setmaxnreg_dec"):
    _noop(_n)  # ordering / register-allocation hints: no effect on a lockstep CPU run


@register_handler(_R, "ptx.elect_sync")
def _elect_sync(fc, call):
    def ev(c):
        L = need_launch(c, "ptx.elect_sync")
        lane = L.get("tid") % 32
        # the lowest active lane of each warp is elected
        first = np.full(c.N, False)
        act = np.flatnonzero(c.mask)
        if act.size:
            warp = (L.get("lane") - lane)[act]
            keep = np.ones(act.size, dtype=bool)
            keep[1:] = warp[1:] != warp[:-1]
            first[act[keep]] = True
        return first

    return ev
