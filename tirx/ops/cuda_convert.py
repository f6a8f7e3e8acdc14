"""TIRx's packed conversion and paired-float builtins (``T.cuda.float22half2``,
``T.cuda.float8tohalf8``, ``T.cuda.half8tofloat8``, ``T.cuda.fadd2_rn``, ``T.cuda.fmul2_rn``).

The conversions move memory through pointers, with TIRx's operand orders (they differ:
``float22half2(dst, src)`` but ``float8tohalf8(src, dst)`` and ``half8tofloat8(src, dst)``).
``fadd2_rn``/``fmul2_rn`` work on a float2 packed in a uint64 (``T.cuda.make_float2``), as
TIRx's do; they lower to ``__fadd2_rn``/``__fmul2_rn`` (``add.rn.f32x2``, sm_100+) and to the
same two round-to-nearest operations one by one on older GPUs, so they run on an H200 too.
"""

from __future__ import annotations

from typing import Any

from ..errors import OpError
from ..ir.op import Helper, declare
from ..ir.types import PointerType, PrimType, uint64, void

__all__: list[str] = []

HELPERS = Helper(
    "tirx_cuda_convert",
    """\
// TIRx's packed conversions (pointer operands) and paired float32 arithmetic on a float2 in a uint64
#include <cuda_fp16.h>
__device__ __forceinline__ void tirx_float22half2(void* dst, const void* src) {
  *(half2*)dst = __float22half2_rn(*(const float2*)src);
}
__device__ __forceinline__ void tirx_float8tohalf8(const void* src, void* dst) {
  const float2* s = (const float2*)src;
  half2* d = (half2*)dst;
#pragma unroll
  for (int i = 0; i < 4; ++i) d[i] = __float22half2_rn(s[i]);
}
__device__ __forceinline__ void tirx_half8tofloat8(const void* src, void* dst) {
  const half2* s = (const half2*)src;
  float2* d = (float2*)dst;
#pragma unroll
  for (int i = 0; i < 4; ++i) d[i] = __half22float2(s[i]);
}
__device__ __forceinline__ float2 tirx_as_float2(unsigned long long p) {
  return make_float2(__uint_as_float((unsigned)p), __uint_as_float((unsigned)(p >> 32)));
}
__device__ __forceinline__ unsigned long long tirx_from_float2(float2 v) {
  return ((unsigned long long)__float_as_uint(v.y) << 32) | __float_as_uint(v.x);
}
__device__ __forceinline__ unsigned long long tirx_fadd2_rn(unsigned long long a, unsigned long long b) {
  float2 x = tirx_as_float2(a), y = tirx_as_float2(b);
#if __CUDA_ARCH__ >= 1000
  return tirx_from_float2(__fadd2_rn(x, y));
#else
  return tirx_from_float2(make_float2(__fadd_rn(x.x, y.x), __fadd_rn(x.y, y.y)));
#endif
}
__device__ __forceinline__ unsigned long long tirx_fmul2_rn(unsigned long long a, unsigned long long b) {
  float2 x = tirx_as_float2(a), y = tirx_as_float2(b);
#if __CUDA_ARCH__ >= 1000
  return tirx_from_float2(__fmul2_rn(x, y));
#else
  return tirx_from_float2(make_float2(__fmul_rn(x.x, y.x), __fmul_rn(x.y, y.y)));
#endif
}""",
)


# --------------------------------------------------------------------------- memory conversions
def _c_copy(fn: str, src_first: bool):
    def lower(cg: Any, c: Any) -> str:
        cg.need(HELPERS)
        a, b = (cg.expr(x) for x in c.args)
        return (
            f"{fn}((const void*)({a}), (void*)({b}))"
            if src_first
            else f"{fn}((void*)({a}), (const void*)({b}))"
        )

    return lower


def _elements(c: Any, p: Any, t: PrimType, n: int, what: str) -> tuple:
    """(flat storage view, per-lane element indices (N, n)) of ``n`` consecutive ``t`` at ``p``."""
    import numpy as np

    from tirx.ops import semantics as S

    size = S.dtypes.storage_np(t).itemsize
    cols = []
    view = None
    for k in range(n):
        q = S.PtrVal(p.mem, p.off + k * size, p.rank) if isinstance(p, S.PtrVal) else p
        view, idx = S.pointer_elements(c, q, t, what)
        cols.append(idx)
    return view, np.stack(cols, axis=1)


def _half_rn(x: Any) -> Any:
    """float32 -> float16, nearest even (numpy's conversion is correctly rounded); NaN is
    the canonical 0x7fff, as __float2half_rn gives it."""
    import numpy as np

    with np.errstate(all="ignore"):
        h = np.asarray(x, dtype=np.float32).astype(np.float16)
    return np.where(np.isnan(h), np.uint16(0x7FFF).view(np.float16), h)


