"""Pass infrastructure: function and module passes, Sequential, decorators, PassContext.

A pass is an object callable on a ``Function`` or a ``Module`` that returns IR of the
same kind::

    mod = ConvertSSA()(mod)
    f = Sequential([Simplify(), CommonSubexprElim()])(f)

A ``FunctionPass`` transforms one function at a time (``transform_function``); applied to
a Module it runs on every function and rebuilds the module only when something changed.
A ``ModulePass`` sees the whole module (``transform_module``); applied to a Function it
runs on a one-function module and returns that function.

Every pass call goes through the current ``PassContext`` (a thread-local stack, the
default context has no instruments). Instruments observe each pass: ``PrintIR`` (before /
after, as a unified diff), ``PassTiming`` and ``VerifyAfterEach`` (well-formedness after
each pass; on in tests — set ``TIRX_VERIFY_PASSES=1`` to turn it on in the default context).

The same infrastructure takes TIRx's pass API (``tvm.ir.transform`` / ``tvm.tirx.transform``
under ``import tirx as tvm``): every pass has an ``opt_level`` and ``required`` names (``info``,
a ``PassInfo``); ``function_pass`` / ``module_pass`` take ``opt_level``, ``name`` and
``required`` and wrap functions of TIRx's shapes (``f(func, mod, ctx)``, ``f(mod, ctx)``) and
classes (``transform_function(self, func, mod, ctx)``: the decorated class's instances are
passes); ``PassContext(opt_level, required_pass, disabled_pass, instruments, config)``
gates the children of a ``Sequential`` by opt level as TIRx does; a ``TIRxPassInstrument``
(``@pass_instrument``) gets TIRx's hook arguments ``(mod, info)``.
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from tirx.ir import Function, Module, deep
from tirx.passes.verify import WellFormedError, raise_errors, verify_well_formed

__all__ = [
    "FunctionPass",
    "ModulePass",
    "Pass",
    "PassContext",
    "PassInfo",
    "PassInstrument",
    "PassTiming",
    "PrintIR",
    "Sequential",
    "TIRxPassInstrument",
    "VerifyAfterEach",
    "VerifyWellFormed",
    "function_pass",
    "module_pass",
    "pass_instrument",
]

_tls = threading.local()


def _capture_ctx() -> tuple:
    return (list(getattr(_tls, "stack", None) or ()), getattr(_tls, "default", None))


def _restore_ctx(state: tuple) -> None:
    _tls.stack, default = list(state[0]), state[1]
    if default is not None:
        _tls.default = default


deep.carry(_capture_ctx, _restore_ctx)  # a pass retried on the deep worker sees the same context


# ---------------------------------------------------------------------------- metadata
def _opt_level(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where}: opt_level must be an int, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{where}: opt_level must be >= 0, got {value}")
    return value


def _items(value: Any, arg: str, where: str, cls: type, what: str) -> tuple:
    """A list / tuple / set of ``cls`` values (None: none) as a tuple; a bare string or a
    single ``cls`` value is refused, naming the argument."""
    if value is None:
        return ()
    if isinstance(value, (str, bytes, cls)) or not isinstance(value, Iterable):
        raise TypeError(f"{where}: {arg} must be a list of {what}s, got {type(value).__name__}")
    out = tuple(value)
    for i, n in enumerate(out):
        if not isinstance(n, cls):
            raise TypeError(f"{where}: {arg}[{i}] must be a {what}, got {type(n).__name__}")
    return out


def _names(value: Any, arg: str, where: str) -> tuple[str, ...]:
    """A list of pass names (None: none) as a tuple; a bare string is refused."""
    return _items(value, arg, where, str, "pass name")


class PassInfo:
    """A pass's metadata, as TIRx's ``PassInfo``: ``opt_level``, ``name`` and ``required``
    (the names of passes a ``Sequential`` runs before it). ``pass_.info`` builds one."""

    __slots__ = ("name", "opt_level", "required")

    def __init__(self, opt_level: int, name: str, required: Iterable[str] | None = None) -> None:
        self.opt_level = _opt_level(opt_level, "PassInfo")
        if not isinstance(name, str):
            raise TypeError(f"PassInfo: name must be a str, got {type(name).__name__}")
        self.name = name
        self.required = _names(required, "required", "PassInfo")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PassInfo):
            return NotImplemented
        return (self.opt_level, self.name, self.required) == (other.opt_level, other.name, other.required)

    def __hash__(self) -> int:
        return hash((self.opt_level, self.name, self.required))

    def __repr__(self) -> str:
        req = f", required={list(self.required)}" if self.required else ""
        return f'transform.PassInfo(opt_level={self.opt_level}, name="{self.name}"{req})'


# ---------------------------------------------------------------------------- context
class PassInstrument:
    """Hooks around every pass run inside a ``PassContext``. Override what you need.

    These hooks get the pass object and the IR; ``TIRxPassInstrument`` (and a class decorated
    with ``@pass_instrument``) gets TIRx's ``(mod, info)`` instead.
    """

    def enter_pass_ctx(self) -> None:
        """Called when the owning context is entered."""

    def exit_pass_ctx(self) -> None:
        """Called when the owning context is exited."""

    def should_run(self, pass_: Pass, ir: Any) -> bool:
        """Return False to skip ``pass_`` (the IR is passed through unchanged)."""
        return True

    def run_before_pass(self, pass_: Pass, ir: Any) -> None:
        """Called before ``pass_`` runs on ``ir``."""

    def run_after_pass(self, pass_: Pass, before: Any, after: Any) -> None:
        """Called after ``pass_`` turned ``before`` into ``after``."""

    # what PassContext.run calls: the hooks above, with this class's arguments
    def _pi_should_run(self, pass_: Pass, ir: Any) -> bool:
        return bool(self.should_run(pass_, ir))

    def _pi_before(self, pass_: Pass, ir: Any) -> None:
        self.run_before_pass(pass_, ir)

    def _pi_after(self, pass_: Pass, before: Any, after: Any) -> None:
        self.run_after_pass(pass_, before, after)


class TIRxPassInstrument(PassInstrument):
    """An instrument with TIRx's hooks: ``should_run(mod, info)``, ``run_before_pass(mod,
    info)``, ``run_after_pass(mod, info)`` (``mod``: the IR the pass got, after it: its result;
    ``info``: the pass's ``PassInfo``). ``tvm.ir.transform.PassInstrument`` is this class.
    ``should_run`` must return a bool."""

    def should_run(self, mod: Any, info: Any) -> bool:  # type: ignore[override]
        """Return False to skip the pass."""
        return True

    def run_before_pass(self, mod: Any, info: Any) -> None:  # type: ignore[override]
        """Called before the pass runs on ``mod``."""

    def run_after_pass(self, mod: Any, info: Any) -> None:  # type: ignore[override]
        """Called after the pass made ``mod``."""

    def _pi_should_run(self, pass_: Pass, ir: Any) -> bool:
        ok = self.should_run(ir, pass_.info)
        if ok is None:  # a should_run that forgot to return
            raise TypeError(
                f"{type(self).__name__}.should_run must return a bool, got None (pass {pass_.name})"
            )
        return bool(ok)

    def _pi_before(self, pass_: Pass, ir: Any) -> None:
        self.run_before_pass(ir, pass_.info)

    def _pi_after(self, pass_: Pass, before: Any, after: Any) -> None:
        self.run_after_pass(after, pass_.info)


def pass_instrument(pi_cls: type | None = None) -> Any:
    """Make a class an instrument with TIRx's hooks (``@tvm.instrument.pass_instrument``).

    A class that is a ``PassInstrument`` already is returned as it is; any other class gets
    ``TIRxPassInstrument`` as a base (its own methods come first), so its instances go in
    ``PassContext(instruments=[...])``.
    """

    def wrap(cls: Any) -> type:
        if not inspect.isclass(cls):
            raise TypeError(f"pass_instrument: pi_cls must be a class, got {type(cls).__name__}")
        if issubclass(cls, PassInstrument):
            return cls
        ns = {"__doc__": cls.__doc__, "__module__": cls.__module__, "__qualname__": cls.__qualname__}
        return type(cls.__name__, (cls, TIRxPassInstrument), ns)

    return wrap(pi_cls) if pi_cls is not None else wrap


def _instrument_list(value: Any, where: str) -> list[PassInstrument]:
    return list(_items(value, "instruments", where, PassInstrument, "PassInstrument"))


class PassContext:
    """Configuration for pass runs: opt level, required / disabled passes, instruments, config.

    TIRx's form ``PassContext(opt_level=2, required_pass=None, disabled_pass=None,
    instruments=None, config=None)``: in a ``Sequential``, a child pass runs when its name is
    in ``required_pass``, or its ``opt_level`` is at most ``opt_level``, unless its name is in
    ``disabled_pass`` (a pass called directly always runs). tirx's own form is kept too:
    ``PassContext([instruments...], verify=..., disabled=[...])``: ``disabled`` names passes
    skipped wherever they are called; ``verify=True`` is a shortcut for adding
    ``VerifyAfterEach()``. Use as a context manager; ``PassContext.current()`` is the
    innermost active one (or a default one).
    """

    def __init__(
        self,
        opt_level: Any = 2,
        required_pass: Iterable[str] | None = None,
        disabled_pass: Iterable[str] | None = None,
        instruments: Iterable[PassInstrument] | None = None,
        config: Mapping[str, Any] | None = None,
        *,
        verify: bool = False,
        require_ssa: bool = False,
        disabled: Iterable[str] = (),
    ) -> None:
        # tirx's own form: the instruments first, PassContext([PrintIR()])
        if (
            isinstance(opt_level, Iterable)
            and not isinstance(opt_level, (str, bytes))
            and instruments is None
        ):
            instruments, opt_level = opt_level, 2
        self.opt_level = _opt_level(opt_level, "PassContext")
        self.required_pass = _names(required_pass, "required_pass", "PassContext")
        self.disabled_pass = _names(disabled_pass, "disabled_pass", "PassContext")
        self.instruments: list[PassInstrument] = _instrument_list(instruments, "PassContext")
        if verify and not any(isinstance(i, VerifyAfterEach) for i in self.instruments):
            self.instruments.append(VerifyAfterEach(require_ssa=require_ssa))
        self.disabled = frozenset(_names(disabled, "disabled", "PassContext"))
        if config is not None and not isinstance(config, Mapping):
            raise TypeError(f"PassContext: config must be a dict, got {type(config).__name__}")
        self.config = dict(config or {})

    @staticmethod
    def current() -> PassContext:
        stack = getattr(_tls, "stack", None)
        if stack:
            return stack[-1]
        ctx = getattr(_tls, "default", None)
        if ctx is None:
            # TIRX_VERIFY_PASSES=1 makes the default context verify after every pass
            ctx = _tls.default = PassContext(verify=os.environ.get("TIRX_VERIFY_PASSES", "") == "1")
        return ctx

    def __enter__(self) -> PassContext:
        stack = getattr(_tls, "stack", None)
        if stack is None:
            stack = _tls.stack = []
        stack.append(self)
        entered: list[PassInstrument] = []
        try:
            for ins in self.instruments:
                ins.enter_pass_ctx()
                entered.append(ins)
        except BaseException:
            # a failing enter_pass_ctx: the ones entered are exited, the context is not entered
            try:
                for ins in entered:
                    ins.exit_pass_ctx()
            finally:
                stack.pop()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            for ins in self.instruments:
                ins.exit_pass_ctx()
        finally:
            _tls.stack.pop()

    def same_as(self, other: object) -> bool:
        """Identity, as TIRx's objects compare with ``same_as``."""
        return self is other

    def override_instruments(self, instruments: Iterable[PassInstrument] | None) -> None:
        """Replace this context's instruments: the old ones' ``exit_pass_ctx`` runs, then the
        new ones' ``enter_pass_ctx``."""
        new = _instrument_list(instruments, "PassContext.override_instruments")
        for ins in self.instruments:
            ins.exit_pass_ctx()
        self.instruments = new
        for ins in new:
            ins.enter_pass_ctx()

    def pass_enabled(self, p: Pass | PassInfo) -> bool:
        """Whether a ``Sequential`` runs ``p`` in this context: not in ``disabled_pass``, and
        in ``required_pass`` or of an ``opt_level`` at most this context's."""
        info = p if isinstance(p, PassInfo) else p.info
        if info.name in self.disabled_pass:
            return False
        return info.name in self.required_pass or info.opt_level <= self.opt_level

    def run(self, pass_: Pass, ir: Any) -> Any:
        """Run ``pass_`` on ``ir`` through this context's instruments."""
        if pass_.name in self.disabled:
            return ir
        for ins in self.instruments:
            if not ins._pi_should_run(pass_, ir):
                return ir
        for ins in self.instruments:
            ins._pi_before(pass_, ir)
        # A composite pass's children go through this method themselves; a leaf pass is
        # retried on the large-stack worker if the IR is too deep for this thread.
        out = pass_.run(ir) if pass_.composite else deep.call(pass_.run, ir)
        for ins in self.instruments:
            ins._pi_after(pass_, ir, out)
        return out

    def __repr__(self) -> str:
        return (
            f"PassContext(opt_level={self.opt_level}, required_pass={list(self.required_pass)}, "
            f"disabled_pass={list(self.disabled_pass)}, instruments={self.instruments}, config={self.config})"
        )


