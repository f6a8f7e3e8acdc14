"""GPU tests: every example kernel against torch on fresh random data, outputs poisoned first.

Skipped cleanly without a CUDA driver/device: ``cuInit`` is probed first, before torch or
any other CUDA object is touched.
"""

from __future__ import annotations

import os

import pytest
from examples_dir import load_example
from gpu_util import require_gpu

torch = require_gpu()

import tirx  # noqa: E402
from tirx.script import tirx as T  # noqa: E402

pytestmark = pytest.mark.gpu
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples", "kernels")
DEV = "cuda"


def _ex(stem: str):
    return load_example(f"kernels/{stem}.py")


@pytest.fixture(autouse=True)
def _sync_and_check():
    yield
    torch.cuda.synchronize()  # surfaces asynchronous launch errors in the test that caused them


def _poison(t):
    if t.dtype.is_floating_point:
        t.fill_(float("nan"))
    else:
        t.fill_(-12345)
    return t


def _rel(out, ref):
    out, ref = out.double(), ref.double()
    assert not torch.isnan(out).any(), "NaN in output (unwritten element?)"
    return (torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref).clamp_min(1e-30)).item()


def test_seed_guide_prints_the_tensor():
    ex = _ex("elementwise_add")
    add_two_f16_compiled = tirx.compile(ex.make_add(T.float16, 2, block=128), target="cuda")
    a = torch.arange(10, dtype=torch.float16, device="cuda")
    b = torch.empty_like(a)
    add_two_f16_compiled(a, b)
    expected = "tensor([ 2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11.], device='cuda:0',\n       dtype=torch.float16)"
    assert str(b) == expected


@pytest.mark.parametrize("n", [1, 127, 128, 129, 1000, (1 << 20) + 3])
@pytest.mark.parametrize("which", ["add_f16", "add_f32", "add_f16_i64", "add_vec_f16"])
def test_elementwise_add_dynamic_n(which, n):
    k = tirx.compile(_ex("elementwise_add").KERNELS[which](), target="cuda")
    dt = torch.float32 if which == "add_f32" else torch.float16
    a = torch.randn(n, device=DEV).to(dt)
    b = _poison(torch.empty_like(a))
    k(a, b)
    value = 1 if which == "add_f32" else 2
    assert torch.equal(b, a + value)


def test_block_sum_shared_memory():
    k = tirx.compile(_ex("reduce_smem").make_block_sum(), target="cuda")
    n = 256 * 37 + 11
    m = (n + 255) // 256
    a = torch.randn(n, device=DEV)
    out = _poison(torch.empty(m, device=DEV))
    k(a, out)
    ref = torch.nn.functional.pad(a.double(), (0, m * 256 - n)).view(m, 256).sum(1)
    assert _rel(out, ref) < 1e-5


def test_warp_shuffle_row_reduce():
    k = tirx.compile(_ex("warp_reduce").make_row_reduce(), target="cuda")
    rows = 37
    a = torch.randn(rows, 256, device=DEV)
    s = _poison(torch.empty(rows, device=DEV))
    m = _poison(torch.empty(rows, device=DEV))
    k(a, s, m)
    assert _rel(s, a.double().sum(1)) < 1e-5
    assert torch.equal(m, a.max(1).values)


@pytest.mark.parametrize("shape", [(256, 256, 256), (512, 128, 64)])
def test_tiled_matmul(shape):
    M, N, K = shape
    k = tirx.compile(_ex("matmul_tiled").make_matmul(M, N, K), target="cuda")
    a = torch.randn(M, K, device=DEV)
    b = torch.randn(K, N, device=DEV)
    c = _poison(torch.empty(M, N, device=DEV))
    k(a, b, c)
    assert _rel(c, a.double() @ b.double()) < 1e-5


def test_row_softmax():
    k = tirx.compile(_ex("softmax").make_softmax(), target="cuda")
    x = torch.randn(100, 1024, device=DEV) * 3
    y = _poison(torch.empty_like(x))
    k(x, y)
    assert _rel(y, torch.softmax(x.double(), 1)) < 1e-5


def test_dsmem_on_a_two_cta_cluster():
    ex = _ex("dsmem_cluster")
    k = tirx.compile(ex.make_dsmem_exchange(clusters=4, block=128), target="cuda")
    assert "uint64_t* const remote_ptr" in k.source
    out = torch.full((8 * 128,), -12345, dtype=torch.int64, device=DEV)  # poisoned
    k(out.view(torch.uint64))
    bx = torch.arange(8).repeat_interleave(128)
    tx = torch.arange(128).repeat(8)
    peer = bx ^ 1  # the other CTA of the 2-CTA cluster
    ref = peer * 1000 + tx
    assert torch.equal(out.cpu(), ref)


def test_module_with_device_helpers():
    from tirx.testing.compat_kernels import KERNELS

    mod = tirx.compile(KERNELS["module_multi_func"](), target="cuda")
    a = torch.randn(1024, device=DEV)
    b = torch.randn(1024, device=DEV)
    out = _poison(torch.empty(1024, device=DEV))
    mod["k_relu"](a, out)
    assert torch.equal(out, torch.relu(a))
    c = _poison(torch.empty(1024, device=DEV))
    mod.k_lerp(a, b, c)
    assert _rel(c, a.double() + (b.double() - a.double()) * 0.25) < 1e-6


