"""The printer's surface forms and types: each FormSpec of ``tirx/surface/forms.py`` (and the
layout forms) compiled once into a function ``(printer, node) -> "T.<name>(...)"``, the text
of each argument kind, and ``type_text`` (``T.Ptr`` and ``T.Tensor`` print by their forms).

Split out of the printer by what it holds (issue #30); the compiled functions call back into
the printer they are given (``expr``, ``define``, ``attr_dict``, ``buffer_type``, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tirx.ir.expr import IntImm
from tirx.ir.types import PointerType, PrimType, TensorType, Type, VoidType, int32, void
from tirx.printer._printer_literals import quote
from tirx.surface import forms as _forms
from tirx.surface import layout_forms as _layout_forms

__all__ = ["type_text"]

# ------------------------------------------------------------------ types
_TYPE_CACHE: dict[Type, str] = {}


def type_text(t: Any) -> str:
    s = _TYPE_CACHE.get(t) if isinstance(t, (PrimType, PointerType, VoidType)) else None
    if s is not None:
        return s
    if isinstance(t, PrimType):
        s = t.script()  # T.float16x2; T.PrimType("boolx2") where TIRx's T has no name
    elif isinstance(t, VoidType):
        s = "T.void"
    elif isinstance(t, PointerType):
        s = _PTR_PRINT(None, t)  # T.Ptr's FormSpec (tirx.surface.forms.PTR)
    elif isinstance(t, TensorType):
        return _tensor_type_text(t)
    else:
        return f"T.{t}"  # unknown Type subclass: best effort, never raise
    _TYPE_CACHE[t] = s
    return s


def _tensor_type_text(t: TensorType) -> str:
    assert new_printer is not None  # set when the printer package loads
    return _TENSOR_PRINT(new_printer(), t)  # T.Tensor's FormSpec (tirx.surface.forms.TENSOR)


#: a fresh printing job (``_printer.Printer``, which sits above this module and sets it)
new_printer: Callable[[], Any] | None = None


def _tuple_text(p: Any, v: tuple) -> str:
    ex = p.expr
    if len(v) == 1:
        return f"({ex(v[0])},)"
    return "(" + ", ".join([ex(x) for x in v]) + ")"


def _arg(p: Any, e: Any, tensor: bool) -> str:
    """A call argument; one written with a tensor (``Call.tensor_args``) prints the tensor's name."""
    t = p.expr(e)
    return p.tensor_arg(e, t) if tensor else t


def _typed(p: Any, e: Any) -> str:
    """An expression, an int32 constant written ``T.int32(k)`` (TIRx's ``T.Shuffle`` indices)."""
    return f"T.int32({e.value})" if type(e) is IntImm and e.ty == int32 else p.expr(e)


def _dtype_text(p: Any, t: Any) -> str:
    return f'"{t.name}"' if isinstance(t, PrimType) else type_text(t)


# how the printer writes each argument kind of a form (``tirx.surface.forms.KINDS``; "expr" and
# "binding" are written by the generated code below)
_KIND_TEXT = {
    "int": lambda p, v: str(v),
    "dtype": _dtype_text,
    "type": lambda p, t: type_text(t),
    "calltype": lambda p, t: "T.Tuple()" if t == void else type_text(t),  # a void call: TIRx's unit type
    "funcref": lambda p, v: p._gvar(v[0]),
    "exprs": lambda p, v: "[" + ", ".join([p.expr(a) for a in v]) + "]",
    "typed_exprs": lambda p, v: "[" + ", ".join([_typed(p, a) for a in v]) + "]",
    "call_args": lambda p, v: "[" + ", ".join([_arg(p, a, i in v.tensors) for i, a in enumerate(v)]) + "]",
    "str": lambda p, v: quote(v),
    "dict": lambda p, v: p.attr_dict(v),
    "shape": _tuple_text,
    "dims": _tuple_text,
    "dim": lambda p, v: p.expr(v),
    "nat": lambda p, v: str(v),
    "primtype": lambda p, t: type_text(t),
    "elemtype": lambda p, t: type_text(t),
    "ptrvar": lambda p, v: p.expr(v),
    "ptrexpr": lambda p, v: p.expr(v),
    "tensor_arg": lambda p, b: "[" + p.buffer_type(b) + "]",  # the Buffer an allocation binds
    "view_arg": lambda p, d: "[" + p.buffer_type(d.buffer, scope=d.declared_scope) + "]",  # the DeclBuffer
    "launch_values": lambda p, v: ", ".join([p.expr(a) for a in v]),  # *values, one by one
    "value": lambda p, v: p.expr(v),
    "unroll": lambda p, v: str(v),  # T.serial's unroll=: True, False or an int
}
# kinds of plain Python values: a default is left out when equal, not only when identical
_PLAIN = frozenset(("str", "int", "nat", "dims"))


