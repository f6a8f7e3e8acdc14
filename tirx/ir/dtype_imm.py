"""``DataTypeImm``: a dtype as an expression value (TIRx's ``T.dtype("float16")``).

TIRx passes dtypes to packed and extern calls as constants of its own kind
(``T.call_packed("f", T.dtype("float32"))``); tirx's ops take dtypes as types (``ty=``), so
this node only carries such an argument. Its type is ``T.Any()`` (TIRx's ``AnyType``); it
also stands for its dtype wherever a type goes (``ty=T.dtype("int32")``: ``__tirx_type__``).
Its surface form is ``tirx.surface.forms`` ``dtype``; no backend lowers it (CUDA codegen refuses it
with the node named, the calls that take it have no interpreter semantics).
"""

from __future__ import annotations

import attrs

from .expr import VALUE, PrimExpr, _frozen
from .host_types import AnyType
from .node import child
from .types import PrimType, Type, as_type

__all__ = ["DataTypeImm"]


@_frozen
class DataTypeImm(PrimExpr):
    """The dtype ``value`` (a primitive dtype, vector lanes included) as a constant."""

    value: PrimType = child(VALUE)
    ty: Type = attrs.field(factory=AnyType, init=False)

    def __attrs_post_init__(self) -> None:
        v = self.value
        if not isinstance(v, PrimType):
            v = as_type(v, "DataTypeImm.value")
            if not isinstance(v, PrimType):
                raise TypeError(f"DataTypeImm.value must be a primitive dtype, got {v}")
            object.__setattr__(self, "value", v)

    def __tirx_type__(self) -> PrimType:
        return self.value

    def __repr__(self) -> str:
        return f"DataTypeImm({self.value})"
