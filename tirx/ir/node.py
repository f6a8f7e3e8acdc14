"""Node base class and the immutable attribute map used by IR nodes."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

__all__ = ["Attrs", "Node", "freeze_attrs", "print_text", "register_printer"]

# Field kinds of Function / Module (``_sfields``), here so that the visitor, which walks
# them, does not import function.py (which uses the visitor: tests/test_layering.py).
PARAMS, BUFMAP, FUNCS = "params", "bufmap", "funcs"

# The text printer is a layer above the IR. It registers its ``dumps`` here
# (``tirx.printer`` on import; ``tirx/__init__`` a lazy one, so ``import tirx`` does not load
# the printer), and the IR never imports upward (tests/test_layering.py).
_printer: Callable[[Any], str] | None = None


def register_printer(dumps: Callable[[Any], str]) -> None:
    """Install the function ``Node.script()`` and mismatch messages print with."""
    global _printer
    _printer = dumps


def print_text(obj: Any) -> str:
    """``obj`` as TVMScript text, through the registered printer."""
    if _printer is None:
        raise RuntimeError("no printer is registered: import tirx (or tirx.printer) first")
    return _printer(obj)


@attrs.define(slots=True, eq=False, frozen=True, repr=False)
class Node:
    """Base of every IR node.

    Nodes are frozen and slotted. ``==`` and ``hash`` are identity (nodes are used as
    dict keys by passes); use ``tirx.structural_equal`` for structural comparison.
    ``span`` is optional source metadata.
    """

    span: Any = attrs.field(default=None, kw_only=True, repr=False)
    # spare slot: structural_hash caches (hash, hash with map_free_vars) of this root here.
    # Not an init argument, so evolve()/replace() give a fresh node with an empty cache.
    _shash: Any = attrs.field(default=None, init=False, repr=False)

    # structural field spec, filled per class: tuple of (field name, kind)
    _sfields = ()

    def __repr__(self) -> str:
        # one generic repr (``Cls(field=value, ...)``, no span) instead of an attrs-generated
        # one per class: generating ~60 reprs is a third of ``import tirx``
        cls = type(self)
        parts = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in attrs.fields(cls)
            if f.init and f.repr and f.name != "span"
        ]
        return f"{cls.__name__}({', '.join(parts)})"

    def script(self) -> str:
        """Print this node as TVMScript text (same as ``tirx.dumps``)."""
        return print_text(self)

    def with_span(self, span: Any) -> Node:
        """Return a copy carrying ``span``."""
        return attrs.evolve(self, span=span)

    def replace(self, **changes: Any) -> Node:
        """Return a copy with the given fields changed (``attrs.evolve``)."""
        return attrs.evolve(self, **changes)


class Attrs(Mapping):
    """An immutable, hashable mapping used for node attributes and annotations.

    Values are frozen recursively: dicts become Attrs, lists become tuples.
    Insertion order is kept for printing; equality ignores it.
    """

    __slots__ = ("_d", "_h")

    def __init__(self, data: Mapping | None = None):
        d: dict[str, Any] = {}
        if data:
            for k, v in data.items():
                if not isinstance(k, str):
                    raise TypeError(f"Attrs: keys must be str, got {type(k).__name__}")
                d[k] = freeze_attrs(v)
        self._d = d
        self._h = None

    def __getitem__(self, k: str) -> Any:
        return self._d[k]

    def __iter__(self) -> Iterator[str]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __repr__(self) -> str:
        return f"Attrs({self._d!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Attrs):
            return self._d == other._d
        if isinstance(other, Mapping):
            return self._d == dict(other)
        return NotImplemented

    def __hash__(self) -> int:
        if self._h is None:
            self._h = hash(frozenset(self._d.items()))
        return self._h

    def set(self, key: str, value: Any) -> Attrs:
        d = dict(self._d)
        d[key] = value
        return Attrs(d)

    def to_dict(self) -> dict[str, Any]:
        return {k: (v.to_dict() if isinstance(v, Attrs) else v) for k, v in self._d.items()}


EMPTY_ATTRS = Attrs()


def freeze_attrs(v: Any) -> Any:
    if isinstance(v, Attrs):
        return v
    if isinstance(v, Mapping):
        return Attrs(v) if v else EMPTY_ATTRS
    if isinstance(v, (list, tuple)):
        return tuple(freeze_attrs(x) for x in v)
    return v


def as_attrs(v: Any, what: str = "attrs") -> Attrs:
    if v is None:
        return EMPTY_ATTRS
    if isinstance(v, Attrs):
        return v
    if isinstance(v, Mapping):
        return Attrs(v)
    raise TypeError(f"{what} must be a mapping, got {type(v).__name__}")
