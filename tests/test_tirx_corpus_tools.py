"""The corpus harness's parts that run without TIRx (issue #31): the ``import tvm`` alias that
serves TIRx's test files from another package, and the corpus section of docs/tirx_compat.md,
which must agree with the committed per-kernel results (docs/data/tirx_corpus.json)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str):
    sys.path.insert(0, str(ROOT / "tools" / "tirx_oracle"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


@pytest.fixture
def alias():
    mod = _tool("corpus_alias")
    before = list(sys.meta_path)
    yield mod
    sys.meta_path[:] = before
    for name in [m for m in sys.modules if m.split(".")[0] in ("fakejson", "fakenothing")]:
        del sys.modules[name]


def test_alias_serves_the_real_package_and_stubs_what_it_lacks(alias):
    alias.install("fakejson", "json")
    import fakejson  # type: ignore[import-not-found]
    from fakejson.decoder import JSONDecoder  # type: ignore[import-not-found]

    assert fakejson.dumps([1]) == "[1]" and JSONDecoder is importlib.import_module("json.decoder").JSONDecoder
    missing = fakejson.no_such_helper
    assert isinstance(missing, alias.Stub) and not missing and list(missing) == []
    assert isinstance(missing(1, x=2).attr[0], alias.Stub)

    def test_fn():
        return 1

    assert missing(test_fn) is test_fn  # a stub decorator keeps the test
    from fakejson.no_such_module import thing  # type: ignore[import-not-found]

    assert isinstance(thing, alias.Stub)


def test_alias_of_nothing_is_all_stubs(alias):
    alias.install("fakenothing", None)
    import fakenothing.sub  # type: ignore[import-not-found]

    assert isinstance(fakenothing.sub.anything, alias.Stub)

    class Base(fakenothing.Base):  # a stub as a base class gives a plain class
        pass

    assert Base.__mro__[-1] is object


def test_corpus_page_agrees_with_the_results():
    check = _tool("corpus_check")
    res = ROOT / "docs" / "data" / "tirx_corpus.json"
    assert (
        check.main(["--render", str(res), "--markdown", str(ROOT / "docs" / "tirx_compat.md"), "--check"])
        == 0
    )


def test_corpus_results_name_kernels_and_outcomes_only():
    import json

    rows = json.loads((ROOT / "docs" / "data" / "tirx_corpus.json").read_text())["kernels"]
    assert rows and len({r["id"] for r in rows}) == len(rows)
    for r in rows:
        assert set(r) == {
            "id",
            "file",
            "s1",
            "s1_why",
            "s2",
            "s2_why",
            "s3",
            "s3_why",
            "arch",
            "s4",
            "s4_why",
        }
        assert r["s1"] in {
            "pass",
            "load-failed",
            "print-failed",
            "roundtrip-failed",
            "not-fixpoint",
            "text-differs",
            "no-text",
        }


def test_stage4_tolerates_ulps_only_where_a_transcendental_function_is_called():
    import tirx

    sys.path.insert(0, str(ROOT / "tests"))  # corpus_gpu reads the golden GPU test's helpers
    gpu = _tool("corpus_gpu")
    head = "from tirx.script import tirx as T\n\n@T.function\ndef f(A: T.Tensor((8,), T.float32)):\n"
    assert gpu._transcendental(tirx.loads(head + "    A[0] = T.tanh(A[1])\n"))
    assert gpu._transcendental(tirx.loads(head + "    A[0] = T.asin(A[1])\n"))
    # plain arithmetic: bits must agree
    assert not gpu._transcendental(tirx.loads(head + "    A[0] = A[1] * A[2] + A[3]\n"))
    # an integer division is no transcendental: its bits must agree
    assert not gpu._transcendental(tirx.loads(head + "    A[0] = T.float32(T.int32(A[1]) // 3)\n"))


def test_stage4_looks_into_a_modules_helpers_and_finds_atomic_updates():
    """A module's kernel calls its helpers (``tanh`` in a private function counts), and a
    kernel with atomic updates is compared up to their order (float sums, counters)."""
    import tirx

    sys.path.insert(0, str(ROOT / "tests"))
    gpu = _tool("corpus_gpu")
    mod = tirx.loads(
        "from tirx.script import ir as I\nfrom tirx.script import tirx as T\n\n@I.ir_module\nclass Module:\n"
        "    @T.function(private=True)\n    def g(x: T.float32) -> T.float32:\n        return T.tanh(x)\n\n"
        "    @T.function\n    def main(A: T.Tensor((8,), T.float32)):\n"
        "        A[0] = T.Call(Module.g, [A[1]], ty=T.float32)\n"
    )
    assert gpu._transcendental(mod) and not gpu._transcendental(mod["main"])
    head = "from tirx.script import tirx as T\n\n@T.function\ndef f(A: T.Tensor((8,), T.float32)):\n"
    assert gpu._atomic(tirx.loads(head + "    T.cuda.atomic_add(T.address_of(A[0]), A[1])\n"))
    assert not gpu._atomic(tirx.loads(head + "    A[0] = A[0] + A[1]\n"))
    assert gpu._timed(tirx.loads(head + "    A[0] = T.Cast('float32', T.cuda.clock64())\n"))
    assert not gpu._timed(tirx.loads(head + "    A[0] = A[1]\n"))
    assert gpu._transcendental(tirx.loads(head + "    A[0] = T.hypot(A[1], A[2])\n"))


def test_stage4_compares_functions_that_store_in_host_code_with_the_interpreter():
    """The harness launches TIRx's kernel alone, so a function that stores in host code (before
    or after its device entry) is compared with the interpreter instead (held-out round 18's 21
    ``theirs-differs``); stores inside a device entry are the kernel's own."""
    import tirx

    sys.path.insert(0, str(ROOT / "tests"))
    gpu = _tool("corpus_gpu")
    head = "from tirx.script import tirx as T\n\n@T.function\ndef f(A: T.Tensor((128,), T.float32)):\n"
    entry = "    with T.device_entry():\n        with T.launch_thread('threadIdx.x', 32) as tx:\n            A[tx] = T.float32(1.0)\n"
    assert gpu._stores_outside_entries(tirx.loads(head + "    A[64] = T.float32(6.0)\n" + entry))
    assert not gpu._stores_outside_entries(tirx.loads(head + entry))


