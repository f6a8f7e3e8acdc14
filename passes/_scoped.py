"""ScopedRewriter: an identity-preserving, scope-aware IR rewriter used by the passes.

It differs from ``tirx.ir.Mutator`` in three ways the passes need:

- renamings of vars and buffers are *scoped*: a definition inside a body is undone when
  the body ends (flat Bind scoping: function, For/While body, then/else, device entry,
  AttrStmt body);
- a ``DeclBuffer``'s data var is a *use* (the pointer exists already); an
  ``AllocBuffer``'s data var and function params / dynamic shape vars are definitions;
- hooks: ``define_var(v, node)`` returns the var to define instead of ``v``;
  ``rewrite_stmt`` / ``rewrite_expr`` may be overridden per class (``stmt_<Class>``).

Untouched subtrees are returned as the same objects.
"""

from __future__ import annotations

from typing import Any

import attrs

from tirx.ir import (
    AllocBuffer,
    AttrStmt,
    Bind,
    Buffer,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    DeviceEntry,
    For,
    Function,
    IfThenElse,
    Let,
    Module,
    Return,
    SeqStmt,
    Var,
    While,
)
from tirx.ir.expr import NODE, SEQ, BinaryOp
from tirx.ir.functor import Dispatch, Functor, rebuild
from tirx.ir.node import Attrs, Node
from tirx.ir.visitor import map_tuple

_MISSING = object()
_OPERANDS = frozenset((NODE, SEQ))  # the field kinds generic_expr rewrites


