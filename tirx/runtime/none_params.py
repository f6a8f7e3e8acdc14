"""Parameters typed ``T.NoneType()``: an optional tensor a ``@T.jit`` specialization set to None.

TIRx keeps such a parameter in the specialized function's signature (``Bias: T.NoneType()``)
and its compiled function takes ``None`` there; the device kernel has no parameter for it. tirx
does the same: ``tirx.compile`` compiles the function without those parameters and returns the
kernel wrapped in :class:`TakesNone`, which binds a call to the whole signature, checks that
every ``T.NoneType()`` parameter got ``None`` (a ``TypeError`` naming it otherwise) and passes
the rest on. A function without such parameters is compiled and returned as before.
"""

from __future__ import annotations

from typing import Any

from ..ir import Function, Module
from ..ir.types import VoidType
from .bounded import Bounded

__all__ = ["TakesNone", "strip_none_params", "wrap_none_params"]


def _none_positions(f: Function) -> tuple[int, ...]:
    return tuple(i for i, p in enumerate(f.params) if isinstance(p.ty, VoidType))


_STRIPPED = Bounded(128)  # id(f) -> (f, f stripped)


def _stripped(f: Function) -> Function:
    """``f`` without its ``T.NoneType()`` parameters, the same object for the same ``f`` (IR is
    immutable), so a repeated ``tirx.compile`` of one function finds its lowered code
    (``pipeline.lower_cuda`` remembers it per function object) instead of generating it again."""
    hit = _STRIPPED.get(id(f))
    if hit is not None and hit[0] is f:
        return hit[1]
    keep = [p for p in f.params if not isinstance(p.ty, VoidType)]
    return _STRIPPED.put(id(f), (f, f.replace(params=keep)))[1]


def strip_none_params(f: Any) -> tuple[Any, dict[str, Function]]:
    """``(f without its T.NoneType() parameters, {name: the function as written})`` for every
    function that has some (an empty dict, and ``f`` itself, when none has)."""
    if isinstance(f, Function):
        if not _none_positions(f):
            return f, {}
        return _stripped(f), {f.name: f}
    if isinstance(f, Module):
        full = {g.name: g for g in f.functions if _none_positions(g)}
        if not full:
            return f, {}
        return f.replace(functions=[_stripped(g) if g.name in full else g for g in f.functions]), full
    return f, {}


def wrap_none_params(result: Any, full: dict[str, Function]) -> Any:
    """The compiled ``result`` with each kernel of a function in ``full`` wrapped."""
    if not full:
        return result
    kernels = getattr(result, "kernels", None)
    if isinstance(kernels, dict):  # a compiled module: wrap its kernels in place
        for name, f in full.items():
            if name in kernels:
                kernels[name] = TakesNone(kernels[name], f)
        return result
    (f,) = full.values()
    return TakesNone(result, f)


class TakesNone:
    """A compiled function whose signature keeps TIRx's ``T.NoneType()`` parameters. Such a
    parameter can only be ``None``: a call passes ``None`` there (TIRx's calling convention:
    the whole signature) or leaves it out (the arguments of the kernel, which has no such
    parameter); any other value is a ``TypeError`` naming it. Everything else is the wrapped
    kernel's (``source``, ``func``, ``prepare``, ...)."""

    def __init__(self, kernel: Any, func: Function):
        self.kernel = kernel
        self.full_func = func
        self._none = _none_positions(func)
        self._n = len(func.params)
        self._stream_param = any(p.name == "stream" for p in func.params)

    def _split(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """The kernel's arguments and the call's ``stream=``."""
        extra = {}
        if kwargs and not self._stream_param and "stream" in kwargs:
            kwargs = dict(kwargs)
            extra["stream"] = kwargs.pop("stream")
        f = self.full_func
        if not kwargs:
            if len(args) == self._n - len(self._none):
                return args, extra  # the None parameters left out: the kernel's own arguments
            vals = list(args) if len(args) == self._n else f.bind_args(args, {})  # (a count error)
        elif len(args) + len(kwargs) == self._n or any(f.params[i].name in kwargs for i in self._none):
            vals = f.bind_args(args, kwargs)
        else:  # the None parameters left out, the others positional then by name
            names = [p.name for i, p in enumerate(f.params) if i not in self._none]
            if len(args) > len(names):
                vals = f.bind_args(args, kwargs)  # (a count error)
            else:
                pos = dict(zip(names, args))
                twice = sorted(set(pos) & set(kwargs))
                if twice:
                    raise TypeError(f"{f.name}() got multiple values for parameter {twice[0]!r}")
                vals = f.bind_args((), {**{f.params[i].name: None for i in self._none}, **pos, **kwargs})
        for i in self._none:
            if vals[i] is not None:
                raise TypeError(
                    f"{f.name}(): parameter {f.params[i].name} is T.NoneType() (an optional tensor this "
                    f"specialization set to None): pass None or leave it out, got {type(vals[i]).__name__}"
                )
        return tuple(v for i, v in enumerate(vals) if i not in self._none), extra

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        rest, extra = self._split(args, kwargs)
        return self.kernel(*rest, **extra)

    def prepare(self, *args: Any, **kwargs: Any) -> Any:
        rest, _extra = self._split(args, kwargs)
        return self.kernel.prepare(*rest)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.__dict__["kernel"], name)

    def __repr__(self) -> str:
        return repr(self.kernel)
