"""CUDA script helpers (``tirx.backend.cuda.lang``)."""
