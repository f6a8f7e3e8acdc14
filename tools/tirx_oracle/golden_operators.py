"""Record what TIRx's Python operators build from two IR values (run with apache-tvm-tirx 0.1.0a4).

    /path/to/py312-with-tvm_tirx/bin/python tools/tirx_oracle/golden_operators.py \\
        [tests/data/tirx_golden/operators.json]

The companion of ``golden_literals.py`` (a Python number beside an IR value): here both
operands are IR values, as in a plain Python helper that computes on what a kernel passes it
(``h = lambda x, y: x * T.float32(1)``, the RFC's F4 metaprogramming). For every row a kernel
binds ``v = h(X[0], Y[0])``; TIRx folds and matches dtypes in its operators, so the table
records TIRx's printed body (``v: T.let[T.float32] = X[0]``) or its refusal.
``tests/test_tirx_operators.py`` checks, without TIRx, that tirx builds the same. The table
holds expressions and TIRx's printed results only; nothing in tirx imports this script.
"""

from __future__ import annotations

import json
import pathlib
import sys
import tempfile

from golden_literals import _run

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "tirx_golden" / "operators.json"

DTYPES = ["int8", "int32", "int64", "uint32", "bool", "float16", "bfloat16", "float32", "float64"]
BINARY = ["+", "-", "*", "/", "//", "%", "&", "|", "^", "<<", ">>", "<", "==", "T.min", "T.max"]
MIXED_OPS = ["+", "*", "//", "&", "<", "T.max"]

#: ``x`` is ``X[0]`` (dtype ``{dx}``), ``y`` is ``Y[0]`` (dtype ``{dy}``)
SOURCE = (
    "h = lambda x, y: {expr}\n\n\n"
    "@T.function\n"
    'def f(X: T.Tensor((1,), "{dx}"), Y: T.Tensor((1,), "{dy}")):\n'
    "    v = h(X[0], Y[0])\n"
    "    T.evaluate(v)\n"
)
#: TIRx's printed text of a kernel, around its body ``{lines}`` (each line indented by four spaces)
TEXT = (
    "# from tvm_tirx.script import tirx as T\n\n"
    "@T.function\n"
    "def f(X: T.Tensor((1,), T.{dx}), Y: T.Tensor((1,), T.{dy})):\n"
    "{lines}\n"
)


def binary(op: str, a: str, b: str) -> str:
    return f"{op}({a}, {b})" if op.startswith("T.") else f"{a} {op} {b}"


def rows() -> list[dict]:
    out = []
    for d in DTYPES:
        c = {k: f"T.{d}({k})" for k in ("0", "1", "2", "3")}
        for op in BINARY:
            for a, b in (("x", "y"), ("x", c["0"]), (c["0"], "x"), ("x", c["1"]), (c["1"], "x"),
                         (c["2"], c["3"]), (c["3"], c["2"]), ("x", "x")):  # fmt: skip
                out.append({"dx": d, "dy": d, "expr": binary(op, a, b)})
        out.append({"dx": d, "dy": d, "expr": "-x"})
        out.append({"dx": d, "dy": d, "expr": f"-{c['2']}"})
    for dx in DTYPES:
        for dy in DTYPES:
            if dx != dy:
                out += [{"dx": dx, "dy": dy, "expr": binary(op, "x", "y")} for op in MIXED_OPS]
    return out


def main(argv: list[str]) -> int:
    out = pathlib.Path(argv[0]) if argv else OUT
    table = []
    with tempfile.TemporaryDirectory() as d:
        for n, row in enumerate(rows()):
            r = dict(row)
            r["tirx"] = _run(SOURCE.format(**row), d, n, strict=False)
            table.append(r)
    doc = {
        "about": (
            "TIRx (apache-tvm-tirx 0.1.0a4) Python operators on two IR values. Each row: the dtypes "
            "of X and Y, the helper's expression (x is X[0], y is Y[0]), and TIRx's printed body of "
            "the kernel binding v = h(X[0], Y[0]) then T.evaluate(v), or 'ERR <type>: <message>'. Made "
            "by tools/tirx_oracle/golden_operators.py; checked by tests/test_tirx_operators.py."
        ),
        "source": SOURCE,
        "text": TEXT,
        "columns": ["dx", "dy", "expr", "tirx"],
    }
    head = json.dumps(doc, indent=1)[:-2]
    body = ",\n".join("  " + json.dumps([r["dx"], r["dy"], r["expr"], r["tirx"]]) for r in table)
    out.write_text(head + ',\n "rows": [\n' + body + "\n ]\n}\n")
    nerr = sum(r["tirx"].startswith("ERR") for r in table)
    print(f"wrote {len(table)} rows to {out} ({nerr} refused)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
