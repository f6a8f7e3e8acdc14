"""Where op names are spelled outside their declaration (issue #13, "Measures").

For every op in the op table (``tirx.ir.op.all_ops(builtin_only=True)``) this lists the
package source files other than the op's declaration file (``tirx.ir.op._DECL_SITE``, a
file of ``tirx/ops/``) that mention the op's name. The goal is 0 for every op: passes,
analyses, front ends and backends query an op's declared traits or its declaration, never
its name.

Two kinds of file are told apart:

- implementation (``tirx/``, ``grammar/``, ``printer/``, ``passes/``; ``count``/``files``):
  a mention there is meaning spread by name — the number the goal is about;
- users (``tirx/testing/``, ``tirx/kernels/``, ``tirx/backend/`` (TIRx's kernel helper classes), ``tools/``; ``uses``): kernel corpora, the
  kernel library, benchmarks and demos
  that write ``T.cuda.thread_idx(...)`` use the op the way any kernel does. Reported, not
  counted.

A mention is, in a Python file (comments, docstrings and ``doc=`` lines are not read):

- a string literal naming the op: a dotted name (``"cuda.thread_idx"``,
  ``"T.cuda.atomic_max"``) as a word anywhere in it; an undotted name (``"if_then_else"``,
  ``"exp"``) when the literal is exactly the name or spells ``T.<name>``;
- the op spelled as script code, ``T.<name>`` (``T.cuda.thread_idx``, ``T.exp``);
- a module-level ``def``/``class`` named after the op's last dotted part (a second
  definition of it, e.g. a script function ``def reinterpret`` or a handler
  ``def atomic_max``; methods such as the code generator's ``asm`` service are not, nor are
  PTX-table opcodes, whose names are mnemonics such as ``max`` or ``match``).
- a string constant equal to an undotted op name where it is used as an op name: compared
  with an ``x.name`` (``op.name == "if_then_else"``, ``name in ("exp", "log")``) or passed
  to ``call``/``op_call``/``lookup``/``get``/``register_handler``/... .

Other files (``grammar/tirx.lark``, JSON tables) are searched for ``T.<name>`` and for a
dotted name as a word.

    python tools/op_mentions.py            # table and summary
    python tools/op_mentions.py --json     # machine-readable
    python tools/op_mentions.py --root DIR # measure another checkout (e.g. an exported commit)
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

PACKAGES = ("tirx", "grammar", "printer", "passes", "tools")
#: folders whose files use ops the way kernels do (reported as ``uses``, not counted)
USERS = ("tirx/testing/", "tirx/kernels/", "tirx/backend/", "tools/")
_SKIP_EXT = {".pyc", ".so", ".pkl", ".bin"}


def _ops(root: Path) -> tuple[dict, dict]:
    """The built-in ops of the checkout at ``root`` and each op's declaring file."""
    sys.path.insert(0, str(root))
    for m in [m for m in sys.modules if m == "tirx" or m.startswith("tirx.")]:
        del sys.modules[m]
    import tirx  # noqa: F401  (declares the built-in ops)
    from tirx.ir import op as opmod

    ops = opmod.all_ops(builtin_only=True)
    sites = opmod._DECL_SITE
    decl = {}
    for n in ops:
        f = sites.get(n)
        if not f:
            raise SystemExit(f"op {n!r} has no recorded declaration site (tirx.ir.op._DECL_SITE)")
        decl[n] = Path(f).resolve()
    return ops, decl


#: calls whose string argument is an op name (building, looking up or registering an op)
_OP_CALLS = {"call", "op_call", "lookup", "get", "get_op", "register_handler", "has_handler", "declare"}


def _is_name_attr(n: ast.AST) -> bool:
    """``x.name`` or ``getattr(x, "name", ...)``: an op's name being read."""
    if isinstance(n, ast.Attribute) and n.attr == "name":
        return True
    return (
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == "getattr"
        and len(n.args) >= 2
        and isinstance(n.args[1], ast.Constant)
        and n.args[1].value == "name"
    )


