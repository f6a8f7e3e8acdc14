"""The printer's statements: one line or block per statement (bindings, stores, loops,
branches, asserts, allocations, ``with`` regions), scoped bodies and ``pass`` for empty ones.

A mixin of ``Printer`` (``_printer.py``), split out by node family (issue #30); the output
(``emit``, ``lines``) and the names and scopes (``define``, ``push``, ``pop``, ...) are
Printer's, expressions the expression mixin's (``_printer_expr.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tirx.ir import expr as _e
from tirx.ir import stmt as _s
from tirx.ir.buffer import Buffer
from tirx.ir.types import TensorType, int32, void
from tirx.printer._printer_forms import _BIND_PRINT, _LET_PRINT, _LOOP_PRINT, _REGION_PRINT, _STMT_PRINT
from tirx.printer._printer_literals import quote
from tirx.printer._printer_values import _check_own_pointer
from tirx.surface import forms as _forms
from tirx.surface.comments import lone_stmt

__all__ = ["StmtMixin"]

_IntImm = _e.IntImm
_Var = _e.Var
_RAMP = _e.Ramp  # store targets (StmtMixin._store)
_LET_TEXT: dict = {}  # type -> its T.let[...] annotation


class StmtMixin:
    """Statements to lines (``stmt``), bodies in their own scope (``body``)."""

    if TYPE_CHECKING:  # Printer's (_printer.py) and the expression mixin's (_printer_expr.py)
        lines: list[str]
        names: dict[Any, str]
        scopes: list[list[tuple[Any, str | None, str]]]
        defined_ever: set[Any]
        ret_ty: Any
        view_bind: Any
        used: set[str]

        def emit(self, depth: int, text: str) -> None: ...
        def define(self, key: Any, hint: str, same: Any = None) -> str: ...
        def push(self) -> None: ...
        def pop(self) -> None: ...
        def expr(self, e: Any) -> str: ...
        def _call(self, e: _e.Call, untyped: bool = False) -> str: ...
        def _buf(self, b: Buffer) -> str: ...
        def _indices(self, idx: tuple) -> str: ...

    # -------------------------------------------------------------- statements
    def stmt(self, s: Any, depth: int) -> None:
        f = _ST.get(type(s))
        if f is None:
            for cls, g in _ST.items():
                if isinstance(s, cls):
                    g(self, s, depth)
                    return
            self.emit(depth, f"pass  # tirx: cannot print {type(s).__name__}")
            return
        f(self, s, depth)

    def body(self, s: Any, depth: int) -> None:
        """A scoped body (loop, branch, device entry, attr, function)."""
        self.push()
        n = len(self.lines)
        self.stmt(s, depth)
        if len(self.lines) == n:
            self.emit(depth, "pass")
        self.pop()

    def _seq(self, s: _s.SeqStmt, depth: int) -> None:
        st = _ST
        items = s.stmts
        for i, c in enumerate(items):
            if self.defers_view_bind(items, i):
                continue
            f = st.get(type(c))
            if f is None:
                self.stmt(c, depth)
            else:
                f(self, c, depth)

    def defers_view_bind(self, items: tuple, i: int) -> bool:
        """Whether ``items[i]`` is a view's pointer binding that the declaration after it prints
        (``view_data_binding``); kept in ``view_bind`` for that declaration (_decl)."""
        c = items[i]
        if type(c) is _s.Bind and i + 1 < len(items) and view_data_binding(c, items[i + 1]):
            self.view_bind = c
            return True
        return False

    def _bind(self, s: _s.Bind, depth: int) -> None:
        v = s.value
        if type(v) is _e.Call and getattr(v.op, "typed_by_binding", False):
            value = self._call(v, untyped=True)  # the annotation types it (TIRx's T.undef())
        else:
            value = self.expr(v)
        name = self.define(s.var, s.var.name)
        ty = s.var.ty
        ann = _LET_TEXT.get(ty)
        if ann is None:  # tirx.surface.forms.LET prints it, once per type
            ann = _LET_TEXT[ty] = _LET_PRINT(self, ty)
        self.emit(depth, f"{name}: {ann} = {value}")

    def _store(self, s: _s.BufferStore, depth: int) -> None:
        v = s.value
        if (
            type(v) is _e.Call
            and getattr(v.op, "typed_by_binding", False)
            and _store_typed(v, s.buffer.dtype)
        ):
            value = self._call(v, untyped=True)  # the tensor types it (TIRx's T.cuda.func_call)
        else:
            value = self.expr(v)
        idx = s.indices
        for i in idx:  # a loop, not any(<generator>): stores are the printer's commonest statement
            if type(i) is _RAMP:  # lanes as TIRx prints them: A[s:e] (tirx.surface.forms.slice_parts)
                text = ", ".join(self._store_index(i) for i in idx)
                self.emit(depth, f"{self._buf(s.buffer)}[{text}] = {value}")
                return
        self.emit(depth, f"{self._buf(s.buffer)}[{self._indices(idx)}] = {value}")

    def _store_index(self, i: Any) -> str:
        parts = _forms.slice_parts(i) if type(i) is _e.Ramp else None
        if parts is None:
            return self.expr(i)
        start, stop, step = parts
        text = f"{self.expr(start)}:{self.expr(stop)}"
        return text if step is None else f"{text}:{self.expr(step)}"

    def _evaluate(self, s: _s.Evaluate, depth: int) -> None:
        v = s.value
        if isinstance(v, _e.Call):
            self.emit(depth, self._call(v))
        elif type(v) is _IntImm and v.value == 0 and v.ty.is_int:
            # the front ends drop ``T.evaluate(0)`` as TIRx does; a kept one (built by the API or a
            # pass) is spelled with its dtype, which they keep, so the text builds it back
            self.emit(depth, f"T.evaluate(T.{v.ty}(0))")
        else:
            self.emit(depth, _STMT_PRINT[_s.Evaluate](self, s))

    def _for(self, s: _s.For, depth: int) -> None:
        kind = s.kind
        if kind is _s.ForKind.SERIAL and not s.annotations and s.thread is None:
            # a plain serial loop prints as Python's range (tirx.surface.forms.RANGE)
            start = self.expr(s.start)
            stop = self.expr(_forms.loop_stop(s.start, s.extent))
            if s.nonunit_step is not None:
                it = f"range({start}, {stop}, {self.expr(s.step)})"
            elif isinstance(s.start, _e.IntImm) and s.start.value == 0 and s.start.ty == int32:
                # an int32 0 start is left out (another dtype's 0 prints, as TIRx prints it)
                it = f"range({stop})"
            else:
                it = f"range({start}, {stop})"
        else:
            it = _LOOP_PRINT[kind](self, s)
        self.push()
        name = self.define(s.var, s.var.name)
        self.emit(depth, f"for {name} in {it}:")
        self.body(s.body, depth + 1)
        self.pop()

    def _while(self, s: _s.While, depth: int) -> None:
        self.emit(depth, f"while {self.expr(s.cond)}:")
        self.body(s.body, depth + 1)

    def _if(self, s: _s.IfThenElse, depth: int) -> None:
        self.emit(depth, f"if {self.expr(s.cond)}:")
        self.body(s.then_case, depth + 1)
        # an else branch that is one ``if`` prints as TIRx prints it: ``else:`` and the nested
        # ``if`` (never ``elif``; the text loader takes both, and ``tirx fmt`` keeps a user's
        # ``elif`` with its comments)
        e = lone_stmt(s.else_case)
        if e is not None:
            self.emit(depth, "else:")
            self.body(e, depth + 1)

    def _break(self, s: Any, depth: int) -> None:
        self.emit(depth, "break")

    def _continue(self, s: Any, depth: int) -> None:
        self.emit(depth, "continue")

    def _return(self, s: _s.Return, depth: int) -> None:
        v = s.value
        if v is None:
            self.emit(depth, "return")
            return
        text = self.expr(v)
        if isinstance(self.ret_ty, TensorType) and type(v) is _Var and text.endswith(".data"):
            text = text[: -len(".data")]  # ``return A`` of a tensor parameter (TIRx's spelling)
        self.emit(depth, f"return {text}")

    def _assert(self, s: _s.Assert, depth: int) -> None:
        msg = ", ".join([quote(m) for m in s.message])
        self.emit(depth, f"assert {self.expr(s.cond)}, ({quote(s.kind)}, [{msg}])")

    def _alloc(self, s: _s.AllocBuffer, depth: int) -> None:
        b = s.buffer
        _check_own_pointer(b, "allocation")
        text = _BIND_PRINT[_s.AllocBuffer](self, s)  # the form's text, then the name it binds
        name = self.define(b, b.name)
        self._define_data(b, name)
        self.emit(depth, f"{name} = {text}")

    def _define_data(self, b: Buffer, name: str) -> None:
        # the buffer's pointer var, when referenced, prints as ``X.data``
        d = b.data
        self.scopes[-1].append((d, self.names.get(d), ""))
        self.names[d] = name + ".data"
        self.defined_ever.add(d)

    def _decl(self, s: _s.DeclBuffer, depth: int) -> None:
        b = s.buffer
        vb, self.view_bind = self.view_bind, None
        if vb is not None and view_data_binding(vb, s):
            # ``X = T.decl_tensor(<pointer expression>, ...)``: the builder's ``X.data`` binding
            # and the declaration are the one statement TIRx writes; later uses print ``X.data``
            self.scopes[-1].append((b.data, self.names.get(b.data), ""))
            self.names[b.data] = self.expr(vb.value)
            self.defined_ever.add(b.data)
        src = s.data_of
        if vb is None and src is not None and src is not b and src.data is b.data and src in self.names:
            # the pointer named through the tensor the script named (a view of a view: ``v.data``)
            d, prev = b.data, self.names.get(b.data)
            self.names[d] = self.names[src] + ".data"
            text = _BIND_PRINT[_s.DeclBuffer](self, s)
            if prev is None:
                del self.names[d]
            else:
                self.names[d] = prev
        else:
            text = _BIND_PRINT[_s.DeclBuffer](self, s)
        name = self.define(b, b.name)
        self.emit(depth, f"{name} = {text}")
        if vb is not None:
            self._define_data(b, name)

    def _region(self, s: Any, depth: int) -> None:
        """``with T.device_entry(...):`` / ``with T.attr(...):``, the header from its FormSpec.
        A device entry names its variables as TIRx does, once per kernel: avoiding the names the
        host code used before it, while the names it gives are free again after it (in the
        host code and in the next kernel)."""
        self.emit(depth, f"with {_REGION_PRINT[type(s)](self, s)}:")
        if type(s) is not _s.DeviceEntry:
            self.body(s.body, depth + 1)
            return
        host_used = self.used
        self.used = set(host_used)
        try:
            self.body(s.body, depth + 1)
        finally:
            self.used = host_used

    def _region_stmt(self, s: _s.RegionStmt, depth: int) -> None:
        """``with T.launch_thread("threadIdx.x", n) as v:`` and TIRx's other regions
        (tirx/surface/region_forms.py; the header's arguments are expressions, strings as literals)."""
        args = [self.expr(a) for a in s.args]
        head = f"T.{s.kind}({', '.join(args)})"
        self.push()
        if s.params:
            same = (s.kind, args[0] if args else "", s.params[0].name)  # one thread index launched again
            head += f" as {self.define(s.params[0], s.params[0].name, same)}"
        self.emit(depth, f"with {head}:")
        self.body(s.body, depth + 1)
        self.pop()


# dispatch table: type(node) -> unbound Printer method
_ST: dict[type, Callable[[Any, Any, int], None]] = {
    _s.Bind: StmtMixin._bind,
    _s.BufferStore: StmtMixin._store,
    _s.Evaluate: StmtMixin._evaluate,
    _s.SeqStmt: StmtMixin._seq,
    _s.For: StmtMixin._for,
    _s.While: StmtMixin._while,
    _s.IfThenElse: StmtMixin._if,
    _s.Break: StmtMixin._break,
    _s.Continue: StmtMixin._continue,
    _s.Return: StmtMixin._return,
    _s.Assert: StmtMixin._assert,
    _s.AllocBuffer: StmtMixin._alloc,
    _s.DeclBuffer: StmtMixin._decl,
    _s.DeviceEntry: StmtMixin._region,
    _s.AttrStmt: StmtMixin._region,
    _s.RegionStmt: StmtMixin._region_stmt,
}


def _store_typed(e: _e.Call, dtype: Any) -> bool:
    """Whether the call, stored to a tensor of ``dtype``, reloads with its type untyped: an
    op that is void unless typed (the builder gives such a stored call the tensor's dtype)."""
    if e.ty != dtype:
        return False
    r = e.op.result
    try:
        return (r(e.args) if callable(r) else r) == void
    except Exception:
        return False


def view_data_binding(bind: Any, nxt: Any) -> bool:
    """Whether ``bind`` is the builder's binding of a view's pointer expression
    (``tirx.surface.builder.IRBuilder.decl``): ``X.data = <expr>`` then ``X = T.decl_tensor(X.data,
    ...)``. The name has a dot, so no script wrote it."""
    return (
        type(nxt) is _s.DeclBuffer
        and nxt.buffer.data is bind.var
        and bind.var.name == f"{nxt.buffer.name}.data"
    )
