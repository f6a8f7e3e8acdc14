"""The FuncCompiler's statements (``s_<node>``: sequences, bindings, branches, loops,
``break``/``continue``/``return``, asserts, thread regions and device entries) under the
lane mask; a mixin of ``engine.FuncCompiler``, split from it by node family (issue #30)."""

from __future__ import annotations

import builtins
import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

from tirx.ops.semantics import dtypes as D
from tirx.ops.semantics.errors import InterpError
from tirx.ops.semantics.lanes import full as _full

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.dyn_smem import dyn_smem_layout
from ..ir.functor import Dispatch, Functor
from ..ir.op import Op, impl
from ..ir.types import PrimType
from .races import _GlobalWrites
from .state import _UNBOUND, STEP, Ctx, Fn, Launch, Loop, _lane_mask, over_budget, too_many_iters, where

if TYPE_CHECKING:
    from .engine import Program

# an op's interpreter form for a statement (its value unused): ``declare(interp_stmt=...)``
STMT_BACKEND = "interp.stmt"


def _loop_what(s: Any) -> str:
    if isinstance(s, S.While):
        return "while loop"
    return f"for loop over {s.var.name}"


def _exits_early(body: Any) -> bool:
    """May a loop with this body stop before its trip count (a ``break`` of its own, or a
    ``return``)? Conservative: True when unsure."""
    from ..ir.visitor import child_nodes

    stack = [(body, False)]
    while stack:
        n, nested = stack.pop()
        if isinstance(n, S.Return) or (isinstance(n, S.Break) and not nested):
            return True
        if isinstance(n, E.PrimExpr):
            continue
        inner = nested or isinstance(n, (S.For, S.While))
        stack.extend((ch, inner) for ch in child_nodes(n) if not isinstance(ch, E.PrimExpr))
    return False


