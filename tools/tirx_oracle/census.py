"""Enumerate TIRx's public script surface (run with apache-tvm-tirx 0.1.0a4 installed).

    /path/to/py312-with-tvm_tirx/bin/python tools/tirx_oracle/census.py tests/data/tirx_golden/surface.json

Writes, as plain data: every public name of ``T`` (with its kind), of ``T.cuda`` and of the
backend namespaces reachable from ``T`` (``T.nvshmem``, ``T.ptx``...), the dtype names, and
TIRx's PTX instruction table (family -> instruction forms with their modifier slots, choices
and operand names). ``tools/tirx_oracle/coverage.py`` compares tirx against it without TIRx.
This script imports TIRx; nothing in tirx imports this script.
"""

from __future__ import annotations

import json
import sys
import types


def _public(obj) -> list[str]:
    return sorted(n for n in dir(obj) if not n.startswith("_"))


def _kind(v) -> str:
    if isinstance(v, types.ModuleType):
        return "module"
    return type(v).__name__


def _ptx_table(ptx) -> dict:
    fams: dict = {}
    for fam in _public(ptx):
        try:
            chain = getattr(ptx, fam)
        except Exception:  # a broken attribute is recorded, not fatal
            continue
        cands = getattr(chain, "_cands", None)
        if cands is None:
            fams[fam] = {"kind": _kind(chain)}
            continue
        forms = []
        for entry, _bound in cands:
            forms.append(
                {
                    "name": entry.name,
                    "mnemonic": entry.mnemonic,
                    "operands": [getattr(o, "name", str(o)) for o in entry.operands],
                    "slots": [
                        {"name": s.name, "choices": list(s.choices), "optional": bool(s.optional)}
                        for s in entry.slots
                    ],
                    "volatile": bool(entry.asm_volatile),
                    "arch": entry.cert_arch,
                }
            )
        fams[fam] = {"kind": "instruction", "forms": forms}
    return fams


def main(out: str) -> None:
    import tvm_tirx
    from tvm_tirx.script import tirx as T

    surface: dict = {"tirx_version": getattr(tvm_tirx, "__version__", "?"), "namespaces": {}}
    top = {}
    dtypes = []
    for n in _public(T):
        try:
            v = getattr(T, n)
        except Exception:  # recorded as "error"
            top[n] = "error"
            continue
        k = _kind(v)
        top[n] = k
        if k == "PrimType":
            dtypes.append(n)
    surface["namespaces"]["T"] = top
    surface["dtypes"] = dtypes
    for ns in ("cuda", "nvshmem"):
        obj = getattr(T, ns)
        surface["namespaces"][f"T.{ns}"] = {n: _kind(getattr(obj, n, None)) for n in _public(obj)}
    surface["ptx"] = _ptx_table(T.ptx)
    with open(out, "w") as fh:
        json.dump(surface, fh, indent=1, sort_keys=True)
        fh.write("\n")
    n_forms = sum(len(f.get("forms", ())) for f in surface["ptx"].values())
    print(
        f"{out}: {len(top)} T names, {len(surface['namespaces']['T.cuda'])} T.cuda names, "
        f"{len(surface['ptx'])} T.ptx families ({n_forms} forms)"
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "surface.json")
