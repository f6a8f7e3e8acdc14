"""Trust in what is read from and written to disk (issue #12 items 3, 9 and the file part of 14).

* The compile cache never serves the binary of other code: its key is a sha256 over the exact
  generated CUDA source (and the toolchain), not the 61-bit structural hash.
* The disk cache is private: a directory or entry that another user could have written is
  refused (with a warning), never served; a FIFO, device or symlink entry is never opened for
  reading in a way that can hang.
* ``tirx.save`` writes through a symlink to its target, refuses special files, stays atomic,
  and cleans the temporary files that killed saves left behind.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx
from tirx import fileio
from tirx.ir import TensorType, const, structural_hash
from tirx.ir.op import call
from tirx.ir.types import int64
from tirx.runtime import cache as C
from tirx.surface.builder import IRBuilder, launch_args

ARCH = "cuda -arch=sm_90a"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _needs_nvrtc():
    pytest.importorskip("cuda.bindings.nvrtc")


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TIRX_DISABLE_DISK_CACHE", raising=False)
    C.clear_memory()
    fileio.reset_state()
    yield
    C.clear_memory()
    fileio.reset_state()


def add_const(c: int, name: str = "addc"):
    """``B[i] = A[i] + c`` over 32 int64 elements (one block)."""
    b = IRBuilder("trust_test.py")
    with b, b.function(name):
        A = b.param("A", TensorType((32,), int64))
        B = b.param("B", TensorType((32,), int64))
        with b.device_entry(*launch_args(1, 32)):
            i = b.bind("i", call("cuda.thread_idx", "x"))
            b.store(B, (i,), A[i] + const(c, int64))
    return b.get()


def _with_deadline(fn, seconds: float = 20.0, unblock=None):
    """Run ``fn`` in a daemon thread; fail (instead of hanging the suite) if it does not end."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # handed to the test
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        if unblock is not None:
            unblock()
        pytest.fail(f"did not finish within {seconds} s (hang)")
    if "error" in out:
        raise out["error"]
    return out.get("value")


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _age(path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t), follow_symlinks=False)


# ================================================================== item 3: the cache key
def test_constants_equal_modulo_2_61_get_their_own_binary():
    """``+ 1`` and ``+ 2**61`` hash alike (61-bit structural hash) but must never share a binary."""
    _needs_nvrtc()
    f1, f2 = add_const(1), add_const(2**61)
    # the premise (today): equal 61-bit structural hashes; the cache must not depend on it
    _ = structural_hash(f1) == structural_hash(f2)
    k1 = tirx.compile(f1, target=ARCH)
    k2 = tirx.compile(f2, target=ARCH)
    assert k1.module.cache_key != k2.module.cache_key
    assert k2.module.cache_hit == ""
    assert "2305843009213693952" in k2.source
    assert k1.ptx != k2.ptx and k1.cubin != k2.cubin
    assert "2305843009213693952" in k2.ptx or "0x2000000000000000" in k2.ptx.lower()
    C.clear_memory()  # a new process: only the disk is left
    k2b = tirx.compile(add_const(2**61), target=ARCH)
    assert k2b.module.cache_hit == "hit" and k2b.cubin == k2.cubin


def test_constants_equal_modulo_2_61_differ_on_the_interpreter():
    a = np.arange(32, dtype=np.int64)
    outs = []
    for c in (1, 2**61):
        b = np.zeros(32, dtype=np.int64)
        tirx.compile(add_const(c), target="interp")(a, b)
        outs.append(b)
    assert (outs[0] == a + 1).all() and (outs[1] == a + 2**61).all()


def _fake_nvrtc(monkeypatch):
    """NVRTC stand-in whose 'binary' is the source it was given: a served binary must match
    the served source, whatever the cache did."""
    from tirx.runtime import nvrtc

    calls = []

    def fake(text, arch, name="k.cu", options=(), line_spans=None):
        calls.append(text)
        return nvrtc.CompileResult("PTX:" + text, b"BIN:" + text.encode(), "", tuple(options))

    monkeypatch.setattr(nvrtc, "compile_source", fake)
    monkeypatch.setattr(nvrtc, "nvrtc_version", lambda: (13, 0))
    return calls


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    cs=st.lists(
        st.one_of(
            st.integers(-(2**63), 2**63 - 1),
            st.sampled_from([0, 1, 2, 2**61 - 1, 2**61, 2**61 + 1, -(2**61), 2**62 + 1, -1]),
        ),
        min_size=2,
        max_size=6,
    ),
    drop_memory=st.booleans(),
)
def test_a_served_binary_is_always_the_binary_of_the_served_source(cs, drop_memory):
    mp = pytest.MonkeyPatch()
    try:
        _fake_nvrtc(mp)
        for c in cs:
            if drop_memory:
                C.clear_memory()
            k = tirx.compile(add_const(c), target=ARCH)
            assert k.cubin == b"BIN:" + k.source.encode()
    finally:
        mp.undo()


