"""``tirx.interp.nvshmem.World``: N NVSHMEM PEs simulated on the CPU, under its public name;
defined with the NVSHMEM ops' semantics (tirx/ops/semantics/nvshmem.py)."""

from __future__ import annotations

from tirx.ops.semantics.nvshmem import World, compile_op, current

__all__ = ["World", "compile_op", "current"]
