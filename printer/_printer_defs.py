"""The printer's definitions: a function (decorator, signature with its parameters' tensor
types and dynamic shape vars, ``T.func_attr``, body), a module (``@T.ir_module`` class,
``T.module_attrs``) and the scalar parameters declared before the code (``n = T.dynamic(...)``).

A mixin of ``Printer`` (``_printer.py``), split out by node family (issue #30); the state
(``names``, ``scopes``, ``header_vars``, ...) is Printer's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tirx.ir import expr as _e
from tirx.ir.buffer import Buffer
from tirx.ir.function import PERSISTENT_KERNEL, Function, Module, signature_parts
from tirx.ir.node import Attrs
from tirx.ir.types import PrimType, VoidType, int32
from tirx.ir.visitor import collect_vars as _collect_vars
from tirx.printer._printer_forms import _STMT_PRINT, type_text
from tirx.printer._printer_literals import global_name, is_printable_name, quote
from tirx.printer._printer_values import _check_own_pointer

__all__ = ["DefsMixin"]


class DefsMixin:
    """Functions and modules to lines."""

    if TYPE_CHECKING:  # Printer's (_printer.py), the statement and value mixins'
        module_name: str
        lines: list[str]
        names: dict[Any, str]
        live: set[str]
        used: set[str]
        given: dict[Any, str]
        scopes: list[list[tuple[Any, str | None, str]]]
        in_func: bool
        defined_ever: set[Any]
        problems: list[str]
        annotated: bool
        ret_ty: Any
        header_vars: dict[_e.Var, str]
        header_lines: list[str]
        func_scope: int

        def _fresh(self, hint: str) -> str: ...
        def define(self, key: Any, hint: str, same: Any = None) -> str: ...
        def push(self) -> None: ...
        def pop(self) -> None: ...
        def emit(self, depth: int, text: str) -> None: ...
        def stmt(self, s: Any, depth: int) -> None: ...
        def _define_data(self, b: Buffer, name: str) -> None: ...
        def attr_dict(self, d: Any) -> str: ...
        def buffer_type(self, b: Buffer, with_scope: bool = True, scope: str | None = None) -> str: ...

    # -------------------------------------------------------------- functions
    def function(self, f: Function, depth: int = 0) -> None:
        self.in_func = True
        self.used = set()
        self.given = {}
        self.ret_ty = f.ret_ty
        self.push()
        outer_scope, self.func_scope = self.func_scope, len(self.scopes) - 1
        bufs: dict[_e.Var, Buffer] = {}
        for v, b in f.buffer_map:
            bufs.setdefault(v, b)
        # names: params first (they are what users see), then dynamic shape vars
        pnames = []
        header = self.header_vars
        for p in f.params:
            b = bufs.get(p)
            if b is not None:
                _check_own_pointer(b, "tensor parameter")
                name = self.define(b, b.name)
                self._define_data(b, name)
                if b.data is not p:
                    self.names[p] = name + ".data"
                    self.defined_ever.add(p)
            elif p in header:  # ``n: n``, named by the file's ``n = T.dynamic(...)``
                name = header[p]
            else:
                name = self.define(p, p.name)
            pnames.append(name)
        try:
            dyn = f.dyn_vars()
        except Exception:
            dyn = []
        dparts = []
        for v in dyn:
            if v in self.names:
                continue
            dn = self.define(v, v.name)
            dparts.append(dn if v.ty == int32 else f"{dn}: {type_text(v.ty)}")
        params = []
        for p, name in zip(f.params, pnames):
            b = bufs.get(p)
            if b is not None:
                params.append(f"{name}: {self.buffer_type(b)}")
            elif p in header:
                params.append(f"{name}: {name}")
            else:
                params.append(f"{name}: {_ret_text(p.ty)}")
        if params or f.ret_ty is not None:
            self.annotated = True
        header_problems = list(self.problems)
        self.problems.clear()
        opts = [o for o, on in (("private=True", f.private), ("persistent=True", f.persistent)) if on]
        self.emit(depth, f"@T.function({', '.join(opts)})" if opts else "@T.function")
        if f.persistent:  # printed by the decorator (TIRx's spelling), not as an attribute
            rest = {k: v for k, v in f.attrs.items() if k != PERSISTENT_KERNEL}
            f = f.replace(attrs=Attrs(rest))
        dyn_text = f"[{', '.join(dparts)}]" if dparts else ""
        ret = f" -> {_ret_text(f.ret_ty)}" if f.ret_ty is not None else ""
        self.problems.extend(header_problems)
        self.emit(depth, f"def {global_name(f.name)}{dyn_text}({', '.join(params)}){ret}:")
        n = len(self.lines)
        if f.attrs:
            gs = f.attrs.get("global_symbol") if depth else None
            if gs is not None and gs != f.name and len(f.attrs) > 1:  # another symbol: its own line (TIRx)
                rest = {k: v for k, v in f.attrs.items() if k != "global_symbol"}
                self.emit(
                    depth + 1, _STMT_PRINT[Function](self, f.replace(attrs=Attrs({"global_symbol": gs})))
                )
                self.emit(depth + 1, _STMT_PRINT[Function](self, f.replace(attrs=Attrs(rest))))
            else:
                self.emit(depth + 1, _STMT_PRINT[Function](self, f))
        self.push()
        self.stmt(f.body, depth + 1)
        self.pop()
        if len(self.lines) == n:
            self.emit(depth + 1, "pass")
        self.pop()
        self.func_scope = outer_scope
        self.in_func = False

    def module(self, m: Module) -> None:
        self.emit(0, "@T.ir_module")
        self.emit(0, f"class {self.module_name}:")
        if m.attrs:  # as TIRx prints them (tirx.surface.forms: module_attrs)
            self.emit(1, f"T.module_attrs({self.attr_dict(m.attrs)})")
        for i, f in enumerate(m.functions):
            if i:
                self.lines.append("")
            self.function(f, 1)
        if not m.functions and not m.attrs:
            self.emit(1, "pass")

    # -------------------------------------------------------------- the file's T.dynamic parameters
    def declare_header_vars(self, functions: Any, dyn: bool = False) -> None:
        """A scalar parameter that other parameters' tensor types use (``def f(n: T.int32,
        A: T.Tensor((n,)))``) is declared before the code, ``n = T.dynamic("n", dtype="int32")``,
        and written ``n: n``, as TIRx prints it (so a later parameter may be the one a shape
        names); the names are the file's, unique over all functions. ``dyn``: a module's
        functions' dynamic shape variables are declared there too (TIRx prints a module's
        ``def f(A: T.Tensor((n,)))`` under a file-level ``n``, a function alone ``def f[n]``)."""
        for f in functions:
            params = set(f.params)
            used: dict[_e.Var, None] = {}
            for _v, b in f.buffer_map:
                for e in signature_parts(b):  # a layout's stride too (``T.Iter(H, pitch, "m")``)
                    for v in _collect_vars(e):
                        if v in params and v not in self.header_vars:
                            used[v] = None
            for p in f.params:  # in parameter order
                if p in used and isinstance(p.ty, PrimType):
                    self._header_var(p)
            if dyn:
                try:
                    dvars = f.dyn_vars()
                except Exception:  # the function prints its own error
                    dvars = []
                for v in dvars:
                    if v not in self.header_vars and v not in params and isinstance(v.ty, PrimType):
                        self._header_var(v)

    def _header_var(self, v: Any) -> None:
        """``v`` named by the file: ``n = T.dynamic("n", dtype=...)`` before the code."""
        name = self._fresh(v.name)
        self.scopes[0].append((v, None, name))
        self.names[v] = name
        self.live.add(name)
        self.defined_ever.add(v)
        self.header_vars[v] = name
        hint = v.name if is_printable_name(v.name) else name
        self.header_lines.append(f"{name} = T.dynamic({quote(hint)}, dtype={quote(v.ty.name)})")


def _ret_text(t: Any) -> str:
    """A return or parameter type: ``T.NoneType()`` for void, as TIRx prints it (``T.void``
    elsewhere); a void parameter is an optional tensor a ``@T.jit`` specialization set to None."""
    return "T.NoneType()" if isinstance(t, VoidType) else type_text(t)
