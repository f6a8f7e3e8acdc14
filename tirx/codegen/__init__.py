"""tirx.codegen: IR -> CUDA C++ (``generate``). Importing it registers the CUDA op handlers."""

from . import ops_cuda, ops_hopper  # noqa: F401  (register handlers; ops_hopper: wgmma)
from .cuda import CudaSource, KernelInfo, KernelParam, generate

__all__ = ["CudaSource", "KernelInfo", "KernelParam", "generate"]
