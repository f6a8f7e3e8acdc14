"""Compiler hints: ``T.likely(cond)`` (a branch-weight hint, the value of ``cond``) and
``T.assume(cond)`` (a fact the compiler may rely on). TIRx's spellings; the interpreter
checks an assumption instead of trusting it, so a false one is found on the CPU rather than
becoming undefined behaviour on the GPU."""

from __future__ import annotations

from typing import Any

from ..ir.op import CExpr, declare
from ..ir.types import bool_, void

__all__: list[str] = []


def _i_likely(fc: Any, call: Any):
    return fc.expr(call.args[0])


def _i_assume(fc: Any, call: Any):
    from tirx.ops.semantics import require_true

    f = fc.expr(call.args[0])

    def ev(c):
        require_true(c, f(c), "T.assume: the assumed condition is false in {thread}")

    return ev


declare(
    "likely", "b", bool_, params="x", doc="the value of x, expected to be true (a branch hint)",
    cuda=CExpr("__builtin_expect(!!({0}), 1)"), interp=_i_likely,
)  # fmt: skip
def _h_assume(call: Any, a: list) -> str:
    """In host code (TIRx compiles ``T.assume`` there too): the condition checked, named by
    its host form."""
    return f"_assume({a[0]}, {('T.assume(' + str(call.args[0]) + ')')!r})"


declare(
    "assume", "b", void, pure=False, params="cond",
    doc="a condition the compiler may assume true (checked by the interpreter and in host code)",
    cuda=CExpr("__builtin_assume((bool)({0}))"), interp=_i_assume, host=_h_assume,
)  # fmt: skip
