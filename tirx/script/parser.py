"""The Python-AST frontend: a decorated Python function becomes IR through the IRBuilder.

The parser walks the function's ``ast`` itself (no ``exec`` of the kernel body):
statements drive the IRBuilder, expressions are evaluated by a small evaluator that runs
ordinary Python for Python values (metaprogramming) and builds IR for IR values. Names
resolve, in order, through the kernel's own scopes, the function's closure, the caller's
locals at decoration time (names used only in annotations), the module globals and the
builtins.

Assignment rules (see docs/frontend.md):

* ``x = <pointer expr>`` -> immutable ``Bind`` with the exact PointerType; reassigning
  it in the kernel is a diagnostic.
* ``x: T.let = e`` / ``x: T.let[ty] = e`` -> immutable ``Bind``.
* ``x: T.int32 = e`` -> a mutable local (one-element ``local`` tensor).
* ``x = <numeric>``: a ``Bind`` (a new var on each straight-line re-assignment) unless
  the name is re-assigned inside a loop/branch nested below its definition; then a
  mutable local.
* anything else (buffers, tuples, Python objects) binds the Python name.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import inspect
import itertools
import linecache
import operator
import sys
import textwrap
from numbers import Number
from typing import Any, cast

from tirx.surface.builder import IRBuilder
from tirx.surface.forms import LET, RANGE, slice_ramp
from tirx.surface.parser_stack import current_parser
from tirx.surface.parser_stack import stack as _stack

from ..diagnostics import render as _render
from ..errors import DiagnosticError
from ..ir import (
    And,
    Bind,
    Buffer,
    BufferLoad,
    IntImm,
    Max,
    Min,
    Node,
    Not,
    PointerType,
    PrimExpr,
    PrimType,
    SequentialSpan,
    Span,
    Sub,
    TensorType,
    Type,
    Var,
    binop,
    convert,
    deep,
)  # fmt: skip
from ..ir import op as _op
from ..ir.expr import Cast, FloatImm, Mul, Or
from ..ir.fold import check_true_div, fold, fold_cast
from ..ir.operators import OPERATORS
from ..ir.types import as_type

__all__ = [
    "Cell",
    "DeviceEntrySpec",
    "LoopSpec",
    "MetaVar",
    "Parser",
    "current_parser",
    "function_source",
    "take_name",
]

_MISSING = object()
_ZERO = IntImm(0)


def _store_slices(idx: Any) -> Any:
    """Store-target slices ``A[s:e:k] = v`` as the lanes they store to (``forms.slice_ramp``)."""
    if type(idx) is slice:
        return _slice_ramp(idx)
    if type(idx) is tuple and any(type(x) is slice for x in idx):
        return tuple(_slice_ramp(x) if type(x) is slice else x for x in idx)
    return idx


def _slice_ramp(s: slice) -> Any:
    if s.start is None or s.stop is None:
        raise ValueError("a store-target slice needs its start and stop (A[s:e] = v)")
    return slice_ramp(*(_unwrap(x) for x in (s.start, s.stop) + (() if s.step is None else (s.step,))))


def bool_chain(values: Any, is_and: bool, make: Any) -> Any:
    """``a and b and ...`` (``or``) as Python means it, over host values and IR: operands are
    taken from ``values`` lazily (a host value that decides stops the chain, as Python
    short-circuits); two IR operands combine with ``make(a, b)`` (``And``/``Or``). Shared by
    the frontend's ``and``/``or`` and TIRx's builder API (``T.and_``/``T.or_``)."""
    acc: Any = _MISSING
    for v in values:
        if type(v) is MetaVar:
            v = v.value
        if type(v) is Cell:
            v = v.load()
        if acc is _MISSING:
            acc = v
        elif isinstance(acc, PrimExpr):
            if isinstance(v, PrimExpr):
                acc = make(_to_bool_expr(acc), _to_bool_expr(v))
            elif (is_and and not v) or (not is_and and v):
                return v
            # else: acc and True -> acc ; acc or False -> acc
        else:
            acc = v
        if not isinstance(acc, PrimExpr) and ((is_and and not acc) or (not is_and and acc)):
            return acc
    return acc


def take_name(default: str) -> str:
    """The name of the assignment target being evaluated (``As = T.alloc_shared(...)``)."""
    p = current_parser()
    if p is None or p.pending_name is None:
        return default
    n, p.pending_name = p.pending_name, None
    return n


# ------------------------------------------------------------------ script values
class Cell:
    """A mutable scalar: a one-element local tensor. Reading the name loads ``[0]``."""

    __slots__ = ("buffer",)

    def __init__(self, buffer: Buffer):
        self.buffer = buffer

    def load(self, span: Any = None) -> BufferLoad:
        return BufferLoad(self.buffer, (_ZERO,), span=span)

    def __tirx_expr__(self) -> BufferLoad:
        return self.load()

    def __repr__(self) -> str:
        return f"Cell({self.buffer.name})"


class MetaVar:
    """``T.meta_var(v)``: assigning it binds the Python name to ``v`` itself (no Bind)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __tirx_expr__(self) -> PrimExpr:
        return convert(self.value)


class LoopSpec:
    """What ``range``/``T.serial``/``T.grid``/... return: loops for a ``for`` statement.

    ``loops`` is a list of (start, extent, kind, step, annotations, thread); ``bind``
    maps the created loop vars to the values of the ``for`` targets (default: the
    vars themselves). Iterating it in plain Python (comprehensions) works when the
    bounds are constants.
    """

    __slots__ = ("bind", "loops", "names")

    def __init__(self, loops: list, bind: Any = None, names: Any = None):
        self.loops = loops
        self.bind = bind
        self.names = names

    def __iter__(self):
        ranges = []
        for start, extent, _kind, step, _ann, _thr in self.loops:
            vals = []
            for x in (start, extent, 1 if step is None else step):
                if isinstance(x, IntImm):
                    x = x.value
                if not isinstance(x, int):
                    raise TypeError("only loops with constant bounds can be iterated in Python")
                vals.append(x)
            ranges.append(range(vals[0], vals[0] + vals[1], vals[2]))
        if len(ranges) == 1:
            return iter(ranges[0])
        return iter(itertools.product(*ranges))


class _RegionCM:
    """``with T.device_entry(...)`` / ``with T.attr(...)`` run from plain Python (TIRx's builder
    API, tirx/script/protocol): the builder's region frame. A parsed kernel opens it itself."""

    __slots__ = ("_cm",)
    _cm: contextlib.AbstractContextManager[Any] | None

    def __enter__(self) -> None:
        b = IRBuilder.current()
        cm: contextlib.AbstractContextManager[Any]
        if type(self) is DeviceEntrySpec:
            cm = b.device_entry(self.args, self.attrs)
        else:
            assert isinstance(self, AttrSpec)  # the two region specs
            cm = b.attr(self.key, self.value)
        cm.__enter__()
        self._cm = cm

    def __exit__(self, *exc: Any) -> Any:
        cm, self._cm = self._cm, None
        assert cm is not None  # set by __enter__
        return cm.__exit__(*exc)


