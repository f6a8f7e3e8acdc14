"""The mutable scalar of both front ends: ``x: T.int32 = v`` (and ``T.local_scalar``) is a
one-element ``local`` tensor whose name reads as ``x[0]`` and whose assignments store into it,
and the rules its initial value and an augmented store's index follow."""

from __future__ import annotations

from typing import Any

from ..ir import BufferLoad, PrimExpr, convert
from ..ir.buffer import Buffer
from ..ir.expr import Call, IntImm
from ..ir.types import PrimType, TensorType, as_prim
from .builder import _Like

__all__ = ["SCALAR_FORMS", "Cell", "cell_init", "has_effect", "new_scalar"]

_ZERO = IntImm(0)


class Cell:
    """A mutable scalar: a one-element local tensor. Reading the name loads ``[0]``."""

    __slots__ = ("buffer",)

    def __init__(self, buffer: Buffer):
        self.buffer = buffer

    def load(self, span: Any = None) -> BufferLoad:
        return BufferLoad(self.buffer, (_ZERO,), span=span)

    def __tirx_expr__(self) -> BufferLoad:
        return self.load()

    @property
    def value(self) -> Cell:
        """The cell itself: TIRx's ``T.local_scalar(...)`` returns a receipt whose ``.value``
        is the scalar (``Buffer.value``)."""
        return self

    def __repr__(self) -> str:
        return f"Cell({self.buffer.name})"


def cell_init(val: Any, ty: PrimType) -> Any:
    """The initial value of ``x: T.<dtype> = v``. A Python number is TIRx's literal (int32 /
    float32) cast to the dtype, folded where TIRx folds: ``acc: T.float64 = 0.1`` is
    ``T.Cast("float64", T.float32(0.1))`` (float32 precision, as ``acc += 0.1`` and
    ``A[i] + 0.1`` are; ``T.float64(0.1)`` keeps all of it). A float past float32's range,
    which TIRx refuses, is taken at the dtype's precision."""
    import math

    from ..ir.fold import _F32_MAX, is_number, literal
    from ..ir.fold import cast as tirx_cast

    if is_number(val):
        if type(val) is float and math.isfinite(val) and abs(val) > _F32_MAX:
            return convert(val, _Like(ty))
        return tirx_cast(ty, literal(val))
    return convert(val, _Like(ty))


def has_effect(e: Any) -> bool:
    """Whether evaluating ``e`` calls an op with side effects (an atomic, an extern call)."""
    from ..ir.visitor import post_order

    return isinstance(e, PrimExpr) and any(
        isinstance(x, Call) and not getattr(x.op, "pure", True) for x in post_order(e)
    )


def local_scalar(
    dtype: Any = "float32", init: Any = None, *, name: Any = None, annotations: Any = None
) -> tuple:
    return "local", dtype, init, annotations


def alloc_scalar(dtype: Any = "float32", scope: str = "global", *, annotations: Any = None) -> tuple:
    return scope, dtype, None, annotations


def shared_scalar(dtype: Any = "float32", *, annotations: Any = None) -> tuple:
    return "shared", dtype, None, annotations


#: ``T.local_scalar`` / ``T.alloc_scalar`` / ``T.shared_scalar``: their arguments as
#: ``(scope, dtype, init, annotations)`` (both front ends bind the call through these)
SCALAR_FORMS = {"local_scalar": local_scalar, "alloc_scalar": alloc_scalar, "shared_scalar": shared_scalar}


def new_scalar(b: Any, name: str, scope: str, dtype: Any, init: Any = None, annotations: Any = None) -> Cell:
    """A mutable scalar named ``name``: a one-element tensor in ``scope``, stored ``init``."""
    buf = b.alloc(name, TensorType((1,), as_prim(dtype), scope), annotations)
    if init is not None:
        b.store(buf, (_ZERO,), init)
    return Cell(buf)
