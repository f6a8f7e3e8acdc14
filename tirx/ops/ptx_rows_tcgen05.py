"""PTX instruction table rows for tcgen05 (Blackwell sm_100a tensor cores and tensor memory).

One opcode, ``T.ptx.tcgen05``, as in TIRx (apache-tvm-tirx 0.1.0a4), whose slot layouts
these rows follow so its printed text loads here: TMEM allocation (alloc, dealloc,
relinquish_alloc_permit), loads and stores between TMEM and registers (ld, st, their
``16x32bx2`` split forms), wait::ld/st, the thread-sync fences, tcgen05.cp (shared memory
to TMEM), tcgen05.mma (ss/ts, block-scaled, weight-stationary ``.ws``) and tcgen05.commit.

A TMEM address is a 32-bit value (lane in the high half, column in the low half) written
as a memory operand ``[taddr]``; descriptors are 64-bit values
(``T.cuda.tcgen05_encode_matrix_descriptor``), the instruction descriptor 32 bits
(``T.cuda.tcgen05_encode_instr_descriptor``); ``enable_input_d`` is a predicate input.
A register vector's length follows the shape and ``.num`` (``_ldst_lanes``) or the CTA
group (``disable_output_lane``: 4 or 8 registers).

This is compile-only in tirx: NVRTC compiles it for sm_100a without a GPU; no Blackwell
GPU runs the tests (docs/blackwell.md). ``tcgen05.ld.red`` (sm_103a) compiles for sm_103a;
the forms TIRx marks sm_107 (exclusive alloc, commit with sync_restrict or a 16/32-bit
multicast mask, ld.spcompress, the ti16 / lut / collector / ashift / block-size mma forms)
are rows too, checked against TIRx's emitted text (NVRTC 13.0 cannot target sm_107).
"""

from __future__ import annotations

from .ptx_table import Operand, Row, slots
from .ptx_table import declare_opcode as _declare

__all__: list[str] = []

#: registers per ``.num`` unit of each tcgen05.ld/st shape (16x128b: 2, 16x256b: 4)
_SHAPE_REGS = {"16x64b": 1, "16x128b": 2, "16x256b": 4, "32x32b": 1, "16x32bx2": 1}


def _ldst_lanes(mods: dict) -> int:
    """The register count of a tcgen05.ld/st: ``.num`` (x1..x128) times the shape's
    registers per unit (``.pack::16b`` / ``.unpack::16b`` keep the count)."""
    return int(mods["num"][1:]) * _SHAPE_REGS[mods["shape"]]


def _mask_lanes(mods: dict) -> int:
    """``disable_output_lane``: one 32-bit mask per 32 lanes of each CTA of the group."""
    return 8 if mods["cta_group"] == "cta_group::2" else 4


_CG = "cta_group=cta_group::1|cta_group::2"
_SA = "sync=sync aligned=aligned"
_NUM = "num=x1|x2|x4|x8|x16|x32|x64|x128"
_TADDR = Operand("taddr", "u32", mem=True)
_R_OUT = Operand("r", "dst", ty="b32", lanes=_ldst_lanes)
_R_IN = Operand("r", "reg", ty="b32", lanes=_ldst_lanes)
_SPLIT = Operand("imm_half_splitoff", "imm")
# tcgen05.ld.red (sm_103a): the registers and the reduction of each row, typed by .type
_R_RED = Operand("r", "dst", ty="type", lanes=_ldst_lanes)
_REDVAL = Operand("redval", "dst", ty="type")
_KIND = "kind=kind::f16|kind::tf32|kind::f8f6f4|kind::i8"
_COLL = "|".join(f"collector::{ab}::{u}" for ab in ("a",) for u in ("fill", "use", "lastuse", "discard"))
_COLL_B = "|".join(f"collector::b{i}::{u}" for i in range(4) for u in ("fill", "use", "lastuse", "discard"))


