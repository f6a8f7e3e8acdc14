"""Error kinds subclass RuntimeError directly; internal failures never leak as KeyError etc."""

from __future__ import annotations

import pytest

import tirx
from tirx import errors
from tirx.ir import Add, IntImm, SeqStmt, Var, structural_equal, structural_hash


@pytest.mark.parametrize("name", errors.__all__)
def test_error_kinds_subclass_runtime_error_directly(name):
    cls = getattr(errors, name)
    assert cls.__bases__ == (RuntimeError,)
    assert issubclass(cls, RuntimeError)


def test_error_kinds_are_public():
    assert tirx.DiagnosticError is errors.DiagnosticError
    assert tirx.InternalError is errors.InternalError
    assert tirx.OpError is errors.OpError


def test_diagnostic_error_fields():
    e = errors.DiagnosticError(
        "undefined name 'y'", span=("k.tirx", 9, 18), rendered="error: undefined name 'y'\n --> k"
    )
    assert e.message == "undefined name 'y'"
    assert e.span == ("k.tirx", 9, 18)
    assert str(e).startswith("error: undefined name")
    plain = errors.DiagnosticError("boom")
    assert str(plain) == "boom" and plain.span is None
    with pytest.raises(RuntimeError):
        raise plain


def test_corrupted_node_field_is_a_type_error_not_key_error():
    # a node whose field was forced to a non-node must give a TypeError naming the type
    s = SeqStmt(())
    object.__setattr__(s, "stmts", (object(),))
    with pytest.raises(TypeError, match="object"):
        structural_hash(s)
    t = SeqStmt(())
    object.__setattr__(t, "stmts", (object(),))
    with pytest.raises(TypeError, match="object"):
        structural_equal(s, t)
    assert not structural_equal(s, SeqStmt((SeqStmt(()),)))


def test_deep_trees_do_not_raise_recursion_error():
    a = Var("a")
    e = a
    for i in range(3000):
        e = Add(e, IntImm(i))
    f = a
    for i in range(3000):
        f = Add(f, IntImm(i))
    assert structural_equal(e, f)
    assert structural_hash(e) == structural_hash(f)


def test_api_misuse_raises_type_or_value_error():
    # two dtypes match as TIRx's operators match them (int32 beside int64 widens) ...
    assert str((Var("a", "int32") + Var("b", "int64")).ty) == "int64"
    # ... where they can: vectors of two lane counts cannot
    with pytest.raises(TypeError, match=r"cannot combine dtypes float32x4 and float32x2"):
        Var("a", "float32x4") + Var("b", "float32x2")
    with pytest.raises(ValueError, match="unknown dtype"):
        Var("a", "float33")
