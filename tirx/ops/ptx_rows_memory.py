"""PTX instruction table rows for memory: ld, ldu, st, atom, red, st.async, red.async,
getctarank, ldmatrix, stmatrix, and the address/cache helpers isspacep, prefetchu,
createpolicy, discard, applypriority.

Slot layouts follow TIRx's (apache-tvm-tirx 0.1.0a4) so its printed text loads here;
registers are buffer elements (``d`` written, values read), vectors take one operand per
lane (``T.ptx.ld.global_.v4.u32(y[0], y[1], y[2], y[3], p)``). An address takes a
32-bit shared-window address when the ``space`` slot names a shared space, else a
generic pointer (tirx/ops/ptx_table.py). Of the forms TIRx marks sm_100 or later, the
ldmatrix/stmatrix b8 matrices are rows; the rest are left out (tests/test_ptx_rows_table.py).
"""

from __future__ import annotations

from .ptx_table import Operand, Row, declare_opcode, row, slots

__all__: list[str] = []

_SCOPE = "scope?=cta|cluster|gpu|sys"
_SPACE = "space?=global|shared|shared::cta|shared::cluster|local"
_L1 = "evict?=L1::evict_normal|L1::evict_unchanged|L1::evict_first|L1::evict_last|L1::no_allocate"
_HINT = "hint?=L2::cache_hint"
_TYPES = "b8|u8|s8|b16|u16|s16|b32|u32|s32|b64|u64|s64|f32|f64"
_POLICY = "cache_policy:reg@b64?hint"

# --------------------------------------------------------------------------- ld / st
_LD = f"{_SCOPE} {_SPACE} cop?=ca|cg|cs|lu|cv nc?=nc {_L1} {_HINT} prefetch?=L2::64B|L2::128B|L2::256B"
declare_opcode("ld", [
    row("ld", f"mmio?=mmio sem?=weak|acquire|relaxed|volatile {_LD} type={_TYPES}|b128",
        f"d:dst@type addr:space_addr! {_POLICY}"),
    row("ld_vec", f"sem?=weak|acquire|relaxed|volatile {_LD} vec=v2|v4 type={_TYPES}",
        f"d:dst@type*vec addr:space_addr! {_POLICY}"),
    row("ld_proxy_readonly", f"space?=global type={_TYPES} proxy=proxy::readonly", "d:dst@type addr:space_addr!"),
], doc="ld: load a register (or a .v2/.v4 vector) from memory, with state space, ordering and cache hints")  # fmt: skip

_ST = f"{_SCOPE} {_SPACE} cop?=wb|cg|cs|wt {_L1} {_HINT}"
declare_opcode("st", [
    row("st", f"mmio?=mmio sem?=weak|release|relaxed|volatile {_ST} type={_TYPES}|b128",
        f"addr:space_addr! value:reg@type {_POLICY}"),
    row("st_vec", f"sem?=weak|release|relaxed|volatile {_ST} vec=v2|v4 type={_TYPES}",
        f"addr:space_addr! value:reg@type*vec {_POLICY}"),
], doc="st: store a register (or a .v2/.v4 vector) to memory, with state space, ordering and cache hints")  # fmt: skip

# --------------------------------------------------------------------------- atom / red
_ASPACE = "space?=global|shared|shared::cta|shared::cluster"
_ATOM_SEM = f"sem?=relaxed|acquire|release|acq_rel {_SCOPE}"
_ATOM_OPS = "op=and|or|xor|add|inc|dec|min|max"
_ATOM_T = "type=b32|b64|u32|u64|s32|s64|f32|f64"
_HALF = "type=f16|bf16|f16x2|bf16x2"
#: the types each operation takes (PTX ISA, atom / red: the syntax block's ``.type`` list is the
#: union over the operations; ptxas refuses the other pairings, so the table does where written)
_OP_TYPES = {
    "and": ("b32", "b64"), "or": ("b32", "b64"), "xor": ("b32", "b64"), "inc": ("u32",), "dec": ("u32",),
    "min": ("u32", "s32", "u64", "s64"), "max": ("u32", "s32", "u64", "s64"),
    "add": ("u32", "s32", "u64", "f32", "f64"),
}  # fmt: skip


def _op_types(mods: dict) -> str | None:
    """Refuse an atom / red operation on a type the ISA does not pair it with."""
    allowed = _OP_TYPES[mods["op"]]
    if mods["type"] in allowed:
        return None
    return f".{mods['op']} takes {' or '.join('.' + t for t in allowed)}, not .{mods['type']}"


