"""Tile schedulers of the attention forward (tirx/kernels/hopper/attention.py, ``SCHED``): the
L2-grouped longest-first tile order is a permutation of the (batch * head, query block) tiles
(pure-Python mirror, and an interpreter run of a kernel that walks the persistent loop with
the kernel's own ``tile_coords`` and records what it visits); the variable-length kernel's
CTAs cover every row of every sequence once (or leave it NaN when ``max_seqlen_q`` is too small;
the kernel's own ``varlen_*`` helpers on the interpreter); the persistent producer /
consumer protocol (K / V ring and Q buffer on a running counter, ping-pong turns as one ring
over the tiles) runs hazard- and deadlock-free under random interleavings; the kernels
compile for sm_90a without spills. On a GPU: correctness of ``"lpt"`` and ``"persistent"``
over odd shapes (several tiles per CTA, partial head groups, ragged tiles, causal)."""

from __future__ import annotations

import os
import random
import re

import numpy as np
import pytest
from gpu_util import require_gpu as _gpu
from hopper_util import ARCH, assert_round_trips, compile_clean, no_disk_cache  # noqa: F401 (an autouse fixture)
from hypothesis import given, settings
from hypothesis import strategies as st

import tirx
import tirx.interp as ti
from tirx.kernels import attn as AH
from tirx.kernels.hopper import attention as A
from tirx.script import tirx as T


