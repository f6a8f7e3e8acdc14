"""The long campaign: round-trip, semantic and mutation fuzzing in rotation, for hours.

    python -m tirx.tools.campaign --hours 4 [--slice 300] [--save fuzz-failures] [--seed S]
    python -m tirx.tools.campaign --hours 4 --modes roundtrip semantic mutate cuda   # on a GPU

Each slice runs one campaign for ``--slice`` seconds with a fresh seed (seed, seed + 100000,
...: every slice is replayable on its own); a failure is saved (``.tirx`` + ``.json``, at
most ``--keep`` files per distinct error) and the rotation goes on. It prints one status line
per ``--every`` seconds (rate in programs/s per campaign, failures so far) and a summary at
the end; exit 1 when anything failed. Ctrl-C stops it with the summary.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from tirx.tools import fuzzing

__all__ = ["main", "run_campaigns"]

MODES = ("roundtrip", "semantic", "mutate")  # the default rotation
GPU_MODES = ("cuda",)  # opt-in: `tirx fuzz --cuda`, needs a CUDA GPU
NVRTC_MODES = ("ptx",)  # opt-in: `tirx fuzz --ptx`, needs NVRTC (the [cuda] extra), no GPU


class _Status:
    """Per-mode counts and the periodic one-line report."""

    def __init__(self, every: float, stream: Any = None, modes: Sequence[str] = MODES) -> None:
        self.modes = tuple(modes)
        self.every = every
        self.stream = stream or sys.stdout
        self.t0 = time.monotonic()
        self.last = self.t0
        self.done: dict[str, int] = dict.fromkeys(self.modes, 0)
        self.secs: dict[str, float] = dict.fromkeys(self.modes, 0.0)
        self.failures: dict[str, int] = {}  # signature -> count
        self.saved: list[str] = []
        self.cur_mode = ""
        self.cur_n = 0
        self.cur_s = 0.0

    def progress(self, mode: str) -> Any:
        def cb(n: int, seconds: float, failures: int = 0) -> None:
            self.cur_mode, self.cur_n, self.cur_s = mode, n, seconds
            self.maybe_print()

        return cb

    def slice_done(self, mode: str, n: int, seconds: float) -> None:
        self.done[mode] += n
        self.secs[mode] += seconds
        self.cur_mode, self.cur_n, self.cur_s = "", 0, 0.0
        self.maybe_print()

    def line(self) -> str:
        el = time.monotonic() - self.t0
        parts = []
        for m in self.modes:
            n = self.done[m] + (self.cur_n if m == self.cur_mode else 0)
            s = self.secs[m] + (self.cur_s if m == self.cur_mode else 0.0)
            parts.append(f"{m} {n} ({n / s if s > 0 else 0.0:.1f}/s)")
        nf = sum(self.failures.values())
        h, rem = divmod(int(el), 3600)
        return f"[{h:d}:{rem // 60:02d}:{rem % 60:02d}] " + " | ".join(parts) + f" | failures {nf}"

    def maybe_print(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last >= self.every:
            self.last = now
            print(self.line(), file=self.stream, flush=True)


def _signature(mode: str, error: str) -> str:
    """Failures that differ only in the IR path or a name count as one (for ``--keep``)."""
    first = error.splitlines()[0][:300] if error else "?"
    first = re.sub(r"at root\S*?(?=<|$)", "at ...", first)
    first = re.sub(r"\bvar \S+ ", "var _ ", first)
    return f"{mode}: {first}"


_RUNS: dict[str, Callable[..., Any]] = {
    "roundtrip": fuzzing.run_roundtrip,
    "semantic": fuzzing.run_semantic,
    "cuda": fuzzing.run_cuda,
    "ptx": fuzzing.run_ptx,
}


def run_campaigns(
    *,
    seconds: float,
    slice_s: float = 300.0,
    seed: int | None = None,
    save_dir: str | None = fuzzing.DEFAULT_SAVE_DIR,
    keep: int = 3,
    every: float = 60.0,
    max_shrink_time: float = 60.0,
    modes: Sequence[str] = MODES,
    stream: Any = None,
) -> _Status:
    """Rotate through ``modes`` for ``seconds``; return the status (counts and failures)."""
    from tirx.tools import mutate

    seed = fuzzing.fresh_seed() if seed is None else seed
    st = _Status(every, stream, modes)
    print(
        f"campaign: {seconds:.0f} s, slices of {slice_s:.0f} s, seed {seed}, saving to {save_dir}",
        file=st.stream,
    )
    end = time.monotonic() + seconds
    k = 0
    try:
        while time.monotonic() < end:
            mode = modes[k % len(modes)]
            s = seed + 100_000 * k
            k += 1
            budget = min(slice_s, end - time.monotonic())
            if budget <= 0:
                break
            cb = st.progress(mode)
            if mode == "mutate":
                known = {k.removeprefix("mutate: ") for k, n in st.failures.items() if n >= keep}
                rep = mutate.run_mutate(
                    seed=s,
                    time_budget=budget,
                    save_dir=save_dir,
                    on_progress=cb,
                    max_reduce_time=max_shrink_time,
                    known=known,
                )
                st.slice_done(mode, rep.inputs, rep.seconds)
                for sig, g in rep.groups.items():
                    key = f"mutate: {sig}"
                    st.failures[key] = st.failures.get(key, 0) + g.count
                    st.saved.extend(g.saved)
                continue
            run = _RUNS[mode]
            slice_end = time.monotonic() + budget
            while (left := slice_end - time.monotonic()) > 1.0:  # a failure ends a run, not the slice
                out = run(
                    seed=s, time_budget=left, max_shrink_time=max_shrink_time, save_dir=None, on_progress=cb
                )
                st.slice_done(mode, out.examples, out.seconds - out.shrink_seconds)
                if out.failure is None:
                    break
                key = _signature(mode, out.failure.error)
                st.failures[key] = st.failures.get(key, 0) + 1
                if save_dir is not None and st.failures[key] <= keep:
                    st.saved.extend(fuzzing.save_failure(save_dir, out.failure))
                s = out.failure.seed + 1  # go on after the failing chunk (it replays on its own)
    except KeyboardInterrupt:
        print("campaign: interrupted", file=st.stream)
    st.maybe_print(force=True)
    for key, n in st.failures.items():
        print(f"  {key} ({n}x)", file=st.stream)
    if st.saved:
        print(f"  saved {len(st.saved)} file(s) under {save_dir}/", file=st.stream)
    return st


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m tirx.tools.campaign",
        description="Round-trip, semantic and mutation fuzzing in rotation for hours; prints its rate.",
    )
    p.add_argument("--hours", type=float, default=None, help="how long to run (default 1 hour)")
    p.add_argument(
        "--seconds", type=float, default=None, help="how long to run, in seconds (instead of --hours)"
    )
    p.add_argument(
        "--slice", type=float, default=300.0, help="seconds per campaign before rotating (default 300)"
    )
    p.add_argument("--seed", type=int, default=None, help="first seed (default: a new one, printed)")
    p.add_argument(
        "--save", default=fuzzing.DEFAULT_SAVE_DIR, help="failure directory (default fuzz-failures/)"
    )
    p.add_argument("--keep", type=int, default=3, help="files kept per distinct failure (default 3)")
    p.add_argument("--every", type=float, default=60.0, help="seconds between status lines (default 60)")
    p.add_argument("--max-shrink-time", type=float, default=60.0, help="seconds spent shrinking one failure")
    p.add_argument(
        "--modes",
        nargs="+",
        choices=MODES + GPU_MODES + NVRTC_MODES,
        default=list(MODES),
        help="campaigns to rotate through (cuda: the CUDA backend against the interpreter, on a GPU; "
        "ptx: NVRTC's PTX of random kernels checked for non-coherent loads of written memory)",
    )
    args = p.parse_args(argv)
    seconds = (
        args.seconds if args.seconds is not None else 3600.0 * (args.hours if args.hours is not None else 1.0)
    )
    if seconds <= 0 or args.slice <= 0:
        p.error("the duration and --slice must be positive")
    why = fuzzing.gpu_unavailable() if "cuda" in args.modes else None
    if why:
        print(f"error: the cuda campaign needs a CUDA GPU: {why}", file=sys.stderr)
        return 2
    st = run_campaigns(
        seconds=seconds,
        slice_s=args.slice,
        seed=args.seed,
        save_dir=args.save,
        keep=args.keep,
        every=args.every,
        max_shrink_time=args.max_shrink_time,
        modes=args.modes,
    )
    return 1 if st.failures else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
