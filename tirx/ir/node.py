"""Node base class and the immutable attribute map used by IR nodes."""

from __future__ import annotations

import html
import io
import keyword
import threading
import tokenize
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import attrs

__all__ = ["REPR_MAX", "Attrs", "Node", "freeze_attrs", "print_text", "register_printer", "script_html"]

# ------------------------------------------------------------------ field kinds
# How structural equality and hashing, the Visitor, the Mutator and the passes treat a field
# of a node. Each field declares its kind once, in its attrs metadata (``child(KIND)``), and
# ``frozen_node`` derives the class's traversal order ``_sfields`` from those declarations.
VALUE = "value"  # a plain value (number, string, dtype, enum): compared by value
NODE = "node"  # one child node, or None
SEQ = "seq"  # a tuple of child nodes (plain values allowed among them)
DEF = "def"  # a variable the node defines
BUF_USE = "buf_use"  # a buffer the node uses
BUF_DEF = "buf_def"  # a buffer the node defines (allocates, or declares over a pointer)
ATTRS = "attrs"  # an ``Attrs`` map (its node values are children)
PARAMS = "params"  # variables a function or region defines for its body
BUFMAP = "bufmap"  # a function's parameter buffers: (param, Buffer) pairs
FUNCS = "funcs"  # a module's functions
#: The kinds that define names (vars or buffers): traversed after the node's other fields,
#: before its bodies, so that a definition is bound where its uses are met.
DEFINING_KINDS = frozenset((DEF, BUF_DEF, PARAMS, BUFMAP))

_KIND, _BODY, _AFTER = "tirx.kind", "tirx.body", "tirx.after_defs"


def child(
    kind: str,
    *,
    body: bool = False,
    after_defs: bool = False,
    default: Any = attrs.NOTHING,
    factory: Callable[[], Any] | None = None,
    init: bool = True,
    repr: bool = True,
    kw_only: bool = False,
    converter: Callable[[Any], Any] | None = None,
) -> Any:
    """A structural field of a node class: an ``attrs.field`` that declares its kind.

    ``body=True`` marks a scope body (a loop's or branch's statements, a Let's body): the
    node's definitions belong to it, and what is bound inside is dropped when it ends.
    ``after_defs=True`` marks another field that may use the node's definitions (a
    function's return type names its parameters' variables): traversed after them."""
    if kind not in _KINDS:
        raise ValueError(f"child: unknown field kind {kind!r} (one of {sorted(_KINDS)})")
    return attrs.field(
        default=default,
        factory=factory,
        init=init,
        repr=repr,
        kw_only=kw_only,
        converter=converter,
        metadata={_KIND: kind, _BODY: body, _AFTER: body or after_defs},
    )


_KINDS = frozenset((VALUE, NODE, SEQ, DEF, BUF_USE, BUF_DEF, ATTRS, PARAMS, BUFMAP, FUNCS))


def structural_fields(cls: type) -> tuple[tuple[str, str], ...]:
    """A node class's structural fields in traversal order, from their declared kinds.

    Plain values first (cheap to compare), then the other children, then the definitions,
    then the fields that see them (bodies, ``after_defs``), each group in field order: a
    definition is met before the fields that may use it and after those that may not (a
    Let's value, a loop's bounds)."""
    fields = [a for a in attrs.fields(cls) if _KIND in a.metadata]
    late = [a for a in fields if a.metadata[_AFTER]]
    defs = [a for a in fields if a.metadata[_KIND] in DEFINING_KINDS and a not in late]
    values = [a for a in fields if a.metadata[_KIND] is VALUE and a not in late]
    rest = [a for a in fields if a not in late and a not in defs and a not in values]
    return tuple((a.name, a.metadata[_KIND]) for a in (*values, *rest, *defs, *late))


def body_fields(cls: type) -> frozenset[str]:
    """The names of a node class's scope bodies (``child(..., body=True)``)."""
    return frozenset(a.name for a in attrs.fields(cls) if a.metadata.get(_BODY))


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


_loader: Callable[[str], Any] | None = None


def register_loader(loads: Callable[[str], Any]) -> None:
    """Install the text loader ``load_text`` reaches (``tirx.loads``: the Python front end's
    ``from_source`` loads text through it without importing the text front end)."""
    global _loader
    _loader = loads


def load_text(text: str) -> Any:
    """``text`` loaded, through the registered loader."""
    if _loader is None:
        raise RuntimeError("no text loader is registered: import tirx first")
    return _loader(text)


_C = TypeVar("_C", bound=type)
_N = TypeVar("_N", bound="Node")  # with_span/replace give a node of the receiver's class

