"""The interpreter core: IR -> a tree of Python closures over numpy lane vectors.

Every closure takes a ``Ctx``. A value is a numpy array with one entry per lane — shape
``(N,)`` (``(N, lanes)`` for vector dtypes) — or shape ``(1,)`` when it is uniform across
lanes (constants, loop counters, parameters); numpy broadcasting mixes the two. Statements
run under ``ctx.mask``, the lanes (threads) still executing; branches, loops, ``break``,
``continue`` and ``return`` shrink and re-grow the mask. Expressions are evaluated for all
lanes, but memory is only touched for active lanes, so a guarded ``A[i]`` never faults.

On the device, one lane is one thread; all blocks of a chunk of the grid run at once (a
barrier is a statement every thread of a block reaches together, so lockstep execution is a
valid schedule). On the host, there is one lane.

The FuncCompiler is split by node family into mixins: expressions and ranges
(engine_expr.py), buffers and memory (engine_mem.py), statements (engine_stmt.py), over the
run state (state.py) and the race checks (races.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tirx.ops.semantics.errors import InterpError

from ..ir import deep
from ..ir.function import Function, Module
from .engine_expr import ExprMixin
from .engine_mem import MemMixin
from .engine_stmt import STMT_BACKEND as STMT_BACKEND
from .engine_stmt import StmtMixin
from .state import STEP, Ctx, Fn, over_budget
from .state import Budget as Budget
from .state import Launch as Launch
from .state import Loop as Loop
from .state import too_many_iters as too_many_iters
from .state import where as where


# ----------------------------------------------------------------------------- program
class Program:
    """Compiled functions of one Function or Module, with the run options."""

    def __init__(
        self,
        root: Function | Module,
        check_races: bool = True,
        max_lanes: int = 1 << 15,
        max_loop_iters: int = 10_000_000,
        check_bounds: bool = True,
        max_steps: int = 1 << 31,
        max_alloc_bytes: int = 1 << 32,
    ):
        self.root = root
        self.check_races = check_races
        self.check_bounds = check_bounds
        self.max_lanes = max(1, int(max_lanes))
        self.max_loop_iters = _positive(max_loop_iters, "max_loop_iters")
        self.max_steps = _positive(max_steps, "max_steps")
        self.max_alloc_bytes = _positive(max_alloc_bytes, "max_alloc_bytes")
        self.funcs: dict[str, Function] = {}
        if isinstance(root, Module):
            for f in root.functions:
                self.funcs[f.name] = f
        else:
            self.funcs[root.name] = root
        self.compiled: dict[str, FuncCompiler] = {}
        #: some function was too deep to compile on the caller's thread: run on the deep worker
        self.needs_deep = False

    def get(self, name: str) -> FuncCompiler:
        fc = self.compiled.get(name)
        if fc is None:
            f = self.funcs.get(name)
            if f is None:
                raise InterpError(f"call of unknown function {name!r} (not in the module)")
            fc = deep.call(self._compile, name, f)
        return fc

    def _compile(self, name: str, f: Function) -> FuncCompiler:
        """Compile ``f`` (a side-effect-free retry on the large-stack worker if it is too
        deep for this thread; then its runs go to the worker too)."""
        fc = FuncCompiler(self, f)
        self.compiled[name] = fc
        try:
            fc.compile()
        except BaseException:
            self.compiled.pop(name, None)
            raise
        if deep.active():
            self.needs_deep = True
        return fc


def _positive(v: Any, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"tirx.interp.compile: {name} must be a positive integer, got {v!r}")
    return int(v)


class FuncCompiler(ExprMixin, MemMixin, StmtMixin):
    """Compiles one Function body into closures."""

    def __init__(self, prog: Program, f: Function):
        self.prog = prog
        self.f = f
        self.body: Fn | None = None
        self.simple_bufs: set = set()
        self.in_device = False
        # compile-time integer ranges (inclusive) of vars, for proving indices in bounds
        self.ranges: dict = {}
        self.launch_dims: dict | None = None
        self.dyn_offsets: dict = {}
        self._shape_cache: dict = {}  # id(shape tuple) -> (shape, evaluators): see _shape_fns

    def compile(self) -> None:
        for _, b in self.f.buffer_map:
            if b.elem_offset is None and not b.strides:
                self.simple_bufs.add(b)
        self.body = self.stmt(self.f.body)

    # ------------------------------------------------------------------ calls
    def call(self, c: Ctx, args: list, mask: np.ndarray | None = None) -> Any:
        """Run this function in a fresh scope on ``c``'s lanes with parameter values ``args``."""
        f = self.f
        env = {}
        for p, a in zip(f.params, args):
            env[p] = a
        if c.depth > 200:
            raise InterpError(f"call depth exceeded 200 calling {f.name!r} (unbounded recursion?)")
        b = c.budget
        if b.left < c.N + STEP:
            raise over_budget(c, c.N + STEP, f"the call of {f.name!r}")
        b.left -= c.N + STEP
        sub = Ctx(c.prog, c.N, c.launch, env, c.mask if mask is None else mask, b)
        sub.depth = c.depth + 1
        sub.allocs = {} if c.launch is None else c.allocs
        assert self.body is not None  # Program.get compiles a function before it can run
        try:
            self.body(sub)
        except RecursionError:
            raise InterpError(f"calls nest too deeply in {f.name!r} (unbounded recursion?)") from None
        return sub.ret_val
