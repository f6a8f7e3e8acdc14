"""The ``tirx`` command line: fmt, check, roundtrip, fuzz, opt, passes, compile, filecheck (and demo).

Exit codes: 0 success, 1 a check failed (a file does not load, would be reformatted,
breaks an invariant; a fuzz counterexample), 2 usage errors (argparse) and unusable
input (a missing file). Results go to stdout, diagnostics and progress to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["main"]


_TRACEBACK_ENV = "TIRX_TRACEBACK"
_DEEP = (
    "the input nests too deeply for tirx to process (Python's recursion limit was reached); "
    "please report this as a tirx bug"
)
_error_file: list[str] = []  # the file whose processing raised, for the internal-error message


def _read(path: str) -> str:
    """A file's text, or stdin's for ``-``. Never blocks on a FIFO: anything but a regular
    file is refused (``error: PATH: not a regular file: it is a FIFO``)."""
    if path == "-":
        buf = getattr(sys.stdin, "buffer", None)
        return buf.read().decode("utf-8") if buf is not None else sys.stdin.read()
    from tirx.fileio import read_file

    return read_file(path).decode("utf-8")


def _name(path: str) -> str:
    """How diagnostics name an input (``<stdin>`` for ``-``)."""
    return "<stdin>" if path == "-" else path


class _Failed(Exception):
    """A file's failure, already worded for the user (printed as is, counted as failed)."""


def _err(msg: str) -> None:
    """Print to stderr; a closed or broken stderr is not worth a traceback."""
    with contextlib.suppress(OSError, ValueError):
        print(msg, file=sys.stderr)


def _os_message(e: OSError, path: str | None = None) -> str:
    """``error: PATH: reason`` for any OSError (ENOSPC, EACCES, EISDIR, ENOENT, ...)."""
    reason = e.strerror or str(e) or type(e).__name__
    name = path or e.filename
    other = e.filename if e.filename is not None and path is not None and str(e.filename) != path else None
    where = f" ({other})" if other is not None else ""
    if name is None:
        return f"error: {reason}{where}"
    return f"error: {name}: {reason}{where}"


def _file_problem(path: str, e: BaseException) -> str | None:
    """The one-line (or diagnostic) message for an error while processing ``path``; None when
    ``e`` is not an input or environment problem (then it is an internal error)."""
    import tirx

    path = _name(path)
    if isinstance(e, _Failed):
        return str(e)
    if isinstance(e, tirx.DiagnosticError):
        return _all_diagnostics(e, path)
    if isinstance(e, UnicodeDecodeError):
        bad = e.object[e.start : e.start + 1]
        byte = f"byte 0x{bad[0]:02x} " if isinstance(bad, bytes) and bad else ""
        return f"error: {path}: not UTF-8 text ({byte}at offset {e.start}: {e.reason})"
    if isinstance(e, OSError) and not isinstance(e, BrokenPipeError):
        return _os_message(e, path)
    if isinstance(e, RecursionError):
        return f"error: {path}: {_DEEP}"
    if isinstance(e, MemoryError):
        return f"error: {path}: out of memory while processing this input"
    return None


def _all_diagnostics(e: BaseException, path: str | None = None) -> str:
    """Every error of a file (``DiagnosticError.diagnostics``: the loader goes on after the
    first), each with its ``file:line:col`` and caret, then how many there were."""
    diags = getattr(e, "diagnostics", None) or [e]
    text = "\n".join(str(d) for d in diags)
    if len(diags) > 1:
        text += f"\n{len(diags)} errors" + (f" in {path}" if path else "")
    return text


class _Files:
    """Per-file error handling: ``with files.guard(path): ...`` prints a diagnostic for an
    input/environment problem with that file, counts it, and goes on with the next file."""

    def __init__(self) -> None:
        self.failed = 0

    @contextlib.contextmanager
    def guard(self, path: str) -> Iterator[None]:
        try:
            yield
        except Exception as e:
            msg = _file_problem(path, e)
            if msg is None:
                _error_file[:] = [path]
                raise
            _err(msg)
            self.failed += 1


def _load_file(path: str) -> tuple[Any, str]:
    """(loaded object, text) of a file or of stdin (``-``); raises DiagnosticError /
    OSError / UnicodeDecodeError."""
    import tirx

    text = _read(path)
    return tirx.loads(text, source_name=_name(path)), text


def _write(path: str, data: str | bytes) -> None:
    """Every file the CLI writes: atomically (tirx.fileio, the writer ``tirx.save`` uses),
    so a failed write (a full disk) leaves the old file byte for byte; ``-o /dev/null``
    and other devices and FIFOs are written directly."""
    from tirx.fileio import write_file

    write_file(path, data.encode("utf-8") if isinstance(data, str) else bytes(data), devices=True)


# ------------------------------------------------------------------ fmt
def cmd_fmt(args: argparse.Namespace) -> int:
    """Files, directories (``*.tirx`` below), globs, ``-``; whitespace only, or
    ``--canonical`` (tools/fmt.py)."""
    from tirx.tools.fmt import run

    return run(args, _err, _Files(), _read)


# ------------------------------------------------------------------ check
def _verify(obj: Any, text: str) -> list[str]:
    """Well-formedness problems (rendered) from passes.verify, when that pass exists."""
    try:
        from tirx.passes.verify import verify_well_formed
    except ImportError:
        return []
    from tirx.diagnostics import render

    return [render(e.message, e.span, text) for e in verify_well_formed(obj)]


def cmd_check(args: argparse.Namespace) -> int:
    files = _Files()
    bad = 0
    for path in args.files:
        with files.guard(path):
            obj, text = _load_file(path)
            problems = _verify(obj, text)
            for p in problems:
                _err(p)
            if problems:
                bad += 1
            elif not args.quiet:
                print(f"{_name(path)}: ok")
    bad += files.failed
    if bad:
        _err(f"{bad} of {len(args.files)} file(s) have errors")
    return 1 if bad else 0


# ------------------------------------------------------------------ roundtrip
def roundtrip_problems(obj: Any) -> list[str]:
    """The three text invariants for one loaded object (``tirx.tools.fuzzing``)."""
    from tirx.tools.fuzzing import roundtrip_problems as _problems

    return _problems(obj)


