"""The traversal base (tirx/ir/functor.py, issue #30): per-class dispatch tables built once,
subclass overrides honoured, exact-class dispatch by name, each call site's own fallback,
and ``rebuild``."""

from __future__ import annotations

import gc
import weakref

import pytest

import tirx
from tirx.ir import Add, Cast, Mul, Var
from tirx.ir.functor import Dispatch, DispatchTable, Functor, clear_tables, rebuild
from tirx.ir.types import int32, int64
from tirx.ir.visitor import Mutator, Visitor


class A:
    pass


class B:
    pass


class SubA(A):  # dispatch is on the exact class name: SubA finds h_SubA, never h_A
    pass


class Base(Functor):
    _h = Dispatch("h_")

    def run(self, node):
        fn = self._h[type(node)]
        return "fallback" if fn is None else fn(self, node)

    def h_A(self, node):
        return "Base.h_A"

    def h_B(self, node):
        return "Base.h_B"


class Child(Base):
    def h_A(self, node):
        return "Child.h_A"


class GrandChild(Child):
    h_B = None  # an attribute set to None is no method: the fallback


def test_subclass_overrides_and_mro():
    assert Base().run(A()) == "Base.h_A"
    assert Child().run(A()) == "Child.h_A"
    assert Child().run(B()) == "Base.h_B"  # inherited through the MRO
    assert GrandChild().run(A()) == "Child.h_A"
    assert GrandChild().run(B()) == "fallback"
    # the order the tables are first used in does not matter: each class has its own
    assert Base().run(A()) == "Base.h_A"
    tables = {cls: cls.__dict__["_h"] for cls in (Base, Child, GrandChild)}
    assert all(isinstance(t, DispatchTable) for t in tables.values())
    assert len({id(t) for t in tables.values()}) == 3
    assert tables[Child].functor is Child and tables[Child].prefix == "h_"


def test_exact_class_by_name_and_fallback():
    assert Base().run(SubA()) == "fallback"
    assert Base().run(object()) == "fallback"

    class WithSub(Base):
        def h_SubA(self, node):
            return "h_SubA"

    assert WithSub().run(SubA()) == "h_SubA" and WithSub().run(A()) == "Base.h_A"
    # same name, another class: found by name, as getattr(self, prefix + name) would
    other_a = type("A", (), {})
    assert Base().run(other_a()) == "Base.h_A"


def test_table_is_built_once_lazily_and_cleared_on_request():
    class F(Base):
        pass

    assert isinstance(F.__dict__["_h"], Dispatch)  # nothing built before the first dispatch
    f = F()
    assert f.run(A()) == "Base.h_A"
    table = F.__dict__["_h"]
    assert isinstance(table, DispatchTable) and set(table) == {A}  # only the classes met
    assert f.run(B()) == "Base.h_B" and set(table) == {A, B}
    for _ in range(3):
        f.run(A())
        F().run(B())
    assert F.__dict__["_h"] is table  # never rebuilt

    # built once: a method added after the lookup is not seen until the tables are cleared
    F.h_A = lambda self, node: "patched"
    assert f.run(A()) == "Base.h_A"
    clear_tables(F)
    assert isinstance(F.__dict__["_h"], Dispatch)
    assert f.run(A()) == "patched"


def test_subclass_made_after_the_base_table_still_gets_its_own():
    assert Base().run(A()) == "Base.h_A"  # Base's table exists now

    class Late(Base):
        def h_A(self, node):
            return "Late.h_A"

    assert Late().run(A()) == "Late.h_A"
    assert Base().run(A()) == "Base.h_A"


def test_non_function_attributes_behave_as_on_the_instance():
    class S(Base):
        @staticmethod
        def h_A(node):
            return ("static", type(node).__name__)

        @classmethod
        def h_B(cls, node):
            return ("class", cls.__name__)

    assert S().run(A()) == ("static", "A")
    assert S().run(B()) == ("class", "S")


def test_mixins_with_several_prefixes():
    class E(Functor):
        _e = Dispatch("e_")

        def e_A(self, node):
            return "e_A"

    class St(Functor):
        _s = Dispatch("s_")

        def s_A(self, node):
            return "s_A"

    class Both(E, St):
        def s_A(self, node):
            return "Both.s_A"

    b = Both()
    assert b._e[A](b, A()) == "e_A"
    assert b._s[A](b, A()) == "Both.s_A"
    assert b._e[B] is None and b._s[B] is None
    assert St()._s[A](None, A()) == "s_A"


