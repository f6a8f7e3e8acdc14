"""FileCheck-style pass tests: a ``.tirx`` file that says how to run itself and what to expect.

A test is one file: the input kernel, ``# RUN:`` lines naming the ``tirx`` command to run
on it, and ``# CHECK:`` lines the command's output must match, as MLIR's and LLVM's
``// RUN:`` / ``// CHECK:`` tests (lit + FileCheck)::

    # RUN: tirx opt %s --passes simplify
    # CHECK-LABEL: def scale(
    # CHECK:       B[i] = A[i] * 8
    # CHECK-NOT:   + 0
    @T.function
    def scale(A: T.Tensor((4,), T.int32), B: T.Tensor((4,), T.int32)):
        for i in range(4):
            B[i] = A[i] * 8 + 0

``check_file(path)`` runs each RUN line and matches its output against the file's checks;
``tirx filecheck FILE...`` does so from the command line (docs/testing.md). The matcher is
``match(output, checks)``; ``parse_checks`` reads the directives of any text.

RUN lines: ``%s`` is the test file's path, ``%S`` its folder, ``%%`` a ``%``. The command
is a ``tirx`` command (never a shell): ``not`` before it expects a non-zero exit, ``2>&1``
checks stderr with stdout, and ``| tirx filecheck %s [--check-prefix=P]`` (or ``| FileCheck
%s``) at the end may be written as in LLVM (it is what happens anyway; a prefix picks other
directives). A ``\\`` at the end of a RUN line continues it on the next RUN line.

Directives (LLVM FileCheck's semantics; ``CHECK`` is the default prefix):

- ``CHECK: pat`` — ``pat`` occurs in the output after the previous match.
- ``CHECK-NEXT: pat`` — on the line right after the previous match's line.
- ``CHECK-SAME: pat`` — on the same line as the previous match, after it.
- ``CHECK-EMPTY:`` — the line after the previous match's line is empty.
- ``CHECK-NOT: pat`` — ``pat`` does not occur between the previous match (or the start)
  and the next match (or the end).
- ``CHECK-LABEL: pat`` — matched first, in order: the labels cut the output into blocks,
  and the directives between two labels match only inside the block between them (a
  failure stays in its function, and a ``CHECK-NOT`` covers one function).

A pattern is literal text, stripped at both ends, where a run of spaces matches any run
of spaces or tabs; ``{{re}}`` is a Python regular expression (``{{[0-9]+}}``; ``^`` and
``$`` match at line starts and ends); ``[[NAME:re]]`` matches ``re`` and binds ``NAME`` to
the text, and ``[[NAME]]`` matches that text again later (``[[V:cse_v[0-9]+]]`` ...
``[[V]]``). A failure raises ``FileCheckError`` (an ``AssertionError``) saying
``file:line:col`` of the directive, where the search started, the closest output line and
the output itself.
"""

from __future__ import annotations

import bisect
import difflib
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "Check",
    "FileCheckError",
    "Run",
    "check_file",
    "match",
    "parse_checks",
    "parse_runs",
    "run_files",
    "subprocess_executor",
]

KINDS = ("", "NEXT", "SAME", "NOT", "LABEL", "EMPTY")
DEFAULT_PREFIX = "CHECK"
#: ``execute(argv, merge_stderr) -> (exit code, stdout, stderr)`` runs one RUN command
Executor = Callable[[Sequence[str], bool], tuple[int, str, str]]


class FileCheckError(AssertionError):
    """A FileCheck test failed; the message starts with ``file:line:col: error:``."""


@dataclass(frozen=True)
class Check:
    """One directive: its kind (``""`` for a plain ``CHECK:``, ``"NEXT"``, ...), pattern and place."""

    prefix: str
    kind: str
    pattern: str
    path: str
    line: int
    col: int
    text: str  # the whole source line, for messages

    @property
    def name(self) -> str:
        return self.prefix + (f"-{self.kind}" if self.kind else "")

    def where(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Run:
    """One RUN line: the ``tirx`` command's arguments (substituted) and what to check."""

    argv: tuple[str, ...]
    line: int
    command: str  # as written, after substitution and continuation lines
    expect_failure: bool = False
    merge_stderr: bool = False
    prefixes: tuple[str, ...] = (DEFAULT_PREFIX,)
    checks_path: str | None = None  # the file whose checks apply (None: the test file)


# ---------------------------------------------------------------------------- parsing
def _prefix_re(prefixes: Sequence[str]) -> re.Pattern:
    alts = "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])({alts})(-[A-Za-z]+)?:")