class StmtMixin(Functor):
    """Statements into closures ``c -> None`` that run under ``c.mask``."""

    prog: Program
    ranges: dict
    in_device: bool
    launch_dims: dict | None
    dyn_offsets: dict  # shared.dyn AllocBuffer id -> byte offset (tirx.ir.dyn_smem)

    if TYPE_CHECKING:  # ExprMixin's

        def expr(self, e: Any) -> Fn: ...

        def range_of(self, e: Any) -> tuple[int, int] | None: ...

    # ------------------------------------------------------------------ statements
    _s_table = Dispatch("s_")

    def stmt(self, s: Any) -> Fn:
        m = self._s_table[type(s)]
        if m is None:
            raise InterpError(f"the interpreter cannot execute {type(s).__name__} statements")
        return m(self, s)

    def s_SeqStmt(self, s):
        fs = [self.stmt(x) for x in s.stmts]
        if not fs:
            return lambda c: None
        if len(fs) == 1:
            return fs[0]

        def ex(c):
            for f in fs:
                if c.count == 0:
                    return
                f(c)

        return ex

    def s_Bind(self, s):
        fv, var = self.expr(s.value), s.var
        r = self.range_of(s.value)
        if r is not None:
            self.ranges[var] = r
        else:  # a var bound again: the earlier value's range no longer holds
            self.ranges.pop(var, None)

        def ex(c):
            c.env[var] = fv(c)

        return ex

    def s_Evaluate(self, s):
        v = s.value
        stmt_form = impl(STMT_BACKEND, v.op) if isinstance(v, E.Call) and isinstance(v.op, Op) else None
        if stmt_form is not None:  # the op's declared form for an unused value (atomics)
            fv = stmt_form(self, v)
        else:
            fv = self.expr(v)

        def ex(c):
            fv(c)

        return ex

    def s_AttrStmt(self, s):
        return self.stmt(s.body)

    def s_RegionStmt(self, s):
        """TIRx's regions: ``launch_thread`` binds the thread/block index (no guard, as TIRx's
        CUDA); ``compute_scope`` and ``device_context`` only group their body; a
        ``parallel_launch`` worker team is not modelled."""
        if s.kind in ("compute_scope", "device_context", "device_scope"):
            return self.stmt(s.body)
        if s.kind != "launch_thread":
            raise InterpError(f"the interpreter cannot run T.{s.kind}")
        thread = s.args[0].value
        key = {"threadIdx": "t", "blockIdx": "b"}.get(thread.split(".")[0])
        axis = thread.split(".")[-1]
        if key is None or axis not in ("x", "y", "z"):
            raise InterpError(f"the interpreter cannot run T.launch_thread({thread!r}, ...)")
        var = s.params[0]
        vt = D.value_np(var.ty)
        body = self.stmt(s.body)

        def ex(c):
            if c.launch is None:
                raise InterpError(f"T.launch_thread({thread!r}, ...) outside a device entry")
            c.env[var] = c.launch.get(f"{key}.{axis}").astype(vt)
            body(c)

        return ex

    def _cond(self, e):
        """A condition's closure giving bool lanes: a non-bool scalar is true when not zero."""
        f = self.expr(e)
        if isinstance(e.ty, PrimType) and e.ty.is_bool:
            return f
        return lambda c: f(c) != 0

    def s_IfThenElse(self, s):
        fc_ = self._cond(s.cond)
        ft = self.stmt(s.then_case)
        fe = None if s.else_case is None else self.stmt(s.else_case)

        def ex(c):
            cond = fc_(c)
            if cond.shape[0] == 1:
                if cond[0]:
                    ft(c)
                elif fe is not None:
                    fe(c)
                return
            entry, cnt = c.mask, c.count
            mt = entry & cond
            nt = int(np.count_nonzero(mt))
            if nt == cnt:
                ft(c)
                return
            if nt == 0:
                if fe is not None:
                    fe(c)
                return
            c.set_mask(mt, nt)
            ft(c)
            end_t, cnt_t = c.mask, c.count
            if fe is not None:
                me = entry & ~cond
                c.set_mask(me, cnt - nt)
                fe(c)
                end_e, cnt_e = c.mask, c.count
            else:
                end_e, cnt_e = entry & ~cond, cnt - nt
            c.set_mask(end_t | end_e, cnt_t + cnt_e)

        return ex

    def _exit_mask(self, c: Ctx, entry: np.ndarray) -> None:
        """After a loop: the entry lanes minus those that returned inside it."""
        if c.ret_mask is not None:
            m = entry & ~c.ret_mask
            c.set_mask(m)
        else:
            c.set_mask(entry)

    def s_For(self, s):
        # the loop var is bound in the body only: an outer binding of the same var object
        # (its static range and its value) holds again after the loop
        var = s.var
        had, old_r = var in self.ranges, self.ranges.get(var)
        inner = self._thread_binding(s) if s.kind == S.ForKind.THREAD_BINDING else self._for(s)
        if had:
            self.ranges[var] = old_r
        else:
            self.ranges.pop(var, None)

        def ex(c):
            env = c.env
            old = env.get(var, _UNBOUND)
            try:
                inner(c)
            finally:
                if old is _UNBOUND:
                    env.pop(var, None)
                else:
                    env[var] = old

        return ex

    def _for(self, s):
        fstart, fext = self.expr(s.start), self.expr(s.extent)
        fstep = None if s.nonunit_step is None else self.expr(s.step)
        rs, re_ = self.range_of(s.start), self.range_of(s.extent)
        unit_step = fstep is None or self.range_of(s.step) == (1, 1)
        if rs is not None and re_ is not None and unit_step and re_[1] >= 1:
            self.ranges[s.var] = (rs[0], rs[1] + re_[1] - 1)
        body = self.stmt(s.body)
        var = s.var
        vt = D.value_np(var.ty)
        limit = self.prog.max_loop_iters
        early = _exits_early(s.body)
        what = _loop_what(s)

        def ex(c):
            start, ext = fstart(c), fext(c)
            step = fstep(c) if fstep is not None else None
            entry, ecnt = c.mask, c.count
            lp = Loop()
            c.loops.append(lp)
            bud = c.budget
            cost = c.N + STEP  # per iteration
            try:
                if start.shape[0] == 1 and ext.shape[0] == 1 and (step is None or step.shape[0] == 1):
                    s0 = int(start[0])
                    e0 = s0 + int(ext[0])
                    st = 1 if step is None else int(step[0])
                    if st == 0:
                        raise InterpError(f"{what} {where(s)} has step 0")
                    # the IR's loop (TIRx's, and the generated ``for (i = start; i < end; i += step)``)
                    # runs while the variable is below the end, whatever the step's sign: a negative
                    # step from below the end never stops, from the end or above never runs
                    if st > 0:
                        trip, seq = max(0, (e0 - s0 + st - 1) // st), range(s0, e0, st)
                    elif s0 >= e0:
                        trip, seq = 0, range(0)
                    else:
                        trip, seq = limit + 1, itertools.count(s0, st)
                    if not early:  # it will run every iteration: refuse now rather than hang
                        if trip > limit:
                            raise too_many_iters(s, trip, limit, what)
                        if trip * cost > bud.left:
                            raise over_budget(c, trip * cost, f"{what} {where(s)} ({trip} iterations)")
                    mask, cnt = entry, ecnt
                    env = c.env
                    for n, k in enumerate(seq, 1):
                        if n > limit:
                            raise too_many_iters(s, trip, limit, what)
                        if bud.left < cost:
                            raise over_budget(c, cost, f"{what} {where(s)} (iteration {n} of {trip})")
                        bud.left -= cost
                        env[var] = np.array([k], dtype=vt)
                        if c.mask is not mask:
                            c.set_mask(mask, cnt)
                        body(c)
                        if lp.cont is not None:
                            mask = c.mask | lp.cont
                            cnt = int(np.count_nonzero(mask))
                            lp.cont = None
                        else:
                            mask, cnt = c.mask, c.count
                        if cnt == 0:
                            break
                else:
                    end = start.astype(np.int64) + ext.astype(np.int64)
                    st = np.ones(1, dtype=np.int64) if step is None else step.astype(np.int64)
                    cur = _full(start.astype(np.int64), c.N).copy()
                    active = entry & (cur < end)
                    n = 0
                    while True:
                        cnt = int(np.count_nonzero(active))
                        if cnt == 0:
                            break
                        n += 1
                        if n > limit:
                            raise too_many_iters(s, n, limit, what)
                        if bud.left < cost:
                            raise over_budget(c, cost, f"{what} {where(s)} (iteration {n})")
                        bud.left -= cost
                        c.env[var] = cur.astype(vt)
                        c.set_mask(active, cnt)
                        body(c)
                        active = c.mask if lp.cont is None else (c.mask | lp.cont)
                        lp.cont = None
                        cur = cur + st
                        active = active & (cur < end)
            finally:
                c.loops.pop()
            self._exit_mask(c, entry)

        return ex

    def _thread_binding(self, s):
        thread = s.thread or ""
        fstart, fext = self.expr(s.start), self.expr(s.extent)
        body = self.stmt(s.body)
        var = s.var
        vt = D.value_np(var.ty)
        key = {"threadIdx": "t", "blockIdx": "b"}.get(thread.split(".")[0])
        axis = thread.split(".")[-1]
        if key is None or axis not in ("x", "y", "z"):
            raise InterpError(f"the interpreter cannot run a loop bound to thread {thread!r}")

        def ex(c):
            if c.launch is None:
                raise InterpError(f"loop bound to {thread} outside a device entry")
            idx = c.launch.get(f"{key}.{axis}")
            start, ext = fstart(c), fext(c)
            entry = c.mask
            inside = idx < ext
            m = entry & inside
            c.env[var] = (idx + start).astype(vt)
            c.set_mask(m)
            if c.count:
                body(c)
            c.set_mask(c.mask | (entry & ~inside))
            if c.ret_mask is not None:
                c.set_mask(c.mask & ~c.ret_mask)

        return ex

    def s_While(self, s):
        fcond = self._cond(s.cond)
        body = self.stmt(s.body)
        limit = self.prog.max_loop_iters
        what = _loop_what(s)

        def ex(c):
            entry = c.mask
            lp = Loop()
            c.loops.append(lp)
            try:
                n = 0
                while True:
                    cond = fcond(c)
                    if cond.shape[0] == 1:
                        if not cond[0]:
                            break
                    else:
                        m = c.mask & cond
                        c.set_mask(m)
                        if c.count == 0:
                            break
                    n += 1
                    if n > limit:
                        raise too_many_iters(s, n, limit, what)
                    bud = c.budget
                    if bud.left < c.N + STEP:
                        raise over_budget(c, c.N + STEP, f"{what} {where(s)} (iteration {n})")
                    bud.left -= c.N + STEP
                    body(c)
                    if lp.cont is not None:
                        c.set_mask(c.mask | lp.cont)
                        lp.cont = None
                    if c.count == 0:
                        break
            finally:
                c.loops.pop()
            self._exit_mask(c, entry)

        return ex

    @staticmethod
    def _leave_iteration(field: str, word: str):
        """``break`` / ``continue``: the active threads join the innermost loop's ``field`` set
        (threads that left it) and go inactive until the loop takes them back."""

        def ex(c):
            if not c.loops:
                raise InterpError(f"{word} outside a loop")
            lp = c.loops[-1]
            prev = getattr(lp, field)
            setattr(lp, field, c.mask if prev is None else (prev | c.mask))
            c.set_mask(np.zeros(c.N, dtype=bool), 0)

        return ex

    def s_Break(self, s):
        return self._leave_iteration("brk", "break")

    def s_Continue(self, s):
        return self._leave_iteration("cont", "continue")

    def s_Return(self, s):
        fv = None if s.value is None else self.expr(s.value)

        def ex(c):
            m = c.mask
            if fv is not None:
                v = fv(c)
                if c.ret_val is None:
                    c.ret_val = _full(v, c.N).copy() if c.count != c.N else v
                else:
                    rv = c.ret_val
                    if rv.shape[0] != c.N:
                        rv = _full(rv, c.N).copy()
                    np.copyto(rv, _full(v, c.N), where=_lane_mask(m, rv))
                    c.ret_val = rv
            c.ret_mask = m if c.ret_mask is None else (c.ret_mask | m)
            c.set_mask(np.zeros(c.N, dtype=bool), 0)
            if c.launch is not None and c.depth == 0:
                al = c.launch.alive
                c.launch.alive = ~m if al is None else (al & ~m)

        return ex

    def s_Assert(self, s):
        fcond = self.expr(s.cond)
        kind = getattr(builtins, s.kind, None)
        if not (isinstance(kind, type) and issubclass(kind, Exception)):
            kind = AssertionError
        msg = "".join(s.message) or "assertion failed"

        def ex(c):
            cond = fcond(c)
            bad = ~cond
            if cond.shape[0] == c.N and c.count != c.N:
                bad = bad & c.mask
            if bad.any():
                lane = int(np.flatnonzero(bad)[0]) if bad.shape[0] > 1 else 0
                where = "" if c.launch is None else f" ({c.describe(lane)})"
                raise kind(msg + where)

        return ex

    def s_DeviceEntry(self, s):
        fargs = [self.expr(a) for a in s.args]
        fields = list(s.attrs[S.LAUNCH_FIELDS_KEY])
        prog = self.prog
        was, was_dims, was_dyn = self.in_device, self.launch_dims, self.dyn_offsets
        self.in_device = True
        if all(isinstance(a, E.IntImm) for a in s.args):
            self.launch_dims = {f: a.value for f, a in zip(fields, s.args)}
        else:
            self.launch_dims = None
        try:
            layout = dyn_smem_layout(s.body)
        except ValueError as e:
            raise InterpError(f"{e} {where(s)}") from e
        # the launch's dynamic shared memory: given, or what the allocations take (as launched),
        # or the entry's "cuda.smem_required" when larger (an SMEMPool's views of its window)
        smem_arg = fargs[fields.index("dynamic_smem_bytes")] if "dynamic_smem_bytes" in fields else None
        total = layout.total
        need = s.attrs.get("cuda.smem_required")
        need = need.value if isinstance(need, E.IntImm) else need
        if total is not None and type(need) is int:
            total = max(total, need)
        self.dyn_offsets = layout.offsets
        try:
            body = self.stmt(s.body)
        finally:
            self.in_device, self.launch_dims, self.dyn_offsets = was, was_dims, was_dyn

        def ex(c):
            if c.launch is not None:
                raise InterpError("a device entry inside a device entry")
            # the shape fields; the others (cooperative, events, ...) only configure a GPU launch
            shape = ("grid", "block", "cluster")
            vals = {f: int(a(c)[0]) for f, a in zip(fields, fargs) if f.split(".")[0] in shape}
            grid = tuple(vals.get(f"grid.{a}", 1) for a in "xyz")
            block = tuple(vals.get(f"block.{a}", 1) for a in "xyz")
            cluster = tuple(vals.get(f"cluster.{a}", 1) for a in "xyz") if "cluster.x" in vals else None
            for what, dims in (("grid", grid), ("block", block)):
                if any(d < 0 for d in dims):
                    raise InterpError(f"launch with negative {what} dimensions {dims}")
            T = block[0] * block[1] * block[2]
            nblocks = grid[0] * grid[1] * grid[2]
            if T == 0 or nblocks == 0:
                return
            if T > 1024:
                raise InterpError(f"launch with {T} threads per block; CUDA allows at most 1024")
            per = max(1, prog.max_lanes // T)
            if cluster is not None:
                cs = cluster[0] * cluster[1] * cluster[2]
                if cluster[1] * cluster[2] > 1 or grid[0] % cluster[0]:
                    per = nblocks  # clusters are not runs of consecutive blocks: one chunk
                else:
                    per = max(cs, (per // cs) * cs)
            # the whole grid is paid for before any block runs: a huge grid fails at once
            cost = nblocks * T + -(-nblocks // per) * STEP
            if cost > c.budget.left:
                raise over_budget(c, cost, f"the launch {where(s)} of {nblocks} blocks x {T} threads")
            c.budget.left -= cost
            gw = _GlobalWrites(nblocks) if prog.check_races else None
            dyn = total if smem_arg is None else int(smem_arg(c)[0])
            with np.errstate(all="ignore"):
                for b0 in range(0, nblocks, per):
                    nb = min(per, nblocks - b0)
                    launch = Launch(grid, block, b0, nb, cluster, gw, dyn)
                    env = dict(c.env)
                    dc = Ctx(prog, launch.N, launch, env, budget=c.budget)
                    body(dc)
                    if gw is not None:
                        gw.epochs[b0 : b0 + nb] = launch.epoch  # the chunk's blocks are done

        return ex