_D = "d:dst@type?"  # absent: PTX's sink `_` (TIRx's bit-bucket forms)
_DV = "d:dst@type*vec"
declare_opcode("atom", [
    row("atom_f32_noftz", f"{_ATOM_SEM} {_ASPACE} op=add noftz=noftz {_HINT} type=f32",
        f"{_D} addr:space_addr! value:reg@type {_POLICY}"),
    row("atom_vec_f32_noftz", f"{_ATOM_SEM} space?=global op=add noftz=noftz {_HINT} vec=v2|v4 type=f32",
        f"{_DV} addr:space_addr! value:reg@type*vec {_POLICY}"),
    row("atom", f"{_ATOM_SEM} {_ASPACE} {_ATOM_OPS} {_HINT} {_ATOM_T}",
        f"{_D} addr:space_addr! value:reg@type {_POLICY}", check_mods=_op_types),
    row("atom_cas", f"{_ATOM_SEM} {_ASPACE} op=cas type=b16|b32|b64|b128",
        f"{_D} addr:space_addr! compare:reg@type value:reg@type"),
    row("atom_exch", f"{_ATOM_SEM} {_ASPACE} op=exch {_HINT} type=b32|b64|b128",
        f"{_D} addr:space_addr! value:reg@type {_POLICY}"),
    row("atom_half", f"{_ATOM_SEM} {_ASPACE} op=add noftz=noftz {_HINT} {_HALF}",
        f"{_D} addr:space_addr! value:reg@type {_POLICY}"),
    row("atom_vec_half", f"{_ATOM_SEM} space?=global op=add|min|max noftz=noftz {_HINT} vec=v2|v4|v8 {_HALF}",
        f"{_DV} addr:space_addr! value:reg@type*vec {_POLICY}"),
    row("atom_vec_f32", f"{_ATOM_SEM} space?=global op=add {_HINT} vec=v2|v4 type=f32",
        f"{_DV} addr:space_addr! value:reg@type*vec {_POLICY}"),
], doc="atom: atomic read-modify-write (d receives the old value; leave d out for PTX's sink _)")  # fmt: skip

_RED_SEM = f"sem?=relaxed|release {_SCOPE}"
declare_opcode("red", [
    row("red_f32_noftz", f"{_RED_SEM} {_ASPACE} op=add noftz=noftz {_HINT} type=f32",
        f"addr:space_addr! value:reg@type {_POLICY}"),
    row("red_vec_f32_noftz", f"{_RED_SEM} space?=global op=add noftz=noftz {_HINT} vec=v2|v4 type=f32",
        f"addr:space_addr! value:reg@type*vec {_POLICY}"),
    row("red_half", f"{_RED_SEM} {_ASPACE} op=add noftz=noftz {_HINT} {_HALF}",
        f"addr:space_addr! value:reg@type {_POLICY}"),
    row("red_vec_half", f"{_RED_SEM} space?=global op=add|min|max noftz=noftz {_HINT} vec=v2|v4|v8 {_HALF}",
        f"addr:space_addr! value:reg@type*vec {_POLICY}"),
    row("red_vec_f32", f"{_RED_SEM} space?=global op=add {_HINT} vec=v2|v4 type=f32",
        f"addr:space_addr! value:reg@type*vec {_POLICY}"),
    row("red", f"{_RED_SEM} {_ASPACE} {_ATOM_OPS} {_HINT} {_ATOM_T}", f"addr:space_addr! value:reg@type {_POLICY}",
        check_mods=_op_types),
], doc="red: atomic reduction into memory (no result)")  # fmt: skip

# --------------------------------------------------------------------------- st.async
_CTX = "complete=mbarrier::complete_tx::bytes"
declare_opcode("st_async", [
    row("st_async", f"weak?=weak space?=shared::cluster {_CTX} type=b32|b64|b128|u32|u64|s32|s64|f32|f64",
        "addr:smem! b:reg@type mbar:smem!", mnemonic="st.async"),
    row("st_async_vec", f"weak?=weak space?=shared::cluster {_CTX} vec=v2|v4 type=b32|b64|u32|u64|s32|s64|f32|f64",
        "addr:smem! b:reg@type*vec mbar:smem!", mnemonic="st.async"),
], doc="st.async: store to another CTA's shared memory of the cluster, completing bytes on its mbarrier")  # fmt: skip

# --------------------------------------------------------------------------- cluster ranks
declare_opcode("getctarank", [
    row("getctarank", "space=shared::cluster type=u32|u64", "d:dst@u32 a:reg@type", volatile=False),
    row("getctarank_generic", "type=u32|u64", "d:dst@u32 a:reg@type", volatile=False),
], doc="getctarank: the rank in the cluster of the CTA whose shared memory an address names")  # fmt: skip

# --------------------------------------------------------------------------- ldmatrix / stmatrix
_MAT = "sync=sync aligned=aligned shape=m8n8 num=x1|x2|x4 trans?=trans space?=shared|shared::cta"
_SPC = "space?=shared|shared::cta"


def _ld_lanes(mods: dict) -> int:
    """ldmatrix's registers: 1, 2 or 4 per .num, two per matrix for .m16n16."""
    return int(mods["num"][1:]) * (2 if mods["shape"] == "m16n16" else 1)