def _i_copy(src_ty: str, dst_ty: str, n: int, src_first: bool):
    def compile_call(fc: Any, call: Any):
        import numpy as np

        from tirx.ops import semantics as S

        from ..ir.types import as_type

        name = call.op.name
        fs = [fc.expr(a) for a in call.args]
        st, dt = as_type(src_ty), as_type(dst_ty)

        def ev(c):
            ps = [f(c) for f in fs]
            src, dst = (ps[0], ps[1]) if src_first else (ps[1], ps[0])
            sv, si = _elements(c, src, st, n, f"T.{name} source")
            dv, di = _elements(c, dst, dt, n, f"T.{name} destination")
            act = np.flatnonzero(c.mask)
            vals = S.dtypes.from_storage(sv[si[act]], st)
            if dt.base == "float16":
                out = _half_rn(vals)
            else:  # __half22float2: a NaN becomes the canonical 0x7fffffff (measured on the H200)
                with np.errstate(all="ignore"):
                    f = np.asarray(vals, dtype=np.float32)
                out = np.where(np.isnan(f), np.uint32(0x7FFFFFFF).view(np.float32), f)
            dv[di[act]] = S.dtypes.to_storage(out, dt)
            return None

        return ev

    return compile_call


def _check_pointers(fn):
    """TIRx passes addresses (``T.address_of(B[0])``, ``buf.data``): check they are pointers."""

    def lower(cg: Any, c: Any) -> str:
        for i, a in enumerate(c.args):
            if not isinstance(a.ty, PointerType):
                raise cg.error(f"T.{c.op.name}: argument {i + 1} must be a pointer, got {a.ty}", c)
        return fn(cg, c)

    return lower


for _n, _fn, _src_first, _st, _dt, _k, _p, _d in (
    ("cuda.float22half2", "tirx_float22half2", False, "float32", "float16", 2, "dst src",
     "store the float2 at `src` as a half2 at `dst` (__float22half2_rn, nearest even)"),
    ("cuda.float8tohalf8", "tirx_float8tohalf8", True, "float32", "float16", 8, "src_addr dst_addr",
     "store the 8 float32 at `src_addr` as 8 float16 at `dst_addr` (nearest even); note TIRx's "
     "operand order: source first"),
    ("cuda.half8tofloat8", "tirx_half8tofloat8", True, "float16", "float32", 8, "src_addr dst_addr",
     "store the 8 float16 at `src_addr` widened to 8 float32 at `dst_addr` (exact)"),
):  # fmt: skip
    declare(
        _n, "p p", void, pure=False, device_only=True, params=_p, doc=_d,
        cuda=_check_pointers(_c_copy(_fn, _src_first)), interp=_i_copy(_st, _dt, _k, _src_first),
    )  # fmt: skip


# --------------------------------------------------------------------------- paired float32 arithmetic
def _c_pair(fn: str):
    def lower(cg: Any, c: Any) -> str:
        for a in c.args:
            if not (isinstance(a.ty, PrimType) and a.ty.base == "uint64" and a.ty.lanes == 1):
                raise cg.error(f"T.{c.op.name} takes float2 values packed in uint64 scalars, got {a.ty}", c)
        cg.need(HELPERS)
        return f"{fn}({cg.expr(c.args[0])}, {cg.expr(c.args[1])})"

    return lower


def pair_rn(a: Any, b: Any, kind: str) -> Any:
    """The float2 ``a (+|*) b`` (each a uint64: x low, y high), each half rounded to nearest
    even as one float32 operation (numpy's float32 arithmetic is IEEE round-to-nearest);
    NaN results are the canonical 0x7fffffff the GPU gives."""
    import numpy as np

    a = np.asarray(a, dtype=np.uint64)
    b = np.asarray(b, dtype=np.uint64)
    out = np.zeros(np.broadcast(a, b).shape, dtype=np.uint64)
    for sh in (0, 32):
        s = np.uint64(sh)
        x = ((a >> s) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
        y = ((b >> s) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
        with np.errstate(all="ignore"):
            r = (x + y) if kind == "add" else (x * y)
        bits = np.where(np.isnan(r), np.uint32(0x7FFFFFFF), np.asarray(r, dtype=np.float32).view(np.uint32))
        out |= bits.astype(np.uint64) << s
    return out


def _i_pair(kind: str):
    def compile_call(fc: Any, call: Any):
        for a in call.args:
            if not (isinstance(a.ty, PrimType) and a.ty.base == "uint64" and a.ty.lanes == 1):
                raise OpError(f"T.{call.op.name} takes float2 values packed in uint64 scalars, got {a.ty}")
        fa, fb = (fc.expr(a) for a in call.args)
        return lambda c: pair_rn(fa(c), fb(c), kind)

    return compile_call


for _op, _w in (("add", "sum"), ("mul", "product")):
    declare(
        f"cuda.f{_op}2_rn", "i i", uint64, params="a b",
        doc=f"the componentwise {_w} of two float2 packed in uint64s (T.cuda.make_float2), each "
        f"rounded to nearest even (__f{_op}2_rn; two __f{_op}_rn before sm_100)",
        cuda=_c_pair(f"tirx_f{_op}2_rn"), interp=_i_pair(_op),
    )  # fmt: skip
