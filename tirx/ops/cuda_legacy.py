"""TIRx's ``T.ptx_legacy`` and ``T.s_tir`` namespaces: Apache-TVM spellings kept for printed IR.

- ``T.ptx_legacy.mma(shape, a_layout, b_layout, a_dtype, b_dtype, c_dtype, a_ptr, a_offset,
  b_ptr, b_offset, acc_ptr, c_offset, saturate[, operator])`` and ``T.ptx_legacy.ldmatrix(trans,
  num, dtype, local_ptr, local_offset, smem_ptr, smem_offset)``: TIRx only rewrites them in its
  pass pipeline and its CUDA backend does not lower them as written; tirx builds, prints and
  round-trips them and refuses them by name in CUDA codegen (write ``T.ptx.mma`` /
  ``T.ptx.ldmatrix``).
- ``T.s_tir.cp_async_raw(dst_ptr, dst_offset, src_ptr, src_offset, cp_size)``: one
  ``cp.async`` of ``cp_size`` (4, 8 or 16) bytes, global -> shared, offsets counted in elements
  of each pointer's type (``.cg`` for 16 bytes, ``.ca`` otherwise, as TIRx emits it).
  ``T.s_tir.cp_async_raw.legacy(..., elem_dtype=)`` folds the offsets into the pointers
  (``T.ptr_byte_offset``) as TIRx's does. The interpreter copies at once (a valid order: the
  copy is only observed after ``cp.async.wait_group``).
"""

from __future__ import annotations

from typing import Any

from ..ir.op import NoInterp, declare
from ..ir.op import call as _call
from ..ir.types import PointerType, as_prim, as_type, void

__all__: list[str] = []


def _refuse(what: str):
    def lower(cg: Any, c: Any) -> str:
        raise cg.error(
            f"T.{c.op.name} is not supported by the CUDA backend (TIRx rewrites it in its pass pipeline only); "
            f"write {what}",
            c,
        )

    return lower


declare(
    "ptx_legacy.mma", "s s s s s s p i p i p i b s?", void, pure=False, device_only=True,
    params="shape a_layout b_layout a_dtype b_dtype c_dtype a_ptr a_offset b_ptr b_offset acc_ptr c_offset "
    "saturate operator",
    doc="Apache TVM's ptx_mma (the accumulator is also the destination); kept for printed IR",
    cuda=_refuse("T.ptx.mma"), interp=NoInterp("T.ptx_legacy.mma is kept for printed IR only"),
)  # fmt: skip
declare(
    "ptx_legacy.ldmatrix", "b n s p i p i", void, pure=False, device_only=True,
    params="trans num dtype local_ptr local_offset smem_ptr smem_offset",
    doc="Apache TVM's ptx_ldmatrix; kept for printed IR",
    cuda=_refuse("T.ptx.ldmatrix"), interp=NoInterp("T.ptx_legacy.ldmatrix is kept for printed IR only"),
)  # fmt: skip


def _esize(t: Any) -> int:
    el = t.element if isinstance(t, PointerType) else None
    return getattr(el, "bytes", 1) or 1


def _c_cp_async(cg: Any, c: Any) -> str:
    dst, doff, src, soff, size = c.args
    n = size.value
    if n not in (4, 8, 16):
        raise cg.error(f"T.{c.op.name}: cp_size must be 4, 8 or 16 bytes, got {n}", c)
    for a, what in ((dst, "dst_ptr"), (src, "src_ptr")):
        if not isinstance(a.ty, PointerType):
            raise cg.error(f"T.{c.op.name}: {what} must be a pointer, got {a.ty}", c)
    mode = "cg" if n == 16 else "ca"
    d = f"((const char*)({cg.expr(dst)}) + ({cg.expr(doff)}) * {_esize(dst.ty)})"
    s = f"((const char*)({cg.expr(src)}) + ({cg.expr(soff)}) * {_esize(src.ty)})"
    return (
        f'asm volatile("cp.async.{mode}.shared.global [%0], [%1], {n};" :: '
        f'"r"((unsigned)__cvta_generic_to_shared({d})), "l"({s}) : "memory")'
    )


def _i_cp_async(fc: Any, call: Any):
    import numpy as np

    from tirx.ops import semantics as S

    fs = [fc.expr(a) for a in call.args[:4]]
    n = call.args[4].value
    dsz, ssz = _esize(call.args[0].ty), _esize(call.args[2].ty)
    u8 = as_type("uint8")
    name = call.op.name

    def ev(c):
        dst, doff, src, soff = (f(c) for f in fs)
        doff = np.asarray(doff, dtype=np.int64) * dsz
        soff = np.asarray(soff, dtype=np.int64) * ssz
        act = np.flatnonzero(c.mask)
        for k in range(n):
            sv, si = S.pointer_elements(
                c, S.PtrVal(src.mem, src.off + soff + k, src.rank), u8, f"T.{name} src"
            )
            dv, di = S.pointer_elements(
                c, S.PtrVal(dst.mem, dst.off + doff + k, dst.rank), u8, f"T.{name} dst"
            )
            dv[di[act]] = sv[si[act]]
            S.shared_written(c, dst.mem, u8, di, overlapping=True)
        return None

    return ev


class _CpAsyncRaw:
    """``T.s_tir.cp_async_raw(...)`` and its ``.legacy(...)`` spelling."""

    def __call__(self, *args: Any, span: Any = None, **kw: Any) -> Any:
        return CP_ASYNC_RAW(*args, span=span, **kw)

    @staticmethod
    def legacy(dst_ptr: Any, dst_offset: Any, src_ptr: Any, src_offset: Any, cp_size: Any, *,
               elem_dtype: Any = "int8", span: Any = None) -> Any:  # fmt: skip
        """The offsets (elements of ``elem_dtype``) folded into the pointers as byte offsets."""
        t = as_prim(elem_dtype, "T.s_tir.cp_async_raw.legacy elem_dtype")
        nbytes = t.bits * t.lanes // 8
        dst = _call("ptr_byte_offset", dst_ptr, dst_offset * nbytes)
        src = _call("ptr_byte_offset", src_ptr, src_offset * nbytes)
        return CP_ASYNC_RAW(dst, 0, src, 0, cp_size, span=span)


CP_ASYNC_RAW = declare(
    "s_tir.cp_async_raw", "p i p i n", void, pure=False, device_only=True,
    params="dst_ptr dst_offset src_ptr src_offset cp_size", choices={4: (4, 8, 16)},
    doc="one cp.async of cp_size bytes from global to shared (offsets in elements of each pointer's type)",
    cuda=_c_cp_async, interp=_i_cp_async, script=_CpAsyncRaw(),
)  # fmt: skip
