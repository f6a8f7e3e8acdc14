"""A small hypothesis generator of well-typed tirx IR, plus IR-to-IR helpers for tests.

* ``functions()`` / ``modules()`` / ``exprs()``: hypothesis strategies that build IR
  directly through the node constructors (every node kind the structural code knows:
  binds, stores, all loop kinds, if/while, alloc/decl buffers, device entry, attr stmt,
  assert, return; all binary ops, Not/BitNot, Select, Cast, Let, Call, loads, Ramp,
  Broadcast, special floats).
* ``rebuild(x, ...)``: a separately built copy of ``x`` -- every node is a new object;
  bound vars and buffers are fresh (alpha-renamed, optionally with new name hints);
  free vars and free buffers are kept; spans can be attached everywhere; attr dicts can be reordered.
* ``mutations(x)``: yields copies of ``x`` that differ in exactly one constant, one op,
  one loop kind, one statement, or one dtype (substituted consistently), so each must
  compare unequal.
"""

from __future__ import annotations

import math
import random
from typing import Any

import attrs
from hypothesis import strategies as st

from tirx.ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    AllocBuffer,
    And,
    Assert,
    AttrStmt,
    Bind,
    BitAnd,
    BitNot,
    BitOr,
    BitXor,
    Break,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Cast,
    Continue,
    DeclBuffer,
    DeviceEntry,
    Div,
    Evaluate,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    Function,
    IfThenElse,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Module,
    Mul,
    Node,
    Not,
    Or,
    PointerType,
    PrimType,
    Ramp,
    Return,
    Select,
    SeqStmt,
    Shl,
    Shr,
    Span,
    Stmt,
    StringImm,
    Sub,
    Var,
    While,
    op,
)  # fmt: skip
from tirx.ir.expr import BUF_USE, DEF, NODE, SEQ, VALUE
from tirx.ir.function import BUFMAP, FUNCS, PARAMS
from tirx.ir.node import Attrs
from tirx.ir.span import SequentialSpan
from tirx.ir.stmt import ATTRS, BUF_DEF, LAUNCH_FIELDS_KEY
from tirx.ir.types import Type, prim

INT_T = [prim("int32"), prim("int64")]
VALUE_T = [prim(n) for n in ("float32", "float16", "bfloat16", "float64", "int32", "int8", "uint8", "int64")]
BOOL = prim("bool")
ARITH = (Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max)
FLOAT_ARITH = (Add, Sub, Mul, Div, Min, Max)
BITWISE = (BitAnd, BitOr, BitXor, Shl, Shr)
CMP = (EQ, NE, LT, LE, GT, GE)
LOGIC = (And, Or)
FLOATS = (0.0, -0.0, 1.0, -2.5, 0.5, 3.25, 1e-3, math.inf, -math.inf, math.nan)
NAMES = ("i", "j", "x", "acc", "tmp", "n", "v")


class _Ctx:
    def __init__(self) -> None:
        self.scopes: list[dict[PrimType, list[Var]]] = [{}]
        self.buffers: list[list[Buffer]] = [[]]
        self.pointers: list[Var] = []

    def push(self) -> None:
        self.scopes.append({})
        self.buffers.append([])

    def pop(self) -> None:
        self.scopes.pop()
        self.buffers.pop()

    def add_var(self, v: Var) -> None:
        self.scopes[-1].setdefault(v.ty, []).append(v)

    def vars_of(self, t: Any) -> list[Var]:
        return [v for s in self.scopes for v in s.get(t, ())]

    def all_buffers(self) -> list[Buffer]:
        return [b for s in self.buffers for b in s]


def _const(draw, t: PrimType):
    if t.is_bool:
        return IntImm(draw(st.integers(0, 1)), t)
    if t.is_float:
        return FloatImm(draw(st.sampled_from(FLOATS)), t)
    lo, hi = (0, 255) if t.kind == "uint" else (-100, 100)
    if t.bits == 8 and t.kind == "int":
        lo, hi = -128, 127
    return IntImm(draw(st.integers(lo, hi)), t)


def _name(draw) -> str:
    return draw(st.sampled_from(NAMES))


def _index(draw, ctx: _Ctx, depth: int):
    return _expr(draw, ctx, ctx.idx, min(depth, 1))


