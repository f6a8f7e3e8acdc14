"""Trust in the front ends (#12 items 5 and 6).

Item 5: the Python frontend and the text loader apply one set of checks (the
well-formedness verifier, run when the IRBuilder finishes a function or module), so a
program is rejected by both or by neither, with the same kind of located message, and
every function the Python frontend accepts prints to text that loads back equal.

Item 6: ``@T.jit`` specializations are keyed by type and exact value (floats by their
bits), in an LRU cache of bounded size.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import re
import struct
import uuid
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
from tirx import DiagnosticError
from tirx.script import tirx as T
from tirx.script.decorators import DEFAULT_JIT_CACHE_SIZE, JitFunction

# ================================================================== item 5: one set of checks

HEADER = "from tirx.script import tirx as T\n\n"
ENTRY = "with T.device_entry(1, 1, 1, 32, 1, 1):"


@pytest.fixture(scope="module")
def pydir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kernels")


def load_python(directory: Path, text: str):
    """Import ``text`` as a Python file (the Python frontend reads it from there)."""
    name = f"k_{uuid.uuid4().hex}"
    path = directory / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, "M", None) or mod.f


def outcome_python(directory: Path, text: str):
    """("ok", ir) or ("error", message, span); a Python-level SyntaxError counts as an error."""
    try:
        return ("ok", load_python(directory, text))
    except DiagnosticError as e:
        return ("error", e.message, e.span, str(e))
    except SyntaxError as e:  # e.g. `break` outside any Python loop: CPython rejects it first
        return ("error", e.msg, None, str(e))


def outcome_text(text: str):
    try:
        return ("ok", tirx.loads(text, source_name="k.tirx"))
    except DiagnosticError as e:
        return ("error", e.message, e.span, str(e))


def kernel(body: list[str], private: bool = False, ret: str = "") -> str:
    deco = "@T.function(private=True)" if private else "@T.function"
    params = "A: T.Tensor((4,), T.int32), B: T.Tensor((4,), T.float32)"
    lines = [deco, f"def f({params}){ret}:", *("    " + ln for ln in body)]
    return HEADER + "\n".join(lines) + "\n"


# message categories: each front end's wording must match the category's pattern
CATEGORY = {
    "break": r"'?break'? outside (a )?loop",
    "continue": r"'?continue'? (outside|not properly in) (a )?loop",
    "nested_entry": r"device entry nested inside another device entry",
    "float_index": r"index .*must be an integer",
    "return_type": r"return value has type float32, the function returns int32",
    "return_untyped": r"return with a value in a function without a return type",
    "return_missing": r"return without a value in a function returning int32",
    # checks each front end already made at parse time, in the same words or close
    "undefined": r"undefined name 'zzz'|name 'zzz' is not defined",
    "store_dtype": r"store to A: value dtype float32 differs from buffer dtype int32",
    "rank": r"buffer A has rank 1, got 2 indices",
    "bool_cond": r"condition must be a scalar",
}

# device-only ops in host code: TIRx builds and loads them (its compile refuses them), so both
# front ends accept them, building the same IR; the verifier still reports them (check
# "device_only", what VerifyWellFormed raises) and the CUDA target refuses them
HOST_DEVICE_OPS = [
    ("device op in host code", kernel(['A[0] = T.cuda.thread_idx("x")'])),
    (
        "device op in a launch value",
        kernel(['with T.device_entry(T.cuda.block_idx("x"), 1, 1, 32, 1, 1):', "    A[0] = 1"]),
    ),
    ("device op in a host loop bound", kernel(['for i in range(T.cuda.thread_idx("x")):', "    A[0] = 1"])),
    ("device op in a host if", kernel(['if T.cuda.thread_idx("x") < 2:', "    A[0] = 1"])),
    ("device PTX op in host code", kernel(['T.ptx.wgmma("commit_group", "sync", "aligned", "")'])),
    (
        "device op in a module function",
        HEADER
        + "@T.ir_module\nclass M:\n    @T.function\n    def g(A: T.Tensor((4,), T.int32)):\n"
        + '        A[0] = T.cuda.thread_idx("x")\n',
    ),
]

# (name, text, category, the offending source snippet on its line)
TABLE = [
    (
        "break in a device entry inside a host loop",
        kernel(["for i in range(2):", "    " + ENTRY, "        break"]),
        "break",
        "break",
    ),
    (
        "continue in a device entry inside a host loop",
        kernel(["for i in range(2):", "    " + ENTRY, "        continue"]),
        "continue",
        "continue",
    ),
    ("break outside any loop", kernel(["A[0] = 1", "break"]), "break", "break"),
    (
        "nested device entry",
        kernel([ENTRY, "    " + ENTRY, "        A[0] = 1"]),
        "nested_entry",
        ENTRY,
    ),
    ("float index", kernel(["A[B[0]] = 1"]), "float_index", "A[B[0]] = 1"),
    (
        "return of the wrong type",
        kernel(["return T.float32(1.5)"], ret=" -> T.int32"),
        "return_type",
        "return T.float32(1.5)",
    ),
    ("return value without a return type", kernel(["return A[0]"]), "return_untyped", "return A[0]"),
    ("bare return in a typed function", kernel(["return"], ret=" -> T.int32"), "return_missing", "return"),
    ("undefined name", kernel(["A[0] = zzz"]), "undefined", "zzz"),
    # "store of another dtype" (A[0] = B[0], int32 <- float32) is no longer an error: both front
    # ends cast the stored value to the tensor's dtype, as TIRx does (issue #14)
    ("wrong rank", kernel(["A[0, 1] = 1"]), "rank", None),
    # an integer condition is TIRx's too (true when not zero: tests/test_probe_compat.py); a
    # vector one is not a condition at all
    ("vector if condition", kernel(["if T.Broadcast(T.bool(True), 4):", "    A[1] = 1"]), "bool_cond", None),
]


def _check_located(out, text: str, snippet: str | None, source: str | None) -> None:
    span = out[2]
    if span is None or snippet is None:  # CPython's own SyntaxError carries no tirx span
        return
    inner = getattr(span, "innermost", span)
    line = text.split("\n")[inner.line - 1]
    assert snippet in line, (line, out[3])
    # the caret points at the offending expression / statement
    assert line.index(snippet) + 1 == inner.col, (line, inner, out[3])
    assert "^" in out[3] and f":{inner.line}:{inner.col}" in out[3]
    if source is not None:
        assert inner.source == source


@pytest.mark.parametrize("name,text,category,snippet", TABLE, ids=[t[0] for t in TABLE])
def test_invalid_programs_rejected_by_both_front_ends(pydir, name, text, category, snippet):
    py = outcome_python(pydir, text)
    tx = outcome_text(text)
    assert py[0] == "error", f"the Python frontend accepted: {name}"
    assert tx[0] == "error", f"the text loader accepted: {name}"
    assert re.search(CATEGORY[category], py[1]), py[3]
    assert re.search(CATEGORY[category], tx[1]), tx[3]
    _check_located(py, text, snippet, None)
    _check_located(tx, text, snippet, "k.tirx")


@pytest.mark.parametrize("name,text", HOST_DEVICE_OPS, ids=[t[0] for t in HOST_DEVICE_OPS])
def test_host_device_ops_accepted_by_both_front_ends_refused_on_compile(pydir, name, text):
    from tirx.passes import verify_well_formed

    py = outcome_python(pydir, text)
    tx = outcome_text(text)
    assert py[0] == "ok", py[3]
    assert tx[0] == "ok", tx[3]
    tirx.assert_structural_equal(tx[1], py[1])
    tirx.assert_structural_equal(tirx.loads(tirx.dumps(py[1])), py[1])
    errors = verify_well_formed(py[1])
    assert errors and all(e.check == "device_only" for e in errors), errors
    assert "can only be used inside a device entry" in errors[0].message
    with pytest.raises(DiagnosticError, match="can only be used inside a device entry") as ei:
        tirx.compile(py[1], target="cuda -arch=sm_90a", cache=False)
    assert ei.value.span is not None  # located at the op, whichever part of the host code fails


def test_python_frontend_error_keeps_file_line_col_and_caret(pydir):
    text = kernel(["A[1] = 2", "A[0] = A[B[0]] + 1"])
    with pytest.raises(DiagnosticError) as ei:
        load_python(pydir, text)
    e = ei.value
    assert (e.span.line, e.span.col) == (6, 12)
    assert e.span.source.endswith(".py")
    rendered = str(e).splitlines()
    assert rendered[0].startswith("error: ") and "must be an integer" in rendered[0]
    assert rendered[1].endswith(":6:12")
    assert rendered[-1].split("|", 1)[1] == " " * 12 + "^" * len("A[B[0]]")


def test_check_well_formed_false_opts_out(pydir):
    text = kernel(["A[B[0]] = 1"]).replace("@T.function", "@T.function(check_well_formed=False)")
    f = load_python(pydir, text)
    assert isinstance(f, tirx.Function)
    with pytest.raises(DiagnosticError, match="must be an integer"):
        tirx.loads(tirx.dumps(f))


# -- generated programs: every (context, statement) placement, and short sequences of them

# contexts: (lines opening it, whether a device entry encloses it, whether a loop with no
# device entry in between encloses it, whether a Python loop encloses it, private)
CONTEXTS = {
    "host": ([], False, False, False, False),
    "private": ([], False, False, False, True),
    "entry": ([ENTRY], True, False, False, False),
    "loop": (["for i in range(2):"], False, True, True, False),
    "entry_in_loop": (["for i in range(2):", ENTRY], True, False, True, False),
    "loop_in_entry": ([ENTRY, "for i in range(2):"], True, True, True, False),
    "private_loop": (["for i in range(2):"], False, True, True, True),
}
STATEMENTS = {
    "store": ["A[0] = 1"],
    "device_op": ['A[0] = T.cuda.thread_idx("x")'],
    "break": ["break"],
    "continue": ["continue"],
    "nested_entry": [ENTRY, "    A[1] = 2"],
    "float_index": ["A[B[0]] = 1"],
    "device_op_launch": ['with T.device_entry(T.cuda.block_idx("x"), 1, 1, 32, 1, 1):', "    A[2] = 3"],
}


def problems(ctx: str, stmt: str) -> set[str]:
    """The categories of error a statement placed in a context has (the oracle)."""
    _, in_dev, in_loop, _py_loop, _private = CONTEXTS[ctx]
    out = set()  # a device op outside a device entry is no error (TIRx loads it; compile refuses it)
    if stmt in ("break", "continue") and not in_loop:
        out.add(stmt)
    if stmt in ("nested_entry", "device_op_launch") and in_dev:
        out.add("nested_entry")
    if stmt == "float_index":
        out.add("float_index")
    return out


def program(items: list[tuple[str, str]]) -> tuple[str, set[str]]:
    body: list[str] = []
    expected: set[str] = set()
    private = any(CONTEXTS[c][4] for c, _ in items)
    for ctx, stmt in items:
        if CONTEXTS[ctx][4] != private:  # one function: all items share its privacy
            ctx = {"private": "host", "private_loop": "loop", "host": "private", "loop": "private_loop"}.get(
                ctx, ctx
            )
            if CONTEXTS[ctx][4] != private:
                ctx = "private" if private else "host"
        opening = CONTEXTS[ctx][0]
        for d, ln in enumerate(opening):
            body.append("    " * d + ln)
        for ln in STATEMENTS[stmt]:
            body.append("    " * len(opening) + ln)
        expected |= problems(ctx, stmt)
    return kernel(body, private=private), expected


def check_program(pydir: Path, text: str, expected: set[str]) -> None:
    py = outcome_python(pydir, text)
    tx = outcome_text(text)
    if not expected:
        assert py[0] == "ok", py[3]
        assert tx[0] == "ok", tx[3]
        f = py[1]
        again = tirx.loads(tirx.dumps(f))
        tirx.assert_structural_equal(again, f)
        tirx.assert_structural_equal(tx[1], f)
        return
    assert py[0] == "error", f"the Python frontend accepted a program with {expected}:\n{text}"
    assert tx[0] == "error", f"the text loader accepted a program with {expected}:\n{text}"
    for out in (py, tx):
        assert any(re.search(CATEGORY[c], out[1]) for c in expected), (expected, out[3])


@pytest.mark.parametrize("ctx,stmt", list(itertools.product(CONTEXTS, STATEMENTS)))
def test_every_placement_same_verdict(pydir, ctx, stmt):
    text, expected = program([(ctx, stmt)])
    check_program(pydir, text, expected)


@settings(max_examples=40)
@given(
    st.lists(
        st.tuples(st.sampled_from(sorted(CONTEXTS)), st.sampled_from(sorted(STATEMENTS))),
        min_size=1,
        max_size=4,
    )
)
def test_generated_programs_same_verdict(pydir, items):
    text, expected = program(items)
    check_program(pydir, text, expected)


def test_private_helper_may_use_device_ops_and_verifies(pydir):
    from tirx.passes import verify_well_formed

    f = load_python(pydir, kernel(['A[0] = T.cuda.thread_idx("x")'], private=True))
    assert verify_well_formed(f) == []
    tirx.assert_structural_equal(tirx.loads(tirx.dumps(f)), f)


def _loop_cases():
    from tirx.ir import Add, Cast, Evaluate, For, ForKind, Function, IntImm, Sub, Var, binop, convert
    from tirx.ir.types import bool_, int32

    n = Var("n", int32)
    for start, extent in [
        (n, 0),
        (n, binop(Sub, Add(n, IntImm(0, int32)), n)),
        (Cast(int32, IntImm(0, bool_)), 0),
        (2, 5),
        (0, n),
        (n, binop(Sub, n, n)),
        (n, n),
        (1, Add(IntImm(1, int32), n)),
    ]:
        i = Var("i", int32)
        yield Function("f", (n,), For(i, convert(start), convert(extent), ForKind.SERIAL, Evaluate(i)))


def test_printed_loops_build_the_same_loop_in_both_front_ends():
    """The Python frontend reads ``range(start, stop)`` by the text loader's rule."""
    from test_frontend_util import load_module, printed_text_as_python

    for f in _loop_cases():
        text = tirx.dumps(f)
        tirx.assert_structural_equal(tirx.loads(text), f)
        g = load_module(printed_text_as_python(text), "loops").f
        tirx.assert_structural_equal(g, f)


