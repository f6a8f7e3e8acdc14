"""Symbolic premises as plain data, and the context that holds the ones in force at a point.

A pass that reasons about an expression needs what is known where the expression sits: the
loop ranges around it, the ``if`` guards that lead to it, the values bound before it. These
classes carry those facts without interpreting them; ``tirx.sym.Analyzer`` reads them
(``sync_constraint_context``) and the constraint-aware walks of ``tirx.tirx`` build them.

A ``ConstraintContext`` is a chain: each context captures a prefix of its parent's own entries
and appends its own, so a walk hands out one context per scope and a callback that keeps it
sees exactly the facts of that scope (later appends to a child never show through a parent).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tirx.ir import PrimExpr, PrimType, Var, convert

__all__ = [
    "BindingConstraint",
    "Constraint",
    "ConstraintContext",
    "PredicateConstraint",
    "RangeConstraint",
]


def _need_var(api: str, v: Any) -> Var:
    if not isinstance(v, Var):
        raise TypeError(f"{api}: var must be a Var, got {type(v).__name__}")
    return v


def _need_expr(api: str, arg: str, v: Any) -> PrimExpr:
    """An expression argument; a Python bool or int becomes a constant (as TIRx converts it)."""
    if isinstance(v, PrimExpr):
        return v
    if isinstance(v, (bool, int)):
        return convert(v)
    raise TypeError(f"{api}: {arg} must be a PrimExpr, got {type(v).__name__}")


class Constraint:
    """A binding, range or predicate; what it means and how long it lasts is its collector's."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")


class BindingConstraint(Constraint):
    """``var`` holds ``value`` (the right-hand side as it was where the variable was bound)."""

    __slots__ = ("value", "var")
    var: Var
    value: PrimExpr

    def __init__(self, var: Any, value: Any) -> None:
        object.__setattr__(self, "var", _need_var("BindingConstraint", var))
        object.__setattr__(self, "value", _need_expr("BindingConstraint", "value", value))

    def __repr__(self) -> str:
        return f"sym.BindingConstraint(var={self.var.name}, value={self.value})"


class RangeConstraint(Constraint):
    """``var`` lies in the half-open ``domain`` (``domain.begin`` up to ``begin + extent``);
    no stride is implied. ``domain`` is any range value with ``begin`` and ``extent``
    (``T.Range``); the constraint keeps it as ``range``."""

    __slots__ = ("range", "var")
    var: Var
    range: Any

    def __init__(self, var: Any, domain: Any) -> None:
        object.__setattr__(self, "var", _need_var("RangeConstraint", var))
        begin, extent = getattr(domain, "begin", None), getattr(domain, "extent", None)
        if not all(
            isinstance(x, PrimExpr) and isinstance(x.ty, PrimType) and x.ty.is_int for x in (begin, extent)
        ):
            raise TypeError(
                "RangeConstraint: domain must be a range with integer begin and extent (T.Range), "
                f"got {type(domain).__name__}"
            )
        object.__setattr__(self, "range", domain)

    def __repr__(self) -> str:
        r = self.range
        return f"sym.RangeConstraint(var={self.var.name}, range=[{r.begin}, {r.begin} + {r.extent}))"


class PredicateConstraint(Constraint):
    """``condition`` holds. ``assume_always``: the collector promises it holds throughout the
    scope, also after writes to what it reads (the analyzer treats both alike)."""

    __slots__ = ("assume_always", "condition")
    condition: PrimExpr
    assume_always: bool

    def __init__(self, condition: Any, assume_always: bool = False) -> None:
        object.__setattr__(self, "condition", _need_expr("PredicateConstraint", "condition", condition))
        if not isinstance(assume_always, (bool, int)):
            raise TypeError(
                f"PredicateConstraint: assume_always must be a bool, got {type(assume_always).__name__}"
            )
        object.__setattr__(self, "assume_always", bool(assume_always))

    def __repr__(self) -> str:
        return f"sym.PredicateConstraint(condition={self.condition}, assume_always={self.assume_always})"


class ConstraintContext:
    """The constraints in force at one point: ``parent_local_prefix`` entries of ``parent``'s
    own list (with everything the parent itself captured), then this context's own
    (``append``). Iteration yields them ancestor first."""

    __slots__ = ("_local", "_parent", "_prefix")

    def __init__(self, parent: ConstraintContext | None = None, parent_local_prefix: int = 0) -> None:
        if parent is not None and not isinstance(parent, ConstraintContext):
            raise TypeError(
                f"ConstraintContext: parent must be a ConstraintContext or None, got {type(parent).__name__}"
            )
        if type(parent_local_prefix) is not int:
            raise TypeError(
                f"ConstraintContext: parent_local_prefix must be an int, got {type(parent_local_prefix).__name__}"
            )
        if parent is None and parent_local_prefix != 0:
            raise ValueError(
                f"ConstraintContext: parent_local_prefix must be 0 for a root context, got {parent_local_prefix}"
            )
        if parent is not None and not 0 <= parent_local_prefix <= len(parent._local):
            raise ValueError(
                f"ConstraintContext: parent_local_prefix must lie in [0, {len(parent._local)}] "
                f"(the parent's local_size()), got {parent_local_prefix}"
            )
        self._parent = parent
        self._prefix = parent_local_prefix
        self._local: list[Constraint] = []

    def append(self, constraint: Constraint) -> None:
        """Add ``constraint`` after this context's own entries (captured prefixes stay as they were)."""
        if not isinstance(constraint, Constraint):
            raise TypeError(
                f"ConstraintContext.append: constraint must be a Constraint, got {type(constraint).__name__}"
            )
        self._local.append(constraint)

    def local_size(self) -> int:
        """The number of this context's own entries (the parent's not counted)."""
        return len(self._local)

    def snapshot(self) -> ConstraintContext:
        """A root context holding what this one holds now; either can grow on its own after."""
        snap = ConstraintContext()
        snap._local = list(self)
        return snap

    def __iter__(self) -> Iterator[Constraint]:
        # the chain is walked with a loop (no recursion, however deep the scopes), and every
        # level's count is fixed now, so appends made during the iteration are not seen
        levels: list[tuple[list[Constraint], int]] = []
        ctx: ConstraintContext | None = self
        count = len(self._local)
        while ctx is not None:
            levels.append((ctx._local, count))
            count = ctx._prefix
            ctx = ctx._parent
        return (entries[i] for entries, n in reversed(levels) for i in range(n))

    def __repr__(self) -> str:
        return f"sym.ConstraintContext({list(self)!r})"