def _ops(*names: str) -> tuple[Operand, ...]:
    """The mma operands by name (their kinds are fixed across the mma forms)."""
    table = {
        "d_tmem": Operand("d_tmem", "u32", mem=True),
        "a_desc": Operand("a_desc", "reg", ty="u64"),
        "a_tmem": Operand("a_tmem", "u32", mem=True),
        "b_desc": Operand("b_desc", "reg", ty="u64"),
        "idesc": Operand("idesc", "reg", ty="u32"),
        "disable_output_lane": Operand("disable_output_lane", "reg", ty="u32", lanes=_mask_lanes),
        "sfa_tmem": Operand("sfa_tmem", "u32", mem=True),
        "sfb_tmem": Operand("sfb_tmem", "u32", mem=True),
        "enable_input_d": Operand("enable_input_d", "reg", ty="pred"),
        "zero_col_mask": Operand("zero_col_mask", "reg", ty="u64"),
        "sp_meta_tmem": Operand("sp_meta_tmem", "u32", mem=True),
    }
    return tuple(table[n] for n in names)


def _row(name: str, spec: str, operands: tuple = (), **kw) -> Row:
    return Row(name, slots(spec), operands, **kw)


_BS = "block_scale=block_scale scale_vec=scale_vec::1X|scale_vec::2X|scale_vec::4X"
_BS_KIND = "kind=kind::mxf8f6f4|kind::mxf4|kind::mxf4nvf4"

_CA = "|".join(f"collector::a::{u}" for u in ("fill", "use", "lastuse", "discard"))
_CB1 = "|".join(f"collector::b::{u}" for u in ("fill", "use", "lastuse", "discard"))
_KIND_T = "kind=kind::f16|kind::tf32|kind::f8f6f4|kind::ti16"
_SS = ("d_tmem", "a_desc", "b_desc")
_TS = ("d_tmem", "a_tmem", "b_desc")
_MMA_TAIL = ("idesc", "disable_output_lane", "enable_input_d")
_SCALE_TAIL = ("idesc", "sfa_tmem", "sfb_tmem", "enable_input_d")
_LUT = Operand("b_decompress_metadata", "u32", mem=True)


def _mask_ty(mods: dict) -> str:
    """The CTA mask of tcgen05.commit's multicast: 32 bits for ``::32b``, else 16."""
    return "u32" if mods["multicast"].endswith("::32b") else "u16"


def _mma107(name: str, spec: str, names: tuple, lut: bool = False) -> Row:
    """An sm_107 tcgen05.mma form; ``lut``: B is a compressed descriptor and a TMEM table."""
    ops = list(_ops(*names))
    if lut:
        ops[2] = Operand("b_compressed_desc", "reg", ty="u64")
        ops.insert(3, _LUT)
    return _row(name, spec, tuple(ops))


def _variants(
    name: str, head: str, tail: str, extra: tuple = (), cb: str = f"collector_b={_CB1}"
) -> list[Row]:
    """The ss/ts forms of one mma head, with and without the collector_b slot."""
    rows = []
    for ab, src in (("ss", _SS), ("ts", _TS)):
        rows.append(_mma107(f"{name}_{ab}", f"{head} {tail}".strip(), (*src, *extra, *_MMA_TAIL)))
        if cb:
            rows.append(
                _mma107(f"{name}_{ab}_collector_b", f"{head} {tail} {cb}".strip(), (*src, *extra, *_MMA_TAIL))
            )
    return rows


def _ws107(name: str, head: str, extra: tuple = ()) -> list[Row]:
    rows = []
    for ab, src in (("ss", _SS), ("ts", _TS)):
        spec = f"{head} cta_group=cta_group::1 kind=kind::ti16 collector_b?={_COLL_B}"
        rows.append(_row(f"{name}_{ab}", spec, _ops(*src, *extra, "idesc", "enable_input_d")))
        rows.append(
            _row(f"{name}_{ab}_mask", spec, _ops(*src, *extra, "idesc", "enable_input_d", "zero_col_mask"))
        )
    return rows


