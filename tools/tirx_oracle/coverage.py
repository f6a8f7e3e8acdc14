"""How much of TIRx's script surface resolves in tirx (no TIRx needed).

    python tools/tirx_oracle/coverage.py                  # print the table
    python tools/tirx_oracle/coverage.py --write          # update docs/tirx_compat.md
    python tools/tirx_oracle/coverage.py --check          # exit 1 if the doc is stale

Reads ``tests/data/tirx_golden/surface.json`` (made by ``census.py`` from TIRx itself) and
asks tirx's ``T`` namespace for every name: ``T.<name>``, ``T.cuda.<name>``,
``T.nvshmem.<name>``, ``T.ptx.<family>``. Names of backends tirx leaves out (metal, nki,
trn, webgpu, opencl) are counted apart.
"""

from __future__ import annotations

import argparse
import json
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


def measure(surface: dict) -> list[dict]:
    """One row per namespace: names, resolved, missing names."""
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
    for label, names in groups.items():
        pre = prefix.get(label, "")
        missing = [n for n in names if not _resolves(T, pre + n)]
        rows.append(
            {
                "namespace": label,
                "names": len(names),
                "resolved": len(names) - len(missing),
                "missing": missing,
            }
        )
    rows.append(
        {
            "namespace": "out of scope (" + ", ".join(sorted(OUT_OF_SCOPE)) + ")",
            "names": len(OUT_OF_SCOPE & set(top)),
            "resolved": None,
            "missing": [],
        }
    )
    return rows


def render(rows: list[dict]) -> str:
    lines = ["| namespace | TIRx names | resolve in tirx | share |", "| --- | ---: | ---: | ---: |"]
    tot_n = tot_r = 0
    for r in rows:
        if r["resolved"] is None:
            lines.append(f"| {r['namespace']} | {r['names']} | not supported (clear error) | — |")
            continue
        tot_n += r["names"]
        tot_r += r["resolved"]
        share = f"{100 * r['resolved'] / r['names']:.0f} %" if r["names"] else "—"
        lines.append(f"| {r['namespace']} | {r['names']} | {r['resolved']} | {share} |")
    lines.append(
        f"| **all in scope** | **{tot_n}** | **{tot_r}** | **{100 * tot_r / max(tot_n, 1):.0f} %** |"
    )
    lines.append("")
    for r in rows:
        if r["missing"]:
            shown = ", ".join(f"`{n}`" for n in r["missing"])
            lines.append(
                f"<details><summary>{r['namespace']}: {len(r['missing'])} missing</summary>\n\n{shown}\n\n</details>\n"
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
