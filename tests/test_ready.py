"""Ready records (``tirx.runtime.ready``): a new process with the library's kernels in the disk
cache gets launchable kernels without importing or running their scripts; the records are
keyed by everything that decides the kernel, refused when they do not fit, and checked against
the real kernel when one is built. The launches themselves: tests/test_runtime_launch.py
(fake driver) and tests/test_kernels_library_gpu.py (a GPU)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("cuda.bindings.nvrtc")

import tirx
from tirx.runtime import cache as C
from tirx.runtime import ready as R

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# three library kernels, built in a fresh process: what kind each is and what was imported
PROBE = r"""
import json, sys, warnings
warnings.simplefilter("error")
from tirx.kernels import attn, gemm, rows
from tirx.runtime import ready as R
ks = [
    gemm._kernel("float16", tuple(sorted(gemm.config(256, 256, 256, "float16").items()))),
    rows._softmax(4096, "float16"),
    attn._compiled(1, 2, 256, 64, True, "bfloat16", attn._best(256, 64, True)[1]),
]
out = {
    "kinds": [type(k).__name__ for k in ks],
    "script": "tirx.script" in sys.modules,
    "hopper": sorted(m for m in sys.modules if m.startswith("tirx.kernels.hopper")),
}
if sys.argv[1] == "check":  # the real kernels, built now, agree with the records
    out["same"] = [R.export(k.materialize()) == k._rec and k.materialize().cubin == k.cubin for k in ks]
print(json.dumps(out))
"""


def _probe(cache: str, mode: str = "run", **env: str) -> dict:
    e = dict(os.environ, TIRX_CACHE_DIR=cache, PYTHONPATH=ROOT, **env)
    r = subprocess.run(
        [sys.executable, "-c", PROBE, mode], env=e, capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_new_process_takes_the_library_kernels_from_their_records(tmp_path):
    cache = str(tmp_path / "cache")  # the child processes' (this process's own is left alone)
    first = _probe(cache)
    assert first["kinds"] == ["Kernel"] * 3 and first["script"]
    again = _probe(cache)
    # no script module, no frontend: the kernels come from their records
    assert again == {"kinds": ["ReadyKernel"] * 3, "script": False, "hopper": []}
    checked = _probe(cache, "check")
    assert checked["same"] == [True] * 3
    # records off: built again (the compile cache's cubins)
    assert _probe(cache, TIRX_READY_CACHE="0")["kinds"] == ["Kernel"] * 3


def _add():
    """The fast-path launch tests' kernel (tests/test_runtime_launch.py), compiled for sm_90a."""
    from test_runtime_launch import make_add

    return tirx.compile(make_add(), target="cuda -arch=sm_90a")


def test_records_are_written_read_and_keyed(disk_cache, monkeypatch):
    builds = []

    def build():
        builds.append(1)
        return _add()

    k = R.ready("tests.add", (1, "x"), build)
    assert type(k).__name__ == "Kernel" and builds == [1]
    C.clear_memory()  # as a new process: from disk
    rk = R.ready("tests.add", (1, "x"), build)
    assert isinstance(rk, R.ReadyKernel) and builds == [1] and rk.cubin == k.cubin
    # another name, other arguments, another tirx source: other keys, built
    for name, args in (("tests.add2", (1, "x")), ("tests.add", (1, "y")), ("tests.add", (True, "x"))):
        assert not isinstance(R.ready(name, args, build), R.ReadyKernel)
    monkeypatch.setattr(R, "_FP", "0" * 32)
    assert not isinstance(R.ready("tests.add", (1, "x"), build), R.ReadyKernel)
    assert len(builds) == 5