def _nblk(mb: int, causal: bool, S: int, BM: int, BN: int) -> int:
    return min((mb * BM + BM + BN - 1) // BN, (S + BN - 1) // BN) if causal else (S + BN - 1) // BN


# ------------------------------------------------------------------------ tile order
@given(st.integers(1, 40), st.integers(1, 40), st.data(), st.booleans())
def test_tile_order_is_a_grouped_longest_first_permutation(bh_n, mblocks, data, causal):
    hg = data.draw(st.integers(1, bh_n + 2))  # HEADS_L2 may exceed the heads
    order = [A.tile_order(t, bh_n, mblocks, hg, causal) for t in range(bh_n * mblocks)]
    assert sorted(order) == [(b, m) for b in range(bh_n) for m in range(mblocks)]
    for g0 in range(0, bh_n * mblocks, hg * mblocks):
        grp = order[g0 : g0 + hg * mblocks]
        heads = sorted({b for b, _ in grp})
        assert heads == list(range(heads[0], heads[0] + min(hg, bh_n - heads[0])))  # one L2 group
        mbs = [m for _, m in grp]  # query blocks: longest (last) first when causal
        assert mbs == sorted(mbs, reverse=causal)


@pytest.mark.parametrize(
    "bh_n,s,d,want", [(64, 4096, 128, 16), (64, 4096, 64, 32), (16, 16384, 128, 4), (3, 4096, 128, 3)]
)
def test_heads_per_group(bh_n, s, d, want):
    assert A.heads_per_group(bh_n, s, d) == want
    assert A.heads_per_group(bh_n, s, d) * 4 * s * d <= max(A.L2_BYTES, 4 * s * d)


@T.jit
def _walk(
    ORD: T.Tensor((NT,), "int32"),  # noqa: F821
    NB: T.Tensor((NT,), "int32"),  # noqa: F821
    CNT: T.Tensor((NT,), "int32"),  # noqa: F821
    CTA: T.Tensor((NT,), "int32"),  # noqa: F821
    *,
    BH: T.constexpr,
    MB: T.constexpr,
    NT: T.constexpr,
    HG: T.constexpr,
    CAUSAL: T.constexpr,
    CTAS: T.constexpr,
    S: T.constexpr,
    BM: T.constexpr,
    BN: T.constexpr,
):
    """The persistent kernel's tile loop with its own helpers, recording what it visits."""
    T.device_entry(launch=T.cuda.LaunchConfig(grid=CTAS, block=1))
    bid = T.cuda.block_idx("x")
    for t in range(bid, NT, T.cuda.grid_dim("x")):
        bh, mb = A.tile_coords(t, BH, MB, HG, CAUSAL)
        ORD[t] = bh * MB + mb
        NB[t] = A.key_blocks(mb * BM, CAUSAL, S, BM, BN)
        CNT[bh * MB + mb] = CNT[bh * MB + mb] + 1
        CTA[t] = bid


@settings(max_examples=12, deadline=None)
@given(
    st.integers(1, 7),
    st.sampled_from([(64, 64), (128, 128), (128, 176), (192, 128)]),
    st.integers(1, 5),
    st.data(),
    st.booleans(),
)
def test_interpreted_tile_walk_visits_every_tile_once(bh_n, tiles, mrows, data, causal):
    BM, BN = tiles
    S = max(BM, BN) + 8 * data.draw(st.integers(0, (mrows - 1) * BM // 8))
    mb_n = (S + BM - 1) // BM
    nt = bh_n * mb_n
    hg = data.draw(st.integers(1, bh_n + 2))  # HEADS_L2 may exceed the heads
    ctas = data.draw(st.integers(1, nt))
    f = _walk.specialize(BH=bh_n, MB=mb_n, NT=nt, HG=hg, CAUSAL=causal, CTAS=ctas, S=S, BM=BM, BN=BN)
    ordr, nb, cnt, cta = (np.full(nt, -1, np.int32) for _ in range(4))
    cnt[:] = 0
    ti.compile(f)(ordr, nb, cnt, cta)
    assert (cnt == 1).all(), cnt  # every (batch * head, query block) exactly once
    want = [A.tile_order(t, bh_n, mb_n, hg, causal) for t in range(nt)]
    assert ordr.tolist() == [b * mb_n + m for b, m in want]
    assert nb.tolist() == [_nblk(m, causal, S, BM, BN) for _, m in want]
    assert cta.tolist() == [t % ctas for t in range(nt)]  # CTA c takes tiles c, c + CTAS, ...
    assert min(nb) >= 1


@T.jit
def _walk_varlen(
    CU: T.Tensor((NB + 1,), "int32"),  # noqa: F821
    ROWS: T.Tensor((NQ,), "int32"),  # noqa: F821
    LOST: T.Tensor((NQ,), "int32"),  # noqa: F821
    NB: T.int32,
    NQ: T.int32,
    GX: T.int32,
    *,
    BM: T.constexpr,
    CAUSAL: T.constexpr,
):
    """The variable-length kernel's CTA (x, 0, b) prologue with its own helpers: the rows of the
    query block it computes (``ROWS``) and, for CTA 0, the rows it stores as NaN (``LOST``)."""
    T.device_entry(launch=T.cuda.LaunchConfig(grid=(GX, 1, NB), block=1))
    q0, lq = A.varlen_rows(CU, NQ, T.cuda.block_idx("z"))
    first, lost = A.varlen_lost(lq, T.cuda.grid_dim("x"), BM, CAUSAL)
    if lost > 0 and T.cuda.block_idx("x") == 0:
        for i in range(lost):
            LOST[q0 + first + i] = LOST[q0 + first + i] + 1
    if T.cuda.block_idx("x") * BM >= lq:
        return
    m0 = A.varlen_block(lq, T.cuda.block_idx("x"), BM, CAUSAL) * BM
    for r in range(BM):
        if m0 + r < lq:  # (the kernel stores only these rows: store_rows_below)
            ROWS[q0 + m0 + r] = ROWS[q0 + m0 + r] + 1


@settings(max_examples=30, deadline=None)
@given(
    lens=st.lists(st.integers(0, 300), min_size=1, max_size=5),
    bm=st.sampled_from([64, 128, 192]),
    short=st.integers(0, 3),
    causal=st.booleans(),
)
def test_varlen_blocks_cover_every_row_once(lens, bm, short, causal):
    """Every row of every sequence is computed by exactly one CTA when the grid covers the
    longest sequence; with ``short`` blocks fewer, the rows left out are NaN, each once, and
    together with the computed ones they are every row; rows outside the sequences (the
    buffer's tail) are never touched."""
    cu = np.cumsum([0, *lens]).astype(np.int32)
    nq = int(cu[-1]) + 5
    need = max(-(-n // bm) for n in lens)
    gx = max(1, need - short)
    rows, lost = np.zeros(nq, np.int32), np.zeros(nq, np.int32)
    f = _walk_varlen.specialize(BM=bm, CAUSAL=causal)
    ti.compile(f)(cu, rows, lost, len(lens), nq, gx)
    assert (rows + lost)[: cu[-1]].tolist() == [1] * int(cu[-1])
    assert not (rows + lost)[cu[-1] :].any()
    if gx >= need:
        assert not lost.any()
    for b, n in enumerate(lens):  # causal: the grid takes the last blocks, so the first rows are lost
        seq = lost[cu[b] : cu[b + 1]]
        if seq.any():
            idx = np.flatnonzero(seq)
            assert (idx[0] == 0) if causal else (idx[-1] == n - 1)


@T.jit
def _walk_dynamic(
    ORD: T.Tensor((NT,), "int32"),  # noqa: F821
    CNT: T.Tensor((NT,), "int32"),  # noqa: F821
    CTA: T.Tensor((NT,), "int32"),  # noqa: F821
    Sem: T.Tensor((2,), "int32"),
    *,
    BH: T.constexpr,
    MB: T.constexpr,
    NT: T.constexpr,
    HG: T.constexpr,
    CAUSAL: T.constexpr,
    CTAS: T.constexpr,
):
    """The ``"dynamic"`` kernel's tile loop (counter included), recording what it visits."""
    T.device_entry(launch=T.cuda.LaunchConfig(grid=CTAS, block=1))
    t: T.int32 = T.cuda.block_idx("x")
    while t < NT:
        nxt = A.take_tile(Sem)
        bh, mb = A.tile_coords(t, BH, MB, HG, CAUSAL)
        ORD[t] = bh * MB + mb
        CNT[bh * MB + mb] = CNT[bh * MB + mb] + 1
        CTA[t] = T.cuda.block_idx("x")
        t = nxt
    A.count_out(Sem)


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 9), st.integers(1, 6), st.data(), st.booleans())
def test_interpreted_dynamic_walk_visits_every_tile_once_and_resets(bh_n, mb_n, data, causal):
    nt = bh_n * mb_n
    hg = data.draw(st.integers(1, bh_n + 2))  # HEADS_L2 may exceed the heads
    ctas = data.draw(st.integers(1, nt))
    k = ti.compile(_walk_dynamic.specialize(BH=bh_n, MB=mb_n, NT=nt, HG=hg, CAUSAL=causal, CTAS=ctas))
    sem = np.zeros(2, np.int32)
    for _ in range(2):  # the counter is back at zero for the second launch
        ordr, cnt, cta = (np.full(nt, -1, np.int32) for _ in range(3))
        cnt[:] = 0
        k(ordr, cnt, cta, sem)
        assert (cnt == 1).all(), cnt
        assert ordr.tolist() == [
            b * mb_n + m for b, m in (A.tile_order(t, bh_n, mb_n, hg, causal) for t in range(nt))
        ]
        assert cta[:ctas].tolist() == list(range(ctas))  # the first wave: tile = blockIdx.x
        assert sem.tolist() == [0, 0]


# ---------------------------------------------------------------- persistent protocol
def _simulate(nblks, stages, consumers, pingpong, overlap, rng, ring=True, dynamic=False, one_loop=False):
    """Run the kernel's persistent producer / consumer protocol (a mirror of ``load_tile`` and
    ``attend_tile``) for one CTA whose tiles have ``nblks`` key blocks, interleaving the
    warpgroups in the order ``rng`` picks; raise AssertionError on a hazard or deadlock.
    ``dynamic``: ``SCHED="dynamic"`` (the tile number comes with Q in ``tid``, a sentinel ends
    the consumers' loop, the turn ring is always closed and warpgroup 1 takes the last turn).
    ``one_loop``: ``ONE_LOOP=True`` (no peeled step; stand-in steps read V(0) / V(nblk - 1))."""
    ph = {}  # mbarrier -> completed phases
    pend = {}  # mbarrier -> arrivals in the running phase
    need = {}

    def init(name, count):
        ph[name], pend[name], need[name] = 0, 0, count

    init("qfull", 1)
    init("qempty", consumers)
    for s in range(stages):
        for kind, cnt in (("kfull", 1), ("vfull", 1), ("kempty", consumers), ("vempty", consumers)):
            init((kind, s), cnt)
    buf = {"q": None, "tid": None}
    for s in range(stages):
        buf["k", s] = buf["v", s] = None

    def arrive(name):
        pend[name] += 1
        assert pend[name] <= need[name]
        if pend[name] == need[name]:
            ph[name] += 1
            pend[name] = 0

    nb = {b: {"gen": 0, "in": set()} for b in range(1, consumers + 1)}

    def bar_arrive(b, w):
        st = nb[b]
        assert w not in st["in"], f"warpgroup {w} arrives twice on named barrier {b}"
        st["in"].add(w)
        if len(st["in"]) == 2:
            prev = consumers if b == 1 else b - 1
            assert st["in"] == {b, prev}, st["in"]
            st["gen"] += 1
            st["in"] = set()

    def sync(b, w):
        g = nb[b]["gen"]
        bar_arrive(b, w)
        return ("nb", b, g)

    def wait(name, k):
        return ("mb", name, k)  # phase k (0-based) of ``name`` must have completed

    def producer():
        it = 0
        for n, nblk in enumerate(nblks):
            for j in range(nblk):
                i, s = it + j, (it + j) % stages
                yield wait(("kempty", s), i // stages - 1)
                buf["k", s] = (n, j)
                arrive(("kfull", s))
                if j == 0:
                    yield wait("qempty", n - 1)
                    buf["q"] = buf["tid"] = n
                    arrive("qfull")
                yield wait(("vempty", s), i // stages - 1)
                buf["v", s] = (n, j)
                arrive(("vfull", s))
            it += nblk
        if dynamic:
            yield wait("qempty", len(nblks) - 1)
            buf["tid"] = "end"
            arrive("qfull")

    def consumer(w):
        it = 0
        for n, nblk in enumerate(nblks):
            first, more = n == 0, n + 1 < len(nblks) or dynamic
            yield wait("qfull", n)
            if dynamic:
                assert buf["tid"] == n
            if (pingpong or overlap) and one_loop:
                # one loop of nblk + 1 steps: step j takes S(j) (j < nblk, reads Q and K(j))
                # and P(j-1) V(j-1) in one turn; step 0's stand-in P V reads V(0), step nblk's
                # stand-in S reads V(nblk - 1) only (Q may be the next tile's by then)
                for j in range(nblk + 1):
                    i = it + j
                    s = i % stages
                    iv = i - 1 if j > 0 else i
                    yield from (wait(("kfull", s), i // stages),) if j < nblk else ()
                    yield wait(("vfull", iv % stages), iv // stages)
                    if pingpong and (j > 0 or w > 1 or (ring and not first)):
                        yield sync(w, w)
                    if j < nblk:
                        assert buf["q"] == n and buf["k", s] == (n, j)
                    assert buf["v", iv % stages] == (n, max(j - 1, 0))
                    if pingpong and (j < nblk or w < consumers or (ring and more)):
                        bar_arrive(w % consumers + 1, w)
                    if j < nblk:
                        arrive(("kempty", s))
                        if j == nblk - 1:
                            arrive("qempty")
                    if j > 0:
                        arrive(("vempty", iv % stages))
            elif pingpong or overlap:
                s0 = it % stages
                yield wait(("kfull", s0), it // stages)
                if pingpong and (w > 1 or (ring and not first)):
                    yield sync(w, w)
                assert buf["q"] == n and buf["k", s0] == (n, 0)
                if pingpong:
                    bar_arrive(w % consumers + 1, w)
                arrive(("kempty", s0))
                if nblk == 1:
                    arrive("qempty")
                for j in range(1, nblk):
                    i = it + j
                    s, sp = i % stages, (i - 1) % stages
                    yield wait(("kfull", s), i // stages)
                    yield wait(("vfull", sp), (i - 1) // stages)
                    if pingpong:
                        yield sync(w, w)
                    assert buf["q"] == n and buf["k", s] == (n, j) and buf["v", sp] == (n, j - 1)
                    if pingpong:
                        bar_arrive(w % consumers + 1, w)
                    arrive(("kempty", s))
                    if j == nblk - 1:
                        arrive("qempty")
                    arrive(("vempty", sp))
                il = it + nblk - 1
                yield wait(("vfull", il % stages), il // stages)
                if pingpong:
                    yield sync(w, w)
                assert buf["v", il % stages] == (n, nblk - 1)
                if pingpong and w < consumers:
                    bar_arrive(w + 1, w)
                if pingpong and ring and w == consumers and more:
                    bar_arrive(1, w)
                arrive(("vempty", il % stages))
            else:
                for j in range(nblk):
                    i, s = it + j, (it + j) % stages
                    yield wait(("kfull", s), i // stages)
                    assert buf["q"] == n and buf["k", s] == (n, j)
                    arrive(("kempty", s))
                    if j == nblk - 1:
                        arrive("qempty")
                    yield wait(("vfull", s), i // stages)
                    assert buf["v", s] == (n, j)
                    arrive(("vempty", s))
            it += nblk
        if dynamic:
            yield wait("qfull", len(nblks))
            assert buf["tid"] == "end"
            if pingpong and w == 1:
                yield sync(1, w)

    def ready(req):
        if req is None:
            return True
        if req[0] == "nb":
            return nb[req[1]]["gen"] > req[2]
        _, name, k = req
        # a parity wait cannot tell phase k from k + 2: the barrier must be at phase k or k + 1
        assert ph[name] in (k, k + 1), f"{name} at phase {ph[name]}, waited for phase {k}"
        return ph[name] == k + 1

    actors = {0: producer()}
    for w in range(1, consumers + 1):
        actors[w] = consumer(w)
    req = {a: None for a in actors}
    while actors:
        live = [a for a in sorted(actors) if ready(req[a])]
        assert live, f"deadlock: {req}"
        a = rng.choice(live)
        try:
            req[a] = next(actors[a])
        except StopIteration:
            del actors[a]
    # nothing left half-done at exit: no pending mbarrier arrival, no stray named-barrier arrive
    assert not any(pend.values()), pend
    assert all(not st["in"] for st in nb.values()), nb


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(1, 5), min_size=1, max_size=5),
    st.integers(2, 4),
    st.integers(1, 3),
    st.booleans(),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
@pytest.mark.parametrize("one_loop", [False, True])
@pytest.mark.parametrize("dynamic", [False, True])
def test_persistent_protocol_is_sound(dynamic, one_loop, nblks, stages, consumers, pingpong, overlap, seed):
    pp = pingpong and consumers > 1
    _simulate(nblks, stages, consumers, pp, overlap, random.Random(seed), dynamic=dynamic, one_loop=one_loop)


@pytest.mark.parametrize("one_loop", [False, True])
def test_protocol_check_catches_an_open_turn_ring(one_loop):
    # without warpgroup 1 waiting for the last warpgroup's final turn, warpgroup 1 arrives
    # twice on barrier 2 (next tile's first turn) in some interleaving
    fails = 0
    for seed in range(200):
        try:
            _simulate([2, 1, 3], 2, 2, True, True, random.Random(seed), ring=False, one_loop=one_loop)
        except AssertionError as e:
            assert "arrives twice" in str(e)
            fails += 1
    assert fails > 0


# ------------------------------------------------------------------------- compiles
def _nvrtc() -> None:
    pytest.importorskip("cuda.bindings.nvrtc")


def test_persistent_ptx_structure():
    _nvrtc()
    k = tirx.compile(A.KERNELS["attn_d128_causal_persistent"](), target=ARCH, cache=False)
    src = k.source
    assert "gridDim.x" in src and "qempty" in src
    assert len(re.findall(r"mbarrier\.try_wait\.parity", src)) >= 8
    assert "wgmma.wait_group.sync.aligned 1" in k.ptx and "bar.arrive" in k.ptx
    assert "__launch_bounds__(384, 1)" in src


def test_dynamic_takes_the_counter_and_resets_it():
    _nvrtc()
    f = A.KERNELS["attn_d128_causal_dynamic"]()
    # the counter is the fifth parameter (then the variable-length kernel's, void here)
    sem = f.params[4]
    assert sem.name == "Sem" and str(sem.ty) != "void"
    assert all(str(p.ty) == "void" for p in f.params[5:])
    other = A.KERNELS["attn_d128"]().params  # others: no counter (TIRx's T.NoneType() slot)
    assert other[4].name == "Sem" and str(other[4].ty) == "void"
    assert [p.name for p in tirx.compile(f, target=ARCH).info.params] == ["O", "TQ", "TK", "TV", "Sem"]
    src = tirx.compile(f, target=ARCH, cache=False).source
    assert src.count("atomicAdd(") == 2 and src.count("atomicExch(") == 2 and "__threadfence()" in src
    assert 'bar.sync %0, %1;" : : "r"(1u)' in src  # warpgroup 1 takes the ring's last turn


def _sass(f) -> str:
    import subprocess
    import tempfile

    from tirx.tools.cli import find_nvdisasm

    _nvrtc()
    exe = find_nvdisasm()
    if exe is None:
        pytest.skip("nvdisasm not installed")
    k = tirx.compile(f, target=ARCH, cache=False)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.cubin")
        with open(path, "wb") as fh:
            fh.write(k.cubin)
        return subprocess.run([exe, "-c", path], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("d", [128, 64])
def test_sched_sass_is_the_grid_kernels_in_kind(d):
    # the same tensor-core and exp2 work per key block as the default kernel, no local memory
    words = ("HGMMA", "tnspB", "MUFU.EX2", "USETMAXREG")
    base = _sass(A.make_attention(4, 16, 4096, d, True, **A.best_config(d)))
    for sched in ("lpt", "persistent", "dynamic"):
        sass = _sass(A.make_attention(4, 16, 4096, d, True, **dict(A.best_config(d), SCHED=sched)))
        assert [sass.count(w) for w in words] == [base.count(w) for w in words], sched
        assert "LDL" not in sass and "STL" not in sass, sched


def test_sched_defaults_leave_the_grid_kernel_alone():
    f = A.make_attention(2, 3, 640, 128, True, **A.best_config(128))
    g = A.make_attention(2, 3, 640, 128, True, **A.best_config(128), SCHED="grid", HEADS_L2=5, SMS=9)
    assert tirx.structural_equal(f, g)  # HEADS_L2 / SMS matter only to the other schedulers


@pytest.mark.parametrize(
    "name", ["attn_d128_causal_lpt", "attn_d128_persistent_simple", "attn_d128_causal_dynamic"]
)
def test_text_roundtrip(name):
    assert_round_trips(A.KERNELS[name]())


def test_sched_is_checked():
    with pytest.raises(Exception, match="SCHED"):
        A.make_attention(1, 1, 256, 128, SCHED="static")


# ------------------------------------------------------------------------------ GPU


_B128 = A.best_config(128)
_B64 = A.best_config(64)


@pytest.mark.gpu
@pytest.mark.parametrize(
    "b,h,s,d,causal,cfg",
    [
        # several tiles per CTA (SMS below the tile count), partial L2 groups (HEADS_L2)
        (1, 3, 640, 128, True, dict(_B128, SCHED="persistent", SMS=4)),
        (2, 5, 528, 128, True, dict(_B128, SCHED="persistent", SMS=7, HEADS_L2=3)),
        (2, 5, 528, 128, True, dict(_B128, SCHED="lpt", HEADS_L2=3)),
        (1, 2, 128, 128, True, dict(_B128, SCHED="persistent", SMS=1)),  # one key block per tile
        (
            2,
            3,
            400,
            128,
            False,
            dict(BM=128, BN=176, STAGES=2, PINGPONG=True, OVERLAP=True, SCHED="persistent", SMS=5),
        ),
        (2, 3, 640, 64, True, dict(_B64, SCHED="persistent", SMS=3)),
        (1, 3, 768, 64, False, dict(_B64, SCHED="lpt")),
        (2, 3, 640, 64, True, dict(_B64, SCHED="lpt", HEADS_L2=2)),
        (1, 3, 384, 128, True, dict(BM=128, BN=128, STAGES=2, SCHED="persistent", SMS=2)),  # simple path
        (1, 2, 512, 128, True, dict(BM=128, BN=128, STAGES=3, OVERLAP=True, SCHED="persistent", SMS=3)),
        (2, 2, 1024, 128, False, dict(_B128, SCHED="persistent")),  # fewer tiles than SMs
        (3, 7, 1152, 128, True, dict(_B128, SCHED="persistent", SMS=11)),
        # dynamic: tiles from the counter (run twice: the counter must be back at zero)
        (1, 3, 640, 128, True, dict(_B128, SCHED="dynamic", SMS=4)),
        (2, 5, 528, 128, True, dict(_B128, SCHED="dynamic", SMS=7, HEADS_L2=3)),
        (1, 2, 128, 128, True, dict(_B128, SCHED="dynamic", SMS=1)),
        (
            2,
            3,
            400,
            128,
            False,
            dict(BM=128, BN=176, STAGES=2, PINGPONG=True, OVERLAP=True, SCHED="dynamic", SMS=5),
        ),
        (2, 3, 640, 64, True, dict(_B64, SCHED="dynamic", SMS=3)),
        (1, 3, 384, 128, True, dict(BM=128, BN=128, STAGES=2, SCHED="dynamic", SMS=2)),
        (1, 2, 512, 128, True, dict(BM=128, BN=128, STAGES=3, OVERLAP=True, SCHED="dynamic", SMS=3)),
        (3, 7, 1152, 128, True, dict(_B128, SCHED="dynamic")),
        (3, 7, 1152, 64, False, dict(_B64, SCHED="dynamic", SMS=11)),
        # ONE_LOOP: the ring and the Q buffer across tiles without a peeled step
        (2, 5, 528, 128, True, dict(_B128, SCHED="persistent", SMS=7, HEADS_L2=3, ONE_LOOP=True)),
        (1, 2, 128, 128, True, dict(_B128, SCHED="persistent", SMS=1, ONE_LOOP=True)),
        (2, 3, 640, 64, True, dict(_B64, SCHED="dynamic", SMS=3, ONE_LOOP=True)),
        (1, 3, 384, 128, True, dict(_B128, SCHED="dynamic", SMS=1, ONE_LOOP=True)),
        # REVERSE (key blocks from the last one down) across tiles
        (2, 5, 528, 128, True, dict(_B128, SCHED="persistent", SMS=7, HEADS_L2=3, REVERSE=True)),
        (3, 7, 1152, 128, True, dict(_B128, SCHED="dynamic", REVERSE=True)),
        (2, 3, 640, 64, False, dict(_B64, SCHED="dynamic", SMS=3, REVERSE=True)),
        (2, 3, 640, 64, True, dict(_B128, SCHED="dynamic", SMS=3, REVERSE=True)),
        (2, 5, 528, 128, True, dict(_B128, SCHED="lpt", HEADS_L2=3, REVERSE=True)),
    ],
)
def test_gpu_attention_sched(b, h, s, d, causal, cfg):
    torch = _gpu()
    import torch.nn.functional as F

    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    kern = tirx.compile(A.make_attention(b, h, s, d, causal, **cfg), target="cuda")
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    for _ in range(2):
        o = torch.full_like(q, float("nan"))
        AH.run(kern, q, k, v, o, **cfg)
        torch.cuda.synchronize()
        assert not torch.isnan(o).any(), "NaN in output (unwritten element?)"
        err = ((o.float() - ref).norm() / ref.norm()).item()
        assert err < 1e-2, err
    if cfg["SCHED"] == "dynamic":
        assert AH.tile_counter(q.device).tolist() == [0, 0]


@pytest.mark.gpu
def test_gpu_dynamic_launches_on_two_streams_at_once():
    # head dim 64's best_config uses the dynamic scheduler: launches on two streams may run at
    # the same time, so each stream has its own tile counter (a shared one would hand one
    # launch's tiles to the other's CTAs)
    torch = _gpu()
    import torch.nn.functional as F

    cfg = A.best_config(64)
    assert cfg["SCHED"] == "dynamic"
    b, h, s, d = 2, 8, 2048, 64
    kern = tirx.compile(A.make_attention(b, h, s, d, False, **cfg), target="cuda")
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    qkv = [[torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3)] for _ in streams]
    refs = [F.scaled_dot_product_attention(*(t.float() for t in x)) for x in qkv]
    torch.cuda.synchronize()
    outs = [torch.full_like(x[0], float("nan")) for x in qkv]
    for _ in range(4):
        for strm, x, o in zip(streams, qkv, outs):
            with torch.cuda.stream(strm):
                AH.run(kern, *x, o, **cfg)
    torch.cuda.synchronize()
    for strm, o, ref in zip(streams, outs, refs):
        assert ((o.float() - ref).norm() / ref.norm()).item() < 1e-2
        assert AH.tile_counter(o.device, strm.cuda_stream).tolist() == [0, 0]
    assert AH.tile_counter(o.device, streams[0].cuda_stream) is not AH.tile_counter(
        o.device, streams[1].cuda_stream
    )
