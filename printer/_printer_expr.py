"""The printer's expressions: dispatch on the node class, variables, operators (precedence and
parentheses, the operators the Python front end would fold printed as ``T.Add(a, b)``), calls
(an op's own print hook, literal dtypes, ``ty=``), buffer loads and expression forms.

A mixin of ``Printer`` (``_printer.py``), split out by node family (issue #30); the names and
scopes (``names``, ``_undefined``) are Printer's, the constants ``_printer_values.py``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tirx.ir import expr as _e
from tirx.ir.buffer import Buffer
from tirx.ir.fold import _ONE_CONST
from tirx.ir.fold import RAW_NAMES as _RAW_NAMES
from tirx.ir.fold import bad_shift as _bad_shift
from tirx.ir.fold import would_fold as _would_fold
from tirx.ir.op import Op
from tirx.ir.operators import ATOM, BY_NODE, CMP, NOT, OPERATORS, UNARY
from tirx.ir.types import PrimType, Type, bool_, int32
from tirx.printer._printer_forms import _FORM_PRINT, _LAYOUT_PRINT, type_text
from tirx.printer._printer_literals import float_text, global_name, is_printable_name, quote
from tirx.printer._printer_values import ValuesMixin

__all__ = ["ExprMixin"]

_IntImm = _e.IntImm
_FloatImm = _e.FloatImm
_Var = _e.Var

# ------------------------------------------------------------------ precedence
# Spellings and precedence come from the one operator table (tirx/ir/operators.py).
_INFIX: dict[type, tuple[str, int]] = {
    o.node: (f" {o.text} ", o.prec) for o in OPERATORS if o.text is not None and not o.unary
}
_LOGIC = (_e.And, _e.Or)
_FUNC_NAME: dict[type, str] = {o.node: f"T.{o.func[0]}" for o in OPERATORS if o.node in _LOGIC}
_FUNC_BIN: dict[type, str] = {o.node: f"T.{o.func[0]}(" for o in OPERATORS if o.text is None}
_PREC: dict[type, int] = {o.node: o.prec for o in OPERATORS if o.text is not None}
_not_text, _bitnot_text = BY_NODE[_e.Not].text, BY_NODE[_e.BitNot].text
assert _not_text is not None and _bitnot_text is not None  # both have a prefix spelling
_NOT_TEXT = _not_text + " "
_BITNOT_TEXT = _bitnot_text


class ExprMixin:
    """Expressions to text (``expr``), each at its Python precedence."""

    if TYPE_CHECKING:  # Printer's (_printer.py)
        module_name: str
        names: dict[Any, str]
        problems: list[str]
        raw: set[int]
        scopes: list[list[tuple[Any, str | None, str]]]
        live: set[str]
        defined_ever: set[Any]
        func_scope: int
        pending: list[str]
        pending_lets: dict[Any, str]
        let_names: dict[Any, tuple[str, Any]]

        def _undefined(self, key: Any, hint: str, what: str) -> str: ...

        def _fresh(self, hint: str) -> str: ...

        def tensor_arg(self, v: Any, text: str) -> str: ...

    # -------------------------------------------------------------- expressions
    def expr(self, e: Any) -> str:
        t = type(e)
        if t is _Var:
            n = self.names.get(e)
            return n if n is not None else self._undefined(e, e.name, "var")
        f = _EX.get(t)
        if f is None:
            return self._expr_fallback(e)
        return f(self, e)

    def _expr_fallback(self, e: Any) -> str:
        for cls, f in _EX.items():
            if isinstance(e, cls):
                return f(self, e)
        if isinstance(e, bool):
            return "True" if e else "False"
        if isinstance(e, int):
            return str(e)
        if isinstance(e, float):
            return float_text(e)
        if isinstance(e, str):
            return quote(e)
        self.problems.append(f"cannot print a {type(e).__name__}")
        return f"T.unknown({quote(type(e).__name__)})"

    def _var(self, v: _e.Var) -> str:
        n = self.names.get(v)
        if n is None:
            return self._undefined(v, v.name, "var")
        return n

    def _gvar(self, g: _e.GlobalVar) -> str:
        return f"{self.module_name}.{global_name(g.name)}"

    def _infix(self, e: Any) -> str:
        sym, prec = _INFIX[type(e)]
        a, b = e.a, e.b
        sa = self.expr(a)
        sb = self.expr(b)
        ta, tb = type(a), type(b)
        ca = ta is _IntImm or ta is _FloatImm
        cb = tb is _IntImm or tb is _FloatImm
        if (ca or cb) and type(e) in _LOGIC:  # ``T.And(x, T.bool(True))``: TIRx names it
            self.raw.add(id(e))
            return f"{_FUNC_NAME[type(e)]}({sa}, {sb})"
        # the Python frontend folds some operators (tirx/ir/fold.py), only ever with a constant
        # operand: two constants, or one 0 or 1 that fold's table lists (x + 0, not x - 1);
        # one node twice folds only in min/max (printed by _funcbin)
        if (
            (ca and (cb or a.value == 0 or a.value == 1))
            or (cb and (b.value == 0 or b.value == 1))
            or (cb and _bad_shift(e))
        ):
            if (ca and cb) or _bad_shift(e):
                special = True
            else:
                left, right = _ONE_CONST.get(type(e), _NONE2)
                special = (a.value in left) if ca else (b.value in right)
            if special and _would_fold(e):
                self.raw.add(id(e))
                return f"T.{_RAW_NAMES[type(e)]}({sa}, {sb})"
            if ta is _IntImm and tb is _IntImm and a.ty == int32 and b.ty == int32:
                # two bare literals would be folded by Python / the grammar: TIRx's constructor
                self.raw.add(id(e))
                return f"T.{_RAW_NAMES[type(e)]}({sa}, {sb})"
        pa = _PREC.get(ta, ATOM)
        pb = _PREC.get(tb, ATOM)
        raw = self.raw
        if raw:  # an operand printed as T.Add(...) is an atom
            if id(a) in raw:
                pa = ATOM
            if id(b) in raw:
                pb = ATOM
        if prec == CMP:
            if pa <= CMP:
                sa = f"({sa})"
            if pb <= CMP:
                sb = f"({sb})"
        else:
            if pa < prec:
                sa = f"({sa})"
            if pb <= prec:
                sb = f"({sb})"
        return sa + sym + sb

    def _div(self, e: Any) -> str:
        """``a / b``; of integers ``T.Div(a, b)``, as TIRx prints it (its ``/`` refuses two
        integers: tirx/ir/fold.py)."""
        t = e.ty
        if isinstance(t, PrimType) and t.kind in ("int", "uint"):
            self.raw.add(id(e))
            return f"T.{_RAW_NAMES[_e.Div]}({self.expr(e.a)}, {self.expr(e.b)})"
        return self._infix(e)

    def _funcbin(self, e: Any) -> str:
        a, b = e.a, e.b
        sa = self.expr(a)
        if (type(a) in _CONSTS or type(b) in _CONSTS or a is b) and _would_fold(
            e
        ):  # T.min(3, 4): T.Min(3, 4)
            self.raw.add(id(e))
            return f"T.{_RAW_NAMES[type(e)]}({sa}, {self.expr(b)})"
        if type(a) is _IntImm and type(b) is _IntImm and a.ty == int32 and b.ty == int32:
            sa = f"T.int32({sa})"
        return f"{_FUNC_BIN[type(e)]}{sa}, {self.expr(b)})"

    def _prec(self, e: Any) -> int:
        """The text precedence ``e`` printed at (a node printed ``T.Add(a, b)`` is an atom);
        ``e`` has been printed already."""
        p = _PREC.get(type(e), ATOM)
        return ATOM if p != ATOM and id(e) in self.raw else p

    def _not(self, e: _e.Not) -> str:
        s = self.expr(e.a)
        if type(e.a) is _IntImm:
            self.raw.add(id(e))
            return f"T.Not({s})"  # not <literal> would be Python's, folded: TIRx's constructor
        if self._prec(e.a) < NOT:
            s = f"({s})"
        return _NOT_TEXT + s

    def _bitnot(self, e: _e.BitNot) -> str:
        s = self.expr(e.a)
        if type(e.a) is _IntImm and e.a.ty == int32:
            self.raw.add(id(e))
            return f"T.BitwiseNot({s})"  # ~<literal> would be folded: TIRx's constructor
        if self._prec(e.a) < UNARY:
            s = f"({s})"
        return _BITNOT_TEXT + s

    def _call(self, e: _e.Call, untyped: bool = False) -> str:
        op = e.op
        eargs = e.args
        parts = [self.expr(a) for a in eargs]
        for i in e.tensor_args:  # written with the tensor: its name, as TIRx prints it
            parts[i] = self.tensor_arg(eargs[i], parts[i])
        hook = _print_hook(op) if isinstance(op, Op) else None
        if hook is not None:  # an op spelled its own way (keyword options)
            return hook(self, parts, e)
        if len(eargs) > 1 and isinstance(op, Op) and not _has_surface(op):
            # tirx.ir.op.call gives bare int literals in "x"/"f" positions the dtype of the first
            # argument there that is an expression in the text (not a bare int, not a string);
            # keep int32 literals int32 when that dtype differs. (An op with a script surface,
            # a PTX-table opcode, converts its operands by their kinds itself.)
            same = _same_positions(op, len(eargs))
            first = next(
                (
                    a
                    for a, s in zip(eargs, same)
                    if s and not (type(a) is _IntImm and a.ty == int32) and type(a) is not _e.StringImm
                ),
                None,
            )
            if first is not None and first.ty != int32 and _literal_takes(first.ty):
                for k, a in enumerate(eargs):
                    if same[k] and type(a) is _IntImm and a.ty == int32:
                        parts[k] = f"T.int32({parts[k]})"
        args = ", ".join(parts)
        if isinstance(op, Op):
            if not untyped and (op.result == "ty" or not _default_ty_matches(op, e)):
                if args:
                    return f"T.{op.name}({args}, ty={type_text(e.ty)})"
                return f"T.{op.name}(ty={type_text(e.ty)})"
            return f"T.{op.name}({args})"
        return self._form(e)  # a module function: the T.Call form

    def _buf(self, b: Buffer) -> str:
        n = self.names.get(b)
        if n is None:
            return self._undefined(b, b.name, "buffer")
        return n

    def _indices(self, idx: tuple) -> str:
        if not idx:
            return "()"
        return ", ".join([self.expr(i) for i in idx])

    def _load(self, e: _e.BufferLoad) -> str:
        return f"{self._buf(e.buffer)}[{self._indices(e.indices)}]"

    def _form(self, e: Any) -> str:
        """A node with a surface form (``tirx/surface/forms.py``), printed from its FormSpec."""
        return _FORM_PRINT[type(e)](self, e)

    def _let(self, e: _e.Let) -> str:
        """``T.Let(body, where={x: value})`` as TIRx prints it: ``x`` is declared by a line
        ``x = T.dynamic("x", dtype=...)`` just before the statement (``emit`` writes it) and
        keeps its name for the rest of the function."""
        if not getattr(self, "in_func", False):  # an expression alone: no line to declare x on
            return _FORM_PRINT[_e.Let](self, e)  # T.Let(x := value, body)
        v = e.var
        if not isinstance(v.ty, PrimType):
            return _FORM_PRINT[_e.Let](self, e)  # T.Let(x := value, body)
        value = self.expr(e.value)
        # declared by an earlier T.Let whose declaration line is in a block still open
        name, block = self.let_names.get(v, (None, None))
        prev = self.names.get(v)
        # declared for the line being printed, not written yet: the same declaration (an
        # expression printed twice on the way to its line must not declare twice)
        pending = self.pending_lets.get(v)
        if pending is not None:
            name = pending
        elif name is None or prev != name or not any(block is b for b in self.scopes):
            scopes = self.scopes
            k = self.func_scope if 0 <= self.func_scope < len(scopes) else len(scopes) - 1
            name = self._fresh(v.name)
            scopes[k].append((v, None, name))
            self.live.add(name)
            self.let_names[v] = (name, self.scopes[-1])
            hint = v.name if is_printable_name(v.name) or not v.name else name  # "": TIRx's unnamed
            self.pending.append(f"{name} = T.dynamic({quote(hint)}, dtype={quote(v.ty.name)})")
            self.pending_lets[v] = name
        if v in self.defined_ever and prev is not None and prev != name:
            # the same var bound elsewhere too (not TIRx's IR): its other uses keep their name
            self.names[v] = name
            body = self.expr(e.body)
            self.names[v] = prev
            return f"T.Let({body}, where={{{name}: {value}}})"
        self.names[v] = name
        self.defined_ever.add(v)
        return f"T.Let({self.expr(e.body)}, where={{{name}: {value}}})"


# dispatch table: type(node) -> unbound Printer method (or a compiled form)
_EX: dict[type, Callable[[Any, Any], str]] = {
    _e.Var: ExprMixin._var,
    _e.IntImm: ValuesMixin._int,
    _e.FloatImm: ValuesMixin._float,
    _e.StringImm: ValuesMixin._str,
    _e.Not: ExprMixin._not,
    _e.BitNot: ExprMixin._bitnot,
    _e.Call: ExprMixin._call,
    _e.BufferLoad: ExprMixin._load,
    _e.GlobalVar: ExprMixin._gvar,
}
for cls in _FORM_PRINT:
    _EX.setdefault(cls, ExprMixin._form if cls is _e.Call else _FORM_PRINT[cls])
for cls, f in _LAYOUT_PRINT.items():  # layouts (tirx/surface/layout_forms.py)
    _EX[cls] = f
for cls in _INFIX:
    _EX[cls] = ExprMixin._infix
_EX[_e.Div] = ExprMixin._div
_EX[_e.Let] = ExprMixin._let
for cls in _FUNC_BIN:
    _EX[cls] = ExprMixin._funcbin

_CONSTS = frozenset({_IntImm, _e.FloatImm})
_SAME: dict = {}  # (op, argument count) -> which arguments share a literal's dtype


_HOOK: dict = {}


def _print_hook(op: Op) -> Any:
    """The op's own printing (``register_handler("print", name)``: ``(printer, arg texts, call) ->
    text``; the printer supplies what the op cannot write itself, as ``printer.type_text``), if
    any (looked up once per op, as ``_has_surface``: calls are on the printer's hot path)."""
    h = _HOOK.get(op, _HOOK)
    if h is _HOOK:
        from tirx.ir.op import impl

        h = _HOOK[op] = impl("print", op)
    return h


def _has_surface(op: Any) -> bool:
    r = _SURFACE.get(op)
    if r is None:
        from tirx.ir.op import impl

        r = _SURFACE[op] = impl("script", op) is not None
    return r


_SURFACE: dict = {}


def _same_positions(op: Any, n: int) -> tuple:
    key = (op, n)
    r = _SAME.get(key)
    if r is None:
        r = _SAME[key] = tuple(op.shares_literal_dtype(k) for k in range(n))
    return r


_NONE2: tuple = ((), ())


def _literal_takes(t: Any) -> bool:
    """A bare int literal beside a first argument of type ``t`` takes ``t`` (``convert``): a
    number type does; a pointer, a handle or a bool leaves it int32 (``T.call_extern("atomicCAS",
    T.address_of(x), -1, ...)`` prints ``-1`` bare, as TIRx prints it)."""
    return isinstance(t, PrimType) and not t.is_bool


def _default_ty_matches(op: Op, e: _e.Call) -> bool:
    """Whether ``e.ty`` is what ``op``'s result rule gives (so no ``ty=`` is needed)."""
    r = op.result
    if isinstance(r, Type):
        return r == e.ty
    args = e.args
    try:
        if r == "arg0":
            return bool(args) and args[0].ty == e.ty
        if r == "bool0":
            t0 = args[0].ty
            return e.ty == (bool_ if not isinstance(t0, PrimType) else bool_.with_lanes(t0.lanes))
        if callable(r):
            return r(args) == e.ty
    except Exception:
        return False
    return True
