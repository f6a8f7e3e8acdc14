"""VectorizeThreads: each thread does the work of V neighbouring threads with 16-byte accesses.

Why: a kernel that moves one 2- or 4-byte element per thread (the seed guide's add) keeps
too few bytes in flight per SM to cover memory latency: on an H200 the seed's fp16 add
reaches ~37 % of copy bandwidth, the same add with one 16-byte load and store per thread
~99 % (docs/benchmarks.md). Nothing in the C++ changes that; the work per thread must.

What it does, for a kernel where it is provably the same computation:

* the grid's x extent G becomes ceil(G / V); the thread (b, t) of the new grid runs the
  original threads ``L = (b * B + t) * V + j`` for lanes ``j < V`` — all in one original
  block ``L // B`` (V divides the block size B), at threads ``L % B + j``;
* when every guard of the body holds at lane 0 and lane V-1 (so, being monotone in the
  lane, at every lane) and every vector address is 16-byte aligned, the loads are done as
  one vector load per buffer into a local array, the V lanes run unrolled on registers,
  and the stores leave as one vector store per buffer;
* otherwise (the tail of the array, a misaligned view) the V lanes run one after another
  exactly as written.

Legality (anything else leaves the function unchanged; :func:`explain` says why):

* one device entry with grid/block launch fields only, a constant block (B, 1, 1);
* threads are independent: no shared or local allocations, barriers, warp operations,
  atomics, module-function calls or other impure ops, no loops, no ``else``; only
  ``threadIdx.x``, ``blockIdx.*`` and ``blockDim.*`` of the thread model;
* memory: loads and stores of 1-D parameter buffers whose index is either the same for
  every lane or ``threadIdx.x`` plus lane-invariant terms (coefficient 1 after constant
  scaling); no load of a buffer after a store to it; no store to a lane-invariant address;
* every integer ``+ - *`` and cast on the way from ``threadIdx.x`` to an index or guard is
  proven exact (no wraparound) by :mod:`tirx.ir.bounds`, so indices are affine in the lane;
* guards (``if``) are ``and``-chains of comparisons of such affine values and of
  lane-invariant conditions.
"""

from __future__ import annotations

from typing import Any, TypeGuard, cast

from tirx.ir import (
    GE,
    GT,
    LE,
    LT,
    Add,
    AllocBuffer,
    And,
    Bind,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    DeviceEntry,
    FloorDiv,
    For,
    ForKind,
    Function,
    IfThenElse,
    IntImm,
    Let,
    Module,
    Mul,
    PointerType,
    PrimExpr,
    PrimType,
    Ramp,
    Stmt,
    Sub,
    Var,
)
from tirx.ir.arith import int_range
from tirx.ir.bounds import Bounds
from tirx.ir.op import call as op_call
from tirx.ir.op import find
from tirx.ir.visitor import Mutator, child_nodes, collect_vars
from tirx.passes._util import flatten, make_body
from tirx.passes.infra import FunctionPass

__all__ = ["VectorizeThreads", "explain"]

#: bytes per vector access
VECTOR_BYTES = 16
# thread-model ops by their ``launch`` trait: threadIdx, blockIdx, blockDim
_THREAD_IDX = ("idx", "block")
_BLOCK_IDX = ("idx", "grid")
_THREAD_OPS = (_THREAD_IDX, _BLOCK_IDX, ("dim", "block"))


def _launch(c: Any) -> Any:
    tr = getattr(c.op, "traits", None)
    return None if tr is None else tr.launch


_INT32 = PrimType("int32")
_INT64 = PrimType("int64")


class _Refuse(Exception):
    """The kernel is outside what the transformation handles (the message says what)."""


def _is_int(t: Any) -> TypeGuard[PrimType]:
    return isinstance(t, PrimType) and t.is_int and t.lanes == 1


def _axis(c: Call) -> str:
    a = c.args[0]
    return getattr(a, "value", "?")