def test_deep_expression_still_loads_and_builds(pydir):
    """Verification at finalization must not turn deep (legal) IR into a RecursionError."""
    terms = " + ".join(f"A[{j % 4}]" for j in range(1500))
    text = kernel([f"A[0] = {terms}"])
    f = tirx.loads(text)
    assert isinstance(f, tirx.Function)
    g = load_python(pydir, kernel(["A[0] = sum(A[j % 4] for j in range(1500))"]))
    assert isinstance(g, tirx.Function)


# ================================================================== item 6: exact @T.jit keys


@T.jit
def scale(A: T.Tensor((4,), T.float32), B: T.Tensor((4,), T.float32), *, S: T.constexpr):
    for i in range(4):
        B[i] = A[i] * S


def fresh(cache_size=DEFAULT_JIT_CACHE_SIZE) -> JitFunction:
    """A new @T.jit over one constexpr the body ignores, so any value specializes."""

    @T.jit(cache_size=cache_size)
    def anyval(A: T.Tensor((4,), T.float32), *, S: T.constexpr):
        A[0] = T.float32(0.0)

    return anyval


def test_negative_zero_is_its_own_specialization():
    j = JitFunction(scale.func, scale.locals)
    pos = j.specialize(S=0.0)
    neg = j.specialize(S=-0.0)
    assert neg is not pos
    assert not tirx.structural_equal(pos, neg)
    assert "-0.0" in tirx.dumps(neg) and "-0.0" not in tirx.dumps(pos)
    import tirx.interp as ti

    out = {}
    for name, f in (("pos", pos), ("neg", neg)):
        a = np.ones(4, np.float32)
        b = np.full(4, 7.0, np.float32)
        ti.compile(f)(a, b)
        out[name] = b
    assert not np.signbit(out["pos"]).any() and np.signbit(out["neg"]).all()
    assert j.specialize(S=-0.0) is neg and j.specialize(S=0.0) is pos


