"""CPU semantics of the warp-level MMA row ``mma.sync.aligned`` (tirx/ops/ptx_rows_mma.py).

Modelled: ``.m16n8k16`` and ``.m16n8k8``, ``.row.col``, ``.f32`` accumulators (d, c),
``.f16.f16`` or ``.bf16.bf16`` inputs (a, b). Every other form of the row keeps refusing
with "the interpreter cannot run"; the other mma rows (int, f64, f16 accumulators) have
no resolver here and get ptx_table's own refusal.

mma is warp-collective: one instruction of a warp multiplies tiles spread over its 32
lanes' registers, so the evaluator gathers each warp's fragments into matrices, computes
``D = A * B + C`` per warp and scatters D back per lane. ``.aligned`` means every lane of
the warp executes it together; a warp with some lanes inactive (a divergent branch, an
early return, a block size that leaves a partial warp) is an ``InterpError``, never a
result computed from missing registers.

Numerics: each product of two 16-bit inputs is exact in float64, and so is C; the K
products and C are summed in float64 and rounded once to float32 (nearest even; a NaN
result is the GPU's canonical ``0x7fffffff``). The GPU's accumulation order and internal
precision are unspecified, so its D can differ by a few float32 ulps of the sum's
magnitude; subnormal inputs and results are kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .ptx_semantics import _bits, _Call, _from_bits, _round, _tokty, from_token, to_token
from .ptx_table import register_row_semantics

__all__ = ["fragment_index"]

#: shape -> (M, N, K) of the forms modelled
_SHAPES = {"m16n8k16": (16, 8, 16), "m16n8k8": (16, 8, 8)}


def fragment_index(which: str, reg: int, half: int, lane):
    """(row, column) in the A (MxK), B (KxN) or C/D (MxN) tile of ``half`` (0: the low 16
    bits; C/D registers hold one f32, half 0) of register ``reg`` of ``lane`` (numpy ints),
    per the PTX ISA's "Matrix Fragments for mma.m16n8k16 / m16n8k8 with floating point type"
    (g = lane // 4, t = lane % 4; m16n8k8 uses A's registers 0-1 and B's register 0)."""
    g, t = lane // 4, lane % 4
    if which == "a":
        return g + 8 * (reg & 1), 2 * t + half + 8 * (reg >> 1)
    if which == "b":
        return 2 * t + half + 8 * reg, g
    return g + 8 * (reg >> 1), 2 * t + (reg & 1)


def _refuse(cl: _Call) -> None:
    """An OpError at compile time for the forms of the row with no CPU model."""
    m = cl.mods
    ok = (
        cl.row.name == "mma"
        and m["shape"] in _SHAPES
        and (m["alayout"], m["blayout"]) == ("row", "col")
        and m["atype"] == m["btype"]
        and m["atype"] in ("f16", "bf16")
        and (m["dtype"], m["ctype"]) == ("f32", "f32")
    )
    if not ok:
        from ..errors import OpError

        raise OpError(
            f"the interpreter cannot run {cl.what}: only mma.sync.aligned.{{m16n8k16|m16n8k8}}.row.col"
            ".f32.{f16.f16|bf16.bf16}.f32 has a CPU model"
        )


def _warps(c: Any, what: str):
    """(warp number, lane in the warp) of each lane of ``c``'s launch, after checking that
    each warp executing the call has all 32 lanes active (``.aligned``)."""
    import numpy as np

    from tirx.ops.semantics import InterpError, need_launch

    L = need_launch(c, what[2:])
    tid = L.get("tid").astype(np.int64)
    lane = tid % 32
    warp = L.get("warp")
    count = np.bincount(warp[c.mask], minlength=int(warp.max()) + 1 if warp.size else 1)
    partial = count[warp] % 32 != 0  # a lane of a warp that runs it with fewer than 32 lanes
    if partial.any():
        k = int(np.flatnonzero(partial & c.mask)[0])
        size = min(32, L.T - int(tid[k]) // 32 * 32)
        out = np.flatnonzero(partial & ~c.mask & (warp == warp[k]))
        why = (
            f"{c.describe(int(out[0]))} does not"
            if out.size
            else f"the warp has only {size} threads (block size {L.T} is not a multiple of 32)"
        )
        raise InterpError(
            f"{what}: executed by {int(count[warp[k]])} of the 32 lanes of a warp ({c.describe(k)} "
            f"executes it, {why}); .aligned needs every lane of the warp to execute it together"
        )
    return warp, lane


def _mma_interp(fc: Any, call: Any) -> Callable:
    from tirx.ops.semantics import element_writer, full

    cl = _Call(call)
    _refuse(cl)
    what, atype = cl.what, cl.mods["atype"]
    M, N, K = _SHAPES[cl.mods["shape"]]
    regs: dict[str, list] = {"a": [], "b": [], "c": []}
    outs = []
    for name, e, kind, _ in cl.ops:
        if kind == "dst":
            outs.append((element_writer(fc, e), e.ty))
        else:
            regs[name[0]].append((fc.expr(e), e.ty))

    def ev(c):
        import numpy as np

        warp, lane = _warps(c, what)
        act = c.mask
        w, ln = warp[act], lane[act]
        nw = int(warp.max()) + 1 if warp.size else 1
        tiles = {"a": np.zeros((nw, M, K)), "b": np.zeros((nw, K, N)), "c": np.zeros((nw, M, N))}
        for which, ops in regs.items():
            for r, (f, ty) in enumerate(ops):
                v = full(np.asarray(f(c)), c.N)
                if which == "c":  # an f32 register: a float32 element, or 32 bits reinterpreted
                    row, col = fragment_index("c", r, 0, ln)
                    tiles["c"][w, row, col] = to_token(v, ty, "f32")[act]
                    continue
                u = _bits(to_token(v, ty, "b32"), _tokty("b32"))  # the packed pair's bits
                for half in (0, 1):
                    h = ((u >> np.uint32(16 * half)) & np.uint32(0xFFFF)).astype(np.uint16)
                    row, col = fragment_index(which, r, half, ln)
                    tiles[which][w, row, col] = _from_bits(h, _tokty(atype))[act]
        with np.errstate(all="ignore"):  # inf * 0, inf - inf: NaN, as on the GPU
            prod = tiles["a"][:, :, :, None] * tiles["b"][:, None, :, :]  # exact in float64
            d = _round(prod.sum(axis=2) + tiles["c"], "f32")
        for r, (wr, ty) in enumerate(outs):
            row, col = fragment_index("d", r, 0, lane)
            wr(c, full(from_token(d[warp, row, col], "f32", ty), c.N))
        return np.zeros(1, dtype=np.int32)

    return ev


register_row_semantics(lambda row_name: _mma_interp if row_name == "mma" else None)