class DeviceEntrySpec(_RegionCM):
    __slots__ = ("args", "attrs")

    def __init__(self, args: tuple, attrs: Any):
        self.args = args
        self.attrs = attrs


class AttrSpec(_RegionCM):
    __slots__ = ("key", "value")

    def __init__(self, key: str, value: Any):
        self.key = key
        self.value = value


class LetBinding:
    """``x := value`` inside ``T.Let(...)``: the var and its value."""

    __slots__ = ("value", "var")

    def __init__(self, var: Var, value: PrimExpr):
        self.var = var
        self.value = value


class LetAnn:
    """``x: T.let = e`` and ``x: T.let[T.int32] = e``: immutable bindings."""

    __slots__ = ("ty",)

    def __init__(self, ty: Any = None):
        self.ty = ty

    def __getitem__(self, ty: Any) -> LetAnn:
        return LetAnn(LET.subscript(ty))  # the declared form (tirx.surface.forms.LET), as the text reads it

    def __repr__(self) -> str:
        return "T.let" if self.ty is None else f"T.let[{self.ty}]"


let = LetAnn()


class _Constexpr:
    """``N: T.constexpr`` (a @T.jit parameter) and ``if T.constexpr(flag):``."""

    def __call__(self, value: Any) -> Any:
        if isinstance(value, MetaVar):
            value = value.value
        if isinstance(value, (PrimExpr, Cell)):
            raise TypeError("T.constexpr(...) needs a compile-time Python value, got a tirx expression")
        return value

    def __repr__(self) -> str:
        return "T.constexpr"


constexpr = _Constexpr()


class _ReturnSignal(BaseException):
    def __init__(self, value: Any):
        self.value = value


class NestedFunction:
    """A function defined inside a kernel body (``@T.inline def helper(...)``, or undecorated):
    like ``@T.inline``, each call expands its body in place; its free names resolve in the
    scopes that enclose the ``def`` (a Python closure: late binding), defaults are evaluated
    at the ``def``."""

    def __init__(self, parser: Parser, node: ast.FunctionDef):
        src = parser.src
        self.src = Source(src.filename, node, src.line_off, src.col_off)
        self.env = parser.env
        self.scopes = list(parser.scopes)
        self.__name__ = self.__qualname__ = node.name
        a = node.args
        K = inspect.Parameter
        defaults = [parser.eval(d) for d in a.defaults]
        pos = [*a.posonlyargs, *a.args]
        ps = []
        for i, arg in enumerate(pos):
            k = i - (len(pos) - len(defaults))
            kind = K.POSITIONAL_ONLY if i < len(a.posonlyargs) else K.POSITIONAL_OR_KEYWORD
            ps.append(K(arg.arg, kind, default=defaults[k] if k >= 0 else K.empty))
        if a.vararg is not None:
            ps.append(K(a.vararg.arg, K.VAR_POSITIONAL))
        for arg, d in zip(a.kwonlyargs, a.kw_defaults):
            ps.append(K(arg.arg, K.KEYWORD_ONLY, default=K.empty if d is None else parser.eval(d)))
        if a.kwarg is not None:
            ps.append(K(a.kwarg.arg, K.VAR_KEYWORD))
        self.sig = inspect.Signature(ps)

    def __repr__(self) -> str:
        return f"<kernel-local helper {self.__name__}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        p = current_parser()
        if p is None:
            raise RuntimeError(f"{self!r} can only be called inside the kernel that defines it")
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.__name__}(): {e}") from None
        bound.apply_defaults()
        site = p.call_site()
        prefix = (*p.prefix, site) if site is not None else p.prefix
        child = Parser(p.b, self.src, self.env, prefix, inline=True, base_scopes=self.scopes)
        for k, v in bound.arguments.items():
            child.define(k, v)
        with parsing(child):
            try:
                child.visit_body(self.src.tree.body)
            except _ReturnSignal as r:
                return r.value
        return None


class _Like:
    __slots__ = ("ty",)

    def __init__(self, ty: Type):
        self.ty = ty


# ------------------------------------------------------------------ environments
class Env:
    """Layered name lookup: closure, caller locals, extra values, globals, builtins."""

    __slots__ = ("layers",)

    def __init__(self, layers: list):
        self.layers = layers

    def get(self, name: str, default: Any = _MISSING) -> Any:
        for d in self.layers:
            v = d.get(name, _MISSING)
            if v is not _MISSING:
                return v
        return default

    def with_front(self, d: dict) -> Env:
        return Env([d, *self.layers])


def closure_vars(func: Any) -> dict:
    code = func.__code__
    cells = func.__closure__ or ()
    out = {}
    for name, cell in zip(code.co_freevars, cells):
        with contextlib.suppress(ValueError):  # an empty cell
            out[name] = cell.cell_contents
    return out


def caller_locals(depth: int) -> dict:
    """Locals of the frame ``depth`` levels up, unless it is a module's top level."""
    try:
        f = sys._getframe(depth + 1)
    except ValueError:  # pragma: no cover
        return {}
    if f.f_code.co_name == "<module>":
        return {}
    loc = f.f_locals
    if "__module__" in loc and "__qualname__" in loc:  # a class body: use its enclosing frame
        g = f.f_back
        extra = {} if g is None or g.f_code.co_name == "<module>" else dict(g.f_locals)
        extra.update({k: v for k, v in loc.items() if not k.startswith("__")})
        return extra
    return dict(loc)


def in_class_body(depth: int) -> bool:
    try:
        f = sys._getframe(depth + 1)
    except ValueError:  # pragma: no cover
        return False
    loc = f.f_locals
    return f.f_code.co_name != "<module>" and "__module__" in loc and "__qualname__" in loc


def make_env(func: Any, extra_locals: dict | None = None, front: dict | None = None) -> Env:
    layers = []
    if front:
        layers.append(front)
    cl = closure_vars(func)
    if cl:
        layers.append(cl)
    if extra_locals:
        layers.append(extra_locals)
    layers.append(func.__globals__)
    layers.append(builtins.__dict__)
    return Env(layers)


# ------------------------------------------------------------------ source
class Source:
    """A function's parsed source with the offsets that map it back to the file."""

    __slots__ = ("col_off", "deep", "filename", "line_off", "mutable", "tree")

    def __init__(self, filename: str, tree: ast.FunctionDef, line_off: int, col_off: int):
        self.filename = filename
        self.tree = tree
        self.line_off = line_off
        self.col_off = col_off
        self.mutable = mutable_names(tree.body)
        #: nested too deeply to build on the caller's stack: build on tirx.ir.deep's worker
        self.deep = ast_depth(tree) > _SHALLOW_AST


#: AST depth up to which a function is built on the caller's thread (each level costs the
#: recursive frontend about three Python frames of the default limit of 1000)
_SHALLOW_AST = 120


def ast_depth(tree: ast.AST) -> int:
    """Nesting depth of a Python AST, measured without recursion."""
    best = 0
    todo = [(tree, 1)]
    while todo:
        node, d = todo.pop()
        best = max(best, d)
        todo.extend((c, d + 1) for c in ast.iter_child_nodes(node))
    return best