def test_a_user_kernel_is_keyed_by_its_files(disk_cache, tmp_path):
    """``files``: a kernel built from a user's script is rebuilt when the script changes."""
    import os

    script = tmp_path / "my_kernels.py"
    script.write_text("# v1\n")
    builds = []

    def build():
        builds.append(1)
        return _add()

    R.ready("user.add", (), build, files=(str(script),))
    C.clear_memory()
    assert isinstance(R.ready("user.add", (), build, files=(str(script),)), R.ReadyKernel)
    script.write_text("# version 2\n")  # another size (and time)
    os.utime(script, ns=(1, 1))
    assert not isinstance(R.ready("user.add", (), build, files=(str(script),)), R.ReadyKernel)
    assert not isinstance(R.ready("user.add", (), build), R.ReadyKernel)  # without the files: its own key
    assert len(builds) == 3
    with pytest.raises(ValueError, match="files: cannot read"):
        R.ready("user.add", (), build, files=(str(tmp_path / "missing.py"),))
    with pytest.raises(TypeError, match="files must be a tuple"):
        R.ready("user.add", (), build, files=str(script))


def test_a_record_of_another_layout_is_rebuilt_and_rewritten(disk_cache):
    k = _add()
    key = R.ready_key("tests.bad", (), R._arch())
    C.put(key, C.CacheEntry("", "", k.cubin, "", {"ready": 1, "name": "add_kernel"}))  # fields missing
    builds = []
    got = R.ready("tests.bad", (), lambda: builds.append(1) or k)
    assert got is k and builds == [1]
    C.clear_memory()
    assert isinstance(R.ready("tests.bad", (), lambda: builds.append(1) or k), R.ReadyKernel)
    assert builds == [1]


def test_a_record_that_disagrees_with_the_built_kernel_warns_and_is_rewritten(disk_cache):
    k = _add()
    key = R.ready_key("tests.stale", (), R._arch())
    stale = dict(R.export(k), dims="gx, 1, 1, 64, 1, 1, sm, h")
    C.put(key, C.CacheEntry("", "", k.cubin, "", stale))
    rk = R.ready("tests.stale", (), lambda: k)
    assert isinstance(rk, R.ReadyKernel)
    with pytest.warns(RuntimeWarning, match="did not match"):
        assert rk.source == k.source  # built for its source: checked against the record
    C.clear_memory()
    again = R.ready("tests.stale", (), lambda: k)
    assert again._rec == R.export(k)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again.materialize()


def test_the_fingerprint_reads_linked_subpackages_and_not_the_tools(tmp_path):
    """In a checkout ``tirx/passes`` & co are links to top-level folders: their files are keyed
    (a pass changes the code); ``tirx/tools`` is not (benchmarks and scripts)."""
    import os

    outer = tmp_path / "passes"
    outer.mkdir()
    (outer / "cse.py").write_text("")
    pkg = tmp_path / "tirx"
    (pkg / "runtime").mkdir(parents=True)
    (pkg / "runtime" / "ready.py").write_text("")
    (pkg / "tools").mkdir()
    (pkg / "tools" / "bench.py").write_text("")
    (pkg / "notes.txt").write_text("")
    os.symlink(outer, pkg / "passes")
    got = [os.path.relpath(p, pkg) for p in R.sources(str(pkg))]
    assert got == [os.path.join("passes", "cse.py"), os.path.join("runtime", "ready.py")]
    real = R.sources(os.path.dirname(os.path.abspath(R.__file__ + "/..")))
    assert any(p.endswith(os.path.join("passes", "cse.py")) for p in real)
    assert any(p.endswith(os.path.join("kernels", "hopper", "matmul.py")) for p in real)


def test_misuse_is_named():
    with pytest.raises(TypeError, match="args must hold"):
        R.ready_key("x", (object(),), "sm_90a")
    with pytest.raises(TypeError, match="name must be"):
        R.ready_key("", (), "sm_90a")
    with pytest.raises(ValueError, match="maker must be"):
        R.compile_ready("os.path:join", 1)


_ARGS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4) | st.floats(allow_nan=False),
    lambda inner: st.tuples(inner, inner) | st.tuples(inner),
    max_leaves=6,
)


@given(a=st.tuples(_ARGS, _ARGS), b=st.tuples(_ARGS, _ARGS))
def test_keys_tell_arguments_apart(a, b):
    """Two argument tuples share a key exactly when they print alike (1, 1.0 and True do not)."""
    assert (R.ready_key("k", a, "sm_90a") == R.ready_key("k", b, "sm_90a")) == (repr(a) == repr(b))
