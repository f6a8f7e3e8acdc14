"""Parsing benchmark: ``tirx.loads`` (spans kept) vs apache-tvm-tirx 0.1.0a4's ``from_source``.

Same text, same run, two workloads:

* ``compat-module``: the TIRx-printed compat kernels (``shared/compat/tirx-0.1.0a4``)
  gathered, renamed and repeated into one ``@T.ir_module`` class;
* ``big-kernel``: one generated device kernel of many loop / let / if / store blocks.

Throughput is printed lines per second (best of ``--reps`` timed runs). The TIRx side runs
in a subprocess under ``--tvm-python`` (default ``/work/venv-tvm/bin/python``) and is
skipped with a note when that interpreter is missing. It also measures ``import tirx``
plus the first ``loads`` in a fresh interpreter, with the parse tables that ship with the
package (``grammar/tirx_tables.json``) and with the tables built from the grammar instead
(what happens when they do not match the grammar or the installed Lark).

Usage::

    python tools/bench/bench_parse.py [--reps 5] [--repeat 4] [--blocks 300] [--append]

``--append`` adds a dated entry to ``docs/benchmarks.md`` under ``## Parsing``.
"""

from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TVM_PY = "/work/venv-tvm/bin/python"
# Both sides are timed with the same clock: the calling thread's CPU time by default (the
# shared 2-core machines this runs on are often loaded, which makes wall time noisy), or
# wall time with --wall.
CLOCK = time.thread_time
CLOCK_NAME = "cpu"
COMPAT_GLOBS = [
    os.path.join(ROOT, "..", "shared", "compat", "tirx-0.1.0a4", "*.tirx"),
    "/work/shared/compat/tirx-0.1.0a4/*.tirx",
]
LAUNCH = 'attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}'
HEAD = "from __future__ import annotations\n\nfrom tvm_tirx.script import tirx as T\n\n"


# ------------------------------------------------------------------ workloads
def _functions(text: str) -> list[str]:
    """The ``@T.function ...`` blocks of a printed file, dedented to column 0."""
    out, cur, ind = [], None, 0
    for ln in text.split("\n"):
        s = ln.lstrip()
        i = len(ln) - len(s)
        if s.startswith("@T.function"):
            if cur:
                out.append(cur)
            cur, ind = [ln[i:]], i
            continue
        if cur is not None:
            if s and i <= ind and not s.startswith("def"):
                out.append(cur)
                cur = None
                continue
            cur.append(ln[ind:] if ln.strip() else "")
    if cur:
        out.append(cur)
    return ["\n".join(c).rstrip() for c in out]


def compat_module(repeat: int) -> str:
    files = []
    for g in COMPAT_GLOBS:
        files = sorted(glob.glob(g))
        if files:
            break
    if not files:
        raise SystemExit("bench_parse: no compat texts found")
    parts = []
    for r in range(repeat):
        for path in files:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for fn in _functions(text):
                fn = re.sub(r"def (\w+)", lambda m, r=r: f"def {m.group(1)}_r{r}", fn, count=1)
                fn = re.sub(r"Module\.(\w+)", lambda m, r=r: f"Module.{m.group(1)}_r{r}", fn)
                parts.append("\n".join("    " + ln if ln else "" for ln in fn.split("\n")))
    return HEAD + "@T.ir_module\nclass Module:\n" + "\n\n".join(parts) + "\n"


def big_kernel(blocks: int) -> str:
    lines = [
        "@T.function",
        "def big[n](A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32), C: T.Tensor((n,), T.float32)):",
        f"    with T.device_entry((n + 255) // 256, 1, 1, 256, 1, 1, {LAUNCH}):",
        '        i: T.let[T.int32] = T.cuda.block_idx("x") * 256 + T.cuda.thread_idx("x")',
        '        acc = T.alloc_tensor(ty_args=[T.Tensor((1,), T.float32, scope="local")])',
        "        acc[0] = T.float32(0.0)",
    ]
    for j in range(blocks):
        c = f"{1.0 + j / 8:.3f}"
        lines += [
            f"        for k{j} in range(4):",
            f"            v{j}: T.let[T.int32] = i * 4 + k{j}",
            f"            if v{j} < n:",
            f'                C[v{j}] = A[v{j}] * T.float32({c}) + B[T.min(v{j} + {j + 1}, n - 1)] - T.Cast("float32", k{j})',
            "            else:",
            f"                C[T.max(v{j} - {j + 1}, 0)] = A[v{j} % n] / T.float32(2.0) - T.float32(0.5)",
            f"        acc[0] = acc[0] + C[(i + {j}) % n]",
        ]
    return HEAD + "\n".join(lines) + "\n"


