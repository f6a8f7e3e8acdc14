"""On a GPU: tensors with layouts (TIRx's ``T.TileLayout`` / swizzled ``T.ComposeLayout``) hold
their elements where the layout says, in CUDA as in the interpreter and the numpy reference
(tests/test_layout.py checks the same without a GPU). Skipped cleanly without a device.
"""

from __future__ import annotations

import numpy as np
import pytest
from gpu_util import require_gpu

torch = require_gpu()

from test_layout import LAYOUTS, _store_kernel  # noqa: E402

import tirx  # noqa: E402
import tirx.interp as ti  # noqa: E402
from tirx.ir.layout import enumerate_offsets  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_cuda_stores_through_the_layout(name):
    layout = LAYOUTS[name]
    f = _store_kernel(layout)
    A = torch.full((8, 16), -1, dtype=torch.int32, device="cuda")
    R = torch.zeros((8, 16), dtype=torch.int32, device="cuda")
    tirx.compile(f, target="cuda")(A, R)
    torch.cuda.synchronize()
    a, r = A.cpu().numpy(), R.cpu().numpy()
    offs = enumerate_offsets(layout, (8, 16))
    want = np.empty(128, np.int32)
    want[offs] = np.arange(128, dtype=np.int32)
    np.testing.assert_array_equal(a.reshape(-1), want)
    np.testing.assert_array_equal(r, np.arange(128, dtype=np.int32).reshape(8, 16) * 3)
    ia, ir = np.full((8, 16), -1, np.int32), np.zeros((8, 16), np.int32)
    ti.compile(f)(ia, ir)
    np.testing.assert_array_equal(ia, a)
    np.testing.assert_array_equal(ir, r)


def test_tirx_cuda_and_tirx_place_elements_alike(monkeypatch, tmp_path):
    """TIRx's own CUDA of the golden ``layout_storage`` kernel (recorded by
    tools/tirx_oracle/golden_layouts.py) and tirx's kernel from TIRx's printed text write the
    same raw shared storage, the one numpy computes from the layouts."""
    import ctypes

    from test_layout import STORAGE, storage_reference
    from tirx_golden_cuda_util import cccl_include

    from tirx.runtime import driver as drv
    from tirx.runtime.nvrtc import compile_source

    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path))
    f = tirx.loads(STORAGE["text"])
    a = np.random.default_rng(5).integers(-1000, 1000, (64, 64)).astype(np.int32)
    want = storage_reference(a, f)
    dev_a = torch.from_numpy(a).cuda()
    ours = torch.zeros(4224, dtype=torch.int32, device="cuda")
    tirx.compile(f, target="cuda", cache=False)(dev_a, ours)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(ours.cpu().numpy(), want)
    inc = cccl_include()
    if inc is None:
        pytest.skip("libcu++ headers (cuda/std/cstdint, which TIRx's CUDA includes) not found")
    res = compile_source(STORAGE["cuda"], drv.device_arch(0), name="tirx_layout.cu", options=(f"-I{inc}",))
    _mod, fn = drv.load_function(res.cubin, "f_kernel", 0)
    theirs = torch.zeros(4224, dtype=torch.int32, device="cuda")
    ptrs = (dev_a.data_ptr(), theirs.data_ptr())
    args = (ptrs, (ctypes.c_void_p, ctypes.c_void_p))
    drv.check(drv.driver().cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, 0, args, 0), "cuLaunchKernel")
    torch.cuda.synchronize()
    np.testing.assert_array_equal(theirs.cpu().numpy(), want)