def _b8fmt(mods: dict) -> str | None:
    if mods["shape"] == "m8n16":
        return "the .m8n16 decompression line takes no .trans" if mods["trans"] else None
    if not mods["trans"]:
        return "the .m16n16 decompression line requires .trans"
    return "shape .m16n16 supports only .x1 and .x2" if mods["num"] == "x4" else None


_LDR = Operand("r", "dst", ty="b32", lanes=_ld_lanes)
_P = Operand("p", "space_addr", mem=True)
declare_opcode("ldmatrix", [
    row("ldmatrix", f"{_MAT} type=b16", "r:dst@b32*num p:space_addr!"),
    # sm_100a: 16x16 b8 matrices (two registers each), and the 6/4-bit decompressing loads
    Row("ldmatrix_m16n16_b8", slots(f"sync=sync aligned=aligned shape=m16n16 num=x1|x2 trans=trans {_SPC} type=b8"),
        (_LDR, _P)),
    Row("ldmatrix_b8fmt", slots(f"sync=sync aligned=aligned shape=m8n16|m16n16 num=x1|x2|x4 trans?=trans {_SPC} "
                                "dst_fmt=b8x16 src_fmt=b6x16_p32|b4x16_p64"), (_LDR, _P), check_mods=_b8fmt),
], doc="ldmatrix: load 8x8 b16 (sm_100a: 16x16 b8, decompressed b6/b4) matrices from shared memory into "
   "the warp's registers")  # fmt: skip
declare_opcode("stmatrix", [
    row("stmatrix", f"{_MAT} type=b16", "p:space_addr! r:reg@b32*num"),
    # sm_100a: 16x8 b8 matrices, always transposed
    row("stmatrix_m16n8_b8", f"sync=sync aligned=aligned shape=m16n8 num=x1|x2|x4 trans=trans {_SPC} type=b8",
        "p:space_addr! r:reg@b32*num"),
], doc="stmatrix: store 8x8 b16 (sm_100a: 16x8 b8) matrices from the warp's registers to shared memory "
   "(x1/x2/x4)")  # fmt: skip

# --------------------------------------------------------------------------- ldu, red.async
declare_opcode("ldu", [
    row("ldu", f"space?=global type={_TYPES}|b128", "d:dst@type addr:space_addr!"),
    row("ldu_vec", f"space?=global vec=v2|v4 type={_TYPES}", "d:dst@type*vec addr:space_addr!"),
], doc="ldu: load a value (or vector) read-only and uniform across the warp")  # fmt: skip
declare_opcode("red_async", [
    row("red_async", f"sem=relaxed scope=cluster space?=shared::cluster {_CTX} "
                     "op=inc|dec|min|max|and|or|xor|add type=u32|s32|u64|b32",
        "addr:smem! value:reg@type mbar:smem!", mnemonic="red.async"),
], doc="red.async: reduce into another CTA's shared memory of the cluster, completing bytes on its mbarrier")  # fmt: skip

# --------------------------------------------------------------------------- addresses and cache policy
declare_opcode("isspacep", [
    row("isspacep", "space=const|global|local|shared|shared::cta|shared::cluster|param|param::entry",
        "p:dst@pred a:addr", volatile=False),
], doc="isspacep: whether a generic address lies in a state space")  # fmt: skip
declare_opcode("prefetchu", [row("prefetchu", "level=L1", "addr:addr!")],
               doc="prefetchu.L1: prefetch a line for uniform access")  # fmt: skip
_EVICT = "L2::evict_last|L2::evict_normal|L2::evict_first|L2::evict_unchanged"
declare_opcode("createpolicy", [
    row("createpolicy_range", f"mode=range space?=global primary={_EVICT} secondary?=L2::evict_first|L2::evict_unchanged "
                              "type=b64", "cache_policy:dst@type addr:addr! primary_size:reg@u32 total_size:reg@u32"),
    row("createpolicy_fractional", f"mode=fractional primary={_EVICT} "
                                   "secondary?=L2::evict_first|L2::evict_unchanged type=b64",
        "cache_policy:dst@type fraction:reg@f32?"),
    row("createpolicy_cvt", "mode=cvt level=L2 type=b64", "cache_policy:dst@type access_property:reg@b64"),
], doc="createpolicy: make a 64-bit L2 cache policy for .L2::cache_hint loads and stores")  # fmt: skip
declare_opcode("discard", [row("discard", "space?=global level=L2", "addr:addr!", asm="{mn} [{addr}], 128;")],
               doc="discard.L2: drop a 128-byte line from L2 without writing it back")  # fmt: skip
declare_opcode("applypriority", [
    row("applypriority", "space?=global priority=L2::evict_normal", "addr:addr!", asm="{mn} [{addr}], 128;"),
], doc="applypriority: set a 128-byte L2 line's eviction priority")  # fmt: skip
