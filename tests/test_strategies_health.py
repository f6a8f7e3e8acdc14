"""The ``@given(tst.functions())`` example of docs/custom_pass.md passes hypothesis's default
health checks (too_slow, filter_too_much, data_too_large, ...) run after run: the exact
block from the docs, default settings, several seeds (a fresh run draws a fresh one)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from examples_dir import load_example
from hypothesis import seed, settings

DOC = Path(__file__).resolve().parents[1] / "docs" / "custom_pass.md"


def _doc_block() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    hits = [b for b in blocks if "@given(tst.functions())" in b]
    assert len(hits) == 1, "docs/custom_pass.md shows the @given(tst.functions()) example once"
    return hits[0]


@pytest.mark.parametrize("s", [0, 1, 2, 3, 4])
def test_doc_example_passes_default_health_checks(s):
    ns = {"StrengthReduceMul": load_example("custom_pass.py").StrengthReduceMul}
    exec(compile(_doc_block(), str(DOC), "exec"), ns)  # the docs' own code
    test = ns["test_output_well_formed"]
    # hypothesis's own defaults (not tests/conftest.py's profile, which relaxes health checks);
    # only the example database (no .hypothesis/ folder) and the per-example wall-clock
    # deadline (not a health check; tests make no wall-clock assertions) are off
    default = settings.get_profile("default")
    assert default.suppress_health_check == ()
    seed(s)(settings(default, database=None, deadline=None)(test))()
