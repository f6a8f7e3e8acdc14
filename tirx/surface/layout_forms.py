"""The text forms of layouts, in TIRx's printed spelling (one FormSpec each, see tirx/surface/forms.py).
Registered with :func:`tirx.surface.forms.register` on import (the text loader and the printer
import this module).

``T.Iter(8, 64, "m")``, ``T.TileLayout.from_iters(shard=[...], replica=[], offset={"m": 3})``
and ``T.ComposeLayout(0, 3, 3, tile, swizzle_inner=False)``: the text loader resolves these
names through :func:`tirx.surface.forms.by_name`, the printer prints layout nodes through them. The
Python frontend uses the node classes themselves (``T.TileLayout`` is
:class:`tirx.ir.layout.TileLayout`, which also takes ``T.S``/``T.R`` specs).
"""

from __future__ import annotations

from typing import Any

from tirx.ir.expr import PrimExpr
from tirx.ir.layout import Axis, ComposeLayout, Iter, TileLayout
from tirx.surface import forms as _f

__all__ = ["FORMS", "KIND_TEXT"]


def _iters(fname: str, p: Any, v: Any) -> tuple:
    if type(v) not in (list, tuple):
        raise _f.FormError(f"{fname}: {p.name} must be a list of T.Iter(...), got {_f.describe(v)}")
    for x in v:
        if not isinstance(x, Iter):
            raise _f.FormError(f"{fname}: {p.name} must hold T.Iter(...) values, got {_f.describe(x)}")
    return tuple(v)


def _axis_offsets(fname: str, p: Any, v: Any) -> dict:
    if not isinstance(v, dict):
        raise _f.FormError(f'{fname}: {p.name} must be a dict {{"axis": value}}, got {_f.describe(v)}')
    for k, x in v.items():
        if type(k) is not str:
            raise _f.FormError(f"{fname}: {p.name} keys must be axis names (strings), got {_f.describe(k)}")
        if not (type(x) is int or isinstance(x, PrimExpr)):
            raise _f.FormError(f"{fname}: {p.name}[{k!r}] must be an integer, got {_f.describe(x)}")
    return v


def _flag(fname: str, p: Any, v: Any) -> bool:
    if type(v) is bool:
        return v
    raise _f.FormError(f"{fname}: {p.name} must be True or False, got {_f.describe(v)}")


def _axis_name(fname: str, p: Any, v: Any) -> str:
    if isinstance(v, Axis):
        return v.name
    if type(v) is str and v.isidentifier():
        return v
    raise _f.FormError(f"{fname}: {p.name} must be an axis name, got {_f.describe(v)}")


_f.KINDS.update({"iters": _iters, "axis_offsets": _axis_offsets, "flag": _flag, "axis": _axis_name})

#: how the printer writes these kinds (merged into printer/_printer.py's table)
KIND_TEXT = {
    "iters": lambda p, v: "[" + ", ".join([p.expr(i) for i in v]) + "]",
    "axis_offsets": lambda p, v: "{" + ", ".join([f'"{k}": {p.expr(x)}' for k, x in v.items()]) + "}",
    "flag": lambda p, v: "True" if v else "False",
    "axis": lambda p, v: f'"{v}"',
    "layout": lambda p, v: p.expr(v),
}

# replica= prints even when empty (TIRx does): its default is a marker no value is
_NO_REPLICA: Any = type("_NoReplica", (), {"__repr__": lambda self: "()"})()


def _b_iter(extent: Any, stride: Any, axis: str, span: Any = None) -> Iter:
    return Iter(extent, stride, axis, span=span)


def _b_from_iters(shard: tuple, replica: Any, offset: dict | None, span: Any = None) -> TileLayout:
    return TileLayout(
        shard=shard, replica=() if replica is _NO_REPLICA else replica, offset=offset or {}, span=span
    )


def _u_tile(t: TileLayout) -> tuple:
    off = dict(zip(t.offset_axes, t.offset_values)) if t.offset_axes else None
    return t.shard, t.replica, off


FORMS: tuple = (
    _f.FormSpec(
        "Iter", (_f.Param("extent", "expr"), _f.Param("stride", "expr"), _f.Param("axis", "axis", "m")),
        Iter, _b_iter, lambda it: (it.extent, it.stride, it.axis.name),
        doc='``T.Iter(extent, stride, "axis")``: one factor of a TileLayout.',
    ),
    _f.FormSpec(
        "TileLayout.from_iters",
        (_f.Param("shard", "iters", kw_only=True), _f.Param("replica", "iters", _NO_REPLICA, kw_only=True),
         _f.Param("offset", "axis_offsets", None, kw_only=True)),
        TileLayout, _b_from_iters, _u_tile,
        doc='``T.TileLayout.from_iters(shard=[T.Iter(...)], replica=[], offset={"m": 0})``',
    ),
    _f.FormSpec(
        "ComposeLayout",
        (_f.Param("per_element", "int"), _f.Param("swizzle_len", "int"), _f.Param("atom_len", "int"),
         _f.Param("tile_layout", "layout"), _f.Param("swizzle_inner", "flag", True, print_kw=True)),
        ComposeLayout, ComposeLayout, ("per_element", "swizzle_len", "atom_len", "tile_layout", "swizzle_inner"),
        doc="``T.ComposeLayout(per_element, swizzle_len, atom_len, tile, swizzle_inner=True)``: an XOR swizzle.",
    ),
)  # fmt: skip

for _spec in FORMS:
    _f.register(_spec)
