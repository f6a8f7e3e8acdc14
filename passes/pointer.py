"""InferPointerTypes: give every pointer var its most precise ``PointerType(element, scope)``.

Facts the pass collects (per var; vars bound to each other, ``ptr_byte_offset(p, k)``,
``ptx.mapa(p, r)`` and the arms of ``Select`` / ``if_then_else`` share one type):

- *fixed* types: a var declared with a non-void element keeps it (allocations, typed
  params); ``address_of(A[i])`` / ``A.ptr_to(...)`` is a pointer to ``A``'s dtype in the
  scope of ``A``'s storage (a float32 view of ``uint8`` shared.dyn storage gives
  ``float32*`` in shared.dyn); ``reinterpret(x, ty=T.Ptr(E, s))`` is ``T.Ptr(E, s)``;
- *uses* of a var with a void element (``T.Ptr(T.void)``, a handle): a buffer declared
  over it (``decl_tensor`` / buffer_map) with dtype E, ``reinterpret(v, ty=T.Ptr(E))``,
  an atomic on it with an E value.

A void pointer class with no fixed type is narrowed to the element type of its uses: the
*implicit* uses (declared buffers, atomics) decide — two different element types there are
a conflict; explicit reinterprets only narrow when there is no implicit use and they all
agree (a ``void*`` deliberately reinterpreted as several types stays ``void*``). The scope
is the use's when a reinterpret names one, else the var's own. A
``reinterpret`` bound to a narrowed var gets the narrowed type, so the DSMEM pattern::

    remote: T.let[T.Ptr(T.void, "shared")] = T.reinterpret(T.ptx.mapa(...), ty=...)
    remote_mbar = T.decl_tensor(remote, ty_args=[T.Tensor((1,), T.uint64, scope="shared")])

leaves ``remote`` as ``T.Ptr(T.uint64, "shared")`` — codegen declares it ``uint64_t*``.
Conflicting facts raise ``tirx.DiagnosticError`` located at the uses (all listed; the
error's ``spans`` attribute holds them).
Params of functions called from elsewhere in the module are not narrowed (their
callers' argument types would no longer match).
"""

from __future__ import annotations

from typing import Any

from tirx.errors import DiagnosticError
from tirx.ir import (
    AllocBuffer,
    AttrStmt,
    Bind,
    BufferLoad,
    BufferStore,
    Call,
    DeclBuffer,
    DeviceEntry,
    For,
    Function,
    GlobalVar,
    IfThenElse,
    Let,
    Module,
    Op,
    PointerType,
    PrimType,
    Select,
    Var,
    VoidType,
    While,
)
from tirx.ir import op as _op
from tirx.ir.expr import NODE, SEQ
from tirx.passes._scoped import ScopedRewriter
from tirx.passes._util import flatten, render_diagnostic
from tirx.passes.infra import ModulePass

__all__ = ["InferPointerTypes"]

# ops are recognised by their declared traits (tirx/ir/op.py ``Traits``): ``takes_address``,
# ``bitcast``, ``atomic`` (pointer argument), ``pointer_from`` (one source: same type as that
# argument) and ``select`` (the arms share one type).


def _one_source(tr: Any, args: Any) -> bool:
    """The op's result is a pointer of the same type as its one ``pointer_from`` argument."""
    if len(tr.pointer_from) != 1:
        return False
    i = tr.pointer_from[0]
    return i < len(args) and isinstance(args[i].ty, PointerType)


def _is_void_ptr(t: Any) -> bool:
    return isinstance(t, PointerType) and isinstance(t.element, VoidType)


class _Class:
    __slots__ = ("fixed", "members", "uses")

    def __init__(self) -> None:
        self.members: list[Var] = []
        self.fixed: list[tuple[PointerType, Any]] = []
        self.uses: list[tuple[Any, str | None, Any, bool]] = []  # (element, scope, span, explicit)


