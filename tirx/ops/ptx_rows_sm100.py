"""PTX instruction table rows for tensor-map updates and sm_100 odds and ends:
tensormap.replace, tensormap.cp_fenceproxy, st.bulk, clusterlaunchcontrol.try_cancel, clmad,
the sm_103a fabric family and the sm_107a spcompress / spdecompress.

Slot layouts follow TIRx's (apache-tvm-tirx 0.1.0a4) so its printed text loads here.
An immediate that TIRx's table fixes (the 128-byte size of tensormap.cp_fenceproxy, the
zero init value of st.bulk) is written into the instruction, not taken as an operand,
as TIRx does. TIRx's forms on 128-bit registers (clusterlaunchcontrol.query_cancel) are
left out: tirx has no 128-bit scalar type (tests/test_ptx_rows_sm100.py lists them).
"""

from __future__ import annotations

from typing import Any

from ..ir.expr import Cast
from ..ir.types import uint64
from .ptx_table import Operand, Row, declare_opcode, match, render, row, slots

__all__: list[str] = []


def _c_st_bulk(cg: Any, c: Any) -> str:
    """st.bulk's size register is 64-bit (ptxas refuses a 32-bit one): a narrower integer,
    which TIRx's text may hold, is widened here."""
    tmpl, ops = render(match(c), "st_bulk")
    size = ops[1]
    if size.ty.bits != 64:
        ops[1] = Cast(uint64, size)
    return cg.asm(c, tmpl, ops, True)


_TM = "mode=tile"
_TMS = "space?=global|shared::cta width=b1024"
declare_opcode("tensormap_replace", [
    row("tensormap_replace_address", f"{_TM} field=global_address {_TMS} type=b64", "addr:space_addr! new_val:reg@b64",
        mnemonic="tensormap.replace"),
    row("tensormap_replace_rank", f"{_TM} field=rank {_TMS} type=b32", "addr:space_addr! new_val:reg@b32",
        mnemonic="tensormap.replace"),
    row("tensormap_replace_stride", f"{_TM} field=global_stride {_TMS} type=b64",
        "addr:space_addr! ord:imm new_val:reg@b64", mnemonic="tensormap.replace"),
    row("tensormap_replace_dim", f"{_TM} field=box_dim|global_dim|element_stride {_TMS} type=b32",
        "addr:space_addr! ord:imm new_val:reg@b32", mnemonic="tensormap.replace"),
    row("tensormap_replace_enum", f"{_TM} field=elemtype|interleave_layout|swizzle_mode|fill_mode {_TMS} type=b32",
        "addr:space_addr! new_val:imm", mnemonic="tensormap.replace"),
], doc="tensormap.replace.tile: rewrite one field of a 128-byte TMA descriptor in global or shared memory")  # fmt: skip

declare_opcode("tensormap_cp_fenceproxy", [
    row("tensormap_cp_fenceproxy", "dst=global src=shared::cta proxy=tensormap::generic sem=release "
                                   "scope=cta|cluster|gpu|sys sync=sync aligned=aligned",
        "dst_mem:addr! src_mem:smem!", mnemonic="tensormap.cp_fenceproxy",
        asm="{mn} [{dst_mem}], [{src_mem}], 128;"),
], doc="tensormap.cp_fenceproxy: copy a 128-byte TMA descriptor from shared to global memory and fence it")  # fmt: skip

declare_opcode("st_bulk", [
    row("st_bulk", "weak?=weak space?=shared::cta", "addr:space_addr! size:int64", mnemonic="st.bulk",
        asm="{mn} [{addr}], {size}, 0;", cuda=_c_st_bulk),
], doc="st.bulk (sm_100): zero-fill size bytes of shared memory")  # fmt: skip

declare_opcode("clusterlaunchcontrol", [
    row("clusterlaunchcontrol_try_cancel", "action=try_cancel async_=async space?=shared::cta "
                                           "completion=mbarrier::complete_tx::bytes "
                                           "multicast?=multicast::cluster::all type=b128",
        "addr:space_addr! mbar:space_addr!"),
], doc="clusterlaunchcontrol.try_cancel (sm_100a): ask to cancel a not yet launched cluster; the "
   "16-byte response lands in shared memory, completing bytes on an mbarrier")  # fmt: skip

declare_opcode("clmad", [
    row("clmad", "mode=hi|lo type=u64", "d:dst@type a:reg@type b:reg@type c:reg@type", volatile=False),
], doc="clmad: carry-less multiply-add of 64-bit values (hi or lo half of the product)")  # fmt: skip