def test_nan_hits_one_entry():
    j = fresh()
    first = j.specialize(S=float("nan"))
    for _ in range(100):
        assert j.specialize(S=float("nan")) is first
    assert len(j.cache) == 1
    # another NaN payload is another value
    other = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]
    assert math.isnan(other)
    assert j.specialize(S=other) is not first
    assert j.specialize(S=other) is j.specialize(S=other)
    assert len(j.cache) == 2


def test_bool_int_float_are_distinct():
    j = fresh()
    fs = [j.specialize(S=v) for v in (True, 1, 1.0, np.int32(1), np.float32(1.0), np.bool_(True))]
    assert len({id(f) for f in fs}) == len(fs)
    assert len(j.cache) == len(fs)
    assert j.specialize(S=True) is fs[0] and j.specialize(S=1) is fs[1] and j.specialize(S=1.0) is fs[2]


def test_tuples_numpy_and_strings_keyed_exactly():
    j = fresh()
    distinct = [
        (0.0,),
        (-0.0,),
        (1,),
        (True,),
        (1.0,),
        ((0.0, 1), "a"),
        ((-0.0, 1), "a"),
        np.float32(0.0),
        np.float32(-0.0),
        np.float64(0.0),
        np.float16(0.0),
        "float32",
        "float32 ",
        T.float32,
        T.int32,
        frozenset({0.0}),
        frozenset({-0.0}),
    ]
    got = [j.specialize(S=v) for v in distinct]
    assert len({id(f) for f in got}) == len(distinct)
    # equal values (by bits, recursively) hit
    assert j.specialize(S=((float("nan"),), "x")) is j.specialize(S=((float("nan"),), "x"))
    assert j.specialize(S=np.float32("nan")) is j.specialize(S=np.float32("nan"))
    assert j.specialize(S=(0.0,)) is got[0] and j.specialize(S=np.float32(-0.0)) is got[8]


