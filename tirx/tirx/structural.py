"""TIRx's constraint-aware traversals (``tvm_tirx.tirx.structural_walk_with_constraint_context``
& co.): ``tirx.ffi``'s structural walk, visit, map and mutate, each callback handed the facts in
force at its value as a ``tirx.sym.ConstraintContext`` (feed it to
``Analyzer.sync_constraint_context``).

What a scope adds, for its body only (as TIRx records it, in this order):

- a loop: ``RangeConstraint(var, [start, start + extent))``, then ``end > start`` and
  ``extent > 0`` as predicates (constants folded);
- ``if``: its condition in the then-branch, ``not`` it in the else-branch; ``while``: its
  condition in the body; the lazy select (``T.if_then_else``): the condition in its second
  argument, ``not`` it in its third;
- ``T.launch_thread(tag, extent)``: ``RangeConstraint(var, [0, extent))``;
- a ``Bind`` / an ``assert`` in a sequence: its binding / its condition for the statements
  after it, up to the end of the sequence (the scope that holds them); ``Let``: its binding in
  its body.

A mutation records the rewritten values (the new condition, the new bound value). Headers
(a loop's bounds, a condition itself) see the outer facts, and so does a scoped node's own
post-order callback. Statement sequences and the lazy select's arguments are visited element
by element, with no callback for the tuple that holds them. The traversal machinery (callback
dispatch, def regions, rebuilding, deep IR) is ``tirx.ffi``'s; this module only adds the scopes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tirx.ffi import (
    StructuralMutator,
    StructuralVisitor,
    VisitInterrupt,
    _Callbacks,
    _child_region,
    _children,
    _elem_region,
    _Entry,
    _Map,
    _order,
    _Walk,
)
from tirx.ir import (
    EQ,
    GT,
    NE,
    Assert,
    Bind,
    Call,
    For,
    IfThenElse,
    IntImm,
    Let,
    Not,
    Op,
    PrimExpr,
    PrimType,
    RegionStmt,
    SeqStmt,
    While,
)
from tirx.ir import fold as _fold
from tirx.ir.functor import rebuild
from tirx.ir.node import NODE, SEQ, VALUE, Node
from tirx.ir.stmt import loop_stop
from tirx.script.ir_names import Range
from tirx.sym import (
    BindingConstraint,
    Constraint,
    ConstraintContext,
    PredicateConstraint,
    RangeConstraint,
)

__all__ = [
    "StructuralMutatorWithConstraintContext",
    "StructuralVisitorWithConstraintContext",
    "structural_map_with_constraint_context",
    "structural_mutate_with_constraint_context",
    "structural_visit_with_constraint_context",
    "structural_walk_with_constraint_context",
]

#: a scoped node's fields -> what its children there see, from the node's (new) field values
_Scope = Callable[[dict[str, Any]], list[Constraint]]


def _holds(c: Any) -> PrimExpr:
    return c if _is_bool(c) else NE(c, IntImm(0, c.ty))


def _fails(c: Any) -> PrimExpr:
    return Not(c) if _is_bool(c) else EQ(c, IntImm(0, c.ty))


def _is_bool(c: PrimExpr) -> bool:
    return not (isinstance(c.ty, PrimType) and c.ty.is_int)


def _loop(f: dict[str, Any]) -> list[Constraint]:
    start, extent = f["start"], f["extent"]
    return [
        RangeConstraint(f["var"], Range.from_min_extent(start, extent)),
        PredicateConstraint(_fold.fold(GT(loop_stop(start, extent), start))),
        PredicateConstraint(_fold.fold(GT(extent, IntImm(0, extent.ty)))),
    ]


def _launch(f: dict[str, Any]) -> list[Constraint]:
    if f["kind"] != "launch_thread" or len(f["params"]) != 1 or len(f["args"]) != 2:
        return []
    extent = f["args"][1]
    return [RangeConstraint(f["params"][0], Range.from_min_extent(IntImm(0, extent.ty), extent))]


#: (node class, field) -> the constraints that field's subtree sees
_SCOPES: dict[tuple[type, str | None], _Scope] = {
    (For, "body"): _loop,
    (IfThenElse, "then_case"): lambda f: [PredicateConstraint(_holds(f["cond"]))],
    (IfThenElse, "else_case"): lambda f: [PredicateConstraint(_fails(f["cond"]))],
    (While, "body"): lambda f: [PredicateConstraint(_holds(f["cond"]))],
    (Let, "body"): lambda f: [BindingConstraint(f["var"], f["value"])],
    (RegionStmt, "body"): _launch,
}
_SCOPED = frozenset(cls for cls, _ in _SCOPES)


def _is_select(v: Any) -> bool:
    return type(v) is Call and isinstance(v.op, Op) and v.op.traits.select


def _after(stmt: Any) -> list[Constraint]:
    """What a statement of a sequence tells the statements after it."""
    if type(stmt) is Bind:
        return [BindingConstraint(stmt.var, stmt.value)]
    if type(stmt) is Assert:
        return [PredicateConstraint(_holds(stmt.cond))]
    if type(stmt) is SeqStmt:
        return [c for s in stmt.stmts for c in _after(s)]
    return []


def _with(ctx: ConstraintContext, cs: list[Constraint]) -> ConstraintContext:
    """A child of ``ctx`` holding ``cs`` too (``ctx`` itself when there are none)."""
    if not cs:
        return ctx
    child = ConstraintContext(ctx, ctx.local_size())
    for c in cs:
        child.append(c)
    return child


def _kept(kind: str, v: Any) -> bool:
    """Whether ``tirx.ffi._children`` visits a field (the same filter, to name its children)."""
    if kind == VALUE:
        return isinstance(v, Node)
    if kind == NODE:
        return v is not None
    return True


class _Scopes:
    """What the visitor and the mutator add to ``tirx.ffi``'s traversal: ``constraints``, and a
    descent that opens the scopes above."""

    constraints: ConstraintContext

    def _scoped(self, value: Any) -> bool:
        return type(value) in _SCOPED or type(value) is SeqStmt or _is_select(value)


class StructuralVisitorWithConstraintContext(_Scopes, StructuralVisitor):
    """The visitor a ``structural_visit_with_constraint_context`` callback receives: ``visit``,
    ``default_visit`` and ``def_region_kind`` as ``tirx.ffi.StructuralVisitor``'s, and
    ``constraints``, the facts in force at the value being visited (read, never append)."""

    def __init__(self, callbacks: Any = None) -> None:
        super().__init__(callbacks if callbacks is not None else _Callbacks([]))
        self.constraints = ConstraintContext()

    def _descend(self, value: Any) -> VisitInterrupt | None:
        if not self._scoped(value):
            return super()._descend(value)
        saved_region, saved_ctx = self._region, self.constraints
        self._depth += 1
        try:
            for name, x, region in self._named(value):
                self._region = region
                if _element_wise(value, name):
                    r = self._elements(value, x, _elem_region(region), saved_ctx)
                else:
                    scope = _SCOPES.get((type(value), name))
                    self.constraints = saved_ctx if scope is None else _with(saved_ctx, scope(_fields(value)))
                    r = self.visit(x)
                if r is not None:
                    return r
            return None
        finally:
            self._region, self.constraints = saved_region, saved_ctx
            self._depth -= 1

    def _elements(self, node: Any, xs: tuple, region: Any, ctx: ConstraintContext) -> VisitInterrupt | None:
        self._region = region
        select = type(node) is Call
        for i, x in enumerate(xs):
            if select:
                self.constraints = _select_scope(ctx, xs[0], i)
            else:
                self.constraints = ctx
            r = self.visit(x)
            if r is not None:
                return r
            if not select:
                ctx = _with(ctx, _after(x))
        return None

    def _named(self, value: Any) -> list[tuple[str | None, Any, Any]]:
        """``tirx.ffi._children`` of a node, each with its field's name."""
        kids = _children(value, self._region)
        names = [n for n, k in type(value)._sfields if _kept(k, getattr(value, n))]
        return [(n, x, r) for n, (x, r) in zip(names, kids)]


