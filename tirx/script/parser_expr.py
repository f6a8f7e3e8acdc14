"""The expressions of the Python-AST frontend's :class:`~tirx.script.parser.Parser`
(``eval_<Expr>``: names, operators, comparisons, subscripts, comprehensions, calls), a mixin
of their own so that no class is over 600 lines (issue #30)."""

from __future__ import annotations

import ast
import itertools
from numbers import Number
from typing import TYPE_CHECKING, Any

import numpy as np

from tirx.surface.builder import IRBuilder
from tirx.surface.forms import LOOPS, RANGE
from tirx.surface.helpers import conjoin, lazy_select

from ..errors import DiagnosticError
from ..ir import (
    AllocBuffer,
    And,
    Buffer,
    BufferLoad,
    IntImm,
    Max,
    Min,
    Node,
    Not,
    PrimExpr,
    Var,
    convert,
)
from ..ir.expr import Or
from ..ir.fold import neg
from ..ir.stmt import ForKind
from .ir_names import TensorRegion
from .parser_values import (
    _BIN,
    _BOOL,
    _CMP,
    _FOLDING_HELPERS,
    _MEMBERSHIP,
    _NOT_IN,
    MAX_IN_VALUES,
    Cell,
    LetBinding,
    LoopSpec,
    MetaVar,
    _helper_name,
    _unwrap,
    apply_binop,
    bool_chain,
    constexpr,
    fold_new,
    no_tensor_truth,
)

if TYPE_CHECKING:
    from .parser import Parser


# a numpy number a kernel reads (captured, indexed, an attribute) is the Python number, as in
# TIRx (``np.int64(4)`` in an int32 expression is the literal 4); a set lookup on the exact
# type, as every name a kernel reads is checked
_NP_SCALAR_TYPES = frozenset(t for t in np.sctypeDict.values() if issubclass(t, (np.number, np.bool_)))


