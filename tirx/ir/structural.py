"""Structural equality and hash.

Bound variables (params, Bind/Let/For vars, buffer data vars, dynamic shape vars) and
buffers compare up to a consistent renaming; free variables by identity unless
``map_free_vars``. Names never matter except a public function's symbol; spans never
matter; attribute key order and Module function order never matter; float constants
compare exactly with NaN equal to NaN. The hash is deterministic across processes
(strings are hashed with blake2b, never Python's randomized ``hash(str)``).
"""

from __future__ import annotations

import hashlib
import math
import sys
from typing import Any

from .buffer import Buffer
from .expr import BUF_USE, DEF, NODE, SEQ, VALUE, PrimExpr, Var
from .function import BUFMAP, FUNCS, PARAMS, Function, Module
from .node import Attrs, Node
from .op import Op
from .stmt import ATTRS, BUF_DEF
from .types import Type

__all__ = ["assert_structural_equal", "structural_equal", "structural_hash"]

_MASK = (1 << 64) - 1
_RECURSION = 20000


class _Recursion:
    """Raise the recursion limit for deep (but legal) IR trees."""

    def __enter__(self):
        self.old = sys.getrecursionlimit()
        if self.old < _RECURSION:
            sys.setrecursionlimit(_RECURSION)

    def __exit__(self, *exc):
        sys.setrecursionlimit(self.old)


# ------------------------------------------------------------------------ equality
class _Equal:
    __slots__ = ("bmap", "defining", "map_free", "path", "rbmap", "rmap", "vmap")

    def __init__(self, map_free: bool):
        self.vmap: dict = {}
        self.rmap: dict = {}
        self.bmap: dict = {}
        self.rbmap: dict = {}
        self.map_free = map_free
        self.defining = False
        self.path: list | None = None

    def fail(self, *seg: Any) -> bool:
        if self.path is not None:
            self.path.extend(reversed(seg))
        return False

    def var_use(self, a: Var, b: Any) -> bool:
        if type(b) is not Var:
            return self.fail(f"<Var vs {type(b).__name__}>")
        m = self.vmap.get(a)
        if m is not None:
            return m is b or self.fail(f"<var {a.name} bound to a different var than {b.name}>")
        if b in self.rmap:
            return self.fail(f"<var {b.name} already bound>")
        if self.map_free or self.defining:
            if a.ty != b.ty:
                return self.fail(f"<var dtype {a.ty} vs {b.ty}>")
            self.vmap[a] = b
            self.rmap[b] = a
            return True
        return a is b or self.fail(f"<free var {a.name} vs {b.name}>")

    def var_def(self, a: Any, b: Any) -> bool:
        if type(a) is not Var or type(b) is not Var:
            return self.fail("<var def>")
        m = self.vmap.get(a)
        if m is not None:
            return m is b or self.fail(f"<var {a.name} redefined inconsistently>")
        if b in self.rmap:
            return self.fail(f"<var {b.name} already bound>")
        if a.ty != b.ty:
            return self.fail(f"<var dtype {a.ty} vs {b.ty}>")
        self.vmap[a] = b
        self.rmap[b] = a
        return True

    def buf_def(self, a: Any, b: Any) -> bool:
        if type(a) is not Buffer or type(b) is not Buffer:
            return self.fail("<buffer>")
        m = self.bmap.get(a)
        if m is not None:
            return m is b or self.fail(f"<buffer {a.name} bound inconsistently>")
        if b in self.rbmap:
            return self.fail(f"<buffer {b.name} already bound>")
        if not self.fields(a, b):
            return self.fail(f"<buffer {a.name}>")
        self.bmap[a] = b
        self.rbmap[b] = a
        return True

    def buf_use(self, a: Any, b: Any) -> bool:
        m = self.bmap.get(a)
        if m is not None:
            return m is b or self.fail(f"<buffer {a.name} vs {getattr(b, 'name', b)}>")
        return self.buf_def(a, b)

    def node(self, a: Any, b: Any) -> bool:
        if a is None or b is None:
            return a is b or self.fail("<None>")
        ta = type(a)
        if ta is not type(b):
            return self.fail(f"<{ta.__name__} vs {type(b).__name__}>")
        if ta is Var:
            return self.var_use(a, b)
        return self.fields(a, b)

    def fields(self, a: Any, b: Any) -> bool:
        for name, kind in a._sfields:
            x = getattr(a, name)
            y = getattr(b, name)
            if kind is NODE:
                if x is None or y is None:
                    if x is not y:
                        return self.fail(name)
                    continue
                tx = type(x)
                if tx is not type(y):
                    return self.fail(name, f"<{tx.__name__} vs {type(y).__name__}>")
                ok = self.var_use(x, y) if tx is Var else self.fields(x, y)
                if not ok:
                    return self.fail(name)
            elif kind is VALUE:
                if not self.value(x, y):
                    return self.fail(name, f"<{x!r} vs {y!r}>")
            elif kind is SEQ:
                if len(x) != len(y):
                    return self.fail(name, f"<length {len(x)} vs {len(y)}>")
                for i, (p, q) in enumerate(zip(x, y)):
                    if not self.node(p, q):
                        return self.fail(name, f"[{i}]")
            elif kind is DEF:
                if not self.var_def(x, y):
                    return self.fail(name)
            elif kind is BUF_USE:
                if not self.buf_use(x, y):
                    return self.fail(name)
            elif kind is BUF_DEF:
                if not self.buf_def(x, y):
                    return self.fail(name)
            elif kind is ATTRS:
                if not self.attrs(x, y):
                    return self.fail(name)
            elif kind is PARAMS:
                if len(x) != len(y):
                    return self.fail(name, f"<{len(x)} vs {len(y)} params>")
                for i, (p, q) in enumerate(zip(x, y)):
                    if not self.var_def(p, q):
                        return self.fail(name, f"[{i}]")
            elif kind is BUFMAP:
                if len(x) != len(y):
                    return self.fail(name)
                self.defining = True
                try:
                    for i, ((pv, pb), (qv, qb)) in enumerate(zip(x, y)):
                        if not (self.var_use(pv, qv) and self.buf_def(pb, qb)):
                            return self.fail(name, f"[{i}]")
                finally:
                    self.defining = False
            elif kind is FUNCS:
                if len(x) != len(y):
                    return self.fail(name, "<function count>")
                ib = {f.name: f for f in y}
                for f in x:
                    g = ib.get(f.name)
                    if g is None:
                        return self.fail(name, f"<missing function {f.name}>")
                    sub = _Equal(self.map_free)
                    sub.path = self.path
                    if not sub.function(f, g):
                        return self.fail(name, f"[{f.name!r}]")
            else:  # pragma: no cover
                raise AssertionError(kind)
        return True

    def function(self, a: Function, b: Function) -> bool:
        if not a.private and a.name != b.name:
            return self.fail(f"<function name {a.name} vs {b.name}>")
        return self.fields(a, b)

    def value(self, x: Any, y: Any) -> bool:
        if type(x) is float and type(y) is float:
            if x != x:
                return y != y
            return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)
        if isinstance(x, Node) or isinstance(y, Node):
            return self.node(x, y)
        if isinstance(x, tuple) and isinstance(y, tuple):
            return len(x) == len(y) and all(self.value(p, q) for p, q in zip(x, y))
        if isinstance(x, Attrs) and isinstance(y, Attrs):
            return self.attrs(x, y)
        return type(x) is type(y) and x == y

    def attrs(self, x: Attrs, y: Attrs) -> bool:
        if len(x) != len(y):
            return False
        for k, v in x.items():
            if k not in y or not self.value(v, y[k]):
                return self.fail(f"[{k!r}]")
        return True


