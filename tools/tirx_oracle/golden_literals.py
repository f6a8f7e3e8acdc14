"""Record how TIRx combines a Python literal with an IR value (run with apache-tvm-tirx 0.1.0a4).

    /path/to/py312-with-tvm_tirx/bin/python tools/tirx_oracle/golden_literals.py \\
        [tests/data/tirx_golden/literals.json]

For every dtype in ``DTYPES``, literal in ``LITERALS``, operator in ``OPS`` and operand order,
TIRx builds one kernel whose body binds ``v = <expr>`` (``X[0]`` the typed operand, the literal
the other one), once written in the kernel and once through a plain Python helper called from
the kernel (``h = lambda x, c: <expr>``: Python operators on IR values, as in host code). The
table records TIRx's printed binding line (``v: T.let[T.int32] = T.Cast("int32", X[0]) + 1``),
or the error TIRx raised. ``tests/test_tirx_literals.py`` then checks, without TIRx, that tirx
builds the same IR from the same source (or refuses it too). The table holds expressions and
TIRx's printed results only; this script imports TIRx, nothing in tirx imports this script.
"""

from __future__ import annotations

import json
import pathlib
import sys
import tempfile
import types

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "tirx_golden" / "literals.json"
TVM_IMPORT = "from tvm_tirx.script import tirx as T"

DTYPES = [
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool",
    "float16", "bfloat16", "float32", "float64",
    "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu",
]  # fmt: skip
LITERALS = ["0", "1", "(-1)", "2147483648", "1099511627776", "1.0", "0.1", "2.5", "(-0.0)", "True", "False"]
BINARY = ["+", "-", "*", "/", "//", "%", "<", "<=", ">", ">=", "==", "!=", "&", "|", "^", "<<", ">>"]
CALLS = ["T.min", "T.max", "T.if_then_else"]
OPS = BINARY + CALLS

#: the kernel around each expression (``{dtype}``, ``{expr}``); ``C[0]`` is the condition of
#: ``T.if_then_else``
KERNEL = '@T.function\ndef f(X: T.Tensor((1,), "{dtype}"), C: T.Tensor((1,), "bool")):\n    v = {expr}\n'
#: the same through a plain Python helper (``x`` is ``X[0]``, ``c`` is ``C[0]``); ``T.evaluate(v)``
#: keeps a comparison TIRx leaves unconverted (its ``==`` gives a deferred ``EqualOp``, which
#: the binding keeps as a Python value) in the printed text
HELPER = (
    "h = lambda x, c: {expr}\n\n\n"
    "@T.function\n"
    'def f(X: T.Tensor((1,), "{dtype}"), C: T.Tensor((1,), "bool")):\n'
    "    v = h(X[0], C[0])\n"
    "    T.evaluate(v)\n"
)
#: TIRx's printed text of a kernel, around its body ``{lines}`` (each line indented by four spaces)
TEXT = (
    "# from tvm_tirx.script import tirx as T\n\n"
    "@T.function\n"
    "def f(X: T.Tensor((1,), T.{dtype}), C: T.Tensor((1,), T.bool)):\n"
    "{lines}\n"
)


def expr(op: str, lit: str, side: str, x: str = "X[0]", c: str = "C[0]") -> str:
    """The expression of one row: ``x`` and the literal, in the order ``side`` says (``L``:
    ``x`` first)."""
    a, b = (x, lit) if side == "L" else (lit, x)
    if op == "T.if_then_else":
        return f"T.if_then_else({c}, {a}, {b})"
    if op in CALLS:
        return f"{op}({a}, {b})"
    return f"{a} {op} {b}"


def rows() -> list[dict]:
    return [
        {"dtype": d, "op": op, "expr": expr(op, lit, side)}
        for d in DTYPES
        for lit in LITERALS
        for op in OPS
        for side in ("L", "R")
    ]


