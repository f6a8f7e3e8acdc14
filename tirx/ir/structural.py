"""Structural equality and hash.

Vars and buffers are bound only where they are defined: function params (with the buffer
map and the dynamic shape vars it introduces), ``Bind`` / ``Let`` / ``For`` vars,
``AllocBuffer`` (the buffer and its data pointer) and ``DeclBuffer`` (the buffer; the
pointer it views is a use). Bound ones compare up to a consistent renaming. A var or a
buffer *used* (in a ``BufferLoad`` / ``BufferStore``, an attr value, as the root) that is
not bound in the compared trees is free: it equals only itself unless ``map_free_vars``,
which maps free vars and buffers one-to-one (dtype and shape still exact). In a ``Module``
a var free in its functions is the module's (TIRx's module-level ``n = T.dynamic(...)``): the
free vars of a module map one-to-one across all its functions (dtype exact), so two loads of
one module's text are equal and a var shared by two functions must stay shared. So ``A[i]`` and
``C[i]`` over two parameter buffers differ, as sub-expressions of one function must for
the passes that compare them (Simplify's ``x - x``). Names never matter except a public
function's symbol; spans never matter; attribute key order and Module function order
never matter; float constants compare exactly: a NaN equals a NaN with the same bits (sign
and payload), and ``-0.0`` differs from ``0.0``. A free buffer hashes by its name, dtype,
pointer type and rank (equal only to itself, it needs nothing more to keep equal => same hash).

Bindings are scoped as the verifier scopes them: a ``Let`` var is bound in the Let's body,
a ``For`` var in the loop body, a ``Bind`` / ``AllocBuffer`` / ``DeclBuffer`` until its
enclosing body (loop, branch, device entry, attr, function) ends. When the scope closes
the binding is dropped (an undo trail), so one binder node used twice (a shared ``Let``
in a loop's start and extent, one ``For`` node twice in a body) equals the two distinct
binders its text loads as; an inner binding shadows an outer one. The hash numbers each
binding by its place in traversal order, so it follows the same rule. A ``SeqStmt`` is not
a scope: statement sequences compare and hash *flattened* (nested sequences spliced in),
and a one-statement sequence equals its statement -- they print alike.

The hash is deterministic across processes and Python versions: strings are hashed with
blake2b (cached), never with Python's randomized ``hash(str)``; everything else is
combined with CPython's tuple hash over ints and floats, which has no per-process seed and
has not changed since 3.8 (64-bit builds; the tests compare 3.11 with 3.12).

Speed: for every node class the comparer and the hasher are *generated code*: one
specialised function per class, written from the class's ``_sfields`` once (the first
time it is needed) and closed over per-call state (variable maps) held in a small pool,
so a traversal step is a dict lookup on ``type(node)`` plus a direct call, with no
generic field loop. ``structural_hash`` caches its result in the root node's spare
``_shash`` slot (a second hash of the same root is O(1)), and ``structural_equal(x, x)``
is O(1). ``assert_structural_equal`` explains a mismatch by running the same comparer
again with a path list: each mismatch returns ``fail(segments)``, which records the
segments only when explaining, so the binding rules exist once (the hasher's follow them).
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Callable
from typing import Any

from . import deep
from .buffer import Buffer
from .expr import BUF_USE, DEF, NODE, SEQ, VALUE, FloatImm, IntImm, PrimExpr, StringImm, Var
from .function import BUFMAP, FUNCS, PARAMS, Function
from .node import Attrs, Node, print_text
from .op import Op
from .stmt import ATTRS, BUF_DEF, STRUCTURAL_EQUAL, AllocBuffer, SeqStmt, flat_stmts
from .types import TensorType, Type

__all__ = ["assert_structural_equal", "structural_equal", "structural_hash"]

_MASK = (1 << 64) - 1


def _deep(fn, *args):
    """Run ``fn(*args)``; a tree too deep for this thread's stack is retried on the
    large-stack worker (``tirx.ir.deep``), and one too deep even there is a ValueError."""
    return deep.call(fn, *args)


# ------------------------------------------------------------------------ string / value hashing
_STR_H: dict[str, int] = {}


def _hs(s: str) -> int:
    """Deterministic 63-bit hash of a string (blake2b, cached)."""
    h = _STR_H.get(s)
    if h is None:
        h = int.from_bytes(
            hashlib.blake2b(s.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little"
        )
        h &= (1 << 63) - 1
        if len(_STR_H) < 1 << 16:
            _STR_H[s] = h
    return h


_NAN_H = 0x4E614E
_NEG1_H = 0x6E656731
_NONE_H = 0x4E6F6E65  # the small ints a node field can hold stay clear of these tokens
_TRUE_H = 0x54727565
_FALSE_H = 0x46616C73
_CLS_H: dict[type, int] = {}


def _cls_h(cls: type) -> int:
    h = _CLS_H.get(cls)
    if h is None:
        h = _CLS_H[cls] = _hs("cls:" + cls.__name__)
    return h


def _nan_bits(v: float) -> int:
    """A NaN's bits (sign and payload matter: a GPU computes with them, issue #29)."""
    return struct.unpack("<Q", struct.pack("<d", v))[0]


