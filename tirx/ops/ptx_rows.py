"""Rows of the PTX instruction table (tirx/ops/ptx_table.py), one opcode per ``declare_opcode``.

Each opcode is one op, ``T.ptx.<opcode>``, written as a chain
(``T.ptx.mbarrier.try_wait.parity.shared__cta.b64(ok, addr, phase)``) and printed in
TIRx's positional form (operands, one string per slot, a trailing ``""``). The slot
layouts follow TIRx's (apache-tvm-tirx 0.1.0a4) so its printed text loads here; adding
an instruction form is adding a ``Row`` (docs/cuda.md, "PTX instruction table").
``T.ptx.elect_sync()`` and ``T.ptx.mapa(p, rank)``, the value forms tirx had before the
table, are ``bare`` rows of their opcodes and keep their CPU semantics.
"""

from __future__ import annotations

from typing import Any

from ..ir import op as _opmod
from ..ir.types import PointerType, bool_, uint64
from . import ptx_semantics_copy  # noqa: F401  (registers the CPU semantics of cp.async.{ca,cg} and its groups)
from .cuda import _i_in_launch
from .ptx import _c_mapa, _i_elect_sync, _i_mapa, _mapped_ptr
from .ptx_table import Chain, Opcode, Operand, Row, Slot, declare_opcode, operands, slots

__all__: list[str] = []

_SCOPES = ("cta", "cluster", "gpu", "sys")


def _slot(name: str, *choices: str) -> Slot:
    return Slot(name, choices)


def _opt(name: str, *choices: str) -> Slot:
    return Slot(name, choices, optional=True)


def _op(name: str, kind: str, *, optional: bool = False, mem: bool = False) -> Operand:
    return Operand(name, kind, optional, mem)


# --------------------------------------------------------------------------- fence
FENCE = declare_opcode("fence", [
    Row("fence", (_opt("sem", "sc", "acq_rel", "acquire", "release"), _slot("scope", *_SCOPES)),
        interp=_i_in_launch),
    Row("fence_mbarrier_init", (_slot("op_restrict", "mbarrier_init"), _slot("sem", "release"),
                                _slot("scope", "cluster")), interp=_i_in_launch),
    Row("fence_proxy", (_slot("proxy", "proxy"), _slot("proxykind", "alias", "async"),
                        _opt("space", "global", "shared::cta", "shared::cluster")), interp=_i_in_launch),
    Row("fence_proxy_tensormap_release", (_slot("proxy", "proxy"), _slot("proxykind", "tensormap::generic"),
                                          _slot("sem", "release"), _slot("scope", *_SCOPES)),
        interp=_i_in_launch),
    Row("fence_proxy_tensormap_acquire", (_slot("proxy", "proxy"), _slot("proxykind", "tensormap::generic"),
                                          _slot("sem", "acquire"), _slot("scope", *_SCOPES)),
        (_op("addr", "addr", mem=True), _op("size", "imm")), interp=_i_in_launch),
    # TIRx's form without the size: a tensor map's 128 bytes
    Row("fence_proxy_tensormap_acquire_map", (_slot("proxy", "proxy"), _slot("proxykind", "tensormap::generic"),
                                              _slot("sem", "acquire"), _slot("scope", *_SCOPES)),
        (_op("addr", "addr", mem=True),), asm="{mn} [{addr}], 128;", interp=_i_in_launch),
], doc="memory fences: fence[.sem].scope, fence.proxy.*, fence.mbarrier_init.release.cluster")  # fmt: skip


# --------------------------------------------------------------------------- mbarrier
_SPACE = ("shared", "shared::cta")
_SPACE_C = ("shared", "shared::cta", "shared::cluster")
_B64 = _slot("type", "b64")


def _mb(name: str, slots: tuple, operands: tuple) -> Row:
    return Row(name, (*slots, _B64), operands)


_STATE = _op("state", "out64", optional=True)
_ADDR = _op("addr", "space_addr", mem=True)  # shared with a shared space, else generic
_SEM_AR = _opt("sem", "release", "relaxed")
_SCOPE_CC = _opt("scope", "cta", "cluster")
_WAIT = (_opt("phase_type", "phase_type::primary", "phase_type::conditional"),
         _opt("sem", "acquire", "relaxed"), _SCOPE_CC, _opt("space", *_SPACE))  # fmt: skip

