"""Visitor and Mutator over IR trees, and the ScopeStack for flat Bind scoping.

Dispatch is by class name: define ``visit_Add(self, node)`` to handle Add. Unhandled
nodes fall back to ``generic_visit`` which walks the structural fields. A Mutator
returns the *same object* when nothing below it changed, so untouched subtrees stay
shared. Both dispatch through a per-class table (``functor.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

from .buffer import Buffer
from .expr import BUF_USE, DEF, NODE, SEQ, VALUE, PrimExpr, Var
from .functor import Dispatch, Functor, rebuild
from .node import BUFMAP, FUNCS, PARAMS, Attrs, Node
from .stmt import ATTRS, BUF_DEF, AllocBuffer, Stmt

__all__ = ["Mutator", "ScopeStack", "Visitor", "collect_vars", "map_tuple", "post_order", "reads_memory"]

T = TypeVar("T")


class ScopeStack(Generic[T]):
    """A stack of scopes. Bind scoping is flat: a Bind belongs to the innermost
    enclosing scope (function, loop body, branch, device entry) and is visible to the
    statements after it there. Passes push a scope per body and record what the scope
    defined so it can be dropped when the body ends."""

    def __init__(self, factory=dict):
        self._factory = factory
        self._stack: list[T] = [factory()]

    @contextlib.contextmanager
    def scope(self) -> Iterator[T]:
        self._stack.append(self._factory())
        try:
            yield self._stack[-1]
        finally:
            self._stack.pop()

    @property
    def current(self) -> T:
        return self._stack[-1]

    def __iter__(self) -> Iterator[T]:
        """Innermost scope first."""
        return reversed(self._stack)

    def __len__(self) -> int:
        return len(self._stack)

    def lookup(self: ScopeStack[Mapping[Any, Any]], key: Any, default: Any = None) -> Any:
        """``key``'s value in the innermost scope that has it (scopes that are mappings)."""
        for s in reversed(self._stack):
            if key in s:
                return s[key]
        return default


class Visitor(Functor):
    """Read-only traversal. Override ``visit_<Class>``; call ``generic_visit`` to recurse."""

    _visit_table = Dispatch("visit_")

    def visit(self, node: Any) -> Any:
        if node is None:
            return None
        fn = self._visit_table[type(node)]
        if fn is not None:
            return fn(self, node)
        return self.generic_visit(node)

    def visit_buffer(self, buf: Buffer) -> None:
        """Called at each buffer definition (params, allocs, decls).

        The buffer's ``data`` pointer is visited by the defining statement: a definition
        for ``AllocBuffer``, a use for ``DeclBuffer`` and buffer-map parameters.
        """
        self.generic_visit(buf)

    def visit_var_def(self, var: Var) -> None:
        """Called where a var is defined (params, Bind, For, Let, allocated buffer data)."""

    def generic_visit(self, node: Any) -> None:
        for name, kind in type(node)._sfields:
            v = getattr(node, name)
            if kind is NODE:
                if v is not None:
                    self.visit(v)
            elif kind is SEQ:
                for e in v:
                    if isinstance(e, Node):
                        self.visit(e)
            elif kind is DEF:
                if type(node) is not Buffer:  # a buffer's data: see BUF_DEF / BUFMAP
                    self.visit_var_def(v)
            elif kind is BUF_DEF:
                if type(node) is AllocBuffer:
                    self.visit_var_def(v.data)
                else:
                    self.visit(v.data)
                self.visit_buffer(v)
            elif kind is PARAMS:
                for p in v:
                    self.visit_var_def(p)
            elif kind is BUFMAP:
                for _, b in v:
                    self.visit(b.data)
                    self.visit_buffer(b)
            elif kind is FUNCS:
                for f in v:
                    self.visit(f)
            elif kind is ATTRS:
                _visit_attr_values(self, v)
            elif kind is VALUE and isinstance(v, Node):
                self.visit(v)


def _visit_attr_values(vis: Visitor, a: Attrs) -> None:
    for v in a.values():
        if isinstance(v, Node):
            vis.visit(v)


# the field kinds Mutator.generic_visit rebuilds (plain values are kept as they are)
_REBUILT = frozenset((NODE, SEQ, DEF, BUF_DEF, BUF_USE, PARAMS, BUFMAP, FUNCS, ATTRS))