def nlines(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") else 1)


# ------------------------------------------------------------------ timing
def time_tirx(text: str, reps: int, reference: bool = False) -> float:
    """Best time of ``tirx.loads`` (or, with ``reference``, of Lark's own ``parse`` path)."""
    import tirx
    from tirx.grammar import parse_reference

    fn = parse_reference if reference else tirx.loads
    fn(text)  # warm: parser built / loaded, op table loaded
    best = float("inf")
    for _ in range(reps):
        t0 = CLOCK()
        obj = fn(text, source_name="bench.tirx")
        best = min(best, CLOCK() - t0)
    # spans are kept: statements carry their source location
    body = obj.functions[0].body if hasattr(obj, "functions") else obj.body
    assert getattr(body, "span", None) is not None or getattr(body, "stmts", None)
    return best


_TVM_SNIPPET = r"""
import json, sys, time
from tvm_tirx import script
text, reps = sys.stdin.read(), int(sys.argv[1])
clock = time.thread_time if sys.argv[2] == "cpu" else time.perf_counter
script.from_source(text)
best = float("inf")
for _ in range(reps):
    t0 = clock()
    script.from_source(text)
    best = min(best, clock() - t0)
print(json.dumps({"seconds": best}))
"""


def time_tvm(text: str, reps: int, tvm_py: str) -> float | None:
    if not os.path.exists(tvm_py):
        return None
    r = subprocess.run(
        [tvm_py, "-c", _TVM_SNIPPET, str(reps), CLOCK_NAME],
        input=text,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if r.returncode != 0:
        print(
            f"  (tvm_tirx failed: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode})"
        )
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])["seconds"]


_IMPORT_SNIPPET = r"""
import json, os, time
t0 = time.perf_counter()
import tirx
if os.environ.get("BENCH_BUILD_TABLES") == "1":  # pretend the shipped tables do not fit
    import tirx.grammar._tables as _t
    _t.TABLES_PATH = _t.TABLES_PATH.with_name("no-such-tables.json")
t1 = time.perf_counter()
tirx.loads(open(__import__("sys").argv[1]).read())
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first_loads": t2 - t1}))
"""


