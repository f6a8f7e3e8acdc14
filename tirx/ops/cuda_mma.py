"""TIRx's register-fragment helpers of the old tensor-core path: ``T.cuda.mma_fill``,
``T.cuda.mma_store`` and ``T.cuda.bmma_sync``.

- ``mma_fill(local_size, local_ptr, offset, ty=...)`` zeroes ``local_size`` registers at
  ``local_ptr + offset``.
- ``mma_store(m, n, dst_ptr, src_ptr, src_offset, dst_stride, ty=...)`` writes a warp's 16x16
  ``mma.sync`` accumulator (8 registers per lane at ``src_ptr + src_offset``) to the row-major
  tile at ``dst_ptr`` (row stride ``dst_stride``): register ``r`` of lane ``t`` is element
  ``(t / 4 + 8 * (r / 2 % 2), 2 * (t % 4) + r % 2 + 8 * (r / 4))``, the inverse of the
  ``ldmatrix`` 32x8 layout. Only 16x16 exists (as in Apache TVM).
- ``bmma_sync`` is the WMMA binary (1-bit) multiply on ``wmma`` fragments, which tirx has no
  storage for: it builds, prints and round-trips; the CUDA backend refuses it by name.

TIRx prints ``ty=`` on the first two (the element type); its own CUDA backend lowers none of
the three, so tirx's lowerings are checked against numpy (the interpreter) instead.
"""

from __future__ import annotations

from typing import Any

from ..errors import OpError
from ..ir.expr import IntImm
from ..ir.op import NoInterp, declare
from ..ir.types import PointerType, void

__all__: list[str] = []


def _elem(cg: Any, c: Any, i: int) -> str:
    t = c.args[i].ty
    if not isinstance(t, PointerType):
        raise cg.error(f"T.{c.op.name}: argument {i + 1} must be a pointer, got {t}", c)
    return cg.ctype(c.ty)


def _c_fill(cg: Any, c: Any) -> str:
    ct = _elem(cg, c, 1)
    n, p, off = (cg.expr(a) for a in c.args)
    return f"[&]() {{ for (int i = 0; i < ({n}); ++i) (({ct}*)({p}))[({off}) + i] = ({ct})0; }}()"


def _sixteen(c: Any, err: Any) -> None:
    m, n = c.args[0], c.args[1]
    if not (isinstance(m, IntImm) and isinstance(n, IntImm) and m.value == 16 and n.value == 16):
        raise err(f"T.{c.op.name}: only the 16x16 accumulator tile exists (m = n = 16)")


def _c_store(cg: Any, c: Any) -> str:
    _sixteen(c, lambda m: cg.error(m, c))
    ct = _elem(cg, c, 2)
    _elem(cg, c, 3)
    _, _, dst, src, off, stride = (cg.expr(a) for a in c.args)
    return (
        f"[&]() {{ const int t = (int)(threadIdx.x % 32u); for (int r = 0; r < 8; ++r) "
        f"(({ct}*)({dst}))[(t / 4 + 8 * (r / 2 % 2)) * ({stride}) + 2 * (t % 4) + r % 2 + 8 * (r / 4)] = "
        f"(({ct}*)({src}))[({off}) + r]; }}()"
    )


def _i_fill(fc: Any, call: Any):
    import numpy as np

    from tirx.ops import semantics as S

    t = call.ty
    fs = [fc.expr(a) for a in call.args]
    name = call.op.name

    def ev(c):
        n, p, off = (f(c) for f in fs)
        n = int(np.max(np.asarray(n)))
        off = np.asarray(off, dtype=np.int64)
        size = S.dtypes.storage_np(t).itemsize
        act = np.flatnonzero(c.mask)
        for i in range(n):
            q = S.PtrVal(p.mem, p.off + (off + i) * size, p.rank)
            view, idx = S.pointer_elements(c, q, t, f"T.{name} local_ptr")
            view[idx[act]] = S.dtypes.to_storage(np.zeros(len(act), dtype=S.dtypes.value_np(t)), t)
        return None

    return ev


def _i_store(fc: Any, call: Any):
    import numpy as np

    from tirx.ops import semantics as S

    _sixteen(call, OpError)
    t = call.ty
    fs = [fc.expr(a) for a in call.args[2:]]
    name = call.op.name

    def ev(c):
        dst, src, off, stride = (f(c) for f in fs)
        lane = (S.need_launch(c, name).get("tid") % 32).astype(np.int64)
        off = S.full(np.asarray(off, dtype=np.int64), c.N)
        stride = S.full(np.asarray(stride, dtype=np.int64), c.N)
        size = S.dtypes.storage_np(t).itemsize
        act = np.flatnonzero(c.mask)
        for r in range(8):
            q = S.PtrVal(src.mem, src.off + (off + r) * size, src.rank)
            sv, si = S.pointer_elements(c, q, t, f"T.{name} src_ptr")
            row = lane // 4 + 8 * (r // 2 % 2)
            col = 2 * (lane % 4) + r % 2 + 8 * (r // 4)
            d = S.PtrVal(dst.mem, dst.off + (row * stride + col) * size, dst.rank)
            dv, di = S.pointer_elements(c, d, t, f"T.{name} dst_ptr")
            dv[di[act]] = sv[si[act]]
        return None

    return ev


declare(
    "cuda.mma_fill", "i p i", "ty", pure=False, device_only=True, params="local_size local_ptr offset",
    doc="zero `local_size` accumulator registers at local_ptr + offset (ty=: their element type)",
    cuda=_c_fill, interp=_i_fill,
)  # fmt: skip
declare(
    "cuda.mma_store", "n n p p i i", "ty", pure=False, device_only=True,
    params="m n dst_ptr src_ptr src_offset dst_stride",
    doc="store a warp's 16x16 mma.sync accumulator (8 registers per lane) to a row-major tile "
    "(ty=: the element type)",
    cuda=_c_store, interp=_i_store,
)  # fmt: skip


def _c_bmma(cg: Any, c: Any) -> str:
    raise cg.error(
        f"T.{c.op.name} (WMMA binary fragments) is not supported by the CUDA backend: tirx has no wmma "
        "fragment storage; use T.ptx.mma with .b1 operands",
        c,
    )


declare(
    "cuda.bmma_sync", "p i p i p i p i", void, pure=False, device_only=True,
    params="fragment_d index_d fragment_a index_a fragment_b index_b fragment_c index_c",
    doc="WMMA binary (1-bit) D = A * B + C on wmma fragments (builds and prints; not supported by the "
    "CUDA backend)",
    cuda=_c_bmma, interp=NoInterp("T.cuda.bmma_sync works on wmma fragments, which the interpreter does not model"),
)  # fmt: skip