MBARRIER = declare_opcode("mbarrier", [
    _mb("mbarrier_init", (_slot("action", "init"), _opt("layout", "layout::v0", "layout::v1"),
                          _opt("space", *_SPACE)), (_ADDR, _op("count", "u32"))),
    _mb("mbarrier_inval", (_slot("action", "inval"), _opt("space", *_SPACE)), (_ADDR,)),
    # mbarrier.pending_count.b64 count, state: the pending arrivals an arrive's state token holds
    _mb("mbarrier_pending_count", (_slot("action", "pending_count"), _opt("space", *_SPACE)),
        (_op("count", "out32"), Operand("state", "reg", ty="b64"))),
    _mb("mbarrier_arrive", (_slot("action", "arrive", "arrive_drop"), _SEM_AR, _SCOPE_CC,
                            _opt("space", *_SPACE_C)), (_STATE, _ADDR, _op("count", "u32", optional=True))),
    _mb("mbarrier_arrive_expect_tx", (_slot("action", "arrive", "arrive_drop"), _slot("expect_tx", "expect_tx"),
                                      _SEM_AR, _SCOPE_CC, _opt("space", *_SPACE_C)),
        (_STATE, _ADDR, _op("tx_count", "u32"))),
    _mb("mbarrier_arrive_no_complete", (_slot("action", "arrive", "arrive_drop"),
                                        _slot("nocomplete", "noComplete"), _opt("sem", "release"),
                                        _opt("scope", "cta"), _opt("space", *_SPACE)),
        (_STATE, _ADDR, _op("count", "u32"))),
    _mb("mbarrier_expect_tx", (_slot("action", "expect_tx", "complete_tx"), _opt("sem", "relaxed"), _SCOPE_CC,
                               _opt("space", *_SPACE_C)), (_ADDR, _op("tx_count", "u32"))),
    _mb("mbarrier_wait_parity", (_slot("action", "try_wait", "test_wait"), _slot("parity", "parity"), *_WAIT),
        (_op("wait_complete", "pred"), _ADDR, _op("phase", "u32"), _op("time_hint", "u32", optional=True))),
    _mb("mbarrier_wait", (_slot("action", "try_wait", "test_wait"), *_WAIT),
        (_op("wait_complete", "pred"), _ADDR, _op("state", "addr"), _op("time_hint", "u32", optional=True))),
    # tirx's value form: the predicate as the call's value (`while not ...:` loops); TIRx's rows
    # write it to an element. Told apart from the row above by its operand count.
    Row("mbarrier_wait_parity_value", (_slot("action", "try_wait", "test_wait"), _slot("parity", "parity"),
                                       *_WAIT, _B64), (_ADDR, _op("phase", "u32")), result=bool_,
        asm="{{ .reg .pred P0; {mn} P0, [{addr}], {phase}; selp.u32 {out}, 1, 0, P0; }}",
        doc="true when the phase with the given parity has completed (a value, not a pred element)"),
], doc="mbarrier init/inval/arrive[.expect_tx]/expect_tx/complete_tx/try_wait[.parity]/test_wait")  # fmt: skip


# --------------------------------------------------------------------------- warpgroup registers
def _nreg(ops: dict) -> str | None:
    n = ops["nreg"].value
    if not (24 <= n <= 256 and n % 8 == 0):
        return f"the register count must be a multiple of 8 in 24..256, got {n}"
    return None


SETMAXNREG = declare_opcode("setmaxnreg", [
    Row("setmaxnreg", (_slot("action", "inc", "dec"), _slot("sync", "sync"), _slot("aligned", "aligned"),
                       _slot("type", "u32")), (_op("nreg", "imm"),), check=_nreg, interp=_i_in_launch),
], doc="setmaxnreg.{inc,dec}.sync.aligned.u32 N: raise/lower the warpgroup's register cap")  # fmt: skip


