"""``@T.autotune`` over ``@T.jit`` constexprs (issue #32), on the CPU interpreter: the winner
is the config measured fastest, a new key tunes again, a fresh process reads the winner from
disk, failing configs are dropped with their reasons (all failing: an error naming each),
accumulated outputs are restored between timed runs, and the winner is always one of the
configs that compiled (hypothesis). CUDA candidates compile in worker processes (NVRTC only,
no GPU); tests/test_autotune_gpu.py tunes on a GPU."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from autotune_kernels import acc  # the kernel both tuning test files tune
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx
from tirx.runtime import autotune as A
from tirx.script import tirx as T

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """Every test writes its tuning results to its own cache directory."""
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TIRX_DISABLE_DISK_CACHE", raising=False)
    monkeypatch.delenv("TIRX_INTERPRET", raising=False)


@T.jit
def fill(
    O: T.Tensor((8,), "float32"), *, V: T.constexpr = 0, BAD: T.constexpr = False, BLOCK: T.constexpr = 8
):
    """O[:] = V; BAD fails a static assertion, BLOCK > 8 writes out of bounds when it runs."""
    T.static_assert(not BAD, "this config is marked bad")
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=BLOCK))
    O[T.cuda.thread_idx("x")] = T.float32(V)


def by_value(times: dict, out: np.ndarray, log: list | None = None):
    """A do_bench that runs the candidate once and returns the time given for the value it wrote."""

    def bench(run):
        run()
        v = int(out[0])
        if log is not None:
            log.append(v)
        return times[v]

    return bench


def data(n=256):
    x = np.arange(n, dtype=np.float32) % 7
    c = np.ones(n, np.float32)
    return x, c


# ---------------------------------------------------------------------------- choosing
def test_the_config_measured_fastest_wins():
    tuned = T.autotune(
        acc,
        configs=[{"BLOCK": 32, "REPEAT": 64}, {"BLOCK": 64, "REPEAT": 1}, {"BLOCK": 128, "REPEAT": 48}],
        key=["N"],
        warmup=1,
        rep=5,
        restore_value=["C"],
    )
    x, c = data()
    tuned(x, c, N=256)
    assert (
        tuned.best_config()
        == {"BLOCK": 64, "REPEAT": 1}
        == tuned.best_config(256)
        == tuned.best_config((256,))
    )
    times = dict((c_["REPEAT"], ms) for c_, ms in tuned.timings[(256,)])
    assert times[1] * 2 < min(times[64], times[48]), times  # the interpreter's time follows the work
    assert tuned.failures[(256,)] == [] and tuned.stats[(256,)]["source"] == "tuned"
    np.testing.assert_array_equal(c, 1 + x)  # the winner ran once, on the restored C


def test_the_decorator_form_and_the_winner_is_what_runs():
    out = np.zeros(8, np.float32)

    @T.autotune(configs=[{"V": 1}, {"V": 2}, {"V": 3}], do_bench=by_value({1: 3.0, 2: 1.0, 3: 2.0}, out))
    @T.jit
    def local_fill(O: T.Tensor((8,), "float32"), *, V: T.constexpr = 0):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
        O[T.cuda.thread_idx("x")] = T.float32(V)

    local_fill(out)
    assert local_fill.best_config(()) == {"V": 2} and (out == 2).all()
    assert "T.autotune" in repr(local_fill) and local_fill.__name__ == "local_fill"
    assert local_fill.timings[()] == [({"V": 1}, 3.0), ({"V": 2}, 1.0), ({"V": 3}, 2.0)]


def test_a_new_key_tunes_again_and_an_old_one_does_not():
    out = np.zeros(8, np.float32)
    log: list = []
    tuned = T.autotune(
        acc, configs=[{"BLOCK": 32}, {"BLOCK": 64}], key=["N"], do_bench=lambda run: log.append(run) or 1.0
    )
    for n in (64, 64, 128, 64, 128):
        x, c = data(n)
        tuned(x, c, N=n)
        np.testing.assert_array_equal(c, 1 + x)
    assert len(log) == 4  # two configs, two keys
    assert set(tuned.timings) == {(64,), (128,)} and tuned.last_key == (128,)
    # a key may name an array: its shape and dtype
    arr = T.autotune(fill, configs=[{"V": 1}, {"V": 2}], key=["O"], do_bench=by_value({1: 2.0, 2: 1.0}, out))
    arr(out)
    assert list(arr.timings) == [(("array", (8,), "float32"),)]
    assert arr.best_config({"O": out}) == {"V": 2}


def test_a_single_config_is_not_timed():
    tuned = T.autotune(fill, configs=[{"V": 5}], do_bench=lambda run: pytest.fail("timed"))
    out = np.zeros(8, np.float32)
    tuned(out)
    assert (out == 5).all() and tuned.stats[()]["source"] == "only"


# ---------------------------------------------------------------------------- failures
def test_failing_configs_are_dropped_with_their_reasons():
    out = np.zeros(8, np.float32)
    tuned = T.autotune(
        fill,
        configs=[{"V": 1, "BAD": True}, {"V": 2, "BLOCK": 16}, {"V": 3}, {"V": 4}],
        do_bench=by_value({3: 2.0, 4: 1.0}, out),
    )
    tuned(out)
    assert tuned.best_config() == {"V": 4} and (out == 4).all()
    reasons = dict((c["V"], why) for c, why in tuned.failures[()])
    assert set(reasons) == {1, 2}
    assert "this config is marked bad" in reasons[1] and "test_autotune.py" in reasons[1]  # located
    assert "out-of-bounds" in reasons[2] and "OutOfBoundsError" in reasons[2]
    assert [c["V"] for c, _ms in tuned.timings[()]] == [3, 4]


def test_when_every_config_fails_the_error_names_each_reason():
    out = np.zeros(8, np.float32)
    tuned = T.autotune(
        fill, configs=[{"V": 1, "BAD": True}, {"V": 2, "BLOCK": 16}], do_bench=lambda run: run() or 1.0
    )
    with pytest.raises(A.AutotuneError) as ei:
        tuned(out)
    text = str(ei.value)
    assert "every autotune config failed" in text
    assert "{'V': 1, 'BAD': True}" in text and "this config is marked bad" in text
    assert "{'V': 2, 'BLOCK': 16}" in text and "out-of-bounds access to buffer O" in text
    assert [c for c, _why in ei.value.failures] == [{"V": 1, "BAD": True}, {"V": 2, "BLOCK": 16}]
    assert tuned.best_config(()) is None  # nothing kept: the next call tries again


def test_a_timing_that_is_not_a_number_drops_the_config():
    out = np.zeros(8, np.float32)
    tuned = T.autotune(fill, configs=[{"V": 1}, {"V": 2}], do_bench=by_value({1: float("nan"), 2: 5.0}, out))
    tuned(out)
    assert tuned.best_config() == {"V": 2} and "nan" in tuned.failures[()][0][1]


# ---------------------------------------------------------------------------- outputs
def test_restore_value_gives_every_timed_run_the_same_output():
    seen: list = []
    x, c = data(64)

    def bench(run):
        for _ in range(3):
            run()
            seen.append(c.copy())
        return 1.0

    tuned = T.autotune(
        acc, configs=[{"BLOCK": 32}, {"BLOCK": 64}], key=["N"], do_bench=bench, restore_value=["C"]
    )
    tuned(x, c, N=64)
    assert len(seen) == 6 and all((s == 1 + x).all() for s in seen)  # each run started from C = 1
    np.testing.assert_array_equal(c, 1 + x)  # after tuning: C as it was, then the winner once
    # without it the timed runs accumulate, as the option's name warns
    x2, c2 = data(64)
    plain = T.autotune(
        acc,
        configs=[{"BLOCK": 32}, {"BLOCK": 64}],
        key=["N"],
        do_bench=lambda run: run() or 1.0,
        disk_cache=False,
    )
    plain(x2, c2, N=64)
    np.testing.assert_array_equal(c2, 1 + 3 * x2)


def test_reset_to_zero_zeroes_before_each_run_and_restores_after():
    seen: list = []
    x, c = data(64)

    def bench(run):
        run()
        seen.append(c.copy())
        return 1.0

    tuned = T.autotune(
        acc, configs=[{"BLOCK": 32}, {"BLOCK": 64}], key=["N"], do_bench=bench, reset_to_zero="C"
    )
    tuned(x, c, N=64)
    assert len(seen) == 2 and all((s == x).all() for s in seen)
    np.testing.assert_array_equal(c, 1 + x)


# ---------------------------------------------------------------------------- pruning
def test_prune_configs_by_a_function_sees_the_arguments():
    got: list = []
    log: list = []

    def prune(configs, args):
        got.append(args)
        return [c for c in configs if c["BLOCK"] <= args["N"]]

    tuned = T.autotune(
        acc,
        configs=[{"BLOCK": 32}, {"BLOCK": 64}, {"BLOCK": 128}],
        key=["N"],
        prune_configs_by=prune,
        do_bench=lambda run: log.append(1) or 1.0,
    )
    x, c = data(64)
    tuned(x, c, N=64)
    assert got[0]["N"] == 64 and got[0]["X"] is x and got[0]["BLOCK"] == 32  # defaults filled in
    assert len(log) == 2 and [cfg for cfg, _ in tuned.timings[(64,)]] == [{"BLOCK": 32}, {"BLOCK": 64}]


@T.jit
def scaled(O: T.Tensor((8,), "float32"), S: T.float32, *, BLOCK: T.constexpr = 8):
    """O[:] = S * BLOCK: right only with the S prepared for BLOCK (1 / BLOCK)."""
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
    O[T.cuda.thread_idx("x")] = S * T.float32(BLOCK)


def test_prepare_args_gives_each_config_its_own_arguments():
    seen: list = []
    wrote: list = []
    out = np.zeros(8, np.float32)

    def prepare(cfg, args):
        seen.append((dict(cfg), args["O"] is out, "S" in args))
        if cfg["BLOCK"] == 3:
            raise ValueError("no plan for a block of 3")
        return {"S": 1.0 / cfg["BLOCK"]}

    tuned = T.autotune(
        scaled,
        configs=[{"BLOCK": 2}, {"BLOCK": 3}, {"BLOCK": 4}, {"BLOCK": 8}],
        prepare_args=prepare,
        do_bench=lambda run: (out.fill(0), run(), wrote.append(out.copy()), 1.0)[3],
    )
    tuned(out)  # S is left out: prepare_args supplies it
    assert [c for c, _, _ in seen[:4]] == [{"BLOCK": 2}, {"BLOCK": 3}, {"BLOCK": 4}, {"BLOCK": 8}]
    assert all(o and not has_s for _, o, has_s in seen)  # the call's own arguments, by name
    assert [c for c, _ in tuned.failures[()]] == [{"BLOCK": 3}]
    assert "no plan for a block of 3" in tuned.failures[()][0][1]
    assert len(wrote) == 3 and all(np.allclose(w, 1.0) for w in wrote)  # every candidate ran right
    out[:] = 0
    tuned(out)  # the winner runs with its own prepared S
    assert np.allclose(out, 1.0)
    assert seen[-1][0] == tuned.best_config()


def test_prepare_args_misuse_names_the_problem():
    out = np.zeros(8, np.float32)
    for ret, words in (([("S", 1.0)], "returned list, expected a dict"), ({"T": 1.0}, "returned ['T']")):
        tuned = T.autotune(
            scaled,
            configs=[{"BLOCK": 2}, {"BLOCK": 4}],
            prepare_args=lambda c, a, r=ret: r,
            do_bench=lambda run: 1.0,
        )
        with pytest.raises(TypeError, match=re.escape(words)):
            tuned(out)
    with pytest.raises(TypeError, match="prepare_args must be a function"):
        T.autotune(scaled, configs=[{"BLOCK": 2}], prepare_args=3)


def test_prune_configs_by_tritons_dict():
    log: list = []
    seen: list = []

    def early(configs, args):
        seen.append(sorted(args))
        return configs[1:]

    tuned = T.autotune(
        acc,
        configs=[{"BLOCK": 16}, {"BLOCK": 32}, {"BLOCK": 64}, {"BLOCK": 128}],
        key=["N"],
        prune_configs_by={"early_config_prune": early, "perf_model": lambda **a: -a["BLOCK"], "top_k": 2},
        do_bench=lambda run: log.append(1) or 1.0,
    )
    x, c = data(64)
    tuned(x, c, N=64)
    assert "N" in seen[0] and "C" in seen[0]
    assert [cfg["BLOCK"] for cfg, _ in tuned.timings[(64,)]] == [128, 64]  # the model's two best


def test_pruning_everything_is_an_error():
    tuned = T.autotune(acc, configs=[{"BLOCK": 32}], key=["N"], prune_configs_by=lambda cs, a: [])
    x, c = data(64)
    with pytest.raises(A.AutotuneError, match="left no config"):
        tuned(x, c, N=64)


# ---------------------------------------------------------------------------- misuse
def test_misuse_is_reported():
    with pytest.raises(TypeError, match=r"put @T\.jit below it"):
        T.autotune(configs=[{"V": 1}])(lambda O: None)
    with pytest.raises(ValueError, match="configs is empty"):
        T.autotune(fill, configs=[])
    with pytest.raises(TypeError, match="list of dicts"):
        T.autotune(fill, configs={"V": 1})
    with pytest.raises(TypeError, match="unhashable"):
        T.autotune(fill, configs=[{"V": [1]}])
    with pytest.raises(ValueError, match="warmup"):
        T.autotune(fill, configs=[{"V": 1}], warmup=0)
    out = np.zeros(8, np.float32)
    for kwargs, match in [
        ({"configs": [{"Q": 1}]}, r"\['Q'\], which are not T.constexpr"),
        ({"configs": [{"V": 1}], "key": ["Z"]}, "'Z', which is not a parameter"),
        ({"configs": [{"V": 1}], "key": ["V"]}, "also tuned"),
        ({"configs": [{"V": 1}], "restore_value": ["V"]}, "not an array parameter"),
    ]:
        with pytest.raises(TypeError, match=match):
            T.autotune(fill, **kwargs)(out)
    tuned = T.autotune(fill, configs=[{"V": 1}, {"V": 2}], do_bench=lambda run: 1.0)
    with pytest.raises(TypeError, match=r"\['V'\] are chosen by @T.autotune"):
        tuned(out, V=3)
    with pytest.raises(TypeError, match="no array argument"):
        T.autotune(acc, configs=[{"BLOCK": 32}, {"BLOCK": 64}], key=["N"])(1, 2, N=4)


def test_import_tirx_registers_the_tuner():
    from tirx.ir import function as F

    assert F._AUTOTUNER[0] is not F._no_autotuner
    assert isinstance(T.autotune(fill, configs=[{"V": 1}]), A.Autotuner)


# ---------------------------------------------------------------------------- disk
SCRIPT = """\
from __future__ import annotations
import json, sys
import numpy as np
from tirx.script import tirx as T

