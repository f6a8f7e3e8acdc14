"""``T.cuda.func_call(name, *args, source, ty=...)``: call a CUDA function whose source the call carries.

TIRx's lowering target for device helpers: the last argument is the function's C++ source (a
string literal), emitted once in the translation unit's prelude; the call is ``name(args...)``.
The result is void unless ``ty=`` is given. TIRx's printer never writes ``ty=``: as the value of
``x: T.let[ty] = ...`` or of a store ``b[i] = ...`` the binding's or the tensor's type types the
call (both front ends; the printer leaves ``ty=`` out there), elsewhere tirx prints ``ty=``.
"""

from __future__ import annotations

import functools
import zlib
from typing import Any

from ..ir.expr import StringImm
from ..ir.op import Helper, NoInterp, declare
from ..ir.types import void

__all__: list[str] = []


def _result(args: tuple) -> Any:
    return void


@functools.lru_cache(maxsize=256)
def _helper(fn: str, src: str) -> Helper:
    """One Helper per (name, source): calls carrying the same source share it."""
    return Helper(f"tirx_func_call:{fn}:{zlib.crc32(src.encode()):08x}", src)


def _c_func_call(cg: Any, c: Any) -> str:
    name, *rest = c.args
    if len(rest) < 1 or not isinstance(rest[-1], StringImm):
        raise cg.error(
            f"T.{c.op.name}: the last argument must be the function's source (a string literal)", c
        )
    fn = name.value
    if not fn.isidentifier():
        raise cg.error(f"T.{c.op.name}: {fn!r} is not a C++ function name", c)
    src = rest[-1].value
    if src.strip():
        cg.need(_helper(fn, src))
    return f"{fn}({', '.join(cg.expr(a) for a in rest[:-1])})"


declare(
    "cuda.func_call", "s *x", _result, pure=False, device_only=True, params="func_name args", typed_by_binding=True,
    doc="call the CUDA function `func_name` with the arguments before the last; the last is its source, "
    "emitted once in the prelude (void unless ty= is given)",
    cuda=_c_func_call,
    interp=NoInterp("T.cuda.func_call runs CUDA source the interpreter cannot execute"),
)  # fmt: skip
