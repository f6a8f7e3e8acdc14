"""Backend-specific script helpers, as TIRx's ``tvm_tirx.backend`` ships them.

``tirx.backend.cuda.lang`` holds the CUDA kernel helper classes (a shared-memory pool,
mbarrier wrappers, pipeline state, tile schedulers) that kernels use inside ``@T.function``
and ``@T.jit`` bodies. Nothing here is imported by ``import tirx``.
"""
