"""The three text invariants, on generated IR and on every TIRx-printed compat text.

1. ``structural_equal(loads(dumps(x)), x)``
2. ``dumps(loads(dumps(x))) == dumps(x)``
3. ``structural_equal(a, b)`` implies ``structural_hash(a) == structural_hash(b)``

Long runs go through ``tirx fuzz --examples N --seed S``.
"""

from __future__ import annotations

import glob
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx

strategies = pytest.importorskip("tirx.testing.strategies")

COMPAT = sorted(glob.glob("/work/shared/compat/tirx-0.1.0a4/*.tirx")) or sorted(
    glob.glob(
        os.path.join(os.path.dirname(__file__), "..", "..", "shared", "compat", "tirx-0.1.0a4", "*.tirx")
    )
)

FAST = settings(
    max_examples=int(os.environ.get("TIRX_ROUNDTRIP_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)


def check_invariants(x) -> None:
    d = tirx.dumps(x)
    y = tirx.loads(d)
    if not tirx.structural_equal(y, x):
        tirx.assert_structural_equal(y, x)  # raises with the first mismatch path and both texts
    assert tirx.dumps(y) == d
    assert tirx.structural_hash(y) == tirx.structural_hash(x)


@FAST
@given(strategies.functions())
def test_generated_functions(f):
    check_invariants(f)


@FAST
@given(strategies.modules())
def test_generated_modules(m):
    check_invariants(m)


@settings(FAST, max_examples=25)
@given(st.data())
def test_equal_implies_equal_hash_across_loads(data):
    f = data.draw(strategies.functions())
    d = tirx.dumps(f)
    a, b = tirx.loads(d), tirx.loads(d)  # two independent loads of one text
    assert a is not b
    assert tirx.structural_equal(a, b)
    assert tirx.structural_hash(a) == tirx.structural_hash(b)


@pytest.mark.parametrize("path", COMPAT, ids=[os.path.basename(p) for p in COMPAT])
def test_compat_invariants(path):
    x = tirx.load(path)
    check_invariants(x)
    # the CLI's checker agrees
    from tirx.tools.cli import roundtrip_problems

    assert roundtrip_problems(x) == []


def test_spans_do_not_matter():
    text = tirx.dumps(tirx.load(COMPAT[0]))
    a = tirx.loads(text, source_name="a.tirx")
    b = tirx.loads("\n\n" + text.replace("\n", "\n  # moved\n", 3), source_name="b.tirx")
    assert tirx.structural_equal(a, b)
    assert tirx.structural_hash(a) == tirx.structural_hash(b)


_DATA_VIEW = """from __future__ import annotations

# from tirx.script import tirx as T

@T.function
def f(A: T.Tensor((64,), T.float32)):
    with T.device_entry(1, 1, 1, 64, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):
        S = T.alloc_tensor(ty_args=[T.Tensor((256,), T.uint8, scope="shared")])
        p: T.let[T.Ptr(T.float32, "shared")] = T.reinterpret(S.data, ty=T.Ptr(T.float32, "shared"))
        V = T.decl_tensor(p, ty_args=[T.Tensor((64,), T.float32)])
        W = T.decl_tensor(S.data, ty_args=[T.Tensor((64,), T.uint8)])
        tx: T.let[T.int32] = T.cuda.thread_idx("x")
        V[tx] = A[tx]
        W[tx] = T.uint8(1)
"""


def test_buffer_data_pointer_round_trips():
    """``X.data`` names an allocation's backing pointer (views over byte storage)."""
    f = tirx.loads(_DATA_VIEW)
    assert tirx.dumps(f) == _DATA_VIEW
    stmts = f.body.seq[0].body.stmts
    alloc, decl_w = stmts[0], stmts[3]
    assert decl_w.buffer.data is alloc.buffer.data
    assert stmts[1].value.args[0] is alloc.buffer.data
    assert tirx.structural_equal(tirx.loads(tirx.dumps(f)), f)


def test_buffer_data_of_unknown_name_is_a_diagnostic():
    bad = _DATA_VIEW.replace("T.decl_tensor(S.data", "T.decl_tensor(Q.data")
    with pytest.raises(tirx.DiagnosticError) as ei:
        tirx.loads(bad, source_name="k.tirx")
    assert "k.tirx:11:27" in str(ei.value)


def test_module_attrs_round_trip():
    from tirx.ir import Function, Module, Return, Var

    x = Var("x", "float32")
    m = Module(
        (Function("f", (x,), Return(x), ret_ty=x.ty, private=True),), {"target": "cuda", "opt": [1, 2]}
    )
    text = tirx.dumps(m)
    assert (
        '@T.ir_module\nclass Module:\n    T.module_attrs({"opt": [1, 2], "target": "cuda"})\n' in text
    )  # as TIRx (keys sorted)
    old_style = text.replace(
        "@T.ir_module\n", '@T.ir_module(attrs={"target": "cuda", "opt": [1, 2]})\n'
    ).replace('    T.module_attrs({"opt": [1, 2], "target": "cuda"})\n', "")
    assert tirx.structural_equal(tirx.loads(old_style), m)  # the decorator spelling still loads
    back = tirx.loads(text)
    assert tirx.structural_equal(back, m)
    assert tirx.dumps(back) == text
    with pytest.raises(tirx.DiagnosticError, match="attrs= must be a dict"):
        tirx.loads(old_style.replace('attrs={"target": "cuda", "opt": [1, 2]}', "attrs=3"))
    with pytest.raises(tirx.DiagnosticError, match="given twice"):
        tirx.loads(old_style.replace("class Module:\n", 'class Module:\n    T.module_attrs({"a": 1})\n'))
    with pytest.raises(tirx.DiagnosticError, match=r"only T.module_attrs\(\{...\}\) may stand"):
        tirx.loads(text.replace("    T.module_attrs(", "    T.evaluate(0)\n    T.module_attrs("))
    with pytest.raises(tirx.DiagnosticError, match="belongs in the class body"):
        tirx.loads(text.replace("        return x", '        T.module_attrs({"b": 2})\n        return x'))
