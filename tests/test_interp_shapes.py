"""The interpreter compiles a buffer's shape once per function, not once per access: a
mutated kernel whose buffer shapes were large expressions took about 1 s to compile
(93,000 nodes compiled for 66 accesses of one 1,400-node shape; mutate fuzz, seed 1220059828)."""

from __future__ import annotations

import numpy as np

import tirx
import tirx.interp.engine as E


def test_a_shape_is_compiled_once_per_function(monkeypatch):
    big = " + ".join(["n"] * 50)  # a 50-term shape expression
    body = "\n".join(f"        B[i] = B[i] + A[{k} % n]" for k in range(20))
    text = (
        f"@T.function\ndef k[n](A: T.Tensor((n,), T.int32), B: T.Tensor(({big},), T.int32)):\n"
        "    for i in range(n):\n" + body + "\n"
    )
    f = tirx.loads(text)
    calls = []
    real = E.FuncCompiler._compile_shape
    monkeypatch.setattr(E.FuncCompiler, "_compile_shape", lambda self, ex: calls.append(1) or real(self, ex))
    k = tirx.compile(f, target="interp")
    assert len(calls) <= 2  # one per buffer, not one per access
    A = np.arange(2, dtype=np.int32)  # n = 2
    B = np.zeros(100, np.int32)  # 50 * n
    k(A, B)
    np.testing.assert_array_equal(B[:2], [sum(k % 2 for k in range(20))] * 2)
    assert not B[2:].any()
