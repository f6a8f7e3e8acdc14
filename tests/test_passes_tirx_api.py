"""TIRx's pass API on tirx's pass infrastructure, as code written ``import tirx as tvm`` uses it.

``tvm.transform`` / ``tvm.ir.transform`` (Sequential, PassContext, PassInfo, module_pass,
pass_instrument, PrintIR), ``tvm.tirx.transform`` (function_pass and the built-in passes tirx
has), ``tvm.instrument``: the behaviour each test pins was probed on apache-tvm-tirx 0.1.0a4
(opt-level gating inside Sequential only, required_pass / disabled_pass, the instrument hook
order with the Sequential itself instrumented, a function pass's None dropping the function).
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx
import tirx as tvm
from tirx.ir import Function, Module
from tirx.passes import (
    CommonSubexprElim,
    ConvertSSA,
    PassContext,
    PassInstrument,
    PassTiming,
    Simplify,
    function_pass,
    module_pass,
)
from tirx.passes.infra import PassInfo
from tirx.script import ir as I
from tirx.script import tirx as T
from tirx.testing import strategies as tst

tt = tvm.tirx.transform


@I.ir_module
class Mod:
    @T.function(private=True)
    def main(A: T.Tensor((4,), "int32")):
        for i in T.serial(4):
            A[i] = i

    @T.function(private=True)
    def other(A: T.Tensor((4,), "int32")):
        for j in T.serial(1):  # Simplify: a loop of extent 1 becomes its body
            A[j] = 3


def names(mod):
    return [f.name for f in mod.functions]


@tvm.ir.transform.module_pass(opt_level=3, name="Hi")
def hi(mod, ctx):
    hi.log.append(("Hi", ctx.opt_level))
    return mod


@tvm.ir.transform.module_pass(opt_level=1)
def lo(mod, ctx):
    lo.log.append("lo")
    return mod


@pytest.fixture(autouse=True)
def _fresh_logs():
    hi.log = []
    lo.log = []


# ------------------------------------------------------------------ names
def test_the_module_names():
    assert tvm.transform is tvm.ir.transform
    assert tvm.instrument is tvm.ir.transform.instrument
    assert tvm.transform.PassContext is PassContext
    assert tvm.transform.module_pass is module_pass
    assert tt.function_pass is function_pass
    assert issubclass(tvm.transform.PassInstrument, PassInstrument)
    assert tvm.instrument.PassInstrument is tvm.transform.PassInstrument
    assert tvm.transform.PassInfo is PassInfo
    assert "transform" in dir(tirx) and "instrument" in dir(tirx)


def test_absent_tirx_passes_say_so():
    for name in ("HoistIf", "NarrowDataType", "VectorizeLoop", "RemoveNoOp"):
        with pytest.raises(AttributeError, match=f"no '{name}'.*no tirx equivalent"):
            getattr(tt, name)
    with pytest.raises(AttributeError, match=r"prim_func_pass.*function_pass"):
        tt.prim_func_pass  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        tt.Nope  # noqa: B018


# ------------------------------------------------------------------ function_pass
def test_function_pass_tirx_form_gets_module_and_context():
    seen = []

    @tt.function_pass(opt_level=0)
    def rename(func, mod, ctx):
        seen.append((func.name, isinstance(mod, Module), ctx is tvm.transform.PassContext.current()))
        return func.replace(name=func.name + "_x")

    out = rename(Mod)
    assert names(out) == ["main_x", "other_x"]
    assert seen == [("main", True, True), ("other", True, True)]
    assert rename.info == PassInfo(0, "rename")
    f = rename(Mod.functions[0])  # a bare Function: the pass still gets a module
    assert isinstance(f, Function) and f.name == "main_x" and seen[-1] == ("main", True, True)


def test_function_pass_call_form_and_options():
    p = tt.function_pass(lambda f, m, c: f, opt_level=2, name="Ident")
    assert isinstance(p, tt.FunctionPass) and p.info.opt_level == 2 and p.info.name == "Ident"
    assert p(Mod) is Mod
    q = function_pass(lambda f: f)  # tirx's own forms keep working
    assert q.info == PassInfo(0, "<lambda>") and q(Mod) is Mod


def test_function_pass_none_drops_the_function():
    @tt.function_pass(opt_level=0)
    def drop_other(func, mod, ctx):
        return None if func.name == "other" else func

    assert names(drop_other(Mod)) == ["main"]
    with pytest.raises(TypeError, match="returned NoneType"):
        drop_other(Mod.functions[1])  # a bare Function cannot vanish


def test_function_pass_class():
    @tt.function_pass(opt_level=1)
    class Suffix:
        """Add a suffix."""

        def __init__(self, suffix="_s"):
            self.suffix = suffix

        def transform_function(self, func, mod, ctx):
            assert isinstance(mod, Module) and ctx is PassContext.current()
            return func.replace(name=func.name + self.suffix)

    p = Suffix("_k")
    assert isinstance(p, tt.FunctionPass) and isinstance(p, tvm.transform.Pass)
    assert Suffix.__name__ == "Suffix" and Suffix.__doc__ == "Add a suffix."
    assert p.suffix == "_k" and p.info == PassInfo(1, "Suffix")
    assert names(p(Mod)) == ["main_k", "other_k"]
    assert names(Suffix()(Mod)) == ["main_s", "other_s"]
    with pytest.raises(AttributeError, match="nope"):
        p.nope  # noqa: B018

    @tt.function_pass(opt_level=0, name="Two")
    class TwoArgs:
        def transform_function(self, func, mod):
            return func

    assert TwoArgs().info.name == "Two" and TwoArgs()(Mod) is Mod


# ------------------------------------------------------------------ module_pass
def test_module_pass_forms():
    @tvm.transform.module_pass(opt_level=2, name="KeepMain", required=["convert-ssa"])
    def keep_main(mod, ctx):
        return Module(tuple(f for f in mod.functions if f.name == "main"))

    assert keep_main.info == PassInfo(2, "KeepMain", ["convert-ssa"])
    assert names(keep_main(Mod)) == ["main"]

    @tvm.ir.transform.module_pass(opt_level=0)
    class Pipeline:
        def __init__(self, enable=True):
            self.enable = enable

        def transform_module(self, mod, ctx):
            return tt.StmtSimplify()(mod) if self.enable else mod

    assert isinstance(Pipeline(), tvm.transform.ModulePass)
    assert Pipeline(False)(Mod) is Mod
    assert tirx.structural_equal(Pipeline()(Mod), Simplify()(Mod))

    called = tvm.transform.module_pass(lambda m, c: m, opt_level=1, name="X")
    assert called.info == PassInfo(1, "X") and called(Mod) is Mod


def test_decorator_misuse_names_the_argument():
    with pytest.raises(TypeError, match="pass_func"):
        tvm.transform.module_pass(3, opt_level=1)
    with pytest.raises(TypeError, match="opt_level"):
        tt.function_pass(opt_level="0")
    with pytest.raises(ValueError, match="opt_level"):
        tt.function_pass(opt_level=-1)
    with pytest.raises(TypeError, match="name"):
        tvm.transform.module_pass(opt_level=0, name=3)
    with pytest.raises(TypeError, match="required"):
        tvm.transform.module_pass(opt_level=0, required="convert-ssa")
    with pytest.raises(TypeError, match="transform_function"):

        @tt.function_pass(opt_level=0)
        class NoMethod:
            pass

    with pytest.raises(TypeError, match="pi_cls"):
        tvm.instrument.pass_instrument(3)


# ------------------------------------------------------------------ Sequential and PassContext
def test_sequential_opt_level_gating():
    with tvm.transform.PassContext(opt_level=2):
        hi(Mod)  # called directly: runs whatever its level
        assert hi.log == [("Hi", 2)]
        tvm.transform.Sequential([hi, lo])(Mod)
        assert hi.log == [("Hi", 2)] and lo.log == ["lo"]  # Hi (3 > 2) is skipped
    with tvm.transform.PassContext(opt_level=2, required_pass=["Hi"]):
        tvm.transform.Sequential([hi, lo])(Mod)
    assert len(hi.log) == 2 and len(lo.log) == 2
    with tvm.transform.PassContext(required_pass=["Hi"], disabled_pass=["Hi", "lo"]):
        tvm.transform.Sequential([hi, lo])(Mod)
        lo(Mod)  # disabled_pass gates Sequential's children only
    assert len(hi.log) == 2 and len(lo.log) == 3
    with tvm.transform.PassContext(opt_level=0):
        tvm.transform.Sequential([hi, lo], opt_level=5)(Mod)
    assert len(hi.log) == 2 and len(lo.log) == 3
    with tvm.transform.PassContext(opt_level=2):  # a nested Sequential is gated by its own level
        inner = tvm.transform.Sequential([lo], opt_level=3, name="inner")
        tvm.transform.Sequential([inner, lo])(Mod)
    assert len(lo.log) == 4


def test_sequential_forms_and_names():
    seq = tvm.transform.Sequential([tt.StmtSimplify()])
    assert seq.info == PassInfo(0, "sequential")
    assert tvm.transform.Sequential([], opt_level=3, name="foo").info == PassInfo(3, "foo")
    assert tvm.transform.Sequential()(Mod) is Mod
    assert tirx.passes.Sequential([]).name == "Sequential"  # tirx's default kept
    assert tirx.passes.Sequential([], "named").name == "named"
    assert isinstance(seq, tirx.passes.Sequential)
    with pytest.raises(TypeError, match="passes must be a list"):
        tvm.transform.Sequential(tt.StmtSimplify())
    with pytest.raises(TypeError, match=r"passes\[0\]"):
        tvm.transform.Sequential([1])
    with pytest.raises(TypeError, match="opt_level"):
        tvm.transform.Sequential([], opt_level=1.5)


def test_required_passes_run_first_in_sequential():
    seen = []

    @tvm.transform.module_pass(opt_level=0, required=["tirx.StmtSimplify"])
    def after_simplify(mod, ctx):
        seen.append(tirx.structural_equal(mod, Simplify()(Mod)))
        return mod

    tvm.transform.Sequential([after_simplify])(Mod)
    assert seen == [True]

    @tvm.transform.module_pass(opt_level=0, required=["cse"])
    def after_cse(mod, ctx):
        return mod

    tvm.transform.Sequential([after_cse])(Mod)

    @tvm.transform.module_pass(opt_level=0, required=["no-such-pass"])
    def broken(mod, ctx):
        return mod

    with pytest.raises(ValueError, match="required pass 'no-such-pass'"):
        tvm.transform.Sequential([broken])(Mod)


def test_pass_context_fields_current_and_nesting():
    ctx = tvm.transform.PassContext.current()
    assert ctx.opt_level == 2 and ctx.config == {} and list(ctx.instruments) == []
    with tvm.transform.PassContext(opt_level=3, config={"tirx.noalias": True}) as c1:
        assert tvm.transform.PassContext.current() is c1 and c1.same_as(tvm.transform.PassContext.current())
        with tvm.transform.PassContext(opt_level=1):
            assert tvm.transform.PassContext.current().opt_level == 1
        assert tvm.transform.PassContext.current().config == {"tirx.noalias": True}
    t = PassTiming()
    assert PassContext([t]).instruments == [t]  # tirx's positional instruments
    c = tvm.transform.PassContext(0, ["a"], ("b",), [t], {"k": 1})
    assert (c.opt_level, c.required_pass, c.disabled_pass, c.config) == (0, ("a",), ("b",), {"k": 1})


@pytest.mark.parametrize(
    ("kwargs", "arg"),
    [
        ({"opt_level": "2"}, "opt_level"),
        ({"opt_level": True}, "opt_level"),
        ({"required_pass": "Hi"}, "required_pass"),
        ({"disabled_pass": [1]}, r"disabled_pass\[0\]"),
        ({"instruments": [object()]}, r"instruments\[0\]"),
        ({"instruments": PassTiming()}, "instruments"),
        ({"config": [("a", 1)]}, "config"),
    ],
)
def test_pass_context_misuse_names_the_argument(kwargs, arg):
    with pytest.raises(TypeError, match=arg):
        tvm.transform.PassContext(**kwargs)


def test_pass_info():
    info = tvm.ir.transform.PassInfo(1, "X")
    assert (info.name, info.opt_level, info.required) == ("X", 1, ())
    assert repr(info) == 'transform.PassInfo(opt_level=1, name="X")'
    assert PassInfo(0, "Y", ["a"]).required == ("a",) and "required=['a']" in repr(PassInfo(0, "Y", ["a"]))
    assert hash(PassInfo(1, "X")) == hash(info)
    with pytest.raises(TypeError, match="name"):
        PassInfo(1, 2)
    with pytest.raises(TypeError, match="opt_level"):
        PassInfo("1", "X")
    assert Simplify().info == PassInfo(0, "Simplify")  # every pass has one


# ------------------------------------------------------------------ instruments
def test_instrument_hooks_in_tirx_order():
    log = []

    @tvm.instrument.pass_instrument
    class Rec:
        def __init__(self, tag="r"):
            self.tag = tag

        def enter_pass_ctx(self):
            log.append((self.tag, "enter"))

        def exit_pass_ctx(self):
            log.append((self.tag, "exit"))

        def should_run(self, mod, info):
            log.append((self.tag, "should", info.name, type(mod).__name__))
            return True

        def run_before_pass(self, mod, info):
            log.append((self.tag, "before", info.name))

        def run_after_pass(self, mod, info):
            log.append((self.tag, "after", info.name))

    assert isinstance(Rec(), tvm.transform.PassInstrument) and Rec.__name__ == "Rec"
    with tvm.transform.PassContext(opt_level=2, instruments=[Rec()]):
        tvm.transform.Sequential([hi, lo], name="S")(Mod)
    assert log == [
        ("r", "enter"),
        ("r", "should", "S", "Module"),
        ("r", "before", "S"),
        ("r", "should", "lo", "Module"),
        ("r", "before", "lo"),
        ("r", "after", "lo"),
        ("r", "after", "S"),
        ("r", "exit"),
    ]
    log.clear()
    a, b = Rec("a"), Rec("b")
    with tvm.transform.PassContext(instruments=[a]) as c:
        c.override_instruments([b])
        lo(Mod)
    assert log == [
        ("a", "enter"),
        ("a", "exit"),
        ("b", "enter"),
        ("b", "should", "lo", "Module"),
        ("b", "before", "lo"),
        ("b", "after", "lo"),
        ("b", "exit"),
    ]


def test_instrument_should_run_and_run_after_sees_the_result():
    seen = []

    class Skip(tvm.ir.transform.PassInstrument):  # subclassing works as the decorator does
        def should_run(self, mod, info):
            return info.name != "tirx.StmtSimplify"

        def run_after_pass(self, mod, info):
            seen.append((info.name, mod))

    cse = tt.CommonSubexprElim()
    with tvm.transform.PassContext(instruments=[Skip()]):
        assert tt.StmtSimplify()(Mod) is Mod
        out = cse(Mod)
    assert seen == [("tirx.CommonSubexprElim", out)]

    @tvm.instrument.pass_instrument
    class Forgot:
        def should_run(self, mod, info):
            pass

    with tvm.transform.PassContext(instruments=[Forgot()]), pytest.raises(TypeError, match="should_run"):
        lo(Mod)


def test_tirx_and_native_instruments_share_a_context():
    native, tvm_style = [], []

    class Native(PassInstrument):
        def run_after_pass(self, pass_, before, after):
            native.append((pass_.name, before is Mod))

    @tvm.instrument.pass_instrument
    class Tvm:
        def run_before_pass(self, mod, info):
            tvm_style.append(info.name)

    with PassContext(instruments=[Native(), Tvm()], disabled=["lo"]):
        tvm.transform.Sequential([tt.ConvertSSA(), lo])(Mod)
    assert native == [("tirx.ConvertSSA", True), ("sequential", True)]
    assert tvm_style == ["sequential", "tirx.ConvertSSA"]


def test_failing_enter_leaves_no_context_behind():
    log = []

    @tvm.instrument.pass_instrument
    class Ok:
        def exit_pass_ctx(self):
            log.append("ok exit")

    @tvm.instrument.pass_instrument
    class Bad:
        def enter_pass_ctx(self):
            raise RuntimeError("boom")

    outer = PassContext.current()
    with pytest.raises(RuntimeError, match="boom"), tvm.transform.PassContext(instruments=[Ok(), Bad()]):
        pass
    assert log == ["ok exit"] and PassContext.current() is outer


def test_ready_made_instruments(tmp_path):
    timing = tvm.instrument.PassTimingInstrument()
    with tvm.transform.PassContext(instruments=[timing]):
        tt.StmtSimplify()(Mod)
        report = tvm.instrument.PassTimingInstrument.render()
    assert "tirx.StmtSimplify" in report
    buf = io.StringIO()
    with redirect_stdout(buf), tvm.transform.PassContext(instruments=[tvm.instrument.PrintAfterAll()]):
        tt.StmtSimplify()(Mod)
    assert 'After Running Pass: transform.PassInfo(opt_level=0, name="tirx.StmtSimplify")' in buf.getvalue()
    assert "A[0] = 3" in buf.getvalue()
    buf = io.StringIO()
    printing = tvm.instrument.PassPrintingInstrument(["tirx.ConvertSSA"], [])
    with (
        redirect_stdout(buf),
        tvm.transform.PassContext(instruments=[printing, tvm.instrument.PrintBeforeAll()]),
    ):
        tvm.transform.Sequential([tt.ConvertSSA(), tt.StmtSimplify()])(Mod)
    text = buf.getvalue()
    assert "Print IR before: tirx.ConvertSSA" in text and "Before Running Pass" in text
    dump = tmp_path / "dump"
    with tvm.transform.PassContext(instruments=[tvm.instrument.DumpIR(dump)]):
        tvm.transform.Sequential([tt.StmtSimplify()])(Mod)
    files = sorted(p.name for p in dump.iterdir())
    assert files == ["000_tirx.StmtSimplify.py", "001_sequential.py"]
    assert tirx.structural_equal(tirx.load(dump / files[0]), Simplify()(Mod))
    tvm.instrument.DumpIR(dump, refresh=True)
    assert not dump.exists()


# ------------------------------------------------------------------ built-in passes
def test_builtin_passes_are_tirx_passes_under_tirx_names():
    for make, native, name in [
        (tt.StmtSimplify, Simplify, "tirx.StmtSimplify"),
        (tt.CommonSubexprElim, CommonSubexprElim, "tirx.CommonSubexprElim"),
        (tt.ConvertSSA, ConvertSSA, "tirx.ConvertSSA"),
    ]:
        p = make()
        assert isinstance(p, native) and p.info == PassInfo(0, name)
        assert tirx.structural_equal(p(Mod), native()(Mod))
    assert "A[0] = 3" in tirx.dumps(tt.StmtSimplify()(Mod))


def test_apply_and_filter():
    out = tt.Apply(lambda f: f.replace(name=f.name + "2"))(Mod)
    assert names(out) == ["main2", "other2"] and tt.Apply(lambda f: f).info == PassInfo(0, "Apply")
    assert names(tt.Filter(lambda f: f.name == "main")(Mod)) == ["main"]
    assert tt.Filter(lambda f: True)(Mod) is Mod
    assert names(tt.Filter(lambda f: False)(Mod)) == [] and tt.Filter(len).info.name == "tirx.Filter"
    with pytest.raises(TypeError, match="ftransform"):
        tt.Apply(3)
    with pytest.raises(TypeError, match="fcond"):
        tt.Filter(None)


def test_print_ir_pass_writes_stderr():
    err = io.StringIO()
    with redirect_stderr(err):
        assert tvm.transform.PrintIR("hdr")(Mod) is Mod
    assert err.getvalue().startswith("PrintIR(hdr):\n") and "A[j] = 3" in err.getvalue()
    with pytest.raises(TypeError, match="header"):
        tvm.transform.PrintIR(3)


# ------------------------------------------------------------------ properties
def _rename(func, mod, ctx):
    return func.replace(name=func.name + "_r")


CANDIDATES = [
    tt.StmtSimplify,
    tt.CommonSubexprElim,
    tt.ConvertSSA,
    lambda: tt.Apply(lambda f: f),
    lambda: tt.function_pass(_rename, opt_level=1),
]
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(
    ir=st.one_of(tst.functions(), tst.modules()),
    picks=st.lists(st.tuples(st.integers(0, len(CANDIDATES) - 1), st.integers(0, 3)), max_size=5),
    level=st.integers(0, 3),
)
def test_sequential_is_the_composition_of_its_enabled_passes(ir, picks, level):
    passes = []
    for i, lvl in picks:
        p = CANDIDATES[i]()
        p.opt_level = lvl
        passes.append(p)
    with tvm.transform.PassContext(opt_level=level):
        got = tvm.transform.Sequential(passes)(ir)
        want = ir
        for p in passes:
            if p.opt_level <= level:
                want = p(want)
    assert tirx.structural_equal(got, want)
