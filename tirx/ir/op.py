"""The op table: every intrinsic is declared once, with everything that gives it meaning.

An ``Op`` carries its script name (what follows ``T.``), argument kinds, result-type
rule, purity, traits, doc line and its implementations: ``cuda=`` (a ``CExpr`` expression
template, a ``PTX`` inline-asm template, or a function ``(codegen, call)``, with the C++
``Helper``s it needs) and ``interp=`` (a function ``(compiler, call) -> evaluator`` or
``NoInterp(reason)``); ``host=`` (a function ``(call, argument sources) -> Python source``) is
what host code computes for it (``tirx.runtime.hostexpr``). The built-in ops are declared by family in ``tirx/ops/``. The
Python frontend and the text grammar resolve ``T.<name>`` through ``lookup``; the printer
prints ``T.<name>(...)``; codegen and the interpreter ask ``impl(backend, op)``. Other
backends may add implementations by name with ``register_handler``.

This module holds data only: it imports nothing above ``tirx.ir``. The built-in
declarations load on the first use of the table (``import tirx`` registers the loader with
``register_loader``), so ``import tirx`` does not pay for ~320 declarations it may never use.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import OpError
from .expr import _LAZY, Call, PrimExpr, StringImm, convert
from .types import PointerType, PrimType, Type, as_type, bool_

if TYPE_CHECKING:
    from types import FrameType

__all__ = [
    "PTX",
    "Alias",
    "CExpr",
    "Helper",
    "NoInterp",
    "Op",
    "Traits",
    "alias",
    "aliases",
    "all_ops",
    "call",
    "declare",
    "find",
    "handler",
    "impl",
    "lookup",
    "register_handler",
    "register_loader",
]

# argument kinds: "x" any expression, "i" integer, "f" float, "b" bool, "p" pointer,
# "s" string literal, "n" integer literal; a leading "*" makes the last kind variadic,
# a trailing "?" makes it optional.
_KIND_DESC = {
    "x": "an expression",
    "i": "an integer expression",
    "f": "a float expression",
    "b": "a bool expression",
    "p": "a pointer expression",
    "s": "a string literal",
    "n": "an integer literal",
}


@attrs.define(slots=True, frozen=True)
class Traits:
    """What passes, analyses and backends may ask about an op instead of testing its name.

    - ``convergent``: every thread of the warp/block must reach it together (barriers,
      shuffles, warp reductions); it may not be moved into or out of divergent control flow.
    - ``atomic``: index of the pointer argument an atomic read-modify-write goes through.
    - ``range``: the result's value range: ``(lo, hi)`` or a function
      ``f(axis, dim) -> (lo, hi) | None`` where ``axis`` is the op's string argument (or
      None) and ``dim(key)`` the ``(lo, hi)`` range of a launch dimension
      (``"block.x"``, ``"grid.y"``, ``"cluster.z"``, ``"cluster.size"``) or None when unknown.
    - ``nonneg``: the result is never negative (codegen uses plain ``/`` and ``%`` on it).
    - ``select``: arguments are ``(cond, then, else)``; the result is the taken arm.
    - ``lazy_args``: argument indices evaluated only conditionally (not hoistable, not CSE'd).
    - ``pointer_from``: argument indices whose (pointer) type the result shares.
    - ``takes_address``: argument 0 is a buffer element whose address the op takes.
    - ``bitcast``: the op reinterprets its argument's bits as the result type.
    - ``launch``: a thread-model index/extent: ``("idx" | "dim", "block" | "grid" | ...)``.
    - ``alignment_test``: the result says whether pointer argument 0 is aligned to argument
      1 bytes (an integer literal); code guarded by a true result may assume the alignment
      (the vectorizer builds such guards, codegen reads them).
    - ``alignment_fact``: the call states that pointer argument 0 is aligned to argument 1
      bytes (no code; the interpreter and a host program check it).
    - ``shared_window``: the result is the 32-bit shared-window address of pointer argument
      0 (the PTX table converts shared-address operands with it).

    An op a pass or backend has to build (an address, a bitcast, a thread index) is found by
    its traits with ``find(...)``, not by its name.
    """

    convergent: bool = False
    atomic: int | None = None
    range: Any = None
    nonneg: bool = False
    select: bool = False
    lazy_args: tuple[int, ...] = ()
    pointer_from: tuple[int, ...] = ()
    takes_address: bool = False
    bitcast: bool = False
    launch: tuple[str, str] | None = None
    alignment_test: bool = False
    alignment_fact: bool = False
    shared_window: bool = False

    def value_range(self, axis: str | None, dim: Callable[[str], Any]) -> tuple[int, int] | None:
        """The declared value range given launch dimension ranges (``dim(key)``), or None."""
        r = self.range
        if r is None:
            return None
        if callable(r):
            try:
                return r(axis, dim)
            except (TypeError, KeyError):  # a dimension is unknown
                return None
        return r


@attrs.define(slots=True, frozen=True)
class Helper:
    """A C++ helper (function, template or macro) emitted once in the prelude of a
    translation unit that uses it, after the helpers it ``deps`` on."""

    name: str
    code: str
    deps: tuple[Helper, ...] = ()


@attrs.define(slots=True, frozen=True)
class CExpr:
    """A CUDA lowering as a C expression template.

    ``{0}``, ``{1}``... are the arguments as C expressions; ``{0:s}`` is a string-literal
    argument's text; ``{ty}`` is the result's C type. ``helpers`` are emitted before use.
    The expression is parenthesized by the template's author where it needs to be."""

    template: str
    helpers: tuple[Helper, ...] = ()


@attrs.define(slots=True, frozen=True)
class PTX:
    """A CUDA lowering as inline PTX (``asm volatile`` unless the op is pure), in the
    template language of ``T.ptx.asm`` (docs/cuda.md): ``{i}`` operand i, ``{i:smem}``,
    ``{i:imm}``, ``{i:out}``, ``{i:inout}``, ``{out}`` the result, ``{{``/``}}``. A None
    template: the call's first argument is the template string (``T.ptx.asm``).
    ``by_arity``: other templates for calls with that many arguments (an optional operand)."""

    template: str | None
    by_arity: tuple = ()  # ((argument count, template), ...)

    def for_args(self, n: int) -> str | None:
        """The template of a call with ``n`` arguments."""
        for k, t in self.by_arity:
            if k == n:
                return t
        return self.template


@attrs.define(slots=True, frozen=True)
class NoInterp:
    """The interpreter cannot run this op; ``reason`` says why (shown when a kernel using
    it is compiled for the interpreter)."""

    reason: str


_NO_TRAITS = Traits()
_TRAIT_FIELDS = {a.name for a in attrs.fields(Traits)}


class _InstanceDoc:
    """``__doc__`` of an op or alias: its own documentation on an instance (``help(T.exp)``,
    ``T.exp.__doc__``), the class docstring on the class."""

    def __init__(self, class_doc: str) -> None:
        self.class_doc = class_doc

    def __get__(self, obj: Any, owner: Any = None) -> str:
        return self.class_doc if obj is None else obj._doc_text()


def _kind_text(k: str) -> str:
    return _KIND_DESC.get(k.lstrip("*").rstrip("?"), "an expression")


class _ScriptCallable:
    """What makes an op or alias document itself as a function (``help``, editors, notebooks):
    ``__name__`` is its script name, ``__signature__`` lists its parameters (with the defaults
    a call may leave out and ``ty=`` where the result type is given), ``__doc__`` is its own
    doc plus its docs link. ``__get__`` makes ``help()`` document the instance itself (a
    method descriptor is a routine to ``pydoc``), not the class."""

    __slots__ = ()
    if TYPE_CHECKING:
        name: str

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return self

    @property
    def __name__(self) -> str:
        return self.name.rsplit(".", 1)[-1]


@attrs.define(slots=True, eq=False, frozen=True)
class Op(_ScriptCallable):
    """An intrinsic. Ops are singletons: identity equality, hashed by name."""

    name: str
    args: tuple[str, ...]
    result: Any  # Type | "arg0" | "ty" | "bool0" | Callable[[tuple], Type]
    pure: bool = True
    device_only: bool = False
    doc: str = ""
    traits: Traits = _NO_TRAITS
    #: backend -> implementation ("cuda": CExpr | PTX | function; "interp": function | NoInterp;
    #: "interp.stmt": the interpreter's form when the value is unused)
    impls: dict = attrs.field(factory=dict)
    #: argument names (for keyword calls, ``T.cuda.warp_reduce(x, op="sum")``) and the values
    #: of trailing optional arguments a call leaves out (filled in: the IR always has them)
    params: tuple[str, ...] = ()
    defaults: dict = attrs.field(factory=dict)
    #: argument index -> the literal values it may take (a string or integer literal argument)
    choices: dict = attrs.field(factory=dict)
    #: Python literals keep their own dtype in every position (TVM's packed/LLVM calls:
    #: ``T.call_packed("f", x, 0)`` passes an int32 0 whatever x is)
    own_literals: bool = False
    #: TIRx prints the call without ``ty=`` and takes its type from the binding it is the value
    #: of (``x: T.let[T.float32] = T.undef()``); the builder does the same
    typed_by_binding: bool = False

    @property
    def needs_ty(self) -> bool:
        return self.result == "ty"

    def arity(self) -> tuple[int, int | None]:
        lo = sum(1 for k in self.args if not k.startswith("*") and not k.endswith("?"))
        hi = None if any(k.startswith("*") for k in self.args) else len(self.args)
        return lo, hi

    def shares_literal_dtype(self, i: int) -> bool:
        """Whether a Python literal at argument ``i`` takes the dtype of the first typed
        argument in such a position (``"x"``/``"f"`` kinds: ``T.max(x, 0)``); the printer
        asks this to know when a literal must be written typed."""
        if self.own_literals:
            return False
        k = self.args[i] if i < len(self.args) else (self.args[-1] if self.args else "")
        return k.lstrip("*").rstrip("?") in ("x", "f")

    def __repr__(self) -> str:
        return f"Op({self.name!r})"

    def __call__(self, *args: Any, ty: Any = None, span: Any = None, **kwargs: Any) -> Call:
        return call(self, *args, ty=ty, span=span, **kwargs)

    def _param_name(self, i: int) -> str:
        return self.params[i] if i < len(self.params) else f"a{i}"

    def _doc_text(self) -> str:
        lines = [f"T.{self.name}: {self.doc}" if self.doc else f"T.{self.name}", ""]
        for i, k in enumerate(self.args):
            choices = self.choices.get(i)
            what = f"one of {', '.join(map(str, choices))}" if choices else _kind_text(k)
            lines.append(f"{self._param_name(i)}: {what}{' (optional)' if k.endswith('?') else ''}")
        if self.needs_ty:
            lines.append("ty: the result type")
        family = self.name.rsplit(".", 1)[0] + ".<name>" if "." in self.name else "<name>"
        lines += ["", f"Reference: docs/ops.md, section T.{family} (generated from its declaration)."]
        return "\n".join(lines)

    @property
    def __signature__(self) -> inspect.Signature:
        P = inspect.Parameter
        ps = []
        for i, k in enumerate(self.args):
            n = self._param_name(i)
            if k.startswith("*"):
                ps.append(P(n, P.VAR_POSITIONAL))
            elif k.endswith("?"):
                d = self.defaults.get(i)
                ps.append(P(n, P.POSITIONAL_OR_KEYWORD, default=getattr(d, "value", d)))
            else:
                ps.append(P(n, P.POSITIONAL_OR_KEYWORD))
        if self.needs_ty:
            ps.append(P("ty", P.KEYWORD_ONLY))
        r = self.result
        ret = r if isinstance(r, str) else ("computed" if callable(r) and not hasattr(r, "base") else str(r))
        return inspect.Signature(ps, return_annotation=ret)


Op.__doc__ = _InstanceDoc(Op.__doc__ or "")  # type: ignore[assignment]
_LAZY["Op"] = Op  # Call checks its op against it (expr.py)
_REGISTRY: dict[str, Op] = {}
_DECL_SITE: dict[str, str] = {}  # op name -> file that declared it (tools/op_mentions.py)
_HANDLERS: dict[str, dict[str, Callable]] = {}

# The built-in ops live a layer up (tirx/ops); ``tirx/__init__`` registers a loader that
# imports them, run once before the table is first read or written (so a user declaration
# still sees the built-ins, and a clash is still "declared twice").
_LOADER: list[Callable[[], Any] | None] = [None]
_LOADED = [False]


def register_loader(load: Callable[[], Any]) -> None:
    """Install what declares the built-in ops; it runs on the table's first use."""
    _LOADER[0] = load


def _ensure_builtins() -> None:
    if _LOADED[0]:
        return
    load = _LOADER[0]
    if load is None:
        return
    _LOADED[0] = True  # before loading: the declarations themselves use the table
    load()


def declare(
    name: str,
    args: str | tuple[str, ...] = (),
    result: Any = "arg0",
    *,
    pure: bool = True,
    device_only: bool = False,
    doc: str = "",
    traits: Traits | None = None,
    cuda: Any = None,
    interp: Any = None,
    interp_stmt: Any = None,
    script: Any = None,
    host: Any = None,
    params: tuple[str, ...] | str = (),
    defaults: dict | None = None,
    choices: dict | None = None,
    own_literals: bool = False,
    typed_by_binding: bool = False,
    **trait_kw: Any,
) -> Op:
    """Declare an op once. ``args`` may be a space-separated string of kinds; traits are
    given as a ``Traits`` or as keywords (``declare(..., nonneg=True, atomic=0)``);
    ``cuda``/``interp``/``interp_stmt`` are its implementations (see the module doc);
    ``script`` is what ``T.<name>`` is in a kernel when it is more than the plain call (a
    Python-only spelling that builds the same call, such as ``T.reinterpret(ty, e)``);
    ``own_literals`` keeps each Python literal argument's own dtype (no sharing);
    ``typed_by_binding``: a binding's annotation gives the call its type."""
    _ensure_builtins()
    if name in _REGISTRY:
        raise ValueError(f"op {name!r} is declared twice")
    if isinstance(args, str):
        args = tuple(args.split())
    for k in args:
        base = k.lstrip("*").rstrip("?")
        if base not in _KIND_DESC:
            raise ValueError(f"op {name!r}: unknown argument kind {k!r}")
    if isinstance(result, str) and result not in ("arg0", "ty", "bool0"):
        result = as_type(result)
    bad = set(trait_kw) - _TRAIT_FIELDS
    if bad:
        raise TypeError(f"op {name!r}: unknown trait(s) {sorted(bad)}")
    if cuda is not None and not (isinstance(cuda, (CExpr, PTX)) or callable(cuda)):
        raise TypeError(f"op {name!r}: cuda= must be a CExpr or PTX template or a function, got {cuda!r}")
    if interp is not None and not (isinstance(interp, NoInterp) or callable(interp)):
        raise TypeError(f"op {name!r}: interp= must be a function or NoInterp(reason), got {interp!r}")
    given = traits or _NO_TRAITS
    tr = attrs.evolve(given, **trait_kw) if trait_kw else given
    if tr.select and not tr.lazy_args:
        tr = attrs.evolve(tr, lazy_args=(1, 2))
    impls = {
        k: v
        for k, v in (
            ("cuda", cuda), ("interp", interp), ("interp.stmt", interp_stmt), ("script", script), ("host", host)
        )
        if v is not None
    }
    if isinstance(params, str):
        params = tuple(params.split())
    if params and len(params) != len(args):
        raise ValueError(f"op {name!r}: {len(params)} parameter names for {len(args)} arguments")
    defaults = dict(defaults or {})
    for i in defaults:
        if not (isinstance(i, int) and 0 <= i < len(args) and args[i].endswith("?")):
            raise ValueError(f"op {name!r}: a default for argument {i}, which is not an optional one")
    choices = {i: tuple(v) for i, v in (choices or {}).items()}
    for i in choices:
        if not (isinstance(i, int) and 0 <= i < len(args) and args[i].rstrip("?") in ("s", "n")):
            raise ValueError(
                f"op {name!r}: choices for argument {i}, which is not a string or integer literal"
            )
    op = Op(
        name,
        tuple(args),
        result,
        pure,
        device_only,
        doc,
        tr,
        impls,
        tuple(params),
        defaults,
        choices,
        own_literals,
        typed_by_binding,
    )
    _REGISTRY[name] = op
    f: FrameType | None = sys._getframe(1)
    while f is not None and f.f_code.co_filename == __file__:
        f = f.f_back
    _DECL_SITE[name] = f.f_code.co_filename if f is not None else ""
    return op


def lookup(name: str) -> Op | None:
    if not _LOADED[0]:
        _ensure_builtins()
    return _REGISTRY.get(name)


def get(name: str) -> Op:
    op = lookup(name)
    if op is None:
        raise OpError(f"unknown op T.{name}")
    return op


def all_ops(builtin_only: bool = False) -> dict[str, Op]:
    """Every declared op by name; ``builtin_only`` leaves out ops declared by users/tests."""
    _ensure_builtins()
    if builtin_only:
        return {n: o for n, o in _REGISTRY.items() if n in _BUILTIN}
    return dict(_REGISTRY)


_FOUND: dict[tuple, Op] = {}


def find(**traits: Any) -> Op:
    """The one built-in op whose traits have these values (``find(takes_address=True)``,
    ``find(launch=("idx", "block"))``): how passes and backends get an op they build or
    recognize without spelling its name. ValueError when none or several match."""
    _ensure_builtins()
    key = tuple(sorted(traits.items()))
    got = _FOUND.get(key)
    if got is not None:
        return got
    bad = set(traits) - _TRAIT_FIELDS
    if bad:
        raise TypeError(f"find: unknown trait(s) {sorted(bad)}")
    pool = [o for n, o in _REGISTRY.items() if n in _BUILTIN] if _BUILTIN else list(_REGISTRY.values())
    hits = [o for o in pool if all(getattr(o.traits, k) == v for k, v in traits.items())]
    if len(hits) != 1:
        names = ", ".join(sorted(o.name for o in hits)) or "none"
        raise ValueError(f"find({', '.join(f'{k}={v!r}' for k, v in key)}): {len(hits)} ops match ({names})")
    if _BUILTIN:
        _FOUND[key] = hits[0]
    return hits[0]


def _check_arg(op: Op, i: int, kind: str, a: Any) -> PrimExpr:
    e = _check_kind(op, i, kind, a)
    allowed = op.choices.get(i)
    if allowed is not None:
        value = getattr(e, "value", e)  # a literal (IntImm / StringImm) carries its value
        if isinstance(value, PrimExpr) or value not in allowed:
            want = ", ".join(repr(v) for v in allowed)
            what = f"argument {i + 1} ({op.params[i]})" if i < len(op.params) else f"argument {i + 1}"
            got = f"an expression of dtype {e.ty}" if isinstance(value, PrimExpr) else repr(value)
            raise TypeError(f"T.{op.name}: {what} must be one of {want} (a literal), got {got}")
    return e


def _check_kind(op: Op, i: int, kind: str, a: Any) -> PrimExpr:
    base = kind.lstrip("*").rstrip("?")
    if base == "s":
        if isinstance(a, str):
            return StringImm(a)
        if isinstance(a, StringImm):
            return a
        raise TypeError(f"T.{op.name}: argument {i + 1} must be {_KIND_DESC[base]}, got {_what(a)}")
    if base == "n":
        if isinstance(a, bool) or not isinstance(a, (int, PrimExpr)):
            raise TypeError(f"T.{op.name}: argument {i + 1} must be {_KIND_DESC[base]}, got {_what(a)}")
        e = convert(a)
        if not (isinstance(e.ty, PrimType) and e.ty.is_int):
            raise TypeError(f"T.{op.name}: argument {i + 1} must be {_KIND_DESC[base]}, got {_what(a)}")
        return e
    if base == "p" and not isinstance(a, PrimExpr) and isinstance(getattr(a, "data", None), PrimExpr):
        a = a.data  # a buffer where a pointer goes: its backing pointer (TIRx passes buffers so)
    try:
        e = convert(a)
    except TypeError:
        raise TypeError(f"T.{op.name}: argument {i + 1} must be {_KIND_DESC[base]}, got {_what(a)}") from None
    t = e.ty
    ok = (
        base == "x"
        or (base == "i" and isinstance(t, PrimType) and (t.is_int or t.is_bool))
        or (base == "f" and isinstance(t, PrimType) and t.is_float)
        or (base == "b" and isinstance(t, PrimType) and t.is_bool)
        or (base == "p" and isinstance(t, PointerType))
    )
    if not ok:
        raise TypeError(f"T.{op.name}: argument {i + 1} must be {_KIND_DESC[base]}, got dtype {t}")
    return e


def _what(a: Any) -> str:
    if isinstance(a, PrimExpr):
        return f"an expression of dtype {a.ty}"
    return f"{type(a).__name__} {a!r}"


def call(op: Op | str, /, *args: Any, ty: Any = None, span: Any = None, **kwargs: Any) -> Call:
    """Build a Call of ``op`` after checking argument count and kinds (keywords by the op's
    parameter names; left-out trailing arguments with defaults are filled in). A name may be
    an alias (``call("cuda.warp_sum", x)`` builds its ``warp_reduce`` call)."""
    if isinstance(op, str):
        _ensure_builtins()
        a = _ALIASES.get(op) if op not in _REGISTRY else None
        if a is not None:
            if ty is not None or kwargs:
                raise TypeError(f"T.{op} (an alias of T.{a.target}) takes no ty= or keyword arguments")
            return a.build(*args, span=span)
        op = get(op)
    if kwargs:
        args = _bind_keywords(op, args, kwargs)
    if op.defaults and len(args) < len(op.args):
        filled = list(args)
        for i in range(len(args), len(op.args)):
            if i not in op.defaults:
                break
            filled.append(op.defaults[i])
        args = tuple(filled)
    lo, hi = op.arity()
    if len(args) < lo or (hi is not None and len(args) > hi):
        want = f"{lo}" if lo == hi else (f"at least {lo}" if hi is None else f"{lo} to {hi}")
        raise TypeError(f"T.{op.name} takes {want} argument(s), got {len(args)}")
    kinds = op.args
    conv = []
    tensors = []  # positions written with a tensor where a pointer goes (kept for the text)
    for i, a in enumerate(args):
        k = kinds[i] if i < len(kinds) else kinds[-1]
        c = _check_arg(op, i, k, a)
        if c is not a and not isinstance(a, PrimExpr) and getattr(a, "data", None) is c:
            # a tensor where a pointer goes: its pointer, the spelling kept (the printer names a
            # tensor in scope over that pointer, as TIRx, whose IR keeps the tensor, prints it)
            tensors.append(i)
        conv.append(c)
    # Python literals in "x"/"f" positions take the dtype of the first typed argument in
    # such a position (T.max(x, 0) with float x gives a float 0); "i"/"n"/"s"/"b"/"p"
    # positions keep their own typing (a shuffle's lane stays int32).
    if len(conv) > 1:
        same = [op.shares_literal_dtype(i) for i in range(len(args))]
        first = next((c for c, a, s in zip(conv, args, same) if s and isinstance(a, PrimExpr)), None)
        if first is not None:
            conv = [
                convert(a, first) if s and not isinstance(a, (PrimExpr, str)) else c
                for c, a, s in zip(conv, args, same)
            ]
    cargs = tuple(conv)
    r = op.result
    if r == "ty":
        if ty is None:
            raise TypeError(f"T.{op.name} needs a result type: ty=...")
        rt = as_type(ty, f"T.{op.name} ty")
    elif ty is not None:
        rt = as_type(ty, f"T.{op.name} ty")
    elif isinstance(r, Type):
        rt = r
    elif r == "arg0":
        if not cargs:
            raise TypeError(f"T.{op.name} needs at least one argument")
        rt = cargs[0].ty
    elif r == "bool0":
        t0 = cargs[0].ty
        rt = bool_ if not isinstance(t0, PrimType) else bool_.with_lanes(t0.lanes)
    else:
        rt = r(cargs)
    return Call(op, cargs, rt, tuple(tensors), span=span)


def _bind_keywords(op: Op, args: tuple, kwargs: dict) -> tuple:
    """Positional arguments then keywords in any order (TIRx prints keyword options sorted
    by name); a gap before the last given argument takes its default."""
    names = op.params
    given: dict[int, Any] = dict(enumerate(args))
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"T.{op.name} got an unexpected keyword argument {k!r}")
        i = names.index(k)
        if i in given:
            raise TypeError(f"T.{op.name} got multiple values for argument {k!r}")
        given[i] = v
    out: list[Any] = []
    for j in range(max(given) + 1 if given else 0):
        if j in given:
            out.append(given[j])
        elif j in op.defaults:
            out.append(op.defaults[j])
        else:
            raise TypeError(f"T.{op.name} missing argument {names[j]!r}")
    return tuple(out)


