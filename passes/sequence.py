"""SequenceEffects: side effects in one statement happen in the order the interpreter runs them.

C leaves the order of two operands unspecified, so ``O[0] = atomic_add(C, 1) + atomic_add(C, 1)
* 10``, ``C[0] + f()`` where ``f`` stores to ``C`` or ``O[atomic_add(...)] = g()`` may run in
either order on the GPU, where the interpreter (and Python, which the script reads as) runs
them left to right, a store's value before its indices. Where one statement evaluates two
memory accesses side by side and one of them has a side effect (an impure op, a call of a module
function), this pass binds all but the last to fresh names before the statement, in that
order; nested operands are sequenced the same way. An element passed straight to an op with
effects stays its operand (it may be an asm in-out register). Operands evaluated only conditionally (the
arms of a select or ``if_then_else``, the right side of ``and`` / ``or``, a ``Let``'s body) stay
where they are, as one access, and are sequenced inside: their bindings become ``Let``
expressions there (the CUDA evaluates a ``Let``'s value before its body). A statement with at most one access, or with reads only, is unchanged, so the
usual kernel keeps its text. The CUDA pipeline runs it before codegen (``tirx/pipeline.py``).
"""

from __future__ import annotations

from typing import Any

from tirx.ir import (
    And,
    Assert,
    Bind,
    BufferLoad,
    BufferStore,
    Call,
    Evaluate,
    Function,
    IfThenElse,
    Let,
    Module,
    Or,
    PrimExpr,
    Return,
    Select,
    SeqStmt,
    Var,
    deep,
)
from tirx.ir.expr import NODE, SEQ
from tirx.ir.op import Op
from tirx.ir.visitor import Mutator, post_order
from tirx.passes._util import call_has_effect, has_side_effects
from tirx.passes.infra import FunctionPass

__all__ = ["SequenceEffects", "sequence_effects"]


def _has_effect(e: Any) -> bool:
    """Whether evaluating ``e`` has a side effect other than a warp collective's (which writes
    no memory): ``has_side_effects`` without collectives."""
    return has_side_effects(e, collectives=False)


def _effect(e: Any) -> bool:
    """A call with such an effect itself (not only in its arguments)."""
    return type(e) is Call and call_has_effect(e, collectives=False)


def _lazy_parts(e: Any) -> tuple:
    """The operands of ``e`` evaluated only conditionally, or in a scope of their own (a
    ``Let``'s body): they stay inside ``e``."""
    t = type(e)
    if t is Select:
        return (e.true_value, e.false_value)
    if t is And or t is Or:
        return (e.b,)
    if t is Let:
        return (e.body,)
    if t is Call and isinstance(e.op, Op) and e.op.traits.lazy_args:
        return tuple(e.args[i] for i in e.op.traits.lazy_args if i < len(e.args))
    return ()


def _children(e: Any) -> list[tuple[str, int, int, Any]]:
    """The operands of ``e`` in evaluation order, as ``(field, index, sub, node)`` (index -1: a
    single-node field; sub >= 0: index ``sub`` of the element at that argument). An element an
    op takes the address of, or an element argument of an op with effects (an asm operand it
    may write, ``"+f"``), is not read there: its indices are the operands."""
    out: list[tuple[str, int, int, Any]] = []
    call = type(e) is Call and isinstance(e.op, Op)
    addr = call and e.op.traits.takes_address
    place = call and not e.op.pure
    for name, kind in type(e)._sfields:
        v = getattr(e, name)
        if kind is NODE and isinstance(v, PrimExpr):
            out.append((name, -1, -1, v))
        elif kind is SEQ:
            for i, x in enumerate(v):
                if not isinstance(x, PrimExpr):
                    continue
                if type(x) is BufferLoad and name == "args" and (place or (addr and i == 0)):
                    out.extend((name, i, j, y) for j, y in enumerate(x.indices))
                else:
                    out.append((name, i, -1, x))
    return out


def _touches(e: Any) -> bool:
    return any(type(n) is BufferLoad or _effect(n) for n in post_order(e))


def _is_access(e: Any) -> bool:
    """Whether ``e`` is one access: a load, a call with an effect, or a node whose conditional
    operands access memory (kept whole)."""
    if type(e) is BufferLoad or _effect(e):
        return True
    return any(_touches(p) for p in _lazy_parts(e))


def _accesses(roots: list, out: list) -> None:
    """The outermost accesses under ``roots``, in evaluation order."""
    for r in roots:
        if _is_access(r):
            out.append(r)
        else:
            _accesses([k[3] for k in _children(r)], out)


def _rebuild(e: Any, kids: list[tuple[str, int, int, Any]], new: list) -> Any:
    if all(k[3] is n for k, n in zip(kids, new)):
        return e
    changes: dict[str, Any] = {}
    elems: dict[int, list] = {}  # argument position -> the element's new indices
    for (name, i, j, _), nv in zip(kids, new):
        if j >= 0:
            elems.setdefault(i, list(getattr(e, name)[i].indices))[j] = nv
        elif i < 0:
            changes[name] = nv
        else:
            changes.setdefault(name, list(getattr(e, name)))[i] = nv
    if elems:
        args = changes.setdefault("args", list(e.args))
        for i, idx in elems.items():
            args[i] = args[i].replace(indices=tuple(idx))
    return e.replace(**{k: tuple(v) if isinstance(v, list) else v for k, v in changes.items()})


