"""The inline transformer: grammar rules -> IRBuilder calls, with spans from tokens.

Lark calls one method per rule as the LALR parser reduces it (``transformer=`` on an
LALR parser), bottom-up and in source order. Rules named ``*_open`` / ``*_head`` reduce
before their bodies, so they open the builder frame (function, loop, branch, device
entry) and define the names the body sees; the matching block rule closes it. Simple
statements are emitted into the open frame as soon as they reduce. Nothing here runs
code from the text: names resolve through builder scopes, ``T.<name>`` through the
dtype table, the special forms below and the op table.
"""

from __future__ import annotations

import keyword
import re
from typing import Any

from tirx.diagnostics import error as _diag
from tirx.errors import DiagnosticError
from tirx.ir import op as _opmod
from tirx.ir.buffer import Buffer
from tirx.ir.expr import (
    BitNot,
    BufferLoad,
    Call,
    Cast,
    Div,
    FloatImm,
    IntImm,
    Not,
    PrimExpr,
    StringImm,
    Sub,
    Var,
    binop,
    const,
    convert,
)  # fmt: skip
from tirx.ir.fold import check_true_div
from tirx.ir.node import Attrs
from tirx.ir.operators import OPERATORS
from tirx.ir.span import Span
from tirx.ir.stmt import REGION_KINDS as _REGION_KINDS
from tirx.ir.types import PrimType, TensorType, Type, VoidType, int32, int64, parse_dtype
from tirx.surface import forms as _forms
from tirx.surface import layout_forms as _layout_forms  # noqa: F401 - registers T.Iter, T.TileLayout.from_iters, ...
from tirx.surface import region_forms as _region_forms  # noqa: F401 - registers T.launch_thread, ...
from tirx.surface.builder import IRBuilder
from tirx.surface.forms import slice_ramp

__all__ = ["TextBuilder"]

_NUMBER = (int, float)
_RESERVED = frozenset(keyword.kwlist) | {"T", "I", "True", "False", "None"}
_CONSTS = {"True": True, "False": False, "None": None}

# operators by their text spelling (the token's value), from the one operator table
_BIN = {o.text: o.node for o in OPERATORS if o.text is not None and not o.unary}
_PREC = {o.text: o.prec for o in OPERATORS if o.text is not None and not o.unary}
_CMP = frozenset(o.text for o in OPERATORS if o.assoc == "none")  # comparisons do not chain

_BINFORMS = {name: o.node for o in OPERATORS for name in o.func}  # T.min(a, b), T.truncmod(a, b), ...
_UNFORMS = {"Not": Not, "BitwiseNot": BitNot}  # TIRx's T.Not(a), T.BitwiseNot(a): the node as written
# T.<name> special forms handled here rather than through the op table
# (T.Ramp, T.Select, T.Cast, T.Let, T.Call, the loops, T.Tensor, T.Ptr, T.alloc_tensor,
# T.decl_tensor, T.device_entry, T.attr, T.evaluate, T.func_attr, the derived forms T.alloc_shared,
# T.decl_buffer, T.cast, T.grid, ... and T.let[...] are tirx/surface/forms.py's FormSpecs)
_FORMS = frozenset(
    {
        "function", "prim_func", "ir_module", *_BINFORMS, *_UNFORMS,
    }
)  # fmt: skip
_DECORATOR_ONLY = frozenset({"function", "prim_func", "ir_module"})
_IMPORTS = {
    "__future__": {"annotations"},
    "tirx.script": {"tirx", "ir"},
    "tvm_tirx.script": {"tirx", "ir"},
    "tvm.script": {"tirx", "ir"},
}


# ------------------------------------------------------------------ value markers
class _LetAnnot:
    __slots__ = ("ty",)

    def __init__(self, ty: Type):
        self.ty = ty


class _Kw:
    __slots__ = ("name", "tok", "value")

    def __init__(self, tok, value):
        self.name = tok.value
        self.tok = tok
        self.value = value


class _Walrus:
    __slots__ = ("tok", "value", "var")

    def __init__(self, var, value, tok):
        self.var = var
        self.value = value
        self.tok = tok


class _FuncRef:
    __slots__ = ("name", "span")

    ret = None  # the return type is not known while loading (tirx.surface.forms' funcref kind)

    def __init__(self, name, span):
        self.name = name
        self.span = span


class _Ret:
    __slots__ = ("ty",)

    def __init__(self, ty):
        self.ty = ty


class _Spec:
    """The value of a call that is only meaningful in one statement position."""

    __slots__ = ("args", "kind", "span")

    def __init__(self, kind: str, span, *args):
        self.kind = kind
        self.span = span
        self.args = args


_LET = object()  # the value of ``T.let`` (subscripted: ``T.let[T.int32]``)


def _desc(v: Any) -> str:
    if isinstance(v, PrimExpr):
        return f"an expression of dtype {v.ty}"
    if isinstance(v, TensorType):
        return "a T.Tensor type"
    if isinstance(v, Type):
        return f"the type {v.script() if hasattr(v, 'script') else v}"
    if isinstance(v, _Spec):
        return repr(v.args[0]) if v.kind in ("bind", "stmt") else f"T.{v.kind}(...)"
    if isinstance(v, _FuncRef):
        return f"the function reference {v.name}"
    if isinstance(v, _Walrus):
        return "an assignment expression (:=)"
    if isinstance(v, _LetAnnot) or v is _LET:
        return "T.let"
    return _forms.describe(v)


_ESC = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|.)", re.S)
_SIMPLE_ESC = {
    "n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0", "a": "\a", "b": "\b",
    "f": "\f", "v": "\v", "\n": "",
}  # fmt: skip