# ---------------------------------------------------------------------------- passes
class Pass:
    """Base of all passes. Subclasses implement ``run(ir)`` for Function and Module."""

    #: shown by instruments; defaults to the class name
    name: str = ""
    #: a ``Sequential`` runs this pass only where the context's opt_level reaches it
    opt_level: int = 0
    #: names of passes a ``Sequential`` runs right before this one (registry or TIRx names)
    required: tuple[str, ...] = ()
    #: composite passes (Sequential) are not printed/verified themselves, their children are
    composite: bool = False

    def __init__(self) -> None:
        if not self.name:
            self.name = type(self).__name__

    @property
    def info(self) -> PassInfo:
        """``PassInfo(opt_level, name, required)`` of this pass (TIRx's ``pass.info``)."""
        return PassInfo(self.opt_level, self.name, self.required)

    def same_as(self, other: object) -> bool:
        """Identity, as TIRx's objects compare with ``same_as``."""
        return self is other

    def __call__(self, ir: Any) -> Any:
        if not isinstance(ir, (Function, Module)):
            raise TypeError(f"{self.name}: expected a Function or Module, got {type(ir).__name__}")
        return PassContext.current().run(self, ir)

    def run(self, ir: Any) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<pass {self.name}>"


class FunctionPass(Pass):
    """A pass that transforms each function on its own: override ``transform_function``.

    ``mod`` is the enclosing module when the pass runs on a Module, else None. Return the
    same object when nothing changes (so untouched functions and modules stay shared). On a
    Module, a function for which the pass returns None is dropped (as TIRx does).
    """

    def transform_function(self, func: Function, mod: Module | None) -> Function:  # pragma: no cover
        raise NotImplementedError

    def run(self, ir: Any) -> Any:
        if isinstance(ir, Function):
            return _check_result(self, self.transform_function(ir, None), Function)
        new = []
        for f in ir.functions:
            g = self.transform_function(f, ir)
            if g is not None:
                new.append(_check_result(self, g, Function))
        if len(new) == len(ir.functions) and all(a is b for a, b in zip(ir.functions, new)):
            return ir
        return Module(tuple(new), ir.attrs, ir.name, span=ir.span)


