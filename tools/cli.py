"""The ``tirx`` command line: fmt, check, roundtrip, fuzz, compile (and demo).

Exit codes: 0 success, 1 a check failed (a file does not load, would be reformatted,
breaks an invariant; a fuzz counterexample), 2 usage errors (argparse) and unusable
input (a missing file). Results go to stdout, diagnostics and progress to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["main"]


def _read(path: str) -> str:
    with open(path, "rb") as f:
        data = f.read()
    return data.decode("utf-8")


def _err(msg: str) -> None:
    print(msg, file=sys.stderr)


def _load_file(path: str) -> tuple[Any, str]:
    """(loaded object, text); raises DiagnosticError / OSError / UnicodeDecodeError."""
    import tirx

    text = _read(path)
    return tirx.loads(text, source_name=path), text


def _load_all(paths: list[str]) -> tuple[list[tuple[str, Any, str]], int]:
    """Load each file; report the ones that fail on stderr. ((path, obj, text)s, failures)."""
    import tirx

    loaded, failed = [], 0
    for path in paths:
        try:
            obj, text = _load_file(path)
        except tirx.DiagnosticError as e:
            _err(str(e))
            failed += 1
            continue
        except (OSError, UnicodeDecodeError) as e:
            _err(f"error: {path}: {e}")
            failed += 1
            continue
        loaded.append((path, obj, text))
    return loaded, failed


# ------------------------------------------------------------------ fmt
def cmd_fmt(args: argparse.Namespace) -> int:
    import tirx

    changed = []
    loaded, failed = _load_all(args.files)
    for path, obj, text in loaded:
        if tirx.dumps(obj) != text:
            changed.append(path)
            if not args.check:
                tirx.save(obj, path)
    if args.check:
        for p in changed:
            print(f"would reformat {p}")
        n = len(args.files) - failed
        _err(
            f"{len(changed)} file(s) would be reformatted, {n - len(changed)} already formatted"
            + (f", {failed} failed to load" if failed else "")
        )
        return 1 if changed or failed else 0
    for p in changed:
        print(f"reformatted {p}")
    _err(
        f"{len(changed)} file(s) reformatted, {len(args.files) - failed - len(changed)} unchanged"
        + (f", {failed} failed to load" if failed else "")
    )
    return 1 if failed else 0


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

    loaded, bad = _load_all(args.files)
    for path, obj, text in loaded:
        problems = _verify(obj, text)
        if problems:
            for p in problems:
                _err(p)
            bad += 1
        elif not args.quiet:
            print(f"{path}: ok")
    if bad:
        _err(f"{bad} of {len(args.files)} file(s) have errors")
    return 1 if bad else 0


# ------------------------------------------------------------------ roundtrip
def roundtrip_problems(obj: Any) -> list[str]:
    """The three text invariants for one loaded object; the list of violations."""
    import tirx

    out = []
    d1 = tirx.dumps(obj)
    try:
        again = tirx.loads(d1)
    except tirx.DiagnosticError as e:
        return [f"the printed text does not load back:\n{e}"]
    if not tirx.structural_equal(again, obj):
        out.append("structural_equal(loads(dumps(x)), x) is false")
    d2 = tirx.dumps(again)
    if d2 != d1:
        import difflib

        diff = "\n".join(
            difflib.unified_diff(
                d1.splitlines(), d2.splitlines(), "dumps(x)", "dumps(loads(dumps(x)))", lineterm=""
            )
        )
        out.append(f"printing is not a fixpoint:\n{diff}")
    if tirx.structural_equal(again, obj) and tirx.structural_hash(again) != tirx.structural_hash(obj):
        out.append("structurally equal objects have different structural_hash values")
    return out


def cmd_roundtrip(args: argparse.Namespace) -> int:

    loaded, bad = _load_all(args.files)
    for path, obj, _text in loaded:
        probs = roundtrip_problems(obj)
        if probs:
            bad += 1
            print(f"{path}: FAIL")
            for p in probs:
                _err(f"{path}: {p}")
        else:
            print(f"{path}: ok (equal, fixpoint, hash)")
    return 1 if bad else 0


# ------------------------------------------------------------------ fuzz
class _Progress:
    def __init__(self, total: int, stream=None):
        self.total = max(1, total)
        self.n = 0
        self.stream = stream or sys.stderr
        self.t0 = time.perf_counter()
        self.tty = getattr(self.stream, "isatty", lambda: False)()
        self.last = -1

    def step(self) -> None:
        self.n += 1
        pct = min(100, self.n * 100 // self.total)
        if not self.tty and pct // 10 == self.last // 10 and self.n < self.total:
            return
        self.last = pct
        width = 30
        fill = width * min(self.n, self.total) // self.total
        bar = "#" * fill + "-" * (width - fill)
        rate = self.n / max(1e-9, time.perf_counter() - self.t0)
        end = "\r" if self.tty else "\n"
        self.stream.write(f"[{bar}] {min(self.n, self.total)}/{self.total} programs ({rate:.1f}/s){end}")
        self.stream.flush()

    def done(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def cmd_fuzz(args: argparse.Namespace) -> int:
    if args.semantic:
        try:
            fz = importlib.import_module("tirx.interp.fuzz")
            run_semantic = fz.run_semantic
        except (ImportError, AttributeError):
            _err("error: tirx fuzz --semantic is not available yet (tirx.interp provides no run_semantic)")
            return 2
        try:
            rep = run_semantic(args.examples, args.seed)
        except ImportError as e:
            _err(f"error: tirx fuzz --semantic is not available yet ({e})")
            return 2
        print(
            f"semantic fuzz: {rep.get('examples')} kernels, checks {', '.join(rep.get('checks', []))}: {'ok' if rep.get('ok') else 'FAIL'}"
        )
        if not rep.get("ok"):
            print(rep.get("failure"))
            return 1
        return 0
    try:
        from hypothesis import HealthCheck, given, settings
        from hypothesis import seed as hseed
        from hypothesis import strategies as st

        from tirx.testing import strategies as tst
    except ImportError as e:
        _err(f"error: tirx fuzz needs hypothesis and tirx.testing.strategies ({e})")
        return 2
    import tirx

    prog = _Progress(args.examples)
    shrunk: list = []

    @hseed(args.seed)
    @settings(
        max_examples=args.examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(st.one_of(tst.functions(), tst.modules()))
    def prop(x):
        prog.step()
        probs = roundtrip_problems(x)
        if probs:
            shrunk.append((x, probs))
            raise AssertionError(probs[0])

    with contextlib.suppress(AssertionError):
        prop()
    prog.done()
    if shrunk:
        x, probs = shrunk[-1]  # hypothesis replays the shrunk example last
        print("round-trip property failed on (shrunk):")
        try:
            print(tirx.dumps(x))
        except Exception as e:  # pragma: no cover - the printer never raises on generated IR
            print(f"<cannot print: {e}>")
        for p in probs:
            print(p)
        return 1
    print(f"fuzz: {args.examples} programs, seed {args.seed}: all round-trip invariants hold")
    return 0


# ------------------------------------------------------------------ compile
def cmd_compile(args: argparse.Namespace, extra: list[str]) -> int:
    import tirx

    target = " ".join([args.target, *extra]).strip()
    try:
        obj, _ = _load_file(args.file)
    except tirx.DiagnosticError as e:
        _err(str(e))
        return 1
    except (OSError, UnicodeDecodeError) as e:
        _err(f"error: {args.file}: {e}")
        return 2
    try:
        k = tirx.compile(obj, target=target)
    except ImportError as e:
        _err(f"error: compiling for {target!r} is not available: {e}")
        return 1
    except tirx.DiagnosticError as e:
        _err(str(e))
        return 1
    except (ValueError, TypeError, RuntimeError) as e:
        _err(f"error: cannot compile {args.file} for {target!r}: {e}")
        return 1
    src = getattr(k, "source", None)
    if src is None:
        _err(f"error: the {target!r} target produced no source to print")
        return 1
    print(src, end="" if str(src).endswith("\n") else "\n")
    return 0


# ------------------------------------------------------------------ parser
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tirx", description="tirx: .tirx text tools (format, check, round-trip, fuzz, compile)."
    )
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")

    f = sub.add_parser(
        "fmt",
        help="rewrite .tirx files in canonical form",
        description="Rewrite each FILE as tirx.dumps(tirx.load(FILE)).",
    )
    f.add_argument("files", nargs="+", metavar="FILE")
    f.add_argument(
        "--check", action="store_true", help="do not write; exit 1 and list the files that would change"
    )

    c = sub.add_parser(
        "check",
        help="parse and verify .tirx files",
        description="Load each FILE and run the well-formedness checks; diagnostics go to stderr, exit 1 on any error.",
    )
    c.add_argument("files", nargs="+", metavar="FILE")
    c.add_argument("-q", "--quiet", action="store_true", help="print nothing for files that pass")

    r = sub.add_parser(
        "roundtrip",
        help="check the text invariants per file",
        description="For each FILE x: structural_equal(loads(dumps(x)), x); dumps(loads(dumps(x))) == dumps(x); equal implies equal structural_hash.",
    )
    r.add_argument("files", nargs="+", metavar="FILE")

    z = sub.add_parser(
        "fuzz",
        help="round-trip properties on generated programs",
        description="Run the round-trip invariants on N programs from tirx.testing.strategies; prints the shrunk failing program.",
    )
    z.add_argument(
        "--examples",
        "-n",
        type=int,
        default=100,
        metavar="N",
        help="number of generated programs (default 100)",
    )
    z.add_argument("--seed", "-s", type=int, default=0, metavar="S", help="random seed (default 0)")
    z.add_argument(
        "--semantic",
        action="store_true",
        help="compare interpreter results before/after passes and round trips (needs tirx.interp)",
    )

    k = sub.add_parser(
        "compile",
        help="print the generated CUDA for a .tirx file",
        description="Compile FILE with tirx.compile and print the generated source. Example: tirx compile k.tirx --target cuda -arch=sm_90a",
    )
    k.add_argument("file", metavar="FILE")
    k.add_argument(
        "--target", default="cuda", help="target string, e.g. 'cuda' or 'cuda -arch=sm_90a' (default cuda)"
    )

    sub.add_parser("demo", help="run the demo (tirx.tools.demo)", add_help=False)
    return p


def main(argv: Sequence[str] | None = None) -> int:
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
        for x in extra:
            if not x.startswith("-"):
                _err(f"tirx compile: error: unrecognized argument: {x}")
                return 2
        return cmd_compile(args, extra)
    if args.cmd == "fuzz" and args.examples < 1:
        _err("tirx fuzz: error: --examples must be at least 1")
        return 2
    for path in getattr(args, "files", ()):
        if not os.path.exists(path):
            _err(f"tirx {args.cmd}: error: no such file: {path}")
            return 2
    return {"fmt": cmd_fmt, "check": cmd_check, "roundtrip": cmd_roundtrip, "fuzz": cmd_fuzz}[args.cmd](args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