# ---------------------------------------------------------------- backend handlers
def register_handler(backend: str, name: str) -> Callable[[Callable], Callable]:
    """Decorator: register ``fn`` as ``backend``'s handler for op ``name``."""

    def deco(fn: Callable) -> Callable:
        op = lookup(name)
        if op is None:
            raise ValueError(f"{backend}: handler for undeclared op {name!r}")
        if backend in op.impls:
            raise ValueError(f"{backend}: op {name!r} declares its {backend} implementation already")
        table = _HANDLERS.setdefault(backend, {})
        if name in table:
            raise ValueError(f"{backend}: op {name!r} has two handlers")
        table[name] = fn
        return fn

    return deco


def impl(backend: str, op: Op) -> Any:
    """``op``'s implementation for ``backend``: the declared one, else a registered handler,
    else None."""
    got = op.impls.get(backend)
    if got is None:
        got = _HANDLERS.get(backend, {}).get(op.name)
    return got


def handler(backend: str, op: Op) -> Callable:
    """``op``'s implementation for ``backend`` when it is a function; OpError otherwise."""
    fn = impl(backend, op)
    if fn is None or not callable(fn):
        raise OpError(f"op T.{op.name} has no handler in the {backend} backend")
    return fn


def has_handler(backend: str, name: str) -> bool:
    op = lookup(name)
    return op is not None and impl(backend, op) is not None