class ModulePass(Pass):
    """A pass over a whole module: override ``transform_module``."""

    def transform_module(self, mod: Module) -> Module:  # pragma: no cover
        raise NotImplementedError

    def run(self, ir: Any) -> Any:
        if isinstance(ir, Module):
            return _check_result(self, self.transform_module(ir), Module)
        wrapped = Module((ir,))
        out = _check_result(self, self.transform_module(wrapped), Module)
        if out is wrapped:
            return ir
        if len(out.functions) != 1:
            raise ValueError(
                f"{self.name}: applied to a Function, the pass returned {len(out.functions)} functions"
            )
        return out.functions[0]


def _check_result(p: Pass, out: Any, kind: type) -> Any:
    if not isinstance(out, kind):
        raise TypeError(f"pass {p.name} returned {type(out).__name__}, expected {kind.__name__}")
    return out


#: finds a pass by a name in ``required`` (set by ``tirx.passes``: the registry, TIRx's names)
_required_lookup: Callable[[str], Pass | None] | None = None


def set_required_lookup(fn: Callable[[str], Pass | None]) -> None:
    """Install how a ``Sequential`` turns a name in a pass's ``required`` into a pass."""
    global _required_lookup
    _required_lookup = fn


def _required_pass(name: str, of: Pass) -> Pass:
    p = _required_lookup(name) if _required_lookup is not None else None
    if p is None:
        raise ValueError(f"pass {of.name}: required pass {name!r} is no registered pass")
    return p


