"""What ``Kernel.__init__`` (kernel.py) sets, declared once: the base of the Kernel's mixins
(argument checks, launching, the generated fast path), so each type-checks against one list."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .kernel import CompiledModule
    from .kernel_image import CompiledImage


class KernelState:
    """Annotations only: no attribute is set here (Kernel.__init__ sets them)."""

    # the signature plan
    info: Any
    func: Any
    module: CompiledModule
    image: CompiledImage
    name: str
    kname: str
    params: list
    pnames: list
    dyn_src: dict
    dyn_affine: dict
    unreadable: str | None
    host_names: dict
    host_binds: list
    host_asserts: list
    return_code: str | None
    grid_code: list
    block_code: list
    cluster_code: list | None
    smem_code: str
    option_codes: list
    cooperative: bool
    pack_exprs: list
    tensor_dtypes: list  # (parameter index, dtype name) of each tensor parameter (the fast path's checks)
    launcher: str  # "bindings" or "ctypes" (the module's)
    _eval_ns: dict
    # the packed launch
    fmt: str
    param_offsets: list
    param_size: int
    fast_source: str
    _fast: str | None
    # per device: functions, parameter buffers, launch blocks, streams, shared-memory limits
    _fns: dict[int, Any]
    _fnp: dict[int, Any]
    _blocks: dict[int, tuple]
    _xblocks: dict[int, tuple]
    _streams: dict[int, Any]
    _smem_max: dict[int, int]
    _lock: threading.Lock