_PLAIN_NAN = _nan_bits(math.nan)  # float("nan"): its hash stays _NAN_H


def _hfloat(v: float) -> int:
    # hash(float) is value-based and unseeded; NaN's hash is per-object, so pin it (by its
    # bits), and tell -0.0 from 0.0 (they compare unequal structurally)
    if v != v:
        b = _nan_bits(v)
        return _NAN_H if b == _PLAIN_NAN else hash((_NAN_H, b))
    if v == 0.0:
        return 0x2E30 if math.copysign(1.0, v) > 0 else 0x2D30
    return hash(v)


def _hint(v: int) -> int:
    # hash(-1) == hash(-2) in CPython; keep the two constants apart
    return v if v != -1 else _NEG1_H


def _float_eq(x: float, y: float) -> bool:
    if x == y:
        return x != 0.0 or math.copysign(1.0, x) == math.copysign(1.0, y)
    return x != x and y != y and _nan_bits(x) == _nan_bits(y)


# ------------------------------------------------------------------------ code generation
def _concrete_node_classes() -> list[type[Node]]:
    out: list[type[Node]] = []
    stack: list[type[Node]] = [Node]
    seen: set[type[Node]] = set()
    while stack:
        c = stack.pop()
        for s in c.__subclasses__():
            if s not in seen:
                seen.add(s)
                stack.append(s)
                if "__attrs_attrs__" in s.__dict__:
                    out.append(s)
    out.sort(key=lambda c: (c.__module__, c.__qualname__))
    return out


# VALUE fields whose type is fixed by construction, so the generated code can skip the
# generic value dispatch.
_INT_FIELDS = {(IntImm, "value"), (Var, "_"), ("*", "lanes")}
_FLOAT_FIELDS = {(FloatImm, "value")}
_STR_FIELDS = {(StringImm, "value")}


def _field_kind(cls: type[Node], name: str, kind: str) -> str:
    if cls is Buffer and name == "data":
        return "skip"  # compared/hashed by the definition or use of the buffer (_bind)
    if kind is BUF_DEF and cls is not AllocBuffer:
        return "bdecl"  # a declaration over an existing pointer: the pointer is a use
    if kind is VALUE:
        if name == "ty" and issubclass(cls, PrimExpr):
            return "ty"
        if (cls, name) in _INT_FIELDS or (name == "lanes" and issubclass(cls, PrimExpr)):
            return "int"
        if (cls, name) in _FLOAT_FIELDS:
            return "float"
        if (cls, name) in _STR_FIELDS:
            return "str"
    return kind


_SCOPES: dict[type, tuple[frozenset, frozenset]] = {}


def _scope_marks(cls: type[Node]) -> tuple[frozenset, frozenset]:
    """Field indices before which a binding scope opens and after which it closes.

    A scope body (a field declared ``child(..., body=True)``: a loop's or branch's
    statements, a Let's body) is one scope; a var or buffer
    defined by the node before its body (``For.var``, ``Let.var``) belongs to that scope.
    Whatever is bound inside (Binds, allocations, loop and Let vars) is dropped when the
    scope closes, so the same object can be bound again elsewhere."""
    r = _SCOPES.get(cls)
    if r is not None:
        return r
    fields, bodies = cls._sfields, cls._sbodies  # the bodies: declared with child(..., body=True)
    opens, closes, is_open = set(), set(), False
    for i, (name, kind) in enumerate(fields):
        if name in bodies:
            if not is_open:
                opens.add(i)
            closes.add(i)
            is_open = False
        elif (
            kind in (DEF, BUF_DEF, PARAMS)
            and not is_open
            and cls is not Function  # a function is a whole root: params stay bound
            and any(n in bodies for n, _ in fields[i + 1 :])
        ):
            opens.add(i)
            is_open = True
    r = _SCOPES[cls] = (frozenset(opens), frozenset(closes))
    return r


# Field kinds whose hash / equality is one prelude helper each: ``h<name>(x)`` and
# ``e<name>(a, b)`` in the generated code (the node, scalar and type kinds are inlined).
_HELPERS: dict[Any, str] = {
    SEQ: "seq",
    DEF: "def",
    BUF_USE: "buse",
    BUF_DEF: "bdef",
    "bdecl": "bdecl",
    ATTRS: "attrs",
    PARAMS: "params",
    BUFMAP: "bufmap",
    FUNCS: "funcs",
}


