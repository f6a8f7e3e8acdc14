"""TIRx's PTX operand helpers: ``T.ptx.addr``, ``T.ptx.pred``, ``T.ptx.SINK``.

They are not instructions. In TIRx they tag an operand of a ``T.ptx.<family>`` call:

- ``T.ptx.addr(base, byte_offset)``: the memory operand ``[base+byte_offset]``. Here an
  expression op typed like ``base``; in a row's address position the base is converted by
  the position's kind (a shared pointer becomes its 32-bit window address), so the chain
  builds what TIRx prints (``T.ptx.addr(T.cuda.cvta_generic_to_shared(s.data), 16)``).
  It lowers to the byte-offset address (PTX then reads ``[reg]`` instead of ``[reg+16]``:
  the same location).
- ``T.ptx.pred(value)``: marks a value as a ``.pred`` register. The table's rows already
  know their predicate operands, so in a row's operand position it is the value itself
  (TIRx's printed text does not hold it either); elsewhere a call that is its value.
- ``T.ptx.SINK``: PTX's sink ``_`` at one lane of a destination vector. tirx has no
  per-lane sink; it writes ``_`` for an optional output left out of the call. Passing
  ``T.ptx.SINK`` is a TypeError saying so (TIRx's only sinkable lanes in the families
  tirx lacks are 128-bit ``clusterlaunchcontrol.query_cancel`` registers).
"""

from __future__ import annotations

from typing import Any

from ..errors import OpError
from ..ir.expr import Call, IntImm, PrimExpr, convert
from ..ir.op import declare, marker
from ..ir.types import PointerType, PrimType
from .ptx_table import register_operand_converter

__all__: list[str] = []


def _check_base(c: Any) -> None:
    """An address is a pointer or an integer (a 32-bit shared-window or 64-bit generic one)."""
    t = c.args[0].ty
    if not (isinstance(t, PointerType) or (isinstance(t, PrimType) and t.is_int and t.lanes == 1)):
        raise OpError(f"T.ptx.addr: the base must be a pointer or an integer address, got {t}")


def _c_addr(cg: Any, c: Any) -> str:
    _check_base(c)
    base, off = c.args
    if isinstance(base.ty, PointerType):
        return f"(({cg.ctype(base.ty)})((char*){cg.wrap(base, 15)} + {cg.wrap(off, 12)}))"
    return f"({cg.wrap(base, 12)} + {cg.wrap(off, 12)})"


def _i_addr(fc: Any, call: Any):
    from tirx.ops.semantics import PtrVal

    _check_base(call)
    fb, fo = fc.expr(call.args[0]), fc.expr(call.args[1])

    def ev(c):
        b, o = fb(c), fo(c)
        if isinstance(b, PtrVal):
            return PtrVal(b.mem, b.off + int(o[0]), b.rank)
        return b + o.astype(b.dtype)

    return ev


def _s_addr(base: Any, byte_offset: Any, span: Any = None) -> Call:
    """``T.ptx.addr(base, byte_offset)``: a buffer passes its data pointer."""
    data = getattr(base, "data", None)
    if data is not None and not isinstance(base, PrimExpr):
        base = data
    if isinstance(byte_offset, bool) or not isinstance(byte_offset, (int, IntImm)):
        raise TypeError(f"T.ptx.addr: byte_offset must be an integer literal, got {byte_offset!r}")
    return ADDR(convert(base), byte_offset, span=span)


ADDR = declare(
    "ptx.addr", "x n", "arg0", params="base byte_offset",
    doc="the PTX memory operand [base+byte_offset] (a pointer or an address value, offset in bytes)",
    cuda=_c_addr, interp=_i_addr, script=_s_addr, pointer_from=(0,),
)  # fmt: skip


def _convert_addr(kind: str, x: Any, conv: Any) -> Any:
    """In a row's address position, ``T.ptx.addr``'s base is converted as the position
    asks (``T.ptx.addr(cvta(s.data), 16)`` in a shared one, as TIRx prints it)."""
    if not (isinstance(x, Call) and x.op is ADDR):
        return None
    base = conv(kind, x.args[0])
    if base is x.args[0]:
        return x
    return Call(ADDR, (base, x.args[1]), base.ty)


register_operand_converter(_convert_addr)


PRED = declare(
    "ptx.pred", "x", "arg0", params="value",
    doc="TIRx's .pred tag of a T.ptx operand: in a row's operand position it is the value itself (the rows "
    "know their predicate operands); elsewhere the value, unchanged",
    cuda=lambda cg, c: cg.expr(c.args[0]), interp=lambda fc, c: fc.expr(c.args[0]),
)  # fmt: skip


def _convert_pred(kind: str, x: Any, conv: Any) -> Any:
    """``T.ptx.pred(v)`` in a row's operand position is ``v`` (TIRx's text holds no tag)."""
    if isinstance(x, Call) and x.op is PRED:
        return conv(kind, x.args[0])
    return None


register_operand_converter(_convert_pred)


class _Sink:
    """``T.ptx.SINK``: PTX's sink ``_`` at a destination lane (see the module doc)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "T.ptx.SINK (tirx writes PTX's sink `_` for an optional output left out of the call)"

    def __call__(self, *args: Any, **kw: Any) -> Any:
        raise TypeError("T.ptx.SINK is not callable: pass it in an operand position")


SINK = marker("ptx.SINK", _Sink())  # no IR: an operand tag, refused where it is passed
