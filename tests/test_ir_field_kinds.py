"""Node field kinds are declared once, in each field's attrs metadata (``child(KIND)``), and
every traversal reads the order ``frozen_node`` derives from them (issue #30)."""

from __future__ import annotations

import attrs
import pytest

import tirx
from tirx.ir import Add, For, IntImm, Let, Mutator, PrimExpr, Var, Visitor
from tirx.ir.node import (
    DEFINING_KINDS,
    NODE,
    VALUE,
    Node,
    child,
    frozen_node,
    structural_fields,
)
from tirx.ir.structural import _concrete_node_classes
from tirx.ir.types import int32


def _classes() -> list[type[Node]]:
    return [c for c in _concrete_node_classes() if c.__module__.startswith("tirx.ir")]


def test_every_node_class_derives_its_order_from_declared_kinds():
    seen = 0
    for cls in _classes():
        declared = {a.name for a in attrs.fields(cls) if "tirx.kind" in a.metadata}
        assert cls._sfields == structural_fields(cls), cls.__name__
        assert {n for n, _ in cls._sfields} == declared, cls.__name__
        seen += bool(declared)
    assert seen >= 50  # the IR's node classes, not an empty walk


def test_definitions_come_before_the_fields_that_see_them():
    for cls in _classes():
        order = [n for n, _ in cls._sfields]
        kinds = dict(cls._sfields)
        late = {a.name for a in attrs.fields(cls) if a.metadata.get("tirx.after_defs")}
        assert cls._sbodies <= late, cls.__name__
        for d in (n for n in order if kinds[n] in DEFINING_KINDS and n not in late):
            for b in late:
                assert order.index(d) < order.index(b), (cls.__name__, d, b)
    assert [n for n, _ in Let._sfields] == ["value", "var", "body"]
    assert [n for n, _ in For._sfields][-2:] == ["var", "body"]
    assert tirx.ir.Function._sbodies == {"body"}


def test_a_class_cannot_declare_kinds_twice_or_an_unknown_kind():
    with pytest.raises(ValueError, match="unknown field kind"):
        child("nodes")
    with pytest.raises(TypeError, match="declare field kinds"):

        @frozen_node
        class Twice(PrimExpr):
            a: PrimExpr = child(NODE)
            _sfields = (("a", NODE),)


@frozen_node
class Scaled(PrimExpr):
    """A node class of a user's own: its kinds alone make it structural and traversable."""

    a: PrimExpr = child(NODE)
    factor: int = child(VALUE)
    note: str = ""  # no kind: not structural
    ty: object = child(VALUE, default=int32)


def test_a_new_node_class_is_structural_and_traversable_from_its_kinds():
    x = Var("x")
    assert [n for n, _ in Scaled._sfields] == ["factor", "ty", "a"]
    assert tirx.structural_equal(Scaled(x + 1, 2, "p"), Scaled(x + 1, 2, "q"))  # note is no field
    assert not tirx.structural_equal(Scaled(x + 1, 2), Scaled(x + 1, 3))
    assert not tirx.structural_equal(Scaled(x + 1, 2), Scaled(x + 2, 2))
    assert tirx.structural_hash(Scaled(x + 1, 2, "p")) == tirx.structural_hash(Scaled(x + 1, 2, "q"))

    seen: list[str] = []

    class Names(Visitor):
        def visit_Var(self, v):
            seen.append(v.name)

    Names().visit(Add(Scaled(x, 2), x))
    assert seen == ["x", "x"]

    class One(Mutator):
        def visit_Var(self, v):
            return IntImm(1)

    e = Scaled(x + 1, 2, "p")
    out = One().visit(e)
    assert type(out) is Scaled and out.factor == 2 and out.note == "p"
    assert tirx.structural_equal(out.a, Add(IntImm(1), IntImm(1)))
    assert Mutator().visit(e) is e  # nothing changed: the same object
