"""The run state every compiled closure takes (``Ctx``: lanes, active mask, variable
values, allocations), a launch's lane layout and the run's limits. Its own module, below
engine.py and the FuncCompiler's mixins (engine_expr, engine_mem, engine_stmt), so that they
all build on it without an import cycle."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from tirx.ops.semantics.errors import InterpError, LimitError

if TYPE_CHECKING:
    from .engine import Program
    from .races import _GlobalWrites

Fn = Callable[["Ctx"], Any]


# ----------------------------------------------------------------------------- launch
class Launch:
    """The lane layout of one chunk of a grid: blocks ``b0 .. b0+nb`` x ``T`` threads."""

    def __init__(
        self,
        grid: tuple,
        block: tuple,
        b0: int,
        nb: int,
        cluster: tuple | None,
        gw: _GlobalWrites | None = None,
        dyn_smem: int | None = None,
    ):
        #: the bytes of dynamic shared memory the launch gives (None: not known)
        self.dyn_smem = dyn_smem
        self.grid = grid
        self.block = block
        self.cluster = cluster or (1, 1, 1)
        self.T = block[0] * block[1] * block[2]
        self.b0 = b0
        self.nb = nb
        self.N = nb * self.T
        self.epoch = np.zeros(nb, dtype=np.int64)
        self.alive = None  # lanes that have not returned (None: all)
        #: the launch's record of plain global stores, shared by its chunks (None: races unchecked)
        self.gw = gw
        self._cache: dict = {}

    def get(self, key: str) -> np.ndarray:
        a = self._cache.get(key)
        if a is None:
            a = self._cache[key] = self._make(key)
        return a

    def _make(self, key: str) -> np.ndarray:
        T, nb = self.T, self.nb
        if key == "tid":
            return np.tile(np.arange(T, dtype=np.int32), nb)
        if key == "bl":
            return np.repeat(np.arange(nb, dtype=np.int32), T)
        if key == "bid":
            return (self.get("bl") + np.int32(self.b0)).astype(np.int32)
        if key == "lane":
            return np.arange(self.N, dtype=np.int64)
        if key == "warp":  # the launch-wide number of each thread's warp (a block's last may be partial)
            return self.get("bl").astype(np.int64) * -(-T // 32) + self.get("tid").astype(np.int64) // 32
        kind, axis = key.split(".")
        bx, by, _bz = self.block
        gx, gy, _gz = self.grid
        if kind == "t":
            t = self.get("tid")
            v = (t % bx, (t // bx) % by, t // (bx * by))["xyz".index(axis)]
        elif kind == "b":
            b = self.get("bid")
            v = (b % gx, (b // gx) % gy, b // (gx * gy))["xyz".index(axis)]
        else:
            raise InterpError(f"unknown lane array {key}")
        return np.ascontiguousarray(v, dtype=np.int32)

    def describe(self, lane: int) -> str:
        lane = int(lane)
        b = self.b0 + lane // self.T
        t = lane % self.T
        bx, by, _ = self.block
        gx, gy, _ = self.grid
        bi = (b % gx, (b // gx) % gy, b // (gx * gy))
        ti = (t % bx, (t // bx) % by, t // (bx * by))
        return f"block {bi}, thread {ti}"


class Loop:
    __slots__ = ("brk", "cont")

    def __init__(self):
        self.brk = None
        self.cont = None


# ----------------------------------------------------------------------------- budgets
#: what one loop iteration, call or chunk launch costs besides its lanes, in thread-steps:
#: interpreting a statement costs about as much fixed Python time as a thousand lanes of numpy
STEP = 1024


class Budget:
    """What is left of one kernel call's ``max_steps`` (shared by all its contexts)."""

    __slots__ = ("left", "limit")

    def __init__(self, limit: int):
        self.left = self.limit = limit


def where(node: Any) -> str:
    """``file:line:col`` of an IR node, for error messages."""
    sp = getattr(node, "span", None)
    return f"at {sp}" if sp is not None else "(no source location)"


_UNBOUND = object()  # env lookup default: the var had no binding
_RAISE = "raise it with tirx.interp.compile(f, {opt}=...) or tirx.compile(f, target='interp', {opt}=...)"


def over_budget(c: Ctx, cost: int, what: str) -> LimitError:
    lim = c.budget.limit
    return LimitError(
        f"{what} needs {cost} more thread-steps, past the run's budget max_steps={lim} "
        f"({lim - c.budget.left} used; a long or endless computation?); {_RAISE.format(opt='max_steps')}"
    )


def too_many_iters(s: Any, n: int, limit: int, what: str) -> LimitError:
    return LimitError(
        f"{what} {where(s)} runs {n} iterations, past max_loop_iters={limit} "
        f"(an endless loop?); {_RAISE.format(opt='max_loop_iters')}"
    )


class Ctx:
    """Execution state: lanes, active mask, variable values, allocations."""

    __slots__ = (
        "N",
        "allocs",
        "budget",
        "count",
        "depth",
        "env",
        "launch",
        "loops",
        "mask",
        "prog",
        "ret_mask",
        "ret_val",
    )

    def __init__(
        self,
        prog: Program,
        N: int,
        launch: Launch | None,
        env: dict,
        mask: np.ndarray | None = None,
        budget: Budget | None = None,
    ):
        self.prog = prog
        self.budget = Budget(prog.max_steps) if budget is None else budget
        self.N = N
        self.launch = launch
        self.env = env
        self.mask = np.ones(N, dtype=bool) if mask is None else mask
        self.count = N if mask is None else int(np.count_nonzero(mask))
        self.loops: list[Loop] = []
        self.ret_mask = None
        self.ret_val = None
        self.allocs: dict = {}
        self.depth = 0

    def set_mask(self, m: np.ndarray, count: int | None = None) -> None:
        self.mask = m
        self.count = int(np.count_nonzero(m)) if count is None else count

    def describe(self, lane: int) -> str:
        if self.launch is None:
            return "host"
        return self.launch.describe(lane)

    def lanes_arr(self) -> np.ndarray:
        if self.launch is not None:
            return self.launch.get("lane")
        return np.arange(self.N, dtype=np.int64)


# ----------------------------------------------------------------------------- helpers
def _lane_mask(mask: np.ndarray, like: np.ndarray) -> np.ndarray:
    if like.ndim == 1:
        return mask
    return mask.reshape(-1, *([1] * (like.ndim - 1)))