def test_unhashable_value_is_a_type_error_naming_the_parameter():
    j = fresh()
    with pytest.raises(TypeError, match=r"'S'.*unhashable.*list"):
        j.specialize(S=[1, 2])
    with pytest.raises(TypeError, match=r"'S'.*unhashable.*dict"):
        j.specialize(S=(1, {"a": 2}))
    with pytest.raises(TypeError, match=r"'S'.*unhashable"):
        j.specialize(S=np.zeros(3))


def test_default_value_and_explicit_default_share_an_entry():
    @T.jit
    def withdef(A: T.Tensor((4,), T.float32), *, S: T.constexpr = -0.0):
        A[0] = T.float32(S)

    assert withdef.specialize() is withdef.specialize(S=-0.0)
    assert withdef.specialize(S=0.0) is not withdef.specialize()


def test_cache_is_lru_bounded():
    j = fresh(cache_size=3)
    a, b, c = (j.specialize(S=k) for k in range(3))
    assert j.specialize(S=0) is a  # 0 is now the most recent
    j.specialize(S=3)  # evicts 1, the least recently used
    assert len(j.cache) == 3
    assert j.specialize(S=0) is a and j.specialize(S=2) is c
    assert j.specialize(S=1) is not b
    for k in range(50):
        j.specialize(S=float(k))
        assert len(j.cache) <= 3


