"""TIRx's NVIDIA IKET annotations (``T.cuda.iket.mark(...)``, printed ``T.cuda.iket_mark(...)``).

IKET markers name points and ranges of a kernel for NVIDIA's ``run-iket`` tracer. TIRx strips
them in ordinary compilation (its ``LowerIket`` pass keeps them only inside a ``run-iket``
child process), and so does tirx: they build, print and round-trip, and compile to nothing;
the range tokens (``iket_range_start``, ``iket_sentinel_token``) and ``iket_official_event``
are the uint32 0. The ``T.cuda.iket`` namespace spells them as TIRx's ``IketNamespace`` does.
"""

from __future__ import annotations

from typing import Any

from ..ir.op import alias, declare
from ..ir.op import call as _call
from ..ir.types import uint32, void

__all__: list[str] = []


def _c_strip(cg: Any, c: Any) -> str:
    return "((void)0)" if c.ty == void else "0u"


def _i_strip(fc: Any, call: Any):
    import numpy as np

    if call.ty == void:
        return lambda c: None
    return lambda c: np.zeros(1, dtype=np.uint32)


_STRIPPED = "; stripped outside an IKET trace (compiles to nothing)"
for _n, _args, _res, _p, _doc in (
    ("mark", "s x?", void, "name payload", "an IKET point marker named `name`"),
    ("range_start", "s x?", uint32, "name payload", "start an IKET token range; the token (uint32) ends it"),
    ("range_end", "i x?", void, "token payload", "end the IKET token range `token`"),
    ("range_push", "s x?", void, "name payload", "push an IKET stack range"),
    ("range_pop", "", void, "", "pop the innermost IKET stack range"),
    ("sentinel_token", "s", uint32, "name", "an IKET range token that no range_start made"),
):  # fmt: skip
    declare(
        f"cuda.iket_{_n}", _args, _res, pure=False, device_only=True, params=_p, doc=_doc + _STRIPPED,
        cuda=_c_strip, interp=_i_strip,
    )  # fmt: skip
declare(
    "cuda.iket_official_event", "i x x?", uint32, pure=False, device_only=True,
    params="event_id source_code payload",
    doc="an official IKET range-end event (NativeDump); the uint32 0" + _STRIPPED,
    cuda=_c_strip, interp=_i_strip,
)  # fmt: skip

# T.cuda.iket.<name>: TIRx's namespace spelling of the same calls
for _n in ("mark", "range_start", "range_end", "range_push", "range_pop", "sentinel_token", "official_event"):

    def _build(*args: Any, span: Any = None, _t: str = f"cuda.iket_{_n}") -> Any:
        if _t == "cuda.iket_official_event" and len(args) == 1:
            args = (args[0], "")  # TIRx's T.cuda.iket.official_event(event_id, source_code="")
        return _call(_t, *args, span=span)

    alias(f"cuda.iket.{_n}", f"cuda.iket_{_n}", _build, doc=f"TIRx's T.cuda.iket.{_n}: T.cuda.iket_{_n}")
