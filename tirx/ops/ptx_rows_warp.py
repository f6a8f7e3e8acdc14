"""PTX instruction table rows for barriers and warp-level operations: bar, barrier,
activemask, vote.sync, redux.sync, match.sync, movmatrix, griddepcontrol.

Slot layouts follow TIRx's (apache-tvm-tirx 0.1.0a4) so its printed text loads here.
``pred=`` guards a form without outputs (``T.ptx.bar.sync(0, pred=c)`` is ``@p bar.sync 0``;
printed as a last operand with the trailing marker ``"pred"``). The sm_100a
``redux.sync.{min,max}.f32`` form is left out (tests/test_ptx_rows_table.py lists it).
"""

from __future__ import annotations

from .ptx_table import declare_opcode, row

__all__: list[str] = []


def _bars(opcode: str, aligned: str) -> list:
    """The rows bar and barrier share (barrier adds the optional .aligned)."""
    al = f" {aligned}" if aligned else ""
    return [
        row(f"{opcode}_sync", f"cta?=cta action=sync{al}", "a:reg@u32 b:reg@u32?"),
        row(f"{opcode}_arrive", f"cta?=cta action=arrive{al}", "a:reg@u32 b:reg@u32"),
        row(f"{opcode}_red_popc", f"cta?=cta action=red op=popc{al} type=u32",
            "d:dst@u32 a:reg@u32 b:reg@u32? c:reg@pred"),
        row(f"{opcode}_red_pred", f"cta?=cta action=red op=and|or{al} type=pred",
            "d:dst@pred a:reg@u32 b:reg@u32? c:reg@pred"),
    ]  # fmt: skip


declare_opcode("bar", [
    *_bars("bar", ""),
    row("bar_warp_sync", "warp=warp action=sync", "membermask:reg@u32"),
], doc="bar: CTA barriers (sync/arrive/red, barrier a, thread count b) and bar.warp.sync")  # fmt: skip

declare_opcode("barrier", [
    *_bars("barrier", "aligned?=aligned"),
    row("barrier_cluster_arrive", "cluster=cluster action=arrive sem?=release|relaxed aligned?=aligned"),
    row("barrier_cluster_wait", "cluster=cluster action=wait sem?=acquire aligned?=aligned"),
], doc="barrier: CTA barriers (.aligned optional) and the cluster barrier arrive/wait")  # fmt: skip

declare_opcode("activemask", [row("activemask", "type=b32", "d:dst@type")],
               doc="activemask: the mask of the warp's active lanes")  # fmt: skip

declare_opcode("vote_sync", [
    row("vote_sync", "mode=all|any|uni type=pred", "d:dst@type a:reg@pred membermask:reg@u32", mnemonic="vote.sync"),
    row("vote_sync_ballot", "mode=ballot type=b32", "d:dst@type a:reg@pred membermask:reg@u32",
        mnemonic="vote.sync"),
], doc="vote.sync: all/any/uni of a predicate over the warp, or its ballot mask")  # fmt: skip

declare_opcode("redux_sync", [
    row("redux_sync", "op=add|min|max type=u32|s32", "d:dst@type a:reg@type membermask:reg@u32",
        mnemonic="redux.sync"),
    row("redux_sync_bitwise", "op=and|or|xor type=b32", "d:dst@type a:reg@type membermask:reg@u32",
        mnemonic="redux.sync"),
], doc="redux.sync: reduce a 32-bit value over the warp's lanes in membermask")  # fmt: skip

declare_opcode("griddepcontrol", [row("griddepcontrol", "action=launch_dependents|wait")],
               doc="griddepcontrol: programmatic dependent launch (signal dependents / wait for the prerequisite grid)")  # fmt: skip

declare_opcode("match", [
    row("match_any_sync", "mode=any sync=sync type=b32|b64", "d:dst@b32 a:reg@type membermask:reg@u32"),
    row("match_all_sync", "mode=all sync=sync type=b32|b64", "d:dst@b32 a:reg@type membermask:reg@u32"),
    row("match_all_sync_p", "mode=all sync=sync type=b32|b64", "d:dst@b32 p:dst@pred a:reg@type membermask:reg@u32",
        asm="{{ .reg .pred P0; {mn} {d}|P0, {a}, {membermask}; selp.u32 {p}, 1, 0, P0; }}"),
], doc="match.sync: the lanes holding the same value (any), or whether all do (all)")  # fmt: skip

declare_opcode("movmatrix", [
    row("movmatrix", "sync=sync aligned=aligned shape=m8n8 trans=trans type=b16", "d:dst@b32 a:reg@b32"),
], doc="movmatrix: transpose an 8x8 b16 matrix held across the warp's registers")  # fmt: skip
