"""How much of TIRx's script surface resolves in tirx (no TIRx needed).

    python tools/tirx_oracle/coverage.py                  # print the table
    python tools/tirx_oracle/coverage.py --write          # update docs/tirx_compat.md
    python tools/tirx_oracle/coverage.py --check          # exit 1 if the doc is stale

Reads ``tests/data/tirx_golden/surface.json`` (made by ``census.py`` from TIRx itself) and
asks tirx's ``T`` namespace for every name: ``T.<name>``, ``T.cuda.<name>``,
``T.nvshmem.<name>``, ``T.ptx.<family>``. Names of backends tirx leaves out (metal, nki,
trn, webgpu, opencl) are counted apart.

A name is also "checked against TIRx" when a golden case that CI runs spells it
(``golden_names``): a frontend case ``tests/data/tirx_golden/frontend/<case>.py`` with
TIRx's printed ``<case>.tirx`` (tirx's frontend builds what TIRx's text loads to, and the
result round-trips), a PTX row case (the ``*CASES`` tables of ``tests/test_ptx_rows_*.py`` and
``tests/test_ptx_table.py``:
the chain builds TIRx's printed text, which round-trips) or an op's text in ``ops.json`` /
``cuda.json`` (TIRx's text loads and prints back the same).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SURFACE = ROOT / "tests" / "data" / "tirx_golden" / "surface.json"
DOC = ROOT / "docs" / "tirx_compat.md"
BEGIN, END = "<!-- coverage:begin -->", "<!-- coverage:end -->"
OUT_OF_SCOPE = {"metal", "nki", "trn", "webgpu", "opencl"}


def _resolves(obj, dotted: str) -> bool:
    cur = obj
    for part in dotted.split("."):
        try:
            cur = getattr(cur, part)
        except Exception:  # any failure to resolve is "missing"
            return False
    return True


_SPELLED = re.compile(r"\bT\.((?:cuda\.|nvshmem\.|ptx\.)?[A-Za-z_][A-Za-z0-9_]*)")
GOLDEN = ROOT / "tests" / "data" / "tirx_golden"


def _case_strings(path: Path) -> list[str]:
    """The string constants of a test file's ``*CASES`` tables (TIRx-recorded PTX cases)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id.endswith("CASES") for t in targets):
            out += [
                c.value
                for c in ast.walk(node.value)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            ]
    return out


def golden_names() -> set[str]:
    """Every ``T.``-relative name (``exp``, ``cuda.thread_idx``, ``ptx.bar``) a golden case spells."""
    texts: list[str] = []
    for py in sorted((GOLDEN / "frontend").glob("*.py")):
        if py.with_suffix(".tirx").exists():
            texts += [py.read_text(), py.with_suffix(".tirx").read_text()]
    for path in sorted([*(ROOT / "tests").glob("test_ptx_rows_*.py"), ROOT / "tests" / "test_ptx_table.py"]):
        texts += _case_strings(path)
    for name in ("ops.json", "cuda.json"):
        f = GOLDEN / name
        if f.exists():
            for rec in json.loads(f.read_text()).get("ops", {}).values():
                if isinstance(rec, dict) and "text" in rec:
                    texts.append(rec["text"])
    found: set[str] = set()
    for t in texts:
        for m in _SPELLED.finditer(t):
            n = m.group(1)
            found.add(n)
            parts = n.split(".")
            if parts[0] in ("ptx", "cuda", "nvshmem") and len(parts) > 1:
                found.add(f"{parts[0]}.{parts[1]}")  # a chain T.ptx.bar.sync checks the family bar
                found.add(f"{parts[0]}.{parts[1].rstrip('_')}")  # T.ptx.and_ spells the family and
                found.add(parts[0])  # ... and the namespace T.ptx itself
            else:
                found.add(parts[0])
    return found


