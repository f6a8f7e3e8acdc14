"""Issue #12 item 15 and the campaigns: the ``tirx`` command line never shows a Python
traceback (a diagnostic and exit code 1/2 instead), and ``tirx fuzz`` runs time-budgeted,
seeded, replayable campaigns that save their failures."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
import tirx.tools.cli as cli
from tirx.tools import fuzzing, mutate
from tirx.tools.cli import main

GOOD = """@T.function
def f(A: T.Tensor((4,), T.int32)):
    for i in range(4):
        A[i] = i * 2
"""
UGLY = """@T.function
def f(A: T.Tensor((4,), T.int32)):
  for i in range(0, 4):
    A[i] = (i * 2)
"""


def _deep_text(terms: int = 3000) -> str:
    expr = " + ".join(["A[0]"] * terms)
    return f"@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n    A[1] = {expr}\n"


@pytest.fixture
def good(tmp_path):
    p = tmp_path / "good.tirx"
    p.write_text(GOOD)
    return p


@pytest.fixture
def ugly(tmp_path):
    p = tmp_path / "ugly.tirx"
    p.write_text(UGLY)
    return p


def _no_traceback(err: str) -> None:
    assert "Traceback" not in err, err


# ------------------------------------------------------------------ item 15: no traceback
def test_deep_expression_is_a_diagnostic_not_a_traceback(tmp_path, capsys):
    p = tmp_path / "deep.tirx"
    p.write_text(_deep_text())
    for cmd in (["check"], ["roundtrip"], ["fmt", "--check"]):
        rc = main([*cmd, str(p)])
        err = capsys.readouterr().err
        _no_traceback(err)
        assert rc in (0, 1)
        if rc == 1 and cmd[0] != "fmt":
            assert "error" in err and str(p) in err


def test_deep_expression_entry_point_subprocess(tmp_path):
    p = tmp_path / "deep.tirx"
    p.write_text(_deep_text(5000))
    r = subprocess.run(
        [sys.executable, "-m", "tirx.tools.cli", "check", str(p)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    _no_traceback(r.stderr)
    assert r.returncode in (0, 1)


def test_disk_full_on_fmt_write(ugly, monkeypatch, capsys):
    def full(obj, path):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path) + ".tmp")

    import tirx.fileio

    monkeypatch.setattr(tirx, "save", full)  # what fmt --canonical writes with
    monkeypatch.setattr(tirx.fileio, "write_file", lambda path, data, devices=False: full(None, path))
    for cmd in (["fmt"], ["fmt", "--canonical"]):
        assert main([*cmd, str(ugly)]) == 1
        err = capsys.readouterr().err
        _no_traceback(err)
        assert "No space left on device" in err and str(ugly) in err
        assert ugly.read_text() == UGLY


def test_disk_full_saving_fuzz_failures(monkeypatch, capsys, tmp_path):
    f = tirx.loads(GOOD)
    import tirx.testing.strategies as tst

    monkeypatch.setattr(tst, "functions", lambda **k: st.just(f))
    monkeypatch.setattr(tst, "modules", lambda **k: st.just(f))
    monkeypatch.setattr(cli, "roundtrip_problems", lambda x: ["injected failure"])

    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "out" / "x.json"))

    import tirx.testing.campaign as engine

    monkeypatch.setattr(engine, "save_failure", full)
    assert main(["fuzz", "-n", "2", "--seed", "1", "--save", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert "No space left on device" in err


def test_permission_denied_and_directory_and_encoding(good, tmp_path, monkeypatch, capsys):
    assert main(["check", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    bad = tmp_path / "latin1.tirx"
    bad.write_bytes(b"@T.function\ndef f():\n    pass  # caf\xe9\n")
    assert main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert f"{bad}: not UTF-8 text (byte 0xe9" in err

    def denied(path):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)

    monkeypatch.setattr(cli, "_read", denied)
    for cmd in (["check"], ["roundtrip"], ["fmt"], ["compile"]):
        assert main([*cmd, str(good)]) == 1
        err = capsys.readouterr().err
        _no_traceback(err)
        assert f"error: {good}: Permission denied" in err


def test_broken_pipe_exits_quietly(good, monkeypatch, capsys):
    class Broken:
        def write(self, s):
            raise BrokenPipeError(errno.EPIPE, "Broken pipe")

        def flush(self):
            raise BrokenPipeError(errno.EPIPE, "Broken pipe")

        def fileno(self):
            raise OSError("no fd")

    monkeypatch.setattr(sys, "stdout", Broken())
    assert main(["check", str(good)]) == 1
    err = capsys.readouterr().err
    assert err == ""


def test_broken_pipe_subprocess(tmp_path):
    p = tmp_path / "good.tirx"
    p.write_text(GOOD)
    files = [str(p)] * 400  # ~25 KB of "ok" lines: more than a pipe buffer
    proc = subprocess.Popen(
        [sys.executable, "-m", "tirx.tools.cli", "roundtrip", *files],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    proc.stdout.close()  # the reader leaves at once (`| head -0`)
    err = proc.stderr.read().decode()
    rc = proc.wait(timeout=300)
    _no_traceback(err)
    assert "Exception ignored" not in err
    assert rc == 1


def test_keyboard_interrupt_exits_130(good, monkeypatch, capsys):
    def interrupt(path):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_read", interrupt)
    assert main(["check", str(good)]) == 130
    assert "interrupted" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("exc", "text"),
    [
        (RecursionError("maximum recursion depth exceeded"), "nests too deeply"),
        (MemoryError(), "out of memory"),
    ],
)
def test_recursion_and_memory_errors_are_messages(good, monkeypatch, capsys, exc, text):
    def boom(obj, *a, **k):
        raise exc

    monkeypatch.setattr(cli, "roundtrip_problems", boom)
    assert main(["roundtrip", str(good)]) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert text in err and str(good) in err
    monkeypatch.setattr(tirx, "compile", boom)
    assert main(["compile", str(good), "--target", "interp"]) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert text in err


def test_unexpected_exception_is_an_internal_error(good, monkeypatch, capsys):
    def boom(obj, *a, **k):
        raise KeyError("slot")

    monkeypatch.setattr(cli, "roundtrip_problems", boom)
    monkeypatch.delenv("TIRX_TRACEBACK", raising=False)
    assert main(["roundtrip", str(good)]) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert f"internal error while processing {good}: KeyError" in err and "please report" in err
    monkeypatch.setenv("TIRX_TRACEBACK", "1")
    assert main(["roundtrip", str(good)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "internal error" in err


# ------------------------------------------------------------------ campaigns: tirx fuzz
@pytest.fixture
def fixed_programs(monkeypatch):
    """The round-trip fuzzer draws one fixed function (fast, deterministic)."""
    import tirx.testing.strategies as tst

    f = tirx.loads(GOOD)
    monkeypatch.setattr(tst, "functions", lambda **k: st.just(f))
    monkeypatch.setattr(tst, "modules", lambda **k: st.just(f))
    return f


def test_fuzz_time_budget_and_one_summary_line(fixed_programs, capsys):
    assert main(["fuzz", "--time", "0.5", "--seed", "7", "--no-save"]) == 0
    cap = capsys.readouterr()
    lines = cap.out.splitlines()
    assert len(lines) == 1 and "seed 7" in lines[0] and "all round-trip invariants hold" in lines[0]
    assert cap.err.count("\n") <= 1  # at most one progress line (redrawn with \r), on stderr


def test_fuzz_default_seed_varies_and_is_printed(fixed_programs, capsys):
    seeds = set()
    for _ in range(3):
        assert main(["fuzz", "-n", "1", "--no-save"]) == 0
        out = capsys.readouterr().out
        seeds.add(out.split("seed ")[1].split(":")[0])
    assert len(seeds) > 1


def test_fuzz_failure_is_saved_with_replay(fixed_programs, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(cli, "roundtrip_problems", lambda x: ["injected failure"])
    save = tmp_path / "fails"
    assert main(["fuzz", "-n", "3", "--seed", "11", "--save", str(save)]) == 1
    out = capsys.readouterr().out
    assert "injected failure" in out and "replay: tirx fuzz --seed 11 --examples 3" in out
    meta = json.loads((save / "roundtrip-11.json").read_text())
    assert meta["seed"] == 11 and meta["error"] == "injected failure"
    assert meta["replay"] == "tirx fuzz --seed 11 --examples 3"
    assert tirx.structural_equal(tirx.load(save / "roundtrip-11.tirx"), fixed_programs)


def test_fuzz_semantic_failure_saved(monkeypatch, capsys, tmp_path):
    from tirx.testing import semantic_fuzz as ifz

    f = tirx.loads(GOOD)
    monkeypatch.setattr(ifz, "semantic_strategy", lambda: st.just(types.SimpleNamespace(func=f)))

    def bad(r, checks=None):
        raise AssertionError("Simplify changed the kernel's outputs: injected")

    monkeypatch.setattr(ifz, "check_runnable", bad)
    assert main(["fuzz", "--semantic", "-n", "2", "--seed", "3", "--save", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "semantic fuzz" in out and "injected" in out
    assert "replay: tirx fuzz --semantic --seed 3 --examples 2" in out
    assert (tmp_path / "semantic-3.tirx").exists() and (tmp_path / "semantic-3.json").exists()


def test_fuzz_flags_are_validated(capsys):
    for bad in (
        ["--time", "0"],
        ["--examples", "0"],
        ["--max-shrink-time", "-1"],
        ["--semantic", "--mutate"],
    ):
        assert main(["fuzz", *bad]) == 2
    capsys.readouterr()


def test_budgeted_runs_chunks_with_replayable_seeds():
    seen = []
    n, _secs, last, _shrink = fuzzing.run_budgeted(
        st.integers(0, 10**9), seen.append, seed=100, examples=250, chunk=100
    )
    assert n == 250 and last is None

    def fails(x):
        if x > 10:
            raise AssertionError(x)

    n, _secs, last, _shrink = fuzzing.run_budgeted(
        st.integers(0, 10**9), fails, seed=5, examples=500, chunk=100
    )
    cseed, cn, x, _e = last
    assert x > 10 and cn == 100
    # the reported chunk seed replays the failure on its own
    _n, _s, again, _ = fuzzing.run_budgeted(st.integers(0, 10**9), fails, seed=cseed, examples=cn, chunk=cn)
    assert again is not None and again[2] == x


def test_budgeted_shrink_time_is_bounded():
    calls = []

    def fails(xs):
        calls.append(xs)
        if sum(xs) > 1000:
            raise AssertionError("big")

    _n, _s, last, _ = fuzzing.run_budgeted(
        st.lists(st.integers(0, 10**6), min_size=5), fails, seed=1, examples=100, max_shrink_time=0.0
    )
    assert last is not None and sum(last[2]) > 1000
    failing = [c for c in calls if sum(c) > 1000]
    assert len(failing) <= 2  # stopped at the first shrink step instead of shrinking to [1001]


# ------------------------------------------------------------------ campaigns: mutation
def test_check_text_pipeline(monkeypatch):
    assert mutate.check_text(GOOD) is None
    assert mutate.check_text(GOOD.replace("range(4)", "range(4")) is None  # a diagnostic
    monkeypatch.setattr(tirx, "dumps", lambda obj: {}["boom"])
    sig, msg, tb = mutate.check_text(GOOD)
    assert sig.startswith("dumps: KeyError") and "KeyError" in msg and "Traceback" in tb


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32))
def test_mutations_are_deterministic_and_bounded(seed):
    import random

    corpus = [GOOD, UGLY]
    a = mutate.mutate(random.Random(seed), GOOD, corpus)
    b = mutate.mutate(random.Random(seed), GOOD, corpus)
    assert a == b and isinstance(a[0], str) and len(a[0]) <= mutate.MAX_MUTANT_CHARS and a[1]


def test_worker_kills_a_hang_and_recovers(monkeypatch):
    import time

    real = mutate._pipeline

    def pipeline(text):
        t_end = time.monotonic() + 60
        while text == "HANG" and time.monotonic() < t_end:  # a CPU-bound hang
            pass
        return real(text)

    monkeypatch.setattr(mutate, "_pipeline", pipeline)  # the forked worker inherits it
    w = mutate._Worker()
    try:
        assert w.run("HANG", 0.5) == ("timeout", None)
        assert w.run(GOOD, 60) == ("ok", (True, None))
    finally:
        w.stop()


def test_mutate_campaign_saves_reduced_failures(monkeypatch, tmp_path, good, capsys):
    def pipeline(text):
        if "A[i]" in text:
            return True, ("stage: FakeError at x.py:1", "FakeError: injected", "")
        return False, None

    monkeypatch.setattr(mutate, "_pipeline", pipeline)
    save = tmp_path / "fails"
    rc = main(["fuzz", "--mutate", "-n", "30", "--seed", "4", "--corpus", str(good), "--save", str(save)])
    out = capsys.readouterr().out.splitlines()
    assert rc == 1 and out[0].startswith("mutate fuzz: 30 inputs") and "seed 4" in out[0]
    assert "stage: FakeError at x.py:1" in out[1]
    meta = json.loads((save / "mutate-4-1.json").read_text())
    assert meta["replay"].startswith("python -m tirx.tools.mutate ") and meta["seed"] == 4
    reduced = (save / "mutate-4-1.tirx").read_text()
    assert "A[i]" in reduced and len(reduced.splitlines()) == 1  # reduced to the one line that matters


def test_mutate_campaign_clean_run(monkeypatch, good, capsys):
    monkeypatch.setattr(mutate, "_pipeline", lambda text: (False, None))
    assert main(["fuzz", "--mutate", "-n", "10", "--seed", "1", "--corpus", str(good), "--no-save"]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("seed 1: ok")


def test_mutate_replay_main(good, capsys):
    assert mutate.main([str(good)]) == 0
    assert "ok" in capsys.readouterr().out


def test_ci_runs_exactly_the_readme_commands():
    """.ci/run = the README's install command and its test commands (pytest and the campaigns)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    blocks = re.findall(r"```sh\n(.*?)```", (root / "README.md").read_text(), re.S)
    readme = [ln.strip() for b in blocks[:2] for ln in b.splitlines() if ln.strip()]
    ci = [
        ln.strip()
        for ln in (root / ".ci" / "run").read_text().splitlines()
        if ln.strip() and not ln.startswith(("#", "set ", "cd "))
    ]
    assert ci == readme
    assert any(c.startswith("tirx fuzz --mutate --time") for c in ci)
    assert any(c.startswith("tirx fuzz --semantic --time") for c in ci)
