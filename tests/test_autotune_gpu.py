"""``@T.autotune`` on a GPU (issue #32): a CUDA kernel's configs compiled in worker processes,
timed with CUDA events, the winner kept in memory and on disk and read back by a fresh
process; accumulated outputs restored between timed runs. Skipped without a GPU
(tests/test_autotune.py runs everywhere)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gpu_util import require_gpu

torch = require_gpu()

from autotune_kernels import acc  # noqa: E402  (the kernel both tuning test files tune)

from tirx.runtime import autotune as A  # noqa: E402
from tirx.script import tirx as T  # noqa: E402

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parent.parent
SIZE = 1 << 22


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TIRX_DISABLE_DISK_CACHE", raising=False)


CONFIGS = [
    {"BLOCK": 128, "REPEAT": 1024},
    {"BLOCK": 256, "REPEAT": 1},
    {"BLOCK": 512, "REPEAT": 1},
    {"BLOCK": 2048, "REPEAT": 1},  # fails its static assertion
]


def test_a_cuda_kernel_is_tuned_with_events_and_workers():
    tuned = T.autotune(acc, configs=CONFIGS, key=["N"], warmup=5, rep=20, restore_value=["C"], workers=4)
    x = (torch.arange(SIZE, device="cuda") % 7).float()
    c = torch.ones(SIZE, device="cuda")
    tuned(x, c, N=SIZE)
    best = tuned.best_config(SIZE)
    assert best is not None and best["REPEAT"] == 1
    times = {(cfg["BLOCK"], cfg["REPEAT"]): ms for cfg, ms in tuned.timings[(SIZE,)]}
    assert len(times) == 3 and all(ms > 0 for ms in times.values())
    assert times[(128, 1024)] > 2 * min(times[(256, 1)], times[(512, 1)]), times
    ((failed, why),) = tuned.failures[(SIZE,)]
    assert failed == {"BLOCK": 2048, "REPEAT": 1} and "BLOCK is at most 1024" in why
    stats = tuned.stats[(SIZE,)]
    assert stats["source"] == "tuned" and stats["device"].startswith("cuda:")
    torch.testing.assert_close(c, 1 + x)  # the timed runs each started from C = 1
    tuned(x, c, N=SIZE)  # the same key: no tuning, the winner runs
    torch.testing.assert_close(c, 1 + 2 * x)
    assert tuned.stats[(SIZE,)] is stats


SCRIPT = """\
import json, sys
sys.path.insert(0, {tests!r})
import torch
import test_autotune_gpu as G
from tirx.script import tirx as T

tuned = T.autotune(G.acc, configs=G.CONFIGS, key=["N"], warmup=5, rep=20, restore_value=["C"])
x = torch.ones(G.SIZE, device="cuda")
c = torch.zeros(G.SIZE, device="cuda")
tuned(x, c, N=G.SIZE)
torch.cuda.synchronize()
print(json.dumps({{"source": tuned.stats[(G.SIZE,)]["source"], "best": tuned.best_config(G.SIZE),
                   "ok": bool((c == 1).all())}}))
"""


def test_a_fresh_process_on_the_same_gpu_reads_the_winner(tmp_path):
    script = tmp_path / "again.py"
    script.write_text(SCRIPT.format(tests=str(ROOT / "tests")))
    env = dict(os.environ, TIRX_CACHE_DIR=str(tmp_path / "shared"), PYTHONPATH=str(ROOT))
    runs = []
    for _ in range(2):
        r = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600
        )
        assert r.returncode == 0, r.stderr[-3000:]
        runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    assert runs[0]["source"] == "tuned" and runs[1]["source"] == "disk"
    assert runs[0]["best"] == runs[1]["best"] and runs[0]["best"]["REPEAT"] == 1
    assert runs[0]["ok"] and runs[1]["ok"]


def test_parallel_compile_feeds_the_compile_cache():
    values = [{"N": SIZE, **c} for c in CONFIGS]
    built = A.build_candidates(acc, values, "cuda", workers=4)
    assert [why is None for _f, _k, why in built] == [True, True, True, False]
    assert all(k.module.cache_hit == "hit" for _f, k, why in built if why is None)
