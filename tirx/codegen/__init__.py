"""tirx.codegen: IR -> CUDA C++ (``generate``). Op lowerings are declared with the ops (tirx/ops)."""

from .cuda import CudaSource, KernelInfo, KernelParam, generate

__all__ = ["CudaSource", "KernelInfo", "KernelParam", "generate"]
