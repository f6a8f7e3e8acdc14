"""The README's main job runs and says which target it used."""

from __future__ import annotations

import numpy as np


def test_demo_prints_kernel_and_runs(capsys):
    from tirx.tools import demo

    assert demo.main([]) == 0
    out = capsys.readouterr().out
    assert "def add[n](A: T.Tensor((n,), T.float16), B: T.Tensor((n,), T.float16)):" in out
    assert "B[i] = A[i] + T.float16(2.0)" in out
    assert "target: " in out
    ok, _why = demo._gpu_available()
    if not ok:
        assert "target: interp" in out
        assert str(np.arange(10, dtype=np.float16) + np.float16(2)) in out
