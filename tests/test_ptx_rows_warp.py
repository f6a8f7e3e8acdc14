"""The PTX instruction table's barrier and warp rows (tirx/ops/ptx_rows_warp.py: bar,
barrier, activemask, vote.sync, redux.sync, match.sync, movmatrix, griddepcontrol).

For each family: TIRx's printed text loads in tirx and round-trips (print -> load ->
equal), the chain written in a kernel builds the same IR, the CUDA tirx generates
compiles through NVRTC for sm_90a (no GPU) with the PTX instruction TIRx emits, and bad
chains are located errors naming the allowed modifiers (helpers: tests/ptx_rows_util.py).
"""

from __future__ import annotations

from ptx_rows_util import family_tests

#: (chain written in a kernel, TIRx's printed text of it, the PTX instruction TIRx's asm
#: emits), recorded from apache-tvm-tirx 0.1.0a4 running the chain in the same kernel
CASES: list[tuple[str, str, str]] = [
    ('T.ptx.bar.sync(0)',
     'T.ptx.bar(T.uint32(0), "", "sync", "")',
     'bar.sync'),
    ('T.ptx.bar.sync(1, 128)',
     'T.ptx.bar(T.uint32(1), T.uint32(128), "", "sync", "")',
     'bar.sync'),
    ('T.ptx.bar.cta.sync(1)',
     'T.ptx.bar(T.uint32(1), "cta", "sync", "")',
     'bar.cta.sync'),
    ('T.ptx.bar.arrive(1, 128)',
     'T.ptx.bar(T.uint32(1), T.uint32(128), "", "arrive", "")',
     'bar.arrive'),
    ('T.ptx.bar.warp.sync(0xffffffff)',
     'T.ptx.bar(T.uint32(4294967295), "warp", "sync", "")',
     'bar.warp.sync'),
    ('T.ptx.bar.red.popc.u32(y[0], 0, y[1] > 0)',
     'T.ptx.bar(y[0], T.uint32(0), y[1] > T.uint32(0), "", "red", "popc", "u32", "p2")',
     'bar.red.popc.u32'),
    ('T.ptx.bar.red.or_.pred(y[0], 0, 128, y[1] > 0)',
     'T.ptx.bar(y[0], T.uint32(0), T.uint32(128), y[1] > T.uint32(0), "", "red", "or", "pred", "p3")',
     'bar.red.or.pred'),
    ('T.ptx.bar.sync(0, pred=y[0] > 0)',
     'T.ptx.bar(T.uint32(0), y[0] > T.uint32(0), "", "sync", "pred")',
     'bar.sync'),
    ('T.ptx.barrier.sync(0)',
     'T.ptx.barrier(T.uint32(0), "", "sync", "", "")',
     'barrier.sync'),
    ('T.ptx.barrier.sync.aligned(0)',
     'T.ptx.barrier(T.uint32(0), "", "sync", "aligned", "")',
     'barrier.sync.aligned'),
    ('T.ptx.barrier.cta.arrive.aligned(1, 64)',
     'T.ptx.barrier(T.uint32(1), T.uint32(64), "cta", "arrive", "aligned", "")',
     'barrier.cta.arrive.aligned'),
    ('T.ptx.barrier.cluster.arrive.release.aligned()',
     'T.ptx.barrier("cluster", "arrive", "release", "aligned", "")',
     'barrier.cluster.arrive.release.aligned'),
    ('T.ptx.barrier.cluster.arrive.relaxed()',
     'T.ptx.barrier("cluster", "arrive", "relaxed", "", "")',
     'barrier.cluster.arrive.relaxed'),
    ('T.ptx.barrier.cluster.wait.acquire.aligned()',
     'T.ptx.barrier("cluster", "wait", "acquire", "aligned", "")',
     'barrier.cluster.wait.acquire.aligned'),
    ('T.ptx.barrier.cluster.wait()',
     'T.ptx.barrier("cluster", "wait", "", "", "")',
     'barrier.cluster.wait'),
    ('T.ptx.barrier.red.popc.aligned.u32(y[0], 0, y[1] > 0)',
     'T.ptx.barrier(y[0], T.uint32(0), y[1] > T.uint32(0), "", "red", "popc", "aligned", "u32", "p2")',
     'barrier.red.popc.aligned.u32'),
    ('T.ptx.activemask.b32(y[0])',
     'T.ptx.activemask(y[0], "b32", "")',
     'activemask.b32'),
    ('T.ptx.vote_sync.ballot.b32(y[0], True, 0xffffffff)',
     'T.ptx.vote_sync(y[0], T.uint32(1), T.uint32(4294967295), "ballot", "b32", "p1")',
     'vote.sync.ballot.b32'),
    ('T.ptx.vote_sync.any.pred(y[0], y[1] > 0, 0xffffffff)',
     'T.ptx.vote_sync(y[0], y[1] > T.uint32(0), T.uint32(4294967295), "any", "pred", "p1")',
     'vote.sync.any.pred'),
    ('T.ptx.vote_sync.uni.pred(y[0], z[0] < z[1], y[2])',
     'T.ptx.vote_sync(y[0], z[0] < z[1], y[2], "uni", "pred", "p1")',
     'vote.sync.uni.pred'),
    ('T.ptx.redux_sync.add.u32(y[0], y[1], 0xffffffff)',
     'T.ptx.redux_sync(y[0], y[1], T.uint32(4294967295), "add", "u32", "")',
     'redux.sync.add.u32'),
    ('T.ptx.redux_sync.max.s32(w[0], w[1], 0xffffffff)',
     'T.ptx.redux_sync(w[0], w[1], T.uint32(4294967295), "max", "s32", "")',
     'redux.sync.max.s32'),
    ('T.ptx.redux_sync.and_.b32(y[0], y[1], 0xffffffff)',
     'T.ptx.redux_sync(y[0], y[1], T.uint32(4294967295), "and", "b32", "")',
     'redux.sync.and.b32'),
    ('T.ptx.griddepcontrol.wait()',
     'T.ptx.griddepcontrol("wait", "")',
     'griddepcontrol.wait'),
    ('T.ptx.griddepcontrol.launch_dependents()',
     'T.ptx.griddepcontrol("launch_dependents", "")',
     'griddepcontrol.launch_dependents'),
    ('T.ptx.match.any.sync.b32(y[0], y[1], 0xffffffff)',
     'T.ptx.match(y[0], y[1], T.uint32(4294967295), "any", "sync", "b32", "")',
     'match.any.sync.b32'),
    ('T.ptx.match.all.sync.b64(y[0], y[1], x[1], 0xffffffff)',
     'T.ptx.match(y[0], y[1], x[1], T.uint32(4294967295), "all", "sync", "b64", "")',
     'match.all.sync.b64'),
    ('T.ptx.match.all.sync.b32(y[0], y[1], 0xffffffff)',
     'T.ptx.match(y[0], y[1], T.uint32(4294967295), "all", "sync", "b32", "")',
     'match.all.sync.b32'),
    ('T.ptx.movmatrix.sync.aligned.m8n8.trans.b16(y[0], y[1])',
     'T.ptx.movmatrix(y[0], y[1], "sync", "aligned", "m8n8", "trans", "b16", "")',
     'movmatrix.sync.aligned.m8n8.trans.b16'),
]  # fmt: skip

