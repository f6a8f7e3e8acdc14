"""docs/contributing.md's "Adding an op" example works as the page says: one declaration gives
the op to the Python frontend, the text loader, the printer, CUDA codegen and the interpreter."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tirx
from tirx.ir import op as opmod

DOC = Path(__file__).resolve().parent.parent / "docs" / "contributing.md"


@pytest.fixture(scope="module")
def softplus():
    text = DOC.read_text()
    m = re.search(r"```python\n# example: adding an op\n(.*?)```", text, re.S)
    assert m, "the example block is missing from docs/contributing.md"
    if opmod.lookup("my.softplus") is None:
        exec(compile(m.group(1), str(DOC), "exec"), {"__name__": "contributing_example"})
    return opmod.lookup("my.softplus")


def _kernel():
    from tirx.script import tirx as T

    @T.function
    def k(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.float32)):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=64))
        i = T.cuda.thread_idx("x")
        B[i] = T.my.softplus(A[i])

    return k


def test_one_declaration_reaches_every_consumer(softplus):
    assert softplus is not None and softplus.doc.startswith("log(1 + exp(x))")
    k = _kernel()
    text = tirx.dumps(k)
    assert "T.my.softplus(A[i])" in text
    assert tirx.structural_equal(tirx.loads(text), k)
    from tirx.codegen import generate

    src = generate(k).text
    assert src.count("__device__ __forceinline__ float my_softplus") == 1
    assert "my_softplus(A[i])" in src
    A = np.linspace(-20, 20, 64, dtype=np.float32)
    B = np.zeros(64, np.float32)
    tirx.compile(k, target="interp")(A, B)
    np.testing.assert_allclose(B, np.log1p(np.exp(A.astype(np.float64))).astype(np.float32), rtol=1e-6)


def test_the_example_op_compiles_through_nvrtc(softplus):
    pytest.importorskip("cuda.bindings.nvrtc")
    k = tirx.compile(_kernel(), target="cuda -arch=sm_90a", cache=False)
    assert len(k.cubin) > 0 and k.module.log == ""