# --------------------------------------------------------------------------- fabric (sm_103a)
# A remote location is ``[le_id, data_offset]`` (and a counter offset for the counted forms);
# the completion token holds a dot (two mechanisms), so only the printed positional form
# spells it, as in TIRx. membermask of try_pullred is the full warp, written into the text.
_FAB = "sem=relaxed scope=sys"
_C16 = "mbarrier::complete_tx::16B.mbarrier::report::fabric"
_CB = "mbarrier::complete_tx::bytes.mbarrier::report::fabric"
_REDT = "redop=and|or|xor|min|max|add type=b32|b64|u32|s32|u64|s64|f16|bf16|f32"
_PUT = "dst_le_id:reg@u32 dst_data_off:reg@u64 src_mem:smem! size:u32 mbar:smem!"
_PUTC = "dst_le_id:reg@u32 dst_data_off:reg@u64 dst_counter_off:reg@u64 src_mem:smem! size:u32 mbar:smem!"
_ASM_PUT = "{mn} [{dst_le_id}, {dst_data_off}], [{src_mem}], {size}, [{mbar}]"
_ASM_PUTC = "{mn} [{dst_le_id}, {dst_data_off}, {dst_counter_off}], [{src_mem}], {size}, [{mbar}];"
declare_opcode("fabric", [
    row("fabric_try_get", f"action=try_get api=async dst=shared::cta completion={_CB} {_FAB} type=b128",
        "dst_mem:smem! src_le_id:reg@u32 src_data_off:reg@u64 size:u32 mbar:smem!",
        asm="{mn} [{dst_mem}], [{src_le_id}, {src_data_off}], {size}, [{mbar}];"),
    row("fabric_try_put", f"action=try_put api=async multimem?=multimem src=shared::cta completion={_C16} {_FAB} "
                          "type=b128", _PUT, asm=_ASM_PUT + ";"),
    row("fabric_try_put_cp_mask", f"action=try_put api=async multimem?=multimem src=shared::cta completion={_C16} "
                                  f"cp_mask=cp_mask {_FAB} type=b128", _PUT + " byte_mask:reg@u16",
        asm=_ASM_PUT + ", {byte_mask};"),
    row("fabric_try_put_counted", f"action=try_put api=async multimem?=multimem src=shared::cta "
                                  f"completion={_C16}.counted::bytes {_FAB} type=b128", _PUTC, asm=_ASM_PUTC),
    row("fabric_try_red", f"action=try_red api=async multimem?=multimem src=shared::cta completion={_C16} {_FAB} "
                          f"{_REDT}|f64", _PUT, asm=_ASM_PUT + ";"),
    row("fabric_try_red_counted", f"action=try_red api=async multimem?=multimem src=shared::cta "
                                  f"completion={_C16}.counted::bytes {_FAB} {_REDT}|f64", _PUTC, asm=_ASM_PUTC),
    row("fabric_try_pullred", f"action=try_pullred api=async multimem=multimem dst=shared::cta completion={_CB} "
                              f"{_FAB} {_REDT} sync=sync",
        "dst_mem:smem! src_le_id:reg@u32 src_data_off:reg@u64 size:u32 mbar:smem!",
        asm="{mn} [{dst_mem}], [{src_le_id}, {src_data_off}], {size}, [{mbar}], 0xFFFFFFFF;"),
    row("fabric_submit", "action=submit submitop?=op_restrict::fetching"),
    row("fabric_wait", "action=wait waitop=sync_restrict::reads"),
], doc="fabric (sm_103a): asynchronous get/put/reduce with remote memory over the fabric, submit, wait")  # fmt: skip

# --------------------------------------------------------------------------- spcompress / spdecompress (sm_107a)
_SP_BITS = {"b2": 2, "b4": 4, "b8": 8, "b16": 16}


def _spcompress_lanes(role: str):
    """spcompress.x{n}: 2n data registers in, n compressed registers and the metadata (n
    indices of .idxsize bits, packed into .elemsize-bit registers) out."""

    def count(m: dict) -> int:
        n = int(m["num"][1:])
        if role == "data":
            return 2 * n
        if role == "cdata":
            return n
        elem = _SP_BITS[m["elemsize"]]
        return -(-n * _SP_BITS[m["idxsize"]] // elem)

    return count


def _spdecompress_lanes(role: str):
    """spdecompress.sp::{s}:{d}.x{n}: s*n compressed elements and their s*n indices in, d*n
    elements out, each packed into 32-bit registers."""

    def count(m: dict) -> int:
        s, d = (int(v) for v in m["spfactor"].split("::")[1].split(":"))
        n = int(m["num"][1:])
        per = {"mdata": s * _SP_BITS[m["idxsize"]], "cdata": s * _SP_BITS[m["elemsize"]],
               "data": d * _SP_BITS[m["elemsize"]]}[role]  # fmt: skip
        return -(-per * n // 32)

    return count


_SP = "elemsize=b8|b16 idxsize=b2|b4"
_NUMS = "num=x1|x2|x4|x8|x16|x32|x64"
declare_opcode("spcompress", [
    Row("spcompress", slots(f"{_SP} spfactor=sp::2:4 {_NUMS}"),
        (Operand("mdata", "dst", ty="b32", lanes=_spcompress_lanes("mdata")),
         Operand("cdata", "dst", ty="b32", lanes=_spcompress_lanes("cdata")),
         Operand("data", "reg", ty="b32", lanes=_spcompress_lanes("data")), Operand("spdesc", "reg", ty="b32"))),
], doc="spcompress (sm_107a): compress 2:4-sparse registers into values and index metadata")  # fmt: skip
declare_opcode("spdecompress", [
    Row("spdecompress", slots(f"{_SP} spfactor=sp::1:2|sp::1:4|sp::1:8|sp::1:16|sp::2:4|sp::2:8|sp::2:16|sp::4:8|"
                              f"sp::4:16 {_NUMS}"),
        (Operand("data", "dst", ty="b32", lanes=_spdecompress_lanes("data")),
         Operand("mdata", "reg", ty="b32", lanes=_spdecompress_lanes("mdata")),
         Operand("cdata", "reg", ty="b32", lanes=_spdecompress_lanes("cdata")))),
], doc="spdecompress (sm_107a): expand compressed values and index metadata into sparse registers")  # fmt: skip
