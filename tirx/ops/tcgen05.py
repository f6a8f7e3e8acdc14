"""tcgen05 companions that are not PTX instructions (Blackwell, sm_100a): the descriptor
encoders, TMEM address arithmetic and TIRx's ``T.cuda.tcgen05`` namespace.

- ``T.cuda.tcgen05_encode_instr_descriptor(desc, d_dtype=, a_dtype=, b_dtype=, M=, N=, K=,
  trans_a=, trans_b=[, n_cta_groups=1, neg_a=, neg_b=, sat_d=, is_sparse=])`` writes the
  32-bit instruction descriptor of a dense ``tcgen05.mma`` (kind::f16/tf32/f8f6f4/i8) to
  ``*desc``; ``..._block_scaled`` (with ``sfa_dtype``/``sfb_dtype``) the one of the
  block-scaled kinds (mxf8f6f4, mxf4, mxf4nvf4). Every field is static, so the value is
  computed here once (``encode_instr_descriptor``) and the kernel stores a constant; a
  combination PTX does not define is a located error naming it.
- ``T.cuda.tcgen05_encode_matrix_descriptor(desc, addr, ldo, sdo, swizzle)`` writes the
  64-bit shared-memory matrix descriptor of ``addr`` (ldo/sdo in 16-byte units; swizzle 0
  none, 1 32B, 2 64B, 3 128B, 4 128B with 32B atoms) to ``*desc``.
- ``T.cuda.get_tmem_addr(taddr, row, col)``: a TMEM address moved by rows (lanes, high 16
  bits) and columns (low 16 bits), each wrapping at 16 bits.
- ``T.cuda.runtime_instr_desc(desc, sf_id)``: sets both scale-factor ids (bits 4-5 for B,
  29-30 for A) of the block-scaled descriptor at ``*desc``.
- ``T.cuda.sm100_2sm_leader_smem_addr(ptr)``: the shared-window address of ``ptr`` with
  bit 24 cleared (the leader CTA's copy in a CTA pair), the expression TIRx builds.
- ``T.cuda.tcgen05.encode_*``: TIRx's namespace spelling of the three encoders (aliases).
- ``TCGen05InstrDescriptorAttrs`` / ``...BlockScaledAttrs``: the static options as a
  value (``.encode()`` gives the descriptor); ``T.cuda.<name>`` resolves to them.

The bit layouts are PTX ISA 8.7+'s "Instruction descriptor" and "Shared memory descriptor"
tables (tests/test_tcgen05.py checks them field by field and against TIRx's values).
This module imports only ``tirx.ir`` at import time.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..ir import op as _opmod
from ..ir.expr import Call, IntImm, PrimExpr, StringImm
from ..ir.op import CExpr, Helper, declare
from ..ir.types import PointerType, PrimType, uint32, void

__all__ = [
    "TCGen05InstrDescriptorAttrs",
    "TCGen05InstrDescriptorBlockScaledAttrs",
    "encode_instr_descriptor",
    "encode_instr_descriptor_block_scaled",
    "encode_matrix_descriptor",
    "mma_kind",
    "tmem_addr",
    "with_sf_id",
]

# ----------------------------------------------------------------------------- formats
_F8F6F4 = {"float8_e4m3fn": 0, "float8_e4m3fnuz": 0, "float8_e5m2": 1, "float6_e2m3fn": 3, "float6_e3m2fn": 4,
           "float4_e2m1fn": 5}  # fmt: skip
#: the A/B format code of each kind's input dtypes
_AB = {
    "f16": {"float16": 0, "bfloat16": 1},
    "tf32": {"tf32": 2, "tensor_float32": 2},
    "f8f6f4": _F8F6F4,
    "i8": {"uint8": 0, "int8": 1},
    "mxf8f6f4": _F8F6F4,
    "mxf4": {"float4_e2m1fn": 1},
    "mxf4nvf4": {"float4_e2m1fn": 1},
}
#: the D dtypes each kind accumulates into (code: F16 0, F32 1, S32 2)
_D = {"f16": ("float16", "float32"), "tf32": ("float32",), "f8f6f4": ("float16", "float32"), "i8": ("int32",),
      "mxf8f6f4": ("float32",), "mxf4": ("float32",), "mxf4nvf4": ("float32",)}  # fmt: skip
_D_CODE = {"float16": 0, "float32": 1, "int32": 2}
#: scale-factor dtypes of the block-scaled kinds (code: UE4M3 0, UE8M0 1)
_SF = {
    "mxf8f6f4": ("float8_e8m0fnu",),
    "mxf4": ("float8_e8m0fnu",),
    "mxf4nvf4": ("float8_e4m3fn", "float8_e4m3fnuz"),
}
_SF_CODE = {"float8_e4m3fn": 0, "float8_e4m3fnuz": 0, "float8_e8m0fnu": 1}
_DENSE = ("f16", "tf32", "f8f6f4", "i8")
_SCALED = ("mxf4", "mxf4nvf4", "mxf8f6f4")  # FP4 x FP4 with UE8M0 scales is mxf4
#: K of one MMA (dense, sparse) per kind
_K = {"f16": (16, 32), "tf32": (8, 16), "f8f6f4": (32, 64), "i8": (32, 64), "mxf8f6f4": (32, 64),
      "mxf4": (64, 128), "mxf4nvf4": (64, 128)}  # fmt: skip
#: inputs that may be MN-major (transposed) in shared memory
_TRANS_DENSE = frozenset({"float16", "bfloat16", "tf32", "tensor_float32", "float8_e4m3fn", "float8_e4m3fnuz",
                          "float8_e5m2", "int8", "uint8"})  # fmt: skip
_TRANS_SCALED = frozenset({"float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2"})


def _name(dt: Any) -> str:
    s = str(getattr(dt, "value", dt))
    return {"e4m3_float8": "float8_e4m3fn", "e5m2_float8": "float8_e5m2"}.get(s, s)


def mma_kind(d_dtype: str, a_dtype: str, b_dtype: str, sfa_dtype: str = "", sfb_dtype: str = "") -> str:
    """The ``.kind`` of tcgen05.mma for these dtypes (block-scaled when scale dtypes are
    given); ValueError naming them when PTX has none."""
    d, a, b, sfa, sfb = (_name(x) for x in (d_dtype, a_dtype, b_dtype, sfa_dtype, sfb_dtype))
    scaled = bool(sfa and sfb)
    for kind in _SCALED if scaled else _DENSE:
        if a not in _AB[kind] or b not in _AB[kind] or d not in _D[kind]:
            continue
        if kind == "f16" and d == "float16" and (a, b) != ("float16", "float16"):
            continue  # an f16 accumulator takes f16 inputs only
        if scaled and (sfa not in _SF[kind] or sfb not in _SF[kind]):
            continue
        return kind
    raise ValueError(
        f"tcgen05.mma has no kind for d: {d}, a: {a}, b: {b}"
        + (f", scale_a: {sfa}, scale_b: {sfb}" if scaled else "")
    )


def _check_shape(kind: str, cta_group: int, M: int, N: int, K: int, sparse: bool) -> None:
    """PTX's MxNxK table for tcgen05.mma: M by kind and CTA group, N a multiple of its step up
    to 256, K fixed by kind (doubled when sparse; the MXF4 kinds also take dense K=96)."""
    err = f"tcgen05.mma kind::{kind} has no shape M={M} N={N} K={K} (cta_group {cta_group}, sparse {sparse})"
    if cta_group not in (1, 2):
        raise ValueError(f"n_cta_groups must be 1 or 2, got {cta_group}")
    if kind in _SCALED:
        steps = {128: 8} if cta_group == 1 else {128: 16, 256: 16}
        if cta_group == 2 and sparse and M != 256:
            raise ValueError(err)
    elif cta_group == 2:
        steps = {128: 32, 256: 32}
    elif kind == "i8":
        steps = {64: 16, 128: 16}
    else:
        steps = {64: 8, 128: 16}
    step = steps.get(M)
    extra_n = (8, 24) if (kind, cta_group) == ("i8", 1) else ()
    if step is None or not (N in extra_n or (step <= N <= 256 and N % step == 0)):
        raise ValueError(err)
    k96 = not sparse and kind in ("mxf4", "mxf4nvf4") and (cta_group, M) in ((1, 128), (2, 256)) and K == 96
    if _K[kind][sparse] != K and not k96:
        raise ValueError(err)


def _fields(M: int, N: int, a: int, b: int, trans_a: bool, trans_b: bool, neg_a: bool, neg_b: bool,
            sparse: bool) -> int:  # fmt: skip
    """The fields both descriptor layouts share: sparsity flag (bit 2), A/B formats (7-9,
    10-12), negate A/B (13, 14), MN-major A/B (15, 16), N>>3 (17-22), M>>4 (24-28)."""
    v = int(sparse) << 2 | a << 7 | b << 10 | int(neg_a) << 13 | int(neg_b) << 14
    return v | int(trans_a) << 15 | int(trans_b) << 16 | (N >> 3) << 17 | (M >> 4) << 24


def encode_instr_descriptor(
    M: int, N: int, K: int, d_dtype: str, a_dtype: str, b_dtype: str, trans_a: bool, trans_b: bool,
    n_cta_groups: int = 1, neg_a: bool = False, neg_b: bool = False, sat_d: bool = False, is_sparse: bool = False,
) -> int:  # fmt: skip
    """The 32-bit instruction descriptor of a dense tcgen05.mma (ValueError for a kind,
    shape or transpose PTX does not define); saturate is bit 3, D's format bits 4-5."""
    kind = mma_kind(d_dtype, a_dtype, b_dtype)
    _check_shape(kind, int(n_cta_groups), M, N, K, bool(is_sparse))
    a, b = _name(a_dtype), _name(b_dtype)
    for flag, dt, which in ((trans_a, a, "a"), (trans_b, b, "b")):
        if flag and dt not in _TRANS_DENSE:
            raise ValueError(f"tcgen05.mma: {which}_dtype {dt} cannot be MN-major (trans_{which})")
    v = _fields(M, N, _AB[kind][a], _AB[kind][b], trans_a, trans_b, neg_a, neg_b, is_sparse)
    return v | int(bool(sat_d)) << 3 | _D_CODE[_name(d_dtype)] << 4