class _Analysis:
    def __init__(self, frozen_params: bool) -> None:
        self.parent: dict[Var, Var] = {}
        self.frozen_params = frozen_params
        self.extra_fixed: list[tuple[Var, PointerType, Any]] = []
        self.extra_uses: list[tuple[Var, Any, str | None, Any, bool]] = []
        self.span: Any = None

    # union-find over pointer vars
    def add(self, v: Var) -> None:
        if v not in self.parent:
            self.parent[v] = v

    def find(self, v: Var) -> Var:
        self.add(v)
        root = v
        while self.parent[root] is not root:
            root = self.parent[root]
        while self.parent[v] is not root:
            self.parent[v], v = root, self.parent[v]
        return root

    def union(self, a: Var, b: Var) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[rb] = ra

    # source of an expression's pointer type: ("var", v) | ("fixed", T) | None
    def src(self, e: Any) -> Any:
        if not isinstance(e.ty, PointerType):
            return None
        if type(e) is Var:
            return ("var", e)
        if type(e) is Call and isinstance(e.op, Op):
            tr = e.op.traits
            if tr.takes_address and e.args and isinstance(e.args[0], BufferLoad):
                b = e.args[0].buffer
                return ("fixed", PointerType(b.dtype, b.scope))
            if _one_source(tr, e.args):
                return self.src(e.args[tr.pointer_from[0]])
            if tr.select and len(e.args) == 3:
                return self._join(self.src(e.args[1]), self.src(e.args[2]))
            if not _is_void_ptr(e.ty):
                return ("fixed", e.ty)
            return None
        if type(e) is Select:
            return self._join(self.src(e.true_value), self.src(e.false_value))
        if not _is_void_ptr(e.ty):
            return ("fixed", e.ty)
        return None

    def _join(self, a: Any, b: Any) -> Any:
        if a is not None and b is not None and a[0] == "var" and b[0] == "var":
            self.union(a[1], b[1])
            return a
        if a is not None and a[0] == "var" and b is not None:
            self.extra_fixed.append((a[1], b[1], self.span))
            return a
        if b is not None and b[0] == "var" and a is not None:
            self.extra_fixed.append((b[1], a[1], self.span))
            return b
        return a or b

    def bind(self, v: Var, e: Any) -> None:
        if not isinstance(v.ty, PointerType):
            return
        self.add(v)
        s = self.src(e)
        if s is None:
            return
        if s[0] == "var":
            self.union(v, s[1])
        else:
            self.extra_fixed.append((v, s[1], self.span))

    def use(self, e: Any, element: Any, scope: str | None, explicit: bool = False) -> None:
        s = self.src(e)
        if s is not None and s[0] == "var":
            self.extra_uses.append((s[1], element, scope, self.span, explicit))

    # walk
    def expr(self, e: Any) -> None:
        t = type(e)
        if t is Var:
            if isinstance(e.ty, PointerType):
                self.add(e)
            return
        if t is Call and isinstance(e.op, Op):
            tr = e.op.traits
            if tr.bitcast and e.args and isinstance(e.ty, PointerType):
                if isinstance(e.args[0].ty, PointerType) and not _is_void_ptr(e.ty):
                    self.use(e.args[0], e.ty.element, e.ty.scope, explicit=True)
            elif tr.atomic is not None and len(e.args) >= tr.atomic + 2:
                self.use(e.args[tr.atomic], e.args[tr.atomic + 1].ty, None)
            elif tr.pointer_from:
                self.src(e)
        elif t is Select:
            self.src(e)
        elif t is Let:
            self.bind(e.var, e.value)
        for name, kind in t._sfields:
            if kind is NODE:
                v = getattr(e, name)
                if v is not None:
                    self.expr(v)
            elif kind is SEQ:
                for x in getattr(e, name):
                    self.expr(x)

    def stmts(self, body: Any) -> None:
        for s in flatten(body):
            self.stmt(s)

    def stmt(self, s: Any) -> None:
        saved = self.span
        if s.span is not None:
            self.span = s.span
        t = type(s)
        if t is Bind:
            self.expr(s.value)
            self.bind(s.var, s.value)
        elif t is DeclBuffer:
            b = s.buffer
            self.add(b.data)
            for e in (*b.shape, *b.strides):
                self.expr(e)
            self.extra_uses.append((b.data, b.dtype, None, self.span, False))
        elif t is AllocBuffer:
            self.add(s.buffer.data)
        else:
            for name, kind in t._sfields:
                v = getattr(s, name)
                if kind is NODE and v is not None:
                    if name in ("body", "then_case", "else_case"):
                        self.stmts(v)
                    else:
                        self.expr(v)
                elif kind is SEQ:
                    for x in v:
                        self.expr(x)
        self.span = saved

    def function(self, f: Function) -> None:
        self.span = f.span
        for p in f.params:
            if isinstance(p.ty, PointerType):
                self.add(p)
                if self.frozen_params and _is_void_ptr(p.ty):
                    self.extra_fixed.append((p, p.ty, f.span))
        for pv, b in f.buffer_map:
            self.extra_uses.append((pv, b.dtype, None, b.span or f.span, False))
        self.stmts(f.body)

    # solve
    def solve(self) -> dict[Var, PointerType]:
        classes: dict[Var, _Class] = {}
        for v in self.parent:
            c = classes.setdefault(self.find(v), _Class())
            c.members.append(v)
            ty = v.ty
            assert isinstance(ty, PointerType)  # only pointer vars are added
            if not _is_void_ptr(ty):
                c.fixed.append((ty, v.span))
        for v, ty, span in self.extra_fixed:
            classes.setdefault(self.find(v), _Class()).fixed.append((ty, span))
        for v, el, scope, span, explicit in self.extra_uses:
            classes.setdefault(self.find(v), _Class()).uses.append((el, scope, span, explicit))
        out: dict[Var, PointerType] = {}
        errors: list[tuple[str, Any]] = []
        for c in classes.values():
            target = None
            fixed: dict[PointerType, Any] = {}
            for ty, span in c.fixed:
                fixed.setdefault(ty, span)
            names = ", ".join(sorted({m.name for m in c.members}))
            if len(fixed) > 1:
                (t1, s1), (t2, s2) = list(fixed.items())[:2]
                errors.append((f"pointer {names} has conflicting types {t1} and {t2}", s1))
                errors.append((f"pointer {names} is used as {t2} here", s2))
                continue
            if fixed:
                target = next(iter(fixed))
                if _is_void_ptr(target):
                    continue
            else:
                # implicit uses (buffers declared over it, atomics) decide; explicit
                # reinterprets only narrow when there is no implicit use and they agree
                implicit = [u for u in c.uses if not u[3]]
                uses = implicit or c.uses
                elems: dict[Any, tuple[str | None, Any]] = {}
                for el, scope, span, _ in uses:
                    if el not in elems:
                        elems[el] = (scope, span)
                if len(elems) > 1 and not implicit:
                    continue
                if len(elems) > 1:
                    (e1, (_, s1)), (e2, (_, s2)) = list(elems.items())[:2]
                    errors.append(
                        (f"pointer {names} is used with conflicting element types {e1} and {e2}", s1)
                    )
                    errors.append((f"pointer {names} is used as {e2} here", s2))
                    continue
                if not elems:
                    continue
                el = next(iter(elems))
                scopes = {sc for _, sc, _, _ in uses if sc is not None}
                first = c.members[0].ty
                assert isinstance(first, PointerType)  # only pointer vars are added
                scope = next(iter(scopes)) if len(scopes) == 1 else first.scope
                target = PointerType(el, scope)
            for m in c.members:
                if m.ty != target:
                    out[m] = target
        if errors:
            text = "\n".join(render_diagnostic(m, s) for m, s in errors)
            err = DiagnosticError(errors[0][0], errors[0][1], text)
            err.spans = [s for _, s in errors]  # type: ignore[attr-defined]  # an extra attribute of this error only
            raise err
        return out


