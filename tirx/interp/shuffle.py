"""The interpreter's ``Shuffle`` (tirx/ir/shuffle.py): lanes of the concatenated vectors,
picked per thread by the (evaluated) indices. ``engine_expr.py``'s ``e_Shuffle`` calls
:func:`eval_shuffle`."""

from __future__ import annotations

from typing import Any

import numpy as np

from tirx.ops.semantics.errors import InterpError

from ..ir.shuffle import Shuffle


def eval_shuffle(compiler: Any, e: Shuffle) -> Any:
    """An evaluator ``c -> array``: (threads,) for one index, (threads, lanes) otherwise."""
    fvs = [compiler.expr(v) for v in e.vectors]
    fis = [compiler.expr(x) for x in e.indices]
    total = sum(v.ty.lanes for v in e.vectors)

    def ev(c: Any) -> np.ndarray:
        cols = []
        for f in fvs:
            a = np.asarray(f(c))
            cols.append(a[:, None] if a.ndim == 1 else a)
        n = max(col.shape[0] for col in cols)
        cat = np.concatenate([np.broadcast_to(col, (n, col.shape[1])) for col in cols], axis=1)
        rows = np.arange(n)
        out = []
        for f in fis:
            idx = np.broadcast_to(np.asarray(f(c)).astype(np.int64), (n,))
            if idx.size and (idx.min() < 0 or idx.max() >= total):
                raise InterpError(f"T.Shuffle: lane index {int(idx.max() if idx.max() >= total else idx.min())} "
                                  f"is out of range for {total} lanes")  # fmt: skip
            out.append(cat[rows, idx])
        return out[0] if len(out) == 1 else np.stack(out, axis=1)

    return ev
