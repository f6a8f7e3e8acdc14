"""``T.cuda.wgmma_encode_matrix_descriptor`` (TIRx's name): TIRx's printed text loads and
compiles; on a GPU the descriptor's fields are the shared address >> 4, ldo, sdo and the
layout type of the swizzle mode (the formula tirx/kernels/hopper/gemm.py writes by hand)."""

from __future__ import annotations

import numpy as np
import pytest

import tirx
import tirx.codegen
from tirx.errors import DiagnosticError
from tirx.testing.opcheck import gpu

_TEXT = """
@T.function
def k(L: T.Tensor((64,), T.uint64), U: T.Tensor((64,), T.uint32)):
    with T.device_entry(1, 1, 1, 128, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):
        sm = T.alloc_tensor(ty_args=[T.Tensor((1024,), T.float16, scope="shared")])
        d = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="local")])
        T.cuda.wgmma_encode_matrix_descriptor(T.address_of(d[0]), T.address_of(sm[512]), 1, 64, SW)
        L[T.cuda.thread_idx("x") % 64] = d[0]
        U[T.cuda.thread_idx("x") % 64] = T.cuda.cvta_generic_to_shared(T.address_of(sm[512]))
"""  # TIRx's printed form of the call (its .script()), in a kernel that also stores the address


def _kernel(sw: int):
    return tirx.loads(_TEXT.replace("SW", str(sw)))


def test_tirx_text_loads_prints_back_and_compiles():
    f = _kernel(3)
    assert (
        "T.cuda.wgmma_encode_matrix_descriptor(T.address_of(d[0]), T.address_of(sm[512]), 1, 64, 3)"
        in tirx.dumps(f)
    )
    assert tirx.structural_equal(tirx.loads(tirx.dumps(f)), f)
    pytest.importorskip("cuda.bindings.nvrtc")
    k = tirx.compile(f, target="cuda -arch=sm_90a", cache=False)
    assert "tirx_wgmma_desc(" in k.source


def test_bad_swizzle_is_a_located_error():
    with pytest.raises(DiagnosticError, match="swizzle is 0"):
        tirx.codegen.generate(_kernel(4))


@pytest.mark.gpu
@pytest.mark.parametrize("sw, layout", [(0, 0), (1, 3), (2, 2), (3, 1)])
def test_descriptor_fields_on_the_gpu(sw, layout):
    torch, why = gpu()
    if torch is None:
        pytest.skip(why)
    k = tirx.compile(_kernel(sw), target="cuda", cache=False)
    L = torch.zeros(64, dtype=torch.uint64, device="cuda")
    U = torch.zeros(64, dtype=torch.uint32, device="cuda")
    k(L, U)
    torch.cuda.synchronize()
    desc, addr = int(L.cpu().numpy().astype(np.uint64)[0]), int(U.cpu().numpy()[0])
    assert desc == ((addr >> 4) & 0x3FFF) | (1 << 16) | (64 << 32) | (layout << 62)
