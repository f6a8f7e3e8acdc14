"""The printer proper. See ``docs/text_format.md`` for the contract.

Design notes:

* One pass over the tree, dispatching on ``type(node)`` through dicts (no ``getattr``
  visitor lookup), appending finished lines to a list.
* Names: a var/buffer gets its printed name when it is defined; the name is made unique
  against the names *live* at that point only (sibling scopes reuse names). Binds and
  allocations are flat-scoped: they live until the enclosing body ends.
* Parentheses: every expression has a Python precedence level; a child is parenthesized
  only when Python would otherwise parse the text differently.
* Deep trees: printing recurses; if Python's recursion limit is hit, the job is re-run
  in a helper thread with a large stack and a raised limit.
"""

from __future__ import annotations

import keyword
import math
import struct
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from tirx.ir import deep
from tirx.ir import expr as _e
from tirx.ir import stmt as _s
from tirx.ir.buffer import Buffer
from tirx.ir.fold import _ONE_CONST
from tirx.ir.fold import RAW_NAMES as _RAW_NAMES
from tirx.ir.fold import bad_shift as _bad_shift
from tirx.ir.fold import would_fold as _would_fold
from tirx.ir.function import Function, Module
from tirx.ir.node import Attrs
from tirx.ir.op import Op
from tirx.ir.operators import ATOM, BY_NODE, CMP, NOT, OPERATORS, UNARY
from tirx.ir.types import PointerType, PrimType, TensorType, Type, VoidType, bool_, int32, void
from tirx.ir.visitor import collect_vars as _collect_vars
from tirx.surface import comments as _comment_table
from tirx.surface import forms as _forms
from tirx.surface import layout_forms as _layout_forms
from tirx.surface.comments import lone_stmt
from tirx.target_spec import Target, target_text

__all__ = ["HEADER", "HEADER_PLAIN", "Printer", "dumps"]

HEADER = "from __future__ import annotations\n\n# from tirx.script import tirx as T\n\n"
#: the header of a file whose functions have no annotation (no parameter, no return type):
#: TIRx writes the ``from __future__`` line only when some function has one
HEADER_PLAIN = "# from tirx.script import tirx as T\n\n"

_IntImm = _e.IntImm
_FloatImm = _e.FloatImm
_Var = _e.Var

# ------------------------------------------------------------------ precedence
# Spellings and precedence come from the one operator table (tirx/ir/operators.py).
_INFIX: dict[type, tuple[str, int]] = {
    o.node: (f" {o.text} ", o.prec) for o in OPERATORS if o.text is not None and not o.unary
}
_FUNC_BIN: dict[type, str] = {o.node: f"T.{o.func[0]}(" for o in OPERATORS if o.text is None}
_PREC: dict[type, int] = {o.node: o.prec for o in OPERATORS if o.text is not None}
_not_text, _bitnot_text = BY_NODE[_e.Not].text, BY_NODE[_e.BitNot].text
assert _not_text is not None and _bitnot_text is not None  # both have a prefix spelling
_NOT_TEXT = _not_text + " "
_BITNOT_TEXT = _bitnot_text

# ------------------------------------------------------------------ names
_RESERVED = frozenset(keyword.kwlist) | {"T", "I", "range"}  # range: the loop builtin


def is_printable_name(name: str) -> bool:
    """Whether ``name`` prints as itself and loads back as itself (here and in Python).

    Python identifiers, non-ASCII included, in NFKC normal form (Python, and the grammar,
    read identifiers NFKC-normalized: ``ﬁx`` would come back as ``fix``), not keywords.
    """
    if name.isascii():
        return name.isidentifier() and not keyword.iskeyword(name)
    return name.isidentifier() and unicodedata.is_normalized("NFKC", name) and not keyword.iskeyword(name)


def sanitize(name: str) -> str:
    """An identifier base for a bound var / buffer hint (those names are hints: the printer
    also makes them unique). Identifiers are kept as they are, NFKC-normalized; other
    characters become ``_``; a leading digit gets a ``v`` prefix."""
    if name.isascii() and name.isidentifier():
        return name
    name = unicodedata.normalize("NFKC", name)
    if name.isidentifier():
        return name
    out = ["_" if not ("a" + ch).isidentifier() else ch for ch in name]
    if not out:
        return "v"
    if not out[0].isidentifier():  # a digit (or another continue-only character)
        out.insert(0, "v")
    return "".join(out)


