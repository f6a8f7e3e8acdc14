"""On a GPU (issue #29 items 13 and 11c): the direct-call cache frees the CUDA kernels of the
specializations a ``@T.jit`` cache drops, and a ``tirx fuzz --cuda`` failure record holds
the inputs and both sides' outputs and replays exactly (with the comparison forced to fail).

Skipped cleanly without a CUDA driver/device.
"""

from __future__ import annotations

import gc
import json
import weakref
from pathlib import Path

import numpy as np
import pytest
from gpu_util import require_gpu

torch = require_gpu()

import tirx  # noqa: E402
from tirx.runtime import direct  # noqa: E402
from tirx.script import tirx as T  # noqa: E402
from tirx.testing import campaign, gpu_compare  # noqa: E402
from tirx.tools.cli import main  # noqa: E402

pytestmark = pytest.mark.gpu


@T.jit(cache_size=3)
def add_v(a: T.Tensor((64,), "float32"), *, V: T.constexpr):
    with T.device_entry(1, 1, 1, 64, 1, 1):
        i: T.let[T.int32] = T.cuda.thread_idx("x")
        a[i] = a[i] + T.float32(V)


def test_gpu_direct_calls_keep_no_more_kernels_than_the_jit_cache():
    direct._CACHE.clear()
    a = torch.zeros(64, dtype=torch.float32, device="cuda")
    for i in range(12):
        add_v(a, V=float(i))
    torch.cuda.synchronize()
    gc.collect()
    assert len(add_v.cache) == 3 and len(direct._CACHE) <= 3
    assert float(a[5]) == sum(range(12))


def test_a_gpu_direct_call_does_not_keep_its_function_alive():
    @T.function
    def one(a: T.Tensor((32,), "int32")):
        with T.device_entry(1, 1, 1, 32, 1, 1):
            i: T.let[T.int32] = T.cuda.thread_idx("x")
            a[i] = i

    a = torch.zeros(32, dtype=torch.int32, device="cuda")
    one(a)
    assert a.cpu().tolist() == list(range(32))
    ref = weakref.ref(one)
    del one
    gc.collect()
    assert ref() is None


def test_a_cuda_failure_record_holds_both_sides_and_replays(tmp_path, monkeypatch, capsys):
    real_same = gpu_compare.same

    def same_then_fail(want, got, ulp_ok=False):
        real_same(want, got, ulp_ok)  # they agree; the test makes it a failure
        raise AssertionError("forced: the test treats agreement as a difference")

    monkeypatch.setattr(gpu_compare, "same", same_then_fail)
    out = gpu_compare.cuda_campaign(
        seed=11, examples=10, time_budget=None, max_shrink_time=10.0, save_dir=tmp_path
    )
    assert not out.ok
    rec_path = next(p for p in out.saved if p.endswith(".json"))
    rec = json.loads(Path(rec_path).read_text(encoding="utf-8"))
    assert rec["check"] == "tirx.testing.gpu_compare:cuda_check" and rec["mode"] == "cuda"
    interp = [campaign.decode_value(v) for v in rec["outputs"]["interpreter"]]
    cuda = [campaign.decode_value(v) for v in rec["outputs"]["cuda"]]
    assert interp and len(interp) == len(cuda)
    for x, y in zip(interp, cuda):
        np.testing.assert_array_equal(x, y)
    # the inputs rerun on the interpreter give the recorded interpreter outputs
    from tirx.testing.runnable import Runnable

    r = Runnable(
        tirx.loads(rec["kernel"]), tuple(campaign.decode_value(v) for v in rec["inputs"]), rec["note"]
    )
    for x, y in zip(r.run(), interp):
        assert x.tobytes() == y.tobytes()
    assert main(["fuzz", "--replay", rec_path]) == 1  # still forced to fail
    assert "FAILED again" in capsys.readouterr().out
    monkeypatch.setattr(gpu_compare, "same", real_same)
    assert main(["fuzz", "--replay", rec_path]) == 0
    assert "passes now" in capsys.readouterr().out