def cmd_roundtrip(args: argparse.Namespace) -> int:
    files = _Files()
    bad = 0
    for path in args.files:
        with files.guard(path):
            obj, _text = _load_file(path)
            probs = roundtrip_problems(obj)
            if probs:
                bad += 1
                print(f"{_name(path)}: FAIL")
                for p in probs:
                    _err(f"{_name(path)}: {p}")
            else:
                print(f"{_name(path)}: ok (equal, fixpoint, hash)")
    return 1 if bad or files.failed else 0


# ------------------------------------------------------------------ fuzz
class _Progress:
    """One progress line (tqdm): programs, rate and failures so far, redrawn in place with
    carriage returns at most every ``interval`` seconds, so a log gets one line, not one
    per program. ``enabled=False`` (``--no-progress``) or no tqdm: nothing."""

    def __init__(
        self,
        what: str,
        total: int | None = None,
        stream: Any = None,
        enabled: bool = True,
        interval: float = 0.5,
        unit: str = "programs",
    ):
        self.bar: Any = None
        if not enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:  # pragma: no cover - a declared dependency; progress is optional
            return
        self.bar = tqdm(
            total=total,
            desc=what,
            unit=f" {unit}",
            file=stream or sys.stderr,
            mininterval=interval,
            dynamic_ncols=True,
            leave=True,
            position=0,  # one line, even when an earlier bar in this process was left open
        )
        self.bar.set_postfix_str("failures 0", refresh=False)

    def __call__(self, n: int, seconds: float, failures: int = 0) -> None:
        if self.bar is None:
            return
        self.failures(failures)
        self.bar.update(n - self.bar.n)

    def failures(self, k: int) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"failures {k}", refresh=False)

    def done(self, failures: int = 0) -> None:
        if self.bar is not None:
            self.failures(failures)
            self.bar.close()
            self.bar = None


def _print_failure(out: Any) -> None:
    f = out.failure
    print(f"{out.mode} fuzz FAILED (seed {f.seed}):")
    if f.text is not None:
        print(f.text, end="" if f.text.endswith("\n") else "\n")
    print(f.error)
    print(f"replay: {f.replay}")
    for p in out.saved:
        print(f"saved: {p}")


def _replay(path: str) -> int:
    """``tirx fuzz --replay FILE.json``: rerun a saved kernel failure on its recorded input."""
    import json
    from pathlib import Path

    from tirx.testing.campaign import replay_failure

    check = None
    mode = None
    with contextlib.suppress(OSError, ValueError, AttributeError):  # replay_failure says what is wrong
        mode = json.loads(Path(path).read_bytes()).get("mode")
    if mode == "semantic":  # the campaign's check is a lambda over these checks
        check = importlib.import_module("tirx.testing.semantic_fuzz").check_runnable
        passes = _recorded_passes(path)
        if isinstance(passes, int):
            return passes
        if passes is not None:  # `tirx fuzz --semantic --passes P`: rebuild that pipeline
            check = passes
    if mode == "cuda":
        from tirx.tools import fuzzing

        why = fuzzing.gpu_unavailable()
        if why:
            _err(f"error: replaying a --cuda failure needs a CUDA GPU: {why}")
            return 2
    try:
        rec = replay_failure(path, check)
    except ValueError as e:
        _err(f"error: {e}")
        return 2
    except Exception as e:  # the check failed again: the failure reproduces
        why = str(e) if isinstance(e, AssertionError) else f"{type(e).__name__}: {e}"
        print(f"replay {path}: FAILED again:\n{why}")
        return 1
    print(f"replay {path}: passes now (it was recorded failing with: {rec.get('error', '?')})")
    return 0


def _recorded_passes(path: str) -> Any:
    """For a ``--semantic --passes`` failure record: its check, with the recorded plugins
    imported and the recorded pipeline built; None for a record of the built-in passes; 2
    (after the message) when the plugins or the pipeline cannot be had."""
    import json
    from pathlib import Path

    try:
        rec = json.loads(Path(path).read_bytes())
    except (OSError, ValueError):
        return None  # replay_failure says what is wrong with the record
    passes = rec.get("passes") if isinstance(rec, dict) else None
    if not isinstance(passes, str):
        return None
    plugins = [p for p in rec.get("plugins") or () if isinstance(p, str)]
    pipeline = _plugins_and_pipeline(argparse.Namespace(plugin=plugins, passes=passes), "fuzz --replay")
    if isinstance(pipeline, int):
        return pipeline
    from tirx.tools import fuzzing

    return fuzzing.semantic_pipeline_check(pipeline, passes)


def cmd_fuzz(args: argparse.Namespace) -> int:
    if getattr(args, "replay", None) is not None:
        return _replay(args.replay)
    try:
        from tirx.tools import fuzzing
    except ImportError as e:
        _err(f"error: tirx fuzz needs hypothesis and tirx.testing.strategies ({e})")
        return 2
    fz = None
    if args.semantic:
        try:
            fz = importlib.import_module("tirx.testing.semantic_fuzz")
            fz.semantic_strategy  # noqa: B018 - probe: the interpreter provides the properties
        except (ImportError, AttributeError) as e:
            _err(f"error: tirx fuzz --semantic is not available yet ({e})")
            return 2
    if args.passes is not None and (args.mutate or args.cuda or args.frontend or args.ptx):
        _err(
            "tirx fuzz: error: --passes runs with the round-trip and --semantic campaigns "
            "(not --mutate, --cuda, --ptx or --frontend)"
        )
        return 2
    why = fuzzing.gpu_unavailable() if args.cuda else None
    if why:
        _err(f"error: tirx fuzz --cuda needs a CUDA GPU: {why}")
        return 2
    problems: Callable[[Any], list[str]] = roundtrip_problems
    replay = ""
    if args.passes is not None:
        pipeline = _plugins_and_pipeline(args, "fuzz")
        if isinstance(pipeline, int):
            return pipeline
        problems = fuzzing.pipeline_problems(pipeline)  # --semantic builds its own check
        plugins = "".join(f" --plugin {shlex.quote(p)}" for p in args.plugin or ())
        replay = f"--passes {shlex.quote(args.passes)}{plugins}"
    seed = fuzzing.fresh_seed() if args.seed is None else args.seed
    examples = args.examples if args.examples is not None else (None if args.time else 100)
    mode = (
        "mutate"
        if args.mutate
        else "semantic"
        if args.semantic
        else "cuda"
        if args.cuda
        else "frontend"
        if args.frontend
        else "ptx"
        if args.ptx
        else ""
    )
    prog = _Progress(
        {"mutate": "mutate", "": "fuzz"}.get(mode, f"{mode} fuzz"),
        total=examples,
        enabled=not args.no_progress,
        unit={"mutate": "inputs", "": "programs"}.get(mode, "kernels"),
    )
    try:
        return _fuzz(args, fuzzing, fz, seed, examples, prog, problems, replay)
    finally:
        prog.done()  # an interrupted run still ends its progress line


