"""Surface forms: one declaration per ``T.<Form>(...)`` that builds an IR node directly.

A special form (``T.Ramp``, ``T.Broadcast``, ``T.Select``, ``T.Cast``, ``T.Let``, ``T.Call``,
and the loop headers ``T.serial`` / ``T.unroll`` / ``T.vectorized`` / ``T.parallel`` /
``T.thread_binding`` / ``range``) is not an op: it builds its own node, not a ``Call``. Each is
one :class:`FormSpec` here, read by three consumers, the way an assembly format drives both
parse and print:

* the Python frontend (``tirx/script/tirx.py``): ``T.Ramp`` is :meth:`FormSpec.function`;
* the text loader (``grammar/_transform.py``): a call ``T.Ramp(...)`` binds and builds
  through :meth:`FormSpec.call`, errors located at the call;
* the printer (``printer/_printer.py``): a node whose class has a spec prints through
  :meth:`FormSpec.unparse` (script name, then the arguments in parameter order; keyword
  parameters equal to their default are left out).

Argument binding (positional / keyword, defaults), its error messages ("takes N positional
argument(s)", "unexpected keyword argument"), the kind checks and conversions of each
argument, and the build are written once, here, so both front ends accept the same calls
and reject the bad ones with the same message.

This module sits between ``tirx.ir`` and its consumers: it imports only ``tirx.ir``, so the
printer and the grammar use it without importing the Python frontend, and nothing here
imports upward (``tests/test_layering.py``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from .ir.expr import (
    Add,
    Broadcast,
    Call,
    Cast,
    GlobalVar,
    IntImm,
    Let,
    PrimExpr,
    Ramp,
    Select,
    Sub,
    Var,
    binop,
    convert,
)
from .ir.node import Attrs
from .ir.stmt import For, ForKind
from .ir.structural import structural_equal
from .ir.types import PrimType, Type, as_type, parse_dtype, void

__all__ = [
    "FORMS", "LOOPS", "RANGE", "FormError", "FormSpec", "Param", "by_name", "by_node", "describe", "loop_head",
    "loop_stop", "range_extent",
]  # fmt: skip

REQUIRED: Any = type("_Required", (), {"__repr__": lambda self: "REQUIRED"})()


class FormError(TypeError):
    """A call of a form that does not fit its declaration (message says which argument)."""


# ------------------------------------------------------------------ argument kinds
_DESC = {
    int: "an int literal",
    float: "a float literal",
    bool: "a bool literal",
    str: "a string literal",
    list: "a list",
    tuple: "a tuple",
    dict: "a dict",
    type(None): "None",
}


def describe(v: Any) -> str:
    """What a value is, for messages (the same words in both front ends)."""
    if isinstance(v, PrimExpr):
        return f"an expression of dtype {v.ty}"
    if isinstance(v, Type):
        return f"the type {v}"
    return _DESC.get(type(v), f"a {type(v).__name__}")


def _expr(fname: str, p: Param, v: Any) -> Any:
    """An expression operand: a PrimExpr, or a Python number kept as is (the build gives it the
    dtype of its neighbour, as in ``T.Ramp(0, n, 4)``)."""
    t = type(v)
    if t is int or t is float or t is bool or isinstance(v, PrimExpr):
        return v
    if hasattr(v, "dtype") and hasattr(v, "item") and not hasattr(v, "__len__"):  # a numpy scalar
        return v.item()
    raise FormError(f"{fname}: {p.name} must be an expression, got {describe(v)}")


def _int(fname: str, p: Param, v: Any) -> int:
    if type(v) is int:
        return v
    if type(v) is IntImm:
        return v.value
    raise FormError(f"{fname}: {p.name} must be an int literal, got {describe(v)}")


def _dtype(fname: str, p: Param, v: Any) -> Type:
    if isinstance(v, Type):
        return v
    if type(v) is str:
        try:
            return parse_dtype(v)
        except ValueError:
            raise FormError(f"{fname}: unknown dtype {v!r}") from None
    if hasattr(v, "__tirx_type__") or (not isinstance(v, (int, float, PrimExpr)) and v is not None):
        try:
            return as_type(v)
        except (TypeError, ValueError):
            pass
    raise FormError(f"{fname}: {p.name} must be a dtype, got {describe(v)}")


def _binding(fname: str, p: Param, v: Any) -> tuple:
    var, value = getattr(v, "var", None), getattr(v, "value", None)
    if type(var) is not Var or not isinstance(value, PrimExpr):
        raise FormError(
            f"{fname}'s first argument must be an assignment expression: {fname}(x := value, body)"
        )
    return var, value


def _funcref(fname: str, p: Param, v: Any) -> tuple:
    """A module function: ``(GlobalVar, its return type or None)``."""
    if isinstance(v, GlobalVar):
        return v, None
    if type(v) is str:
        return GlobalVar(v), None
    if hasattr(v, "gvar") and hasattr(v, "func"):  # Module.f of a built Module
        return v.gvar, v.func.ret_ty
    name = getattr(v, "name", None)
    if type(name) is str and hasattr(v, "ret"):  # Module.f while the module is parsed / loaded
        return GlobalVar(name), v.ret
    raise FormError(f"{fname}: {p.name} must be a module function (Module.f), got {describe(v)}")


def _exprs(fname: str, p: Param, v: Any) -> tuple:
    if type(v) not in (list, tuple):
        raise FormError(f"{fname}: {p.name} must be a list of expressions, got {describe(v)}")
    out = []
    for x in v:
        tx = type(x)
        if not (tx is int or tx is float or tx is bool or tx is str or isinstance(x, PrimExpr)):
            raise FormError(
                f"{fname}: {p.name} must be a list of expressions, got an element that is {describe(x)}"
            )
        out.append(convert(x))
    return tuple(out)


def _str(fname: str, p: Param, v: Any) -> str:
    if type(v) is str:
        return v
    raise FormError(f"{fname}: {p.name} must be a string, got {describe(v)}")


def _dict(fname: str, p: Param, v: Any) -> Any:
    if isinstance(v, (dict, Attrs)):
        return v
    raise FormError(f"{fname}: {p.name} must be a dict, got {describe(v)}")


#: kind -> (checker/converter, what the printer writes for it)
KINDS: dict[str, Callable[[str, Any, Any], Any]] = {
    "expr": _expr,  # printed as an expression
    "int": _int,  # an int literal
    "dtype": _dtype,  # printed "float32" (a PrimType) or T.Ptr(...) / T.void
    "type": _dtype,  # the same values, printed T.float32
    "binding": _binding,  # x := value (T.Let); the later arguments see x
    "funcref": _funcref,  # Module.f
    "exprs": _exprs,  # [e, ...]
    "str": _str,  # a string literal
    "dict": _dict,  # {"key": value, ...} (attribute values)
}


# ------------------------------------------------------------------ the records
class Param:
    """One parameter of a form: its name, kind (a key of :data:`KINDS`), default, and whether
    it can only be given by keyword. Keyword-only parameters, and those marked ``print_kw``,
    print as ``name=value`` and are left out when they hold their default."""

    __slots__ = ("conv", "default", "kind", "kw_only", "name", "pos_only", "print_kw")

    def __init__(self, name: str, kind: str, default: Any = REQUIRED, kw_only: bool = False,
                 print_kw: bool = False, pos_only: bool = False):  # fmt: skip
        if kind not in KINDS:
            raise ValueError(f"Param {name}: unknown kind {kind!r} (one of {', '.join(KINDS)})")
        self.name = name
        self.kind = kind
        self.default = default
        self.kw_only = kw_only
        self.print_kw = kw_only or print_kw
        self.pos_only = pos_only
        self.conv = KINDS[kind]

    def __repr__(self) -> str:
        d = "" if self.default is REQUIRED else f"={self.default!r}"
        return f"{'*' if self.kw_only else ''}{self.name}: {self.kind}{d}"


class FormSpec:
    """One surface form: script name (+ aliases), parameters, node class, build and unparse.

    ``build(*values, span=None)`` gets the converted arguments in parameter order and
    returns the node; ``unparse(node)`` returns the argument values in parameter order (a
    keyword parameter whose value is its default is not printed); it may be declared as the
    node's field names, one per parameter (``("base", "stride", "lanes")``). ``role`` says
    what the build gives: ``"expr"`` an expression node, ``"loop"`` the header of a ``for``
    loop (``(start, extent, kind, step, annotations, thread)``, see :func:`loop_head`), which
    each front end wraps its own way. ``normalize(pos, kw)``, when given, rewrites a call
    before binding (another spelling of the same call). ``builtin``: written without ``T.``.
    """

    __slots__ = ("aliases", "build", "builtin", "defaults", "doc", "fast", "fields", "hi", "lo", "name", "node",
                 "normalize", "params", "pos_idx", "role", "unparse")  # fmt: skip

    def __init__(self, name: str, params: tuple, node: type | None, build: Callable[..., Any],
                 unparse: Callable[[Any], tuple] | tuple[str, ...] | None = None, aliases: tuple = (), doc: str = "",
                 role: str = "expr", normalize: Callable | None = None, builtin: bool = False):  # fmt: skip
        self.name = name
        self.params = tuple(params)
        self.node = node
        self.build = build
        # unparse: a function, or the node's field names, one per parameter
        self.fields = unparse if isinstance(unparse, tuple) else None
        self.unparse = _getter(unparse) if isinstance(unparse, tuple) else unparse
        self.aliases = tuple(aliases)
        self.doc = doc
        self.role = role
        self.normalize = normalize
        self.builtin = builtin
        self.pos_idx = tuple(i for i, p in enumerate(self.params) if not p.kw_only)
        self.hi = len(self.pos_idx)
        self.lo = sum(1 for i in self.pos_idx if self.params[i].default is REQUIRED)
        self.defaults = tuple(p.default for p in self.params)
        # a call with positional arguments only binds them to the first parameters
        self.fast = normalize is None and self.pos_idx == tuple(range(self.hi))

    @property
    def fname(self) -> str:
        """The callee as written: ``T.Ramp``; a builtin's bare name (``range``)."""
        return self.name if self.builtin else "T." + self.name

    def __repr__(self) -> str:
        return f"FormSpec({self.fname}({', '.join(map(repr, self.params))}) -> {getattr(self.node, '__name__', None)})"

    # -------------------------------------------------------------- parse direction
    def bind(self, pos: list | tuple, kw: dict, fname: str | None = None) -> list:
        """The raw argument values in parameter order (defaults filled in), or FormError."""
        fname = fname or self.fname
        if self.normalize is not None:
            pos, kw = self.normalize(pos, kw)
        params = self.params
        n = len(pos)
        if n > self.hi or (n < self.lo and not kw):
            want = f"{self.lo}" if self.lo == self.hi else f"{self.lo} to {self.hi}"
            raise FormError(f"{fname} takes {want} positional argument(s), got {n}")
        vals = [p.default for p in params]
        pos_idx = self.pos_idx
        for k in range(n):
            vals[pos_idx[k]] = pos[k]
        if kw:
            names = [p.name for p in params]
            given = pos_idx[:n]
            for k, v in kw.items():
                i = names.index(k) if k in names else -1
                if i < 0 or params[i].pos_only:
                    raise FormError(f"{fname} got an unexpected keyword argument '{k}'")
                if i in given:
                    raise FormError(f"{fname} got multiple values for argument '{k}'")
                vals[i] = v
        for p, v in zip(params, vals):
            if v is REQUIRED:
                raise FormError(f"{fname} missing required argument '{p.name}'")
        return vals

    def convert(self, vals: list, fname: str | None = None) -> list:
        """Check and convert each bound value by its parameter's kind (defaults pass as is)."""
        fname = fname or self.fname
        return [v if v is p.default else p.conv(fname, p, v) for p, v in zip(self.params, vals)]

    def call(self, pos: list | tuple, kw: dict, span: Any = None, fname: str | None = None) -> Any:
        """Bind, convert and build: what ``T.<name>(*pos, **kw)`` means in both front ends.

        FormError for a call that does not fit; TypeError/ValueError from the node."""
        fname = fname or self.fname
        n = len(pos)
        if not kw and self.fast and self.lo <= n <= self.hi:  # positional only, in parameter order
            return self.build(
                *[v if v is p.default else p.conv(fname, p, v) for p, v in zip(self.params, pos)],
                *self.defaults[n:],
                span=span,
            )
        return self.build(*self.convert(self.bind(pos, kw, fname), fname), span=span)

    def function(self, unwrap: Callable[[Any], Any] | None = None, name: str | None = None,
                 wrap: Callable[[Any], Any] | None = None) -> Callable:  # fmt: skip
        """A Python function ``T.<name>`` that calls this form (``unwrap`` is applied to every
        argument first: the frontend's mutable scalars and meta vars become expressions;
        ``wrap`` to the result: a loop header becomes the frontend's loop value). The kernel
        parser gives the result the call's span."""
        f = _compile_function(self, unwrap or _identity, wrap, "T." + (name or self.name))
        f.__name__ = f.__qualname__ = name or self.name
        f.__doc__ = self.doc
        ps = []
        for p in sorted(self.params, key=lambda p: p.kw_only):  # Python lists keyword-only ones last
            k = (
                inspect.Parameter.KEYWORD_ONLY
                if p.kw_only
                else inspect.Parameter.POSITIONAL_ONLY
                if p.pos_only
                else inspect.Parameter.POSITIONAL_OR_KEYWORD
            )
            d = inspect.Parameter.empty if p.default is REQUIRED else p.default
            ps.append(inspect.Parameter(p.name, k, default=d))
        f.__signature__ = inspect.Signature(ps)  # type: ignore[attr-defined]
        f.__tirx_form__ = self  # type: ignore[attr-defined]
        return f