def test_classes_made_per_call_are_not_kept_alive():
    def make():
        class Tmp(Base):
            pass

        Tmp().run(A())
        return weakref.ref(Tmp)

    ref = make()
    gc.collect()
    assert ref() is None  # the table lives on the class, no global registry holds it


# ---------------------------------------------------------------------------- call sites
x = Var("x", int32)
y = Var("y", int32)


def test_visitor_dispatch_override_and_generic_fallback():
    seen = []

    class Names(Visitor):
        def visit_Var(self, v):
            seen.append(v.name)

    class Adds(Names):
        def visit_Add(self, e):
            seen.append("+")
            self.generic_visit(e)

    e = Mul(Add(x, y), x)
    Names().visit(e)  # no visit_Mul / visit_Add: generic_visit walks the operands
    assert seen == ["x", "y", "x"]
    seen.clear()
    Adds().visit(e)
    assert seen == ["+", "x", "y", "x"]
    assert Names().visit(None) is None


def test_mutator_override_rebuilds_only_what_changed():
    class Swap(Mutator):
        def visit_Var(self, v):
            return y if v is x else v

    e = Mul(Add(y, y), y)
    out = Swap().visit(e)
    assert out is e  # no x: the same object
    e2 = Mul(Add(x, y), y)
    out2 = Swap().visit(e2)
    assert out2 is not e2 and type(out2) is Mul and out2.b is e2.b
    assert out2.a.a is y and out2.a.b is y

    m = Mutator()
    m.var_map[x] = y  # the base class's own visit_Var
    assert m.visit(e2).a.a is y


def test_rebuild_keeps_identity_and_filters_kinds():
    e = Add(x, y)
    calls = []

    def same(node, kind, v):
        calls.append(kind)
        return v

    assert rebuild(e, same) is e
    assert "value" in calls  # every field without a kinds filter (the dtype is a value)
    calls.clear()
    assert rebuild(e, same, frozenset(("node",))) is e
    assert set(calls) == {"node"}
    swapped = rebuild(e, lambda node, kind, v: y if v is x else v, frozenset(("node",)))
    assert type(swapped) is Add and swapped.a is y and swapped.b is y and swapped.ty == e.ty


class Weird:
    span = None


def test_codegen_keeps_its_unsupported_errors():
    from tirx.codegen.cuda import CodeGenCUDA

    cg = CodeGenCUDA()
    with pytest.raises(tirx.DiagnosticError, match="cuda codegen: unsupported expression Weird"):
        cg.expr(Weird())
    with pytest.raises(tirx.DiagnosticError, match="cuda codegen: unsupported statement Weird"):
        cg.stmt(Weird())


def test_interp_keeps_its_errors():
    from tirx.interp.engine import FuncCompiler
    from tirx.ops.semantics.errors import InterpError

    fc = FuncCompiler.__new__(FuncCompiler)  # dispatch needs no state
    with pytest.raises(InterpError, match="the interpreter cannot evaluate Weird expressions"):
        fc.expr(Weird())
    with pytest.raises(InterpError, match="the interpreter cannot execute Weird statements"):
        fc.stmt(Weird())


def test_scoped_rewriter_dispatch_and_error():
    from tirx.passes._scoped import ScopedRewriter

    class R(ScopedRewriter):
        def expr_Cast(self, e):
            return e.value

        def expr_Mul(self, e):  # never called: binary operators take the fast path
            raise AssertionError

    r = R()
    assert r.expr(Cast(int64, x)) is x
    out = r.expr(Add(Mul(Cast(int32, y), y), y))
    assert type(out.a) is Mul and out.a.a is y and out.b is y
    c = Cast(int64, Mul(x, y))
    assert ScopedRewriter().expr(c) is c  # generic_expr: nothing changed, the same node
    sr = ScopedRewriter()
    sr.vmap[x] = y
    c2 = sr.expr(Cast(int64, Add(x, y)))  # generic_expr rebuilds the Cast around the new Add
    assert type(c2) is Cast and c2.ty == int64 and c2.value.a is y and c2.value.b is y
    with pytest.raises(AttributeError, match="'R' object has no attribute 'stmt_Weird'"):
        r.stmt(Weird())
