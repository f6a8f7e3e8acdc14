"""Derived forms (tirx/surface/forms.py ``derive``, ``DERIVED``, ``GRID``, ``LET``): conveniences declared
once as a base form with fixed values. ``T.alloc_shared`` / ``T.smem``, ``T.alloc_local``,
``T.alloc_buffer``, ``T.decl_buffer``, ``T.cast`` and ``T.grid`` build through the Python
frontend and load from text alike, and print as their base form (``T.alloc_tensor``,
``T.decl_tensor``, ``T.Cast``, nested loops), which loads back to the same IR; bad calls fail
with the same located message in both front ends. ``T.let[ty]`` is a subscript form read by both
front ends and written by the printer from the same declaration."""

from __future__ import annotations

import inspect

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_forms import BAD, CALL_COL, CALL_LINE, SETTINGS, build_both, spell, text_of
from test_frontend_util import load_module, printed_text_as_python

import tirx
from tirx.errors import DiagnosticError
from tirx.ir.stmt import AllocBuffer, DeclBuffer, For
from tirx.script import tirx as T
from tirx.surface import forms

DERIVED = (*forms.DERIVED, forms.GRID)
ROLE = {"bind": "bind", "expr": "expr", "loops": "loop"}  # how test_forms' kernel uses a call


def by(name: str) -> forms.FormSpec:
    return forms.by_name(name)


# ------------------------------------------------------------------ valid arguments (texts)
SHAPES = ["(4,)", "(3, 8)", "4", "(2, 3, 4)", "[5, 6]", "(n, 8)", "(m,)", "n", "T.int32(7)"]
DTYPES = [None, '"float32"', "T.float16", '"int8"', "T.bfloat16", '"uint64"']
ANNOTATIONS = [None, '{"pragma": 1}', '{"a": "b", "n": [1, 2]}']
ALIGN = [None, "0", "16"]


@st.composite
def alloc_in(draw, scope=None):
    """shape, dtype, strides, align, annotations, then the TVM keywords left None; ``scope``:
    T.alloc_shared / T.alloc_local's ``scope=`` (after layout), left out or spelled."""
    vals = [draw(st.sampled_from(SHAPES)), draw(st.sampled_from(DTYPES)), None]
    vals += [draw(st.sampled_from(ALIGN)), draw(st.sampled_from(ANNOTATIONS))]
    unset = [draw(st.sampled_from([None, "None"])) for _ in forms.TVM_UNSET]
    if scope is None:
        return vals + unset
    return vals + unset[:1] + [draw(st.sampled_from([None, f'"{scope}"']))] + unset[1:]


@st.composite
def alloc_buffer(draw):
    """shape, dtype, scope, strides, elem_offset, align, annotations."""
    scope = draw(st.sampled_from([None, '"global"', '"shared"', '"local"', '"shared.dyn"']))
    return [draw(st.sampled_from(SHAPES)), draw(st.sampled_from(DTYPES)), scope, None, None,
            draw(st.sampled_from(ALIGN)), draw(st.sampled_from(ANNOTATIONS))]  # fmt: skip


@st.composite
def decl_buffer(draw):
    """shape, dtype, data, scope, strides, elem_offset, align: a view of q (float32, shared), or
    without data an allocation in scope."""
    shape = draw(st.sampled_from(SHAPES))
    if draw(st.booleans()):
        strides = draw(st.sampled_from([None, "(8, 1)"])) if shape in ("(n, 8)", "(3, 8)") else None
        return [shape, draw(st.sampled_from([None, '"float32"'])), "q", draw(st.sampled_from([None, '"shared"'])),
                strides, draw(st.sampled_from([None, "0", "T.int32(2)", "n"])), draw(st.sampled_from(ALIGN))]  # fmt: skip
    scope = draw(st.sampled_from([None, '"global"', '"shared"', '"local"']))
    return [shape, draw(st.sampled_from(DTYPES)), None, scope, None, None, draw(st.sampled_from(ALIGN))]


@st.composite
def cast(draw):
    """value, dtype: a no-op cast (the value's own dtype) gives the value itself (not a bare
    parameter here: ``y = n`` binds no new var in the Python frontend; no constant: the Python
    frontend folds ``T.cast`` of a constant as TIRx does, tirx/script/parser.py)."""
    value, own = draw(st.sampled_from([("n * 2", "int32"), ("p - 1", "int64"), ("x + 1.0", "float32"), ("h * h", "float16"),
                                        ("n + m", "int32"), ("x * x", "float32"), ("n < m", "bool")]))  # fmt: skip
    to = draw(
        st.sampled_from([f'"{own}"', f"T.{own}", '"float32"', "T.int64", '"int8"', "T.float16", '"bool"'])
    )
    return [value, to]