def _unescape_one(m: re.Match) -> str:
    s = m.group(1)
    c = s[0]
    if c in "xuU" and len(s) > 1:
        return chr(int(s[1:], 16))
    if c.isdigit() and c in "01234567":
        if s in _SIMPLE_ESC:
            return _SIMPLE_ESC[s]
        return chr(int(s, 8))
    r = _SIMPLE_ESC.get(s)
    if r is None:
        return "\\" + s  # unknown escapes stay as written (Python's behaviour)
    return r


def unescape(body: str) -> str:
    """Decode a string literal's body (no quotes), without eval."""
    if "\\" not in body:
        return body
    return _ESC.sub(_unescape_one, body)


# ------------------------------------------------------------------ T.<name> resolution
_RES: dict[str, tuple[str, Any]] = {}


def _resolve_t(rest: str) -> tuple[str, Any] | None:
    r = _RES.get(rest)
    if r is not None:
        return r
    spec = _forms.by_name(rest)
    if spec is not None:
        r = ("spec", spec)
    elif rest in _FORMS:
        r = ("form", rest)
    else:
        try:
            r = ("type", parse_dtype(rest))
        except ValueError:
            o = _opmod.lookup(rest)
            if o is not None:
                r = ("op", o)
            else:
                a = _opmod.lookup_alias(rest)
                if a is None:
                    return None
                r = ("alias", a)
    _RES[rest] = r
    return r


class _Dynamic:
    """``T.dynamic(...)`` in text: the Var a name is bound to (no IR of its own)."""

    __slots__ = ("var",)

    def __init__(self, var: Var) -> None:
        self.var = var


