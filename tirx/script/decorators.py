"""``@T.function``, ``@T.ir_module``/``@I.ir_module``, ``@T.inline``, ``T.macro`` and ``@T.jit``."""

from __future__ import annotations

import builtins
import inspect
import os
import struct
import sys
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, overload

from tirx.surface.builder import GlobalRef, IRBuilder

from ..errors import DiagnosticError, with_cause_class
from ..ir import Call, Function, PrimType
from ..ir.function import _AUTOTUNER
from ..ir.types import as_type
from .parser import (
    Env,
    Parser,
    Source,
    build_function,
    caller_locals,
    closure_vars,
    constexpr,
    current_parser,
    expand_helper,
    function_source,
    in_class_body,
    make_env,
)
from .parser_values import _MISSING

if TYPE_CHECKING:  # for type checkers only (the front end does not import the runtime)
    from collections.abc import Callable

    from ..runtime.autotune import Autotuner

__all__ = [
    "DEFAULT_JIT_CACHE_SIZE",
    "DeferredFunction",
    "InlineFunction",
    "JitFunction",
    "autotune",
    "function",
    "inline",
    "ir_module",
    "jit",
    "macro",
    "specialization_key",
]


def _raw_annotations(func: Any) -> dict:
    try:
        return dict(func.__annotations__)
    except Exception:  # pragma: no cover
        return {}


# ------------------------------------------------------------------ @T.function
class DeferredFunction:
    """A ``@T.function`` inside an ``@T.ir_module`` class body; the module parses it."""

    def __init__(self, func: Any, private: bool, locals_: dict, check_well_formed: bool = True,
                 persistent: bool = False):  # fmt: skip
        self.func = func
        self.private = private
        self.persistent = persistent
        self.locals = locals_
        self.check_well_formed = check_well_formed
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__

    def __repr__(self) -> str:
        return f"<T.function {self.func.__qualname__} (parsed by @T.ir_module)>"


def _raise_short(e: DiagnosticError) -> None:
    """Re-raise a frontend diagnostic with the user's frames only: the parser's internal
    frames (tens of them) are dropped from it and from its cause, which stays its cause.
    ``TIRX_TRACEBACK=1`` keeps everything."""
    with_cause_class(e)
    if os.environ.get("TIRX_TRACEBACK", "") not in ("", "0"):
        raise e
    cause = e.__cause__
    if cause is not None:
        cause.with_traceback(None)
    raise e.with_traceback(None) from cause


def _make_function(func: Any, private: bool, locals_: dict, in_class: bool, check: bool = True,
                   persistent: bool = False) -> Any:  # fmt: skip
    if not callable(func) or not hasattr(func, "__code__"):
        raise TypeError(f"@T.function decorates a Python function, got {type(func).__name__}")
    if not isinstance(persistent, bool):
        raise TypeError(f"@T.function: persistent must be True or False, got {persistent!r}")
    if in_class:
        return DeferredFunction(func, private, locals_, check, persistent)
    src = function_source(func)
    env = make_env(func, locals_)
    if env.get(func.__name__) is _MISSING:
        # ``fact(n - 1)`` in ``fact``'s own body: a call of the function being built (its
        # name as a global, printed ``Module.fact`` as TIRx does), where no outer name is meant
        env.layers.append({func.__name__: _SelfCall(func.__name__, src, env)})
    b = IRBuilder(src.filename, check_well_formed=check)
    try:
        with b:
            build_function(
                b, src, env, private=private, persistent=persistent, annotations=_raw_annotations(func)
            )
    except DiagnosticError as e:
        _raise_short(e)
    return b.get()


