"""``T.cuda.wgmma.noop_barrier`` / ``T.cuda.wgmma.encode_matrix_descriptor``: TIRx's
``CudaWgmmaNamespace`` spellings of ``T.cuda.wgmma_noop_barrier`` and
``T.cuda.wgmma_encode_matrix_descriptor`` (the ops, declared in ``cuda_builtins``/``hopper``;
TIRx prints the underscore names)."""

from __future__ import annotations

from typing import Any

from ..ir.op import alias
from ..ir.op import call as _call
from . import cuda_builtins, hopper  # noqa: F401 - declare the alias targets first

__all__: list[str] = []

for _n in ("noop_barrier", "encode_matrix_descriptor"):

    def _build(*args: Any, span: Any = None, _t: str = f"cuda.wgmma_{_n}") -> Any:
        return _call(_t, *args, span=span)

    alias(f"cuda.wgmma.{_n}", f"cuda.wgmma_{_n}", _build, doc=f"TIRx's T.cuda.wgmma.{_n}: T.cuda.wgmma_{_n}")