class _Analysis:
    """Classifies the kernel body. An expression's lane form is ``None`` (the same for every
    lane), an int (affine in the lane with that coefficient) or ``"var"`` (lane-dependent)."""

    def __init__(self, func: Function) -> None:
        self.params = {b for _, b in func.buffer_map}
        self.binds: dict[Var, PrimExpr] = {}
        self.form: dict[Var, Any] = {}
        self.guards: list[PrimExpr] = []
        self.loads: list[BufferLoad] = []  # lane-contiguous loads, in program order
        self.stores: list[BufferStore] = []
        self.stored: set[Buffer] = set()
        self.affine: list[PrimExpr] = []  # index / guard expressions whose exactness must be proven

    # -- statements ------------------------------------------------------------------
    def stmt(self, s: Stmt) -> None:
        for x in flatten(s):
            if isinstance(x, Bind):
                if x.var in self.binds:
                    raise _Refuse(f"{x.var.name} is bound twice")
                self.form[x.var] = self.expr(x.value)
                self.binds[x.var] = x.value
            elif isinstance(x, IfThenElse):
                if x.else_case is not None:
                    raise _Refuse("an if with an else branch")
                self.guard(x.cond)
                self.guards.append(x.cond)
                self.stmt(x.then_case)
            elif isinstance(x, BufferStore):
                b = x.buffer
                self.buffer(b)
                if any(isinstance(i.ty, PrimType) and i.ty.lanes > 1 for i in x.indices):
                    raise _Refuse("a vector store")
                f = self.expr(x.indices[0])
                if f != 1:
                    raise _Refuse(f"the store to {b.name} is not at threadIdx.x + a lane-invariant offset")
                self.affine.append(x.indices[0])
                self.expr(x.value)
                self.stores.append(x)
                self.stored.add(b)
            else:
                raise _Refuse(f"a {type(x).__name__} statement")

    def guard(self, c: PrimExpr) -> None:
        if isinstance(c, And):
            self.guard(c.a)
            self.guard(c.b)
            return
        f = self.expr(c)
        if f is None:
            return
        if isinstance(c, (LT, LE, GT, GE)) and _is_int(c.a.ty):
            fa, fb = self.expr(c.a), self.expr(c.b)
            if fa != "var" and fb != "var":
                self.affine.extend((c.a, c.b))
                return
        raise _Refuse("a guard that is not a comparison of values affine in threadIdx.x")

    def buffer(self, b: Buffer) -> None:
        if b not in self.params:
            raise _Refuse(f"{b.name} is not a parameter buffer")
        if len(b.shape) != 1 or b.strides or b.elem_offset is not None:
            raise _Refuse(f"{b.name} is not a plain 1-D buffer")

    # -- expressions -----------------------------------------------------------------
    def expr(self, e: PrimExpr) -> Any:
        t = e.ty
        if isinstance(t, PrimType) and t.lanes > 1:
            raise _Refuse("a vector expression")
        if isinstance(e, Var):
            return self.form.get(e)
        if isinstance(e, Let):
            raise _Refuse("a Let expression")
        if isinstance(e, Call):
            op = e.op
            if not hasattr(op, "pure"):
                raise _Refuse("a call of a module function")
            if op.traits.launch in _THREAD_OPS:
                ax = _axis(e)
                if op.traits.launch == _THREAD_IDX:
                    if ax != "x":
                        raise _Refuse(f"threadIdx.{ax}")
                    return 1
                return None
            if not op.pure or op.device_only:
                raise _Refuse(f"T.{op.name}")
            fs = [self.expr(a) for a in e.args]
            return "var" if any(f is not None for f in fs) else None
        if isinstance(e, BufferLoad):
            b = e.buffer
            self.buffer(b)
            if b in self.stored:
                raise _Refuse(f"{b.name} is loaded after a store to it")
            f = self.expr(e.indices[0])
            if f is None:
                return None
            if f != 1:
                raise _Refuse(f"the load of {b.name} is not at threadIdx.x + a lane-invariant offset")
            self.affine.append(e.indices[0])
            self.loads.append(e)
            return "var"
        kids = child_nodes(e)
        fs = [self.expr(k) for k in kids]
        if all(f is None for f in fs):
            return None
        if "var" in fs or not _is_int(t):
            return "var"
        if isinstance(e, (Add, Sub)):
            a, b = (f or 0 for f in fs)
            return a + b if isinstance(e, Add) else a - b
        if isinstance(e, Mul):
            fa, fb = fs
            if fa is None and isinstance(e.a, IntImm):
                return e.a.value * fb
            if fb is None and isinstance(e.b, IntImm):
                return fa * e.b.value
            return "var"
        if isinstance(e, Cast) and _is_int(e.value.ty):
            return fs[0]
        return "var"


