"""The property-campaign engine: time-budgeted hypothesis runs with replayable seeds.

``run_campaign`` runs a property as a sequence of hypothesis runs ("chunks") of ``chunk``
examples each; chunk ``i`` uses seed ``seed + i``, so any failure replays alone. Shrinking
stops after ``max_shrink_time`` seconds. Failures are written to a directory (``.tirx``
reproducer when printable, and a ``.json`` with the seed, the replay command and the error).
A kernel campaign's ``.json`` is a self-contained reproducer: it also holds the kernel text,
the exact input arguments (arrays as dtype, shape and base64 bytes), the outputs of both
sides when the check attached them (``with_outputs``) and the check's import path, and
``tirx fuzz --replay FILE.json`` (``replay_failure``) reruns exactly that input.
It lives below both of its users: ``tirx.testing.semantic_fuzz`` (semantic properties) and
``tirx.tools.fuzzing`` (the ``tirx fuzz`` / campaign front end, which re-exports it).
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import json
import os
import secrets
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_CHUNK",
    "DEFAULT_SAVE_DIR",
    "Failure",
    "Outcome",
    "decode_value",
    "encode_value",
    "fresh_seed",
    "kernel_campaign",
    "replay_failure",
    "run_budgeted",
    "run_campaign",
    "save_failure",
    "with_outputs",
]

DEFAULT_SAVE_DIR = "fuzz-failures"
DEFAULT_CHUNK = 100


def fresh_seed() -> int:
    """A seed that differs per run (printed by the callers, so a failure can be replayed)."""
    return secrets.randbelow(2**31)


@dataclass
class Failure:
    """One property failure: what failed, on which input, and how to replay it."""

    mode: str
    seed: int
    error: str
    replay: str
    text: str | None = None  # the input as .tirx text, when it can be printed
    detail: str = ""  # traceback or extra context
    extra: dict = field(default_factory=dict)


@dataclass
class Outcome:
    """What a campaign did: examples run, wall time, and the failure (if any)."""

    mode: str
    seed: int
    examples: int
    seconds: float
    failure: Failure | None = None
    saved: list[str] = field(default_factory=list)
    shrink_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def rate(self) -> float:
        return self.examples / max(self.seconds - self.shrink_seconds, 1e-9)


class _StopRun(BaseException):
    """Raised inside a property to end the hypothesis run (budget spent); not a failure."""


def _chunk_property(
    check: Callable[[Any], None],
    state: dict,
    t0: float,
    deadline: float | None,
    max_shrink_time: float,
    chunk_seed: int,
    n_chunk: int,
    on_progress: Callable[[int, float], None] | None,
) -> Callable[[Any], None]:
    """The property one chunk runs: counts examples, ends the run when the budget is spent
    (or shrinking took too long), remembers the latest (smallest) failing example."""

    def prop(x: Any) -> None:
        now = time.monotonic()
        if state["failing_since"] is None:
            if deadline is not None and now >= deadline:
                raise _StopRun
            state["n"] += 1
            if on_progress is not None:
                on_progress(state["n"], now - t0)
        elif now - state["failing_since"] > max_shrink_time:
            raise _StopRun
        try:
            check(x)
        except Exception as e:
            if state["failing_since"] is None:
                state["failing_since"] = now
            state["last"] = (chunk_seed, n_chunk, x, e)
            raise

    return prop


@contextlib.contextmanager
def _no_local_constants() -> Iterator[None]:
    """Hypothesis (6.13x and later) sometimes draws a value from the constants it finds in
    the "local" modules loaded so far, and tirx loads modules lazily, so a chunk's examples
    depended on what earlier chunks had imported: the replay command printed for a failure
    did not generate the failing program again (CI round-trip fuzz, stop 48). While a
    campaign runs, that pool is empty (hypothesis' built-in constants stay), so a chunk's
    examples depend on its seed alone. Private hypothesis names: where they are missing
    (older or newer versions) there is nothing to pin."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - hypothesis moved it: nothing to pin
        yield
        return
    get = getattr(providers, "_get_local_constants", None)
    Constants = getattr(providers, "Constants", None)
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    if get is None or Constants is None or cache is None or not hasattr(cache, "clear"):
        yield
        return
    empty = Constants()
    cache.clear()  # values permitted per choice, computed with the pool of an earlier run
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = get
        cache.clear()


def run_budgeted(
    strategy: Any,
    check: Callable[[Any], None],
    *,
    seed: int,
    examples: int | None = None,
    time_budget: float | None = None,
    max_shrink_time: float = 30.0,
    chunk: int = DEFAULT_CHUNK,
    on_progress: Callable[[int, float], None] | None = None,
) -> tuple[int, float, tuple[int, int, Any, BaseException] | None, float]:
    """Run ``check`` on examples of ``strategy`` until ``examples`` or ``time_budget`` runs out.

    ``check`` raises (AssertionError or anything else) on a counterexample. Returns
    ``(examples_run, seconds, failure, shrink_seconds)`` where failure is ``(chunk_seed,
    chunk_examples, example, exception)`` for the smallest failing example found, or None.
    """
    if examples is None and time_budget is None:
        examples = DEFAULT_CHUNK
    t0 = time.monotonic()
    deadline = None if time_budget is None else t0 + time_budget
    state: dict[str, Any] = {"n": 0, "failing_since": None, "last": None}
    with _no_local_constants():
        _run_chunks(strategy, check, state, seed, examples, chunk, t0, deadline, max_shrink_time, on_progress)
    end = time.monotonic()
    shrink = 0.0 if state["failing_since"] is None else end - state["failing_since"]
    return state["n"], end - t0, state["last"], shrink


def _run_chunks(
    strategy: Any,
    check: Callable[[Any], None],
    state: dict,
    seed: int,
    examples: int | None,
    chunk: int,
    t0: float,
    deadline: float | None,
    max_shrink_time: float,
    on_progress: Callable[[int, float], None] | None,
) -> None:
    """``run_budgeted``'s loop: one hypothesis run a chunk until the count or the time is
    spent or a chunk failed (``state`` holds the count and the failure)."""
    from hypothesis import HealthCheck, Verbosity, given, settings
    from hypothesis import seed as hseed

    i = 0
    while True:
        left = None if examples is None else examples - state["n"]
        if (left is not None and left <= 0) or (deadline is not None and time.monotonic() >= deadline):
            break
        n_chunk = chunk if left is None else min(chunk, left)
        chunk_seed = seed + i
        i += 1

        prop = _chunk_property(check, state, t0, deadline, max_shrink_time, chunk_seed, n_chunk, on_progress)
        test = hseed(chunk_seed)(
            settings(
                max_examples=n_chunk,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
                print_blob=False,
                report_multiple_bugs=False,
                verbosity=Verbosity.quiet,
            )(given(strategy)(prop))
        )
        try:
            test()
        except _StopRun:
            pass
        except Exception:
            if state["last"] is None:  # hypothesis itself failed (e.g. the strategy raised)
                raise
        if state["last"] is not None:
            break


def _describe(e: BaseException) -> str:
    if isinstance(e, AssertionError):
        return str(e)
    return f"{type(e).__name__}: {e}"


def save_failure(directory: str | os.PathLike, f: Failure, stem: str | None = None) -> list[str]:
    """Write ``f`` as ``<stem>.tirx`` (when it has text) and ``<stem>.json``; return the paths.
    Atomic writes (tirx.fileio): a full disk leaves no torn reproducer."""
    from tirx.fileio import write_file

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    stem = stem or f"{f.mode}-{f.seed}"
    n = 0
    while (d / f"{stem}{'-' + str(n) if n else ''}.json").exists():
        n += 1
    stem = f"{stem}{'-' + str(n) if n else ''}"
    paths = []
    if f.text is not None:
        p = d / f"{stem}.tirx"
        write_file(p, f.text.encode("utf-8", "surrogatepass"))  # bytes: keep \r, NUL, ... as found
        paths.append(str(p))
    meta = {
        "mode": f.mode,
        "seed": f.seed,
        "replay": f.replay,
        "error": f.error,
        "reproducer": paths[0] if paths else None,
        "detail": f.detail,
        "python": sys.version.split()[0],
        **f.extra,
    }
    p = d / f"{stem}.json"
    write_file(p, (json.dumps(meta, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    paths.append(str(p))
    return paths


def _printable(x: Any) -> str | None:
    import tirx

    try:
        return tirx.dumps(x)
    except Exception:
        return None


def run_campaign(
    mode: str,
    strategy: Any,
    check: Callable[[Any], None],
    *,
    seed: int,
    examples: int | None,
    time_budget: float | None,
    max_shrink_time: float,
    replay_cmd: str,
    text_of: Callable[[Any], str | None] = _printable,
    save_dir: str | os.PathLike | None = DEFAULT_SAVE_DIR,
    chunk: int = DEFAULT_CHUNK,
    on_progress: Callable[[int, float], None] | None = None,
    save: Callable[[str | os.PathLike, Failure], list[str]] | None = None,
    extra_of: Callable[[Any, BaseException], dict] | None = None,
) -> Outcome:
    """``run_budgeted`` plus the failure record; ``replay_cmd`` is formatted with seed/examples;
    ``save`` (default: this module's ``save_failure``) writes the failure to ``save_dir``
    unless that is None; ``extra_of(example, error)`` adds fields to the record."""
    n, secs, last, shrink = run_budgeted(
        strategy,
        check,
        seed=seed,
        examples=examples,
        time_budget=time_budget,
        max_shrink_time=max_shrink_time,
        chunk=chunk,
        on_progress=on_progress,
    )
    out = Outcome(mode, seed, n, secs, shrink_seconds=shrink)
    if last is not None:
        cseed, cn, x, e = last
        out.failure = Failure(
            mode=mode,
            seed=cseed,
            error=_describe(e),
            replay=replay_cmd.format(seed=cseed, examples=cn),
            text=text_of(x),
            detail=""
            if isinstance(e, AssertionError)
            else "".join(traceback.format_exception(type(e), e, e.__traceback__)),
            extra={} if extra_of is None else extra_of(x, e),
        )
        if save_dir is not None:
            out.saved = (save or save_failure)(save_dir, out.failure)
    return out


def kernel_campaign(mode: str, flag: str, strategy: Any, check: Callable[[Any], None], **run: Any) -> Outcome:
    """``run_campaign`` over generated kernels (``tirx.testing.runnable.Runnable``: a failure
    saves its function's text, inputs and both sides' outputs), replayed by
    ``tirx fuzz <flag> --seed S --examples N`` or, exactly, ``tirx fuzz --replay FILE.json``;
    ``run``: ``run_campaign``'s keyword arguments (seed, examples, time_budget, ...)."""
    run.setdefault("examples", None)  # None: as many as the time budget allows
    return run_campaign(
        mode,
        strategy,
        check,
        replay_cmd=f"tirx fuzz {flag} --seed {{seed}} --examples {{examples}}",
        text_of=lambda r: _printable(r.func),
        extra_of=lambda r, e: _kernel_record(r, e, check),
        **run,
    )


# ------------------------------------------------------------------ self-contained records
_OUTPUTS = "tirx_outputs"  # the attribute of a check's exception that holds both sides' arrays


def with_outputs(e: BaseException, **sides: list) -> BaseException:
    """Attach the arrays each side computed (``interpreter=[...], cuda=[...]``) to a check's
    exception, for the failure record (then re-raise it); returns ``e``."""
    setattr(e, _OUTPUTS, sides)
    return e


def encode_value(v: Any) -> dict:
    """A kernel argument as JSON: arrays by dtype, shape and base64 bytes (exact), numpy
    scalars by dtype and bytes, floats by ``float.hex`` (NaN payloads aside, exact)."""
    import numpy as np

    if isinstance(v, np.ndarray):
        a = np.ascontiguousarray(v)
        return {
            "array": a.dtype.str,
            "name": a.dtype.name,
            "shape": list(a.shape),
            "data": base64.b64encode(a.tobytes()).decode("ascii"),
        }
    if isinstance(v, np.generic):
        return {
            "scalar": v.dtype.str,
            "name": v.dtype.name,
            "data": base64.b64encode(v.tobytes()).decode("ascii"),
        }
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": str(v)}
    if isinstance(v, float):
        return {"float": v.hex()}
    raise TypeError(f"encode_value: cannot record a {type(v).__name__} argument")


def _dtype(d: dict, key: str) -> Any:
    import numpy as np

    try:
        return np.dtype(d["name"])  # bfloat16 and friends: by name (ml_dtypes), not 'V2'
    except TypeError:
        return np.dtype(d[key])


def decode_value(d: Any) -> Any:
    """The argument ``encode_value`` recorded (``ValueError`` naming what is malformed)."""
    import numpy as np

    try:
        if "array" in d:
            dt = _dtype(d, "array")
            raw = base64.b64decode(d["data"], validate=True)
            return np.frombuffer(raw, dtype=dt).reshape(d["shape"]).copy()
        if "scalar" in d:
            return np.frombuffer(base64.b64decode(d["data"], validate=True), dtype=_dtype(d, "scalar"))[0]
        if "bool" in d:
            return bool(d["bool"])
        if "int" in d:
            return int(d["int"])
        if "float" in d:
            return float.fromhex(d["float"])
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"decode_value: a malformed recorded value ({e})") from None
    raise ValueError(f"decode_value: not a recorded value: {d!r:.80}")


def _check_path(check: Callable) -> str | None:
    """``module:qualname`` of ``check`` when importing it gives it back (not a lambda)."""
    mod, name = getattr(check, "__module__", None), getattr(check, "__qualname__", "")
    if not mod or "<" in name:
        return None
    try:
        obj: Any = importlib.import_module(mod)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    return f"{mod}:{name}" if obj is check else None


def _kernel_record(r: Any, e: BaseException, check: Callable) -> dict:
    rec: dict[str, Any] = {
        "kernel": _printable(r.func),
        "note": getattr(r, "note", ""),
        "check": _check_path(check),
    }
    if not hasattr(r, "args"):  # a check's own object without arguments (a test's stand-in)
        rec["inputs_error"] = f"{type(r).__name__} has no arguments to record"
        return rec
    try:
        rec["inputs"] = [encode_value(a) for a in r.args]
        sides = getattr(e, _OUTPUTS, None)
        if sides:
            rec["outputs"] = {k: [encode_value(a) for a in v] for k, v in sides.items()}
    except TypeError as why:  # an argument kind the record cannot hold: say so in the record
        rec["inputs_error"] = str(why)
    return rec


def replay_failure(path: str | os.PathLike, check: Callable[[Any], None] | None = None) -> dict:
    """Rerun a kernel-campaign failure record on exactly its input: the recorded check (or
    ``check``) on the recorded kernel and arguments. Returns the record; raises what the
    check raises (the failure reproduces), or ``ValueError`` for a record that cannot be
    replayed (no kernel text or inputs, a check that cannot be imported)."""
    import tirx

    from .runnable import Runnable

    p = Path(path)
    try:
        rec = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"replay_failure: cannot read the record {str(p)!r}: {e}") from None
    if not isinstance(rec, dict):
        raise ValueError(f"replay_failure: {str(p)!r} is not a failure record")
    text = rec.get("kernel")
    if text is None and p.with_suffix(".tirx").is_file():
        text = p.with_suffix(".tirx").read_text(encoding="utf-8")
    if text is None or not isinstance(rec.get("inputs"), list):
        why = rec.get("inputs_error", "it has no kernel text or no inputs (not a kernel-campaign record)")
        raise ValueError(f"replay_failure: {str(p)!r} cannot be replayed: {why}")
    if check is None:
        where = rec.get("check")
        if not isinstance(where, str) or ":" not in where:
            raise ValueError(f"replay_failure: {str(p)!r} names no importable check; pass check=")
        mod, name = where.split(":", 1)
        try:
            obj: Any = importlib.import_module(mod)
            for part in name.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"replay_failure: the check {where!r} cannot be imported: {e}") from None
        check = obj
    args = tuple(decode_value(a) for a in rec["inputs"])
    f = tirx.loads(text)
    if not isinstance(f, tirx.Function):
        raise ValueError("replay_failure: the recorded kernel is a Module, not one function")
    check(Runnable(f, args, rec.get("note", "")))
    return rec