timed = []
out = np.zeros(8, np.float32)


def bench(run):
    run()
    timed.append(int(out[0]))
    return {1: 3.0, 2: 1.0, 3: 2.0}[int(out[0])]


@T.autotune(configs=[{"V": 1}, {"V": 2}, {"V": 3}], key=["n"], do_bench=bench)
@T.jit
def fill(O: T.Tensor((8,), "float32"), n: T.int32, *, V: T.constexpr = 0):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
    O[T.cuda.thread_idx("x")] = T.float32(V) + T.float32(n) * 0


n = int(sys.argv[1])
fill(out, n)
print(json.dumps({"source": fill.stats[(n,)]["source"], "best": fill.best_config(n), "timed": timed,
                  "out": float(out[0])}))
"""


def _run(script: Path, cache: Path, *args: str) -> dict:
    env = dict(os.environ, TIRX_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    r = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, env=env, timeout=300
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_fresh_process_reads_the_winner_from_disk(tmp_path):
    script, cache = tmp_path / "tune_me.py", tmp_path / "c"
    script.write_text(SCRIPT)
    first = _run(script, cache, "5")
    assert first == {"source": "tuned", "best": {"V": 2}, "timed": [1, 2, 3], "out": 2.0}
    again = _run(script, cache, "5")
    assert again == {"source": "disk", "best": {"V": 2}, "timed": [], "out": 2.0}  # no timing
    assert _run(script, cache, "6")["source"] == "tuned"  # another key
    files = sorted((cache / "autotune").iterdir())
    assert len(files) == 2 and all(oct(f.stat().st_mode & 0o777) == "0o600" for f in files)
    entry = json.loads(files[0].read_text())
    assert entry["device"].startswith("interp:") and entry["name"] == "fill" and entry["key_names"] == ["n"]
    # an edit to the kernel's file (its content hash) tunes again
    script.write_text(SCRIPT + "# edited\n")
    assert _run(script, cache, "5")["source"] == "tuned"


def test_a_damaged_or_foreign_entry_is_tuned_again(tmp_path):
    out = np.zeros(8, np.float32)

    def make(log):
        return T.autotune(fill, configs=[{"V": 1}, {"V": 2}], do_bench=by_value({1: 2.0, 2: 1.0}, out, log))

    log: list = []
    make(log)(out)
    assert log == [1, 2]
    (path,) = (tmp_path / "cache" / "autotune").iterdir()
    entry = json.loads(path.read_text())
    for bad in ("{not json", json.dumps(dict(entry, index=7)), json.dumps(dict(entry, device="cuda:other"))):
        path.write_text(bad)
        log = []
        t = make(log)
        t(out)
        assert log == [1, 2] and t.stats[()]["source"] == "tuned"
    log = []
    t = make(log)
    t(out)
    assert log == [] and t.stats[()]["source"] == "disk"  # rewritten by the last tuning


def test_the_disk_cache_switches_off(tmp_path, monkeypatch):
    out = np.zeros(8, np.float32)
    monkeypatch.setenv("TIRX_DISABLE_DISK_CACHE", "1")
    T.autotune(fill, configs=[{"V": 1}, {"V": 2}], do_bench=lambda run: 1.0)(out)
    monkeypatch.delenv("TIRX_DISABLE_DISK_CACHE")
    T.autotune(fill, configs=[{"V": 1}, {"V": 2}], do_bench=lambda run: 1.0, disk_cache=False)(out)
    assert not (tmp_path / "cache" / "autotune").exists()


# ---------------------------------------------------------------------------- the invariant
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.booleans(), st.sampled_from([8, 8, 8, 16]), st.floats(0.001, 100.0)),
        min_size=2,
        max_size=6,
    )
)
def test_the_winner_is_the_fastest_config_that_compiled_and_ran(rows):
    """Random timings and random failures (a static assertion, an out-of-bounds block):
    the winner is the fastest config that compiled and ran, ties to the first; all failing
    is an AutotuneError naming every config."""
    out = np.zeros(8, np.float32)
    configs = [{"V": i, "BAD": bad, "BLOCK": block} for i, (bad, block, _ms) in enumerate(rows)]
    times = {i: ms for i, (_b, _bl, ms) in enumerate(rows)}
    tuned = T.autotune(fill, configs=configs, do_bench=by_value(times, out), disk_cache=False)
    good = [c for c in configs if not c["BAD"] and c["BLOCK"] == 8]
    if not good:
        with pytest.raises(A.AutotuneError) as ei:
            tuned(out)
        assert all(repr(c) in str(ei.value) for c in configs)
        return
    tuned(out)
    best = tuned.best_config()
    assert best in good
    assert best == min(good, key=lambda c: times[c["V"]])
    assert (out == best["V"]).all()
    assert sorted(c["V"] for c, _ in tuned.failures[()]) == sorted(c["V"] for c in configs if c not in good)


# ---------------------------------------------------------------------------- parallel compile
needs_nvrtc = pytest.mark.skipif(
    __import__("importlib").util.find_spec("cuda") is None, reason="cuda-python (NVRTC) is not installed"
)


@needs_nvrtc
def test_cuda_candidates_compile_in_workers_and_the_tuner_hits_the_cache():
    pytest.importorskip("cuda.bindings.nvrtc")
    values = [{"V": 1}, {"V": 2, "BAD": True}, {"V": 3}, {"V": 4}]
    built = A.build_candidates(fill, values, "cuda", workers=2)
    assert [why is None for _f, _k, why in built] == [True, False, True, True]
    assert "this config is marked bad" in built[1][2]  # the worker's reason, located
    for f, k, _why in (built[0], built[2], built[3]):
        assert k.module.cache_hit == "hit"  # this process's compile found the worker's binary
        assert isinstance(f, tirx.Function)
    # the serial path gives the same answers
    again = A.precompile(fill, values, "cuda -arch=sm_90a", workers=1)
    assert [w is None for w in again] == [True, False, True, True]


@needs_nvrtc
def test_spawned_workers_import_the_function(tmp_path, monkeypatch):
    pytest.importorskip("cuda.bindings.nvrtc")
    (tmp_path / "spawn_kernels.py").write_text(
        textwrap.dedent(
            """\
            from __future__ import annotations
            from tirx.script import tirx as T

            @T.autotune(configs=[{"V": 1}, {"V": 2}])
            @T.jit
            def put(O: T.Tensor((8,), "float32"), *, V: T.constexpr = 0):
                T.static_assert(V < 2, "V is 0 or 1")
                T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=8))
                O[T.cuda.thread_idx("x")] = T.float32(V)
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(ROOT)]))
    import spawn_kernels

    assert A._ref(spawn_kernels.put.fn) == ("spawn_kernels", "put")
    reasons = A.precompile(spawn_kernels.put.fn, [{"V": 1}, {"V": 2}], "cuda -arch=sm_90a", 2, "spawn")
    assert reasons[0] is None and "V is 0 or 1" in reasons[1]


