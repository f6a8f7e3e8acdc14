"""CUDA for ``Shuffle`` (tirx/ir/shuffle.py): the lanes of the vectors, concatenated into one
array, then the result's lanes read from it by index (constant or not).

Kept out of ``cuda.py``, whose ``e_Shuffle`` calls :func:`lower_shuffle`.
"""

from __future__ import annotations

from typing import Any

from ..ir.shuffle import Shuffle
from ..ir.types import PrimType

# CUDA's own two-lane vector types: lanes are .x/.y; the result is built by their constructor
_PAIR_MAKE = {"half2": "__halves2half2", "__nv_bfloat162": "__halves2bfloat162"}


def _lane(ctype: str, name: str, ty: PrimType, k: int) -> str:
    if ty.lanes == 1:
        return name
    if ctype in _PAIR_MAKE:
        return f"{name}.{'xy'[k]}"
    return f"{name}.v[{k}]"


def lower_shuffle(cg: Any, e: Shuffle) -> str:
    """A C++ expression (an immediately invoked lambda) computing ``e``."""
    ty = e.ty
    assert isinstance(ty, PrimType)  # Shuffle.__attrs_post_init__ derives a PrimType
    el = cg.ctype(ty.element)
    parts, lanes = [], []
    # the operands and indices are C text of the enclosing scope: print them first, then
    # name the lambda's locals with fresh names (never one the operands use)
    vals = [cg.expr(v) for v in e.vectors]
    idx = [cg.expr(x) for x in e.indices]
    for v, text in zip(e.vectors, vals):
        ct = cg.ctype(v.ty)
        s = cg.fresh("shuffle_in")
        parts.append(f"const {ct} {s} = {text};")
        lanes += [_lane(ct, s, v.ty, k) for k in range(v.ty.lanes)]
    c = cg.fresh("shuffle_lanes")
    parts.append(f"const {el} {c}[{len(lanes)}] = {{{', '.join(lanes)}}};")
    picks = [f"{c}[{i}]" for i in idx]
    if ty.lanes == 1:
        parts.append(f"return {picks[0]};")
    else:
        rt = cg.ctype(e.ty)
        make = _PAIR_MAKE.get(rt)
        if make is not None:
            parts.append(f"return {make}({picks[0]}, {picks[1]});")
        else:
            r = cg.fresh("shuffle_out")
            parts.append(f"{rt} {r};")
            parts += [f"{r}.v[{k}] = {p};" for k, p in enumerate(picks)]
            parts.append(f"return {r};")
    return f"[&]() {{ {' '.join(parts)} }}()"
