"""GPU tests of T.nvshmem kernels: one process, one PE on GPU 0 (NVSHMEM bootstrapped with a
unique id through tirx.runtime.nvshmem). Each job runs in a subprocess with a timeout, so a
hang (a wait that never ends) fails the test instead of the suite, and NVSHMEM's process-wide
state stays out of the other GPU tests. Skipped without a GPU or without NVSHMEM.

The same kernel also runs on the interpreter (one PE) and the two results must agree."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from gpu_util import require_gpu

torch = require_gpu()

from tirx.runtime import nvshmem  # noqa: E402

_ok, _why = nvshmem.available()
if not _ok:
    pytest.skip(f"NVSHMEM kernels cannot be built here: {_why}", allow_module_level=True)

pytestmark = pytest.mark.gpu
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

JOB = """
import numpy as np
import torch

import tirx
from tirx.runtime import nvshmem
from tirx.script import tirx as T

n = T.dynamic("n")


@T.function
def k(src: T.Tensor((n,), T.float32), dst: T.Tensor((n,), T.float32), back: T.Tensor((n,), T.float32),
      sig: T.Tensor((2,), T.uint64), info: T.Tensor((2,), T.int32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    tid = T.cuda.thread_idx("x")
    me = T.nvshmem.my_pe()
    npes = T.nvshmem.n_pes()
    if tid == 0:
        info[0] = me
        info[1] = npes
    T.nvshmem.putmem_nbi.block(dst.ptr_to([0]), src.ptr_to([0]), T.int64(n) * 4, (me + 1) % npes)
    if tid == 0:
        T.nvshmem.quiet()
        T.nvshmem.signal_op(sig.ptr_to([0]), 1, "add", me)
        T.nvshmem.wait_until(sig.ptr_to([0]), "ge", 1)
        T.nvshmem.barrier_all()
    T.cuda.cta_sync()
    T.nvshmem.getmem_nbi.block(back.ptr_to([0]), dst.ptr_to([0]), T.int64(n) * 4, me)
    if tid < 32:
        T.nvshmem.putmem_signal_nbi.warp(back.ptr_to([0]), back.ptr_to([0]), 16, sig.ptr_to([1]), 7, "set", me)
    if tid == 0:
        T.nvshmem.quiet()
        T.nvshmem.fence()


N = 1000
pe = nvshmem.init()
assert (pe, nvshmem.num_pes()) == (0, 1)
src, dst, back = (nvshmem.zeros(N, "float32") for _ in range(3))
sig = nvshmem.zeros(2, "uint64")
info = torch.zeros(2, dtype=torch.int32, device="cuda")
src.torch().copy_(torch.arange(N, dtype=torch.float32, device="cuda") * 3 + 1)
kern = tirx.compile(k, target="cuda")
kern(src, dst, back, sig, info)
torch.cuda.synchronize()
got = [t.torch().cpu().numpy().copy() for t in (dst, back)]
s = sig.torch().cpu().numpy().astype(np.uint64).tolist()
want = src.torch().cpu().numpy()
assert np.array_equal(got[0], want) and np.array_equal(got[1], want), got
assert s == [1, 7], s
assert info.tolist() == [0, 1], info

# the interpreter, one PE, the same kernel
h = [want.copy(), np.zeros(N, np.float32), np.zeros(N, np.float32), np.zeros(2, np.uint64), np.zeros(2, np.int32)]
tirx.compile(k, target="interp")(*h)
assert np.array_equal(h[1], got[0]) and np.array_equal(h[2], got[1]) and h[3].tolist() == s and h[4].tolist() == [0, 1]
for t in (src, dst, back, sig):
    t.free()
nvshmem.finalize()
print("OK")
"""


def _env() -> dict:
    env = dict(os.environ)
    env.update(
        NVSHMEM_DISABLE_NVLS="1",
        NCCL_NVLS_ENABLE="0",
        TORCH_SYMM_MEM_DISABLE_MULTICAST="1",
        NVSHMEM_SYMMETRIC_SIZE=str(512 * 2**20),
        PYTHONPATH=ROOT + os.pathsep + env.get("PYTHONPATH", ""),
    )
    env.setdefault("CUDA_VISIBLE_DEVICES", "0")
    return env


def _run(args: list, timeout: int) -> subprocess.CompletedProcess:
    r = subprocess.run(args, env=_env(), capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    assert r.returncode == 0, f"rc={r.returncode}\nstdout:\n{r.stdout[-4000:]}\nstderr:\n{r.stderr[-4000:]}"
    return r


def test_one_pe_put_get_signal_barrier(tmp_path):
    job = tmp_path / "nvshmem_job.py"
    job.write_text(JOB)
    r = _run([sys.executable, str(job)], timeout=600)
    assert r.stdout.strip().endswith("OK")


def test_bench_collectives_are_correct_on_one_gpu():
    bench = os.path.join(ROOT, "tools", "bench", "bench_nvshmem.py")
    _run([sys.executable, bench, "--check", "--grid", "16"], timeout=600)
