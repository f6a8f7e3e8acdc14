"""tvm_ffi's structural API over tirx's IR: ``from tirx import ffi as tvm_ffi``.

A pass written for TIRx with ``tvm_ffi.structural_walk`` / ``structural_visit`` /
``structural_map`` / ``structural_mutate`` (and ``structural_equal``, ``structural_hash``,
``StructuralKey``, ``WalkResult``, ``VisitInterrupt``, ``DefRegionKind``, ...) runs on tirx
nodes after changing that one import. docs/ffi.md says what is served and what differs.

What a traversal meets, in order, comes from tirx's traversal base: a node's structural
fields in ``type(node)._sfields`` order (the order ``Visitor``, ``Mutator`` and structural
equality/hash use: plain values, other children, definitions, bodies), interpreted by their
declared kind (``tirx.ir.node``). Every occurrence is visited as in a tree:

* a node (expression, statement, buffer, function, module): its callback, then its children;
* a field of kind ``SEQ`` / ``PARAMS`` / ``FUNCS`` / ``BUFMAP``: the tuple itself (TIRx's
  ``Array``; ``ffi.Array`` matches it), then its elements -- plain values among them (ints,
  strings) are visited too, as TIRx visits the values of its containers;
* an ``ATTRS`` field: the ``Attrs`` itself (TIRx's ``Map``; ``ffi.Map`` matches it), then
  its values (not its keys);
* a buffer at each definition (``AllocBuffer``, ``DeclBuffer``, a function's buffer map)
  and at each use (``BufferLoad``, ``BufferStore``), with its data pointer, shape, strides;
* plain-value fields of a node (a dtype, a constant's value, a loop kind) are not visited.

Rewrites (``structural_map`` / ``structural_mutate``) rebuild nodes with the base's
``tirx.ir.functor.rebuild``: the same object comes back when nothing below it changed. A
variable replaced where it is defined is replaced at its later uses too (the remap cache,
``StructuralMutator.var_remap_get``), as ``tirx.ir.Mutator``'s ``var_map`` does, and a
buffer is rebuilt once, every use sharing the new buffer (``Mutator.buffer_map``).
"""

from __future__ import annotations

import abc
import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from enum import IntEnum
from typing import Any

from tirx.ir import deep
from tirx.ir.buffer import Buffer
from tirx.ir.expr import PrimExpr, Var
from tirx.ir.function import Function, Module
from tirx.ir.functor import rebuild
from tirx.ir.node import (
    ATTRS,
    BUF_DEF,
    BUFMAP,
    DEF,
    FUNCS,
    NODE,
    PARAMS,
    SEQ,
    VALUE,
    Attrs,
    Node,
)
from tirx.ir.stmt import AllocBuffer, Stmt
from tirx.ir.structural import structural_equal as _structural_equal
from tirx.ir.structural import structural_hash as _structural_hash
from tirx.ir.visitor import map_tuple

__all__ = [
    "Array",
    "DefRegionKind",
    "InplaceMode",
    "Map",
    "StructuralKey",
    "StructuralMutator",
    "StructuralVisitor",
    "VisitInterrupt",
    "WalkOrder",
    "WalkResult",
    "get_first_structural_mismatch",
    "structural_equal",
    "structural_hash",
    "structural_map",
    "structural_mutate",
    "structural_visit",
    "structural_walk",
]

_MASK = (1 << 64) - 1


# ----------------------------------------------------------------------------- enums
class WalkOrder(IntEnum):
    """Whether a walk's (a map's) callbacks run before (``PREORDER``) or after
    (``POSTORDER``) the value's children."""

    PREORDER = 0
    POSTORDER = 1


class WalkResult(IntEnum):
    """What a ``structural_walk`` callback returns: ``ADVANCE`` (or ``None``) goes on into the
    value's children, ``SKIP`` leaves them out (pre-order only; after the children it means
    nothing). To stop the whole walk, return a :class:`VisitInterrupt`."""

    ADVANCE = 0
    SKIP = 1


class InplaceMode(IntEnum):
    """The third argument a ``structural_mutate`` callback may take. tirx nodes are
    immutable, so it is always ``DISALLOW`` (rewrite by building new nodes)."""

    DISALLOW = 0
    ALLOW = 1