def _expr(draw, ctx: _Ctx, t: PrimType, depth: int):
    leaves = ["const"]
    if ctx.vars_of(t):
        leaves += ["var", "var"]
    if any(b.dtype == t for b in ctx.all_buffers()):
        leaves.append("load")
    choices = list(leaves)
    if depth > 0:
        choices += ["bin", "bin", "bin", "select", "cast", "let"]
        if t.is_float:
            choices.append("call")
        if t.is_int:
            choices.append("bitnot")
        if t.is_bool:
            choices += ["cmp", "cmp", "logic", "not"]
    k = draw(st.sampled_from(choices))
    d = depth - 1
    if k == "const":
        return _const(draw, t)
    if k == "var":
        return draw(st.sampled_from(ctx.vars_of(t)))
    if k == "load":
        b = draw(st.sampled_from([b for b in ctx.all_buffers() if b.dtype == t]))
        return BufferLoad(b, tuple(_index(draw, ctx, d) for _ in b.shape))
    if k == "bin":
        if t.is_bool:
            cls = draw(st.sampled_from(LOGIC))
        elif t.is_float:
            cls = draw(st.sampled_from(FLOAT_ARITH))
        else:
            cls = draw(st.sampled_from(ARITH + BITWISE))
        return cls(_expr(draw, ctx, t, d), _expr(draw, ctx, t, d))
    if k == "cmp":
        ot = draw(st.sampled_from([ctx.idx, prim("float32")]))
        return draw(st.sampled_from(CMP))(_expr(draw, ctx, ot, d), _expr(draw, ctx, ot, d))
    if k == "logic":
        return draw(st.sampled_from(LOGIC))(_expr(draw, ctx, BOOL, d), _expr(draw, ctx, BOOL, d))
    if k == "not":
        return Not(_expr(draw, ctx, BOOL, d))
    if k == "bitnot":
        return BitNot(_expr(draw, ctx, t, d))
    if k == "select":
        return Select(_expr(draw, ctx, BOOL, d), _expr(draw, ctx, t, d), _expr(draw, ctx, t, d))
    if k == "cast":
        src = draw(st.sampled_from([x for x in (*INT_T, prim("float32")) if x != t]))
        return Cast(t, _expr(draw, ctx, src, d))
    if k == "let":
        vt = draw(st.sampled_from([t, ctx.idx]))
        v = Var(_name(draw), vt)
        value = _expr(draw, ctx, vt, d)
        ctx.push()
        ctx.add_var(v)
        body = _expr(draw, ctx, t, d)
        ctx.pop()
        return Let(v, value, body)
    if k == "call":
        return op.call(draw(st.sampled_from(("exp", "sqrt", "tanh", "fabs"))), _expr(draw, ctx, t, d))
    raise AssertionError(k)  # pragma: no cover


def _buffer(draw, ctx: _Ctx, name: str, scope: str, shape: tuple, dtype: PrimType | None = None) -> Buffer:
    t = dtype or draw(st.sampled_from(VALUE_T))
    data = Var(name, PointerType(t, scope))
    return Buffer(name, data, t, shape)


def _annotations(draw) -> dict:
    keys = draw(st.lists(st.sampled_from(("pragma_unroll", "a", "b", "note")), unique=True, max_size=3))
    vals = st.one_of(st.integers(-3, 3), st.sampled_from(("x", "y")), st.booleans(), st.just(None))
    return {k: draw(vals) for k in keys}