# --------------------------------------------------------------------------- warp
declare_opcode("elect_sync", [
    Row("elect_sync", (), (_op("d", "out32"), _op("p", "pred"), _op("membermask", "u32")), mnemonic="elect.sync",
        asm="{{ .reg .pred P0; {mn} {d}|P0, {membermask}; selp.u32 {p}, 1, 0, P0; }}"),
    Row("elect_sync_value", (), (), mnemonic="elect.sync", result=bool_, bare=True,
        asm="{{ .reg .pred p; elect.sync _|p, 0xffffffff; selp.u32 {out}, 1, 0, p; }}", interp=_i_elect_sync,
        doc="true in exactly one lane of the warp"),
], doc="elect.sync: elect one lane of the warp")  # fmt: skip

_SHFL = (_slot("mode", "up", "down", "bfly", "idx"), _slot("type", "b32"))
declare_opcode("shfl_sync", [
    Row("shfl_sync", _SHFL, (_op("d", "out32"), _op("a", "b32"), _op("b", "u32"), _op("c", "u32"),
                             _op("membermask", "u32")), mnemonic="shfl.sync"),
    Row("shfl_sync_p", _SHFL, (_op("d", "out32"), _op("p", "pred"), _op("a", "b32"), _op("b", "u32"),
                               _op("c", "u32"), _op("membermask", "u32")), mnemonic="shfl.sync",
        asm="{{ .reg .pred P0; {mn} {d}|P0, {a}, {b}, {c}, {membermask}; selp.u32 {p}, 1, 0, P0; }}"),
], doc="shfl.sync.{up,down,bfly,idx}.b32 d[|p], a, b, c, membermask")  # fmt: skip


# --------------------------------------------------------------------------- addresses
MAPA = declare_opcode("mapa", [
    # TIRx's form for a 64-bit integer address prints no space string at all: ("u64", "")
    # (a pointer takes the row below: ("", "u64", ""))
    Row("mapa_generic_u64", (_slot("type", "u64"),), (_op("d", "out64"), _op("a", "int64"), _op("b", "u32")),
        volatile=False),
    Row("mapa_u64", (_opt("space", "shared::cluster"), _slot("type", "u64")),
        (_op("d", "out64"), _op("a", "addr"), _op("b", "u32")), volatile=False),
    Row("mapa_u32", (_slot("space", "shared::cluster"), _slot("type", "u32")),
        (_op("d", "out32"), _op("a", "u32"), _op("b", "u32")), volatile=False),
    Row("mapa_value", (), (_op("a", "any"), _op("rank", "int")), result=_mapped_ptr, bare=True,
        cuda=_c_mapa(True), interp=_i_mapa,
        doc="the same shared location in CTA `rank` of the cluster, typed like `a`"),
], doc="mapa: map a shared address to the same location in another CTA of the cluster",
   pointer_from=(0,))  # fmt: skip

_CVTA_SPACES = (
    "const",
    "global",
    "local",
    "shared",
    "shared::cta",
    "shared::cluster",
    "param",
    "param::entry",
)
declare_opcode("cvta", [
    Row("cvta_to", (_slot("dir", "to"), _slot("space", *_CVTA_SPACES), _slot("type", "u64")),
        (_op("d", "out64"), _op("ptr", "addr")), volatile=False),
    Row("cvta_generic", (_slot("space", *_CVTA_SPACES), _slot("type", "u64")),
        (_op("d", "out64"), _op("a", "addr")), volatile=False),
], doc="cvta[.to].space.u64: convert between generic and state-space addresses")  # fmt: skip

PREFETCH = declare_opcode("prefetch", [
    Row("prefetch", (_opt("space", "global", "local", "const", "param"), _opt("level", "L1", "L2"),
                     _opt("evict", "L2::evict_last", "L2::evict_normal"), _opt("tensormap", "tensormap")),
        (_op("addr", "addr", mem=True),)),
], doc="prefetch[.space][.level][.evict][.tensormap] [addr] (prefetch.tensormap: a TMA descriptor)")  # fmt: skip


