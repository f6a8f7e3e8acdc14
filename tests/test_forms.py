"""Surface forms (tirx/forms.py): one FormSpec per ``T.<Form>`` drives the Python frontend, the
text loader and the printer. For every form: generated valid calls build the same IR through
the Python frontend, the text loader and print-then-load; bad calls (missing, extra, wrong
kind, unknown keyword) fail with the same located message in both front ends."""

from __future__ import annotations

import inspect

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_frontend_util import load_module, printed_text_as_python

import tirx
from tirx import forms
from tirx.errors import DiagnosticError
from tirx.ir.stmt import ForKind
from tirx.script import tirx as T

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))

# one kernel per call: the form's value bound to y; the module gives T.Call a function to call
HEAD = "@T.ir_module\nclass Module:\n    @T.function\n    def g(a: T.int32) -> T.int32:\n        return a\n\n"
KERNEL = (
    "    @T.function\n"
    "    def k(n: T.int32, m: T.int32, p: T.int64, x: T.float32, h: T.float16):\n"
    "        {use}\n"
)
USE = {"expr": "y = {call}", "loop": "for i in {call}:\n            pass"}
CALL_LINE = 9  # the line of the call in the text (the Python module has 2 import lines more)
CALL_COL = {"expr": 13, "loop": 18}
ALL = (*forms.FORMS, forms.RANGE)  # range(...) is the builtin's name, not a T member

# ------------------------------------------------------------------ valid arguments (texts)
EXPRS = {
    "int32": ["n", "m", "n + 1", "n * m", "T.int32(7)", "T.min(n, m)"],
    "int64": ["p", "T.int64(3)", "p - 1", "T.Cast(T.int64, n)"],
    "float32": ["x", "T.float32(1.5)", "x * x", 'T.Cast("float32", n)'],
    "float16": ["h", "T.float16(2.0)"],
    "bool": ["n < m", "x > T.float32(0.0)", "T.bool(True)"],
}
LITERAL = {"int32": st.integers(-100, 100).map(str), "float32": st.sampled_from(["0.5", "2.0", "-1.25"])}


def expr(dt: str, literal: bool = True) -> st.SearchStrategy[str]:
    s = st.sampled_from(EXPRS[dt])
    return st.one_of(s, LITERAL[dt]) if literal and dt in LITERAL else s


def spell(spec: forms.FormSpec, name: str, vals: list, kw_from: int = 99) -> str:
    """``T.name(v0, v1, p2=v2)``: values in parameter order (None: not given); positional
    while the parameter can be and no earlier one was skipped, up to ``kw_from`` of them."""
    parts = []
    n_pos = 0
    gap = False
    for i, (p, v) in enumerate(zip(spec.params, vals)):
        if v is None:
            gap = True
            continue
        if i in spec.pos_idx and (p.pos_only or (not gap and n_pos < kw_from)):
            parts.append(v)
            n_pos += 1
        else:
            gap = True
            parts.append(f"{p.name}={v}")
    return f"{'' if spec is forms.RANGE else 'T.'}{name}({', '.join(parts)})"


def names(spec: forms.FormSpec) -> list[str]:
    return [spec.name, *spec.aliases]


@st.composite
def ramp(draw):
    dt = draw(st.sampled_from(["int32", "int64"]))
    base = draw(expr(dt))
    stride = draw(expr(dt, literal=dt == "int32" or not base.lstrip("-").isdigit()))
    return [base, stride, str(draw(st.integers(2, 16)))]


@st.composite
def broadcast(draw):
    dt = draw(st.sampled_from(sorted(EXPRS)))
    return [draw(expr(dt)), str(draw(st.integers(2, 16)))]


@st.composite
def select(draw):
    dt = draw(st.sampled_from(["int32", "int64", "float32", "float16"]))
    a = draw(expr(dt))
    b = draw(expr(dt, literal=dt in LITERAL or not a[0].isdigit()))
    return [draw(expr("bool", literal=False)), a, b]


@st.composite
def cast(draw):
    to = draw(st.sampled_from(['"float32"', "T.int64", '"int8"', "T.float16", '"bool"', "T.Ptr(T.float32)"]))
    dt = draw(st.sampled_from(["int32", "int64", "float32"] if "Ptr" not in to else ["int64"]))
    return [to, draw(expr(dt, literal=False))]


