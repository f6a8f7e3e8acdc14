"""`tirx fuzz --semantic --passes PIPELINE [--plugin FILE]`: a user's passes must keep what
the kernel computes (interpreter results before vs after the pipeline); a wrong pass is
caught, its kernel saved as the campaign saves failures, and `--replay` reruns it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

import tirx

pytest.importorskip("hypothesis")

# a deliberately wrong pass: integer x + y becomes x - y (kernels index and size with
# additions, so nearly every generated kernel computes something else, or fails, after it)
WRONG = '''\
"""A broken pass plugin: x + y -> x - y on integers."""

from tirx.ir import Add, Mutator, PrimType, Sub
from tirx.passes import function_pass, register_pass


class _Rewrite(Mutator):
    def visit_Add(self, e):
        e = self.generic_visit(e)
        if isinstance(e, Add) and isinstance(e.ty, PrimType) and e.ty.is_int:
            return Sub(e.a, e.b, span=e.span)
        return e


@register_pass("PASS_NAME")
@function_pass
def add_to_sub(func):
    """x + y -> x - y (wrong on purpose)."""
    return _Rewrite().visit(func)
'''


@pytest.fixture
def wrong_plugin(tmp_path):
    """``make(name)``: the plugin file, registering the wrong pass as ``name`` (each test its
    own name: a name is registered once per process)."""

    def make(name: str) -> Path:
        p = tmp_path / f"{name}.py"
        p.write_text(WRONG.replace("PASS_NAME", name))
        return p

    return make


def _fuzz(capsys, *args):
    from tirx.tools.cli import main

    rc = main(["fuzz", "--semantic", "--no-progress", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_a_wrong_plugin_pass_is_caught_saved_and_replayed(tmp_path, wrong_plugin, capsys):
    plugin = wrong_plugin("wrong-add-to-sub")
    save = tmp_path / "failures"
    rc, out, err = _fuzz(
        capsys,
        "--plugin", str(plugin), "--passes", "simplify,wrong-add-to-sub",
        "-n", "30", "--seed", "3", "--max-shrink-time", "5", "--save", str(save),
    )  # fmt: skip
    assert rc == 1, out + err
    head = out.splitlines()[0]
    assert head.startswith("semantic fuzz: ") and "passes simplify,wrong-add-to-sub" in head
    assert head.endswith(": FAIL")
    assert "the passes 'simplify,wrong-add-to-sub'" in out  # the error names the pipeline
    replay = re.search(r"^replay: (.*)$", out, re.M).group(1)
    assert replay.startswith("tirx fuzz --semantic --passes simplify,wrong-add-to-sub --plugin ")
    assert re.search(r"--seed \d+ --examples \d+$", replay)
    saved = re.findall(r"^saved: (\S+)$", out, re.M)
    assert {Path(p).suffix for p in saved} == {".tirx", ".json"}
    rec = json.loads(next(Path(p) for p in saved if p.endswith(".json")).read_text())
    assert rec["mode"] == "semantic" and rec["passes"] == "simplify,wrong-add-to-sub"
    assert rec["plugins"] == [os.path.abspath(plugin)] and rec["inputs"] and rec["kernel"]
    tirx.loads(next(Path(p) for p in saved if p.endswith(".tirx")).read_text())  # the kernel, as text
    # --replay rebuilds the recorded pipeline (importing the recorded plugin) and fails again
    from tirx.tools.cli import main

    json_path = next(p for p in saved if p.endswith(".json"))
    assert main(["fuzz", "--replay", json_path]) == 1
    assert "FAILED again" in capsys.readouterr().out


def test_meaning_keeping_passes_pass_and_the_summary_names_them(capsys):
    rc, out, _ = _fuzz(capsys, "--passes", "convert-ssa,simplify,cse", "-n", "15", "--seed", "1", "--no-save")
    assert rc == 0, out
    assert re.match(
        r"semantic fuzz: 15 kernels, passes convert-ssa,simplify,cse against the interpreter in .*, seed 1: ok$",
        out.strip(),
    )


def test_replaying_without_the_plugin_says_so(tmp_path, wrong_plugin, capsys):
    plugin = wrong_plugin("wrong-add-to-sub-2")
    save = tmp_path / "failures"
    rc, _, _ = _fuzz(
        capsys,
        "--plugin", str(plugin), "--passes", "wrong-add-to-sub-2",
        "-n", "30", "--seed", "4", "--max-shrink-time", "2", "--save", str(save),
    )  # fmt: skip
    assert rc == 1
    json_path = next(save.glob("*.json"))
    rec = json.loads(json_path.read_text())
    rec["plugins"] = [str(tmp_path / "gone.py")]
    json_path.write_text(json.dumps(rec))
    from tirx.tools.cli import main

    assert main(["fuzz", "--replay", str(json_path)]) == 2
    assert "no such plugin file" in capsys.readouterr().err


def test_passes_still_refused_with_the_other_campaigns(capsys):
    from tirx.tools.cli import main

    for mode in ("--mutate", "--frontend"):
        assert main(["fuzz", "-n", "1", "-p", "cse", mode]) == 2
        assert "--passes runs with the round-trip and --semantic campaigns" in capsys.readouterr().err
    assert main(["fuzz", "--semantic", "-n", "1", "-p", "simplfy"]) == 2
    assert "did you mean 'simplify'?" in capsys.readouterr().err