# --------------------------------------------------------------------------- cp.async groups, TMA
_ASYNC = _slot("api", "async")
# the tile coordinates: one int32 per dimension of the .Nd modifier; the four-row
# gather/scatter modes (2d only) take a column and four row coordinates
_GATHER4 = ("tile::gather4", "tile::scatter4")
_COORDS = Operand(
    "coords",
    "reg",
    ty="s32",
    lanes=lambda mods: 5 if mods.get("load_mode") in _GATHER4 else int(mods["dim"][0]),
)
_POLICY = Operand("cache_policy", "reg", optional=True, ty="b64", when="cache")


def _im2col(mods: dict) -> str:
    """``, {im2col_info}`` where an im2col mode takes its offsets / values (not im2col_no_offs)."""
    mode = mods.get("load_mode", "")
    return ", {im2col_info}" if mode.startswith("im2col") and "no_offs" not in mode else ""


def _tma_g2s(mods: dict) -> str:
    """[dst], [tmap, {coords}], [mbar][, {im2col_info}][, cta_mask][, policy] (PTX's operand layout)."""
    extra = (", {cta_mask}" if mods.get("multicast") else "") + (
        ", {cache_policy}" if mods.get("cache") else ""
    )
    return "{mn} [{dst_mem}], [{tmap}, {coords}], [{mbar}]" + _im2col(mods) + extra + ";"


def _tma_s2g(mods: dict) -> str:
    """[tmap, {coords}], [src][, policy]."""
    return "{mn} [{tmap}, {coords}], [{src_mem}]" + (", {cache_policy}" if mods.get("cache") else "") + ";"


def _tma_prefetch(mods: dict) -> str:
    """[tmap, {coords}][, {im2col_info}][, policy]."""
    return "{mn} [{tmap}, {coords}]" + _im2col(mods) + (", {cache_policy}" if mods.get("cache") else "") + ";"


#: TMA im2col load modes (PTX ISA 9.7.9.27.1.2): the box is gathered from a convolution's pixels;
#: ``.im2col`` takes dim - 2 16-bit offsets after the mbarrier, the ``::w`` modes two 16-bit values
_IM2COL = "im2col|im2col::w|im2col::w::128"
_IM2COL_INFO = Operand(
    "im2col_info",
    "reg",
    ty=lambda mods: "u16" if mods.get("load_mode") == "im2col" else "b16",
    lanes=lambda mods: int(mods["dim"][0]) - 2 if mods.get("load_mode") == "im2col" else 2,
)
#: PTX 9.4's validity reports of a TMA load (TIRx's ``report`` slot)
_REPORT = (
    "report?=mbarrier::report::disabled|mbarrier::report::validity::per_16bytes::80000000|"
    "mbarrier::report::validity::per_16bytes::8000|mbarrier::report::validity::per_16bytes::80|"
    "mbarrier::report::validity::per_16bytes::8"
)


def _gather4_2d(mods: dict) -> str | None:
    """gather4/scatter4 move four rows of a 2d tensor: ptxas refuses any other .dim."""
    mode = mods.get("load_mode", "")
    return f"{mode} is a 2d-only load mode" if mode in _GATHER4 and mods.get("dim") != "2d" else None


def _cp_size(*allowed: int) -> Any:
    def check(ops: dict) -> str | None:
        n = ops["cp_size"].value
        return None if n in allowed else f"cp-size must be one of {', '.join(map(str, allowed))}, got {n}"

    return check


def _cp_async(cop: str, tail: str) -> Row:
    """cp.async.{ca,cg}.shared{::cta}.global[.L2::cache_hint][.L2::{64,128,256}B] [dst], [src],
    cp-size[, src-size | , ignore-src][, cache-policy] (PTX ISA 9.7.10.28.3.1): src-size (a
    u32) zero-fills the destination past it; ignore-src (a predicate) copies zeros."""
    extra = {"": "", "src_size": " src_size:u32", "ignore_src": " ignore_src:reg@pred"}[tail]
    return Row(
        f"cp_async_{cop}" + (f"_{tail}" if tail else ""),
        slots(f"api=async cop={cop} dst=shared|shared::cta src=global cache?=L2::cache_hint "
              "prefetch?=L2::64B|L2::128B|L2::256B"),
        operands(f"dst_mem:smem! src_mem:addr! cp_size:imm{extra} cache_policy:reg@b64?cache"),
        check=_cp_size(4, 8, 16) if cop == "ca" else _cp_size(16),
    )  # fmt: skip


