"""TIRx's vector ops that map to LLVM vector intrinsics: predicated loads and stores
(``masked_load``/``masked_store``), halves and concatenation of vectors (``vector_low``,
``vector_high``, ``vector_combine``), ``get_active_lane_mask`` and ``vscale``.

TIRx's CUDA backend lowers none of them; here they resolve, build, print and round-trip,
run on the interpreter (``vscale`` excepted: a scalable-vector length has no CPU model),
and CUDA codegen gives a located "not supported by the CUDA backend" error naming them."""

from __future__ import annotations

from typing import Any

from ..errors import OpError
from ..ir.op import NoInterp, declare
from ..ir.types import PointerType, PrimType, int32, void
from .gpu_generic import not_on_cuda

__all__: list[str] = []

_LLVM = "an LLVM vector intrinsic"


def _vec(t: Any, what: str) -> PrimType:
    if not isinstance(t, PrimType) or t.lanes < 2:
        raise TypeError(f"{what} must be a vector, got {t}")
    return t


# --------------------------------------------------------------------------- halves, concatenation
def _half_type(args: tuple) -> PrimType:
    t = _vec(args[0].ty, "T.vector_low/T.vector_high: vec")
    if t.lanes % 2:
        raise TypeError(f"T.vector_low/T.vector_high: vec has an odd number of lanes ({t})")
    return t.with_lanes(t.lanes // 2)


def _combine_type(args: tuple) -> PrimType:
    """A scalar counts as a vector of one lane (TIRx: ``vector_combine(x, y)`` is an x2)."""
    a, b = args[0].ty, args[1].ty
    if not (isinstance(a, PrimType) and isinstance(b, PrimType)):
        raise TypeError(f"T.vector_combine: vec1 and vec2 must be vectors or scalars, got {a} and {b}")
    if a.element != b.element:
        raise TypeError(f"T.vector_combine: vec1 and vec2 differ in element type ({a} vs {b})")
    return a.with_lanes(a.lanes + b.lanes)


def _i_half(high: bool):
    def compile_call(fc: Any, call: Any):
        f = fc.expr(call.args[0])
        h = call.args[0].ty.lanes // 2
        return (lambda c: f(c)[:, h:]) if high else (lambda c: f(c)[:, :h])

    return compile_call


def _i_combine(fc: Any, call: Any):
    import numpy as np

    fa, fb = fc.expr(call.args[0]), fc.expr(call.args[1])

    def ev(c):
        a, b = fa(c), fb(c)
        a, b = (a[:, None] if a.ndim == 1 else a), (b[:, None] if b.ndim == 1 else b)
        n = max(a.shape[0], b.shape[0])
        return np.concatenate(
            [np.broadcast_to(a, (n, a.shape[1])), np.broadcast_to(b, (n, b.shape[1]))], axis=1
        )

    return ev


declare(
    "vector_low", "x", _half_type, params="vec", doc="the low half of a vector's lanes",
    cuda=not_on_cuda(_LLVM), interp=_i_half(False),
)  # fmt: skip
declare(
    "vector_high", "x", _half_type, params="vec", doc="the high half of a vector's lanes",
    cuda=not_on_cuda(_LLVM), interp=_i_half(True),
)  # fmt: skip
declare(
    "vector_combine", "x x", _combine_type, params="vec1 vec2",
    doc="the lanes of vec1 followed by the lanes of vec2",
    cuda=not_on_cuda(_LLVM), interp=_i_combine,
)  # fmt: skip


# --------------------------------------------------------------------------- lane masks
def _i_active_lane_mask(fc: Any, call: Any):
    import numpy as np

    from tirx.ops.semantics import full

    t = call.ty
    if not (isinstance(t, PrimType) and t.is_bool):
        raise OpError(f"T.get_active_lane_mask: ty must be a bool vector, got {t}")
    fb, fl = fc.expr(call.args[0]), fc.expr(call.args[1])
    lanes = np.arange(t.lanes, dtype=np.int64)

    def ev(c):
        b, n = fb(c).astype(np.int64), fl(c).astype(np.int64)
        m = max(b.shape[0], n.shape[0])
        return (full(b, m)[:, None] + lanes[None, :]) < full(n, m)[:, None]

    return ev


declare(
    "get_active_lane_mask", "i i", "ty", params="base limit",
    doc="a bool vector whose lane i is base + i < limit (the active lanes of a loop's tail)",
    cuda=not_on_cuda(_LLVM), interp=_i_active_lane_mask,
)  # fmt: skip
declare(
    "vscale", "", int32, doc="the target's vscale (LLVM's llvm.vscale, scalable vectors)",
    cuda=not_on_cuda("LLVM's llvm.vscale; CUDA has no scalable vectors"),
    interp=NoInterp("scalable vectors have no CPU model"),
)  # fmt: skip


# --------------------------------------------------------------------------- predicated memory
def _masked_load_type(args: tuple) -> PrimType:
    p, _i, m = args
    if not isinstance(p.ty, PointerType) or not isinstance(p.ty.element, PrimType):
        raise TypeError(f"T.masked_load: tensor must be a typed pointer or buffer, got {p.ty}")
    return p.ty.element.with_lanes(m.ty.lanes)


def _check_mask(name: str, mask: Any, lanes: int) -> None:
    mt = mask.ty
    if not (isinstance(mt, PrimType) and mt.is_bool and mt.lanes == lanes and lanes > 1):
        raise OpError(f"T.{name}: the mask must be a bool vector of {lanes} lanes, got {mt}")


def _lane_elements(c: Any, p: Any, t: PrimType, idx: Any, mask: Any, what: str):
    """(the flat view, per-lane/per-vector-lane element indices) of ``t``-vector accesses at
    ``p[idx + j]``; masked-off vector lanes are not accessed (no bounds check)."""
    import numpy as np

    from tirx.ops.semantics import OutOfBoundsError, PtrVal, full, pointer_elements

    if not isinstance(p, PtrVal):
        raise OutOfBoundsError(f"{what}: the tensor must be a pointer")
    el = t.element
    view, base = pointer_elements(c, p, el, what)
    row = p.mem.view(el).shape[1]
    off = np.asarray(p.off, dtype=np.int64).reshape(-1) // np.dtype(view.dtype).itemsize
    first = full(off, c.N)
    j = full(idx.astype(np.int64), c.N)[:, None] + np.arange(t.lanes)[None, :]
    elem = first[:, None] + j
    on = c.mask[:, None] & full(mask, c.N).astype(bool)
    bad = on & ((elem < 0) | (elem >= row))
    if bad.any():
        k = int(np.flatnonzero(bad.any(axis=1))[0])
        raise OutOfBoundsError(f"{what}: a masked-on lane is outside buffer {p.mem.name} in {c.describe(k)}")
    flat = base[:, None] + j
    return view, np.where(on, flat, 0), on


def _i_masked_load(fc: Any, call: Any):
    import numpy as np

    from tirx.ops.semantics import dtypes as D

    t = call.ty
    _check_mask("masked_load", call.args[2], t.lanes)
    fp, fi, fm = (fc.expr(a) for a in call.args)

    def ev(c):
        view, flat, on = _lane_elements(c, fp(c), t, fi(c), fm(c), "T.masked_load")
        raw = np.where(on, view[flat], np.zeros((), view.dtype))
        return D.from_storage(raw, t)

    return ev


def _i_masked_store(fc: Any, call: Any):
    import numpy as np

    from tirx.ops.semantics import dtypes as D
    from tirx.ops.semantics import full

    p, v, _i, m = call.args
    t = v.ty
    _check_mask("masked_store", m, t.lanes if isinstance(t, PrimType) else 1)
    pt = p.ty
    if not (isinstance(t, PrimType) and isinstance(pt, PointerType) and t.element == pt.element):
        raise OpError(f"T.masked_store: value {t} does not match the tensor ({pt})")
    fp, fv, fi, fm = (fc.expr(a) for a in call.args)

    def ev(c):
        view, flat, on = _lane_elements(c, fp(c), t, fi(c), fm(c), "T.masked_store")
        val = D.to_storage(np.asarray(full(fv(c), c.N)), t).astype(view.dtype)
        view[flat[on]] = val[on]
        return np.zeros(1, dtype=np.int32)

    return ev


declare(
    "masked_load", "p i b", _masked_load_type, params="tensor index mask",
    doc="load the lanes of tensor[index:index + lanes] whose mask lane is true (the others are zero)",
    cuda=not_on_cuda("LLVM's llvm.masked.load"), interp=_i_masked_load,
)  # fmt: skip
declare(
    "masked_store", "p x i b", void, pure=False, params="tensor value index mask",
    doc="store the lanes of value whose mask lane is true to tensor[index:index + lanes]",
    cuda=not_on_cuda("LLVM's llvm.masked.store"), interp=_i_masked_store,
)  # fmt: skip