def test_cache_size_default_and_validation():
    assert DEFAULT_JIT_CACHE_SIZE >= 16
    assert scale.cache_size == DEFAULT_JIT_CACHE_SIZE
    assert fresh(cache_size=None).cache_size is None  # unbounded, on request
    j0 = fresh(cache_size=0)
    assert j0.specialize(S=1) is not j0.specialize(S=1) and len(j0.cache) == 0
    with pytest.raises(ValueError, match="cache_size"):
        fresh(cache_size=-1)
    for bad in ("8", 2.0, True):
        with pytest.raises(TypeError, match="cache_size"):
            fresh(cache_size=bad)


_POOL = [0.0, -0.0, float("nan"), -float("nan"), float("inf"), -float("inf"), 1.0, 5e-324, -5e-324]


@settings(max_examples=60)
@given(
    st.sampled_from(_POOL) | st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(_POOL) | st.floats(allow_nan=True, allow_infinity=True),
)
def test_float_keys_are_bits(x, y):
    j = fresh(cache_size=4)
    fx, fy = j.specialize(S=x), j.specialize(S=y)
    assert j.specialize(S=x) is fx and j.specialize(S=y) is fy
    same_bits = struct.pack("<d", x) == struct.pack("<d", y)
    assert (fx is fy) == same_bits