NO_COMPILE: dict[str, str] = {}

BAD_CHAINS = [
    ("T.ptx.vote_sync.ballot.pred(y[0], True, 0xffffffff)", ["'pred'", "allowed: b32"]),
    ("T.ptx.bar.sync(0, 1, 2)", ["takes 1 to 2 operand(s)"]),
    ("T.ptx.elect_sync(y[0], y[1], 0xffffffff, pred=y[2] > 0)", ["pred= guards no instruction with a predicate output"]),
    ("T.ptx.bar.red.popc.u32(y[0], 0, y[1] > 0, preserve_dst=True)", ["preserve_dst=True keeps the outputs", "give pred="]),
    ("T.ptx.redux_sync.add.f32(z[0], z[1], 0xffffffff)", ["'f32'", "u32, s32"]),
    ("T.ptx.barrier.cluster.wait.release()", ["'release'", "acquire"]),
    ("T.ptx.vote_sync.any.pred(y[0], 1.5, 0xffffffff)", ["operand 'a'", "a predicate"]),
    ("T.ptx.griddepcontrol.sync()", ["'sync'", "launch_dependents, wait"]),
]  # fmt: skip

BAD_TEXT = [
    ('T.ptx.vote_sync(y[0], y[1] > T.uint32(0), T.uint32(4294967295), "any", "pred", "")',
     ["trailing string must be 'p1'"]),
    ('T.ptx.bar(T.uint32(0), "", "sink", "")', ["slot .action is 'sink'", "allowed: sync", "allowed: arrive"]),
]  # fmt: skip


globals().update(family_tests(CASES, BAD_CHAINS, BAD_TEXT, NO_COMPILE))
