"""Runtime trust, part 2 (issue #29 items 13, 14, 15 and 11c).

* 13: the direct-call cache frees what the ``@T.jit`` cache drops (weak keys, and no kernel
  holds its key), and vector dtypes are bounded: at most ``MAX_LANES`` lanes (TIRx's limit),
  lookup caches with a size bound.
* 14: a compile-cache entry is served only for the key it was written under; a truncated or
  corrupted entry is a miss; readers racing writers never see an error or a wrong entry.
* 15: a deep job's recursion limit is its worker thread's own: another thread that recurses
  without bound meanwhile gets RecursionError, not a crash.
* 11c: a kernel-campaign failure record holds the kernel, the inputs and both outputs, and
  ``tirx fuzz --replay FILE.json`` reruns exactly that input.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import weakref
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
from tirx import fileio
from tirx.ir import deep
from tirx.ir import types as ty
from tirx.runtime import cache as C
from tirx.runtime import direct
from tirx.script import tirx as T
from tirx.testing import campaign
from tirx.testing.runnable import runnable_kernels
from tirx.tools.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYPATH = os.pathsep.join([ROOT, *filter(None, [os.environ.get("PYTHONPATH")])])  # for subprocesses


# ------------------------------------------------------------------ 13: direct-call cache
@T.jit(cache_size=4)
def add_v(a: T.Buffer((8,), "float32"), *, V: T.constexpr):
    for i in range(8):
        a[i] = a[i] + T.float32(V)


def test_direct_cache_keeps_no_more_than_the_jit_cache():
    direct._CACHE.clear()
    a = np.zeros(8, np.float32)
    for i in range(40):
        add_v(a, V=float(i))
    gc.collect()
    assert len(add_v.cache) == 4
    assert len(direct._CACHE) <= 4  # was 40: every specialization stayed alive
    assert a[0] == sum(range(40))


def test_a_direct_call_does_not_keep_its_function_alive():
    @T.function
    def one(a: T.Buffer((4,), "int32")):
        for i in range(4):
            a[i] = i

    a = np.zeros(4, np.int32)
    one(a)
    assert one in direct._CACHE
    ref = weakref.ref(one)
    del one
    gc.collect()
    assert ref() is None


def test_direct_cache_still_compiles_once(monkeypatch):
    @T.function
    def two(a: T.Buffer((4,), "int32")):
        for i in range(4):
            a[i] = a[i] + 2

    import tirx.target

    calls = []
    real = tirx.target.compile
    monkeypatch.setattr(tirx.target, "compile", lambda f, t, **o: calls.append(t) or real(f, t, **o))
    a = np.zeros(4, np.int32)
    for _ in range(3):
        two(a)
    assert calls == ["interp"] and list(a) == [6] * 4


# ------------------------------------------------------------------ 13: vector dtypes
def test_vector_lanes_are_bounded_by_tirx_limit():
    assert ty.prim("float32", ty.MAX_LANES).lanes == ty.MAX_LANES == 32767
    with pytest.raises(ValueError, match="lanes must be at most 32767"):
        ty.prim("float32", ty.MAX_LANES + 1)
    with pytest.raises(ValueError, match="1 to 32767 lanes"):
        ty.parse_dtype("float32x40000")
    with pytest.raises(AttributeError, match="32767"):
        T.float32x40000  # noqa: B018
    with pytest.raises(ValueError, match="unknown dtype"):
        ty.parse_dtype("float32x\u0663")  # an Arabic-Indic 3: digits are ASCII


def test_dtype_lookup_caches_are_bounded():
    n = ty.TYPE_CACHE_SIZE + 500
    before = set(vars(T))
    for i in range(2, n):
        assert ty.parse_dtype(f"int8x{i}").lanes == i
        getattr(T, f"uint8x{i}")
    assert ty._parse_dtype.cache_info().currsize <= ty.TYPE_CACHE_SIZE
    assert ty._vector.cache_info().currsize <= ty.TYPE_CACHE_SIZE
    assert len(set(vars(T)) - before) < 10  # vector names are not kept as module globals
    # evicted types are rebuilt equal, and scalars stay interned
    assert ty.parse_dtype("int8x2") == ty.prim("int8", 2)
    assert ty.parse_dtype("float32") is ty.float32


@settings(max_examples=60, deadline=None)
@given(base=st.sampled_from(ty.DTYPE_NAMES), lanes=st.integers(1, 2 * ty.MAX_LANES))
def test_dtype_text_and_lanes_agree(base, lanes):
    name = base if lanes == 1 else f"{base}x{lanes}"
    if lanes > ty.MAX_LANES:
        with pytest.raises(ValueError):
            ty.parse_dtype(name)
        return
    t = ty.parse_dtype(name)
    assert t == ty.prim(base, lanes) and t.lanes == lanes and str(t) == name


# ------------------------------------------------------------------ 14: compile cache
# (the disk_cache fixture: tests/conftest.py)


SRC = 'extern "C" __global__ void k() {}\n'


def _key(arch: str) -> str:
    return C.make_key(SRC, ("k",), arch, "tc-1", ("-arch=" + arch,))


def test_an_entry_copied_under_another_key_is_not_served(disk_cache):
    k80, k90 = _key("sm_80"), _key("sm_90a")
    C.put(k80, C.CacheEntry(SRC, "ptx80", b"cubin-sm_80", meta={"arch": "sm_80"}))
    shutil.copy(disk_cache / f"{k80}.tirxbin", disk_cache / f"{k90}.tirxbin")
    C.clear_memory()
    with fileio_warnings() as warned:
        assert C.get(k90, source=SRC) is None  # the sm_80 cubin, asked for as sm_90a
        e = C.get(k80, source=SRC)
    assert e is not None and e.cubin == b"cubin-sm_80" and "key" not in e.meta
    assert warned == []


def test_a_cubin_for_one_arch_is_never_served_for_another(disk_cache):
    pytest.importorskip("cuda.bindings.nvrtc")

    @T.function
    def k(a: T.Buffer((32,), "int32")):
        with T.device_entry(1, 1, 1, 32, 1, 1):
            i: T.let[T.int32] = T.cuda.thread_idx("x")
            a[i] = a[i] + 1

    k80 = tirx.compile(k, target="cuda -arch=sm_80")
    k90 = tirx.compile(k, target="cuda -arch=sm_90a")
    real90 = k90.cubin
    assert k80.module.cache_key != k90.module.cache_key and k80.cubin != real90
    # the sm_80 entry synced over the sm_90a one (same source, other arch)
    shutil.copy(
        disk_cache / f"{k80.module.cache_key}.tirxbin", disk_cache / f"{k90.module.cache_key}.tirxbin"
    )
    C.clear_memory()
    again = tirx.compile(k, target="cuda -arch=sm_90a")
    assert again.module.cache_hit == "" and again.cubin == real90
    C.clear_memory()  # and the rebuilt entry is a hit again
    assert tirx.compile(k, target="cuda -arch=sm_90a").module.cache_hit == "hit"


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty"])
def test_a_damaged_entry_is_a_silent_miss(disk_cache, damage):
    k = _key("sm_90a")
    C.put(k, C.CacheEntry(SRC, "ptx", b"cubin"))
    path = disk_cache / f"{k}.tirxbin"
    data = path.read_bytes()
    data = {"truncate": data[: len(data) // 2], "flip": data[:-3] + b"X" + data[-2:], "empty": b""}[damage]
    path.write_bytes(data)
    C.clear_memory()
    with fileio_warnings() as warned:
        assert C.get(k, source=SRC) is None
    assert warned == []


class fileio_warnings:
    """Collect ``fileio.warn_once`` messages from every thread (warnings.catch_warnings is
    not thread-safe)."""

    def __enter__(self) -> list:
        self.got: list[str] = []
        self.real = fileio.warn_once
        fileio.warn_once = lambda msg, stacklevel=3: self.got.append(msg)
        return self.got

    def __exit__(self, *exc: object) -> None:
        fileio.warn_once = self.real


def test_readers_racing_writers_in_threads(disk_cache):
    k = _key("sm_90a")
    wanted = {b"cubin-A" * 50, b"cubin-B" * 70}
    C.put(k, C.CacheEntry(SRC, "ptx", b"cubin-A" * 50))
    stop = threading.Event()
    bad: list = []

    def writer(cubin: bytes) -> None:
        for _ in range(300):
            C._write(str(disk_cache), k, C.CacheEntry(SRC, "ptx", cubin))
        stop.set()

    def reader() -> None:
        n = 0
        while not stop.is_set() or n < 50:
            n += 1
            try:
                C.clear_memory()  # read from disk every time
                e = C.get(k, source=SRC)
            except BaseException as x:  # any error is a failure
                bad.append(repr(x))
                return
            if e is not None and e.cubin not in wanted:
                bad.append(e.cubin[:20])

    with fileio_warnings() as warned:
        ts = [threading.Thread(target=writer, args=(c,)) for c in wanted]
        ts += [threading.Thread(target=reader) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    assert bad == [] and warned == []


RACE = textwrap.dedent(
    """
    import os, sys, warnings
    warnings.simplefilter("error")  # a warning (the old race message) fails the process
    from tirx.runtime import cache as C
    role, key, d = sys.argv[1], sys.argv[2], sys.argv[3]
    src = 'extern "C" __global__ void k() {}\\n'
    wanted = {b"cubin-A" * 50, b"cubin-B" * 70}
    if role == "write":
        for i in range(400):
            C._write(d, key, C.CacheEntry(src, "ptx", b"cubin-A" * 50 if i % 2 else b"cubin-B" * 70))
    else:
        hits = 0
        for _ in range(1500):
            C.clear_memory()  # read from disk every time
            e = C.get(key, source=src)
            if e is not None:
                assert e.cubin in wanted, e.cubin[:20]
                hits += 1
        print("hits", hits)
    """
)


def test_readers_racing_writers_in_processes(disk_cache, tmp_path):
    k = _key("sm_90a")
    C.put(k, C.CacheEntry(SRC, "ptx", b"cubin-A" * 50))
    script = tmp_path / "race.py"
    script.write_text(RACE)
    env = {**os.environ, "PYTHONPATH": PYPATH, "TIRX_CACHE_DIR": str(disk_cache)}
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), role, k, str(disk_cache)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for role in ("write", "write", "read", "read", "read")
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (_out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
    assert all("hits" in out for out, _ in outs[2:])


# ------------------------------------------------------------------ 15: deep jobs
OTHER_THREAD = textwrap.dedent(
    """
    import sys, threading
    from tirx.ir import deep

    started, release = threading.Event(), threading.Event()
    seen = {}

    def job():
        seen["in_job"] = deep.active()
        started.set()
        release.wait()
        return 7

    out = []
    t = threading.Thread(target=lambda: out.append(deep.run(job)))
    t.start()
    started.wait()

    class R:  # recursion through C (repr): uses the C stack at every level
        def __repr__(self):
            return repr(R())

    def recurse():
        seen["limit"] = sys.getrecursionlimit()
        try:
            repr(R())
        except RecursionError:
            seen.setdefault("errors", []).append(threading.current_thread().name)

    th = threading.Thread(target=recurse, name="other")
    th.start()
    th.join()
    recurse()
    release.set()
    t.join()
    print(out[0], seen["in_job"], seen["limit"], sorted(seen["errors"]))
    """
)


def test_other_threads_keep_their_recursion_error_while_a_deep_job_runs():
    r = subprocess.run(
        [sys.executable, "-c", OTHER_THREAD],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": PYPATH},
    )
    assert r.returncode == 0, f"crashed ({r.returncode}): {r.stderr[-2000:]}"
    assert r.stdout.split() == ["7", "True", str(sys.getrecursionlimit()), "['MainThread',", "'other']"]


def test_deep_jobs_still_go_deep_and_report_too_deep():
    def down(n: int) -> int:
        return 0 if n == 0 else 1 + down(n - 1)

    assert deep.run(down, 50_000) == 50_000
    if sys.implementation.name == "cpython":  # 3.10 to 3.13 checked: the worker's own limit
        assert deep.OWN_LIMIT is True
    assert sys.getrecursionlimit() < 50_000
    with pytest.raises(deep.NestingTooDeep):
        deep.run(down, 10 * deep.RECURSION_LIMIT)


FORKED = textwrap.dedent(
    """
    import os, sys
    from tirx.ir import deep

    def down(n):
        return 0 if n == 0 else 1 + down(n - 1)

    assert deep.run(down, 5000) == 5000  # the parent's worker exists
    pid = os.fork()
    if pid == 0:  # the worker thread is not in the child: a new one must start
        os._exit(0 if deep.run(down, 5000) == 5000 else 1)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status))
    """
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_its_own_worker():
    r = subprocess.run(
        [sys.executable, "-c", FORKED],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": PYPATH},
    )
    assert r.returncode == 0 and r.stdout.split() == ["0"], r.stderr[-2000:]


def test_carried_stacks_do_not_outlive_their_job():
    local = threading.local()
    deep.carry_stack(local, "stack_for_test")
    try:
        local.stack_for_test = ["outer"]
        assert deep.run(lambda: list(local.stack_for_test)) == ["outer"]
        del local.stack_for_test
        assert deep.run(lambda: getattr(local, "stack_for_test", None)) is None
    finally:
        deep._carriers.pop()


# ------------------------------------------------------------------ 11c: replayable records
FAILED: list = []  # (note, args) of every failing call of fake_check, in order
REPLAY_PASSES = [False]


def fake_check(r) -> None:
    """A check that fails on any kernel with an array input: its 'other side' differs by one
    in the first element of the first output."""
    if REPLAY_PASSES[0]:
        return
    want = r.run()
    if not want or want[0].size == 0:
        return
    got = [w.copy() for w in want]
    got[0].reshape(-1)[0] = 1 if got[0].dtype.kind in "iub" else np.nan
    FAILED.append((r.note, [a.copy() if isinstance(a, np.ndarray) else a for a in r.args]))
    e = AssertionError("fake: the other side differs")
    campaign.with_outputs(e, interpreter=want, other=got)
    raise e


def _same_args(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            if not (isinstance(y, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape):
                return False
            if x.tobytes() != y.tobytes():
                return False
        elif type(x) is not type(y) or x != y:
            return False
    return True


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # random kernels
def test_a_kernel_failure_record_replays_exactly_its_input(tmp_path, capsys):
    FAILED.clear()
    REPLAY_PASSES[0] = False
    out = campaign.kernel_campaign(
        "fake",
        "--fake",
        runnable_kernels(),
        fake_check,
        seed=3,
        examples=20,
        time_budget=None,
        max_shrink_time=20.0,
        save_dir=tmp_path,
    )
    assert not out.ok
    rec_path = next(p for p in out.saved if p.endswith(".json"))
    rec = json.loads(Path(rec_path).read_text(encoding="utf-8"))
    note, args = FAILED[-1]  # the last failure is the recorded (smallest) one
    assert rec["note"] == note and rec["check"] == f"{__name__}:fake_check"
    assert _same_args([campaign.decode_value(v) for v in rec["inputs"]], args)
    assert set(rec["outputs"]) == {"interpreter", "other"}
    interp = [campaign.decode_value(v) for v in rec["outputs"]["interpreter"]]
    other = [campaign.decode_value(v) for v in rec["outputs"]["other"]]
    assert len(interp) == len(other) >= 1 and interp[0].tobytes() != other[0].tobytes()
    assert tirx.structural_equal(tirx.loads(rec["kernel"]), tirx.loads(Path(rec["reproducer"]).read_text()))

    # the record alone (no .tirx beside it) replays: the check sees exactly those inputs
    alone = tmp_path / "moved" / "alone.json"
    alone.parent.mkdir()
    shutil.copy(rec_path, alone)
    n = len(FAILED)
    assert main(["fuzz", "--replay", str(alone)]) == 1
    assert "FAILED again" in capsys.readouterr().out
    assert len(FAILED) == n + 1 and _same_args(FAILED[-1][1], args)
    REPLAY_PASSES[0] = True
    try:
        assert main(["fuzz", "--replay", str(alone)]) == 0
        assert "passes now" in capsys.readouterr().out
    finally:
        REPLAY_PASSES[0] = False


@pytest.mark.parametrize(
    "value",
    [
        np.arange(6, dtype=np.float16).reshape(2, 3),
        np.array([-0.0, np.nan], np.float32),
        np.int8(-5),
        7,
        -2.5,
        True,
    ],
)
def test_recorded_values_round_trip_bit_for_bit(value):
    back = campaign.decode_value(json.loads(json.dumps(campaign.encode_value(value))))
    assert type(back) is type(value)
    if isinstance(value, (np.ndarray, np.generic)):
        assert back.dtype == value.dtype and back.tobytes() == value.tobytes()
        assert np.shape(back) == np.shape(value)
    else:
        assert back == value


def test_a_semantic_record_replays_with_the_semantic_checks(tmp_path, capsys):
    @T.function
    def fill(a: T.Buffer((4,), "int32"), n: T.int32):
        for i in range(4):
            a[i] = i * n

    rec = {
        "mode": "semantic",
        "error": "recorded",
        "check": None,  # the semantic campaign's check is a lambda: the CLI knows which it is
        "kernel": tirx.dumps(fill),
        "note": "",
        "inputs": [campaign.encode_value(np.zeros(4, np.int32)), campaign.encode_value(3)],
    }
    p = tmp_path / "semantic-1.json"
    p.write_text(json.dumps(rec))
    assert main(["fuzz", "--replay", str(p)]) == 0
    assert "passes now" in capsys.readouterr().out
    with pytest.raises(ValueError, match="names no importable check"):
        campaign.replay_failure(p)


def test_replay_refuses_a_record_it_cannot_replay(tmp_path, capsys):
    p = tmp_path / "roundtrip.json"
    p.write_text(json.dumps({"mode": "roundtrip", "seed": 1}))
    assert main(["fuzz", "--replay", str(p)]) == 2
    assert "cannot be replayed" in capsys.readouterr().err
    with pytest.raises(ValueError, match="malformed"):
        campaign.decode_value({"array": "<f4", "name": "float32", "shape": [3], "data": "!!"})
    with pytest.raises(TypeError, match="cannot record a object"):
        campaign.encode_value(object())
