"""``Shuffle``: vector lanes picked from the concatenation of vectors (TIRx's ``T.Shuffle``).

A node of its own, not an op: it takes two lists (the vectors, the lane indices), which the
op table's flat argument lists cannot say. Its surface form is ``tirx.surface.forms.SHUFFLE``
(``T.Shuffle([v, w], [7, 6, 1, 0])``, as TIRx prints it); CUDA codegen and the interpreter
have one handler each (``e_Shuffle``), written in ``tirx/codegen/shuffle_cuda.py`` and
``tirx/interp/shuffle.py``.
"""

from __future__ import annotations

from typing import Any

import attrs

from .expr import SEQ, IntImm, PrimExpr, _frozen
from .node import child
from .types import PrimType, Type

__all__ = ["Shuffle", "shuffle_lanes"]


def shuffle_lanes(vectors: tuple) -> int:
    """The lane count of the concatenation of ``vectors`` (a scalar is one lane)."""
    return sum(v.ty.lanes for v in vectors)


@_frozen
class Shuffle(PrimExpr):
    """Lane ``k`` of the result is lane ``indices[k]`` of ``vectors[0] ++ vectors[1] ++ ...``.

    The vectors (scalars count as one lane) share one element dtype; the result has that
    element dtype and ``len(indices)`` lanes (one index: a scalar). Indices are integer
    expressions; constant ones are checked against the concatenated lane count here.
    """

    vectors: tuple = child(SEQ)
    indices: tuple = child(SEQ)
    ty: Type = attrs.field(default=None)

    def __attrs_post_init__(self) -> None:
        for f in ("vectors", "indices"):
            v = getattr(self, f)
            if type(v) is not tuple:
                if not isinstance(v, (list, tuple)):
                    raise TypeError(f"Shuffle.{f} must be a list of expressions, got {type(v).__name__}")
                object.__setattr__(self, f, tuple(v))
            if not getattr(self, f):
                raise ValueError(f"Shuffle.{f} must not be empty")
        el = None
        for i, v in enumerate(self.vectors):
            if not isinstance(v, PrimExpr) or not isinstance(v.ty, PrimType):
                raise TypeError(f"Shuffle.vectors[{i}] must be a primitive expression, got {_what(v)}")
            if el is None:
                el = v.ty.element
            elif v.ty.element != el:
                raise TypeError(f"Shuffle.vectors[{i}] has element dtype {v.ty.element}, vectors[0] has {el}")
        total = shuffle_lanes(self.vectors)
        for i, x in enumerate(self.indices):
            if not isinstance(x, PrimExpr) or not (
                isinstance(x.ty, PrimType) and x.ty.is_int and x.ty.lanes == 1
            ):
                raise TypeError(f"Shuffle.indices[{i}] must be a scalar integer expression, got {_what(x)}")
            if type(x) is IntImm and not 0 <= x.value < total:
                raise ValueError(
                    f"Shuffle.indices[{i}] = {x.value} is out of range: the vectors have {total} lanes"
                )
        assert el is not None  # vectors is non-empty (checked above)
        want = el.with_lanes(len(self.indices)) if len(self.indices) > 1 else el
        if self.ty is None:
            object.__setattr__(self, "ty", want)
        elif self.ty != want:
            raise TypeError(f"Shuffle.ty {self.ty} differs from the derived dtype {want}")

    def __repr__(self) -> str:
        return f"Shuffle({len(self.vectors)} vectors, {len(self.indices)} lanes, {self.ty})"


def _what(v: Any) -> str:
    if isinstance(v, PrimExpr):
        return f"an expression of dtype {v.ty}"
    return f"a {type(v).__name__}"