def helper_expr(e: str) -> str:
    """A row's expression as the helper writes it (``x`` for ``X[0]``, ``c`` for ``C[0]``)."""
    return e.replace("X[0]", "x").replace("C[0]", "c")


def source(row: dict, ctx: str) -> str:
    """The Python source of one row's kernel (``ctx``: "kernel" or "helper"), importing ``T``
    from nowhere: the caller puts its own import line first."""
    if ctx == "kernel":
        return KERNEL.format(dtype=row["dtype"], expr=row["expr"])
    return HELPER.format(dtype=row["dtype"], expr=helper_expr(row["expr"]))


def _run(src: str, tmpdir: str, n: int, strict: bool = True) -> str:
    """TIRx's binding line for one kernel source, or ``ERR <type>: <first line>`` (``strict``:
    the body must start with the binding; else any body, ``pass`` when it is empty)."""
    path = pathlib.Path(tmpdir) / f"k{n}.py"
    path.write_text(TVM_IMPORT + "\n\n" + src)
    name = f"golden_literals_{n}"
    mod = types.ModuleType(name)
    mod.__file__ = str(path)
    sys.modules[name] = mod
    try:
        exec(compile(path.read_text(), str(path), "exec"), mod.__dict__)  # the oracle runs its own kernels
        text = mod.__dict__["f"].script()
    except Exception as e:  # TIRx's refusal is the answer
        lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
        msg = lines[0] if lines else ""
        for ln in lines:  # TIRx's parser prints the source and a caret first: keep the error line
            if "error:" in ln.lower() or "Error" in ln or "Check failed" in ln:
                msg = ln.strip()
                break
        return f"ERR {type(e).__name__}: {msg[:160]}"
    finally:
        sys.modules.pop(name, None)
    body = [ln.strip() for ln in text.splitlines() if ln.startswith("    ")]
    if not strict:
        return "\n".join(body) or "pass"
    if not body or not body[0].startswith(("v", "T.evaluate(")):
        raise AssertionError(f"unexpected kernel text for\n{src}\n{text}")
    return "\n".join(body)


def main(argv: list[str]) -> int:
    out = pathlib.Path(argv[0]) if argv else OUT
    table = []
    with tempfile.TemporaryDirectory() as d:
        for n, row in enumerate(rows()):
            k = _run(source(row, "kernel"), d, 2 * n)
            h = _run(source(row, "helper"), d, 2 * n + 1)
            r = dict(row)
            r["kernel"] = k
            if h != (k if k.startswith("ERR") else k + "\nT.evaluate(v)"):
                r["helper"] = h
            table.append(r)
    doc = {
        "about": (
            "TIRx (apache-tvm-tirx 0.1.0a4) combining a Python literal with an IR value. Each row: "
            "the dtype of X, the operator, the expression, 'kernel': TIRx's printed body of the "
            "kernel binding v = <expr>, 'helper': the same expression computed by a plain "
            "Python helper called from the kernel (x for X[0], c for C[0]), null where it is the "
            "kernel's line followed by T.evaluate(v); 'ERR <type>: <message>' where TIRx refused it. Made by "
            "tools/tirx_oracle/golden_literals.py; checked by tests/test_tirx_literals.py."
        ),
        "kernel_source": KERNEL,
        "helper_source": HELPER,
        "text": TEXT,
        "columns": ["dtype", "op", "expr", "kernel", "helper"],
    }
    head = json.dumps(doc, indent=1)[:-2]
    body = ",\n".join(
        "  " + json.dumps([r["dtype"], r["op"], r["expr"], r["kernel"], r.get("helper")]) for r in table
    )
    out.write_text(head + ',\n "rows": [\n' + body + "\n ]\n}\n")
    nerr = sum(r["kernel"].startswith("ERR") for r in table)
    nh = sum("helper" in r for r in table)
    print(f"wrote {len(table)} rows to {out} ({nerr} refused in a kernel, {nh} differ in a helper)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
