"""Interop and types (issue #15): what interpreter kernels accept and write back, keyword
arguments, ``TIRX_INTERPRET=1``, short reprs / ``print`` / ``_repr_html_`` of IR nodes, and
``py.typed`` with a type checker that sees the package."""

from __future__ import annotations

import array
import html
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx
from tirx.ir.node import REPR_MAX, Node, script_html
from tirx.script import tirx as T

ROOT = Path(__file__).resolve().parents[1]


def _add_one(dtype="int32"):
    n = T.dynamic("n", "int32")

    @T.function
    def add_one(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=T.ceildiv(n, 32), block=32))
        i = T.cuda.block_idx("x") * 32 + T.cuda.thread_idx("x")
        if i < n:
            B[i] = A[i] + T.cast(1, dtype)

    return add_one


@pytest.fixture(scope="module")
def kern():
    return tirx.compile(_add_one(), target="interp")


# ------------------------------------------------------------------ array-likes
class DLPackOnly:
    """An array-API-style object: only ``__dlpack__`` / ``__dlpack_device__``."""

    def __init__(self, a, device=(1, 0)):
        self._a, self._dev = a, device

    def __dlpack__(self, **kw):
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._dev


class InterfaceOnly:
    """Only ``__array_interface__`` (as many C extensions expose their buffers)."""

    def __init__(self, a):
        self._a = a
        self.__array_interface__ = a.__array_interface__


class Unreadable:
    def __array__(self, *a, **k):
        raise RuntimeError("no host copy")


WRAPS = {
    "ndarray": lambda a: a,
    "memoryview": memoryview,
    "dlpack": DLPackOnly,
    "array_interface": InterfaceOnly,
}


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(-(2**31), 2**31 - 2), min_size=0, max_size=70),
    st.sampled_from(sorted(WRAPS)),
    st.sampled_from(sorted(WRAPS)),
)
def test_every_array_like_is_read_and_written_back(kern, xs, win, wout):
    a = np.array(xs, dtype=np.int32)
    b = np.full_like(a, -7)
    kern(WRAPS[win](a), WRAPS[wout](b))
    np.testing.assert_array_equal(b, a + 1)  # the result landed in the caller's memory


def test_stdlib_array_and_bytearray_buffers_are_written(kern):
    a = array.array("i", [1, 2, 3])
    b = array.array("i", [0, 0, 0])
    kern(a, b)
    assert list(b) == [2, 3, 4]
    raw = bytearray(12)
    kern(a, memoryview(raw).cast("i"))
    assert np.frombuffer(raw, np.int32).tolist() == [2, 3, 4]


def test_keyword_arguments_by_parameter_name(kern):
    a = np.arange(5, dtype=np.int32)
    b = np.zeros_like(a)
    kern(B=b, A=a)
    np.testing.assert_array_equal(b, a + 1)
    c = np.zeros_like(a)
    kern(a, B=c, stream=None)  # stream= is the CUDA kernel's; ignored here
    np.testing.assert_array_equal(c, a + 1)


@pytest.mark.parametrize(
    "call, exc, words",
    [
        (lambda k, a: k(a, C=a), TypeError, ["unexpected keyword argument 'C'", "A, B"]),
        (lambda k, a: k(a, a, A=a), TypeError, ["multiple values for parameter 'A'"]),
        (lambda k, a: k(A=a), TypeError, ["missing a value for parameter(s) B"]),
        (lambda k, a: k(a, a, a), TypeError, ["takes 2 argument(s) (A, B), got 3"]),
        (lambda k, a: k(a, [1, 2, 3]), TypeError, ["parameter B takes an array", "list"]),
        (lambda k, a: k(a, "abc"), TypeError, ["parameter B takes an array", "str"]),
        (lambda k, a: k(a, a.astype(np.float32)), TypeError, ["parameter B must have dtype int32"]),
        (lambda k, a: k(a, np.zeros(4, np.int32)), ValueError, ["parameter B", "dimension 0"]),
        (lambda k, a: k(DLPackOnly(a, (2, 0)), a), TypeError, ["parameter A is a device array"]),
        (lambda k, a: k(a, memoryview(a.tobytes()).cast("i")), ValueError, ["parameter B", "read-only"]),
        (lambda k, a: k(Unreadable(), a), TypeError, ["parameter A: numpy cannot read", "no host copy"]),
    ],
)
def test_argument_errors_name_the_parameter(kern, call, exc, words):
    a = np.arange(3, dtype=np.int32)
    with pytest.raises(exc) as ei:
        call(kern, a)
    for w in words:
        assert w in str(ei.value)


