"""Symbolic integer analysis: TIRx's ``tvm_tirx.sym`` over tirx IR (docs/sym.md).

``Analyzer`` simplifies integer expressions (like terms collected, divisions and ``min`` /
``max`` decided where the facts allow), bounds them and proves comparisons, under the facts
of one program point: a ``ConstraintContext`` of loop ranges, guards and bindings, as the
constraint-aware walks of ``tirx.tirx`` (``structural_walk_with_constraint_context`` & co.)
hand them to their callbacks.
"""

from .analyzer import Analyzer
from .constraint import (
    BindingConstraint,
    Constraint,
    ConstraintContext,
    PredicateConstraint,
    RangeConstraint,
)
from .int_set import IntervalSet, IntSet, neg_inf, pos_inf
from .values import CompareResult, ConstIntBound, ModularSet, ProofStrength

__all__ = [
    "Analyzer",
    "BindingConstraint",
    "CompareResult",
    "ConstIntBound",
    "Constraint",
    "ConstraintContext",
    "IntSet",
    "IntervalSet",
    "ModularSet",
    "PredicateConstraint",
    "ProofStrength",
    "RangeConstraint",
    "neg_inf",
    "pos_inf",
]