def _gen_hash(cls: type[Node], fn: str, seed: str) -> str:
    lines = [f"    def {fn}(x):"]
    parts = [seed]
    opens, closes = _scope_marks(cls)
    for i, (name, kind) in enumerate(cls._sfields):
        k = _field_kind(cls, name, kind)
        v = f"x.{name}"
        if i in opens:
            lines.append("        m = len(trail)")
        if opens or closes:  # evaluate in field order so the scope brackets its fields
            n0 = len(parts)
        if k == "ty":
            parts.append(f"{v}._sh")
        elif k == "int":
            lines.append(f"        c{i} = {v}")
            parts.append(f"(c{i} if c{i} != -1 else NEG1)")
        elif k == "float":
            parts.append(f"hfloat({v})")
        elif k == "str":
            parts.append(f"hs({v})")
        elif k is VALUE:
            parts.append(f"hv({v})")
        elif k is NODE:
            lines.append(f"        c{i} = {v}")
            parts.append(f"H[type(c{i})](c{i})")
        elif k == "skip":
            continue
        elif k in _HELPERS:
            parts.append(f"h{_HELPERS[k]}({v})")
        else:  # pragma: no cover - a new field kind needs a helper in _HELPERS
            raise AssertionError(f"{cls.__name__}.{name}: unknown structural kind {kind!r}")
        if (opens or closes) and len(parts) > n0:
            lines.append(f"        h{i} = {parts[-1]}")
            parts[-1] = f"h{i}"
        if i in closes:
            lines.append("        if len(trail) > m: undo(m)")
    lines.append(f"        return hash(({', '.join(parts)},))")
    return "\n".join(lines)


def _gen_equal(cls: type[Node], fn: str) -> str:
    lines = [f"    def {fn}(a, b):"]
    opens, closes = _scope_marks(cls)
    for i, (name, kind) in enumerate(cls._sfields):
        k = _field_kind(cls, name, kind)
        p, q = f"a.{name}", f"b.{name}"
        if i in opens:
            lines.append("        m = len(trail)")
        # a mismatch returns False; explaining (a path list set), fail(segments) records
        # where first (messages are built only then: a node's repr prints it)
        differ = f"return path is not None and fail({name!r}, f'<{{{p}!r}} vs {{{q}!r}}>')"
        if k == "ty":
            lines.append(f"        p = {p}; q = {q}")
            lines.append(f"        if p is not q and p != q: {differ}")
        elif k in ("int", "str"):
            lines.append(f"        if {p} != {q}: {differ}")
        elif k == "float":
            lines.append(f"        if not feq({p}, {q}): {differ}")
        elif k is VALUE:
            lines.append(f"        if not veq({p}, {q}): {differ}")
        elif k is NODE:
            lines.append(f"        p = {p}; q = {q}; t = type(p)")
            lines.append("        if t is not type(q):")
            # a SeqStmt against its flat form, else a mismatch of classes
            lines.append(f"            if not enode(p, q): return path is not None and fail({name!r})")
            lines.append(f"        elif not E[t](p, q): return path is not None and fail({name!r})")
        elif k == "skip":
            continue
        elif k in _HELPERS:
            lines.append(
                f"        if not e{_HELPERS[k]}({p}, {q}): return path is not None and fail({name!r})"
            )
        else:  # pragma: no cover
            raise AssertionError(f"{cls.__name__}.{name}: unknown structural kind {kind!r}")
        if i in closes:
            lines.append("        if len(trail) > m: undo(m)")
    lines.append("        return True")
    return "\n".join(lines)


