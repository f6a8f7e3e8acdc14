"""Shared helpers for the frontend tests: load Python sources as real modules."""

from __future__ import annotations

import importlib.util
import itertools
import re
import sys
import tempfile
from pathlib import Path

_counter = itertools.count()
_TMP = Path(tempfile.mkdtemp(prefix="tirx_frontend_"))


def load_module(text: str, stem: str = "mod"):
    """Write ``text`` to a temp file and import it (so ``inspect``/linecache see the source)."""
    name = f"_tirx_fe_{stem}_{next(_counter)}"
    path = _TMP / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


_DEF_TP = re.compile(r"^(\s*)def (\w+)\[([^\]]*)\]\(")


def printed_text_as_python(text: str) -> str:
    """Make printed ``.tirx`` text importable on Python 3.11.

    ``def f[n, D: T.int64](...)`` becomes ``def f(...)`` with ``n = T.dynamic("n")`` ...
    written just above the function's decorators (module level or class body, where the
    frontend captures them when the function is decorated).
    """
    lines = text.split("\n")
    out: list[str] = []
    for line in lines:
        m = _DEF_TP.match(line)
        if m is None:
            out.append(line)
            continue
        indent = m.group(1)
        dyn = []
        for part in m.group(3).split(","):
            part = part.strip()
            if not part:
                continue
            if ":" in part:
                n, t = (x.strip() for x in part.split(":", 1))
                dyn.append(f'{indent}{n} = T.dynamic("{n}", {t})')
            else:
                dyn.append(f'{indent}{part} = T.dynamic("{part}")')
        k = len(out)
        while k > 0 and out[k - 1].startswith(indent + "@"):
            k -= 1
        out[k:k] = dyn
        out.append(f"{indent}def {m.group(2)}(" + line[m.end() :])
    body = "\n".join(out)
    head = "from tirx.script import tirx as T\nfrom tirx.script import ir as I\n"
    return head + body.replace("from __future__ import annotations\n", "")


def test_printed_text_as_python_lists_dynamic_vars():
    out = printed_text_as_python(
        "@T.function\ndef f[n, D: T.int64](A: T.Tensor((n,), T.float32)):\n    pass\n"
    )
    assert 'n = T.dynamic("n")' in out
    assert 'D = T.dynamic("D", T.int64)' in out
    assert "def f(A" in out


def line_of(path: str, marker: str) -> int:
    """1-based line number of the first line of ``path`` containing ``marker``."""
    with open(path) as fh:
        for i, line in enumerate(fh, 1):
            if marker in line:
                return i
    raise AssertionError(f"marker {marker!r} not found in {path}")