class DefRegionKind(IntEnum):
    """Where a visited value sits: ``NONE`` (a use, or no definition), ``DEF_SIMPLE`` (the
    variable or buffer a ``Bind``, ``For``, ``Let``, ``AllocBuffer``, ``DeclBuffer`` or a
    region's params define) or ``DEF_PATTERN`` (a function's signature: its params and its
    buffer map, everything inside them, as the dynamic shape vars it binds)."""

    NONE = 0
    DEF_PATTERN = 1
    DEF_SIMPLE = 2


# ------------------------------------------------------------------- container classes
class Array(abc.ABC):  # noqa: B024  # a marker: tuple and list are registered below
    """TIRx's sequence container, for callback types and ``isinstance``: tirx's sequences
    are plain tuples (node fields) or lists, and both are ``ffi.Array`` instances."""


class Map(abc.ABC):  # noqa: B024
    """TIRx's map container: tirx's ``Attrs`` (node attributes, annotations) and dicts."""


Array.register(tuple)
Array.register(list)
Map.register(Attrs)
Map.register(dict)


# --------------------------------------------------------------------- interrupt and key
class VisitInterrupt:
    """Returned by a walk or visit callback to stop the traversal; the traversal returns it
    (``.value`` is the payload). It is a value, not an exception."""

    __slots__ = ("value",)

    def __init__(self, value: Any = None) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"VisitInterrupt(value={self.value!r})"


class StructuralKey:
    """A dict key that compares and hashes ``key`` structurally (``structural_equal`` /
    ``structural_hash``), its hash computed once: ``d[StructuralKey(f)]`` finds an entry
    made for any function structurally equal to ``f``."""

    __slots__ = ("hash_i64", "key")

    def __init__(self, key: Any) -> None:
        self.key = key
        h = _structural_hash(key) & _MASK
        self.hash_i64 = h - (1 << 64) if h >= 1 << 63 else h  # as TIRx stores it (int64)

    def __hash__(self) -> int:
        return self.hash_i64 & _MASK

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StructuralKey):
            return False
        return self.hash_i64 == other.hash_i64 and _structural_equal(self.key, other.key)

    def __repr__(self) -> str:
        return f"StructuralKey({self.key!r})"


# ------------------------------------------------------------------ equality and hash
def structural_equal(
    lhs: Any, rhs: Any, map_free_vars: bool = False, skip_tensor_content: bool = False
) -> bool:
    """``tirx.structural_equal`` under tvm_ffi's signature (tirx IR holds no tensor
    constants, so ``skip_tensor_content`` changes nothing)."""
    _check_flag(skip_tensor_content, "skip_tensor_content", "structural_equal")
    return _structural_equal(lhs, rhs, map_free_vars=map_free_vars)


def structural_hash(value: Any, map_free_vars: bool = False, skip_tensor_content: bool = False) -> int:
    """``tirx.structural_hash`` (an unsigned 64-bit int) under tvm_ffi's signature."""
    _check_flag(skip_tensor_content, "skip_tensor_content", "structural_hash")
    return _structural_hash(value, map_free_vars=map_free_vars) & _MASK


def get_first_structural_mismatch(
    lhs: Any, rhs: Any, map_free_vars: bool = False, skip_tensor_content: bool = False
) -> tuple[str, str] | None:
    """``None`` when ``lhs`` and ``rhs`` are structurally equal, else the path to the first
    mismatch, as a pair of strings (``"<root>.body.stmts[2].value"``; tvm_ffi gives a pair of
    ``AccessPath`` objects)."""
    _check_flag(skip_tensor_content, "skip_tensor_content", "get_first_structural_mismatch")
    from tirx.ir.structural import _mismatch_path, _path_text

    if _structural_equal(lhs, rhs, map_free_vars=map_free_vars):
        return None
    _, segs = _mismatch_path(lhs, rhs, bool(map_free_vars))
    path = _path_text(segs)
    return path, path


def _check_flag(v: Any, name: str, api: str) -> None:
    if not isinstance(v, (bool, int)):
        raise TypeError(f"{api}: {name} must be a bool, got {type(v).__name__}")