def _stmt(draw, ctx: _Ctx, depth: int, in_loop: bool) -> Stmt:
    kinds = ["bind", "store", "store", "eval"]
    if depth > 0:
        kinds += ["for", "for", "if", "while", "alloc", "attr", "assert"]
    if ctx.pointers and depth > 0:
        kinds.append("decl")
    if in_loop:
        kinds.append("break")
    kinds.append("return")
    k = draw(st.sampled_from(kinds))
    d = depth - 1
    if k == "bind":
        t = draw(st.sampled_from([ctx.idx, *VALUE_T[:2]]))
        v = Var(_name(draw), t)
        value = _expr(draw, ctx, t, 2)
        ctx.add_var(v)
        return Bind(v, value)
    if k == "store":
        bufs = ctx.all_buffers()
        b = draw(st.sampled_from(bufs))
        if draw(st.integers(0, 5)) == 0 and len(b.shape) == 1:
            lanes = draw(st.sampled_from((2, 4)))
            base = _index(draw, ctx, 1)
            idx = Ramp(base, IntImm(1, base.ty), lanes)
            return BufferStore(b, Broadcast(_expr(draw, ctx, b.dtype, 1), lanes), (idx,))
        return BufferStore(b, _expr(draw, ctx, b.dtype, 2), tuple(_index(draw, ctx, 1) for _ in b.shape))
    if k == "eval":
        if draw(st.booleans()):
            return Evaluate(op.call("call_extern", "dbg", _expr(draw, ctx, ctx.idx, 1), ty="int32"))
        return Evaluate(_expr(draw, ctx, ctx.idx, 1))
    if k == "break":
        return draw(st.sampled_from((Break, Continue)))()
    if k == "return":
        return Return(_expr(draw, ctx, ctx.idx, 1) if draw(st.booleans()) else None)
    if k == "for":
        kind = draw(st.sampled_from(list(ForKind)))
        v = Var(_name(draw), ctx.idx)
        start = IntImm(draw(st.integers(0, 3)), ctx.idx)
        extent = _expr(draw, ctx, ctx.idx, 1)
        step = IntImm(draw(st.integers(1, 3)), ctx.idx) if draw(st.integers(0, 3)) == 0 else None
        thread = None
        if kind is ForKind.THREAD_BINDING:
            thread = draw(st.sampled_from(("threadIdx.x", "blockIdx.y")))
        ann = _annotations(draw) if draw(st.integers(0, 3)) == 0 else {}
        ctx.push()
        ctx.add_var(v)
        body = _body(draw, ctx, d, True)
        ctx.pop()
        return For(v, start, extent, kind, body, step, thread, ann)
    if k == "if":
        cond = _expr(draw, ctx, BOOL, 2)
        ctx.push()
        then = _body(draw, ctx, d, in_loop)
        ctx.pop()
        els = None
        if draw(st.booleans()):
            ctx.push()
            els = _body(draw, ctx, d, in_loop)
            ctx.pop()
        return IfThenElse(cond, then, els)
    if k == "while":
        cond = _expr(draw, ctx, BOOL, 1)
        ctx.push()
        body = _body(draw, ctx, d, True)
        ctx.pop()
        return While(cond, body)
    if k == "alloc":
        scope = draw(st.sampled_from(("local", "shared", "shared.dyn")))
        shape = tuple(IntImm(draw(st.integers(1, 64)), prim("int32")) for _ in range(draw(st.integers(1, 2))))
        b = _buffer(draw, ctx, _name(draw), scope, shape)
        ctx.buffers[-1].append(b)
        ann = _annotations(draw) if draw(st.integers(0, 3)) == 0 else {}
        return AllocBuffer(b, ann)
    if k == "decl":
        p = draw(st.sampled_from(ctx.pointers))
        t = draw(st.sampled_from(VALUE_T))
        b = Buffer(_name(draw), p, t, (IntImm(16, prim("int32")),))
        ctx.buffers[-1].append(b)
        return DeclBuffer(b)
    if k == "attr":
        key = draw(st.sampled_from(("pragma", "storage_alignment")))
        value = _expr(draw, ctx, ctx.idx, 1)
        ctx.push()
        body = _body(draw, ctx, d, in_loop)
        ctx.pop()
        return AttrStmt(key, value, body)
    if k == "assert":
        msg = tuple(draw(st.lists(st.sampled_from(("bad", "index", "")), max_size=2)))
        return Assert(_expr(draw, ctx, BOOL, 1), draw(st.sampled_from(("RuntimeError", "ValueError"))), msg)
    raise AssertionError(k)  # pragma: no cover


def _body(draw, ctx: _Ctx, depth: int, in_loop: bool) -> Stmt:
    n = draw(st.integers(0 if depth < 1 else 1, 3))
    stmts = [_stmt(draw, ctx, depth, in_loop) for _ in range(n)]
    if len(stmts) == 1 and draw(st.booleans()):
        return stmts[0]
    return SeqStmt(tuple(stmts))


