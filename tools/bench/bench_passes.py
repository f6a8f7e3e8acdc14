"""Pass benchmark: each tirx pass on generated 1,000 / 10,000 / 100,000-statement functions.

For every size it reports, per pass, the wall time (min over repeats; one run at 100k)
and the peak Python memory during the run (tracemalloc, separate run), plus the growth
ratios 1k -> 10k -> 100k (10.0 is linear). Where apache-tvm-tirx 0.1.0a4 has the same
pass (ConvertSSA, CommonSubexprElim, StmtSimplify for our Simplify) it times it in the
same run on the same function: the function is printed with ``tirx.dumps`` and parsed by
``tvm_tirx.script.parser.parse`` in a subprocess (``--tvm-python``, default
``/work/venv-tvm/bin/python``).

The generated function is host code (TIRx's CSE does not enter device entries): nested
serial loops and if/else, int32 Binds and stores whose expressions repeat subexpressions
(CSE work), contain foldable constants and identities (Simplify work), and reuse loop-var
objects across sibling loops (ConvertSSA work on our side; text re-parsed by TVM is
already SSA, so the TVM ConvertSSA column is compared with our ConvertSSA on the SSA
input, shown as "ConvertSSA (ssa input)").

Usage::

    python tools/bench/bench_passes.py [--sizes 1000,10000,100000] [--no-tvm] [--no-record]

Results are appended to docs/benchmarks.md under ``## Passes``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import json
import os
import pathlib
import random
import subprocess
import sys
import tempfile
import time
import tracemalloc

import tirx
from tirx.ir import FloorMod, IntImm, TensorType, Var
from tirx.ir import types as ty
from tirx.passes import CommonSubexprElim, ConvertSSA, InferPointerTypes, Simplify, VerifyWellFormed
from tirx.surface.builder import IRBuilder

TVM_PY = "/work/venv-tvm/bin/python"
ROOT = pathlib.Path(__file__).resolve().parents[2]
I32 = ty.int32
N = 1024

PASSES = {
    "VerifyWellFormed": VerifyWellFormed,
    "ConvertSSA": ConvertSSA,
    "CommonSubexprElim": CommonSubexprElim,
    "InferPointerTypes": InferPointerTypes,
    "Simplify": Simplify,
}
TVM_NAMES = {"ConvertSSA": "ConvertSSA", "CommonSubexprElim": "CommonSubexprElim", "Simplify": "StmtSimplify"}


# ------------------------------------------------------------------------ generator
class _Gen:
    def __init__(self, n: int, seed: int, shared_loop_vars: bool):
        self.rng = random.Random(seed)
        self.left = n
        self.shared = shared_loop_vars
        self.loop_vars = [Var(nm, I32) for nm in ("i", "j", "k")]

    def idx(self, e):
        return FloorMod(e, IntImm(N, I32))

    def expr(self, vs):
        r = self.rng
        a, b = r.choice(vs), r.choice(vs)
        c1, c2 = r.randint(1, 9), r.randint(1, 9)
        common = a * c1 + b
        k = r.randint(0, 4)
        if k == 0:
            return common * (common + c2)
        if k == 1:
            return (a + (c1 + c2)) * 1 + (b - b)
        if k == 2:
            return (common + 0) * (a - c2) + common
        if k == 3:
            return a * (c1 * 2) + b * (3 + 4)
        return (a + b) * (a - b) + (a + b)

    def block(self, ib, A, B, vs, depth):
        r = self.rng
        while self.left > 0:
            k = r.randint(0, 9)
            if depth > 0 and k == 9:
                return
            if depth >= 3 and k in (7, 8):
                k = 4
            self.left -= 1
            if k <= 3:
                vs = [*vs[-15:], ib.bind("t", self.expr(vs))]
            elif k <= 6 or k == 9:
                ib.store(B, (self.idx(self.expr(vs)),), A[self.idx(r.choice(vs))] + self.expr(vs))
            elif k == 7:
                lv = self.loop_vars[depth] if self.shared else Var("i", I32)
                with ib.for_(lv, 0, r.randint(2, 8)):
                    self._nested(ib, A, B, [*vs, lv], depth + 1)
            else:
                with ib.if_(r.choice(vs) < r.choice(vs)):
                    self._nested(ib, A, B, vs, depth + 1)
                with ib.else_():
                    self._nested(ib, A, B, vs, depth + 1)

    def _nested(self, ib, A, B, vs, depth):
        saved = self.left
        self.left = min(self.left, self.rng.randint(2, 12))
        used_before = self.left
        self.block(ib, A, B, vs, depth)
        self.left = saved - (used_before - self.left)


def make_function(n: int, seed: int = 0, shared_loop_vars: bool = True):
    """A host function with about ``n`` statements (Bind, store, For, if)."""
    g = _Gen(n, seed, shared_loop_vars)
    ib = IRBuilder()
    with ib.function("bench"):
        A = ib.param("A", TensorType((N,), I32))
        B = ib.param("B", TensorType((N,), I32))
        x = ib.param("x", I32)
        y = ib.param("y", I32)
        g.block(ib, A, B, [x, y], 0)
    return ib.get()


def count_stmts(f) -> int:
    from tirx.ir import SeqStmt, Stmt, post_order

    return sum(1 for n in post_order(f.body) if isinstance(n, Stmt) and not isinstance(n, SeqStmt))


# ------------------------------------------------------------------------ measuring
def measure(p, f, reps: int) -> tuple[float, int]:
    best = float("inf")
    for _ in range(reps):
        gc.collect()
        t0 = time.perf_counter()
        p.run(f)
        best = min(best, time.perf_counter() - t0)
    gc.collect()
    tracemalloc.start()
    p.run(f)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return best, peak


_TVM_SCRIPT = r"""
import json, sys, time
from tvm_tirx.script import parser
from tvm_tirx.script import tirx as T
import tvm_tirx
from tvm_tirx import tirx
src = open(sys.argv[2]).read()
t0 = time.perf_counter()
f = parser.parse(src, extra_vars={"T": T})
print(json.dumps({"parse_s": time.perf_counter() - t0}), flush=True)
mod = tvm_tirx.IRModule({"bench": f})
for name in sys.argv[1].split(","):
    p = getattr(tirx.transform, name)()
    t0 = time.perf_counter()
    o = p(mod)
    print(json.dumps({name: time.perf_counter() - t0, name + "_changed": not o.same_as(mod)}), flush=True)
