"""PTX instruction table rows for multimem (NVLink multicast memory): multimem.ld_reduce,
multimem.red, multimem.st, multimem.cp[.reduce].async.bulk and the sm_100 multimem.red.async /
multimem.st.async.

Each TIRx family is its own opcode (``T.ptx.multimem_ld_reduce``), as in TIRx
(apache-tvm-tirx 0.1.0a4), whose slot layouts these rows follow so its printed text loads
here; the emitted mnemonic is the dotted one (``multimem.ld_reduce``). The address is a
multicast object's generic address (a pointer or a 64-bit value); vectors take one operand
per lane.
"""

from __future__ import annotations

from .ptx_table import declare_opcode, row

__all__: list[str] = []

_SCOPE = "scope?=cta|cluster|gpu|sys"
_INT = "type=b32|b64|u32|u64|s32|s64"
_FLT = "type=f16|f16x2|bf16|bf16x2|f32|f64"

declare_opcode("multimem_ld_reduce", [
    row("multimem_ld_reduce", f"sem?=weak|relaxed|acquire {_SCOPE} space?=global op=min|max|add|and|or|xor {_INT}",
        "d:dst@type addr:addr!", mnemonic="multimem.ld_reduce"),
    row("multimem_ld_reduce_f", f"sem?=weak|relaxed|acquire {_SCOPE} space?=global op=min|max|add acc?=acc::f32 "
                                f"{_FLT}", "d:dst@type addr:addr!", mnemonic="multimem.ld_reduce"),
    row("multimem_ld_reduce_f_vec", f"sem?=weak|relaxed|acquire {_SCOPE} space?=global op=min|max|add "
                                    f"acc?=acc::f32 vec=v2|v4|v8 {_FLT}",
        "d:dst@type*vec addr:addr!", mnemonic="multimem.ld_reduce"),
], doc="multimem.ld_reduce: load from every copy of a multicast address and reduce")  # fmt: skip

declare_opcode("multimem_red", [
    row("multimem_red", f"sem?=relaxed|release {_SCOPE} space?=global op=min|max|add|and|or|xor {_INT}",
        "addr:addr! b:reg@type", mnemonic="multimem.red"),
    row("multimem_red_f", f"sem?=relaxed|release {_SCOPE} space?=global op=add {_FLT}",
        "addr:addr! b:reg@type", mnemonic="multimem.red"),
    row("multimem_red_f_vec", f"sem?=relaxed|release {_SCOPE} space?=global op=add vec=v2|v4|v8 {_FLT}",
        "addr:addr! b:reg@type*vec", mnemonic="multimem.red"),
], doc="multimem.red: reduce a value into every copy of a multicast address")  # fmt: skip

declare_opcode("multimem_st", [
    row("multimem_st", f"sem?=weak|relaxed|release {_SCOPE} space?=global {_INT}",
        "addr:addr! b:reg@type", mnemonic="multimem.st"),
    row("multimem_st_f", f"sem?=weak|relaxed|release {_SCOPE} space?=global {_FLT}",
        "addr:addr! b:reg@type", mnemonic="multimem.st"),
    row("multimem_st_f_vec", f"sem?=weak|relaxed|release {_SCOPE} space?=global vec=v2|v4|v8 {_FLT}",
        "addr:addr! b:reg@type*vec", mnemonic="multimem.st"),
], doc="multimem.st: store a value to every copy of a multicast address")  # fmt: skip

declare_opcode("multimem_red_async", [
    row("multimem_red_async", "sem=release scope=gpu|sys space?=global op=add type=u32|s32|u64",
        "addr:addr! value:reg@type", mnemonic="multimem.red.async"),
], doc="multimem.red.async (sm_100): asynchronous release reduction into a multicast address")  # fmt: skip

declare_opcode("multimem_st_async", [
    row("multimem_st_async", "sem=release scope=gpu|sys space?=global "
                             "type=b8|b16|b32|b64|u8|u16|u32|u64|s8|s16|s32|s64|f32|f64",
        "addr:addr! b:reg@type", mnemonic="multimem.st.async"),
], doc="multimem.st.async (sm_100): asynchronous release store to a multicast address")  # fmt: skip

_BULK = f"api=async kind=bulk sem?=relaxed {_SCOPE} dst=global src=shared::cta completion=bulk_group"
declare_opcode("multimem_cp", [
    row("multimem_cp_reduce_async_bulk_f32_noftz", f"op=reduce {_BULK} redop=add noftz=noftz type=f32",
        "dst_mem:addr! src_mem:smem! size:u32", mnemonic="multimem.cp"),
    row("multimem_cp_async_bulk", f"api=async kind=bulk sem?=weak|relaxed {_SCOPE} dst=global src=shared::cta "
                                  "completion=bulk_group cp_mask?=cp_mask type?=b128",
        "dst_mem:addr! src_mem:smem! size:u32 byte_mask:reg@u16?cp_mask", mnemonic="multimem.cp"),
    row("multimem_cp_reduce_async_bulk", f"op=reduce {_BULK} redop=add|min|max|inc|dec|and|or|xor noftz?=noftz "
                                         "type=f16|bf16|b32|u32|s32|b64|u64|s64|f32|f64",
        "dst_mem:addr! src_mem:smem! size:u32", mnemonic="multimem.cp"),
], doc="multimem.cp[.reduce].async.bulk: bulk copy (or reduce) shared memory into a multicast address")  # fmt: skip