_SOURCE_CACHE: dict = {}


def clear_caches() -> None:
    _SOURCE_CACHE.clear()


def _block_text(lines: list, first: int) -> tuple[str, int]:
    head = lines[first]
    indent = len(head) - len(head.lstrip())
    out = [head]
    seen_def = head.lstrip().startswith(("def ", "async def "))
    i = first + 1
    n = len(lines)
    while i < n:
        s = lines[i]
        st = s.strip()
        if st and not st.startswith("#"):
            ind = len(s) - len(s.lstrip())
            if ind <= indent:
                if not seen_def and st.startswith(("def ", "async def ")):
                    seen_def = True
                elif not seen_def and st.startswith("@"):
                    pass
                elif not st.startswith((")", "]", "}")):
                    break
        out.append(s)
        i += 1
    pre = head[:indent]
    text = "".join(x[indent:] if x.startswith(pre) else x.lstrip() for x in out)
    return text, indent


def function_source(func: Any) -> Source:
    """Parse ``func``'s source (cached per file version)."""
    code = func.__code__
    filename = code.co_filename
    lines = linecache.getlines(filename, func.__globals__)
    key = (filename, code.co_firstlineno, code.co_name)
    hit = _SOURCE_CACHE.get(key)
    if hit is not None and hit[0] is lines:
        return hit[1]
    if not lines:
        raise DiagnosticError(
            f"cannot read the source of {func.__qualname__}: define kernels in a file "
            "(the parser needs the function's source)"
        )
    first = code.co_firstlineno - 1
    tree: ast.FunctionDef | None = None
    text, indent = _block_text(lines, first)
    try:
        top = ast.parse(text).body
        if top and isinstance(top[0], ast.FunctionDef) and top[0].name == code.co_name:
            tree = top[0]
    except SyntaxError:
        tree = None
    if tree is None:  # fall back to inspect for unusual layouts
        src = inspect.getsource(func)
        first_line = src.splitlines()[0]
        indent = len(first_line) - len(first_line.lstrip())
        try:
            node: ast.stmt | None = ast.parse(textwrap.dedent(src)).body[0]
        except (SyntaxError, IndexError):
            node = None
        if not isinstance(node, ast.FunctionDef):
            raise DiagnosticError(
                f"{filename}:{code.co_firstlineno}: {func.__qualname__} is not a `def` function "
                "(a lambda or another expression): kernels, helpers and macros are written with `def`"
            )
        tree = node
    s = Source(filename, tree, first, indent)
    _SOURCE_CACHE[key] = (lines, s)
    return s


def mutable_names(body: list) -> frozenset:
    """Names re-assigned (unannotated) in a block nested below an earlier assignment."""
    events: dict[str, list] = {}
    counter = itertools.count(1)

    def names(t: Any, path: tuple) -> None:
        tt = type(t)
        if tt is ast.Name:
            events.setdefault(t.id, []).append(path)
        elif tt is ast.Tuple or tt is ast.List:
            for e in t.elts:
                names(e, path)
        elif tt is ast.Starred:
            names(t.value, path)

    def walk(stmts: list, path: tuple) -> None:
        for st in stmts:
            t = type(st)
            if t is ast.Assign:
                for tg in st.targets:
                    names(tg, path)
            elif t is ast.AugAssign:
                names(st.target, path)
            elif t in (ast.For, ast.While, ast.If, ast.With):
                walk(st.body, (*path, next(counter)))
                if t is not ast.With and st.orelse:
                    walk(st.orelse, (*path, next(counter)))

    walk(body, ())
    out = set()
    for name, paths in events.items():
        if len(paths) < 2:
            continue
        seen: set = set()
        for q in paths:  # source order: is an earlier path a proper prefix of q?
            if any(q[:k] in seen for k in range(len(q))):
                out.add(name)
                break
            seen.add(q)
    return frozenset(out)


# ------------------------------------------------------------------ helpers
def _file_text(filename: str) -> str | None:
    lines = linecache.getlines(filename)
    return "".join(lines) if lines else None


def located_error(msg: str, span: Any) -> DiagnosticError:
    """A DiagnosticError at ``span``; an inline expansion adds a note per call site."""
    inner = span.innermost if span is not None else None
    text = _render(msg, span, _file_text(inner.source) if inner is not None else None)
    if isinstance(span, SequentialSpan):
        for site in reversed(span.spans[:-1]):
            note = _render("in the inline expansion called here", site, _file_text(site.source))
            text += "\n" + "note:" + note[len("error:") :]
    return DiagnosticError(msg, span, text)


def _exc_message(e: BaseException) -> str:
    msg = str(e)
    if isinstance(e, KeyError) and e.args:
        msg = str(e.args[0])
    if not msg:
        msg = type(e).__name__
    if isinstance(e, NameError):
        return msg
    return msg


def _is_type_like(x: Any) -> bool:
    return isinstance(x, Type) or hasattr(x, "__tirx_type__")


# Python operators that build IR nodes come from the one operator table (tirx/ir/operators.py);
# the rest only compute on Python values (no IR node: None)
# (node class or None, Python function)
_BIN: dict[Any, tuple[Any, Any]] = {
    o.py_ast: (o.node, o.py_func) for o in OPERATORS if o.kind != "cmp" and not o.unary and o.py_func
}
_BIN[ast.Pow] = (None, operator.pow)
_BIN[ast.MatMult] = (None, operator.matmul)
_CMP: dict[Any, tuple[Any, Any]] = {o.py_ast: (o.node, o.py_func) for o in OPERATORS if o.kind == "cmp"}
_CMP.update(
    {
        ast.Is: (None, operator.is_),
        ast.IsNot: (None, operator.is_not),
        ast.In: (None, lambda a, b: a in b),
        ast.NotIn: (None, lambda a, b: a not in b),
    }
)
_BOOL = {o.py_ast: o.node for o in OPERATORS if o.kind == "logic" and not o.unary}
_IN, _NOT_IN = _CMP[ast.In][1], _CMP[ast.NotIn][1]
_MEMBERSHIP = (_IN, _NOT_IN)
#: The most values ``x in (...)`` on an IR ``x`` compares with (one ``==`` node each).
MAX_IN_VALUES = 256


def lit(x: Any, like: Any, span: Any) -> Any:
    """A Python number next to an IR value becomes a typed constant carrying ``span``."""
    t = type(x)
    if t is int or t is float or t is bool:
        c = convert(x, like)
        if c.span is None:
            object.__setattr__(c, "span", span)  # a fresh node, not shared yet
        return c
    return x