# ------------------------------------------------------------------------- callbacks
_EXACT = (bool, int, float, str, type(None))  # matched by exact type (True is no int), as in TIRx


class _Entry:
    __slots__ = ("fn", "kind_arg", "mode_arg", "ty")

    def __init__(self, ty: type | None, fn: Callable[..., Any], kind_arg: bool, mode_arg: bool = False):
        self.ty = ty  # None: any value
        self.fn = fn
        self.kind_arg = kind_arg  # called (value, def_region_kind)
        self.mode_arg = mode_arg  # structural_mutate: called (value, mutator, inplace_mode)

    def matches(self, v: Any) -> bool:
        t = self.ty
        if t is None:
            return True
        if t in _EXACT:
            return type(v) is t
        return isinstance(v, t)


class _Callbacks:
    """The callback entries of one call, tried in order; the first match per value type is kept."""

    __slots__ = ("_cache", "entries")

    def __init__(self, entries: list[_Entry]) -> None:
        self.entries = entries
        self._cache: dict[type, _Entry | None] = {}

    def find(self, v: Any) -> _Entry | None:
        t = type(v)
        try:
            return self._cache[t]
        except KeyError:
            pass
        e = next((e for e in self.entries if e.matches(v)), None)
        self._cache[t] = e
        return e


def _entries(callbacks: Any, api: str, arg: str) -> list[tuple[type | None, Callable[..., Any]]]:
    """``callbacks`` in its accepted forms as a flat ``[(type or None, fn)]``: a callable
    (any value), a ``(type, fn)`` or ``((type, ...), fn)`` entry, or a sequence of entries."""

    def one(entry: tuple) -> list[tuple[type | None, Callable[..., Any]]]:
        types, fn = entry
        return [(_callback_type(t, api, arg), fn) for t in (types if isinstance(types, tuple) else (types,))]

    if callable(callbacks) and not isinstance(callbacks, type):
        return [(None, callbacks)]
    if isinstance(callbacks, tuple) and len(callbacks) == 2 and callable(callbacks[1]):
        return one(callbacks)
    if isinstance(callbacks, Sequence) and not isinstance(callbacks, (str, bytes)):
        out = []
        for i, entry in enumerate(callbacks):
            if not (isinstance(entry, tuple) and len(entry) == 2 and callable(entry[1])):
                raise TypeError(
                    f"{api}: {arg}[{i}] must be a (type, callback) tuple, got {type(entry).__name__}"
                )
            out += one(entry)
        return out
    raise TypeError(
        f"{api}: {arg} must be a callback, a (type, callback) entry, a ((type1, type2, ...), "
        f"callback) entry or a sequence of such entries, got {type(callbacks).__name__}"
    )


def _callback_type(t: Any, api: str, arg: str) -> type | None:
    if t is object or t is typing.Any:
        return None
    if isinstance(t, type):
        return t
    raise TypeError(f"{api}: {arg}: a callback type must be a class, typing.Any or object, got {t!r}")


def _both(callbacks: Any, with_def_region_kind: Any, api: str) -> _Callbacks:
    """``callbacks`` (plain) then ``with_def_region_kind`` (given the region), tried in that order."""
    es = [_Entry(t, fn, False) for t, fn in _entries(callbacks, api, "callbacks")]
    es += [_Entry(t, fn, True) for t, fn in _entries(with_def_region_kind, api, "with_def_region_kind")]
    return _Callbacks(es)


def _order(order: Any, api: str) -> bool:
    """True for pre-order."""
    if isinstance(order, WalkOrder):
        return order is WalkOrder.PREORDER
    if isinstance(order, str) and order in ("pre", "post"):
        return order == "pre"
    raise ValueError(f"{api}: order must be 'pre', 'post' or a WalkOrder, got {order!r}")


def _accepts_mode(fn: Callable[..., Any], api: str) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    try:
        sig.bind(None, None, InplaceMode.DISALLOW)
        return True
    except TypeError:
        pass
    try:
        sig.bind(None, None)
    except TypeError:
        raise TypeError(
            f"{api}: a callback must accept (value, mutator) or (value, mutator, inplace_mode)"
        ) from None
    return False