def _identity(x: Any) -> Any:
    return x


def _compile_function(spec: FormSpec, unwrap: Callable, wrap: Callable | None, fname: str) -> Callable:
    """The Python function of a form, generated once from its parameters: a positional-only
    call (the common one) binds, converts and builds in straight-line code, one branch per
    argument count; anything else goes through :meth:`FormSpec.call` (the same rules, so the
    same results and messages, just slower)."""
    ns: dict[str, Any] = {"spec": spec, "unwrap": unwrap, "wrap": wrap or _identity, "fname": fname}
    ns["build"], ns["slow"] = spec.build, spec.call
    params = spec.params
    code = ["def f(*args, **kwargs):"]
    if spec.fast:
        code.append("    n = len(args)")
        for n in range(spec.lo, spec.hi + 1):
            code.append(f"    if n == {n} and not kwargs:")
            vals = []
            for i, p in enumerate(params):
                ns[f"p{i}"], ns[f"d{i}"], ns[f"c{i}"] = p, p.default, p.conv
                if i < n:
                    code += [f"        v{i} = unwrap(args[{i}])", f"        if v{i} is not d{i}:"]
                    code.append(f"            v{i} = c{i}(fname, p{i}, v{i})")
                    vals.append(f"v{i}")
                else:
                    vals.append(f"d{i}")
            code.append(f"        return wrap(build({', '.join(vals)}, span=None))")
    code += [
        "    if kwargs:",
        "        kwargs = {k: unwrap(v) for k, v in kwargs.items()}",
        "    return wrap(slow([unwrap(a) for a in args], kwargs, None, fname))",
    ]
    exec("\n".join(code), ns)  # the code is built above from the declaration, no user text
    return ns["f"]


