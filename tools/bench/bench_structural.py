"""Structural hash / equality and import-time benchmark: tirx vs apache-tvm-tirx 0.1.0a4.

Builds the same ~4,000-node kernel twice in each toolkit (tirx: through the IRBuilder;
tvm_tirx: by parsing the equivalent TVMScript text with ``tvm_tirx.script.from_source``)
and times, in one run:

* cold ``structural_hash`` of a freshly built copy (min over fresh copies),
* cold ``structural_equal`` of two separately built copies,
* warm hash (same root again) and ``structural_equal(x, x)`` (both O(1)),
* ``import tirx`` / ``import tvm_tirx`` wall time in a fresh interpreter.

Usage::

    python tools/bench/bench_structural.py [--blocks 100] [--reps 30] [--tvm-python PATH]

The tvm side runs in a subprocess with ``--tvm-python`` (default ``/work/venv-tvm/bin/python``);
it is skipped with a note when that interpreter is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

TVM_PY = "/work/venv-tvm/bin/python"

# -------------------------------------------------------------------- the kernel
# One block j of the kernel body (inside the device entry), as TVMScript text.
_BLOCK = """\
        for k{j} in range(4):
            v{j}: T.let[T.int32] = i * 4 + k{j}
            if v{j} < n:
                C[v{j}] = A[v{j}] * T.float32({c}) + B[T.min(v{j} + {j1}, n - 1)] - T.Cast("float32", k{j})
            else:
                C[T.max(v{j} - {j1}, 0)] = A[v{j} % n] / T.float32(2.0) - T.float32(0.5)
"""

_HEAD = """\
from __future__ import annotations

from tvm_tirx.script import tirx as T