def test_compat_break_continue_and_scalars():
    from tirx.testing.compat_kernels import KERNELS

    k = tirx.compile(KERNELS["break_continue"](), target="cuda")
    A = torch.randint(-5, 50, (256, 64), dtype=torch.int32, device=DEV)
    A[3, 7] = 42
    idx = _poison(torch.empty(256, dtype=torch.int32, device=DEV))
    cnt = _poison(torch.empty(256, dtype=torch.int32, device=DEV))
    k(A, idx, cnt)
    Ac = A.cpu()
    for r in range(256):
        found = -1
        for j in range(64):
            if Ac[r, j] < 0:
                continue
            if Ac[r, j] == 42:
                found = j
                break
        c = 0
        for kk in range(1, 64):
            if Ac[r, kk] % 2 == 1:
                continue
            c += 1
        assert idx[r].item() == found and cnt[r].item() == c


def test_handle_parameter():
    from tirx.testing.compat_kernels import KERNELS

    k = tirx.compile(KERNELS["ptr_reinterpret"](), target="cuda")
    x = torch.randn(256, device=DEV)
    out = _poison(torch.empty(256, dtype=torch.int32, device=DEV))
    k(x.data_ptr(), 200, out)
    ref = (x.view(torch.int32) >> 23) & 255
    assert torch.equal(out[:200], ref[:200])


def test_argument_checks_with_torch_tensors():
    k = tirx.compile(_ex("elementwise_add").make_add(T.float16, 2, block=128), target="cuda")
    a = torch.randn(64, device=DEV).half()
    b = torch.empty_like(a)
    k(a, b)  # binds the fast path; the checks below must still fire
    with pytest.raises(TypeError, match="parameter B: expected dtype float16, got float32"):
        k(a, torch.empty(64, device=DEV))
    with pytest.raises(ValueError, match="parameter A: tensor is on cpu"):
        k(a.cpu(), b)
    with pytest.raises(ValueError, match="dynamic dimension n disagrees"):
        k(a, b[:10])
    with pytest.raises(ValueError, match="parameter A: tensor is not contiguous"):
        k(torch.randn(64, 2, device=DEV).half()[:, 0], b)
    with pytest.raises(ValueError, match=r"parameter A: .*not aligned to 2 bytes"):
        k(_misaligned_half(torch.empty(130, dtype=torch.uint8, device=DEV)), b)
    with pytest.raises(TypeError, match="takes 2 argument"):
        k(a)
    with pytest.raises(ValueError, match="overlap"):
        k(a, a)
    with pytest.raises(ValueError, match="rank"):
        k(a.view(8, 8), b)


def _misaligned_half(raw):
    class CAI:
        def __init__(self, t):
            self.__cuda_array_interface__ = {
                "shape": (64,),
                "typestr": "<f2",
                "data": (t.data_ptr() + 1, False),
                "strides": None,
                "version": 3,
            }
            self.device = type("D", (), {"id": t.get_device()})()

    return CAI(raw)


def test_current_stream_and_explicit_stream():
    k = tirx.compile(_ex("elementwise_add").make_add(T.float32, 1), target="cuda")
    a = torch.randn(1 << 20, device=DEV)
    b = _poison(torch.empty_like(a))
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        k(a, b)
    s.synchronize()
    assert torch.equal(b, a + 1)
    b2 = _poison(torch.empty_like(a))
    k(a, b2, stream=s)
    s.synchronize()
    assert torch.equal(b2, a + 1)


def test_cuda_array_interface_and_dlpack_inputs():
    k = tirx.compile(_ex("elementwise_add").make_add(T.float32, 1), target="cuda")
    a = torch.randn(1000, device=DEV)
    b = _poison(torch.empty_like(a))

    class CAIOnly:
        def __init__(self, t):
            self.t = t
            self.__cuda_array_interface__ = t.__cuda_array_interface__

    class DLOnly:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kw):
            return self.t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    k(CAIOnly(a), DLOnly(b))
    torch.cuda.synchronize()
    assert torch.equal(b, a + 1)


def test_cupy_arrays():
    cupy = pytest.importorskip("cupy")
    k = tirx.compile(_ex("elementwise_add").make_add(T.float32, 1), target="cuda")
    a = cupy.random.randn(5000).astype(cupy.float32)
    b = cupy.full_like(a, cupy.nan)
    k(a, b)
    cupy.cuda.get_current_stream().synchronize()
    torch.cuda.synchronize()
    assert bool((b == a + 1).all())


