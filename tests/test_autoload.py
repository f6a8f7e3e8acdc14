"""Backend autoload through the ``tirx.backends`` entry-point group, with real installed packages.

Each test writes tiny distributions (a package plus a ``*.dist-info`` with METADATA and
entry_points.txt) into a temporary site dir and runs a fresh interpreter with that dir on
PYTHONPATH, exactly as ``pip install --target`` would lay them out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

GOOD = """
import os, tirx

def register():
    # the core is initialised when backends run: the public API and the op table exist
    from tirx.ir import op
    ok = all(hasattr(tirx, n) for n in ("structural_equal", "structural_hash", "loads", "compile", "ir"))
    ok = ok and op.lookup("exp") is not None
    with open(os.environ["MARKER"], "a") as fh:
        fh.write(f"good:{ok}\\n")
"""

BAD = """
def register():
    raise RuntimeError("backend exploded")
"""


def _install(site: Path, dist: str, module: str, code: str, entry: str, group: str = "tirx.backends") -> None:
    (site / module).mkdir(parents=True)
    (site / module / "__init__.py").write_text(textwrap.dedent(code))
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{entry}\n")
    (info / "RECORD").write_text("")


def _run(site: Path, marker: Path, code: str, **env_extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("TIRX_BACKEND_AUTOLOAD", None)
    env.update(PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]), MARKER=str(marker), **env_extra)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


IMPORT_TWICE = "import tirx, importlib, json; import tirx; print(json.dumps(tirx.autoload.loaded))"


@pytest.fixture
def site(tmp_path):
    s = tmp_path / "site"
    s.mkdir()
    return s


def test_backend_callable_runs_once_after_core_init(site, tmp_path):
    _install(site, "tirx_fake_backend", "tirx_fake_backend", GOOD, "fake = tirx_fake_backend:register")
    marker = tmp_path / "marker"
    r = _run(site, marker, IMPORT_TWICE)
    assert r.returncode == 0, r.stderr
    assert marker.read_text() == "good:True\n"  # once, and the core was ready
    assert json.loads(r.stdout.strip().splitlines()[-1]) == ["fake"]
    assert "Warning" not in r.stderr


def test_failing_backend_warns_and_import_still_works(site, tmp_path):
    _install(site, "tirx_bad_backend", "tirx_bad_backend", BAD, "bad = tirx_bad_backend:register")
    _install(site, "tirx_missing_backend", "tirx_missing", "", "gone = tirx_missing.nowhere:register")
    _install(site, "tirx_fake_backend", "tirx_fake_backend", GOOD, "fake = tirx_fake_backend:register")
    marker = tmp_path / "marker"
    code = "import tirx, json; from tirx.ir import Var; print(json.dumps(tirx.autoload.loaded)); Var('x') + 1"
    r = _run(site, marker, code)
    assert r.returncode == 0, r.stderr
    assert "RuntimeWarning" in r.stderr
    assert "backend 'bad'" in r.stderr and "backend exploded" in r.stderr
    assert "backend 'gone'" in r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1]) == ["fake"]  # the good one still ran
    assert marker.read_text() == "good:True\n"


def test_failing_backend_under_warnings_as_errors_still_imports(site, tmp_path):
    # even -W error must not turn a broken backend into a broken import
    _install(site, "tirx_bad_backend", "tirx_bad_backend", BAD, "bad = tirx_bad_backend:register")
    r = _run(
        site, tmp_path / "m", "import warnings; warnings.simplefilter('error'); import tirx; print('ok')"
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    assert "backend exploded" in r.stderr


@pytest.mark.parametrize("value", ["0", "false", "off"])
def test_env_var_disables_autoload(site, tmp_path, value):
    _install(site, "tirx_fake_backend", "tirx_fake_backend", GOOD, "fake = tirx_fake_backend:register")
    marker = tmp_path / "marker"
    r = _run(site, marker, IMPORT_TWICE, TIRX_BACKEND_AUTOLOAD=value)
    assert r.returncode == 0, r.stderr
    assert not marker.exists()
    assert json.loads(r.stdout.strip().splitlines()[-1]) == []


def test_other_groups_are_ignored_and_prescan_skips_metadata(site, tmp_path):
    _install(site, "other_plugin", "other_plugin", GOOD, "x = other_plugin:register", group="other.group")
    marker = tmp_path / "marker"
    code = "import sys, tirx; print('importlib.metadata' in sys.modules)"
    r = _run(site, marker, code)
    assert r.returncode == 0, r.stderr
    assert not marker.exists()
    # with no tirx.backends entry point anywhere the cheap pre-scan avoids importlib.metadata
    # (unless something else on this interpreter's path imported it)
    baseline = subprocess.run(
        [sys.executable, "-c", "import sys; print('importlib.metadata' in sys.modules)"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(site)),
    )
    if baseline.stdout.strip() == "False":
        assert r.stdout.strip() == "False"


def test_prescan_sees_the_group(site, monkeypatch):
    from tirx import autoload

    monkeypatch.setattr(sys, "path", [str(site)])
    assert autoload._maybe_has_group() is False
    _install(site, "tirx_fake_backend", "tirx_fake_backend", GOOD, "fake = tirx_fake_backend:register")
    assert autoload._maybe_has_group() is True
