"""``tvm_tirx.tirx.op`` under tirx's name: TIRx's op functions for host code (see ``tirx.tirx``)."""

from __future__ import annotations

import builtins
from typing import Any

from tirx.ir import And, IntImm, Or, PrimExpr, convert


def if_then_else(cond: Any, t: Any, f: Any, span: Any = None) -> Any:
    """``cond ? t : f``. As in TIRx's Python API (and unlike ``T.if_then_else`` in a kernel,
    which TIRx keeps as written), a constant condition folds to the chosen arm."""
    c = cond if isinstance(cond, PrimExpr) else convert(cond)
    if type(c) is IntImm:
        return convert(t if c.value else f)
    return _T().if_then_else(cond, t, f)


def all(*args: Any, span: Any = None) -> Any:
    """The conjunction of ``args`` (TIRx's ``tvm_tirx.tirx.all``): one argument is itself, more
    are and-ed left to right, folded as the ``and`` of two expressions is."""
    return _chain(And, "all", args)


def any(*args: Any, span: Any = None) -> Any:
    """The disjunction of ``args`` (TIRx's ``tvm_tirx.tirx.any``), as :func:`all`."""
    return _chain(Or, "any", args)


def _chain(cls: Any, name: str, args: tuple) -> Any:
    """Left to right; a constant operand folds as in TIRx (``x and True`` is ``x``, ``x or
    True`` is ``True``)."""
    if not args:
        raise ValueError(f"tirx.tirx.{name} takes at least one argument")
    val = args[0]
    for a in args[1:]:
        x, y = convert(val), convert(a)
        absorbing = cls is Or  # True absorbs an or, False an and
        const = [e for e in (x, y) if type(e) is IntImm]
        if builtins.any(c.value == absorbing for c in const):  # (this module's any is TIRx's)
            val = IntImm(int(absorbing), const[0].ty)
        elif const:
            val = y if type(x) is IntImm else x
        else:
            val = cls(x, y)
    return val


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
    return sorted({"if_then_else", "all", "any", *(n for n in dir(_T()) if not n.startswith("_"))})