def import_cost(small_path: str, build_tables: bool = False, runs: int = 3) -> dict:
    env = dict(os.environ)
    if build_tables:
        env["BENCH_BUILD_TABLES"] = "1"
    best: dict = {}
    for _ in range(runs):
        r = subprocess.run(
            [sys.executable, "-c", _IMPORT_SNIPPET, small_path],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        d = json.loads(r.stdout)
        for k, v in d.items():
            best[k] = min(best.get(k, v), v)
    return best


# ------------------------------------------------------------------ main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=4, help="copies of the compat kernels in the module")
    ap.add_argument("--blocks", type=int, default=300, help="blocks in the big kernel (7 lines each)")
    ap.add_argument("--tvm-python", default=TVM_PY)
    ap.add_argument("--append", action="store_true", help="append the results to docs/benchmarks.md")
    ap.add_argument(
        "--wall", action="store_true", help="time with wall-clock time instead of thread CPU time"
    )
    args = ap.parse_args(argv)
    global CLOCK, CLOCK_NAME
    if args.wall:
        CLOCK, CLOCK_NAME = time.perf_counter, "wall"

    sys.path.insert(0, ROOT)
    rows = []
    for name, text in (
        ("compat-module", compat_module(args.repeat)),
        ("big-kernel", big_kernel(args.blocks)),
    ):
        n = nlines(text)
        t_ours = time_tirx(text, args.reps)
        t_ref = time_tirx(text, max(1, min(args.reps, 3)), reference=True)
        t_tvm = time_tvm(text, max(1, min(args.reps, 3)), args.tvm_python)
        ours = n / t_ours
        line = (
            f"{name:14s} {n:6d} lines  tirx.loads {ours:9,.0f} lines/s  (Lark.parse path {n / t_ref:7,.0f})"
        )
        row = {"name": name, "lines": n, "tirx": ours, "ref": n / t_ref, "tvm": None, "ratio": None}
        if t_tvm is not None:
            theirs = n / t_tvm
            row.update(tvm=theirs, ratio=ours / theirs)
            line += f"   tvm_tirx.from_source {theirs:8,.0f} lines/s   ratio {ours / theirs:5.1f}x"
        else:
            line += "   tvm_tirx: not available"
        print(line, flush=True)
        rows.append(row)

    with tempfile.TemporaryDirectory() as td:
        small = os.path.join(td, "small.tirx")
        with open(small, "w", encoding="utf-8") as f:
            f.write(big_kernel(2))
        warm = import_cost(small)
        build = import_cost(small, build_tables=True)
    print(
        f"import tirx {warm['import'] * 1e3:.0f} ms; first loads with the shipped tables {warm['first_loads'] * 1e3:.0f} ms; "
        f"with the tables built from the grammar {build['first_loads'] * 1e3:.0f} ms"
    )
    if args.append:
        _append(rows, warm, build, args)
    return 0


def _append(rows, warm, build, args) -> None:
    path = os.path.join(ROOT, "docs", "benchmarks.md")
    today = datetime.date.today().isoformat()
    cmd = (
        f"python tools/bench/bench_parse.py --reps {args.reps} --repeat {args.repeat} --blocks {args.blocks}"
    )
    lines = [
        "",
        f"### {today} — 2-core CI-class x86_64",
        "",
        f"Command: `{cmd}` (Python {sys.version.split()[0]}; tvm_tirx on its own Python 3.12 venv; "
        f"{'wall-clock' if args.wall else 'thread CPU'} time, best of the runs).",
        "",
        "| workload | lines | tirx.loads lines/s | same grammar through Lark.parse | tvm_tirx.from_source lines/s | ratio |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        tvm = f"{r['tvm']:,.0f}" if r["tvm"] else "n/a"
        ratio = f"{r['ratio']:.1f}×" if r["ratio"] else "n/a"
        lines.append(f"| {r['name']} | {r['lines']} | {r['tirx']:,.0f} | {r['ref']:,.0f} | {tvm} | {ratio} |")
    lines += [
        "",
        f"`import tirx`: {warm['import'] * 1e3:.0f} ms (Lark is not imported). First `loads` in a fresh process: "
        f"{warm['first_loads'] * 1e3:.0f} ms with the shipped tables (`grammar/tirx_tables.json`), "
        f"{build['first_loads'] * 1e3:.0f} ms with the tables built from the grammar.",
        "",
    ]
    text = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
    if "## Parsing" not in text:
        text = (
            text.rstrip("\n")
            + ("\n\n" if text else "# Benchmarks\n\n")
            + "## Parsing\n\nHow fast `tirx.loads` (spans kept) parses TIRx-printed text, against apache-tvm-tirx 0.1.0a4 on the same text in the same run (`tools/bench/bench_parse.py`).\n"
        )
    # insert at the end of the Parsing section (before the next "## " heading)
    start = text.index("## Parsing")
    nxt = text.find("\n## ", start + 1)
    block = "\n".join(lines)
    if nxt == -1:
        text = text.rstrip("\n") + "\n" + block
    else:
        text = text[:nxt].rstrip("\n") + "\n" + block + text[nxt:]
    with open(path, "w", encoding="utf-8") as f:
        f.write(text if text.endswith("\n") else text + "\n")
    print(f"appended to {path}")


if __name__ == "__main__":
    sys.exit(main())