class Sequential(ModulePass):
    """Run passes in order; each child goes through the context's instruments.

    ``Sequential(passes, opt_level=0, name=...)`` as TIRx's: a child runs only where the
    current context enables it (``PassContext.pass_enabled``: its opt_level, the context's
    ``required_pass`` / ``disabled_pass``), after the passes its ``required`` names.
    """

    composite = True

    def __init__(
        self, passes: Iterable[Pass] | None = None, opt_level: Any = 0, name: str = "Sequential"
    ) -> None:
        if isinstance(opt_level, str) and name == "Sequential":  # tirx's Sequential(passes, "name")
            opt_level, name = 0, opt_level
        if passes is None:
            passes = []
        if isinstance(passes, (Pass, str, bytes)) or not isinstance(passes, Iterable):
            raise TypeError(f"Sequential: passes must be a list of passes, got {type(passes).__name__}")
        self.passes = list(passes)
        for i, p in enumerate(self.passes):
            if not isinstance(p, Pass):
                raise TypeError(f"Sequential: passes[{i}] must be a Pass, got {type(p).__name__}")
        if not isinstance(name, str):
            raise TypeError(f"Sequential: name must be a str, got {type(name).__name__}")
        self.opt_level = _opt_level(opt_level, "Sequential")
        self.name = name
        super().__init__()

    def run(self, ir: Any) -> Any:
        ctx = PassContext.current()
        for p in self.passes:
            if not ctx.pass_enabled(p):
                continue
            for req in p.required:
                ir = _required_pass(req, p)(ir)
            ir = p(ir)
        return ir

    def __repr__(self) -> str:
        return f"Sequential([{', '.join(p.name for p in self.passes)}])"


