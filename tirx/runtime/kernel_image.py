"""A compiled image: one NVRTC build (CUDA source, PTX, cubin) and loading it as a CUDA module
once per device (``cuModuleLoadData``; a PTX image is JIT-compiled by the driver there).

``CompiledModule`` (``kernel.py``), the result of ``tirx.compile``, is the first image of a
build; split out of kernel.py by what it holds (issue #30).
"""

from __future__ import annotations

import threading
from typing import Any

from . import driver as _drv

__all__ = ["CompiledImage"]


class CompiledImage:
    """One NVRTC build: the CUDA source, its PTX and cubin for one arch and option list, loaded
    once per device. A module's kernels are one image, unless device entries ask for other
    compile settings (``backend_config``): then each group of equal settings is one image."""

    def __init__(self, source: str, ptx: str, cubin: bytes, arch: str, log: str = "", options: tuple = (),
                 cache_key: str = "", cache_hit: str = "", features: frozenset = frozenset(),
                 config: dict | None = None, image_format: str = "cubin"):  # fmt: skip
        self.features = frozenset(features)  # codegen features: "cooperative", "nvshmem", ...
        self.source = source
        self.ptx = ptx
        self.cubin = cubin
        self.arch = arch
        self.log = log
        self.options = options
        self.cache_key = cache_key
        self.cache_hit = cache_hit
        #: the resolved CUDA settings of backend_config (``{"arch", "compiler", "nvrtc", ...}``), or None
        self.config = config
        # "cubin", or "ptx" (backend_config target_format "ptx": the driver JIT-compiles it at load)
        self.image_format = image_format
        self._mods: dict[int, Any] = {}
        self._mlock = threading.Lock()

    def _image(self) -> bytes:
        return self.ptx.encode() + b"\0" if self.image_format == "ptx" else self.cubin

    def _load(self, dev: int, name: str) -> Any:
        with self._mlock:
            mod = self._mods.get(dev)
            d = _drv.driver()
            if mod is None:
                _drv.require()
                _drv.context(dev)
                try:
                    mod = _drv.check(d.cuModuleLoadData(self._image()), "cuModuleLoadData")
                except RuntimeError as e:
                    if "NO_BINARY_FOR_GPU" not in str(e):
                        raise
                    why = " (its backend_config)" if self.config and self.config.get("arch") else ""
                    raise RuntimeError(
                        f"the kernel was compiled for {self.arch}{why}, which device {dev} "
                        f"({_drv.device_arch(dev)}) cannot run; compile it for that device "
                        "(target=\"cuda -arch=...\" or backend_config's arch)"
                    ) from e
                if "nvshmem" in getattr(self, "features", ()):  # its NVSHMEM device state
                    from . import nvshmem

                    nvshmem.module_loaded(mod)
                self._mods[dev] = mod
            return _drv.check(d.cuModuleGetFunction(mod, name.encode()), f"cuModuleGetFunction({name})")