@st.composite
def let(draw):
    dt = draw(st.sampled_from(["int32", "int64", "float32"]))
    body = draw(st.sampled_from(["t", "t + t", "t * t", "n"]))
    return [f"t := {draw(expr(dt, literal=False))}", body]


@st.composite
def call(draw):
    args = draw(st.sampled_from(["[n]", "[m + 1]", "[T.int32(3)]"]))
    return ["Module.g", args, "T.int32"]


@st.composite
def loop(draw, kind: str):
    """start, stop, step, thread, annotations (a range takes the first three)."""
    dt = draw(st.sampled_from(["int32", "int64"]))
    if draw(st.booleans()):
        vals = [draw(expr(dt)), None]
    else:
        vals = [draw(expr(dt)), draw(expr(dt))]
    vals.append(draw(st.sampled_from([None, "1", "2", "3"])) if vals[1] is not None else None)
    if kind == "range":
        return vals
    vals.append('"threadIdx.x"' if kind == "thread_binding" else None)
    vals.append(draw(st.sampled_from([None, '{"pragma": 1}', '{"a": "b", "n": 2}'])))
    return vals


VALID = {
    "Ramp": ramp(), "Broadcast": broadcast(), "Select": select(), "Cast": cast(), "Let": let(), "Call": call(),
    **{k: loop(k) for k in ("serial", "unroll", "vectorized", "parallel", "thread_binding", "range")},
}  # fmt: skip
# a fixed valid call per form for the bad-argument cases (bodies that name no walrus var)
FIXED = {
    "Ramp": ["n", "1", "4"],
    "Broadcast": ["x", "4"],
    "Select": ["n < m", "n", "m"],
    "Cast": ['"float32"', "n"],
    "Let": ["t := n * 2", "n"],
    "Call": ["Module.g", "[n]", "T.int32"],
    **{k: ["0", "n", "1", None, '{"a": 1}'] for k in ("serial", "unroll", "vectorized", "parallel")},
    "thread_binding": ["0", "n", "1", '"threadIdx.x"', '{"a": 1}'],
    "range": ["0", "n", "1"],
}
BAD = {
    "expr": '"s"',
    "int": "n",
    "dtype": "3",
    "type": "3",
    "binding": "n",
    "funcref": "n",
    "exprs": "n",
    "str": "3",
    "dict": "3",
}


def test_every_form_has_a_generator_and_every_kind_a_bad_value():
    assert set(VALID) == set(FIXED) == {f.name for f in ALL}
    assert set(BAD) == set(forms.KINDS)


def text_of(call_text: str, role: str = "expr") -> str:
    return HEAD + KERNEL.format(use=USE[role].format(call=call_text))


def build_both(text: str):
    loaded = tirx.loads(text)
    py = load_module(printed_text_as_python(text), "forms").Module
    return loaded, py


@pytest.mark.parametrize("spec", ALL, ids=lambda f: f.name)
def test_frontend_text_and_printed_builds_agree(spec):
    @SETTINGS
    @given(vals=VALID[spec.name], alias=st.sampled_from(names(spec)), data=st.data())
    def check(vals, alias, data):
        kw_from = data.draw(st.integers(0, spec.hi)) if spec.params[0].kind != "binding" else spec.hi
        text = text_of(spell(spec, alias, vals, kw_from), spec.role)
        loaded, py = build_both(text)
        tirx.assert_structural_equal(py, loaded)
        printed = tirx.dumps(loaded)
        again = tirx.loads(printed)
        tirx.assert_structural_equal(again, loaded)
        assert tirx.dumps(again) == printed  # printing is a fixpoint
        y = loaded.functions[1].body
        y = getattr(y, "stmts", [y])[0]
        if spec.role == "loop":  # the form built its loop, printed as a range or under its name
            assert type(y) is spec.node and y.kind.value == ("serial" if spec is forms.RANGE else spec.name)
            plain = y.kind.value == "serial" and not y.annotations and y.thread is None
            assert ("for i in range(" if plain else f"for i in T.{y.kind.value}(") in printed
        else:  # the form built its node and prints under its own name
            assert type(y.value) is spec.node and f"T.{spec.name}(" in printed

    check()


