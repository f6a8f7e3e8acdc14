"""The traversal base: dispatch on a node's exact class through a per-class table (issue #30).

A *functor* is a class whose methods are named ``<prefix><NodeClass>`` (``visit_Add``,
``e_Add``, ``s_For``, ...) and which handles a node by calling the method named for
``type(node)``. Subclass :class:`Functor` and declare one :class:`Dispatch` per prefix::

    class Visitor(Functor):
        _visit_table = Dispatch("visit_")

        def visit(self, node):
            fn = self._visit_table[type(node)]
            if fn is None:  # no visit_<Class>: this functor's own fallback
                return self.generic_visit(node)
            return fn(self, node)

``self._visit_table`` is the :class:`DispatchTable` of ``type(self)``: a dict from a node class
``C`` to the function ``getattr(type(self), prefix + C.__name__, None)``, so

* dispatch is on the exact class, by name, as ``getattr(self, prefix + type(node).__name__)``
  would (a subclass of ``Add`` named ``MyAdd`` finds ``visit_MyAdd``, not ``visit_Add``);
* the method is looked up on the concrete functor class through its MRO: a subclass that
  defines ``visit_Add`` gets it, every functor class has its own table (made lazily, on the
  first dispatch through an instance of that class, and kept on the class), and each entry
  is looked up once, the first time a node of that class is dispatched;
* the fallback: a class with no such method maps to ``None`` (also when the attribute is
  ``None``), and the call site decides what that means (a generic walk, an error naming the
  class, ...).

A plain function is stored unbound and called ``fn(self, node)``. Any other attribute (a
``staticmethod``, a ``classmethod``, a callable object) is stored as a small wrapper that
calls ``getattr(self, name)(node)``, so it behaves as an attribute lookup on the instance would.

The tables read the class as it is when an entry is first looked up: a method assigned to a
functor class afterwards (monkeypatching) is seen only after :func:`clear_tables`; methods
set on an instance are not consulted (dispatch is per class).

:func:`rebuild` is the other half of an identity-preserving rewriter: the node with its
structural fields mapped, the same object when nothing changed.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Container
from typing import Any

import attrs

__all__ = ["Dispatch", "DispatchTable", "Functor", "clear_tables", "rebuild"]

# the attribute a class keeps its own Dispatch declarations under: {attribute name: Dispatch}
_OWN = "_functor_dispatch"


class DispatchTable(dict):
    """One functor class's methods for one prefix: node class -> function or ``None``.

    Filled lazily: a node class not met before is looked up on the functor class
    (``prefix + cls.__name__``, through the MRO) and the answer kept."""

    __slots__ = ("functor", "prefix")

    def __init__(self, functor: type, prefix: str) -> None:
        super().__init__()
        self.functor = functor
        self.prefix = prefix

    def __missing__(self, node_cls: type) -> Callable[..., Any] | None:
        fn = _method(self.functor, self.prefix + node_cls.__name__)
        self[node_cls] = fn
        return fn

    def __repr__(self) -> str:
        return f"<DispatchTable {self.functor.__qualname__} {self.prefix}* ({len(self)} classes met)>"


def _method(cls: type, name: str) -> Callable[..., Any] | None:
    """What ``getattr(instance, name, None)`` would give, as a function of ``(self, node)``."""
    for k in cls.__mro__:
        if name in k.__dict__:
            raw = k.__dict__[name]
            break
    else:
        return None
    if type(raw) is types.FunctionType:
        return raw
    if getattr(cls, name, None) is None:
        return None
    return lambda self, node: getattr(self, name)(node)


class Dispatch:
    """Declares a dispatch table of a :class:`Functor`: ``_visit_table = Dispatch("visit_")``.

    Reading the attribute through an instance (or the class) gives that class's
    :class:`DispatchTable`, made on first use and stored on the class in place of this
    declaration (so later reads are a plain class-attribute lookup)."""

    __slots__ = ("name", "prefix")

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        own = owner.__dict__.get(_OWN)
        if own is None:
            own = {}
            setattr(owner, _OWN, own)
        own[name] = self

    def __get__(self, obj: Any, owner: type | None = None) -> DispatchTable:
        cls = type(obj) if owner is None else owner
        table = DispatchTable(cls, self.prefix)
        setattr(cls, self.name, table)  # replaces this declaration in cls's own namespace
        return table

    def __repr__(self) -> str:
        return f"Dispatch({self.prefix!r})"


class Functor:
    """Base of the classes that dispatch through :class:`Dispatch` tables.

    Every subclass gets its own table per declared prefix: the declarations of its bases
    are copied into the new class's namespace, so the first dispatch through it builds a
    table for it rather than reusing a base class's."""

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        seen = set(cls.__dict__.get(_OWN) or ())  # declared in the class body itself
        for base in cls.__mro__[1:]:
            for name, d in (base.__dict__.get(_OWN) or {}).items():
                if name not in seen:  # the first declaration along the MRO wins
                    seen.add(name)
                    if name not in cls.__dict__:
                        setattr(cls, name, d)


def clear_tables(cls: type) -> None:
    """Forget the dispatch tables of ``cls`` and its subclasses (after methods were added to
    or replaced on them): the next dispatch looks the methods up again."""
    for c in (cls, *_subclasses(cls)):
        for base in c.__mro__:
            for name, d in (base.__dict__.get(_OWN) or {}).items():
                if isinstance(c.__dict__.get(name), DispatchTable):
                    setattr(c, name, d)


def _subclasses(cls: type) -> list[type]:
    out: list[type] = []
    todo: list[type] = [cls]
    while todo:
        s: type
        for s in todo.pop().__subclasses__():
            if s not in out:
                out.append(s)
                todo.append(s)
    return out


def rebuild(node: Any, field: Callable[[Any, str, Any], Any], kinds: Container[str] | None = None) -> Any:
    """``node`` with each structural field's value ``v`` replaced by ``field(node, kind, v)``.

    The fields are ``type(node)._sfields`` (``(name, kind)`` pairs), in that order; with
    ``kinds``, only the fields of those kinds (the others are kept as they are, and
    ``field`` is not called for them). ``field`` returns ``v`` itself for a field it leaves
    alone. When every field came back as the same object, ``node`` itself is returned
    (untouched subtrees stay shared); otherwise one ``attrs.evolve`` with the changed fields."""
    changes = None
    for name, kind in type(node)._sfields:
        if kinds is not None and kind not in kinds:
            continue
        v = getattr(node, name)
        nv = field(node, kind, v)
        if nv is not v:
            if changes is None:
                changes = {}
            changes[name] = nv
    return node if changes is None else attrs.evolve(node, **changes)