@needs_nvrtc
def test_the_cuda_tuning_path_compiles_in_workers(monkeypatch):
    """The tuner's CUDA path without a GPU: the candidates compile in worker processes (one fails
    its static assertion there), the timing is faked and the winner then runs where the arrays
    are (here the interpreter)."""
    pytest.importorskip("cuda.bindings.nvrtc")
    monkeypatch.setattr(A, "_target_of", lambda name, values: "cuda")
    monkeypatch.setattr(A, "device_name", lambda target: "cuda:fake:sm_90a")
    kernels: list = []
    tuned = T.autotune(
        fill,
        configs=[{"V": 1}, {"V": 2, "BAD": True}, {"V": 3}],
        do_bench=lambda run: kernels.append(run.__defaults__[0]) or 1.0 + len(kernels),
        workers=2,
    )
    out = np.zeros(8, np.float32)
    tuned(out)
    assert tuned.best_config() == {"V": 1} and (out == 1).all()
    assert [k.module.cache_hit for k in kernels] == ["hit", "hit"]  # the workers' binaries
    assert "this config is marked bad" in tuned.failures[()][0][1]
    entry = json.loads(next((Path(os.environ["TIRX_CACHE_DIR"]) / "autotune").iterdir()).read_text())
    assert entry["device"] == "cuda:fake:sm_90a" and entry["index"] == 0


def test_warmup_and_rep_go_to_do_bench(monkeypatch):
    from tirx.runtime import bench

    got: list = []

    def fake(fn, warmup=25, rep=100, **kw):
        fn()
        got.append((warmup, rep, kw.get("device")))
        return 1.0

    monkeypatch.setattr(bench, "do_bench", fake)
    out = np.zeros(8, np.float32)
    T.autotune(fill, configs=[{"V": 1}, {"V": 2}], warmup=3, rep=7)(out)
    assert got == [(3, 7, "cpu")] * 2  # an interpreter kernel is timed on the CPU
