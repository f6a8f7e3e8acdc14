"""Traversal benchmark: the IR walks every layer shares, on the library's real kernels.

Times (best of ``--repeat``) the CUDA code generator (``emit`` of the prepared IR), a
``Visitor`` walk, an identity ``Mutator``, ``structural_equal`` of two separate builds (and of
2,000 small unequal pairs: the mismatch path) and ``structural_hash``, on the Hopper GEMM and
attention kernels. It has no peer: run it at two revisions to compare a refactor, e.g.::

    python tools/bench/bench_traversal.py > /tmp/after.txt
    git stash; python tools/bench/bench_traversal.py > /tmp/before.txt; git stash pop

Results: docs/benchmarks.md, "Traversal".
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any


def best(fn: Callable[[], Any], repeat: int) -> float:
    fn()
    t_best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        t_best = min(t_best, time.perf_counter() - t)
    return t_best * 1e3


def _rows(make: Callable[[], Any], repeat: int) -> dict[str, float]:
    import tirx
    from tirx.codegen.cuda import emit
    from tirx.ir import Mutator, Visitor
    from tirx.pipeline import Compilation, _launch_thread_entries, _lower_layouts, _vectorize

    f = make()
    g = tirx.loads(tirx.dumps(f))  # a separate build of the same kernel
    c = Compilation(f)
    for stage in (_vectorize, _lower_layouts, _launch_thread_entries):  # what codegen gets
        stage(c)
    return {
        "codegen emit": best(lambda: emit(c.ir, layout_arith=c.layout_arith), repeat),
        "Visitor walk": best(lambda: Visitor().visit(f), repeat),
        "Mutator (identity)": best(lambda: Mutator().visit(f), repeat),
        "structural_equal": best(lambda: tirx.structural_equal(f, g), repeat),
        "structural_hash": best(lambda: tirx.structural_hash(f.replace(name=f.name)), repeat),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=20)
    a = ap.parse_args()

    import tirx
    from tirx.ir import Add, IntImm, Var
    from tirx.kernels.hopper import attention, matmul

    kernels = {
        "matmul_any_f16": matmul.KERNELS["matmul_any_f16"],
        "attn_d128": attention.KERNELS["attn_d128"],
    }
    for name, make in kernels.items():
        rows = _rows(make, a.repeat)
        print(f"{name}: " + ", ".join(f"{k} {v:.3f} ms" for k, v in rows.items()))
    x, y = Var("x"), Var("y")
    lhs = [Add(x, IntImm(i)) * y for i in range(2000)]
    rhs = [Add(x, IntImm(i + 1)) * y for i in range(2000)]
    t = best(lambda: [tirx.structural_equal(p, q) for p, q in zip(lhs, rhs)], max(3, a.repeat // 4))
    print(f"2000 unequal pairs: structural_equal {t:.3f} ms")


if __name__ == "__main__":
    main()