def encode_instr_descriptor_block_scaled(
    M: int, N: int, K: int, d_dtype: str, a_dtype: str, b_dtype: str, sfa_dtype: str, sfb_dtype: str,
    trans_a: bool, trans_b: bool, n_cta_groups: int = 1, neg_a: bool = False, neg_b: bool = False,
    is_sparse: bool = False,
) -> int:  # fmt: skip
    """The 32-bit instruction descriptor of a block-scaled tcgen05.mma: the shared fields,
    the scale-factor format (bit 23) and, for the MXF4 kinds' K=96, bit 31; the
    scale-factor ids (4-5, 29-30) start at 0 (``with_sf_id``)."""
    kind = mma_kind(d_dtype, a_dtype, b_dtype, sfa_dtype, sfb_dtype)
    _check_shape(kind, int(n_cta_groups), M, N, K, bool(is_sparse))
    a, b = _name(a_dtype), _name(b_dtype)
    for flag, dt, which in ((trans_a, a, "a"), (trans_b, b, "b")):
        if flag and dt not in _TRANS_SCALED:
            raise ValueError(f"tcgen05.mma: {which}_dtype {dt} cannot be MN-major (trans_{which})")
    v = _fields(M, N, _AB[kind][a], _AB[kind][b], trans_a, trans_b, neg_a, neg_b, is_sparse)
    v |= _SF_CODE[_name(sfa_dtype)] << 23
    if kind in ("mxf4", "mxf4nvf4") and K == 96:
        v |= 1 << 31
    return v