"""


def tvm_times(funcs: dict[int, object], tvm_py: str, timeout: float) -> dict[int, dict] | str:
    """Time TIRx's passes on each function (one subprocess per size: parse once, passes in
    order, each result printed as it finishes; what did not finish within ``timeout``
    seconds is reported as timed out)."""
    if not os.path.exists(tvm_py):
        return f"{tvm_py} not found"
    tmp = tempfile.mkdtemp(prefix="bench_passes_")
    names = ",".join(TVM_NAMES.values())
    out: dict[int, dict] = {}
    for n, f in funcs.items():
        text = tirx.dumps(f).replace(
            "# from tirx.script import tirx as T", "from tvm_tirx.script import tirx as T"
        )
        path = os.path.join(tmp, f"f{n}.py")
        with open(path, "w") as fh:
            fh.write(text)
        res: dict = {"timeout_s": timeout}
        try:
            r = subprocess.run(
                [tvm_py, "-c", _TVM_SCRIPT, names, path], capture_output=True, text=True, timeout=timeout
            )
            stdout = r.stdout
            if r.returncode != 0:
                res["error"] = (r.stderr.strip().splitlines() or ["failed"])[-1]
        except subprocess.TimeoutExpired as e:
            stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        for line in stdout.splitlines():
            with contextlib.suppress(ValueError):
                res.update(json.loads(line))
        out[n] = res
        print(
            f"  tvm {n}: "
            + ", ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in res.items())
        )
    return out


# ------------------------------------------------------------------------ main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--no-tvm", action="store_true")
    ap.add_argument("--no-record", action="store_true")
    ap.add_argument("--tvm-python", default=TVM_PY)
    ap.add_argument("--tvm-sizes", default="1000,10000", help="sizes to run TIRx on (its parser is slow)")
    ap.add_argument("--tvm-timeout", type=float, default=150.0, help="seconds per size for TIRx")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))

    funcs = {n: make_function(n) for n in sizes}
    ssa_funcs = {n: ConvertSSA()(f) for n, f in funcs.items()}
    actual = {n: count_stmts(f) for n, f in funcs.items()}
    print(f"python {sys.version.split()[0]}; statements: " + ", ".join(f"{n}: {actual[n]}" for n in sizes))

    rows: dict[str, dict[int, tuple[float, int]]] = {}
    for name, P in PASSES.items():
        rows[name] = {}
        for n in sizes:
            reps = 3 if n <= 10000 else 1
            rows[name][n] = measure(P(), funcs[n], reps)
            print(
                f"  {name:<18} {n:>7}: {rows[name][n][0] * 1e3:9.1f} ms  peak {rows[name][n][1] / 2**20:7.1f} MiB"
            )
    rows["ConvertSSA (ssa input)"] = {}
    for n in sizes:
        rows["ConvertSSA (ssa input)"][n] = measure(ConvertSSA(), ssa_funcs[n], 3 if n <= 10000 else 1)

    tvm_sizes = [n for n in (int(x) for x in args.tvm_sizes.split(",")) if n in ssa_funcs]
    tvm = (
        None
        if args.no_tvm
        else tvm_times({n: ssa_funcs[n] for n in tvm_sizes}, args.tvm_python, args.tvm_timeout)
    )
    if isinstance(tvm, str):
        print("tvm: " + tvm)

    lines = _table(sizes, actual, rows, tvm)
    print("\n".join(lines))
    if not args.no_record:
        _record(lines)
    return 0


def _ratio(d: dict, sizes: list, i: int) -> str:
    a, b = d[sizes[i]][0], d[sizes[i + 1]][0]
    return f"{b / a:.1f}" if a > 0 else "-"


def _mratio(d: dict, sizes: list, i: int) -> str:
    a, b = d[sizes[i]][1], d[sizes[i + 1]][1]
    return f"{b / a:.1f}" if a > 0 else "-"


def _table(sizes, actual, rows, tvm) -> list[str]:
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        f"Run {when}, Python {sys.version.split()[0]}, sizes (statements) "
        + " / ".join(f"{actual[n]:,}" for n in sizes)
        + ". Time = min of 3 runs (1 run at 100k); peak = tracemalloc peak during one run;"
        + f" load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.",
        "",
    ]
    head = (
        "| pass | "
        + " | ".join(f"{n // 1000}k ms" for n in sizes)
        + " | "
        + " | ".join(f"{n // 1000}k peak MiB" for n in sizes)
    )
    growth = [f"time {sizes[i] // 1000}k→{sizes[i + 1] // 1000}k" for i in range(len(sizes) - 1)]
    mgrowth = [f"mem {sizes[i] // 1000}k→{sizes[i + 1] // 1000}k" for i in range(len(sizes) - 1)]
    head += " | " + " | ".join(growth + mgrowth) + " |"
    out.append(head)
    out.append("|" + " --- |" * (1 + 2 * len(sizes) + 2 * (len(sizes) - 1)))
    for name, d in rows.items():
        cells = [f"{d[n][0] * 1e3:.1f}" for n in sizes] + [f"{d[n][1] / 2**20:.1f}" for n in sizes]
        cells += [_ratio(d, sizes, i) for i in range(len(sizes) - 1)]
        cells += [_mratio(d, sizes, i) for i in range(len(sizes) - 1)]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    if isinstance(tvm, dict):
        tsz = [n for n in sizes if n in tvm]
        out += [
            "",
            "Same functions (SSA form, printed by tirx and parsed by TIRx), apache-tvm-tirx 0.1.0a4 in the",
            "same run (its passes are C++; ratio = TIRx time / ours, > 1 means tirx is faster):",
            "",
        ]
        out.append(
            "| pass (ours / TIRx) | "
            + " | ".join(f"{n // 1000}k ours ms | {n // 1000}k TIRx ms | ratio" for n in tsz)
            + " |"
        )
        out.append("|" + " --- |" * (1 + 3 * len(tsz)))
        for ours, theirs in TVM_NAMES.items():
            key = "ConvertSSA (ssa input)" if ours == "ConvertSSA" else ours
            cells = []
            for n in tsz:
                a = rows[key][n][0]
                b = tvm[n].get(theirs)
                if b is None:
                    cells += [f"{a * 1e3:.1f}", f"> {tvm[n]['timeout_s']:.0f} s (timed out)", "-"]
                else:
                    cells += [f"{a * 1e3:.1f}", f"{b * 1e3:.1f}", f"{b / a:.1f}x"]
            out.append(f"| {ours} / {theirs} | " + " | ".join(cells) + " |")
        parse = ", ".join(f"{n // 1000}k: {tvm[n]['parse_s']:.1f} s" for n in tsz if "parse_s" in tvm[n])
        out.append("")
        out.append(f"TIRx parse time of the text (not part of the pass times): {parse}.")
    elif isinstance(tvm, str):
        out += ["", f"TIRx comparison skipped: {tvm}."]
    return out


def _record(lines: list[str]) -> None:
    path = ROOT / "docs" / "benchmarks.md"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    block = "\n".join(lines) + "\n"
    head = "## Passes"
    intro = (
        "`tools/bench/bench_passes.py`: each pass on generated host functions of 1k / 10k / 100k\n"
        "statements (nested loops / if-else, Binds and stores with repeated subexpressions, foldable\n"
        "constants, loop vars shared across sibling loops); growth ratios near 10 mean linear.\n"
    )
    if head in text:
        start = text.index(head)
        nxt = text.find("\n## ", start + len(head))
        section = text[start:] if nxt < 0 else text[start:nxt]
        new_section = section.rstrip("\n") + "\n\n" + block
        text = text[:start] + new_section + ("" if nxt < 0 else text[nxt:])
    else:
        text = text.rstrip("\n") + f"\n\n{head}\n\n{intro}\n{block}"
    path.write_text(text)


if __name__ == "__main__":
    raise SystemExit(main())
