"""Record TIRx's CUDA for the frontend golden kernels (run with apache-tvm-tirx 0.1.0a4 installed).

    /path/to/py312-with-tvm_tirx/bin/python tools/tirx_oracle/golden_frontend_cuda.py [case ...]

For every ``tests/data/tirx_golden/frontend/<case>.py`` (see ``golden_frontend.py``) this asks
TIRx to compile ``f`` for CUDA (``sm_90a``, then ``sm_100a`` for Blackwell-only code) and
writes the outcome to ``tests/data/tirx_golden/frontend_cuda.json``: the arch and TIRx's CUDA
source, or TIRx's error when it compiles the case for neither. ``tests/test_tirx_golden_
frontend_cuda.py`` then checks, without TIRx, that tirx compiles every case TIRx compiles, and
on a GPU that both kernels compute the same. Named cases update their entries; no names
re-record all. This script imports TIRx; nothing in tirx imports this script.
"""

from __future__ import annotations

import json
import sys

from golden_frontend import HERE, build

OUT = HERE.parent / "frontend_cuda.json"
ARCHES = ("sm_90a", "sm_100a")


def compile_case(f: object) -> dict:
    import tvm_tirx

    errors = []
    for arch in ARCHES:
        try:
            ex = tvm_tirx.tirx.compile(f, target={"kind": "cuda", "arch": arch})
            return {"arch": arch, "cuda": ex.mod.imports[0].inspect_source("cuda")}
        except Exception as e:
            msg = str(e).strip().splitlines()
            errors.append(f"{arch}: {type(e).__name__}: {msg[-1] if msg else ''}"[:400])
    return {"error": errors}


def main(names: list[str]) -> int:
    data = json.loads(OUT.read_text()) if OUT.exists() and names else {}
    cases = [HERE / f"{n}.py" for n in names] if names else sorted(HERE.glob("*.py"))
    for case in cases:
        if case.name.startswith("_"):
            continue
        try:
            f = build(case)
        except Exception as e:
            print(f"{case.stem}: TIRx rejected the source: {type(e).__name__}: {e}", file=sys.stderr)
            data[case.stem] = {"error": [f"source: {type(e).__name__}: {e}"[:400]]}
            continue
        data[case.stem] = entry = compile_case(f)
        print(f"{case.stem}: {entry.get('arch') or 'does not compile'}")
    OUT.write_text(json.dumps(dict(sorted(data.items())), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