def _check_prefixes(prefixes: Sequence[str]) -> tuple[str, ...]:
    out = tuple(prefixes)
    if not out:
        raise ValueError("filecheck: give at least one check prefix")
    for p in out:
        if not re.fullmatch(r"[A-Za-z][\w-]*", p):
            raise ValueError(f"filecheck: a check prefix is a word such as CHECK or SIMPLIFY, got {p!r}")
    return out


def parse_checks(
    text: str, path: str = "<checks>", prefixes: Sequence[str] = (DEFAULT_PREFIX,)
) -> list[Check]:
    """The directives of ``text`` in order (any line; in a ``.tirx`` file they sit in ``#``
    comments). ``FileCheckError`` for an unknown directive (``CHECK-NXT:``), an empty
    pattern, a ``CHECK-NEXT``/``-SAME``/``-EMPTY`` with no match before it, and a malformed
    ``{{...}}`` / ``[[...]]``."""
    rx = _prefix_re(_check_prefixes(prefixes))
    out: list[Check] = []
    defined: dict[str, str] = {}  # variables defined so far (a use before its definition is an error)
    for i, line in enumerate(text.splitlines(), 1):
        m = rx.search(line)
        if m is None:
            continue
        prefix, suffix = m.group(1), (m.group(2) or "")[1:]
        kind = suffix.upper() if suffix.upper() in KINDS else None
        if kind is None or suffix != suffix.upper():
            close = difflib.get_close_matches(suffix.upper(), [k for k in KINDS if k], n=1, cutoff=0.5)
            hint = f"did you mean {prefix}-{close[0]}? " if close else ""
            known = ", ".join(f"{prefix}-{k}" if k else prefix for k in KINDS)
            raise FileCheckError(
                f"{path}:{i}:{m.start() + 1}: error: unknown directive '{prefix}-{suffix}:' ({hint}known: {known})\n"
                f"  {line.strip()}"
            )
        raw = line[m.end() :]
        pattern = raw.strip()
        col = m.end() + (len(raw) - len(raw.lstrip())) + 1
        c = Check(prefix, kind, pattern, path, i, col, line)
        if kind == "EMPTY" and pattern:
            raise _error(c, f"{c.name}: takes no pattern (it matches an empty line), got {pattern!r}")
        if kind != "EMPTY" and not pattern:
            hint = f"; {prefix}-EMPTY: matches an empty line" if kind in ("", "NEXT") else ""
            raise _error(c, f"{c.name}: an empty pattern{hint}")
        _, defs = _compile(c, defined)  # syntax errors now, not at match time
        defined.update((name, "") for _, name in defs)
        if kind == "LABEL" and "[[" in pattern:
            raise _error(c, f"{c.name}: a label cannot define or use variables ([[...]])")
        if kind == "NOT" and re.search(r"\[\[\w+:", pattern):
            raise _error(c, f"{c.name}: a CHECK-NOT cannot define a variable (nothing it matches is kept)")
        if kind in ("NEXT", "SAME", "EMPTY") and not any(p.kind not in ("NOT",) for p in out):
            raise _error(c, f"{c.name}: found with no CHECK or CHECK-LABEL before it to be next to")
        out.append(c)
    return out


def _error(c: Check, msg: str, notes: str = "") -> FileCheckError:
    return FileCheckError(f"{c.where()}: error: {msg}\n  {c.text.strip()}" + (f"\n{notes}" if notes else ""))


_PIECE = re.compile(r"\{\{(.*?)\}\}|\[\[(.*?)\]\]", re.S)


