"""Another version of an example module, loaded from a file beside the current one.

Before / after runs in one process (``--baseline FILE`` of bench_attention.py,
bench_compile.py and ab_attention.py): the file (a copy of, say,
tirx/kernels/hopper/attention.py from an older commit) is imported as a submodule of the
current module's package, so its relative imports (``from .gemm import ...``) resolve.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from types import ModuleType


def label(path: str) -> str:
    """The name a baseline goes by in tables and options: the file's stem."""
    return os.path.splitext(os.path.basename(path))[0]


def load(path: str, package: str = "tirx.kernels.hopper") -> ModuleType:
    """Import ``path`` as ``<package>._baseline_<stem>`` (cached in ``sys.modules``)."""
    name = f"{package}._baseline_{label(path)}"
    mod = sys.modules.get(name)
    if mod is not None:
        return mod
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"--baseline {path!r}: not a Python file")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