# ---------------------------------------------------------------- script aliases
@attrs.define(slots=True, frozen=True)
class Alias(_ScriptCallable):
    """A script name that is not an op of its own: calling ``T.<name>(...)`` builds a call
    of another op (``T.cuda.warp_sum(x)`` is ``T.cuda.warp_reduce(x, "sum", 32)``;
    ``T.ptx.fence_proxy_async()`` is a row of the PTX table). The IR holds, and the printer
    writes, only the target's form; both front ends resolve the name here."""

    name: str
    build: Callable[..., Any]  # (*args, span=None) -> Call; TypeError/ValueError on bad args
    doc: str
    target: str  # the op it builds (the one declaration that gives it meaning)

    def __call__(self, *args: Any, span: Any = None, **kw: Any) -> Any:
        return self.build(*args, span=span, **kw)

    def __repr__(self) -> str:
        return f"<alias T.{self.name} of T.{self.target}>"

    def _doc_text(self) -> str:
        return f"T.{self.name}: {self.doc}\n\nbuilds T.{self.target} (docs/ops.md)"

    @property
    def __signature__(self) -> inspect.Signature:
        try:
            sig = inspect.signature(self.build)
        except (TypeError, ValueError):
            return inspect.Signature([inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)])
        return sig.replace(parameters=[p for p in sig.parameters.values() if p.name not in ("span", "_t")])


