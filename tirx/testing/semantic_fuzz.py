"""``tirx fuzz`` semantic mode: random runnable kernels (general ones and elementwise ones)
must mean the same thing before and after every built-in pass, and after a print/parse round trip, as judged by the interpreter.

``run_semantic(examples, seed)`` returns a report dict; it never raises for a found bug — the
bug (shrunk by hypothesis) is in ``report["failure"]``. The CLI (``tirx fuzz --semantic
--time S``) runs the same properties through ``tirx.tools.fuzzing``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from tirx.testing.campaign import kernel_campaign

__all__ = ["check_runnable", "run_semantic", "semantic_checks", "semantic_strategy"]

_PASS_NAMES = ("ConvertSSA", "CommonSubexprElim", "Simplify", "VectorizeThreads", "SequenceEffects")


def semantic_checks() -> list[tuple[str, Any]]:
    """The transformations to compare against the original: (name, fn(Function) -> Function)."""
    checks: list[tuple[str, Any]] = []
    passes: ModuleType | None
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
    from tirx.surface.builder import IRBuilder

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


def semantic_strategy(max_stmts: int = 12):
    """The kernels the semantic campaign draws: general runnable ones and elementwise ones
    (the shape VectorizeThreads rewrites)."""
    from hypothesis import strategies as st

    from tirx.testing.elementwise import elementwise_kernels
    from tirx.testing.runnable import runnable_kernels

    return st.one_of(runnable_kernels(max_stmts=max_stmts), elementwise_kernels())


def semantic_campaign(
    *,
    seed: int,
    examples: int | None,
    time_budget: float | None,
    max_shrink_time: float,
    save_dir: Any,
    on_progress: Any = None,
):
    """The semantic properties as a ``tirx.testing.campaign.run_campaign`` run; returns its
    ``Outcome``."""
    checks = semantic_checks()
    return kernel_campaign(
        "semantic",
        "--semantic",
        semantic_strategy(),
        lambda r: check_runnable(r, checks),
        seed=seed,
        examples=examples,
        time_budget=time_budget,
        max_shrink_time=max_shrink_time,
        save_dir=save_dir,
        on_progress=on_progress,
    )


def run_semantic(
    examples: int | None = 100,
    seed: int = 0,
    *,
    time_budget: float | None = None,
    max_shrink_time: float = 30.0,
    save_dir: str | None = None,
) -> dict:
    """Run the semantic properties on ``examples`` random kernels (or for ``time_budget``
    seconds); return a report. The campaign engine is ``tirx.testing.campaign``; the CLI runs
    the same campaign through ``tirx.tools.fuzzing.run_semantic``."""
    out = semantic_campaign(
        seed=seed,
        examples=examples,
        time_budget=time_budget,
        max_shrink_time=max_shrink_time,
        save_dir=save_dir,
    )
    f = out.failure
    return {
        "mode": "semantic",
        "seed": seed,
        "examples": out.examples,
        "checks": [n for n, _ in semantic_checks()],
        "ok": f is None,
        "failure": None if f is None else f.error,
        "replay": None if f is None else f.replay,
        "saved": out.saved,
        "seconds": round(out.seconds, 3),
    }
