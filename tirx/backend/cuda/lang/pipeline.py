"""Pipeline bookkeeping and mbarrier wrappers for software-pipelined CUDA kernels.

- ``PipelineState(depth, phase=None)``: the stage and phase registers of a ring of ``depth``
  slots (``init``, ``advance``).
- ``MBarrier(pool, depth, phase_offset=0, leader=None)``: ``depth`` mbarriers taken from an
  ``SMEMPool`` (``init``, ``wait``, ``arrive``, ``ptr_to``, ``remote_view``).
- ``TMABar``: an ``MBarrier`` whose ``arrive`` announces a TMA transaction byte count
  (``mbarrier.arrive.expect_tx``).
- ``TCGen05Bar``: an ``MBarrier`` arrived on by ``tcgen05.commit`` (Blackwell).
- ``Pipeline(pool, stages, full=..., empty=...)``: a full/empty barrier pair, initialized.

The classes are ``@T.meta_class``: their instances are Python values inside a kernel, and
their methods emit the statements where they are called.
"""

from __future__ import annotations

from typing import Any

from tirx.ir import PrimExpr
from tirx.ir.types import PointerType, PrimType, TensorType
from tirx.script import tirx as T
from tirx.surface.builder import IRBuilder
from tirx.surface.cells import Cell

from .alloc_pool import SMEMPool, _builder, _positive, _static_int


def _value(x: Any) -> Any:
    """A mutable scalar (``PipelineState.stage``) read as its value; anything else as is."""
    return x.load() if isinstance(x, Cell) else x


def _check_count(value: Any, name: str, where: str, *, allow_zero: bool = False) -> None:
    n = _static_int(value)
    if n is None:
        if isinstance(value, bool) or not isinstance(_value(value), PrimExpr):
            raise TypeError(f"{where}: {name} must be an int or an integer expression, got {value!r}")
        return
    if n < 0 or (n == 0 and not allow_zero):
        raise ValueError(f"{where}: {name} must be {'>= 0' if allow_zero else '> 0'}, got {n}")


# ------------------------------------------------------------------ stage / phase
@T.meta_class
class PipelineState:
    """The stage (``0 .. depth-1``) and phase bit of a ring buffer, as two ``int32`` registers.

    ``advance()`` moves to the next stage; past the last it wraps to 0 and flips the phase.
    Give ``phase`` to initialize both now, else call ``init(phase)`` later.
    """

    def __init__(self, depth: int, phase: Any = None):
        self.depth = _positive(depth, "depth", "PipelineState")
        _builder()
        self.stage = T.local_scalar("int32", name="v")
        self.phase = T.local_scalar("int32", name="v")
        if phase is not None:
            self.init(phase)

    @T.inline
    def init(self, phase):
        self.stage = 0
        self.phase = phase

    @T.inline
    def advance(self):
        if T.constexpr(self.depth == 1):
            self.phase = self.phase ^ 1
        else:
            self.stage = self.stage + 1
            if self.stage == self.depth:
                self.stage = 0
                self.phase = self.phase ^ 1


# ------------------------------------------------------------------ remote (cluster) addresses
def _scratch(dtype: str) -> Any:
    """A one-element local register for an instruction's result."""
    return _builder().alloc("v", TensorType((1,), PrimType(dtype), "local"))


def _rank(rank: Any, where: str) -> Any:
    r = _value(rank)
    n = _static_int(r)
    if n is not None:
        if n < 0:
            raise ValueError(f"{where}: remote must be a CTA rank >= 0, got {n}")
    elif not isinstance(r, PrimExpr) or not isinstance(r.ty, PrimType) or not r.ty.is_int:
        raise TypeError(f"{where}: remote must be a CTA rank (an int or integer expression), got {rank!r}")
    return T.uint32(r)


def _cluster_addr(ptr: Any, rank: Any) -> Any:
    """The 32-bit shared::cluster address of the local shared ``ptr`` in CTA ``rank``'s window
    (``mapa.shared::cluster.u32``)."""
    out = _scratch("uint32")
    T.evaluate(T.ptx.mapa.shared__cluster.u32(out[0], T.cuda.cvta_generic_to_shared(ptr), rank))
    return out[0]


def _arrive_cluster(addr: Any, pred: Any = None, count: Any = None, tx_count: Any = None) -> None:
    """``mbarrier.arrive[.expect_tx].shared::cluster.b64 _, [addr]{, count}``, maybe predicated."""
    ops: tuple
    if tx_count is not None:
        chain, ops = T.ptx.mbarrier.arrive.expect_tx.shared__cluster.b64, (addr, T.uint32(_value(tx_count)))
    else:
        chain = T.ptx.mbarrier.arrive.shared__cluster.b64
        ops = (addr,) if count is None else (addr, T.uint32(_value(count)))
    T.evaluate(chain(*ops) if pred is None else chain(*ops, pred=_value(pred)))


