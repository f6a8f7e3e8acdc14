"""How long ``tirx.testing.strategies.functions()`` takes to draw one program (issue #29: a
slow strategy fails hypothesis's ``too_slow`` health check on a loaded machine).

    python tools/bench/bench_strategies.py [--examples 300] [--health-seeds 100] [--stats 300]

Prints the median, 90th percentile and maximum milliseconds per drawn function, and the
number of hypothesis choices (draws) per function.

``--health-seeds N`` replays what ``@given(functions())`` does under hypothesis's default
settings for N seeds and prints the distribution of the *health-check phase* draw time:
hypothesis (6.155, ``ConjectureRunner.record_for_health_check``) sums the draw time of every
example (valid, invalid, overrun) until 10 valid ones, and fails ``too_slow`` once that sum
exceeds ``max(1 s, 5 * deadline)`` (1 s with the default 200 ms deadline; 30 s when the
deadline is None). The sum is read from hypothesis's own bookkeeping.

``--stats N`` prints what N drawn functions contain (statements, expression nodes, the share
of each statement kind), to check that a faster strategy still generates as rich programs.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter

import attrs
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import engine

from tirx.testing.strategies import functions


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def bench_draws(n: int) -> None:
    times: list[float] = []
    choices: list[int] = []

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def draw_one(data: st.DataObject) -> None:
        before = len(data.conjecture_data.nodes)
        t0 = time.perf_counter()
        data.draw(functions())
        times.append(time.perf_counter() - t0)
        choices.append(len(data.conjecture_data.nodes) - before)

    draw_one()
    ms = [t * 1e3 for t in times]
    print(
        f"functions(): {len(ms)} draws, median {statistics.median(ms):.1f} ms, "
        f"p90 {_pct(ms, 0.9):.1f} ms, max {max(ms):.1f} ms; "
        f"choices per function: median {statistics.median(choices):.0f}, "
        f"mean {statistics.mean(choices):.0f}, max {max(choices)}"
    )


class _PhaseOver(BaseException):
    """Stops a run once hypothesis's health-check phase is over (nothing to learn after)."""


def health_phase(s: int) -> tuple[float, int, int, int, int]:
    """(draw seconds, valid, invalid, overrun, choices) of the health-check phase of one
    seeded run of ``@given(functions())`` under the default settings (example database off).
    The choices (hypothesis draws) are the same on every machine; the seconds are not."""
    seen: dict[str, float | int] = {}
    choices = [0]
    orig = engine.ConjectureRunner.record_for_health_check

    def record(self, data):  # type: ignore[no-untyped-def]
        state = self.health_check_state
        if state is not None:
            choices[0] += len(data.choices)
        orig(self, data)
        if state is not None and self.health_check_state is None:
            seen.update(
                t=state.total_draw_time,
                v=state.valid_examples,
                i=state.invalid_examples,
                o=state.overrun_examples,
            )
            raise _PhaseOver

    default = settings.get_profile("default")

    @seed(s)
    @settings(default, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(functions())
    def test(f) -> None:
        pass

    engine.ConjectureRunner.record_for_health_check = record  # type: ignore[method-assign]
    try:
        test()
    except _PhaseOver:
        pass
    finally:
        engine.ConjectureRunner.record_for_health_check = orig  # type: ignore[method-assign]
    return float(seen["t"]), int(seen["v"]), int(seen["i"]), int(seen["o"]), choices[0]


def bench_health(n: int) -> None:
    ms: list[float] = []
    ch: list[int] = []
    over: list[int] = []
    invalid = 0
    for s in range(n):
        t, _v, i, o, c = health_phase(s)
        ms.append(t * 1e3)
        ch.append(c)
        over.append(o)
        invalid += i
    print(
        f"health-check phase over {n} seeds: median {statistics.median(ms):.0f} ms, "
        f"p90 {_pct(ms, 0.9):.0f} ms, p99 {_pct(ms, 0.99):.0f} ms, max {max(ms):.0f} ms "
        f"(too_slow limit 1000 ms); choices median {statistics.median(ch):.0f}, "
        f"p99 {_pct(ch, 0.99):.0f}, max {max(ch)}; invalid examples {invalid}; "
        f"overruns per seed mean {statistics.mean(over):.1f}, max {max(over)} (data_too_large at 20)"
    )


def _walk(node: object, stmts: Counter, exprs: Counter) -> None:
    """Counts statement and expression nodes by class (a shared node once per use)."""
    from tirx.ir import expr as E
    from tirx.ir import stmt as S

    if isinstance(node, S.Stmt):
        if not isinstance(node, S.SeqStmt):
            stmts[type(node).__name__] += 1
    elif isinstance(node, E.PrimExpr):
        exprs[type(node).__name__] += 1
    for fld in attrs.fields(type(node)):
        v = getattr(node, fld.name, None)
        for c in v if isinstance(v, tuple) else (v,):
            if isinstance(c, (S.Stmt, E.PrimExpr)):
                _walk(c, stmts, exprs)


def bench_stats(n: int) -> None:
    stmts: Counter = Counter()
    exprs: Counter = Counter()
    per_stmts: list[int] = []
    per_exprs: list[int] = []

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(functions())
    def one(f) -> None:
        s: Counter = Counter()
        e: Counter = Counter()
        _walk(f.body, s, e)
        stmts.update(s)
        exprs.update(e)
        per_stmts.append(sum(s.values()))
        per_exprs.append(sum(e.values()))

    one()
    total = sum(stmts.values())
    print(
        f"{len(per_stmts)} functions: statements per function mean {statistics.mean(per_stmts):.1f} "
        f"(median {statistics.median(per_stmts):.0f}), expression nodes mean "
        f"{statistics.mean(per_exprs):.1f} (median {statistics.median(per_exprs):.0f}), "
        f"empty bodies {sum(1 for x in per_stmts if x == 0)}"
    )
    print("statement kinds: " + ", ".join(f"{k} {v / total:.1%}" for k, v in stmts.most_common()))
    etotal = sum(exprs.values())
    print("expression kinds: " + ", ".join(f"{k} {v / etotal:.1%}" for k, v in exprs.most_common()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=300)
    ap.add_argument("--health-seeds", type=int, default=0)
    ap.add_argument("--stats", type=int, default=0)
    a = ap.parse_args()
    if a.examples:
        bench_draws(a.examples)
    if a.health_seeds:
        bench_health(a.health_seeds)
    if a.stats:
        bench_stats(a.stats)


if __name__ == "__main__":
    main()