Alias.__doc__ = _InstanceDoc(Alias.__doc__ or "")  # type: ignore[assignment]


_ALIASES: dict[str, Alias] = {}


def alias(name: str, target: str, build: Callable[..., Any], doc: str) -> Alias:
    """Declare ``T.<name>`` as a spelling that builds a call of op ``target``."""
    _ensure_builtins()
    if name in _REGISTRY or name in _ALIASES:
        raise ValueError(f"script name {name!r} is declared twice")
    if target not in _REGISTRY:
        raise ValueError(f"alias {name!r}: undeclared target op {target!r}")
    a = Alias(name, build, doc, target)
    _ALIASES[name] = a
    return a


def aliases() -> dict[str, Alias]:
    """Every declared alias by script name."""
    _ensure_builtins()
    return dict(_ALIASES)


def lookup_alias(name: str) -> Alias | None:
    _ensure_builtins()
    return _ALIASES.get(name)


# ---------------------------------------------------------------- script markers
_MARKERS: dict[str, Any] = {}


def marker(name: str, obj: Any) -> Any:
    """Declare ``T.<name>`` as a Python object that builds no IR (an operand tag such as
    ``T.ptx.SINK``): it resolves in kernels, and whatever takes it decides what it means."""
    _ensure_builtins()
    if name in _REGISTRY or name in _ALIASES or name in _MARKERS:
        raise ValueError(f"script name {name!r} is declared twice")
    _MARKERS[name] = obj
    return obj


def lookup_marker(name: str) -> Any:
    _ensure_builtins()
    return _MARKERS.get(name)


def script_names() -> list[str]:
    """Every dotted script name the table resolves: ops, aliases and markers (what a
    namespace lists in ``dir`` and suggests for a misspelling)."""
    _ensure_builtins()
    return sorted({*_REGISTRY, *_ALIASES, *_MARKERS})


_BUILTIN: set[str] = set()


def _mark_builtin() -> None:
    """Called by tirx/ops when the built-in declarations are done."""
    _BUILTIN.update(_REGISTRY)
