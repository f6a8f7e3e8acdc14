"""The printer's values: constants (``IntImm``, ``FloatImm``, ``StringImm``), attribute values
and dicts, types and a buffer's ``T.Tensor(...)``.

A mixin of ``Printer`` (``_printer.py``), split out by what it holds (issue #30); ``expr``
is the expression mixin's (``_printer_expr.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tirx.ir import expr as _e
from tirx.ir.buffer import Buffer
from tirx.ir.node import Attrs
from tirx.ir.types import PointerType, PrimType, Type, bool_, int32
from tirx.printer._printer_forms import _TENSOR_VALUES, type_text
from tirx.printer._printer_literals import float_text, quote
from tirx.target_spec import Target, target_text

__all__ = ["ValuesMixin"]

_IntImm = _e.IntImm


class ValuesMixin:
    """Constants, attribute values, tensor types."""

    if TYPE_CHECKING:  # the expression mixin's

        def expr(self, e: Any) -> str: ...

    # -------------------------------------------------------------- constants
    def _int(self, e: _e.IntImm) -> str:
        t = e.ty
        if t is int32 or t == int32:
            return str(e.value)
        if t is bool_ or t == bool_:
            return "T.bool(True)" if e.value else "T.bool(False)"
        if isinstance(t, PrimType) and t.is_bool:
            return f"T.{t.name}({'True' if e.value else 'False'})"
        tt = type_text(t)
        if e.value >= 1 << 63 or tt.startswith("T.PrimType("):
            # past int64, or a type T has no name for (int4: T.PrimType("int4")(3) does not
            # parse): TIRx's spelling
            return f'T.IntImm("{t.name}", {e.value})'
        return f"{tt}({e.value})"

    def _float(self, e: _e.FloatImm) -> str:
        return f"{type_text(e.ty)}({float_text(e.value)})"

    def _str(self, e: _e.StringImm) -> str:
        return quote(e.value)

    # -------------------------------------------------------------- attribute values
    def type_text(self, t: Any) -> str:
        """``t`` as the text writes it, for an op's print hook (ops sit below the printer)."""
        return type_text(t)

    def attr_value(self, v: Any) -> str:
        """An attribute value in the text that loads back as the same value and type.

        In a dict, a bare literal stays a Python value (``5`` is an int, ``"s"`` a str), so
        an int32 IntImm prints typed (``T.int32(5)``) and a StringImm ``T.StringImm("s")``;
        Python's inf is ``1e999``. A NaN float has no such form: ValueError rather than a
        different value."""
        if isinstance(v, str):
            return quote(v)
        if isinstance(v, bool):
            return "True" if v else "False"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            if v != v:
                raise ValueError("tirx.dumps: a NaN float attribute value cannot be printed (no literal)")
            if v in (math.inf, -math.inf):
                return "1e999" if v > 0 else "-1e999"
            return attr_float(v)
        if type(v) is _IntImm and v.ty == int32:
            return f"T.int32({v.value})"
        if isinstance(v, _e.StringImm):  # as TIRx prints it (a bare "s" loads as a str)
            return f"T.StringImm({quote(v.value)})"
        if v is None:
            return "None"
        if isinstance(v, (Attrs, Mapping)):
            return self.attr_dict(v)
        if isinstance(v, (tuple, list)):
            return "[" + ", ".join([self.attr_value(x) for x in v]) + "]"
        if isinstance(v, Type):
            return type_text(v)
        if type(v) is Target:  # TIRx's T.func_attr({"target": T.target({...})})
            return target_text(v)
        return self.expr(v)

    def attr_dict(self, d: Mapping) -> str:
        """``{"k": v, ...}`` with the keys sorted, as TIRx prints its maps (text loaded from
        TIRx has them sorted already; a kernel written with another order prints as TIRx's)."""
        items = sorted(d.items()) if all(type(k) is str for k in d) else list(d.items())
        return "{" + ", ".join([f"{quote(str(k))}: {self.attr_value(v)}" for k, v in items]) + "}"

    # -------------------------------------------------------------- tensors
    def buffer_type(self, b: Buffer, with_scope: bool = True, scope: str | None = None) -> str:
        """A buffer's ``T.Tensor(...)``, written by T.Tensor's FormSpec from the buffer's fields
        (``scope``: the one to write instead of its pointer's)."""
        if scope is None:
            scope = b.data.ty.scope if with_scope and isinstance(b.data.ty, PointerType) else "global"
        return _TENSOR_VALUES(
            self,
            b.shape,
            b.dtype,
            scope,
            b.strides,
            b.elem_offset,
            b.align,
            b.layout,
            None,
        )


def attr_float(v: float) -> str:
    """A float attribute value as TIRx prints it: 17 significant digits (``0.10000000000000001``),
    a whole number in full (``100000000000000000000.0`` for 1e20, never ``1e+20``), always with
    a ``.`` or an exponent. Every form reads back as the same double."""
    s = format(v, ".17g")
    if "e+" in s:
        return format(v, ".1f")
    if "." not in s and "e" not in s:
        s += ".0"
    return s


def _check_own_pointer(b: Buffer, what: str) -> None:
    """A tensor parameter / allocation prints as ``T.Tensor(shape, dtype, scope=...)``, which
    loads with a data pointer ``T.Ptr(dtype, scope)``; any other pointer type would come back
    different, so it is refused (a view over other storage is a ``T.decl_tensor``)."""
    t = b.data.ty
    assert isinstance(t, PointerType)  # Buffer checks that data is a pointer
    if not (isinstance(t, PointerType) and t.element == b.dtype):
        raise ValueError(
            f"tirx.dumps: the {what} {b.name} of dtype {b.dtype} is over a pointer of type "
            f"{type_text(t)}, which the text cannot express (it would load as "
            f"{type_text(PointerType(b.dtype, t.scope))}); declare it with a DeclBuffer over the pointer"
        )