class _Rewrite(ScopedRewriter):
    def define_var(self, v: Var, node: Any) -> Var:
        return self.vmap.get(v, v)

    def expr_Call(self, e: Call) -> Any:
        args = self.exprs(e.args)
        ty = e.ty
        op = e.op
        if isinstance(op, Op):
            tr = op.traits
            if tr.takes_address and args and isinstance(args[0], BufferLoad):
                b = args[0].buffer
                ty = PointerType(b.dtype, b.scope)
            elif _one_source(tr, args):
                ty = args[tr.pointer_from[0]].ty
            elif tr.select and len(args) == 3 and isinstance(ty, PointerType):
                ty = args[1].ty
        if args is e.args and ty == e.ty:
            return e
        return Call(op, args, ty, span=e.span)

    def expr_Select(self, e: Select) -> Any:
        c, a, b = self.expr(e.cond), self.expr(e.true_value), self.expr(e.false_value)
        if c is e.cond and a is e.true_value and b is e.false_value:
            return e
        return Select(c, a, b, span=e.span)

    def _fit(self, value: Any, ty: Any) -> Any:
        if value.ty == ty:
            return value
        if type(value) is Call and isinstance(value.op, Op) and value.op.traits.bitcast:
            return Call(value.op, value.args, ty, span=value.span)
        return Call(_op.find(bitcast=True), (value,), ty, span=value.span)

    def stmt_Bind(self, s: Bind) -> Any:
        value = self.expr(s.value)
        var = self.vmap.get(s.var, s.var)
        value = self._fit(value, var.ty)
        if value is s.value and var is s.var:
            return s
        return Bind(var, value, span=s.span)

    def expr_Let(self, e: Let) -> Any:
        value = self.expr(e.value)
        var = self.vmap.get(e.var, e.var)
        value = self._fit(value, var.ty)
        body = self.expr(e.body)
        if value is e.value and var is e.var and body is e.body:
            return e
        return Let(var, value, body, span=e.span)


def _called(mod: Module) -> set[str]:
    names: set[str] = set()
    from tirx.ir import post_order

    for f in mod.functions:
        for n in post_order(f.body):
            if type(n) is Call and isinstance(n.op, GlobalVar):
                names.add(n.op.name)
    return names


class InferPointerTypes(ModulePass):
    """Narrow every pointer var to its most precise ``PointerType``; see the module doc."""

    def transform_module(self, mod: Module) -> Module:
        called = _called(mod) if len(mod.functions) > 1 else set()
        new = []
        for f in mod.functions:
            a = _Analysis(frozen_params=f.name in called)
            a.function(f)
            m = a.solve()
            if not m:
                new.append(f)
                continue
            rw = _Rewrite()
            for v, ty in m.items():
                rw.vmap[v] = Var(v.name, ty, span=v.span)
            new.append(rw.function(f))
        if all(a is b for a, b in zip(new, mod.functions)):
            return mod
        return Module(tuple(new), mod.attrs, mod.name, span=mod.span)


_ = (AttrStmt, BufferStore, DeviceEntry, For, IfThenElse, While, PrimType)
