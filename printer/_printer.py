"""The printer proper. See ``docs/text_format.md`` for the contract.

Design notes:

* One pass over the tree, dispatching on ``type(node)`` through dicts (no ``getattr``
  visitor lookup), appending finished lines to a list.
* Names: a var/buffer gets its printed name when it is defined; the name is made unique
  against the names *live* at that point only (sibling scopes reuse names). Binds and
  allocations are flat-scoped: they live until the enclosing body ends.
* Parentheses: every expression has a Python precedence level; a child is parenthesized
  only when Python would otherwise parse the text differently.
* Deep trees: printing recurses; if Python's recursion limit is hit, the job is re-run
  in a helper thread with a large stack and a raised limit.

``Printer`` holds one job's state, the names and scopes, the output and the entry (``run``);
the node families are mixins, one module each (issue #30): ``_printer_expr.py``
(expressions, calls, operators), ``_printer_stmt.py`` (statements), ``_printer_defs.py``
(functions, modules), ``_printer_values.py`` (constants, attribute values, tensor types);
below them ``_printer_forms.py`` (the compiled surface forms, types) and
``_printer_literals.py`` (names, strings, floats).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tirx.ir import deep
from tirx.ir import expr as _e
from tirx.ir import stmt as _s
from tirx.ir.buffer import Buffer
from tirx.ir.function import Function, Module
from tirx.ir.node import Attrs
from tirx.ir.op import Op
from tirx.ir.types import PrimType, TensorType, Type
from tirx.printer import _printer_forms
from tirx.printer._printer_defs import DefsMixin
from tirx.printer._printer_expr import ExprMixin
from tirx.printer._printer_forms import _LAYOUT_NODES, type_text
from tirx.printer._printer_literals import _RESERVED, _why_not, is_printable_name, quote, sanitize
from tirx.printer._printer_stmt import StmtMixin
from tirx.printer._printer_values import ValuesMixin
from tirx.surface import comments as _comment_table

__all__ = ["HEADER", "HEADER_PLAIN", "Printer", "dumps"]

HEADER = "from __future__ import annotations\n\n# from tirx.script import tirx as T\n\n"
#: the header of a file whose functions have no annotation (no parameter, no return type):
#: TIRx writes the ``from __future__`` line only when some function has one
HEADER_PLAIN = "# from tirx.script import tirx as T\n\n"


class Printer(DefsMixin, StmtMixin, ExprMixin, ValuesMixin):
    """One printing job. Use :func:`dumps`; the class is exposed for subclassing/debugging."""

    def __init__(self, module_name: str = "Module"):
        self.module_name = module_name
        self.lines: list[str] = []
        self.names: dict[Any, str] = {}  # Var/Buffer -> printed name (live)
        self.live: set[str] = set()
        #: the names given in the function being printed: a later variable of the same name, in
        #: a sibling scope too, gets ``_1``, ``_2`` (TIRx's printer names them once per function)
        self.used: set[str] = set()
        self.given: dict[Any, str] = {}  # the name each variable got in the function
        self.scopes: list[list[tuple[Any, str | None, str]]] = [[]]
        self.in_func = False
        self.defined_ever: set[Any] = set()
        self.problems: list[str] = []
        self.raw: set[int] = set()  # ids of the nodes printed as T.Add(a, b) (atoms)
        self.annotated = False  # some function has a parameter or a return type (the header)
        self.ret_ty: Any = None  # the return type of the function being printed
        self.header_vars: dict[_e.Var, str] = {}  # parameters declared by T.dynamic before the code
        self.view_bind: Any = None  # a view's pointer binding the next declaration prints (_decl)
        self.header_lines: list[str] = []
        self.in_module = False  # printing a Module: a var defined nowhere is its T.dynamic
        self.func_scope = -1  # the scope of the function being printed (its T.Let variables)
        self.pending: list[str] = []  # T.Let variables' T.dynamic lines, before the next line
        self.pending_lets: dict[Any, str] = {}  # their variables -> names, until those lines are out
        self.let_names: dict[Any, tuple] = {}  # the variables declared so: (name, block)

    # -------------------------------------------------------------- names / scopes
    def _fresh(self, hint: str, once: bool = True) -> str:
        """A name for ``hint`` no live variable has; ``once``: none in this function had."""
        base = sanitize(hint)
        live, used = self.live, (self.used if once else ())
        if base not in live and base not in used and base not in _RESERVED:
            return base
        i = 1
        while True:
            cand = f"{base}_{i}"
            if cand not in live and cand not in used:
                return cand
            i += 1

    def define(self, key: Any, hint: str, same: Any = None) -> str:
        """Name ``key`` in the current scope, a name not given before in the function. One that
        ``same`` says is another binding of the same thing (TIRx's ``launch_thread`` of one
        thread index: one variable there) keeps the name it had. (Another variable bound twice
        gets a new name the second time: its text loads as two variables, which print so.)"""
        name = self.given.get(same) if self.in_func and same is not None else None
        if name is None or name in self.live:
            name = self._fresh(hint)
        if self.in_func:
            self.used.add(name)
            if same is not None:
                self.given[same] = name
        self.scopes[-1].append((key, self.names.get(key), name))
        self.names[key] = name
        self.live.add(name)
        self.defined_ever.add(key)
        if type(key) is Buffer:  # the tensor a call written with it names (``tensor_arg``)
            over = ("tensor over", key.data)
            self.scopes[-1].append((over, self.names.get(over), ""))
            self.names[over] = name
        return name

    def tensor_arg(self, v: Any, text: str) -> str:
        """A call argument written with a tensor (``Call.tensor_args``): the tensor's name, as
        TIRx prints it. ``X.data`` prints ``X``; a pointer printed by its own name (a tensor
        declared over a bound pointer: ``acc`` over ``p``) prints the latest tensor in scope
        declared over it. The IR keeps the pointer, not which tensor over it was written (``B =
        T.decl_tensor(A.data, ...)`` then ``f(B)`` prints ``f(A)``): any reads back as the same call."""
        if type(v) is not _e.Var:
            return text
        if text.endswith(".data"):
            return text[: -len(".data")]
        name = self.names.get(("tensor over", v))
        return name if name is not None and name in self.live else text

    def push(self) -> None:
        self.scopes.append([])

    def pop(self) -> None:
        names, live = self.names, self.live
        for key, prev, name in reversed(self.scopes.pop()):
            live.discard(name)
            if prev is None:
                names.pop(key, None)
            else:
                names[key] = prev

    def _undefined(self, key: Any, hint: str, what: str) -> str:
        name = self._fresh(hint, once=False)  # a use out of scope keeps the name it had
        # reserved for the rest of the job: later definitions avoid it
        self.scopes[0].append((key, None, name))
        self.names[key] = name
        self.live.add(name)
        if self.in_module and what == "var" and key not in self.defined_ever and isinstance(key.ty, PrimType):
            # a var no function of the module defines: a module-level T.dynamic, as TIRx
            # prints it (its module check accepts it; compiling refuses it)
            self.defined_ever.add(key)
            hint = key.name if is_printable_name(key.name) or not key.name else name
            self.header_lines.append(f"{name} = T.dynamic({quote(hint)}, dtype={quote(key.ty.name)})")
            return name
        if self.in_func:
            why = "used out of scope" if key in self.defined_ever else "undefined"
            self.problems.append(f"{why} {what} {name}")
        return name

    # -------------------------------------------------------------- output
    def emit(self, depth: int, text: str) -> None:
        ind = _INDENTS[depth] if depth < 64 else "    " * depth
        if self.pending:  # ``x = T.dynamic(...)`` of a T.Let in this line, as TIRx prints it
            self.lines.extend([ind + d for d in self.pending])
            self.pending.clear()
            self.pending_lets.clear()
        if self.problems:
            seen = list(dict.fromkeys(self.problems))
            self.problems.clear()
            text = f"{text}  # tirx: {', '.join(seen)}"
        self.lines.append(ind + text)

    def header(self) -> str:
        """The lines before the code: the ``from __future__`` line where a function has an
        annotation (as TIRx prints), the import comment, the ``T.dynamic`` declarations."""
        head = HEADER if self.annotated else HEADER_PLAIN
        if self.header_lines:
            head += "\n".join(self.header_lines) + "\n"
        return head

    def run(self, obj: Any) -> str:
        if isinstance(obj, Function):
            self.live.add(self.module_name)  # calls print as Module.f
            self.declare_header_vars((obj,))
            self.function(obj)
            return self.header() + "\n".join(self.lines) + "\n"
        if isinstance(obj, Module):
            name = obj.name
            if not is_printable_name(name) or name == "T":
                why = "T.<name> would name an op" if name == "T" else _why_not(name)
                raise ValueError(f"tirx.dumps: the module name {name!r} cannot be printed: {why}")
            self.module_name = name
            self.live.add(self.module_name)
            self.in_module = True
            self.declare_header_vars(obj.functions, dyn=True)
            self.module(obj)
            return self.header() + "\n".join(self.lines) + "\n"
        if isinstance(obj, _s.Stmt):
            self.stmt(obj, 0)
            if not self.lines:
                self.lines.append("pass")
            return "\n".join(self.lines)
        if isinstance(obj, _e.PrimExpr) or type(obj) in _LAYOUT_NODES:  # a layout: T.TileLayout...
            return self.expr(obj)
        if isinstance(obj, Buffer):
            return self.buffer_type(obj)
        if isinstance(obj, (Type, TensorType)):
            return type_text(obj)
        if isinstance(obj, Op):
            return f"T.{obj.name}"
        if isinstance(obj, (Attrs, Mapping)):
            return self.attr_dict(obj)
        raise TypeError(f"tirx.dumps: cannot print an object of type {type(obj).__name__}")


_printer_forms.new_printer = Printer  # a T.Tensor type prints through a fresh job

_INDENTS = ["    " * i for i in range(64)]


# ------------------------------------------------------------------ public API
def dumps(obj: Any) -> str:
    """Print a Function or Module (a whole file: header, trailing newline), or a Stmt,
    PrimExpr, Buffer or Type (the bare text)."""
    return deep.call(_print, obj)


def _print(obj: Any) -> str:
    if _TABLES and (type(obj) is Function or type(obj) is Module):
        table = _TABLES.get(obj)
        if table is not None and _comment_table.print_with is not None:
            return _comment_table.print_with(table, obj)
    return Printer().run(obj)


_TABLES = _comment_table.TABLES  # comments kept by loads(keep_comments=True); usually empty
