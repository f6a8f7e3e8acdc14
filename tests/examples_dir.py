"""The repository's ``examples/`` folder for the tests, and the one way they import from it."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load_example(relpath: str) -> ModuleType:
    """Import ``examples/<relpath>`` (e.g. ``"kernels/elementwise_add.py"``) as a fresh module."""
    name = "tirx_example_" + relpath.replace("/", "_").removesuffix(".py")
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / relpath)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
