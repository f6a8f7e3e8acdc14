"""Out-of-tree backend autoload through the ``tirx.backends`` entry-point group.

Each entry point's callable runs once, after the core is initialised. A failing one
becomes a warning, never a broken ``import tirx``. ``TIRX_BACKEND_AUTOLOAD=0`` disables it.
"""

from __future__ import annotations

import os
import warnings
from importlib import metadata

GROUP = "tirx.backends"
_done = False
loaded: list[str] = []


def autoload() -> list[str]:
    """Load every ``tirx.backends`` entry point once; return the names that loaded."""
    global _done
    if _done or os.environ.get("TIRX_BACKEND_AUTOLOAD", "1") == "0":
        return loaded
    _done = True
    try:
        eps = metadata.entry_points(group=GROUP)
    except Exception as e:  # a broken distribution must not break import tirx
        warnings.warn(f"tirx: could not list {GROUP} entry points: {e}", RuntimeWarning, stacklevel=2)
        return loaded
    for ep in eps:
        try:
            fn = ep.load()
            fn()
        except Exception as e:
            warnings.warn(
                f"tirx: backend {ep.name!r} ({ep.value}) failed to autoload: {type(e).__name__}: {e}",
                RuntimeWarning,
                stacklevel=2,
            )
            continue
        loaded.append(ep.name)
    return loaded
