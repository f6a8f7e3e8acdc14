"""The op reference (docs/ops.md), generated from the op table: one declaration per op is
also its documentation.

    python tools/op_reference.py            # print it
    python tools/op_reference.py --write    # update docs/ops.md
    python tools/op_reference.py --check    # exit 1 when docs/ops.md is stale

For every built-in op: its script name and signature (parameter names, optional arguments
with their defaults, literal choices), result, what the CUDA backend and the interpreter do
with it, its traits, and its doc line; aliases (names that build another op's call) next to
their target; PTX instruction-table opcodes with the signature of each row.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ops.md"

_KIND = {"x": "expr", "i": "int", "f": "float", "b": "bool", "p": "ptr", "s": "str", "n": "int literal"}
_HEAD = """\
# Op reference

Generated from the op table by `python tools/op_reference.py --write` (a test fails when this
page is stale). Each op is declared once in `tirx/ops/<family>.py` (docs/contributing.md);
this page is that declaration read back. Columns: the script call with its parameters
(`name?=default` optional, `{a|b}` literal choices, `*` variadic), the result type (`arg0`:
the first argument's type, `ty`: given by `ty=`), the CUDA lowering (`C`: a C expression
template, `PTX`: inline asm, `fn`: a function, `table`: PTX-table rows), the interpreter
(`yes`, or `no` with the reason), and the traits passes and backends ask instead of names.
"""


def _param(op, i: int, kind: str) -> str:
    base = kind.lstrip("*").rstrip("?")
    name = op.params[i] if i < len(op.params) else f"a{i}"
    s = f"{name}: {_KIND.get(base, base)}"
    if i in op.choices:
        s = f"{name}: {{{'|'.join(str(c) for c in op.choices[i])}}}"
    if kind.startswith("*"):
        s = "*" + s
    if kind.endswith("?"):
        d = op.defaults.get(i)
        s += f"?={d.value if hasattr(d, 'value') else d}" if d is not None else "?"
    return s


def _result(op) -> str:
    r = op.result
    if isinstance(r, str):
        return r
    if callable(r) and not hasattr(r, "base"):
        return "computed"
    return str(r)


def _cuda(op) -> str:
    from tirx.ir.op import PTX, CExpr, impl

    c = impl("cuda", op)
    if c is None:
        return "—"
    if isinstance(c, CExpr):
        return "C"
    if isinstance(c, PTX):
        return "PTX"
    return "fn"


def _interp(op) -> str:
    from tirx.ir.op import NoInterp, impl

    i = impl("interp", op)
    if i is None:
        return "—"
    if isinstance(i, NoInterp):
        return f"no: {i.reason}"
    from tirx.ops import ptx_table

    opc = ptx_table.opcodes().get(op.name)
    if opc is not None:  # a PTX-table opcode: how many of its rows have CPU semantics
        n = sum(1 for r in opc.rows if ptx_table.row_has_semantics(r))
        return f"{n} of {len(opc.rows)} rows" if n else "no: inline PTX with no CPU model"
    return "yes"


def _traits(op) -> str:
    import attrs

    from tirx.ir.op import Traits

    d = Traits()
    out = []
    for f in attrs.fields(Traits):
        v = getattr(op.traits, f.name)
        if v != getattr(d, f.name):
            out.append(f.name if v is True else f"{f.name}={'fn' if callable(v) else v}")
    if not op.pure:
        out.append("impure")
    if op.device_only:
        out.append("device")
    return ", ".join(out)


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    sys.path.insert(0, str(ROOT))
    import tirx  # noqa: F401  (declares the built-in ops)
    from tirx.ir.op import aliases, all_ops
    from tirx.ops.ptx_table import opcodes

    ops = all_ops(builtin_only=True)
    als = aliases()
    table = opcodes()
    groups: dict[str, list[str]] = {}
    for n in ops:
        groups.setdefault(n.split(".")[0] if "." in n else "T", []).append(n)
    lines = [_HEAD]
    lines.append(
        f"{len(ops)} ops ({len(table)} of them PTX-table opcodes with "
        f"{sum(len(o.rows) for o in table.values())} rows) and {len(als)} aliases.\n"
    )
    for g in sorted(groups, key=lambda k: (k != "T", k)):
        title = "`T.<name>`" if g == "T" else f"`T.{g}.<name>`"
        lines += [
            f"## {title}",
            "",
            "| op | result | CUDA | interpreter | traits | doc |",
            "|---|---|---|---|---|---|",
        ]
        for n in sorted(groups[g]):
            op = ops[n]
            if n in table:
                sig = f"T.{n}.<modifiers>(operands)"
                cuda = "table"
            else:
                sig = f"T.{n}(" + ", ".join(_param(op, i, k) for i, k in enumerate(op.args)) + ")"
                cuda = _cuda(op)
            row = [f"`{sig}`", _result(op), cuda, _interp(op), _traits(op), op.doc]
            lines.append("| " + " | ".join(_cell(x) for x in row) + " |")
        ali = sorted(a for a in als if (a.split(".")[0] if "." in a else "T") == g)
        for a in ali:
            al = als[a]
            lines.append(f"| `T.{a}` | alias | | | | builds `T.{al.target}`: {_cell(al.doc)} |")
        lines.append("")
    lines += ["## PTX instruction table rows", ""]
    for n in sorted(table):
        opc = table[n]
        lines.append(f"### `T.{n}`")
        lines.append("")
        for r in opc.rows:
            extra = f" — {r.doc}" if r.doc else ""
            lines.append(f"- `{r.signature(opc.opcode)}`{_cell(extra)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="update docs/ops.md")
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/ops.md is stale")
    a = ap.parse_args(argv)
    text = render()
    if a.check:
        if not DOC.exists() or DOC.read_text() != text:
            print("docs/ops.md is stale: run python tools/op_reference.py --write")
            return 1
        return 0
    if a.write:
        DOC.write_text(text)
        print(f"wrote {DOC}")
        return 0
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