def apply_binop(opcls: Any, pyop: Any, a: Any, b: Any, span: Any = None) -> Any:
    if getattr(a, "__layout_operand__", False) or getattr(b, "__layout_operand__", False):
        # building a layout (tirx/script/layout.py): ``n @ axis``, ``T.S[...] + n``
        a = a.__tirx_expr__() if isinstance(a, (Cell, MetaVar)) else a
        b = b.__tirx_expr__() if isinstance(b, (Cell, MetaVar)) else b
        return pyop(a, b)
    if isinstance(a, (PrimExpr, Cell, MetaVar)) or isinstance(b, (PrimExpr, Cell, MetaVar)):
        if opcls is None:
            raise TypeError("this operator is not supported on tirx expressions")
        if isinstance(a, (Cell, MetaVar)):
            a = a.__tirx_expr__()
        if isinstance(b, (Cell, MetaVar)):
            b = b.__tirx_expr__()
        if pyop is operator.truediv:
            check_true_div(a, b)  # TIRx's '/' refuses two integers (tirx/ir/fold.py)
        # a Python number combines as in TIRx (tirx/ir/fold.py); TIRx folds as it builds
        return fold(binop(opcls, a, b, span=span))
    return pyop(a, b)


def fold_new(r: Any, keep: tuple) -> Any:
    """Fold, bottom-up, the nodes a ``T`` helper just built around its arguments ``keep``
    (``T.ceildiv(a, b)`` is three nodes); the arguments themselves are left as they are."""
    ids = {id(k) for k in keep}

    def rec(e: Any) -> Any:
        if id(e) in ids or not isinstance(e, PrimExpr):
            return e
        if isinstance(e, Cast):
            v = rec(e.value)
            if v is not e.value:
                e = Cast(e.ty, v, span=e.span)
            return fold_cast(e)
        a, b = getattr(e, "a", None), getattr(e, "b", None)
        if not (isinstance(a, PrimExpr) and isinstance(b, PrimExpr)) or type(e) is And or type(e) is Or:
            return e
        na, nb = rec(a), rec(b)
        if na is not a or nb is not b:
            e = cast(Any, type(e))(na, nb, span=e.span)  # a binary node of the same class
        return fold(e)

    return rec(r)


# the T helpers whose result TIRx folds as it builds (T.Add, T.Select, T.if_then_else,
# T.logical_* never fold); T.select is an op alias of T.if_then_else (tirx/ops/math.py)
_FOLDING_HELPERS = frozenset(
    {"min", "max", "truncdiv", "truncmod", "floordiv", "floormod", "ceildiv", "cast",
     "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right"}
)  # fmt: skip


_HELPERS: dict[int, str] = {}


def _helper_name(func: Any) -> str | None:
    """``name`` when ``func`` is ``T.<name>`` (one of the helpers above), else None. The T
    module imports this one, so it is looked up, not imported."""
    if not _HELPERS:
        t = sys.modules.get("tirx.script.tirx")
        if t is None:
            return None
        for n in _FOLDING_HELPERS:
            f = getattr(t, n, None)
            if f is not None:
                _HELPERS[id(f)] = n
    return _HELPERS.get(id(func))


def neg(a: PrimExpr, span: Any = None) -> PrimExpr:
    """``-a`` as TIRx builds it: a negated constant, else ``a * -1`` (``0 - a`` for unsigned)."""
    t = a.ty
    if type(a) is IntImm and type(t) is PrimType and t.kind == "int":
        lo, hi = -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
        if lo <= -a.value <= hi:
            return IntImm(-a.value, t, span=span)
    elif type(a) is FloatImm:
        return FloatImm(-a.value, a.ty, span=span)
    if isinstance(t, PrimType) and (t.kind == "int" or t.is_float):
        return fold(binop(Mul, a, convert(-1, a), span=span))
    return fold(binop(Sub, convert(0, a), a, span=span))


def lazy_select(c: Any, a: Any, b: Any, span: Any = None) -> PrimExpr:
    """``a if c else b`` on an IR condition: TIRx's ``T.if_then_else`` (both arms are built),
    the op with the ``select`` trait."""
    if isinstance(a, PrimExpr):
        b = convert(b, a)
    else:
        b = convert(b)
        a = convert(a, b)
    return _op.find(select=True)(_to_bool_expr(c), a, b, span=span)


def _to_bool_expr(x: Any) -> PrimExpr:
    e = convert(x)
    if not (isinstance(e.ty, PrimType) and e.ty.is_bool):
        raise TypeError(f"expected a bool expression, got dtype {e.ty}")
    return e


# ------------------------------------------------------------------ the parser
class _Scope:
    __slots__ = ("ptrs", "vars")

    def __init__(self) -> None:
        self.vars: dict[str, Any] = {}
        self.ptrs: set[str] = set()