#: swizzle mode (0 none, 1 32B, 2 64B, 3 128B, 4 128B with 32B atoms) -> layout type, bits 61-63
_LAYOUT = {0: 0, 1: 6, 2: 4, 3: 2, 4: 1}


def encode_matrix_descriptor(smem_addr: int, ldo: int, sdo: int, swizzle: int) -> int:
    """The 64-bit shared-memory matrix descriptor: start address >> 4 (bits 0-13), leading
    and stride byte offsets in 16-byte units (16-29, 32-45), version 1 (46), base offset 0
    (49-51), absolute LBO mode 0 (52), layout type (61-63)."""
    if swizzle not in _LAYOUT:
        raise ValueError(
            f"swizzle is 0 (none), 1 (32B), 2 (64B), 3 (128B) or 4 (128B_base32B), got {swizzle}"
        )
    v = (smem_addr >> 4) & 0x3FFF | (ldo & 0x3FFF) << 16 | (sdo & 0x3FFF) << 32 | 1 << 46
    return v | _LAYOUT[swizzle] << 61


def tmem_addr(taddr: int, row: int, col: int) -> int:
    """``taddr`` moved by ``row`` lanes (high 16 bits) and ``col`` columns (low 16 bits)."""
    return ((taddr >> 16) + row & 0xFFFF) << 16 | ((taddr & 0xFFFF) + col & 0xFFFF)