def _top_equal(a: Any, b: Any, eq: _Equal) -> bool:
    if isinstance(a, Function) and isinstance(b, Function):
        return eq.function(a, b)
    if isinstance(a, Node):
        return eq.node(a, b)
    return eq.value(a, b)


def structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> bool:
    """True when ``a`` and ``b`` are the same IR up to renaming of bound variables."""
    if a is b:
        return True
    with _Recursion():
        return _top_equal(a, b, _Equal(map_free_vars))


def assert_structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> None:
    """Raise ``ValueError`` naming the access path of the first mismatch, with both texts."""
    if a is b:
        return
    eq = _Equal(map_free_vars)
    eq.path = []
    with _Recursion():
        ok = _top_equal(a, b, eq)
    if ok:
        return
    path = "root" + "".join(p if p.startswith(("[", "<")) else "." + p for p in reversed(eq.path))
    msg = f"structural mismatch at {path}"
    try:
        from tirx.printer import dumps

        msg += f"\n--- lhs ---\n{dumps(a)}\n--- rhs ---\n{dumps(b)}"
    except Exception as e:  # the printer is a debugging aid here; never mask the mismatch
        msg += f"\n(printing failed: {type(e).__name__}: {e})"
    raise ValueError(msg)


# ------------------------------------------------------------------------ hash
_STR_H: dict[str, int] = {}


def _hs(s: str) -> int:
    h = _STR_H.get(s)
    if h is None:
        h = int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little")
        _STR_H[s] = h
    return h


_TYPE_H: dict[Any, int] = {}
_CLS_H: dict[type, int] = {}


def _ht(t: Any) -> int:
    h = _TYPE_H.get(t)
    if h is None:
        h = _TYPE_H[t] = _hs("type:" + repr(t))
    return h


def _mix(h: int, x: int) -> int:
    return ((h ^ x) * 0x100000001B3 + 0x9E3779B97F4A7C15) & _MASK