class ExprMixin:
    """``Parser``'s expressions; the dispatch (``eval``) stays in ``Parser``."""

    if TYPE_CHECKING:  # the rest of Parser (tirx/script/parser.py), for the type checker only
        b: IRBuilder
        cur_call: Any

        def span(self, node: Any) -> Any: ...
        def diag(self, node: Any, e: BaseException | str) -> DiagnosticError: ...
        def push(self) -> None: ...
        def pop(self) -> None: ...
        def define(self, name: str, value: Any) -> None: ...
        def lookup(self, name: str, node: Any) -> Any: ...
        def eval(self, node: Any) -> Any: ...
        def assign_target(self, t: Any, val: Any, meta: bool = False) -> None: ...

    def eval_unsupported(self, node: Any) -> Any:
        raise self.diag(node, f"unsupported expression in a kernel: {type(node).__name__}")

    def eval_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def eval_Name(self, node: ast.Name) -> Any:
        v = self.lookup(node.id, node)
        return v.item() if type(v) in _NP_SCALAR_TYPES else v

    def eval_Attribute(self, node: ast.Attribute) -> Any:
        obj = self.eval(node.value)
        if node.attr == "data" and type(obj) is Buffer and IRBuilder.is_active():
            return IRBuilder.current().name_data(obj)  # noted: a declaration over it keeps the tensor
        try:
            v = getattr(obj, node.attr)
            return v.item() if type(v) in _NP_SCALAR_TYPES else v
        except AttributeError:
            if getattr(type(obj), "__tirx_namespace__", False):
                raise  # its own message names what is allowed (T.ptx modifier chains)
            what = getattr(obj, "__name__", None) or type(obj).__name__
            raise AttributeError(f"{what} has no attribute {node.attr!r}") from None

    def _elts(self, elts: list) -> list:
        out = []
        for e in elts:
            if type(e) is ast.Starred:
                v = self.eval(e.value)
                if type(v) is MetaVar:
                    v = v.value
                if isinstance(v, PrimExpr):
                    raise self.diag(e, "cannot unpack a tirx expression with *")
                out.extend(v)
            else:
                out.append(self.eval(e))
        return out

    def eval_Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self._elts(node.elts))

    def eval_List(self, node: ast.List) -> Any:
        return self._elts(node.elts)

    def eval_Set(self, node: ast.Set) -> Any:
        return set(self._elts(node.elts))

    def eval_Dict(self, node: ast.Dict) -> Any:
        out: dict = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                out.update(self.eval(v))
            else:
                out[self.eval(k)] = self.eval(v)
        return out

    def eval_Slice(self, node: ast.Slice) -> Any:
        f = self.eval
        return slice(
            None if node.lower is None else f(node.lower),
            None if node.upper is None else f(node.upper),
            None if node.step is None else f(node.step),
        )

    def eval_Subscript(self, node: ast.Subscript) -> Any:
        obj = self.eval(node.value)
        idx = self.eval(node.slice)
        if isinstance(obj, Buffer):
            sp = self.span(node)
            if any(type(x) is slice for x in (idx if type(idx) is tuple else (idx,))):
                return TensorRegion.of(obj, idx if type(idx) is tuple else (idx,), sp)  # TIRx's region value
            return BufferLoad(obj, self.indices(obj, idx, sp), span=sp)
        if type(obj) is MetaVar:
            obj = obj.value
        v = obj[idx]
        return v.item() if type(v) in _NP_SCALAR_TYPES else v

    @staticmethod
    def indices(buf: Buffer, idx: Any, span: Any) -> tuple:
        """The index expressions of ``buf[idx]`` (also T.op's rule: parser_protocol.py)."""
        if type(idx) is not tuple:
            idx = (idx,)
        if len(idx) != len(buf.shape):
            raise IndexError(f"buffer {buf.name} has rank {len(buf.shape)}, got {len(idx)} indices")
        out = []
        for x in idx:
            t = type(x)
            if t is int or t is bool:
                x = convert(x)
                object.__setattr__(x, "span", span)
            elif t is Cell or t is MetaVar:
                x = convert(x)
            elif t is slice:
                raise TypeError(
                    f"buffer {buf.name}: a slice selects lanes only as a store target (A[s:e] = v); "
                    "in an expression write A[T.Ramp(s, 1, n)] (TIRx reads A[s:e] there as a region)"
                )
            elif not isinstance(x, PrimExpr):
                x = convert(x)
            out.append(x)
        return tuple(out)

    def eval_BinOp(self, node: ast.BinOp) -> Any:
        a = self.eval(node.left)
        b = self.eval(node.right)
        opcls, pyop = _BIN[type(node.op)]
        if (
            isinstance(a, PrimExpr)
            or isinstance(b, PrimExpr)
            or type(a) in (Cell, MetaVar)
            or type(b) in (Cell, MetaVar)
        ):
            return apply_binop(opcls, pyop, a, b, self.span(node))
        return pyop(a, b)

    def eval_UnaryOp(self, node: ast.UnaryOp) -> Any:
        a = self.eval(node.operand)
        op = type(node.op)
        if type(a) is MetaVar:
            a = a.value
        if isinstance(a, PrimExpr):
            sp = self.span(node)
            if op is ast.Not:
                return Not(a, span=sp)
            if op is ast.USub:
                return neg(a, sp)
            if op is ast.Invert:
                r = ~a
                return r.with_span(sp)
            return a
        if op is ast.Not:
            return not a
        if op is ast.USub:
            return -a
        if op is ast.Invert:
            return ~a
        return +a

    def eval_BoolOp(self, node: ast.BoolOp) -> Any:
        cls = _BOOL[type(node.op)]
        sp = self.span(node)
        pinned = {k for k, e in enumerate(node.values) if self.is_constexpr_call(e)}
        return bool_chain(
            (self.eval(e) for e in node.values),
            cls is And,
            lambda a, b: cls(a, b, span=sp),
            short_circuit=pinned.__contains__,
        )

    def check_meta_owned(self, node: ast.Call, cls: type, inst: Any, emitted: list) -> None:
        """A ``T.meta_class`` constructor's allocations must be reachable from the instance's
        fields (TIRx's rule: one no field holds is storage nothing can use); a field holding a
        view of the allocation (same storage) holds it."""
        made = [s.buffer for s in emitted if isinstance(s, AllocBuffer)]
        if not made:
            return
        owned: set[int] = set()
        seen: set[int] = set()
        todo = [inst]
        while todo:
            v = todo.pop()
            if id(v) in seen:
                continue
            seen.add(id(v))
            if isinstance(v, Buffer):
                owned.add(id(v.data))
            elif type(v) is Cell:
                owned.add(id(v.buffer.data))
            elif getattr(type(v), "__tirx_meta_class__", False):
                todo += list(vars(v).values())
            elif isinstance(v, (list, tuple)):
                todo += list(v)
            elif isinstance(v, dict):
                todo += list(v.values())
        lost = [b for b in made if id(b.data) not in owned]
        if lost:
            raise self.diag(
                node,
                f"T.meta_class {cls.__name__}: its constructor allocated a {lost[0].scope} tensor "
                f"({', '.join(str(d) for d in lost[0].shape)}) {lost[0].dtype} that no field of the "
                f"instance holds ({len(lost)} such); assign it to self.<field>",
            )

    def is_constexpr_call(self, e: ast.expr) -> bool:
        """Whether ``e`` is ``T.constexpr(...)`` (any name the ``T`` module is bound to): a
        host value TIRx's ``and`` / ``or`` short-circuits on."""
        if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "constexpr"):
            return False
        try:
            return self.eval(e.func) is constexpr
        except Exception:
            return False

    def eval_Compare(self, node: ast.Compare) -> Any:
        """``a < b``; a chain ``a < b < c`` with an IR value in it is TIRx's conjunction of every
        pair, Python-decided pairs included (``lo <= tx < 40 <= 64``: ``T.And(lo <= tx and
        tx < 40, T.bool(True))``); a chain of Python values is Python's."""
        left = self.eval(node.left)
        pairs: list = []
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp)
            opcls, pyop = _CMP[type(op)]
            members = self.members(left, right, comp) if opcls is None and pyop in _MEMBERSHIP else None
            if members is not None:
                r = self.membership(left, members, pyop is _NOT_IN, self.span(node))
            elif opcls is not None and (
                isinstance(left, (PrimExpr, Cell)) or isinstance(right, (PrimExpr, Cell))
            ):
                r = apply_binop(opcls, pyop, left, right, self.span(node))
            else:
                r = pyop(left, right)
            pairs.append(r)  # every operand is evaluated, as TIRx's chains evaluate them
            left = right
        if len(pairs) == 1:
            return pairs[0]
        if not any(isinstance(r, PrimExpr) for r in pairs):
            out = pairs[0]
            for r in pairs[1:]:
                out = out and r
            return out
        exprs = [r if isinstance(r, PrimExpr) else convert(bool(r)) for r in pairs]
        return conjoin(And, exprs, self.span(node))

    def members(self, left: Any, right: Any, comp: ast.expr) -> list | None:
        """The values ``left in right`` compares ``left`` with, when IR takes part (``left``
        is an IR value, or ``right`` a container holding one); None: plain Python ``in``.
        The right side must be a collection known while the kernel is built."""
        ir_left = isinstance(left, (PrimExpr, Cell)) or (
            type(left) is MetaVar and isinstance(left.value, PrimExpr)
        )
        if type(right) is MetaVar:
            right = right.value
        if isinstance(right, (Node, Cell)):
            if not ir_left and hasattr(type(right), "__contains__"):  # `"f" in module`
                return None
            kind = "buffer" if isinstance(right, Buffer) else "tirx expression"
            kind = kind if isinstance(right, (Buffer, PrimExpr, Cell)) else "tirx IR node"
            raise self.diag(
                comp,
                f"'in' needs values known while the kernel is built on its right (a tuple, list, "
                f"set or range), got a {kind} ({type(right).__name__}); a kernel cannot search one",
            )
        if isinstance(right, (str, bytes)):
            if ir_left:
                raise self.diag(
                    comp,
                    f"'in' on a tirx expression needs numbers on its right, got a {type(right).__name__}",
                )
            return None
        if not ir_left:  # IR only inside a builtin container (`3 in (x, 4)`); else plain Python
            if not isinstance(right, (tuple, list, set, frozenset, dict)):
                return None
            if not any(isinstance(e, (PrimExpr, Cell)) for e in right):
                return None
        if not hasattr(type(right), "__iter__"):
            raise self.diag(
                comp,
                f"'in' on a tirx expression needs a tuple, list, set or range of values known while "
                f"the kernel is built on its right, got {type(right).__name__}",
            )
        try:
            vals = list(itertools.islice(iter(right), MAX_IN_VALUES + 1))
        except Exception as e:  # e.g. a loop range with IR bounds
            raise self.diag(comp, e) from e
        if len(vals) > MAX_IN_VALUES:
            raise self.diag(
                comp,
                f"'in' on a tirx expression compares with at most {MAX_IN_VALUES} values (one "
                "'==' each); write a range test such as 'lo <= x < hi' instead",
            )
        for k, v in enumerate(vals):
            if type(v) is MetaVar:
                v = vals[k] = v.value
            if not (
                isinstance(v, (PrimExpr, Cell)) or (isinstance(v, Number) and not isinstance(v, complex))
            ):
                raise self.diag(
                    comp,
                    f"'in' on a tirx expression compares with numbers and tirx expressions; value "
                    f"{k} on its right is a {type(v).__name__}",
                )
        return vals

    def membership(self, left: Any, vals: list, negate: bool, span: Any) -> Any:
        """``x in (a, b)`` is ``x == a or x == b`` and ``x not in (a, b)`` is ``x != a and
        x != b``: exactly the IR of the spelled-out form (host values decide as Python does,
        IR builds ``Or`` / ``And`` of ``EQ`` / ``NE``). Empty: Python's answer."""
        opcls, pyop = _CMP[ast.NotEq if negate else ast.Eq]
        if type(left) is MetaVar:
            left = left.value

        def one(v: Any) -> Any:
            if isinstance(left, (PrimExpr, Cell)) or isinstance(v, (PrimExpr, Cell)):
                return apply_binop(opcls, pyop, left, v, span)
            return pyop(left, v)

        if not vals:
            return negate
        chain = And if negate else Or
        return bool_chain((one(v) for v in vals), negate, lambda a, b: chain(a, b, span=span))

    def eval_IfExp(self, node: ast.IfExp) -> Any:
        c = self.eval(node.test)
        if type(c) is Cell:
            c = c.load()
        if isinstance(c, PrimExpr) and type(c) is not IntImm:  # TIRx: T.if_then_else, both arms built
            a = self.eval(node.body)
            b = self.eval(node.orelse)
            return lazy_select(c, _unwrap(a), _unwrap(b), self.span(node))
        if type(c) is IntImm:
            c = bool(c.value)
        return self.eval(node.body) if no_tensor_truth(self, c, node.test) else self.eval(node.orelse)

    def eval_JoinedStr(self, node: ast.JoinedStr) -> Any:
        parts = []
        for v in node.values:
            if type(v) is ast.Constant:
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue):  # the only other kind of JoinedStr part
                x = self.eval(v.value)
                if v.conversion == ord("r"):
                    x = repr(x)
                elif v.conversion == ord("s"):
                    x = str(x)
                elif v.conversion == ord("a"):
                    x = ascii(x)
                spec = "" if v.format_spec is None else self.eval(v.format_spec)
                parts.append(format(x, spec))
        return "".join(parts)

    def eval_NamedExpr(self, node: ast.NamedExpr) -> Any:
        val = convert(self.eval(node.value))
        var = Var(node.target.id, val.ty, span=self.span(node.target))
        self.define(node.target.id, var)
        return LetBinding(var, val)

    def eval_Lambda(self, node: ast.Lambda) -> Any:
        return _Lambda(self, node)

    def _comprehension(self, node: Any, make: Any) -> Any:
        self.push()
        try:
            out: list = []

            def rec(k: int) -> None:
                if k == len(node.generators):
                    out.append(make())
                    return
                g = node.generators[k]
                for item in self.eval(g.iter):
                    self.assign_target(g.target, item, True)
                    if all(self.eval(c) for c in g.ifs):
                        rec(k + 1)

            rec(0)
            return out
        finally:
            self.pop()

    def eval_ListComp(self, node: ast.ListComp) -> Any:
        return self._comprehension(node, lambda: self.eval(node.elt))

    def eval_GeneratorExp(self, node: ast.GeneratorExp) -> Any:
        return iter(self._comprehension(node, lambda: self.eval(node.elt)))

    def eval_SetComp(self, node: ast.SetComp) -> Any:
        return set(self._comprehension(node, lambda: self.eval(node.elt)))

    def eval_DictComp(self, node: ast.DictComp) -> Any:
        return dict(self._comprehension(node, lambda: (self.eval(node.key), self.eval(node.value))))

    def eval_Call(self, node: ast.Call) -> Any:
        f = node.func
        if (
            type(f) is ast.Attribute and f.attr == "scope" and type(f.value) is ast.Name
            and not node.args and not node.keywords
        ):  # fmt: skip
            obj = self.eval(f.value)
            if isinstance(obj, Buffer):  # TIRx's ``A.scope()`` is a method; tirx's a property
                return obj.scope
        func = self.eval(node.func)
        args = self._elts(node.args) if node.args else []
        kwargs: dict = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(self.eval(kw.value))
            else:
                kwargs[kw.arg] = self.eval(kw.value)
        special = _SPECIAL_CALLS.get(func) if type(func) is type(len) or func is range else None
        if special is not None:
            r = special(self, node, args, kwargs)
            if r is not NotImplemented:
                return r
        from ..ir.op import Op

        if type(func) is Op:
            sp = self.span(node)
            r = func(*args, span=sp, **kwargs)
            for a, c in zip(args, r.args):  # literal arguments became fresh constants here
                if c.span is None and type(a) in (int, float, bool, str):
                    object.__setattr__(c, "span", sp)
            return r
        helper = _helper_name(func)
        saved = self.cur_call
        self.cur_call = node
        meta = isinstance(func, type) and getattr(func, "__tirx_meta_class__", False) and self.b.frames
        n0 = len(self.b.frame.stmts) if meta else 0
        try:
            r = func(*args, **kwargs)
        finally:
            self.cur_call = saved
        if meta:
            self.check_meta_owned(node, func, r, self.b.frame.stmts[n0:])
        if helper in _FOLDING_HELPERS and isinstance(r, PrimExpr):
            r = fold_new(r, tuple(_unwrap(a) for a in args))
        if isinstance(r, Node) and r.span is None and isinstance(r, PrimExpr) and type(r) is not Var:
            r = r.with_span(self.span(node))
        return r