# --------------------------------------------------------------------- field regions
# how deep a traversal recurses on the caller's thread before it continues on tirx's
# large-stack worker (tirx.ir.deep): deep IR never raises RecursionError, and nothing runs twice
_HANDOFF = 40

_NONE, _PATTERN, _SIMPLE = DefRegionKind.NONE, DefRegionKind.DEF_PATTERN, DefRegionKind.DEF_SIMPLE


class _AllocDef:
    """The region of a buffer an ``AllocBuffer`` defines: ``DEF_SIMPLE``, and its data
    pointer is defined with it (a ``DeclBuffer``'s pointer is a use)."""


_ALLOC = _AllocDef()


def _kind(region: Any) -> DefRegionKind:
    return _SIMPLE if region is _ALLOC else region


def _child_region(node: Node, kind: str, region: Any) -> Any:
    """The def region of a child in a field of ``kind`` of ``node`` (itself in ``region``)."""
    if region is _PATTERN:
        return _PATTERN  # a signature: everything inside it
    if kind is DEF:
        if type(node) is Buffer:
            return _SIMPLE if region is _ALLOC else _NONE
        return _SIMPLE
    if kind is BUF_DEF:
        return _ALLOC if type(node) is AllocBuffer else _SIMPLE
    if kind is PARAMS:
        return _PATTERN if _is_signature(type(node)) else _SIMPLE
    if kind is BUFMAP:
        return _PATTERN
    return _NONE


_SIGNATURE: dict[type, bool] = {}


def _is_signature(cls: type) -> bool:
    """Whether a node class's params are a function signature (it has a buffer map)."""
    s = _SIGNATURE.get(cls)
    if s is None:
        s = _SIGNATURE[cls] = any(k is BUFMAP for _, k in cls._sfields)  # type: ignore[attr-defined]
    return s


def _elem_region(region: Any) -> Any:
    """The region of a container's elements: a definition list's vars are definitions."""
    return region if region is not _ALLOC else _NONE


def _children(v: Any, region: Any) -> list[tuple[Any, Any]]:
    """The values a traversal visits below ``v``, each with its def region, in order."""
    if isinstance(v, Node):
        out = []
        for name, kind in type(v)._sfields:
            x = getattr(v, name)
            if kind is VALUE:
                if isinstance(x, Node):
                    out.append((x, _NONE if region is not _PATTERN else _PATTERN))
            elif kind is NODE:
                if x is not None:
                    out.append((x, _child_region(v, kind, region)))
            else:
                out.append((x, _child_region(v, kind, region)))
        return out
    if isinstance(v, (tuple, list)):
        r = _elem_region(region)
        return [(x, r) for x in v]
    if isinstance(v, Mapping):
        r = _elem_region(region)
        return [(x, r) for x in v.values()]
    return []


# ------------------------------------------------------------------------- visiting
class _Traversal:
    """What the visitor and the mutator a callback receives share: the callbacks, the depth,
    and the def region of the value being traversed (``def_region_kind()``, changed for a
    callback's own traversal by ``with_def_region_kind``)."""

    __slots__ = ("_callbacks", "_depth", "_region")

    def __init__(self, callbacks: _Callbacks) -> None:
        self._callbacks = callbacks
        self._region: Any = _NONE
        self._depth = 0

    def def_region_kind(self) -> DefRegionKind:
        return _kind(self._region)

    def with_def_region_kind(self, kind: int, callback: Callable[[], Any]) -> Any:
        """Run ``callback()`` with ``kind`` as the active def region (values it traverses
        through this visitor or mutator are in that region)."""
        saved = self._region
        self._region = DefRegionKind(kind)
        try:
            return callback()
        finally:
            self._region = saved


