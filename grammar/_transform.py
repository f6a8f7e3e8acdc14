"""The inline transformer: grammar rules -> IRBuilder calls, with spans from tokens.

Lark calls one method per rule as the LALR parser reduces it (``transformer=`` on an
LALR parser), bottom-up and in source order. Rules named ``*_open`` / ``*_head`` reduce
before their bodies, so they open the builder frame (function, loop, branch, device
entry) and define the names the body sees; the matching block rule closes it. Simple
statements are emitted into the open frame as soon as they reduce. Nothing here runs
code from the text: names resolve through builder scopes, ``T.<name>`` through the
dtype table, the special forms and the op table (``_values.py``).

``TextBuilder`` holds the per-parse state, the helpers and the token callbacks; the rule
callbacks come from one mixin per node family (issue #30: no class over 600 lines):
``_transform_defs.py`` (file, module, function), ``_transform_stmt.py`` (statements),
``_transform_expr.py`` (expressions, calls).
"""

from __future__ import annotations

import keyword
import re

from tirx.diagnostics import error as _diag
from tirx.errors import DiagnosticError
from tirx.grammar._transform_defs import DefsMixin
from tirx.grammar._transform_expr import ExprMixin
from tirx.grammar._transform_stmt import StmtMixin
from tirx.grammar._values import _desc, _Dynamic, _Kw, _LetAnnot, _Walrus
from tirx.ir.buffer import Buffer
from tirx.ir.expr import PrimExpr, StringImm, Var, convert
from tirx.ir.span import Span
from tirx.ir.types import PrimType, Type, parse_dtype
from tirx.surface import layout_forms as _layout_forms  # noqa: F401 - registers T.Iter, T.TileLayout.from_iters, ...
from tirx.surface import region_forms as _region_forms  # noqa: F401 - registers T.launch_thread, ...
from tirx.surface.builder import IRBuilder

__all__ = ["TextBuilder"]

_NUMBER = (int, float)
_RESERVED = frozenset(keyword.kwlist) | {"T", "I", "True", "False", "None"}


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


class TextBuilder(DefsMixin, StmtMixin, ExprMixin):
    """The per-parse state and one callback per grammar rule (see ``tirx.lark``)."""

    def __init__(self, post=None) -> None:
        self.post = post
        self.reset(None, None)

    # ------------------------------------------------------------- state
    def reset(self, source_name, text, mutable: dict | None = None) -> None:
        self.src = source_name
        # per function, the names the frontend's rule makes mutable locals (tirx/surface/mutable.py);
        # None until a text re-assigns a name bound in an enclosing block (then read again with it)
        self.mutable_by_func = mutable
        self.cur_mutable: frozenset = frozenset()
        self.text = text
        self.bare_tensors: list = []  # tensors written by their name, not yet consumed by a call
        self.b = IRBuilder(source_name or "<string>", check_well_formed=True, source_text=text)
        self.open: list = []  # (context manager, span) of the open frames
        # frames entered by a bare statement (``T.device_entry(...)`` with no ``with``): the rest
        # of their block goes inside, so the block's end closes them first (ids of the managers)
        self.bare: set[int] = set()
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
        while self.bare and id(self.open[-1][0]) in self.bare:  # a bare region ends with its block
            self.bare.discard(id(self.open[-1][0]))
            self.exit_frame()
        self.exit_frame()

    def enter_bare(self, cm, span):
        """A region written as a statement (``T.device_entry(...)``, ``T.attr(...)``,
        ``tx = T.launch_thread(...)``): the rest of the block goes inside, as in the frontend."""
        v = self.enter(cm, span)
        self.bare.add(id(cm))
        return v

    def exit_frame(self):
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
        c = self.expr(v, span, "a condition")
        t = c.ty
        if not (isinstance(t, PrimType) and t.lanes == 1):  # TIRx keeps ``if x:`` on any scalar
            raise self.err(f"{what} condition must be a scalar expression, got dtype {t}", span)
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
        if len(idx) == 1 and type(idx[0]) is tuple:
            idx = idx[0]  # A[(i, j)] is A[i, j] (A[()] a scalar's), as Python reads it
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

    def dynamic(self, args, span) -> _Dynamic:
        """``T.dynamic("n", dtype="int32")``: a fresh variable (no statement): a shape
        variable, or the variable of a ``T.Let`` (TIRx declares those so, of any dtype)."""
        pos, kw = self.split_args(args, span, "T.dynamic")
        self.nargs("T.dynamic", pos, kw, span, 1, 2, ("name", "dtype"))
        name = kw.get("name", pos[0] if pos else None)
        dt = kw.get("dtype", pos[1] if len(pos) > 1 else "int32")
        if not isinstance(name, str) or not (name.isidentifier() or name == ""):  # "": TIRx's unnamed var
            raise self.err(f"T.dynamic: the name must be an identifier string, got {_desc(name)}", span)
        t = dt if isinstance(dt, PrimType) else self.as_type(dt, span, "a dtype")
        if not isinstance(t, PrimType):
            raise self.err(f"T.dynamic: the variable needs a dtype, got {t}", span)
        return _Dynamic(Var(name, t, span=span))

    def head_span(self, tok, v) -> Span:
        """From a header keyword to the end of its condition (when the condition has a span)."""
        sp = v.span if isinstance(v, PrimExpr) and type(v) is not Var else None
        if sp is None:
            return self.tsp(tok)
        return Span(self.src, tok.line, tok.column, sp.end_line, sp.end_col)

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