def _special_range(p: Parser, node: Any, args: list, kwargs: dict) -> Any:
    """``range(...)`` in a kernel: the serial loop form (tirx.surface.forms.RANGE), as in the text."""
    pos, kw = [_unwrap(a) for a in args], {k: _unwrap(v) for k, v in kwargs.items()}
    if kw and set(kw) <= {"annotations", "unroll", "dtype"}:  # TIRx's serial loop keywords
        return LoopSpec([LOOPS[ForKind.SERIAL].call(pos, kw)])
    return LoopSpec([RANGE.call(pos, kw)])  # literal bounds get the header's span in visit_For


def _special_minmax(cls: Any, pyf: Any) -> Any:
    def f(p: Parser, node: Any, args: list, kwargs: dict) -> Any:
        if len(args) >= 2 and not kwargs and any(isinstance(a, (PrimExpr, Cell)) for a in args):
            acc = args[0]
            for a in args[1:]:
                acc = apply_binop(cls, None, acc, a, p.span(node))
            return acc
        return NotImplemented

    return f


_SPECIAL_CALLS = {range: _special_range, min: _special_minmax(Min, min), max: _special_minmax(Max, max)}


class _Lambda:
    """A lambda written in a kernel: its body is evaluated by the parser when called."""

    def __init__(self, parser: ExprMixin, node: ast.Lambda):
        self.parser = parser
        self.node = node
        self.arg_names = [a.arg for a in node.args.args]

    def __call__(self, *args: Any) -> Any:
        p = self.parser
        if len(args) != len(self.arg_names):
            raise TypeError(f"lambda takes {len(self.arg_names)} arguments, got {len(args)}")
        p.push()
        try:
            for n, v in zip(self.arg_names, args):
                p.define(n, v)
            return p.eval(self.node.body)
        finally:
            p.pop()