def with_sf_id(desc: int, sf_id: int) -> int:
    """A block-scaled descriptor with both scale-factor ids set to ``sf_id`` (0..3)."""
    return (desc & ~0x60000030 | sf_id << 29 | sf_id << 4) & 0xFFFFFFFF


# ----------------------------------------------------------------------------- option values
@attrs.define(slots=True, frozen=True)
class TCGen05InstrDescriptorAttrs:
    """Static options of ``T.cuda.tcgen05_encode_instr_descriptor`` (TIRx's ``attrs=`` record;
    positional in TIRx's order or by keyword)."""

    d_dtype: str
    a_dtype: str
    b_dtype: str
    M: int
    N: int
    K: int
    trans_a: bool
    trans_b: bool
    n_cta_groups: int = 1
    neg_a: bool = False
    neg_b: bool = False
    sat_d: bool = False
    is_sparse: bool = False

    def encode(self) -> int:
        return encode_instr_descriptor(**attrs.asdict(self))


@attrs.define(slots=True, frozen=True)
class TCGen05InstrDescriptorBlockScaledAttrs:
    """Static options of ``T.cuda.tcgen05_encode_instr_descriptor_block_scaled`` (TIRx's
    ``attrs=`` record)."""

    d_dtype: str
    a_dtype: str
    b_dtype: str
    sfa_dtype: str
    sfb_dtype: str
    M: int
    N: int
    K: int
    trans_a: bool
    trans_b: bool
    n_cta_groups: int = 1
    neg_a: bool = False
    neg_b: bool = False
    is_sparse: bool = False

    def encode(self) -> int:
        return encode_instr_descriptor_block_scaled(**attrs.asdict(self))


# ----------------------------------------------------------------------------- ops
def _static(c: Call, params: tuple[str, ...]) -> dict:
    """The call's options by name (strings, ints, bools); TypeError for one not a literal."""
    out: dict[str, str | int | bool] = {}
    for name, a in zip(params, c.args[1:]):
        if isinstance(a, StringImm):
            out[name] = a.value
        elif isinstance(a, IntImm):
            out[name] = bool(a.value) if a.ty.is_bool else int(a.value)
        else:
            raise TypeError(f"T.{c.op.name}: {name} must be a literal (the descriptor is static), got {a}")
    return out