def function(
    func: Any = None, *, private: bool = False, persistent: bool = False, check_well_formed: bool = True
) -> Any:
    """Parse a Python function into a ``tirx.Function`` (``@T.function`` or ``@T.function(private=True)``).

    ``persistent=True`` marks a persistent kernel, as TIRx does: the function attribute
    ``tirx.persistent_kernel`` (metadata; printed ``@T.function(persistent=True)``).

    The result is checked by the well-formedness verifier, as ``tirx.loads`` checks text,
    so a function the frontend accepts prints to text that loads back;
    ``check_well_formed=False`` skips that (for deliberately malformed IR in tests).
    """
    if func is None:

        def deco(f: Any) -> Any:
            return _make_function(
                f, private, caller_locals(1), in_class_body(1), check_well_formed, persistent
            )

        return deco
    return _make_function(func, private, caller_locals(1), in_class_body(1), check_well_formed, persistent)


class _SelfCall:
    """A function's own name in its body (a standalone ``@T.function``, a ``@T.jit``
    specialization): calling it calls the function being built, its return type read from
    the annotation."""

    __slots__ = ("env", "name", "src")

    def __init__(self, name: str, src: Any, env: Any):
        self.name, self.src, self.env = name, src, env

    def __call__(self, *args: Any, **kwargs: Any) -> Call:
        if kwargs:
            raise TypeError(f"{self.name}: a recursive call takes positional arguments only")
        ret = None
        if self.src.tree.returns is not None:
            r = Parser(IRBuilder(), self.src, self.env).eval(self.src.tree.returns)
            ret = None if r is None else as_type(r)
        return GlobalRef(self.name, [], ret)(*args)


# ------------------------------------------------------------------ modules
class ModuleProxy:
    """The class name (and ``cls``) inside an ``@T.ir_module`` body."""

    def __init__(self, name: str):
        self._name = name
        self._refs: dict[str, GlobalRef] = {}

    def __getattr__(self, name: str) -> GlobalRef:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._refs[name]
        except KeyError:
            raise AttributeError(f"module {self._name} has no function {name!r}") from None


def ir_module(cls: Any = None, *, attrs: Any = None, check_well_formed: bool = True) -> Any:
    """Parse a class of ``@T.function`` methods into a ``tirx.Module``.

    ``@T.ir_module(attrs={...})`` sets the module's attributes. The module is verified
    (calls between its functions included) unless ``check_well_formed=False`` here or
    on a function.
    """
    if cls is None:
        return lambda c: ir_module(c, attrs=attrs, check_well_formed=check_well_formed)
    if not isinstance(cls, type):
        raise TypeError(f"@ir_module decorates a class, got {type(cls).__name__}")
    body_attrs = cls.__dict__.get("__tirx_module_attrs__")  # T.module_attrs({...}) in the class body
    if body_attrs is not None:
        if attrs is not None:
            raise TypeError(f"@ir_module {cls.__name__}: attrs given twice (attrs= and T.module_attrs)")
        attrs = body_attrs
    _refuse_redefined_functions(cls)
    proxy = ModuleProxy(cls.__name__)
    front = {cls.__name__: proxy, "cls": proxy}
    items = []
    extra_funcs = []
    # a bare name of a function of this module (``twice(x)`` beside ``Module.twice(x)``) calls it,
    # as in TIRx: the class body's locals hold the DeferredFunction itself (replaced by the
    # module's reference below), and names defined later in the body resolve after the globals
    siblings: dict = {}
    local_copies = []
    for name, v in cls.__dict__.items():
        if isinstance(v, DeferredFunction):
            src = function_source(v.func)
            locs = dict(v.locals)
            env = make_env(v.func, locs, front=front)
            env.layers.insert(len(env.layers) - 1, siblings)  # before the builtins only
            local_copies.append(locs)
            items.append((name, v, src, env))
        elif isinstance(v, Function):
            if v.name != name and not v.private and "global_symbol" not in v.attrs:
                # a public function kept under another name keeps its own symbol, as TIRx keeps
                # it (``fill_twos = fill.specialize(...)``: T.func_attr({"global_symbol": "fill"}))
                v = v.replace(name=name).with_attr("global_symbol", v.name)
            extra_funcs.append(v if v.name == name else v.replace(name=name))
    # signatures first, so functions can call ones defined later
    sig_builder = IRBuilder(cls.__name__)
    for name, _v, src, env in items:
        p = Parser(sig_builder, src, env)
        args = src.tree.args
        params = []
        for a in [*args.posonlyargs, *args.args]:
            try:
                t = p.eval(a.annotation) if a.annotation is not None else None
                params.append(as_type(t) if isinstance(t, PrimType) or hasattr(t, "__tirx_type__") else None)
            except Exception:
                params.append(None)
        ret = None
        if src.tree.returns is not None:
            r = p.eval(src.tree.returns)
            ret = None if r is None else as_type(r)
        proxy._refs[name] = GlobalRef(name, params, ret)
    for f in extra_funcs:
        proxy._refs[f.name] = GlobalRef(f.name, [p.ty for p in f.params], f.ret_ty)
    siblings.update(proxy._refs)
    for locs in local_copies:
        for k, val in locs.items():
            if isinstance(val, DeferredFunction) and cls.__dict__.get(k) is val:
                locs[k] = proxy._refs[k]
    b = IRBuilder(cls.__name__)
    try:
        with b, b.module(cls.__name__, attrs):
            assert b.module_funcs is not None  # b.module() opened it
            for f in extra_funcs:
                b.module_funcs.append(f)
            for name, v, src, env in items:
                build_function(
                    b, src, env, name=name, private=v.private, persistent=v.persistent,
                    annotations=_raw_annotations(v.func),
                    check_well_formed=check_well_formed and v.check_well_formed,
                )  # fmt: skip
    except DiagnosticError as e:
        _raise_short(e)
    return b.get()


