"""``T.cuda.tensormap_encode_tiled(desc, data, *dims, *byte_strides, *box, *elem_strides,
descriptor_dtype=, rank=, interleave=0, swizzle=0, l2_promotion=0, oob_fill=0,
force_cu_dtype=-1)`` and ``T.cuda.TensorMapEncodeTiledAttr``: TIRx's host-side tiled TMA
descriptor encoding (``cuTensorMapEncodeTiled``) as a call.

The operands are the descriptor and data pointers, ``rank`` global dimensions, ``rank - 1``
byte strides, ``rank`` box dimensions and ``rank`` element strides (``4 * rank + 1`` after
the descriptor). The fixed options are TIRx's call attributes; tirx keeps them as the call's
last seven literal arguments (descriptor_dtype, rank, interleave, swizzle, l2_promotion,
oob_fill, force_cu_dtype) and prints them as TIRx does: keywords, sorted, defaults left out.
The result is int32 (the driver's status). It runs in host code, before the device entries
that read the descriptor (``T.stack_alloca("tensormap", 1)`` bound to a ``T.Ptr(T.TensorMap())``
variable): the host program encodes it at each call with ``tirx.runtime.tma.encode_tiled`` and
passes it to the kernel by value (``const __grid_constant__``). Inside a device entry the CUDA
backend refuses it by name; the interpreter does not run it.
"""

from __future__ import annotations

from typing import Any

from ..ir.expr import IntImm, PrimExpr, StringImm
from ..ir.op import NoInterp, declare, register_handler
from ..ir.types import PointerType, as_type, int32, tensormap_ptr

__all__ = ["TensorMapEncodeTiledAttr"]

_OPTS = ("descriptor_dtype", "rank", "interleave", "swizzle", "l2_promotion", "oob_fill", "force_cu_dtype")
_DEFAULTS = {"interleave": 0, "swizzle": 0, "l2_promotion": 0, "oob_fill": 0, "force_cu_dtype": -1}


class TensorMapEncodeTiledAttr:
    """Fixed options of ``T.cuda.tensormap_encode_tiled``: the descriptor's element dtype, the
    rank (1..5) and CUDA's tensor-map enum values (``force_cu_dtype`` -1: derived from the dtype)."""

    __slots__ = _OPTS
    descriptor_dtype: str
    rank: int
    interleave: int
    swizzle: int
    l2_promotion: int
    oob_fill: int
    force_cu_dtype: int

    def __init__(self, descriptor_dtype: Any, rank: Any, interleave: Any = 0, swizzle: Any = 0,
                 l2_promotion: Any = 0, oob_fill: Any = 0, force_cu_dtype: Any = -1):  # fmt: skip
        dt = getattr(descriptor_dtype, "name", descriptor_dtype)
        try:
            as_type(str(dt))
        except (TypeError, ValueError):
            raise ValueError(
                f"TensorMapEncodeTiledAttr: descriptor_dtype {descriptor_dtype!r} is not a dtype"
            ) from None
        vals: dict[str, str | int] = {"descriptor_dtype": str(dt)}
        ints: dict[str, int] = {}
        for k, v in (("rank", rank), ("interleave", interleave), ("swizzle", swizzle), ("l2_promotion", l2_promotion),
                     ("oob_fill", oob_fill), ("force_cu_dtype", force_cu_dtype)):  # fmt: skip
            v = v.value if isinstance(v, IntImm) else v
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"TensorMapEncodeTiledAttr: {k} must be an int, got {v!r}")
            vals[k] = ints[k] = v
        if not 1 <= ints["rank"] <= 5:
            raise ValueError(f"TensorMapEncodeTiledAttr: rank must be 1 to 5, got {ints['rank']}")
        for k, v in vals.items():
            object.__setattr__(self, k, v)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("TensorMapEncodeTiledAttr is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorMapEncodeTiledAttr) and all(
            getattr(self, k) == getattr(other, k) for k in _OPTS
        )

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, k) for k in _OPTS))

    def __repr__(self) -> str:
        return (
            "T.cuda.TensorMapEncodeTiledAttr(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in _OPTS) + ")"
        )