def _bulk_sem(mods: dict) -> str | None:
    """PTX 9.3's strong bulk copy is one syntax line: .relaxed needs .scope and .b128; the
    default (or .weak) line has neither."""
    sem, scope, ty = mods.get("sem", ""), mods.get("scope", ""), mods.get("type", "")
    if sem == "relaxed":
        return None if scope and ty == "b128" else ".relaxed bulk copies need both .scope and .b128"
    return ".scope/.b128 belong only to the .relaxed bulk copy" if scope or ty else None


def _reduce_mods(mods: dict) -> str | None:
    """cp.reduce.async.bulk: .sem and .scope go together; .noftz only on .add of a half type."""
    if bool(mods.get("sem")) != bool(mods.get("scope")):
        return ".sem and .scope go together"
    if mods.get("noftz") and not (mods.get("redop") == "add" and mods.get("type") in ("f16", "bf16", "f32")):
        return ".noftz belongs to .add of .f16, .bf16 or .f32"
    return None


_BULK = "api=async kind=bulk sem?=weak|relaxed scope?=cta|cluster|gpu|sys"
_MBAR_TX = "completion=mbarrier::complete_tx::bytes"

CP = declare_opcode("cp", [
    *(_cp_async(cop, tail) for cop in ("ca", "cg") for tail in ("", "src_size", "ignore_src")),
    # non-tensor bulk copies (PTX ISA 9.7.10.28.4.1), in TIRx's four directions
    Row("cp_async_bulk_g2s_cta", slots(f"{_BULK} dst=shared::cta src=global {_MBAR_TX} cache?=L2::cache_hint "
                                       "ignore_oob?=ignore_oob type?=b128"),
        operands("dst_mem:smem! src_mem:addr! size:u32 ignore_bytes_left:u32?ignore_oob "
                 "ignore_bytes_right:u32?ignore_oob mbar:smem! cache_policy:reg@b64?cache"), check_mods=_bulk_sem),
    Row("cp_async_bulk_g2s_cluster", slots(f"{_BULK} dst=shared::cluster src=global {_MBAR_TX} "
                                           "multicast?=multicast::cluster cache?=L2::cache_hint type?=b128"),
        operands("dst_mem:smem! src_mem:addr! size:u32 mbar:smem! cta_mask:reg@b16?multicast "
                 "cache_policy:reg@b64?cache"), check_mods=_bulk_sem),
    Row("cp_async_bulk_s2c", slots(f"api=async kind=bulk sem?=weak|relaxed scope?=cta|cluster dst=shared::cluster "
                                   f"src=shared::cta {_MBAR_TX} type?=b128"),
        operands("dst_mem:smem! src_mem:smem! size:u32 mbar:smem!"), check_mods=_bulk_sem),
    Row("cp_async_bulk_s2g", slots(f"{_BULK} dst=global src=shared::cta completion=bulk_group "
                                   "cache?=L2::cache_hint cp_mask?=cp_mask type?=b128"),
        operands("dst_mem:addr! src_mem:smem! size:u32 cache_policy:reg@b64?cache byte_mask:reg@b16?cp_mask"),
        check_mods=_bulk_sem),
    Row("cp_async_bulk_prefetch", slots("api=async kind=bulk op=prefetch level=L2 src=global cache?=L2::cache_hint"),
        operands("src_mem:addr! size:u32 cache_policy:reg@b64?cache")),
    Row("cp_reduce_async_bulk_s2g_f32_noftz", slots(
        "op=reduce api=async kind=bulk sem?=relaxed scope?=cta|cluster|gpu|sys dst=global src=shared::cta "
        "completion=bulk_group cache?=L2::cache_hint redop=add noftz=noftz type=f32"),
        operands("dst_mem:addr! src_mem:smem! size:u32 cache_policy:reg@b64?cache"),
        check_mods=lambda m: ".sem and .scope go together" if bool(m["sem"]) != bool(m["scope"]) else None),
    # the other reductions of cp.reduce.async.bulk (PTX ISA 9.7.10.28.4.2): into global memory, every
    # .redOp and .type (.noftz with .add), and into a peer CTA's shared memory with mbarrier completion
    Row("cp_reduce_async_bulk_s2g", slots(
        "op=reduce api=async kind=bulk sem?=relaxed scope?=cta|cluster|gpu|sys dst=global src=shared::cta "
        "completion=bulk_group cache?=L2::cache_hint redop=add|min|max|inc|dec|and|or|xor noftz?=noftz "
        "type=f16|bf16|b32|u32|s32|b64|u64|s64|f32|f64"),
        operands("dst_mem:addr! src_mem:smem! size:u32 cache_policy:reg@b64?cache"), check_mods=_reduce_mods),
    Row("cp_reduce_async_bulk_s2c", slots(
        f"op=reduce api=async kind=bulk sem?=relaxed scope?=cta|cluster dst=shared::cluster src=shared::cta "
        f"{_MBAR_TX} redop=add|min|max|inc|dec|and|or|xor type=b32|u32|s32|b64|u64"),
        operands("dst_mem:smem! src_mem:smem! size:u32 mbar:smem!"), check_mods=_reduce_mods),
    Row("cp_async_bulk_commit_group", (_ASYNC, _slot("kind", "bulk"), _slot("action", "commit_group"))),
    Row("cp_async_bulk_wait_group", (_ASYNC, _slot("kind", "bulk"), _slot("action", "wait_group"),
                                     _opt("read", "read")), (_op("group", "imm"),)),
    Row("cp_async_commit_group", (_ASYNC, _slot("action", "commit_group"))),
    Row("cp_async_wait_group", (_ASYNC, _slot("action", "wait_group")), (_op("group", "imm"),)),
    Row("cp_async_wait_all", (_ASYNC, _slot("action", "wait_all"))),
    Row("cp_async_mbarrier_arrive", (_ASYNC, _slot("target", "mbarrier"), _slot("action", "arrive"),
                                     _opt("noinc", "noinc"), _opt("space", "shared", "shared::cta"),
                                     _slot("type", "b64")), (_op("addr", "space_addr", mem=True),)),
    # TMA tile copies (cp.async.bulk.tensor): the coordinates are a vector of `dim` int32s
    Row("cp_async_bulk_tensor_g2s_cta", slots(
        "api=async kind=bulk unit=tensor dim=1d|2d|3d|4d|5d dst=shared::cta src=global "
        "load_mode?=tile|tile::gather4 completion=mbarrier::complete_tx::bytes "
        "cta_group?=cta_group::1|cta_group::2 cache?=L2::cache_hint"),
        (_op("dst_mem", "smem"), _op("tmap", "addr", mem=True), _COORDS, _op("mbar", "smem"), _POLICY),
        asm=_tma_g2s, check_mods=_gather4_2d),
    Row("cp_async_bulk_tensor_g2s_cluster", slots(
        "api=async kind=bulk unit=tensor dim=1d|2d|3d|4d|5d dst=shared::cluster src=global "
        "load_mode?=tile|tile::gather4 completion=mbarrier::complete_tx::bytes multicast?=multicast::cluster "
        "cta_group?=cta_group::1|cta_group::2 cache?=L2::cache_hint"),
        (_op("dst_mem", "smem"), _op("tmap", "addr", mem=True), _COORDS, _op("mbar", "smem"),
         Operand("cta_mask", "reg", optional=True, ty="b16", when="multicast"), _POLICY),
        asm=_tma_g2s, check_mods=_gather4_2d),
    Row("cp_async_bulk_tensor_s2g", slots(
        "api=async kind=bulk unit=tensor dim=1d|2d|3d|4d|5d dst=global src=shared::cta "
        "load_mode?=tile|tile::scatter4 completion=bulk_group cache?=L2::cache_hint"),
        (_op("tmap", "addr", mem=True), _COORDS, _op("src_mem", "smem"), _POLICY), asm=_tma_s2g, check_mods=_gather4_2d),
    # TMA tile prefetch into L2 (cp.async.bulk.prefetch.tensor, PTX ISA 9.7.10.28.5.3)
    Row("cp_async_bulk_tensor_prefetch", slots(
        "api=async kind=bulk action=prefetch unit=tensor dim=1d|2d|3d|4d|5d level=L2 src=global "
        "load_mode?=tile|tile::gather4 cache?=L2::cache_hint"),
        (_op("tmap", "addr", mem=True), _COORDS, _POLICY), asm=_tma_prefetch, check_mods=_gather4_2d),
    # TMA im2col loads and prefetches (3d..5d), and im2col_no_offs stores / reductions (no offsets)
    *(Row(f"cp_async_bulk_tensor_g2s_{name}_im2col", slots(
        f"api=async kind=bulk unit=tensor dim=3d|4d|5d dst={dst} src=global load_mode={_IM2COL} {_MBAR_TX} "
        f"{_REPORT}{' multicast?=multicast::cluster' if name == 'cluster' else ''} "
        "cta_group?=cta_group::1|cta_group::2 cache?=L2::cache_hint"),
        (_op("dst_mem", "smem"), _op("tmap", "addr", mem=True), _COORDS, _op("mbar", "smem"), _IM2COL_INFO,
         *((Operand("cta_mask", "reg", optional=True, ty="b16", when="multicast"),) if name == "cluster" else ()),
         _POLICY), asm=_tma_g2s)
      for name, dst in (("cta", "shared::cta"), ("cluster", "shared::cluster"))),
    Row("cp_async_bulk_tensor_s2g_im2col_no_offs_w", slots(
        "api=async kind=bulk unit=tensor dim=3d|4d|5d dst=global src=shared::cta "
        "load_mode=im2col_no_offs|im2col_no_offs::w completion=bulk_group cache?=L2::cache_hint"),
        (_op("tmap", "addr", mem=True), _COORDS, _op("src_mem", "smem"), _POLICY), asm=_tma_s2g),
    Row("cp_reduce_async_bulk_tensor_im2col_no_offs_w", slots(
        "op=reduce api=async kind=bulk unit=tensor dim=3d|4d|5d dst=global src=shared::cta "
        "redop=add|min|max|inc|dec|and|or|xor load_mode=im2col_no_offs|im2col_no_offs::w completion=bulk_group "
        "cache?=L2::cache_hint"),
        (_op("tmap", "addr", mem=True), _COORDS, _op("src_mem", "smem"), _POLICY), asm=_tma_s2g),
    Row("cp_async_bulk_tensor_prefetch_im2col", slots(
        f"api=async kind=bulk action=prefetch unit=tensor dim=3d|4d|5d level=L2 src=global load_mode={_IM2COL} "
        "cache?=L2::cache_hint"),
        (_op("tmap", "addr", mem=True), _COORDS, _IM2COL_INFO, _POLICY), asm=_tma_prefetch),
    Row("cp_reduce_async_bulk_tensor", slots(
        "op=reduce api=async kind=bulk unit=tensor dim=1d|2d|3d|4d|5d dst=global src=shared::cta "
        "redop=add|min|max|inc|dec|and|or|xor load_mode?=tile completion=bulk_group cache?=L2::cache_hint"),
        (_op("tmap", "addr", mem=True), _COORDS, _op("src_mem", "smem"), _POLICY), asm=_tma_s2g),
], doc="cp.async[.bulk] groups (commit_group, wait_group[.read] N, wait_all), cp.async.mbarrier.arrive, "
   "TMA tile copies cp[.reduce].async.bulk.tensor.{1..5}d, cp.async.bulk.prefetch.tensor.{1..5}d, their im2col "
   "modes (3d..5d)")  # fmt: skip


