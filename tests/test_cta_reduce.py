"""``T.cuda.cta_reduce`` / ``cta_sum`` / ``cta_max`` / ``cta_min`` (TIRx's names): TIRx's printed
text loads (a buffer where the scratch pointer goes), the interpreter reduces in the CUDA
helper's order (checked against numpy and, on a GPU, bit for bit against CUDA)."""

from __future__ import annotations

import numpy as np
import pytest

import tirx
from tirx.errors import DiagnosticError
from tirx.testing.opcheck import gpu

_TEXT = """
@T.function
def k(A: T.Tensor((BLOCKS * THREADS,), T.DT), B: T.Tensor((BLOCKS * THREADS,), T.DT)):
    with T.device_entry(BLOCKS, 1, 1, THREADS, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):
        tx: T.let[T.int32] = T.cuda.block_idx("x") * THREADS + T.cuda.thread_idx("x")
        scratch = T.alloc_tensor(ty_args=[T.Tensor((WARPS,), T.DT, scope="shared")])
        s: T.let[T.DT] = T.cuda.cta_reduce(A[tx], "HOW", WARPS, scratch)
        B[tx] = s
"""  # TIRx's printed form of T.cuda.cta_sum(A[tx], 8, scratch) (its .script()), generalized


def _kernel(how: str, warps: int = 8, dt: str = "float32", blocks: int = 3):
    t = (
        _TEXT.replace("BLOCKS", str(blocks)).replace("THREADS", str(32 * warps)).replace("WARPS", str(warps))
        .replace("DT", dt).replace("HOW", how)
    )  # fmt: skip
    return tirx.loads(t)


def _butterfly(x: np.ndarray, op) -> np.ndarray:
    """Lane 0's value of a butterfly over the last axis (power-of-two length)."""
    n = x.shape[-1]
    idx = np.arange(n)
    off = n // 2
    while off:
        x = op(x, x[..., idx ^ off])
        off //= 2
    return x[..., 0]


@pytest.mark.parametrize("how, op", [("sum", np.add), ("max", np.fmax), ("min", np.fmin)])
@pytest.mark.parametrize("warps", [1, 4, 8])
def test_interpreter_reduces_in_the_helper_s_order(how, op, warps):
    f = _kernel(how, warps)
    n = 3 * 32 * warps
    A = np.random.default_rng(warps).standard_normal(n).astype(np.float32)
    B = np.zeros(n, np.float32)
    tirx.compile(f, target="interp")(A, B)
    want = _butterfly(_butterfly(A.reshape(3, warps, 32), op), op)  # warps, then the partials
    assert (np.repeat(want, 32 * warps) == B).all()


def test_text_prints_back_and_python_spellings_build_the_same():
    f = _kernel("sum")
    text = tirx.dumps(f)
    assert 'T.cuda.cta_reduce(A[tx], "sum", 8, scratch)' in text  # written with the tensor: TIRx's text
    assert tirx.structural_equal(tirx.loads(text), f)
    spelled = tirx.loads(text.replace("8, scratch)", "8, scratch.data)"))  # the pointer, spelled out
    assert 'T.cuda.cta_reduce(A[tx], "sum", 8, scratch.data)' in tirx.dumps(spelled)
    assert not tirx.structural_equal(spelled, f)  # two spellings, two IRs (as in TIRx)
    alias = tirx.loads(_TEXT.replace("BLOCKS", "3").replace("THREADS", "256").replace("WARPS", "8")
                       .replace("DT", "float32").replace('T.cuda.cta_reduce(A[tx], "HOW", 8, scratch)',
                                                          "T.cuda.cta_sum(A[tx], 8, scratch)"))  # fmt: skip
    tirx.assert_structural_equal(alias, f)


def test_num_warps_must_match_the_block():
    f = _kernel("sum", warps=8)
    bad = tirx.loads(tirx.dumps(f).replace('"sum", 8,', '"sum", 4,'))
    with pytest.raises(RuntimeError, match="num_warps is 4 but the block has 256 threads"):
        tirx.compile(bad, target="interp")(np.zeros(768, np.float32), np.zeros(768, np.float32))
    with pytest.raises(DiagnosticError, match="num_warps"):
        tirx.loads(tirx.dumps(f).replace('"sum", 8,', '"sum", 3,'))


@pytest.mark.gpu
@pytest.mark.parametrize("how", ["sum", "max", "min"])
@pytest.mark.parametrize("dt", ["float32", "float16", "int32"])
def test_gpu_matches_the_interpreter_bit_for_bit(how, dt):
    torch, why = gpu()
    if torch is None:
        pytest.skip(why)
    f = _kernel(how, 8, dt)
    rng = np.random.default_rng(1)
    A = (
        (rng.standard_normal(768) * 100).astype(dt)
        if dt != "int32"
        else rng.integers(-1000, 1000, 768, dtype=np.int32)
    )
    want = np.zeros(768, dt)
    tirx.compile(f, target="interp")(A, want)
    a = torch.from_numpy(A).cuda()
    b = torch.zeros_like(a)
    tirx.compile(f, target="cuda", cache=False)(a, b)
    torch.cuda.synchronize()
    got = b.cpu().numpy()
    assert (got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")).all()
