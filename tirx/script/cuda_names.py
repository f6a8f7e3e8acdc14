"""The Python-only members of ``T.cuda`` that are not ops: TIRx's namespace classes, thread
scopes, the backend-config dict type and the launch classes (``tirx.surface.launch_config``'s
``LAUNCH_CLASSES``, which the text parser shares).

- ``T.cuda.iket`` / ``T.cuda.wgmma`` are namespaces of aliases (``T.cuda.iket.mark`` builds
  ``T.cuda.iket_mark``); ``T.cuda.IketNamespace``, ``CudaWgmmaNamespace``, ``PTXNamespace``,
  ``PTXLegacyNamespace`` and ``STIRNamespace`` are their classes (calling one gives the same
  namespace as ``T.cuda.iket``, ``T.cuda.wgmma``, ``T.ptx``, ``T.ptx_legacy``, ``T.s_tir``).
- ``T.cuda.ThreadScope("warp")``: a CUDA thread scope by its backend-local name (thread, warp,
  warpgroup, cta, cluster, kernel), ranked as TIRx ranks them.
- ``T.cuda.BackendConfig``: the TypedDict of CUDA toolchain overrides (arch, compiler, ...).
- ``T.cuda.annotations``: TIRx's ``T.cuda`` leaks its module's ``from __future__ import
  annotations``; kept so the name resolves.
"""

from __future__ import annotations
import __future__

from typing import TYPE_CHECKING, Any, Literal, TypedDict

from ..surface.launch_config import LAUNCH_CLASSES

if TYPE_CHECKING:  # tirx/script/tirx.py imports this module
    from .tirx import OpNamespace

__all__ = ["BackendConfig", "ThreadScope", "names"]


def _namespace(base: type[OpNamespace], prefix: str, name: str, doc: str) -> type:
    """A subclass of ``T``'s op namespace class whose instances are ``T.<prefix>``."""

    def __init__(self: Any) -> None:
        base.__init__(self, prefix)

    return type(name, (base,), {"__init__": __init__, "__doc__": doc})


_SCOPES = {"cluster": 0, "cta": 1, "warpgroup": 2, "warp": 3, "thread": 4, "kernel": -1}


class ThreadScopeValue:
    """A CUDA thread scope (``T.cuda.ThreadScope("warp")``): its name is ``cuda.<local name>``;
    ``rank`` orders them from the cluster (0) down to the thread (4), ``kernel`` is -1."""

    __slots__ = ("local_name",)
    local_name: str

    def __init__(self, local_name: str):
        object.__setattr__(self, "local_name", local_name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a ThreadScope is immutable")

    backend = "cuda"

    @property
    def name(self) -> str:
        return f"cuda.{self.local_name}"

    @property
    def rank(self) -> int:
        return _SCOPES[self.local_name]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ThreadScopeValue) and other.local_name == self.local_name

    def __hash__(self) -> int:
        return hash(("ThreadScope", self.local_name))

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f'T.ThreadScope("{self.name}")'


def ThreadScope(name: str) -> ThreadScopeValue:
    """Look up a CUDA thread scope by its backend-local name (thread, warp, warpgroup, cta, cluster, kernel)."""
    if not isinstance(name, str) or name not in _SCOPES:
        raise ValueError(f"T.cuda.ThreadScope: no CUDA thread scope {name!r} (one of {', '.join(_SCOPES)})")
    return ThreadScopeValue(name)


class BackendConfig(TypedDict, total=False):
    """Optional CUDA overrides. Toolchain arguments are passed as individual argv items."""

    arch: str
    compiler: Literal["nvcc", "nvrtc"]
    target_format: Literal["ptx", "cubin", "fatbin"]
    nvcc: list[str]
    nvrtc: list[str]
    ptxas: list[str]


def names(base: type[OpNamespace]) -> dict:
    """The extra members of ``T.cuda``; ``base`` is tirx/script/tirx.py's ``OpNamespace``."""
    iket = _namespace(
        base, "cuda.iket", "IketNamespace", "TIRx's NVIDIA IKET annotations (T.cuda.iket.mark, ...)."
    )
    wgmma = _namespace(
        base,
        "cuda.wgmma",
        "CudaWgmmaNamespace",
        "WGMMA companions that are not PTX instructions (T.cuda.wgmma.*).",
    )
    from ..ops.cuda_tensormap import TensorMapEncodeTiledAttr

    return {
        "TensorMapEncodeTiledAttr": TensorMapEncodeTiledAttr,
        **LAUNCH_CLASSES,
        "BackendConfig": BackendConfig,
        "ThreadScope": ThreadScope,
        "annotations": __future__.annotations,
        "IketNamespace": iket,
        "CudaWgmmaNamespace": wgmma,
        "PTXNamespace": _namespace(base, "ptx", "PTXNamespace", "The PTX instruction chains (T.ptx.*)."),
        "PTXLegacyNamespace": _namespace(
            base,
            "ptx_legacy",
            "PTXLegacyNamespace",
            "Apache-compatible PTX spellings (T.ptx_legacy.mma, .ldmatrix).",
        ),
        "STIRNamespace": _namespace(
            base, "s_tir", "STIRNamespace", "Nodes the s_tir passes build (T.s_tir.cp_async_raw)."
        ),
        "iket": iket(),
        "wgmma": wgmma(),
        **_tcgen05_names(base),
    }


def _tcgen05_names(base: type[OpNamespace]) -> dict:
    """``T.cuda.tcgen05`` (aliases of the descriptor encoders), its class and the option
    records (tirx/ops/tcgen05.py)."""
    from ..ops import tcgen05 as _t

    tcgen05 = _namespace(
        base,
        "cuda.tcgen05",
        "CudaTcgen05Namespace",
        "tcgen05 companions that are not PTX instructions (descriptor encoders).",
    )
    return {
        "CudaTcgen05Namespace": tcgen05,
        "tcgen05": tcgen05(),
        "TCGen05InstrDescriptorAttrs": _t.TCGen05InstrDescriptorAttrs,
        "TCGen05InstrDescriptorBlockScaledAttrs": _t.TCGen05InstrDescriptorBlockScaledAttrs,
    }