# ------------------------------------------------------------------ literals
_ESC = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def quote(s: str) -> str:
    """A double-quoted Python string literal, ASCII only, escaped as the doc says."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    out = ['"']
    for ch in s:
        r = _ESC.get(ch)
        if r is not None:
            out.append(r)
            continue
        o = ord(ch)
        if 0x20 <= o < 0x7F:
            out.append(ch)
        elif o < 0x100:
            out.append(f"\\x{o:02x}")
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


def global_name(name: str) -> str:
    """The printed name of a function (a global symbol): the name itself, never changed.

    ValueError when it cannot be printed so that it loads back as the same name."""
    if not is_printable_name(name):
        raise ValueError(f"tirx.dumps: the function name {name!r} cannot be printed: {_why_not(name)}")
    return name


def _why_not(name: str) -> str:
    if keyword.iskeyword(name):
        return "it is a Python keyword"
    if not name.isidentifier():
        return "it is not a Python identifier"
    return f"Python reads it NFKC-normalized, as {unicodedata.normalize('NFKC', name)!r}"


_NANS = {struct.pack("<d", math.nan): '"nan"', struct.pack("<d", -math.nan): '"-nan"'}


def float_text(v: float) -> str:
    """Text of a Python float that parses back bit-exactly (strings for inf/nan). A NaN is
    ``"nan"`` (TIRx's text) or ``"-nan"``; one with a payload has no text: ValueError."""
    if v != v:
        s = _NANS.get(struct.pack("<d", v))
        if s is None:
            bits = struct.unpack("<Q", struct.pack("<d", v))[0]
            raise ValueError(
                f"tirx.dumps: the NaN constant with bits {bits:#018x} (a payload) cannot be printed: "
                'the text has only T.float32("nan") and ("-nan"); build it with T.reinterpret'
            )
        return s
    if v in (math.inf, -math.inf):
        return '"inf"' if v > 0 else '"-inf"'
    return repr(v)


# ------------------------------------------------------------------ types
_TYPE_CACHE: dict[Type, str] = {}


def type_text(t: Any) -> str:
    s = _TYPE_CACHE.get(t) if isinstance(t, (PrimType, PointerType, VoidType)) else None
    if s is not None:
        return s
    if isinstance(t, PrimType):
        s = t.script()  # T.float16x2; T.PrimType("boolx2") where TIRx's T has no name
    elif isinstance(t, VoidType):
        s = "T.void"
    elif isinstance(t, PointerType):
        s = _PTR_PRINT(None, t)  # T.Ptr's FormSpec (tirx.surface.forms.PTR)
    elif isinstance(t, TensorType):
        return _tensor_type_text(t)
    else:
        return f"T.{t}"  # unknown Type subclass: best effort, never raise
    _TYPE_CACHE[t] = s
    return s


def _tensor_type_text(t: TensorType) -> str:
    return _TENSOR_PRINT(Printer(), t)  # T.Tensor's FormSpec (tirx.surface.forms.TENSOR)


_RAMP = _e.Ramp  # store targets (Printer._store)


class Printer:
    """One printing job. Use :func:`dumps`; the class is exposed for subclassing/debugging."""

    def __init__(self, module_name: str = "Module"):
        self.module_name = module_name
        self.lines: list[str] = []
        self.names: dict[Any, str] = {}  # Var/Buffer -> printed name (live)
        self.live: set[str] = set()
        self.scopes: list[list[tuple[Any, str | None, str]]] = [[]]
        self.in_func = False
        self.defined_ever: set[Any] = set()
        self.problems: list[str] = []
        self.raw: set[int] = set()  # ids of the nodes printed as T.Add(a, b) (atoms)
        self.annotated = False  # some function has a parameter or a return type (the header)
        self.ret_ty: Any = None  # the return type of the function being printed
        self.header_vars: dict[_e.Var, str] = {}  # parameters declared by T.dynamic before the code
        self.header_lines: list[str] = []
        self.in_module = False  # printing a Module: a var defined nowhere is its T.dynamic

    # -------------------------------------------------------------- names / scopes
    def _fresh(self, hint: str) -> str:
        base = sanitize(hint)
        live = self.live
        if base not in live and base not in _RESERVED:
            return base
        i = 1
        while True:
            cand = f"{base}_{i}"
            if cand not in live:
                return cand
            i += 1

    def define(self, key: Any, hint: str) -> str:
        name = self._fresh(hint)
        self.scopes[-1].append((key, self.names.get(key), name))
        self.names[key] = name
        self.live.add(name)
        self.defined_ever.add(key)
        return name

    def push(self) -> None:
        self.scopes.append([])

    def pop(self) -> None:
        names, live = self.names, self.live
        for key, prev, name in reversed(self.scopes.pop()):
            live.discard(name)
            if prev is None:
                names.pop(key, None)
            else:
                names[key] = prev

    def _undefined(self, key: Any, hint: str, what: str) -> str:
        name = self._fresh(hint)
        # reserved for the rest of the job: later definitions avoid it
        self.scopes[0].append((key, None, name))
        self.names[key] = name
        self.live.add(name)
        if self.in_module and what == "var" and key not in self.defined_ever and isinstance(key.ty, PrimType):
            # a var no function of the module defines: a module-level T.dynamic, as TIRx
            # prints it (its module check accepts it; compiling refuses it)
            self.defined_ever.add(key)
            hint = key.name if is_printable_name(key.name) else name
            self.header_lines.append(f"{name} = T.dynamic({quote(hint)}, dtype={quote(key.ty.name)})")
            return name
        if self.in_func:
            why = "used out of scope" if key in self.defined_ever else "undefined"
            self.problems.append(f"{why} {what} {name}")
        return name

    # -------------------------------------------------------------- output
    def emit(self, depth: int, text: str) -> None:
        if self.problems:
            seen = list(dict.fromkeys(self.problems))
            self.problems.clear()
            text = f"{text}  # tirx: {', '.join(seen)}"
        ind = _INDENTS[depth] if depth < 64 else "    " * depth
        self.lines.append(ind + text)

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

    def _int(self, e: _e.IntImm) -> str:
        t = e.ty
        if t is int32 or t == int32:
            return str(e.value)
        if t is bool_ or t == bool_:
            return "T.bool(True)" if e.value else "T.bool(False)"
        if isinstance(t, PrimType) and t.is_bool:
            return f"T.{t.name}({'True' if e.value else 'False'})"
        return f"{type_text(t)}({e.value})"

    def _float(self, e: _e.FloatImm) -> str:
        return f"{type_text(e.ty)}({float_text(e.value)})"

    def _str(self, e: _e.StringImm) -> str:
        return quote(e.value)

    def _infix(self, e: Any) -> str:
        sym, prec = _INFIX[type(e)]
        a, b = e.a, e.b
        sa = self.expr(a)
        sb = self.expr(b)
        ta, tb = type(a), type(b)
        ca = ta is _IntImm or ta is _FloatImm
        cb = tb is _IntImm or tb is _FloatImm
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
                sa = f"T.int32({sa})"  # two bare literals would be folded by Python / the grammar
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
        if self._prec(e.a) < NOT:
            s = f"({s})"
        return _NOT_TEXT + s

    def _bitnot(self, e: _e.BitNot) -> str:
        s = self.expr(e.a)
        if type(e.a) is _IntImm and e.a.ty == int32:
            return f"~T.int32({s})"  # ~<literal> would be folded
        if self._prec(e.a) < UNARY:
            s = f"({s})"
        return _BITNOT_TEXT + s

    def _call(self, e: _e.Call, untyped: bool = False) -> str:
        op = e.op
        eargs = e.args
        parts = [self.expr(a) for a in eargs]
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
            if first is not None and first.ty != int32:
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

    # -------------------------------------------------------------- attribute values
    def type_text(self, t: Any) -> str:
        """``t`` as the text writes it, for an op's print hook (ops sit below the printer)."""
        return type_text(t)

    def attr_value(self, v: Any) -> str:
        """An attribute value in the text that loads back as the same value and type.

        In a dict, a bare literal stays a Python value (``5`` is an int, ``"s"`` a str), so
        an int32 IntImm prints typed (``T.int32(5)``) and a StringImm ``T.StringImm("s")``;
        Python's inf is ``1e999``. A NaN float has no such form: ValueError rather than a
        different value."""
        if isinstance(v, str):
            return quote(v)
        if isinstance(v, bool):
            return "True" if v else "False"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            if v != v:
                raise ValueError("tirx.dumps: a NaN float attribute value cannot be printed (no literal)")
            if v in (math.inf, -math.inf):
                return "1e999" if v > 0 else "-1e999"
            return repr(v)
        if type(v) is _IntImm and v.ty == int32:
            return f"T.int32({v.value})"
        if isinstance(v, _e.StringImm):  # as TIRx prints it (a bare "s" loads as a str)
            return f"T.StringImm({quote(v.value)})"
        if v is None:
            return "None"
        if isinstance(v, (Attrs, Mapping)):
            return self.attr_dict(v)
        if isinstance(v, (tuple, list)):
            return "[" + ", ".join([self.attr_value(x) for x in v]) + "]"
        if isinstance(v, Type):
            return type_text(v)
        if type(v) is Target:  # TIRx's T.func_attr({"target": T.target({...})})
            return target_text(v)
        return self.expr(v)

    def attr_dict(self, d: Mapping) -> str:
        return "{" + ", ".join([f"{quote(str(k))}: {self.attr_value(v)}" for k, v in d.items()]) + "}"

    # -------------------------------------------------------------- tensors
    def buffer_type(self, b: Buffer, with_scope: bool = True, scope: str | None = None) -> str:
        """A buffer's ``T.Tensor(...)``, written by T.Tensor's FormSpec from the buffer's fields
        (``scope``: the one to write instead of its pointer's)."""
        if scope is None:
            scope = b.data.ty.scope if with_scope and isinstance(b.data.ty, PointerType) else "global"
        return _TENSOR_VALUES(
            self,
            b.shape,
            b.dtype,
            scope,
            b.strides,
            b.elem_offset,
            b.align,
            b.layout,
            None,
        )

    # -------------------------------------------------------------- statements
    def stmt(self, s: Any, depth: int) -> None:
        f = _ST.get(type(s))
        if f is None:
            for cls, g in _ST.items():
                if isinstance(s, cls):
                    g(self, s, depth)
                    return
            self.emit(depth, f"pass  # tirx: cannot print {type(s).__name__}")
            return
        f(self, s, depth)

    def body(self, s: Any, depth: int) -> None:
        """A scoped body (loop, branch, device entry, attr, function)."""
        self.push()
        n = len(self.lines)
        self.stmt(s, depth)
        if len(self.lines) == n:
            self.emit(depth, "pass")
        self.pop()

    def _seq(self, s: _s.SeqStmt, depth: int) -> None:
        st = _ST
        for c in s.stmts:
            f = st.get(type(c))
            if f is None:
                self.stmt(c, depth)
            else:
                f(self, c, depth)

    def _bind(self, s: _s.Bind, depth: int) -> None:
        v = s.value
        if type(v) is _e.Call and getattr(v.op, "typed_by_binding", False):
            value = self._call(v, untyped=True)  # the annotation types it (TIRx's T.undef())
        else:
            value = self.expr(v)
        name = self.define(s.var, s.var.name)
        ty = s.var.ty
        ann = _LET_TEXT.get(ty)
        if ann is None:  # tirx.surface.forms.LET prints it, once per type
            ann = _LET_TEXT[ty] = _LET_PRINT(self, ty)
        self.emit(depth, f"{name}: {ann} = {value}")

    def _store(self, s: _s.BufferStore, depth: int) -> None:
        v = s.value
        if (
            type(v) is _e.Call
            and getattr(v.op, "typed_by_binding", False)
            and _store_typed(v, s.buffer.dtype)
        ):
            value = self._call(v, untyped=True)  # the tensor types it (TIRx's T.cuda.func_call)
        else:
            value = self.expr(v)
        idx = s.indices
        for i in idx:  # a loop, not any(<generator>): stores are the printer's commonest statement
            if type(i) is _RAMP:  # lanes as TIRx prints them: A[s:e] (tirx.surface.forms.slice_parts)
                text = ", ".join(self._store_index(i) for i in idx)
                self.emit(depth, f"{self._buf(s.buffer)}[{text}] = {value}")
                return
        self.emit(depth, f"{self._buf(s.buffer)}[{self._indices(idx)}] = {value}")

    def _store_index(self, i: Any) -> str:
        parts = _forms.slice_parts(i) if type(i) is _e.Ramp else None
        if parts is None:
            return self.expr(i)
        start, stop, step = parts
        text = f"{self.expr(start)}:{self.expr(stop)}"
        return text if step is None else f"{text}:{self.expr(step)}"

    def _evaluate(self, s: _s.Evaluate, depth: int) -> None:
        v = s.value
        if isinstance(v, _e.Call):
            self.emit(depth, self._call(v))
        elif type(v) is _IntImm and v.value == 0 and v.ty.is_int:
            # the front ends drop ``T.evaluate(0)`` as TIRx does; a kept one (built by the API or a
            # pass) is spelled with its dtype, which they keep, so the text builds it back
            self.emit(depth, f"T.evaluate(T.{v.ty}(0))")
        else:
            self.emit(depth, _STMT_PRINT[_s.Evaluate](self, s))

    def _for(self, s: _s.For, depth: int) -> None:
        kind = s.kind
        if kind is _s.ForKind.SERIAL and not s.annotations and s.thread is None:
            # a plain serial loop prints as Python's range (tirx.surface.forms.RANGE)
            start = self.expr(s.start)
            stop = self.expr(_forms.loop_stop(s.start, s.extent))
            if s.step is not None:
                it = f"range({start}, {stop}, {self.expr(s.step)})"
            elif isinstance(s.start, _e.IntImm) and s.start.value == 0 and s.start.ty == int32:
                # an int32 0 start is left out (another dtype's 0 prints, as TIRx prints it)
                it = f"range({stop})"
            else:
                it = f"range({start}, {stop})"
        else:
            it = _LOOP_PRINT[kind](self, s)
        self.push()
        name = self.define(s.var, s.var.name)
        self.emit(depth, f"for {name} in {it}:")
        self.body(s.body, depth + 1)
        self.pop()

    def _while(self, s: _s.While, depth: int) -> None:
        self.emit(depth, f"while {self.expr(s.cond)}:")
        self.body(s.body, depth + 1)

    def _if(self, s: _s.IfThenElse, depth: int) -> None:
        self.emit(depth, f"if {self.expr(s.cond)}:")
        self.body(s.then_case, depth + 1)
        e = lone_stmt(s.else_case)
        while isinstance(e, _s.IfThenElse):
            self.emit(depth, f"elif {self.expr(e.cond)}:")
            self.body(e.then_case, depth + 1)
            e = lone_stmt(e.else_case)
        if e is not None:
            self.emit(depth, "else:")
            self.body(e, depth + 1)

    def _break(self, s: Any, depth: int) -> None:
        self.emit(depth, "break")

    def _continue(self, s: Any, depth: int) -> None:
        self.emit(depth, "continue")

    def _return(self, s: _s.Return, depth: int) -> None:
        v = s.value
        if v is None:
            self.emit(depth, "return")
            return
        text = self.expr(v)
        if isinstance(self.ret_ty, TensorType) and type(v) is _Var and text.endswith(".data"):
            text = text[: -len(".data")]  # ``return A`` of a tensor parameter (TIRx's spelling)
        self.emit(depth, f"return {text}")

    def _assert(self, s: _s.Assert, depth: int) -> None:
        msg = ", ".join([quote(m) for m in s.message])
        self.emit(depth, f"assert {self.expr(s.cond)}, ({quote(s.kind)}, [{msg}])")

    def _alloc(self, s: _s.AllocBuffer, depth: int) -> None:
        b = s.buffer
        _check_own_pointer(b, "allocation")
        text = _BIND_PRINT[_s.AllocBuffer](self, s)  # the form's text, then the name it binds
        name = self.define(b, b.name)
        self._define_data(b, name)
        self.emit(depth, f"{name} = {text}")

    def _define_data(self, b: Buffer, name: str) -> None:
        # the buffer's pointer var, when referenced, prints as ``X.data``
        d = b.data
        self.scopes[-1].append((d, self.names.get(d), ""))
        self.names[d] = name + ".data"
        self.defined_ever.add(d)

    def _decl(self, s: _s.DeclBuffer, depth: int) -> None:
        b = s.buffer
        text = _BIND_PRINT[_s.DeclBuffer](self, s)
        name = self.define(b, b.name)
        self.emit(depth, f"{name} = {text}")

    def _region(self, s: Any, depth: int) -> None:
        """``with T.device_entry(...):`` / ``with T.attr(...):``, the header from its FormSpec."""
        self.emit(depth, f"with {_REGION_PRINT[type(s)](self, s)}:")
        self.body(s.body, depth + 1)

    def _region_stmt(self, s: _s.RegionStmt, depth: int) -> None:
        """``with T.launch_thread("threadIdx.x", n) as v:`` and TIRx's other regions
        (tirx/surface/region_forms.py; the header's arguments are expressions, strings as literals)."""
        head = f"T.{s.kind}({', '.join(self.expr(a) for a in s.args)})"
        self.push()
        if s.params:
            head += f" as {self.define(s.params[0], s.params[0].name)}"
        self.emit(depth, f"with {head}:")
        self.body(s.body, depth + 1)
        self.pop()

    # -------------------------------------------------------------- functions
    def function(self, f: Function, depth: int = 0) -> None:
        self.in_func = True
        self.ret_ty = f.ret_ty
        self.push()
        bufs: dict[_e.Var, Buffer] = {}
        for v, b in f.buffer_map:
            bufs.setdefault(v, b)
        # names: params first (they are what users see), then dynamic shape vars
        pnames = []
        header = self.header_vars
        for p in f.params:
            b = bufs.get(p)
            if b is not None:
                _check_own_pointer(b, "tensor parameter")
                name = self.define(b, b.name)
                self._define_data(b, name)
                if b.data is not p:
                    self.names[p] = name + ".data"
                    self.defined_ever.add(p)
            elif p in header:  # ``n: n``, named by the file's ``n = T.dynamic(...)``
                name = header[p]
            else:
                name = self.define(p, p.name)
            pnames.append(name)
        try:
            dyn = f.dyn_vars()
        except Exception:
            dyn = []
        dparts = []
        for v in dyn:
            if v in self.names:
                continue
            dn = self.define(v, v.name)
            dparts.append(dn if v.ty == int32 else f"{dn}: {type_text(v.ty)}")
        params = []
        for p, name in zip(f.params, pnames):
            b = bufs.get(p)
            if b is not None:
                params.append(f"{name}: {self.buffer_type(b)}")
            elif p in header:
                params.append(f"{name}: {name}")
            else:
                params.append(f"{name}: {type_text(p.ty)}")
        if params or f.ret_ty is not None:
            self.annotated = True
        header_problems = list(self.problems)
        self.problems.clear()
        self.emit(depth, "@T.function(private=True)" if f.private else "@T.function")
        dyn_text = f"[{', '.join(dparts)}]" if dparts else ""
        ret = f" -> {type_text(f.ret_ty)}" if f.ret_ty is not None else ""
        self.problems.extend(header_problems)
        self.emit(depth, f"def {global_name(f.name)}{dyn_text}({', '.join(params)}){ret}:")
        n = len(self.lines)
        if f.attrs:
            self.emit(depth + 1, _STMT_PRINT[Function](self, f))
        self.push()
        self.stmt(f.body, depth + 1)
        self.pop()
        if len(self.lines) == n:
            self.emit(depth + 1, "pass")
        self.pop()
        self.in_func = False

    def module(self, m: Module) -> None:
        self.emit(0, "@T.ir_module")
        self.emit(0, f"class {self.module_name}:")
        if m.attrs:  # as TIRx prints them (tirx.surface.forms: module_attrs)
            self.emit(1, f"T.module_attrs({self.attr_dict(m.attrs)})")
        for i, f in enumerate(m.functions):
            if i:
                self.lines.append("")
            self.function(f, 1)
        if not m.functions and not m.attrs:
            self.emit(1, "pass")

    # -------------------------------------------------------------- entry
    def declare_header_vars(self, functions: Any) -> None:
        """A scalar parameter that other parameters' tensor types use (``def f(n: T.int32,
        A: T.Tensor((n,)))``) is declared before the code, ``n = T.dynamic("n", dtype="int32")``,
        and written ``n: n``, as TIRx prints it (so a later parameter may be the one a shape
        names); the names are the file's, unique over all functions."""
        for f in functions:
            params = set(f.params)
            used: dict[_e.Var, None] = {}
            for _v, b in f.buffer_map:
                for e in (*b.shape, *b.strides, b.elem_offset):
                    if e is None:
                        continue
                    for v in _collect_vars(e):
                        if v in params and v not in self.header_vars:
                            used[v] = None
            for p in f.params:  # in parameter order
                if p in used and isinstance(p.ty, PrimType):
                    name = self._fresh(p.name)
                    self.scopes[0].append((p, None, name))
                    self.names[p] = name
                    self.live.add(name)
                    self.defined_ever.add(p)
                    self.header_vars[p] = name
                    hint = p.name if is_printable_name(p.name) else name
                    self.header_lines.append(f"{name} = T.dynamic({quote(hint)}, dtype={quote(p.ty.name)})")

    def header(self) -> str:
        """The lines before the code: the ``from __future__`` line where a function has an
        annotation (as TIRx prints), the import comment, the ``T.dynamic`` declarations."""
        head = HEADER if self.annotated else HEADER_PLAIN
        if self.header_lines:
            head += "\n".join(self.header_lines) + "\n"
        return head

    def run(self, obj: Any) -> str:
        if isinstance(obj, Function):
            self.live.add(self.module_name)  # calls print as Module.f
            self.declare_header_vars((obj,))
            self.function(obj)
            return self.header() + "\n".join(self.lines) + "\n"
        if isinstance(obj, Module):
            name = obj.name
            if not is_printable_name(name) or name == "T":
                why = "T.<name> would name an op" if name == "T" else _why_not(name)
                raise ValueError(f"tirx.dumps: the module name {name!r} cannot be printed: {why}")
            self.module_name = name
            self.live.add(self.module_name)
            self.in_module = True
            self.declare_header_vars(obj.functions)
            self.module(obj)
            return self.header() + "\n".join(self.lines) + "\n"
        if isinstance(obj, _s.Stmt):
            self.stmt(obj, 0)
            if not self.lines:
                self.lines.append("pass")
            return "\n".join(self.lines)
        if isinstance(obj, _e.PrimExpr) or type(obj) in _LAYOUT_NODES:  # a layout: T.TileLayout...
            return self.expr(obj)
        if isinstance(obj, Buffer):
            return self.buffer_type(obj)
        if isinstance(obj, (Type, TensorType)):
            return type_text(obj)
        if isinstance(obj, Op):
            return f"T.{obj.name}"
        if isinstance(obj, (Attrs, Mapping)):
            return self.attr_dict(obj)
        raise TypeError(f"tirx.dumps: cannot print an object of type {type(obj).__name__}")


# dispatch tables: type(node) -> unbound Printer method
_EX: dict[type, Callable[[Printer, Any], str]] = {
    _e.Var: Printer._var,
    _e.IntImm: Printer._int,
    _e.FloatImm: Printer._float,
    _e.StringImm: Printer._str,
    _e.Not: Printer._not,
    _e.BitNot: Printer._bitnot,
    _e.Call: Printer._call,
    _e.BufferLoad: Printer._load,
    _e.GlobalVar: Printer._gvar,
}


def _tuple_text(p: Printer, v: tuple) -> str:
    ex = p.expr
    if len(v) == 1:
        return f"({ex(v[0])},)"
    return "(" + ", ".join([ex(x) for x in v]) + ")"


def _dtype_text(p: Printer, t: Any) -> str:
    return f'"{t.name}"' if isinstance(t, PrimType) else type_text(t)


# how the printer writes each argument kind of a form (``tirx.surface.forms.KINDS``; "expr" and
# "binding" are written by the generated code below)
_KIND_TEXT = {
    "int": lambda p, v: str(v),
    "dtype": _dtype_text,
    "type": lambda p, t: type_text(t),
    "calltype": lambda p, t: "T.Tuple()" if t == void else type_text(t),  # a void call: TIRx's unit type
    "funcref": lambda p, v: p._gvar(v[0]),
    "exprs": lambda p, v: "[" + ", ".join([p.expr(a) for a in v]) + "]",
    "str": lambda p, v: quote(v),
    "dict": lambda p, v: p.attr_dict(v),
    "shape": _tuple_text,
    "dims": _tuple_text,
    "dim": lambda p, v: p.expr(v),
    "nat": lambda p, v: str(v),
    "primtype": lambda p, t: type_text(t),
    "elemtype": lambda p, t: type_text(t),
    "ptrvar": lambda p, v: p.expr(v),
    "tensor_arg": lambda p, b: "[" + p.buffer_type(b) + "]",  # the Buffer an allocation binds
    "view_arg": lambda p, d: "[" + p.buffer_type(d.buffer, scope=d.declared_scope) + "]",  # the DeclBuffer
    "launch_values": lambda p, v: ", ".join([p.expr(a) for a in v]),  # *values, one by one
    "value": lambda p, v: p.expr(v),
    "unroll": lambda p, v: str(v),  # T.serial's unroll=: True, False or an int
}
# kinds of plain Python values: a default is left out when equal, not only when identical
_PLAIN = frozenset(("str", "int", "nat", "dims"))


_CONSTS = frozenset({_IntImm, _e.FloatImm})
_LET_TEXT: dict = {}  # type -> its T.let[...] annotation
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


def _one_const_folds(t: type, a: Any, b: Any, ca: bool, cb: bool) -> bool:
    """A single constant operand folds only with the values of tirx.ir.fold's table."""
    left, right = _ONE_CONST.get(t, _NONE2)
    return (ca and a.value in left) or (cb and b.value in right)


_NONE2: tuple = ((), ())


def _compile_form(spec: _forms.FormSpec, values: bool = False) -> Any:
    """``(printer, node) -> "T.<name>(args, kw=...)"`` for one form, generated once from its
    parameters (straight-line code, as fast as a hand-written method): the values come from
    the node's fields or ``spec.unparse``, in parameter order; a keyword parameter holding its
    default is left out; a binding ``x := v`` defines ``x`` for the arguments after it.
    ``values``: ``(printer, v0, v1, ...)`` from the values themselves (a Buffer's T.Tensor)."""
    ns: dict[str, Any] = {"unparse": spec.unparse}
    n = len(spec.params)
    code = ["def print_form(self, node):"]
    if values:
        code = [f"def print_form(self, {', '.join(f'v{i}' for i in range(n))}):"]
    elif spec.fields is not None:
        code += [f"    v{i} = node.{f}" for i, f in enumerate(spec.fields)]
    else:
        code.append(f"    {''.join(f'v{i}, ' for i in range(n))}= unparse(node)")
    parts = []  # (lines before, text expression, param, index) in order
    scoped = False
    for i, p in enumerate(spec.params):
        v = f"v{i}"
        pre: list[str] = []
        if p.kind == "expr":
            txt = f"self.expr({v})"
        elif p.kind == "binding":  # the value outside the new scope, the name and the rest inside
            pre = [f"    b{i} = self.expr({v}[1])", "    self.push()"]
            txt = f"self.define({v}[0], {v}[0].name) + ' := ' + b{i}"
            scoped = True
        else:
            ns[f"k{i}"] = _KIND_TEXT[p.kind]
            txt = f"k{i}(self, {v})"
        ns[f"d{i}"] = p.default
        parts.append((pre, txt, p, i))
    head = "T." + spec.name + ("[" if spec.role == "subscript" else "(")  # T.let[ty]
    tail = "]" if spec.role == "subscript" else ")"
    if not any(p.print_kw or p.print_omit or p.star for p in spec.params):  # all printed: one concatenation
        for k, (pre, txt, _p, _i) in enumerate(parts):
            code += pre
            code.append(f"    s{k} = {txt}")
        if scoped:
            code.append("    self.pop()")
        joined = " + ', ' + ".join(f"s{k}" for k in range(len(parts)))
        code.append(f"    return {head!r} + {joined} + {tail!r}")
    else:
        code.append("    out = []")
        for pre, txt, p, i in parts:
            code += pre
            if p.star:  # *values: nothing when there are none
                code += [f"    if v{i}:", f"        out.append({txt})"]
            elif p.print_kw or p.print_omit:
                cond = f"v{i} is not d{i}" + (f" and v{i} != d{i}" if p.kind in _PLAIN else "")
                code += [
                    f"    if {cond}:",
                    f"        out.append({p.name + '=' if p.print_kw else ''!r} + {txt})",
                ]
            else:
                code.append(f"    out.append({txt})")
        if scoped:
            code.append("    self.pop()")
        code.append(f"    return {head!r} + ', '.join(out) + {tail!r}")
    exec("\n".join(code), ns)  # the code is built above from the declaration, no user text
    return ns["print_form"]


# nodes with an expression form print from it (T.Call's node, Call, is printed by _call: an op
# call prints through the op table, a module-function call through the form); loops by kind
_FORM_PRINT = {
    f.node: _compile_form(f)
    for f in _forms.FORMS
    if f.role == "expr" and f.unparse is not None and f.node is not None
}
for cls in _FORM_PRINT:
    _EX.setdefault(cls, Printer._form if cls is _e.Call else _FORM_PRINT[cls])
_LOOP_PRINT = {kind: _compile_form(f) for kind, f in _forms.LOOPS.items()}
_KIND_TEXT.update(_layout_forms.KIND_TEXT)  # layouts (tirx/surface/layout_forms.py) print by their forms
for _lf in _layout_forms.FORMS:
    _EX[_lf.node] = _compile_form(_lf)
_LAYOUT_NODES = frozenset(f.node for f in _layout_forms.FORMS)
# types (a TensorType, a PointerType; a Buffer's T.Tensor from its fields) and binding statements
_TENSOR_PRINT = _compile_form(_forms.TENSOR)
_TENSOR_VALUES = _compile_form(_forms.TENSOR, values=True)
_PTR_PRINT = _compile_form(_forms.PTR)
_LET_PRINT = _compile_form(_forms.LET, values=True)  # a Bind's annotation, T.let[ty]
_BIND_PRINT = {f.node: _compile_form(f) for f in _forms.BINDINGS}
_REGION_PRINT = {f.node: _compile_form(f) for f in _forms.REGIONS}
_STMT_PRINT = {f.node: _compile_form(f) for f in _forms.STMTS}
for cls in _INFIX:
    _EX[cls] = Printer._infix
_EX[_e.Div] = Printer._div
for cls in _FUNC_BIN:
    _EX[cls] = Printer._funcbin
_ST: dict[type, Callable[[Printer, Any, int], None]] = {
    _s.Bind: Printer._bind,
    _s.BufferStore: Printer._store,
    _s.Evaluate: Printer._evaluate,
    _s.SeqStmt: Printer._seq,
    _s.For: Printer._for,
    _s.While: Printer._while,
    _s.IfThenElse: Printer._if,
    _s.Break: Printer._break,
    _s.Continue: Printer._continue,
    _s.Return: Printer._return,
    _s.Assert: Printer._assert,
    _s.AllocBuffer: Printer._alloc,
    _s.DeclBuffer: Printer._decl,
    _s.DeviceEntry: Printer._region,
    _s.AttrStmt: Printer._region,
    _s.RegionStmt: Printer._region_stmt,
}

_INDENTS = ["    " * i for i in range(64)]


def _check_own_pointer(b: Buffer, what: str) -> None:
    """A tensor parameter / allocation prints as ``T.Tensor(shape, dtype, scope=...)``, which
    loads with a data pointer ``T.Ptr(dtype, scope)``; any other pointer type would come back
    different, so it is refused (a view over other storage is a ``T.decl_tensor``)."""
    t = b.data.ty
    assert isinstance(t, PointerType)  # Buffer checks that data is a pointer
    if not (isinstance(t, PointerType) and t.element == b.dtype):
        raise ValueError(
            f"tirx.dumps: the {what} {b.name} of dtype {b.dtype} is over a pointer of type "
            f"{type_text(t)}, which the text cannot express (it would load as "
            f"{type_text(PointerType(b.dtype, t.scope))}); declare it with a DeclBuffer over the pointer"
        )


def _store_typed(e: _e.Call, dtype: Any) -> bool:
    """Whether the call, stored to a tensor of ``dtype``, reloads with its type untyped: an
    op that is void unless typed (the builder gives such a stored call the tensor's dtype)."""
    if e.ty != dtype:
        return False
    r = e.op.result
    try:
        return (r(e.args) if callable(r) else r) == void
    except Exception:
        return False


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


# ------------------------------------------------------------------ public API
def dumps(obj: Any) -> str:
    """Print a Function or Module (a whole file: header, trailing newline), or a Stmt,
    PrimExpr, Buffer or Type (the bare text)."""
    return deep.call(_print, obj)


def _print(obj: Any) -> str:
    if _TABLES and (type(obj) is Function or type(obj) is Module):
        table = _TABLES.get(obj)
        if table is not None and _comment_table.print_with is not None:
            return _comment_table.print_with(table, obj)
    return Printer().run(obj)


_TABLES = _comment_table.TABLES  # comments kept by loads(keep_comments=True); usually empty
