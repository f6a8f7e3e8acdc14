"""API misuse that used to crash with an internal AttributeError (found while typing the
modules for mypy): now a TypeError naming the argument, or a located DiagnosticError."""

from __future__ import annotations

import pytest

import tirx
from tirx.ir import Var, op
from tirx.ir.types import int32
from tirx.script import tirx as T


def test_op_argument_with_choices_must_be_a_literal():
    x = Var("x", int32)
    with pytest.raises(
        TypeError, match=r"argument 3 \(width\) must be one of .*\(a literal\), got an expression"
    ):
        op.call("cuda.warp_reduce", x, "sum", Var("w", int32))
    with pytest.raises(TypeError, match=r"must be one of .*got 5"):
        op.call("cuda.warp_reduce", x, "sum", 5)
    assert op.call("cuda.warp_reduce", x, "sum", 16) is not None


kernel_lambda = lambda A: None  # noqa: E731 - the misuse under test


def test_function_of_a_lambda_is_a_located_error():
    with pytest.raises(
        tirx.DiagnosticError, match=r"test_misuse_regressions.py:\d+: .* is not a `def` function"
    ):
        T.function(kernel_lambda)
    with pytest.raises(tirx.DiagnosticError, match="is not a `def` function"):
        T.jit(kernel_lambda).specialize()
