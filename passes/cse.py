"""CommonSubexprElim: bind repeated pure subexpressions once, as ``cse_v1``, ``cse_v2``, ...

How it works (linear apart from one sort; the placement walk is bounded by the nesting depth):

1. One walk numbers every subexpression by value (hash-consing: equal keys ⇔ structurally
   equal expressions over the same var *definitions* — vars by identity, never by name;
   a var bound again gets a new generation, so non-SSA input is handled). Each candidate occurrence records the
   body ("region") and the statement index in it where it is evaluated. If conditions,
   loop bounds, while conditions and device-entry launch values count as evaluated in
   the enclosing body.
2. Candidates are taken largest first (ties: first occurrence). A candidate still seen
   at least twice (occurrences inside an already bound larger expression no longer
   count, except in its one bound copy) gets a Bind placed in the deepest body enclosing
   all its occurrences, just before the first statement that evaluates it there —
   provided reaching that body surely evaluates it (an occurrence right in the body, or
   in both branches of an ``if`` in it, recursively). Otherwise each sub-body that
   repeats it gets its own Bind: nothing is computed where the program did not compute it
   (one-sided branches, loops that may not run — ``x // y`` guarded by ``y != 0`` stays
   guarded). So an expression used in both branches of an ``if`` goes above it, one used
   twice in one branch stays in the branch, one depending on a loop var stays in the loop
   (its occurrences cannot be outside), and nothing crosses a device-entry boundary.
3. One rewrite walk inserts the Binds and replaces occurrences.

Never bound: vars and constants, BufferLoad or anything containing one, calls of impure
ops or of module functions (or containing one), the lazy arms of ``if_then_else``, Let
expressions, boolean-typed expressions (predicates), pointers, Ramp and Broadcast. Every
binding is used at least twice. The output is deterministic and the pass is idempotent
(a second run finds nothing and returns the same object).
"""

from __future__ import annotations

import gc
import re
from typing import Any

from tirx.ir import (
    AllocBuffer,
    Assert,
    AttrStmt,
    Bind,
    Broadcast,
    BufferLoad,
    BufferStore,
    Call,
    DeviceEntry,
    Evaluate,
    FloatImm,
    For,
    Function,
    IfThenElse,
    IntImm,
    Let,
    Module,
    Op,
    PrimType,
    Ramp,
    RegionStmt,
    Return,
    StringImm,
    Var,
    While,
)
from tirx.ir.expr import NODE, SEQ, VALUE, BinaryOp
from tirx.ir.functor import Dispatch, Functor, rebuild
from tirx.ir.visitor import map_tuple
from tirx.passes._util import flatten, make_body
from tirx.passes.infra import FunctionPass

__all__ = ["CommonSubexprElim"]

_LEAVES = (Var, IntImm, FloatImm, StringImm)
_NEVER = (BufferLoad, Let, Ramp, Broadcast)
_OPERANDS = frozenset((NODE, SEQ))  # the field kinds rw_generic rewrites
_NAME_RE = re.compile(r"^cse_v(\d+)$")
# region kinds: a body run exactly once when reached, a loop body (maybe not at all), a branch
_ONCE, _MAYBE, _BRANCH = 0, 1, 2


_CLS_OK: dict[type, bool] = {}
_TY_OK: dict[int, tuple[Any, bool]] = {}


def _candidate(e: Any) -> bool:
    t = type(e)
    ok = _CLS_OK.get(t)
    if ok is None:
        ok = _CLS_OK[t] = t not in _LEAVES and t not in _NEVER
    if not ok:
        return False
    ty = e.ty
    ent = _TY_OK.get(id(ty))
    if ent is None or ent[0] is not ty:
        ent = _TY_OK[id(ty)] = (ty, isinstance(ty, PrimType) and not ty.is_bool)
    if not ent[1]:
        return False
    if t is Call:
        op = e.op
        return isinstance(op, Op) and op.pure and not op.traits.lazy_args
    return True