def bad_calls(spec: forms.FormSpec):
    """(what, call text) for each way a call can miss the declaration."""
    vals = FIXED[spec.name]
    pre = "" if spec is forms.RANGE else "T."
    positional = [vals[i] for i in spec.pos_idx]
    out = [
        ("missing", f"{pre}{spec.name}({', '.join(positional[: spec.lo - 1])})", "positional argument(s)"),
        ("extra", f"{pre}{spec.name}({', '.join([*positional, 'n'])})", "positional argument(s)"),
        ("keyword", spell(spec, spec.name, vals)[:-1] + ", bogus=1)", "keyword argument 'bogus'"),
    ]
    for i, p in enumerate(spec.params):
        bad = list(vals)
        bad[i] = BAD[p.kind]
        want = "first argument" if p.kind == "binding" else p.name
        out.append((f"kind:{p.name}", spell(spec, spec.name, bad), want))
    return out


CASES = [(spec, *c) for spec in ALL for c in bad_calls(spec)]


@pytest.mark.parametrize("spec,what,call_text,want", CASES, ids=[f"{c[0].name}-{c[1]}" for c in CASES])
def test_bad_arguments_same_located_error_in_both_front_ends(spec, what, call_text, want):
    text = text_of(call_text, spec.role)
    with pytest.raises(DiagnosticError) as t_err:
        tirx.loads(text)
    with pytest.raises(DiagnosticError) as p_err:
        load_module(printed_text_as_python(text), "forms_bad")
    te, pe = t_err.value, p_err.value
    assert te.message == pe.message, (te.message, pe.message)
    assert te.message.startswith(call_text.split("(")[0]) and want in te.message, te.message
    assert (te.span.line, te.span.col) == (CALL_LINE, CALL_COL[spec.role])
    assert (pe.span.line - 2, pe.span.col) == (CALL_LINE, CALL_COL[spec.role])  # 2 import lines above


def test_unknown_dtype_message_is_shared():
    text = text_of('T.Cast("float33", n)')
    msgs = []
    for load in (tirx.loads, lambda t: load_module(printed_text_as_python(t), "forms_dt")):
        with pytest.raises(DiagnosticError) as e:
            load(text)
        msgs.append(e.value.message)
    assert msgs[0] == msgs[1] == "T.Cast: unknown dtype 'float33'"


@pytest.mark.parametrize("spec", forms.FORMS, ids=lambda f: f.name)
def test_T_functions_are_the_forms(spec):
    for n in names(spec):
        f = getattr(T, n)
        assert f.__tirx_form__ is spec and n in T.__all__
        sig = inspect.signature(f).parameters
        assert set(sig) == {p.name for p in spec.params}
        assert [k for k in sig if sig[k].kind is not inspect.Parameter.KEYWORD_ONLY] == [
            spec.params[i].name for i in spec.pos_idx
        ]
        assert forms.by_name(n) is spec
    if spec.role == "loop":
        assert forms.LOOPS[ForKind(spec.name)] is spec  # the printer finds a For's form by its kind
    else:
        assert forms.by_node(spec.node) is spec


def test_bind_is_python_like():
    spec = forms.by_name("Ramp")
    assert spec.bind([1], {"stride": 2, "lanes": 4}) == [1, 2, 4]
    with pytest.raises(forms.FormError, match="multiple values for argument 'base'"):
        spec.bind([1], {"base": 2, "lanes": 4})
    with pytest.raises(forms.FormError, match="missing required argument 'lanes'"):
        spec.bind([1], {"stride": 2})
    with pytest.raises(forms.FormError, match=r"T.Ramp takes 3 positional argument\(s\), got 4"):
        spec.bind([1, 2, 3, 4], {})


def test_python_values_convert_once():
    """Outside a kernel the T functions build nodes from Python values, by the same rules."""
    r = T.Ramp(0, tirx.ir.Var("q", "int64"), 4)  # the literal base takes the stride's dtype
    assert str(r.ty) == "int64x4"
    assert T.Broadcast(T.float16(1.0), 8).lanes == 8
    with pytest.raises(TypeError, match=r"T\.Broadcast: lanes must be an int literal"):
        T.Broadcast(1, 2.5)
    with pytest.raises(TypeError, match=r"T\.Let's first argument must be an assignment expression"):
        T.Let(1, 2)
