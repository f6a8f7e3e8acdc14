"""tirx: a pure-Python, IR-first compiler toolkit for GPU kernels.

Public surface: ``loads/load/dumps/save`` for the text form, ``structural_equal`` /
``structural_hash`` / ``assert_structural_equal``, ``compile`` for the CUDA and CPU
interpreter targets, ``DiagnosticError`` for located script and text errors.

``import tirx`` loads only the IR: the built-in op declarations load on the op table's first
use (``ir.op.register_loader``), and the subpackages (``tirx.script``, ``tirx.grammar``,
``tirx.codegen``, ``tirx.runtime``, ``tirx.interp``, ``tirx.testing``, ...) on first
attribute access (PEP 562 ``__getattr__`` below), so a user pays only for what they use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Literal, overload

from . import ir
from .errors import DiagnosticError, InternalError, OpError
from .ir import Function, IRModule, Module, assert_structural_equal, structural_equal, structural_hash

if TYPE_CHECKING:  # for type checkers only: ``import tirx`` imports none of these
    from os import PathLike

    from .interp.kernel import Kernel as InterpKernel
    from .interp.kernel import ModuleKernel as InterpModuleKernel
    from .runtime.kernel import CompiledModule, HostFunction, Kernel
    from .target_spec import Target

__version__ = "0.1.0"

__all__ = [
    "DiagnosticError",
    "Function",
    "IRModule",
    "InternalError",
    "Module",
    "OpError",
    "assert_structural_equal",
    "compile",
    "dumps",
    "ir",
    "load",
    "loads",
    "save",
    "structural_equal",
    "structural_hash",
]


def dumps(obj) -> str:
    """Print a Function, Module or node as TVMScript text."""
    from .printer import dumps as _dumps

    return _dumps(obj)


def _load_ops() -> None:
    from . import ops  # noqa: F401  (declares the built-in ops)


# the op table loads the built-in declarations through this on its first use
ir.op.register_loader(_load_ops)

# Subpackages and modules ``tirx.<name>`` imports on first access (not at ``import tirx``).
_LAZY_SUBMODULES = (
    "autoload",
    "codegen",
    "diagnostics",
    "fileio",
    "grammar",
    "interp",
    "ops",
    "passes",
    "printer",
    "runtime",
    "script",
    "surface",
    "target",
    "target_spec",
    "testing",
    "tirx",
    "tools",
)


# TIRx's pass API for code written ``import tirx as tvm``: ``tvm.transform`` (= ``tvm.ir.transform``)
# and ``tvm.instrument`` are modules of the passes layer, imported on first access
_PASS_API = {"transform": "tirx.passes.ir_transform", "instrument": "tirx.passes.instrument"}


#: TIRx's device constructors (``tvm.cpu(0)``, ``tvm.cuda(0)``, ``tvm.device("cuda", 0)``)
_DEVICES = frozenset({"cpu", "cuda", "device"})


def __getattr__(name: str) -> Any:
    """``tirx.script``, ``tirx.testing``, ...: import the subpackage on first access."""
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _DEVICES:
        return getattr(importlib.import_module("tirx.runtime.host_tensor"), name)
    if name in _PASS_API:
        return importlib.import_module(_PASS_API[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | set(_LAZY_SUBMODULES) | set(_PASS_API) | _DEVICES)


def _ir_getattr(name: str, _ir_own: Any = ir.__getattr__) -> Any:
    """``tirx.ir.transform`` (TIRx's ``tvm.ir.transform``): the passes layer's module; the IR
    cannot import it, so the facade adds it to the IR package's lazy names."""
    if name == "transform":
        return importlib.import_module(_PASS_API["transform"])
    return _ir_own(name)


ir.__getattr__ = _ir_getattr  # type: ignore[assignment]


# ``Node.script()`` prints through this (the IR does not import the printer; loading it is
# deferred to the first print, and ``tirx.printer`` re-registers its own ``dumps`` on import)
ir.node.register_printer(dumps)


def _call(f, args, kwargs):
    from .runtime.direct import call

    return call(f, args, kwargs)


# ``Function.__call__`` (a direct call with arrays) runs through this, for the same reason
ir.function.register_caller(_call)


def _autotuner(fn, options):
    from .runtime.autotune import Autotuner

    return Autotuner(fn, **options)


# ``@T.autotune`` builds its tuner through this (the front end does not import the runtime)
ir.function.register_autotuner(_autotuner)


def save(obj, path) -> None:
    """Write ``dumps(obj)`` to ``path`` atomically (UTF-8, trailing newline). A symlink is
    written through to its target; a FIFO, device, socket or directory raises
    ``tirx.fileio.NotARegularFile`` (an OSError and a ValueError) naming the path."""
    from .fileio import save as _save

    _save(obj, path)


def loads(text: str, source_name: str = "<string>", keep_comments: bool = False) -> Function | Module:
    """Parse TVMScript text into a Function or Module. Never executes code from the text.

    ``keep_comments=True``: ``dumps`` of the result prints the text's comments back."""
    from .grammar import loads as _loads

    return _loads(text, source_name=source_name, keep_comments=keep_comments)


def load(path: str | PathLike[str], keep_comments: bool = False) -> Function | Module:
    """Parse a ``.tirx`` file into a Function or Module (``keep_comments``: see ``loads``)."""
    from .grammar import load as _load

    return _load(path, keep_comments=keep_comments)


# ``tirx.compile``'s result by target and input, for type checkers (one implementation below):
# "interp" (and TIRx's host target "llvm") gives the interpreter's kernels; any other target string
# (or a Target) is CUDA, where a Function whose host code launches several kernels gives a
# HostFunction. (TIRX_INTERPRET=1
# runs a CUDA target on the interpreter: at run time that result is the interpreter's.)
@overload
def compile(f: Function, target: Literal["interp", "llvm"], **options: Any) -> InterpKernel: ...
@overload
def compile(f: Module, target: Literal["interp", "llvm"], **options: Any) -> InterpModuleKernel: ...
@overload
def compile(f: Function, target: str | Target = "cuda", **options: Any) -> Kernel | HostFunction: ...
@overload
def compile(f: Module, target: str | Target = "cuda", **options: Any) -> CompiledModule: ...
@overload
def compile(f: Any, target: str | Target = "cuda", **options: Any) -> Any: ...
def compile(f: Any, target: Any = "cuda", **options: Any) -> Any:
    """Compile a Function or Module for ``target`` ("cuda", "cuda -arch=sm_90a", "interp")."""
    from .target import compile as _compile

    return _compile(f, target, **options)


from .autoload import autoload as _autoload  # noqa: E402

_autoload()


# ``tirx.script.from_source`` (TIRx's ``tvm.script.from_source``) loads text through this
ir.node.register_loader(loads)