def _compile(c: Check, env: dict[str, str]) -> tuple[re.Pattern, list[tuple[str, str]]]:
    """The regular expression of ``c``'s pattern with ``env``'s variable values; and the
    (group, variable) pairs it defines."""
    parts: list[str] = []
    defs: list[tuple[str, str]] = []
    local: dict[str, str] = {}  # defined earlier in this same pattern: a backreference
    pos = 0
    pat = c.pattern
    for m in _PIECE.finditer(pat):
        parts.append(_literal(pat[pos : m.start()]))
        pos = m.end()
        if m.group(1) is not None:
            body = m.group(1)
            if not body:
                raise _error(c, f"{c.name}: an empty regular expression {{{{}}}}")
            try:
                re.compile(body)
            except re.error as e:
                raise _error(c, f"{c.name}: bad regular expression {{{{{body}}}}}: {e}") from None
            parts.append(f"(?:{body})")
            continue
        body = m.group(2)
        if body.startswith(("#", "@")):
            raise _error(c, f"{c.name}: [[{body}]]: numeric and pseudo variables are not supported")
        name, colon, rx = body.partition(":")
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise _error(c, f"{c.name}: [[{body}]]: a variable name is a word ([[NAME]] or [[NAME:regex]])")
        if colon:
            if not rx:
                raise _error(c, f"{c.name}: [[{body}]]: a definition needs a regular expression")
            try:
                re.compile(rx)
            except re.error as e:
                raise _error(c, f"{c.name}: bad regular expression in [[{body}]]: {e}") from None
            group = f"v{len(defs)}_{name}"
            local[name] = group
            defs.append((group, name))
            parts.append(f"(?P<{group}>{rx})")
        elif name in local:
            parts.append(f"(?P={local[name]})")
        elif name in env:
            parts.append(_literal(env[name]))
        else:
            raise _undefined(c, name)
    parts.append(_literal(pat[pos:]))
    try:
        return re.compile("".join(parts), re.M), defs
    except re.error as e:
        raise _error(c, f"{c.name}: the pattern is not a valid expression: {e}") from None


class _Undefined(FileCheckError):
    pass


def _undefined(c: Check, name: str) -> FileCheckError:
    return _Undefined(
        f"{c.where()}: error: {c.name}: variable [[{name}]] is used before a [[{name}:...]] defines it\n  {c.text.strip()}"
    )


def _literal(s: str) -> str:
    return r"[ \t]+".join(re.escape(w) for w in re.split(r"[ \t]+", s))


def _fuzzy(c: Check, env: dict[str, str]) -> str:
    """The pattern as plain text, for finding the closest output line."""
    return _PIECE.sub(lambda m: env.get((m.group(2) or "").partition(":")[0], ""), c.pattern).strip()


def parse_runs(text: str, path: str) -> list[Run]:
    """The RUN lines of ``text`` (``path`` is what ``%s`` stands for). ``FileCheckError``
    for a command that is not a ``tirx`` command or a malformed pipe."""
    rx = re.compile(r"(?<![\w-])RUN:(.*)$")
    runs: list[Run] = []
    pending: tuple[int, str] | None = None
    lines = text.splitlines()
    for i, line in enumerate(lines, 1):
        m = rx.search(line)
        if m is None:
            if pending is not None:
                raise FileCheckError(
                    f"{path}:{pending[0]}: error: RUN: line ends with '\\' but no RUN: line follows"
                )
            continue
        body = m.group(1).strip()
        if pending is not None:
            start, body = pending[0], pending[1] + " " + body
        else:
            start = i
        if body.endswith("\\"):
            pending = (start, body[:-1].rstrip())
            continue
        pending = None
        runs.append(_parse_run(body, start, path))
    if pending is not None:
        raise FileCheckError(f"{path}:{pending[0]}: error: RUN: line ends with '\\' but no RUN: line follows")
    return runs


def _subst(s: str, path: str) -> str:
    folder = os.path.dirname(path) or "."
    out = []
    i = 0
    while i < len(s):
        ch = s[i]
        if ch == "%" and i + 1 < len(s) and s[i + 1] in "sS%":
            out.append({"s": shlex.quote(path), "S": shlex.quote(folder), "%": "%"}[s[i + 1]])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _parse_run(body: str, line: int, path: str) -> Run:
    cmd = _subst(body, path)
    where = f"{path}:{line}"
    try:
        tokens = shlex.split(cmd)
    except ValueError as e:
        raise FileCheckError(f"{where}: error: RUN: cannot split the command ({e}): {cmd}") from None
    stages: list[list[str]] = [[]]
    for t in tokens:
        if t == "|":
            stages.append([])
        else:
            stages[-1].append(t)
    if len(stages) > 2 or not stages[0] or (len(stages) == 2 and not stages[1]):
        raise FileCheckError(
            f"{where}: error: RUN: expected 'tirx ...' optionally followed by '| tirx filecheck %s', got: {cmd}"
        )
    first = stages[0]
    expect_failure = first[0] == "not"
    if expect_failure:
        first = first[1:]
    merge = "2>&1" in first
    first = [t for t in first if t != "2>&1"]
    if not first or first[0] != "tirx" or len(first) < 2:
        raise FileCheckError(
            f"{where}: error: RUN: lines run tirx commands only ('tirx opt %s ...'), got: {cmd}"
        )
    if first[1] in ("filecheck", "test"):
        raise FileCheckError(f"{where}: error: RUN: 'tirx {first[1]}' goes after a '|', not first: {cmd}")
    bad = [t for t in first if t in (">", "<", ">>", "&&", ";", "2>")]
    if bad:
        raise FileCheckError(f"{where}: error: RUN: no shell here: {bad[0]!r} is not supported: {cmd}")
    prefixes: tuple[str, ...] = (DEFAULT_PREFIX,)
    checks_path = None
    if len(stages) == 2:
        prefixes, checks_path = _parse_filecheck_stage(stages[1], where, cmd)
    return Run(tuple(first), line, cmd, expect_failure, merge, prefixes, checks_path)


