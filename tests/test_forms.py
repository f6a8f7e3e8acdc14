"""Surface forms (tirx/surface/forms.py): one FormSpec per ``T.<Form>`` drives the Python frontend, the
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
import tirx.surface.layout_forms  # declares the layout forms' kinds (tirx/surface/layout_forms.py)
from tirx.errors import DiagnosticError
from tirx.ir.stmt import ForKind
from tirx.script import tirx as T
from tirx.surface import forms
from tirx.surface.launch_config import LAUNCH_KEYWORDS

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))

# one kernel per call: the form's value bound to y; the module gives T.Call a function to call
HEAD = "@T.ir_module\nclass Module:\n    @T.function\n    def g(a: T.int32) -> T.int32:\n        return a\n\n"
KERNEL = (
    "    @T.function\n"
    '    def k(n: T.int32, m: T.int32, p: T.int64, x: T.float32, h: T.float16, q: T.Ptr(T.float32, "shared"){param}):\n'
    "        {use}\n"
)
# how a call of each role is used: a value bound to y, a for header, a type annotating a
# parameter z, a binding statement whose target is y, a with header, a statement
USE = {
    "expr": "y = {call}",
    "loop": "for i in {call}:\n            pass",
    "type": "pass",
    "bind": "y = {call}",
    "region": "with {call}:\n            pass",
    "stmt": "{call}",
}
CALL_LINE = {
    "expr": 9,
    "loop": 9,
    "bind": 9,
    "type": 8,
    "region": 9,
    "stmt": 9,
}  # (Python: 2 import lines more)
CALL_COL = {"expr": 13, "loop": 18, "bind": 13, "type": 109, "region": 14, "stmt": 9}
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
        if p.star:  # *values: written out, never by keyword
            parts.append(v)
        elif i in spec.pos_idx and (p.pos_only or (not gap and n_pos < kw_from)):
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
def shuffle(draw):
    """vectors (float32 scalars and x4 vectors), then in-range lane indices (tirx/ir/shuffle.py)."""
    vs = draw(
        st.lists(st.sampled_from(["x", "T.Broadcast(x, 4)", "T.Broadcast(x * x, 4)"]), min_size=1, max_size=3)
    )
    total = sum(4 if v.startswith("T.Broadcast") else 1 for v in vs)
    idx = draw(
        # n % 1 would fold to 0 in the frontend (as in TIRx) but not in text: a runtime index only past 1
        st.lists(
            st.sampled_from([*map(str, range(total)), *(["n % " + str(total)] if total > 1 else [])]),
            min_size=1,
            max_size=4,
        )
    )
    return [f"[{', '.join(vs)}]", f"[{', '.join(idx)}]"]


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
    """start, stop, thread, [unroll (serial),] annotations, step, dtype (TIRx's printed order; a
    range takes start, stop, step)."""
    dt = draw(st.sampled_from(["int32", "int64"]))
    if draw(st.booleans()):
        vals = [draw(expr(dt)), None]
    else:
        vals = [draw(expr(dt)), draw(expr(dt))]
    step = draw(st.sampled_from([None, "1", "2", "3"])) if vals[1] is not None else None
    if kind == "range":
        return [*vals, step]
    vals.append('"threadIdx.x"' if kind == "thread_binding" else None)
    if kind == "serial":
        vals.append(draw(st.sampled_from([None, "True", "False", "2"])))
    vals.append(draw(st.sampled_from([None, '{"pragma": 1}', '{"a": "b", "n": 2}'])))
    vals.append(step)
    vals.append(None)  # dtype: the bounds' dtype prints, not the keyword
    return vals


@st.composite
def tensor(draw, body: bool = False):
    """shape, dtype, scope, strides, elem_offset, align, layout, data (the kernel's vars only in a body:
    an annotation is evaluated before the parameters exist)."""
    shapes = ["(4,)", "(3, 8)", "4", "(2, 3, 4)", "[5, 6]", "()", "T.int32(7)"]
    shape = draw(st.sampled_from(shapes + (["(n, 8)", "(m,)", "n", "[n, m]"] if body else [])))
    strides = draw(st.sampled_from([None, "(8, 1)"])) if shape in ("(n, 8)", "(3, 8)") else None
    return [
        shape,
        draw(st.sampled_from([None, '"float32"', "T.float16", '"int8"', "T.bfloat16"])),
        draw(st.sampled_from([None, '"shared"', '"local"', '"global"'])),
        strides,
        draw(st.sampled_from([None, "0", "T.int32(2)", *(["n"] if body else [])])),
        draw(st.sampled_from([None, "0", "16"])),
        draw(st.sampled_from([None, 'T.TileLayout.from_iters(shard=[T.Iter(4, 1, "m")], replica=[])'])),
        None,
    ]


@st.composite
def ptr(draw):
    element = draw(st.sampled_from([None, "T.float32", '"int8"', "T.void", "T.Ptr(T.uint64)", "T.float16x2"]))
    scope = draw(st.sampled_from([None, '"shared"', '"global"'])) if element is not None else None
    return [element, scope]


@st.composite
def alloc_tensor(draw):
    t = draw(tensor(body=True))
    t[2] = draw(st.sampled_from([None, '"shared"', '"local"']))
    t[3] = t[4] = None  # an allocation owns its storage: dense, no offset
    ty = "T.Tensor(" + ", ".join(v if i < 2 else f"{n}={v}" for i, (n, v) in enumerate(
        zip(("shape", "dtype", "scope", "strides", "elem_offset", "align"), t[:6])) if v is not None) + ")"  # fmt: skip
    return [f"[{ty}]", draw(st.sampled_from([None, '{"pragma": 1}', '{"a": "b", "n": [1, 2]}']))]


@st.composite
def decl_tensor(draw):
    t = draw(tensor(body=True))
    t[1], t[2] = '"float32"', None  # a view of q: its element dtype, its scope
    ty = "T.Tensor(" + ", ".join(v if i < 2 else f"{n}={v}" for i, (n, v) in enumerate(
        zip(("shape", "dtype", "scope", "strides", "elem_offset", "align"), t[:6])) if v is not None) + ")"  # fmt: skip
    return ["q", f"[{ty}]"]


LAUNCH6 = '["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]'


@st.composite
def device_entry(draw):
    """*values, attrs."""
    return draw(st.sampled_from([
        ["1, 1, 1, 128, 1, 1", None],
        ["n, 1, 1, 128, 1, 1", None],
        ["2, 1, 1, 64, 1, 1, 2, 1, 1", None],
        ["1, 1, 1, 32, 1, 1, 1, 1, 1, m * 4", None],
        ["m, 1, 1, 32, 1, 1", '{"cuda.kernel_attrs": {}, "cuda.launch_fields": ' + LAUNCH6 + "}"],
        ["4, 128", '{"cuda.kernel_attrs": {"x": 1}, "cuda.launch_fields": ["grid.x", "block.x"]}'],
    ]))  # fmt: skip


@st.composite
def attr(draw):
    return [
        draw(st.sampled_from(['"pragma"', '"a.b"'])),
        draw(st.sampled_from(["n", "1", '"s"', "x * x", "n < m"])),
    ]


EVALUATED = ["n", "x * x", "1", '"s"', "n < m", "T.Select(n < m, n, m)"]
FUNC_ATTRS = ['{"global_symbol": "k"}', '{"a": 1, "b": [1, 2], "c": {"d": "e"}}', "{}"]


VALID = {
    "Ramp": ramp(), "Broadcast": broadcast(), "Select": select(), "Cast": cast(), "Shuffle": shuffle(), "Let": let(), "Call": call(),
    **{k: loop(k) for k in ("serial", "unroll", "vectorized", "parallel", "thread_binding", "range")},
    "Tensor": tensor(), "Ptr": ptr(), "alloc_tensor": alloc_tensor(), "decl_tensor": decl_tensor(),
    "device_entry": device_entry(),
    "attr": attr(),
    "evaluate": st.sampled_from(EVALUATED).map(lambda v: [v]),
    "func_attr": st.sampled_from(FUNC_ATTRS).map(lambda v: [v]),
    "dtype": st.sampled_from(['"float32"', "T.float16", '"int8x4"', '"bool"']).map(lambda v: [v]),
}  # fmt: skip
# a fixed valid call per form for the bad-argument cases (bodies that name no walrus var)
FIXED = {
    "Ramp": ["n", "1", "4"],
    "Broadcast": ["x", "4"],
    "Select": ["n < m", "n", "m"],
    "Cast": ['"float32"', "n"],
    "Shuffle": ["[T.Broadcast(x, 4)]", "[1, 0]"],
    "Let": ["t := n * 2", "n"],
    "Call": ["Module.g", "[n]", "T.int32"],
    # the parameters in TIRx's printed order: start, stop, thread, [unroll,] annotations, step, dtype
    "serial": ["0", "n", None, "2", '{"a": 1}', "1", None],
    **{k: ["0", "n", None, '{"a": 1}', "1", None] for k in ("unroll", "vectorized", "parallel")},
    "thread_binding": ["0", "n", '"threadIdx.x"', '{"a": 1}', "1", None],
    "range": ["0", "n", "1"],
    "Tensor": ["(4, 2)", '"float16"', '"shared"', "(2, 1)", "0", "16", None, None],
    "Ptr": ["T.float32", '"shared"'],
    "alloc_tensor": ['[T.Tensor((4,), "float32")]', '{"a": 1}'],
    "decl_tensor": ["q", '[T.Tensor((4,), "float32")]'],
    "device_entry": [
        "1, 1, 1, 128, 1, 1",
        '{"cuda.kernel_attrs": {}, "cuda.launch_fields": ' + LAUNCH6 + "}",
    ],
    "attr": ['"pragma"', "n"],
    "evaluate": ["n"],
    "func_attr": ['{"a": 1}'],
    "dtype": ['"float32"'],
}
BAD = {
    "expr": '"s"',
    "int": "n",
    "dtype": "3",
    "type": "3",
    "calltype": "3",
    "binding": "n",
    "funcref": "n",
    "exprs": "n",
    "typed_exprs": "n",
    "call_args": "n",
    "str": "3",
    "dict": "3",
    "shape": '"s"',
    "dims": '"s"',
    "dim": "T.float32(1.5)",
    "nat": "-1",
    "layout": "3",
    "iters": "[3]",  # the layout forms' kinds (tirx/surface/layout_forms.py)
    "axis_offsets": '{"m": "s"}',
    "flag": "1",
    "axis": "3",
    "primtype": "T.Ptr(T.float32)",
    "elemtype": "3",
    "ptrvar": "n",
    "ptrexpr": "n",
    "tensor_arg": "n",
    "view_arg": "[T.Ptr(T.float32)]",
    "launch_values": '"s"',
    "value": "[1]",
    "grid_extents": "1.5",  # (T.grid, a derived-style form: tests/test_forms_derived.py)
    "unset": "1",  # (the TVM keywords of derived forms)
    "unroll": "0",  # (T.serial's unroll=: True, False or a positive int)
    "types": "3",  # (T.Func / T.Tuple, the host-type input forms: tests/test_script_ir_names_parity.py)
    "config": "3",  # (T.target's config, an input form: the same file)
}
# a call with one argument too many where the plain one would be another valid spelling
# (alloc_tensor's positional form is T.Tensor's), or takes any number (device_entry's values)
EXTRA = {
    "alloc_tensor": ('T.alloc_tensor((4,), "float32", "global", (1,), 0, 0, n)', "positional argument(s)"),
    "device_entry": ("T.device_entry(1, 1, 1, 128, 1, 1, n)", "it takes 6 launch values"),
}
# Python-only keywords of a T function (its own spelling of the form's values)
_PY_DEVICE_ENTRY = set(LAUNCH_KEYWORDS)
PY_ONLY = {"device_entry": _PY_DEVICE_ENTRY}


def test_every_form_has_a_generator_and_every_kind_a_bad_value():
    assert set(VALID) == set(FIXED) == {f.name for f in ALL}
    assert set(BAD) == set(forms.KINDS)


def text_of(call_text: str, role: str = "expr") -> str:
    param = f", z: {call_text}" if role == "type" else ""
    return HEAD + KERNEL.format(param=param, use=USE[role].format(call=call_text))


def as_python(text: str, role: str) -> str:
    """The text as a Python module; a type role's annotations are evaluated by the frontend
    (postponed, so a bad call is located like any other), not by Python at ``def`` time."""
    py = printed_text_as_python(text)
    return "from __future__ import annotations\n" + py if role == "type" else py


def build_both(text: str, role: str = "expr"):
    loaded = tirx.loads(text)
    py = load_module(as_python(text, role), "forms").Module
    return loaded, py


@pytest.mark.parametrize("spec", ALL, ids=lambda f: f.name)
def test_frontend_text_and_printed_builds_agree(spec):
    @SETTINGS
    @given(vals=VALID[spec.name], alias=st.sampled_from(names(spec)), data=st.data())
    def check(vals, alias, data):
        kw_from = data.draw(st.integers(0, spec.hi)) if spec.params[0].kind != "binding" else spec.hi
        text = text_of(spell(spec, alias, vals, kw_from), spec.role)
        loaded, py = build_both(text, spec.role)
        tirx.assert_structural_equal(py, loaded)
        printed = tirx.dumps(loaded)
        again = tirx.loads(printed)
        tirx.assert_structural_equal(again, loaded)
        assert tirx.dumps(again) == printed  # printing is a fixpoint
        k = loaded.functions[1]
        y = k.body
        y = (getattr(y, "stmts", None) or [y])[0]
        if spec.role == "type":  # the parameter z has the type (a tensor: its buffer)
            z = k.params[-1]
            if spec.node is tirx.ir.TensorType:
                assert z in dict(k.buffer_map) and "z: T.Tensor(" in printed
            else:
                assert type(z.ty) is spec.node and f"z: {tirx.dumps(z.ty)}" in printed
        elif spec.role == "stmt":  # the statement stands where the call was
            if spec.name == "func_attr":  # empty attributes are not printed
                assert ("T.func_attr(" in printed) == bool(k.attrs) and k.attrs == tirx.loads(text).functions[
                    1
                ].attrs
            else:
                assert type(y) is spec.node and f"T.{spec.name}(" in printed
        elif spec.role == "region":  # the region's statement, printed as a with header
            assert type(y) is spec.node and f"with T.{spec.name}(" in printed
        elif spec.role == "bind":  # the statement binds y
            assert type(y) is spec.node and y.buffer.name == "y" and f"y = T.{spec.name}(" in printed
        elif spec.role == "loop":  # the form built its loop, printed as a range or under its name
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
    required_kw = [p.name for p in spec.params if p.kw_only and p.default is forms.REQUIRED]
    out = [
        ("extra", *EXTRA.get(spec.name, (f"{pre}{spec.name}({', '.join([*positional, 'n'])})", "positional argument(s)"))),
        ("keyword", spell(spec, spec.name, vals)[:-1] + ", bogus=1)", "keyword argument 'bogus'"),
    ]  # fmt: skip
    if spec.lo:
        out.append(
            ("missing", f"{pre}{spec.name}({', '.join(positional[: spec.lo - 1])})", "positional argument(s)")
        )
    elif required_kw:
        out.append(("missing", f"{pre}{spec.name}()", f"missing required argument '{required_kw[0]}'"))
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
        load_module(as_python(text, spec.role), "forms_bad")
    te, pe = t_err.value, p_err.value
    assert te.message == pe.message, (te.message, pe.message)
    assert te.message.startswith(call_text.split("(")[0]) and want in te.message, te.message
    assert (te.span.line, te.span.col) == (CALL_LINE[spec.role], CALL_COL[spec.role])
    above = 3 if spec.role == "type" else 2  # the import lines above the text in the module
    assert (pe.span.line - above, pe.span.col) == (CALL_LINE[spec.role], CALL_COL[spec.role])


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
        sig = {k: v for k, v in inspect.signature(f).parameters.items() if k not in PY_ONLY.get(n, ())}
        assert set(sig) == {p.name for p in spec.params}
        assert [k for k in sig if sig[k].kind is not inspect.Parameter.KEYWORD_ONLY] == [
            spec.params[i].name for i in spec.pos_idx
        ]
        assert forms.by_name(n) is spec
    if spec.role == "loop":
        assert forms.LOOPS[ForKind(spec.name)] is spec  # the printer finds a For's form by its kind
    elif spec.role in ("type", "bind", "region", "stmt"):
        assert spec in forms.TYPES + forms.BINDINGS + forms.REGIONS + forms.STMTS  # the printer's tables
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


def test_func_attr_twice_merges_and_a_repeated_key_is_the_same_located_error():
    """As TIRx: two ``T.func_attr`` calls merge; a key given twice (even with one value) is an error."""
    m = tirx.loads(text_of('T.func_attr({"a": 1})\n        T.func_attr({"b": 2})', "stmt"))
    assert dict(m.functions[-1].attrs.items()) == {"a": 1, "b": 2}
    text = text_of('T.func_attr({"a": 1})\n        T.func_attr({"a": 1})', "stmt")
    msgs = []
    for load, above in ((tirx.loads, 0), (lambda t: load_module(printed_text_as_python(t), "forms_fa"), 2)):
        with pytest.raises(DiagnosticError) as e:
            load(text)
        msgs.append((e.value.message, e.value.span.line - above))
    want = "T.func_attr gives the key 'a' twice (first 1, then 1)"
    assert msgs[0] == msgs[1] == (want, CALL_LINE["stmt"] + 1)


@SETTINGS
@given(
    grid=st.sampled_from([2, 4, (2, 3), (2, 2, 3)]),  # whole clusters (TIRx's LaunchConfig checks)
    block=st.sampled_from([32, 128, (16, 8)]),
    cluster=st.sampled_from([None, 2, (2, 1, 1)]),
    smem=st.sampled_from([None, 0, 4096]),
)
def test_launch_config_is_a_spelling_of_the_device_entry_form(grid, block, cluster, smem):
    """Python's ``launch=T.cuda.LaunchConfig(...)`` normalizes into the form's values and attrs:
    it prints as ``T.device_entry(*values, attrs=...)``, which both front ends load back."""
    src = (
        "@T.function\ndef k(A: T.Tensor((4,), T.float32)):\n"
        f"    with T.device_entry(launch=T.cuda.LaunchConfig(grid={grid!r}, block={block!r}, "
        f"cluster={cluster!r}, dynamic_smem_bytes={smem!r})):\n        A[0] = T.float32(1.0)\n"
    )
    built = load_module(printed_text_as_python(src), "forms_lc").k
    printed = tirx.dumps(built)
    assert "with T.device_entry(" in printed and "attrs={" in printed
    tirx.assert_structural_equal(tirx.loads(printed), built)
    py = load_module(printed_text_as_python(printed), "forms_lc2").k
    tirx.assert_structural_equal(py, built)


def test_alloc_spellings_build_the_same_statement():
    """``T.alloc_tensor(shape, dtype, scope=...)`` and ``attrs=`` are spellings of the printed form."""
    forms_ = [
        'y = T.alloc_tensor(ty_args=[T.Tensor((4, n), "float16", scope="shared")], annotations={"a": 1})',
        'y = T.alloc_tensor((4, n), "float16", scope="shared", annotations={"a": 1})',
        'y = T.alloc_tensor((4, n), T.float16, "shared", attrs={"a": 1})',
    ]
    built = []
    for f in forms_:
        text = text_of(f, "stmt")
        built += [tirx.loads(text), load_module(printed_text_as_python(text), "forms_al").Module]
    for b in built[1:]:
        tirx.assert_structural_equal(b, built[0])
    # printed as TIRx prints it: ``attrs=``, an int value a typed constant
    assert (
        'y = T.alloc_tensor(ty_args=[T.Tensor((4, n), T.float16, scope="shared")], attrs={"a": T.int32(1)})'
        in (tirx.dumps(built[0]))
    )
