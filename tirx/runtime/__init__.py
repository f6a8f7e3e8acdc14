"""tirx.runtime: NVRTC compilation (``nvrtc``), the compile cache (``cache``), the CUDA
driver (``driver``: ``probe()`` first) and compiled kernels (``kernel``: ``Kernel``,
``CompiledModule``). See docs/cuda.md."""
