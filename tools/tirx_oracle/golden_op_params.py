"""Record TIRx's op argument names (run with apache-tvm-tirx 0.1.0a4 installed).

    /path/to/py312-with-tvm_tirx/bin/python tools/tirx_oracle/golden_op_params.py

Writes ``tests/data/tirx_golden/op_params.json``: for every op TIRx registers whose arguments
have fixed names (no variadic tail), its name (``prim.fabs``, ``tirx.cuda.thread_idx``) and
argument names, the keywords a TIRx program may call it with (``T.fabs(x=...)``).
``tests/test_tirx_op_params.py`` then checks, without TIRx, that tirx's op of the same name
takes the same keywords. This script imports TIRx; nothing in tirx imports this script.
"""

from __future__ import annotations

import json
import pathlib

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "tirx_golden" / "op_params.json"


def main() -> int:
    from tvm_tirx import ir

    table = {}
    for name in sorted(ir.Op.list_op_names()):
        op = ir.Op.get(name)
        try:
            args = [a.name for a in op.args_info]
        except Exception:  # an op without argument information
            continue
        if getattr(op, "var_args_info", None) is not None:
            continue
        table[name] = args
    OUT.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"{len(table)} ops -> {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
