"""A function whose host code launches several kernels (``HostFunction``), and its prepared
form (``PreparedSequence``); ``CompiledModule`` (``kernel.py``) makes one for each function
with more than one device entry. ``HostOnlyFunction``: a module function with no device entry. Split out of kernel.py by what it holds (issue #30).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .named import ByOwnName

if TYPE_CHECKING:
    from .kernel import CompiledModule

__all__ = ["HostFunction", "HostOnlyFunction", "PreparedSequence"]

_LAST = object()  # PreparedSequence: return what the last launch returns


class HostFunction(ByOwnName):
    """A function whose host code launches several kernels, in order: one per device entry
    (TIRx's ``with T.device_entry(...)`` blocks one after another, or top-level
    ``T.launch_thread`` nests). A call checks the arguments and launches each kernel on the
    same stream, as the function's host code does, and returns the host's final ``return``
    value. ``kernels`` maps each kernel's C name to its :class:`Kernel`."""

    def __init__(self, name: str, kernels: list, module: CompiledModule):
        self.name = name
        self.module = module
        self.func = kernels[0].func
        self.kernels = {k.name: k for k in kernels}
        self._seq = tuple(kernels)

    @property
    def source(self) -> str:
        return self._seq[0].source

    @property
    def mod(self) -> Any:
        """TIRx's ``compile(f).mod`` (``Kernel.mod``): ``.imports[0].inspect_source()``."""
        return self._seq[0].mod

    @property
    def ptx(self) -> str:
        return self._seq[0].ptx

    @property
    def cubin(self) -> bytes:
        return self._seq[0].cubin

    @property
    def arch(self) -> str:
        return self._seq[0].arch

    def __repr__(self) -> str:
        ps = ", ".join(p.name for p in self.func.params)
        return f"<tirx.HostFunction {self.name}({ps}) launching {', '.join(self.kernels)} for {self.arch}>"

    def __call__(self, *args: Any, stream: Any = None, **kwargs: Any) -> Any:
        if kwargs:
            args = tuple(self.func.bind_args(args, kwargs))
        ret = None
        for k in self._seq:  # each launch after the host statements before it (checked per kernel)
            ret = k(*args, stream=stream)
        return ret

    def prepare(self, *args: Any, **kwargs: Any) -> PreparedSequence:
        """Every launch prepared (:meth:`Kernel.prepare`); calling the result launches them in order."""
        if kwargs:
            args = tuple(self.func.bind_args(args, kwargs))
        return PreparedSequence(self, [k.prepare(*args) for k in self._seq])


class PreparedSequence:
    """``HostFunction.prepare(*args)``: the prepared launches of its kernels, launched in order."""

    __slots__ = ("_launches", "_result", "function")

    def __init__(self, function: HostFunction, launches: list, result: Any = _LAST):
        self.function = function
        self._launches = tuple(launches)
        self._result = result  # the host's return value (a host program's), else the last launch's

    @property
    def launches(self) -> tuple:
        return self._launches

    def __repr__(self) -> str:
        return f"<tirx.PreparedSequence of {self.function.name}: {len(self._launches)} launches>"

    def __call__(self, stream: Any = None) -> Any:
        ret = None
        for p in self._launches:
            ret = p(stream)
        return ret if self._result is _LAST else self._result


class HostOnlyFunction:
    """A public module function with no device entry, compiled with the module's kernels for
    the cuda target (TIRx compiles such a function as host code). It is host code, so it runs
    on the CPU: in tirx's interpreter (compiled at the first call), on host arrays; a torch
    tensor in GPU memory is copied to the host and back (``tirx.interp``'s rule)."""

    target = "interp"

    def __init__(self, module_ir: Any, name: str):
        self.module_ir = module_ir
        self.name = name
        self.func = next(f for f in module_ir.functions if f.name == name)
        self._kernel: Any = None

    def kernel(self) -> Any:
        """The interpreter's kernel of this function (built once)."""
        if self._kernel is None:
            from ..interp.kernel import build

            self._kernel = build(self.module_ir, {})[self.name]
        return self._kernel

    def __repr__(self) -> str:
        ps = ", ".join(p.name for p in self.func.params)
        return f"<tirx.HostOnlyFunction {self.name}({ps}) on the CPU>"

    def __call__(self, *args: Any, stream: Any = None, **kwargs: Any) -> Any:
        if stream is not None and any(p.name == "stream" for p in self.func.params):
            kwargs["stream"] = stream
        return self.kernel()(*args, **kwargs)

    def prepare(self, *args: Any, **kwargs: Any) -> Any:
        return self.kernel().prepare(*args, **kwargs)