class Parser:
    """Parses one function body (a kernel, or one inline-helper expansion)."""

    def __init__(self, builder: IRBuilder, src: Source, env: Env, prefix: tuple = (), inline: bool = False,
                 ret_ty: Any = None, base_scopes: list | None = None):  # fmt: skip
        self.b = builder
        self.src = src
        self.env = env
        self.prefix = prefix
        self.inline = inline
        self.ret_ty = ret_ty
        self.scopes: list[_Scope] = [*(base_scopes or ()), _Scope()]
        self.mutable = src.mutable
        self.pending_name: str | None = None
        self.ir_depth = 0
        self.cur_call: Any = None

    # -- spans and errors -----------------------------------------------------------
    def plain_span(self, node: Any) -> Span:
        s = self.src
        lo, co = s.line_off, s.col_off + 1
        return Span(s.filename, node.lineno + lo, node.col_offset + co,
                    (node.end_lineno or node.lineno) + lo, (node.end_col_offset or 0) + co)  # fmt: skip

    def span(self, node: Any) -> Any:
        sp = self.plain_span(node)
        if self.prefix:
            return SequentialSpan((*self.prefix, sp))
        return sp

    def diag(self, node: Any, e: BaseException | str) -> DiagnosticError:
        msg = e if isinstance(e, str) else _exc_message(e)
        return located_error(msg, self.span(node))

    # -- scopes ---------------------------------------------------------------------
    def push(self) -> None:
        self.scopes.append(_Scope())

    def pop(self) -> None:
        self.scopes.pop()

    def define(self, name: str, value: Any) -> None:
        self.scopes[-1].vars[name] = value

    def lookup_local(self, name: str) -> Any:
        for sc in reversed(self.scopes):
            v = sc.vars.get(name, _MISSING)
            if v is not _MISSING:
                return v
        return _MISSING

    def lookup(self, name: str, node: Any) -> Any:
        for sc in reversed(self.scopes):
            v = sc.vars.get(name, _MISSING)
            if v is not _MISSING:
                if type(v) is Cell:
                    return v.load(self.span(node))
                return v
        v = self.env.get(name)
        if v is _MISSING:
            raise NameError(f"name {name!r} is not defined", name=name)
        if type(v) is Cell:
            return v.load(self.span(node))
        return v

    def is_ptr_bound(self, name: str) -> bool:
        return any(name in sc.ptrs for sc in self.scopes)

    # -- statements -----------------------------------------------------------------
    def visit_body(self, stmts: list) -> None:
        spans = self.b.spans
        for idx, st in enumerate(stmts):
            spans.append(self.span(st))
            try:
                r = _STMT.get(type(st), Parser.visit_unsupported)(self, st)
            except DiagnosticError:
                raise
            except Exception as e:
                raise self.diag(st, e) from e
            finally:
                spans.pop()
            if r is not None:
                self.region(r, stmts[idx + 1 :], st)
                return

    def region(self, spec: Any, rest: list, node: Any) -> None:
        """A bare ``T.device_entry(...)`` / ``T.attr(...)``: the rest of the block goes inside."""
        b = self.b
        b.spans.append(self.span(node))
        try:
            if type(spec) is DeviceEntrySpec:
                cm = b.device_entry(spec.args, spec.attrs)
            else:
                cm = b.attr(spec.key, spec.value)
            cm.__enter__()
        except Exception as e:
            raise self.diag(node, e) from e
        finally:
            b.spans.pop()
        self.ir_depth += 1
        try:
            self.visit_body(rest)
        except BaseException:
            self.ir_depth -= 1
            cm.__exit__(*sys.exc_info())
            raise
        self.ir_depth -= 1
        try:
            cm.__exit__(None, None, None)
        except Exception as e:
            raise self.diag(node, e) from e

    def visit_unsupported(self, st: Any) -> None:
        raise self.diag(st, f"unsupported statement in a kernel: {type(st).__name__}")

    def visit_Pass(self, st: ast.Pass) -> None:
        return None

    def visit_Expr(self, st: ast.Expr) -> Any:
        v = st.value
        if type(v) is ast.Constant and isinstance(v.value, str):
            return None  # docstring / comment string
        val = self.eval(v)
        if isinstance(val, PrimExpr):
            self.b.evaluate(val)
        elif isinstance(val, Bind):  # T.Bind(var, value) as a statement: emitted where it stands
            self.b.emit(val)
        elif type(val) is DeviceEntrySpec or type(val) is AttrSpec:
            return val
        return None

    def visit_Assign(self, st: ast.Assign) -> None:
        targets = st.targets
        if len(targets) == 1 and type(targets[0]) is ast.Name:
            name = targets[0].id
            self.pending_name = name
            try:
                val = self.eval(st.value)
            finally:
                self.pending_name = None
            self.assign_name(name, val, targets[0])
            return
        val = self.eval(st.value)
        for t in targets:
            self.assign_target(t, val)

    def assign_target(self, t: Any, val: Any, meta: bool = False) -> None:
        tt = type(t)
        if tt is ast.Name:
            if meta:
                self.define(t.id, val)
            else:
                self.assign_name(t.id, val, t)
        elif tt is ast.Tuple or tt is ast.List:
            if type(val) is MetaVar:
                val = val.value
            if isinstance(val, (PrimExpr, Buffer)):
                raise self.diag(t, f"cannot unpack {type(val).__name__} into {len(t.elts)} names")
            try:
                vals = list(val)
            except TypeError:
                raise self.diag(t, f"cannot unpack a {type(val).__name__}") from None
            stars = [i for i, e in enumerate(t.elts) if type(e) is ast.Starred]
            n = len(t.elts)
            if not stars:
                if len(vals) != n:
                    raise self.diag(t, f"cannot unpack {len(vals)} values into {n} targets")
                for e, v in zip(t.elts, vals):
                    self.assign_target(e, v, meta)
                return
            k = stars[0]
            after = n - k - 1
            if len(vals) < n - 1:
                raise self.diag(t, f"cannot unpack {len(vals)} values into {n - 1}+ targets")
            for e, v in zip(t.elts[:k], vals[:k]):
                self.assign_target(e, v, meta)
            mid = vals[k : len(vals) - after]
            self.assign_target(t.elts[k].value, tuple(mid), True)
            for e, v in zip(t.elts[k + 1 :], vals[len(vals) - after :]):
                self.assign_target(e, v, meta)
        elif tt is ast.Subscript:
            obj = self.eval(t.value)
            idx = self.eval(t.slice)
            if isinstance(obj, Buffer):
                sp = self.span(t)
                idx = _store_slices(idx)
                if not isinstance(val, PrimExpr) and type(val) in (int, float, bool):
                    val = lit(val, _Like(obj.dtype), sp)
                self.b.store(obj, self.indices(obj, idx, sp), val)
            else:
                obj[idx] = val
        elif tt is ast.Attribute:
            setattr(self.eval(t.value), t.attr, val)
        elif tt is ast.Starred:
            self.assign_target(t.value, tuple(val), True)
        else:
            raise self.diag(t, f"cannot assign to {type(t).__name__}")

    def assign_name(self, name: str, val: Any, node: Any) -> None:
        cur = self.lookup_local(name)
        if type(cur) is Cell:
            if type(val) is Cell:  # x = T.local_scalar(...) again: a new cell
                self.define(name, val)
                return
            self.b.store(cur.buffer, (_ZERO,), val)
            return
        if self.is_ptr_bound(name):
            raise self.diag(
                node,
                f"cannot reassign {name!r}: a pointer assignment is an immutable binding (use a new name)",
            )
        tv = type(val)
        if tv is MetaVar:
            if isinstance(val.value, PrimExpr) and type(val.value) is not Var:
                # TIRx's meta_var is the identity: an IR expression is bound as any assignment
                # is; Python values (ints, strs, lists: tirx's compile-time names) stay Python
                val, tv = val.value, type(val.value)
            else:
                self.define(name, val.value)
                return
        if tv is Cell:
            self.define(name, val)
            return
        if tv is Var and name not in self.mutable:
            # ``alias = bx``: TIRx names the same var (no Bind); a pointer alias stays immutable
            self.define(name, val)
            if isinstance(val.ty, PointerType):
                self.scopes[-1].ptrs.add(name)
            return
        if isinstance(val, PrimExpr) or tv is int or tv is float or tv is bool:
            if tv is not bool and (tv is int or tv is float) and type(cur) in (int, float):
                self.define(name, val)  # a Python-level number (T.meta_var) stays Python-level
                return
            e = convert(val)
            if isinstance(e.ty, PointerType):
                v = self.b.bind(name, e)
                self.define(name, v)
                self.scopes[-1].ptrs.add(name)
                return
            if name in self.mutable:
                self.define(name, self.new_cell(name, e.ty, e))
                return
            self.define(name, self.b.bind(name, e))
            return
        self.define(name, val)

    def new_cell(self, name: str, dtype: Any, init: Any = None) -> Cell:
        buf = self.b.alloc(name, TensorType((1,), cast(PrimType, as_type(dtype)), "local"))
        if init is not None:
            self.b.store(buf, (_ZERO,), init)
        return Cell(buf)

    def visit_AnnAssign(self, st: ast.AnnAssign) -> None:
        if type(st.target) is not ast.Name:
            raise self.diag(st.target, "an annotated assignment needs a plain name as target")
        name = st.target.id
        ann = self.eval(st.annotation)
        if type(ann) is LetAnn:
            if st.value is None:
                raise self.diag(st, "T.let needs a value: x: T.let = <expr>")
            val = self.eval(st.value)
            if type(val) is MetaVar:
                val = val.value
            if ann.ty is None:
                e = convert(val)
                v = self.b.bind(name, e)
            else:
                e = convert(val, _Like(ann.ty))
                v = self.b.bind(name, e, ann.ty)
            self.define(name, v)
            if isinstance(v.ty, PointerType):
                self.scopes[-1].ptrs.add(name)
            return
        if ann is constexpr:
            raise self.diag(
                st.annotation, "T.constexpr is only for keyword-only parameters of @T.jit functions"
            )
        if isinstance(ann, PointerType):
            val = self.eval(st.value)
            v = self.b.bind(name, convert(val, _Like(ann)), ann)
            self.define(name, v)
            self.scopes[-1].ptrs.add(name)
            return
        if _is_type_like(ann) and not isinstance(ann, TensorType):
            ty = as_type(ann)
            if not isinstance(ty, PrimType):
                raise self.diag(st.annotation, f"a mutable local needs a primitive dtype, got {ty}")
            init = None
            if st.value is not None:
                self.pending_name = name
                try:
                    val = self.eval(st.value)
                finally:
                    self.pending_name = None
                init = convert(val, _Like(ty))
            self.define(name, self.new_cell(name, ty, init))
            return
        # a Python annotation: plain assignment semantics
        if st.value is not None:
            self.visit_Assign(
                ast.Assign(targets=[st.target], value=st.value, lineno=st.lineno, col_offset=st.col_offset)
            )

    def visit_AugAssign(self, st: ast.AugAssign) -> None:
        t = st.target
        opcls, pyop = _BIN[type(st.op)]
        sp = self.span(st)
        if type(t) is ast.Name:
            old = self.lookup(t.id, t)
            rhs = self.eval(st.value)
            new = apply_binop(opcls, pyop, old, rhs, sp)
            self.assign_name(t.id, new, t)
        elif type(t) is ast.Subscript:
            obj = self.eval(t.value)
            idx = self.eval(t.slice)
            rhs = self.eval(st.value)
            if isinstance(obj, Buffer):
                ind = obj._indices(idx)
                new = apply_binop(opcls, pyop, BufferLoad(obj, ind, span=sp), rhs, sp)
                self.b.store(obj, ind, new)
            else:
                obj[idx] = apply_binop(opcls, pyop, obj[idx], rhs, sp)
        elif type(t) is ast.Attribute:
            obj = self.eval(t.value)
            rhs = self.eval(st.value)
            setattr(obj, t.attr, apply_binop(opcls, pyop, getattr(obj, t.attr), rhs, sp))
        else:
            raise self.diag(t, f"cannot assign to {type(t).__name__}")

    def visit_For(self, st: ast.For) -> None:
        if st.orelse:
            raise self.diag(st.orelse[0], "for ... else is not supported in a kernel")
        it = self.eval(st.iter)
        if type(it) is MetaVar:
            it = it.value
        if type(it) is not LoopSpec:
            try:
                items = iter(it)
            except TypeError:
                raise self.diag(
                    st.iter,
                    f"cannot loop over {type(it).__name__}: use range, T.serial, T.unroll, T.vectorized, "
                    "T.parallel, T.grid or a Python sequence",
                ) from None
            for item in items:  # a Python sequence: unrolled while parsing
                self.assign_target(st.target, item, True)
                self.visit_body(st.body)
            return
        loops = it.loops
        n = len(loops)
        t = st.target
        if it.bind is not None:
            names = list(it.names or [f"i{k}" for k in range(n)])
        elif type(t) is ast.Name:
            names = [t.id] if n == 1 else [f"{t.id}_{k}" for k in range(n)]
        elif isinstance(t, (ast.Tuple, ast.List)):
            elts = t.elts
            stars = [i for i, e in enumerate(elts) if type(e) is ast.Starred]
            if not stars:
                if len(elts) != n:
                    raise self.diag(t, f"{len(elts)} loop targets for {n} loops")
                names = [self._target_name(e) for e in elts]
            else:
                k = stars[0]
                nfix = len(elts) - 1
                if n < nfix:
                    raise self.diag(t, f"{len(elts)} loop targets for {n} loops")
                base = self._target_name(cast(ast.Starred, elts[k]).value)  # stars: the Starred ones
                names = [self._target_name(e) for e in elts[:k]]
                names += [f"{base}_{j}" for j in range(n - nfix)]
                names += [self._target_name(e) for e in elts[k + 1 :]]
        else:
            raise self.diag(t, "a loop target must be a name or a tuple of names")
        b = self.b
        vars_: list = []
        it_span = self.span(st.iter)

        def rec(k: int) -> None:
            if k == n:
                self.push()
                try:
                    if it.bind is not None:
                        self.assign_target(t, it.bind(tuple(vars_)), True)
                    elif type(t) is ast.Name:
                        self.define(t.id, vars_[0] if n == 1 else tuple(vars_))
                    else:
                        self.assign_target(t, tuple(vars_), True)
                    self.visit_body(st.body)
                finally:
                    self.pop()
                return
            start, extent, kind, step, ann, thread = loops[k]
            if type(extent) is int:
                extent = lit(extent, start if isinstance(start, PrimExpr) else None, it_span)
            if type(start) is int:
                start = lit(start, extent, it_span)
            with b.for_(names[k], start, extent, kind, step, ann, thread) as v:
                vars_.append(v)
                rec(k + 1)

        self.ir_depth += 1
        try:
            rec(0)
        finally:
            self.ir_depth -= 1

    def _target_name(self, e: Any) -> str:
        if type(e) is not ast.Name:
            raise self.diag(e, "a loop target must be a name")
        return e.id

    def visit_While(self, st: ast.While) -> None:
        if st.orelse:
            raise self.diag(st.orelse[0], "while ... else is not supported in a kernel")
        cond = self.eval(st.test)
        if not isinstance(cond, PrimExpr):
            if not cond:
                return
            cond = convert(True)
        self.ir_depth += 1
        try:
            with self.b.while_(_to_bool_expr(cond)):
                self.push()
                try:
                    self.visit_body(st.body)
                finally:
                    self.pop()
        finally:
            self.ir_depth -= 1

    def visit_If(self, st: ast.If) -> None:
        cond = self.eval(st.test)
        if type(cond) is Cell:
            cond = cond.__tirx_expr__()
        elif type(cond) is MetaVar:
            cond = cond.value
        if not isinstance(cond, PrimExpr):  # decided while parsing
            branch = st.body if cond else st.orelse
            self.visit_body(branch)
            return
        b = self.b
        self.ir_depth += 1
        try:
            try:
                cm = b.if_(cond)
                cm.__enter__()
            except Exception as e:
                raise self.diag(st.test, e) from e
            ok = False
            try:
                self.push()
                try:
                    self.visit_body(st.body)
                finally:
                    self.pop()
                ok = True
            finally:
                if ok:
                    cm.__exit__(None, None, None)
                else:
                    cm.__exit__(*sys.exc_info())
            if st.orelse:
                orelse = st.orelse
                if len(orelse) == 1 and type(orelse[0]) is ast.If:
                    b.spans.append(self.span(orelse[0]))
                else:
                    b.spans.append(b.span)
                try:
                    with b.else_():
                        self.push()
                        try:
                            self.visit_body(orelse)
                        finally:
                            self.pop()
                finally:
                    b.spans.pop()
        finally:
            self.ir_depth -= 1

    def visit_With(self, st: ast.With) -> None:
        self._with_items(st, 0)

    def _with_items(self, st: ast.With, k: int) -> None:
        if k == len(st.items):
            self.push()
            try:
                self.visit_body(st.body)
            finally:
                self.pop()
            return
        item = st.items[k]
        ctx = self.eval(item.context_expr)
        tc = type(ctx)
        if tc is DeviceEntrySpec or tc is AttrSpec:
            if item.optional_vars is not None:
                raise self.diag(item.optional_vars, "this with-statement binds no value")
            cm = (
                self.b.device_entry(ctx.args, ctx.attrs)
                if tc is DeviceEntrySpec
                else self.b.attr(ctx.key, ctx.value)
            )
            self.ir_depth += 1
            try:
                with cm:
                    self._with_items(st, k + 1)
            finally:
                self.ir_depth -= 1
            return
        if not hasattr(ctx, "__enter__"):
            raise self.diag(item.context_expr, f"{type(ctx).__name__} is not a context manager")
        if type(item.optional_vars) is ast.Name and hasattr(ctx, "var_name"):
            ctx.var_name = item.optional_vars.id  # ``with T.launch_thread(...) as tx``: the var is tx
        val = ctx.__enter__()
        try:
            if item.optional_vars is not None:
                self.assign_target(item.optional_vars, val, True)
            self._with_items(st, k + 1)
        except BaseException:
            if not ctx.__exit__(*sys.exc_info()):
                raise
        else:
            ctx.__exit__(None, None, None)

    def visit_Break(self, st: Any) -> None:
        self.b.break_()

    def visit_Continue(self, st: Any) -> None:
        self.b.continue_()

    def visit_Return(self, st: ast.Return) -> None:
        val = None if st.value is None else self.eval(st.value)
        if type(val) is MetaVar:
            val = val.value
        if self.inline:
            if self.ir_depth:
                raise self.diag(
                    st, "return inside a kernel loop or branch is not supported in an inline helper"
                )
            raise _ReturnSignal(val)
        if type(val) is Buffer and isinstance(self.ret_ty, TensorType):
            val = val.data  # ``return A`` of a tensor parameter (TIRx's): its pointer
        if val is not None and self.ret_ty is not None and not isinstance(val, PrimExpr):
            val = convert(val, _Like(self.ret_ty))
        self.b.return_(val)

    def visit_Assert(self, st: ast.Assert) -> None:
        cond = self.eval(st.test)
        msg = None if st.msg is None else self.eval(st.msg)
        if not isinstance(cond, PrimExpr):
            if not cond:
                raise self.diag(st, f"assertion failed{': ' + str(msg) if msg is not None else ''}")
            return
        kind, parts = "RuntimeError", cast(tuple[str, ...], ())
        if (
            isinstance(msg, tuple)
            and len(msg) == 2
            and isinstance(msg[0], str)
            and isinstance(msg[1], (list, tuple))
        ):
            kind, parts = msg[0], tuple(str(x) for x in msg[1])
        elif msg is not None:
            parts = (str(msg),)
        self.b.assert_(_to_bool_expr(cond), kind, parts)

    def visit_FunctionDef(self, st: Any) -> None:
        """A ``def`` in a kernel body (TIRx builds kernels by running their Python, so a nested
        ``@T.inline`` helper is a closure): a :class:`NestedFunction`, expanded at each call."""
        for d in st.decorator_list:
            deco = self.eval(d)
            if getattr(deco, "__module__", None) != "tirx.script.decorators" or getattr(
                deco, "__name__", None
            ) not in ("inline", "macro"):
                raise self.diag(
                    d,
                    "a function defined inside a kernel takes only @T.inline or @T.macro (it is expanded inline)",
                )
        self.define(st.name, NestedFunction(self, st))

    # -- expressions ----------------------------------------------------------------
    def eval(self, node: Any) -> Any:
        try:
            return _EVAL.get(type(node), Parser.eval_unsupported)(self, node)
        except DiagnosticError:
            raise
        except Exception as e:
            raise self.diag(node, e) from e

    def eval_unsupported(self, node: Any) -> Any:
        raise self.diag(node, f"unsupported expression in a kernel: {type(node).__name__}")

    def eval_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def eval_Name(self, node: ast.Name) -> Any:
        return self.lookup(node.id, node)

    def eval_Attribute(self, node: ast.Attribute) -> Any:
        obj = self.eval(node.value)
        try:
            return getattr(obj, node.attr)
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
            return BufferLoad(obj, self.indices(obj, idx, sp), span=sp)
        if type(obj) is MetaVar:
            obj = obj.value
        return obj[idx]

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
        return bool_chain((self.eval(e) for e in node.values), cls is And, lambda a, b: cls(a, b, span=sp))

    def eval_Compare(self, node: ast.Compare) -> Any:
        left = self.eval(node.left)
        result: Any = _MISSING
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
            if result is _MISSING:
                result = r
            elif isinstance(result, PrimExpr) or isinstance(r, PrimExpr):
                if not isinstance(result, PrimExpr):
                    if not result:
                        return result
                    result = r
                elif isinstance(r, PrimExpr):
                    result = And(result, r, span=self.span(node))
                elif not r:
                    return r
            else:
                result = result and r
                if not result:
                    return result
            left = right
        return result

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
        return self.eval(node.body) if c else self.eval(node.orelse)

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
        try:
            r = func(*args, **kwargs)
        finally:
            self.cur_call = saved
        if helper in _FOLDING_HELPERS and isinstance(r, PrimExpr):
            r = fold_new(r, tuple(_unwrap(a) for a in args))
        if isinstance(r, Node) and r.span is None and isinstance(r, PrimExpr) and type(r) is not Var:
            r = r.with_span(self.span(node))
        return r

    def call_site(self) -> Span | None:
        node = self.cur_call
        return self.plain_span(node) if node is not None else None


