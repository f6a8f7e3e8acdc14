"""``import tvm`` for a TIRx test file, served by another package (standard library only).

TIRx's test files import ``tvm`` (``tvm.script.tirx``, ``tvm.testing``, ``tvm.ir``, ...). The corpus
harness runs them twice: under apache-tvm-tirx 0.1.0a4 (``tvm`` -> ``tvm_tirx``) to capture the
kernels TIRx builds, and under tirx (``tvm`` -> ``tirx``) to build the same kernels in tirx's
frontend. ``install(alias, real)`` maps ``alias`` and every ``alias.x.y`` to ``real.x.y``;
what the real package lacks becomes a :class:`Stub`, so a test module still imports and its
kernels still build when some helper it imports (a profiler, a bench utility) does not exist
there. A kernel that *uses* a stub fails to build, which the harness reports as a failure.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any


class Stub:
    """Anything the real package lacks: attributes and calls give stubs, it is false and
    empty, and used as a decorator on a function or class it gives that function back (so
    ``@tvm.testing.requires_cuda`` keeps the test)."""

    def __init__(self, name: str = "stub") -> None:
        object.__setattr__(self, "_name", name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Stub(f"{self._name}.{name}")

    def __setattr__(self, name: str, value: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and isinstance(args[0], (types.FunctionType, type)):
            return args[0]
        return Stub(f"{self._name}()")

    def __getitem__(self, key: Any) -> Any:
        return Stub(f"{self._name}[]")

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0

    def __bool__(self) -> bool:
        return False

    def __lt__(self, other: Any) -> bool:  # an environment check (a version < (13, 2)): not met
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False

    def __mro_entries__(self, bases: tuple) -> tuple:
        return (object,)

    def __repr__(self) -> str:
        return f"<stub {self._name}>"


#: the script namespaces (``T``, ``I``: what ``alias.script`` gives, or a module of one of these
#: names) are served as the real modules: an op the real package lacks must fail inside the
#: kernel as it would for a user, not become a stub, and TIRx's decorators must see their own
#: namespace
SCRIPT_NAMESPACES = (".script.tirx", ".script.ir")


class ProxyModule(types.ModuleType):
    """``alias.x``: the attributes of ``real.x``, its submodules (as proxies), else stubs."""

    def __init__(self, name: str, real: types.ModuleType | None, alias: str, real_root: str) -> None:
        super().__init__(name)
        self.__dict__["_real"] = real
        self.__dict__["_alias"] = alias
        self.__dict__["_real_root"] = real_root
        self.__path__ = []  # a package: ``import alias.x.y`` asks the finder for ``alias.x.y``
        if real is not None:
            self.__file__ = getattr(real, "__file__", None)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        real = self.__dict__["_real"]
        if real is not None:
            try:
                value = getattr(real, name)
            except Exception:  # missing, or a lazy attribute that fails to load
                pass
            else:
                root = self.__dict__["_real_root"]
                vname = getattr(value, "__name__", "") if isinstance(value, types.ModuleType) else ""
                script = self.__name__ == self.__dict__["_alias"] + ".script"  # T, I: the real ones
                if vname.startswith(root + ".") and not script and not vname.endswith(SCRIPT_NAMESPACES):
                    # a subpackage reached as an attribute stays a proxy (its missing names stub)
                    return importlib.import_module(self.__dict__["_alias"] + vname[len(root) :])
                return value
        sub = f"{self.__name__}.{name}"
        if real is not None:  # a submodule of the real package not imported yet
            real_sub = self.__dict__["_real_root"] + sub[len(self.__dict__["_alias"]) :]
            try:
                importlib.import_module(real_sub)
            except Exception:
                return Stub(sub)
            return importlib.import_module(sub)
        return Stub(sub)


class AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``alias`` and ``alias.*`` and loads them as :class:`ProxyModule` over ``real``."""

    def __init__(self, alias: str, real: str | None) -> None:
        self.alias = alias
        self.real = real

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname == self.alias or fullname.startswith(self.alias + "."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        real = None
        if self.real is not None:
            try:
                real = importlib.import_module(self.real + spec.name[len(self.alias) :])
            except ImportError:
                real = None
        return ProxyModule(spec.name, real, self.alias, self.real or "")

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def install(alias: str, real: str | None) -> None:
    """Serve ``import alias...`` from ``real`` (``None``: stubs only). ``from alias.script
    import tirx as T`` gives the real script namespace (an attribute of the proxy), so an
    unknown op inside a kernel is the real namespace's error, never a stub."""
    for m in [m for m in sys.modules if m == alias or m.startswith(alias + ".")]:
        del sys.modules[m]
    sys.meta_path.insert(0, AliasFinder(alias, real))