_HASH_PRELUDE = """
def _make(map_free, G):
    hs = G["hs"]; hfloat = G["hfloat"]; NEG1 = G["NEG1"]; hv_generic = G["hv_generic"]; hash_function = G["hash_function"]
    Var = G["Var"]; NONE_H = G["NONE_H"]; flat = G["flat"]; SeqStmt = G["SeqStmt"]; SEQ_H = G["SEQ_H"]
    vidx = {}
    bidx = {}
    trail = []  # (table, key, previous index or None): bindings to drop when a scope closes
    count = 0  # binding events so far: a binding hashes by its place in traversal order
    defining = False
    in_module = False  # hashing a function of a Module: its free vars are the module's
    H = {}

    def set_module(flag):
        nonlocal in_module
        in_module = flag

    def fresh():
        nonlocal count
        count += 1
        return count

    def undo(m):
        while len(trail) > m:
            d, k, o = trail.pop()
            if o is None:
                del d[k]
            else:
                d[k] = o

    def hnone(x):
        return NONE_H

    def hvar(v):
        i = vidx.get(v)
        if i is not None:
            return i
        if map_free or defining:
            i = vidx[v] = fresh()  # a free var mapped for the whole comparison
            return hash((0x5151, i, v.ty._sh))
        if in_module:  # the module's var, mapped across its functions: only its type is fixed
            return hash((0x5152, v.ty._sh))
        return hash((0x7777, hs(v.name), v.ty._sh))

    def hdef(v):
        trail.append((vidx, v, vidx.get(v)))
        i = vidx[v] = fresh()
        return hash((0xDEF, i, v.ty._sh))

    def hstmts(s):
        # a SeqStmt is not a scope: sequences hash flattened, one statement as itself
        x = flat(s)
        if len(x) == 1:
            e = x[0]
            return H[type(e)](e)
        return hash((SEQ_H, *[H[type(e)](e) for e in x]))

    def hseq(s):
        return hash(tuple([H[type(e)](e) for e in s]))

    def hv(v):
        if type(v) is int and v != -1:
            return v
        return hv_generic(v, H)

    def hbuse(b):
        i = bidx.get(b)
        if i is not None:
            return hash((0xB0F, i))
        if map_free:
            return hbind(b, False, False)
        # free: equal only to itself, so anything fixed by the object will do; nothing
        # that depends on the traversal state (a bound data or shape var) may enter
        return hash((0xFB0F, hs(b.name), b.dtype._sh, b.data.ty._sh, len(b.shape)))

    def hbind(b, data_def, scoped=True):
        d = b.data
        h = hash((hdef(d) if data_def else hvar(d), bfields(b)))
        if scoped:
            trail.append((bidx, b, bidx.get(b)))
        bidx[b] = fresh()
        return h

    def hbdef(b):
        return hbind(b, True)

    def hbdecl(b):
        return hbind(b, False)

    def hattrs(a):
        if not a:
            return 0xA7
        d = a._d
        return hash(tuple([(hs(k), hv(d[k])) for k in sorted(d)]))

    def hparams(ps):
        return hash(tuple([hdef(p) for p in ps]))

    def hbufmap(bm):
        nonlocal defining
        defining = True
        try:
            return hash(tuple([(hvar(v), hbind(b, False)) for v, b in bm]))
        finally:
            defining = False

    def hfuncs(fs):
        acc = 0
        for f in fs:
            acc = (acc + hash_function(f, map_free, True)) & 0xFFFFFFFFFFFFFFFF
        return acc

    def reset():
        nonlocal defining, count, in_module
        vidx.clear()
        bidx.clear()
        trail.clear()
        count = 0
        defining = False
        in_module = False

    def finish():
        # the generated Buffer hasher hashes the fields; a Buffer met as a value is a use
        nonlocal bfields
        bfields = H[Buffer_cls]
        H[Buffer_cls] = hbuse
        H[SeqStmt] = hstmts

    bfields = None
    Buffer_cls = G["Buffer"]
    C = G["C"]
    H[type(None)] = hnone
    H[Var] = hvar
    H[G["AttrsTag"]] = hattrs
    H[G["ModuleTag"]] = set_module
"""

