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
import collections
import contextlib
import inspect
import linecache
import sys
import textwrap
from typing import Any

from tirx.surface.builder import IRBuilder
from tirx.surface.mutable import is_constexpr_test, mutable_names
from tirx.surface.parser_stack import current_parser
from tirx.surface.parser_stack import stack as _stack

from ..diagnostics import render as _render
from ..errors import DiagnosticError
from ..ir import (
    Buffer,
    PrimExpr,
    PrimType,
    SequentialSpan,
    Span,
    TensorType,
    Var,
    deep,
)  # fmt: skip
from ..ir.types import VoidType, as_type
from .parser_expr import ExprMixin
from .parser_stmt import Spliced, StmtMixin

# moved to parser_values.py (issue #30); imported from here by decorators.py, tirx.py, ir_names.py,
# protocol/ and user code
from .parser_values import (  # noqa: F401
    _BOOL,
    _CMP,
    _FOLDING_HELPERS,
    _MISSING,
    MAX_IN_VALUES,
    ArrayAnn,
    AttrSpec,
    Cell,
    DeviceEntrySpec,
    EndedBinding,
    LetAnn,
    LetBinding,
    LoopSpec,
    MetaVar,
    _is_type_like,
    _Like,
    _ReturnSignal,
    apply_binop,
    bool_chain,
    constexpr,
    fold_new,
    let,
    lit,
    take_name,
)

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
        # undecorated: TIRx runs it as Python while building (its loops over ``range`` unroll,
        # its names bind values, not ``let``s); ``@T.inline`` / ``@T.macro``: script, as TIRx's
        self.python = not node.decorator_list
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
        child.python = self.python
        return expand_helper(p, child, bound.arguments, self.src.tree.body)


def expand_helper(caller: Any, child: Any, arguments: Any, body: list) -> Any:
    """A helper call's expansion (``@T.inline`` / ``@T.macro`` / a kernel-local ``def``): the
    arguments bound in the helper's parser, its body parsed into the caller's builder; the value
    of its top-level ``return``. Bare frames it opened at its top level stay open for the
    caller's rest of block (``Parser.pending_frames``)."""
    for k, v in arguments.items():
        child.define(k, v)
    with parsing(child):
        try:
            child.visit_body(body)
        except _ReturnSignal as r:
            return r.value
        finally:
            caller.pending_frames.extend(child.open_frames)
    return None


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


def constexpr_param_error(name: str, jit: bool) -> str:
    """The message for ``name: T.constexpr`` where it cannot be: a positional parameter of a
    ``@T.jit`` function (constexprs are bound by keyword, ``.specialize(N=...)``), or any
    parameter outside ``@T.jit``."""
    if jit:
        return (
            f"parameter {name!r}: a T.constexpr parameter must be keyword-only: "
            f"put it after `*` (`*, {name}: T.constexpr`)"
        )
    return (
        f"parameter {name!r}: T.constexpr parameters need @T.jit "
        f"(and must be keyword-only: `*, {name}: T.constexpr`)"
    )


def closure_vars(func: Any) -> dict:
    code = func.__code__
    cells = func.__closure__ or ()
    out = {}
    for name, cell in zip(code.co_freevars, cells):
        with contextlib.suppress(ValueError):  # an empty cell
            out[name] = cell.cell_contents
    return out


def caller_locals(depth: int) -> dict:
    """Locals of the frame ``depth`` levels up, unless it is a module's top level, over the
    locals of its lexical enclosing functions that are still running (nearer scopes win).

    With postponed annotations (``from __future__ import annotations``) a name that only an
    annotation uses (``T.Tensor((m,), dtype)``) is no closure cell of the function that
    defines the kernel; it lives in an enclosing function's frame. Those frames are the
    callers whose code object directly holds the callee's (the same module), as TIRx finds
    them; an unrelated caller ends the chain."""
    try:
        f = sys._getframe(depth + 1)
    except ValueError:  # pragma: no cover
        return {}
    if f.f_code.co_name == "<module>":
        return {}
    loc = f.f_locals
    if "__module__" in loc and "__qualname__" in loc:  # a class body: use its enclosing frame
        g = f.f_back
        extra = {} if g is None or g.f_code.co_name == "<module>" else {**_enclosing_locals(g), **g.f_locals}
        extra.update({k: v for k, v in loc.items() if not k.startswith("__")})
        return extra
    return {**_enclosing_locals(f), **loc}


