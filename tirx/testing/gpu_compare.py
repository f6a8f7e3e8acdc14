"""The CUDA backend against the interpreter on random kernels, on a GPU (``tirx fuzz --cuda``
and tests/test_interp_gpu.py).

The interpreter's results are the IR's meaning; a kernel compiled by ``tirx.compile`` (with
``--fmad=false`` so float results are exact, and wrapping signed arithmetic) must give the
same arrays (``same``). Device memory comes from the driver (``DeviceArray``, a
``__cuda_array_interface__`` array), so a campaign needs the ``[cuda]`` extra and a GPU, not
torch. What such campaigns found is in docs/cuda.md ("Known limits") and docs/benchmarks.md.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

__all__ = [
    "EXACT", "DeviceArray", "cuda_campaign", "cuda_check", "ptx_campaign", "ptx_check", "run_cuda", "run_interp", "same",
]  # fmt: skip

EXACT = ("--fmad=false",)


class DeviceArray:
    """A copy of a numpy array in device memory (device 0's primary context), readable back
    with ``numpy()``; tirx kernels take it through ``__cuda_array_interface__``."""

    def __init__(self, host: np.ndarray):
        from tirx.runtime import driver as drv

        self._drv = drv
        d = drv.driver()
        drv.context(0)
        self.shape, self.dtype = host.shape, host.dtype
        self.nbytes = max(1, host.nbytes)
        self.ptr = int(drv.check(d.cuMemAlloc(self.nbytes), "cuMemAlloc"))
        src = np.ascontiguousarray(host)
        if host.nbytes:
            drv.check(d.cuMemcpyHtoD(self.ptr, src.ctypes.data, host.nbytes), "cuMemcpyHtoD")

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3}

    def numpy(self) -> np.ndarray:
        """The device contents now (after the device finished its work)."""
        d = self._drv.driver()
        self._drv.context(0)
        self._drv.check(d.cuCtxSynchronize(), "cuCtxSynchronize (the kernel)")
        out = np.empty(self.shape, self.dtype)
        if out.nbytes:
            self._drv.check(d.cuMemcpyDtoH(out.ctypes.data, self.ptr, out.nbytes), "cuMemcpyDtoH")
        return out

    def __del__(self) -> None:
        ptr, self.ptr = getattr(self, "ptr", 0), 0
        if ptr:
            # (at interpreter shutdown the context may be gone already)
            with contextlib.suppress(Exception):
                self._drv.driver().cuMemFree(ptr)


def run_cuda(kernel: Any, args: list) -> list[np.ndarray]:
    """Launch ``kernel`` with the arrays of ``args`` copied to the device; the arrays after."""
    dev = [DeviceArray(a) if isinstance(a, np.ndarray) else a for a in args]
    kernel(*dev)
    return [d.numpy() for d in dev if isinstance(d, DeviceArray)]


def run_interp(kernel: Any, args: list) -> list[np.ndarray]:
    """Run an interpreter ``kernel`` on copies of the arrays of ``args``; the arrays after."""
    host = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel(*host)
    return [a for a in host if isinstance(a, np.ndarray)]


def same(want: list, got: list, ulp_ok: bool = False) -> None:
    """The arrays agree: equal element for element, a NaN with the very same bits (the
    interpreter produces the GPU's NaNs: tirx/ops/semantics/nan.py; -0.0 equals 0.0), or for floats
    within a few ulp (``ulp_ok``: transcendental functions); AssertionError naming the output
    and the differing elements."""
    for i, (x, y) in enumerate(zip(want, got)):
        if x.dtype.kind == "f" and ulp_ok:
            np.testing.assert_allclose(x, y, rtol=2e-6, atol=1e-6, err_msg=f"output {i}")
            continue
        np.testing.assert_array_equal(x, y, err_msg=f"output {i} (interpreter, CUDA)")
        if x.dtype.kind == "f" and x.dtype == y.dtype:
            nan = np.isnan(x)
            u = np.dtype(f"u{x.dtype.itemsize}")
            xb, yb = np.ascontiguousarray(x).view(u)[nan], np.ascontiguousarray(y).view(u)[nan]
            if not np.array_equal(xb, yb):
                k = int(np.flatnonzero(xb != yb)[0])
                where = np.argwhere(nan)[k].tolist()
                raise AssertionError(
                    f"output {i} (interpreter, CUDA): NaN bits differ at {where}: "
                    f"{int(xb[k]):#x} vs {int(yb[k]):#x}"
                )


def cuda_check(r: Any) -> None:
    """One generated kernel (``tirx.testing.runnable`` / ``elementwise``): its CUDA build and
    the interpreter agree. Host-only kernels (no device launch) are passed over."""
    import tirx

    if "device=False" in r.note:  # runnable_kernels' host-only kernels
        return
    from .ptx_check import check_ptx

    want = r.run()
    k = tirx.compile(r.func, target="cuda", options=EXACT, wrap_int=True)
    check_ptx(k)  # a non-coherent load of written memory: wrong on some inputs, named here on all
    got = run_cuda(k, r.fresh_args())
    try:
        same(want, got)
    except AssertionError as e:  # the failure record keeps both sides' arrays
        from .campaign import with_outputs

        with_outputs(e, interpreter=want, cuda=got)
        raise


def cuda_strategy() -> Any:
    """Random runnable kernels of every dtype and elementwise kernels (``VectorizeThreads``)."""
    from hypothesis import strategies as st

    from .elementwise import elementwise_kernels
    from .runnable import runnable_kernels

    return st.one_of(
        runnable_kernels(extra_types=False), runnable_kernels(extra_types=True), elementwise_kernels()
    )


def cuda_campaign(**run: Any) -> Any:
    """``cuda_check`` over ``cuda_strategy`` as a ``tirx.testing.campaign`` run (``Outcome``);
    ``run``: seed, examples, time_budget, max_shrink_time, save_dir, on_progress."""
    from .campaign import kernel_campaign

    return kernel_campaign("cuda", "--cuda", cuda_strategy(), cuda_check, **run)


def ptx_check(r: Any) -> None:
    """One generated kernel (``cuda_strategy``): compiled with NVRTC, its PTX has no
    ``ld.global.nc`` of memory it writes (``tirx.testing.ptx_check``; no GPU). Host-only kernels
    are passed over."""
    import tirx

    from .ptx_check import check_ptx

    if "device=False" in r.note:
        return
    check_ptx(tirx.compile(r.func, target="cuda", options=EXACT, wrap_int=True))


def ptx_campaign(**run: Any) -> Any:
    """``ptx_check`` over ``cuda_strategy`` as a ``tirx.testing.campaign`` run (``tirx fuzz --ptx``)."""
    from .campaign import kernel_campaign

    return kernel_campaign("ptx", "--ptx", cuda_strategy(), ptx_check, **run)
