"""TIRx's non-primitive types: ``T.Tuple``, ``T.Func``, ``T.String``, ``T.Missing``, ``T.Opaque``,
``T.Any``, ``T.TensorRegionType``.

tirx's kernels only carry primitive, pointer, void and tensor types (``tirx.ir.types``); these
are the other types TIRx's script names build. They are values like the built-in types
(``==`` and ``hash`` by content, a deterministic structural hash), print as TIRx prints them
(the printer writes an unknown type as ``T.<str(type)>``) and may annotate a host-level
signature, but no tirx backend lowers a value of one: CUDA codegen and the interpreter refuse
it with the type named (``T.Tuple`` return values need a tuple-returning host ABI tirx lacks).
"""

from __future__ import annotations

from typing import Any

import attrs

from .types import Type, as_type

__all__ = ["AnyType", "FuncType", "MissingType", "OpaqueType", "StringType", "TensorRegionType", "TupleType"]


def _types(xs: Any, what: str) -> tuple:
    if isinstance(xs, Type) or not isinstance(xs, (list, tuple)):
        raise TypeError(f"{what} must be a list of types, got {type(xs).__name__}")
    return tuple(as_type(x, what) for x in xs)


def _text(t: Type) -> str:
    s = t.script() if hasattr(t, "script") else f"T.{t}"
    return s


@attrs.frozen(slots=True, repr=False)
class TupleType(Type):
    """``T.Tuple(T.int32, T.float32)``: the type of a tuple of values (a return annotation)."""

    fields: tuple = attrs.field(converter=lambda xs: _types(xs, "T.Tuple fields"))

    def __str__(self) -> str:
        return f"Tuple({', '.join(_text(f) for f in self.fields)})"

    def __repr__(self) -> str:
        return f"TupleType({list(self.fields)!r})"

    def script(self) -> str:
        return f"T.{self}"


@attrs.frozen(slots=True, repr=False)
class FuncType(Type):
    """``T.Func([T.int32], T.float32)``: argument types in order and one return type."""

    arg_types: tuple = attrs.field(converter=lambda xs: _types(xs, "T.Func arg_types"))
    ret_type: Type = attrs.field(converter=lambda t: as_type(t, "T.Func ret_type"))

    def __str__(self) -> str:
        return f"Func([{', '.join(_text(a) for a in self.arg_types)}], {_text(self.ret_type)})"

    def __repr__(self) -> str:
        return f"FuncType({list(self.arg_types)!r}, {self.ret_type!r})"

    def script(self) -> str:
        return f"T.{self}"


def _marker(name: str, doc: str, cls_name: str | None = None) -> type:
    """A type with no fields: every instance is equal (``T.String()``, ...)."""

    def __str__(self: Any) -> str:
        return f"{name}()"

    def __repr__(self: Any) -> str:
        return f"{cls.__name__}()"

    def script(self: Any) -> str:
        return f"T.{name}()"

    cls = attrs.frozen(slots=True, repr=False)(
        type(
            cls_name or f"{name}Type",
            (Type,),
            {"__doc__": doc, "__str__": __str__, "__repr__": __repr__, "script": script},
        )
    )
    cls.__module__ = __name__
    return cls


StringType = _marker("String", "``T.String()``: the semantic type of a string value (a ``StringImm``).")
MissingType = _marker(
    "Missing", "``T.Missing()``: a type not given yet; it must be resolved before a backend sees it."
)
OpaqueType = _marker("Opaque", "``T.Opaque()``: a value that finished IR must not contain.")
AnyType = _marker("Any", "``T.Any()``: the top type, which admits any value.")
TensorRegionType = _marker(
    "TensorRegionType", "``T.TensorRegionType()``: the type of a ``T.TensorRegion``.", "TensorRegionType"
)
