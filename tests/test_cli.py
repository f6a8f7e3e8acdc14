"""The ``tirx`` command line, through ``tirx.tools.cli.main([...])``."""

from __future__ import annotations

import shutil

import pytest
from compat_dir import COMPAT_TIRX as COMPAT

import tirx
from tirx.tools.cli import main

GOOD = """from __future__ import annotations

# from tirx.script import tirx as T

@T.function
def f(A: T.Tensor((4,), T.int32)):
    for i in range(4):
        A[i] = i * 2
"""
UGLY = """@T.function
def f(A: T.Tensor((4,), T.int32)):
  for i in range(0, 4):   # comment
    A[i] = (i * 2)
"""
BAD = """@T.function
def f(A: T.Tensor((4,), T.int32)):
    A[0] = y
"""


@pytest.fixture
def files(tmp_path):
    good = tmp_path / "good.tirx"
    ugly = tmp_path / "ugly.tirx"
    bad = tmp_path / "bad.tirx"
    good.write_text(GOOD)
    ugly.write_text(UGLY)
    bad.write_text(BAD)
    return good, ugly, bad


def test_help_and_usage(capsys):
    assert main(["--help"]) == 0
    assert "fmt" in capsys.readouterr().out
    for cmd in ("fmt", "check", "roundtrip", "fuzz", "compile"):
        assert main([cmd, "--help"]) == 0
        assert "usage: tirx " + cmd in capsys.readouterr().out
    assert main([]) == 2
    assert main(["nosuchcommand"]) == 2
    assert main(["check"]) == 2  # missing FILE
    capsys.readouterr()
    assert main(["check", "/nonexistent/x.tirx"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["fuzz", "--examples", "0"]) == 2
    assert main(["check", "--bogus", "x"]) == 2


def test_fmt_check_and_rewrite(files, capsys):
    good, ugly, bad = files
    assert main(["fmt", "--check", str(good)]) == 0
    assert main(["fmt", "--check", str(good), str(ugly)]) == 1
    out = capsys.readouterr().out
    assert f"would reformat {ugly}" in out and str(good) not in out
    assert ugly.read_text() == UGLY  # --check never writes
    assert main(["fmt", str(ugly)]) == 0  # only whitespace changes: the user's spellings stay
    assert ugly.read_text() == (
        "@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n"
        "    for i in range(0, 4):  # comment\n        A[i] = (i * 2)\n"
    )
    assert main(["fmt", "--check", str(ugly)]) == 0
    assert main(["fmt", "--canonical", str(ugly)]) == 0  # the canonical print
    assert ugly.read_text() == GOOD.replace("range(4):", "range(4):  # comment")  # comments are kept
    assert main(["fmt", "--check", "--canonical", str(ugly)]) == 0
    assert main(["fmt", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "undefined name 'y'" in err and f"{bad}:3:12" in err
    assert bad.read_text() == BAD


def test_check(files, capsys):
    good, ugly, bad = files
    assert main(["check", str(good), str(ugly)]) == 0
    assert main(["check", str(good), str(bad)]) == 1
    cap = capsys.readouterr()
    assert f"{good}: ok" in cap.out
    assert "error: undefined name 'y'" in cap.err and f"--> {bad}:3:12" in cap.err and "^" in cap.err
    assert main(["check", "-q", str(good)]) == 0
    assert capsys.readouterr().out == ""


def test_roundtrip(files, capsys, tmp_path):
    good, ugly, bad = files
    assert main(["roundtrip", str(good), str(ugly)]) == 0
    assert "ok (equal, fixpoint, hash)" in capsys.readouterr().out
    assert main(["roundtrip", str(bad)]) == 1
    if COMPAT:
        dst = tmp_path / "compat"
        dst.mkdir()
        paths = [shutil.copy(p, dst) for p in COMPAT]
        assert main(["roundtrip", *paths]) == 0


def test_fuzz_small(capsys):
    pytest.importorskip("tirx.testing.strategies")
    # real generated programs: ok, or a reported counterexample (exit 1), never a crash
    rc = main(["fuzz", "--examples", "5", "--seed", "3", "--no-save"])
    cap = capsys.readouterr()
    assert cap.out.startswith("roundtrip fuzz: ") and "seed 3" in cap.out
    if rc == 0:
        assert "all round-trip invariants hold" in cap.out
    else:
        assert rc == 1 and "replay: tirx fuzz --seed" in cap.out


def test_fuzz_reports_a_shrunk_failure(monkeypatch, capsys):
    pytest.importorskip("tirx.testing.strategies")
    from hypothesis import strategies as st

    import tirx.testing.strategies as tst
    import tirx.tools.cli as cli

    f = tirx.loads(GOOD)
    monkeypatch.setattr(tst, "functions", lambda **k: st.just(f))  # keep shrinking trivial
    monkeypatch.setattr(tst, "modules", lambda **k: st.just(f))
    monkeypatch.setattr(cli, "roundtrip_problems", lambda x: ["injected failure"])
    assert main(["fuzz", "--examples", "3", "--seed", "1", "--no-save"]) == 1
    out = capsys.readouterr().out
    assert "FAILED (seed 1)" in out and "@T.function" in out and "injected failure" in out


def test_fuzz_semantic_flag(monkeypatch, capsys):
    import importlib

    real = importlib.import_module

    def fake(name, *a, **k):
        if name == "tirx.testing.semantic_fuzz":
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", fake)
    assert main(["fuzz", "--semantic", "--examples", "2"]) == 2
    assert "not available yet" in capsys.readouterr().err


def test_compile(files, capsys, tmp_path):
    good, _, bad = files
    assert main(["compile", str(bad), "--target", "cuda", "-arch=sm_90a"]) == 1
    assert "undefined name" in capsys.readouterr().err
    assert main(["compile", str(good), "--target", "nosuchtarget"]) == 1
    assert "error" in capsys.readouterr().err
    # a host-only function cannot be compiled for cuda: a clear error, not a traceback
    rc = main(["compile", str(good), "--target", "cuda", "-arch=sm_90a"])
    cap = capsys.readouterr()
    assert rc == 1 and "error" in cap.err and "Traceback" not in cap.err
    if COMPAT:
        k = tmp_path / "k.tirx"
        shutil.copy(next(p for p in COMPAT if p.endswith("ew_add_f16_dyn.tirx")), k)
        rc = main(["compile", str(k), "--target", "cuda", "-arch=sm_90a"])
        cap = capsys.readouterr()
        if rc == 0:
            assert "__global__" in cap.out
        else:  # no CUDA code generator in this build
            assert "error" in cap.err and "Traceback" not in cap.err


def test_installed_entry_point_resolves():
    from importlib import metadata

    eps = [e for e in metadata.entry_points(group="console_scripts") if e.name == "tirx"]
    assert eps and eps[0].value == "tirx.tools.cli:main"
    assert eps[0].load() is main


def test_loaded_objects_match_library(files):
    good, _, _ = files
    assert tirx.structural_equal(tirx.load(good), tirx.loads(GOOD))


def test_demo_dispatch(monkeypatch, capsys):
    import importlib
    import types

    calls = []
    fake = types.SimpleNamespace(main=lambda argv=None: calls.append(argv) or 0)
    real = importlib.import_module
    monkeypatch.setattr(
        importlib, "import_module", lambda name, *a: fake if name == "tirx.tools.demo" else real(name, *a)
    )
    assert main(["demo"]) == 0
    assert main(["demo", "--cpu"]) == 0
    assert calls == [None, ["--cpu"]]

    def missing(name, *a):
        if name == "tirx.tools.demo":
            raise ImportError(name)
        return real(name, *a)

    monkeypatch.setattr(importlib, "import_module", missing)
    assert main(["demo"]) == 2
    assert "not available" in capsys.readouterr().err
