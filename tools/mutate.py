"""The mutation campaign: mutated ``.tirx`` text through the whole pipeline, with a time limit.

Each mutant of a corpus text (the repository's ``tests/data`` and ``examples`` ``.tirx``
files, plus printed generated programs) goes through ``loads``; when it is accepted, through
``dumps``, ``loads`` again, ``structural_equal``, ``structural_hash``, ``verify_well_formed``,
``compile(target="interp")`` and CUDA source generation (no NVRTC). A failure is: any
exception other than ``tirx.DiagnosticError`` from ``loads``; a printed text that does not
load back, is not a fixpoint, or is not structurally equal (or hash-equal) to the original;
any exception but the documented error kinds (DiagnosticError, OpError, InterpError) from
verify / compile / codegen; and any input whose pipeline takes more than ``input_timeout``
(1 s) of CPU time -- twice, the second time in a fresh worker. CPU time, not wall time, so a
busy shared CI machine does not turn a slow moment into a failure.

Inputs run in a worker process (fork) that is killed on overrun, so a hang in tirx cannot hang
the campaign. Failures are grouped by signature (stage, exception type, innermost tirx frame),
reduced by deleting lines while the signature stays, and saved as ``.tirx`` + ``.json``.

Replay a saved reproducer: ``python -m tirx.tools.mutate FILE`` (runs the pipeline in-process
and prints the traceback).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import random
import re
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tirx.tools.fuzzing import DEFAULT_SAVE_DIR, Failure, save_failure

__all__ = ["MutateReport", "check_text", "default_corpus", "mutate", "run_mutate"]

#: Mutants are cut to this size. The 1 s limit is a hang detector for *small* inputs (the
#: corpus files are 2-4 KB); a linear pipeline runs a 16 KB kernel in about 0.2 s of CPU here
#: (a 58 KB one, 300 copies of a long store, took 0.76 s: throughput, not a hang). Linear
#: cost on megabyte inputs is checked by tests/test_trust_text.py and the tools/bench scripts.
MAX_MUTANT_CHARS = 16_000
REPO = Path(__file__).resolve().parents[1]

# ------------------------------------------------------------------ the pipeline


class _Problem(Exception):
    """A broken invariant found by ``check_text`` (not an exception of tirx itself)."""


def _where(e: BaseException) -> str:
    """The innermost frame inside tirx's own code, as ``path:line`` (the failure's signature)."""
    tb = traceback.extract_tb(e.__traceback__)
    for fr in reversed(tb):
        fn = fr.filename.replace(os.sep, "/")
        if "/tools/" in fn:
            continue
        if any(part in fn for part in ("/tirx/", "/grammar/", "/printer/", "/passes/")):
            return f"{fn.rsplit('/', 2)[-2]}/{fn.rsplit('/', 1)[-1]}:{fr.lineno}"
    return tb[-1].name if tb else "?"


def check_text(text: str) -> tuple[str, str, str] | None:
    """Run the pipeline on ``text``. None when all is well (rejected with a diagnostic, or
    accepted and every stage behaved); else ``(signature, message, traceback)``."""
    return _pipeline(text)[1]


def _pipeline(text: str) -> tuple[bool, tuple[str, str, str] | None]:
    """(accepted by loads, problem or None)."""
    import tirx
    from tirx.errors import OpError
    from tirx.interp.errors import InterpError  # part of the package

    documented = (tirx.DiagnosticError, OpError, InterpError)

    stage = "loads"
    accepted = False
    try:
        try:
            obj = tirx.loads(text, source_name="<mutant>")
        except tirx.DiagnosticError:
            return False, None
        accepted = True
        stage = "dumps"
        d1 = tirx.dumps(obj)
        stage = "loads(dumps(x))"
        try:
            again = tirx.loads(d1)
        except tirx.DiagnosticError as e:
            raise _Problem(f"the printed text does not load back: {e.message}") from e
        stage = "structural_equal"
        if not tirx.structural_equal(again, obj):
            raise _Problem("structural_equal(loads(dumps(x)), x) is false")
        stage = "dumps(loads(dumps(x)))"
        if tirx.dumps(again) != d1:
            raise _Problem("printing is not a fixpoint")
        stage = "structural_hash"
        if tirx.structural_hash(again) != tirx.structural_hash(obj):
            raise _Problem("structurally equal objects have different structural_hash values")
        stage = "verify"
        from tirx.passes.verify import verify_well_formed

        verify_well_formed(obj)
        for name, fn in (("compile(interp)", _compile_interp), ("cuda codegen", _cuda_source)):
            stage = name
            with contextlib.suppress(*documented):
                fn(obj)
        return True, None
    except _Problem as e:
        return accepted, (f"{stage}: {e}", str(e), "".join(traceback.format_exception(e)))
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        sig = f"{stage}: {type(e).__name__} at {_where(e)}"
        msg = f"{type(e).__name__}: {str(e)[:500]}"
        return accepted, (sig, msg, "".join(traceback.format_exception(e))[-20000:])


def _compile_interp(obj: Any) -> None:
    import tirx

    tirx.compile(obj, target="interp")


def _cuda_source(obj: Any) -> None:
    """What ``tirx.compile(obj, target="cuda")`` does before NVRTC."""
    from tirx.codegen import generate
    from tirx.passes import VectorizeThreads

    generate(VectorizeThreads()(obj))


# ------------------------------------------------------------------ corpus


def _read_text(p: Path) -> str | None:
    from tirx.fileio import read_file  # a FIFO named *.tirx is skipped, not waited on

    try:
        return read_file(p).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _files(paths: Sequence[str | os.PathLike]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(p.rglob("*.tirx")))
        elif p.is_file():
            out.append(p)
    return out


def _generated(seed: int, n: int) -> list[tuple[str, str]]:
    """Printed programs from the strategies (general ones and runnable kernels)."""
    if n <= 0:
        return []
    try:
        from hypothesis import strategies as st

        from tirx.testing import strategies as tst
        from tirx.tools.fuzzing import run_budgeted
    except ImportError:
        return []
    import tirx

    texts: list[tuple[str, str]] = []

    def keep(x: Any) -> None:
        f = getattr(x, "func", x)
        with contextlib.suppress(Exception):  # a printer failure is the round-trip campaign's
            texts.append((f"generated-{len(texts)}", tirx.dumps(f)))

    strat = st.one_of(tst.functions(max_stmts=12), tst.modules(max_stmts=8), tst.runnable_kernels())
    run_budgeted(strat, keep, seed=seed, examples=n, chunk=n)
    return texts


def default_corpus(
    paths: list[str] | None = None, seed: int = 0, generated: int = 40
) -> list[tuple[str, str]]:
    """(name, text) pairs: ``paths`` (files or folders of ``.tirx``; default the repository's
    tests/data and examples when present) plus ``generated`` printed generated programs."""
    if paths is None:
        paths = [str(d) for d in (REPO / "tests" / "data", REPO / "examples") if d.is_dir()]
    out = []
    for p in _files(paths):
        t = _read_text(p)
        if t is not None:
            out.append((str(p), t))
    out.extend(_generated(seed, generated))
    return out


# ------------------------------------------------------------------ mutators

_TOKEN = re.compile(r"\s+|[A-Za-z_][A-Za-z_0-9]*|\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?|\*\*|//|[<>=!]=|.", re.S)
_NUM = re.compile(r"(?<![\w.])\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?")
PUNCT = "()[]{}:,.;=+-*/%<>!&|^~@#\\'\"`$?"
BLANKS = " \t\f\v\r\n"
UNICODE = (
    "é",
    "中",
    "\u0301",
    "\u200b",
    "\ufeff",
    "\u2028",
    "\x00",
    "\x7f",
    "😀",
    "\u202e",
    "１",
    "α",
    "ℕ",
    "\U0001d400",
    "ﬁ",
    "İ",
)
WORDS = (
    "if",
    "else",
    "elif",
    "for",
    "while",
    "in",
    "range",
    "def",
    "return",
    "break",
    "continue",
    "lambda",
    "None",
    "True",
    "False",
    "and",
    "or",
    "not",
    "with",
    "T",
    "T.int32",
    "T.int64",
    "T.float16",
    "T.float32",
    "T.bool",
    "T.Tensor",
    "T.Ptr",
    "T.alloc_buffer",
    "T.decl_buffer",
    "T.device_entry",
    "T.cuda.thread_idx",
    "T.evaluate",
    "T.serial",
    "T.unroll",
    "T.vectorized",
    "T.parallel",
    "T.thread_binding",
    "T.Module",
    "@T.function",
    "0",
    "-1",
    "1.5",
    "'x'",
    "*",
    "**",
    "//",
    "%",
    "<<",
    ">>",
    "==",
    "...",
)
HUGE_NUMBERS = (
    "9" * 5000,
    "9" * 100,
    "0x" + "f" * 40,
    "1e999",
    "1e-999",
    str(2**64),
    str(2**63),
    str(2**31),
    str(-(2**63) - 1),
    "1_000_000",
    "0b101",
    "0o17",
    "1.7976931348623157e308",
    "4.9e-324",
    "00",
    "1.",
    ".5",
)


def _lines(t: str) -> list[str]:
    return t.splitlines(keepends=True)


def _m_delete_line(r: random.Random, t: str, corpus: list[str]) -> str:
    ls = _lines(t)
    if ls:
        del ls[r.randrange(len(ls))]
    return "".join(ls)


def _m_dup_line(r: random.Random, t: str, corpus: list[str]) -> str:
    ls = _lines(t)
    if ls:
        i = r.randrange(len(ls))
        ls[i:i] = [ls[i]] * r.choice((1, 1, 2, 50, 500))
    return "".join(ls)


def _m_swap_lines(r: random.Random, t: str, corpus: list[str]) -> str:
    ls = _lines(t)
    if len(ls) > 1:
        i, j = r.randrange(len(ls)), r.randrange(len(ls))
        ls[i], ls[j] = ls[j], ls[i]
    return "".join(ls)


def _m_splice(r: random.Random, t: str, corpus: list[str]) -> str:
    ls, other = _lines(t), _lines(r.choice(corpus))
    if other:
        i = r.randrange(len(ls) + 1)
        j = r.randrange(len(other))
        ls[i:i] = other[j : j + r.choice((1, 1, 3, 8))]
    return "".join(ls)


def _pos(r: random.Random, t: str) -> int:
    return r.randrange(len(t) + 1)


def _m_punct(r: random.Random, t: str, corpus: list[str]) -> str:
    i = _pos(r, t)
    run = "".join(r.choice(PUNCT + BLANKS) for _ in range(r.randint(1, 30)))
    return t[:i] + run + t[i:]


def _m_blanks(r: random.Random, t: str, corpus: list[str]) -> str:
    """Long runs of whitespace (the lexer's backtracking trap), sometimes before a bad char."""
    i = _pos(r, t)
    run = "".join(r.choice(" \t\f") for _ in range(r.choice((24, 40, 1000, 100_000))))
    return t[:i] + run + r.choice(("", "$", "\\", "#", "\n")) + t[i:]


def _m_deep(r: random.Random, t: str, corpus: list[str]) -> str:
    """Deep nesting in an expression position (recursion depth)."""
    ms = list(_NUM.finditer(t))
    if not ms:
        return t
    m = r.choice(ms)
    k = r.choice((50, 300, 1000, 2000, 3000))  # past the recursion limit, within MAX_MUTANT_CHARS
    tok = m.group()
    form = r.randrange(6)
    if form == 0:
        new = "(" * k + tok + ")" * k
    elif form == 1:
        new = " + ".join([tok] * k)
    elif form == 2:
        new = "-" * k + tok
    elif form == 3:
        new = "T.max(" * k + tok + (", 1)" * k)
    elif form == 4:
        new = "[" * k + tok + "]" * k
    else:
        new = "not " * k + tok
    return t[: m.start()] + new + t[m.end() :]


def _m_huge_number(r: random.Random, t: str, corpus: list[str]) -> str:
    ms = list(_NUM.finditer(t))
    if not ms:
        return t
    m = r.choice(ms)
    return t[: m.start()] + r.choice(HUGE_NUMBERS) + t[m.end() :]


def _m_huge_string(r: random.Random, t: str, corpus: list[str]) -> str:
    toks = _TOKEN.findall(t)
    if not toks:
        return t
    i = r.randrange(len(toks))
    q = r.choice(('"', "'", '"""'))
    body = r.choice(("x", "\\n", "\\\\", "é", "\\x00", "\\u00e9", "{", "\\")) * r.choice((1, 1000, 100_000))
    toks[i] = q + body + q
    return "".join(toks)


def _m_unicode(r: random.Random, t: str, corpus: list[str]) -> str:
    i = _pos(r, t)
    return t[:i] + "".join(r.choice(UNICODE) for _ in range(r.randint(1, 4))) + t[i:]


def _m_truncate(r: random.Random, t: str, corpus: list[str]) -> str:
    return t[: _pos(r, t)]


def _m_token_replace(r: random.Random, t: str, corpus: list[str]) -> str:
    toks = _TOKEN.findall(t)
    idx = [i for i, x in enumerate(toks) if not x.isspace()]
    if not idx:
        return t
    i = r.choice(idx)
    toks[i] = r.choice(WORDS) if r.random() < 0.6 else toks[r.choice(idx)]
    return "".join(toks)


def _m_token_swap(r: random.Random, t: str, corpus: list[str]) -> str:
    toks = _TOKEN.findall(t)
    idx = [i for i, x in enumerate(toks) if not x.isspace()]
    if len(idx) < 2:
        return t
    a = r.randrange(len(idx) - 1)
    i, j = idx[a], idx[a + 1] if r.random() < 0.7 else r.choice(idx)
    toks[i], toks[j] = toks[j], toks[i]
    return "".join(toks)


def _m_token_delete(r: random.Random, t: str, corpus: list[str]) -> str:
    toks = _TOKEN.findall(t)
    idx = [i for i, x in enumerate(toks) if not x.isspace()]
    if idx:
        del toks[r.choice(idx)]
    return "".join(toks)


def _m_indent(r: random.Random, t: str, corpus: list[str]) -> str:
    ls = _lines(t)
    if not ls:
        return t
    i = r.randrange(len(ls))
    s = ls[i]
    stripped = s.lstrip(" \t")
    ind = len(s) - len(stripped)
    ls[i] = (
        r.choice((" " * max(0, ind + r.choice((-4, -1, 1, 4))), "\t" * (ind // 4 + 1), " " * 200)) + stripped
    )
    return "".join(ls)


def _m_repeat_block(r: random.Random, t: str, corpus: list[str]) -> str:
    ls = _lines(t)
    if len(ls) < 2:
        return t
    i = r.randrange(len(ls))
    j = min(len(ls), i + r.randint(1, 4))
    ls[j:j] = ls[i:j] * r.choice((2, 10, 300))
    return "".join(ls)


def _m_char(r: random.Random, t: str, corpus: list[str]) -> str:
    if not t:
        return t
    i = r.randrange(len(t))
    return t[:i] + r.choice(PUNCT + BLANKS + "0123456789abcxyzT_") + t[i + 1 :]


MUTATORS: tuple[Callable[[random.Random, str, list[str]], str], ...] = (
    _m_delete_line,
    _m_dup_line,
    _m_swap_lines,
    _m_splice,
    _m_punct,
    _m_blanks,
    _m_deep,
    _m_huge_number,
    _m_huge_string,
    _m_unicode,
    _m_truncate,
    _m_token_replace,
    _m_token_replace,
    _m_token_swap,
    _m_token_delete,
    _m_token_delete,
    _m_indent,
    _m_repeat_block,
    _m_char,
    _m_char,
)


def mutate(r: random.Random, text: str, corpus: list[str]) -> tuple[str, list[str]]:
    """1-3 random mutations of ``text``; returns (mutant, names of the mutators applied)."""
    names = []
    for _ in range(r.choice((1, 1, 1, 2, 2, 3))):
        m = r.choice(MUTATORS)
        text = m(r, text, corpus)[:MAX_MUTANT_CHARS]
        names.append(m.__name__[3:])
    return text, names


# ------------------------------------------------------------------ worker process


def _limit_memory() -> None:
    """Cap the worker's address space (current size + 4 GiB): a runaway allocation becomes a
    MemoryError (a reported failure) instead of swapping or the OOM killer."""
    try:
        import resource

        with open("/proc/self/statm") as f:
            vsize = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        cap = vsize + (4 << 30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ImportError, OSError, ValueError, AttributeError):
        pass


def _worker_main(conn: Any) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and kills us
    with contextlib.suppress(OSError):  # results go through the pipe; keep tirx's noise (e.g.
        devnull = os.open(os.devnull, os.O_WRONLY)  # "Exception ignored in ...") out of the log
        os.dup2(devnull, 2)
    _limit_memory()
    while True:
        try:
            text = conn.recv()
        except (EOFError, OSError):
            return
        if text is None:
            return
        cpu0 = time.process_time()
        res = _pipeline(text)
        try:
            conn.send((res, time.process_time() - cpu0))
        except (OSError, ValueError):
            return


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods and sys.platform != "darwin" else "spawn")


HARD_LIMIT_FACTOR = 20.0


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` (Linux /proc), None when unavailable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


class _Worker:
    """One worker process; ``run(text, timeout)`` kills and replaces it on overrun or crash."""

    def __init__(self) -> None:
        self.ctx = _context()
        self.proc: Any = None
        self.conn: Any = None

    def _start(self) -> None:
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker_main, args=(child,), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()
        self.proc = self.conn = None

    def run(self, text: str, timeout: float) -> tuple[str, Any]:
        """("ok", (accepted, problem)) | ("timeout", None) | ("crash", exit code).

        The limit is on the worker's CPU time (read from /proc while it runs), so a loaded
        machine does not turn a slow moment into a failure; a worker that blocks without
        using CPU is killed after ``HARD_LIMIT_FACTOR * timeout`` wall seconds. Without
        /proc the limit is on wall time."""
        if self.proc is None:
            self._start()
        try:
            self.conn.send(text)
            pid = self.proc.pid
            cpu0 = _cpu_seconds(pid)
            t0 = time.monotonic()
            hard = timeout * (HARD_LIMIT_FACTOR if cpu0 is not None else 1.0)
            while not self.conn.poll(0.05):
                wall = time.monotonic() - t0
                cpu = _cpu_seconds(pid) if cpu0 is not None else None
                used = cpu - cpu0 if cpu is not None and cpu0 is not None else wall
                if used > timeout or wall > hard:
                    self.stop()
                    return "timeout", None
            res, cpu_used = self.conn.recv()
            if cpu_used > timeout:
                return "timeout", None
            return "ok", res
        except (EOFError, OSError):
            self.proc.join(5)
            code = self.proc.exitcode
            self.stop()
            return "crash", code


# ------------------------------------------------------------------ the campaign


@dataclass
class _Group:
    count: int
    failure: Failure
    saved: list[str] = field(default_factory=list)


@dataclass
class MutateReport:
    seed: int
    inputs: int = 0
    accepted: int = 0
    seconds: float = 0.0
    groups: dict[str, _Group] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.groups

    def summary(self) -> str:
        rate = self.inputs / max(self.seconds, 1e-9)
        head = (
            f"mutate fuzz: {self.inputs} inputs in {self.seconds:.1f} s ({rate:.1f}/s), "
            f"{self.accepted} accepted by loads, seed {self.seed}"
        )
        if self.ok:
            return head + ": ok"
        n = sum(g.count for g in self.groups.values())
        return head + f": FAIL, {len(self.groups)} distinct failure(s) in {n} input(s)"

    def failure_lines(self) -> list[str]:
        out = []
        for sig, g in self.groups.items():
            where = g.saved[0] if g.saved else "(not saved)"
            out.append(f"  {sig} ({g.count}x): {where}")
        return out


def _classify(kind: str, payload: Any, timeout: float) -> tuple[str, str, str] | None:
    if kind == "ok":
        return payload[1]
    if kind == "timeout":
        return ("timeout", f"the pipeline took longer than {timeout:g} s (twice)", "")
    return ("crash", f"the worker process died (exit code {payload})", "")


def _reduce(worker: _Worker, text: str, sig: str, timeout: float, budget: float) -> str:
    """Delete line ranges (then single lines) while the failure keeps its signature."""
    t_end = time.monotonic() + budget
    lines = _lines(text)
    n = max(1, len(lines) // 2)
    while n >= 1 and time.monotonic() < t_end:
        i = 0
        changed = False
        while i < len(lines) and time.monotonic() < t_end:
            cand = lines[:i] + lines[i + n :]
            if cand:
                res = _classify(*worker.run("".join(cand), timeout), timeout)
                if res is not None and res[0] == sig:
                    lines = cand
                    changed = True
                    continue
            i += n
        if not changed:
            n //= 2
    return "".join(lines)


def run_mutate(
    *,
    seed: int,
    examples: int | None = None,
    time_budget: float | None = None,
    save_dir: str | os.PathLike | None = DEFAULT_SAVE_DIR,
    input_timeout: float = 1.0,
    corpus: list[str] | None = None,
    max_reduce_time: float = 30.0,
    on_progress: Callable[[int, float, int], None] | None = None,
    known: set[str] | None = None,
) -> MutateReport:
    """Mutate corpus texts until ``examples`` inputs ran or ``time_budget`` seconds passed.
    Reducing failures takes at most ``max_reduce_time`` seconds in all. Failures whose
    signature is in ``known`` are counted but neither reduced nor saved."""
    if examples is None and time_budget is None:
        examples = 200
    rng = random.Random(seed)
    # --corpus given: exactly those files; default: the repository's files plus generated ones
    texts = [t for _, t in default_corpus(corpus, seed=seed, generated=40 if corpus is None else 0)]
    if not texts:
        raise ValueError("tirx fuzz --mutate: the corpus is empty (no .tirx files found)")
    check_text(texts[0])  # warm the parser and the passes before forking workers
    rep = MutateReport(seed)
    reduce_left = max_reduce_time
    worker = _Worker()
    t0 = time.monotonic()
    try:
        while True:
            now = time.monotonic()
            if examples is not None and rep.inputs >= examples:
                break
            if time_budget is not None and now - t0 >= time_budget:
                break
            base = rng.choice(texts)
            mutant, how = mutate(rng, base, texts)
            rep.inputs += 1
            kind, payload = worker.run(mutant, input_timeout)
            if kind == "timeout":  # confirm in a fresh worker before calling it a hang
                kind, payload = worker.run(mutant, input_timeout)
            res = _classify(kind, payload, input_timeout)
            rep.accepted += kind == "ok" and payload[0]
            if on_progress is not None:
                on_progress(rep.inputs, time.monotonic() - t0, sum(g.count for g in rep.groups.values()))
            if res is None:
                continue
            sig, msg, tb = res
            g = rep.groups.get(sig)
            if g is not None:
                g.count += 1
                continue
            if known is not None and sig in known:
                rep.groups[sig] = _Group(1, Failure("mutate", seed, f"{sig}\n{msg}", "", mutant, tb))
                continue
            t_red = time.monotonic()
            small = _reduce(worker, mutant, sig, input_timeout, reduce_left)
            reduce_left = max(0.0, reduce_left - (time.monotonic() - t_red))
            fail = Failure(
                mode="mutate",
                seed=seed,
                error=f"{sig}\n{msg}",
                replay="python -m tirx.tools.mutate {reproducer}",
                text=small,
                detail=tb,
                extra={"mutators": how, "input_number": rep.inputs, "signature": sig},
            )
            g = rep.groups[sig] = _Group(1, fail)
            if save_dir is not None:
                stem = f"mutate-{seed}-{len(rep.groups)}"
                fail.replay = f"python -m tirx.tools.mutate {Path(save_dir) / (stem + '.tirx')}"
                g.saved = save_failure(save_dir, fail, stem)
    finally:
        worker.stop()
        rep.seconds = time.monotonic() - t0
    return rep


def main(argv: list[str] | None = None) -> int:
    """``python -m tirx.tools.mutate FILE...``: run the pipeline on each file, print what fails."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m tirx.tools.mutate FILE... (run the mutation campaign's pipeline on files)")
        return 0 if argv else 2
    bad = 0
    for p in argv:
        t = _read_text(Path(p))
        if t is None:
            print(f"error: {p}: cannot read as UTF-8 text", file=sys.stderr)
            bad += 1
            continue
        t0 = time.process_time()
        res = check_text(t)
        dt = time.process_time() - t0
        if res is None and dt > 1.0:
            bad += 1
            print(f"{p}: SLOW: the pipeline took {dt:.2f} s of CPU time (the limit is 1 s)")
        elif res is None:
            print(f"{p}: ok ({dt:.2f} s)")
        else:
            bad += 1
            print(f"{p}: FAIL {res[0]} ({dt:.2f} s)\n{res[2] or res[1]}")
    return 1 if bad else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
