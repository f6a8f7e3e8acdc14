"""Peak memory of ``tirx.loads`` per input byte, on several input shapes.

    python tools/bench/bench_memory.py [--mb 1] [--shape NAME ...]

For each shape the text is built at ``--mb`` megabytes and at twice that, loaded once to
warm up the parser, then loaded under ``tracemalloc``; the line gives the peak traced
memory (Python allocations, the regex engine's included) divided by the text length,
for both sizes. Bytes per input byte that stay flat when the input doubles mean memory is
linear in the input; the absolute ratio is what one more input byte costs.

Shapes: ``string`` (one big plain string literal), ``string-esc`` (``\\x00`` escapes),
``string-uni`` (``\\u00e9`` escapes, non-ASCII result), ``statements`` (many short
stores), ``expressions`` (long arithmetic lines), ``blank-lines`` (blank and comment
lines between statements).
"""

from __future__ import annotations

import argparse
import sys
import tracemalloc
from collections.abc import Callable

HEAD = "from __future__ import annotations\n\n# from tirx.script import tirx as T\n\n"
SIG = "@T.function\ndef f(A: T.Tensor((64,), T.float32), n: T.int32):\n"


def _string(nbytes: int, unit: str) -> str:
    body = unit * max(1, nbytes // len(unit))
    return HEAD + SIG + f'    T.evaluate(T.call_extern("g", "{body}", ty=T.int32))\n'


def _statements(nbytes: int) -> str:
    line = "    A[n % 64] = A[(n + 1) % 64] + T.float32(1.0)\n"
    return HEAD + SIG + line * max(1, nbytes // len(line))


def _expressions(nbytes: int) -> str:
    line = "    A[0] = A[0]" + " + A[n % 64] * T.float32(0.5)" * 40 + "\n"
    return HEAD + SIG + line * max(1, nbytes // len(line))


def _blank_lines(nbytes: int) -> str:
    chunk = "    A[0] = T.float32(1.0)\n\n    # a comment line\n        \n"
    return HEAD + SIG + chunk * max(1, nbytes // len(chunk))


SHAPES: dict[str, Callable[[int], str]] = {
    "string": lambda n: _string(n, "a"),
    "string-esc": lambda n: _string(n, "\\x00"),
    "string-uni": lambda n: _string(n, "\\u00e9"),
    "statements": _statements,
    "expressions": _expressions,
    "blank-lines": _blank_lines,
}


def peak_per_byte(text: str) -> float:
    """Peak traced memory of one ``tirx.loads(text)``, per character of ``text``."""
    import tirx

    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        obj = tirx.loads(text)
        peak = tracemalloc.get_traced_memory()[1] - base
        del obj
    finally:
        tracemalloc.stop()
    return peak / len(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=1.0, help="input size in MB (also run at twice this)")
    ap.add_argument("--shape", action="append", choices=sorted(SHAPES), help="shapes to run (default all)")
    args = ap.parse_args(argv)
    import tirx

    tirx.loads(HEAD + SIG + "    pass\n")  # build the parser outside the measurement
    n = int(args.mb * 1_000_000)
    print(f"python {sys.version.split()[0]}; peak traced memory of tirx.loads per input byte")
    print(f"{'shape':12s} {'size':>9s} {'bytes/byte':>10s} {'size':>9s} {'bytes/byte':>10s}")
    for name in args.shape or list(SHAPES):
        make = SHAPES[name]
        t1, t2 = make(n), make(2 * n)
        r1, r2 = peak_per_byte(t1), peak_per_byte(t2)
        print(f"{name:12s} {len(t1):9d} {r1:10.1f} {len(t2):9d} {r2:10.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