@pytest.mark.parametrize("launcher", ["bindings", "ctypes"])
def test_fast_path_is_used_after_first_call(launcher):
    k = tirx.compile(
        _ex("elementwise_add").make_add(T.float16, 2, block=128), target="cuda", launcher=launcher
    )
    a = torch.randn(4096, device=DEV).half()
    b = torch.empty_like(a)
    k(a, b)
    assert type(k).__name__ != "Kernel"  # switched to the generated fast __call__

    def general(*args):
        raise AssertionError("the general path was used")

    k._general = general
    for n in (4096, 100, 1):
        x = torch.randn(n, device=DEV).half()
        y = _poison(torch.empty_like(x))
        k(x, y)
        torch.cuda.synchronize()
        assert torch.equal(y, x + 2)
    del k._general
    with pytest.raises(TypeError, match="expected dtype float16"):
        k(a.float(), b)


def test_misaligned_vector_access_is_refused():
    k = tirx.compile(_ex("elementwise_add").make_add_vec(), target="cuda")
    a = torch.randn(1025, device=DEV).half()
    b = torch.empty_like(a)
    with pytest.raises(ValueError, match=r"parameter A: data pointer .* not aligned to 16 bytes"):
        k(a[1:], b[1:])
    k(a[:1024], b[:1024])


def test_dynamic_shared_memory_over_48k():
    from tirx.ir import TensorType, Var
    from tirx.ir.op import call
    from tirx.ir.types import float32
    from tirx.surface.builder import IRBuilder, launch_args

    b = IRBuilder("dyn_smem_test.py")
    with b, b.function("reverse_blocks"):
        n = Var("n")
        A = b.param("A", TensorType((n,), float32))
        B = b.param("B", TensorType((n,), float32))
        with b.device_entry(*launch_args(n // 16384, 1024, dynamic_smem_bytes=65536)):
            s = b.alloc("s", TensorType((16384,), float32, "shared.dyn"))
            t = b.bind("t", call("cuda.thread_idx", "x"))
            base = b.bind("base", call("cuda.block_idx", "x") * 16384)
            with b.for_("j", 0, 16) as j:
                b.store(s, (j * 1024 + t,), A[base + j * 1024 + t])
            b.evaluate(call("cuda.cta_sync"))
            with b.for_("j", 0, 16) as j:
                b.store(B, (base + j * 1024 + t,), s[16383 - (j * 1024 + t)])
    k = tirx.compile(b.get(), target="cuda")
    a = torch.randn(16384 * 5, device=DEV)
    out = _poison(torch.empty_like(a))
    k(a, out)
    torch.cuda.synchronize()
    assert torch.equal(out.view(5, 16384), a.view(5, 16384).flip(1))


def _divmod_kernel():
    from tirx.ir import Div, FloorDiv, FloorMod, Mod, TensorType, Var
    from tirx.ir.op import call
    from tirx.ir.types import int32
    from tirx.surface.builder import IRBuilder, launch_args

    b = IRBuilder("divmod_test.py")
    with b, b.function("divmod"):
        n = Var("n")
        A = b.param("A", TensorType((n,), int32))
        B = b.param("B", TensorType((n,), int32))
        O = b.param("O", TensorType((4, n), int32))
        with b.device_entry(*launch_args((n + 255) // 256, 256)):
            i = b.bind("i", call("cuda.block_idx", "x") * 256 + call("cuda.thread_idx", "x"))
            with b.if_(i < n):
                a, d = A[i], B[i]
                b.store(O, (0, i), FloorDiv(a, d))
                b.store(O, (1, i), FloorMod(a, d))
                b.store(O, (2, i), Div(a, d))
                b.store(O, (3, i), Mod(a, d))
    return b.get()


def test_floor_and_trunc_division_on_negative_ints():
    k = tirx.compile(_divmod_kernel(), target="cuda")
    n = 4096
    a = torch.randint(-1000, 1000, (n,), dtype=torch.int32, device=DEV)
    d = (
        torch.randint(1, 50, (n,), dtype=torch.int32, device=DEV)
        * (torch.randint(0, 2, (n,), device=DEV) * 2 - 1).int()
    )
    out = _poison(torch.empty(4, n, dtype=torch.int32, device=DEV))
    k(a, d, out)
    assert torch.equal(out[0], torch.floor_divide(a, d))
    assert torch.equal(out[1], torch.remainder(a, d))
    assert torch.equal(out[2], torch.div(a, d, rounding_mode="trunc"))
    assert torch.equal(out[3], torch.fmod(a, d))


@pytest.mark.parametrize("name", ["_pick_input_or_output", "_pick_in_branches"])
@pytest.mark.parametrize("w", [0, 1, 5])
def test_a_load_picked_between_an_input_and_written_memory_sees_the_stores(name, w):
    """The kernels of test_codegen_cuda.py's coherence test (a load that NVRTC merges across
    an input and memory the kernel has just written) on the GPU against the interpreter."""
    import numpy as np
    import test_codegen_cuda as C

    f = getattr(C, name)
    x = np.random.default_rng(w).integers(-1000, 1000, 64).astype(np.int32)
    want = np.full(64, -12345, np.int32)
    tirx.compile(f, target="interp")(x, want, w)
    X = torch.from_numpy(x).to(DEV)
    W = torch.full((64,), -12345, dtype=torch.int32, device=DEV)
    tirx.compile(f, cache=False)(X, W, w)
    torch.cuda.synchronize()
    assert np.array_equal(W.cpu().numpy(), want)
