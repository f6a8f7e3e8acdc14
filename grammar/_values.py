"""The values the text builder's rule callbacks hand each other, and ``T.<name>`` resolution.

Shared by the rule families (``_transform.py`` and its ``_transform_*`` mixins): markers
for values that mean something in one position only (a keyword argument, a for header's
loop, ``T.let[...]``), how a value is named in an error, and what ``T.<name>`` is (a
special form, a dtype, an op).
"""

from __future__ import annotations

from typing import Any

from tirx.ir import op as _opmod
from tirx.ir.expr import BitNot, Not, PrimExpr, Var
from tirx.ir.operators import OPERATORS
from tirx.ir.types import DTYPE_SHORT, TensorType, Type, parse_dtype
from tirx.surface import forms as _forms

_BINFORMS = {name: o.node for o in OPERATORS for name in o.func}  # T.min(a, b), T.truncmod(a, b), ...
_UNFORMS = {"Not": Not, "BitwiseNot": BitNot}  # TIRx's T.Not(a), T.BitwiseNot(a): the node as written
# T.<name> special forms handled here rather than through the op table
# (T.Ramp, T.Select, T.Cast, T.Let, T.Call, the loops, T.Tensor, T.Ptr, T.alloc_tensor,
# T.decl_tensor, T.device_entry, T.attr, T.evaluate, T.func_attr, the derived forms T.alloc_shared,
# T.decl_buffer, T.cast, T.grid, ... and T.let[...] are tirx/surface/forms.py's FormSpecs)
_FORMS = frozenset(
    {
        "function", "prim_func", "ir_module", *_BINFORMS, *_UNFORMS,
    }
)  # fmt: skip
_DECORATOR_ONLY = frozenset({"function", "prim_func", "ir_module"})


# ------------------------------------------------------------------ value markers
class _LetAnnot:
    __slots__ = ("ty",)

    def __init__(self, ty: Type):
        self.ty = ty


class _Kw:
    __slots__ = ("name", "tok", "value")

    def __init__(self, tok, value):
        self.name = tok.value
        self.tok = tok
        self.value = value


class _Walrus:
    __slots__ = ("tok", "value", "var")

    def __init__(self, var, value, tok):
        self.var = var
        self.value = value
        self.tok = tok


class _FuncRef:
    __slots__ = ("name", "span")

    ret = None  # the return type is not known while loading (tirx.surface.forms' funcref kind)

    def __init__(self, name, span):
        self.name = name
        self.span = span


class _Ret:
    __slots__ = ("ty",)

    def __init__(self, ty):
        self.ty = ty


class _Spec:
    """The value of a call that is only meaningful in one statement position."""

    __slots__ = ("args", "kind", "span")

    def __init__(self, kind: str, span, *args):
        self.kind = kind
        self.span = span
        self.args = args


_LET = object()  # the value of ``T.let`` (subscripted: ``T.let[T.int32]``)


def _desc(v: Any) -> str:
    if isinstance(v, PrimExpr):
        return f"an expression of dtype {v.ty}"
    if isinstance(v, TensorType):
        return "a T.Tensor type"
    if isinstance(v, Type):
        return f"the type {v.script() if hasattr(v, 'script') else v}"
    if isinstance(v, _Spec):
        return repr(v.args[0]) if v.kind in ("bind", "stmt") else f"T.{v.kind}(...)"
    if isinstance(v, _FuncRef):
        return f"the function reference {v.name}"
    if isinstance(v, _Walrus):
        return "an assignment expression (:=)"
    if isinstance(v, _LetAnnot) or v is _LET:
        return "T.let"
    return _forms.describe(v)


# ------------------------------------------------------------------ T.<name> resolution
_RES: dict[str, tuple[str, Any]] = {}


def _resolve_t(rest: str) -> tuple[str, Any] | None:
    r = _RES.get(rest)
    if r is not None:
        return r
    spec = _forms.by_name(rest)
    if spec is not None:
        r = ("spec", spec)
    elif rest in _FORMS:
        r = ("form", rest)
    else:
        try:
            r = ("type", parse_dtype(DTYPE_SHORT.get(rest, rest)))
        except ValueError:
            o = _opmod.lookup(rest)
            if o is not None:
                r = ("op", o)
            else:
                a = _opmod.lookup_alias(rest)
                if a is None:
                    return None
                r = ("alias", a)
    _RES[rest] = r
    return r


class _Dynamic:
    """``T.dynamic(...)`` in text: the Var a name is bound to (no IR of its own)."""

    __slots__ = ("var",)

    def __init__(self, var: Var) -> None:
        self.var = var