def _py_mentions(text: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """(string constants that are not docstrings, those of them used as op names — compared
    with ``.name`` or passed to ``call``/``lookup``/... —, ``T.a.b`` chains, names given to
    module-level ``def``/``class``)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return [text], [], [], []
    docs = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body:
            b = n.body[0]
            if (
                isinstance(b, ast.Expr)
                and isinstance(b.value, ast.Constant)
                and isinstance(b.value.value, str)
            ):
                docs.add(id(b.value))
        elif isinstance(n, ast.keyword) and n.arg == "doc":  # a declaration's doc line
            docs.update(id(c) for c in ast.walk(n.value) if isinstance(c, ast.Constant))
    strings: list[str] = []
    as_names: list[str] = []
    chains: list[str] = []
    defs = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            strings.append(n.value)
        elif isinstance(n, ast.Compare) and any(_is_name_attr(x) for x in ast.walk(n)):
            as_names += [
                c.value for c in ast.walk(n) if isinstance(c, ast.Constant) and isinstance(c.value, str)
            ]
        elif isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Constant):
            f = n.func
            fname = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if fname in _OP_CALLS and isinstance(n.args[0].value, str):
                as_names.append(n.args[0].value)
        elif isinstance(n, ast.Attribute):
            parts: list[str] = []
            x: ast.expr = n
            while isinstance(x, ast.Attribute):
                parts.append(x.attr)
                x = x.value
            if isinstance(x, ast.Name) and x.id == "T":
                chains.append(".".join(reversed(parts)))
    return strings, as_names, chains, defs


def _files(root: Path) -> list[Path]:
    out = []
    for pkg in PACKAGES:
        d = root / pkg
        if d.is_dir():
            for p in sorted(d.rglob("*")):
                if p.is_file() and p.suffix not in _SKIP_EXT and "__pycache__" not in p.parts:
                    out.append(p)
    return out


def _string_names(s: str, ops: dict, dotted: dict) -> set[str]:
    """Ops a string names: a dotted op name as a word, or ``T.<name>``."""
    hits = {n for n, pat in dotted.items() if n in s and pat.search(s)}
    if "T." in s:
        for m in re.findall(r"(?<![\w.])T\.([\w.]+)", s):
            hits |= _chain_names(m, ops)
    return hits


def _chain_names(chain: str, ops: dict) -> set[str]:
    """Ops a ``T.<chain>`` spells (the longest prefix of the chain that is an op)."""
    parts = chain.split(".")
    for k in range(len(parts), 0, -1):
        n = ".".join(parts[:k])
        if n in ops:
            return {n}
    return set()


def _table_opcodes() -> set[str]:
    from tirx.ops.ptx_table import opcodes

    return set(opcodes())


def measure(root: Path) -> dict:
    root = root.resolve()
    ops, decl = _ops(root)
    dotted = {n: re.compile(r"(?<![\w])" + re.escape(n) + r"(?![\w])") for n in ops if "." in n}
    by_last: dict[str, list[str]] = {}
    table = _table_opcodes()
    for n in ops:
        if n in table or n.startswith("nki."):
            # PTX mnemonics (max, neg, match, ...) and TIRx's NKI names (load, store, ...): a
            # same-named def is not a handler (the NKI ops have none: tirx/ops/nki.py)
            continue
        by_last.setdefault(n.rsplit(".", 1)[-1], []).append(n)
    impl: dict[str, set[str]] = {n: set() for n in ops}
    uses: dict[str, set[str]] = {n: set() for n in ops}
    self_path = Path(__file__).resolve()
    for p in _files(root):
        rp = p.resolve()
        if rp == self_path or rp.name == "op_mentions.py":
            continue
        rel = p.relative_to(root).as_posix()
        text = p.read_text(errors="replace")
        hits: set[str] = set()
        if p.suffix == ".py":
            strings, as_names, chains, defs = _py_mentions(text)
            for s in strings:
                hits |= _string_names(s, ops, dotted)
            hits |= {s for s in as_names if s in ops}
            for c in chains:
                hits |= _chain_names(c, ops)
            for d in defs:
                hits.update(by_last.get(d, ()))
        else:
            hits |= {n for n, pat in dotted.items() if n in text and pat.search(text)}
            for m in re.findall(r"(?<![\w.])T\.([\w.]+)", text):
                hits |= _chain_names(m, ops)
        where = uses if rel.startswith(USERS) else impl
        for n in hits:
            if rp != decl[n]:
                where[n].add(rel)
    rows = [
        {"op": n, "count": len(impl[n]), "files": sorted(impl[n]), "uses": sorted(uses[n])}
        for n in sorted(ops)
    ]
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
            "ops_used_by_tools_or_testing": sum(1 for r in rows if r["uses"]),
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("--uses", action="store_true", help="also list the files of tools/ and tirx/testing/")
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent), help="checkout to measure")
    a = ap.parse_args(argv)
    res = measure(Path(a.root))
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    w = max(len(r["op"]) for r in res["ops"])
    print(f"{'op':<{w}}  count  files")
    for r in res["ops"]:
        extra = f"  [uses: {', '.join(r['uses'])}]" if a.uses and r["uses"] else ""
        print(f"{r['op']:<{w}}  {r['count']:>5}  {', '.join(r['files'])}{extra}")
    s = res["summary"]
    print(
        f"\nops with 0 mentions: {s['ops_with_0_mentions']}/{s['total_ops']}; mean mentions: {s['mean_mentions']}; "
        f"max: {s['max_mentions']}; total file mentions: {s['total_mentions']} "
        f"(ops also used by tools/ or tirx/testing/: {s['ops_used_by_tools_or_testing']})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
