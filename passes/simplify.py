"""Simplify: exact constant folding, integer identities, dead branches, trivial loops.

Expressions (bottom-up):

- integer constants fold with the dtype's exact semantics: results wrap around
  (two's complement for signed, modulo 2**bits for unsigned); ``Div`` / ``Mod`` truncate
  toward zero (C), ``FloorDiv`` / ``FloorMod`` round toward minus infinity (Python);
  division by zero and out-of-range shifts are left alone;
- float constants (every float dtype) fold bit for bit as the program computes them: each
  operand rounded to its dtype first, the operation in the dtype's arithmetic, casts exact
  (int64 -> float32 rounds once), all through ``tirx.ir.numerics``, the interpreter's own
  rules; one operation at a time (floats are never reassociated); a NaN result is not
  folded, nor min/max of a NaN or a zero;
- identities for integers: ``x*1``, ``x+0``, ``x-0``, ``x//1``, ``x-x`` → 0, ``x*0`` → 0,
  ``x%1`` → 0, ``min(x, x)``, comparisons of ``x`` with itself, ``(x + c1) + c2`` →
  ``x + (c1+c2)`` (exact under wraparound). An operand is only dropped when it has no
  side effects;
- ``min`` / ``max`` / comparisons / logic / casts of constants, ``not not x``,
  ``Select`` and ``if_then_else`` with a constant condition.

Statements: ``if`` with a constant condition keeps the taken branch; ``while False`` and
loops of constant extent <= 0 disappear; a loop of extent 1 becomes its body (the loop var
replaced by the start, or bound to it); ``assert True`` disappears. A branch or loop body is
spliced into the enclosing body only when that cannot change which definition a name
refers to (everything it defines is defined once in the function) and, for loops, when it
has no ``break`` / ``continue`` of its own left after its own simplification (so a second
run has nothing more to do). Thread-bound and annotated loops are kept.
"""

from __future__ import annotations

from typing import Any

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
    BitOr,
    BitXor,
    Break,
    Call,
    Cast,
    Continue,
    DeclBuffer,
    DeviceEntry,
    Div,
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
    Not,
    Op,
    Or,
    PrimType,
    RegionStmt,
    Select,
    SeqStmt,
    Shl,
    Shr,
    Sub,
    Var,
    While,
    structural_equal,
)
from tirx.ir.arith import trunc_div, trunc_mod
from tirx.ir.arith import wrap as _wrap
from tirx.ir.expr import NODE, SEQ, BinaryOp
from tirx.ir.functor import Dispatch, Functor
from tirx.passes._scoped import ScopedRewriter
from tirx.passes._util import flatten, has_side_effects, make_body
from tirx.passes.infra import FunctionPass

__all__ = ["Simplify", "fold_expr"]


def _numerics() -> Any:
    """tirx.ir.numerics (the dtypes' values, in numpy), imported on first use: loading text
    imports this module (through the verifier) and must not pay numpy's import time."""
    from tirx.ir import numerics

    return numerics


_EMPTY = SeqStmt(())


def _int_scalar(t: Any) -> bool:
    return isinstance(t, PrimType) and t.is_int and t.lanes == 1