@st.composite
def grid(draw):
    """One extent: the text's for header binds one name."""
    ext = draw(st.sampled_from(["4", "n", "(1, n)", "(T.int32(2), 8)", "(0, m)", "T.int64(5)", "(p, p + 3)",
                                "(2, p)", "(n, n + 4)"]))  # fmt: skip
    return [ext]


VALID = {"alloc_shared": alloc_in("shared"), "alloc_local": alloc_in("local"), "tmem": alloc_in(), "alloc_buffer": alloc_buffer(),
         "decl_buffer": decl_buffer(), "cast": cast(), "grid": grid()}  # fmt: skip
FIXED = {
    "alloc_shared": ["(4,)", '"float16"', None, "16", '{"a": 1}'],
    "alloc_local": ["(4,)", '"float16"', None, "16", '{"a": 1}'],
    "tmem": ["(4,)", '"float16"', None, "16", '{"a": 1}'],
    "alloc_buffer": ["(4,)", '"float16"', '"shared"', None, "0", "16", '{"a": 1}'],
    "decl_buffer": ["(4,)", '"float32"', "q", '"shared"', None, "0", "16"],
    "cast": ["n", '"float32"'],
    "grid": ["(1, n)"],
}
# what the derived form prints as: its base form (a no-op cast: the value)
PRINTED_AS = {
    "alloc_shared": "y = T.alloc_tensor(ty_args=[T.Tensor(",
    "alloc_local": "y = T.alloc_tensor(ty_args=[T.Tensor(",
    "tmem": "y = T.alloc_tensor(ty_args=[T.Tensor(",
    "alloc_buffer": "y = T.alloc_tensor(ty_args=[T.Tensor(",
    "decl_buffer": "y = T.",
    "cast": "y: T.let[",
    "grid": "for i in range(",
}


def names(spec: forms.FormSpec) -> list[str]:
    return [spec.name, *spec.aliases]


def test_every_derived_form_has_a_generator():
    assert set(VALID) == set(FIXED) == set(PRINTED_AS) == {f.name for f in DERIVED}
    assert {p.kind for f in DERIVED for p in f.params} <= set(BAD)


@pytest.mark.parametrize("spec", DERIVED, ids=lambda f: f.name)
def test_frontend_text_and_printed_builds_agree(spec):
    """frontend build = text load = print-then-load, and what prints is the base form."""
    role = ROLE[spec.role]

    @SETTINGS
    @given(vals=VALID[spec.name], alias=st.sampled_from(names(spec)), data=st.data())
    def check(vals, alias, data):
        call = spell(spec, alias, vals, data.draw(st.integers(0, spec.hi)))
        text = text_of(call, role)
        loaded, py = build_both(text, role)
        tirx.assert_structural_equal(py, loaded)
        printed = tirx.dumps(loaded)
        again = tirx.loads(printed)
        tirx.assert_structural_equal(again, loaded)
        assert tirx.dumps(again) == printed
        assert PRINTED_AS[spec.name] in printed and f"T.{alias}(" not in printed
        y = loaded.functions[1].body
        y = (getattr(y, "stmts", None) or [y])[0]
        if spec.role == "bind":
            assert type(y) in (AllocBuffer, DeclBuffer) and y.buffer.name == "y"
            if spec.name == "decl_buffer":
                assert type(y) is (DeclBuffer if vals[2] else AllocBuffer)
            elif spec.name != "alloc_buffer":
                assert y.buffer.scope == spec.name.removeprefix("alloc_")  # T.tmem: "tmem"
        elif spec.role == "loops":
            assert type(y) is For and y.kind.value == "serial"

    check()