_define = attrs.define(slots=True, eq=False, frozen=True, repr=False)  # repr: Node.__repr__

if TYPE_CHECKING:  # type checkers: what attrs.define below makes (fields -> __init__, frozen)
    from typing_extensions import dataclass_transform

    @dataclass_transform(frozen_default=True, eq_default=False, field_specifiers=(attrs.field, child))
    def frozen_node(cls: _C) -> _C: ...

else:

    def frozen_node(cls):
        """The decorator of every IR node class: a frozen, slotted attrs class (equality is
        identity) whose ``_sfields`` and ``_sbodies`` come from its fields' declared kinds."""
        return with_field_kinds(_define(cls))


def with_field_kinds(cls: _C) -> _C:
    """Set an attrs node class's ``_sfields`` and ``_sbodies`` from its fields' declared
    kinds (``frozen_node`` does it; a node class defined with ``attrs.define`` itself, for
    its own ``__init__``, applies it after)."""
    if any(_KIND in a.metadata for a in attrs.fields(cls)):
        if "_sfields" in cls.__dict__:
            raise TypeError(f"{cls.__name__}: declare field kinds with child(...), not in _sfields as well")
        cls._sfields = structural_fields(cls)  # type: ignore[attr-defined]
        cls._sbodies = body_fields(cls)  # type: ignore[attr-defined]
    return cls


@frozen_node
class Node:
    """Base of every IR node.

    Nodes are frozen and slotted. ``hash`` and the truth of ``==`` are identity (nodes are
    used as dict keys by passes); on expressions ``==`` builds an ``EQ`` node whose truth is
    identity (``PrimExpr``); use ``tirx.structural_equal`` for structural comparison.
    ``span`` is optional source metadata.
    """

    span: Any = attrs.field(default=None, kw_only=True, repr=False)
    # spare slot: structural_hash caches (hash, hash with map_free_vars) of this root here.
    # Not an init argument, so evolve()/replace() give a fresh node with an empty cache.
    _shash: Any = attrs.field(default=None, init=False, repr=False)

    if TYPE_CHECKING:  # what attrs adds (attrs.evolve / attrs.fields take attrs classes)
        __attrs_attrs__: ClassVar[Any]

    # structural fields in traversal order, (field name, kind), and the scope bodies among
    # them: derived per class from the fields' declared kinds (``child``) by ``frozen_node``
    _sfields: ClassVar[tuple[tuple[str, str], ...]] = ()
    _sbodies: ClassVar[frozenset[str]] = frozenset()

    def same_as(self, other: Any) -> bool:
        """TVM's ``Object.same_as``: the very same node (``is``), not a structural comparison
        (``tirx.structural_equal``). A jit specialization remembered per value is ``same_as``
        itself on the next ``.specialize`` with those values."""
        return self is other

    def __repr__(self) -> str:
        """One short line: ``<Function f(A, B) 12 stmts>``, ``<Module f, g>``, or the class
        and the first line of the node's script (``<LT i < n>``), at most ``REPR_MAX`` chars."""
        try:
            return _short_repr(self)
        except Exception:  # repr must not fail (debuggers, error messages)
            return f"<{type(self).__name__}>"

    def __str__(self) -> str:
        """The script (``print(func)`` shows the TVMScript text); the short repr if it cannot
        be printed."""
        if getattr(_printing, "depth", 0):  # 0 on a thread that never printed
            return self.__repr__()
        try:
            return _print_guarded(self)
        except Exception:
            return self.__repr__()

    def _repr_html_(self) -> str:
        """The script as escaped, syntax-highlighted HTML (Jupyter and other notebooks)."""
        return script_html(str(self))

    def script(self) -> str:
        """Print this node as TVMScript text (same as ``tirx.dumps``)."""
        return print_text(self)

    @property
    def loc(self) -> Any:
        """TIRx's name of ``span``: the node's source location (None when it has none)."""
        return self.span

    def with_span(self: _N, span: Any) -> _N:
        """Return a copy carrying ``span``."""
        return attrs.evolve(self, span=span)  # type: ignore[misc]  # mypy's attrs check misses frozen_node

    def replace(self: _N, **changes: Any) -> _N:
        """Return a copy with the given fields changed (``attrs.evolve``)."""
        return attrs.evolve(self, **changes)  # type: ignore[misc]  # as in with_span


#: The longest ``repr()`` of a node, in characters.
REPR_MAX = 100

_printing = threading.local()  # depth of printer calls made by repr/str on this thread
_printing.depth = 0


def _print_guarded(node: Node) -> str:
    """The printer's text; a printer that reprs a node meanwhile gets the generic form."""
    d = getattr(_printing, "depth", 0)
    _printing.depth = d + 1
    try:
        return print_text(node)
    finally:
        _printing.depth = d