@st.composite
def functions(draw, depth: int = 3, name: str | None = None) -> Function:
    """A well-typed Function: tensor and scalar params, dynamic shape vars, a body."""
    ctx = _Ctx()
    ctx.idx = draw(st.sampled_from(INT_T))
    dyn = [Var(nm, draw(st.sampled_from(INT_T))) for nm in ("n", "m")[: draw(st.integers(0, 2))]]
    params: list[Var] = []
    bmap: list[tuple[Var, Buffer]] = []
    for i in range(draw(st.integers(1, 3))):
        rank = draw(st.integers(1, 2))
        shape = tuple(
            draw(st.sampled_from(dyn))
            if dyn and draw(st.booleans())
            else IntImm(draw(st.integers(1, 64)), prim("int32"))
            for _ in range(rank)
        )
        b = _buffer(draw, ctx, "ABC"[i], "global", shape)
        params.append(b.data)
        bmap.append((b.data, b))
        ctx.buffers[0].append(b)
    for _ in range(draw(st.integers(0, 2))):
        v = Var(_name(draw), draw(st.sampled_from([ctx.idx, prim("float32")])))
        params.append(v)
        ctx.add_var(v)
    if draw(st.booleans()):
        p = Var("p", PointerType(prim("uint8"), "global"))
        params.append(p)
        ctx.pointers.append(p)
    for v in dyn:
        if any(v is s for _, b in bmap for s in b.shape):
            ctx.add_var(v)
    if draw(st.integers(0, 2)) == 0:
        # a device entry around the body
        args = (IntImm(draw(st.integers(1, 8)), prim("int32")), IntImm(1, prim("int32")), IntImm(1, prim("int32")),
                IntImm(128, prim("int32")), IntImm(1, prim("int32")), IntImm(1, prim("int32")))  # fmt: skip
        fields = ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]
        body = DeviceEntry(
            args, {"cuda.kernel_attrs": {}, LAUNCH_FIELDS_KEY: fields}, _body(draw, ctx, depth, False)
        )
    else:
        body = _body(draw, ctx, depth, False)
    fattrs = {
        k: draw(st.integers(0, 4))
        for k in draw(st.lists(st.sampled_from(("tirx.noalias", "x", "y")), unique=True))
    }
    ret = draw(st.sampled_from([None, None, prim("int32")]))
    return Function(
        name or draw(st.sampled_from(("main", "kernel", "f"))),
        tuple(params),
        body,
        tuple(bmap),
        ret,
        fattrs,
        draw(st.booleans()),
    )


@st.composite
def modules(draw) -> Module:
    n = draw(st.integers(1, 3))
    return Module(tuple(draw(functions(depth=2, name=f"f{i}")) for i in range(n)))


@st.composite
def exprs(draw, depth: int = 3):
    """An expression over a few free vars and one free buffer."""
    ctx = _Ctx()
    ctx.idx = prim("int32")
    for nm, t in (("a", "int32"), ("b", "int32"), ("x", "float32")):
        ctx.add_var(Var(nm, prim(t)))
    ctx.buffers[0].append(_buffer(draw, ctx, "A", "global", (IntImm(8, prim("int32")),), prim("float32")))
    t = draw(st.sampled_from([prim("int32"), prim("float32"), BOOL]))
    return _expr(draw, ctx, t, depth)