_EQ_PRELUDE = """
def _make(map_free, G):
    feq = G["feq"]; veq_generic = G["veq_generic"]; equal_function = G["equal_function"]
    Var = G["Var"]; bind = G["bind_pair"]; undo_to = G["undo"]; flat = G["flat"]; SeqStmt = G["SeqStmt"]
    SHADOW = G["SHADOW"]
    vmap = {}
    rmap = {}
    bmap = {}
    rbmap = {}
    trail = []  # (table, key, previous value or None): bindings to drop when a scope closes
    defining = False
    mfree = None  # comparing functions of Modules: (left -> right, right -> left) of their free vars
    path = None  # explaining a mismatch: its access path, innermost segment first
    E = {}

    def set_module(m):
        nonlocal mfree
        mfree = m

    def set_path(p):
        nonlocal path
        path = p

    def fail(*seg):
        # False; when explaining, the mismatch's path segments (called only on a mismatch)
        if path is not None:
            path.extend(reversed(seg))
        return False

    def undo(m):
        undo_to(trail, m)

    def enone(a, b):
        return True

    def evar(a, b):
        m = vmap.get(a)
        if m is not None:
            return m is b or (path is not None and fail(
                f"<var {a.name} is shadowed here, {b.name} is not>" if m is SHADOW
                else f"<var {a.name} bound to a different var than {b.name}>"
            ))
        if b in rmap:
            return path is not None and fail(f"<var {b.name} already bound>")
        if defining or (map_free and mfree is None):
            p = a.ty; q = b.ty
            if p is not q and p != q:
                return path is not None and fail(f"<var dtype {p} vs {q}>")
            vmap[a] = b
            rmap[b] = a
            return True
        if mfree is not None:  # the modules' var: one partner across all their functions
            fw, bw = mfree
            m = fw.get(a)
            if m is not None:
                return m is b or (path is not None and fail(f"<module var {a.name} bound to a different var than {b.name}>"))
            if b in bw:
                return path is not None and fail(f"<module var {b.name} already bound>")
            p = a.ty; q = b.ty
            if p is not q and p != q:
                return path is not None and fail(f"<var dtype {p} vs {q}>")
            fw[a] = b
            bw[b] = a
            return True
        return a is b or (path is not None and fail(f"<free var {a.name} vs {b.name}>"))

    def edef(a, b):
        if type(a) is not Var or type(b) is not Var:
            return path is not None and fail("<var def>")
        p = a.ty; q = b.ty
        if p is not q and p != q:
            return path is not None and fail(f"<var dtype {p} vs {q}>")
        bind(trail, vmap, rmap, a, b)
        return True

    def estmts(a, b):
        # a SeqStmt is not a scope: sequences compare flattened, one statement as itself
        x = flat(a); y = flat(b)
        if len(x) != len(y):
            return path is not None and fail(seqseg(a, x), f"<length {len(x)} vs {len(y)}>")
        for p, q in zip(x, y):
            t = type(p)
            if t is not type(q):  # flattened: no SeqStmt left on either side
                return path is not None and fail(seqseg(a, x), at(x, p), tmis(p, q))
            if not E[t](p, q):
                return path is not None and fail(seqseg(a, x), at(x, p))
        return True

    def at(x, p):
        # the path segment of element ``p`` of ``x`` (only when explaining a mismatch)
        return f"[{next(i for i, e in enumerate(x) if e is p)}]"

    def seqseg(a, x):
        # the plain path (``stmts``) when nothing was flattened on the left
        return "stmts" if type(a) is SeqStmt and x is a.stmts else "<flattened>"

    def enode(p, q):
        # two nodes of different classes: a SeqStmt against its flat form, else a mismatch
        if type(p) is SeqStmt or type(q) is SeqStmt:
            return estmts(p, q)
        return path is not None and fail(tmis(p, q))

    def eseq(x, y):
        if len(x) != len(y):
            return path is not None and fail(f"<length {len(x)} vs {len(y)}>")
        for p, q in zip(x, y):
            t = type(p)
            if t is not type(q):
                return path is not None and fail(at(x, p), tmis(p, q))
            if not E[t](p, q):
                return path is not None and fail(at(x, p))
        return True

    def tmis(p, q):
        return "<None>" if p is None or q is None else f"<{type(p).__name__} vs {type(q).__name__}>"

    def veq(x, y):
        if type(x) is int and type(y) is int:
            return x == y
        return veq_generic(x, y, E)

    def ebuse(a, b):
        m = bmap.get(a)
        if m is not None:
            return m is b or (path is not None and fail(f"<buffer {a.name} vs {b.name}>"))
        if b in rbmap:
            return path is not None and fail(f"<buffer {b.name} already bound>")
        if map_free:
            return ebind(a, b, False, False)
        return a is b or (path is not None and fail(f"<free buffer {a.name} vs {b.name}>"))

    def ebind(a, b, data_def, scoped=True):
        if type(a) is not Buffer_cls or type(b) is not Buffer_cls:
            return path is not None and fail("<buffer>")
        if data_def:
            if not edef(a.data, b.data):
                return path is not None and fail(f"<buffer {a.name}>", "data")
        elif not evar(a.data, b.data):
            return path is not None and fail(f"<buffer {a.name}>", "data")
        if not bfields(a, b):
            return path is not None and fail(f"<buffer {a.name}>")
        if scoped:
            bind(trail, bmap, rbmap, a, b)
        else:  # a free buffer mapped for the whole comparison (both sides unbound here)
            bmap[a] = b
            rbmap[b] = a
        return True

    def ebdef(a, b):
        return ebind(a, b, True)

    def ebdecl(a, b):
        return ebind(a, b, False)

    def eattrs(x, y):
        if x is y and not x:
            return True
        if len(x) != len(y):
            return path is not None and fail(f"<{len(x)} vs {len(y)} entries>")
        d = y._d
        for k, v in x._d.items():
            if k not in d:
                return path is not None and fail(f"<key {k!r} missing>")
            if not veq(v, d[k]):
                return path is not None and fail(f"[{k!r}]")
        return True

    def eparams(x, y):
        if len(x) != len(y):
            return path is not None and fail(f"<{len(x)} vs {len(y)} params>")
        for p, q in zip(x, y):
            if not edef(p, q):
                return path is not None and fail(at(x, p))
        return True

    def ebufmap(x, y):
        nonlocal defining
        if len(x) != len(y):
            return path is not None and fail(f"<{len(x)} vs {len(y)} entries>")
        defining = True
        try:
            for e, ((pv, pb), (qv, qb)) in zip(x, zip(x, y)):
                if type(pv) is not Var or type(qv) is not Var:
                    return path is not None and fail(at(x, e), tmis(pv, qv))
                if not evar(pv, qv) or not ebind(pb, qb, False):
                    return path is not None and fail(at(x, e))
            return True
        finally:
            defining = False

    def efuncs(x, y):
        if len(x) != len(y):
            return path is not None and fail(f"<{len(x)} vs {len(y)} functions>")
        by_name = {f.name: f for f in y}
        if len(by_name) != len(y):
            return path is not None and fail("<two functions of one name>")
        mf = ({}, {})
        for f in x:
            g = by_name.get(f.name)
            if g is None:
                return path is not None and fail(f"<missing function {f.name}>")
            if not equal_function(f, g, map_free, mf, path):
                return path is not None and fail(f"[{f.name!r}]")
        return True

    def reset():
        nonlocal defining, mfree, path
        vmap.clear()
        rmap.clear()
        bmap.clear()
        rbmap.clear()
        trail.clear()
        defining = False
        mfree = None
        path = None

    def finish():
        # the generated Buffer comparer compares the fields; a Buffer met as a value is a use
        nonlocal bfields
        bfields = E[Buffer_cls]
        E[Buffer_cls] = ebuse
        E[SeqStmt] = estmts

    bfields = None
    Buffer_cls = G["Buffer"]
    C = G["C"]
    E[type(None)] = enone
    E[Var] = evar
    E[G["AttrsTag"]] = eattrs
    E[G["ModuleTag"]] = set_module
    E[G["PathTag"]] = set_path
"""