def test_cache_hit_still_skips_nvrtc(monkeypatch):
    calls = _fake_nvrtc(monkeypatch)
    tirx.compile(add_const(5), target=ARCH)
    tirx.compile(add_const(5), target=ARCH)
    C.clear_memory()
    k = tirx.compile(add_const(5), target=ARCH)
    assert len(calls) == 1 and k.module.cache_hit == "hit"


def test_no_compile_memo_is_keyed_by_structural_hash_alone():
    """Every in-process table that maps IR to compiled artefacts must check identity or exact
    equality on a hit; ``structural_hash`` is used nowhere in the compile path."""
    for rel in ("tirx/target.py", "tirx/runtime/cache.py", "tirx/runtime/kernel.py", "tirx/interp/kernel.py"):
        with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
            assert "structural_hash(" not in fh.read(), rel


# ================================================================== item 9: a private cache
def _plant(key: str, cubin: bytes = b"EVIL", mode: int = 0o600) -> str:
    d = C.cache_dir()
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, key + ".tirxbin")
    with open(path, "wb") as fh:
        fh.write(C._encode(C.CacheEntry("src", "ptx", cubin, "", {"arch": "sm_90a"})))
    os.chmod(path, mode)
    return path


def test_cache_dir_and_entries_are_private(tmp_path):
    os.umask(old := os.umask(0o002))  # a permissive umask must not leak into the cache
    try:
        os.umask(0o002)
        C.put("a" * 64, C.CacheEntry("s", "p", b"c"))
    finally:
        os.umask(old)
    d = tmp_path / "cache"
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(d / ("a" * 64 + ".tirxbin")).st_mode) == 0o600


@pytest.mark.parametrize("mode", [0o770, 0o777, 0o720, 0o702], ids=oct)
def test_a_cache_dir_writable_by_others_is_refused(tmp_path, mode):
    _plant("b" * 64)
    os.chmod(tmp_path / "cache", mode)
    try:
        with pytest.warns(RuntimeWarning, match="writable by"):
            assert C.get("b" * 64) is None
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # warned once only
            assert C.get("b" * 64) is None
            C.put("c" * 64, C.CacheEntry("s", "p", b"c"))
        assert not (tmp_path / "cache" / ("c" * 64 + ".tirxbin")).exists()  # nothing written there
    finally:
        os.chmod(tmp_path / "cache", 0o700)


@pytest.mark.parametrize("mode", [0o620, 0o602, 0o666], ids=oct)
def test_a_cache_entry_writable_by_others_is_refused(mode):
    _plant("d" * 64, mode=mode)
    with pytest.warns(RuntimeWarning, match="writable by"):
        assert C.get("d" * 64) is None


def test_a_planted_valid_entry_is_not_served_from_a_shared_dir(tmp_path, monkeypatch):
    _needs_nvrtc()
    real = tirx.compile(add_const(7), target=ARCH, cache=False)
    key = tirx.compile(add_const(7), target=ARCH).module.cache_key
    C.clear_memory()
    _plant(key, cubin=b"EVIL-CUBIN")
    os.chmod(tmp_path / "cache", 0o777)
    try:
        with pytest.warns(RuntimeWarning, match="not using the disk cache"):
            k = tirx.compile(add_const(7), target=ARCH)
        assert k.cubin == real.cubin and k.module.cache_hit == ""
    finally:
        os.chmod(tmp_path / "cache", 0o700)


def test_entries_and_dirs_of_another_user_are_refused(monkeypatch):
    _plant("e" * 64)
    uid = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: uid + 1)
    with pytest.warns(RuntimeWarning, match="owned by"):
        assert C.get("e" * 64) is None


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_an_entry_owned_by_another_user_is_refused():
    path = _plant("f" * 64)
    os.chown(path, 65534, 65534)
    with pytest.warns(RuntimeWarning, match="owned by"):
        assert C.get("f" * 64) is None