def _special_range(p: Parser, node: Any, args: list, kwargs: dict) -> Any:
    """``range(...)`` in a kernel: the serial loop form (tirx.surface.forms.RANGE), as in the text."""
    pos, kw = [_unwrap(a) for a in args], {k: _unwrap(v) for k, v in kwargs.items()}
    return LoopSpec([RANGE.call(pos, kw)])  # literal bounds get the header's span in visit_For


def _unwrap(x: Any) -> Any:
    return x.__tirx_expr__() if isinstance(x, (Cell, MetaVar)) else x


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

    def __init__(self, parser: Parser, node: ast.Lambda):
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


_STMT = {
    getattr(ast, n): getattr(Parser, "visit_" + n)
    for n in (
        "Pass", "Expr", "Assign", "AnnAssign", "AugAssign", "For", "While", "If", "With", "Break",
        "Continue", "Return", "Assert", "FunctionDef",
    )
}  # fmt: skip
_EVAL = {
    getattr(ast, n): getattr(Parser, "eval_" + n)
    for n in (
        "Constant", "Name", "Attribute", "Tuple", "List", "Set", "Dict", "Slice", "Subscript", "BinOp",
        "UnaryOp", "BoolOp", "Compare", "IfExp", "JoinedStr", "NamedExpr", "Lambda", "ListComp",
        "GeneratorExp", "SetComp", "DictComp", "Call",
    )
}  # fmt: skip


