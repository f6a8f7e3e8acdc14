"""``tirx fuzz`` as a user meets it: one progress line, a saved reproducer and seed, a replay
command that reproduces, and shrinking that stops when told (``--max-shrink-time``)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tirx

pytest.importorskip("hypothesis")
pytest.importorskip("tqdm")

ROOT = Path(__file__).resolve().parent.parent

# a deliberately broken printer: every `a + b` prints as `a - b`; the round-trip property
# (loads(dumps(x)) == x) must catch it on the first program with an addition. The programs
# are small ones (one in ~20 adds), so the test does not depend on the full generator.
BROKEN = """
import sys

from hypothesis import strategies as st

import tirx
import tirx.testing.strategies as tst

_real = tirx.dumps
tirx.dumps = lambda obj, *a, **k: _real(obj, *a, **k).replace(" + ", " - ")


def program(k, add):
    op = "+" if add else "*"
    return tirx.loads(f"@T.function\\ndef f(A: T.Tensor((4,), T.int32)):\\n    A[0] = A[1] {op} {k}\\n")


programs = st.builds(program, st.integers(0, 1000), st.integers(0, 20).map(lambda x: x == 0))
tst.functions = lambda **k: programs
tst.modules = lambda **k: programs
from tirx.tools.cli import main

sys.exit(main(sys.argv[1:]))
"""


def _tirx_fuzz(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run(
        [sys.executable, "-c", BROKEN, "fuzz", *args], cwd=tmp_path, env=env, capture_output=True, timeout=300
    )
    # bytes, decoded here: text=True would turn the progress line's carriage returns into newlines
    return subprocess.CompletedProcess(r.args, r.returncode, r.stdout.decode(), r.stderr.decode())


def test_failure_is_saved_with_seed_and_replays(tmp_path):
    save = tmp_path / "failures"
    r = _tirx_fuzz(
        tmp_path, "--examples", "300", "--seed", "11", "--save", str(save), "--max-shrink-time", "5"
    )
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout
    assert "FAIL" in out and ("printing is not a fixpoint" in out or "structural_equal" in out)
    replay = re.search(r"^replay: (tirx fuzz --seed (\d+) --examples (\d+))$", out, re.M)
    assert replay, out
    seed = int(replay.group(2))
    saved = re.findall(r"^saved: (\S+)$", out, re.M)
    tirx_file = next(Path(p) for p in saved if p.endswith(".tirx"))
    meta = json.loads(next(Path(p) for p in saved if p.endswith(".json")).read_text())
    assert meta["seed"] == seed and meta["replay"] == replay.group(1)
    assert meta["reproducer"] == str(tirx_file)
    # the reproducer is what the broken printer wrote; it loads, and shows the bug (a `-`)
    text = tirx_file.read_text()
    assert re.search(r"A\[0\] = A\[1\] - \d\n", text)  # an addition, shrunk to a small one
    tirx.loads(text)
    # progress: one line redrawn with carriage returns, not one line per program
    progress = [ln for ln in r.stderr.split("\n") if "programs" in ln]
    assert len(progress) == 1 and progress[0].count("\r") >= 1 and "failures" in progress[0]
    # the printed command replays the same failure on its own
    args = replay.group(1).split()[2:]
    again = _tirx_fuzz(tmp_path, *args, "--no-save", "--no-progress", "--max-shrink-time", "5")
    assert again.returncode == 1 and f"FAILED (seed {seed})" in again.stdout
    assert again.stderr.count("programs") == 0  # --no-progress


def test_max_shrink_time_stops_shrinking():
    """Shrinking stops after --max-shrink-time and reports the smallest failure so far."""
    from hypothesis import strategies as st

    from tirx.testing.campaign import run_budgeted

    def check(x: int) -> None:
        assert x <= 1000

    ints = st.integers(0, 10**9)
    _, _, full, _ = run_budgeted(ints, check, seed=3, examples=200, max_shrink_time=60)
    _, _, cut, _ = run_budgeted(ints, check, seed=3, examples=200, max_shrink_time=1e-9)
    assert full is not None and full[2] == 1001  # shrunk all the way
    assert cut is not None and cut[2] > 1001  # stopped at once: the first failing example


def test_a_chunk_generates_the_same_examples_after_new_modules_load(tmp_path, monkeypatch):
    """A chunk's examples depend on its seed alone: hypothesis also draws constants found in
    the modules loaded so far, and a module loaded between two runs (tirx loads its own
    lazily) changed a chunk's examples, so a failure's replay command did not reproduce it
    (CI round-trip fuzz, stop 48)."""
    from hypothesis import strategies as st

    from tirx.testing.campaign import run_budgeted

    def examples() -> list:
        seen: list = []
        run_budgeted(st.lists(st.integers(0, 10**12), max_size=4), seen.append, seed=11, examples=300)
        return seen

    before = examples()
    consts = ", ".join(str(123456789011 + 7919 * k) for k in range(400))
    (tmp_path / "many_constants_mod.py").write_text(f"VALUES = ({consts})\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__("many_constants_mod")
    try:
        after = examples()
    finally:
        sys.modules.pop("many_constants_mod", None)
    assert len(before) == 300 and after == before


def test_progress_line_counts_failures():
    from tirx.tools.cli import _Progress

    buf = io.StringIO()
    p = _Progress("mutate", stream=buf, interval=0)
    for n in range(1, 50):
        p(n, n * 0.1, failures=n // 10)
    p.done(7)
    text = buf.getvalue()
    assert text.count("\n") <= 1 and text.count("\r") > 1
    assert "failures 7" in text and "49" in text
    quiet = io.StringIO()
    q = _Progress("fuzz", stream=quiet, enabled=False)
    q(3, 1.0)
    q.done()
    assert quiet.getvalue() == ""


def test_campaign_status_takes_the_failure_count():
    from tirx.tools.campaign import _Status

    st = _Status(every=1e9, stream=io.StringIO())
    st.progress("mutate")(5, 1.0, 2)
    assert st.cur_n == 5


def test_fuzz_passes_checks_a_user_pass_and_replays_with_it(tmp_path, monkeypatch, capsys):
    """`tirx fuzz --plugin P --passes NAME`: the pipeline's output must be well-formed and
    round-trip; the replay command names the pipeline and the plugin."""
    from hypothesis import strategies as st

    import tirx.testing.strategies as tst
    from tirx.tools.cli import main

    f = tirx.loads("@T.function\ndef f(A: T.Tensor((4,), T.int32)):\n    A[0] = A[1] * 4\n")
    monkeypatch.setattr(tst, "functions", lambda **k: st.just(f))
    monkeypatch.setattr(tst, "modules", lambda **k: st.just(f))
    plug = tmp_path / "bad_pass.py"
    plug.write_text(
        "from tirx.ir import Evaluate, Var\n"
        "from tirx.ir import types as ty\n"
        "from tirx.passes import function_pass, register_pass\n"
        "@register_pass('use-undefined-var')\n"
        "@function_pass\n"
        "def bad(func):\n"
        "    '''Appends a use of a var that is defined nowhere (a broken pass).'''\n"
        "    return func.with_body(Evaluate(Var('ghost', ty.int32)))\n"
    )
    assert main(["fuzz", "-n", "3", "--seed", "5", "--no-save", "--no-progress", "-p", "simplify"]) == 0
    assert "all round-trip invariants hold" in capsys.readouterr().out
    pipe = "simplify,use-undefined-var,verify{raising=false}"  # braces survive into the replay command
    rc = main(["fuzz", "-n", "3", "--seed", "5", "--no-save", "--plugin", str(plug), "-p", pipe])
    out = capsys.readouterr().out
    assert rc == 1 and "not well-formed" in out and "ghost" in out
    assert f"replay: tirx fuzz --seed 5 --examples 3 --passes '{pipe}' --plugin {plug}" in out
    # usage errors: exit 2
    assert main(["fuzz", "-n", "1", "-p", "no-such-pass"]) == 2
    assert main(["fuzz", "-n", "1", "-p", "cse", "--mutate"]) == 2  # the mutation campaign runs no passes
    assert main(["fuzz", "-n", "1", "-p", "cse", "--plugin", str(tmp_path / "missing.py")]) == 2


def _gpu() -> bool:
    from tirx.runtime import driver as drv

    try:
        return drv.probe()[0]
    except Exception:
        return False


def _corrupt(arrays) -> None:
    """Change the first element of the first non-empty array (to 0, or to 1 where it was 0)."""
    for a in arrays:
        if a.size:
            v = a.reshape(-1)
            v[0] = 0 if v[0] != 0 else 1
            return


def test_cuda_mode_without_a_gpu_says_so(capsys):
    if _gpu():
        pytest.skip("a GPU is here: test_cuda_mode_* below run instead")
    from tirx.tools.cli import main

    assert main(["fuzz", "--cuda", "-n", "2", "--no-progress"]) == 2
    assert "tirx fuzz --cuda needs a CUDA GPU" in capsys.readouterr().err


@pytest.mark.gpu
def test_cuda_mode_passes_on_the_gpu(capsys):
    if not _gpu():
        pytest.skip("needs a CUDA GPU")
    from tirx.tools.cli import main

    assert main(["fuzz", "--cuda", "-n", "25", "--seed", "3", "--no-progress", "--no-save"]) == 0
    out = capsys.readouterr().out
    assert "cuda fuzz: 25 kernels, CUDA against the interpreter" in out and out.rstrip().endswith("ok")


@pytest.mark.gpu
def test_cuda_mode_reports_a_wrong_result_with_its_replay(tmp_path, monkeypatch, capsys):
    """A backend that gets one element wrong: the campaign fails, saves the kernel and prints
    the command that replays it."""
    if not _gpu():
        pytest.skip("needs a CUDA GPU")
    from tirx.testing import gpu_compare
    from tirx.tools.cli import main

    real = gpu_compare.run_cuda

    def off_by_one(kernel, args):
        out = real(kernel, args)
        _corrupt(out)
        return out

    monkeypatch.setattr(gpu_compare, "run_cuda", off_by_one)
    rc = main(["fuzz", "--cuda", "-n", "10", "--seed", "5", "--no-progress", "--save", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 1 and "FAIL" in out
    assert "tirx fuzz --cuda --seed" in out
    assert list(tmp_path.glob("*.json"))


def _launch_on_the_interpreter(monkeypatch) -> list:
    """``--cuda`` without a GPU: ``tirx.compile`` still builds each kernel for sm_90a (NVRTC;
    the builds are returned in the list), and the launch runs the interpreter instead."""
    pytest.importorskip("cuda.bindings")
    import tirx.interp as ti
    from tirx.testing import gpu_compare, ptx_check

    compiled: list = []
    real_compile = tirx.compile

    def compile_for_sm90(f, target="cuda", **kw):
        compiled.append(real_compile(f, target="cuda -arch=sm_90a", **kw))
        return f

    monkeypatch.setattr(tirx, "compile", compile_for_sm90)
    monkeypatch.setattr(gpu_compare, "run_cuda", lambda f, args: gpu_compare.run_interp(ti.compile(f), args))
    # the campaign's PTX check reads the build the stand-in compile kept
    real_check = ptx_check.check_ptx
    monkeypatch.setattr(ptx_check, "check_ptx", lambda k: real_check(compiled[-1]))
    return compiled


def test_cuda_campaign_compiles_every_kernel_and_reports_a_difference(tmp_path, monkeypatch):
    """The ``--cuda`` campaign without a GPU: each random kernel goes through ``tirx.compile``
    (NVRTC, sm_90a) and the launch is replaced by the interpreter, so the campaign passes; a
    launch that gets one element wrong makes it fail with a replay command and a saved kernel."""
    from tirx.testing import gpu_compare

    compiled = _launch_on_the_interpreter(monkeypatch)
    interp_launch = gpu_compare.run_cuda
    kw = {"examples": 8, "time_budget": None, "max_shrink_time": 5.0, "save_dir": str(tmp_path)}
    out = gpu_compare.cuda_campaign(seed=11, **kw)
    assert out.failure is None and out.examples == 8
    assert compiled and all(k.module.cubin for k in compiled)

    def off_by_one(f, args):
        res = interp_launch(f, args)
        _corrupt(res)
        return res

    monkeypatch.setattr(gpu_compare, "run_cuda", off_by_one)
    out = gpu_compare.cuda_campaign(seed=11, **kw)
    assert out.failure is not None and "tirx fuzz --cuda --seed" in out.failure.replay
    assert list(tmp_path.glob("*.json"))


def test_long_campaign_rotates_through_cuda(monkeypatch):
    """``python -m tirx.tools.campaign --modes ... cuda``: the cuda slices count kernels in the
    status line like the others (launch on the interpreter here); without a GPU the command
    refuses the mode."""
    from tirx.tools import campaign

    if not _gpu():
        assert campaign.main(["--seconds", "1", "--modes", "cuda"]) == 2
    compiled = _launch_on_the_interpreter(monkeypatch)
    out = io.StringIO()
    st = campaign.run_campaigns(
        seconds=8, slice_s=4, seed=7, save_dir=None, modes=["semantic", "cuda"], stream=out
    )
    assert not st.failures and st.done["semantic"] > 0 and st.done["cuda"] > 0, out.getvalue()
    assert compiled and "cuda " in st.line()


def test_the_ptx_campaign_runs_without_a_gpu(capsys):
    """``tirx fuzz --ptx``: random kernels compiled with NVRTC, their PTX checked for
    non-coherent loads of memory the kernel writes (tirx.testing.ptx_check); no GPU needed."""
    pytest.importorskip("cuda.bindings.nvrtc")
    from tirx.tools.cli import main

    assert main(["fuzz", "--ptx", "-n", "8", "--seed", "3", "--no-save", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "ptx fuzz: 8 kernels, PTX without non-coherent loads of written memory" in out and ": ok" in out
    assert main(["fuzz", "--ptx", "-n", "1", "-p", "cse"]) == 2  # no pass pipeline in this campaign