_MDATA = Operand("mdata", "dst", ty="b32", lanes=lambda m: -(-int(m["num"][1:]) // 32))
_CDATA = Operand("cdata", "dst", ty="b32", lanes=lambda m: int(m["num"][1:]) // 2)
_SPC = f"{_SA} shape=32x32b num=x4|x8|x16|x32|x64|x128 rowop=min|max spfactor=sp::2:4 abs?=abs"
_MASK = Operand("cta_mask", "reg", ty=_mask_ty)
_COMMIT = f"action=commit {_CG} completion=mbarrier::arrive::one"
_SR = "sync_restrict=sync_restrict::shared::read::mma::a"
_BS_HEAD = f"action=mma {_CG}"
_SM107_ROWS = [
    _row(
        "tcgen05_alloc_exclusive",
        f"action=alloc exclusive=exclusive {_CG} {_SA} space?=shared::cta type=b32",
        (Operand("dst", "space_addr", mem=True), Operand("ncols", "u32")),
    ),
    _row(
        "tcgen05_dealloc_exclusive",
        f"action=dealloc exclusive=exclusive {_CG} {_SA} type=b32",
        (Operand("taddr", "u32"), Operand("ncols", "u32")),
    ),
    _row(
        "tcgen05_commit_multicast_width",
        f"{_COMMIT} space?=shared::cluster "
        "multicast=multicast::cluster::16b|multicast::cluster::32b type=b64",
        (Operand("mbar", "space_addr", mem=True), _MASK),
    ),
    _row(
        "tcgen05_commit_sync_restrict",
        f"{_COMMIT} {_SR} space?=shared::cluster type=b64",
        (Operand("mbar", "space_addr", mem=True),),
    ),
    _row(
        "tcgen05_commit_sync_restrict_multicast",
        f"{_COMMIT} {_SR} space?=shared::cluster "
        "multicast=multicast::cluster|multicast::cluster::16b|multicast::cluster::32b type=b64",
        (Operand("mbar", "space_addr", mem=True), _MASK),
    ),
    _row(
        "tcgen05_ld_spcompress",
        f"action=ld spcompress=spcompress {_SPC} type=f32 idxsize=b2",
        (_MDATA, _CDATA, _TADDR),
    ),
    _row(
        "tcgen05_ld_red_spcompress",
        f"action=ld red=red spcompress=spcompress {_SPC} nan?=NaN type=f32 idxsize=b2",
        (_MDATA, _CDATA, Operand("redval", "dst", ty="f32"), _TADDR),
    ),
    *_variants("tcgen05_mma_ti16", f"action=mma {_CG}", "kind=kind::ti16"),
    *_variants("tcgen05_mma_sp_ti16", f"action=mma sp=sp {_CG}", "kind=kind::ti16", ("sp_meta_tmem",)),
    *_ws107("tcgen05_mma_ws_ti16", "action=mma ws=ws"),
    *_ws107("tcgen05_mma_ws_sp_ti16", "action=mma ws=ws sp=sp", ("sp_meta_tmem",)),
    _mma107(
        "tcgen05_mma_lut_b_ss",
        f"action=mma {_CG} kind=kind::f8f6f4 decompress=decompress::lut::b "
        f"collector_a?={_CA} collector_b?={_CB1}",
        (*_SS, *_MMA_TAIL),
        lut=True,
    ),
    _mma107(
        "tcgen05_mma_lut_b_ts",
        f"action=mma {_CG} kind=kind::f8f6f4 decompress=decompress::lut::b "
        f"collector_a?={_CA} collector_b?={_CB1}",
        (*_TS, *_MMA_TAIL),
        lut=True,
    ),
    _mma107(
        "tcgen05_mma_block_scale_lut_b_ss",
        f"{_BS_HEAD} kind=kind::mxf8f6f4 block_scale=block_scale "
        f"decompress=decompress::lut::b block_size?=block32 collector_a?={_CA} collector_b?={_CB1}",
        (*_SS, *_SCALE_TAIL),
        lut=True,
    ),
    _mma107(
        "tcgen05_mma_block_scale_lut_b_ts",
        f"{_BS_HEAD} kind=kind::mxf8f6f4 block_scale=block_scale "
        f"decompress=decompress::lut::b block_size?=block32 collector_a?={_CA} collector_b?={_CB1}",
        (*_TS, *_SCALE_TAIL),
        lut=True,
    ),
    _mma107(
        "tcgen05_mma_collector_ab_ss",
        f"action=mma {_CG} {_KIND_T} collector_a={_CA} collector_b={_CB1}",
        (*_SS, *_MMA_TAIL),
    ),
    _mma107(
        "tcgen05_mma_sp_collector_ab_ss",
        f"action=mma sp=sp {_CG} {_KIND_T} collector_a={_CA} collector_b={_CB1}",
        (*_SS, "sp_meta_tmem", *_MMA_TAIL),
    ),
    _mma107(
        "tcgen05_mma_ashift_collector_b_ts",
        f"action=mma {_CG} {_KIND_T} ashift=ashift collector_b={_CB1}",
        (*_TS, *_MMA_TAIL),
    ),
    _mma107(
        "tcgen05_mma_sp_ashift_collector_b_ts",
        f"action=mma sp=sp {_CG} {_KIND_T} ashift=ashift collector_b={_CB1}",
        (*_TS, "sp_meta_tmem", *_MMA_TAIL),
    ),
    _mma107(
        "tcgen05_mma_collector_ab_ts",
        f"action=mma {_CG} {_KIND_T} ashift?=ashift collector_a={_CA} collector_b={_CB1}",
        (*_TS, *_MMA_TAIL),
    ),
    _mma107(
        "tcgen05_mma_sp_collector_ab_ts",
        f"action=mma sp=sp {_CG} {_KIND_T} ashift?=ashift collector_a={_CA} collector_b={_CB1}",
        (*_TS, "sp_meta_tmem", *_MMA_TAIL),
    ),
    *[
        _mma107(
            f"tcgen05_mma_{sp}block_scale_collector_ab_{ab}",
            f"action=mma {'sp=sp ' if sp else ''}{_CG} kind=kind::mxf8f6f4{'' if sp else '|kind::mxf4'} "
            f"block_scale=block_scale collector_a={_CA} collector_b?={_CB1}",
            (*src, *(("sp_meta_tmem",) if sp else ()), *_SCALE_TAIL),
        )
        for sp in ("", "sp_")
        for ab, src in (("ss", _SS), ("ts", _TS))
    ],
    *[
        _mma107(
            f"tcgen05_mma_block_scale_block_{ab}",
            f"action=mma {_CG} {_BS_KIND} block_scale=block_scale "
            f"block_size=block16|block32 collector_a?={_CA} collector_b?={_CB1}",
            (*src, *_SCALE_TAIL),
        )
        for ab, src in (("ss", _SS), ("ts", _TS))
    ],
]

TCGEN05 = _declare("tcgen05", [
    _row("tcgen05_alloc", f"action=alloc {_CG} {_SA} space?=shared::cta type=b32",
         (Operand("dst", "space_addr", mem=True), Operand("ncols", "u32"))),
    _row("tcgen05_dealloc", f"action=dealloc {_CG} {_SA} type=b32", (Operand("taddr", "u32"), Operand("ncols", "u32"))),
    _row("tcgen05_relinquish_alloc_permit", f"action=relinquish_alloc_permit {_CG} {_SA}"),
    _row("tcgen05_ld", f"action=ld {_SA} shape=16x64b|16x128b|16x256b|32x32b {_NUM} pack?=pack::16b type=b32",
         (_R_OUT, _TADDR)),
    _row("tcgen05_ld_split", f"action=ld {_SA} shape=16x32bx2 {_NUM} pack?=pack::16b type=b32",
         (_R_OUT, _TADDR, _SPLIT)),
    _row("tcgen05_ld_red", f"action=ld red=red {_SA} shape=32x32b {_NUM} redop=min|max abs?=abs nan?=NaN "
                           "type=u32|s32|f32", (_R_RED, _REDVAL, _TADDR)),
    _row("tcgen05_ld_red_split", f"action=ld red=red {_SA} shape=16x32bx2 {_NUM} redop=min|max abs?=abs nan?=NaN "
                                 "type=u32|s32|f32", (_R_RED, _REDVAL, _TADDR, _SPLIT)),
    _row("tcgen05_st", f"action=st {_SA} shape=16x64b|16x128b|16x256b|32x32b {_NUM} unpack?=unpack::16b type=b32",
         (_TADDR, _R_IN)),
    _row("tcgen05_st_split", f"action=st {_SA} shape=16x32bx2 {_NUM} unpack?=unpack::16b type=b32",
         (_TADDR, _SPLIT, _R_IN)),
    _row("tcgen05_wait", f"action=wait::ld|wait::st {_SA}"),
    _row("tcgen05_cp", f"action=cp {_CG} shape=128x256b|4x256b|128x128b|64x128b|32x128b "
                       "multicast?=warpx2::02_13|warpx2::01_23|warpx4 dst_fmt?=b8x16 src_fmt?=b6x16_p32|b4x16_p64",
         (_TADDR, Operand("s_desc", "reg", ty="b64"))),
    _row("tcgen05_mma_ss", f"action=mma {_CG} {_KIND} collector_a?={_COLL}",
         _ops("d_tmem", "a_desc", "b_desc", "idesc", "disable_output_lane", "enable_input_d")),
    _row("tcgen05_mma_ts", f"action=mma {_CG} {_KIND}",
         _ops("d_tmem", "a_tmem", "b_desc", "idesc", "disable_output_lane", "enable_input_d")),
    _row("tcgen05_mma_block_scale_ss", f"action=mma {_CG} {_BS_KIND} {_BS}",
         _ops("d_tmem", "a_desc", "b_desc", "idesc", "sfa_tmem", "sfb_tmem", "enable_input_d")),
    _row("tcgen05_mma_block_scale_ts", f"action=mma {_CG} {_BS_KIND} {_BS}",
         _ops("d_tmem", "a_tmem", "b_desc", "idesc", "sfa_tmem", "sfb_tmem", "enable_input_d")),
    _row("tcgen05_mma_ws_ss", f"action=mma ws=ws cta_group=cta_group::1 {_KIND} collector_b?={_COLL_B}",
         _ops("d_tmem", "a_desc", "b_desc", "idesc", "enable_input_d", "zero_col_mask")),
    _row("tcgen05_mma_ws_ts", f"action=mma ws=ws cta_group=cta_group::1 {_KIND} collector_b?={_COLL_B}",
         _ops("d_tmem", "a_tmem", "b_desc", "idesc", "enable_input_d", "zero_col_mask")),
    _row("tcgen05_fence", "action=fence::before_thread_sync|fence::after_thread_sync"),
    _row("tcgen05_commit", f"action=commit {_CG} completion=mbarrier::arrive::one space?=shared::cluster type=b64",
         (Operand("mbar", "space_addr", mem=True),)),
    _row("tcgen05_commit_multicast", f"action=commit {_CG} completion=mbarrier::arrive::one "
                                     "space?=shared::cluster multicast=multicast::cluster type=b64",
         (Operand("mbar", "space_addr", mem=True), Operand("mask", "reg", ty="u16"))),
    # ---- forms TIRx marks sm_107 (NVRTC 13.0 cannot target it: text-checked against TIRx's)
    *_SM107_ROWS,
], doc="tcgen05 (sm_100a): TMEM alloc/dealloc, ld/st, wait, fences, cp, mma[.ws][.block_scale], commit")  # fmt: skip