class _GEN_KEY:
    """Key under which a generated table records the factory that made it."""


class _Gen:
    """Generated per-class code for one family (hash or equal), rebuilt when new node classes appear."""

    def __init__(self, prelude: str, gen, table: str):
        self.prelude = prelude
        self.gen = gen
        self.table = table
        self.classes: tuple = ()
        self.make: Callable[[bool], Any] | None = None
        self.pools: dict[bool, list] = {False: [], True: []}

    def refresh(self) -> None:
        classes = tuple(c for c in _concrete_node_classes() if c is not Var)
        if classes == self.classes and self.make is not None:
            return
        src = [self.prelude]
        names = []
        for i, c in enumerate(classes):
            fn = f"f{i}_{c.__name__}"
            if self.gen is _gen_hash:
                src.append(_gen_hash(c, fn, f"{_cls_h(c)}"))
            else:
                src.append(_gen_equal(c, fn))
            names.append(f"    {self.table}[C[{i}]] = {fn}")
        src.extend(names)
        src.append("    finish()")
        src.append(f"    return {self.table}, reset")
        ns: dict[str, Any] = {}
        code = compile("\n".join(src), f"<tirx.structural {self.table}>", "exec")
        exec(code, ns)  # generated from the node classes' _sfields, no user input
        make = ns["_make"]
        env = dict(_G, C=classes)
        self.classes = classes

        def make_inst(mf: bool, make=make, env=env):
            inst = make(mf, env)
            inst[0][_GEN_KEY] = make_inst
            return inst

        self.make = make_inst
        self.pools = {False: [], True: []}

    def acquire(self, map_free: bool):
        pool = self.pools[map_free]
        if pool:
            return pool.pop()
        if self.make is None:
            self.refresh()
            assert self.make is not None  # refresh() built it
        return self.make(map_free)

    def release(self, map_free: bool, inst) -> None:
        inst[1]()
        pool = self.pools[map_free]
        # an instance made before a regeneration lacks the new classes: let it go
        if len(pool) < 8 and inst[0].get(_GEN_KEY) is self.make:
            pool.append(inst)


_HASH = _Gen(_HASH_PRELUDE, _gen_hash, "H")
_EQ = _Gen(_EQ_PRELUDE, _gen_equal, "E")


def _run_hash(x: Any, map_free: bool) -> int:
    inst = _HASH.acquire(map_free)
    try:
        return inst[0][type(x)](x)
    finally:
        _HASH.release(map_free, inst)


def _run_equal(a: Any, b: Any, map_free: bool, path: list | None = None) -> bool:
    inst = _EQ.acquire(map_free)
    try:
        if path is not None:
            inst[0][_PathTag](path)
        return inst[0][SeqStmt if type(b) is SeqStmt else type(a)](a, b)
    finally:
        _EQ.release(map_free, inst)


def _hv_generic(v: Any, H: dict) -> int:
    t = type(v)
    if t is str:
        return _hs(v)
    if t is float:
        return _hfloat(v)
    if t is bool:
        return _TRUE_H if v else _FALSE_H
    if v is None:
        return _NONE_H
    if t is TensorType:  # its dimensions may be variables (a return type's): hashed as nodes
        return hash((0x7B, *[_hv_generic(getattr(v, f), H) for f in _TENSOR_FIELDS]))
    if isinstance(v, Type):
        return v._sh
    if t is Op:
        return _hs("op:" + v.name)
    if isinstance(v, Node):
        f = H.get(t)
        if f is None:
            raise _Regenerate(t)
        return f(v)
    if t is tuple or t is list:
        return hash((0x7A, *[_hv_generic(e, H) for e in v]))
    if t is Attrs:
        return H[_AttrsTag](v)
    if t is int:
        return _hint(v)
    if hasattr(v, "value") and hasattr(v, "name"):  # enums
        return _hs(f"{t.__name__}.{v.name}")
    return _hs(f"{t.__name__}:{v!r}")


class _AttrsTag:
    """Key under which the generated hash table exposes its attrs hasher."""


class _ModuleTag:
    """Key under which a generated table exposes its setter for comparing (hashing) the
    functions of a Module: their free vars are the module's."""


class _PathTag:
    """Key under which a generated equality table exposes its setter for the access-path
    list a mismatch is explained into (``assert_structural_equal``)."""


class _Regenerate(Exception):
    """A node class unknown to the generated code was met; regenerate and retry."""


#: the fields of a TensorType value compared (and hashed) one by one, variables as nodes
_TENSOR_FIELDS = ("shape", "dtype", "scope", "strides", "align", "elem_offset", "data", "layout")