class StructuralVisitor(_Traversal):
    """The visitor a ``structural_visit`` callback receives (as ``(value, visitor)``).

    ``visit(x)`` visits ``x`` as the traversal would (its callback when one matches, else
    its children); ``default_visit(x)`` visits ``x``'s children (never ``x``'s own callback:
    calling it on the value whose callback is running is how a callback goes on into it).
    Both return ``None``, or the :class:`VisitInterrupt` that stopped the traversal.
    ``def_region_kind()`` is the region of the value being visited."""

    __slots__ = ()

    def visit(self, value: Any) -> VisitInterrupt | None:
        e = self._callbacks.find(value)
        if e is None:
            return self.default_visit(value)
        r = e.fn(value, self)
        if r is None or type(r) is VisitInterrupt:
            return r
        raise TypeError(
            f"structural_visit: a callback returned a {type(r).__name__} for a {type(value).__name__}; "
            "it must return None or a VisitInterrupt"
        )

    def default_visit(self, value: Any) -> VisitInterrupt | None:
        if self._depth > _HANDOFF and not deep.active():
            return deep.run(self._descend, value)
        return self._descend(value)

    def _descend(self, value: Any) -> VisitInterrupt | None:
        kids = _children(value, self._region)
        if not kids:
            return None
        saved = self._region
        self._depth += 1
        try:
            for x, region in kids:
                self._region = region
                r = self.visit(x)
                if r is not None:
                    return r
            return None
        finally:
            self._region = saved
            self._depth -= 1



class _Walk(StructuralVisitor):
    """``structural_walk``: every value's callback, before or after its children."""

    __slots__ = ("_pre",)

    def __init__(self, callbacks: _Callbacks, pre: bool) -> None:
        super().__init__(callbacks)
        self._pre = pre

    def visit(self, value: Any) -> VisitInterrupt | None:
        e = self._callbacks.find(value)
        if e is None:
            return self.default_visit(value)
        if self._pre:
            r = self._call(e, value)
            if r is not None:
                return r if type(r) is VisitInterrupt else None  # SKIP: not into the children
            return self.default_visit(value)
        r = self.default_visit(value)
        if r is not None:
            return r
        r = self._call(e, value)
        return r if type(r) is VisitInterrupt else None

    def _call(self, e: _Entry, value: Any) -> Any:
        """The callback's result: None to go on, a VisitInterrupt, or SKIP (any true int)."""
        r = e.fn(value, _kind(self._region)) if e.kind_arg else e.fn(value)
        if r is None or type(r) is VisitInterrupt:
            return r
        if isinstance(r, int):  # a WalkResult (TIRx takes its integer values, bool too)
            return r if r == WalkResult.SKIP else None
        raise TypeError(
            f"structural_walk: a callback returned a {type(r).__name__} for a {type(value).__name__}; "
            "it must return None, a WalkResult or a VisitInterrupt"
        )


def structural_walk(
    root: Any,
    callbacks: Any = (),
    with_def_region_kind: Any = (),
    order: str | WalkOrder = "post",
) -> VisitInterrupt | None:
    """Visit every value under ``root`` (``root`` included), each occurrence as in a tree,
    calling the first matching callback: those of ``callbacks`` (called ``fn(value)``), then
    those of ``with_def_region_kind`` (called ``fn(value, DefRegionKind)``).

    A callback form is a callable (any value), ``(type, fn)``, ``((type, ...), fn)`` or a
    sequence of such entries; ``object`` / ``typing.Any`` match any value, a class matches
    its instances (``int``, ``float``, ``str``, ``bool`` exactly). ``order="pre"`` calls it
    before the value's children (returning ``WalkResult.SKIP`` leaves them out),
    ``"post"`` after. A callback that returns a :class:`VisitInterrupt` stops the walk, which
    returns it; otherwise the walk returns ``None``."""
    return _Walk(
        _both(callbacks, with_def_region_kind, "structural_walk"), _order(order, "structural_walk")
    ).visit(root)


def structural_visit(root: Any, callbacks: Any = ()) -> VisitInterrupt | None:
    """Visit ``root`` with callbacks that own the descent: the first matching callback gets
    ``(value, visitor)`` and goes on into the value's children by ``visitor.default_visit(
    value)``, into chosen ones by ``visitor.visit(child)``, or not at all (pruned). A value
    no callback matches is descended into. A callback returns ``None`` or a
    :class:`VisitInterrupt` (usually the one ``visit`` returned, to stop everything)."""
    es = [_Entry(t, fn, False) for t, fn in _entries(callbacks, "structural_visit", "callbacks")]
    return StructuralVisitor(_Callbacks(es)).visit(root)