class _Hash:
    __slots__ = ("bidx", "defining", "map_free", "vidx")

    def __init__(self, map_free: bool):
        self.vidx: dict = {}
        self.bidx: dict = {}
        self.map_free = map_free
        self.defining = False

    def var_use(self, v: Var) -> int:
        i = self.vidx.get(v)
        if i is not None:
            return _mix(0x5151, i)
        if self.map_free or self.defining:
            i = self.vidx[v] = len(self.vidx)
            return _mix(_mix(0x5151, i), _ht(v.ty))
        return _mix(_mix(0x7777, _hs(v.name)), _ht(v.ty))

    def var_def(self, v: Var) -> int:
        i = self.vidx.get(v)
        if i is None:
            i = self.vidx[v] = len(self.vidx)
        return _mix(_mix(0xDEF, i), _ht(v.ty))

    def buf_def(self, b: Buffer) -> int:
        i = self.bidx.get(b)
        if i is not None:
            return _mix(0xB0F, i)
        h = self.fields(b, 0xBDEF)
        self.bidx[b] = len(self.bidx)
        return h

    def node(self, x: Any) -> int:
        if x is None:
            return 0x0
        if type(x) is Var:
            return self.var_use(x)
        return self.fields(x, 0)

    def fields(self, x: Any, h: int) -> int:
        cls = type(x)
        ch = _CLS_H.get(cls)
        if ch is None:
            ch = _CLS_H[cls] = _hs("cls:" + cls.__name__)
        h = _mix(h, ch)
        for name, kind in cls._sfields:
            v = getattr(x, name)
            if kind is NODE:
                if v is None:
                    h = _mix(h, 1)
                elif type(v) is Var:
                    h = _mix(h, self.var_use(v))
                else:
                    h = _mix(h, self.fields(v, 0))
            elif kind is VALUE:
                h = _mix(h, self.value(v))
            elif kind is SEQ:
                h = _mix(h, len(v))
                for e in v:
                    h = _mix(h, self.node(e))
            elif kind is DEF:
                h = _mix(h, self.var_def(v))
            elif kind is BUF_USE:
                i = self.bidx.get(v)
                h = _mix(h, _mix(0xB0F, i) if i is not None else self.buf_def(v))
            elif kind is BUF_DEF:
                h = _mix(h, self.buf_def(v))
            elif kind is ATTRS:
                h = _mix(h, self.attrs(v))
            elif kind is PARAMS:
                h = _mix(h, len(v))
                for p in v:
                    h = _mix(h, self.var_def(p))
            elif kind is BUFMAP:
                self.defining = True
                try:
                    for pv, pb in v:
                        h = _mix(_mix(h, self.var_use(pv)), self.buf_def(pb))
                finally:
                    self.defining = False
            elif kind is FUNCS:
                acc = 0
                for f in v:
                    acc = (acc + _hash_function(f, self.map_free)) & _MASK
                h = _mix(h, acc)
        return h

    def value(self, v: Any) -> int:
        t = type(v)
        if t is int:
            return v & _MASK if v >= 0 else _mix(0x1E6, (-v) & _MASK)
        if t is str:
            return _hs(v)
        if t is float:
            if v != v:
                return 0xA4A4
            return _hs(float.hex(v))
        if t is bool:
            return 0x7 if v else 0x3
        if v is None:
            return 0x9
        if isinstance(v, Type):
            return _ht(v)
        if t is Op:
            return _hs("op:" + v.name)
        if isinstance(v, Node):
            return self.node(v)
        if t is tuple:
            h = _mix(0x7A, len(v))
            for e in v:
                h = _mix(h, self.value(e))
            return h
        if t is Attrs:
            return self.attrs(v)
        if hasattr(v, "value") and hasattr(v, "name"):  # enums
            return _hs(f"{t.__name__}.{v.name}")
        return _hs(repr(v))

    def attrs(self, a: Attrs) -> int:
        acc = len(a)
        for k, v in a.items():
            acc = (acc + _mix(_hs(k), self.value(v))) & _MASK
        return acc


def _hash_function(f: Function, map_free: bool) -> int:
    hs = _Hash(map_free)
    h = 0 if f.private else _hs("sym:" + f.name)
    return hs.fields(f, h)


def structural_hash(x: Any, map_free_vars: bool = False) -> int:
    """A 64-bit hash consistent with ``structural_equal``; cached per root object."""
    if isinstance(x, Node):
        cache = _ROOT_CACHE.get(id(x))
        if cache is not None and cache[0] is x and map_free_vars in cache[1]:
            return cache[1][map_free_vars]
    with _Recursion():
        if isinstance(x, Function):
            h = _hash_function(x, map_free_vars)
        elif isinstance(x, Node):
            h = _Hash(map_free_vars).node(x)
        else:
            h = _Hash(map_free_vars).value(x)
    if isinstance(x, Node):
        _remember(x, map_free_vars, h)
    return h


# root-hash cache: keeps the object alive so ids stay valid; bounded size
_ROOT_CACHE: dict[int, tuple[Any, dict]] = {}
_ROOT_CACHE_MAX = 4096


def _remember(x: Node, map_free: bool, h: int) -> None:
    ent = _ROOT_CACHE.get(id(x))
    if ent is None or ent[0] is not x:
        if len(_ROOT_CACHE) >= _ROOT_CACHE_MAX:
            _ROOT_CACHE.pop(next(iter(_ROOT_CACHE)))
        ent = _ROOT_CACHE[id(x)] = (x, {})
    ent[1][map_free] = h


_ = (PrimExpr, Module)