# ------------------------------------------------------------------ barriers
@T.meta_class
class MBarrier:
    """``depth`` mbarriers (one per stage) in shared memory taken from ``pool``.

    ``init(count)``: the ``leader`` thread (default: thread rank 0 of the CTA) initializes
    every slot to expect ``count`` arrivals. ``wait(stage, phase)`` blocks until the phase
    ``phase ^ phase_offset`` of slot ``stage`` completes. ``arrive(stage, remote=None,
    pred=None, count=None)`` arrives (``count`` times, predicated on ``pred``), on CTA
    ``remote``'s barrier of the cluster when given. ``remote_view(rank)`` is a view of CTA
    ``rank``'s barriers that only ``arrive`` and ``ptr_to``.
    """

    def __init__(self, pool: Any, depth: int, phase_offset: Any = 0, leader: Any = None):
        where = type(self).__name__
        if not isinstance(pool, SMEMPool):
            raise TypeError(f"{where}: pool must be an SMEMPool, got {type(pool).__name__}")
        self.depth = _positive(depth, "depth", where)
        self.phase_offset = phase_offset
        self.buf = pool.alloc((self.depth,), "uint64", align=8)
        self.leader = T.cuda.thread_rank() == 0 if leader is None else leader
        self._remote_rank: Any = None

    def _local_only(self, what: str) -> None:
        if self._remote_rank is not None:
            raise ValueError(f"{type(self).__name__}.{what}: a remote_view() is for arrive only")

    def init(self, count: Any) -> None:
        """Initialize every slot to expect ``count`` arrivals (by the leader thread)."""
        self._local_only("init")
        _check_count(count, "count", f"{type(self).__name__}.init")
        self._emit_init(count)

    @T.inline
    def _emit_init(self, count):
        if self.leader:
            for i in T.unroll(self.depth):
                T.ptx.mbarrier.init.shared.b64(self.buf.ptr_to([i]), T.uint32(count))

    def wait(self, stage: Any, phase: Any) -> None:
        """Block until the phase ``phase`` of slot ``stage`` has completed."""
        self._local_only("wait")
        self._emit_wait(stage, phase)

    @T.inline
    def _emit_wait(self, stage, phase):
        T.cuda.mbarrier_wait(self.buf.ptr_to([stage]), phase ^ self.phase_offset)

    def arrive(self, stage: Any, remote: Any = None, pred: Any = None, count: Any = None) -> None:
        """Arrive on slot ``stage`` (``count`` arrivals, default 1; only where ``pred``)."""
        where = f"{type(self).__name__}.arrive"
        if count is not None:
            _check_count(count, "count", where)
        bar = self.buf.ptr_to([_value(stage)])
        if self._remote_rank is not None:
            if remote is not None:
                raise ValueError(f"{where}: remote= cannot be given to a remote_view() (it has its CTA)")
            _arrive_cluster(bar, pred, count)
        elif remote is not None:
            _arrive_cluster(_cluster_addr(bar, _rank(remote, where)), pred, count)
        else:
            chain = T.ptx.mbarrier.arrive.shared.b64
            n = T.uint32(1 if count is None else _value(count))
            T.evaluate(chain(bar, n) if pred is None else chain(bar, n, pred=_value(pred)))

    def ptr_to(self, idx: Any) -> Any:
        """A pointer to the barrier of slot ``idx`` (a list of one index)."""
        return self.buf.ptr_to(idx)

    def remote_view(self, rank: Any) -> MBarrier:
        """These barriers as CTA ``rank`` of the cluster holds them: its ``arrive`` arrives
        there (``mbarrier.arrive.shared::cluster``); ``init`` and ``wait`` are refused."""
        self._local_only("remote_view")
        r = _rank(rank, f"{type(self).__name__}.remote_view")
        mapped = _scratch("uint64")
        T.evaluate(T.ptx.mapa.u64(mapped[0], self.buf.ptr_to([0]), r))
        b = IRBuilder.current()
        pty = PointerType(PrimType("uint64"), "shared")
        ptr = b.bind("remote_mbar_ptr", T.reinterpret(mapped[0], ty=pty), pty)
        view = object.__new__(type(self))
        view.depth = self.depth
        view.phase_offset = self.phase_offset
        view.leader = self.leader
        view.buf = b.decl(
            "remote_mbar", TensorType((self.depth,), PrimType("uint64"), "shared"), ptr, "shared"
        )
        view._remote_rank = rank
        return view