def test_disable_switches_write_nothing(monkeypatch, tmp_path):
    _needs_nvrtc()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for env in ({"TIRX_CACHE_DIR": ""}, {"TIRX_DISABLE_DISK_CACHE": "1"}):
        monkeypatch.delenv("TIRX_CACHE_DIR", raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        C.clear_memory()
        tirx.compile(add_const(3), target=ARCH)
        monkeypatch.delenv("TIRX_DISABLE_DISK_CACHE", raising=False)
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home").exists()
    assert not (tmp_path / "cache").exists()


# ================================================================== item 14: special files in the cache
def test_a_fifo_entry_does_not_hang_the_loader(tmp_path):
    d = tmp_path / "cache"
    os.makedirs(d, mode=0o700)
    fifo = d / ("9" * 64 + ".tirxbin")
    os.mkfifo(fifo, 0o600)

    def unblock():  # a writer lets a blocked open() return
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _with_deadline(lambda: C.get("9" * 64), unblock=unblock) is None


def test_a_fifo_entry_is_replaced_by_a_real_entry(tmp_path):
    d = tmp_path / "cache"
    os.makedirs(d, mode=0o700)
    os.mkfifo(d / ("8" * 64 + ".tirxbin"), 0o600)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _with_deadline(lambda: C.put("8" * 64, C.CacheEntry("s", "p", b"c")))
    C.clear_memory()
    assert os.path.isfile(d / ("8" * 64 + ".tirxbin"))
    assert C.get("8" * 64).cubin == b"c"


@pytest.mark.parametrize("target", ["/dev/zero", "valid"])
def test_a_symlinked_entry_is_not_followed(tmp_path, target):
    d = tmp_path / "cache"
    os.makedirs(d, mode=0o700)
    if target == "valid":
        target = _plant("7" * 64)
        os.rename(target, tmp_path / "elsewhere")
        target = str(tmp_path / "elsewhere")
    os.symlink(target, d / ("7" * 64 + ".tirxbin"))
    with pytest.warns(RuntimeWarning, match="not a regular file"):
        assert _with_deadline(lambda: C.get("7" * 64)) is None


def test_an_oversized_entry_is_not_read(monkeypatch):
    _plant("6" * 64)
    monkeypatch.setattr(C, "MAX_ENTRY_BYTES", 16)
    with pytest.warns(RuntimeWarning, match="larger than"):
        assert C.get("6" * 64) is None


def test_stale_cache_temp_files_are_cleaned(tmp_path):
    d = tmp_path / "cache"
    os.makedirs(d, mode=0o700)
    stale = d / f".{'5' * 16}.tirx-tmp-{_dead_pid()}-0123abcd"
    stale.write_bytes(b"half")
    _age(stale, 3600 * 2)
    live = d / f".{'4' * 16}.tirx-tmp-{os.getpid()}-0123abcd"
    live.write_bytes(b"in progress")
    C.put("3" * 64, C.CacheEntry("s", "p", b"c"))
    assert not stale.exists() and live.exists()


# ================================================================== item 14: tirx.save
def _f():
    return add_const(1)


def test_save_through_a_symlink_writes_the_target(tmp_path):
    real = tmp_path / "real.tirx"
    real.write_text("OLD\n")
    os.chmod(real, 0o640)
    link = tmp_path / "link.tirx"
    os.symlink("real.tirx", link)
    tirx.save(_f(), link)
    assert os.path.islink(link) and os.readlink(link) == "real.tirx"
    assert real.read_text() == tirx.dumps(_f())
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["link.tirx", "real.tirx"]


def test_save_through_a_chain_of_symlinks_into_another_dir(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    real = tmp_path / "b" / "real.tirx"
    real.write_text("OLD\n")
    os.symlink(real, tmp_path / "a" / "l1")
    os.symlink(tmp_path / "a" / "l1", tmp_path / "l2")
    tirx.save(_f(), tmp_path / "l2")
    assert os.path.islink(tmp_path / "l2") and os.path.islink(tmp_path / "a" / "l1")
    assert real.read_text() == tirx.dumps(_f())
    assert sorted(os.listdir(tmp_path / "b")) == ["real.tirx"]


def test_save_through_a_dangling_symlink_creates_its_target(tmp_path):
    os.symlink("new.tirx", tmp_path / "link")
    tirx.save(_f(), tmp_path / "link")
    assert os.path.islink(tmp_path / "link")
    assert (tmp_path / "new.tirx").read_text() == tirx.dumps(_f())


def test_save_refuses_a_fifo_without_hanging(tmp_path):
    p = tmp_path / "pipe"
    os.mkfifo(p)
    with pytest.raises(ValueError, match="FIFO") as ei:
        _with_deadline(lambda: tirx.save(_f(), p))
    assert isinstance(ei.value, OSError) and ei.value.filename == str(p)
    assert stat.S_ISFIFO(os.lstat(p).st_mode)
    assert os.listdir(tmp_path) == ["pipe"]


def test_save_refuses_a_device_behind_a_symlink(tmp_path):
    # a link to /dev/null: the old code replaced the link; it must refuse and keep both
    os.symlink("/dev/null", tmp_path / "out.tirx")
    with pytest.raises(OSError, match="character device") as ei:
        tirx.save(_f(), tmp_path / "out.tirx")
    assert isinstance(ei.value, ValueError) and ei.value.filename == "/dev/null"
    assert "out.tirx" in str(ei.value)  # names the link it came through
    assert os.path.islink(tmp_path / "out.tirx")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_save_refuses_a_directory_and_a_socket(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(OSError, match="directory") as ei:
        tirx.save(_f(), tmp_path / "d")
    assert ei.value.errno == errno.EISDIR and ei.value.filename == str(tmp_path / "d")
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(tmp_path / "sock"))
        with pytest.raises(ValueError, match="socket") as ei:
            tirx.save(_f(), tmp_path / "sock")
        assert ei.value.filename == str(tmp_path / "sock")
    finally:
        s.close()
    assert sorted(os.listdir(tmp_path)) == ["d", "sock"]


def test_save_new_file_gets_umask_permissions(tmp_path):
    old = os.umask(0o027)
    try:
        tirx.save(_f(), tmp_path / "n.tirx")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "n.tirx").st_mode) == 0o640