class _CSE(Functor):
    """The three walks, each dispatching on the node's class through the functor base
    (tirx/ir/functor.py): ``scan_<Class>`` / ``sc_<Class>`` number a statement / an
    expression, ``rws_<Class>`` / ``rw_<Class>`` rewrite them."""

    _scan_table = Dispatch("scan_")
    _sc_table = Dispatch("sc_")
    _rws_table = Dispatch("rws_")
    _rw_table = Dispatch("rw_")

    ctr: int  # the rewrite's occurrence and region counters (set by function())
    r_ctr: int

    def __init__(self) -> None:
        # value numbering
        self.vn: dict[tuple, int] = {}
        self.tyid: dict[int, tuple[Any, int]] = {}
        self.tycanon: dict[Any, int] = {}
        self.gen: dict[Var, int] = {}
        self.gen_undo: list[list] = []
        self.gen_ctr = 0
        # regions
        self.r_parent: list[int] = []
        self.r_pidx: list[int] = []
        self.r_depth: list[int] = []
        self.r_kind: list[int] = []
        self.r_sib: list[int] = []  # then-region -> its else-region (-1: none)
        # occurrences
        self.o_key: list[int] = []
        self.o_region: list[int] = []
        self.o_idx: list[int] = []
        self.o_end: list[int] = []
        self.o_node: list[Any] = []
        # groups
        self.groups: dict[tuple[int, int] | int, int] = {}  # value number (, device entry) -> group
        self.g_occ: list[list[int]] = []
        self.g_size: list[int] = []
        self.cur_r = 0
        self.cur_i = 0
        self.dev = 0
        self.dev_ctr = 0
        self.max_name = 0

    # ------------------------------------------------------------------ scan
    def define(self, v: Var) -> None:
        self.gen_ctr += 1
        self.gen_undo[-1].append((v, self.gen.get(v)))
        self.gen[v] = self.gen_ctr
        m = _NAME_RE.match(v.name)
        if m:
            self.max_name = max(self.max_name, int(m.group(1)))

    def _ty(self, t: Any) -> int:
        ent = self.tyid.get(id(t))
        if ent is None or ent[0] is not t:
            ent = self.tyid[id(t)] = (t, self.tycanon.setdefault(t, len(self.tycanon)))
        return ent[1]

    def _num(self, key: tuple) -> int:
        n = self.vn.get(key)
        if n is None:
            n = self.vn[key] = len(self.vn)
        return n

    def sc(self, e: Any) -> tuple[int | None, int]:
        """Number ``e`` (None: never merged) and give its size, recording each candidate
        occurrence in pre-order; ``sc_<Class>`` numbers a node of that class (its
        occurrence, if any, is already recorded), the fallback is ``sc_generic``."""
        t = type(e)
        # the commonest nodes first, before the table: leaves, never candidates
        if t is Var:
            g = self.gen.get(e)
            return self._num(e if g is None else (e, g)), 1
        if t is IntImm:
            return self._num(("i", self._ty(e.ty), e.value)), 1
        fn = self._sc_table[t]
        if t in _LEAVES:  # FloatImm, StringImm: never candidates either
            return fn(self, e)
        slot = -1
        if _CLS_OK.get(t) is not False and _candidate(e):  # (the class test first, saving a call)
            slot = len(self.o_key)
            self.o_key.append(-1)
            self.o_region.append(self.cur_r)
            self.o_idx.append(self.cur_i)
            self.o_end.append(0)
            self.o_node.append(e)
        vn: int | None
        if isinstance(e, BinaryOp):
            a, sa = self.sc(e.a)
            b, sb = self.sc(e.b)
            size = 1 + sa + sb
            vn = self._num((t, self._ty(e.ty), a, b)) if a is not None and b is not None else None
        elif fn is None:
            vn, size = self.sc_generic(e)
        else:
            vn, size = fn(self, e)
        if slot >= 0:
            self.o_end[slot] = len(self.o_key)
            if vn is not None:
                gk = (vn, self.dev) if self.dev else vn
                gid = self.groups.get(gk)
                if gid is None:
                    gid = self.groups[gk] = len(self.g_occ)
                    self.g_occ.append([])
                    self.g_size.append(size)
                self.g_occ[gid].append(slot)
                self.o_key[slot] = gid
        return vn, size

    def sc_FloatImm(self, e: FloatImm) -> tuple[int | None, int]:
        return self._num(("f", self._ty(e.ty), e.value.hex())), 1

    def sc_StringImm(self, e: StringImm) -> tuple[int | None, int]:
        return self._num(("s", e.value)), 1

    def sc_BufferLoad(self, e: BufferLoad) -> tuple[int | None, int]:
        for x in e.indices:
            self.sc(x)
        return None, 1

    def sc_Call(self, e: Call) -> tuple[int | None, int]:
        op = e.op
        if not isinstance(op, Op) or not op.pure:
            for a in e.args:
                self.sc(a)
            return None, 1
        if op.traits.lazy_args:  # only the eagerly evaluated arguments (if_then_else's condition)
            lazy = op.traits.lazy_args
            for i, a in enumerate(e.args):
                if i not in lazy:
                    self.sc(a)
            return None, 1
        key: list = ["c", op.name, self._ty(e.ty)]
        size = 1
        ok = True
        for a in e.args:
            n, s = self.sc(a)
            size += s
            ok = ok and n is not None
            key.append(n)
        return (self._num(tuple(key)) if ok else None), size

    def sc_Let(self, e: Let) -> tuple[int | None, int]:
        return None, 1

    def sc_generic(self, e: Any) -> tuple[int | None, int]:
        """Any other expression: numbered by its class, type and fields."""
        t = type(e)
        key: list = [t, self._ty(e.ty)]
        size = 1
        ok = True
        for name, kind in t._sfields:
            v = getattr(e, name)
            if kind is NODE:
                if v is None:
                    key.append(None)
                    continue
                n, s = self.sc(v)
                size += s
                ok = ok and n is not None
                key.append(n)
            elif kind is SEQ:
                for x in v:
                    n, s = self.sc(x)
                    size += s
                    ok = ok and n is not None
                    key.append(n)
                key.append(len(v))
            elif kind is VALUE:
                key.append(v)
            else:  # a buffer or a binder: not modelled by the numbering, never merged
                ok = False
        return (self._num(tuple(key)) if ok else None), size

    def scan_region(self, body: Any, pre_defs: tuple = (), kind: int = _ONCE) -> int:
        parent, pidx = self.cur_r, self.cur_i
        r = len(self.r_parent)
        self.r_parent.append(parent)
        self.r_pidx.append(pidx)
        self.r_depth.append(self.r_depth[parent] + 1 if r else 0)
        self.r_kind.append(kind)
        self.r_sib.append(-1)
        self.gen_undo.append([])
        for v in pre_defs:
            self.define(v)
        for i, s in enumerate(flatten(body)):
            self.cur_r, self.cur_i = r, i
            self.scan_stmt(s)
        for v, old in reversed(self.gen_undo.pop()):
            if old is None:
                self.gen.pop(v, None)
            else:
                self.gen[v] = old
        self.cur_r, self.cur_i = parent, pidx
        return r

    def scan_stmt(self, s: Any) -> None:
        fn = self._scan_table[type(s)]
        if fn is None:  # pragma: no cover - new statement kinds
            raise TypeError(f"CommonSubexprElim: unknown statement {type(s).__name__}")
        fn(self, s)

    def scan_Bind(self, s: Bind) -> None:
        self.sc(s.value)
        self.define(s.var)

    def scan_BufferStore(self, s: BufferStore) -> None:
        self.sc(s.value)
        for x in s.indices:
            self.sc(x)

    def scan_Evaluate(self, s: Evaluate) -> None:
        self.sc(s.value)

    def scan_Assert(self, s: Assert) -> None:
        self.sc(s.cond)

    def scan_Return(self, s: Return) -> None:
        if s.value is not None:
            self.sc(s.value)

    def scan_For(self, s: For) -> None:
        self.sc(s.start)
        self.sc(s.extent)
        self.sc(s.step)
        self.scan_region(s.body, (s.var,), _MAYBE)

    def scan_While(self, s: While) -> None:
        self.sc(s.cond)
        self.scan_region(s.body, (), _MAYBE)

    def scan_IfThenElse(self, s: IfThenElse) -> None:
        self.sc(s.cond)
        then = self.scan_region(s.then_case, (), _BRANCH)
        if s.else_case is not None:
            self.r_sib[then] = self.scan_region(s.else_case, (), _BRANCH)

    def scan_DeviceEntry(self, s: DeviceEntry) -> None:
        for a in s.args:
            self.sc(a)
        saved = self.dev
        self.dev_ctr += 1
        self.dev = self.dev_ctr
        self.scan_region(s.body)
        self.dev = saved

    def scan_AttrStmt(self, s: AttrStmt) -> None:
        self.sc(s.value)
        self.scan_region(s.body)

    def scan_RegionStmt(self, s: RegionStmt) -> None:
        for a in s.args:
            self.sc(a)
        self.scan_region(s.body, s.params)

    def scan_AllocBuffer(self, s: AllocBuffer) -> None:
        self.define(s.buffer.data)

    def scan_DeclBuffer(self, s: Any) -> None:  # also Break, Continue: nothing evaluated
        pass

    scan_Break = scan_Continue = scan_DeclBuffer

    # ------------------------------------------------------------------ choose
    def _lca(self, occs: list[int]) -> tuple[int, int]:
        """Deepest body enclosing all ``occs`` and the first statement index there."""
        o_region, o_idx = self.o_region, self.o_idx
        r_parent, r_pidx, r_depth = self.r_parent, self.r_pidx, self.r_depth
        r, i = o_region[occs[0]], o_idx[occs[0]]
        for o in occs[1:]:
            r2, i2 = o_region[o], o_idx[o]
            while r_depth[r2] > r_depth[r]:
                i2 = r_pidx[r2]
                r2 = r_parent[r2]
            while r_depth[r] > r_depth[r2]:
                i = r_pidx[r]
                r = r_parent[r]
            while r != r2:
                i, r = r_pidx[r], r_parent[r]
                i2, r2 = r_pidx[r2], r_parent[r2]
            if i2 < i:
                i = i2
        return r, i

    def _by_child(self, occs: list[int], p: int) -> dict[int, list[int]]:
        """Occurrences below body ``p`` grouped by the child body of ``p`` they are in."""
        out: dict[int, list[int]] = {}
        r_parent, o_region = self.r_parent, self.o_region
        for o in occs:
            r = o_region[o]
            while r_parent[r] != p:
                r = r_parent[r]
            out.setdefault(r, []).append(o)
        return out

    def _certain(self, occs: list[int], p: int) -> bool:
        """Whether reaching body ``p`` surely evaluates the expression: an occurrence right
        in ``p``, or (recursively) in both branches of an if, or in a body run once."""
        o_region = self.o_region
        if any(o_region[o] == p for o in occs):
            return True
        parts = self._by_child(occs, p)
        for c, sub in parts.items():
            kind = self.r_kind[c]
            if kind == _ONCE:
                if self._certain(sub, c):
                    return True
            elif kind == _BRANCH:
                e = self.r_sib[c]
                if e >= 0 and e in parts and self._certain(sub, c) and self._certain(parts[e], e):
                    return True
        return False

    def _place(self, live: list[int], g: int) -> None:
        r, i = self._lca(live)
        if not self._certain(live, r):
            # evaluating it at r could compute it where the program never did (one branch,
            # a loop that may not run): bind it separately inside each part that repeats it
            for sub in self._by_child(live, r).values():
                if len(sub) >= 2:
                    self._place(sub, g)
            return
        k = len(self.chosen)
        rep = live[0]
        self.chosen.append((rep, Var(f"cse_v{self.max_name + k + 1}", self.o_node[rep].ty)))
        self.slots.setdefault((r, i), []).append(k)
        for o in live:
            self.replace[o] = k
        o_region, o_idx, o_end, dead = self.o_region, self.o_idx, self.o_end, self.dead
        for d in range(rep + 1, o_end[rep]):
            o_region[d] = r
            o_idx[d] = i
        for o in live[1:]:
            for d in range(o + 1, o_end[o]):
                dead[d] = 1

    def choose(self) -> None:
        order = [g for g in range(len(self.g_occ)) if len(self.g_occ[g]) >= 2]
        order.sort(key=lambda g: (-self.g_size[g], self.g_occ[g][0]))
        self.dead = dead = bytearray(len(self.o_key))
        self.replace: dict[int, int] = {}
        self.chosen: list[tuple[int, Var]] = []  # (representative occurrence, var)
        self.slots: dict[tuple[int, int], list[int]] = {}
        for g in order:
            live = [o for o in self.g_occ[g] if not dead[o]]
            if len(live) >= 2:
                self._place(live, g)

    # ------------------------------------------------------------------ rewrite
    def rw(self, e: Any, root: bool = True) -> Any:
        """``e`` with its chosen occurrences replaced (counted in the scan's pre-order);
        ``rw_<Class>`` rewrites the operands of a node of that class, the fallback is
        ``rw_generic``."""
        t = type(e)
        if t in _LEAVES:
            return e
        if _CLS_OK.get(t) is not False and _candidate(e):  # (the class test first, saving a call)
            oid = self.ctr
            self.ctr += 1
            if root:
                k = self.replace.get(oid)
                if k is not None:
                    self.ctr = self.o_end[oid]
                    return self.chosen[k][1]
        if isinstance(e, BinaryOp):
            a = self.rw(e.a)
            b = self.rw(e.b)
            if a is e.a and b is e.b:
                return e
            return t(a, b, e.ty, span=e.span)
        fn = self._rw_table[t]
        if fn is None:
            return self.rw_generic(e)
        return fn(self, e)

    def rw_BufferLoad(self, e: BufferLoad) -> Any:
        idx = self.rw_seq(e.indices)
        return e if idx is e.indices else BufferLoad(e.buffer, idx, e.ty, span=e.span)

    def rw_Call(self, e: Call) -> Any:
        op = e.op
        if isinstance(op, Op) and op.pure and op.traits.lazy_args:
            lazy = op.traits.lazy_args
            args = tuple(a if i in lazy else self.rw(a) for i, a in enumerate(e.args))
            if all(x is y for x, y in zip(args, e.args)):
                return e
            return Call(op, args, e.ty, span=e.span)
        args = self.rw_seq(e.args)
        return e if args is e.args else Call(op, args, e.ty, span=e.span)

    def rw_Let(self, e: Let) -> Any:
        return e

    def rw_generic(self, e: Any) -> Any:
        """Any other expression: its operands (NODE and SEQ fields) rewritten."""
        return rebuild(e, self._rw_field, _OPERANDS)

    def _rw_field(self, e: Any, kind: str, v: Any) -> Any:
        if kind is NODE:
            return v if v is None else self.rw(v)
        return self.rw_seq(v)  # SEQ

    def rw_seq(self, v: tuple) -> tuple:
        return map_tuple(v, self.rw)

    def bind_for(self, k: int) -> Bind:
        rep, var = self.chosen[k]
        saved = self.ctr
        self.ctr = rep
        value = self.rw(self.o_node[rep], root=False)
        self.ctr = saved
        return Bind(var, value)

    def rw_region(self, body: Any) -> Any:
        r = self.r_ctr
        self.r_ctr += 1
        stmts = flatten(body)
        out: list = []
        changed = False
        for i, s in enumerate(stmts):
            ks = self.slots.get((r, i))
            if ks:
                changed = True
                for k in reversed(ks):
                    out.append(self.bind_for(k))
            ns = self.rw_stmt(s)
            changed |= ns is not s
            out.append(ns)
        if not changed:
            return body
        return make_body(out)

    def rw_stmt(self, s: Any) -> Any:
        fn = self._rws_table[type(s)]
        if fn is None:  # no rws_<Class> (AllocBuffer, DeclBuffer, Break, Continue): unchanged
            return s
        return fn(self, s)

    def rws_Bind(self, s: Bind) -> Any:
        v = self.rw(s.value)
        return s if v is s.value else Bind(s.var, v, span=s.span)

    def rws_BufferStore(self, s: BufferStore) -> Any:
        v = self.rw(s.value)
        idx = self.rw_seq(s.indices)
        return s if v is s.value and idx is s.indices else BufferStore(s.buffer, v, idx, span=s.span)

    def rws_Evaluate(self, s: Evaluate) -> Any:
        v = self.rw(s.value)
        return s if v is s.value else Evaluate(v, span=s.span)

    def rws_Assert(self, s: Assert) -> Any:
        c = self.rw(s.cond)
        return s if c is s.cond else s.replace(cond=c)

    def rws_Return(self, s: Return) -> Any:
        if s.value is None:
            return s
        v = self.rw(s.value)
        return s if v is s.value else Return(v, span=s.span)

    def rws_For(self, s: For) -> Any:
        start = self.rw(s.start)
        extent = self.rw(s.extent)
        step = self.rw(s.step)
        body = self.rw_region(s.body)
        if start is s.start and extent is s.extent and step is s.step and body is s.body:
            return s
        return s.replace(start=start, extent=extent, step=step, body=body)

    def rws_While(self, s: While) -> Any:
        c = self.rw(s.cond)
        body = self.rw_region(s.body)
        return s if c is s.cond and body is s.body else While(c, body, span=s.span)

    def rws_IfThenElse(self, s: IfThenElse) -> Any:
        c = self.rw(s.cond)
        then = self.rw_region(s.then_case)
        els = None if s.else_case is None else self.rw_region(s.else_case)
        if c is s.cond and then is s.then_case and els is s.else_case:
            return s
        return IfThenElse(c, then, els, span=s.span)

    def rws_DeviceEntry(self, s: DeviceEntry) -> Any:
        args = self.rw_seq(s.args)
        body = self.rw_region(s.body)
        return s if args is s.args and body is s.body else DeviceEntry(args, s.attrs, body, span=s.span)

    def rws_AttrStmt(self, s: AttrStmt) -> Any:
        v = self.rw(s.value)
        body = self.rw_region(s.body)
        return s if v is s.value and body is s.body else AttrStmt(s.key, v, body, span=s.span)

    def rws_RegionStmt(self, s: RegionStmt) -> Any:
        args = self.rw_seq(s.args)
        body = self.rw_region(s.body)
        return s if args is s.args and body is s.body else s.replace(args=args, body=body)

    # ------------------------------------------------------------------ driver
    def function(self, f: Function) -> Function:
        self.cur_r, self.cur_i = 0, 0
        self.gen_undo.append([])
        for p in f.params:
            self.define(p)
        self.scan_region(f.body)
        self.choose()
        if not self.chosen:
            return f
        self.ctr = 0
        self.r_ctr = 0
        return f.with_body(self.rw_region(f.body))


class CommonSubexprElim(FunctionPass):
    """Hoist repeated pure subexpressions into Binds named ``cse_v1``, ``cse_v2``, ..."""

    def transform_function(self, func: Function, mod: Module | None) -> Function:
        # the pass allocates many small acyclic tuples; the cyclic GC would rescan the whole
        # (large) heap over and over, so it is paused for the run (and restored)
        was = gc.isenabled()
        gc.disable()
        try:
            return _CSE().function(func)
        finally:
            if was:
                gc.enable()
