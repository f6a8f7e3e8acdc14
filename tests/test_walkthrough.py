"""docs/walkthrough.md runs as written: its files are written and its shell commands run,
in order, in an empty folder; shown outputs must match (so the walkthrough cannot rot).

The markdown marks each block with an HTML comment (invisible when rendered) just above it:
``<!-- walkthrough: file PATH -->`` (write the block to PATH), ``<!-- walkthrough: run -->``
(run each line with bash; ``# exit N`` at the end of a line expects exit code N, default 0),
``<!-- walkthrough: output -->`` (the stdout of the run block's last command, exactly) and
``<!-- walkthrough: skip ... -->`` (not run: the install, which CI did before the tests).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "walkthrough.md"
_BLOCK = re.compile(r"<!-- walkthrough: (\w+)([^>]*?)-->\s*\n```[\w-]*\n(.*?)```", re.S)
_EXIT = re.compile(r"\s+#\s*exit\s+(\d+)\s*$")


def steps() -> list[tuple[str, str, str]]:
    """``(kind, argument, body)`` for each marked block, in document order."""
    return [(k, a.strip(), body) for k, a, body in _BLOCK.findall(DOC.read_text(encoding="utf-8"))]


def test_every_block_is_marked():
    """An unmarked code block would silently escape the test."""
    text = DOC.read_text(encoding="utf-8")
    fences = len(re.findall(r"^```[\w-]+$", text, re.M))
    assert fences == len(steps()) > 0
    kinds = {k for k, _, _ in steps()}
    assert kinds <= {"file", "run", "output", "skip"} and {"file", "run", "output"} <= kinds


def _env(bin_dir: Path) -> dict[str, str]:
    """`tirx` and `python` are this checkout's, whatever is installed elsewhere."""
    bin_dir.mkdir()
    (bin_dir / "tirx").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m tirx.tools.cli "$@"\n')
    (bin_dir / "tirx").chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("TIRX_TRACEBACK", None)
    return env


def test_walkthrough_runs(tmp_path):
    pytest.importorskip("hypothesis")
    work = tmp_path / "work"
    work.mkdir()
    env = _env(tmp_path / "bin")
    last = None
    ran = 0
    for kind, arg, body in steps():
        if kind == "file":
            dest = work / arg
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(body, encoding="utf-8")
        elif kind == "run":
            for line in body.splitlines():
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                m = _EXIT.search(line)
                want = int(m.group(1)) if m else 0
                cmd = line[: m.start()] if m else line
                last = subprocess.run(
                    ["bash", "-o", "pipefail", "-c", cmd],
                    cwd=work,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
                assert last.returncode == want, f"$ {cmd}\n{last.stdout}\n{last.stderr}"
                assert "Traceback" not in last.stderr, f"$ {cmd}\n{last.stderr}"
                ran += 1
        elif kind == "output":
            assert last is not None, "an output block before any command"
            assert last.stdout == body, f"$ {last.args[-1]}: the output differs from the docs"
    assert ran >= 10
    # what the walkthrough says happened did: comments kept, the pass applied
    scale = (work / "kernels" / "scale.tirx").read_text()
    assert "# Copyright: the tirx walkthrough" in scale and "# times eight" in scale
    assert "<< 2" in (work / "out" / "axpy.tirx").read_text()
