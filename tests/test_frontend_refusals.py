"""What the frontend refuses, with a located error, where building would give a kernel that
cannot be what the Python says (found by held-out round 17, which probed where TIRx draws the
line): a tensor used as a condition, a loop step of zero, a launch TIRx's `LaunchConfig`
refuses, a thread axis other than x, y or z. Each refusal names the place and the reason; the
accepted neighbours still build."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_frontend_util import load_module

import tirx

HEAD = "from tirx.script import tirx as T\n\n"


def _build(body: str, params: str = 'A: T.Tensor((64,), "int32")', launch: str = "grid=1, block=32"):
    src = (
        HEAD + "@T.function\n"
        f"def kernel({params}):\n"
        f"    T.device_entry(launch=T.cuda.LaunchConfig({launch}))\n"
        + "".join(f"    {line}\n" for line in body.splitlines())
    )
    return load_module(src, "refusal").kernel


def _refused(match: str, **kw) -> tirx.DiagnosticError:
    with pytest.raises(tirx.DiagnosticError, match=match) as e:
        _build(**kw)
    assert "kernel" in str(e.value) or "-->" in str(e.value)  # located
    return e.value


@pytest.mark.parametrize("form", ["if A:\n    A[0] = 1", "while A:\n    A[0] = 1", "A[0] = 1 if A else 2"])
def test_a_tensor_is_not_a_condition(form):
    _refused(r"the tensor A is not a condition: test its elements \(A\[i\] != 0\)", body=form)


def test_python_values_are_constant_conditions_and_constexpr_decides():
    """TIRx's rule: ``if 3 > 2:`` is ``if T.bool(True):`` with both branches built; only
    ``if T.constexpr(...):`` (and a conditional expression) decides while parsing."""
    f = _build("if 3 > 2:\n    A[0] = 1\nelse:\n    A[0] = 2\nA[1] = 5 if None else 6")
    text = tirx.dumps(f)
    assert "if T.bool(True):" in text and "A[0] = 1" in text and "A[0] = 2" in text
    assert "A[1] = 6" in text and "A[1] = 5" not in text
    f = _build("if T.constexpr(3 > 2):\n    A[0] = 1\nelse:\n    A[0] = 2")
    text = tirx.dumps(f)
    assert "A[0] = 1" in text and "A[0] = 2" not in text and "if " not in text


@pytest.mark.parametrize("cond", ["None", "[]", "'abc'", "(1, 2)"])
def test_a_python_value_without_an_ir_constant_is_not_a_condition(cond):
    e = _refused(r"is not a condition of the IR's `if`: write `if T.constexpr", body=f"if {cond}:\n    A[0] = 1")
    assert e.span.line > 0 and e.span.col > 0


@pytest.mark.parametrize("loop", ["range(0, 10, 0)", "T.serial(0, 10, step=0)", "range(10, 0, 0)"])
def test_a_loop_step_of_zero_is_refused(loop):
    _refused(r"step cannot be zero", body=f"for i in {loop}:\n    A[i] = i")


def test_a_symbolic_step_is_not_judged_while_parsing():
    f = _build("for i in range(0, 64, s):\n    A[i] = i", params='A: T.Tensor((64,), "int32"), s: T.int32')
    assert "range(0, 64, s)" in tirx.dumps(f)


@pytest.mark.parametrize(
    "launch,match",
    [
        ("grid=1, block=(32, 33)", r"a block holds at most 1024 threads, got \[32, 33\] \(1056\)"),
        ("grid=1, block=2048", r"at most 1024 threads"),
        ("grid=0, block=32", r"grid dimensions must be positive uint32 values"),
        ("grid=(4, -1), block=32", r"grid dimensions must be positive uint32 values"),
        ("grid=1, block=0", r"block dimensions must be positive uint32 values"),
        ("grid=1 << 32, block=32", r"grid dimensions must be positive uint32 values"),
        ("grid=3, block=32, cluster=2", r"the grid must be divisible by cluster in every dimension"),
        ("grid=(4, 3), block=32, cluster=(2, 2)", r"divisible by cluster"),
        ("grid=4, block=32, cluster=0", r"cluster dimensions must be positive"),
        ("grid=1, block=32, dynamic_smem_bytes=-1", r"dynamic_smem_bytes must be between 0 and 4294967295"),
        ("grid=1, block=32, dynamic_smem_bytes=1 << 32", r"dynamic_smem_bytes must be between"),
    ],
)
def test_a_launch_TIRx_refuses_is_refused(launch, match):
    _refused(match, body="A[0] = 1", launch=launch)


@given(
    block=st.lists(st.integers(1, 1100), min_size=1, max_size=3),
    grid=st.lists(st.integers(1, 9), min_size=1, max_size=3),
    cluster=st.none() | st.lists(st.integers(1, 4), min_size=1, max_size=3),
)
@settings(max_examples=40, deadline=None)
def test_a_launch_is_refused_exactly_when_its_shape_is_impossible(block, grid, cluster):
    """Accepted launches print their shape; refused ones break one of the three rules."""
    n = 1
    for b in block:
        n *= b
    g = grid + [1] * (3 - len(grid))
    c = None if cluster is None else cluster + [1] * (3 - len(cluster))
    bad = n > 1024 or (c is not None and any(gi % ci for gi, ci in zip(g, c)))
    launch = f"grid={tuple(grid)}, block={tuple(block)}" + (
        "" if cluster is None else f", cluster={tuple(cluster)}"
    )
    if bad:
        with pytest.raises(tirx.DiagnosticError, match=r"T\.cuda\.LaunchConfig"):
            _build("A[0] = 1", launch=launch)
    else:
        f = _build("A[0] = 1", launch=launch)
        assert f"T.device_entry({', '.join(map(str, g))}, " in tirx.dumps(f)


def test_symbolic_launch_values_are_left_to_the_launch():
    f = _build("A[0] = 1", params='A: T.Tensor((64,), "int32"), n: T.int32', launch="grid=n, block=(n, 2048)")
    assert "T.device_entry(n, 1, 1, n, 2048, 1" in tirx.dumps(f)


@pytest.mark.parametrize("op", ["thread_idx", "block_idx", "block_dim", "grid_dim"])
def test_a_thread_axis_is_x_y_or_z(op):
    _refused(r"must be one of 'x', 'y', 'z'", body=f'A[0] = T.cuda.{op}("w")')
    f = _build(f'A[0] = T.cuda.{op}("z")')
    assert f'T.cuda.{op}("z")' in tirx.dumps(f)


def _fn(body: str, ret: str = "T.int32"):
    src = (
        HEAD
        + f"@T.function\ndef f(n: T.int32) -> {ret}:\n"
        + "".join(f"    {ln}\n" for ln in body.splitlines())
    )
    return load_module(src, "returns").f


@pytest.mark.parametrize(
    "body",
    [
        "x = n + 1",
        "if n > 0:\n    return n",
        "for i in range(4):\n    return i",
        "while n > 0:\n    return n",
    ],
)
def test_a_function_that_can_end_without_its_return_value_is_refused(body):
    """A caller would read a value the function never wrote (the interpreter gave None, CUDA
    garbage); TIRx refuses it too (held-out round 18: a macro's ``return`` left one so)."""
    with pytest.raises(tirx.DiagnosticError, match=r"returns int32 but can reach its end without a return"):
        _fn(body)


@pytest.mark.parametrize(
    "body",
    [
        "return n + 1",
        "if n > 0:\n    return n\nelse:\n    return -n",
        "if n > 0:\n    return n\nreturn 0",
        "x = n * 2\nif x > 4:\n    return x\nelif x > 2:\n    return 1\nelse:\n    return 2",
    ],
)
def test_every_path_returning_builds(body):
    f = _fn(body)
    assert tirx.structural_equal(tirx.loads(tirx.dumps(f)), f)
    assert tirx.compile(f, target="interp")(3) is not None


def _entry_fn(tail: str, decl: str = "v = n"):
    src = (
        HEAD + "@T.function\n"
        'def f(A: T.Tensor((128,), "float32"), n: T.int32):\n'
        f"    {decl}\n"
        "    with T.device_entry():\n"
        "        v = n + 1\n"
        "        A[v] = T.float32(1.0)\n" + "".join(f"    {ln}\n" for ln in tail.splitlines())
    )
    return load_module(src, "ended").f


def test_a_name_bound_again_inside_an_entry_is_not_read_after_it():
    """Python says ``v`` is ``n + 1`` after the block; that binding ends with the device entry
    (TIRx's program is not well-formed there), so reading it after is a located error, where
    tirx used to read the outer ``v`` silently (held-out round 18)."""
    with pytest.raises(tirx.DiagnosticError, match=r"v was bound again inside the block that ends") as e:
        _entry_fn("A[v] = T.float32(2.0)")
    assert "(v: T.int32 = ...)" in str(e.value)


def test_the_name_may_be_bound_afresh_or_made_mutable():
    text = tirx.dumps(_entry_fn("v = n + 2\nA[v] = T.float32(2.0)"))
    assert "v: T.let[T.int32] = n + 2" in text
    cell = tirx.dumps(_entry_fn("A[v] = T.float32(2.0)", decl="v: T.int32 = n"))
    assert "A[v[0]] = T.float32(2.0)" in cell  # a mutable local: the value the entry stored


@pytest.mark.parametrize("form", ["e = T.device_entry()", 'e = T.attr("k", 1)'])
def test_a_frame_bound_to_a_name_is_refused(form):
    """Bound to a name, the frame opened nothing and the rest of the block ran in host code
    (held-out round 18); TIRx refuses it too."""
    src = HEAD + f'@T.function\ndef f(A: T.Tensor((8,), "float32")):\n    {form}\n    A[0] = T.float32(2.0)\n'
    with pytest.raises(tirx.DiagnosticError, match=r"opens a frame and has no value to bind"):
        load_module(src, "frame_bound")


def test_the_ended_binding_error_names_the_binding_s_dtype():
    src = (
        HEAD + "@T.function\n"
        'def f(A: T.Tensor((8,), "float32"), x: T.float32):\n'
        "    w = x\n"
        "    with T.device_entry():\n"
        "        w = x * T.float32(2.0)\n"
        "        A[0] = w\n"
        "    A[1] = w\n"
    )
    with pytest.raises(tirx.DiagnosticError, match=r"\(w: T\.float32 = \.\.\.\)"):
        load_module(src, "ended_dtype")


def test_a_diagnostic_keeps_its_cause_class():
    """A check of the user's values that raised ``ValueError`` (TIRx lets that class through)
    leaves the frontend as a ``DiagnosticError`` that is also a ``ValueError``, located; a
    name error stays a plain ``DiagnosticError``; the class survives pickling."""
    import pickle

    from tirx.errors import DiagnosticValueError

    src = '''
from tirx.script import tirx as T

@T.function
def too_big(A: T.Tensor((64,), "float32")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=(32, 33)))
    A[0] = 0.0
'''
    with pytest.raises(ValueError, match="at most 1024 threads") as ei:
        load_module(src, "cause_class")
    e = ei.value
    assert isinstance(e, tirx.DiagnosticError) and isinstance(e, RuntimeError)
    assert type(e) is DiagnosticValueError and ":6:" in str(e)
    assert type(pickle.loads(pickle.dumps(e))) is DiagnosticValueError
    with pytest.raises(tirx.DiagnosticError) as ei:
        load_module(src.replace("A[0] = 0.0", "A[0] = nowhere").replace("(32, 33)", "32"), "cause_name")
    assert type(ei.value) is tirx.DiagnosticError
