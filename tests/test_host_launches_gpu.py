"""On a GPU: functions whose host code launches several kernels, kernels written as top-level
``T.launch_thread`` nests, and device entries with their own compile settings
(``backend_config``) compute on the GPU what the interpreter computes, bit for bit
(tests/test_host_launches.py has the builds and the interpreter runs; this runs them).

Skipped cleanly without a CUDA driver/device.
"""

from __future__ import annotations

import numpy as np
import pytest
from gpu_util import require_gpu

torch = require_gpu()

from test_tirx_golden_frontend import GOLDEN, build_case  # noqa: E402

import tirx  # noqa: E402
from tirx.runtime import driver as drv  # noqa: E402
from tirx.runtime.kernel import HostFunction  # noqa: E402

pytestmark = pytest.mark.gpu


def _inputs(shapes_dtypes: list, seed: int) -> list:
    g = np.random.default_rng(seed)
    out = []
    for x in shapes_dtypes:
        if isinstance(x, tuple):
            shape, dt = x
            if dt.startswith("int"):
                out.append(g.integers(-50, 50, shape).astype(dt))
            else:
                out.append(g.standard_normal(shape).astype(dt))
        else:
            out.append(x)  # a scalar
    return out


def _both(fn, host_args: list):
    """``fn`` run on the GPU and on the interpreter with copies of ``host_args``:
    (GPU arrays as numpy, interpreter arrays, GPU return value, interpreter return value)."""
    dev = [torch.from_numpy(a.copy()).cuda() if isinstance(a, np.ndarray) else a for a in host_args]
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in host_args]
    ret_gpu = fn["cuda"](*dev)
    torch.cuda.synchronize()
    ret_ref = fn["interp"](*ref)
    got = [d.cpu().numpy() if torch.is_tensor(d) else d for d in dev]
    return got, ref, ret_gpu, ret_ref


def _assert_same(got: list, ref: list) -> None:
    for i, (a, b) in enumerate(zip(got, ref)):
        if isinstance(a, np.ndarray):
            assert a.tobytes() == b.tobytes(), f"argument {i}: GPU {a[:8]} vs interpreter {b[:8]}"


def _compiled(f) -> dict:
    return {"cuda": tirx.compile(f, target="cuda"), "interp": tirx.compile(f, target="interp")}


def test_two_entries_launch_in_order_and_return_the_host_value():
    k = _compiled(build_case("host_two_entries"))
    assert isinstance(k["cuda"], HostFunction)
    for seed in range(3):
        got, ref, r1, r2 = _both(k, _inputs([((64,), "float32"), ((64,), "float32"), seed + 2], seed))
        _assert_same(got, ref)
        assert r1 == r2 == (seed + 2) * 3 + 1


def test_prepared_sequence_launches_every_kernel():
    k = tirx.compile(build_case("host_two_entries"), target="cuda")
    a = torch.arange(64, dtype=torch.float32, device="cuda")
    b = torch.zeros(64, dtype=torch.float32, device="cuda")
    launch = k.prepare(a, b, n=1)
    assert len(launch.launches) == 2
    assert launch() == 4
    torch.cuda.synchronize()
    want_b = torch.arange(64, dtype=torch.float32) + 1
    assert torch.equal(b.cpu(), want_b) and torch.equal(a.cpu(), want_b.flip(0) * 3)
    s = torch.cuda.Stream()
    assert k(a, b, 1, stream=s.cuda_stream) == 4  # both kernels on the one stream given
    s.synchronize()
    assert torch.equal(b.cpu(), want_b.flip(0) * 3 + 1)


def test_launch_thread_kernels_on_the_gpu():
    m = build_case("launch_thread_kernels")
    cm = tirx.compile(m, target="cuda")
    im = tirx.compile(m, target="interp")
    for n in (1, 100, 256):
        got, ref, _, _ = _both(
            {"cuda": cm["kernel_a"], "interp": im["kernel_a"]}, _inputs([((256,), "float32"), n], n)
        )
        _assert_same(got, ref)
    got, ref, _, _ = _both(
        {"cuda": cm["kernel_b"], "interp": im["kernel_b"]}, _inputs([((256,), "float32")], 5)
    )
    _assert_same(got, ref)


def test_loaded_text_of_tirx_launch_thread_module_runs():
    """The corpus form: TIRx's printed module of two launch_thread functions, loaded from text."""
    text = (GOLDEN / "launch_thread_kernels.tirx").read_text()
    m = tirx.loads(text)
    cm = tirx.compile(m, target="cuda")
    a = torch.zeros(256, dtype=torch.float32, device="cuda")
    cm["kernel_b"](a)
    torch.cuda.synchronize()
    assert torch.equal(a.cpu(), torch.full((256,), -1.5))


@pytest.mark.parametrize("case", ["entry_backend_config", "entry_backend_config_groups"])
def test_entries_with_compile_settings_run(case):
    if case == "entry_backend_config" and not drv.device_arch(0).startswith("sm_90"):
        pytest.skip("the entry's backend_config asks for sm_90a")
    f = build_case(case)
    k = _compiled(f)
    n = int(f.buffer_of(f.params[0]).shape[0].value)
    got, ref, _, _ = _both(k, _inputs([((n,), "float32"), ((n,), "float32")], 11))
    _assert_same(got, ref)


def test_ptx_target_format_is_jit_loaded():
    k = tirx.compile(build_case("entry_backend_config_groups"), target="cuda", cache=False)
    second = list(k.kernels.values())[1]
    assert second.image.image_format == "ptx"
    a = torch.ones(32, device="cuda")
    b = torch.zeros(32, device="cuda")
    k(a, b)
    torch.cuda.synchronize()
    assert torch.equal(b.cpu(), torch.full((32,), 0.5)) and torch.equal(a.cpu(), torch.full((32,), 1.5))


def test_argument_free_entry_with_settings_runs_one_thread():
    k = tirx.compile(build_case("entry_backend_config_bare"), target="cuda")
    a = torch.tensor([0, 5, 7, 0], dtype=torch.int32, device="cuda")
    k(a)
    torch.cuda.synchronize()
    assert a.cpu().tolist() == [12, 5, 7, 0]
