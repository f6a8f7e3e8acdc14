"""``tirx fmt`` benchmark: the layout (default) against ``--canonical`` (issue #32).

For each corpus (the TIRx 0.1.0a4 compat sample, every ``.tirx`` under tests/data, and one
~3,000-line kernel printed by ``tirx.dumps``) it times, best of ``--rounds``:

- ``canonical``: ``format_text(text, canonical=True)`` (``loads(keep_comments=True)`` +
  ``dumps``), what ``tirx fmt --canonical`` does per file;
- ``layout``: ``format_text(text)`` on the same text (TIRx's print: its long lines get
  wrapped at 100, so every check runs: load the input, lay it out, compare tokens and
  comments, lay it out again, load the output, structural equality);
- ``layout, clean``: ``format_text`` on text it already formatted (the ``--check`` case
  of a formatted tree: load the input, lay it out once, nothing else);

and the layout engine alone (``fmt_layout.layout``). It prints ms per corpus and the ratios
against ``canonical`` (below 1: faster). Usage::

    python tools/bench/bench_fmt.py [--rounds 5] [--blocks 300] [--json]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)


def corpora(blocks: int) -> dict[str, list[tuple[str, str]]]:
    import tirx

    shared = os.path.join(os.path.dirname(ROOT), "shared", "compat", "tirx-0.1.0a4")
    compat_dir = (
        shared if os.path.isdir(shared) else os.path.join(ROOT, "tests", "data", "compat-tirx-0.1.0a4")
    )

    def read(paths: list[str]) -> list[tuple[str, str]]:
        out = []
        for p in sorted(paths):
            with open(p, encoding="utf-8") as fh:
                text = fh.read()
            try:
                tirx.loads(text)
            except tirx.DiagnosticError:
                continue  # negative tests
            out.append((p, text))
        return out

    sets = {
        "compat (TIRx 0.1.0a4)": read(glob.glob(os.path.join(compat_dir, "*.tirx"))),
        "tests/data": read(glob.glob(os.path.join(ROOT, "tests", "data", "**", "*.tirx"), recursive=True)),
    }
    if blocks > 0:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from bench_print import build_kernel

        sets[f"one kernel ({blocks} blocks)"] = [("big.tirx", tirx.dumps(build_kernel(blocks)))]
    return sets


def best(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--blocks", type=int, default=300, help="size of the big kernel (0: none)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from tirx.tools.fmt import format_text
    from tirx.tools.fmt_layout import layout

    results = []
    for name, files in corpora(args.blocks).items():
        clean = [(p, format_text(t, p)) for p, t in files]
        lines = sum(t.count("\n") + 1 for _, t in files)
        row = {"corpus": name, "files": len(files), "lines": lines}
        runs = {
            "canonical": lambda fs=files: [format_text(t, p, canonical=True) for p, t in fs],
            "layout": lambda fs=files: [format_text(t, p) for p, t in fs],
            "layout_clean": lambda fs=clean: [format_text(t, p) for p, t in fs],
            "engine": lambda fs=files: [layout(t) for _, t in fs],
        }
        for key, fn in runs.items():
            row[f"{key}_ms"] = 1e3 * best(fn, args.rounds)
        c = row["canonical_ms"]
        for k in ("layout", "layout_clean", "engine"):
            row[f"{k}_ratio"] = row[f"{k}_ms"] / c
        results.append(row)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"tirx fmt: layout vs --canonical (best of {args.rounds}; ratio = time / canonical's)")
    head = f"{'corpus':<28} {'files':>5} {'lines':>6} {'canonical':>10} {'layout':>16} {'layout, clean':>16} {'engine only':>16}"
    print(head)
    for r in results:
        print(
            f"{r['corpus']:<28} {r['files']:>5} {r['lines']:>6} {r['canonical_ms']:>8.1f}ms"
            f" {r['layout_ms']:>8.1f}ms {r['layout_ratio']:>5.2f}x"
            f" {r['layout_clean_ms']:>8.1f}ms {r['layout_clean_ratio']:>5.2f}x"
            f" {r['engine_ms']:>8.1f}ms {r['engine_ratio']:>5.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