def measure(surface: dict) -> list[dict]:
    """One row per namespace: names, resolved, checked against TIRx, missing names."""
    sys.path.insert(0, str(ROOT))
    from tirx.script import tirx as T

    rows = []
    top = surface["namespaces"]["T"]
    in_scope = {n: k for n, k in top.items() if n not in OUT_OF_SCOPE}
    dtypes = set(surface.get("dtypes", ()))
    groups = {
        "T (dtypes)": sorted(n for n in in_scope if n in dtypes),
        "T (other names)": sorted(n for n in in_scope if n not in dtypes),
        "T.cuda": sorted(surface["namespaces"]["T.cuda"]),
        "T.nvshmem": sorted(surface["namespaces"]["T.nvshmem"]),
        "T.ptx (families)": sorted(surface["ptx"]),
    }
    prefix = {"T.cuda": "cuda.", "T.nvshmem": "nvshmem.", "T.ptx (families)": "ptx."}
    golden = golden_names()
    for label, names in groups.items():
        pre = prefix.get(label, "")
        missing = [n for n in names if not _resolves(T, pre + n)]
        unchecked = [n for n in names if n not in missing and pre + n not in golden]
        rows.append(
            {
                "namespace": label,
                "names": len(names),
                "resolved": len(names) - len(missing),
                "checked": len(names) - len(missing) - len(unchecked),
                "missing": missing,
                "unchecked": unchecked,
            }
        )
    rows.append(
        {
            "namespace": "out of scope (" + ", ".join(sorted(OUT_OF_SCOPE)) + ")",
            "names": len(OUT_OF_SCOPE & set(top)),
            "resolved": None,
            "checked": None,
            "missing": [],
            "unchecked": [],
        }
    )
    return rows


def render(rows: list[dict]) -> str:
    lines = [
        "| namespace | TIRx names | resolve in tirx | share | checked against TIRx (golden) | share |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    tot_n = tot_r = tot_c = 0

    def pct(a: int, b: int) -> str:
        return f"{100 * a / b:.0f} %" if b else "—"

    for r in rows:
        if r["resolved"] is None:
            lines.append(f"| {r['namespace']} | {r['names']} | not supported (clear error) | — | — | — |")
            continue
        tot_n += r["names"]
        tot_r += r["resolved"]
        tot_c += r["checked"]
        lines.append(
            f"| {r['namespace']} | {r['names']} | {r['resolved']} | {pct(r['resolved'], r['names'])} "
            f"| {r['checked']} | {pct(r['checked'], r['names'])} |"
        )
    lines.append(
        f"| **all in scope** | **{tot_n}** | **{tot_r}** | **{pct(tot_r, tot_n)}** "
        f"| **{tot_c}** | **{pct(tot_c, tot_n)}** |"
    )
    lines.append("")
    for r in rows:
        if r["missing"]:
            shown = ", ".join(f"`{n}`" for n in r["missing"])
            lines.append(
                f"<details><summary>{r['namespace']}: {len(r['missing'])} missing</summary>\n\n{shown}\n\n</details>\n"
            )
    for r in rows:
        if r["unchecked"]:
            shown = ", ".join(f"`{n}`" for n in r["unchecked"])
            lines.append(
                f"<details><summary>{r['namespace']}: {len(r['unchecked'])} resolve but no golden case spells them"
                f"</summary>\n\n{shown}\n\n</details>\n"
            )
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="update docs/tirx_compat.md")
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/tirx_compat.md is stale")
    a = ap.parse_args(argv)
    surface = json.loads(SURFACE.read_text())
    table = render(measure(surface))
    if not (a.write or a.check):
        print(table)
        return 0
    doc = DOC.read_text()
    i, j = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    new = doc[:i] + "\n" + table + doc[j:]
    if a.check:
        if new != doc:
            print("docs/tirx_compat.md is stale: run python tools/tirx_oracle/coverage.py --write")
            return 1
        return 0
    DOC.write_text(new)
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
