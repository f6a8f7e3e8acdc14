"""examples/*.py written for the frontend run, and their kernels round-trip through the text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from examples_dir import load_example

import tirx

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name: str):
    return load_example(f"{name}.py")


@pytest.fixture(scope="module")
def rfc():
    return _load("rfc_metaprogramming")


def test_rfc_example_main_prints(rfc, capsys):
    rfc.main()
    out = capsys.readouterr().out
    assert out.count("@T.function") == 7


def test_rfc_kernels_roundtrip(rfc):
    kernels = [
        rfc.gen_matmul(16, 8),
        rfc.broadcast_add(
            np.zeros((3, 1), "float32"), np.zeros((4,), "float32"), np.zeros((3, 4), "float32")
        ),
        rfc.row_sum(np.zeros((2, 5), "float32")),
        rfc.te_compute_sugar,
        rfc.nms_iou,
    ]
    for k in kernels:
        tirx.assert_structural_equal(tirx.loads(tirx.dumps(k)), k)


def test_f1_equals_hand_written(rfc):
    from tirx.script import tirx as T

    @T.function
    def matmul(
        A: T.Tensor((16, 8), "float32"), B: T.Tensor((8, 16), "float32"), C: T.Tensor((16, 16), "float32")
    ):
        for i, j in T.grid(16, 16):
            acc: T.float32 = 0.0
            for k in range(8):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc

    tirx.assert_structural_equal(rfc.gen_matmul(16, 8), matmul)


def test_seed_guide_main_runs(capsys):
    _load("seed_guide").main()
    assert capsys.readouterr().out.count("@T.function") == 3
