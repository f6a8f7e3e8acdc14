"""Record TIRx's IR for the frontend golden kernels (run with apache-tvm-tirx 0.1.0a4 installed).

    /path/to/py312-with-tvm_tirx/bin/python tools/tirx_oracle/golden_frontend.py [case ...]

Every ``tests/data/tirx_golden/frontend/<case>.py`` is a small kernel written against
``from tirx.script import tirx as T`` that defines ``f``. This script runs it under TIRx (the
import line switched to ``tvm_tirx``) and writes ``<case>.tirx``: TIRx's printed text of ``f``.
``tests/test_tirx_golden_frontend.py`` then checks, without TIRx, that tirx builds the same
IR from the ``.py`` as it loads from the ``.tirx``. A case TIRx rejects is reported and its
``.tirx`` left alone. This script imports TIRx; nothing in tirx imports this script.
"""

from __future__ import annotations

import pathlib
import sys
import tempfile
import types

HERE = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "tirx_golden" / "frontend"
TIRX_IMPORT = "from tirx.script import tirx as T"
TVM_IMPORT = "from tvm_tirx.script import tirx as T"


def build(case: pathlib.Path) -> object:
    """TIRx's ``f`` of the case: the source with TIRx's import, run from a file in a temporary
    folder (TIRx's parser reads a kernel's source from its file, and a class's through its
    module, so the module is registered while it runs)."""
    src = case.read_text()
    if TIRX_IMPORT not in src:
        raise ValueError(f"{case.name}: expected the line {TIRX_IMPORT!r}")
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d) / case.name
        # ``from tirx import ir`` (TIRx's Python API modules, tirx/tirx) is ``from tvm_tirx import ir``,
        # ``from tirx.backend.cuda.lang import ...`` (the kernel helpers) is TIRx's tvm_tirx.backend...
        tmp.write_text(
            src.replace(TIRX_IMPORT, TVM_IMPORT)
            .replace("\nfrom tirx import ", "\nfrom tvm_tirx import ")
            .replace("\nfrom tirx.backend.", "\nfrom tvm_tirx.backend.")
        )
        name = f"golden_{case.stem}"
        mod = types.ModuleType(name)
        mod.__file__ = str(tmp)
        sys.modules[name] = mod
        try:
            exec(compile(tmp.read_text(), str(tmp), "exec"), mod.__dict__)  # the oracle runs its own kernels
        finally:
            sys.modules.pop(name, None)
    return mod.__dict__["f"]


def record(case: pathlib.Path) -> str:
    """TIRx's printed text of the case's ``f``."""
    return build(case).script() + "\n"


def main(names: list[str]) -> int:
    cases = sorted(HERE.glob("*.py")) if not names else [HERE / f"{n}.py" for n in names]
    failed = 0
    for case in cases:
        if case.name.startswith("_"):
            continue
        try:
            text = record(case)
        except Exception as e:  # report and go on: one bad case must not hide the others
            print(f"{case.stem}: TIRx rejected it: {type(e).__name__}: {e}", file=sys.stderr)
            failed += 1
            continue
        case.with_suffix(".tirx").write_text(text)
        print(f"{case.stem}: {len(text.splitlines())} lines")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
