"""A frontend diagnostic reaches the user without the parser's internal frames (issue #15):
its traceback holds the decorator's few frames, its cause is kept without frames, and
``TIRX_TRACEBACK=1`` keeps everything."""

from __future__ import annotations

import subprocess
import sys
import textwrap

_BAD = textwrap.dedent(
    """
    from tirx.script import tirx as T

    @T.function
    def k(A: T.Tensor((8,), "float32")):
        A[0] = q
    """
)


def _run(tmp_path, env_extra: dict) -> str:
    import os

    p = tmp_path / "bad_kernel.py"
    p.write_text(_BAD)
    env = {**os.environ, **env_extra}
    r = subprocess.run([sys.executable, str(p)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1
    return r.stderr


def test_diagnostic_without_internal_frames(tmp_path):
    err = _run(tmp_path, {"TIRX_TRACEBACK": "0"})
    assert "bad_kernel.py:6:12" in err and "name 'q' is not defined" in err
    assert "tirx/script/parser.py" not in err  # no parser frames
    assert err.count('File "') <= 4  # the user's line and the decorator's
    assert "NameError" in err  # the cause is still there


def test_tirx_traceback_keeps_every_frame(tmp_path):
    err = _run(tmp_path, {"TIRX_TRACEBACK": "1"})
    assert "parser.py" in err and err.count('File "') > 4


def test_the_cause_is_kept_in_process():
    import pytest
    from test_frontend_util import load_module

    import tirx

    with pytest.raises(tirx.DiagnosticError) as e:
        load_module(_BAD, "bad")
    assert isinstance(e.value.__cause__, NameError)
    assert e.value.__cause__.__traceback__ is None
