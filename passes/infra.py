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
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from tirx.ir import Function, Module, deep
from tirx.passes.verify import WellFormedError, raise_errors, verify_well_formed

__all__ = [
    "FunctionPass",
    "ModulePass",
    "Pass",
    "PassContext",
    "PassInstrument",
    "PassTiming",
    "PrintIR",
    "Sequential",
    "VerifyAfterEach",
    "VerifyWellFormed",
    "function_pass",
    "module_pass",
]

_tls = threading.local()


def _capture_ctx() -> tuple:
    return (list(getattr(_tls, "stack", None) or ()), getattr(_tls, "default", None))


def _restore_ctx(state: tuple) -> None:
    _tls.stack, default = list(state[0]), state[1]
    if default is not None:
        _tls.default = default


deep.carry(_capture_ctx, _restore_ctx)  # a pass retried on the deep worker sees the same context


# ---------------------------------------------------------------------------- context
class PassInstrument:
    """Hooks around every pass run inside a ``PassContext``. Override what you need."""

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


class PassContext:
    """Configuration for pass runs: instruments, disabled passes and free-form config.

    ``verify=True`` is a shortcut for adding ``VerifyAfterEach()``. Use as a context
    manager; ``PassContext.current()`` is the innermost active one (or a default one).
    """

    def __init__(
        self,
        instruments: Iterable[PassInstrument] = (),
        *,
        verify: bool = False,
        require_ssa: bool = False,
        disabled: Iterable[str] = (),
        config: dict | None = None,
    ) -> None:
        self.instruments: list[PassInstrument] = list(instruments)
        for i, ins in enumerate(self.instruments):
            if not isinstance(ins, PassInstrument):
                raise TypeError(
                    f"PassContext: instruments[{i}] must be a PassInstrument, got {type(ins).__name__}"
                )
        if verify and not any(isinstance(i, VerifyAfterEach) for i in self.instruments):
            self.instruments.append(VerifyAfterEach(require_ssa=require_ssa))
        self.disabled = frozenset(disabled)
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
        for ins in self.instruments:
            ins.enter_pass_ctx()
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            for ins in self.instruments:
                ins.exit_pass_ctx()
        finally:
            _tls.stack.pop()

    def run(self, pass_: Pass, ir: Any) -> Any:
        """Run ``pass_`` on ``ir`` through this context's instruments."""
        if pass_.name in self.disabled:
            return ir
        for ins in self.instruments:
            if not ins.should_run(pass_, ir):
                return ir
        for ins in self.instruments:
            ins.run_before_pass(pass_, ir)
        # A composite pass's children go through this method themselves; a leaf pass is
        # retried on the large-stack worker if the IR is too deep for this thread.
        out = pass_.run(ir) if pass_.composite else deep.call(pass_.run, ir)
        for ins in self.instruments:
            ins.run_after_pass(pass_, ir, out)
        return out


# ---------------------------------------------------------------------------- passes
class Pass:
    """Base of all passes. Subclasses implement ``run(ir)`` for Function and Module."""

    #: shown by instruments; defaults to the class name
    name: str = ""
    #: composite passes (Sequential) are not printed/verified themselves, their children are
    composite: bool = False

    def __init__(self) -> None:
        if not self.name:
            self.name = type(self).__name__

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
    same object when nothing changes (so untouched functions and modules stay shared).
    """

    def transform_function(self, func: Function, mod: Module | None) -> Function:  # pragma: no cover
        raise NotImplementedError

    def run(self, ir: Any) -> Any:
        if isinstance(ir, Function):
            return _check_result(self, self.transform_function(ir, None), Function)
        new = [_check_result(self, self.transform_function(f, ir), Function) for f in ir.functions]
        if all(a is b for a, b in zip(ir.functions, new)):
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


class Sequential(ModulePass):
    """Run passes in order; each child goes through the context's instruments."""

    composite = True

    def __init__(self, passes: Iterable[Pass], name: str = "Sequential") -> None:
        self.passes = list(passes)
        for i, p in enumerate(self.passes):
            if not isinstance(p, Pass):
                raise TypeError(f"Sequential: passes[{i}] must be a Pass, got {type(p).__name__}")
        self.name = name
        super().__init__()

    def run(self, ir: Any) -> Any:
        for p in self.passes:
            ir = p(ir)
        return ir

    def __repr__(self) -> str:
        return f"Sequential([{', '.join(p.name for p in self.passes)}])"


class _FuncPassFromFn(FunctionPass):
    def __init__(self, fn: Callable, name: str) -> None:
        self.fn = fn
        self.name = name
        self._takes_mod = _n_positional(fn) >= 2
        super().__init__()

    def transform_function(self, func: Function, mod: Module | None) -> Function:
        return self.fn(func, mod) if self._takes_mod else self.fn(func)


class _ModPassFromFn(ModulePass):
    def __init__(self, fn: Callable, name: str) -> None:
        self.fn = fn
        self.name = name
        self._takes_ctx = _n_positional(fn) >= 2  # TVM's ``def f(mod, ctx)``
        super().__init__()

    def transform_module(self, mod: Module) -> Module:
        return self.fn(mod, PassContext.current()) if self._takes_ctx else self.fn(mod)


def _n_positional(fn: Callable) -> int:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return 1
    n = 0
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            n += 1
        elif p.kind is p.VAR_POSITIONAL:
            return 2
    return n


def function_pass(fn: Callable | None = None, *, name: str | None = None):
    """Turn ``def f(func) -> Function`` (or ``def f(func, mod)``) into a FunctionPass.

    Usable bare (``@function_pass``) or with a name (``@function_pass(name="MyPass")``).
    The decorated name is bound to a pass *instance*: call it on IR directly.
    """

    def wrap(f: Callable) -> FunctionPass:
        if not callable(f):
            raise TypeError(f"function_pass: expected a function, got {type(f).__name__}")
        p = _FuncPassFromFn(f, name or f.__name__)
        p.__doc__ = f.__doc__
        return p

    return wrap(fn) if fn is not None else wrap


def module_pass(fn: Callable | None = None, *, name: str | None = None):
    """Turn ``def f(mod) -> Module`` (or TVM's ``def f(mod, ctx)``: ctx the current PassContext)
    into a ModulePass (bare or ``@module_pass(name=...)``)."""

    def wrap(f: Callable) -> ModulePass:
        if not callable(f):
            raise TypeError(f"module_pass: expected a function, got {type(f).__name__}")
        p = _ModPassFromFn(f, name or f.__name__)
        p.__doc__ = f.__doc__
        return p

    return wrap(fn) if fn is not None else wrap


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