class _Surface:
    """``T.cuda.tensormap_encode_tiled(*operands, descriptor_dtype=, rank=, ...)``: the keyword
    options become the call's last seven literal arguments."""

    takes_keywords = True  # the text loader hands it TIRx's keyword options (grammar/_transform_expr.py)

    def __call__(self, *args: Any, span: Any = None, **kw: Any) -> Any:
        bad = set(kw) - set(_OPTS)
        if bad:
            raise TypeError(f"T.cuda.tensormap_encode_tiled got unexpected keyword argument(s) {sorted(bad)}")
        for k in ("descriptor_dtype", "rank"):
            if k not in kw:
                raise TypeError(f"T.cuda.tensormap_encode_tiled needs {k}=")
        a = TensorMapEncodeTiledAttr(**kw)
        if len(args) != 4 * a.rank + 1:
            raise ValueError(
                f"T.cuda.tensormap_encode_tiled: rank {a.rank} takes 4 * rank + 1 = {4 * a.rank + 1} operands, "
                f"got {len(args)}"
            )
        return TENSORMAP_ENCODE_TILED(*args, *(getattr(a, k) for k in _OPTS), span=span)


def _result(args: tuple) -> Any:
    ops, opts = args[:-7], args[-7:]
    if len(args) < 12 or not (
        isinstance(opts[0], StringImm) and all(isinstance(x, IntImm) for x in opts[1:])
    ):
        raise TypeError("T.cuda.tensormap_encode_tiled: the last seven arguments are its options (a dtype string "
                        "and six integers); spell them as keywords")  # fmt: skip
    rank = opts[1].value
    if not 1 <= rank <= 5 or len(ops) != 4 * rank + 1:
        raise ValueError(
            f"T.cuda.tensormap_encode_tiled: rank {rank} takes {4 * rank + 1} operands, got {len(ops)}"
        )
    for i, x in enumerate(ops):
        want_ptr = i < 2
        if want_ptr != isinstance(x.ty, PointerType) or (not want_ptr and not x.ty.is_int):
            what = "a pointer" if want_ptr else "an integer"
            raise TypeError(f"T.cuda.tensormap_encode_tiled: operand {i + 1} must be {what}, got {x.ty}")
    return int32


def _c_refuse(cg: Any, c: Any) -> str:
    raise cg.error(
        "T.cuda.tensormap_encode_tiled runs in host code, before the device entry (a descriptor from "
        "T.stack_alloca(\"tensormap\", 1)); a kernel cannot encode one",
        c,
    )


def _host(call: Any, a: list) -> str:
    """``tirx.runtime.tma.encode_tiled(desc, ptr, dtype, rank, operands, *options)``; the
    descriptor must be host storage (``T.stack_alloca("tensormap", 1)``), never a tensor's
    pointer (device memory the host cannot write)."""
    d = call.args[0]
    if d.ty != tensormap_ptr:
        raise ValueError(
            f"T.cuda.tensormap_encode_tiled encodes into host storage: its descriptor must be a "
            f"T.Ptr(T.TensorMap()) from T.stack_alloca(\"tensormap\", 1), got {getattr(d, 'name', 'an expression')} "
            f"of type {d.ty}"
        )
    return f"_tmap_encode({a[0]}, {a[1]}, {a[-7]}, {a[-6]}, ({''.join(x + ', ' for x in a[2:-7])}), {', '.join(a[-5:])})"


TENSORMAP_ENCODE_TILED = declare(
    "cuda.tensormap_encode_tiled", "p p *x", _result, pure=False, params="descriptor data args",
    own_literals=True,  # dims, strides, box and options are independent integers (no shared dtype)
    doc="encode a tiled TMA descriptor at `descriptor` for `data` (host; options as keywords: descriptor_dtype, "
    "rank, interleave, swizzle, l2_promotion, oob_fill, force_cu_dtype)",
    cuda=_c_refuse, interp=NoInterp("T.cuda.tensormap_encode_tiled encodes a driver TMA descriptor"),
    script=_Surface(), host=_host,
)  # fmt: skip


@register_handler("print", "cuda.tensormap_encode_tiled")
def _print(p: Any, parts: list, call: Any) -> str:
    """TIRx's spelling: the operands, then the options that differ from their defaults, as sorted keywords."""
    opts = dict(zip(_OPTS, call.args[-7:]))
    kws = []
    for k in sorted(_OPTS):
        v = opts[k]
        val = v.value if isinstance(v, PrimExpr) and hasattr(v, "value") else v
        if k in _DEFAULTS and val == _DEFAULTS[k]:
            continue
        kws.append(f"{k}={parts[_OPTS.index(k) - 7]}")
    return f"T.{call.op.name}({', '.join([*parts[:-7], *kws])})"