def test_stage4_draws_tensors_sized_by_scalar_parameters():
    """A scalar integer parameter a tensor's shape names (``B`` of ``(B, H, D)``) is a symbol:
    128, halved while the tensors would hold more than ``MAX_ELEMENTS`` elements together, and
    passed as that value; other scalars keep their fixed values."""
    import numpy as np

    sys.path.insert(0, str(ROOT / "tests"))
    from tirx_golden_frontend_plan import MAX_ELEMENTS, random_inputs

    class Fake:  # torch as random_inputs uses it, on the CPU
        def from_numpy(self, a):
            return type("T", (), {"a": a, "cuda": lambda s: s, "to": lambda s, dt: s})()

        def __getattr__(self, name):
            return name

    from tirx.script import tirx as T

    @T.function
    def f(
        B: T.int32,
        H: T.int32,
        k: T.int32,
        X: T.Tensor((B, H, 128), "float32"),  # noqa: F821
        Y: T.Tensor((B, 4), "int32"),  # noqa: F821
    ):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        X[0, 0, 0] = T.Cast("float32", Y[0, 0] + k)

    b, h, k, x, y = random_inputs(f, 7, Fake())
    assert x.a.shape == (b, h, 128) and y.a.shape == (b, 4) and b == h and k == 3
    assert b < 128 and x.a.size + y.a.size <= MAX_ELEMENTS < 4 * x.a.size  # the largest that fits
    assert isinstance(x.a, np.ndarray)