def _parse_filecheck_stage(st: list[str], where: str, cmd: str) -> tuple[tuple[str, ...], str | None]:
    if st[0] == "tirx" and len(st) > 1 and st[1] in ("filecheck", "test"):
        args = st[2:]
    elif st[0] in ("FileCheck", "filecheck"):
        args = st[1:]
    else:
        raise FileCheckError(f"{where}: error: RUN: only '| tirx filecheck %s' may follow a '|', got: {cmd}")
    prefixes: list[str] = []
    files: list[str] = []
    it = iter(args)
    for a in it:
        key, eq, val = a.partition("=")
        if key in ("--check-prefix", "--check-prefixes", "-check-prefix", "-check-prefixes"):
            if not eq:
                val = next(it, "")
            prefixes += [p for p in val.split(",") if p]
        elif a.startswith("-"):
            raise FileCheckError(f"{where}: error: RUN: unsupported filecheck option {a!r}: {cmd}")
        else:
            files.append(a)
    if len(files) > 1:
        raise FileCheckError(f"{where}: error: RUN: filecheck takes one checks file, got {len(files)}: {cmd}")
    try:
        got = _check_prefixes(prefixes) if prefixes else (DEFAULT_PREFIX,)
    except ValueError as e:
        raise FileCheckError(f"{where}: error: RUN: {e}") from None
    return got, files[0] if files else None


# ---------------------------------------------------------------------------- matching
@dataclass
class _Out:
    text: str
    name: str
    starts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", self.text)]

    def line_of(self, pos: int) -> int:
        """1-based line of offset ``pos``."""
        return bisect.bisect_right(self.starts, pos)

    def line_text(self, n: int) -> str:
        a = self.starts[n - 1]
        b = self.text.find("\n", a)
        return self.text[a : len(self.text) if b < 0 else b]

    def n_lines(self) -> int:
        n = len(self.starts)
        return n - 1 if self.text.endswith("\n") else n