def test_save_cleans_stale_temp_files_and_keeps_live_ones(tmp_path):
    stale = tmp_path / f".k.tirx.tirx-tmp-{_dead_pid()}-deadbeef"
    stale.write_text("half")
    _age(stale, 120)
    old = tmp_path / f".k.tirx.tirx-tmp-{os.getpid()}-cafef00d"  # pid alive but a day old
    old.write_text("half")
    _age(old, 2 * 86400)
    live = tmp_path / f".other.tirx-tmp-{os.getpid()}-00000000"
    live.write_text("writing")
    foreign = tmp_path / ".k.tirx.tmp"  # not ours: never touched
    foreign.write_text("x")
    tirx.save(_f(), tmp_path / "k.tirx")
    assert not stale.exists() and not old.exists()
    assert live.exists() and foreign.exists()


def test_a_killed_save_leaves_a_temp_file_that_the_next_save_removes(tmp_path):
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        sys.path.insert(0, {os.path.join(ROOT, "tests")!r})
        import tirx
        from test_trust_cache import add_const
        os.replace = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
        tirx.save(add_const(1), {str(tmp_path / "k.tirx")!r})
        """
    )
    r = subprocess.run([sys.executable, "-c", script], timeout=120)
    assert r.returncode == -signal.SIGKILL
    left = [n for n in os.listdir(tmp_path) if n != "k.tirx"]
    assert len(left) == 1 and ".tirx-tmp-" in left[0]
    _age(tmp_path / left[0], 120)
    tirx.save(_f(), tmp_path / "k.tirx")
    assert os.listdir(tmp_path) == ["k.tirx"]
    assert (tmp_path / "k.tirx").read_text() == tirx.dumps(_f())


def test_save_is_atomic_under_failure(tmp_path, monkeypatch):
    p = tmp_path / "k.tirx"
    p.write_text("OLD\n")
    monkeypatch.setattr(os, "replace", lambda *a, **k: (_ for _ in ()).throw(OSError("boom")))
    with pytest.raises(OSError, match="boom"):
        tirx.save(_f(), p)
    monkeypatch.undo()
    assert p.read_text() == "OLD\n" and os.listdir(tmp_path) == ["k.tirx"]


def test_printer_save_is_the_same_function():
    from tirx.printer import save

    assert save is fileio.save
