"""What ``import tirx`` and ``tirx.loads`` load (issue #30): the package facade imports only
the IR; the op declarations, front ends and backends load on first use. Counted in a fresh
interpreter (module counts, never wall-clock time)."""

from __future__ import annotations

import json
import subprocess
import sys

# tirx modules loaded by ``import tirx`` (was 53 before issue #30's lazy facade; 19 with it;
# 18 since the traversals, tirx.ir.visitor and tirx.ir.functor, load on first use).
# Lower this when the IR sheds a module; never raise it.
MAX_IMPORT_MODULES = 18

HEAVY = ("tirx.grammar", "tirx.script", "tirx.codegen", "tirx.runtime", "tirx.interp", "tirx.ops")
NOT_FOR_TEXT = ("tirx.script", "tirx.codegen", "tirx.interp", "tirx.runtime")

SMALL = """\
@T.function
def f(A: T.Tensor((4,), T.float32)):
    A[0] = T.sqrt(T.float32(1.0))
"""


_PRINT = "print(json.dumps(sorted(m for m in sys.modules if m == 'tirx' or m.startswith('tirx.'))))"


def _loaded(code: str) -> list[str]:
    code = f"import json, sys\n{code}\n{_PRINT}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _under(mods: list[str], units: tuple[str, ...]) -> list[str]:
    return [m for m in mods if any(m == u or m.startswith(u + ".") for u in units)]


def test_import_tirx_is_light():
    mods = _loaded("import tirx")
    assert len(mods) <= MAX_IMPORT_MODULES, mods
    assert _under(mods, HEAVY) == []


def test_loads_pulls_in_no_frontend_or_backend():
    mods = _loaded(f"import tirx\nf = tirx.loads({SMALL!r})\nassert 'T.sqrt' in tirx.dumps(f)")
    assert "tirx.grammar" in mods and "tirx.ops" in mods
    assert _under(mods, NOT_FOR_TEXT) == []


def test_public_names_still_resolve():
    code = (
        "import tirx\n"
        "from tirx.script import tirx as T\n"
        "names = ['loads', 'load', 'dumps', 'save', 'compile', 'structural_equal', 'structural_hash',\n"
        "         'assert_structural_equal', 'DiagnosticError', 'Function', 'Module', 'ir', 'ops',\n"
        "         'script', 'grammar', 'printer', 'passes', 'testing', 'codegen', 'runtime', 'interp']\n"
        "assert all(getattr(tirx, n) is not None for n in names)\n"
        "assert set(names) <= set(dir(tirx)), set(names) - set(dir(tirx))\n"
        "assert T.float32 is not None\n"
        "try:\n    tirx.no_such_name\nexcept AttributeError:\n    pass\nelse:\n    raise SystemExit(1)\n"
    )
    _loaded(code)


def test_op_table_loads_the_builtins_on_first_use():
    mods = _loaded("import tirx\nfrom tirx.ir import op\nassert op.lookup('sqrt') is not None")
    assert "tirx.ops.math" in mods