def _veq_generic(x: Any, y: Any, E: dict) -> bool:
    tx = type(x)
    if tx is not type(y):
        return False
    if tx is float:
        return _float_eq(x, y)
    if tx is TensorType:
        return all(_veq_generic(getattr(x, f), getattr(y, f), E) for f in _TENSOR_FIELDS)
    if isinstance(x, Node):
        f = E.get(tx)
        if f is None:
            raise _Regenerate(tx)
        return f(x, y)
    if tx is tuple or tx is list:
        if len(x) != len(y):
            return False
        for p, q in zip(x, y):
            if type(p) is int and type(q) is int:
                if p != q:
                    return False
            elif not _veq_generic(p, q, E):
                return False
        return True
    if tx is Attrs:
        return E[_AttrsTag](x, y)
    return x == y


_SHADOW = object()  # in a binding table: bound, but hidden by an inner binding of its partner
_SEQ_H = 0x536571


def _bind_pair(trail: list, fw: dict, bw: dict, a: Any, b: Any) -> None:
    """Bind ``a`` (left tree) to ``b`` (right tree) until the scope closes, recording in
    ``trail`` every table entry changed. An earlier binding of ``a`` (or ``b``) to another
    partner is shadowed: that partner stays bound but matches nothing until ``_undo``."""
    ob = fw.get(a)
    oa = bw.get(b)
    if ob is not None and ob is not b and ob is not _SHADOW:
        trail.append((bw, ob, bw[ob]))
        bw[ob] = _SHADOW
    if oa is not None and oa is not a and oa is not _SHADOW:
        trail.append((fw, oa, fw[oa]))
        fw[oa] = _SHADOW
    trail.append((fw, a, ob))
    fw[a] = b
    trail.append((bw, b, oa))
    bw[b] = a


def _undo(trail: list, m: int) -> None:
    """Restore the binding tables to what they were when ``trail`` had length ``m``."""
    while len(trail) > m:
        d, k, o = trail.pop()
        if o is None:
            del d[k]
        else:
            d[k] = o


def _flat_stmts(s: Any) -> Any:
    """A body as the sequence it means (``flat_stmts``); here ``None`` stays a value."""
    return (s,) if s is None else flat_stmts(s)


_G: dict[str, Any] = {
    "bind_pair": _bind_pair,
    "undo": _undo,
    "flat": _flat_stmts,
    "SeqStmt": SeqStmt,
    "SEQ_H": _SEQ_H,
    "hs": _hs,
    "hfloat": _hfloat,
    "NEG1": _NEG1_H,
    "feq": _float_eq,
    "Var": Var,
    "Buffer": Buffer,
    "NONE_H": _NONE_H,
}


def _symbol(f: Function) -> str:
    """A public function's identity: its ``global_symbol`` attribute where it has one (TIRx's
    ``f.with_attr("global_symbol", "main")`` makes two functions of other names the same
    symbol), else its name."""
    g = f.attrs.get("global_symbol") if f.attrs else None
    if g is None:
        return f.name
    return str(getattr(g, "value", g))


def _hash_function_inner(f: Function, map_free: bool, in_module: bool = False) -> int:
    inst = _HASH.acquire(map_free)
    try:
        if in_module:
            inst[0][_ModuleTag](True)
        h = inst[0][Function](f)
    finally:
        _HASH.release(map_free, inst)
    return hash((0 if f.private else _hs("sym:" + _symbol(f)), h)) & _MASK


def _equal_function_inner(
    a: Function, b: Function, map_free: bool, mfree: Any = None, path: list | None = None
) -> bool:
    """``mfree``: the free-var maps shared by the functions of two Modules being compared;
    ``path``: where to explain a mismatch (innermost segment first)."""
    if not a.private and _symbol(a) != _symbol(b):
        if path is not None:
            path.append(f"<function name {_symbol(a)} vs {_symbol(b)}>")
        return False
    inst = _EQ.acquire(map_free)
    try:
        if mfree is not None:
            inst[0][_ModuleTag](mfree)
        if path is not None:
            inst[0][_PathTag](path)
        return inst[0][Function](a, b)
    finally:
        _EQ.release(map_free, inst)


_G["hv_generic"] = _hv_generic
_G["veq_generic"] = _veq_generic
_G["hash_function"] = _hash_function_inner
_G["equal_function"] = _equal_function_inner
_G["AttrsTag"] = _AttrsTag
_G["ModuleTag"] = _ModuleTag
_G["PathTag"] = _PathTag
_G["SHADOW"] = _SHADOW


# ------------------------------------------------------------------------ public API
def _hash_root(x: Any, map_free: bool) -> int:
    if isinstance(x, Function):
        return _hash_function_inner(x, map_free)
    if isinstance(x, Node):
        h = _run_hash(x, map_free)
    else:
        inst = _HASH.acquire(map_free)
        try:
            h = _hv_generic(x, inst[0])
        finally:
            _HASH.release(map_free, inst)
    return h & _MASK