def _store_target(c: Call, bits: int, what: str) -> None:
    t = c.args[0].ty
    if not (isinstance(t, PointerType) and isinstance(t.element, PrimType) and t.element.bits == bits):
        raise TypeError(
            f"T.{c.op.name}: desc must point to a {bits}-bit element (a uint{bits} local), got {t}"
        )


def _value_of(c: Call, encode: Any, params: tuple[str, ...]) -> int:
    _store_target(c, 32, "instr")
    return encode(**_static(c, params))


def _c_encoder(encode: Any, params: tuple[str, ...]):
    def lower(cg: Any, c: Call) -> str:
        try:
            v = _value_of(c, encode, params)
        except TypeError as e:
            raise cg.error(str(e), c) from None
        except ValueError as e:
            raise cg.error(f"T.{c.op.name}: {e}", c) from None
        return f"(*(unsigned int*)({cg.expr(c.args[0])}) = {v:#010x}u)"

    return lower


def _store(fc: Any, ptr: Any, t: Any, values: Any, what: str):
    """An evaluator storing ``values(c)`` (one per lane) through ``ptr`` as dtype ``t``."""
    import numpy as np

    from tirx.ops import semantics as S

    def ev(c):
        p = ptr(c)
        view, idx = S.pointer_elements(c, p, t, what)
        act = np.flatnonzero(c.mask)
        view[idx[act]] = S.dtypes.to_storage(np.asarray(values(c), dtype=S.dtypes.value_np(t))[act], t)
        return None

    return ev


def _i_encoder(encode: Any, params: tuple[str, ...]):
    def interp(fc: Any, c: Call):
        import numpy as np

        from ..errors import OpError

        try:
            v = _value_of(c, encode, params)
        except (TypeError, ValueError) as e:
            raise OpError(str(e)) from None
        return _store(
            fc, fc.expr(c.args[0]), uint32, lambda ctx: np.full(ctx.N, v, dtype=np.uint32), c.op.name
        )

    return interp


def _attrs_surface(name: str, record: Any) -> Any:
    """``T.<name>(desc, attrs=<record>)``, TIRx's spelling with the options as one record, or the
    options as keywords: the same call (the IR holds the options as arguments)."""

    def surface(*args: Any, attrs: Any = None, span: Any = None, **kw: Any) -> Any:
        if attrs is not None:
            if kw:
                raise TypeError(f"T.{name}: cannot mix attrs= with option keywords {sorted(kw)}")
            if not isinstance(attrs, record):
                raise TypeError(
                    f"T.{name}: attrs must be a T.cuda.{record.__name__}, got {type(attrs).__name__}"
                )
            kw = _attrs_fields(attrs)
        return _opmod.call(name, *args, span=span, **kw)

    surface.__name__ = name.rsplit(".", 1)[-1]
    return surface


def _attrs_fields(record: Any) -> dict:
    return attrs.asdict(record)


_INSTR = ("d_dtype", "a_dtype", "b_dtype", "M", "N", "K", "trans_a", "trans_b", "n_cta_groups", "neg_a", "neg_b",
          "sat_d", "is_sparse")  # fmt: skip
_SCALED_P = ("d_dtype", "a_dtype", "b_dtype", "sfa_dtype", "sfb_dtype", "M", "N", "K", "trans_a", "trans_b",
             "n_cta_groups", "neg_a", "neg_b", "is_sparse")  # fmt: skip

ENCODE_INSTR = declare(
    "cuda.tcgen05_encode_instr_descriptor", "p s s s n n n b b n? b? b? b? b?", void, pure=False,
    device_only=True, params=("desc", *_INSTR), defaults={9: 1, 10: False, 11: False, 12: False, 13: False},
    doc="write the 32-bit tcgen05.mma instruction descriptor (dense kinds f16/tf32/f8f6f4/i8) of these static "
    "options to *desc",
    cuda=_c_encoder(encode_instr_descriptor, _INSTR), interp=_i_encoder(encode_instr_descriptor, _INSTR),
    script=_attrs_surface("cuda.tcgen05_encode_instr_descriptor", TCGen05InstrDescriptorAttrs),
)  # fmt: skip