class _Matcher:
    def __init__(self, out: _Out, checks: list[Check]) -> None:
        self.out = out
        self.checks = checks
        self.env: dict[str, str] = {}

    def fail(self, c: Check, msg: str, notes: list[str], around: int | None = None) -> FileCheckError:
        text = "\n".join(notes)
        return _error(c, f"{c.name}: {msg}", text + "\n" + self.dump(around))

    def note(self, line: int, what: str) -> str:
        n = min(max(line, 1), max(self.out.n_lines(), 1))
        return f"{self.out.name}:{n}: note: {what}\n  {self.out.line_text(n).strip()}"

    def dump(self, around: int | None, limit: int = 60) -> str:
        n = self.out.n_lines()
        if n == 0:
            return f"the output ({self.out.name}) is empty"
        lo, hi = 1, n
        if n > limit:
            c = around or 1
            lo = max(1, c - limit // 3)
            hi = min(n, lo + limit - 1)
        width = len(str(hi))
        rows = [f"  {k:>{width}}| {self.out.line_text(k)}" for k in range(lo, hi + 1)]
        head = (
            f"the output ({self.out.name}"
            + (f", lines {lo}-{hi} of {n}" if (lo, hi) != (1, n) else "")
            + "):"
        )
        return "\n".join([head, *rows])

    def search(self, c: Check, start: int, end: int) -> re.Match | None:
        rx, _ = _compile(c, self.env)
        return rx.search(self.out.text, start, end)

    def bind(self, c: Check, m: re.Match) -> None:
        _, defs = _compile(c, self.env)
        for group, name in defs:
            self.env[name] = m.group(group)

    def closest(self, c: Check, start: int, end: int) -> str | None:
        want = _fuzzy(c, self.env)
        first, last = self.out.line_of(start), self.out.line_of(max(start, end - 1))
        best, best_line = 0.0, None
        for k in range(first, last + 1):
            line = self.out.line_text(k)
            if k == first:  # only what is left of the line the search starts in
                line = line[start - self.out.starts[k - 1] :]
            line = line.strip()
            if not line:
                continue
            r = difflib.SequenceMatcher(None, want, line).ratio()
            if r > best:
                best, best_line = r, k
        if best_line is None or best < 0.3:
            return None
        return self.note(best_line, f"closest output line ({best:.0%} alike)")

    def scan_line(self, start: int) -> int:
        """The line a search from ``start`` begins in (the next one when ``start`` ends a line)."""
        line = self.out.line_of(start)
        if start < len(self.out.text) and self.out.text[start] == "\n" and line < self.out.n_lines():
            line += 1
        return line

    def not_found(self, c: Check, start: int, end: int) -> FileCheckError:
        notes = [self.note(self.scan_line(start), "scanning from here")]
        close = self.closest(c, start, end)
        if close:
            notes.append(close)
        try:
            earlier = self.search(c, 0, start) if start > 0 else None
        except _Undefined:
            earlier = None
        if earlier is not None:
            notes.append(
                self.note(self.out.line_of(earlier.start()), "it does match here, before the previous match")
            )
        return self.fail(c, "expected string not found in the output", notes, self.scan_line(start))

    def run(self) -> None:
        labels = [c for c in self.checks if c.kind == "LABEL"]
        spans: list[tuple[int, int]] = []  # each label's match
        pos = 0
        for c in labels:
            m = self.search(c, pos, len(self.out.text))
            if m is None:
                raise self.not_found(c, pos, len(self.out.text))
            spans.append((m.start(), m.end()))
            pos = m.end()
        # blocks: the directives before the first label, then after each label
        block: list[Check] = []
        k = -1  # the label that opened this block
        for c in self.checks:
            if c.kind == "LABEL":
                self.block(block, k, spans)
                block = []
                k += 1
            else:
                block.append(c)
        self.block(block, k, spans)

    def block(self, checks: list[Check], k: int, spans: list[tuple[int, int]]) -> None:
        start = 0 if k < 0 else spans[k][1]
        end = spans[k + 1][0] if k + 1 < len(spans) else len(self.out.text)
        prev = start  # the end of the previous match
        nots: list[Check] = []
        for c in checks:
            if c.kind == "NOT":
                nots.append(c)
                continue
            if c.kind == "EMPTY":
                m_start, m_end = self.empty_line(c, prev, end)
            else:
                scan_end = end
                if c.kind == "SAME":
                    nl = self.out.text.find("\n", prev)
                    scan_end = min(end, len(self.out.text) if nl < 0 else nl)
                m = self.search(c, prev, scan_end)
                if m is None:
                    if c.kind == "SAME":
                        later = self.search(c, prev, end)
                        if later is not None:
                            raise self.fail(
                                c,
                                "found, but not on the same line as the previous match",
                                [
                                    self.note(self.out.line_of(prev), "the previous match ends here"),
                                    self.note(self.out.line_of(later.start()), "found here"),
                                ],
                                self.out.line_of(prev),
                            )
                    raise self.not_found(c, prev, end)
                m_start, m_end = m.start(), m.end()
                if c.kind == "NEXT":
                    gap = self.out.text.count("\n", prev, m_start)
                    if gap != 1:
                        where = "on the same line as" if gap == 0 else "but not on the line after"
                        raise self.fail(
                            c,
                            f"found, {where} the previous match",
                            [
                                self.note(self.out.line_of(prev), "the previous match ends here"),
                                self.note(self.out.line_of(m_start), "found here"),
                            ],
                            self.out.line_of(prev),
                        )
                self.bind(c, m)
            self.check_nots(nots, prev, m_start)
            nots = []
            prev = m_end
        self.check_nots(nots, prev, end)

    def empty_line(self, c: Check, prev: int, end: int) -> tuple[int, int]:
        nl = self.out.text.find("\n", prev)
        nxt = nl + 1
        if nl < 0 or nxt > end or (nxt < len(self.out.text) and self.out.text[nxt] != "\n"):
            line = self.out.line_of(prev)
            raise self.fail(
                c,
                "expected an empty line after the previous match's line",
                [self.note(line + 1, "this line is not empty") if nl >= 0 and nxt < len(self.out.text) else
                 self.note(line, "the output ends after this line")],
                line,
            )  # fmt: skip
        return nxt, nxt

    def check_nots(self, nots: list[Check], start: int, end: int) -> None:
        for c in nots:
            m = self.search(c, start, end)
            if m is not None:
                raise self.fail(
                    c,
                    "excluded string found in the output",
                    [self.note(self.out.line_of(m.start()), "found here")],
                    self.out.line_of(m.start()),
                )


def match(
    output: str,
    checks: Sequence[Check] | str,
    *,
    path: str = "<checks>",
    prefixes: Sequence[str] = (DEFAULT_PREFIX,),
    output_name: str = "<output>",
) -> None:
    """Check ``output`` against ``checks`` (directives, or a text to read them from with
    ``parse_checks``); raise ``FileCheckError`` saying which directive failed and why."""
    cs = parse_checks(checks, path, prefixes) if isinstance(checks, str) else list(checks)
    if not cs:
        names = ", ".join(f"{p}:" for p in prefixes)
        raise FileCheckError(f"{path}: error: no check directives ({names}) found")
    _Matcher(_Out(output, output_name), cs).run()


# ---------------------------------------------------------------------------- running
def subprocess_executor(argv: Sequence[str], merge_stderr: bool) -> tuple[int, str, str]:
    """Run ``tirx ARGS`` as a child process (``python -m tirx.tools.cli ARGS``) with this
    Python; ``(exit code, stdout, stderr)``."""
    r = subprocess.run(
        [sys.executable, "-m", "tirx.tools.cli", *argv[1:]],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
        timeout=600,
    )
    err = "" if merge_stderr else r.stderr.decode("utf-8", "replace")
    return r.returncode, r.stdout.decode("utf-8", "replace"), err


def check_file(
    path: str | os.PathLike,
    *,
    execute: Executor | None = None,
    prefixes: Sequence[str] | None = None,
) -> list[Run]:
    """Run every RUN line of the test file ``path`` and match each output against the
    file's directives; return the runs. Raises ``FileCheckError`` on the first failure
    (with the RUN line and the directive's ``file:line:col``). ``execute`` runs a ``tirx``
    command (default ``subprocess_executor``; ``tirx filecheck`` runs them in-process);
    ``prefixes`` overrides the prefixes of every RUN line."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise FileCheckError(f"{path}: error: cannot read the test: {e}") from None
    runs = parse_runs(text, path)
    if not runs:
        raise FileCheckError(f"{path}: error: no RUN: lines (e.g. '# RUN: tirx opt %s --passes simplify')")
    execute = execute or subprocess_executor
    for r in runs:
        rc, out, err = execute(r.argv, r.merge_stderr)
        head = f"{path}:{r.line}: RUN: {r.command}"
        if (rc != 0) != r.expect_failure:
            want = "to fail (not ...)" if r.expect_failure else "to succeed"
            tail = (err or out).strip()
            raise FileCheckError(
                f"{path}:{r.line}: error: the command exited with {rc}, expected it {want}\n  RUN: {r.command}"
                + (f"\n{tail}" if tail else "")
            )
        checks_text, checks_path = text, path
        if r.checks_path is not None and os.path.abspath(r.checks_path) != os.path.abspath(path):
            checks_path = r.checks_path
            try:
                with open(checks_path, encoding="utf-8") as f:
                    checks_text = f.read()
            except (OSError, UnicodeDecodeError) as e:
                raise FileCheckError(
                    f"{head}\nerror: cannot read the checks file {checks_path}: {e}"
                ) from None
        try:
            match(
                out,
                checks_text,
                path=checks_path,
                prefixes=prefixes or r.prefixes,
                output_name=f"<stdout of RUN line {r.line}>",
            )
        except FileCheckError as e:
            raise FileCheckError(f"{e}\n(from {head})") from None
    return runs


def run_files(
    paths: Iterable[str | os.PathLike],
    *,
    execute: Executor | None = None,
    prefixes: Sequence[str] | None = None,
    report: Callable[[str, FileCheckError | None], None] | None = None,
) -> int:
    """``check_file`` each path; ``report(path, error or None)`` after each; the number that
    failed."""
    failed = 0
    for p in paths:
        err: FileCheckError | None = None
        try:
            check_file(p, execute=execute, prefixes=prefixes)
        except FileCheckError as e:
            err = e
            failed += 1
        if report is not None:
            report(os.fspath(p), err)
    return failed