# --------------------------------------------------------------------------- named forms
def chain_alias(name: str, opc: Opcode, tokens: tuple[str, ...], doc: str) -> None:
    """``T.<name>(...)`` as a fixed modifier chain of ``opc``: the names kernels used before
    the table build the table's call, which prints in TIRx's form."""
    chain = Chain(opc, tokens)
    _opmod.alias(name, opc.name, chain, f"{doc} (= {chain!r})")


chain_alias(
    "ptx.fence_proxy_async",
    FENCE,
    ("proxy", "async", "shared::cta"),
    "order generic-proxy smem writes before async-proxy reads",
)
chain_alias(
    "ptx.fence_mbarrier_init",
    FENCE,
    ("mbarrier_init", "release", "cluster"),
    "make mbarrier inits visible to the cluster",
)
chain_alias(
    "ptx.setmaxnreg_inc", SETMAXNREG, ("inc", "sync", "aligned", "u32"), "raise the warpgroup's register cap"
)
chain_alias(
    "ptx.setmaxnreg_dec", SETMAXNREG, ("dec", "sync", "aligned", "u32"), "lower the warpgroup's register cap"
)
chain_alias(
    "ptx.mbarrier_init", MBARRIER, ("init", "shared::cta", "b64"), "init an mbarrier with an arrival count"
)
chain_alias("ptx.mbarrier_arrive", MBARRIER, ("arrive", "shared::cta", "b64"), "arrive on an mbarrier")
chain_alias(
    "ptx.mbarrier_arrive_expect_tx",
    MBARRIER,
    ("arrive", "expect_tx", "shared::cta", "b64"),
    "arrive and expect tx bytes",
)
chain_alias(
    "ptx.mbarrier_expect_tx",
    MBARRIER,
    ("expect_tx", "relaxed", "cta", "shared::cta", "b64"),
    "expect tx bytes",
)
for _n in ("ptx.mbarrier_try_wait_parity", "ptx.mbarrier_try_wait_parity_u32"):
    chain_alias(
        _n,
        MBARRIER,
        ("try_wait", "parity", "shared::cta", "b64"),
        "true when the phase with the given parity completed (a shared pointer or its 32-bit address)",
    )
