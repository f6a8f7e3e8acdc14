"""tirx.testing: hypothesis strategies, fuzzing campaigns, FileCheck-style pass tests
(``tirx.testing.filecheck``) and ``do_bench`` (``tirx.runtime.bench``: it times kernels, so it lives with the runtime).

The submodules load on first use: ``tirx.testing.do_bench`` imports ``tirx.runtime.bench``
when it is first looked up (PEP 562), so ``import tirx.testing`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tirx.runtime.bench import do_bench as do_bench

__all__ = ["do_bench"]


def __getattr__(name: str) -> Any:
    if name == "do_bench":
        from tirx.runtime.bench import do_bench

        return do_bench
    raise AttributeError(f"module 'tirx.testing' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "do_bench"})