# ------------------------------------------------------------------------- rewriting
_FAMILIES: tuple[type, ...] = (PrimExpr, Stmt, Buffer, Function, Module, Node)


class StructuralMutator(_Traversal):
    """The mutator a ``structural_mutate`` callback receives (as ``(value, mutator)``).

    ``mutate(x)`` rewrites ``x`` as the traversal would (its callback when one matches, else
    its children); ``default_mutate(x)`` rewrites ``x``'s children (never ``x``'s own
    callback). Both return ``x`` itself when nothing changed. ``var_remap_get`` /
    ``var_remap_set`` read and write the replacement of a variable or buffer: a use of it
    met later becomes the replacement (a definition replaced records its replacement)."""

    __slots__ = ("buffer_map", "var_map")

    _api = "structural_mutate"

    def __init__(self, callbacks: _Callbacks) -> None:
        super().__init__(callbacks)
        self.var_map: dict[Var, Any] = {}  # the remap cache (tirx.ir.Mutator's names)
        self.buffer_map: dict[Buffer, Any] = {}

    # -- the traversal ------------------------------------------------------------
    def mutate(self, value: Any) -> Any:
        new = self._apply(value)
        if new is not value and self._region is not _NONE and isinstance(value, (Var, Buffer)):
            m = self._remap(value)  # a definition replaced: its later uses follow
            if m.get(value, value) is value:
                m[value] = new
        return new

    def _apply(self, value: Any) -> Any:
        e = self._callbacks.find(value)
        if e is None:
            return self.default_mutate(value)
        if e.mode_arg:
            return e.fn(value, self, InplaceMode.DISALLOW)
        return e.fn(value, self)

    def default_mutate(self, value: Any) -> Any:
        if isinstance(value, Var):
            return self.var_map.get(value, value)
        if isinstance(value, Buffer):
            nb = self.buffer_map.get(value)
            if nb is None:  # rebuilt once: every occurrence shares the new buffer
                nb = self.buffer_map[value] = self._deep(value)
            return nb
        return self._deep(value)

    def _deep(self, value: Any) -> Any:
        if self._depth > _HANDOFF and not deep.active():
            return deep.run(self._descend, value)
        return self._descend(value)

    def _descend(self, value: Any) -> Any:
        saved = self._region
        self._depth += 1
        try:
            if isinstance(value, Node):
                return rebuild(value, self._field)
            if isinstance(value, (tuple, list)):
                self._region = _elem_region(saved)
                new = map_tuple(tuple(value), self.mutate)
                if type(value) is tuple:
                    return new
                return value if all(a is b for a, b in zip(value, new)) else type(value)(new)
            if isinstance(value, Mapping):
                self._region = _elem_region(saved)
                d = {k: self.mutate(x) for k, x in value.items()}
                if all(d[k] is x for k, x in value.items()):
                    return value
                return Attrs(d) if isinstance(value, Attrs) else type(value)(d)  # type: ignore[call-arg]
            return value
        finally:
            self._region = saved
            self._depth -= 1

    def _field(self, node: Node, kind: str, v: Any) -> Any:
        """One structural field of ``node`` rewritten (``v`` itself when unchanged)."""
        if (kind is VALUE and not isinstance(v, Node)) or (kind is NODE and v is None):
            return v
        saved = self._region
        self._region = _NONE if kind is VALUE and saved is not _PATTERN else _child_region(node, kind, saved)
        try:
            nv = self.mutate(v)
        finally:
            self._region = saved
        if nv is not v:
            self._check(node, kind, v, nv)
            if kind is not NODE and kind is not VALUE and isinstance(nv, list):
                nv = tuple(nv)
            if kind is ATTRS and not isinstance(nv, Attrs) and isinstance(nv, Mapping):
                nv = Attrs(nv)
        return nv

    def _check(self, node: Node, kind: str, old: Any, new: Any) -> None:
        """A replacement must fit its field: a Var for a definition, a tuple for a list, a
        mapping for attributes, the old value's family (expression, statement, buffer, ...)
        for a child (``None`` only where the field held ``None``)."""
        want: Any
        if kind is DEF:
            want = Var
        elif kind is ATTRS:
            want = Mapping
        elif kind in (SEQ, PARAMS, BUFMAP, FUNCS):
            want = (tuple, list)
        else:
            want = next((f for f in _FAMILIES if isinstance(old, f)), None)
        if want is not None and not isinstance(new, want):
            name = next((n for n, _ in type(node)._sfields if getattr(node, n) is old), "?")
            wname = want.__name__ if isinstance(want, type) else "tuple"
            raise TypeError(
                f"{self._api}: {type(node).__name__}.{name} must be a {wname}, but the callback for "
                f"its {type(old).__name__} returned a {type(new).__name__}"
            )

    def _remap(self, v: Any) -> dict:
        return self.buffer_map if isinstance(v, Buffer) else self.var_map

    # -- the remap cache --------------------------------------------------------------
    def var_remap_get(self, var: Any) -> Any | None:
        """The replacement recorded for ``var`` (a Var or Buffer), or ``None``."""
        _check_remap_key(var, self._api)
        r = self._remap(var).get(var)
        return None if r is var else r

    def var_remap_set(self, var: Any, mapped_value: Any) -> None:
        """Record ``mapped_value`` as ``var``'s replacement: its later uses become it."""
        _check_remap_key(var, self._api)
        self._remap(var)[var] = mapped_value