class ScopedRewriter(Functor):
    _expr_table = Dispatch("expr_")
    _stmt_table = Dispatch("stmt_")

    def __init__(self) -> None:
        self.vmap: dict[Var, Any] = {}
        self.bmap: dict[Buffer, Buffer] = {}
        self._undo: list[list] = [[]]

    # -- scopes ---------------------------------------------------------------------------
    def push(self) -> None:
        self._undo.append([])

    def pop(self) -> None:
        for table, key, old in reversed(self._undo.pop()):
            if old is _MISSING:
                table.pop(key, None)
            else:
                table[key] = old

    def set_var(self, v: Var, nv: Any) -> None:
        self._undo[-1].append((self.vmap, v, self.vmap.get(v, _MISSING)))
        self.vmap[v] = nv

    def set_buffer(self, b: Buffer, nb: Buffer) -> None:
        self._undo[-1].append((self.bmap, b, self.bmap.get(b, _MISSING)))
        self.bmap[b] = nb

    # -- hooks ----------------------------------------------------------------------------
    def define_var(self, v: Var, node: Any) -> Var:
        """Called at every var definition; return the var to define (default ``v``)."""
        if v in self.vmap:
            self.set_var(v, v)
        return v

    def use_var(self, v: Var) -> Any:
        return self.vmap.get(v, v)

    # -- expressions ------------------------------------------------------------------------
    def expr(self, e: Any) -> Any:
        t = type(e)
        if t is Var:
            return self.vmap.get(e, e) if self.vmap else e
        if isinstance(e, BinaryOp):
            a = self.expr(e.a)
            b = self.expr(e.b)
            if a is e.a and b is e.b:
                return e
            return t(a, b, e.ty, span=e.span)
        fn = self._expr_table[t]
        if fn is not None:
            return fn(self, e)
        return self.generic_expr(e)

    def generic_expr(self, e: Any) -> Any:
        """``e`` with its operands (NODE and SEQ fields) rewritten; ``e`` itself if none changed."""
        return rebuild(e, self._operand, _OPERANDS)

    def _operand(self, e: Any, kind: str, v: Any) -> Any:
        if kind is NODE:
            return v if v is None else self.expr(v)
        return self.exprs(v)  # SEQ

    def exprs(self, v: tuple) -> tuple:
        return map_tuple(v, self.expr)

    def expr_BufferLoad(self, e: BufferLoad) -> Any:
        b = self.bmap.get(e.buffer, e.buffer) if self.bmap else e.buffer
        idx = self.exprs(e.indices)
        if b is e.buffer and idx is e.indices:
            return e
        return BufferLoad(b, idx, span=e.span)

    def expr_Let(self, e: Let) -> Any:
        value = self.expr(e.value)
        self.push()
        var = self.define_var(e.var, e)
        body = self.expr(e.body)
        self.pop()
        if value is e.value and var is e.var and body is e.body:
            return e
        return Let(var, value, body, span=e.span)

    def attrs_(self, a: Attrs) -> Attrs:
        changed = False
        d = {}
        for k, v in a.items():
            nv = self.expr(v) if isinstance(v, Node) and not isinstance(v, Buffer) else v
            changed |= nv is not v
            d[k] = nv
        return Attrs(d) if changed else a

    # -- buffers --------------------------------------------------------------------------
    def buffer_fields(self, b: Buffer, data: Var) -> Buffer:
        shape = self.exprs(b.shape)
        strides = self.exprs(b.strides)
        off = b.elem_offset if b.elem_offset is None else self.expr(b.elem_offset)
        if data is b.data and shape is b.shape and strides is b.strides and off is b.elem_offset:
            return b
        return b.replace(data=data, shape=shape, strides=strides, elem_offset=off)

    def def_buffer(self, b: Buffer, nb: Buffer) -> None:
        if nb is not b or b in self.bmap:
            self.set_buffer(b, nb)

    def use_buffer(self, b: Buffer) -> Buffer:
        return self.bmap.get(b, b) if self.bmap else b

    # -- statements -------------------------------------------------------------------------
    def stmt(self, s: Any) -> Any:
        fn = self._stmt_table[type(s)]
        if fn is None:  # no stmt_<Class>: the AttributeError of getattr, as before the table
            return getattr(self, "stmt_" + type(s).__name__)(s)
        return fn(self, s)

    def body(self, s: Any) -> Any:
        if s is None:
            return None
        self.push()
        try:
            return self.stmt(s)
        finally:
            self.pop()

    def stmt_SeqStmt(self, s: SeqStmt) -> Any:
        out = None
        for i, x in enumerate(s.stmts):
            nx = self.stmt(x)
            if nx is not x and out is None:
                out = list(s.stmts[:i])
            if out is not None:
                out.append(nx)
        return s if out is None else SeqStmt(tuple(out), span=s.span)

    def stmt_Bind(self, s: Bind) -> Any:
        value = self.expr(s.value)
        var = self.define_var(s.var, s)
        if value is s.value and var is s.var:
            return s
        return Bind(var, value, span=s.span)

    def stmt_BufferStore(self, s: BufferStore) -> Any:
        b = self.use_buffer(s.buffer)
        value = self.expr(s.value)
        idx = self.exprs(s.indices)
        if b is s.buffer and value is s.value and idx is s.indices:
            return s
        return BufferStore(b, value, idx, span=s.span)

    def stmt_Evaluate(self, s: Any) -> Any:
        return self.generic_expr(s)

    stmt_Assert = stmt_Evaluate

    def stmt_Return(self, s: Return) -> Any:
        return s if s.value is None else self.generic_expr(s)

    def stmt_Break(self, s: Any) -> Any:
        return s

    stmt_Continue = stmt_Break

    def stmt_For(self, s: For) -> Any:
        start = self.expr(s.start)
        extent = self.expr(s.extent)
        step = self.expr(s.step)
        ann = self.attrs_(s.annotations)
        self.push()
        var = self.define_var(s.var, s)
        body = self.stmt(s.body)
        self.pop()
        same = start is s.start and extent is s.extent and step is s.step and ann is s.annotations
        if same and var is s.var and body is s.body:
            return s
        return s.replace(var=var, start=start, extent=extent, step=step, annotations=ann, body=body)

    def stmt_While(self, s: While) -> Any:
        cond = self.expr(s.cond)
        body = self.body(s.body)
        if cond is s.cond and body is s.body:
            return s
        return While(cond, body, span=s.span)

    def stmt_IfThenElse(self, s: IfThenElse) -> Any:
        cond = self.expr(s.cond)
        then = self.body(s.then_case)
        els = self.body(s.else_case)
        if cond is s.cond and then is s.then_case and els is s.else_case:
            return s
        return IfThenElse(cond, then, els, span=s.span)

    def stmt_AllocBuffer(self, s: AllocBuffer) -> Any:
        b = s.buffer
        shape_b = self.buffer_fields(b, b.data)
        data = self.define_var(b.data, s)
        nb = shape_b if data is b.data else shape_b.replace(data=data)
        self.def_buffer(b, nb)
        ann = self.attrs_(s.annotations)
        if nb is b and ann is s.annotations:
            return s
        return AllocBuffer(nb, ann, span=s.span)

    def stmt_DeclBuffer(self, s: DeclBuffer) -> Any:
        b = s.buffer
        nb = self.buffer_fields(b, self.use_var(b.data))
        self.def_buffer(b, nb)
        return s if nb is b else DeclBuffer(nb, s.declared_scope, data_of=s.data_of, span=s.span)

    def stmt_DeviceEntry(self, s: DeviceEntry) -> Any:
        args = self.exprs(s.args)
        at = self.attrs_(s.attrs)
        body = self.body(s.body)
        if args is s.args and at is s.attrs and body is s.body:
            return s
        return DeviceEntry(args, at, body, span=s.span)

    def stmt_RegionStmt(self, s: Any) -> Any:
        args = self.exprs(s.args)
        self.push()
        params = tuple(self.define_var(v, s) for v in s.params)
        body = self.stmt(s.body)
        self.pop()
        if args is s.args and body is s.body and all(a is b for a, b in zip(params, s.params)):
            return s
        return attrs.evolve(s, args=args, params=params, body=body)

    def stmt_AttrStmt(self, s: AttrStmt) -> Any:
        value = self.expr(s.value)
        body = self.body(s.body)
        if value is s.value and body is s.body:
            return s
        return AttrStmt(s.key, value, body, span=s.span)

    # -- functions --------------------------------------------------------------------------
    def function(self, f: Function) -> Function:
        self.push()
        params = tuple(self.define_var(p, f) for p in f.params)
        pset = set(f.params)
        seen: set[Var] = set()
        bm = []
        for pv, b in f.buffer_map:
            for e in (*b.shape, *b.strides, *(() if b.elem_offset is None else (b.elem_offset,))):
                from tirx.ir import collect_vars

                for v in collect_vars(e):
                    if v not in pset and v not in seen:
                        seen.add(v)
                        self.define_var(v, f)
            nb = self.buffer_fields(b, self.use_var(b.data))
            self.def_buffer(b, nb)
            bm.append((self.use_var(pv), nb))
        at = self.attrs_(f.attrs)
        body = self.stmt(f.body)
        self.pop()
        same_bm = all(p is q and b is c for (p, b), (q, c) in zip(f.buffer_map, bm))
        if body is f.body and at is f.attrs and same_bm and all(a is b for a, b in zip(params, f.params)):
            return f
        return f.replace(
            params=params, buffer_map=f.buffer_map if same_bm else tuple(bm), attrs=at, body=body
        )

    def module(self, m: Module) -> Module:
        new = [self.function(f) for f in m.functions]
        if all(a is b for a, b in zip(new, m.functions)):
            return m
        return Module(tuple(new), m.attrs, m.name, span=m.span)
