"""Where op names are spelled outside their declaration (issue #13, "Measures").

For every op in the op table (``tirx.ir.op.all_ops(builtin_only=True)``) this lists the
package source files (``tirx/``, ``grammar/``, ``printer/``, ``passes/``, ``tools/``; not
tests, not docs) other than the op's declaration file that mention the op's name. The goal
is 0 for every op: passes, analyses and backends should query an op's declared traits,
never its name.

A mention is, in a Python file (comments and docstrings are not read):

- a string literal whose text contains the op's full name as a word, e.g. ``"cuda.thread_idx"``,
  ``"T.cuda.atomic_max"``, ``"if_then_else"`` (dotted names may be followed by ``.``);
- an identifier equal to the op's last dotted part (``atomic_max``, ``thread_idx``,
  ``if_then_else``, ``exp``), except an attribute of ``np``/``numpy``/``math``/``cmath``
  (``np.exp`` names numpy's function) and the Python builtins ``abs``/``round``/``pow``
  used as plain names.

Other files (``grammar/tirx.lark``, JSON tables) are searched for the full name as a word.

    python tools/op_mentions.py            # table and summary
    python tools/op_mentions.py --json     # machine-readable
    python tools/op_mentions.py --root DIR # measure another checkout (e.g. an exported commit)
"""

from __future__ import annotations

import argparse
import builtins
import io
import json
import keyword
import re
import sys
import tokenize
from pathlib import Path

PACKAGES = ("tirx", "grammar", "printer", "passes", "tools")
_FOREIGN = {"np", "numpy", "math", "cmath"}
_SKIP_EXT = {".pyc", ".so", ".pkl", ".bin"}


def _ops(root: Path) -> tuple[dict, dict]:
    sys.path.insert(0, str(root))
    for m in [m for m in sys.modules if m == "tirx" or m.startswith("tirx.")]:
        del sys.modules[m]
    from tirx.ir import op as opmod

    ops = opmod.all_ops(builtin_only=True)
    sites = getattr(opmod, "_DECL_SITE", {})
    decl = {}
    for n in ops:
        f = sites.get(n)
        decl[n] = Path(f).resolve() if f else (root / "tirx" / "ir" / "ops_builtin.py").resolve()
    return ops, decl


def _py_tokens(text: str) -> tuple[list[str], list[tuple[str, str | None]]]:
    """(string literal texts that are not docstrings, [(identifier, the name before its '.')])."""
    strings: list[str] = []
    names: list[tuple[str, str | None]] = []
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return [text], []
    prev_sig = None  # previous significant token
    for i, t in enumerate(toks):
        if t.type == tokenize.STRING:
            stmt_start = prev_sig is None or prev_sig.type in (
                tokenize.NEWLINE,
                tokenize.INDENT,
                tokenize.DEDENT,
            )
            nxt = next((u for u in toks[i + 1 :] if u.type not in (tokenize.NL, tokenize.COMMENT)), None)
            docstring = stmt_start and nxt is not None and nxt.type in (tokenize.NEWLINE, tokenize.ENDMARKER)
            if not docstring:
                strings.append(t.string)
        elif t.type == tokenize.NAME and not keyword.iskeyword(t.string):
            owner = None
            if prev_sig is not None and prev_sig.string == "." and i >= 2:
                before = [u for u in toks[:i] if u.type not in (tokenize.NL, tokenize.COMMENT)]
                if len(before) >= 2 and before[-2].type == tokenize.NAME:
                    owner = before[-2].string
            names.append((t.string, owner if prev_sig is not None and prev_sig.string == "." else None))
        if t.type not in (tokenize.NL, tokenize.COMMENT):
            prev_sig = t
    return strings, names


def _files(root: Path) -> list[Path]:
    out = []
    for pkg in PACKAGES:
        d = root / pkg
        if d.is_dir():
            for p in sorted(d.rglob("*")):
                if p.is_file() and p.suffix not in _SKIP_EXT and "__pycache__" not in p.parts:
                    out.append(p)
    return out


def measure(root: Path) -> dict:
    root = root.resolve()
    ops, decl = _ops(root)
    pats = {n: re.compile(r"(?<![\w])" + re.escape(n) + r"(?![\w])") for n in ops}
    last = {n: n.rsplit(".", 1)[-1] for n in ops}
    by_last: dict[str, list[str]] = {}
    for n, s in last.items():
        by_last.setdefault(s, []).append(n)
    mentions: dict[str, set[str]] = {n: set() for n in ops}
    self_path = Path(__file__).resolve()
    for p in _files(root):
        rp = p.resolve()
        if rp == self_path or rp.name == "op_mentions.py":
            continue
        rel = p.relative_to(root).as_posix()
        text = p.read_text(errors="replace")
        if p.suffix == ".py":
            strings, names = _py_tokens(text)
            hits: set[str] = set()
            for s in strings:
                for n, pat in pats.items():
                    if n in s and pat.search(s):
                        hits.add(n)
            for ident, owner in names:
                for n in by_last.get(ident, ()):
                    if owner in _FOREIGN:
                        continue
                    if owner is None and hasattr(builtins, ident):
                        continue
                    hits.add(n)
        else:
            hits = {n for n, pat in pats.items() if n in text and pat.search(text)}
        for n in hits:
            if rp != decl[n]:
                mentions[n].add(rel)
    rows = [{"op": n, "count": len(mentions[n]), "files": sorted(mentions[n])} for n in sorted(ops)]
    total = len(rows)
    zero = sum(1 for r in rows if r["count"] == 0)
    mean = sum(r["count"] for r in rows) / total if total else 0.0
    return {
        "ops": rows,
        "summary": {
            "total_ops": total,
            "ops_with_0_mentions": zero,
            "mean_mentions": round(mean, 2),
            "max_mentions": max((r["count"] for r in rows), default=0),
            "total_mentions": sum(r["count"] for r in rows),
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent), help="checkout to measure")
    a = ap.parse_args(argv)
    res = measure(Path(a.root))
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    w = max(len(r["op"]) for r in res["ops"])
    print(f"{'op':<{w}}  count  files")
    for r in res["ops"]:
        print(f"{r['op']:<{w}}  {r['count']:>5}  {', '.join(r['files'])}")
    s = res["summary"]
    print(
        f"\nops with 0 mentions: {s['ops_with_0_mentions']}/{s['total_ops']}; mean mentions: {s['mean_mentions']}; "
        f"max: {s['max_mentions']}; total file mentions: {s['total_mentions']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