ENCODE_INSTR_SCALED = declare(
    "cuda.tcgen05_encode_instr_descriptor_block_scaled", "p s s s s s n n n b b n? b? b? b?", void, pure=False,
    device_only=True, params=("desc", *_SCALED_P), defaults={11: 1, 12: False, 13: False, 14: False},
    doc="write the 32-bit block-scaled tcgen05.mma instruction descriptor (mxf8f6f4/mxf4/mxf4nvf4) of these "
    "static options to *desc (scale-factor ids 0: T.cuda.runtime_instr_desc sets them)",
    cuda=_c_encoder(encode_instr_descriptor_block_scaled, _SCALED_P),
    interp=_i_encoder(encode_instr_descriptor_block_scaled, _SCALED_P),
    script=_attrs_surface("cuda.tcgen05_encode_instr_descriptor_block_scaled", TCGen05InstrDescriptorBlockScaledAttrs),
)  # fmt: skip

MATRIX_DESC = Helper(
    "tirx_tcgen05_smem_desc",
    """\
// a tcgen05 shared-memory matrix descriptor: start address >> 4 (bits 0-13), leading and
// stride byte offsets in 16-byte units (16-29, 32-45), version 1 (bit 46), base offset 0,
// layout type (61-63) of the swizzle mode 0 none, 1 32B, 2 64B, 3 128B, 4 128B_base32B
__device__ __forceinline__ void tirx_tcgen05_smem_desc(unsigned long long* desc, const void* addr, int ldo,
                                                       int sdo, int swizzle) {
  unsigned long long lt = swizzle == 1 ? 6ull : swizzle == 2 ? 4ull : swizzle == 3 ? 2ull : swizzle == 4 ? 1ull : 0ull;
  unsigned a = (unsigned)__cvta_generic_to_shared(addr);
  *desc = (unsigned long long)((a >> 4) & 0x3FFFu) | ((unsigned long long)(ldo & 0x3FFF) << 16) |
          ((unsigned long long)(sdo & 0x3FFF) << 32) | (1ull << 46) | (lt << 61);
}""",
)


def _c_matrix_desc(cg: Any, c: Call) -> str:
    d, addr, ldo, sdo, sw = c.args
    try:
        _store_target(c, 64, "matrix")
    except TypeError as e:
        raise cg.error(str(e), c) from None
    if isinstance(sw, IntImm) and sw.value not in _LAYOUT:
        raise cg.error(f"T.{c.op.name}: swizzle is 0 (none), 1 (32B), 2 (64B), 3 (128B) or 4 (128B_base32B), "
                       f"got {sw.value}", c)  # fmt: skip
    cg.need(MATRIX_DESC)
    args = ", ".join(cg.expr(a) for a in (ldo, sdo, sw))
    return (
        f"tirx_tcgen05_smem_desc((unsigned long long*)({cg.expr(d)}), (const void*)({cg.expr(addr)}), {args})"
    )


ENCODE_MATRIX = declare(
    "cuda.tcgen05_encode_matrix_descriptor", "p p i i i", void, pure=False, device_only=True,
    params="desc addr ldo sdo swizzle",
    doc="write the tcgen05 shared-memory matrix descriptor of `addr` (ldo/sdo in 16-byte units, swizzle 0 none / "
    "1 32B / 2 64B / 3 128B / 4 128B_base32B) to *desc",
    cuda=_c_matrix_desc,
    interp=_opmod.NoInterp("a tcgen05 matrix descriptor holds a raw shared-window address"),
)  # fmt: skip

TMEM_ADDR = Helper(
    "tirx_tmem_addr",
    """\
// a TMEM address moved by row lanes (high 16 bits) and col columns (low 16 bits), each wrapping
__device__ __forceinline__ unsigned tirx_tmem_addr(unsigned taddr, int row, int col) {
  return ((((taddr >> 16) + (unsigned)row) & 0xFFFFu) << 16) | (((taddr & 0xFFFFu) + (unsigned)col) & 0xFFFFu);
}""",
)