def explain(func: Function) -> str | None:
    """Why :class:`VectorizeThreads` leaves ``func`` unchanged (None: it transforms it)."""
    try:
        _plan(func)
    except _Refuse as r:
        return str(r)
    return None


def _entry(func: Function) -> DeviceEntry:
    entries = [s for s in flatten(func.body) if isinstance(s, DeviceEntry)]
    if len(entries) != 1:
        raise _Refuse("not a kernel with one top-level device entry")
    e = entries[0]
    fields = set(e.attrs["cuda.launch_fields"])
    if not fields <= {"grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"}:
        raise _Refuse("launch fields other than grid and block (cluster, dynamic shared memory)")
    bx, by, bz = e.block
    if not (isinstance(bx, IntImm) and all(isinstance(d, IntImm) and d.value == 1 for d in (by, bz))):
        raise _Refuse("the block is not a constant (B, 1, 1)")
    return e


_MAX_THREADS = 1024  # threads per block, on every CUDA GPU


def _plan(func: Function) -> tuple:
    entry = _entry(func)
    block = entry.block[0].value
    if block > _MAX_THREADS or block < 1:  # it cannot launch; left to the launch to report, not rewritten
        raise _Refuse(f"the block size {block} is not 1 to the {_MAX_THREADS} threads a block can have")
    an = _Analysis(func)
    an.stmt(entry.body)
    vec_bufs = [x.buffer for x in an.loads] + [x.buffer for x in an.stores]
    if not vec_bufs:
        raise _Refuse("no load or store is contiguous across threads")
    es = max(b.dtype.bytes for b in vec_bufs)
    lanes = VECTOR_BYTES // es
    if lanes < 2:
        raise _Refuse(f"{es}-byte elements are already {VECTOR_BYTES // 2} bytes or more")
    if block % lanes:
        raise _Refuse(f"the block size {block} is not a multiple of {lanes} lanes")
    _prove_exact(an, func, entry, block)
    return entry, an, block, lanes


# ------------------------------------------------------------------------- exactness
class _Subst(Mutator):
    """Inline Bind values, and put ``tx``/``bx`` (Vars) for threadIdx.x / blockIdx.x."""

    def __init__(self, binds: dict, tx: PrimExpr, bx: PrimExpr) -> None:
        super().__init__()
        self.binds = binds
        self.tx = tx
        self.bx = bx
        self.memo: dict[Var, PrimExpr] = {}

    def visit_Var(self, v: Var) -> PrimExpr:
        val = self.binds.get(v)
        if val is None:
            return v
        r = self.memo.get(v)
        if r is None:
            r = self.memo[v] = self.visit(val)
        return r

    def visit_Call(self, c: Call) -> PrimExpr:
        if _launch(c) == _THREAD_IDX:
            return self.tx
        if _launch(c) == _BLOCK_IDX and _axis(c) == "x":
            return self.bx
        return self.generic_visit(c)


def _prove_exact(an: _Analysis, func: Function, entry: DeviceEntry, block: int) -> None:
    """Every integer + - * and cast between threadIdx.x and an index or guard is exact
    over all original threads, so the lane forms computed above are the real values."""
    dyn = {v: (0, int_range(v.ty)[1]) for v in func.dyn_vars() if _is_int(v.ty)}
    # the launch configuration is evaluated on the host with Python integers
    g_hi = Bounds(dyn, exact=True)(entry.grid[0])
    if g_hi is None:
        raise _Refuse("the grid's x extent cannot be bounded")
    tx, bx = Var("tx", _INT32), Var("bx", _INT32)
    bd = Bounds({**dyn, tx: (0, block - 1), bx: (0, max(min(g_hi[1], (1 << 31) - 1) - 1, 0))})
    sub = _Subst(an.binds, tx, bx)
    for e in an.affine:
        stack = [sub.visit(e)]
        while stack:
            n = stack.pop()
            if tx not in collect_vars(n):
                continue
            if isinstance(n, (Add, Sub, Mul, Cast)) and _is_int(n.ty):
                if n.ty.kind != "int":
                    raise _Refuse("unsigned index arithmetic (wraps modulo 2^bits)")
                if isinstance(n, Cast):
                    r, full = bd(n.value), int_range(n.ty)
                    exact = r is not None and full[0] <= r[0] and r[1] <= full[1]
                else:
                    exact = not bd.overflows(n)
                if not exact:
                    raise _Refuse("index arithmetic may wrap around (not proven exact)")
            stack.extend(child_nodes(n))


