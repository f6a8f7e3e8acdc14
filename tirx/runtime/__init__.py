"""tirx.runtime: NVRTC compilation (``nvrtc``), the compile cache (``cache``), the CUDA
driver (``driver``: ``probe()`` first) and compiled kernels (``kernel``: ``Kernel``,
``HostFunction`` for a function that launches several, ``CompiledModule``). See docs/cuda.md."""
