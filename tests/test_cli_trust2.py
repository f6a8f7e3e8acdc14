"""Issue #29 items 6, 7, 9, 11 and 12: the ``tirx`` command line never loses or cuts a file,
never hangs on a FIFO, verifies what ``opt`` writes, blames a plugin for the plugin's
exceptions, reads stdin for ``-`` everywhere, and refuses ambiguous pipelines; and a
hypothesis campaign over inputs (duplicate names, stdin, FIFOs, folders, failing writes)
checks that no output is lost or truncated and that the exit code tells the truth."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx
from tirx.passes import build_pipeline, parse_pipeline
from tirx.tools import mutate
from tirx.tools.cli import main

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")


def _src(c: int = 4, indent: str = "    ") -> str:
    """A kernel whose ``+ 0`` simplify removes; ``c`` tells the results of inputs apart."""
    return f"@T.function\ndef f(A: T.Tensor((8,), T.int32), n: T.int32):\n{indent}A[0] = n * {c} + 0\n"


BAD = "@T.function\ndef f(A: T.Tensor((8,), T.int32)):\n    A[0] = q\n"


class Hang(BaseException):
    """Raised by the deadline: a BaseException, so ``main`` cannot swallow it."""


@contextlib.contextmanager
def deadline(seconds: float = 20.0) -> Iterator[None]:
    """Fail (instead of hanging the test run) when the body blocks, as on a FIFO."""

    def fire(*_: Any) -> None:
        raise Hang(f"blocked for {seconds} s (a FIFO opened for reading?)")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _run(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    """``main(argv)`` in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with (
        pytest.MonkeyPatch.context() as mp,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        deadline(),
    ):
        mp.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def _simplified(text: str) -> str:
    return tirx.dumps(build_pipeline("simplify")(tirx.loads(text)))