class Mutator(Functor):
    """Rebuilding traversal that preserves identity of unchanged subtrees.

    Buffers are rebuilt at most once: every use of an old buffer maps to the same new
    buffer (``self.buffer_map``), and likewise vars redefined by ``visit_var_def``.
    """

    _alloc_data = False
    _visit_table = Dispatch("visit_")

    def __init__(self) -> None:
        self.buffer_map: dict[Buffer, Buffer] = {}
        self.var_map: dict[Var, Var] = {}

    def visit(self, node: Any) -> Any:
        if node is None:
            return None
        fn = self._visit_table[type(node)]
        if fn is not None:
            return fn(self, node)
        return self.generic_visit(node)

    # -- hooks ------------------------------------------------------------------
    def visit_Var(self, v: Var) -> PrimExpr:
        return self.var_map.get(v, v)

    def visit_var_def(self, v: Var) -> Var:
        """Return the var to define instead of ``v`` (default: ``v``)."""
        return self.var_map.get(v, v)

    def visit_buffer(self, b: Buffer) -> Buffer:
        nb = self.buffer_map.get(b)
        if nb is not None:
            return nb
        nb = self.generic_visit(b)
        if nb is not b:
            self.buffer_map[b] = nb
        return nb

    def visit_buffer_use(self, b: Buffer) -> Buffer:
        return self.buffer_map.get(b, b)

    # -- generic ------------------------------------------------------------------
    def generic_visit(self, node: Any) -> Any:
        return rebuild(node, self._field, _REBUILT)

    def _field(self, node: Any, kind: str, v: Any) -> Any:
        """The new value of one structural field of ``node`` (``v`` itself when unchanged)."""
        if kind is NODE:
            return v if v is None else self.visit(v)
        if kind is SEQ:
            return self._seq(v)
        if kind is DEF:
            if type(node) is Buffer and not self._alloc_data:
                nv = self.visit(v)  # a use: DeclBuffer / buffer-map data pointer
                return nv if isinstance(nv, Var) else v
            return self.visit_var_def(v)
        if kind is BUF_DEF:
            self._alloc_data = type(node) is AllocBuffer
            try:
                return self.visit_buffer(v)
            finally:
                self._alloc_data = False
        if kind is BUF_USE:
            return self.visit_buffer_use(v)
        if kind is PARAMS:
            return self._seq_with(v, self.visit_var_def)
        if kind is BUFMAP:
            new = [(self.visit_var_def(p), self.visit_buffer(b)) for p, b in v]
            return v if all(p is q and b is c for (p, b), (q, c) in zip(v, new)) else tuple(new)
        if kind is FUNCS:
            return self._seq_with(v, self.visit)
        if kind is ATTRS:
            return self._attrs(v)
        return v

    def _seq(self, v: tuple) -> tuple:
        return map_tuple(v, lambda e: self.visit(e) if isinstance(e, Node) else e)

    def _seq_with(self, v: tuple, fn) -> tuple:
        new = [fn(e) for e in v]
        return v if all(a is b for a, b in zip(v, new)) else tuple(new)

    def _attrs(self, a: Attrs) -> Attrs:
        changed = False
        d = {}
        for k, v in a.items():
            nv = self.visit(v) if isinstance(v, Node) else v
            changed |= nv is not v
            d[k] = nv
        return Attrs(d) if changed else a

    # a statement-list helper for passes that splice statements
    def visit_SeqStmt(self, s):
        from .stmt import seq

        new = [self.visit(x) for x in s.stmts]
        if all(a is b for a, b in zip(s.stmts, new)):
            return s
        return seq(new) if new else s


def map_tuple(v: tuple, fn) -> tuple:
    """``tuple(map(fn, v))``, but ``v`` itself when ``fn`` returned every element unchanged
    (so rewriters keep untouched subtrees identical)."""
    out = None
    for i, e in enumerate(v):
        ne = fn(e)
        if ne is not e and out is None:
            out = list(v[:i])
        if out is not None:
            out.append(ne)
    return v if out is None else tuple(out)


class _VarCollector(Visitor):
    def __init__(self) -> None:
        self.seen: dict[Var, None] = {}

    def visit_Var(self, v: Var) -> None:
        self.seen.setdefault(v, None)


def collect_vars(node: Any) -> list[Var]:
    """Vars used in ``node``, in order of first appearance (definitions excluded)."""
    c = _VarCollector()
    c.visit(node)
    return list(c.seen)


_CHILD_FIELDS: dict = {}


def _child_fields(cls: type[Node]) -> tuple:
    f = _CHILD_FIELDS.get(cls)
    if f is None:
        f = _CHILD_FIELDS[cls] = (
            tuple(n for n, k in cls._sfields if k is NODE),
            tuple(n for n, k in cls._sfields if k is SEQ),
        )
    return f


def child_nodes(node: Any) -> list:
    """The node's direct operand children (NODE and SEQ fields: an expression's operands, a
    statement's expressions and sub-statements), without definitions, buffers or attrs."""
    nodes, seqs = _child_fields(type(node))
    out = []
    for name in nodes:
        v = getattr(node, name)
        if v is not None:
            out.append(v)
    for name in seqs:
        out += [x for x in getattr(node, name) if isinstance(x, Node)]
    return out


def post_order(node: Any) -> Iterator[Node]:
    """All nodes below ``node`` (children before parents), iteratively."""
    out: list[Node] = []
    stack: list[tuple[Any, bool]] = [(node, False)]
    while stack:
        n, done = stack.pop()
        if done:
            out.append(n)
            continue
        stack.append((n, True))
        for name, kind in type(n)._sfields:
            v = getattr(n, name)
            if kind is NODE and v is not None:
                stack.append((v, False))
            elif kind is SEQ:
                stack.extend((e, False) for e in reversed(v) if isinstance(e, Node))
            elif kind in (DEF,) or kind in (BUF_DEF,):
                stack.append((v, False))
            elif kind is FUNCS:
                stack.extend((f, False) for f in reversed(v))
            elif kind is BUFMAP:
                stack.extend((b, False) for _, b in reversed(v))
    return iter(out)


_ = (Stmt,)


def reads_memory(e: Any) -> bool:
    """Whether evaluating ``e`` loads memory or calls something: its value may change when
    memory does (a loop's end re-read by C's ``for``; a swap's values read after a store)."""
    from .expr import BufferLoad, Call

    return any(isinstance(x, (BufferLoad, Call)) for x in post_order(e))