# ---------------------------------------------------------------------------------- rebuild
class _Rebuilder:
    def __init__(self, rename: bool, spans: bool, shuffle: bool, seed: int):
        self.vmap: dict[Var, Var] = {}
        self.bmap: dict[Buffer, Buffer] = {}
        self.rename = rename
        self.spans = spans
        self.shuffle = shuffle
        self.rng = random.Random(seed)
        self.defining = False
        self.alloc = False  # rebuilding an AllocBuffer's buffer: its data var is defined there

    def span(self) -> Any:
        if not self.spans:
            return None
        line = self.rng.randint(1, 999)
        s = Span(f"gen{self.rng.randint(0, 9)}.py", line, self.rng.randint(1, 80), line, 90)
        if self.rng.random() < 0.3:
            return SequentialSpan((Span("call.py", 1, 1), s))
        return s

    def fresh(self, v: Var) -> Var:
        nv = Var(v.name + "_r" if self.rename else v.name, v.ty, span=self.span())
        self.vmap[v] = nv
        return nv

    def var_use(self, v: Var) -> Var:
        m = self.vmap.get(v)
        if m is not None:
            return m
        if self.defining:
            return self.fresh(v)
        return v  # free: keep the same object

    def var_def(self, v: Var) -> Var:
        m = self.vmap.get(v)
        return self.fresh(v) if m is None else m

    def buf(self, b: Buffer) -> Buffer:
        m = self.bmap.get(b)
        if m is None:
            m = self.bmap[b] = self.node(b)
        return m

    def value(self, v: Any) -> Any:
        if isinstance(v, Var):
            return self.var_use(v)
        if isinstance(v, Node):
            return self.node(v)
        if isinstance(v, tuple):
            return tuple(self.value(x) for x in v)
        if isinstance(v, Attrs):
            return self.attrs(v)
        return v

    def attrs(self, a: Attrs) -> Attrs:
        items = [(k, self.value(v)) for k, v in a.items()]
        if self.shuffle:
            items.reverse()
        return Attrs(dict(items))

    def node(self, x: Any) -> Any:
        if x is None:
            return None
        if isinstance(x, Var):
            return self.var_use(x)
        ch: dict[str, Any] = {}
        for name, kind in type(x)._sfields:
            v = getattr(x, name)
            if kind is NODE or kind is VALUE:
                ch[name] = self.value(v)
            elif kind is SEQ:
                ch[name] = tuple(self.value(e) for e in v)
            elif kind is DEF:
                # a buffer's data is defined by an allocation, used by a decl / buffer map
                use = isinstance(x, Buffer) and not self.alloc
                ch[name] = self.var_use(v) if use else self.var_def(v)
            elif kind is BUF_USE:
                ch[name] = self.bmap.get(v, v)  # a free buffer is kept, as a free var is
            elif kind is BUF_DEF:
                self.alloc = isinstance(x, AllocBuffer)
                ch[name] = self.buf(v)
                self.alloc = False
            elif kind is ATTRS:
                ch[name] = self.attrs(v)
            elif kind is PARAMS:
                ch[name] = tuple(self.var_def(p) for p in v)
            elif kind is BUFMAP:
                self.defining = True
                ch[name] = tuple((self.var_use(p), self.buf(b)) for p, b in v)
                self.defining = False
            elif kind is FUNCS:
                ch[name] = tuple(
                    _Rebuilder(self.rename, self.spans, self.shuffle, self.rng.random()).node(f) for f in v
                )
        if isinstance(x, Buffer) and self.rename:
            ch["name"] = x.name + "_r"
        if isinstance(x, Function) and x.private and self.rename:
            ch["name"] = x.name  # names of private functions never matter, but Modules index by name
        if isinstance(x, Module) and self.shuffle:
            ch["functions"] = tuple(reversed(ch["functions"]))
        return attrs.evolve(x, span=self.span(), **ch)


def rebuild(x: Any, *, rename: bool = True, spans: bool = False, shuffle: bool = False, seed: int = 0) -> Any:
    """A separately built, alpha-renamed copy (bound vars and buffers fresh, free vars kept)."""
    return _Rebuilder(rename, spans, shuffle, seed).node(x)


# ---------------------------------------------------------------------------------- mutations
def _all_nodes(x: Any) -> list[Node]:
    out: list[Node] = []
    seen: set[int] = set()

    def walk(v: Any) -> None:
        if isinstance(v, Node):
            if id(v) in seen:
                return
            seen.add(id(v))
            out.append(v)
            for name, _kind in type(v)._sfields:
                walk(getattr(v, name))
            if isinstance(v, Function):
                for p, b in v.buffer_map:
                    walk(p)
                    walk(b)
        elif isinstance(v, (tuple, list)):
            for e in v:
                walk(e)
        elif isinstance(v, Attrs):
            for e in v.values():
                walk(e)

    walk(x)
    return out


def _replace(x: Any, old: Node, new: Any) -> Any:
    """Copy of ``x`` with the node ``old`` (by identity) replaced by ``new`` everywhere."""
    memo: dict[int, Any] = {}

    def sub(v: Any) -> Any:
        if v is old:
            return new
        if isinstance(v, Node):
            r = memo.get(id(v))
            if r is not None:
                return r
            ch = {}
            for name, _kind in type(v)._sfields:
                f = getattr(v, name)
                nf = sub(f)
                if nf is not f:
                    ch[name] = nf
            if isinstance(v, Function):
                bm = tuple((sub(p), sub(b)) for p, b in v.buffer_map)
                if any(a is not c or b is not d for (a, b), (c, d) in zip(bm, v.buffer_map)):
                    ch["buffer_map"] = bm
            r = attrs.evolve(v, **ch) if ch else v
            memo[id(v)] = r
            return r
        if isinstance(v, tuple):
            n = tuple(sub(e) for e in v)
            return v if all(a is b for a, b in zip(n, v)) else n
        if isinstance(v, Attrs):
            d = {k: sub(e) for k, e in v.items()}
            return v if all(d[k] is v[k] for k in d) else Attrs(d)
        return v

    return sub(x)


def _other_float(v: float) -> float:
    for c in FLOATS:
        if not (c == v and math.copysign(1, c) == math.copysign(1, v)) and not (c != c and v != v):
            return c
    raise AssertionError  # pragma: no cover