def _fail_writes(mp: pytest.MonkeyPatch, wanted: Callable[[Path], bool]) -> list[str]:
    """Make ``os.write`` to the temporary file of each target ``wanted(target path)`` write
    half of its data and then raise ENOSPC: a disk that fills up midway. Returns the names
    of the targets it failed (so a test sees that the injection happened)."""
    real = os.write
    hit: list[str] = []

    def write(fd: int, data: Any) -> int:
        try:
            tmp = Path(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            tmp = Path("")
        if ".tirx-tmp-" in tmp.name:
            target = tmp.parent / tmp.name[1 : tmp.name.index(".tirx-tmp-")]
            if wanted(target):
                hit.append(target.name)
                real(fd, bytes(data)[: max(1, len(data) // 2)])
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    mp.setattr(os, "write", write)
    return hit


needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")


# ------------------------------------------------------------------ item 6: one result lost
def test_opt_refuses_two_inputs_with_one_destination(tmp_path):
    for d, c in (("a", 2), ("b", 3)):
        (tmp_path / d).mkdir()
        (tmp_path / d / "k.tirx").write_text(_src(c))
    out = tmp_path / "out"
    out.mkdir()
    a, b = str(tmp_path / "a" / "k.tirx"), str(tmp_path / "b" / "k.tirx")
    rc, _, err = _run(["opt", a, b, "-p", "simplify", "-o", str(out)])
    assert rc == 2 and os.listdir(out) == []
    assert f"{a} and {b} would both be written to {out / 'k.tirx'}" in err
    # the same file twice, and stdin next to a file named stdin.tirx, collide the same way
    assert _run(["opt", a, a, "-p", "simplify", "-o", str(out)])[0] == 2
    (tmp_path / "stdin.tirx").write_text(_src())
    rc, _, err = _run(["opt", "-", str(tmp_path / "stdin.tirx"), "-p", "simplify", "-o", str(out)], _src())
    assert rc == 2 and "<stdin> and" in err and os.listdir(out) == []
    # different names are fine: one output per input
    (tmp_path / "b" / "k.tirx").rename(tmp_path / "b" / "m.tirx")
    assert _run(["opt", a, str(tmp_path / "b" / "m.tirx"), "-p", "simplify", "-o", str(out)])[0] == 0
    assert (out / "k.tirx").read_text() == _simplified(_src(2))
    assert (out / "m.tirx").read_text() == _simplified(_src(3))


# ------------------------------------------------------------------ item 7: FIFOs
@pytest.fixture
def fifo(tmp_path) -> Path:
    p = tmp_path / "pipe.tirx"
    os.mkfifo(p)
    return p


@pytest.mark.parametrize(
    "argv",
    [["check"], ["roundtrip"], ["opt", "-p", "simplify"], ["compile"], ["fmt"], ["fmt", "--check"]],
)
def test_a_fifo_input_is_refused_not_waited_on(fifo, argv):
    rc, _, err = _run([*argv, str(fifo)])
    assert rc == 1, err
    assert f"error: {fifo}: not a regular file: it is a FIFO" in err
    assert "Traceback" not in err and "internal error" not in err


def test_fmt_walk_refuses_a_fifo_and_formats_the_rest(tmp_path, fifo):
    ugly = tmp_path / "ugly.tirx"
    ugly.write_text(_src(indent="  "))
    rc, out, err = _run(["fmt", str(tmp_path)])
    assert rc == 1
    assert f"error: {fifo}: not a regular file" in err
    assert out == f"reformatted {ugly}\n" and ugly.read_text() == _src()  # re-indented
    assert "1 file(s) reformatted, 0 unchanged, 1 failed" in err
    for arg in (str(tmp_path), str(tmp_path / "*.tirx")):  # a folder, a glob
        rc, _, err = _run(["fmt", "--check", arg])
        assert rc == 1 and f"error: {fifo}: not a regular file" in err


def test_tirx_load_and_the_mutate_corpus_do_not_hang_on_a_fifo(tmp_path, fifo):
    (tmp_path / "good.tirx").write_text(_src())
    with deadline(), pytest.raises(OSError, match="not a regular file") as ei:
        tirx.load(fifo)
    assert isinstance(ei.value, ValueError) and ei.value.filename == str(fifo)
    with deadline():
        corpus = mutate.default_corpus([str(tmp_path)], generated=0)
    assert [os.path.basename(n) for n, _ in corpus] == ["good.tirx"]


# ------------------------------------------------------------------ item 9: verify; plugins
def _plugin(tmp_path: Path, name: str, body: str) -> Path:
    p = tmp_path / f"{name.replace('-', '_')}.py"
    p.write_text(
        "from tirx.passes import function_pass, register_pass\n"
        "from tirx.ir import Evaluate, SeqStmt, Var\n"
        "from tirx.ir import types as ty\n"
        f"@register_pass({name!r})\n"
        "@function_pass\n"
        "def the_pass(f, mod):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    )
    return p


def test_opt_verifies_by_default(tmp_path):
    plug = _plugin(
        tmp_path,
        "ghost-var",
        """\
        ghost = Var("ghost", ty.int32)
        return f.with_body(SeqStmt((f.body, Evaluate(ghost))))
        """,
    )
    k = tmp_path / "k.tirx"
    k.write_text(_src())
    out = tmp_path / "out.tirx"
    argv = ["opt", str(k), "-p", "ghost-var", "--plugin", str(plug)]
    rc, stdout, err = _run([*argv, "-o", str(out)])
    assert rc == 1 and not out.exists() and stdout == ""
    assert "not well-formed after pass" in err and "ghost" in err
    rc, stdout, _ = _run(argv)
    assert rc == 1 and stdout == ""  # nothing half-verified is printed either
    rc, stdout, _ = _run([*argv, "--no-verify"])
    assert rc == 0 and "ghost" in stdout  # opted out: written as asked
    assert _run([*argv, "--no-verify", "--verify-each"])[0] == 2


def test_an_exception_in_a_plugin_pass_blames_the_plugin(tmp_path):
    plug = _plugin(tmp_path, "raising-pass", 'raise ValueError("cannot handle this kernel")\n')
    line = plug.read_text().splitlines().index('    raise ValueError("cannot handle this kernel")') + 1
    k = tmp_path / "k.tirx"
    k.write_text(_src())
    rc, stdout, err = _run(["opt", str(k), "-p", "simplify,raising-pass", "--plugin", str(plug)])
    assert rc == 1 and stdout == ""
    assert f"error: pass 'raising-pass' ({plug}:{line}) raised ValueError: cannot handle this kernel" in err
    assert "internal error" not in err and "bug in tirx" not in err


# ------------------------------------------------------------------ item 11: stdin, pipelines
def test_check_roundtrip_and_compile_read_stdin_for_dash(monkeypatch):
    rc, out, _ = _run(["check", "-"], _src())
    assert (rc, out) == (0, "<stdin>: ok\n")
    rc, _, err = _run(["check", "-"], BAD)
    assert rc == 1 and "<stdin>:3:12" in err
    rc, out, _ = _run(["roundtrip", "-"], _src())
    assert rc == 0 and out.startswith("<stdin>: ok")
    monkeypatch.setattr(tirx, "compile", lambda f, target: type("K", (), {"source": f"// {f.name}\n"})())
    assert _run(["compile", "-"], _src()) == (0, "// f\n", "")
    rc, _, err = _run(["check", "-", "-"], _src())
    assert rc == 2 and "more than once" in err


@pytest.mark.parametrize(
    "pipeline, words",
    [
        ("verify{require_ssa=true,require_ssa=false}", "option 'require_ssa' of 'verify' is given twice"),
        ("verify{require_ssa=true,raising=true,require_ssa=true}", "given twice"),
        ('verify{require_ssa="maybe"}', "expected true or false, got 'maybe'"),
        ("verify{nope=1}", "has no option 'nope' (options: raising, require_ssa)"),
        ("verify{=1}", "must be name=value"),
    ],
)
def test_ambiguous_or_bad_pipeline_options_are_usage_errors(tmp_path, pipeline, words):
    with pytest.raises(ValueError, match="pipeline") as ei:
        parse_pipeline(pipeline)
    assert words in str(ei.value)
    k = tmp_path / "k.tirx"
    k.write_text(_src())
    rc, _, err = _run(["opt", str(k), "-p", pipeline])
    assert rc == 2 and words in err


def test_a_quoted_option_value_keeps_the_option_type():
    assert parse_pipeline('verify{require_ssa="true"}') == [("verify", {"require_ssa": True})]


# ------------------------------------------------------------------ item 12: atomic writes
_FULL_DISK = """
import resource, signal, sys
from tirx.tools.cli import main
import tirx.passes.simplify, tirx.fileio, tirx.printer  # imported before the limit
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
sys.exit(main(sys.argv[1:]))
"""


def _big_kernel(lines: int) -> str:
    body = "".join(f"    A[{i % 8}] = n * {i} + 0\n" for i in range(lines))
    return f"@T.function\ndef f(A: T.Tensor((8,), T.int32), n: T.int32):\n{body}"


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="needs RLIMIT_FSIZE")
def test_opt_in_place_on_a_full_disk_keeps_the_original(tmp_path):
    """The issue's case, with a real failing write (a file size limit, as a full disk):
    the old code cut k.tirx to the limit and `tirx check` then said ok."""
    k = tmp_path / "k.tirx"
    k.write_text(_big_kernel(600))
    before = k.read_bytes()
    assert len(_simplified(before.decode())) > 8192
    r = subprocess.run(
        [sys.executable, "-c", _FULL_DISK.format(limit=8192), "opt", str(k), "-p", "simplify", "-o", str(k)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert len(k.read_bytes()) == len(before) and k.read_bytes() == before  # old: cut to 8192
    assert r.returncode == 1, r.stderr
    assert f"error: {k}: File too large" in r.stderr and "Traceback" not in r.stderr
    assert os.listdir(tmp_path) == ["k.tirx"]  # no temporary file left behind


@needs_proc
def test_enospc_midway_leaves_every_original_byte_identical(tmp_path, monkeypatch):
    k = tmp_path / "k.tirx"
    k.write_text(_src(indent="  "))  # needs formatting too
    before = k.read_bytes()
    cu = tmp_path / "k.cu"
    cu.write_text("// the old kernel\n")
    monkeypatch.setattr(tirx, "compile", lambda f, target: type("K", (), {"source": "// new\n" * 999})())
    hit = _fail_writes(monkeypatch, lambda name: True)
    rc, out, err = _run(["opt", str(k), "-p", "simplify", "-o", str(k)])
    assert (rc, out) == (1, "") and f"error: {k}: No space left on device" in err
    rc, out, err = _run(["compile", str(k), "-o", str(cu)])
    assert (rc, out) == (1, "") and f"error: {cu}: No space left on device" in err
    rc, out, err = _run(["fmt", str(k)])
    assert rc == 1 and out == ""  # not "reformatted": the write failed
    assert f"error: {k}: No space left on device" in err
    assert "0 file(s) reformatted, 0 unchanged, 1 failed" in err
    assert hit == ["k.tirx", "k.cu", "k.tirx"]
    assert k.read_bytes() == before and cu.read_text() == "// the old kernel\n"
    assert sorted(os.listdir(tmp_path)) == ["k.cu", "k.tirx"]


def test_output_to_a_device_is_written_not_refused(tmp_path):
    k = tmp_path / "k.tirx"
    k.write_text(_src())
    assert _run(["opt", str(k), "-p", "simplify", "-o", os.devnull]) == (0, "", "")
    rc, _, err = _run(["opt", "-", "-p", "simplify", "-o", str(tmp_path / "missing" / "x.tirx")], _src())
    assert rc == 1 and f"error: {tmp_path / 'missing' / 'x.tirx'}: No such file or directory" in err
    assert ".tirx-tmp-" not in err  # the user's name, not the temporary one


# ------------------------------------------------------------------ the campaign
SLOTS = [("a", "k"), ("a", "m"), ("b", "k"), ("b", "m")]  # folder, name of the four inputs
KINDS = ["ugly", "canonical", "bad", "fifo", "absent"]


def _text(kind: str, c: int) -> str:
    return {"ugly": _src(c, "  "), "canonical": tirx.dumps(tirx.loads(_src(c))), "bad": BAD}[kind]


def _snapshot(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


@needs_proc
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    cmd=st.sampled_from(["opt", "fmt"]),
    kinds=st.lists(st.sampled_from(KINDS), min_size=4, max_size=4),
    args=st.lists(st.sampled_from([0, 1, 2, 3, "a", "b", "-"]), min_size=1, max_size=4),
    failing=st.sets(st.sampled_from(["a/k", "a/m", "b/k", "b/m", "out/k", "out/m", "out/stdin"])),
    old=st.sets(st.sampled_from(["k", "m", "stdin"])),
)
def test_no_output_is_lost_or_truncated_and_the_exit_code_tells(cmd, kinds, args, failing, old):
    """Inputs: up to four files in folders a/ and b/ (two names each: duplicate basenames),
    each well-formed, canonical, broken, a FIFO or missing; the folders themselves; stdin.
    Writes to ``failing`` targets fail midway (ENOSPC). ``opt -o out`` and ``fmt`` must: exit
    2 and write nothing on a usage error; else exit nonzero iff some input or write failed;
    write exactly one output per input that succeeded, and leave every other file as it was."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        texts: dict[str, str] = {}  # slot "a/k" -> its text (regular files only)
        for (d, n), kind, c in zip(SLOTS, kinds, range(2, 6)):
            (root / d).mkdir(exist_ok=True)
            p = root / d / f"{n}.tirx"
            if kind == "fifo":
                os.mkfifo(p)
            elif kind != "absent":
                texts[f"{d}/{n}"] = _text(kind, c)
                p.write_text(texts[f"{d}/{n}"])
        out = root / "out"
        out.mkdir()
        for n in old:
            (out / f"{n}.tirx").write_text(f"OLD {n}\n")
        argv = [
            a if a == "-" else str(root / a) if isinstance(a, str) else f"{root / '/'.join(SLOTS[a])}.tirx"
            for a in args
        ]
        stdin = tirx.dumps(tirx.loads(_src(9)))
        before = _snapshot(root)
        with pytest.MonkeyPatch.context() as mp:
            _fail_writes(mp, lambda t: f"{t.parent.name}/{t.name[:-5]}" in failing)
            extra = ["-p", "simplify", "-o", str(out)] if cmd == "opt" else []
            rc, stdout, err = _run([cmd, *argv, *extra], stdin)
        after = _snapshot(root)
        assert not [p for p in after if ".tirx-tmp-" in p.name], "a temporary file was left"
        assert "Traceback" not in err and "internal error" not in err, err
        check = _check_opt if cmd == "opt" else _check_fmt
        written = check(root, args, kinds, texts, failing, stdin, rc, stdout, err)
        if written is None:  # a usage error
            assert rc == 2 and after == before, err
            return
        for p in set(before) | set(after):
            rel = f"{p.parent.name}/{p.name[:-5]}"
            if rel in written:
                assert after.get(p) == written[rel], f"{p}: not its input's output"
            else:
                assert after.get(p) == before.get(p), f"{p} was lost or changed"
        assert all(root / f"{w}.tirx" in after for w in written), "an output is missing"


def _check_opt(root, args, kinds, texts, failing, stdin, rc, stdout, err) -> dict[str, bytes] | None:
    """The outputs ``opt -o out`` must have written (out/NAME -> bytes); None: usage error."""
    dests = [
        "out/stdin" if a == "-" else f"out/{SLOTS[a][1]}" for a in args if not isinstance(a, str) or a == "-"
    ]
    if (
        any(a in ("a", "b") for a in args)  # a folder where a file is expected
        or any(isinstance(a, int) and kinds[a] == "absent" for a in args)
        or len(dests) != len(set(dests))  # two inputs, one destination (or - twice)
    ):
        return None
    failed = False
    written: dict[str, bytes] = {}
    for a, dest in zip(args, dests):
        text = stdin if a == "-" else texts.get("/".join(SLOTS[a]))
        if text is None or text == BAD or dest in failing:  # a FIFO, no load, a failed write
            failed = True
        else:
            written[dest] = _simplified(text).encode()
    assert (rc, stdout) == (1 if failed else 0, ""), err
    return written


def _check_fmt(root, args, kinds, texts, failing, stdin, rc, stdout, err) -> dict[str, bytes] | None:
    """The files ``fmt`` must have rewritten (a/k -> bytes); None: usage error."""
    if any(isinstance(a, int) and kinds[a] == "absent" for a in args):
        return None
    slots: list[str] = []  # what fmt visits, in order, each once
    for a in args:
        if a == "-" or isinstance(a, int):
            slots.append("-" if a == "-" else "/".join(SLOTS[a]))
        else:  # a folder: its *.tirx, FIFOs included (and refused)
            slots += [f"{a}/{n}" for n in ("k", "m") if kinds[SLOTS.index((a, n))] != "absent"]
    failed = False
    written: dict[str, bytes] = {}
    for s in dict.fromkeys(slots):
        kind = "canonical" if s == "-" else kinds[SLOTS.index(tuple(s.split("/")))]
        if kind in ("fifo", "bad") or (kind == "ugly" and s in failing):
            failed = True
        elif kind == "ugly":
            written[s] = texts[s].replace("\n  ", "\n    ").encode()  # fmt re-indents it
    assert rc == (1 if failed else 0), err
    shown = "".join(f"reformatted {root / s}.tirx\n" for s in written)
    assert stdout == (stdin if "-" in slots else "") + shown
    return written
