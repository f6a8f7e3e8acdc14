"""TIRx's named TIR pipelines: ``register_tir_pipeline(name, factory)``,
``get_tir_pipeline(name, target=)`` and ``compile(..., pipeline=name)``.

In TIRx a pipeline factory returns three passes, ``(lowering, finalize_host,
finalize_device)``, and ``compile`` runs them around its own code generation. tirx's
lowering is its compile pipeline (``tirx.pipeline``: layouts, thread launches, codegen),
which every compile runs; so tirx's ``"default"`` pipeline (also ``"tirx"``) is three
identity passes, and a registered pipeline's passes run on the module *before* it, in order
(lowering, then finalize_host, then finalize_device), under the current ``PassContext`` (its
instruments see them). A user pass in a pipeline therefore sees the IR the front end built,
as in TIRx, and what it returns is what tirx compiles.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["apply_tir_pipeline", "get_tir_pipeline", "register_tir_pipeline"]

#: the built-in names: tirx's compile pipeline alone
BUILTIN = ("default", "tirx")
_FACTORIES: dict[str, Callable[..., Any]] = {}


def _identity(name: str) -> Any:
    from tirx.passes.infra import module_pass

    return module_pass(lambda mod: mod, opt_level=0, name=name)


def _default_factory(*, target: Any = None) -> tuple:
    return (
        _identity("tirx.DefaultLowering"),
        _identity("tirx.FinalizeHost"),
        _identity("tirx.FinalizeDevice"),
    )


def register_tir_pipeline(name: str, factory: Callable[..., Any]) -> None:
    """``factory(target=...)`` -> ``(lowering, finalize_host, finalize_device)`` passes, under
    ``name`` (registering a name again replaces it; the built-in names are refused)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_tir_pipeline: name must be a non-empty str, got {name!r}")
    if name in BUILTIN:
        raise ValueError(f"register_tir_pipeline: {name!r} is tirx's own pipeline and cannot be replaced")
    if not callable(factory):
        raise TypeError(f"register_tir_pipeline: factory must be callable, got {type(factory).__name__}")
    _FACTORIES[name] = factory


def get_tir_pipeline(name: str = "default", target: Any = None) -> tuple:
    """The three passes of pipeline ``name`` for ``target``."""
    if name in BUILTIN:
        return _default_factory(target=target)
    factory = _FACTORIES.get(name) if isinstance(name, str) else None
    if factory is None:
        known = ", ".join(repr(n) for n in (*BUILTIN, *_FACTORIES))
        raise ValueError(f"pipeline: no TIR pipeline named {name!r} (registered: {known})")
    got = factory(target=target)
    from tirx.passes.infra import Pass

    if not (isinstance(got, tuple) and len(got) == 3 and all(isinstance(p, Pass) for p in got)):
        raise TypeError(
            f"pipeline {name!r}: the factory must return (lowering, finalize_host, finalize_device) passes, "
            f"got {type(got).__name__}"
        )
    return got


def apply_tir_pipeline(f: Any, name: str | None, target: Any = None) -> Any:
    """``f`` (a Function or Module) after pipeline ``name``'s passes; a Function goes through
    as a one-function module and comes back by its name. None and the built-in names change
    nothing (tirx's compile pipeline runs anyway)."""
    if name is None or name in BUILTIN:
        return f
    from tirx.ir.function import Function, Module

    passes = get_tir_pipeline(name, target)
    mod = Module((f,)) if isinstance(f, Function) else f
    for p in passes:
        mod = p(mod)
    if not isinstance(f, Function):
        return mod
    got = next((g for g in mod.functions if g.name == f.name), None)
    if got is None:
        raise ValueError(f"pipeline {name!r}: the module it returned has no function {f.name!r}")
    return got
