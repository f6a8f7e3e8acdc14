"""Time-budgeted property campaigns with replayable seeds and saved reproducers.

``tirx fuzz`` (round trip), ``tirx fuzz --semantic`` (passes vs the interpreter) and the
long ``tirx.tools.campaign`` share this engine. A run is a sequence of hypothesis runs
("chunks") of ``chunk`` examples each; chunk ``i`` uses seed ``seed + i``, so any failure
replays alone with ``tirx fuzz --seed <seed + i> --examples <chunk>``. Shrinking a failure
stops after ``max_shrink_time`` seconds and keeps the smallest failing example so far.
Failures are written to a directory (``.tirx`` reproducer when printable, and a ``.json``
with the seed, the replay command and the error) so CI keeps them as artifacts.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Sequence
from typing import Any

from tirx.testing import semantic_fuzz as ifz
from tirx.testing.campaign import (
    DEFAULT_SAVE_DIR,
    Failure,
    Outcome,
    fresh_seed,
    run_budgeted,
    run_campaign,
    save_failure,
)

__all__ = [
    "DEFAULT_SAVE_DIR",
    "Failure",
    "Outcome",
    "fresh_seed",
    "gpu_unavailable",
    "pipeline_problems",
    "roundtrip_problems",
    "run_budgeted",
    "run_cuda",
    "run_roundtrip",
    "run_semantic",
    "save_failure",
    "semantic_pipeline_check",
]


# ------------------------------------------------------------------ round trip
def roundtrip_problems(obj: Any) -> list[str]:
    """The three text invariants for one object; the list of violations (empty when all hold)."""
    import tirx

    out = []
    d1 = tirx.dumps(obj)
    try:
        again = tirx.loads(d1)
    except tirx.DiagnosticError as e:
        return [f"the printed text does not load back:\n{e}"]
    equal = tirx.structural_equal(again, obj)
    if not equal:
        out.append("structural_equal(loads(dumps(x)), x) is false" + _first_mismatch(again, obj))
    d2 = tirx.dumps(again)
    if d2 != d1:
        import difflib

        diff = "\n".join(
            difflib.unified_diff(
                d1.splitlines(), d2.splitlines(), "dumps(x)", "dumps(loads(dumps(x)))", lineterm=""
            )
        )
        out.append(f"printing is not a fixpoint:\n{diff}")
    if equal and tirx.structural_hash(again) != tirx.structural_hash(obj):
        out.append("structurally equal objects have different structural_hash values")
    return out


def pipeline_problems(pipeline: Callable[[Any], Any]) -> Callable[[Any], list[str]]:
    """Problems of a pass pipeline on one program: it raises, its output is not well-formed,
    or its output breaks the text invariants (``tirx fuzz --passes``)."""
    import tirx

    def problems(obj: Any) -> list[str]:
        from tirx.passes.verify import verify_well_formed

        try:
            out = pipeline(obj)
        except tirx.DiagnosticError as e:
            return [f"the pipeline rejected a well-formed program:\n{e}"]
        bad = verify_well_formed(out)
        if bad:
            return ["the pipeline's output is not well-formed: " + "; ".join(e.message for e in bad)]
        return [f"after the pipeline: {p}" for p in roundtrip_problems(out)]

    return problems


def _first_mismatch(a: Any, b: Any) -> str:
    """``: structural mismatch at <path>`` from assert_structural_equal, when it says one."""
    import tirx

    try:
        tirx.assert_structural_equal(a, b)
    except Exception as e:
        return ": " + str(e).splitlines()[0] if str(e) else ""
    return ""


def _roundtrip_check(problems: Callable[[Any], list[str]]) -> Callable[[Any], None]:
    def check(x: Any) -> None:
        probs = problems(x)
        if probs:
            raise AssertionError("\n".join(probs))

    return check


def run_roundtrip(
    *,
    seed: int,
    examples: int | None = None,
    time_budget: float | None = None,
    max_shrink_time: float = 30.0,
    save_dir: str | os.PathLike | None = DEFAULT_SAVE_DIR,
    problems: Callable[[Any], list[str]] = roundtrip_problems,
    on_progress: Callable[[int, float], None] | None = None,
    replay_args: str = "",
) -> Outcome:
    """The round-trip invariants on generated Functions and Modules (``problems`` may check
    more: ``pipeline_problems``); ``replay_args`` go at the end of the replay command."""
    from hypothesis import strategies as st

    from tirx.testing import strategies as tst

    return run_campaign(
        "roundtrip",
        st.one_of(tst.functions(), tst.modules()),
        _roundtrip_check(problems),
        seed=seed,
        examples=examples,
        time_budget=time_budget,
        max_shrink_time=max_shrink_time,
        replay_cmd="tirx fuzz --seed {seed} --examples {examples}"
        + _literal(f" {replay_args}" if replay_args else ""),
        save_dir=save_dir,
        on_progress=on_progress,
    )


def _literal(text: str) -> str:
    """``text`` inside a ``str.format`` template (a pipeline's options are in braces)."""
    return text.replace("{", "{{").replace("}", "}}")


def run_semantic(
    *,
    seed: int,
    examples: int | None = None,
    time_budget: float | None = None,
    max_shrink_time: float = 30.0,
    save_dir: str | os.PathLike | None = DEFAULT_SAVE_DIR,
    on_progress: Callable[[int, float], None] | None = None,
    passes: str | None = None,
    plugins: Sequence[str] = (),
) -> Outcome:
    """Passes and round trips vs the interpreter on runnable kernels (``tirx.testing.semantic_fuzz``).

    ``passes``: a pipeline string (``tirx fuzz --semantic --passes``; its passes registered
    already, ``plugins`` the ``--plugin`` files that registered them): instead of the built-in
    passes, each kernel's interpreter results before and after that pipeline must be the
    same, and its output well-formed. A failure's record names the pipeline and the plugins,
    so ``tirx fuzz --replay FILE.json`` reruns it."""
    if passes is None:
        return ifz.semantic_campaign(
            seed=seed,
            examples=examples,
            time_budget=time_budget,
            max_shrink_time=max_shrink_time,
            save_dir=save_dir,
            on_progress=on_progress,
        )
    from tirx.passes import build_pipeline
    from tirx.testing.campaign import kernel_campaign

    check = semantic_pipeline_check(build_pipeline(passes), passes)
    args = f"--semantic --passes {shlex.quote(passes)}" + "".join(
        f" --plugin {shlex.quote(p)}" for p in plugins
    )
    record = {"passes": passes, "plugins": [os.path.abspath(p) for p in plugins]}

    def save(directory: str | os.PathLike, f: Failure) -> list[str]:
        f.extra.update(record)  # what --replay needs to rebuild the pipeline
        return save_failure(directory, f)

    return kernel_campaign(
        "semantic",
        _literal(args),
        ifz.semantic_strategy(),
        check,
        seed=seed,
        examples=examples,
        time_budget=time_budget,
        max_shrink_time=max_shrink_time,
        save_dir=save_dir,
        on_progress=on_progress,
        save=save,
    )


def semantic_pipeline_check(pipeline: Callable[[Any], Any], name: str) -> Callable[[Any], None]:
    """The check ``tirx fuzz --semantic --passes NAME`` runs on each generated kernel
    (``tirx.testing.runnable.Runnable``): the interpreter computes the same outputs before
    and after ``pipeline``, whose passes must leave the IR well-formed (checked after each
    one, naming it). Raises ``AssertionError`` with the kernel otherwise."""
    from tirx.passes import PassContext

    def run(f: Any) -> Any:
        with PassContext(verify=True):
            return pipeline(f)

    checks = [(f"the passes {name!r}", run)]

    def check(r: Any) -> None:
        ifz.check_runnable(r, checks)

    return check


def gpu_unavailable() -> str | None:
    """Why the ``cuda`` campaign cannot run here (no driver, no device), or None."""
    from tirx.runtime import driver as drv

    ok, why = drv.probe()
    return None if ok else why


def run_frontend(**run: Any) -> Outcome:
    """Python-frontend kernels with comparisons (``==``, ``in`` / ``not in``, in kernel ifs,
    ``@T.inline`` and plain helpers) built, run on the interpreter and checked against Python
    (``tirx.testing.frontend_programs``); ``run`` as ``run_semantic``'s keywords."""
    from tirx.testing import frontend_programs

    return frontend_programs.frontend_campaign(**run)


def run_ptx(**run: Any) -> Outcome:
    """Random kernels compiled with NVRTC, their PTX checked for non-coherent loads of memory
    the kernel writes (``tirx.testing.ptx_check``; no GPU); ``run`` as ``run_semantic``'s."""
    from tirx.testing import gpu_compare

    return gpu_compare.ptx_campaign(**run)


def run_cuda(**run: Any) -> Outcome:
    """The CUDA backend against the interpreter on random kernels, on this machine's GPU
    (``tirx.testing.gpu_compare``); ``run`` as ``run_semantic``'s keywords."""
    from tirx.testing import gpu_compare

    return gpu_compare.cuda_campaign(**run)