# ------------------------------------------------------------------ running a parse
class parsing:
    """Make ``parser`` the current one (``T.inline`` calls and ``T.alloc_*`` names use it)."""

    __slots__ = ("parser",)

    def __init__(self, parser: Parser):
        self.parser = parser

    def __enter__(self) -> Parser:
        _stack().append(self.parser)
        return self.parser

    def __exit__(self, *exc: Any) -> None:
        _stack().pop()


def _param_annotation(p: Parser, node: Any, later: list, early: dict, drop: dict) -> Any:
    """A parameter's annotation. A name it uses that is a later scalar parameter
    (``A: T.Tensor((n,)), n: T.int32``: TIRx's rule) is made that parameter's variable first
    (``early``), from its own annotation."""
    while True:
        try:
            return p.eval(node)
        except DiagnosticError as e:
            cause = e.__cause__
            name = getattr(cause, "name", None) if isinstance(cause, NameError) else None
            arg = next((x for x in later if x.arg == name), None)
            if name is None or arg is None or arg.annotation is None or name in early or name in drop:
                raise
            try:
                t = as_type(p.eval(arg.annotation))
            except (DiagnosticError, TypeError, ValueError):
                t = None
            if not (isinstance(t, PrimType) and t.is_int and t.lanes == 1):
                raise e
            v = Var(name, t, span=p.span(arg))
            early[name] = v
            p.define(name, v)