def _refuse_redefined_functions(cls: type) -> None:
    """A module class that defines a function name twice: Python keeps the last, so the first
    would be lost without a word; refused at the second definition (as TIRx refuses it)."""
    import ast

    from ..diagnostics import render
    from ..ir.span import Span

    try:
        lines, start = inspect.getsourcelines(cls)
        path = inspect.getsourcefile(cls) or "<unknown>"
    except (OSError, TypeError):  # no source (a class built at run time): nothing to compare
        return
    text = "".join(lines)
    indent = len(lines[0]) - len(lines[0].lstrip())
    try:
        tree = ast.parse("\n".join(ln[indent:] if ln[:indent].isspace() else ln for ln in text.split("\n")))
    except SyntaxError:
        return
    seen: dict[str, int] = {}
    for node in tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else ():
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        line = start + node.lineno - 1
        if node.name in seen:
            span = Span(path, line, node.col_offset + indent + 1)
            msg = f"function {node.name!r} is defined twice in module {cls.__name__} (first at line {seen[node.name]})"
            try:
                with open(path) as fh:
                    src_text = fh.read()
            except OSError:
                src_text = None
            raise DiagnosticError(msg, span, render(msg, span, src_text))
        seen[node.name] = line


# ------------------------------------------------------------------ inline helpers and macros
class InlineFunction:
    """``@T.inline``: its body is expanded at each call inside a kernel; no call remains.

    Free names resolve when the call is expanded (like a Python function reading its
    globals). ``T.macro`` snapshots them when it is defined instead; a non-hygienic
    macro (``T.macro(hygienic=False)``) resolves them in the caller's scope.
    """

    def __init__(self, func: Any, locals_: dict, mode: str = "inline"):
        self.func = func
        self.locals = locals_
        self.mode = mode
        self.sig = inspect.signature(func)
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__doc__ = func.__doc__
        self.__wrapped__ = func
        self._env: Env | None = None
        if mode == "macro":
            g = dict(func.__globals__)
            self._env = Env([closure_vars(func), dict(locals_), g, builtins.__dict__])

    def __repr__(self) -> str:
        return f"<T.{'inline' if self.mode == 'inline' else 'macro'} {self.func.__qualname__}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return _BoundInline(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        p = current_parser()
        if p is None:
            raise RuntimeError(
                f"{self!r} can only be called inside a kernel (a @T.function body or a helper it calls)"
            )
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.func.__name__}(): {e}") from None
        bound.apply_defaults()
        src = function_source(self.func)
        site = p.call_site()
        prefix = (*p.prefix, site) if site is not None else p.prefix
        base = None
        if self.mode == "inline":
            env = make_env(self.func, self.locals)
        elif self.mode == "macro":
            assert self._env is not None  # made by __init__ in macro mode
            env = self._env
        else:  # non-hygienic macro: the caller's names first
            own = make_env(self.func, self.locals)
            env = Env([*p.env.layers, *own.layers])
            base = p.scopes
        child = Parser(p.b, src, env, prefix, inline=True, base_scopes=base)
        return expand_helper(p, child, bound.arguments, src.tree.body)