def _getter(fields: tuple) -> Callable[[Any], tuple]:
    get = attrgetter(*fields)
    return get if len(fields) > 1 else lambda node: (get(node),)


# ------------------------------------------------------------------ the forms
def _unify(a: Any, b: Any) -> tuple:
    """Two operands of one dtype: a literal takes the dtype of the expression beside it."""
    if isinstance(a, PrimExpr):
        return a, convert(b, a)
    b = convert(b)
    return convert(a, b), b


def _b_ramp(base: Any, stride: Any, lanes: int, span: Any = None) -> Ramp:
    base, stride = _unify(base, stride)
    return Ramp(base, stride, lanes, span=span)


def _b_broadcast(value: Any, lanes: int, span: Any = None) -> Broadcast:
    return Broadcast(convert(value), lanes, span=span)


def _b_select(cond: Any, true_value: Any, false_value: Any, span: Any = None) -> Select:
    t, f = _unify(true_value, false_value)
    return Select(convert(cond), t, f, span=span)


def _b_cast(dtype: Type, value: Any, span: Any = None) -> Cast:
    return Cast(dtype, convert(value), span=span)


def _b_let(binding: tuple, body: Any, span: Any = None) -> Let:
    var, value = binding
    return Let(var, value, convert(body), span=span)


def _b_call(func: tuple, args: tuple, ty: Any = None, span: Any = None) -> Call:
    gv, ret = func
    rt = ty if ty is not None else (ret if ret is not None else void)
    return Call(gv, args, rt, span=span)