_FAMILIES = [ARITH, BITWISE, CMP, LOGIC]


def _node_variants(n: Node) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    t = type(n)
    if t is IntImm and not n.ty.is_bool:
        v = n.value + 1 if n.value < 100 else n.value - 1
        out.append((f"constant {n.value}->{v}", IntImm(v, n.ty)))
    elif t is IntImm:
        out.append(("bool constant", IntImm(1 - n.value, n.ty)))
    elif t is FloatImm:
        out.append((f"float {n.value!r}", FloatImm(_other_float(n.value), n.ty)))
    elif t is StringImm:
        out.append(("string", StringImm(n.value + "!")))
    else:
        for fam in _FAMILIES:
            if t in fam:
                choices = (Add, Sub, Mul, Min, Max) if fam is ARITH else fam
                other = next(c for c in choices if c is not t)
                out.append((f"op {t.__name__}->{other.__name__}", other(n.a, n.b)))
    if t is For:
        other = ForKind.UNROLLED if n.kind is not ForKind.UNROLLED else ForKind.SERIAL
        out.append(("loop kind", attrs.evolve(n, kind=other)))
    if t is SeqStmt and n.stmts:
        out.append(("drop statement", SeqStmt(n.stmts[1:])))
    if t is Cast and isinstance(n.value.ty, PrimType) and n.value.ty != prim("float64"):
        out.append(("cast source dtype", Cast(n.ty, Cast(prim("float64"), n.value))))
    return out


def _substitute_dtype(x: Any, old: Type, new: Type) -> Any:
    """Replace dtype ``old`` by ``new`` everywhere (types, var types, buffer dtypes, pointers)."""

    def ty(t: Any) -> Any:
        if t == old:
            return new
        if isinstance(t, PointerType):
            e = ty(t.element)
            return t if e is t.element else PointerType(e, t.scope)
        return t

    memo: dict[int, Any] = {}

    def sub(v: Any) -> Any:
        if isinstance(v, Type):
            return ty(v)
        if isinstance(v, Node):
            r = memo.get(id(v))
            if r is not None:
                return r
            ch = {}
            for f in attrs.fields(type(v)):
                if not f.init or f.name == "span":
                    continue
                cur = getattr(v, f.name)
                if cur is None or (isinstance(cur, (str, int, float, ForKind)) and not isinstance(cur, bool)):
                    continue
                nf = sub(cur)
                if nf is not cur:
                    ch[f.name.lstrip("_")] = nf
            r = attrs.evolve(v, **ch) if ch else v
            memo[id(v)] = r
            return r
        if isinstance(v, tuple):
            n = tuple(sub(e) for e in v)
            return v if all(a is b for a, b in zip(n, v)) else n
        if isinstance(v, Attrs):
            d = {k: sub(e) for k, e in v.items()}
            return v if all(d[k] is v[k] for k in d) else Attrs(d)
        return v

    return sub(x)


_DTYPE_SWAP = {
    "int32": "int64",
    "int64": "int32",
    "float32": "float64",
    "float16": "bfloat16",
    "bfloat16": "float16",
    "float64": "float32",
    "int8": "uint8",
    "uint8": "int8",
}


def _dtypes_in(x: Any) -> set[PrimType]:
    out: set[PrimType] = set()
    for n in _all_nodes(x):
        t = getattr(n, "ty", None)
        if isinstance(t, PointerType):
            t = t.element
        if isinstance(t, PrimType) and t.lanes == 1:
            out.add(t)
        d = getattr(n, "dtype", None)
        if isinstance(n, Buffer) and isinstance(d, PrimType):
            out.add(d)
    return out


def mutations(x: Any, limit: int = 40, seed: int = 0) -> list[tuple[str, Any]]:
    """Copies of ``x`` differing in one constant / op / loop kind / statement / dtype."""
    rng = random.Random(seed)
    nodes = _all_nodes(x)
    rng.shuffle(nodes)
    out: list[tuple[str, Any]] = []
    for n in nodes:
        for what, new in _node_variants(n):
            try:
                out.append((what, _replace(x, n, new)))
            except TypeError:  # the variant does not type-check in this position
                continue
        if len(out) >= limit:
            break
    for t in sorted(_dtypes_in(x), key=str):
        swap = _DTYPE_SWAP.get(t.name)
        if swap is None:
            continue
        try:
            out.append((f"dtype {t}->{swap}", _substitute_dtype(x, t, prim(swap))))
        except (TypeError, ValueError):
            continue
    return out
