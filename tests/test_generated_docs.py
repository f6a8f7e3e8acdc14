"""Pages generated from the code stay current: the op reference (docs/ops.md, from the op
table) and the TIRx coverage table (docs/tirx_compat.md, from surface.json)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(path: str):
    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize(
    "path, how", [("tools/op_reference.py", "op_reference"), ("tools/tirx_oracle/coverage.py", "coverage")]
)
def test_generated_page_is_current(path, how, capsys):
    assert _tool(path).main(["--check"]) == 0, capsys.readouterr().out


def test_op_reference_lists_every_op_and_alias():
    from tirx.ir.op import aliases, all_ops

    text = (ROOT / "docs" / "ops.md").read_text()
    for name in all_ops(builtin_only=True):
        assert f"`T.{name}(" in text or f"`T.{name}.<modifiers>" in text, name
    for name, a in aliases().items():
        assert f"| `T.{name}` | alias |" in text and f"builds `T.{a.target}`" in text, name