# ------------------------------------------------------------------------- rewriting
class _Lane(Mutator):
    """One copy of the kernel body for lane ``tx`` of block ``bx``: fresh Bind vars; in the
    vector path also loads from / stores to the per-lane local arrays, guards dropped."""

    def __init__(self, tx: PrimExpr, bx: PrimExpr, lane: Any = None, loads=None, stores=None):
        super().__init__()
        self.tx, self.bx, self.lane = tx, bx, lane
        self.loads = loads or {}
        self.stores = stores or {}

    def visit_var_def(self, v: Var) -> Var:
        nv = Var(v.name, v.ty, span=v.span)
        self.var_map[v] = nv
        return nv

    def visit_Call(self, c: Call) -> PrimExpr:
        launch = _launch(c)
        if launch == _THREAD_IDX:
            return self.tx
        if launch == _BLOCK_IDX and _axis(c) == "x":
            return self.bx
        return self.generic_visit(c)

    def visit_BufferLoad(self, e: BufferLoad) -> PrimExpr:
        loc = self.loads.get(e)
        if loc is not None:
            return BufferLoad(loc, (self.lane,), span=e.span)
        return self.generic_visit(e)

    def visit_BufferStore(self, s: BufferStore) -> Stmt:
        out = self.stores.get(s)
        if out is not None:
            return BufferStore(out, self.visit(s.value), (self.lane,), span=s.span)
        return self.generic_visit(s)

    def visit_IfThenElse(self, s: IfThenElse) -> Stmt:
        if self.lane is not None:  # vector path: every guard holds at every lane
            return self.visit(s.then_case)
        return self.generic_visit(s)


def _drop_unused_binds(body: Stmt) -> Stmt:
    """The vector path's lane body without Binds nothing reads any more (the guards and
    indices that used them are gone); values there are pure."""
    stmts = flatten(body)
    used: set = set()
    keep: list[Stmt] = []
    for x in reversed(stmts):
        if isinstance(x, Bind) and x.var not in used:
            continue
        used.update(collect_vars(x))
        keep.append(x)
    return make_body(keep[::-1])


def _aligned(b: Buffer, idx0: PrimExpr, lanes: int) -> PrimExpr:
    addr = op_call(find(takes_address=True), BufferLoad(b, (idx0,)))
    return op_call(find(alignment_test=True), addr, lanes * b.dtype.bytes)


def _local(name: str, dtype: PrimType, lanes: int) -> Buffer:
    return Buffer(name, Var(name, PointerType(dtype, "local")), dtype, (IntImm(lanes, _INT32),))


def _key(buf: Buffer, idx: PrimExpr, seen: list) -> int:
    from tirx.ir import structural_equal

    for k, (b, i) in enumerate(seen):
        if b is buf and structural_equal(i, idx, map_free_vars=False):
            return k
    seen.append((buf, idx))
    return len(seen) - 1