class TMABar(MBarrier):
    """An ``MBarrier`` completed by TMA transactions.

    ``arrive(stage, tx_count=None, remote=None, pred=None)``: with ``tx_count``, one arrival
    that also expects ``tx_count`` bytes (``mbarrier.arrive.expect_tx``); without, a plain
    arrival.
    """

    def arrive(self, stage: Any, tx_count: Any = None, remote: Any = None, pred: Any = None) -> None:  # type: ignore[override]
        where = "TMABar.arrive"
        if tx_count is not None:
            _check_count(tx_count, "tx_count", where, allow_zero=True)
        bar = self.buf.ptr_to([_value(stage)])
        if self._remote_rank is not None or remote is not None:
            if self._remote_rank is not None and remote is not None:
                raise ValueError(f"{where}: remote= cannot be given to a remote_view() (it has its CTA)")
            addr = bar if remote is None else _cluster_addr(bar, _rank(remote, where))
            _arrive_cluster(addr, pred, tx_count=tx_count)
            return
        if tx_count is None:
            chain, n = T.ptx.mbarrier.arrive.shared.b64, T.uint32(1)
        else:
            chain, n = T.ptx.mbarrier.arrive.expect_tx.shared.b64, T.uint32(_value(tx_count))
        # TIRx's helper drops ``pred`` on this (local) path; tirx predicates the instruction
        T.evaluate(chain(bar, n) if pred is None else chain(bar, n, pred=_value(pred)))


def _unicast(cta_mask: Any) -> bool:
    """Whether ``tcgen05.commit`` takes its unicast form: no mask, or a constant mask naming
    at most one CTA (a runtime mask always multicasts)."""
    if cta_mask is None:
        return True
    n = _static_int(cta_mask)
    return n is not None and bin(n).count("1") <= 1


class TCGen05Bar(MBarrier):
    """An ``MBarrier`` arrived on when the issuing thread's ``tcgen05`` operations complete
    (``tcgen05.commit``; Blackwell, sm_100a). Issue ``arrive`` from one thread (or give
    ``pred=T.cuda.elect_sync()``)."""

    def arrive(self, stage: Any, cta_group: int = 1, cta_mask: Any = None, pred: Any = None) -> None:  # type: ignore[override]
        where = "TCGen05Bar.arrive"
        if cta_group not in (1, 2) or isinstance(cta_group, bool):
            raise ValueError(f"{where}: cta_group must be 1 or 2, got {cta_group!r}")
        bar = self.buf.ptr_to([_value(stage)])
        base = f"tcgen05.commit.cta_group::{cta_group}.mbarrier::arrive::one.shared::cluster"
        if _unicast(cta_mask):
            T.evaluate(T.ptx[base + ".b64"](bar, pred=_value(pred)))
        else:
            mask = T.Cast("uint16", _value(cta_mask))
            T.evaluate(T.ptx[base + ".multicast::cluster.b64"](bar, mask, pred=_value(pred)))


#: the barrier kinds ``Pipeline``'s ``full=`` / ``empty=`` name
BARRIER_KINDS: dict[str, type] = {"tma": TMABar, "tcgen05": TCGen05Bar, "mbar": MBarrier}


@T.meta_class
class Pipeline:
    """A ``full`` / ``empty`` barrier pair over ``stages`` slots, both initialized here.

    ``full`` and ``empty`` name each barrier's kind: ``"tma"`` (``TMABar``), ``"tcgen05"``
    (``TCGen05Bar``) or ``"mbar"`` (``MBarrier``); ``init_full`` / ``init_empty`` are their
    arrival counts, ``empty_phase_offset`` the empty barrier's ``phase_offset``.
    """

    def __init__(self, pool: Any, stages: int, *, full: str, empty: str, init_full: Any = 1,
                 init_empty: Any = 1, empty_phase_offset: Any = 0, leader: Any = None):  # fmt: skip
        kinds = {}
        for arg, tag in (("full", full), ("empty", empty)):
            if tag not in BARRIER_KINDS:
                raise ValueError(f"Pipeline: {arg} must be one of {sorted(BARRIER_KINDS)}, got {tag!r}")
            kinds[arg] = BARRIER_KINDS[tag]
        self.stages = _positive(stages, "stages", "Pipeline")
        self.full = kinds["full"](pool, stages, leader=leader)
        self.full.init(init_full)
        self.empty = kinds["empty"](pool, stages, phase_offset=empty_phase_offset, leader=leader)
        self.empty.init(init_empty)


__all__ = ["BARRIER_KINDS", "MBarrier", "Pipeline", "PipelineState", "TCGen05Bar", "TMABar"]