def _fold_int(cls: type, a: int, b: int, t: PrimType) -> int | None:
    if cls is Add:
        return _wrap(a + b, t)
    if cls is Sub:
        return _wrap(a - b, t)
    if cls is Mul:
        return _wrap(a * b, t)
    if cls is Div or cls is Mod:
        if b == 0:
            return None
        return _wrap(trunc_div(a, b) if cls is Div else trunc_mod(a, b), t)
    if cls is FloorDiv:
        return None if b == 0 else _wrap(a // b, t)
    if cls is FloorMod:
        return None if b == 0 else _wrap(a % b, t)
    if cls is Min:
        return min(a, b)
    if cls is Max:
        return max(a, b)
    if cls is BitAnd:
        return _wrap(a & b, t)
    if cls is BitOr:
        return _wrap(a | b, t)
    if cls is BitXor:
        return _wrap(a ^ b, t)
    if cls is Shl:
        return _wrap(a << b, t) if 0 <= b < t.bits else None
    if cls is Shr:
        return _wrap(a >> b, t) if 0 <= b < t.bits else None
    return None


#: the float ops tirx.ir.numerics folds, by node class
_FLOAT_OPS = {Add: "add", Sub: "sub", Mul: "mul", Div: "div", Min: "min", Max: "max"}
_CMP_NAMES = {EQ: "eq", NE: "ne", LT: "lt", LE: "le", GT: "gt", GE: "ge"}
_CMP = {
    EQ: lambda a, b: a == b,
    NE: lambda a, b: a != b,
    LT: lambda a, b: a < b,
    LE: lambda a, b: a <= b,
    GT: lambda a, b: a > b,
    GE: lambda a, b: a >= b,
}
# x OP x for integers
_CMP_SELF = {EQ: True, NE: False, LT: False, LE: True, GT: False, GE: True}


def _nan_or_zero(a: float, b: float, r: float) -> bool:
    """A min/max kept unfolded: a NaN operand or a zero result (which zero, and whether a NaN
    is ignored, is where min/max instructions differ: fminf, __hmin, __hmin_nan)."""
    return a != a or b != b or r == 0


def _bool(v: bool, like: Any) -> IntImm:
    return IntImm(
        int(bool(v)), like.ty if isinstance(like.ty, PrimType) and like.ty.is_bool else PrimType("bool")
    )


def _pure(e: Any) -> bool:
    return not has_side_effects(e)


def fold_expr(e: Any) -> Any:
    """Simplify one node whose children are already simplified."""
    t = type(e)
    if isinstance(e, BinaryOp):
        return _fold_binary(e, t)
    if t is Not:
        a = e.a
        if type(a) is IntImm:
            return IntImm(1 - a.value, e.ty, span=e.span)
        if type(a) is Not:
            return a.a
        return e
    if t is Select:
        c = e.cond
        if type(c) is IntImm:
            keep, drop = (e.true_value, e.false_value) if c.value else (e.false_value, e.true_value)
            if _pure(drop):
                return keep
        return e
    if t is Call and isinstance(e.op, Op) and e.op.traits.select:
        c = e.args[0]
        if type(c) is IntImm:
            return e.args[1] if c.value else e.args[2]
        return e
    if t is Cast:
        return _fold_cast(e)
    return e


def _fold_cast(e: Cast) -> Any:
    v, t = e.value, e.ty
    if v.ty == t:
        return v
    if not isinstance(t, PrimType) or t.lanes != 1:
        return e
    if type(v) is IntImm and not t.is_float:
        if t.is_bool:
            return IntImm(int(v.value != 0), t, span=e.span)
        if t.is_int:
            return IntImm(_wrap(v.value, t), t, span=e.span)
        return e
    if type(v) is IntImm or type(v) is FloatImm:
        # through a float: the operand rounded to its dtype, converted as the program does
        r = _numerics().fold_cast(v.value, v.ty, t)
        if r is None:
            return e
        return FloatImm(r, t, span=e.span) if t.is_float else IntImm(r, t, span=e.span)
    return e


def _fold_binary(e: Any, cls: type) -> Any:
    a, b = e.a, e.b
    ta, tb = type(a), type(b)
    ty = a.ty
    # logic
    if cls is And or cls is Or:
        _short, ident = (0, 1) if cls is And else (1, 0)
        if ta is IntImm:
            return b if a.value == ident else a
        if tb is IntImm:
            if b.value == ident:
                return a
            if _pure(a):
                return b
        return e
    if cls in _CMP:
        if ta is IntImm and tb is IntImm:
            return _bool(_CMP[cls](a.value, b.value), e)
        if ta is FloatImm and tb is FloatImm and a.ty == b.ty:
            r = _numerics().fold_compare(_CMP_NAMES[cls], a.value, b.value, ty)
            return e if r is None else _bool(r, e)
        if _int_scalar(ty) and structural_equal(a, b) and _pure(a):
            return _bool(_CMP_SELF[cls], e)
        return e
    if ta is IntImm and tb is IntImm and _int_scalar(ty):
        r = _fold_int(cls, a.value, b.value, ty)
        return e if r is None else IntImm(r, ty, span=e.span)
    if ta is FloatImm and tb is FloatImm:
        op = _FLOAT_OPS.get(cls)
        if op is None or a.ty != b.ty:
            return e
        rf = _numerics().fold_float_op(op, a.value, b.value, ty)
        if rf is None or (op in ("min", "max") and _nan_or_zero(a.value, b.value, rf)):
            return e
        return FloatImm(rf, ty, span=e.span)
    if not _int_scalar(ty):
        return e
    # integer identities
    if cls is Add:
        if tb is IntImm and b.value == 0:
            return a
        if ta is IntImm and a.value == 0:
            return b
        if tb is IntImm and type(a) is Add and type(a.b) is IntImm:
            c = _wrap(a.b.value + b.value, ty)
            inner = a.a
            return inner if c == 0 else Add(inner, IntImm(c, ty), ty, span=e.span)
    elif cls is Sub:
        if tb is IntImm and b.value == 0:
            return a
        if structural_equal(a, b) and _pure(a):
            return IntImm(0, ty, span=e.span)
    elif cls is Mul:
        if tb is IntImm and b.value == 1:
            return a
        if ta is IntImm and a.value == 1:
            return b
        if tb is IntImm and b.value == 0 and _pure(a):
            return b
        if ta is IntImm and a.value == 0 and _pure(b):
            return a
    elif cls in (Div, FloorDiv):
        if tb is IntImm and b.value == 1:
            return a
    elif cls in (Mod, FloorMod):
        if tb is IntImm and b.value == 1 and _pure(a):
            return IntImm(0, ty, span=e.span)
    elif cls in (Min, Max):
        if structural_equal(a, b) and _pure(a):
            return a
    elif cls in (Shl, Shr) and tb is IntImm and b.value == 0:
        return a
    return e


def _has_own_loop_control(s: Any) -> bool:
    """A break/continue in ``s`` that is not inside a nested loop or device entry."""
    stack = [s]
    while stack:
        n = stack.pop()
        t = type(n)
        if t is Break or t is Continue:
            return True
        if t in (For, While, DeviceEntry):
            continue
        if t is SeqStmt:
            stack.extend(n.stmts)
        elif t is IfThenElse:
            stack.append(n.then_case)
            if n.else_case is not None:
                stack.append(n.else_case)
        elif t is AttrStmt or t is RegionStmt:
            stack.append(n.body)
    return False


class _DefCount(Functor):
    """How many times each var / buffer is defined in a function: ``def_<Class>`` counts
    what a statement of that class defines (no method: nothing)."""

    _def_table = Dispatch("def_")

    def __init__(self) -> None:
        self.count: dict[Any, int] = {}

    def add(self, v: Any) -> None:
        self.count[v] = self.count.get(v, 0) + 1

    def walk_expr(self, e: Any) -> None:
        stack = [e]
        while stack:
            n = stack.pop()
            if type(n) is Let:
                self.add(n.var)
            for name, kind in type(n)._sfields:
                if kind is NODE:
                    v = getattr(n, name)
                    if v is not None:
                        stack.append(v)
                elif kind is SEQ:
                    stack.extend(getattr(n, name))

    def walk(self, s: Any) -> None:
        stack = [s]
        table = self._def_table
        while stack:
            n = stack.pop()
            t = type(n)
            if t is SeqStmt:
                stack.extend(n.stmts)
                continue
            fn = table[t]
            if fn is not None:
                fn(self, n)
            for name, kind in t._sfields:
                v = getattr(n, name)
                if kind is NODE and v is not None:
                    if name in ("body", "then_case", "else_case"):
                        stack.append(v)
                    else:
                        self.walk_expr(v)
                elif kind is SEQ:
                    for x in v:
                        self.walk_expr(x)

    def def_Bind(self, n: Bind) -> None:
        self.add(n.var)

    def def_For(self, n: For) -> None:
        self.add(n.var)

    def def_AllocBuffer(self, n: AllocBuffer) -> None:
        self.add(n.buffer.data)
        self.add(n.buffer)

    def def_DeclBuffer(self, n: DeclBuffer) -> None:
        self.add(n.buffer)


class _Simplify(ScopedRewriter):
    def __init__(self, counts: dict) -> None:
        super().__init__()
        self.counts = counts

    def expr(self, e: Any) -> Any:
        ne = super().expr(e)
        return fold_expr(ne)

    def _spliceable(self, body: Any) -> bool:
        for s in flatten(body):
            if type(s) is Bind:
                if self.counts.get(s.var, 0) > 1:
                    return False
            elif type(s) is AllocBuffer:
                if self.counts.get(s.buffer.data, 0) > 1 or self.counts.get(s.buffer, 0) > 1:
                    return False
            elif type(s) is DeclBuffer and self.counts.get(s.buffer, 0) > 1:
                return False
        return True

    def stmt_SeqStmt(self, s: SeqStmt) -> Any:
        out = None
        for i, x in enumerate(s.stmts):
            nx = self.stmt(x)
            if nx is not x and out is None:
                out = list(s.stmts[:i])
            if out is not None:
                out.extend(flatten(nx))
        if out is None:
            return s
        return make_body(out) if out else _EMPTY

    def stmt_IfThenElse(self, s: IfThenElse) -> Any:
        cond = self.expr(s.cond)
        if type(cond) is IntImm:
            taken = s.then_case if cond.value else s.else_case
            if taken is None:
                return _EMPTY
            if self._spliceable(taken):
                return self.body(taken)
        then = self.body(s.then_case)
        els = self.body(s.else_case)
        if cond is s.cond and then is s.then_case and els is s.else_case:
            return s
        return IfThenElse(cond, then, els, span=s.span)

    def stmt_While(self, s: Any) -> Any:
        cond = self.expr(s.cond)
        if type(cond) is IntImm and cond.value == 0:
            return _EMPTY
        body = self.body(s.body)
        if cond is s.cond and body is s.body:
            return s
        return While(cond, body, span=s.span)

    def stmt_Assert(self, s: Assert) -> Any:
        cond = self.expr(s.cond)
        if type(cond) is IntImm and cond.value == 1:
            return _EMPTY
        return s if cond is s.cond else s.replace(cond=cond)

    def stmt_For(self, s: For) -> Any:
        if s.kind is ForKind.THREAD_BINDING or len(s.annotations):
            return super().stmt_For(s)
        start = self.expr(s.start)
        extent = self.expr(s.extent)
        step = self.expr(s.step)  # a unit step is IntImm(1)
        step_ok = type(step) is IntImm and step.value > 0
        if type(extent) is IntImm and extent.value <= 0 and _pure(start):
            return _EMPTY  # never runs, whatever its step (the step is only added after a pass)
        if type(extent) is IntImm and step_ok:
            once = self.counts.get(s.var, 0) <= 1
            if extent.value == 1 and once and self._spliceable(s.body):
                # one iteration: the body in place of the loop, unless a break / continue of
                # this loop survives the body's own simplification (judged after it, so that a
                # second run finds nothing left to do: a dead `if 0: break` goes in this run)
                self.push()
                if type(start) is IntImm:
                    self.set_var(s.var, start)
                body = self.stmt(s.body)
                self.pop()
                if not _has_own_loop_control(body):
                    if type(start) is IntImm:
                        return body
                    return make_body([Bind(s.var, start, span=s.span), *flatten(body)])
        self.push()
        var = self.define_var(s.var, s)
        body = self.stmt(s.body)
        self.pop()
        if start is s.start and extent is s.extent and step is s.step and var is s.var and body is s.body:
            return s
        return s.replace(var=var, start=start, extent=extent, step=step, body=body)


class Simplify(FunctionPass):
    """Exact constant folding and dead-code removal; see the module doc."""

    def transform_function(self, func: Function, mod: Module | None) -> Function:
        # to a fixpoint: what one run removes (a dead loop re-defining an outer loop's
        # variable) can let a second splice more (that outer loop, now its variable's only
        # definition), and a pass run twice must find nothing left to do
        for _ in range(8):
            dc = _DefCount()
            for p in func.params:
                dc.add(p)
            dc.walk(func.body)
            out = _Simplify(dc.count).function(func)
            if out is func:
                break
            func = out
        return func


_ = (Var,)
