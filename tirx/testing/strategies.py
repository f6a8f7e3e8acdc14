"""Hypothesis strategies that generate random, well-formed tirx IR.

Use them to fuzz your own passes::

    import tirx
    from hypothesis import given
    from tirx.testing import strategies as tst

    @given(tst.functions())
    def test_my_pass_keeps_text_stable(f):
        g = my_pass(f)
        assert tirx.dumps(g) == tirx.dumps(my_pass(g))   # e.g. idempotence

    @given(tst.runnable_kernels())
    def test_my_pass_keeps_results(r):
        r.assert_same(r.run(), r.run(my_pass(r.func)))

Strategies
----------
``dtypes(vector=False)``
    Every scalar dtype (bool, int8..int64, uint8..uint64, float16/32/64, bfloat16, the
    float8/float6/float4 minifloats); with ``vector=True`` also vector lanes (``float16x4``).
``exprs(dtype=None)``
    An expression of ``dtype`` (a dtype string, PrimType or PointerType; drawn when
    None, vectors included). It may use a few *free* vars and buffers (fresh ones, as a
    pass would see inside a bigger function) and binds its own ``Let`` vars.
``closed_exprs(dtype=None)``
    Expressions without free variables (constants, casts, lets, selects, op calls ...).
``stmts()``
    A statement (often a ``SeqStmt``) that is well-formed on its own: it defines every
    var and buffer it uses (allocations, binds, loops). It may contain a device entry.
``functions()``
    A ``Function`` with tensor / scalar / pointer params, dynamic shape vars (int32 and
    int64), optional return type, attrs, private flag, and a body drawn from everything
    below.
``modules()``
    A ``Module`` of 1-4 functions that call each other through ``T.Call`` (GlobalVar).
``runnable_kernels()``
    Re-exported from ``tirx.testing.runnable``: kernels that can actually *run* (in-bounds
    indices, bounded loops, no division by zero) drawn as ``Runnable`` objects carrying
    their arguments; ``r.run()`` / ``r.run(other_func)`` / ``Runnable.assert_same``.

``stmts``, ``functions`` and ``modules`` take ``max_stmts`` (a budget on the number of
statements) to trade coverage for speed.

What the generated IR covers: every statement kind (Bind, BufferStore, Evaluate, For
of every kind -- serial with/without step, unroll, vectorized, parallel,
thread_binding, annotations --, While with break/continue, if/elif/else, Return,
Assert, AllocBuffer in local/shared/shared.dyn/global scope, DeclBuffer over a pointer
(also a view of another dtype), DeviceEntry with cluster and dynamic shared memory
sometimes, AttrStmt) and every expression kind (Var, typed IntImm/FloatImm incl.
inf/nan, StringImm, every binary op, Not, BitNot, Select, Cast, Call of ops from the
op table and of module functions, BufferLoad incl. vector loads, Ramp, Broadcast,
Let), pointers (``T.Ptr`` params, ``reinterpret``, ``address_of``) and scopes.

Well-formedness guarantees: vars and buffers are used only where they are in scope
(Binds and allocations are visible to the following statements of their body; loop
vars and Let vars only inside); ``break``/``continue`` only inside a loop of the same
device region; device-only ops only inside a device entry; dtypes agree as the node
constructors demand; loop bounds take any form (start 0, constants, ``stop - start``,
and arbitrary start / extent expressions); float constants are exactly
representable in their dtype. Names are drawn from a small pool so they often collide
(exercising the printer's uniquifying), sometimes with keywords / ``T`` / non-identifiers.

Shapes a pass may leave behind are generated on purpose: one node used in two places
(an operand twice, ``x - x``; a statement repeated later in its block; a loop start
that also appears in the extent), so a ``Let`` / ``For`` / ``Bind`` / ``AllocBuffer``
binder is bound twice; and bodies that are nested or one-element ``SeqStmt`` s. The IR is
therefore not SSA (``ConvertSSA`` makes it so).

"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, TypeVar, cast

from hypothesis import strategies as st

from tirx.ir import expr as E
from tirx.ir import stmt as S
from tirx.ir.buffer import Buffer
from tirx.ir.fold import fold
from tirx.ir.function import Function, Module
from tirx.ir.node import EMPTY_ATTRS, Attrs, as_attrs
from tirx.ir.op import all_ops, call
from tirx.ir.types import DTYPE_NAMES, PointerType, PrimType, bool_, float32, handle, int32, int64, prim, void

# imported here, not on the first draw: a first import inside a draw counts toward
# hypothesis's too_slow limit (tens of ms of the first test's 1 s)
from tirx.surface.builder import launch_args

__all__ = [
    "closed_exprs",
    "dtypes",
    "exprs",
    "functions",
    "modules",
    "runnable_kernels",
    "stmts",
]

_T = TypeVar("_T")

# ------------------------------------------------------------------ pools
NAMES = ("i", "j", "k", "x", "y", "n", "A", "B", "buf", "acc", "tmp", "v", "p")
ODD_NAMES = ("T", "I", "if", "lambda", "a.b", "x_1", "1st", "Module", "range", "None", "é")
SCALAR_DTYPES = tuple(prim(n) for n in DTYPE_NAMES)
INT_DTYPES = tuple(t for t in SCALAR_DTYPES if t.is_int)
FLOAT_DTYPES = tuple(t for t in SCALAR_DTYPES if t.is_float)
SCOPES = ("local", "shared", "shared.dyn", "global")
THREADS = ("threadIdx.x", "threadIdx.y", "blockIdx.x", "blockIdx.z")
MAX_DEPTH = 3


def _dtype(x: Any) -> Any:
    if isinstance(x, str):
        from tirx.ir.types import parse_dtype

        return parse_dtype(x)
    return x


class _Ctx:
    """What is in scope while generating: vars by type, buffers, flags."""

    __slots__ = ("bufs", "funcs", "in_device", "in_loop", "ptr_srcs", "ret_ty", "vars")

    def __init__(self):
        self.vars: list[E.Var] = []
        self.bufs: list[Buffer] = []
        self.ptr_srcs: list[E.Var] = []
        self.in_device = False
        self.in_loop = False
        self.ret_ty = None
        self.funcs: list[tuple[str, tuple, Any]] = []

    def child(self, **kw: Any) -> _Ctx:
        c = _Ctx()
        c.vars = list(self.vars)
        c.bufs = list(self.bufs)
        c.ptr_srcs = list(self.ptr_srcs)
        c.in_device = self.in_device
        c.in_loop = self.in_loop
        c.ret_ty = self.ret_ty
        c.funcs = self.funcs
        for k, v in kw.items():
            setattr(c, k, v)
        return c


# One hypothesis draw costs ~30-70 us, whatever it draws, and a function is a few hundred of
# them: several decisions are decoded from one integer draw (index 0, where shrinking goes, is
# the simplest choice), so that @given(functions()) stays far below hypothesis's too_slow
# limit (1 s for the first ~10 examples) on a loaded machine (issue #29).
@functools.cache
def _ints(lo: int, hi: int) -> st.SearchStrategy[int]:
    """``st.integers(lo, hi)``, built once (hypothesis's per-call strategy cache costs)."""
    return st.integers(lo, hi)


def _pick(draw, seq: Sequence[_T]) -> _T:
    """``draw(st.sampled_from(seq))`` as one integer draw."""
    return seq[draw(_ints(0, len(seq) - 1))]


_NAME_POOL = NAMES * 15 + ODD_NAMES  # an odd name about 1 time in 18


def _name(draw) -> str:
    return _pick(draw, _NAME_POOL)


# ------------------------------------------------------------------ constants
def _small_float(v: int) -> float:
    """k / 2^s with -7 <= k <= 7, s <= 3, decoded from 0 <= v < 60 (0 -> 0.0)."""
    k, s = divmod(v, 4)
    return ((k + 1) // 2 if k % 2 else -(k // 2)) / (1, 2, 4, 8)[s]


def _in_range(v: float, t: PrimType) -> float:
    """``v`` clamped to a minifloat's finite range (float4_e2m1fn's is +-6): a literal past it is
    one the frontend refuses, as TIRx does (``T.float4_e2m1fn(-7.0)``)."""
    if not t.is_minifloat:
        return v
    from tirx.ir.types import MINIFLOAT_LIMITS

    hi, lo = MINIFLOAT_LIMITS[t.base]
    return min(max(v, lo), hi)


def _const_as(draw, t: PrimType, form: Any) -> E.PrimExpr:
    """A constant of scalar ``t`` in the form the expression-kind draw picked."""
    if t.is_bool:
        return E.IntImm(int(form == 1), t)
    if t.is_int:
        lo, hi = E.int_range(t)
        if form == "small":
            v = draw(_ints(-3, 300))
        elif form == "full":
            v = draw(_ints(lo, hi))
        else:
            v = (lo, hi, 0, 1)[form]
        return E.IntImm(min(max(v, lo), hi), t)
    if form == "special" and t.bits >= 16:
        # both NaN signs: a NaN's bits are the constant (the GPU computes with them)
        return E.FloatImm(_pick(draw, (float("inf"), float("-inf"), float("nan"), float("-nan"), -0.0)), t)
    if form == "floats" and t.base in ("float32", "float64"):
        v = draw(st.floats(allow_nan=False, allow_infinity=False, width=32 if t.bits == 32 else 64))
        return E.FloatImm(float(v), t)
    return E.FloatImm(_in_range(_small_float(draw(_ints(0, 59))), t), t)


def _const(draw, t: PrimType) -> E.PrimExpr:
    if t.lanes > 1:
        return E.Broadcast(_const(draw, t.element), t.lanes)
    if t.is_bool:
        return E.IntImm(draw(st.integers(0, 1)), t)
    if t.is_int:
        lo, hi = E.int_range(t)
        v = draw(st.one_of(st.integers(-3, 300), st.sampled_from((lo, hi, 0, 1)), st.integers(lo, hi)))
        return E.IntImm(min(max(v, lo), hi), t)
    # floats exactly representable in the dtype: k / 2^s, small k
    if t.bits >= 16 and draw(st.integers(0, 12)) == 0:
        # both NaN signs: a NaN's bits are the constant (the GPU computes with them)
        v = draw(st.sampled_from((float("inf"), float("-inf"), float("nan"), float("-nan"), -0.0)))
    elif t.base in ("float32", "float64") and draw(st.booleans()):
        v = draw(st.floats(allow_nan=False, allow_infinity=False, width=32 if t.bits == 32 else 64))
    else:
        v = _in_range(draw(st.integers(-7, 7)) / draw(st.sampled_from((1, 2, 4, 8))), t)
    return E.FloatImm(float(v), t)


# ------------------------------------------------------------------ expressions
_ARITH_INT = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max)
_BITS = (E.BitAnd, E.BitOr, E.BitXor, E.Shl, E.Shr)
_ARITH_FLOAT = (E.Add, E.Sub, E.Mul, E.Div, E.Min, E.Max)
_CMPS = (E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE)


def _int_index(draw, ctx: _Ctx, depth: int) -> E.PrimExpr:
    t = draw(st.sampled_from((int32, int32, int64)))
    return _expr(draw, ctx, t, depth + 1)


def _load(draw, ctx: _Ctx, t: PrimType, depth: int) -> E.PrimExpr | None:
    cands = [b for b in ctx.bufs if b.dtype == t.element]
    if not cands:
        return None
    b = draw(st.sampled_from(cands))
    idx = [_int_index(draw, ctx, depth) for _ in b.shape]
    if t.lanes > 1:
        if not idx:
            return None
        base = idx[-1]
        idx[-1] = E.Ramp(base, E.IntImm(1, cast(PrimType, base.ty)), t.lanes)
    return E.BufferLoad(b, tuple(idx))


def _scope(b: Buffer) -> str | None:
    """The memory scope of ``b``'s pointer."""
    return getattr(b.data.ty, "scope", None)


def _ptr_expr(draw, ctx: _Ctx, t: PointerType, depth: int) -> E.PrimExpr | None:
    opts = []
    same = [v for v in ctx.vars if v.ty == t]
    if same:
        opts.append("var")
    if isinstance(t.element, PrimType) and any(
        b.dtype == t.element and _scope(b) == t.scope and b.shape for b in ctx.bufs
    ):
        opts.append("address_of")
    if ctx.ptr_srcs:
        opts.append("reinterpret")
    if not opts:
        return None
    how = draw(st.sampled_from(opts))
    if how == "var":
        return draw(st.sampled_from(same))
    if how == "address_of":
        bufs = [b for b in ctx.bufs if b.dtype == t.element and _scope(b) == t.scope and b.shape]
        b = draw(st.sampled_from(bufs))
        return call("address_of", E.BufferLoad(b, tuple(_int_index(draw, ctx, depth) for _ in b.shape)))
    src = draw(st.sampled_from(ctx.ptr_srcs))
    return call("reinterpret", src, ty=t)


def _op_call(draw, ctx: _Ctx, t: PrimType, depth: int) -> E.PrimExpr | None:
    """A call of an op from the op table, cast to ``t`` when its result differs."""
    ops = [o for n, o in sorted(all_ops(builtin_only=True).items()) if (ctx.in_device or not o.device_only)]
    op = draw(st.sampled_from(ops))
    if op.name == "address_of":
        return None
    xt = (
        t
        if t.is_float and t.lanes == 1
        else draw(st.sampled_from((float32, prim("float16"), prim("float64"))))
    )
    if op.name == "reinterpret":
        src_t = draw(st.sampled_from([u for u in SCALAR_DTYPES if u.bits == t.bits and t.lanes == 1] or [t]))
        return call(op, _expr(draw, ctx, src_t, depth + 1), ty=t)
    args: list[Any] = []
    kinds = list(op.args)
    if kinds and kinds[-1].startswith("*"):
        kinds = kinds[:-1] + [kinds[-1].lstrip("*").rstrip("?")] * draw(st.integers(0, 2))
    else:
        kinds = [k for k in kinds if not k.endswith("?") or draw(st.booleans())]
    i = 0
    while i < len(kinds):
        k = kinds[i].rstrip("?")
        if k == "p" and i + 1 < len(kinds) and kinds[i + 1] == "x":
            # atomics: a pointer to an element, then values of the element's dtype
            bufs = [b for b in ctx.bufs if b.shape]
            if not bufs:
                return None
            b = draw(st.sampled_from(bufs))
            args.append(
                call("address_of", E.BufferLoad(b, tuple(_int_index(draw, ctx, depth) for _ in b.shape)))
            )
            for k2 in kinds[i + 1 :]:
                args.append(_expr(draw, ctx, b.dtype if k2 == "x" else int32, depth + 1))
            break
        if k == "x" or k == "f":
            args.append(_expr(draw, ctx, xt, depth + 1))
        elif k == "i":
            args.append(_expr(draw, ctx, int32, depth + 1))
        elif k == "b":
            args.append(_expr(draw, ctx, bool_, depth + 1))
        elif k == "n":
            args.append(draw(st.integers(0, 4)))
        elif k == "s":
            if op.name.startswith("cuda."):
                args.append(draw(st.sampled_from(("x", "y", "z"))))
            elif op.name == "ptx.asm":
                args.append("mov.u32 %0, %1;")
            else:
                args.append(draw(st.sampled_from(("ext_fn", "__nv_expf", "my.fn"))))
        elif k == "p":
            if ctx.bufs and draw(st.integers(0, 3)) == 0:  # a tensor where a pointer goes (Call.tensor_args)
                args.append(draw(st.sampled_from(ctx.bufs)))
                i += 1
                continue
            if not ctx.ptr_srcs and not any(isinstance(v.ty, PointerType) for v in ctx.vars):
                return None
            pv = [v for v in ctx.vars if isinstance(v.ty, PointerType)] + ctx.ptr_srcs
            args.append(draw(st.sampled_from(pv)))
        i += 1
    try:
        c = call(op, *args, ty=t if op.needs_ty else None)
    except (TypeError, ValueError):
        return None
    if c.ty == t:
        return c
    if isinstance(c.ty, PrimType) and t.lanes == 1 and c.ty.lanes == 1:
        return E.Cast(t, c)
    return None


def _func_call(draw, ctx: _Ctx, t: Any, depth: int) -> E.PrimExpr | None:
    cands = [f for f in ctx.funcs if f[2] == t]
    if not cands:
        return None
    name, ptys, rt = draw(st.sampled_from(cands))
    return E.Call(E.GlobalVar(name), tuple(_expr(draw, ctx, p, depth + 1) for p in ptys), rt)


def _leaf(draw, ctx: _Ctx, t: Any, depth: int) -> E.PrimExpr:
    if isinstance(t, PointerType):
        e = _ptr_expr(draw, ctx, t, depth)
        if e is None:
            raise _NoExpr
        return e
    choice = draw(st.integers(0, 3))
    if choice == 1:
        vs = [v for v in ctx.vars if v.ty == t]
        if vs:
            return draw(st.sampled_from(vs))
    elif choice == 2 and depth < MAX_DEPTH:
        e = _load(draw, ctx, t, depth)
        if e is not None:
            return e
    return _const(draw, t)


class _NoExpr(Exception):
    pass


def _kinds(t: PrimType) -> tuple[tuple[tuple, ...], int]:
    """The node kinds of a scalar expression of ``t``'s class, as often as they were drawn
    one decision at a time (a leaf 1/3: a constant half of those, a var or a load a quarter;
    select, cast, let, op call, function call 1/15 each; the rest the dtype's own operators),
    and how many leading entries are leaves. Entry 0 is the simplest (a zero constant)."""
    if t.is_bool:
        consts: tuple = (("const", 0),) * 10 + (("const", 1),) * 10
        own: tuple = (
            tuple(("cmp", c) for c in _CMPS) * 2 + (("un", E.Not),) * 9 + (("bin", E.And), ("bin", E.Or)) * 5
        )
    elif t.is_int:
        consts = (
            (("const", "small"),) * 7 + tuple(("const", i) for i in range(4)) * 2 + (("const", "full"),) * 6
        )
        own = (
            tuple(("bin", c) for c in _ARITH_INT) * 3
            + tuple(("bin", c) for c in _BITS)
            + (("un", E.BitNot),) * 6
        )
    else:
        consts = (("const", "small"),) * 9 + (("const", "floats"),) * 9 + (("const", "special"),) * 2
        own = tuple(("bin", c) for c in _ARITH_FLOAT) * 7
    leaves = consts + (("var",),) * 10 + (("load",),) * 10
    nodes = tuple((k,) for k in ("select", "cast", "let", "op", "func") for _ in range(8))
    return leaves + own[: len(own) // 2] + nodes + own[len(own) // 2 :], len(leaves)


_KINDS: dict[tuple[bool, bool], tuple[tuple[tuple, ...], int]] = {}


def _scalar_expr(draw, ctx: _Ctx, t: PrimType, depth: int) -> E.PrimExpr:
    key = (t.is_bool, t.is_int)
    if key not in _KINDS:
        _KINDS[key] = _kinds(t)
    kinds, nleaves = _KINDS[key]
    i = draw(_ints(0, (nleaves if depth >= MAX_DEPTH else len(kinds)) - 1))
    k = kinds[i]
    d = depth + 1
    if k[0] == "var":
        vs = [v for v in ctx.vars if v.ty == t]
        if vs:
            return _pick(draw, vs)
    elif k[0] == "load" and depth < MAX_DEPTH:
        e = _load(draw, ctx, t, depth)
        if e is not None:
            return e
    elif k[0] == "select":
        return E.Select(_expr(draw, ctx, bool_, d), _expr(draw, ctx, t, d), _expr(draw, ctx, t, d))
    elif k[0] == "cast":
        if t.lanes == 1:
            return E.Cast(t, _expr(draw, ctx, _pick(draw, SCALAR_DTYPES), d))
        # a cast keeps the lane count: a scalar cast, broadcast
        return E.Broadcast(E.Cast(t.with_lanes(1), _expr(draw, ctx, _pick(draw, SCALAR_DTYPES), d)), t.lanes)
    elif k[0] == "let":
        vt = _pick(draw, (int32, int64, float32, bool_, t))
        v = E.Var(_name(draw), vt)
        value = _expr(draw, ctx, vt, d)
        body = _expr(draw, ctx.child(vars=[*ctx.vars, v]), t, d)
        return E.Let(v, value, body)
    elif k[0] == "op" or k[0] == "func":
        e = (_op_call if k[0] == "op" else _func_call)(draw, ctx, t, depth)
        if e is not None:
            return e
        k = kinds[nleaves + i % 10]  # none fits: one of the dtype's own operators
    if k[0] == "const":
        return _const_as(draw, t, k[1])
    if k[0] in ("var", "load"):  # none in scope: a constant
        return _const_as(draw, t, kinds[i % 20][1])
    if k[0] == "cmp":
        ot = _pick(draw, SCALAR_DTYPES)
        return k[1](_expr(draw, ctx, ot, d), _expr(draw, ctx, ot, d))
    if k[0] == "un":
        return k[1](_expr(draw, ctx, t, d))
    return k[1](*_operands(draw, ctx, t, d, k[1]))


def _expr(draw, ctx: _Ctx, t: Any, depth: int = 0) -> E.PrimExpr:
    t = _dtype(t)
    if isinstance(t, PrimType) and t.lanes == 1:
        return _scalar_expr(draw, ctx, t, depth)
    if isinstance(t, PointerType) or depth >= MAX_DEPTH or draw(st.integers(0, 2)) == 0:
        return _leaf(draw, ctx, t, depth)
    d = depth + 1
    el = t.element
    how = draw(st.integers(0, 3))
    if how == 0:
        return E.Broadcast(_expr(draw, ctx, el, d), t.lanes)
    if how == 1 and el.is_int:
        return E.Ramp(_expr(draw, ctx, el, d), _expr(draw, ctx, el, d), t.lanes)
    if how == 2:
        e = _load(draw, ctx, t, depth)
        if e is not None:
            return e
    ops = _ARITH_FLOAT if el.is_float else (E.Add, E.Sub, E.Mul, E.Min, E.Max)
    if el.is_bool:
        return E.Broadcast(_expr(draw, ctx, el, d), t.lanes)
    cls = draw(st.sampled_from(ops))
    return cls(_expr(draw, ctx, t, d), _expr(draw, ctx, t, d))


_SHARED_OPERAND_OK = (E.Add, E.Sub, E.Mul, E.Min, E.Max)  # not x / x: no new zero divisors


def _operands(draw, ctx: _Ctx, t: Any, d: int, cls: type) -> tuple:
    """Two operands; sometimes one node twice (``x - x``; a Let in it is then a binder
    node bound in two places, which must print and compare like two Lets)."""
    a = _expr(draw, ctx, t, d)
    if cls in _SHARED_OPERAND_OK and draw(st.integers(0, 7)) == 0:
        return a, a
    return a, _expr(draw, ctx, t, d)


def _safe_expr(draw, ctx: _Ctx, t: Any, depth: int = 0) -> E.PrimExpr | None:
    try:
        return _expr(draw, ctx, t, depth)
    except _NoExpr:
        return None


# ------------------------------------------------------------------ public expression strategies
@st.composite
def dtypes(draw, vector: bool = False) -> PrimType:
    t = draw(st.sampled_from(SCALAR_DTYPES))
    if vector and not t.is_bool and draw(st.booleans()):
        t = t.with_lanes(draw(st.sampled_from((2, 4, 8))))
    return t


@st.composite
def closed_exprs(draw, dtype: Any = None) -> E.PrimExpr:
    """An expression of ``dtype`` with no free variables."""
    t = _dtype(dtype) if dtype is not None else draw(dtypes(vector=True))
    if isinstance(t, PointerType):
        raise ValueError("closed_exprs: pointer expressions need a pointer in scope; use exprs()")
    return _expr(draw, _Ctx(), t)


@st.composite
def exprs(draw, dtype: Any = None) -> E.PrimExpr:
    """An expression of ``dtype`` over some free variables and buffers (and Lets)."""
    t = _dtype(dtype) if dtype is not None else draw(dtypes(vector=True))
    ctx = _Ctx()
    for _ in range(draw(st.integers(0, 3))):
        ctx.vars.append(
            E.Var(
                _name(draw),
                draw(
                    st.sampled_from(
                        (int32, int64, float32, bool_, t.element if isinstance(t, PrimType) else int32)
                    )
                ),
            )
        )
    for _ in range(draw(st.integers(0, 2))):
        dt = draw(st.sampled_from(SCALAR_DTYPES))
        ctx.bufs.append(
            _make_buffer(draw, ctx, _name(draw), dt, draw(st.sampled_from(SCOPES)), free_shape=True)
        )
    if isinstance(t, PointerType):
        h = E.Var("h", handle)
        ctx.ptr_srcs.append(h)
    return _expr(draw, ctx, t)


# ------------------------------------------------------------------ buffers
def _make_buffer(
    draw,
    ctx: _Ctx,
    name: str,
    dtype: PrimType,
    scope: str,
    free_shape: bool = False,
    shape_vars: list | None = None,
) -> Buffer:
    rank = draw(st.integers(0, 3)) if not free_shape else draw(st.integers(1, 2))
    shape = []
    for _ in range(rank):
        if shape_vars and draw(st.booleans()):
            shape.append(draw(st.sampled_from(shape_vars)))
        else:
            shape.append(E.IntImm(draw(st.integers(1, 64)), int32))
    data = E.Var(name, PointerType(dtype, scope))
    return Buffer(name, data, dtype, tuple(shape))


# ------------------------------------------------------------------ statements
def _annotations(draw) -> Attrs:
    pool = {
        "pragma_unroll_explicit": st.integers(0, 8),
        "software_pipeline_stage": st.lists(st.integers(0, 3), max_size=3),
        "note": st.text(max_size=6),
        "flag": st.booleans(),
        "ratio": st.sampled_from((0.5, 1.25, -3.0)),
        "nothing": st.none(),
        "nested": st.fixed_dictionaries({"a": st.integers(0, 3), "b": st.sampled_from(("x", "y"))}),
        'we"ird\\key': st.integers(0, 1),
    }
    keys = draw(st.lists(st.sampled_from(sorted(pool)), max_size=3, unique=True))
    return as_attrs({k: draw(pool[k]) for k in keys})


def _for(draw, ctx: _Ctx, depth: int, budget: list) -> S.Stmt:
    lt = draw(st.sampled_from((int32, int32, int64)))
    form = draw(st.integers(0, 3))
    if form == 3:
        # any start and extent, also the forms a simplifying printer would fold
        # (``(a + b) - a`` printed as ``range(a, a + b)`` once loaded back with extent b)
        # (start appears twice in some extents: a Let in it is a shared binder node)
        start = _expr(draw, ctx, lt, MAX_DEPTH - 1)
        e = _expr(draw, ctx, lt, MAX_DEPTH - 1)
        extent = draw(st.sampled_from((e, E.Sub(E.Add(start, e), start), E.Add(start, e), E.Sub(e, start))))
    elif form == 0:
        start = E.IntImm(0, lt)
        extent = _expr(draw, ctx, lt, MAX_DEPTH - 1)
    elif form == 1:
        a = draw(st.integers(-4, 8))
        start, extent = E.IntImm(a, lt), E.IntImm(draw(st.integers(0, 64)), lt)
    else:
        # range(a, n): extent = n - a, with a non-constant start (constants fold in text)
        ivs = [v for v in ctx.vars if v.ty == lt]
        start = draw(st.sampled_from(ivs)) if ivs and draw(st.booleans()) else E.Var("s", lt)
        if start not in ivs:
            start = (
                E.Add(E.IntImm(1, lt), E.Cast(lt, call("cuda.thread_idx", "x")))
                if ctx.in_device
                else (E.Add(E.IntImm(1, lt), E.IntImm(1, lt)))
            )
        extent = E.Sub(_expr(draw, ctx, lt, MAX_DEPTH - 1), start)
    kind = draw(st.sampled_from(list(S.ForKind)))
    step = None
    if kind is not S.ForKind.THREAD_BINDING and draw(st.integers(0, 3)) == 0:
        step = (
            E.IntImm(draw(st.integers(1, 4)), lt)
            if draw(st.booleans())
            else _expr(draw, ctx, lt, MAX_DEPTH - 1)
        )
        try:
            folded = fold(step)
        except (ArithmeticError, ValueError, TypeError):  # a constant the folder refuses: x // 0
            folded = E.IntImm(0, lt)
        if type(folded) is E.IntImm and folded.value == 0:
            step = E.IntImm(1, lt)  # a zero step is no loop: the parsers refuse it, as TIRx's does
    thread = draw(st.sampled_from(THREADS)) if kind is S.ForKind.THREAD_BINDING else None
    ann = _annotations(draw) if draw(st.integers(0, 2)) == 0 else EMPTY_ATTRS
    v = E.Var(_name(draw), lt)
    body = _body(draw, ctx.child(vars=[*ctx.vars, v], in_loop=True), depth + 1, budget)
    return S.For(v, start, extent, kind, body, step, thread, ann)


def _device_entry(draw, ctx: _Ctx, depth: int, budget: list) -> S.Stmt:
    ints = [v for v in ctx.vars if v.ty == int32]

    def dim():
        if ints and draw(st.integers(0, 3)) == 0:
            return draw(st.sampled_from(ints))
        return draw(st.integers(1, 256))

    grid = [dim() for _ in range(draw(st.integers(1, 3)))]
    block = [dim() for _ in range(draw(st.integers(1, 3)))]
    cluster = [draw(st.integers(1, 2)) for _ in range(3)] if draw(st.integers(0, 3)) == 0 else None
    smem = draw(st.sampled_from((0, 1024, 49152))) if draw(st.integers(0, 3)) == 0 else None
    args, attrs = launch_args(grid, block, cluster, smem)
    inner = ctx.child(in_device=True, in_loop=False)
    head = []
    if draw(st.booleans()):  # the usual kernel prologue
        axis = draw(st.sampled_from(("x", "y")))
        tx = E.Var(draw(st.sampled_from(("tx", "i", "x"))), int32)
        head.append(S.Bind(tx, call(draw(st.sampled_from(("cuda.thread_idx", "cuda.block_idx"))), axis)))
        inner.vars.append(tx)
    lst = head + _stmt_list(draw, inner, depth + 1, budget)
    return S.DeviceEntry(args, attrs, _block(draw, lst))


def _stmt_list(draw, ctx: _Ctx, depth: int, budget: list) -> list:
    out: list = []
    n = draw(st.integers(0 if depth else 1, 4))
    for _ in range(n):
        if budget[0] <= 0:
            break
        budget[0] -= 1
        if out and draw(st.integers(0, 9)) == 0:
            # an earlier statement node again (what it uses is still in scope): its loop,
            # Let, Bind and buffer binders are bound twice, as after a pass that duplicates
            out.append(draw(st.sampled_from(out)))
            continue
        s = _one_stmt(draw, ctx, depth, budget)
        if s is not None:
            out.append(s)
    return out


def _block(draw, lst: list) -> S.Stmt:
    """The statements as one body: mostly normalized (``S.seq``), sometimes as the nested
    or one-element SeqStmts a pass may leave (they print like the flat form)."""
    how = draw(st.integers(0, 5))
    if how == 0:
        return S.SeqStmt(tuple(lst))
    if how == 1 and lst:
        i = draw(st.integers(0, len(lst) - 1))
        j = draw(st.integers(i + 1, len(lst)))
        return S.SeqStmt((*lst[:i], S.SeqStmt(tuple(lst[i:j])), *lst[j:]))
    return S.seq(lst) if lst else S.SeqStmt(())


def _body(draw, ctx: _Ctx, depth: int, budget: list) -> S.Stmt:
    return _block(draw, _stmt_list(draw, ctx, depth, budget))


def _one_stmt(draw, ctx: _Ctx, depth: int, budget: list) -> S.Stmt | None:
    deep = depth >= MAX_DEPTH
    kinds = ["bind", "store", "eval", "alloc", "assert", "bind", "store", "ptr"]
    if not deep:
        kinds += ["for", "for", "while", "if", "if", "attr"]
        if not ctx.in_device:
            kinds.append("device")
    if ctx.in_loop:
        kinds += ["break", "continue"]
    if not ctx.in_device:
        kinds.append("return")
    k = draw(st.sampled_from(kinds))
    if k == "bind":
        t = draw(dtypes(vector=True))
        value = _expr(draw, ctx, t)
        v = E.Var(_name(draw), t)
        ctx.vars.append(v)
        return S.Bind(v, value)
    if k == "store":
        bufs = [b for b in ctx.bufs]
        if not bufs:
            return None
        b = draw(st.sampled_from(bufs))
        idx = [_int_index(draw, ctx, 1) for _ in b.shape]
        lanes = 1
        if idx and b.dtype.lanes == 1 and not b.dtype.is_bool and draw(st.integers(0, 4)) == 0:
            lanes = draw(st.sampled_from((2, 4)))
            idx[-1] = E.Ramp(idx[-1], E.IntImm(1, cast(PrimType, idx[-1].ty)), lanes)
        value = _expr(draw, ctx, b.dtype.with_lanes(lanes) if lanes > 1 else b.dtype)
        return S.BufferStore(b, value, tuple(idx))
    if k == "eval":
        if ctx.in_device and draw(st.integers(0, 2)) > 0:
            return S.Evaluate(
                call(
                    draw(
                        st.sampled_from(
                            ("cuda.cta_sync", "cuda.cta_sync", "cuda.warp_sync", "cuda.thread_fence")
                        )
                    )
                )
            )
        if draw(st.booleans()):
            t = draw(st.sampled_from((int32, float32)))
            return S.Evaluate(call("call_extern", "ext_fn", _expr(draw, ctx, t, 1), ty=t))
        return S.Evaluate(_expr(draw, ctx, draw(dtypes())))
    if k == "alloc":
        dt = draw(dtypes())
        scope = draw(st.sampled_from(SCOPES))
        shape_vars = [v for v in ctx.vars if v.ty in (int32, int64)]
        b = _make_buffer(draw, ctx, _name(draw), dt, scope, shape_vars=shape_vars)
        ctx.bufs.append(b)
        return S.AllocBuffer(b, _annotations(draw) if draw(st.integers(0, 4)) == 0 else EMPTY_ATTRS)
    if k == "ptr":
        # a pointer Bind (reinterpret / address_of), then sometimes a DeclBuffer view over it
        scope = draw(st.sampled_from(SCOPES))
        el = draw(dtypes()) if draw(st.booleans()) else prim("uint8")
        pt = PointerType(el, scope)
        if ctx.ptr_srcs and draw(st.booleans()):
            value = call("reinterpret", draw(st.sampled_from(ctx.ptr_srcs)), ty=pt)
        else:
            cands = [b for b in ctx.bufs if b.shape]
            if not cands:
                return None
            b = draw(st.sampled_from(cands))
            value = call("address_of", E.BufferLoad(b, tuple(_int_index(draw, ctx, 1) for _ in b.shape)))
            pt = cast(PointerType, value.ty)
        p = E.Var(draw(st.sampled_from(("p", "q", "ptr", "p"))), pt)
        ctx.vars.append(p)
        bind = S.Bind(p, value)
        if draw(st.booleans()):
            # a view, sometimes of another dtype than the pointer's element
            # (the verifier allows a view of another dtype over bytes only)
            bytes_ptr = pt.element in (prim("uint8"), prim("int8"))
            vdt = draw(dtypes()) if bytes_ptr and draw(st.booleans()) else cast(PrimType, pt.element)
            n = draw(st.integers(1, 64))
            buf = Buffer(_name(draw), p, vdt, (E.IntImm(n, int32),))
            ctx.bufs.append(buf)
            return S.seq([bind, S.DeclBuffer(buf)])
        return bind
    if k == "assert":
        kind = draw(st.sampled_from(("RuntimeError", "ValueError", "IndexError")))
        msg = tuple(draw(st.lists(st.text(max_size=6), max_size=2)))
        return S.Assert(_expr(draw, ctx, bool_), kind, msg)
    if k == "for":
        return _for(draw, ctx, depth, budget)
    if k == "while":
        return S.While(_expr(draw, ctx, bool_), _body(draw, ctx.child(in_loop=True), depth + 1, budget))
    if k == "if":
        cond = _expr(draw, ctx, bool_)
        then = _body(draw, ctx.child(), depth + 1, budget)
        other = None
        r = draw(st.integers(0, 2))
        if r == 1:
            other = _body(draw, ctx.child(), depth + 1, budget)
        elif r == 2:  # elif chain
            other = S.IfThenElse(
                _expr(draw, ctx, bool_),
                _body(draw, ctx.child(), depth + 1, budget),
                _body(draw, ctx.child(), depth + 1, budget) if draw(st.booleans()) else None,
            )
        return S.IfThenElse(cond, then, other)
    if k == "attr":
        key = draw(st.sampled_from(("pragma_scope", "compute_scope", "async_scope", "a\tb")))
        return S.AttrStmt(
            key,
            _expr(draw, ctx, draw(st.sampled_from((int32, bool_)))),
            _body(draw, ctx.child(), depth + 1, budget),
        )
    if k == "device":
        return _device_entry(draw, ctx, depth, budget)
    if k == "break":
        return S.Break()
    if k == "continue":
        return S.Continue()
    if k == "return":
        if ctx.ret_ty is None:
            return S.Return()
        return S.Return(_expr(draw, ctx, ctx.ret_ty))
    return None  # pragma: no cover


@st.composite
def stmts(draw, max_stmts: int = 25) -> S.Stmt:
    """A self-contained statement: everything it uses, it defines."""
    ctx = _Ctx()
    lst = []
    # give the statement something to work with: a buffer or two
    for _ in range(draw(st.integers(0, 2))):
        b = _make_buffer(draw, ctx, _name(draw), draw(dtypes()), draw(st.sampled_from(SCOPES)))
        ctx.bufs.append(b)
        lst.append(S.AllocBuffer(b))
    lst += _stmt_list(draw, ctx, 0, [max_stmts])
    return _block(draw, lst)


# ------------------------------------------------------------------ functions and modules
def _signature(draw, name: str, helper: bool = False) -> dict:
    """Params (with dynamic shape vars), return type, flags of one function.

    A ``helper`` takes scalars only and returns a value (other functions call it)."""
    if helper:
        scalars = [E.Var(_name(draw), draw(dtypes())) for _ in range(draw(st.integers(0, 3)))]
        return {
            "name": name,
            "params": scalars,
            "bmap": [],
            "ret_ty": draw(dtypes()),
            "attrs": {},
            "private": draw(st.booleans()),
            "dyn": [],
        }
    dyn = [
        E.Var(draw(st.sampled_from(("n", "m", "L", "D", "n"))), draw(st.sampled_from((int32, int32, int64))))
        for _ in range(draw(st.integers(0, 2)))
    ]
    params: list[E.Var] = []
    bmap: list[tuple] = []
    used: set[E.Var] = set()
    ntensors = draw(st.integers(0, 3))
    for ti in range(max(ntensors, len(dyn))):
        dt = draw(dtypes())
        rank = draw(st.integers(1, 3))
        shape: list[E.PrimExpr] = []
        for r in range(rank):
            if ti < len(dyn) and r == 0:
                shape.append(dyn[ti])  # every dyn var appears in some shape
            elif dyn and draw(st.integers(0, 2)) == 0:
                shape.append(draw(st.sampled_from(dyn)))
            else:
                shape.append(E.IntImm(draw(st.integers(1, 128)), int32))
        used.update(v for v in shape if isinstance(v, E.Var))
        strides: tuple = ()
        elem_offset = None
        align = 0
        if draw(st.integers(0, 5)) == 0:
            strides = tuple(E.IntImm(draw(st.integers(1, 256)), int32) for _ in shape)
        if draw(st.integers(0, 6)) == 0:
            elem_offset = E.IntImm(draw(st.integers(0, 64)), int32)
        if draw(st.integers(0, 6)) == 0:
            align = draw(st.sampled_from((16, 64, 128)))
        pname = draw(st.sampled_from(("A", "B", "C", "X", "Out", "A")))
        data = E.Var(pname, PointerType(dt, "global"))
        params.append(data)
        bmap.append((data, Buffer(pname, data, dt, tuple(shape), strides, elem_offset, align)))
    for _ in range(draw(st.integers(0, 2))):
        params.append(E.Var(_name(draw), draw(dtypes())))
    if draw(st.booleans()):
        params.append(E.Var("h", handle))
    if draw(st.integers(0, 4)) == 0:
        params.append(E.Var("sp", PointerType(prim("float16"), "shared")))
    order = draw(st.permutations(range(len(params))))
    params = [params[i] for i in order]
    pos = {id(p): i for i, p in enumerate(params)}
    bmap.sort(key=lambda pb: pos[id(pb[0])])  # the buffer map follows the param order
    ret_ty = draw(dtypes()) if draw(st.integers(0, 2)) == 0 else None
    attrs = {}
    if draw(st.integers(0, 3)) == 0:
        attrs = {"global_symbol": name, "tir.noalias": True}
    return {
        "name": name,
        "params": params,
        "bmap": bmap,
        "ret_ty": ret_ty,
        "attrs": attrs,
        "private": draw(st.booleans()),
        "dyn": [v for v in dyn if v in used],
    }


def _function(draw, sig: dict, funcs: list, max_stmts: int) -> Function:
    ctx = _Ctx()
    ctx.funcs = funcs
    ctx.ret_ty = sig["ret_ty"]
    bufs = dict(sig["bmap"])
    for p in sig["params"]:
        if p in bufs:
            ctx.bufs.append(bufs[p])
        elif p.ty == handle:
            ctx.ptr_srcs.append(p)
        elif isinstance(p.ty, PointerType):
            ctx.vars.append(p)
        else:
            ctx.vars.append(p)
    ctx.vars.extend(sig["dyn"])
    budget = [max_stmts]
    lst = []
    if not sig["ret_ty"] and draw(st.booleans()):
        lst.append(_device_entry(draw, ctx, 0, budget))  # a kernel
    lst += _stmt_list(draw, ctx, 0, budget)
    if sig["ret_ty"] is not None:
        lst.append(S.Return(_expr(draw, ctx, sig["ret_ty"])))
    body = _block(draw, lst)
    return Function(
        sig["name"],
        tuple(sig["params"]),
        body,
        tuple(sig["bmap"]),
        sig["ret_ty"],
        sig["attrs"],
        sig["private"],
    )


@st.composite
def functions(draw, max_stmts: int = 30) -> Function:
    """A random well-formed Function."""
    name = draw(st.sampled_from(("main", "kernel", "f", "add")))
    return _function(draw, _signature(draw, name), [], max_stmts)


@st.composite
def modules(draw, max_stmts: int = 20) -> Module:
    """A random Module whose functions call each other (``T.Call`` of a GlobalVar)."""
    n = draw(st.integers(1, 4))
    names = draw(
        st.lists(
            st.sampled_from(("main", "helper", "relu", "k0", "k1", "lerp", "gelu")),
            min_size=n,
            max_size=n,
            unique=True,
        )
    )
    sigs = [_signature(draw, nm, helper=draw(st.booleans())) for nm in names]
    # callable: functions whose params are all scalars (a call passes values)
    funcs = []
    for s in sigs:
        if not s["bmap"] and all(isinstance(p.ty, PrimType) for p in s["params"]):
            funcs.append((s["name"], tuple(p.ty for p in s["params"]), s["ret_ty"] or void))
    fs = [_function(draw, s, funcs, max_stmts) for s in sigs]
    # make sure calls appear: a kernel that calls every callable helper once
    if funcs and draw(st.booleans()):
        ctx = _Ctx()
        ctx.funcs = funcs
        body = []
        for fname, ptys, rt in funcs:
            c = E.Call(E.GlobalVar(fname), tuple(_expr(draw, ctx, p, 1) for p in ptys), rt)
            body.append(S.Evaluate(c))
        nm = "caller"
        while nm in names:
            nm += "_"
        fs.append(Function(nm, (), S.seq(body), ()))
    return Module(tuple(fs), name=draw(st.sampled_from(("Module", "Module", "Mod"))))


# ------------------------------------------------------------------ runnable kernels
def runnable_kernels(max_stmts: int = 12):
    """Kernels that run on any inputs, with their arguments (``tirx.testing.runnable``)."""
    from .runnable import runnable_kernels as _rk

    return _rk(max_stmts=max_stmts)
