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

__all__ = ["TakesNone", "strip_none_params", "wrap_none_params"]


def _none_positions(f: Function) -> tuple[int, ...]:
    return tuple(i for i, p in enumerate(f.params) if isinstance(p.ty, VoidType))


def _stripped(f: Function) -> Function:
    keep = [p for p in f.params if not isinstance(p.ty, VoidType)]
    return f.replace(params=keep)


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
    """A compiled function whose signature keeps TIRx's ``T.NoneType()`` parameters: they take
    ``None`` and are not passed to the kernel. Everything else is the wrapped kernel's."""

    def __init__(self, kernel: Any, func: Function):
        self.kernel = kernel
        self.full_func = func
        self._none = _none_positions(func)
        self._stream_param = any(p.name == "stream" for p in func.params)

    def _split(self, args: tuple, kwargs: dict) -> tuple[list, dict]:
        kw = dict(kwargs)
        extra = {}
        if not self._stream_param and "stream" in kw:
            extra["stream"] = kw.pop("stream")
        vals = self.full_func.bind_args(args, kw)
        for i in self._none:
            if vals[i] is not None:
                p = self.full_func.params[i]
                raise TypeError(
                    f"{self.full_func.name}(): parameter {p.name} is T.NoneType() (an optional tensor this "
                    f"specialization set to None): pass None, got {type(vals[i]).__name__}"
                )
        return [v for i, v in enumerate(vals) if i not in self._none], extra

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