def _substitute(roots: list, repl: list) -> list:
    """``roots`` with their outermost accesses (as ``_accesses`` lists them) replaced by
    ``repl``, consumed in order."""
    it = iter(repl)

    def go(e: Any) -> Any:
        if _is_access(e):
            return next(it)
        kids = _children(e)
        return _rebuild(e, kids, [go(k[3]) for k in kids])

    return [go(r) for r in roots]


class _Sequencer:
    def __init__(self, f: Function) -> None:
        self.f = f
        self.taken: set[str] | None = None  # the function's names, read at the first binding
        self.k = 0

    def fresh(self, ty: Any) -> Var:
        if self.taken is None:
            self.taken = {v.name for v in post_order(self.f) if type(v) is Var}
        while True:
            self.k += 1
            name = f"seq_v{self.k}"
            if name not in self.taken:
                self.taken.add(name)
                return Var(name, ty)

    def roots(self, roots: list) -> tuple[list, list]:
        """(bindings to place before, the roots rewritten)."""
        if not any(_has_effect(r) for r in roots):
            return [], roots  # the usual statement: nothing to order
        acc: list = []
        _accesses(roots, acc)
        if not any(_has_effect(a) for a in acc):
            return [], roots  # reads only (or nothing): any order gives the same values
        binds: list = []
        new: list = []
        for j, a in enumerate(acc):
            inner, a2 = self.inside(a)
            binds += inner
            if j < len(acc) - 1:  # all but the last access: bound before the statement
                v = self.fresh(a2.ty)
                binds.append(Bind(v, a2, span=getattr(a, "span", None)))
                new.append(v)
            else:
                new.append(a2)
        if not binds and all(x is y for x, y in zip(acc, new)):
            return [], roots
        return binds, _substitute(roots, new)

    def inside(self, a: Any) -> tuple[list, Any]:
        """Sequence the operands of one access. A lazy node's operands evaluated first (a
        select's condition, the left side of ``and``) are sequenced as any; each conditional
        operand is sequenced on its own, its bindings kept inside it as ``Let`` expressions
        (evaluated only where it is, in order: C sees one value, then the rest)."""
        kids = _children(a)
        lazy = {id(x) for x in _lazy_parts(a)}
        if not lazy:
            binds, new = self.roots([k[3] for k in kids])
            return binds, _rebuild(a, kids, new)
        eager = [k for k in kids if id(k[3]) not in lazy]
        binds, new_eager = self.roots([k[3] for k in eager])
        it = iter(new_eager)
        new = [self.lazy(k[3]) if id(k[3]) in lazy else next(it) for k in kids]
        return binds, _rebuild(a, kids, new)

    def lazy(self, e: Any) -> Any:
        """A conditional operand with its own accesses sequenced: ``Let(v, first, ... rest)``."""
        binds, new = self.roots([e])
        out = new[0]
        for b in reversed(binds):
            out = Let(b.var, b.value, out, span=getattr(b, "span", None))
        return out


class _Stmts(Mutator):
    def __init__(self, seq: _Sequencer) -> None:
        super().__init__()
        self.seq = seq

    def _wrap(self, binds: list, s: Any) -> Any:
        return SeqStmt((*binds, s)) if binds else s

    def visit_BufferStore(self, s: BufferStore) -> Any:
        roots = [s.value, *s.indices]
        binds, new = self.seq.roots(roots)
        if new is roots:
            return s
        return self._wrap(binds, s.replace(value=new[0], indices=tuple(new[1:])))

    def _one(self, s: Any, field: str) -> Any:
        """A statement evaluating one expression (``field``): its bindings go before it."""
        v = getattr(s, field)
        if v is None:
            return s
        binds, new = self.seq.roots([v])
        return s if new[0] is v else self._wrap(binds, s.replace(**{field: new[0]}))

    def visit_Bind(self, s: Bind) -> Any:
        return self._one(s, "value")

    def visit_Evaluate(self, s: Evaluate) -> Any:
        return self._one(s, "value")

    def visit_Return(self, s: Return) -> Any:
        return self._one(s, "value")

    def visit_Assert(self, s: Assert) -> Any:
        return self._one(s, "cond")

    def visit_IfThenElse(self, s: IfThenElse) -> Any:
        return self._one(self.generic_visit(s), "cond")


def sequence_effects(f: Function) -> Function:
    """``f`` with each statement's side effects ordered as the interpreter runs them."""
    def run(f: Function) -> Function:
        return _Stmts(_Sequencer(f)).visit(f)

    return deep.call(run, f)  # a traversal: deep IR retries on the large-stack thread


class SequenceEffects(FunctionPass):
    """Bind side effects that share a statement to names, in evaluation order (see module)."""

    def transform_function(self, func: Function, mod: Module | None) -> Function:
        return sequence_effects(func)
