"""Every TIRx compat kernel runs on the interpreter and matches a numpy reference.

Kernels come from the hand-built IRBuilder versions (``tirx.testing.compat_kernels``) and,
when the grammar can load it, from the printed ``.tirx`` text as well.
"""

from __future__ import annotations

import numpy as np
import pytest
from compat_dir import COMPAT_DIR as COMPAT

import tirx
import tirx.interp as ti
from tirx.testing.compat_kernels import KERNELS


def _from_text(name):
    path = COMPAT / f"{name}.tirx"
    if not path.exists():
        pytest.skip(f"no {path}")
    try:
        return tirx.loads(path.read_text(), source_name=str(path))
    except (ImportError, AttributeError, NotImplementedError) as e:
        pytest.skip(f"grammar not available: {e}")


@pytest.fixture(params=["builder", "text"])
def get(request):
    def load(name):
        if request.param == "builder":
            return KERNELS[name]()
        return _from_text(name)

    load.form = request.param
    return load


rng = np.random.default_rng(0)


def test_ew_add_f16_dyn(get):
    k = ti.compile(get("ew_add_f16_dyn"))
    a = np.arange(10, dtype=np.float16)
    b = np.empty_like(a)
    k(a, b)
    np.testing.assert_array_equal(b, np.arange(2, 12, dtype=np.float16))
    a = rng.standard_normal(1000).astype(np.float16)
    b = np.zeros_like(a)
    k(a, b)
    np.testing.assert_array_equal(b, a + np.float16(2.0))


def test_let_bind(get):
    k = ti.compile(get("let_bind"))
    A = rng.integers(-1000, 1000, 128).astype(np.int32)
    B = np.zeros(128, np.int64)
    k(A, B)
    tx = np.arange(128)
    a = A.astype(np.int64) + 1
    b = a * 2
    ref = (b + 3) + (a + b + tx * 2 + tx * 2 + 1)
    np.testing.assert_array_equal(B, ref)


def test_loops_kinds_cpu(get):
    k = ti.compile(get("loops_kinds_cpu"))
    A = rng.standard_normal((64, 64)).astype(np.float32)
    B = np.zeros((64, 64), np.float32)
    V = rng.standard_normal(64).astype(np.float32)
    rB, rV = B.copy(), V.copy()
    rB[:] = A * np.float32(2.0)
    for i in range(2, 64, 2):
        rV[i] = rV[i - 2] + np.float32(1.0)
    for i in range(1, 63):
        rV[i] = rV[i] + rV[i + 1]
    rV *= np.float32(0.5)
    for i in range(4):
        for j in range(8):
            for kk in range(2):
                rB[i * 8 + j, kk] = A[kk, i * 8 + j]
    rB[2:8, 0:8] = 0
    k(A, B, V)
    np.testing.assert_array_equal(B, rB)
    np.testing.assert_array_equal(V, rV)


def test_matmul_tiled_smem(get):
    f = get("matmul_tiled_smem")
    if get.form == "text" and tirx.structural_equal(f, KERNELS["matmul_tiled_smem"]()):
        return  # the text loads to the kernel the builder run below checks (it takes seconds)
    k = ti.compile(f)
    A = rng.standard_normal((512, 512)).astype(np.float32)
    B = rng.standard_normal((512, 512)).astype(np.float32)
    C = np.zeros((512, 512), np.float32)
    k(A, B, C)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-3)


def test_module_multi_func(get):
    mk = ti.compile(get("module_multi_func"))
    A = rng.standard_normal(1024).astype(np.float32)
    B = rng.standard_normal(1024).astype(np.float32)
    out = np.zeros(1024, np.float32)
    mk.k_relu(A, out)
    np.testing.assert_array_equal(out, np.maximum(A, 0))
    C = np.zeros(1024, np.float32)
    mk["k_lerp"](A, B, C)
    np.testing.assert_array_equal(C, A + (B - A) * np.float32(0.25))
    # host-only private helpers run too and return their scalar
    assert mk.relu(-3.0) == 0.0
    assert mk.lerp(1.0, 3.0, 0.5) == 2.0
    with pytest.raises(TypeError, match="call one by name"):
        mk(A, out)