class _BoundInline:
    __slots__ = ("fn", "obj")

    def __init__(self, fn: InlineFunction, obj: Any):
        self.fn = fn
        self.obj = obj

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(self.obj, *args, **kwargs)


def inline(func: Any = None, *, hygienic: bool = True, **options: Any) -> Any:
    """``@T.inline``: a reusable statement fragment or value-returning helper.
    ``T.inline(hygienic=False)`` resolves its free names in the caller's scope first (as a
    non-hygienic macro); TIRx accepts other keyword options and ignores them, and so does this."""
    if not isinstance(hygienic, bool):
        raise TypeError(f"T.inline: hygienic must be True or False, got {hygienic!r}")
    mode = "inline" if hygienic else "macro-nonhygienic"
    if func is None:
        return lambda f: InlineFunction(f, caller_locals(1), mode)
    return InlineFunction(func, caller_locals(1), mode)


def macro(func: Any = None, *, hygienic: bool = True) -> Any:
    """``@T.macro``: like ``@T.inline`` but free names are captured when it is defined."""
    mode = "macro" if hygienic else "macro-nonhygienic"
    if func is None:
        return lambda f: InlineFunction(f, caller_locals(1), mode)
    return InlineFunction(func, caller_locals(1), mode)


# ------------------------------------------------------------------ @T.jit
#: How many specializations one ``@T.jit`` function keeps by default; past it the least
#: recently used is dropped (``@T.jit(cache_size=...)``; ``None``: unbounded).
DEFAULT_JIT_CACHE_SIZE = 128


def specialization_key(value: Any, where: str = "value") -> Any:
    """A hashable key that is equal for two values only when they have the same type and
    exactly the same value.

    Python's ``==`` is not that: ``-0.0 == 0.0``, ``True == 1 == 1.0`` and
    ``nan != nan``. Floats and complex numbers are keyed by their bits (so ``-0.0`` and
    ``0.0`` differ and a NaN matches a NaN with the same payload), numpy scalars by dtype
    and bytes, tuples and frozensets element by element; every key carries the value's
    type. Other hashable values (ints, strings, dtypes, enums, objects) are keyed by type
    and their own ``==``/``hash``. An unhashable value is a ``TypeError`` naming ``where``.
    """
    t = type(value)
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.generic):
        return (t, value.dtype.str, value.tobytes())
    if isinstance(value, float):
        return (t, struct.pack("<d", value))
    if isinstance(value, complex):
        return (t, struct.pack("<dd", value.real, value.imag))
    if isinstance(value, tuple):
        return (t, tuple(specialization_key(x, f"{where}[{i}]") for i, x in enumerate(value)))
    if isinstance(value, frozenset):
        return (t, frozenset(specialization_key(x, f"an element of {where}") for x in value))
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"the value for {where} is unhashable ({t.__name__}); "
            "specialization values must be hashable (use a tuple)"
        ) from None
    return (t, value)


def _check_cache_size(cache_size: Any) -> int | None:
    if cache_size is None:
        return None
    if type(cache_size) is not int:
        raise TypeError(f"@T.jit: cache_size must be an int or None, got {type(cache_size).__name__}")
    if cache_size < 0:
        raise ValueError(f"@T.jit: cache_size must be >= 0, got {cache_size}")
    return cache_size