def _fuzz(
    args: argparse.Namespace,
    fuzzing: Any,
    fz: Any,
    seed: int,
    examples: int | None,
    prog: _Progress,
    problems: Any,
    replay: str,
) -> int:
    save = None if args.no_save else args.save
    if args.mutate:
        from tirx.tools import mutate

        rep = mutate.run_mutate(
            seed=seed,
            examples=examples,
            time_budget=args.time,
            save_dir=save,
            input_timeout=args.input_timeout,
            corpus=args.corpus,
            max_reduce_time=args.max_shrink_time,
            on_progress=prog,
        )
        prog.done(sum(g.count for g in rep.groups.values()))
        print(rep.summary())
        for line in rep.failure_lines():
            print(line)
        return 0 if rep.ok else 1
    common = {
        "seed": seed,
        "examples": examples,
        "time_budget": args.time,
        "max_shrink_time": args.max_shrink_time,
        "save_dir": save,
        "on_progress": prog,
    }
    if args.cuda:
        out = fuzzing.run_cuda(**common)
        what = "kernels, CUDA against the interpreter"
    elif args.ptx:
        out = fuzzing.run_ptx(**common)
        what = "kernels, PTX without non-coherent loads of written memory"
    elif args.frontend:
        out = fuzzing.run_frontend(**common)
        what = "frontend kernels, comparisons against Python"
    elif fz is not None and args.passes is not None:
        out = fuzzing.run_semantic(**common, passes=args.passes, plugins=args.plugin or ())
        what = f"kernels, passes {args.passes} against the interpreter"
    elif fz is not None:
        out = fuzzing.run_semantic(**common)
        checks = ", ".join(n for n, _ in fz.semantic_checks())
        what = f"kernels, checks {checks}"
    else:
        out = fuzzing.run_roundtrip(**common, problems=problems, replay_args=replay)
        what = "programs"
    prog.done(0 if out.ok else 1)
    head = f"{out.mode} fuzz: {out.examples} {what} in {out.seconds:.1f} s ({out.rate:.1f}/s), seed {seed}"
    if out.ok:
        tail = "all round-trip invariants hold" if out.mode == "roundtrip" else "ok"
        print(f"{head}: {tail}")
        return 0
    print(f"{head}: FAIL")
    _print_failure(out)
    return 1


# ------------------------------------------------------------------ passes / opt
_PLUGINS: dict[str, str] = {}  # real path of each imported plugin -> the path as given


def _load_plugins(paths: list[str] | None) -> int:
    """Import each plugin file (Python that registers passes with tirx.passes.register_pass);
    2 when one cannot be imported."""
    import importlib.util

    for path in paths or ():
        if not os.path.isfile(path):
            what = "not a regular file" if os.path.exists(path) else "no such plugin file"
            _err(f"tirx: error: {what}: {path}")
            return 2
        key = os.path.realpath(path)
        if key in _PLUGINS:  # imported once per process
            continue
        _PLUGINS[key] = path
        spec = importlib.util.spec_from_file_location(f"tirx_plugin_{len(_PLUGINS)}", path)
        if spec is None or spec.loader is None:
            _err(f"tirx: error: plugin {path} cannot be imported (not a Python file?)")
            return 2
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)  # the user's own code, asked for by --plugin
        except Exception as e:
            _err(f"tirx: error: plugin {path} failed to import: {type(e).__name__}: {e}")
            return 2
    return 0


def cmd_passes(args: argparse.Namespace) -> int:
    from tirx.passes import registered_passes

    rc = _load_plugins(args.plugin)
    if rc:
        return rc
    for name, info in registered_passes().items():
        opts = " ".join(f"{k}={json_like(v)}" for k, v in info.options.items())
        print(f"{name}" + (f"{{{opts}}}" if opts else ""))
        if info.doc:
            print(f"    {info.doc}")
    return 0


def cmd_cache(args: argparse.Namespace) -> int:
    """``tirx cache dir|info|clear [--ready]``: where the disk cache is, what it holds, emptying it."""
    from tirx import fileio
    from tirx.runtime import cache

    if args.action == "dir":
        d = cache.cache_dir()
        print(
            d
            if d is not None
            else "(the disk cache is off: TIRX_DISABLE_DISK_CACHE or an empty TIRX_CACHE_DIR)"
        )
        return 0
    try:
        if args.action == "info":
            got = cache.listing()
            if got["dir"] is None:
                print("the disk cache is off (TIRX_DISABLE_DISK_CACHE or an empty TIRX_CACHE_DIR)")
                return 0
            print(f"{got['dir']}: {got['entries']} entries, {got['bytes'] / 2**20:.1f} MiB "
                  f"({got['ready']} ready records, {got['entries'] - got['ready']} compiled binaries)"
                  + (f"; {got['other']} other names left alone" if got["other"] else ""))  # fmt: skip
            return 0
        n, size = cache.clear(ready_only=args.ready)
    except fileio.Untrusted as e:
        _err(f"tirx cache: error: not using the disk cache: {e}")
        return 1
    what = "ready records" if args.ready else "entries"
    print(f"removed {n} {what} ({size / 2**20:.1f} MiB)")
    return 0