def test_ptr_reinterpret(get):
    k = ti.compile(get("ptr_reinterpret"))
    h = rng.standard_normal(256).astype(np.float32)
    out = np.full(256, -7, np.int32)
    k(h, 200, out)
    ref = (h.view(np.int32) >> 23) & 255
    np.testing.assert_array_equal(out[:200], ref[:200])
    np.testing.assert_array_equal(out[200:], -7)


def test_break_continue(get):
    k = ti.compile(get("break_continue"))
    A = rng.integers(-5, 50, (256, 64)).astype(np.int32)
    A[::3, 17] = 42
    A[::5, 5] = 42
    Idx = np.zeros(256, np.int32)
    Cnt = np.zeros(256, np.int32)
    k(A, Idx, Cnt)
    for r in range(256):
        f = -1
        for j in range(64):
            if A[r, j] < 0:
                continue
            if A[r, j] == 42:
                f = j
                break
        assert Idx[r] == f
        assert Cnt[r] == sum(1 for kk in range(1, 64) if A[r, kk] % 2 != 1)


def test_dyn_multi_shape(get):
    k = ti.compile(get("dyn_multi_shape"))
    X = rng.standard_normal((3, 5, 64)).astype(np.float32)
    Y = np.zeros((3, 64), np.float32)
    Z = np.full(40, 9.0, np.float32)
    k(X, Y, Z)
    acc = np.zeros((3, 64), np.float32)
    for t in range(5):
        acc = acc + X[:, t, :]
    np.testing.assert_array_equal(Y, acc / np.float32(5))
    np.testing.assert_array_equal(Z, 0)
    with pytest.raises(ValueError, match="batch"):
        k(X, np.zeros((4, 64), np.float32), Z)
    with pytest.raises(TypeError, match="Y"):
        k(X, np.zeros((3, 64), np.float64), Z)
    with pytest.raises(ValueError, match="rank"):
        k(X, np.zeros(64, np.float32), Z)
    with pytest.raises(TypeError, match="3 argument"):
        k(X, Y)


def test_reduce_smem_tree(get):
    k = ti.compile(get("reduce_smem_tree"))
    A = rng.standard_normal(65536).astype(np.float32)
    out = np.zeros(256, np.float32)
    k(A, out)
    # the same tree order in float32
    buf = A.reshape(256, 256).copy()
    s = 128
    while s > 0:
        buf[:, :s] = buf[:, :s] + buf[:, s : 2 * s]
        s //= 2
    np.testing.assert_array_equal(out, buf[:, 0])


def test_mutable_scalars(get):
    k = ti.compile(get("mutable_scalars"))
    A = (rng.standard_normal(256) * 4).astype(np.float32)
    B = np.zeros(256, np.float32)
    k(A, B)
    tx = np.arange(256)
    s = np.zeros(256, np.float32)
    flag = np.zeros(256, bool)
    for kk in range(8):
        s = s + A[(tx + kk) % 256]
        s = s * np.float32(0.9)
        flag |= s > 10
    ref = np.where(flag, s - np.float32(8), np.float32(1))
    np.testing.assert_array_equal(B, ref)


def test_inline_helpers(get):
    k = ti.compile(get("inline_helpers"))
    A = rng.standard_normal(2048).astype(np.float32)
    B = np.zeros(2048, np.float32)
    k(A, B)
    f = np.float32
    ref = f(0.5) * A * (f(1.0) + np.tanh(f(0.7978845608) * (A + f(0.044715) * A * A * A))) * f(2.0) + f(1e-05)
    np.testing.assert_allclose(B, ref, rtol=1e-6, atol=1e-6)


def test_jit_specialize(get):
    k = ti.compile(get("jit_specialize"))
    A = rng.standard_normal(1000).astype(np.float32)
    B = rng.standard_normal(1000).astype(np.float32)
    ref = (A.astype(np.float64) * 2 + B).astype(np.float32)
    k(A, B)
    np.testing.assert_array_equal(B, ref)