def _set_meta(p: Pass, name: str, opt_level: int, required: tuple[str, ...]) -> None:
    p.name = name
    p.opt_level = opt_level
    p.required = required


class _FuncPassFromFn(FunctionPass):
    def __init__(self, fn: Callable, name: str) -> None:
        self.fn = fn
        self.name = name
        self._arity = min(_n_positional(fn, 3), 3)  # f(func), f(func, mod), TIRx's f(func, mod, ctx)
        super().__init__()

    def transform_function(self, func: Function, mod: Module | None) -> Function:
        if self._arity >= 3:  # TIRx's form always gets a module
            return self.fn(func, mod if mod is not None else Module((func,)), PassContext.current())
        return self.fn(func, mod) if self._arity == 2 else self.fn(func)


class _ModPassFromFn(ModulePass):
    def __init__(self, fn: Callable, name: str) -> None:
        self.fn = fn
        self.name = name
        self._takes_ctx = _n_positional(fn, 2) >= 2  # TVM's ``def f(mod, ctx)``
        super().__init__()

    def transform_module(self, mod: Module) -> Module:
        return self.fn(mod, PassContext.current()) if self._takes_ctx else self.fn(mod)


def _n_positional(fn: Callable, var: int) -> int:
    """How many positional arguments ``fn`` takes (``var`` for ``*args``)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return 1
    n = 0
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            n += 1
        elif p.kind is p.VAR_POSITIONAL:
            return max(n, var)
    return n


def _meta(deco: str, opt_level: Any, name: Any, required: Any) -> tuple[int, str | None, tuple[str, ...]]:
    level = 0 if opt_level is None else _opt_level(opt_level, deco)
    if name is not None and (not isinstance(name, str) or not name):
        raise TypeError(f"{deco}: name must be a non-empty str, got {name!r}")
    return level, name, _names(required, "required", deco)


def _wrap_pass_class(cls: type, base: type, method: str, ctx_arity: int, info: tuple) -> type:
    """A ``base`` subclass whose instances hold ``cls(*args, **kwargs)`` and run its
    ``method`` (TIRx's decorated pass classes: ``MyPass(args)(mod)``)."""
    level, name, required = info
    fn = getattr(cls, method, None)
    if not callable(fn):
        raise TypeError(f"{base.__name__} class {cls.__name__} has no {method} method")
    takes_ctx = _n_positional(fn, ctx_arity + 1) - 1 >= ctx_arity  # minus self

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        self._inst = cls(*args, **kwargs)
        _set_meta(self, name or cls.__name__, level, required)
        Pass.__init__(self)

    def __getattr__(self: Any, attr: str) -> Any:
        inst = self.__dict__.get("_inst")
        if inst is None or attr.startswith("__"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")
        return getattr(inst, attr)

    if base is FunctionPass:

        def transform_function(self: Any, func: Function, mod: Module | None) -> Function:
            if takes_ctx:
                m = mod if mod is not None else Module((func,))
                return self._inst.transform_function(func, m, PassContext.current())
            return self._inst.transform_function(func, mod)

        body: dict[str, Any] = {"transform_function": transform_function}
    else:

        def transform_module(self: Any, mod: Module) -> Module:
            if takes_ctx:
                return self._inst.transform_module(mod, PassContext.current())
            return self._inst.transform_module(mod)

        body = {"transform_module": transform_module}
    __init__.__signature__ = inspect.signature(cls)  # type: ignore[attr-defined]
    body.update(
        __init__=__init__,
        __getattr__=__getattr__,
        __doc__=cls.__doc__,
        __module__=cls.__module__,
        __qualname__=cls.__qualname__,
        pass_class=cls,
    )
    return type(cls.__name__, (base,), body)


def function_pass(
    pass_func: Callable | None = None,
    opt_level: int | None = None,
    name: str | None = None,
    *,
    required: Iterable[str] | None = None,
) -> Any:
    """Turn a function or a class into a FunctionPass.

    A function ``f(func)``, ``f(func, mod)`` (``mod``: the enclosing module, None on a bare
    Function) or TIRx's ``f(func, mod, ctx)`` (always a module; ``ctx``: the current
    PassContext) becomes a pass *instance*. A class with ``transform_function(self, func, mod,
    ctx)`` (or ``(self, func, mod)``) becomes a pass *class*: ``MyPass(args)`` is a pass, and
    its other attributes are the instance's. Usable bare (``@function_pass``), with options
    (``@function_pass(opt_level=0, name="MyPass", required=[...])``) or called
    (``function_pass(f, opt_level=0)``); ``opt_level`` defaults to 0, ``name`` to the
    function's or class's name.
    """
    level, nm, req = _meta("function_pass", opt_level, name, required)

    def wrap(f: Any) -> Any:
        if inspect.isclass(f):
            return _wrap_pass_class(f, FunctionPass, "transform_function", 3, (level, nm, req))
        if not callable(f):
            raise TypeError(f"function_pass: pass_func must be a function or a class, got {type(f).__name__}")
        p = _FuncPassFromFn(f, nm or f.__name__)
        _set_meta(p, p.name, level, req)
        p.__doc__ = f.__doc__
        return p

    return wrap(pass_func) if pass_func is not None else wrap


def module_pass(
    pass_func: Callable | None = None,
    opt_level: int | None = None,
    name: str | None = None,
    *,
    required: Iterable[str] | None = None,
) -> Any:
    """Turn ``def f(mod) -> Module`` (or TVM's ``def f(mod, ctx)``: ctx the current PassContext)
    into a ModulePass instance, or a class with ``transform_module(self, mod, ctx)`` (or
    ``(self, mod)``) into a pass class. Bare, with options (``opt_level``, ``name``,
    ``required``) or called, as ``function_pass``."""
    level, nm, req = _meta("module_pass", opt_level, name, required)

    def wrap(f: Any) -> Any:
        if inspect.isclass(f):
            return _wrap_pass_class(f, ModulePass, "transform_module", 2, (level, nm, req))
        if not callable(f):
            raise TypeError(f"module_pass: pass_func must be a function or a class, got {type(f).__name__}")
        p = _ModPassFromFn(f, nm or f.__name__)
        _set_meta(p, p.name, level, req)
        p.__doc__ = f.__doc__
        return p

    return wrap(pass_func) if pass_func is not None else wrap


# ---------------------------------------------------------------------------- instruments
def ir_text(ir: Any) -> str:
    """Printed text of ``ir`` (``tirx.dumps``), or a repr when the printer cannot print it."""
    try:
        from tirx.printer import dumps

        return dumps(ir)
    except Exception:  # the printer is a debugging aid here; never mask the pass run
        return repr(ir) + "\n"


class PrintIR(PassInstrument):
    """Print the IR around each pass: a unified diff (default) or full before/after text.

    ``only`` restricts printing to the named passes. With ``diff=False``, ``before`` and
    ``after`` choose separately which passes print their input (``# IR before <pass>``) and
    their output (``# IR after <pass>``): None (the default) is every pass ``only`` lets
    through, ``()`` none. ``changed_only=True`` leaves out the passes that did not change
    the printed IR (no ``# <pass>: unchanged`` line, no text after them). ``label(pass)``
    is the name printed and matched (default ``pass.name``; the command line passes
    ``tirx.passes.registry.pass_label``, so a built-in pass is ``simplify`` there); a name
    in ``only``/``before``/``after`` matches either the label or ``pass.name``. Output
    goes to ``stream`` (stdout).
    """

    def __init__(
        self,
        diff: bool = True,
        stream: Any = None,
        only: Iterable[str] | None = None,
        *,
        before: Iterable[str] | None = None,
        after: Iterable[str] | None = None,
        changed_only: bool = False,
        label: Callable[[Pass], str] | None = None,
    ) -> None:
        self.diff = diff
        self.stream = stream
        self.only = None if only is None else frozenset(only)
        self.before = None if before is None else frozenset(before)
        self.after = None if after is None else frozenset(after)
        self.changed_only = changed_only
        self.label: Callable[[Pass], str] = label if label is not None else (lambda p: p.name)

    def _out(self) -> Any:
        return self.stream if self.stream is not None else sys.stdout

    def _matches(self, names: frozenset[str] | None, p: Pass) -> bool:
        return names is None or p.name in names or self.label(p) in names

    def _wanted(self, p: Pass, names: frozenset[str] | None = None) -> bool:
        return not p.composite and self._matches(self.only, p) and self._matches(names, p)

    def run_before_pass(self, pass_: Pass, ir: Any) -> None:
        if not self.diff and self._wanted(pass_, self.before):
            self._out().write(f"# IR before {self.label(pass_)}\n{ir_text(ir)}")

    def run_after_pass(self, pass_: Pass, before: Any, after: Any) -> None:
        if not self._wanted(pass_, None if self.diff else self.after):
            return
        out = self._out()
        name = self.label(pass_)
        if not self.diff:
            text = ir_text(after)
            if self.changed_only and (after is before or ir_text(before) == text):
                return
            out.write(f"# IR after {name}\n{text}")
            return
        if after is before:
            if not self.changed_only:
                out.write(f"# {name}: unchanged\n")
            return
        out.write(unified_diff(before, after, name, self.changed_only))


def unified_diff(before: Any, after: Any, name: str, quiet: bool = False) -> str:
    """The unified diff of the printed IR before and after pass ``name`` (``PrintIR``'s
    diff), or ``# <name>: rebuilt, text unchanged`` (``""`` when ``quiet``)."""
    a = ir_text(before).splitlines(keepends=True)
    b = ir_text(after).splitlines(keepends=True)
    lines = list(difflib.unified_diff(a, b, f"before {name}", f"after {name}"))
    if not lines:
        return "" if quiet else f"# {name}: rebuilt, text unchanged\n"
    return "".join(x if x.endswith("\n") else x + "\n" for x in lines)


class PassTiming(PassInstrument):
    """Wall time of each pass run: ``timings`` is a list of (pass name, seconds)."""

    def __init__(self) -> None:
        self.timings: list[tuple[str, float]] = []
        self._starts: list[float] = []

    def run_before_pass(self, pass_: Pass, ir: Any) -> None:
        self._starts.append(time.perf_counter())

    def run_after_pass(self, pass_: Pass, before: Any, after: Any) -> None:
        self.timings.append((pass_.name, time.perf_counter() - self._starts.pop()))

    def totals(self) -> dict[str, float]:
        d: dict[str, float] = {}
        for n, t in self.timings:
            d[n] = d.get(n, 0.0) + t
        return d

    def report(self) -> str:
        rows = [f"{n:<28} {t * 1e3:10.3f} ms" for n, t in self.timings]
        return "\n".join(["pass                              time", *rows])


class VerifyAfterEach(PassInstrument):
    """Check well-formedness after every (non-composite) pass; raise naming the pass."""

    def __init__(self, require_ssa: bool = False) -> None:
        self.require_ssa = require_ssa

    def run_after_pass(self, pass_: Pass, before: Any, after: Any) -> None:
        if pass_.composite or after is before:
            return
        errors = verify_well_formed(after, require_ssa=self.require_ssa)
        if errors:
            raise_errors(errors, header=f"IR is not well-formed after pass {pass_.name}")


class VerifyWellFormed(Pass):
    """A pass that returns its input unchanged when well-formed.

    Otherwise it raises ``tirx.DiagnosticError`` (``raising=True``, the default; the error's
    ``errors`` attribute lists every problem) or records the problems in ``self.errors``.
    ``check(ir)`` returns the list without raising.
    """

    def __init__(self, require_ssa: bool = False, raising: bool = True) -> None:
        self.require_ssa = require_ssa
        self.raising = raising
        self.errors: list[WellFormedError] = []
        super().__init__()

    def check(self, ir: Any) -> list[WellFormedError]:
        return verify_well_formed(ir, self.require_ssa)

    def run(self, ir: Any) -> Any:
        self.errors = self.check(ir)
        if self.errors and self.raising:
            raise_errors(self.errors)
        return ir


@contextlib.contextmanager
def instrumented(*instruments: PassInstrument, **kwargs: Any) -> Iterator[PassContext]:
    """Shortcut: ``with instrumented(PassTiming()) as ctx: ...``."""
    with PassContext(instruments, **kwargs) as ctx:
        yield ctx
