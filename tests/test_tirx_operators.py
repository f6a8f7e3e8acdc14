"""Python operators on two IR values build what TIRx 0.1.0a4's build (tirx/ir/fold.py).

``tests/data/tirx_golden/operators.json`` (made by ``tools/tirx_oracle/golden_operators.py``;
TIRx is not needed here) holds, for a grid of dtypes, operators and operands (two values, a
value and a typed constant, two constants, a value with itself, two dtypes), TIRx's printed
body of a kernel binding ``v = h(X[0], Y[0])`` where ``h`` is a plain Python helper: TIRx's
operators fold (``x * T.float32(1)`` is ``x``) and match dtypes (``int32 + int64`` widens).
Each row: tirx's build of the same source is structurally equal to ``tirx.loads`` of TIRx's
text, or both refuse (a located ``DiagnosticError`` here).
"""

from __future__ import annotations

import json
import pathlib

import pytest
from test_tirx_literals import _build  # the same way to build a generated kernel source

import tirx
from tirx.errors import DiagnosticError

GOLDEN = json.loads((pathlib.Path(__file__).parent / "data" / "tirx_golden" / "operators.json").read_text())
ROWS = [dict(zip(GOLDEN["columns"], r)) for r in GOLDEN["rows"]]


def _ids(r: dict) -> str:
    return f"{r['dx']},{r['dy']}: {r['expr']}"


def _expected(row: dict) -> str:
    """TIRx's body, with a comparison TIRx left deferred (its ``==`` in plain Python gives an
    ``EqualOp`` that the binding keeps as a Python value, printed where ``T.evaluate`` converts
    it; of two float constants, folded to a Python ``False`` that ``T.evaluate`` drops) written
    as the binding tirx builds at once (as ``test_tirx_literals.py`` does)."""
    want = row["tirx"]
    if want == "pass":
        return "v: T.let[T.bool] = T.bool(False)\nT.evaluate(v)"
    if want.startswith("T.evaluate(") and "\n" not in want:
        return f"v: T.let[T.bool] = {want[len('T.evaluate(') : -1]}\nT.evaluate(v)"
    return want


#: where tirx builds on purpose what TIRx refuses: ``-x`` of an unsigned value is ``0 - x``
#: (TIRx's ``x * -1`` cannot make the constant; tirx/ir/fold.py ``neg``)
ON_PURPOSE = {("uint32", "-x"), ("uint32", "-T.uint32(2)")}
#: ``==`` / ``!=`` of two IR nodes in plain Python stay a comparison node whose truth is
#: identity, so that it agrees with the identity hash (sets and dicts of nodes; docs/frontend.md);
#: TIRx folds two constants to a bool (in a kernel tirx folds them too)
IDENTITY_EQ = {f"T.{d}({a}) == T.{d}({b})" for d in ("int8", "int32", "int64", "uint32", "float16", "bfloat16",
               "float32", "float64") for a, b in (("2", "3"), ("3", "2"))}  # fmt: skip


@pytest.mark.parametrize("row", ROWS, ids=_ids)
def test_operator_row_builds_what_tirx_builds(row):
    src = GOLDEN["source"].format(**row)
    want = _expected(row)
    if row["expr"] in IDENTITY_EQ:
        f = _build(src, _ids(row))
        assert "v: T.let[T.bool] = T.EQ(" in tirx.dumps(f)
        return
    if (row["dx"], row["expr"]) in ON_PURPOSE:
        assert want.startswith("ERR")
        operand = row["expr"][1:].replace("x", "X[0]")
        text = tirx.dumps(_build(src, _ids(row)))
        assert f") - {operand}\n" in text or f"0 - {operand}\n" in text, text
        return
    if want.startswith("ERR"):
        with pytest.raises(DiagnosticError):
            _build(src, _ids(row))
        return
    ours = _build(src, _ids(row))
    lines = "\n".join("    " + ln for ln in want.split("\n"))
    theirs = tirx.loads(GOLDEN["text"].format(dx=row["dx"], dy=row["dy"], lines=lines))
    tirx.assert_structural_equal(ours, theirs)


def test_golden_table_covers_the_grid():
    assert {r["dx"] for r in ROWS} >= {"int32", "int64", "uint32", "bool", "float16", "bfloat16", "float32"}
    assert any(r["dx"] != r["dy"] for r in ROWS)
    assert sum(not r["tirx"].startswith("ERR") for r in ROWS) > 1000