def json_like(v: Any) -> str:
    """An option default as a pipeline string writes it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, str) else str(v)


def _plugins_and_pipeline(args: argparse.Namespace, cmd: str) -> Any:
    """``--plugin`` files loaded, then the ``--passes``/``-p`` pipeline built; an exit code
    (the error already printed) when either fails."""
    from tirx.passes import build_pipeline

    rc = _load_plugins(args.plugin)
    if rc:
        return rc
    try:
        return build_pipeline(args.passes)
    except (ValueError, TypeError) as e:
        _err(f"tirx {cmd}: error: {e}")
        return 2


def _opt_destinations(args: argparse.Namespace) -> list[str | None] | None:
    """Where each input's result goes (None: stdout); None after reporting that two inputs
    would be written to the same file (``a/k.tirx b/k.tirx -o out``: one would be lost)."""
    if args.output is None:
        return [None] * len(args.files)
    if not os.path.isdir(args.output):
        return [args.output]  # one input (checked before)
    dests: list[str | None] = []
    seen: dict[str, str] = {}
    for path in args.files:
        dest = os.path.join(args.output, os.path.basename(path) if path != "-" else "stdin.tirx")
        key = os.path.normcase(os.path.abspath(dest))
        if key in seen:
            _err(
                f"tirx opt: error: {_name(seen[key])} and {_name(path)} would both be written to {dest} "
                "(one result would be lost): give the inputs different names, or run tirx opt once per folder"
            )
            return None
        seen[key] = path
        dests.append(dest)
    return dests


def _plugin_frame(e: BaseException) -> str | None:
    """``plugin.py:LINE`` of the deepest traceback frame inside a ``--plugin`` file, if any."""
    where = None
    tb = e.__traceback__
    while tb is not None:
        given = _PLUGINS.get(os.path.realpath(tb.tb_frame.f_code.co_filename))
        if given is not None:
            where = f"{given}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where


def _run_pipeline(pipeline: Any, names: list[str], obj: Any, instruments: list[Any], path: str) -> Any:
    """``pipeline(obj)``; an exception raised inside a plugin's code is the plugin's bug, not
    tirx's: it becomes ``_Failed`` naming the pass and the plugin's file and line."""
    import tirx
    from tirx.passes import PassContext, PassInstrument

    class Running(PassInstrument):
        """The passes running now (outermost first): which one raised."""

        def __init__(self) -> None:
            self.stack: list[Any] = []

        def run_before_pass(self, pass_: Any, ir: Any) -> None:
            self.stack.append(pass_)

        def run_after_pass(self, pass_: Any, before: Any, after: Any) -> None:
            self.stack.pop()

    running = Running()
    try:
        with PassContext(instruments=[running, *instruments]):
            return pipeline(obj)
    except Exception as e:
        where = None if isinstance(e, (tirx.DiagnosticError, RecursionError)) else _plugin_frame(e)
        if where is None:
            raise
        if os.environ.get(_TRACEBACK_ENV, "") not in ("", "0"):
            import traceback

            traceback.print_exc()
        top = [i for p in running.stack for i, q in enumerate(pipeline.passes) if q is p]
        name = names[top[0]] if top else getattr(running.stack[-1] if running.stack else None, "name", "?")
        raise _Failed(
            f"error: pass {name!r} ({where}) raised {type(e).__name__}: {e} (on {_name(path)})"
        ) from e


def _add_print_arguments(p: argparse.ArgumentParser) -> None:
    """The IR-printing options of ``tirx opt`` and ``tirx compile`` (mlir-opt's / LLVM's)."""
    g = p.add_argument_group(
        "printing the IR around passes (to stderr; PASS is a pipeline name: tirx passes; for tirx compile, "
        "a stage: vectorize-threads, lower-layouts, launch-thread-entries, codegen (CUDA), nvrtc (PTX), load)"
    )
    g.add_argument("--print-after-all", action="store_true", help="print the IR after each pass")
    g.add_argument("--print-before-all", action="store_true", help="print the IR before each pass")
    g.add_argument(
        "--print-after",
        action="append",
        default=[],
        metavar="PASS[,PASS]",
        help="print the IR after these passes (repeatable)",
    )
    g.add_argument(
        "--print-before",
        action="append",
        default=[],
        metavar="PASS[,PASS]",
        help="print the IR before these passes (repeatable)",
    )
    g.add_argument(
        "--print-changed",
        action="store_true",
        help="print the IR after each pass (or each --print-after pass) only when it changed it",
    )
    g.add_argument(
        "--print-diff",
        action="store_true",
        help="print a unified diff of the IR before/after each pass (or each --print-after/--print-before pass)",
    )


def _print_names(values: list[str]) -> list[str]:
    return [n.strip() for v in values for n in v.split(",") if n.strip()]


def _print_instruments(
    args: argparse.Namespace, cmd: str, ran: list[str] | None = None, stages: list[str] | None = None
) -> list[Any] | int:
    """The ``PrintIR`` instrument the printing options ask for ([] for none), labelling
    passes by their pipeline names; 2 (after the message) for an unknown pass name, with the
    closest names. ``ran``: the names the pipeline runs (a printing name it does not run
    gets a warning). ``stages``: the names allowed instead of the registered passes (``tirx
    compile``: its pipeline's stages)."""
    from tirx.passes import PrintIR
    from tirx.passes.registry import check_pass_names, pass_label

    after, before = _print_names(args.print_after), _print_names(args.print_before)
    word = "pass" if stages is None else "stage"
    try:
        check_pass_names(after, f"{word} in --print-after:", stages)
        check_pass_names(before, f"{word} in --print-before:", stages)
    except ValueError as e:
        _err(f"tirx {cmd}: error: {e}")
        return 2
    if ran is not None:
        for flag, names in (("--print-after", after), ("--print-before", before)):
            idle = [n for n in names if n not in ran]
            if idle:
                _err(f"tirx {cmd}: warning: {flag} names {', '.join(idle)}, which the pipeline does not run")
    if args.print_diff:
        named = after + before
        return [
            PrintIR(stream=sys.stderr, only=named or None, changed_only=args.print_changed, label=pass_label)
        ]
    after_set: list[str] | None = None if args.print_after_all else after
    if not args.print_after_all and not after and args.print_changed:
        after_set = None  # --print-changed alone: after every pass that changed the IR
    before_set: list[str] | None = None if args.print_before_all else before
    if after_set == [] and before_set == []:
        return []
    return [
        PrintIR(
            diff=False,
            stream=sys.stderr,
            before=before_set,
            after=after_set,
            changed_only=args.print_changed,
            label=pass_label,
        )
    ]


def cmd_opt(args: argparse.Namespace) -> int:
    import tirx
    from tirx.passes import PassTiming, VerifyAfterEach, parse_pipeline
    from tirx.passes.verify import raise_errors, verify_well_formed

    pipeline = _plugins_and_pipeline(args, "opt")
    if isinstance(pipeline, int):
        return pipeline
    names = [n for n, _ in parse_pipeline(args.passes)]
    if args.output and len(args.files) > 1 and not os.path.isdir(args.output):
        _err("tirx opt: error: with several files, -o must name an existing directory")
        return 2
    dests = _opt_destinations(args)
    if dests is None:
        return 2
    files = _Files()
    printing = _print_instruments(args, "opt", names)
    if isinstance(printing, int):
        return printing
    timing = PassTiming() if args.timing else None
    instruments: list[Any] = [i for i in (timing,) if i is not None]
    instruments += printing
    if not args.no_verify:  # as mlir-opt: the input and every pass's output are verified
        instruments.append(VerifyAfterEach())
    outs = []
    for path, dest in zip(args.files, dests):
        with files.guard(path):
            obj, text = _load_file(path)
            if not args.no_verify and (errors := verify_well_formed(obj)):
                raise_errors(errors, "the input is not well-formed", text, _name(path))
            out = _run_pipeline(pipeline, names, obj, instruments, path)
            outs.append((dest, tirx.dumps(out)))
    for dest, text in outs:  # every input read before any output is written (-o may be one)
        if dest is None:
            sys.stdout.write(text)
        else:
            with files.guard(dest):
                _write(dest, text)
    if timing is not None:
        _err("pass                           total")
        for name, t in timing.totals().items():
            _err(f"{name:<28} {t * 1e3:9.3f} ms")
    return 1 if files.failed else 0


# ------------------------------------------------------------------ filecheck
def run_captured(argv: Sequence[str], merge_stderr: bool = False) -> tuple[int, str, str]:
    """Run ``tirx ARGS`` (``argv[0]`` is ``tirx``) in this process with stdout and stderr
    captured (one buffer for both when ``merge_stderr``) and an empty stdin:
    ``(exit code, stdout, stderr)``. The in-process executor of ``tirx filecheck`` (and of
    ``tirx.testing.filecheck.check_file(path, execute=run_captured)`` in tests)."""
    import io

    out = io.StringIO()
    err = out if merge_stderr else io.StringIO()
    saved = sys.stdin, list(_error_file)
    sys.stdin = io.StringIO("")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(list(argv[1:]))
    finally:
        sys.stdin = saved[0]
        _error_file[:] = saved[1]
    return rc, out.getvalue(), "" if merge_stderr else err.getvalue()


def _filecheck_tests(paths: list[str]) -> list[str] | int:
    """The test files: each FILE, and under each folder every ``*.tirx`` with a ``RUN:`` line
    (sorted); 2 (after the message) for a path that does not exist."""
    out: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found = []
            for root, dirs, names in os.walk(path):
                dirs.sort()
                for n in sorted(names):
                    full = os.path.join(root, n)
                    if n.endswith(".tirx") and _has_run_line(full):
                        found.append(full)
            if not found:
                _err(f"tirx filecheck: error: no .tirx file with a RUN: line under {path}")
                return 2
            out += found
        elif os.path.exists(path):
            out.append(path)
        else:
            _err(f"tirx filecheck: error: no such file: {path}")
            return 2
    return out


def _has_run_line(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return any("RUN:" in line for line in f)
    except OSError:
        return True  # check_file reports it


def cmd_filecheck(args: argparse.Namespace) -> int:
    from tirx.testing import filecheck as fc

    prefixes = [p for v in args.check_prefix or () for p in v.split(",") if p] or None
    if args.input is not None:  # LLVM's `FileCheck CHECKS < input`: no RUN lines run
        if len(args.files) != 1:
            _err("tirx filecheck: error: --input checks one text against the directives of one FILE")
            return 2
        files = _Files()
        with files.guard(args.input):
            text = _read(args.input)
            checks = _read(args.files[0])
            try:
                fc.match(
                    text,
                    checks,
                    path=args.files[0],
                    prefixes=prefixes or ("CHECK",),
                    output_name=_name(args.input),
                )
            except fc.FileCheckError as e:
                _err(str(e))
                return 1
            except ValueError as e:
                _err(f"tirx filecheck: error: {e}")
                return 2
        return 1 if files.failed else 0
    tests = _filecheck_tests(args.files)
    if isinstance(tests, int):
        return tests

    def report(path: str, error: Exception | None) -> None:
        if error is not None:
            _err(str(error))
        elif not args.quiet:
            print(f"{path}: ok")

    try:
        failed = fc.run_files(tests, execute=run_captured, prefixes=prefixes, report=report)
    except ValueError as e:  # a bad --check-prefix
        _err(f"tirx filecheck: error: {e}")
        return 2
    if failed:
        _err(f"{failed} of {len(tests)} test(s) failed")
    return 1 if failed else 0


# ------------------------------------------------------------------ compile
class _StagePrinter:
    """``tirx compile``'s printing options as a pipeline observer (``tirx.pipeline.observe``): a
    stage's IR input or output goes through the ``PrintIR`` instruments (as a pass named after
    the stage: ``# IR after lower-layouts``, diffs, ``--print-changed``); ``codegen``'s CUDA,
    ``nvrtc``'s PTX and ``load``'s kernel are printed as text (``# CUDA after codegen``)."""

    _WHAT = {"cuda": "CUDA", "ptx": "PTX", "kernel": "kernel"}

    def __init__(self, printing: list[Any], args: argparse.Namespace) -> None:
        self.printing = printing
        self.after_names = None if args.print_after_all else set(_print_names(args.print_after))
        self.before_names = None if args.print_before_all else set(_print_names(args.print_before))
        self._ir: Any = None

    @staticmethod
    def _as_pass(name: str) -> Any:
        from tirx.passes import Pass

        p = Pass()
        p.name = name
        return p

    def _text(self, names: set | None, when: str, stage: Any, kind: str, c: Any) -> None:
        from tirx.pipeline import stage_text

        if names is None or stage.name in names:
            sys.stderr.write(f"# {self._WHAT[kind]} {when} {stage.name}\n{stage_text(c, kind)}")

    def before(self, stage: Any, c: Any) -> None:
        self._ir = c.ir
        if stage.input == "ir":
            for ins in self.printing:
                ins.run_before_pass(self._as_pass(stage.name), c.ir)
        else:
            self._text(self.before_names, "before", stage, stage.input, c)

    def after(self, stage: Any, c: Any) -> None:
        if stage.output == "ir":
            for ins in self.printing:
                ins.run_after_pass(self._as_pass(stage.name), self._ir, c.ir)
        else:
            self._text(self.after_names, "after", stage, stage.output, c)


def cmd_compile(args: argparse.Namespace, extra: list[str]) -> int:
    import tirx
    from tirx.pipeline import observe, stage_names
    from tirx.target_spec import parse_target

    target = " ".join([args.target, *extra]).strip()
    try:
        kind = parse_target(target).kind
    except (ValueError, TypeError):
        kind = "cuda"  # tirx.compile reports the target
    printing = _print_instruments(args, "compile", stages=stage_names(kind))
    if isinstance(printing, int):
        return printing
    files = _Files()
    k = None
    with files.guard(args.file):
        obj, _ = _load_file(args.file)
        try:
            with observe(_StagePrinter(printing, args)):  # --print-after=STAGE & co.
                k = tirx.compile(obj, target=target)
        except ImportError as e:
            _err(f"error: compiling for {target!r} is not available: {e}")
            return 1
        except (ValueError, TypeError) as e:
            _err(f"error: cannot compile {args.file} for {target!r}: {e}")
            return 1
        except RuntimeError as e:
            if isinstance(e, (tirx.DiagnosticError, RecursionError)):
                raise  # the guard prints these
            _err(f"error: cannot compile {args.file} for {target!r}: {e}")
            return 1
    if files.failed or k is None:
        return 1
    if args.sass:
        return _print_sass(k, args.output)
    what = "ptx" if args.ptx else "cubin" if args.cubin else "source"
    out = getattr(k, what, None)
    if out is None:
        _err(f"error: the {target!r} target produced no {what}")
        return 1
    if args.output is not None:
        with files.guard(args.output):
            _write(args.output, out)
        return 1 if files.failed else 0
    if isinstance(out, (bytes, bytearray)):
        _err("tirx compile: error: --cubin is binary: write it to a file with -o")
        return 2
    print(out, end="" if str(out).endswith("\n") else "\n")
    return 0


def find_nvdisasm() -> str | None:
    """``nvdisasm`` on PATH, or the one NVIDIA's ``nvidia-cuda-nvdisasm`` wheel installs."""
    import importlib.util
    import shutil

    found = shutil.which("nvdisasm")
    if found:
        return found
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        cand = os.path.join(root, "cu13", "bin", "nvdisasm")
        if os.access(cand, os.X_OK):
            return cand
    return None


def _print_sass(k: Any, output: str | None) -> int:
    """``--sass``: the cubin disassembled by nvdisasm (the toolchain's, when it has one)."""
    import subprocess
    import tempfile

    tool = find_nvdisasm()
    if tool is None:
        _err(
            "error: --sass needs nvdisasm: install NVIDIA's wheel (pip install nvidia-cuda-nvdisasm, "
            "part of tirx's [cuda] extra) or put the CUDA toolkit's bin folder on PATH"
        )
        return 1
    cubin = getattr(k, "cubin", None)
    if not cubin:
        _err("error: this target produced no cubin to disassemble")
        return 1
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        r = subprocess.run([tool, path], capture_output=True, text=True)
    if r.returncode != 0:
        _err(f"error: nvdisasm failed ({r.returncode}): {r.stderr.strip()}")
        return 1
    if output is not None:
        files = _Files()
        with files.guard(output):
            _write(output, r.stdout)
        return 1 if files.failed else 0
    print(r.stdout, end="")
    return 0


# ------------------------------------------------------------------ parser
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tirx",
        description="tirx: .tirx text tools (format, check, round-trip, fuzz, pass pipelines, compile, FileCheck tests).",
    )
    p.add_argument("--version", action="version", version=f"tirx {_version()}")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")

    f = sub.add_parser(
        "fmt",
        help="lay out .tirx files (whitespace only; --canonical: TIRx's print), keeping comments",
        description="Re-indent, re-space and wrap each file at the line length, changing only whitespace: "
        "every token and comment stays as written (docs/fmt.md); the result must load to the same IR and "
        "be stable, else the file is refused and left as it was. --canonical rewrites each file as "
        "tirx.dumps(tirx.load(FILE, keep_comments=True)) instead. Directories recurse into *.tirx, - reads "
        "stdin and writes stdout. A missing final newline alone counts as formatted.",
    )
    from tirx.tools.fmt import add_arguments as _fmt_arguments

    _fmt_arguments(f)

    c = sub.add_parser(
        "check",
        help="parse and verify .tirx files",
        description="Load each FILE ('-' for stdin) and run the well-formedness checks; diagnostics go to "
        "stderr, exit 1 on any error.",
    )
    c.add_argument("files", nargs="+", metavar="FILE")
    c.add_argument("-q", "--quiet", action="store_true", help="print nothing for files that pass")

    r = sub.add_parser(
        "roundtrip",
        help="check the text invariants per file",
        description="For each FILE x ('-' for stdin): structural_equal(loads(dumps(x)), x); "
        "dumps(loads(dumps(x))) == dumps(x); equal implies equal structural_hash.",
    )
    r.add_argument("files", nargs="+", metavar="FILE")

    z = sub.add_parser(
        "fuzz",
        help="round-trip / semantic / mutation campaigns on generated programs",
        description=(
            "Run the round-trip invariants on programs from tirx.testing.strategies (default), the "
            "passes against the interpreter (--semantic), the CUDA backend against the interpreter on a "
            "GPU (--cuda), or the whole pipeline on mutated .tirx text (--mutate). Prints one summary line, and for a failure the shrunk program, the error and "
            "the command that replays it; failures are saved under --save DIR. Exit 1 on a failure."
        ),
    )
    z.add_argument(
        "--examples",
        "-n",
        type=int,
        default=None,
        metavar="N",
        help="number of generated programs (default 100; with --time: no limit)",
    )
    z.add_argument(
        "--time",
        "-t",
        type=float,
        default=None,
        metavar="SECONDS",
        help="run as many programs as fit in SECONDS (shrinking a failure may add --max-shrink-time)",
    )
    z.add_argument(
        "--seed", "-s", type=int, default=None, metavar="S", help="random seed (default: a new one, printed)"
    )
    z.add_argument(
        "--max-shrink-time",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="stop shrinking a failure after SECONDS and report the smallest so far (default 30)",
    )
    z.add_argument(
        "--save",
        default="fuzz-failures",
        metavar="DIR",
        help="write each failure here: a .tirx reproducer and a .json with seed, replay command and error "
        "(default fuzz-failures/; created only on a failure)",
    )
    z.add_argument("--no-save", action="store_true", help="do not write failure files")
    z.add_argument(
        "--no-progress", action="store_true", help="no progress line on stderr (the summary still prints)"
    )
    z.add_argument(
        "--passes",
        "-p",
        default=None,
        metavar="PIPELINE",
        help="also run this pass pipeline (as `tirx opt -p`) on each program: it must not raise, and its "
        "output must be well-formed and round-trip; with --semantic, instead of the built-in passes: the "
        "interpreter's results before and after it must be the same",
    )
    z.add_argument("--plugin", action="append", metavar="PY", help="a Python file that registers passes")
    mode = z.add_mutually_exclusive_group()
    mode.add_argument(
        "--semantic",
        action="store_true",
        help="compare interpreter results before/after passes and round trips (needs tirx.interp)",
    )
    mode.add_argument(
        "--cuda",
        action="store_true",
        help="compile random kernels for the GPU and compare them with the interpreter, bit for bit "
        "(needs a CUDA GPU and the [cuda] extra)",
    )
    mode.add_argument(
        "--ptx",
        action="store_true",
        help="compile random kernels with NVRTC and check their PTX: no non-coherent load "
        "(ld.global.nc) of memory the kernel writes (no GPU needed)",
    )
    mode.add_argument(
        "--frontend",
        action="store_true",
        help="build generated Python-frontend kernels with comparisons (==, in / not in, helpers) and "
        "check every branch on the interpreter against Python",
    )
    mode.add_argument(
        "--mutate",
        action="store_true",
        help="mutate .tirx texts and run loads/dumps/equal/hash/verify/compile on each, in a worker process",
    )
    mode.add_argument(
        "--replay",
        default=None,
        metavar="FILE.json",
        help="rerun a saved kernel failure (--cuda, --semantic) on exactly its recorded kernel and inputs; "
        "exit 1 if it fails again",
    )
    z.add_argument(
        "--corpus",
        nargs="+",
        default=None,
        metavar="PATH",
        help="--mutate: .tirx files or folders to mutate (default: the repository's tests/data and "
        "examples, plus printed generated programs)",
    )
    z.add_argument(
        "--input-timeout",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="--mutate: an input whose pipeline runs longer is a failure (default 1)",
    )

    k = sub.add_parser(
        "compile",
        help="print the generated CUDA for a .tirx file",
        description="Compile FILE ('-' for stdin) with tirx.compile and print the generated source, or write "
        "it with -o (atomically). Example: tirx compile k.tirx --target cuda -arch=sm_90a",
    )
    k.add_argument("file", metavar="FILE")
    k.add_argument(
        "--target", default="cuda", help="target string, e.g. 'cuda' or 'cuda -arch=sm_90a' (default cuda)"
    )
    k.add_argument("-o", "--output", default=None, metavar="OUT", help="write to OUT instead of stdout")
    kind = k.add_mutually_exclusive_group()
    kind.add_argument("--ptx", action="store_true", help="the PTX NVRTC produced, not the CUDA source")
    kind.add_argument("--cubin", action="store_true", help="the cubin (binary: needs -o)")
    kind.add_argument("--sass", action="store_true", help="the cubin's SASS (nvdisasm)")
    _add_print_arguments(k)

    o = sub.add_parser(
        "opt",
        help="run a pass pipeline over .tirx files",
        description=(
            "Load each FILE ('-' for stdin), run the passes named by --passes (mlir-opt style: "
            "'convert-ssa,cse,verify{require_ssa=true}'; `tirx passes` lists names and options) and "
            "print the result, or write it with -o (atomically: a failed write leaves the old file). The "
            "input and each pass's output are verified (--no-verify: not); with -o DIR, two inputs of the "
            "same name are a usage error."
        ),
    )
    o.add_argument("files", nargs="+", metavar="FILE")
    o.add_argument("--passes", "-p", required=True, metavar="PIPELINE", help="comma-separated pass names")
    o.add_argument(
        "-o", "--output", default=None, metavar="OUT", help="output file (a directory for several)"
    )
    _add_print_arguments(o)
    verify = o.add_mutually_exclusive_group()
    verify.add_argument(
        "--verify-each",
        action="store_true",
        help="check well-formedness of the input and after each pass (the default)",
    )
    verify.add_argument(
        "--no-verify",
        action="store_true",
        help="do not verify: write the passes' output even when it is not well-formed",
    )
    o.add_argument("--timing", action="store_true", help="per-pass time totals on stderr")
    o.add_argument("--plugin", action="append", metavar="PY", help="a Python file that registers passes")

    fcp = sub.add_parser(
        "filecheck",
        help="run FileCheck-style pass tests (# RUN: / # CHECK: lines in .tirx files)",
        description="Run each test FILE's '# RUN: tirx ...' lines (%s is the file) and match each output "
        "against its '# CHECK:' / CHECK-NEXT / CHECK-SAME / CHECK-NOT / CHECK-LABEL / CHECK-EMPTY lines, "
        "as LLVM's FileCheck does (docs/testing.md). A folder means every *.tirx below it with a RUN: line. "
        "A failure names the directive's file:line:col, where the search started and the closest output "
        "line; exit 1 when a test fails.",
    )
    fcp.add_argument("files", nargs="+", metavar="FILE", help="test files or folders")
    fcp.add_argument(
        "--check-prefix",
        "--check-prefixes",
        action="append",
        metavar="PREFIX[,PREFIX]",
        help="match these directives instead of each RUN line's (default CHECK)",
    )
    fcp.add_argument(
        "--input",
        metavar="PATH",
        default=None,
        help="run no RUN lines: match the text of PATH ('-' for stdin) against FILE's directives",
    )
    fcp.add_argument("-q", "--quiet", action="store_true", help="print nothing for tests that pass")

    ps = sub.add_parser("passes", help="list the registered passes and their options")
    ps.add_argument("--plugin", action="append", metavar="PY", help="a Python file that registers passes")

    cc = sub.add_parser(
        "cache",
        help="the disk cache: its directory, what it holds, emptying it",
        description="dir: print the disk cache's directory; info: count its entries (compiled binaries "
        "and ready records, docs/cuda.md) and their size; clear: remove them (--ready: the ready "
        "records alone, so the next process rebuilds its kernels from the compiled binaries). Only "
        "<key>.tirxbin files of the current user are removed.",
    )
    cc.add_argument("action", choices=("dir", "info", "clear"))
    cc.add_argument("--ready", action="store_true", help="clear: the ready records alone")

    sub.add_parser("demo", help="run the demo (tirx.tools.demo)", add_help=False)
    return p


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("tirx-toolkit")
    except Exception:  # not installed as a distribution
        return "unknown"


def _quiet_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the interpreter's final flush is silent."""
    with contextlib.suppress(Exception):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _internal_error(e: BaseException) -> None:
    where = f" while processing {_error_file[-1]}" if _error_file else ""
    _err(
        f"internal error{where}: {type(e).__name__}: {e}\n"
        f"This is a bug in tirx; please report it (set {_TRACEBACK_ENV}=1 to see the traceback)."
    )


def main(argv: Sequence[str] | None = None) -> int:
    """The ``tirx`` entry point. Never lets a Python traceback out: every error becomes a
    diagnostic and exit code 1 (2 for usage errors, 130 for Ctrl-C); ``TIRX_TRACEBACK=1``
    adds the traceback of unexpected errors."""
    show_tb = os.environ.get(_TRACEBACK_ENV, "") not in ("", "0")
    _error_file.clear()
    try:
        rc = _main(argv)
        sys.stdout.flush()
        return rc
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except BrokenPipeError:  # `tirx compile k.tirx | head`: the reader left; exit quietly
        _quiet_stdout()
        return 1
    except Exception as e:
        if show_tb:
            import traceback

            traceback.print_exc()
        try:
            from tirx.errors import DiagnosticError as _Diag

            diag: tuple[type, ...] = (_Diag,)
        except Exception:  # a broken install: report e itself
            diag = ()
        if isinstance(e, diag):
            _err(_all_diagnostics(e))
        elif isinstance(e, OSError):
            _err(_os_message(e))
        elif isinstance(e, UnicodeEncodeError):
            enc = getattr(sys.stdout, "encoding", "?")
            _err(
                f"error: cannot write this output in the terminal's encoding ({enc}); set PYTHONIOENCODING=utf-8"
            )
        elif isinstance(e, RecursionError):
            _err(f"error: {_DEEP}")
        elif isinstance(e, MemoryError):
            _err("error: out of memory")
        else:
            _internal_error(e)
        return 1
    finally:
        _error_file.clear()


def _check_paths(args: argparse.Namespace) -> int:
    """2 (a usage error) when a FILE argument is missing or is a directory; ``fmt`` takes
    directories and globs (tools/fmt.py checks its own)."""
    if args.cmd in ("fmt", "filecheck"):  # folders welcome: they check their own paths
        return 0
    paths = [args.file] if args.cmd == "compile" else getattr(args, "files", None) or []
    if paths.count("-") > 1:
        _err(f"tirx {args.cmd}: error: - (stdin) is given more than once; it can be read once")
        return 2
    for path in paths:
        if path == "-":
            continue
        if not os.path.exists(path):
            _err(f"tirx {args.cmd}: error: no such file: {path}")
            return 2
        if os.path.isdir(path):
            _err(f"tirx {args.cmd}: error: {path} is a directory (give .tirx files)")
            return 2
    return 0


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "demo":
        try:
            demo = importlib.import_module("tirx.tools.demo")
        except ImportError:
            _err("error: tirx demo is not available (no tirx.tools.demo)")
            return 2
        rc = demo.main(*([argv[1:]] if argv[1:] else []))
        return int(rc or 0)
    p = _parser()
    try:
        args, extra = p.parse_known_args(argv)
    except SystemExit as e:  # argparse: --help (0) or a usage error (2)
        return int(e.code or 0) if isinstance(e.code, int) else 2
    if args.cmd is None:
        p.print_help(sys.stderr)
        return 2
    if extra and args.cmd != "compile":
        _err(f"tirx {args.cmd}: error: unrecognized arguments: {' '.join(extra)}")
        return 2
    if args.cmd == "compile":
        rc = _check_paths(args)
        if rc:
            return rc
        for x in extra:
            if not x.startswith("-"):
                _err(f"tirx compile: error: unrecognized argument: {x}")
                return 2
        return cmd_compile(args, extra)
    if args.cmd == "fuzz":
        for flag, v in (
            ("--examples", args.examples),
            ("--time", args.time),
            ("--max-shrink-time", args.max_shrink_time),
            ("--input-timeout", args.input_timeout),
        ):
            if v is not None and not v > 0:
                _err(f"tirx fuzz: error: {flag} must be positive")
                return 2
    rc = _check_paths(args)
    if rc:
        return rc
    cmds = {"fmt": cmd_fmt, "check": cmd_check, "roundtrip": cmd_roundtrip, "fuzz": cmd_fuzz, "opt": cmd_opt}
    cmds["passes"] = cmd_passes
    cmds["filecheck"] = cmd_filecheck
    cmds["cache"] = cmd_cache
    return cmds[args.cmd](args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
