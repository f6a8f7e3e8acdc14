"""How long ``tirx.testing.strategies.functions()`` takes to draw one program (issue #29: a
slow strategy fails hypothesis's ``too_slow`` health check on a loaded machine).

    python tools/bench/bench_strategies.py [--examples 300]

Prints the median, 90th percentile and maximum milliseconds per drawn function.
"""

from __future__ import annotations

import argparse
import statistics
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tirx.testing.strategies import functions


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=300)
    n = ap.parse_args().examples
    times: list[float] = []

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def draw_one(data: st.DataObject) -> None:
        t0 = time.perf_counter()
        data.draw(functions())
        times.append(time.perf_counter() - t0)

    draw_one()
    times.sort()
    ms = [t * 1e3 for t in times]
    print(
        f"functions(): {len(ms)} draws, median {statistics.median(ms):.1f} ms, "
        f"p90 {ms[int(0.9 * len(ms))]:.1f} ms, max {ms[-1]:.1f} ms"
    )


if __name__ == "__main__":
    main()