@pytest.mark.parametrize("spec", DERIVED, ids=lambda f: f.name)
def test_a_derived_call_is_its_base_call(spec):
    """``T.alloc_shared(s, d)`` loads to what ``T.alloc_tensor(ty_args=[T.Tensor(s, d,
    scope="shared")])`` loads to, and so on: the derived form is the base with fixed values."""
    base = {
        "alloc_shared": 'y = T.alloc_tensor(ty_args=[T.Tensor((4,), "float16", scope="shared", align=16)], annotations={"a": 1})',
        "alloc_local": 'y = T.alloc_tensor(ty_args=[T.Tensor((4,), "float16", scope="local", align=16)], annotations={"a": 1})',
        "tmem": 'y = T.alloc_tensor(ty_args=[T.Tensor((4,), "float16", scope="tmem", align=16)], annotations={"a": 1})',
        "alloc_buffer": 'y = T.alloc_tensor(ty_args=[T.Tensor((4,), "float16", scope="shared", elem_offset=0, align=16)], annotations={"a": 1})',
        "decl_buffer": 'y = T.decl_tensor(q, ty_args=[T.Tensor((4,), "float32", scope="shared", elem_offset=0, align=16)])',
        "cast": 'y = T.Cast("float32", n)',
        "grid": "for i in T.serial(1, 1 + n):\n            pass",
    }[spec.name]  # fmt: skip
    derived = text_of(spell(spec, spec.name, FIXED[spec.name]), ROLE[spec.role])
    tirx.assert_structural_equal(tirx.loads(derived), tirx.loads(text_of(base, "stmt")))
    assert spec.unparse is None and spec.base and spec.base[0].unparse is not None


# ------------------------------------------------------------------ bad calls
def bad_calls(spec: forms.FormSpec):
    vals = FIXED[spec.name]
    positional = [vals[i] for i in spec.pos_idx]
    out = [("keyword", spell(spec, spec.name, vals)[:-1] + ", bogus=1)", "keyword argument 'bogus'")]
    if spec.star is None:
        out.append(("extra", f"T.{spec.name}({', '.join([*positional, 'n'])})", "positional argument(s)"))
        out.append(
            ("missing", f"T.{spec.name}({', '.join(positional[: spec.lo - 1])})", "positional argument(s)")
        )
    else:
        out.append(("missing", f"T.{spec.name}()", "needs at least one extent"))
    for i, p in enumerate(spec.params):
        bad = list(vals) + [None] * (len(spec.params) - len(vals))
        bad[i] = BAD[p.kind]
        out.append((f"kind:{p.name}", spell(spec, spec.name, bad), p.name))
    return out


EXTRA_CASES = [
    (
        by("decl_buffer"),
        "scope",
        'T.decl_buffer((4,), "float32", q, "local")',
        "differs from the pointer's scope",
    ),
    (by("alloc_shared"), "alias", 'T.smem((4,), "float32", layout="x")', "layout must be a T.TileLayout"),
    (by("grid"), "pair", "T.grid((1, 2, 3))", "a tuple extent is (start, extent)"),
    (by("grid"), "float", "T.grid((0, 2.5))", "extents must be integers"),
    (by("cast"), "dtype", 'T.cast(n, "float33")', "unknown dtype 'float33'"),
]
CASES = [(spec, *c) for spec in DERIVED for c in bad_calls(spec)] + EXTRA_CASES


@pytest.mark.parametrize("spec,what,call_text,want", CASES, ids=[f"{c[0].name}-{c[1]}" for c in CASES])
def test_bad_arguments_same_located_error_in_both_front_ends(spec, what, call_text, want):
    role = ROLE[spec.role]
    text = text_of(call_text, role)
    with pytest.raises(DiagnosticError) as t_err:
        tirx.loads(text)
    with pytest.raises(DiagnosticError) as p_err:
        load_module(printed_text_as_python(text), "derived_bad")
    te, pe = t_err.value, p_err.value
    assert te.message == pe.message, (te.message, pe.message)
    assert te.message.startswith(call_text.split("(")[0]) and want in te.message, te.message
    assert (te.span.line, te.span.col) == (CALL_LINE[role], CALL_COL[role])
    assert (pe.span.line - 2, pe.span.col) == (CALL_LINE[role], CALL_COL[role])


def test_grid_of_several_extents():
    """Python binds several targets; it prints as nested loops, which both front ends load back;
    the text takes the same header (one name per loop) to the same IR, and refuses a header
    whose names do not match its loops."""
    src = (
        "@T.function\ndef k(A: T.Tensor((4, 8, 3), T.float32), n: T.int32):\n"
        "    for i, j, c in T.grid(4, (2, n), (T.int32(1), 2)):\n        A[i, j, c] = T.float32(1.0)\n"
    )
    built = load_module(printed_text_as_python(src), "derived_grid").k
    printed = tirx.dumps(built)
    assert "for i in range(4):" in printed and "for j in range(2, 2 + n):" in printed
    assert "for c in range(1, 3):" in printed
    tirx.assert_structural_equal(tirx.loads(printed), built)
    tirx.assert_structural_equal(tirx.loads(src), built)
    one = src.replace("for i, j, c in", "for i in")
    with pytest.raises(DiagnosticError, match="3 nested loops take 3 names") as e:
        tirx.loads(one)
    assert (e.value.span.line, e.value.span.col) == (3, 14)