def _transform(func: Function) -> Function:
    entry, an, block, lanes = _plan(func)
    span = entry.span
    tid = op_call(find(launch=("idx", "block")), "x")
    bid = op_call(find(launch=("idx", "grid")), "x")
    grid = entry.grid[0]
    g_orig = Var("grid_x", grid.ty)
    # original block of this thread's lanes (int64: bx * lanes may pass int32) and lane 0's thread
    bxo64 = Var("bx_orig", _INT64)
    bxo = Var("bx_lanes", _INT32)
    tx0 = Var("tx_lane0", _INT32)
    body: list[Stmt] = [
        Bind(
            bxo64,
            Add(
                Mul(Cast(_INT64, bid), IntImm(lanes, _INT64)),
                Cast(_INT64, FloorDiv(Mul(tid, IntImm(lanes, _INT32)), IntImm(block, _INT32))),
            ),
            span=span,
        ),
        Bind(tx0, Mul(tid, IntImm(lanes, _INT32)) % IntImm(block, _INT32), span=span),
    ]
    inner: list[Stmt] = [Bind(bxo, Cast(_INT32, bxo64), span=span)]

    def at(e: PrimExpr, k: int) -> PrimExpr:
        tx = tx0 if k == 0 else Add(tx0, IntImm(k, _INT32))
        return _Subst(an.binds, tx, bxo).visit(e)

    # run-time condition of the vector path: guards at both end lanes, aligned addresses
    conds: list[PrimExpr] = []
    for g in an.guards:
        conds += [at(g, 0), at(g, lanes - 1)]
    seen: list = []
    loads: dict[BufferLoad, Buffer] = {}
    pre: list[Stmt] = []
    post: list[Stmt] = []
    locs: dict[int, Buffer] = {}
    ramp0 = Ramp(IntImm(0, _INT32), IntImm(1, _INT32), lanes)
    for ld in an.loads:
        idx0 = at(ld.indices[0], 0)
        k = _key(ld.buffer, idx0, seen)
        if k not in locs:
            b = ld.buffer
            locs[k] = loc = _local(f"{b.name}_lanes", b.dtype, lanes)
            pre.append(AllocBuffer(loc, span=span))
            it = cast(PrimType, idx0.ty)  # IntImm's validator checks the index dtype is an integer
            pre.append(
                BufferStore(loc, BufferLoad(b, (Ramp(idx0, IntImm(1, it), lanes),)), (ramp0,), span=span)
            )
            conds.append(_aligned(b, idx0, lanes))
        loads[ld] = locs[k]
    stores: dict[BufferStore, Buffer] = {}
    written: set[int] = set()
    for st in an.stores:
        b = st.buffer
        idx0 = at(st.indices[0], 0)
        k = _key(b, idx0, seen)
        if k not in locs:  # (else: an element loaded first, updated in place in its local array)
            locs[k] = _local(f"{b.name}_lanes", b.dtype, lanes)
            pre.append(AllocBuffer(locs[k], span=span))
            conds.append(_aligned(b, idx0, lanes))
        if k not in written:
            written.add(k)
            # IntImm's validator checks the index dtype is an integer
            ramp = Ramp(idx0, IntImm(1, cast(PrimType, idx0.ty)), lanes)
            post.append(BufferStore(b, BufferLoad(locs[k], (ramp0,)), (ramp,), span=span))
        stores[st] = locs[k]

    jv, js = Var("lane", _INT32), Var("lane", _INT32)
    vec_body = _Lane(Add(tx0, jv), bxo, jv, loads, stores).visit(entry.body)
    scalar_body = _Lane(Add(tx0, js), bxo).visit(entry.body)
    vec_body = _drop_unused_binds(vec_body)
    vec_path = make_body(
        [*pre, For(jv, IntImm(0, _INT32), IntImm(lanes, _INT32), ForKind.UNROLLED, vec_body), *post]
    )
    scalar_path = For(js, IntImm(0, _INT32), IntImm(lanes, _INT32), ForKind.SERIAL, scalar_body)
    cond = conds[0]
    for c in conds[1:]:
        cond = And(cond, c)
    inner.append(IfThenElse(cond, vec_path, scalar_path, span=span))
    g64 = g_orig if g_orig.ty == _INT64 else Cast(_INT64, g_orig)
    body.append(IfThenElse(LT(bxo64, g64), _drop_unused_binds(make_body(inner)), None, span=span))
    one = IntImm(1, grid.ty)
    new_grid = Add(FloorDiv(Sub(g_orig, one), IntImm(lanes, grid.ty)), one)
    fields = entry.attrs["cuda.launch_fields"]
    args = tuple(new_grid if f == "grid.x" else a for f, a in zip(fields, entry.args))
    new_entry = DeviceEntry(args, entry.attrs, make_body(body), span=span)
    # the original grid extent is a host binding: evaluated exactly on the host, it reaches
    # the kernel as a parameter (an in-kernel copy of the expression could wrap)
    top = flatten(func.body)
    k = next(i for i, x in enumerate(top) if x is entry)
    top[k : k + 1] = [Bind(g_orig, grid, span=span), new_entry]
    return func.replace(body=make_body(top))


class VectorizeThreads(FunctionPass):
    """Give each thread V neighbouring threads' work with 16-byte accesses, where provably
    the same computation (module docstring); other functions are returned unchanged."""

    def transform_function(self, func: Function, mod: Module | None) -> Function:
        try:
            return _transform(func)
        except _Refuse:
            return func