def _element_wise(node: Any, name: str | None) -> bool:
    """A field whose elements are visited one by one (a sequence's statements, a lazy select's
    arguments), each with its own facts, and with no callback for the tuple itself."""
    return (name == "stmts" and type(node) is SeqStmt) or (name == "args" and _is_select(node))


def _fields(node: Any) -> dict[str, Any]:
    return {n: getattr(node, n) for n, _ in type(node)._sfields}


def _select_scope(ctx: ConstraintContext, cond: PrimExpr, i: int) -> ConstraintContext:
    if i == 1:
        return _with(ctx, [PredicateConstraint(_holds(cond))])
    if i == 2:
        return _with(ctx, [PredicateConstraint(_fails(cond))])
    return ctx


class _CtxWalk(StructuralVisitorWithConstraintContext, _Walk):
    """``structural_walk`` with the facts: every value's callback ``(value, constraints)``."""

    __slots__ = ()

    def __init__(self, callback: Callable[[Any, ConstraintContext], Any], pre: bool) -> None:
        _Walk.__init__(self, _Callbacks([_Entry(None, lambda v: callback(v, self.constraints), False)]), pre)
        self.constraints = ConstraintContext()


def structural_walk_with_constraint_context(
    root: Any, callback: Callable[[Any, ConstraintContext], Any], *, order: str = "post"
) -> VisitInterrupt | None:
    """Call ``callback(value, constraints)`` for every value under ``root`` (``root`` too), each
    occurrence as in a tree, before (``order="pre"``) or after (``"post"``) its children, with
    the facts in force there. It returns ``None`` or ``WalkResult.ADVANCE`` to go on,
    ``WalkResult.SKIP`` (pre-order) to leave the children out, or a ``VisitInterrupt`` to
    stop the walk, which then returns it."""
    _check_callback(callback, "structural_walk_with_constraint_context")
    pre = _order(order, "structural_walk_with_constraint_context")
    return _CtxWalk(callback, pre).visit(root)


