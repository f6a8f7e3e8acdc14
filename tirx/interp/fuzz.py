"""``tirx fuzz`` semantic mode: random runnable kernels (general ones and elementwise ones)
must mean the same thing before and after every built-in pass, and after a print/parse round trip, as judged by the interpreter.

``run_semantic(examples, seed)`` returns a report dict (the CLI prints it); it never raises
for a found bug — the bug (shrunk by hypothesis) is in ``report["failure"]``.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["check_runnable", "run_semantic", "semantic_checks"]

_PASS_NAMES = ("ConvertSSA", "CommonSubexprElim", "Simplify", "VectorizeThreads")


def semantic_checks() -> list[tuple[str, Any]]:
    """The transformations to compare against the original: (name, fn(Function) -> Function)."""
    checks: list[tuple[str, Any]] = []
    try:
        from tirx import passes
    except ImportError:
        passes = None
    for name in _PASS_NAMES:
        cls = getattr(passes, name, None) if passes is not None else None
        if cls is not None:
            checks.append((name, lambda f, cls=cls: cls()(f)))
    if _roundtrip_available():
        import tirx

        checks.append(("loads(dumps(f))", lambda f: tirx.loads(tirx.dumps(f))))
    return checks


def _roundtrip_available() -> bool:
    try:
        import tirx
        from tirx.grammar import loads  # noqa: F401
        from tirx.printer import dumps  # noqa: F401

        tirx.loads(tirx.dumps(_probe()))
        return True
    except Exception:
        return False


def _probe():
    from tirx.ir.types import TensorType, float32
    from tirx.script.builder import IRBuilder

    b = IRBuilder()
    with b, b.function("probe"):
        A = b.param("A", TensorType((4,), float32))
        A[0] = A[1]
    return b.get()


def check_runnable(r, checks=None) -> None:
    """Raise AssertionError (with the kernel text) when a check changes ``r``'s outputs."""
    checks = semantic_checks() if checks is None else checks
    ref = r.run()
    for name, fn in checks:
        try:
            g = fn(r.func)
            out = r.run(g)
            r.assert_same(ref, out, f"{name}: ")
        except AssertionError as e:
            raise AssertionError(f"{name} changed the kernel's outputs: {e}\n{r!r}") from None
        except Exception as e:
            raise AssertionError(f"{name} failed: {type(e).__name__}: {e}\n{r!r}") from None


def run_semantic(examples: int = 100, seed: int = 0, *, max_stmts: int = 12) -> dict:
    """Run the semantic properties on ``examples`` random kernels; return a report."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    from tirx.testing.elementwise import elementwise_kernels
    from tirx.testing.runnable import runnable_kernels

    checks = semantic_checks()
    count = [0]

    @hseed(seed)
    @settings(
        max_examples=max(1, int(examples)),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    # general kernels, and elementwise ones (the shape VectorizeThreads rewrites)
    @given(st.one_of(runnable_kernels(max_stmts=max_stmts), elementwise_kernels()))
    def prop(r):
        count[0] += 1
        check_runnable(r, checks)

    t0 = time.perf_counter()
    failure = None
    try:
        prop()
    except AssertionError as e:
        failure = str(e)
    return {
        "mode": "semantic",
        "seed": seed,
        "examples": count[0],
        "checks": [n for n, _ in checks],
        "ok": failure is None,
        "failure": failure,
        "seconds": round(time.perf_counter() - t0, 3),
    }