class TextBuilder:
    """The per-parse state and one callback per grammar rule (see ``tirx.lark``)."""

    def __init__(self, post=None) -> None:
        self.post = post
        self.reset(None, None)

    # ------------------------------------------------------------- state
    def reset(self, source_name, text) -> None:
        self.src = source_name
        self.text = text
        self.b = IRBuilder(source_name or "<string>", check_well_formed=True, source_text=text)
        self.open: list = []  # (context manager, span) of the open frames
        self.chains: list = []  # per if statement: else frames opened by elif
        self.let_scope: dict[str, list] = {}
        self.module_name: str | None = None
        self.standalone_fname: str | None = None  # the function being read when not in a module
        self.module_fnames: set[str] = set()
        self.gv_refs: list = []
        self.func_span = None
        self.ln_var = None
        self.ln_tok = None
        self.top_vars: dict[str, Var] = {}  # n = T.dynamic("n") before the function (TIRx's spelling)
        self.class_body = False  # between `class M:` and its first function

    # ------------------------------------------------------------- helpers
    def err(self, msg: str, span, cause: BaseException | None = None) -> DiagnosticError:
        return _diag(msg, span, self.text, cause)

    def tsp(self, t) -> Span:
        return Span(self.src, t.line, t.column, t.end_line, t.end_column)

    def stmt_span(self, t, nl) -> Span:
        return Span(self.src, t.line, t.column, nl.line, nl.column)

    def expr(self, v, span, what: str = "an expression") -> PrimExpr:
        if isinstance(v, PrimExpr):
            return v
        if type(v) in (int, float, bool):
            return convert(v)
        if type(v) is str:
            return StringImm(v)
        raise self.err(f"expected {what}, got {_desc(v)}", span)

    def as_type(self, v, span, what: str = "a type") -> Type:
        if isinstance(v, Type):
            return v
        if isinstance(v, _LetAnnot):
            return v.ty
        if type(v) is str:
            try:
                return parse_dtype(v)
            except ValueError as e:
                raise self.err(f"unknown dtype {v!r}", span, e) from e
        raise self.err(f"expected {what}, got {_desc(v)}", span)

    def check_new_name(self, tok) -> str:
        name = tok.value
        if name in _RESERVED:
            raise self.err(f"'{name}' is a reserved name and cannot be defined", self.tsp(tok))
        if self.b.is_defined(name) or self.let_scope.get(name):
            raise self.err(f"redefinition of '{name}' (a name still in scope)", self.tsp(tok))
        return name

    def enter(self, cm, span):
        spans = self.b.spans
        spans.append(span)
        try:
            v = cm.__enter__()
        except DiagnosticError:
            raise
        except (TypeError, ValueError, IndexError, RuntimeError) as e:
            raise self.err(str(e), span, e) from e
        finally:
            spans.pop()
        self.open.append((cm, span))
        return v

    def close(self):
        cm, span = self.open.pop()
        try:
            cm.__exit__(None, None, None)
        except DiagnosticError:
            raise
        except (TypeError, ValueError, IndexError, RuntimeError) as e:
            raise self.err(str(e), span, e) from e

    def emit(self, span, fn, *args):
        spans = self.b.spans
        spans.append(span)
        try:
            return fn(*args)
        except DiagnosticError:
            raise
        except (TypeError, ValueError, IndexError, RuntimeError) as e:
            raise self.err(str(e), span, e) from e
        finally:
            spans.pop()

    def cond(self, v, span, what: str) -> PrimExpr:
        c = self.expr(v, span, "a bool condition")
        t = c.ty
        if not (isinstance(t, PrimType) and t.is_bool and t.lanes == 1):
            raise self.err(f"{what} condition must be a bool expression, got dtype {t}", span)
        return c

    def buffer(self, tok) -> Buffer:
        name = tok.value
        v = self.b.lookup(name)
        if v is None:
            if self.let_scope.get(name):
                raise self.err(f"'{name}' is not a buffer", self.tsp(tok))
            raise self.err(f"undefined name '{name}'", self.tsp(tok))
        if type(v) is not Buffer:
            raise self.err(f"'{name}' is not a buffer and cannot be indexed", self.tsp(tok))
        return v

    def indices(self, buf: Buffer, idx: list | tuple, span) -> tuple:
        if len(idx) == 1 and type(idx[0]) is tuple and not idx[0]:
            idx = ()
        out = []
        for x in idx:
            if isinstance(x, PrimExpr):
                t = x.ty
                if not (isinstance(t, PrimType) and t.is_int):
                    raise self.err(
                        f"buffer {buf.name}: index must be an integer expression, got dtype {t}", span
                    )
                out.append(x)
            elif type(x) is int:
                try:
                    out.append(convert(x))
                except (TypeError, ValueError) as e:
                    raise self.err(str(e), span, e) from e
            else:
                raise self.err(
                    f"buffer {buf.name}: index must be an integer expression, got {_desc(x)}", span
                )
        if len(out) != len(buf.shape):
            raise self.err(
                f"buffer {buf.name} has rank {len(buf.shape)}, got {len(out)} ind{'ex' if len(out) == 1 else 'ices'}",
                span,
            )
        return tuple(out)

    def split_args(self, args, span, fname: str, allow_walrus: bool = False):
        pos: list = []
        kw: dict = {}
        for a in args:
            if type(a) is _Kw:
                if a.name in kw:
                    raise self.err(f"{fname}: keyword argument '{a.name}' repeated", self.tsp(a.tok))
                kw[a.name] = a.value
            else:
                if kw:
                    raise self.err(f"{fname}: positional argument follows keyword argument", span)
                if type(a) is _Walrus and not (allow_walrus and not pos):
                    raise self.err(
                        "an assignment expression (:=) is only allowed as T.Let's first argument",
                        self.tsp(a.tok),
                    )
                pos.append(a)
        return pos, kw

    def nargs(self, fname, pos, kw, span, lo, hi=None, kws=()):
        hi = lo if hi is None else hi
        if not lo <= len(pos) <= hi:
            want = f"{lo}" if lo == hi else f"{lo} to {hi}"
            raise self.err(f"{fname} takes {want} positional argument(s), got {len(pos)}", span)
        for k in kw:
            if k not in kws:
                raise self.err(f"{fname} got an unexpected keyword argument '{k}'", span)

    # ------------------------------------------------------------- tokens
    def INT(self, tok):
        s = tok.value
        try:
            if len(s) > 1 and s[0] == "0" and s[1] in "xXbBoO":
                return int(s, 0)
            return int(s, 10)
        except ValueError as e:
            raise self.err(f"invalid integer literal {s!r}", self.tsp(tok), e) from e

    def FLOAT(self, tok):
        try:
            return float(tok.value)
        except ValueError as e:
            raise self.err(f"invalid float literal {tok.value!r}", self.tsp(tok), e) from e

    def STRING(self, tok):
        return unescape(tok.value[1:-1])

    # ------------------------------------------------------------- file / module / function
    def start(self, c):
        try:
            return self.b.get()
        except RuntimeError as e:
            raise self.err("the text defines no function", None, e) from e

    def dynamic(self, args, span) -> _Dynamic:
        """``T.dynamic("n", dtype="int32")``: a fresh shape variable (no statement)."""
        pos, kw = self.split_args(args, span, "T.dynamic")
        self.nargs("T.dynamic", pos, kw, span, 1, 2, ("name", "dtype"))
        name = kw.get("name", pos[0] if pos else None)
        dt = kw.get("dtype", pos[1] if len(pos) > 1 else "int32")
        if not isinstance(name, str) or not name.isidentifier():
            raise self.err(f"T.dynamic: the name must be an identifier string, got {_desc(name)}", span)
        t = dt if isinstance(dt, PrimType) else self.as_type(dt, span, "a dtype")
        if not (isinstance(t, PrimType) and t.is_int and t.lanes == 1):
            raise self.err(f"T.dynamic: a shape variable needs an integer dtype, got {t}", span)
        return _Dynamic(Var(name, t, span=span))

    def dyn_decl(self, c):
        tok, val, nl = c
        span = self.stmt_span(tok, nl)
        if type(val) is not _Dynamic:
            raise self.err(f"only T.dynamic(...) may be assigned before the function, got {_desc(val)}", span)
        if tok.value in self.top_vars:
            raise self.err(f"'{tok.value}' is declared twice", self.tsp(tok))
        self.top_vars[tok.value] = val.var
        return None

    def header(self, c):
        mod = c[1].value
        names = _IMPORTS.get(mod)
        if names is None or c[3].value not in names:
            raise self.err(f"unsupported import: from {mod} import {c[3].value}", self.tsp(c[0]))
        return None

    def decorator(self, c):
        at, nm = c[0], c[1]
        args = c[2] if len(c) == 4 else None
        return (nm.value, args, at, nm)

    def decorators(self, c):
        return c

    def class_open(self, c):
        decos, name_tok = c[0], c[2]
        mattrs = None
        for name, args, _at, nm in decos:
            if name not in ("T.ir_module", "I.ir_module"):
                raise self.err(f"unsupported class decorator @{name}", self.tsp(nm))
            if args:
                pos, kw = self.split_args(args, self.tsp(nm), "@" + name)
                self.nargs("@" + name, pos, kw, self.tsp(nm), 0, 0, ("attrs",))
                mattrs = kw.get("attrs")
                if not isinstance(mattrs, (dict, Attrs)):
                    raise self.err(f"@{name}: attrs= must be a dict", self.tsp(nm))
        if name_tok.value == "T":  # T.<name> would name an op, not a function of the module
            raise self.err(
                "a module cannot be named T (T.<name> names the script namespace)", self.tsp(name_tok)
            )
        if keyword.iskeyword(name_tok.value):  # None/True/False: the printer could not write it
            raise self.err(
                f"a module cannot be named {name_tok.value} (a Python keyword)", self.tsp(name_tok)
            )
        self.module_name = name_tok.value
        self.class_body = True
        self.enter(self.b.module(name_tok.value, mattrs), self.tsp(name_tok))
        return None

    def classdef(self, c):
        self.close()
        for name, span in self.gv_refs:
            if name not in self.module_fnames:
                raise self.err(f"module {self.module_name} has no function '{name}'", span)
        return None

    def func_open(self, c):
        self.class_body = False
        decos, def_tok, name_tok = c[0], c[1], c[2]
        tparams = c[3] if len(c) > 3 else ()
        private = None
        for name, args, at, nm in decos:
            if name not in ("T.function", "T.prim_func"):
                raise self.err(f"unsupported function decorator @{name}", self.tsp(nm))
            if private is not None:
                raise self.err("more than one function decorator", self.tsp(at))
            private = False
            if args:
                pos, kw = self.split_args(args, self.tsp(nm), "@" + name)
                self.nargs("@" + name, pos, kw, self.tsp(nm), 0, 0, ("private", "check_well_formed"))
                p = kw.get("private", False)
                if type(p) is not bool:
                    raise self.err(f"@{name}: private= must be True or False", self.tsp(nm))
                private = p
        if private is None:
            raise self.err(f"function '{name_tok.value}' needs the @T.function decorator", self.tsp(def_tok))
        fname = name_tok.value
        self.standalone_fname = fname if self.module_name is None else None
        if self.module_name is not None:
            if fname in self.module_fnames:
                raise self.err(f"module {self.module_name} defines '{fname}' twice", self.tsp(name_tok))
            self.module_fnames.add(fname)
        span = Span(self.src, def_tok.line, def_tok.column, name_tok.end_line, name_tok.end_column)
        self.func_span = span
        self.enter(self.b.function(fname, private=private), span)
        for tok, ty in tparams:
            name = self.check_new_name(tok)
            sp = self.tsp(tok)
            t = int32 if ty is None else self.as_type(ty, sp, "a dtype")
            if not (isinstance(t, PrimType) and t.is_int and t.lanes == 1):
                raise self.err(f"shape variable '{name}' must have an integer dtype, got {t}", sp)
            self.b.define(name, Var(name, t, span=sp))
        return None

    def tparams(self, c):
        return c

    def tparam(self, c):
        return (c[0], c[1] if len(c) > 1 else None)

    def params(self, c):
        return None

    def param(self, c):
        tok, tyv = c
        sp = self.tsp(tok)
        name = self.check_new_name(tok)
        if isinstance(tyv, _LetAnnot) or tyv is _LET:
            raise self.err(f"parameter '{name}': T.let is for bindings, not parameters", sp)
        if type(tyv) is Var and any(v is tyv for v in self.top_vars.values()):
            # ``n: n`` after ``n = T.dynamic(...)`` (TIRx's spelling of a parameter that other
            # parameters' shapes use): the parameter is that variable
            self.emit(sp, self.b.param, name, tyv)
            return None
        ty = self.as_type(tyv, sp, "a parameter type (T.Tensor(...), a dtype or T.Ptr(...))")
        if isinstance(ty, VoidType):
            raise self.err(f"parameter '{name}' cannot have type T.void", sp)
        self.emit(sp, self.b.param, name, ty)
        return None

    def ret(self, c):
        return _Ret(c[0])

    def funcdef(self, c):
        for x in c:
            if type(x) is _Ret:
                ty = self.as_type(x.ty, self.func_span, "a return type")
                self.b.set_ret_type(ty)
        self.close()
        return None

    # ------------------------------------------------------------- simple statements
    def suite(self, c):
        return None

    def stmts(self, c):
        return None

    def store_subs(self, c):
        return c

    def slice_sub(self, c):
        colons = [x for x in c if getattr(x, "type", None) == "COLON"]  # lark's or the fast lexer's token
        parts = [x for x in c if getattr(x, "type", None) != "COLON"]
        colon = colons[0]
        span = self.tsp(colon)
        for x in parts:
            if not isinstance(x, PrimExpr) and type(x) is not int:
                raise self.err(f"a slice bound must be an integer expression, got {_desc(x)}", span)
        try:
            return slice_ramp(*parts)
        except (TypeError, ValueError) as e:
            raise self.err(str(e), span, e) from e

    def store(self, c):
        tok, idx, val, nl = c
        span = self.stmt_span(tok, nl)
        buf = self.buffer(tok)
        ind = self.indices(buf, idx, span)
        if not isinstance(val, PrimExpr) and type(val) not in (int, float, bool):
            raise self.err(f"cannot store {_desc(val)} into buffer {buf.name}", span)
        self.emit(span, self.b.store, buf, ind, val)
        return None

    def bind(self, c):
        tok, ann, val, nl = c
        span = self.stmt_span(tok, nl)
        name = self.check_new_name(tok)
        if isinstance(ann, _LetAnnot):
            ty = ann.ty
        else:
            ty = self.as_type(ann, span, "a T.let[...] annotation")
        if not isinstance(val, PrimExpr):
            if type(val) in (int, float, bool) and isinstance(ty, PrimType):
                try:
                    val = const(val, ty)
                except (TypeError, ValueError) as e:
                    raise self.err(str(e), span, e) from e
            else:
                raise self.err(f"cannot bind '{name}' to {_desc(val)}", span)
        v = self.emit(span, self.b.bind, name, val, ty)
        self.b.define(name, v)
        return None

    def assign(self, c):
        tok, val, nl = c
        span = self.stmt_span(tok, nl)
        name = self.check_new_name(tok)
        b = self.b
        if type(val) is _Spec:
            if val.kind != "bind":
                raise self.err(f"{_desc(val)} cannot be assigned to a name", span)
            buf = self.emit(span, val.args[0].emit, b, name)
            b.define(name, buf)
            return None
        if type(val) is _Dynamic:  # a fresh variable in scope (TIRx prints a T.Let's binder so)
            b.define(name, val.var)
            return None
        if isinstance(val, PrimExpr) or type(val) in (int, float, bool):
            v = self.emit(span, b.bind, name, val, None)
            b.define(name, v)
            return None
        raise self.err(f"cannot assign {_desc(val)} to '{name}'", span)

    def exprstmt(self, c):
        val, nl = c
        span = getattr(val, "span", None) or self.tsp(nl)
        span = Span(self.src, span.line, span.col, nl.line, nl.column)
        # a class body holds only T.module_attrs (the grammar puts exprstmt there before funcdef)
        in_func = not self.class_body
        is_mattrs = type(val) is _Spec and val.kind == "stmt" and val.args[0].form == "module_attrs"
        if not in_func and not is_mattrs:  # a statement in a class body, before its functions
            raise self.err(
                "only T.module_attrs({...}) may stand in a module's class body besides functions", span
            )
        if in_func and is_mattrs:
            raise self.err("T.module_attrs belongs in the class body of a @T.ir_module", span)
        if type(val) is _Spec:
            if val.kind == "stmt":
                self.emit(span, val.args[0].emit, self.b)
            else:
                raise self.err(f"{_desc(val)} cannot be used as a statement", span)
            return None
        if isinstance(val, Call):
            self.emit(span, self.b.evaluate, val)
            return None
        raise self.err(f"{_desc(val)} cannot be used as a statement (wrap it in T.evaluate(...))", span)

    def pass_stmt(self, c):
        return None

    def break_stmt(self, c):
        span = self.stmt_span(c[0], c[1])
        self.emit(span, self.b.break_)
        return None

    def continue_stmt(self, c):
        span = self.stmt_span(c[0], c[1])
        self.emit(span, self.b.continue_)
        return None

    def return_stmt(self, c):
        span = self.stmt_span(c[0], c[-1])
        val = None
        if len(c) == 3:
            val = self.expr(c[1], span, "a return value")
        self.emit(span, self.b.return_, val)
        return None

    def assert_stmt(self, c):
        span = self.stmt_span(c[0], c[-1])
        cond = self.cond(c[1], span, "assert")
        kind, msg = "RuntimeError", ()
        if len(c) == 4:
            m = c[2]
            if type(m) is str:
                msg = (m,)
            elif (
                type(m) is tuple
                and len(m) == 2
                and type(m[0]) is str
                and type(m[1]) in (list, tuple)
                and all(type(x) is str for x in m[1])
            ):
                kind, msg = m[0], tuple(m[1])
            else:
                raise self.err('assert message must be ("Kind", ["message", ...]) or a string', span)
        self.emit(span, self.b.assert_, cond, kind, msg)
        return None

    # ------------------------------------------------------------- compound statements
    def for_head(self, c):
        for_tok, name_tok, spec = c
        if type(spec) is not _Spec or spec.kind != "loop":
            raise self.err(
                f"a for loop iterates over range(...), T.serial/unroll/vectorized/parallel/thread_binding(...), got {_desc(spec)}",
                self.tsp(for_tok),
            )
        sp = spec.span
        span = Span(self.src, for_tok.line, for_tok.column, sp.end_line, sp.end_col)
        name = self.check_new_name(name_tok)
        start, extent, kind, step, ann, thread = spec.args
        v = self.enter(self.b.for_(name, start, extent, kind, step, ann, thread), span)
        self.b.define(name, v)
        return None

    def for_stmt(self, c):
        self.close()
        return None

    def head_span(self, tok, v) -> Span:
        """From a header keyword to the end of its condition (when the condition has a span)."""
        sp = v.span if isinstance(v, PrimExpr) and type(v) is not Var else None
        if sp is None:
            return self.tsp(tok)
        return Span(self.src, tok.line, tok.column, sp.end_line, sp.end_col)

    def while_head(self, c):
        tok, v = c
        span = self.head_span(tok, v)
        cond = self.cond(v, span, "while")
        self.enter(self.b.while_(cond), span)
        return None

    while_stmt = for_stmt

    def with_head(self, c):
        tok, spec = c[0], c[1]
        name_tok = c[3] if len(c) == 4 else None  # with ... as NAME
        span = self.tsp(tok)
        if (
            type(spec) is _Spec and spec.kind in _REGION_KINDS
        ):  # TIRx's regions (tirx/surface/region_forms.py)
            span = Span(self.src, tok.line, tok.column, spec.span.end_line, spec.span.end_col)
            binds = _REGION_KINDS[spec.kind][1]
            if binds != (name_tok is not None):
                what = "needs" if binds else "binds no value: drop"
                raise self.err(f"with T.{spec.kind}(...) {what} 'as <name>'", span)
            name = self.check_new_name(name_tok) if name_tok is not None else None
            kind, args = spec.args
            v = self.enter(self.b.region(kind, args, name), span)
            if name is not None:
                self.b.define(name, v)
            return None
        if name_tok is not None:
            raise self.err("this with-statement binds no value", self.tsp(name_tok))
        if type(spec) is not _Spec or spec.kind not in ("device_entry", "attr"):
            raise self.err(f"with takes T.device_entry(...) or T.attr(...), got {_desc(spec)}", span)
        span = Span(self.src, tok.line, tok.column, spec.span.end_line, spec.span.end_col)
        if spec.kind == "device_entry":
            self.enter(self.b.device_entry(*spec.args), span)
        else:
            self.enter(self.b.attr(*spec.args), span)
        return None

    with_stmt = for_stmt

    def if_head(self, c):
        tok, v = c
        span = self.head_span(tok, v)
        cond = self.cond(v, span, "if")
        self.chains.append([])
        self.enter(self.b.if_(cond), span)
        return None

    def if_block(self, c):
        self.close()
        return None

    elif_block = if_block
    else_block = if_block

    def elif_head(self, c):
        tok, v = c
        span = self.head_span(tok, v)
        cond = self.cond(v, span, "elif")
        self.enter(self.b.else_(), span)
        self.chains[-1].append(self.open.pop())
        self.enter(self.b.if_(cond), span)
        return None

    def else_head(self, c):
        self.enter(self.b.else_(), self.tsp(c[0]))
        return None

    def if_stmt(self, c):
        chain = self.chains.pop()
        while chain:
            self.open.append(chain.pop())
            self.close()
        return None

    # ------------------------------------------------------------- expressions
    def name(self, c):
        tok = c[0]
        n = tok.value
        if self.let_scope:
            vs = self.let_scope.get(n)
            if vs:
                return vs[-1]
        v = self.b.lookup(n)
        if v is None:
            v = self.top_vars.get(n)
        if v is None:
            if n in _CONSTS:
                return _CONSTS[n]
            raise self.err(f"undefined name '{n}'", self.tsp(tok))
        if type(v) is Buffer:
            v = v.data
        self.ln_var = v  # the last name used, for the end of a binop span
        self.ln_tok = tok
        return v

    def dotted(self, c):
        tok = c[0]
        s = tok.value
        head, _, rest = s.partition(".")
        if head == "T":
            r = _resolve_t(rest)
            if r is not None:
                kind, val = r
                if kind == "type":
                    return val
                if kind == "spec" and val.role == "subscript":
                    return _LET  # bare T.let
                if kind in ("op", "alias"):
                    raise self.err(f"T.{rest} is an op: call it, T.{rest}(...)", self.tsp(tok))
                raise self.err(f"T.{rest} must be called: T.{rest}(...)", self.tsp(tok))
        elif head == self.module_name and "." not in rest:
            sp = self.tsp(tok)
            self.gv_refs.append((rest, sp))
            return _FuncRef(rest, sp)
        elif head == "Module" and self.module_name is None and rest == self.standalone_fname:
            return _FuncRef(rest, self.tsp(tok))  # a standalone function calling itself (TIRx's spelling)
        elif rest == "data" and isinstance(self.b.lookup(head), Buffer):
            # a buffer's backing pointer, printed as ``X.data``
            return self.b.lookup(head).data
        raise self.err(f"unknown name {s}", self.tsp(tok))

    def call(self, c):
        tok = c[0]
        rpar = c[-1]
        args = c[1] if len(c) == 3 else ()
        span = Span(self.src, tok.line, tok.column, rpar.end_line, rpar.end_column)
        s = tok.value
        if tok.type == "NAME":
            if s == "range" and self.b.lookup("range") is None:
                pos, kw = self.split_args(args, span, "range")
                return self.form_call(_forms.RANGE, pos, kw, span, "range")
            if self.b.lookup(s) is None and not self.let_scope.get(s):
                raise self.err(f"undefined name '{s}'", self.tsp(tok))
            raise self.err(f"'{s}' is not callable", self.tsp(tok))
        head, _, rest = s.partition(".")
        if s == "T.dynamic":
            return self.dynamic(args, span)
        r = _resolve_t(rest) if head == "T" else None
        if r is None:
            chain = self.surface_chain(rest, tok) if head == "T" else None
            if chain is None:
                raise self.err(f"unknown name {s}", self.tsp(tok))
            pos, kw = self.split_args(args, span, s)
            if kw:
                raise self.err(f"{s} takes no keyword arguments", span)
            try:
                return chain(*pos, span=span)
            except (TypeError, ValueError) as e:
                raise self.err(str(e), span, e) from e
        kind, val = r
        fname = s
        if kind == "alias":  # T.cuda.warp_sum(x): builds its target op's call
            pos, kw = self.split_args(args, span, fname)
            if kw:
                raise self.err(f"{s} takes no keyword arguments", span)
            for i, a in enumerate(pos):
                if not (isinstance(a, (PrimExpr, str)) or type(a) in (int, float, bool)):
                    raise self.err(f"{s}: argument {i + 1} must be an expression, got {_desc(a)}", span)
            try:
                return val(*pos, span=span)
            except (TypeError, ValueError) as e:
                raise self.err(str(e), span, e) from e
        if kind == "op":
            pos, kw = self.split_args(args, span, fname)
            return self.op_call(val, pos, kw, span)
        if kind == "type":
            pos, kw = self.split_args(args, span, fname)
            return self.typed_const(val, pos, kw, span, fname)
        if kind == "spec":
            pos, kw = self.split_args(
                args, span, fname, allow_walrus=bool(val.params) and val.params[0].kind == "binding"
            )
            return self.form_call(val, pos, kw, span, fname)
        pos, kw = self.split_args(args, span, fname)
        if val in _UNFORMS:
            self.nargs(fname, pos, kw, span, 1)
            self.operand(pos[0], span)
            try:
                return _UNFORMS[val](convert(pos[0]), span=span)
            except (TypeError, ValueError) as e:
                raise self.err(str(e), span, e) from e
        if val in _BINFORMS:
            self.nargs(fname, pos, kw, span, 2)
            a, b = pos
            self.operand(a, span)
            self.operand(b, span)
            try:
                return binop(_BINFORMS[val], a, b, span)
            except (TypeError, ValueError) as e:
                raise self.err(str(e), span, e) from e
        raise self.err(f"T.{val} cannot be called here", span)  # T.let, the decorators

    def arguments(self, c):
        return c

    def kwarg(self, c):
        return _Kw(c[0], c[1])

    def walrus(self, c):
        tok, val = c
        sp = self.tsp(tok)
        e = self.expr(val, sp)
        name = self.check_new_name(tok)
        v = Var(name, e.ty, span=sp)
        self.let_scope.setdefault(name, []).append(v)
        return _Walrus(v, e, tok)

    def subscript(self, c):
        tok, idx, rsqb = c
        span = Span(self.src, tok.line, tok.column, rsqb.end_line, rsqb.end_column)
        if tok.type == "DOTTED":
            head, _, rest = tok.value.partition(".")
            r = _resolve_t(rest) if head == "T" else None
            if (
                r is not None and r[0] == "spec" and r[1].role == "subscript"
            ):  # T.let[ty]: tirx.surface.forms.LET
                try:
                    return _LetAnnot(r[1].subscript(idx[0] if len(idx) == 1 else tuple(idx), span))
                except (TypeError, ValueError) as e:
                    raise self.err(str(e), span, e) from e
            self.dotted([tok])  # raises the right error for unknown names
            raise self.err(f"{tok.value} cannot be indexed", span)
        buf = self.buffer(tok)
        return BufferLoad(buf, self.indices(buf, idx, span), span=span)

    def subs(self, c):
        return c

    def tuple(self, c):
        return tuple(c)

    def empty_tuple(self, c):
        return ()

    def list(self, c):
        return c

    def dict(self, c):
        d = {}
        for k, v in c:
            d[k] = v
        return d

    def dictitem(self, c):
        k, colon, v = c
        if type(k) is not str and type(k) is not Var:  # a Var: T.Let(body, where={v: value})
            raise self.err(f"dict keys must be string literals, got {_desc(k)}", self.tsp(colon))
        return (k, v)

    def operand(self, v, span):
        if isinstance(v, PrimExpr) or type(v) in (int, float, bool):
            return v
        raise self.err(f"expected an expression, got {_desc(v)}", span)

    def bin(self, op, a, b):
        cls = _BIN[op.value]
        if not (isinstance(a, PrimExpr) or type(a) in (int, float, bool)):
            raise self.err(f"unsupported left operand of '{op.value}': {_desc(a)}", self.tsp(op))
        if not (isinstance(b, PrimExpr) or type(b) in (int, float, bool)):
            raise self.err(f"unsupported right operand of '{op.value}': {_desc(b)}", self.tsp(op))
        if cls is Div:
            try:
                check_true_div(a, b)  # TIRx's '/' refuses two integers (tirx/ir/fold.py)
            except TypeError as e:
                raise self.err(str(e), self.tsp(op), e) from e
        # a Python number combines with an expression as in TIRx (tirx/ir/fold.py, through
        # binop); the common case, an int32-sized int beside an int32 / int64 scalar, becomes
        # that dtype's constant here (what those rules give, minus the detour)
        ta, tb = type(a), type(b)
        if tb is int and ta is not int and isinstance(a, PrimExpr):
            t = a.ty
            if (t is int32 or t is int64) and -(1 << 31) <= b < 1 << 31:
                b = IntImm(b, t)
        elif ta is int and tb is not int and isinstance(b, PrimExpr):
            t = b.ty
            if (t is int32 or t is int64) and -(1 << 31) <= a < 1 << 31:
                a = IntImm(a, t)
        sa = a.span if type(a) is not Var and isinstance(a, PrimExpr) else None
        sb = b.span if type(b) is not Var and isinstance(b, PrimExpr) else None
        if sa is not None:
            l0, c0 = sa.line, sa.col
        else:
            l0, c0 = op.line, op.column
        if sb is not None:
            l1, c1 = sb.end_line, sb.end_col
        elif b is self.ln_var:  # the right operand is the name just read
            t = self.ln_tok
            l1, c1 = t.end_line, t.end_column
        else:
            l1, c1 = op.end_line, op.end_column
        try:
            if isinstance(a, PrimExpr) and isinstance(b, PrimExpr) and a.ty is b.ty:
                return cls(a, b, span=Span(self.src, l0, c0, l1, c1))  # what binop builds, minus its detours
            return binop(cls, a, b, Span(self.src, l0, c0, l1, c1))
        except (TypeError, ValueError) as e:
            raise self.err(str(e), self.tsp(op), e) from e

    def arith(self, c):
        if len(c) == 3:
            return self.bin(c[1], c[0], c[2])
        vals = [c[0]]
        flags = [False]
        ops: list = []
        for i in range(1, len(c), 2):
            op = c[i]
            p = _PREC[op.value]
            while ops and _PREC[ops[-1].value] >= p:
                self._reduce(vals, flags, ops)
            ops.append(op)
            vals.append(c[i + 1])
            flags.append(False)
        while ops:
            self._reduce(vals, flags, ops)
        return vals[0]

    def _reduce(self, vals, flags, ops):
        op = ops.pop()
        b = vals.pop()
        fb = flags.pop()
        a = vals.pop()
        fa = flags.pop()
        is_cmp = op.value in _CMP
        if is_cmp and (fa or fb):
            raise self.err("comparisons cannot be chained; parenthesize one side", self.tsp(op))
        vals.append(self.bin(op, a, b))
        flags.append(is_cmp)

    test = arith

    def not_expr(self, c):
        tok, v = c
        sp = self.tsp(tok)
        e = self.expr(v, sp)
        try:
            return Not(e, span=sp)
        except (TypeError, ValueError) as ex:
            raise self.err(str(ex), sp, ex) from ex

    def neg(self, c):
        tok, v = c
        t = type(v)
        if t is int or t is float:
            return -v
        sp = self.tsp(tok)
        e = self.expr(v, sp)
        ty = e.ty
        if not (isinstance(ty, PrimType) and not ty.is_bool):
            raise self.err(f"cannot negate an expression of dtype {ty}", sp)
        try:
            return Sub(const(0, ty), e, span=sp)
        except (TypeError, ValueError) as ex:
            raise self.err(str(ex), sp, ex) from ex

    def pos(self, c):
        tok, v = c
        return self.operand(v, self.tsp(tok))

    def invert(self, c):
        tok, v = c
        sp = self.tsp(tok)
        e = self.expr(v, sp)
        try:
            return BitNot(e, span=sp)
        except (TypeError, ValueError) as ex:
            raise self.err(str(ex), sp, ex) from ex

    # ------------------------------------------------------------- calls
    def typed_const(self, ty, pos, kw, span, fname):
        if len(pos) == 1 and not kw and type(ty) is PrimType and ty.lanes == 1:
            a = pos[0]
            ta = type(a)
            try:
                if ta is float and ty.is_float:
                    return FloatImm(a, ty, span=span)
                if ta is int and ty.is_int:
                    return IntImm(a, ty, span=span)
            except (TypeError, ValueError) as e:
                raise self.err(f"{fname}: {e}", span, e) from e
        if not isinstance(ty, PrimType):
            raise self.err(f"{fname} is a type and cannot be called", span)
        self.nargs(fname, pos, kw, span, 1)
        a = pos[0]
        if type(a) is str:
            if ty.is_float and a in ("inf", "-inf", "nan", "+inf", "-nan", "+nan"):  # float(a): no eval
                a = float(a)
            else:
                raise self.err(f"{fname}: cannot make a constant from the string {a!r}", span)
        if isinstance(a, PrimExpr):
            return a if a.ty == ty else Cast(ty, a, span=span)
        if type(a) not in (int, float, bool):
            raise self.err(f"{fname}: expected a number, got {_desc(a)}", span)
        try:
            return const(a, ty, span=span)
        except (TypeError, ValueError) as e:
            raise self.err(f"{fname}: {e}", span, e) from e

    def form_call(self, spec, pos, kw, span, fname):
        """``T.<form>(...)``: bound, checked and built by its FormSpec (tirx/surface/forms.py)."""
        if pos and type(pos[0]) is _Walrus:  # T.Let(x := v, ...): x is visible to the end of the form
            w = pos[0]
            vs = self.let_scope.get(w.var.name)
            if vs and vs[-1] is w.var:
                vs.pop()
                if not vs:
                    del self.let_scope[w.var.name]
        if spec.role == "subscript":
            raise self.err(f"{fname} is written {fname}[...], not called", span)
        try:
            r = spec.call(pos, kw, span, fname)
        except (TypeError, ValueError) as e:  # FormError (a TypeError) or the node's own check
            raise self.err(str(e), span, e) from e
        if spec.role == "loop":  # a for header: (start, extent, kind, step, annotations, thread)
            return _Spec("loop", span, *r)
        if spec.role == "loops":  # T.grid: a text for header binds one name, so one loop
            if len(r) != 1:
                raise self.err(
                    f"{fname}: a for header of the text binds one name; write {len(r)} nested loops", span
                )
            return _Spec("loop", span, *r[0])
        if spec.role == "bind":  # X = T.alloc_tensor(...): a Pending the target's name completes
            return _Spec("bind", span, r)
        if spec.role == "stmt":  # T.evaluate(...), T.func_attr(...): a Pending emitted where it stands
            return _Spec("stmt", span, r)
        if spec.role == "region":  # with T.device_entry(...) / T.attr(...): the header's values
            return _Spec(spec.name, span, *r)
        return r

    def surface_chain(self, rest, tok):
        """``T.ptx.fence.proxy.async_.shared__cta``: an op's script surface (its ``"script"``
        implementation, the PTX table's modifier chains) followed by attributes, as in Python."""
        parts = rest.split(".")
        for k in range(len(parts) - 1, 0, -1):
            o = _opmod.lookup(".".join(parts[:k]))
            if o is None:
                continue
            v = _opmod.impl("script", o)
            if v is None:
                return None
            try:
                for p in parts[k:]:
                    v = getattr(v, p)
            except AttributeError as e:
                raise self.err(str(e), self.tsp(tok), e) from e
            return v
        return None

    def op_call(self, o, pos, kw, span):
        ty = None
        kw = dict(kw or {})
        if "ty" in kw:
            ty = self.as_type(kw.pop("ty"), span, "a result type for ty=")
        surface = _opmod.impl("script", o)  # T.<name> as the Python frontend sees it (PTX table)
        keywords = getattr(surface, "takes_keywords", False)  # it takes keyword options itself
        for k in kw:
            if k not in o.params and not keywords:
                raise self.err(f"T.{o.name} got an unexpected keyword argument '{k}'", span)
        for i, a in enumerate(pos):
            if type(a) is Buffer and i < len(o.args) and o.args[i].strip("*?") == "p":
                continue  # a buffer where a pointer goes (TIRx's spelling): the op takes its data
            if not (isinstance(a, (PrimExpr, str)) or type(a) in (int, float, bool)):
                raise self.err(f"T.{o.name}: argument {i + 1} must be an expression, got {_desc(a)}", span)
        try:
            if surface is not None and ty is None and (not kw or keywords):
                return surface(*pos, span=span, **kw)
            return _opmod.call(o, *pos, ty=ty, span=span, **kw)
        except (TypeError, ValueError) as e:
            raise self.err(str(e), span, e) from e


_ = (FloatImm, Type)