def structural_visit_with_constraint_context(
    root: Any, callback: Callable[[Any, StructuralVisitorWithConstraintContext], Any]
) -> VisitInterrupt | None:
    """Visit ``root`` with ``callback(value, visitor)`` owning the descent: it goes on into the
    value's children by ``visitor.default_visit(value)``, into chosen ones by
    ``visitor.visit(child)``, or not at all; ``visitor.constraints`` are the facts at
    ``value``. It returns ``None`` or a ``VisitInterrupt`` (which stops the visit)."""
    _check_callback(callback, "structural_visit_with_constraint_context")
    visitor = StructuralVisitorWithConstraintContext()
    visitor._callbacks = _Callbacks([_Entry(None, lambda v, _: callback(v, visitor), False)])
    return visitor.visit(root)


class StructuralMutatorWithConstraintContext(_Scopes, StructuralMutator):
    """The mutator a ``structural_mutate_with_constraint_context`` callback receives:
    ``mutate``, ``default_mutate`` and the remap cache as ``tirx.ffi.StructuralMutator``'s, and
    ``constraints``, the facts in force at the value being rewritten, taken from the rewritten
    values (read, never append)."""

    def __init__(self, callbacks: Any = None) -> None:
        super().__init__(callbacks if callbacks is not None else _Callbacks([]))
        self.constraints = ConstraintContext()

    def _descend(self, value: Any) -> Any:
        if not self._scoped(value):
            return super()._descend(value)
        saved_region, saved_ctx = self._region, self.constraints
        self._depth += 1
        done: dict[str, Any] = {}
        names = iter(type(value)._sfields)

        def field(node: Any, kind: str, v: Any) -> Any:
            name = next(names)[0]
            if _element_wise(node, name):
                nv = self._elements(node, v, saved_ctx)
            else:
                scope = _SCOPES.get((type(node), name))
                self.constraints = (
                    saved_ctx if scope is None else _with(saved_ctx, scope({**_fields(node), **done}))
                )
                nv = self._field(node, kind, v)
            done[name] = nv
            return nv

        try:
            return rebuild(value, field)
        finally:
            self._region, self.constraints = saved_region, saved_ctx
            self._depth -= 1

    def _elements(self, node: Any, xs: tuple, ctx: ConstraintContext) -> tuple:
        saved = self._region
        self._region = _elem_region(_child_region(node, SEQ, saved))
        select = type(node) is Call
        out: list[Any] = []
        try:
            for i, x in enumerate(xs):
                if select:
                    self.constraints = _select_scope(ctx, out[0] if out else x, i)
                else:
                    self.constraints = ctx
                nx = self.mutate(x)
                out.append(nx)
                if not select:
                    ctx = _with(ctx, _after(nx))
        finally:
            self._region = saved
        return xs if all(a is b for a, b in zip(xs, out)) else tuple(out)


class _CtxMap(StructuralMutatorWithConstraintContext, _Map):
    """``structural_map`` with the facts: every value's callback ``(value, constraints)``."""

    __slots__ = ()

    _api = "structural_map_with_constraint_context"

    def __init__(self, callback: Callable[[Any, ConstraintContext], Any], pre: bool) -> None:
        _Map.__init__(self, _Callbacks([_Entry(None, lambda v: callback(v, self.constraints), False)]), pre)
        self.constraints = ConstraintContext()


def structural_map_with_constraint_context(
    root: Any, callback: Callable[[Any, ConstraintContext], Any], *, order: str = "post"
) -> Any:
    """Rewrite ``root``: ``callback(value, constraints)`` returns each value or its replacement
    (never changes it in place), after its children were rewritten (``order="post"``) or
    before, the replacement's children rewritten then (``"pre"``). ``constraints`` are the
    facts in force there, from the rewritten values. ``root`` itself comes back when nothing
    changed."""
    _check_callback(callback, "structural_map_with_constraint_context")
    pre = _order(order, "structural_map_with_constraint_context")
    return _CtxMap(callback, pre).mutate(root)


def structural_mutate_with_constraint_context(
    root: Any, callback: Callable[[Any, StructuralMutatorWithConstraintContext], Any]
) -> Any:
    """Rewrite ``root`` with ``callback(value, mutator)`` owning the descent: it returns the
    value's final replacement, rewriting the children by ``mutator.default_mutate(value)`` or
    chosen ones by ``mutator.mutate(child)``; ``mutator.constraints`` are the facts at
    ``value``."""
    _check_callback(callback, "structural_mutate_with_constraint_context")
    mutator = StructuralMutatorWithConstraintContext()
    mutator._callbacks = _Callbacks([_Entry(None, lambda v, _: callback(v, mutator), False)])
    return mutator.mutate(root)


def _check_callback(callback: Any, api: str) -> None:
    if not callable(callback):
        raise TypeError(f"{api}: callback must be callable, got {type(callback).__name__}")
