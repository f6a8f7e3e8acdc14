"""Regenerate or check the shipped LALR tables: ``python -m tirx.grammar._tables_cli --write``.

A module of its own because it needs both sides: the parser (``_parser.build``, the tables
built from the grammar) and the table format (``_tables.dumps_tables``), while ``_parser``
loads its tables through ``_tables``; keeping the command here keeps the import graph acyclic.
"""

from __future__ import annotations

import argparse
import sys

from tirx.grammar._parser import build, grammar_text
from tirx.grammar._tables import TABLES_PATH, dumps_tables

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """``--write`` regenerates tirx_tables.json; ``--check`` exits 1 when it is stale."""
    ap = argparse.ArgumentParser(prog="python -m tirx.grammar._tables_cli", description=main.__doc__)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", action="store_true")
    g.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    text = grammar_text()
    fresh = dumps_tables(build(), text)
    if args.write:
        TABLES_PATH.write_text(fresh, encoding="utf-8", newline="\n")
        print(f"wrote {TABLES_PATH} ({len(fresh)} bytes)")
        return 0
    old = TABLES_PATH.read_text(encoding="utf-8") if TABLES_PATH.exists() else ""
    if old != fresh:
        print(f"{TABLES_PATH} is stale: run python -m tirx.grammar._tables_cli --write", file=sys.stderr)
        return 1
    print(f"{TABLES_PATH} matches tirx.lark")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