def test_a_read_only_input_that_is_only_read_is_fine(kern):
    a = np.arange(4, dtype=np.int32)
    a.flags.writeable = False
    b = np.zeros(4, np.int32)
    kern(memoryview(a.tobytes()).cast("i"), b)
    np.testing.assert_array_equal(b, [1, 2, 3, 4])
    kern(a, b)


def test_ml_dtypes_bfloat16_arrays_keep_their_dtype_check():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    k = tirx.compile(_add_one("bfloat16"), target="interp")
    a = np.array([1, 2, 3], dtype=ml_dtypes.bfloat16)
    b = np.zeros(3, dtype=ml_dtypes.bfloat16)
    k(a, B=b)
    assert b.astype(np.float32).tolist() == [2.0, 3.0, 4.0]
    with pytest.raises(TypeError, match="parameter B must be bfloat16"):
        k(a, np.zeros(3, np.float16))


def test_module_kernels_take_keywords():
    f = _add_one()
    mk = tirx.compile(tirx.ir.Module((f,)), target="interp")
    a = np.arange(3, dtype=np.int32)
    b = np.zeros_like(a)
    mk(A=a, B=b)
    np.testing.assert_array_equal(b, a + 1)


# ------------------------------------------------------------------ TIRX_INTERPRET
def test_tirx_interpret_runs_cuda_kernels_on_the_interpreter(monkeypatch):
    monkeypatch.setenv("TIRX_INTERPRET", "1")
    k = tirx.compile(_add_one(), target="cuda -arch=sm_90a", restrict=True, vectorize=True)
    assert k.target == "interp" and k.requested_target == "cuda -arch=sm_90a"
    assert "interp" in repr(k) and "TIRX_INTERPRET=1" in repr(k)
    a = np.arange(40, dtype=np.int32)
    b = np.zeros_like(a)
    k(a, b, stream=0)
    np.testing.assert_array_equal(b, a + 1)
    mk = tirx.compile(tirx.ir.Module((_add_one(),)), target="cuda")
    assert mk.target == "interp" and "TIRX_INTERPRET=1" in repr(mk)
    assert mk.add_one.requested_target == "cuda"


def test_tirx_interpret_runs_jit_specializations(monkeypatch):
    monkeypatch.setenv("TIRX_INTERPRET", "true")

    @T.jit
    def scale(A: T.Tensor((8,), "float32"), *, k: T.constexpr = 2):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
        i = T.cuda.thread_idx("x")
        A[i] = A[i] * T.float32(k)

    kern = tirx.compile(scale.specialize(k=3), target="cuda")
    assert kern.target == "interp"
    a = np.ones(8, np.float32)
    kern(A=a)
    np.testing.assert_array_equal(a, 3.0)