def _wrap_param_error(p: Parser, node: Any, e: BaseException) -> DiagnosticError:
    return e if isinstance(e, DiagnosticError) else p.diag(node, e)


def build_function(
    builder: IRBuilder,
    src: Source,
    env: Env,
    *,
    name: str | None = None,
    private: bool = False,
    drop: dict | None = None,
    skip_kwonly: frozenset = frozenset(),
    annotations: dict | None = None,
    check_well_formed: bool | None = None,
) -> None:
    """Emit one Function into ``builder`` (which must be the active IRBuilder).

    ``check_well_formed`` (default: the builder's setting) verifies the function when it
    is finished; see ``IRBuilder.function``.
    """
    if src.deep and not deep.active():  # runs user code once, so decided up front, not retried
        deep.run(
            build_function, builder, src, env, name=name, private=private, drop=drop,
            skip_kwonly=skip_kwonly, annotations=annotations, check_well_formed=check_well_formed,
        )  # fmt: skip
        return
    fdef = src.tree
    p = Parser(builder, src, env)
    b = builder
    drop = drop or {}
    with parsing(p):
        b.spans.append(p.span(fdef))
        try:
            fcm = b.function(name or fdef.name, private=private, check_well_formed=check_well_formed)
            fcm.__enter__()
        finally:
            b.spans.pop()
        ok = False
        try:
            for tp in getattr(fdef, "type_params", ()) or ():  # Python >= 3.12: def f[n, D: T.int64](...)
                bound = getattr(tp, "bound", None)
                dt = as_type(p.eval(bound)) if bound is not None else PrimType("int32")
                p.define(tp.name, Var(tp.name, dt, span=p.span(tp)))
            a = fdef.args
            if a.vararg is not None or a.kwarg is not None:
                raise p.diag(a.vararg or a.kwarg, "a kernel cannot take *args or **kwargs")
            all_args = [*a.posonlyargs, *a.args, *a.kwonlyargs]
            early: dict[str, Var] = {}  # later scalar parameters an earlier annotation names
            adopted: set[Var] = set()
            for k, arg in enumerate(all_args):
                pname = arg.arg
                if pname in skip_kwonly:
                    continue
                if pname in drop:
                    p.define(pname, drop[pname])
                    continue
                if pname in early:  # made when an earlier annotation named it
                    sp = p.span(arg)
                    b.spans.append(sp)
                    try:
                        p.define(pname, b.param(pname, early[pname]))
                    finally:
                        b.spans.pop()
                    continue
                if arg.annotation is None:
                    raise p.diag(
                        arg, f"parameter {pname!r} needs a type annotation (T.Tensor(...), T.int32, ...)"
                    )
                sp = p.span(arg)
                b.spans.append(sp)
                try:
                    ann_node = arg.annotation
                    if type(ann_node) is ast.BinOp and type(ann_node.op) is ast.BitOr:
                        lhs, rhs = ann_node.left, ann_node.right
                        if type(rhs) is ast.Constant and rhs.value is None:
                            ann_node = lhs
                        elif type(lhs) is ast.Constant and lhs.value is None:
                            ann_node = rhs
                    try:
                        ty = _param_annotation(p, ann_node, all_args[k + 1 :], early, drop)
                    except DiagnosticError as e:
                        ann = (annotations or {}).get(pname, _MISSING)
                        if ann is _MISSING or isinstance(ann, str) or not isinstance(e.__cause__, NameError):
                            raise
                        ty = ann
                    opt = getattr(ty, "__tirx_optional__", None)  # T.Optional(ann): as ann | None
                    if opt is not None:
                        ty = opt()
                    if type(ty) is Var:
                        t = ty.ty
                        if (isinstance(t, PrimType) and t.is_int and t.lanes == 1 and ty.name == pname
                                and ty not in adopted):  # fmt: skip
                            # ``n: n`` (n = T.dynamic(...), which earlier shapes may use): the
                            # parameter is that variable, as TIRx adopts it (TIRx renames a var of
                            # another name to the parameter's; here that is a fresh variable)
                            adopted.add(ty)
                            p.define(pname, b.param(pname, ty))
                            continue
                        ty = t  # T.ptr("float32"): the var's type (TIRx)
                    if ty is constexpr:
                        raise p.diag(
                            arg.annotation, f"parameter {pname!r}: T.constexpr parameters need @T.jit"
                        )
                    if type(ty) is LoopSpec or not (_is_type_like(ty)):
                        raise p.diag(arg.annotation, f"parameter {pname!r}: {ty!r} is not a type")
                    v: Var | Buffer
                    if isinstance(ty, TensorType):
                        v = b.param(pname, ty)
                    else:
                        v = b.param(pname, as_type(ty))
                    p.define(pname, v)
                except DiagnosticError:
                    raise
                except Exception as e:
                    raise p.diag(arg, e) from e
                finally:
                    b.spans.pop()
            if fdef.returns is not None:
                rt = p.eval(fdef.returns)
                if rt is not None:
                    rt = as_type(rt)
                    b.set_ret_type(rt)
                    p.ret_ty = rt
            p.visit_body(fdef.body)
            ok = True
        finally:
            if ok:
                fcm.__exit__(None, None, None)
            else:
                fcm.__exit__(*sys.exc_info())