def _enclosing_locals(f: Any) -> dict:
    """The locals of ``f``'s running lexical parents, outermost first (see caller_locals)."""
    scopes = []
    child = f
    parent = f.f_back
    while (
        parent is not None
        and parent.f_globals is child.f_globals
        and parent.f_code.co_name != "<module>"
        and any(c is child.f_code for c in parent.f_code.co_consts)
    ):
        scopes.append(parent.f_locals)
        child, parent = parent, parent.f_back
    out: dict = {}
    for sc in reversed(scopes):
        out.update(sc)
    return out


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

    __slots__ = ("assigned", "col_off", "constexpr_ifs", "deep", "filename", "line_off", "mutable",
                 "mutables", "tree")  # fmt: skip

    def __init__(self, filename: str, tree: ast.FunctionDef, line_off: int, col_off: int):
        self.filename = filename
        self.tree = tree
        self.line_off = line_off
        self.col_off = col_off
        #: the mutable locals when no ``if T.constexpr(...):`` is decided (the text builder's)
        self.mutable = mutable_names(tree.body)
        #: the ``if T.constexpr(...):`` statements, and the names the body assigns (a test that
        #: reads one is not known before the body runs)
        self.constexpr_ifs = [
            n for n in ast.walk(tree) if type(n) is ast.If and is_constexpr_test(n.test)
        ]
        self.assigned = frozenset(
            n.id for st in tree.body for n in ast.walk(st)
            if type(n) is ast.Name and type(n.ctx) is not ast.Load
        )  # fmt: skip
        #: the mutable locals by the branches the ``T.constexpr`` tests take
        self.mutables: dict[tuple, frozenset] = {}
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


# ------------------------------------------------------------------ the parser
class _Scope:
    __slots__ = ("ptrs", "vars")

    def __init__(self) -> None:
        self.vars: dict[str, Any] = {}
        self.ptrs: set[str] = set()


