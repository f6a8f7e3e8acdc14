"""The text forms of TIRx's region statements (one FormSpec each, see tirx/surface/forms.py).

``with T.launch_thread("threadIdx.x", n) as v:``, ``with T.compute_scope("name"):``,
``with T.device_context(device_type, device_id):`` and ``with T.parallel_launch():`` are one
node, :class:`tirx.ir.stmt.RegionStmt`, whose ``kind`` names the form. Registered with
:func:`tirx.surface.forms.register` on import (the text loader and the Python ``T`` namespace import
this module): both front ends bind and check the header's arguments through these specs and
open the region through ``IRBuilder.region``; the printer writes the same header.
"""

from __future__ import annotations

from typing import Any

from tirx.ir.expr import StringImm, convert
from tirx.ir.stmt import REGION_KINDS, RegionStmt
from tirx.ir.types import PrimType
from tirx.surface import forms as _f

__all__ = ["FORMS", "header_args"]


def _build(kind: str) -> Any:
    def build(*values: Any, span: Any = None) -> tuple:
        kinds = REGION_KINDS[kind][0]
        args = tuple(StringImm(v, span=span) if k == "s" else convert(v) for k, v in zip(kinds, values))
        for k, a in zip(kinds, args):
            if k == "x" and not (isinstance(a.ty, PrimType) and a.ty.is_int and a.ty.lanes == 1):
                raise _f.FormError(f"T.{kind}: expected an integer, got dtype {a.ty}")
        return kind, args

    return build


def header_args(s: RegionStmt) -> tuple:
    """The header's values as written (a string argument as its text)."""
    return tuple(a.value if type(a) is StringImm else a for a in s.args)


_P = _f.Param
FORMS: tuple[_f.FormSpec, ...] = (
    _f.FormSpec(
        "launch_thread", (_P("thread_tag", "str"), _P("extent", "expr")), RegionStmt, _build("launch_thread"),
        header_args, role="region",
        doc='``with T.launch_thread("threadIdx.x", n) as v:`` the body runs with ``v`` the thread index '
        "(a ``blockIdx``/``threadIdx`` axis inside a device entry; ``vthread`` tags are TIRx's virtual threads).",
    ),
    _f.FormSpec(
        "compute_scope", (_P("name", "str"),), RegionStmt, _build("compute_scope"), header_args,
        role="region", doc='``with T.compute_scope("name"):`` a named CPU compute helper (TIRx; not CUDA).',
    ),
    _f.FormSpec(
        "device_context", (_P("device_type", "expr"), _P("device_id", "expr")), RegionStmt,
        _build("device_context"), header_args, role="region",
        doc="``with T.device_context(device_type, device_id):`` device context for host lowering (TIRx; not CUDA).",
    ),
    _f.FormSpec(
        "device_scope", (), RegionStmt, _build("device_scope"), header_args, role="region",
        doc="``with T.device_scope():`` TIRx's host/device splitting boundary (the body, inline in a kernel).",
    ),
    _f.FormSpec(
        "parallel_launch", (), RegionStmt, _build("parallel_launch"), header_args, role="region",
        doc="``with T.parallel_launch():`` a CPU worker team around parallel loops (TIRx; not CUDA).",
    ),
)  # fmt: skip

for _spec in FORMS:
    _f.register(_spec)
del _spec
