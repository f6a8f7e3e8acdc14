"""Race checks of the interpreter's memory accesses: shared-memory reads and writes of
one barrier epoch, and plain global stores that race within a statement or across a launch.
Called by the buffer loads and stores (engine_mem.py) and the device entry (engine_stmt.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from tirx.ops.semantics import dtypes as D
from tirx.ops.semantics.errors import RaceError
from tirx.ops.semantics.lanes import ATOMIC_TAG as _ATOMIC_T
from tirx.ops.semantics.lanes import TAG_BASE as _TB
from tirx.ops.semantics.lanes import full as _full
from tirx.ops.semantics.lanes import race_state as _race_state
from tirx.ops.semantics.lanes import stamps as _stamps
from tirx.ops.semantics.memory import Mem

from ..ir import expr as E
from ..ir.buffer import Buffer
from ..ir.types import PrimType

if TYPE_CHECKING:
    from .state import Ctx, Launch


# ----------------------------------------------------------------------------- races
# Shared-memory accesses are stamped ``epoch * _TB + thread`` (epoch: barriers this block
# has passed; tirx/ops/semantics/lanes.py). A read races when the element's last write stamp is from this epoch and
# another thread; a write races with another thread's write or read of this epoch.
class _Act:
    """The active lanes of an access: flat indices with their stamps (lazily their lanes)."""

    __slots__ = ("base", "fi", "lanes_of", "mine", "tid")

    def __init__(self, c: Ctx, flat: np.ndarray):
        L = c.launch
        assert L is not None  # race checks run only inside a launch
        base, mine = _stamps(L)
        m = None if c.count == c.N else c.mask
        if flat.ndim > 1:
            w = flat.shape[1]
            base = np.repeat(base, w)
            mine = np.repeat(mine, w)
            if m is not None:
                m = np.repeat(m, w)
            flat = flat.reshape(-1)
            div = w
        else:
            flat = _full(flat, c.N)
            div = 1
        if m is not None:
            flat, base, mine = flat[m], base[m], mine[m]
        self.fi, self.base, self.mine = flat, base, mine

        def lanes_of(k: int, m=m, div=div) -> int:
            pos = k if m is None else int(np.flatnonzero(m)[k])
            return pos // div

        self.lanes_of = lanes_of


def _index_str(buf: Buffer, row_flat: int) -> str:
    shp = []
    for s in buf.shape:
        if isinstance(s, E.IntImm):
            shp.append(s.value)
        else:
            return str(row_flat)
    if not shp:
        return "()"
    try:
        return str(tuple(int(x) for x in np.unravel_index(row_flat, shp)))
    except ValueError:
        return str(row_flat)


def _other(c: Ctx, lane: int, stamp: int) -> str:
    t = int(stamp) % _TB
    if t == _ATOMIC_T:
        return "an atomic operation"
    L = c.launch
    assert L is not None  # race checks run only inside a launch
    return c.describe(lane - lane % L.T + t)


def _race_read(c: Ctx, mem: Mem, t: PrimType, flat: np.ndarray, buf: Buffer, at: str = "") -> None:
    rs = _race_state(mem, t)
    wst, rst = rs.wst, rs.rst
    a = _Act(c, flat)
    if not rs.dirty:
        if not rs.full and (wst.min() >= 0 or len(mem.races) > 1):
            rs.full = True
        if rs.full:
            rst[a.fi] = a.mine
            return
    row = mem.view(t).shape[1]
    ws = wst[a.fi]
    # with views of several dtypes over one allocation, each view keeps its own stamps, so
    # "never written" cannot be told from "written through another view": not checked then
    if ws.size and ws.min() < 0 and len(mem.races) == 1:
        k = int(np.flatnonzero(ws < 0)[0])
        raise RaceError(
            f"read of shared buffer {buf.name} at index {_index_str(buf, int(a.fi[k]) % row)} that no thread "
            f"wrote, by {c.describe(a.lanes_of(k))} {at}"
        )
    bad = (ws >= a.base) & (ws != a.mine)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        lane = a.lanes_of(k)
        raise RaceError(
            f"missing barrier: shared buffer {buf.name} at index {_index_str(buf, int(a.fi[k]) % row)} is read by "
            f"{c.describe(lane)} after {_other(c, lane, ws[k])} wrote it with no cta_sync in between {at}"
        )
    rst[a.fi] = a.mine


def _same_note(same: Any) -> str:
    if bool(same):
        return " (both write the same value: still a race, which CUDA's racecheck reports as a warning)"
    return ""


def _race_write(
    c: Ctx, mem: Mem, t: PrimType, flat: np.ndarray, val: np.ndarray, buf: Buffer, at: str = ""
) -> None:
    rs = _race_state(mem, t)
    rs.dirty = True
    wst, rst = rs.wst, rs.rst
    view1 = mem.view(t).reshape(-1)
    row = mem.view(t).shape[1]
    a = _Act(c, flat)
    fi = a.fi
    sval = D.to_storage(val, t)
    if flat.ndim > 1:
        sv = np.broadcast_to(sval, flat.shape).reshape(-1)
        if c.count != c.N:
            sv = sv[np.repeat(c.mask, flat.shape[1])]
    else:
        sv = _full(sval, c.N)
        if c.count != c.N:
            sv = sv[c.mask]
    ws = wst[fi]
    waw = (ws >= a.base) & (ws != a.mine)
    if waw.any():
        k = int(np.flatnonzero(waw)[0])
        lane = a.lanes_of(k)
        raise RaceError(
            f"write-write race: shared buffer {buf.name} at index {_index_str(buf, int(fi[k]) % row)} is "
            f"written by {c.describe(lane)} and by {_other(c, lane, ws[k])} with no cta_sync in between {at}"
            + _same_note(view1[fi[k]] == sv[k])
        )
    rs = rst[fi]
    war = (rs >= a.base) & (rs != a.mine)
    if war.any():
        k = int(np.flatnonzero(war)[0])
        lane = a.lanes_of(k)
        raise RaceError(
            f"missing barrier: shared buffer {buf.name} at index {_index_str(buf, int(fi[k]) % row)} is written "
            f"by {c.describe(lane)} after {_other(c, lane, rs[k])} read it with no cta_sync in between {at}"
        )
    if fi.size > 1:
        order = np.argsort(fi, kind="stable")
        sf = fi[order]
        sm = a.mine[order]
        same = (sf[1:] == sf[:-1]) & (sm[1:] != sm[:-1])  # one address, two threads
        if same.any():
            k = int(np.flatnonzero(same)[0])
            la, lb = a.lanes_of(int(order[k])), a.lanes_of(int(order[k + 1]))
            raise RaceError(
                f"write-write race: shared buffer {buf.name} at index {_index_str(buf, int(sf[k]) % row)} is "
                f"written by {c.describe(la)} and {c.describe(lb)} in one statement {at}"
                + _same_note(sv[order[k]] == sv[order[k + 1]])
            )
    wst[fi] = a.mine


def _value_keys(val: np.ndarray, t: PrimType) -> np.ndarray:
    """The stored bits of values as unsigned integers, every NaN one key (a GPU's NaN
    payloads differ from numpy's), so equal keys are equal memory contents."""
    sv = np.ascontiguousarray(D.to_storage(val, t))
    keys = sv.view(f"uint{sv.dtype.itemsize * 8}").astype(np.uint64)
    if val.dtype.kind == "f":
        nan = np.isnan(val)
        if nan.any():
            keys = np.where(nan, np.uint64(2**64 - 1), keys)
    return keys


def _global_conflict(c: Ctx, flat: np.ndarray, val: np.ndarray, buf: Buffer, t: PrimType, at: str) -> None:
    """Two threads of one store statement writing different values to one global address,
    whether the address differs per thread or not (``A[0] = tid``). The same value from
    several threads is benign in global memory and not reported; atomics never come here."""
    if c.count < 2:
        return
    m = None if c.count == c.N else c.mask
    if flat.shape[0] > 1:
        f = (flat if m is None else flat[m]).reshape(-1)
        if (f[1:] > f[:-1]).all():  # strictly increasing: no address twice (the usual case)
            return
    if flat.ndim == 1 and val.shape[0] == 1 and val.ndim == 1:
        return  # one value for every thread
    w = flat.shape[1] if flat.ndim > 1 else 1
    act = np.arange(c.N) if m is None else np.flatnonzero(m)
    addr = np.broadcast_to(flat.reshape(flat.shape[0], w), (c.N, w))[act].reshape(-1)
    keys = _value_keys(val, t)
    keys = np.broadcast_to(keys.reshape(keys.shape[0], -1), (c.N, w))[act].reshape(-1)
    lanes = np.repeat(act, w)
    order = np.argsort(addr, kind="stable")
    sa, sk, sl = addr[order], keys[order], lanes[order]
    start = np.flatnonzero(np.r_[True, sa[1:] != sa[:-1]])
    bad = (np.minimum.reduceat(sl, start) != np.maximum.reduceat(sl, start)) & (
        np.minimum.reduceat(sk, start) != np.maximum.reduceat(sk, start)
    )
    if not bad.any():
        return
    g = int(np.flatnonzero(bad)[0])
    lo = int(start[g])
    hi = int(start[g + 1]) if g + 1 < len(start) else len(sa)
    gl, gk = sl[lo:hi], sk[lo:hi]
    # two writers of one address with different lanes and different values: one of them
    # differs from the first writer in both, or (else) the first lane wrote two values
    j = np.flatnonzero((gl != gl[0]) & (gk != gk[0]))
    if j.size:
        la, lb = int(gl[0]), int(gl[j[0]])
    else:
        la = int(gl[np.flatnonzero(gk != gk[0])[0]])
        lb = int(gl[np.flatnonzero(gl != gl[0])[0]])
    la, lb = min(la, lb), max(la, lb)
    raise RaceError(
        f"write-write race: global buffer {buf.name} at element {int(sa[lo])} is written with different "
        f"values by {c.describe(la)} and {c.describe(lb)} in one statement {at} (make one thread write it, "
        "or use an atomic)"
    )


class _GlobalWrites:
    """One launch's last plain store to each element of the global allocations it wrote, for
    write-write races between statements: per element the writer (``who``: global block *
    ``_TB`` + thread, -1: not written in this launch), that block's barrier count then
    (``ep``), the stored bits (``key``, see ``_value_keys``), the statement (``site``) and
    whether other threads stored the same bits unordered with it (``many``: then any
    thread's different value races, the recorded writer's too).
    ``epochs`` keeps the final barrier count of the blocks of finished chunks."""

    __slots__ = ("epochs", "sites", "state")

    def __init__(self, nblocks: int):
        self.epochs = np.zeros(nblocks, dtype=np.int64)
        self.sites: dict[str, int] = {}
        self.state: dict = {}

    def arrays(self, mem: Mem, t: PrimType) -> tuple:
        st = self.state.get((mem, t.base))
        if st is None:
            n = mem.view(t).shape[1]
            st = self.state[(mem, t.base)] = (
                np.full(n, -1, dtype=np.int64),
                np.zeros(n, dtype=np.int64),
                np.zeros(n, dtype=np.uint64),
                np.zeros(n, dtype=np.int32),
                np.zeros(n, dtype=bool),
            )
        return st

    def site(self, at: str) -> int:
        return self.sites.setdefault(at, len(self.sites))

    def site_name(self, k: int) -> str:
        return next((a for a, v in self.sites.items() if v == k), "")


def _one_cluster(L: Launch, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether global blocks ``a`` and ``b`` are in one cluster of the launch."""
    if L.cluster == (1, 1, 1):
        return a == b
    gx, gy, _ = L.grid
    cx, cy, cz = L.cluster

    def cid(g: np.ndarray) -> tuple:
        return (g % gx) // cx, ((g // gx) % gy) // cy, (g // (gx * gy)) // cz

    return np.logical_and.reduce([x == y for x, y in zip(cid(a), cid(b))])


def _global_order(
    c: Ctx, mem: Mem, flat: np.ndarray, val: np.ndarray, buf: Buffer, t: PrimType, at: str
) -> None:
    """A plain global store against the launch's earlier ones: a thread of the same block
    that stored a different value to an element with no block barrier since, or a thread of
    another block that stored one and has passed no barrier since (the interpreter cannot
    tell a cta_sync from a cluster barrier of its cluster, so a barrier in between hides the
    race there; a block of another cluster or chunk is never ordered with it),
    is a write-write race: the element's final value depends on which store lands last.
    Stores in one statement are ``_global_conflict``'s; atomics never come here."""
    L = c.launch
    assert L is not None  # race checks run only inside a launch
    gw = L.gw
    if gw is None or c.count == 0:
        return
    who, ep, key, site, many = gw.arrays(mem, t)
    N, m = c.N, (None if c.count == c.N else c.mask)
    keys = _value_keys(val, t)
    bl = L.get("bl")
    me = L.get("bid").astype(np.int64) * _TB + L.get("tid")
    mep = L.epoch[bl]
    if flat.ndim == 1 and m is None:
        addr, kk = _full(flat, N), _full(keys.reshape(-1), N)
    else:
        w = flat.shape[1] if flat.ndim > 1 else 1
        act = np.arange(N) if m is None else np.flatnonzero(m)
        addr = np.broadcast_to(flat.reshape(flat.shape[0], w), (N, w))[act].reshape(-1)
        kk = np.broadcast_to(keys.reshape(keys.shape[0], -1), (N, w))[act].reshape(-1)
        lanes = np.repeat(act, w)
        me, mep = me[lanes], mep[lanes]
    pw = who[addr]
    seen = np.flatnonzero(pw >= 0)
    conc = np.zeros(addr.shape[0], dtype=bool)  # an earlier store unordered with this one
    if seen.size:
        a, pws, pe = addr[seen], pw[seen], ep[addr[seen]]
        pg = pws // _TB
        same = pg == me[seen] // _TB
        cur = gw.epochs[pg]
        here = (pg >= L.b0) & (pg < L.b0 + L.nb)
        cur[here] = L.epoch[pg[here] - L.b0]
        # only a cluster barrier orders two blocks (and only of one cluster, always one chunk)
        apart = ~here | ~_one_cluster(L, pg, me[seen] // _TB)
        unordered = np.where(same, pe == mep[seen], apart | (pe == cur))
        other = unordered & ((pws != me[seen]) | many[a])
        bad = other & (key[a] != kk[seen])
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            j = int(seen[k])
            mine = int(me[j] // _TB - L.b0) * L.T + int(me[j] % _TB)
            theirs = int(pg[k] - L.b0) * L.T + int(pws[k] % _TB)
            who_else = L.describe(theirs) if theirs != mine else "several threads"
            before = gw.site_name(int(site[a[k]]))
            why = (
                "with no cta_sync in between" if bool(same[k]) else "and no barrier orders two blocks' stores"
            )
            raise RaceError(
                f"write-write race: global buffer {buf.name} at element {int(a[k])} is written with different "
                f"values by {who_else} {before} and by {L.describe(mine)} {at} {why} (make one "
                "thread write it, or use an atomic)"
            )
        conc[seen] = other  # same bits, another thread, unordered: later stores must agree with both
    if addr.shape[0] > 1 and not (addr[1:] > addr[:-1]).all():  # one element, several threads here
        order = np.argsort(addr, kind="stable")
        sa, sm = addr[order], me[order]
        dup = (sa[1:] == sa[:-1]) & (sm[1:] != sm[:-1])
        if dup.any():
            conc[order[1:][dup]] = True
            conc[order[:-1][dup]] = True
    many[addr] = False
    many[addr[conc]] = True
    who[addr] = me
    ep[addr] = mep
    key[addr] = kk
    site[addr] = gw.site(at)
