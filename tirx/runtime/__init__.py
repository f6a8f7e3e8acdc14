"""tirx.runtime: NVRTC compilation (``nvrtc``), the compile cache (``cache``), the CUDA
driver (``driver``: ``probe()`` first) and compiled kernels (``kernel``: ``Kernel``,
``HostFunction`` for a function that launches several, ``CompiledModule``). See docs/cuda.md."""

from typing import Any as _Any

#: TIRx's runtime names (``tvm.runtime.tensor(a)``, ``tvm.runtime.Device``), served by host_tensor
_HOST_TENSOR = frozenset({"Device", "Tensor", "cpu", "cuda", "device", "tensor"})


def __getattr__(name: str) -> _Any:
    if name in _HOST_TENSOR:
        from . import host_tensor

        return getattr(host_tensor, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