def _check_remap_key(var: Any, api: str) -> None:
    if not isinstance(var, (Var, Buffer)):
        raise TypeError(f"{api}: var must be a Var or a Buffer, got {type(var).__name__}")


class _Map(StructuralMutator):
    """``structural_map``: ``mutate(x) = post(D(pre(x)))``, callbacks at every occurrence."""

    __slots__ = ("_pre",)

    _api = "structural_map"

    def __init__(self, callbacks: _Callbacks, pre: bool) -> None:
        super().__init__(callbacks)
        self._pre = pre

    def _apply(self, value: Any) -> Any:
        if self._pre:
            return self.default_mutate(self._call(value))
        return self._call(self.default_mutate(value))

    def _call(self, value: Any) -> Any:
        e = self._callbacks.find(value)
        if e is None:
            return value
        return e.fn(value, _kind(self._region)) if e.kind_arg else e.fn(value)


def structural_mutate(root: Any, callbacks: Any = ()) -> Any:
    """Rewrite ``root`` with callbacks that own the descent: the first matching callback
    gets ``(value, mutator)`` (or ``(value, mutator, inplace_mode)`` when it takes three
    arguments; always ``InplaceMode.DISALLOW``) and returns the value's replacement, which is
    final (not traversed again). It rewrites the value's children by
    ``mutator.default_mutate(value)``, chosen ones by ``mutator.mutate(child)``. A value no
    callback matches has its children rewritten. ``root`` itself comes back when nothing
    changed; every node on the path to a change is rebuilt, the rest shared."""
    es = [
        _Entry(t, fn, False, _accepts_mode(fn, "structural_mutate"))
        for t, fn in _entries(callbacks, "structural_mutate", "callbacks")
    ]
    return StructuralMutator(_Callbacks(es)).mutate(root)


def structural_map(
    root: Any,
    callbacks: Any = (),
    with_def_region_kind: Any = (),
    order: str | WalkOrder = "post",
) -> Any:
    """Rewrite ``root`` by replacement callbacks: every value's first matching callback
    (``callbacks``: ``fn(value)``; ``with_def_region_kind``: ``fn(value, DefRegionKind)``)
    returns the value or its replacement. ``order="post"`` (the default) calls it on the
    value with its children already rewritten, ``"pre"`` before, and then rewrites the
    replacement's children. A variable or buffer replaced where it is defined is replaced at
    its later uses too. ``root`` itself comes back when nothing changed. A replacement of
    the wrong kind for its field (a statement for an expression, ``None`` for an operand)
    is a ``TypeError``."""
    return _Map(
        _both(callbacks, with_def_region_kind, "structural_map"), _order(order, "structural_map")
    ).mutate(root)