def _is(node: Any, name: str) -> bool:
    return any(c.__name__ == name for c in type(node).__mro__)


def _count_stmts(root: Any) -> int:
    """Statements under ``root`` (sequence containers not counted), without recursion."""
    n, stack, seen = 0, [root], set()
    while stack:
        x = stack.pop()
        if isinstance(x, tuple):
            stack.extend(x)
            continue
        if not isinstance(x, Node) or id(x) in seen:
            continue
        seen.add(id(x))
        if _is(x, "Stmt") and type(x).__name__ != "SeqStmt":
            n += 1
        stack.extend(getattr(x, f.name) for f in attrs.fields(type(x)) if f.name not in ("span", "_shash"))
    return n


def _clip(text: str, room: int) -> str:
    line = " ".join(text.strip().split("\n", 1)[0].split())
    more = "\n" in text.strip()
    if len(line) > room or more:
        line = line[: max(room - 2, 0)].rstrip() + " …"
    return line


def _short_repr(node: Node) -> str:
    cls = type(node).__name__
    if hasattr(node, "functions") and not hasattr(node, "params"):  # a Module
        names = [getattr(f, "name", "?") for f in node.functions]
        listed = _clip(", ".join(names), REPR_MAX - len(cls) - 20)
        return f"<{cls} {listed}: {len(names)} function{'s' * (len(names) != 1)}>"
    if hasattr(node, "params") and hasattr(node, "body"):  # a Function
        ps = _clip(", ".join(getattr(p, "name", "?") for p in node.params), REPR_MAX // 2)
        n = _count_stmts(node.body)
        name = _clip(str(getattr(node, "name", "?")), REPR_MAX // 4)
        return f"<{cls} {name}({ps}) {n} stmt{'s' * (n != 1)}>"
    if _printer is None or getattr(_printing, "depth", 0) > 0:
        return f"<{cls}>"
    text = _print_guarded(node)
    return f"<{cls} {_clip(text, REPR_MAX - len(cls) - 3)}>"


_HL = {
    "keyword": "color:#0000cc;font-weight:bold",
    "builtin": "color:#7a3e9d",
    "string": "color:#a31515",
    "number": "color:#098658",
    "comment": "color:#6a737d;font-style:italic",
    "decorator": "color:#aa5d00",
    "T": "color:#267f99",
}


def script_html(text: str) -> str:
    """``text`` (TVMScript, which is Python syntax) as a ``<pre>`` with inline-styled spans:
    every character escaped, so the HTML is safe to embed whatever names the IR holds."""
    out: list[str] = []
    lines = io.StringIO(text).readlines()  # split as tokenize reads them
    pos = (1, 0)

    def emit(upto: tuple[int, int]) -> None:  # untokenized text between tokens, escaped
        nonlocal pos
        (r0, c0), (r1, c1) = pos, upto
        if (r1, c1) <= (r0, c0):
            return
        if r0 == r1:
            out.append(html.escape(lines[r0 - 1][c0:c1]) if r0 <= len(lines) else "")
        else:
            chunk = (
                lines[r0 - 1][c0:]
                + "".join(lines[r0 : r1 - 1])
                + (lines[r1 - 1][:c1] if r1 <= len(lines) else "")
            )
            out.append(html.escape(chunk))
        pos = upto

    prev = ""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.ENDMARKER:
                break
            emit(tok.start)
            style = None
            if tok.type == tokenize.NAME:
                if keyword.iskeyword(tok.string) or tok.string in ("match", "case"):
                    style = "keyword"
                elif tok.string == "T" or prev == ".":
                    style = "T" if tok.string == "T" else None
                elif tok.string in ("range", "len", "print", "min", "max", "abs"):
                    style = "builtin"
            elif tok.type == tokenize.STRING:
                style = "string"
            elif tok.type == tokenize.NUMBER:
                style = "number"
            elif tok.type == tokenize.COMMENT:
                style = "comment"
            elif tok.type == tokenize.OP and tok.string == "@":
                style = "decorator"
            if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT):
                continue
            s = html.escape(tok.string)
            out.append(f'<span style="{_HL[style]}">{s}</span>' if style else s)
            pos = tok.end
            prev = tok.string
    except (tokenize.TokenError, IndentationError, SyntaxError, UnicodeDecodeError):
        pass  # the rest is escaped unhighlighted (Python 3.12's tokenizer raises UnicodeDecodeError too)
    emit((len(lines) + 1, 0))
    body = "".join(out)
    return f'<pre class="tirx-script" style="line-height:1.3">{body}</pre>'


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
        self._h: int | None = None

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
