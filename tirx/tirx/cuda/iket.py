"""``tvm_tirx.tirx.cuda.iket.IketProfiler`` under tirx's name: TIRx's helper object for IKET
annotations, used inside a kernel (``iket = IketProfiler(); iket.mark("a")``). Each method
emits or returns the ``T.cuda.iket.*`` call TIRx's does (tirx/ops/cuda_iket.py); running
under NVIDIA's ``run-iket`` (TIRx's ``IketProfiler.compile``) is not served."""

from __future__ import annotations

from typing import Any

__all__ = ["IketProfiler"]


def _T() -> Any:
    from tirx.script import tirx as T

    return T


def _emit(call: Any) -> None:
    from tirx.surface.builder import IRBuilder

    IRBuilder.current().evaluate(call)


class IketProfiler:
    """TIRx's IKET annotation helper: methods called in a kernel body build IKET markers."""

    def mark(self, name: str, payload: Any = None) -> None:
        iket = _T().cuda.iket
        _emit(iket.mark(name) if payload is None else iket.mark(name, payload))

    def range_start(self, name: str, payload: Any = None) -> Any:
        iket = _T().cuda.iket
        return iket.range_start(name) if payload is None else iket.range_start(name, payload)

    def range_end(self, token: Any, payload: Any = None) -> None:
        iket = _T().cuda.iket
        _emit(iket.range_end(token) if payload is None else iket.range_end(token, payload))

    def range_push(self, name: str, payload: Any = None) -> None:
        iket = _T().cuda.iket
        _emit(iket.range_push(name) if payload is None else iket.range_push(name, payload))

    def range_pop(self) -> None:
        _emit(_T().cuda.iket.range_pop())

    def sentinel_token(self, name: str) -> Any:
        return _T().cuda.iket.sentinel_token(name)

    def compile(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "IketProfiler.compile runs NVIDIA's run-iket tracer (TIRx's official IKET runtime); tirx "
            "keeps the markers in the IR and strips them in ordinary compilation"
        )