class Parser(StmtMixin, ExprMixin):
    """Parses one function body (a kernel, or one inline-helper expansion); its statements
    (``visit_*``, :mod:`.parser_stmt`) and expressions (``eval_*``, :mod:`.parser_expr`) are
    mixins."""

    def __init__(self, builder: IRBuilder, src: Source, env: Env, prefix: tuple = (), inline: bool = False,
                 ret_ty: Any = None, base_scopes: list | None = None):  # fmt: skip
        self.b = builder
        self.src = src
        self.env = env
        self.prefix = prefix
        self.inline = inline
        #: a kernel-local undecorated ``def`` (``NestedFunction.python``): Python's meaning for
        #: loops over ``range`` of constants and for assigned names
        self.python = False
        self.ret_ty = ret_ty
        self.scopes: list[_Scope] = [*(base_scopes or ()), _Scope()]
        self._mutable: frozenset | None = None
        self.pending_name: str | None = None
        self.ir_depth = 0
        self.cur_call: Any = None
        # a bare frame (``T.device_entry(...)``, ``T.launch_thread(...)``) opened at a helper's
        # top level stays open for the caller's rest of block, as TIRx expands a helper into its
        # caller: ``open_frames`` are this helper's, innermost first; ``pending_frames`` are
        # those a helper call just left open in this parser's current block
        self.open_frames: list[tuple[Any, Any]] = []
        self.pending_frames: list[tuple[Any, Any]] = []
        self.top_scopes = len(self.scopes)

    @property
    def mutable(self) -> frozenset:
        """The body's mutable locals (:func:`mutable_names`), counting only the branches its
        ``if T.constexpr(...):`` tests take where they are known when the body starts (tests
        of parameters, captured and global values); asked for at the first assignment."""
        m = self._mutable
        if m is None:
            src = self.src
            m = src.mutable
            if src.constexpr_ifs:
                taken = {id(n.test): self._constexpr_taken(n.test) for n in src.constexpr_ifs}
                key = tuple(taken.values())
                m = src.mutables.get(key)
                if m is None:
                    m = src.mutables[key] = mutable_names(src.tree.body, lambda t: taken.get(id(t)))
            self._mutable = m
        return m

    def _constexpr_taken(self, test: ast.Call) -> bool | None:
        """Which branch ``if T.constexpr(arg):`` takes, where ``arg`` reads only names the body
        does not assign and calls nothing but ``len`` / ``isinstance`` (None: not known yet)."""
        if len(test.args) != 1 or test.keywords:
            return None
        arg = test.args[0]
        for n in ast.walk(arg):
            if type(n) is ast.Name and n.id in self.src.assigned:
                return None
            if isinstance(n, ast.Call) and not (
                type(n.func) is ast.Name and n.func.id in ("len", "isinstance")
            ):
                return None
            if isinstance(n, (ast.NamedExpr, ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom)):
                return None
        try:
            v = self.eval(arg)
        except Exception:
            return None
        if isinstance(v, (PrimExpr, Cell, MetaVar, Buffer)):
            return None
        try:
            return bool(v)
        except Exception:
            return None

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
                if type(v) is EndedBinding:
                    raise NameError(
                        f"{name} was bound again inside the block that ends before this line (line "
                        f"{v.line}), and that binding ends with the block (TIRx's program is not "
                        f"well-formed here): read {name} inside the block, or make it a mutable local "
                        f"before it ({name}: T.{v.dtype} = ...)",
                        name=name,
                    )
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
        todo = collections.deque(stmts)  # an ``if`` decided while parsing puts its branch in front
        while todo:
            st = todo.popleft()
            spans.append(self.span(st))
            try:
                r = _STMT.get(type(st), Parser.visit_unsupported)(self, st)
            except DiagnosticError:
                raise
            except Exception as e:
                raise self.diag(st, e) from e
            finally:
                spans.pop()
            if type(r) is Spliced:
                todo.extendleft(reversed(r.stmts))
            elif r is not None:
                self.region(r, list(todo), st)
                return
            if self.pending_frames:  # a helper call opened frames: the rest goes inside them
                frames, self.pending_frames = self.pending_frames, []
                self.continue_in(frames, list(todo), st)
                return

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

    def call_site(self) -> Span | None:
        node = self.cur_call
        return self.plain_span(node) if node is not None else None


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
    persistent: bool = False,
) -> None:
    """Emit one Function into ``builder`` (which must be the active IRBuilder).

    ``check_well_formed`` (default: the builder's setting) verifies the function when it
    is finished; see ``IRBuilder.function``.
    """
    if src.deep and not deep.active():  # runs user code once, so decided up front, not retried
        deep.run(
            build_function, builder, src, env, name=name, private=private, drop=drop,
            skip_kwonly=skip_kwonly, annotations=annotations, check_well_formed=check_well_formed,
            persistent=persistent,
        )  # fmt: skip
        return
    fdef = src.tree
    p = Parser(builder, src, env)
    b = builder
    jit = drop is not None  # a @T.jit specialization (it may drop T.Optional parameters)
    drop = drop or {}
    with parsing(p):
        b.spans.append(p.span(fdef))
        try:
            fcm = b.function(
                name or fdef.name, private=private, check_well_formed=check_well_formed, persistent=persistent
            )
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
                if pname in drop:  # an optional tensor set to None: TIRx keeps it, typed T.NoneType()
                    sp = p.span(arg)
                    b.spans.append(sp)
                    try:
                        b.param(pname, VoidType())
                    finally:
                        b.spans.pop()
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
                    ty = _strip_typing_optional(ty)  # typing.Optional[ann]: as ann | None
                    opt = getattr(ty, "__tirx_optional__", None)  # T.Optional(ann): as ann | None
                    if opt is not None:
                        if not jit:  # nothing can drop it outside @T.jit
                            raise p.diag(arg.annotation, "T.Optional is only supported by @T.jit")
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
                        raise p.diag(arg.annotation, constexpr_param_error(pname, jit))
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


def _strip_typing_optional(ty: Any) -> Any:
    """``typing.Optional[ann]`` / ``typing.Union[ann, None]`` (a parameter a ``@T.jit``
    specialization may set to None): ``ann``, as the ``ann | None`` spelling is read."""
    import typing

    if typing.get_origin(ty) is typing.Union:
        rest = [a for a in typing.get_args(ty) if a is not type(None)]
        if len(rest) == 1 and len(typing.get_args(ty)) == 2:
            return rest[0]
    return ty
