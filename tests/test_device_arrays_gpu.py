"""Device arrays of any library on a GPU (issue #32): a CuPy array seen only through its
``__cuda_array_interface__`` and a torch tensor seen only through ``__dlpack__``, each
wrapped so that no other protocol is visible (the kernel cannot recognise the library)."""

from __future__ import annotations

import pytest
from gpu_util import require_gpu

import tirx
from tirx.ir import TensorType, Var, const
from tirx.ir.op import call
from tirx.ir.types import float32
from tirx.runtime import driver as D
from tirx.surface.builder import IRBuilder, launch_args

torch = require_gpu()
pytestmark = pytest.mark.gpu


def make_add(block=128):
    b = IRBuilder("device_arrays_gpu_test.py")
    with b, b.function("add"):
        n = Var("n")
        A = b.param("A", TensorType((n,), float32))
        B = b.param("B", TensorType((n,), float32))
        with b.device_entry(*launch_args((n + block - 1) // block, block)):
            i = b.bind("i", call("cuda.block_idx", "x") * block + call("cuda.thread_idx", "x"))
            with b.if_(i < n):
                b.store(B, (i,), A[i] + const(2.0, float32))
    return b.get()


class OnlyCAI:
    def __init__(self, x):
        self.__cuda_array_interface__ = x.__cuda_array_interface__


class OnlyDLPack:
    def __init__(self, x):
        self._x = x

    def __dlpack__(self, **kw):
        return self._x.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._x.__dlpack_device__()


@pytest.fixture(scope="module")
def kern():
    return tirx.compile(make_add(), target=f"cuda -arch={D.device_arch(0)}", cache=False)


def test_cupy_through_cuda_array_interface_only(kern):
    cupy = pytest.importorskip("cupy")
    a = cupy.arange(1000, dtype=cupy.float32)
    b = cupy.zeros(1000, dtype=cupy.float32)
    kern(OnlyCAI(a), OnlyCAI(b))
    cupy.cuda.get_current_stream().synchronize()
    cupy.testing.assert_array_equal(b, a + 2)


def test_torch_through_dlpack_only(kern):
    a = torch.arange(1000, dtype=torch.float32, device="cuda")
    b = torch.zeros(1000, dtype=torch.float32, device="cuda")
    kern(OnlyDLPack(a), OnlyDLPack(b))
    torch.cuda.synchronize()
    assert torch.equal(b, a + 2)
    with pytest.raises(TypeError, match="parameter A: expected dtype float32, got float16"):
        kern(OnlyDLPack(a.half()), OnlyDLPack(b))
