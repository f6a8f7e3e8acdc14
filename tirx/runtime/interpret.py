"""``TIRX_INTERPRET=1``: ``tirx.compile(..., target="cuda")`` runs on the CPU interpreter.

Like ``TRITON_INTERPRET=1``: the same script (and ``@T.jit`` specializations, which are
compiled through ``tirx.compile``) runs without a GPU, with the interpreter's race and bounds
checks. The kernel says so: its ``target`` is ``"interp"``, ``requested_target`` keeps the
CUDA target asked for, and its repr names both. CUDA-only compile options (``restrict``,
``cache``, NVRTC ``options``, ``launcher``, ``vectorize``, ``wrap_int``, ``source_name``,
``backend_config``)
do not change what the interpreter computes and are dropped; an op the interpreter has no
model for raises its ``tirx.OpError`` when the kernel is compiled or run.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["ENV", "enabled", "interpret"]

ENV = "TIRX_INTERPRET"
_ON = {"1", "true", "yes", "on"}
_OFF = {"", "0", "false", "no", "off"}
_CUDA_ONLY = {
    "restrict",
    "cache",
    "options",
    "launcher",
    "vectorize",
    "wrap_int",
    "source_name",
    "backend_config",
}


def enabled() -> bool:
    """Whether ``$TIRX_INTERPRET`` asks for the interpreter (read at each compile)."""
    v = os.environ.get(ENV, "").strip().lower()
    if v in _ON:
        return True
    if v in _OFF:
        return False
    raise ValueError(f"{ENV} must be 1/true/yes/on or 0/false/no/off, got {os.environ[ENV]!r}")


def interpret(f: Any, requested: str, options: dict) -> Any:
    """Compile ``f`` for the interpreter in place of the CUDA target ``requested``."""
    from .. import interp

    if not hasattr(f, "name") and hasattr(f, "__tirx_ir__"):
        f = f.__tirx_ir__()
    k = interp.compile(f, **{n: v for n, v in options.items() if n not in _CUDA_ONLY})
    for kern in [k, *getattr(k, "kernels", {}).values()]:
        kern.requested_target = requested
    return k