def test_tirx_interpret_gives_the_interpreters_op_error_for_gpu_only_ops(monkeypatch):
    monkeypatch.setenv("TIRX_INTERPRET", "1")

    @T.function
    def tick(A: T.Tensor((1,), "uint64")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        A[0] = T.cuda.clock64()

    with pytest.raises(tirx.OpError, match="cycle counter"):
        tirx.compile(tick, target="cuda")(np.zeros(1, np.uint64))


def test_tirx_interpret_off_and_bad_values(monkeypatch):
    import tirx.target as tt

    seen = []
    monkeypatch.setattr(tt, "compile_cuda", lambda f, t, **o: seen.append((f, str(t), o)) or "cuda")
    for off in ("0", "", "false", "off"):
        monkeypatch.setenv("TIRX_INTERPRET", off)
        assert tirx.compile(_add_one(), target="cuda") == "cuda"
    monkeypatch.delenv("TIRX_INTERPRET")
    assert tirx.compile(_add_one(), target="cuda") == "cuda"
    assert len(seen) == 5
    monkeypatch.setenv("TIRX_INTERPRET", "maybe")
    with pytest.raises(ValueError, match="TIRX_INTERPRET"):
        tirx.compile(_add_one(), target="cuda")


# ------------------------------------------------------------------ repr / print / html
def _nodes(root):
    import attrs

    out, stack, seen = [], [root], set()
    while stack:
        x = stack.pop()
        if isinstance(x, tuple):
            stack.extend(x)
        elif isinstance(x, Node) and id(x) not in seen:
            seen.add(id(x))
            out.append(x)
            stack.extend(getattr(x, f.name) for f in attrs.fields(type(x)) if f.name != "span")
    return out


def test_print_shows_the_script_and_repr_is_short():
    f = _add_one()
    assert str(f) == tirx.dumps(f)
    assert re.fullmatch(r"<Function add_one\(A, B\) \d+ stmts>", repr(f))
    m = tirx.ir.Module((f,))
    assert repr(m) == "<Module add_one: 1 function>" and str(m) == tirx.dumps(m)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_repr_of_every_node_is_one_bounded_line(data):
    from tirx.testing import strategies as S

    f = data.draw(S.functions())
    for n in _nodes(f):
        r = repr(n)
        assert "\n" not in r and len(r) <= REPR_MAX + 40, r
        assert r.startswith("<") or r.startswith(type(n).__name__), r


def test_repr_html_is_escaped_highlighted_script():
    f = _add_one()
    h = f._repr_html_()
    assert h.startswith("<pre") and "<span style=" in h
    assert html.unescape(re.sub(r"<[^>]+>", "", h)) == tirx.dumps(f)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_script_html_escapes_everything_and_keeps_the_text(text):
    h = script_html(text)
    inner = h[h.index(">") + 1 : h.rindex("</pre>")]
    assert "<" not in re.sub(r'<span style="[^"<>]*">|</span>', "", inner)
    assert html.unescape(re.sub(r"<[^>]+>", "", inner)) == text


# ------------------------------------------------------------------ typing
def test_py_typed_ships_with_the_package():
    import tirx as pkg

    assert (Path(pkg.__file__).parent / "py.typed").is_file()
    assert '"tirx" = ["py.typed"]' in (ROOT / "pyproject.toml").read_text()


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_mypy_resolves_the_package_and_its_mapped_folders(tmp_path):
    """``mypy -p tirx`` in the checkout finds every tirx module (tirx/grammar, tirx/printer,
    tirx/passes and tirx/tools are links to the mapped folders), and code using them checks."""
    src = tmp_path / "use_tirx.py"
    src.write_text(
        "import tirx\nfrom tirx.grammar import loads\nfrom tirx.printer import dumps\n"
        "from tirx.passes import Pass\nfrom tirx import tools\n\n"
        "def text(f: tirx.Function) -> str:\n    return dumps(f)\n\n"
        "def wrong(f: tirx.Function) -> int:\n    return dumps(f)\n"
    )

    def mypy(*args):
        return subprocess.run(
            [sys.executable, "-m", "mypy", f"--cache-dir={tmp_path / 'cache'}", *args],  # a fresh cache
            capture_output=True, text=True, cwd=ROOT, timeout=900,
        ).stdout  # fmt: skip

    out = mypy("-p", "tirx")
    unresolved = [ln for ln in out.splitlines() if 'module named "tirx' in ln]
    assert unresolved == [], "\n".join(unresolved)
    # pyproject's [tool.mypy]: the package type-checks (CI runs mypy here, once)
    assert out.startswith("Success: no issues found"), out[-3000:]
    out = mypy("--follow-imports=silent", str(src))
    # the checker really read tirx: exactly the one wrong return type is reported
    mine = [ln for ln in out.splitlines() if "error:" in ln]
    assert len(mine) == 1 and "use_tirx.py:11" in mine[0] and '"str"' in mine[0], out