@T.function
def bench[n](A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32), C: T.Tensor((n,), T.float32)):
    with T.device_entry((n + 255) // 256, 1, 1, 256, 1, 1, attrs={{"cuda.kernel_attrs": {{}}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}}):
        i: T.let[T.int32] = T.cuda.block_idx("x") * 256 + T.cuda.thread_idx("x")
"""


def _const(j: int) -> float:
    return 1.25 + j / 8.0


def kernel_text(blocks: int) -> str:
    return _HEAD.format() + "".join(_BLOCK.format(j=j, j1=j + 1, c=repr(_const(j))) for j in range(blocks))


def build_tirx(blocks: int):
    """Build the same kernel as ``kernel_text`` through tirx's IRBuilder."""
    from tirx.ir import Cast, FloorDiv, FloorMod, Max, Min, TensorType, Var, const, op
    from tirx.ir.types import float32, int32
    from tirx.surface.builder import IRBuilder, launch_args

    ib = IRBuilder("<bench>")
    with ib, ib.function("bench"):
        n = Var("n", int32)
        A = ib.param("A", TensorType((n,), float32))
        B = ib.param("B", TensorType((n,), float32))
        C = ib.param("C", TensorType((n,), float32))
        args, attrs = launch_args(FloorDiv(n + 255, const(256)), 256)
        with ib.device_entry(args, attrs):
            i = ib.bind("i", op.call("cuda.block_idx", "x") * 256 + op.call("cuda.thread_idx", "x"))
            for j in range(blocks):
                with ib.for_(f"k{j}", 0, 4) as k:
                    v = ib.bind(f"v{j}", i * 4 + k)
                    with ib.if_(v < n):
                        ib.store(
                            C,
                            (v,),
                            A[v] * const(_const(j), float32) + B[Min(v + (j + 1), n - 1)] - Cast(float32, k),
                        )
                    with ib.else_():
                        ib.store(
                            C,
                            (Max(v - (j + 1), const(0)),),
                            A[FloorMod(v, n)] / const(2.0, float32) - const(0.5, float32),
                        )
    return ib.get()


def count_nodes(f) -> int:
    from tirx.ir import post_order

    return sum(1 for _ in post_order(f))


# -------------------------------------------------------------------- timing helpers
def _best(fn, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _cold_pairs(build, reps: int):
    """Fresh pairs of separately built copies (so no cache helps)."""
    return [(build(), build()) for _ in range(reps)]


def _time_cold(pairs, hash_fn, equal_fn) -> dict:
    hs, es = [], []
    for a, b in pairs:
        t = time.perf_counter()
        hash_fn(a)
        hs.append(time.perf_counter() - t)
        t = time.perf_counter()
        ok = equal_fn(a, b)
        es.append(time.perf_counter() - t)
        assert ok, "the two copies must be structurally equal"
    hs.sort()
    es.sort()
    return {
        "hash_min": hs[0],
        "hash_med": hs[len(hs) // 2],
        "equal_min": es[0],
        "equal_med": es[len(es) // 2],
    }


def bench_tirx(blocks: int, reps: int) -> dict:
    import tirx

    f = build_tirx(blocks)
    build_s = _best(lambda: build_tirx(blocks), 5)  # through the IRBuilder, after warm-up
    nodes = count_nodes(f)
    pairs = _cold_pairs(lambda: build_tirx(blocks), reps)
    r = _time_cold(pairs, tirx.structural_hash, tirx.structural_equal)
    a = pairs[0][0]
    tirx.structural_hash(a)
    r["hash_warm"] = _best(lambda: tirx.structural_hash(a), 200)
    r["equal_self"] = _best(lambda: tirx.structural_equal(a, a), 200)
    r["build"] = build_s
    r["nodes"] = nodes
    r["build_us_per_node"] = build_s / nodes * 1e6
    return r


_TVM_SCRIPT = r"""
import json, sys, time
import tvm_tirx
from tvm_ffi import structural_equal, structural_hash
text, reps = sys.stdin.read(), int(sys.argv[1])
pairs = [(tvm_tirx.script.from_source(text), tvm_tirx.script.from_source(text)) for _ in range(reps)]
hs, es = [], []
for a, b in pairs:
    t = time.perf_counter(); structural_hash(a); hs.append(time.perf_counter() - t)
    t = time.perf_counter(); ok = structural_equal(a, b); es.append(time.perf_counter() - t)
    assert ok
hs.sort(); es.sort()
a = pairs[0][0]
def best(fn, n=200):
    m = 1e9
    for _ in range(n):
        t = time.perf_counter(); fn(); m = min(m, time.perf_counter() - t)
    return m
print(json.dumps({"hash_min": hs[0], "hash_med": hs[len(hs)//2], "equal_min": es[0],
                  "equal_med": es[len(es)//2], "hash_warm": best(lambda: structural_hash(a)),
                  "equal_self": best(lambda: structural_equal(a, a))}))
"""


def bench_tvm(text: str, reps: int, py: str) -> dict | None:
    if not os.path.exists(py):
        return None
    out = subprocess.run(
        [py, "-c", _TVM_SCRIPT, str(reps)], input=text, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def import_time(py: str, module: str, reps: int = 5) -> float:
    """Best wall time of ``import module`` in a fresh interpreter (seconds).

    Bytecode caching is forced on (into a private ``PYTHONPYCACHEPREFIX``, warmed by one
    untimed import) so both sides are measured as users see them, even where the
    environment sets ``PYTHONDONTWRITEBYTECODE``.
    """
    import tempfile

    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    best = float("inf")
    env = dict(os.environ, PYTHONPYCACHEPREFIX=os.path.join(tempfile.gettempdir(), "tirx-bench-pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([py, "-c", code], capture_output=True, text=True, check=True, env=env)
    for _ in range(reps):
        out = subprocess.run([py, "-c", code], capture_output=True, text=True, check=True, env=env)
        best = min(best, float(out.stdout.strip().splitlines()[-1]))
    return best


def construction_us() -> dict[str, float]:
    """Best-of-5 microseconds to construct one node of each common kind (validation included)."""
    import timeit

    from tirx.ir import Add, Buffer, BufferLoad, BufferStore, Evaluate, FloatImm, For, ForKind, IntImm, Var
    from tirx.ir.types import PointerType, float32, int32

    a, b, one = Var("a"), Var("b"), IntImm(1)
    buf = Buffer("A", Var("A", PointerType(float32)), float32, (IntImm(16),))
    f, body = FloatImm(1.0), Evaluate(a)
    cases = {
        "Var": lambda: Var("x", int32),
        "IntImm": lambda: IntImm(3, int32),
        "Add": lambda: Add(a, b),
        "a + 1 (operator, literal coercion)": lambda: a + 1,
        "BufferLoad": lambda: BufferLoad(buf, (a,)),
        "BufferStore": lambda: BufferStore(buf, f, (a,)),
        "For": lambda: For(a, one, one, ForKind.SERIAL, body),
    }
    n = 20000
    return {k: min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6 for k, fn in cases.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=80, help="kernel size (about 40 nodes per block)")
    ap.add_argument("--reps", type=int, default=30, help="fresh copies per cold measurement")
    ap.add_argument("--tvm-python", default=TVM_PY)
    ap.add_argument("--json", action="store_true", help="print raw numbers as JSON")
    args = ap.parse_args(argv)

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    ours = bench_tirx(args.blocks, args.reps)
    theirs = bench_tvm(kernel_text(args.blocks), args.reps, args.tvm_python)
    imp_ours = import_time(sys.executable, "tirx")
    imp_theirs = import_time(args.tvm_python, "tvm_tirx") if theirs is not None else None
    if args.json:
        print(json.dumps({"tirx": ours, "tvm_tirx": theirs, "import": [imp_ours, imp_theirs]}, indent=1))
        return 0

    def ms(x: float) -> str:
        return f"{x * 1e3:8.3f} ms" if x >= 1e-5 else f"{x * 1e6:8.2f} us"

    print(
        f"kernel: {ours['nodes']} tirx nodes ({args.blocks} blocks); tirx build {ms(ours['build'])}"
        f" = {ours['build_us_per_node']:.2f} us/node"
    )
    print(f"{'measure':<28}{'tirx':>12}{'tvm_tirx':>12}{'ratio':>9}")
    rows = [
        ("cold hash (min)", "hash_min"),
        ("cold hash (median)", "hash_med"),
        ("cold equal (min)", "equal_min"),
        ("cold equal (median)", "equal_med"),
        ("warm hash (same root)", "hash_warm"),
        ("equal(x, x)", "equal_self"),
    ]
    for label, key in rows:
        o = ours[key]
        if theirs is None:
            print(f"{label:<28}{ms(o):>12}{'n/a':>12}")
        else:
            t = theirs[key]
            print(f"{label:<28}{ms(o):>12}{ms(t):>12}{o / t:9.3f}x")
    print("construction (us per node):")
    for k, us in construction_us().items():
        print(f"  {k:<36}{us:6.2f}")
    if imp_theirs is None:
        print(f"{'import':<28}{ms(imp_ours):>12}{'n/a':>12}")
    else:
        print(f"{'import':<28}{ms(imp_ours):>12}{ms(imp_theirs):>12}{imp_ours / imp_theirs:8.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