_G2S = ("async", "bulk", "tensor")
_G2S_TAIL = ("shared::cluster", "global", "tile", "mbarrier::complete_tx::bytes")
chain_alias(
    "ptx.tma_load_2d",
    CP,
    (*_G2S, "2d", *_G2S_TAIL),
    "TMA tile load: smem addr (u32), tensor map, inner coord, outer coord, mbarrier",
)
chain_alias(
    "ptx.tma_load_3d",
    CP,
    (*_G2S, "3d", *_G2S_TAIL),
    "TMA 3-d tile load: smem addr (u32), tensor map, coords (innermost first), mbarrier",
)
chain_alias(
    "ptx.tma_load_2d_multicast",
    CP,
    (*_G2S, "2d", *_G2S_TAIL, "multicast::cluster"),
    "TMA tile load multicast to the cluster's CTAs in the u16 mask (same smem offsets and mbarrier)",
)
chain_alias("ptx.tma_store_2d", CP, (*_G2S, "2d", "global", "shared::cta", "tile", "bulk_group"),
            "TMA tile store: tensor map, inner coord, outer coord, smem addr (u32); completes a bulk group")  # fmt: skip
chain_alias(
    "ptx.tma_store_commit", CP, ("async", "bulk", "commit_group"), "commit the TMA stores issued so far"
)
chain_alias(
    "ptx.tma_store_wait", CP, ("async", "bulk", "wait_group", "read"), "wait until N store groups remain"
)
chain_alias("ptx.prefetch_tensormap", PREFETCH, ("tensormap",), "prefetch a TMA descriptor")  # fmt: skip


def _map_shared_rank(x: Any, rank: Any, span: Any = None) -> Any:
    """The raw uint64 address form of ``T.ptx.mapa(x, rank)``."""
    m = Chain(MAPA)(x, rank, span=span)
    if isinstance(m.ty, PointerType):
        return _opmod.find(bitcast=True)(m, ty=uint64, span=span)
    return m


_opmod.alias(
    "ptx.map_shared_rank",
    MAPA.name,
    _map_shared_rank,
    doc="mapa as a raw uint64 address (= T.reinterpret(T.ptx.mapa(x, rank), ty=T.uint64) for a pointer)",
)
_CVTA = _opmod.find(shared_window=True)
_opmod.alias("ptx.cvta_to_shared", _CVTA.name, lambda p, span=None: _CVTA(p, span=span),
             doc="the 32-bit shared-window address of a pointer (= T.cuda.cvta_generic_to_shared)")  # fmt: skip