def _compile_form(spec: _forms.FormSpec, values: bool = False) -> Any:
    """``(printer, node) -> "T.<name>(args, kw=...)"`` for one form, generated once from its
    parameters (straight-line code, as fast as a hand-written method): the values come from
    the node's fields or ``spec.unparse``, in parameter order; a keyword parameter holding its
    default is left out; a binding ``x := v`` defines ``x`` for the arguments after it.
    ``values``: ``(printer, v0, v1, ...)`` from the values themselves (a Buffer's T.Tensor)."""
    ns: dict[str, Any] = {"unparse": spec.unparse}
    n = len(spec.params)
    code = ["def print_form(self, node):"]
    if values:
        code = [f"def print_form(self, {', '.join(f'v{i}' for i in range(n))}):"]
    elif spec.fields is not None:
        code += [f"    v{i} = node.{f}" for i, f in enumerate(spec.fields)]
    else:
        code.append(f"    {''.join(f'v{i}, ' for i in range(n))}= unparse(node)")
    parts = []  # (lines before, text expression, param, index) in order
    scoped = False
    for i, p in enumerate(spec.params):
        v = f"v{i}"
        pre: list[str] = []
        if p.kind == "expr":
            txt = f"self.expr({v})"
        elif p.kind == "binding":  # the value outside the new scope, the name and the rest inside
            pre = [f"    b{i} = self.expr({v}[1])", "    self.push()"]
            txt = f"self.define({v}[0], {v}[0].name) + ' := ' + b{i}"
            scoped = True
        else:
            ns[f"k{i}"] = _KIND_TEXT[p.kind]
            txt = f"k{i}(self, {v})"
        ns[f"d{i}"] = p.default
        parts.append((pre, txt, p, i))
    head = "T." + spec.name + ("[" if spec.role == "subscript" else "(")  # T.let[ty]
    tail = "]" if spec.role == "subscript" else ")"
    if not any(p.print_kw or p.print_omit or p.star for p in spec.params):  # all printed: one concatenation
        for k, (pre, txt, _p, _i) in enumerate(parts):
            code += pre
            code.append(f"    s{k} = {txt}")
        if scoped:
            code.append("    self.pop()")
        joined = " + ', ' + ".join(f"s{k}" for k in range(len(parts)))
        code.append(f"    return {head!r} + {joined} + {tail!r}")
    else:
        code.append("    out = []")
        for pre, txt, p, i in parts:
            code += pre
            if p.star:  # *values: nothing when there are none
                code += [f"    if v{i}:", f"        out.append({txt})"]
            elif p.print_kw or p.print_omit:
                cond = f"v{i} is not d{i}" + (f" and v{i} != d{i}" if p.kind in _PLAIN else "")
                code += [
                    f"    if {cond}:",
                    f"        out.append({p.print_name + '=' if p.print_kw else ''!r} + {txt})",
                ]
            else:
                code.append(f"    out.append({txt})")
        if scoped:
            code.append("    self.pop()")
        code.append(f"    return {head!r} + ', '.join(out) + {tail!r}")
    exec("\n".join(code), ns)  # the code is built above from the declaration, no user text
    return ns["print_form"]


# nodes with an expression form print from it (T.Call's node, Call, is printed by the printer's
# _call: an op call prints through the op table, a module-function call through the form);
# loops by kind
_FORM_PRINT = {
    f.node: _compile_form(f)
    for f in _forms.FORMS
    if f.role == "expr" and f.unparse is not None and f.node is not None
}
_LOOP_PRINT = {kind: _compile_form(f) for kind, f in _forms.LOOPS.items()}
_KIND_TEXT.update(_layout_forms.KIND_TEXT)  # layouts (tirx/surface/layout_forms.py) print by their forms
_LAYOUT_PRINT = {lf.node: _compile_form(lf) for lf in _layout_forms.FORMS}
_LAYOUT_NODES = frozenset(f.node for f in _layout_forms.FORMS)
# types (a TensorType, a PointerType; a Buffer's T.Tensor from its fields) and binding statements
_TENSOR_PRINT = _compile_form(_forms.TENSOR)
_TENSOR_VALUES = _compile_form(_forms.TENSOR, values=True)
_PTR_PRINT = _compile_form(_forms.PTR)
_LET_PRINT = _compile_form(_forms.LET, values=True)  # a Bind's annotation, T.let[ty]
_BIND_PRINT = {f.node: _compile_form(f) for f in _forms.BINDINGS}
_REGION_PRINT = {f.node: _compile_form(f) for f in _forms.REGIONS}
_STMT_PRINT = {f.node: _compile_form(f) for f in _forms.STMTS}