def _is_constexpr(p: Parser, ann: Any) -> bool:
    """Whether the annotation ``ann`` (an AST node) is ``T.constexpr``."""
    try:
        return p.eval(ann) is constexpr
    except DiagnosticError:
        return False


class JitFunction:
    """``@T.jit``: parsed by ``.specialize(**constexpr_values)``, once per value set.

    Specializations are kept in ``cache``, an LRU of at most ``cache_size`` entries
    (``None``: unbounded, ``0``: none kept) keyed by ``specialization_key`` of every
    constexpr value (defaults filled in) and the dropped optional tensors.
    """

    def __init__(
        self,
        func: Any,
        locals_: dict,
        private: bool = False,
        cache_size: int | None = DEFAULT_JIT_CACHE_SIZE,
        check_well_formed: bool = True,
        persistent: bool = False,
    ):
        self.func = func
        self.locals = locals_
        self.private = private
        self.persistent = persistent
        self.cache_size = _check_cache_size(cache_size)
        self.check_well_formed = check_well_formed
        self.cache: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__doc__ = func.__doc__
        self._info: tuple[Source, dict[str, Any], list[str]] | None = None
        self._positional_consts = False
        self._building = threading.local()  # depth of specializations of this function under way

    def __repr__(self) -> str:
        return f"<T.jit {self.func.__qualname__}>"

    def _self_call(self, args: tuple, kwargs: dict) -> Call:
        """``f(x, y)`` in ``f``'s own body: a call of the function being built (its name as a
        global, as TIRx builds it), not another specialization (which would never end)."""
        src, _consts, _others = self._signature()
        return _SelfCall(self.__name__, src, make_env(self.func, self.locals))(*args, **kwargs)

    def _signature(self) -> tuple:
        if self._info is None:
            src = function_source(self.func)
            env = make_env(self.func, self.locals)
            p = Parser(IRBuilder(), src, env)
            consts: dict[str, Any] = {}
            a = src.tree.args
            # a constexpr may stand anywhere, as in TIRx (``def f(A, N: T.constexpr)``): it is
            # bound by name (``.specialize(N=...)``), or by position in a call
            params = inspect.signature(self.func).parameters
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
                if arg.annotation is not None and _is_constexpr(p, arg.annotation):
                    consts[arg.arg] = params[arg.arg].default
            others = [x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs] if x.arg not in consts]
            self._info = (src, consts, others)
            self._positional_consts = any(x.arg in consts for x in [*a.posonlyargs, *a.args])
        return self._info

    @property
    def constexpr_params(self) -> tuple:
        return tuple(self._signature()[1])

    @property
    def constexpr_names(self) -> frozenset:
        """The ``T.constexpr`` parameters' names (TIRx's introspection)."""
        return frozenset(self._signature()[1])

    @property
    def constexpr_defaults(self) -> dict:
        """The ``T.constexpr`` parameters that have a default, with it."""
        return {k: d for k, d in self._signature()[1].items() if d is not inspect.Parameter.empty}

    @property
    def optional_names(self) -> frozenset:
        """The parameters a specialization may drop (``specialize(B=None)``): annotated
        ``T.Optional(...)`` / ``... | None``, or defaulting to None."""
        import ast

        src, consts, _others = self._signature()
        a = src.tree.args

        def optional(ann: Any) -> bool:
            if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
                return any(isinstance(x, ast.Constant) and x.value is None for x in (ann.left, ann.right))
            head = (
                ann.func
                if isinstance(ann, ast.Call)
                else ann.value
                if isinstance(ann, ast.Subscript)
                else None
            )
            return (
                isinstance(head, (ast.Attribute, ast.Name))
                and getattr(head, "attr", getattr(head, "id", "")) == "Optional"
            )

        named = {
            x.arg
            for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]
            if x.annotation is not None and optional(x.annotation)
        }
        return frozenset((named | self._none_defaults()) - set(consts))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Specialize with the ``T.constexpr`` keywords (and any optional tensor passed as
        None), then run the specialization on the remaining arguments like a direct call of
        a ``@T.function`` (``tirx.runtime.direct``: the arrays' memory picks CUDA or the
        interpreter)."""
        if getattr(self._building, "depth", 0) and current_parser() is not None:
            return self._self_call(args, kwargs)
        const, dropped, kept, kwargs = self.split_call(args, kwargs)
        f = self.specialize(**const, **dropped)
        return f(*kept, **kwargs)

    def split_call(self, args: tuple, kwargs: dict) -> tuple[dict, dict, list, dict]:
        """A call's arguments split as ``__call__`` uses them: ``(constexpr values, optional
        tensors set to None, the other positional arguments, the other keywords)``
        (``@T.autotune`` splits a call the same way). A None stays in the arguments: the
        specialization keeps that parameter, typed ``T.NoneType()``, as TIRx does."""
        _src, consts, others = self._signature()
        if self._positional_consts and args:
            # a constexpr taken by position: the call's arguments by name, the others in order
            try:
                bound = inspect.signature(self.func).bind_partial(*args, **kwargs).arguments
            except TypeError as e:
                raise TypeError(f"{self.__name__}(): {e}") from None
            npos = len(args)
            order = list(inspect.signature(self.func).parameters)
            args = tuple(bound[n] for n in order[:npos] if n not in consts)
            kwargs = {n: v for n, v in bound.items() if n not in order[:npos] or n in consts}
        kwargs = dict(kwargs)
        const = {k: kwargs.pop(k) for k in list(kwargs) if k in consts}
        dropped = {k: None for k, v in kwargs.items() if v is None}
        for i, a in enumerate(args):  # a positional None sets that optional tensor to None too
            if a is None and i < len(others):
                dropped[others[i]] = None
        for k in others[len(args) :]:  # ``Bias: T.Tensor(...) | None = None`` left out: its default
            if k not in kwargs and k in self._none_defaults():
                dropped[k] = kwargs[k] = None
        return const, dropped, list(args), kwargs

    def _none_defaults(self) -> frozenset:
        """The ordinary parameters whose Python default is None (optional tensors)."""
        nd = self.__dict__.get("_nd")
        if nd is None:
            ps = inspect.signature(self.func).parameters.values()
            nd = self._nd = frozenset(p.name for p in ps if p.default is None)
        return nd

    def specialize(self, **values: Any) -> Function:
        """A Function with the given ``T.constexpr`` values (and optional tensors set to None)."""
        src, consts, others = self._signature()
        front: dict[str, Any] = {}
        drop: dict[str, Any] = {}
        unknown = [k for k in values if k not in consts and k not in others]
        if unknown:  # all of them named at once, in TIRx's words (tests match "unexpected arg")
            raise TypeError(
                f"{self.__name__}.specialize() got unexpected arg(s): {unknown} "
                f"(specializable params are: {list(consts)})"
            )
        for k, v in values.items():
            if k in consts:
                front[k] = v
            elif k in others:
                if v is not None:
                    raise TypeError(
                        f"{self.__name__}.specialize: {k!r} is not a T.constexpr parameter "
                        f"(specializable params are: {list(consts)}; only None is accepted for a "
                        "regular parameter, to drop an optional tensor)"
                    )
                drop[k] = None
        for k, d in consts.items():
            if k not in front:
                if d is inspect.Parameter.empty:
                    raise TypeError(f"{self.__name__}.specialize: missing a value for T.constexpr {k!r}")
                front[k] = d
        try:
            key = (
                tuple((k, specialization_key(front[k], repr(k))) for k in sorted(front)),
                tuple(sorted(drop)),
            )
        except TypeError as e:
            raise TypeError(f"{self.__name__}.specialize: {e}") from None
        except RecursionError:
            raise TypeError(f"{self.__name__}.specialize: a value is nested too deeply to be a key") from None
        with self._lock:
            hit = self.cache.get(key)
            if hit is not None:
                self.cache.move_to_end(key)
                return hit
        env = make_env(self.func, self.locals, front=front)
        b = IRBuilder(src.filename, check_well_formed=self.check_well_formed)
        self._building.depth = getattr(self._building, "depth", 0) + 1
        try:
            with b:
                build_function(
                    b, src, env, private=self.private, persistent=self.persistent, drop=drop,
                    skip_kwonly=frozenset(consts),
                    annotations=_raw_annotations(self.func),
                )  # fmt: skip
        except DiagnosticError as e:
            _raise_short(e)
        finally:
            self._building.depth -= 1
        f = b.get()
        assert isinstance(f, Function)  # build_function built one function
        if self.cache_size == 0:
            return f
        with self._lock:
            hit = self.cache.get(key)  # another thread built it meanwhile: one answer per key
            if hit is not None:
                self.cache.move_to_end(key)
                return hit
            self.cache[key] = f
            if self.cache_size is not None:
                while len(self.cache) > self.cache_size:
                    self.cache.popitem(last=False)
        return f


@overload
def autotune(fn: JitFunction, *, configs: Any, key: Any = (), **options: Any) -> Autotuner: ...
@overload
def autotune(
    fn: None = None, *, configs: Any, key: Any = (), **options: Any
) -> Callable[[JitFunction], Autotuner]: ...
def autotune(fn: Any = None, *, configs: Any, key: Any = (), **options: Any) -> Any:
    """``@T.autotune(configs=[{...}, ...], key=[...])`` above ``@T.jit`` (or
    ``T.autotune(jit_fn, configs=..., key=...)``): on the first call with new values of the
    ``key`` arguments, every config's constexpr values (merged with the call's) are compiled
    and timed, and the fastest one runs from then on (``tirx.runtime.autotune``,
    docs/autotune.md). Options: ``warmup``, ``rep``, ``restore_value``, ``reset_to_zero``,
    ``prune_configs_by``, ``do_bench``, ``workers``, ``disk_cache``."""
    options = dict(options, configs=configs, key=key)

    def wrap(f: Any) -> Any:
        if not isinstance(f, JitFunction):
            what = "a plain function" if inspect.isfunction(f) else type(f).__name__
            raise TypeError(f"@T.autotune tunes a @T.jit function (put @T.jit below it), got {what}")
        return _AUTOTUNER[0](f, options)

    return wrap if fn is None else wrap(fn)


@overload
def jit(
    func: Callable[..., Any],
    *,
    private: bool = False,
    cache_size: int | None = DEFAULT_JIT_CACHE_SIZE,
    check_well_formed: bool = True,
    persistent: bool = False,
) -> JitFunction: ...
@overload
def jit(
    func: None = None,
    *,
    private: bool = False,
    cache_size: int | None = DEFAULT_JIT_CACHE_SIZE,
    check_well_formed: bool = True,
    persistent: bool = False,
) -> Callable[[Callable[..., Any]], JitFunction]: ...
def jit(
    func: Any = None,
    *,
    private: bool = False,
    cache_size: int | None = DEFAULT_JIT_CACHE_SIZE,
    check_well_formed: bool = True,
    persistent: bool = False,
) -> Any:
    """``@T.jit``: keyword-only ``T.constexpr`` parameters, bound by ``.specialize(...)``.

    ``persistent=True`` marks every specialization a persistent kernel (as ``@T.function``).

    ``cache_size`` bounds the specializations kept (LRU; ``None`` unbounded).
    """
    cache_size = _check_cache_size(cache_size)
    if not isinstance(persistent, bool):
        raise TypeError(f"@T.jit: persistent must be True or False, got {persistent!r}")
    if func is None:
        return lambda f: JitFunction(f, caller_locals(1), private, cache_size, check_well_formed, persistent)
    return JitFunction(func, caller_locals(1), private, cache_size, check_well_formed, persistent)
