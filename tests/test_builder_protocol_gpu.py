"""GPU: kernels built through TIRx's builder API (tirx/script/protocol) run on the device and
agree with the CPU interpreter and with numpy. Skipped cleanly without a CUDA device."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from gpu_util import require_gpu

torch = require_gpu()

import numpy as np  # noqa: E402

import tirx  # noqa: E402
from tirx.script import tirx as T  # noqa: E402

pytestmark = pytest.mark.gpu


def _kernel(n: int, block: int):
    """``B[i] = A[i] * 3 + (i % 5)`` over a grid of launch_thread regions, with a mutable cell and
    a branch, built call by call."""
    grid = (n + block - 1) // block
    with T.IRBuilder() as ib, T.function_():
        T.func_name_("scale")
        A = T.arg_("A", T.Tensor((n,), "int32"))
        B = T.arg_("B", T.Tensor((n,), "int32"))
        with T.device_entry(launch=T.cuda.LaunchConfig(grid=grid, block=block)):  # noqa: SIM117
            with T.launch_thread("blockIdx.x", grid) as bx, T.launch_thread("threadIdx.x", block) as tx:
                i = T.bind_(bx * block + tx, name="i")
                with T.if_(T.lt_(i, n)), T.then_():
                    acc = T.decl_mutable_cell_(A[i] * 3, ty=T.int32, name="acc")
                    T.set_mutable_cell_(acc, acc + i % 5)
                    T.setitem_(B, i, acc)
    return ib.get()


@pytest.mark.parametrize("n, block", [(128, 128), (1000, 256), (7, 32)])
def test_builder_kernel_matches_numpy_and_the_interpreter(n, block):
    f = _kernel(n, block)
    a = np.random.default_rng(n).integers(-1000, 1000, size=n, dtype=np.int32)
    want = a * 3 + np.arange(n, dtype=np.int32) % 5
    ta = torch.from_numpy(a).cuda()
    tb = torch.full((n,), -12345, dtype=torch.int32, device="cuda")
    tirx.compile(f, target="cuda")(ta, tb)
    torch.cuda.synchronize()
    assert np.array_equal(tb.cpu().numpy(), want)
    cpu = np.full(n, -12345, dtype=np.int32)
    f(a.copy(), cpu)  # host arrays: the interpreter
    assert np.array_equal(cpu, want)
    g = tirx.loads(tirx.dumps(f))  # and the printed text runs the same
    tc = torch.full((n,), -12345, dtype=torch.int32, device="cuda")
    tirx.compile(g, target="cuda")(ta, tc)
    assert torch.equal(tb, tc)