def test_cast_to_the_own_dtype_is_the_value():
    text = text_of('y = T.cast(n, "int32") + T.cast(x, T.int32)', "stmt")
    for mod in build_both(text):
        k = mod.functions[1]
        bind = (getattr(k.body, "stmts", None) or [k.body])[0]
        cast = bind.value.b
        assert bind.value.a is k.params[0] and type(cast) is tirx.ir.Cast and cast.value is k.params[3]


# ------------------------------------------------------------------ T.let[ty]
LET_CASES = [("T.int32", "n + 1"), ("T.int64", "p"), ('"float32"', "x"), ('T.Ptr(T.float32, "shared")', "q"),
             ("T.float16", "h"), ("T.int64", "3"), ("T.bool", "n < m")]  # fmt: skip


@SETTINGS
@given(case=st.sampled_from(LET_CASES))
def test_let_subscript_is_one_declaration(case):
    ty, value = case
    text = text_of(f"y: T.let[{ty}] = {value}", "stmt")
    loaded, py = build_both(text)
    tirx.assert_structural_equal(py, loaded)
    printed = tirx.dumps(loaded)
    assert "y: T.let[" in printed
    tirx.assert_structural_equal(tirx.loads(printed), loaded)


@pytest.mark.parametrize(
    "ann,want",
    [
        ("T.let[T.int32, T.int64]", "T.let[...] takes 1 positional argument(s), got 2"),
        ("T.let[()]", "T.let[...] takes 1 positional argument(s), got 0"),
        ("T.let[3]", "T.let[...]: ty must be a dtype, got an int literal"),
        ('T.let["int33"]', "T.let[...]: unknown dtype 'int33'"),
    ],
)
def test_let_bad_subscripts_same_located_error(ann, want):
    text = text_of(f"y: {ann} = n", "stmt")
    errs = []
    for load, above in (
        (tirx.loads, 0),
        (lambda t: load_module(printed_text_as_python(t), "derived_let"), 2),
    ):
        with pytest.raises(DiagnosticError) as e:
            load(text)
        errs.append((e.value.message, e.value.span.line - above, e.value.span.col))
    assert errs[0] == errs[1] == (want, CALL_LINE["stmt"], 12)


def test_let_is_not_called():
    with pytest.raises(DiagnosticError, match=r"T.let is written T.let\[...\], not called"):
        tirx.loads(text_of("y = T.let(T.int32)", "stmt"))


# ------------------------------------------------------------------ the declarations
@pytest.mark.parametrize("spec", DERIVED, ids=lambda f: f.name)
def test_T_functions_are_the_derived_forms(spec):
    for n in names(spec):
        f = getattr(T, n)
        assert f.__tirx_form__ is spec and forms.by_name(n) is spec and n in T.__all__
        assert list(inspect.signature(f).parameters) == [p.name for p in spec.params]
    assert forms.by_node(spec.node) is not spec  # the printer prints the base form


def test_derive_checks_its_routing():
    with pytest.raises(ValueError, match="bogus reach no parameter"):
        forms.derive("alloc_x", forms.ALLOC_TENSOR, (forms.Param("bogus", "int"),))
    spec = forms.derive("alloc_cluster", forms.ALLOC_TENSOR, (forms.Param("shape", "shape"),), {"scope": "shared"},
                        doc="a user's derived form")  # fmt: skip
    t = spec.call([(2, 3)], {})
    assert t.form == "alloc_tensor" and t.args[0].scope == "shared" and t.args[0].shape[1] == 3
    with pytest.raises(forms.FormError, match=r"T\.alloc_cluster: shape must be a tuple of integers"):
        spec.call(["s"], {})


def test_tvm_keywords_only_when_unset():
    ok = text_of('T.alloc_buffer((4,), "float32", offset_factor=4, layout=None, buffer_type=None)', "bind")
    loaded, py = build_both(ok)
    tirx.assert_structural_equal(py, loaded)