def _i_tmem_addr(fc: Any, c: Call):
    import numpy as np

    fa, fr, fcol = (fc.expr(a) for a in c.args)

    def ev(ctx):
        a = fa(ctx).astype(np.int64) & 0xFFFFFFFF
        r, k = fr(ctx).astype(np.int64), fcol(ctx).astype(np.int64)
        return ((((a >> 16) + r) & 0xFFFF) << 16 | (((a & 0xFFFF) + k) & 0xFFFF)).astype(np.uint32)

    return ev


declare(
    "cuda.get_tmem_addr", "i i i", uint32, params="addr row_offset col_offset",
    doc="a TMEM address moved by row_offset lanes (high 16 bits) and col_offset columns (low 16 bits)",
    cuda=CExpr("tirx_tmem_addr({0}, {1}, {2})", helpers=(TMEM_ADDR,)), interp=_i_tmem_addr,
)  # fmt: skip


def _c_runtime_desc(cg: Any, c: Call) -> str:
    try:
        _store_target(c, 32, "instr")
    except TypeError as e:
        raise cg.error(str(e), c) from None
    p = f"(unsigned int*)({cg.expr(c.args[0])})"
    s = f"(unsigned int)({cg.expr(c.args[1])})"
    return f"(*{p} = (*{p} & ~0x60000030u) | ({s} << 29) | ({s} << 4))"


def _i_runtime_desc(fc: Any, c: Call):
    import numpy as np

    from tirx.ops import semantics as S

    fp, fs = fc.expr(c.args[0]), fc.expr(c.args[1])

    def ev(ctx):
        p = fp(ctx)
        view, idx = S.pointer_elements(ctx, p, uint32, c.op.name)
        act = np.flatnonzero(ctx.mask)
        old = view[idx[act]].astype(np.uint64)
        s = np.broadcast_to(fs(ctx).astype(np.uint64), (ctx.N,))[act]
        view[idx[act]] = ((old & ~np.uint64(0x60000030)) | (s << np.uint64(29)) | (s << np.uint64(4))).astype(
            np.uint32
        )
        return None

    return ev


declare(
    "cuda.runtime_instr_desc", "p i", void, pure=False, device_only=True, params="desc sf_id",
    doc="set both scale-factor ids (bits 4-5 and 29-30) of the block-scaled instruction descriptor at *desc",
    cuda=_c_runtime_desc, interp=_i_runtime_desc,
)  # fmt: skip


# ----------------------------------------------------------------------------- aliases
def _leader(ptr: Any, span: Any = None) -> PrimExpr:
    """The shared-window address of ``ptr`` with bit 24 cleared (TIRx builds this expression)."""
    data = getattr(ptr, "data", None)
    if data is not None and not isinstance(ptr, PrimExpr):
        ptr = data
    win = _opmod.find(shared_window=True)
    return win(ptr, span=span) & IntImm(0xFEFFFFFF, uint32)


_opmod.alias(
    "cuda.sm100_2sm_leader_smem_addr", _opmod.find(shared_window=True).name, _leader,
    doc="the leader CTA's shared address of a CTA pair: cvta_generic_to_shared(ptr) & 0xFEFFFFFF",
)  # fmt: skip
for _short, _op in (
    ("encode_instr_descriptor", ENCODE_INSTR),
    ("encode_instr_descriptor_block_scaled", ENCODE_INSTR_SCALED),
    ("encode_matrix_descriptor", ENCODE_MATRIX),
):
    _opmod.alias(
        f"cuda.tcgen05.{_short}", _op.name, _opmod.impl("script", _op) or _op,
        doc=f"TIRx's T.cuda.tcgen05 namespace spelling of T.{_op.name}",
    )  # fmt: skip