# ------------------------------------------------------------------ loops
def range_extent(start: PrimExpr, stop: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
    """``(start, extent)`` of a loop from ``start`` to ``stop``, the rule :func:`loop_stop` inverts.

    A literal-0 start gives extent = stop; two constants of one dtype give the folded
    difference; a stop ``start + e`` (``start`` structurally) gives ``e``; anything else
    gives ``stop - start`` (a Sub node, not simplified).
    """
    if type(start) is IntImm and start.value == 0:
        return (start if start.ty == stop.ty else IntImm(0, stop.ty)), stop
    if type(start) is IntImm and type(stop) is IntImm and start.ty == stop.ty:
        return start, IntImm(stop.value - start.value, stop.ty)
    if type(stop) is Add and structural_equal(stop.a, start):
        return start, stop.b
    return start, binop(Sub, stop, start)


def _same(a: Any, b: Any) -> bool:
    return a is b or structural_equal(a, b, map_free_vars=False)


def loop_stop(start: PrimExpr, extent: PrimExpr) -> PrimExpr:
    """The stop to print for a loop, from which :func:`range_extent` rebuilds exactly ``extent``:
    the extent itself after a literal-0 start, the folded sum of two constants, ``x`` for an
    extent ``x - start`` when the rule would not read ``x`` otherwise, else ``start + extent``
    (an Add node). Nothing is simplified."""
    if type(start) is IntImm and start.value == 0:
        return extent
    if type(start) is IntImm and type(extent) is IntImm and start.ty == extent.ty:
        try:
            return IntImm(start.value + extent.value, extent.ty)
        except (TypeError, ValueError):  # the sum overflows the dtype: print start + extent
            pass
    if type(extent) is Sub and _same(extent.b, start):
        x = extent.a
        if not (type(x) is IntImm and type(start) is IntImm and x.ty == start.ty) and not (
            type(x) is Add and _same(x.a, start)
        ):
            return x
    return Add(start, extent)


def _int_bound(fname: str, e: PrimExpr) -> None:
    t = e.ty
    if not (isinstance(t, PrimType) and t.is_int and t.lanes == 1):
        raise FormError(f"{fname}: loop bounds must be scalar integers, got dtype {t}")


def _fresh(c: PrimExpr, span: Any) -> PrimExpr:
    """A constant made here from a literal carries the call's span (it is not shared yet)."""
    if span is not None and c.span is None:
        object.__setattr__(c, "span", span)
    return c


def _lit(x: Any, like: PrimExpr | None, span: Any) -> PrimExpr:
    return x if isinstance(x, PrimExpr) else _fresh(convert(x, like), span)


def loop_head(fname: str, kind: ForKind, start: Any, stop: Any, step: Any, thread: Any, annotations: Any,
              span: Any = None) -> tuple:  # fmt: skip
    """``(start, extent, kind, step, annotations, thread)`` of ``T.<kind>(start, stop, ...)``;
    one bound is the stop (from 0, in the stop's dtype). Constants made from literals carry
    ``span``."""
    if step is None and type(start) is int and (stop is None or type(stop) is int):
        # Python ints (``range(4)``, ``T.unroll(2, 8)``): the folded extent, left as ints for
        # the builder to make constants of (what it does with any literal bound)
        if kind is ForKind.THREAD_BINDING and thread is None:
            raise FormError(f'{fname} needs thread="threadIdx.x" (or another axis)')
        if stop is None:
            return (0, start, kind, None, annotations, thread)
        return (start, stop - start, kind, None, annotations, thread)
    try:
        if stop is None:
            stop_e = _lit(start, None, span)
            _int_bound(fname, stop_e)
            start_e, extent = _fresh(IntImm(0, stop_e.ty), span), stop_e
        else:
            if isinstance(stop, PrimExpr):
                stop_e, start_e = stop, _lit(start, stop, span)
            elif isinstance(start, PrimExpr):
                start_e, stop_e = start, _lit(stop, start, span)
            else:
                start_e, stop_e = _lit(start, None, span), _lit(stop, None, span)
            _int_bound(fname, start_e)
            _int_bound(fname, stop_e)
            s0 = start_e
            start_e, extent = range_extent(start_e, stop_e)
            if start_e is not s0:  # a 0 start retyped to the stop's dtype
                _fresh(start_e, span)
            if (
                type(extent) is IntImm
                and extent is not stop_e
                and not (type(stop_e) is Add and extent is stop_e.b)
            ):
                _fresh(extent, span)  # the folded difference of two constants
        if step is not None:
            step = _lit(step, start_e, span)
            _int_bound(fname, step)
    except FormError:
        raise
    except (TypeError, ValueError) as e:
        raise FormError(f"{fname}: {e}") from e
    if kind is ForKind.THREAD_BINDING and thread is None:
        raise FormError(f'{fname} needs thread="threadIdx.x" (or another axis)')
    return (start_e, extent, kind, step, annotations, thread)


def _loop_form(kind: ForKind) -> FormSpec:
    tb = kind is ForKind.THREAD_BINDING

    fname = "T." + kind.value

    def build(start: Any, stop: Any, step: Any, thread: Any, annotations: Any, span: Any = None) -> tuple:
        return loop_head(fname, kind, start, stop, step, thread, annotations, span)

    def unparse(s: For) -> tuple:
        thread = (s.thread or "") if tb else s.thread
        return (s.start, loop_stop(s.start, s.extent), s.step, thread, s.annotations or None)

    params = (
        Param("start", "expr"),
        Param("stop", "expr", None),
        Param("step", "expr", None, kw_only=tb, print_kw=True),
        Param("thread", "str", None, kw_only=not tb, print_kw=True),
        Param("annotations", "dict", None, kw_only=True),
    )
    what = 'thread="threadIdx.x"' if tb else "step=, annotations="
    return FormSpec(
        kind.value, params, For, build, unparse, role="loop", normalize=_thread_as_stop if tb else None,
        doc=f"``for i in T.{kind.value}(start, stop, {what})``: a {kind.value} loop (one bound: the stop).",
    )  # fmt: skip


def _thread_as_stop(pos: Any, kw: dict) -> tuple:
    """``T.thread_binding(n, "threadIdx.x")``: a string in the stop's place is the thread."""
    if len(pos) == 2 and type(pos[1]) is str and "thread" not in kw:
        return [pos[0]], {**kw, "thread": pos[1]}
    return pos, kw


def _b_range(start: Any, stop: Any, step: Any, span: Any = None) -> tuple:
    return loop_head("range", ForKind.SERIAL, start, stop, step, None, None, span)


#: ``range(stop)`` / ``range(start, stop[, step])`` in a ``for`` header: a serial loop (the
#: builtin's name, so it is not a ``T.`` member; the printer writes it for a plain serial loop)
RANGE = FormSpec(
    "range",
    (Param("start", "expr", pos_only=True), Param("stop", "expr", None, pos_only=True),
     Param("step", "expr", None, pos_only=True)),
    For, _b_range, role="loop", builtin=True, doc="``for i in range(start, stop, step)``",
)  # fmt: skip

LOOPS: dict[ForKind, FormSpec] = {k: _loop_form(k) for k in ForKind}


FORMS: tuple[FormSpec, ...] = (
    FormSpec(
        "Ramp", (Param("base", "expr"), Param("stride", "expr"), Param("lanes", "int")), Ramp, _b_ramp,
        ("base", "stride", "lanes"), aliases=("ramp",),
        doc="``T.Ramp(base, stride, lanes)``: the vector ``base + k * stride`` for k < lanes.",
    ),
    FormSpec(
        "Broadcast", (Param("value", "expr"), Param("lanes", "int")), Broadcast, _b_broadcast,
        ("value", "lanes"), aliases=("broadcast",),
        doc="``T.Broadcast(value, lanes)``: a scalar repeated in every lane.",
    ),
    FormSpec(
        "Select", (Param("cond", "expr"), Param("true_value", "expr"), Param("false_value", "expr")),
        Select, _b_select, ("cond", "true_value", "false_value"), aliases=("select",),
        doc="``T.Select(cond, a, b)``: both arms are evaluated (``T.if_then_else`` is the lazy form).",
    ),
    FormSpec(
        "Cast", (Param("dtype", "dtype"), Param("value", "expr")), Cast, _b_cast,
        ("ty", "value"),
        doc='``T.Cast("int64", e)``: always a Cast node (``T.cast`` skips a no-op cast).',
    ),
    FormSpec(
        "Let", (Param("binding", "binding"), Param("body", "expr")), Let, _b_let,
        lambda e: ((e.var, e.value), e.body),
        doc="``T.Let(x := value, body)``: ``x`` is visible in ``body`` only.",
    ),
    FormSpec(
        "Call", (Param("func", "funcref"), Param("args", "exprs"), Param("ty", "type", None, kw_only=True)),
        Call, _b_call, lambda e: ((e.op, None), e.args, e.ty),
        doc="``T.Call(Module.f, [args], ty=T.float32)``: a call of a module function.",
    ),
    *LOOPS.values(),
)  # fmt: skip

_BY_NAME: dict[str, FormSpec] = {}
for _f in FORMS:
    for _n in (_f.name, *_f.aliases):
        _BY_NAME[_n] = _f
_BY_NODE: dict[type, FormSpec] = {f.node: f for f in FORMS if f.role == "expr" and f.unparse is not None}


def by_name(name: str) -> FormSpec | None:
    """The form ``T.<name>`` names (aliases included), or None."""
    return _BY_NAME.get(name)


def by_node(cls: type) -> FormSpec | None:
    """The form an expression node class prints as, or None (a ``For`` prints by its kind:
    :data:`LOOPS`)."""
    return _BY_NODE.get(cls)
