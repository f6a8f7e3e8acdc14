"""``tvm_tirx.tirx.op`` under tirx's name: TIRx's op functions for host code (see ``tirx.tirx``)."""

from __future__ import annotations

from typing import Any

from tirx.ir import IntImm, PrimExpr, convert


def if_then_else(cond: Any, t: Any, f: Any, span: Any = None) -> Any:
    """``cond ? t : f``. As in TIRx's Python API (and unlike ``T.if_then_else`` in a kernel,
    which TIRx keeps as written), a constant condition folds to the chosen arm."""
    c = cond if isinstance(cond, PrimExpr) else convert(cond)
    if type(c) is IntImm:
        return convert(t if c.value else f)
    return _T().if_then_else(cond, t, f)


def _T() -> Any:
    from tirx.script import tirx as T

    return T


def __getattr__(name: str) -> Any:
    if name.startswith("_"):
        raise AttributeError(name)
    try:
        return getattr(_T(), name)
    except AttributeError:
        raise AttributeError(
            f"tirx.tirx.op has no {name!r}: tirx serves TIRx's expression builders that T has "
            "(T.<name>); passes, analyses and runtime functions of tvm_tirx.tirx are not served"
        ) from None


def __dir__() -> list[str]:
    return sorted({"if_then_else", *(n for n in dir(_T()) if not n.startswith("_"))})
