"""Host-encoded TMA descriptors on a GPU: the host program encodes them at each call and the
kernel copies boxes through them (tests/test_tma_host_encode.py builds the kernels)."""

from __future__ import annotations

import pytest
from gpu_util import require_gpu

torch = require_gpu()

import tirx  # noqa: E402
from tirx.runtime import tma  # noqa: E402

pytestmark = pytest.mark.gpu

if torch.cuda.get_device_capability() < (9, 0):  # pragma: no cover
    pytest.skip("TMA needs sm_90", allow_module_level=True)

from test_tma_host_encode import copy_kernel  # noqa: E402

CASES = [
    ((64, 128), (16, 64), "float16", 2, 0),
    ((64, 128), (16, 64), "float16", 2, 3),  # 128-byte swizzle: 64 halves = one span
    ((32, 64), (8, 32), "float32", 4, 3),
    ((128, 256), (32, 128), "uint8", 1, 3),
    ((48, 96), (16, 32), "bfloat16", 2, 2),  # 64-byte swizzle
]


@pytest.mark.parametrize("shape,box,dtype,nbytes,swizzle", CASES)
def test_boxes_copy_through_descriptors_the_host_encodes(shape, box, dtype, nbytes, swizzle):
    k = tirx.compile(copy_kernel(shape, box, dtype, nbytes, swizzle), target="cuda")
    tdt = getattr(torch, dtype)
    if tdt.is_floating_point:
        A = torch.randn(shape, device="cuda").to(tdt)
    else:
        A = torch.randint(0, 255, shape, device="cuda", dtype=tdt)
    B = torch.full_like(A, 7)
    k(A, B)
    torch.cuda.synchronize()
    assert torch.equal(A, B)
    # a second call with other tensors encodes new descriptors (nothing cached by address)
    A2, B2 = A.flip(0).contiguous(), torch.zeros_like(A)
    k(A2, B2)
    torch.cuda.synchronize()
    assert torch.equal(A2, B2)


def test_host_values_are_the_descriptors_the_driver_encodes():
    """The descriptor a launch gets is cuTensorMapEncodeTiled's for that tensor: the same bytes
    as tirx.runtime.tma's own plan encodes (innermost-first dims, no swizzle, no L2 promotion)."""
    k = tirx.compile(copy_kernel(), target="cuda")
    A = torch.randn((64, 128), device="cuda").half()
    B = torch.empty_like(A)
    (name, vals), = k.host_values(A, B)
    assert name == "copy_kernel"
    plan = tma.TensorMapPlan("float16", (64, 128), (16, 64), swizzle=0, l2_promotion=0)
    assert bytes(vals["a_map"]) == plan.encode(A.data_ptr())
    assert bytes(vals["b_map"]) == plan.encode(B.data_ptr())