def structural_hash(x: Any, map_free_vars: bool = False) -> int:
    """A 64-bit hash consistent with ``structural_equal``, deterministic across processes.

    The result is cached on the root node, so hashing the same root again is O(1).
    """
    map_free = bool(map_free_vars)
    if isinstance(x, Node):
        c = x._shash
        if c is not None:
            h = c[map_free]
            if h is not None:
                return h
    if _HASH.make is None:
        _HASH.refresh()
    while True:
        try:
            h = _deep(_hash_root, x, map_free)
            break
        except (KeyError, _Regenerate) as e:
            if not _refresh_for():
                raise _unsupported("structural_hash", e) from None
    if isinstance(x, Node):
        c = x._shash or (None, None)
        object.__setattr__(x, "_shash", (h, c[1]) if not map_free else (c[0], h))
    return h


def _unsupported(what: str, e: BaseException) -> TypeError:
    k = e.args[0] if e.args else None
    name = k.__name__ if isinstance(k, type) else type(k).__name__
    return TypeError(f"{what}: a node field holds a {name}, which is not an IR node")


def _refresh_for() -> bool:
    """After a miss in a generated table: regenerate if node classes changed."""
    before = (_HASH.classes, _EQ.classes)
    _HASH.refresh()
    _EQ.refresh()
    return (_HASH.classes, _EQ.classes) != before


def structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> bool:
    """True when ``a`` and ``b`` are the same IR up to renaming of bound variables."""
    if a is b:
        return True
    if _EQ.make is None:
        _EQ.refresh()
    map_free = bool(map_free_vars)
    while True:
        try:
            return _deep(_equal_root, a, b, map_free)
        except (KeyError, _Regenerate) as e:
            if not _refresh_for():
                raise _unsupported("structural_equal", e) from None


def _equal_root(a: Any, b: Any, map_free: bool, path: list | None = None) -> bool:
    ta = type(a)
    if ta is not type(b) and ta is not SeqStmt and type(b) is not SeqStmt:
        if path is not None:
            path.append(f"<{ta.__name__} vs {type(b).__name__}>")
        return False
    if ta is Function:
        return _equal_function_inner(a, b, map_free, None, path)
    if isinstance(a, Node):
        return _run_equal(a, b, map_free, path)
    inst = _EQ.acquire(map_free)
    try:
        if path is not None:
            inst[0][_PathTag](path)
        if _veq_generic(a, b, inst[0]):
            return True
        if path is not None:
            path.append(f"<{a!r} vs {b!r}>")
        return False
    finally:
        _EQ.release(map_free, inst)


def assert_structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> None:
    """Raise ``ValueError`` naming the access path of the first mismatch, with both texts."""
    if structural_equal(a, b, map_free_vars):
        return
    ok, where = deep.call(_mismatch_path, a, b, map_free_vars)
    path = "root" + _path_text([p if p.startswith(("[", "<")) else "." + p for p in reversed(where)])
    if ok:  # pragma: no cover - a second run disagrees with the first: a bug in tirx
        path += " (comparing again found no mismatch)"
    msg = f"StructuralEqual check failed: structural mismatch at {path}"  # (TIRx's first words)
    try:
        msg += "\n" + _texts_around(print_text(a), print_text(b))
    except Exception as e:  # the printer is a debugging aid here; never mask the mismatch
        msg += f"\n(printing failed: {type(e).__name__}: {e})"
    raise ValueError(msg)


def _path_text(segs: list[str]) -> str:
    """Join access-path segments, writing a run of one repeated segment (a long operator
    chain) as ``(.a)*2997``."""
    out: list[str] = []
    i = 0
    while i < len(segs):
        j = i
        while j < len(segs) and segs[j] == segs[i]:
            j += 1
        out.append(f"({segs[i]})*{j - i}" if j - i > 3 else segs[i] * (j - i))
        i = j
    return "".join(out)


def _mismatch_path(a: Any, b: Any, map_free: bool) -> tuple[bool, list]:
    """Compare again, explaining: (equal, the mismatch's access path, innermost first)."""
    path: list = []
    ok = _equal_root(a, b, map_free, path)
    return ok, path


def _texts_around(lhs: str, rhs: str, short: int = 40, limit: int = 60) -> str:
    """Both texts when short; else a unified diff with context around the differences."""
    a, b = lhs.splitlines(), rhs.splitlines()
    if max(len(a), len(b)) <= short:
        return f"--- lhs ---\n{lhs}\n--- rhs ---\n{rhs}"
    if a == b:
        head = "\n".join(a[:short])
        return f"(both sides print the same text; the difference is in var/buffer identity)\n{head}\n..."
    import difflib

    diff = list(difflib.unified_diff(a, b, "lhs", "rhs", n=3, lineterm=""))
    more = f"\n... ({len(diff) - limit} more diff lines)" if len(diff) > limit else ""
    return "\n".join(diff[:limit]) + more


STRUCTURAL_EQUAL.append(structural_equal)  # the loop-bound rule of tirx.ir.stmt compares through it
