"""The statements of the Python-AST frontend's :class:`~tirx.script.parser.Parser`
(``visit_<Stmt>``: assignment, loops, branches, ``with``, ``return``, ``assert``), a mixin of
their own so that no class is over 600 lines (issue #30)."""

from __future__ import annotations

import ast
import sys
import warnings
from typing import TYPE_CHECKING, Any, cast

from tirx.surface.builder import IRBuilder

from ..errors import DiagnosticError
from ..ir import (
    Bind,
    Buffer,
    BufferLoad,
    IntImm,
    PointerType,
    PrimExpr,
    PrimType,
    TensorType,
    Var,
    convert,
)
from ..ir.types import as_type
from ..ir.visitor import reads_memory
from ..surface.cells import cell_init as _cell_init
from ..surface.cells import has_effect as _has_effect
from ..surface.cells import new_scalar
from .parser_values import (
    _BIN,
    _ZERO,
    ArrayAnn,
    AttrSpec,
    Cell,
    DeviceEntrySpec,
    EndedBinding,
    LetAnn,
    LoopSpec,
    MetaVar,
    _is_type_like,
    _Like,
    _ReturnSignal,
    _store_slices,
    _to_bool_expr,
    apply_binop,
    constexpr,
    host_condition,
    lit,
    no_tensor_truth,
)

if TYPE_CHECKING:
    from .parser import _Scope


class _FrameBinding:
    """A region frame assigned to a name (``tx = T.launch_thread(...)``), for ``region``."""

    __slots__ = ("frame", "target")

    def __init__(self, frame: Any, target: Any) -> None:
        self.frame, self.target = frame, target


class Spliced:
    """An ``if`` decided while parsing (``if T.constexpr(...)``, a Python value): its branch's
    statements stand in its place, followed by the rest of the enclosing block, so a bare
    ``T.device_entry(...)`` in the branch takes the statements after the ``if`` too (TIRx runs
    the branch as plain Python, inside the enclosing frame)."""

    __slots__ = ("stmts",)

    def __init__(self, stmts: list) -> None:
        self.stmts = stmts


def _is_frame(ctx: Any) -> bool:
    """A context manager that opens an IR frame (``with T.launch_thread(...)``, a region)."""
    return getattr(type(ctx), "bare_region", False) is True


def _is_region_frame(val: Any) -> bool:
    """A region frame (``T.launch_thread(...)``, ``T.region(...)``: tirx/script/protocol/frame.py,
    which marks its class ``bare_region``) written as a statement, not yet entered."""
    return getattr(type(val), "bare_region", False) is True and not val.entered


def _returns(body: list[ast.stmt]) -> bool:
    """Whether a ``return`` of this function is among ``body``'s statements (nested ``def``s
    and lambdas are their own functions)."""
    todo: list[ast.AST] = list(body)
    while todo:
        n = todo.pop()
        if type(n) is ast.Return:
            return True
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.expr)):
            todo.extend(ast.iter_child_nodes(n))
    return False


class StmtMixin:
    """``Parser``'s statements; the dispatch (``visit_body``) stays in ``Parser``."""

    if TYPE_CHECKING:  # the rest of Parser (tirx/script/parser.py), for the type checker only
        b: IRBuilder
        inline: bool
        python: bool
        ret_ty: Any
        scopes: list[_Scope]
        @property
        def mutable(self) -> frozenset: ...
        pending_name: str | None
        ir_depth: int
        open_frames: list[tuple[Any, Any]]
        pending_frames: list[tuple[Any, Any]]
        top_scopes: int
        src: Any

        def span(self, node: Any) -> Any: ...
        def diag(self, node: Any, e: BaseException | str) -> DiagnosticError: ...
        def push(self) -> None: ...
        def pop(self) -> None: ...
        def define(self, name: str, value: Any) -> None: ...
        def lookup_local(self, name: str) -> Any: ...
        def lookup(self, name: str, node: Any) -> Any: ...
        def is_ptr_bound(self, name: str) -> bool: ...
        def visit_body(self, stmts: list) -> None: ...
        def eval(self, node: Any) -> Any: ...
        def is_constexpr_call(self, e: ast.expr) -> bool: ...
        @staticmethod
        def indices(buf: Buffer, idx: Any, span: Any) -> tuple: ...

    def region(self, spec: Any, rest: list, node: Any) -> None:
        """A bare ``T.device_entry(...)`` / ``T.attr(...)`` / region frame (``T.launch_thread(tag,
        n)``, ``T.region(op, args, body_params=[v])``): the rest of the block goes inside, as
        TIRx enters a frame written as a statement."""
        b = self.b
        target = None
        if type(spec) is _FrameBinding:  # ``tx = T.launch_thread(...)``: the frame's var is tx
            spec, target = spec.frame, spec.target
        b.spans.append(self.span(node))
        try:
            if type(spec) is DeviceEntrySpec:
                cm = b.device_entry(spec.args, spec.attrs)
            elif type(spec) is AttrSpec:
                cm = b.attr(spec.key, spec.value)
            else:  # a RegionFrame (tirx/script/protocol/frame.py)
                cm = spec
                if target is not None and hasattr(cm, "var_name"):
                    cm.var_name = target.id
            val = cm.__enter__()
        except Exception as e:
            raise self.diag(node, e) from e
        finally:
            b.spans.pop()
        self.ir_depth += 1
        try:
            if target is not None:
                self.assign_target(target, val, True)
            self.visit_body(rest)
        except BaseException:
            self.ir_depth -= 1
            cm.__exit__(*sys.exc_info())
            raise
        self.ir_depth -= 1
        self.close_frames([(cm, node)])

    def continue_in(self, frames: list, rest: list, node: Any) -> None:
        """The rest of the block inside ``frames`` (innermost first) that a helper call left
        open, then the frames closed (or left open for this helper's own caller)."""
        self.ir_depth += 1
        try:
            self.visit_body(rest)
        except BaseException:
            self.ir_depth -= 1
            for cm, _ in frames:
                cm.__exit__(*sys.exc_info())
            raise
        self.ir_depth -= 1
        self.close_frames(frames)

    def close_frames(self, frames: list) -> None:
        """Exit bare frames whose block ended, innermost first; at a helper's top level they stay
        open instead, for the caller's rest of block (TIRx expands the helper there)."""
        if self.inline and len(self.scopes) == self.top_scopes:
            self.open_frames.extend(frames)
            return
        for cm, node in frames:
            try:
                cm.__exit__(None, None, None)
            except Exception as e:
                raise self.diag(node, e) from e

    def visit_unsupported(self, st: Any) -> None:
        raise self.diag(st, f"unsupported statement in a kernel: {type(st).__name__}")

    def visit_Pass(self, st: ast.Pass) -> None:
        return None

    def visit_Expr(self, st: ast.Expr) -> Any:
        v = st.value
        if type(v) is ast.Constant and isinstance(v.value, str):
            return None  # docstring / comment string
        val = self.eval(v)
        if type(val) is float or type(val) is int or type(val) is bool:
            val = convert(val)  # a literal statement is evaluated, as TIRx's emit_ does
        if isinstance(val, PrimExpr):
            # as TIRx: a scalar variable is inert (``x`` alone), an integer zero is the no-op
            # TIRx's builder drops (``0``, ``False``, ``T.int64(0)``); ``T.evaluate(...)`` is
            # the way to keep one
            if type(val) is Var and isinstance(val.ty, PrimType):
                return None
            if type(val) is IntImm and val.value == 0:
                return None
            self.b.evaluate(val)
        elif isinstance(val, Bind):  # T.Bind(var, value) as a statement: emitted where it stands
            self.b.emit(val)
        elif type(val) is DeviceEntrySpec or type(val) is AttrSpec or _is_region_frame(val):
            return val
        return None

    def visit_Assign(self, st: ast.Assign) -> Any:
        targets = st.targets
        if len(targets) == 1 and type(targets[0]) is ast.Name:
            name = targets[0].id
            self.pending_name = name
            try:
                val = self.eval(st.value)
            finally:
                self.pending_name = None
            if _is_region_frame(val):
                # ``tx = T.launch_thread("threadIdx.x", n)``: TIRx enters the frame, the rest of
                # the block inside, ``tx`` its var (``with ... as tx``)
                return _FrameBinding(val, targets[0])
            if type(val) is DeviceEntrySpec or type(val) is AttrSpec:
                # bound to a name it would open nothing: the rest of the block would run where it
                # stands (host code); TIRx refuses it too
                what = "T.device_entry(...)" if type(val) is DeviceEntrySpec else "T.attr(...)"
                raise self.diag(
                    st,
                    f"{what} opens a frame and has no value to bind: write it as a statement "
                    f"(the rest of the block goes inside) or as `with {what}:`",
                )
            self.assign_name(name, val, targets[0])
            return None
        val = self.eval(st.value)
        for t in targets:
            self.assign_target(t, val)

    def _stores_into(self, t: Any) -> bool:
        """Whether assigning to target ``t`` writes memory: an element, an attribute, a cell."""
        tt = type(t)
        if tt is ast.Subscript or tt is ast.Attribute:
            return True
        return tt is ast.Name and type(self.lookup_local(t.id)) is Cell

    def assign_target(self, t: Any, val: Any, meta: bool = False) -> None:
        tt = type(t)
        if tt is ast.Name:
            if meta:
                self.define(t.id, val)
            else:
                self.assign_name(t.id, val, t)
        elif tt is ast.Tuple or tt is ast.List:
            if type(val) is MetaVar:
                val = val.value
            if isinstance(val, (PrimExpr, Buffer)):
                raise self.diag(t, f"cannot unpack {type(val).__name__} into {len(t.elts)} names")
            try:
                vals = list(val)
            except TypeError:
                raise self.diag(t, f"cannot unpack a {type(val).__name__}") from None
            stars = [i for i, e in enumerate(t.elts) if type(e) is ast.Starred]
            n = len(t.elts)
            if not stars:
                if len(vals) != n:
                    raise self.diag(t, f"cannot unpack {len(vals)} values into {n} targets")
                if not meta and n > 1 and any(self._stores_into(e) for e in t.elts):
                    # ``a, b = b, a`` over cells (or elements): every value is read before any
                    # store (Python's meaning; stored one by one, ``b`` got the new ``a``)
                    vals = [
                        self.b.bind("tmp", v) if isinstance(v, PrimExpr) and reads_memory(v) else v
                        for v in vals
                    ]
                for e, v in zip(t.elts, vals):
                    self.assign_target(e, v, meta)
                return
            k = stars[0]
            after = n - k - 1
            if len(vals) < n - 1:
                raise self.diag(t, f"cannot unpack {len(vals)} values into {n - 1}+ targets")
            for e, v in zip(t.elts[:k], vals[:k]):
                self.assign_target(e, v, meta)
            mid = vals[k : len(vals) - after]
            self.assign_target(t.elts[k].value, tuple(mid), True)
            for e, v in zip(t.elts[k + 1 :], vals[len(vals) - after :]):
                self.assign_target(e, v, meta)
        elif tt is ast.Subscript:
            obj = self.eval(t.value)
            idx = self.eval(t.slice)
            if isinstance(obj, Buffer):
                sp = self.span(t)
                idx = _store_slices(idx)
                if not isinstance(val, PrimExpr) and type(val) in (int, float, bool):
                    val = lit(val, _Like(obj.dtype), sp)
                self.b.store(obj, self.indices(obj, idx, sp), val)
            else:
                obj[idx] = val
        elif tt is ast.Attribute:
            obj = self.eval(t.value)
            cur = getattr(obj, t.attr, None) if _is_meta_instance(obj) else None
            if type(cur) is Cell and type(val) is not Cell:
                # ``self.count = 0`` where the field holds a ``T.local_scalar``: a store into
                # the cell, as a name holding one (assign_name) and as TIRx's meta_class does
                self.b.store(cur.buffer, (_ZERO,), val)
            else:
                setattr(obj, t.attr, val)
        elif tt is ast.Starred:
            self.assign_target(t.value, tuple(val), True)
        else:
            raise self.diag(t, f"cannot assign to {type(t).__name__}")

    def _python_range(self, call: ast.Call) -> range | None:
        """``range(...)`` of constant integers, as Python's range (None: anything else)."""
        if call.keywords or not 1 <= len(call.args) <= 3 or self.eval(call.func) is not range:
            return None
        ends = []
        for a in call.args:
            v = self.eval(a)
            if type(v) is MetaVar:
                v = v.value
            if type(v) is IntImm and not v.ty.is_bool:
                v = v.value
            if type(v) is not int:
                return None
            ends.append(v)
        if len(ends) == 3 and ends[2] == 0:
            raise self.diag(call, "range() arg 3 must not be zero")
        return range(*ends)

    def assign_name(self, name: str, val: Any, node: Any) -> None:
        if self.python and type(val) is not Cell:
            # a kernel-local def runs as Python in TIRx: a name binds the value itself (an
            # expression is substituted where used, no ``let``; no cell for a reassigned name)
            self.define(name, val.value if type(val) is MetaVar else val)
            return
        cur = self.lookup_local(name)
        if type(cur) is Cell:
            if type(val) is Cell:  # x = T.local_scalar(...) again: a new cell
                self.define(name, val)
                return
            self.b.store(cur.buffer, (_ZERO,), val)
            return
        if self.is_ptr_bound(name):
            raise self.diag(
                node,
                f"cannot reassign {name!r}: a pointer assignment is an immutable binding (use a new name)",
            )
        tv = type(val)
        if tv is MetaVar:
            if isinstance(val.value, PrimExpr) and type(val.value) is not Var:
                # TIRx's meta_var is the identity: an IR expression is bound as any assignment
                # is; Python values (ints, strs, lists: tirx's compile-time names) stay Python
                val, tv = val.value, type(val.value)
            else:
                self.define(name, val.value)
                return
        if tv is Cell:
            self.define(name, val)
            return
        if (
            tv is Var
            and name not in self.mutable
            and (
                not isinstance(val.ty, PointerType)
                or any(val is v for sc in self.scopes for v in sc.vars.values())
            )
        ):
            # ``alias = bx``: TIRx names the same var (no Bind); a pointer alias stays immutable.
            # A tensor's pointer no name holds (``p = A.data``, ``T.tensor_data_ptr(A)``) is bound
            # instead, as TIRx binds it (``p: T.let[T.Ptr(...)] = A.data``)
            self.define(name, val)
            if isinstance(val.ty, PointerType):
                self.scopes[-1].ptrs.add(name)
            return
        if isinstance(val, PrimExpr) or tv is int or tv is float or tv is bool:
            if tv is not bool and (tv is int or tv is float) and type(cur) in (int, float):
                self.define(name, val)  # a Python-level number (T.meta_var) stays Python-level
                return
            e = convert(val)
            if isinstance(e.ty, PointerType):
                v = self.b.bind(name, e)
                self.define(name, v)
                self.scopes[-1].ptrs.add(name)
                return
            if name in self.mutable:
                self.define(name, new_scalar(self.b, name, "local", e.ty, e))
                return
            self.define(name, self.b.bind(name, e))
            return
        self.define(name, val)

    def visit_AnnAssign(self, st: ast.AnnAssign) -> Any:
        if type(st.target) is not ast.Name:
            raise self.diag(st.target, "an annotated assignment needs a plain name as target")
        name = st.target.id
        ann = self.eval(st.annotation)
        if type(ann) is LetAnn:
            if st.value is None:
                raise self.diag(st, "T.let needs a value: x: T.let = <expr>")
            self.pending_name = name
            try:
                val = self.eval(st.value)
            finally:
                self.pending_name = None
            if type(val) is MetaVar:
                val = val.value
            if type(val) is Cell and (ann.ty is None or ann.ty == val.buffer.dtype):
                # ``part: T.let = T.local_scalar(...)``: TIRx names the cell (later assignments
                # store to it); binding its value would freeze the accumulator silently
                self.define(name, val)
                return
            if ann.ty is None:
                e = convert(val)
                v = self.b.bind(name, e)
            else:
                e = convert(val, _Like(ann.ty))
                v = self.b.bind(name, e, ann.ty)
            self.define(name, v)
            if isinstance(v.ty, PointerType):
                self.scopes[-1].ptrs.add(name)
            return
        if ann is constexpr:
            raise self.diag(
                st.annotation, "T.constexpr is only for keyword-only parameters of @T.jit functions"
            )
        if type(ann) is ArrayAnn:  # ``acc: T.float32[4]``: a local tensor, as TIRx declares it
            if st.value is not None:
                raise self.diag(
                    st.value,
                    f"{name}: {ann!r} declares a local tensor; assign its elements after the declaration",
                )
            try:
                tt = TensorType(tuple(ann.shape), ann.dtype, "local")
            except (TypeError, ValueError) as e:
                raise self.diag(st.annotation, f"{name}: {ann!r}: {e}") from None
            self.define(name, self.b.alloc(name, tt))
            return
        if isinstance(ann, PointerType):
            val = self.eval(st.value)
            v = self.b.bind(name, convert(val, _Like(ann)), ann)
            self.define(name, v)
            self.scopes[-1].ptrs.add(name)
            return
        if _is_type_like(ann) and not isinstance(ann, TensorType):
            ty = as_type(ann)
            if not isinstance(ty, PrimType):
                raise self.diag(st.annotation, f"a mutable local needs a primitive dtype, got {ty}")
            init = None
            if st.value is not None:
                self.pending_name = name
                try:
                    val = self.eval(st.value)
                finally:
                    self.pending_name = None
                init = _cell_init(val, ty)
            self.define(name, new_scalar(self.b, name, "local", ty, init))
            return
        # a Python annotation: plain assignment semantics
        if st.value is not None:
            return self.visit_Assign(
                ast.Assign(targets=[st.target], value=st.value, lineno=st.lineno, col_offset=st.col_offset)
            )
        return None

    def visit_AugAssign(self, st: ast.AugAssign) -> None:
        t = st.target
        opcls, pyop = _BIN[type(st.op)]
        sp = self.span(st)
        if type(t) is ast.Name:
            old = self.lookup(t.id, t)
            rhs = self.eval(st.value)
            new = apply_binop(opcls, pyop, old, rhs, sp)
            self.assign_name(t.id, new, t)
        elif type(t) is ast.Subscript:
            obj = self.eval(t.value)
            idx = self.eval(t.slice)
            rhs = self.eval(st.value)
            if isinstance(obj, Buffer):
                ind = obj._indices(idx)
                if any(_has_effect(i) for i in ind):
                    # ``A[atomic_add(c, 1)] += v`` evaluates its index once (Python's meaning; it
                    # was read and stored through two copies of the call: two atomics)
                    ind = tuple(self.b.bind("idx", i) if _has_effect(i) else i for i in ind)
                new = apply_binop(opcls, pyop, BufferLoad(obj, ind, span=sp), rhs, sp)
                self.b.store(obj, ind, new)
            else:
                obj[idx] = apply_binop(opcls, pyop, obj[idx], rhs, sp)
        elif type(t) is ast.Attribute:
            obj = self.eval(t.value)
            rhs = self.eval(st.value)
            cur = getattr(obj, t.attr)
            new = apply_binop(opcls, pyop, cur, rhs, sp)
            if type(cur) is Cell and _is_meta_instance(obj):
                self.b.store(cur.buffer, (_ZERO,), new)  # ``self.count += 1``: into the cell
            else:
                setattr(obj, t.attr, new)
        else:
            raise self.diag(t, f"cannot assign to {type(t).__name__}")

    def visit_For(self, st: ast.For) -> None:
        if st.orelse:
            raise self.diag(st.orelse[0], "for ... else is not supported in a kernel")
        if self.python and type(st.iter) is ast.Call:
            steps = self._python_range(st.iter)
            if steps is not None:  # a kernel-local def's ``range`` loop runs as Python: unrolled
                for item in steps:
                    self.assign_target(st.target, item, True)
                    self.visit_body(st.body)
                return
        it = self.eval(st.iter)
        if type(it) is MetaVar:
            it = it.value
        if type(it) is not LoopSpec:
            try:
                items = iter(it)
            except TypeError:
                raise self.diag(
                    st.iter,
                    f"cannot loop over {type(it).__name__}: use range, T.serial, T.unroll, T.vectorized, "
                    "T.parallel, T.grid or a Python sequence",
                ) from None
            for item in items:  # a Python sequence: unrolled while parsing
                self.assign_target(st.target, item, True)
                self.visit_body(st.body)
            return
        loops = it.loops  # (start, extent, kind, step, annotations, thread): a zero step refused
        n = len(loops)
        t = st.target
        if it.bind is not None:
            names = list(it.names or [f"i{k}" for k in range(n)])
        elif type(t) is ast.Name:
            names = [t.id] if n == 1 else [f"{t.id}_{k}" for k in range(n)]
        elif isinstance(t, (ast.Tuple, ast.List)):
            elts = t.elts
            stars = [i for i, e in enumerate(elts) if type(e) is ast.Starred]
            if not stars:
                if len(elts) != n:
                    raise self.diag(t, f"{len(elts)} loop targets for {n} loops")
                names = [self._target_name(e) for e in elts]
            else:
                k = stars[0]
                nfix = len(elts) - 1
                if n < nfix:
                    raise self.diag(t, f"{len(elts)} loop targets for {n} loops")
                base = self._target_name(cast(ast.Starred, elts[k]).value)  # stars: the Starred ones
                names = [self._target_name(e) for e in elts[:k]]
                names += [f"{base}_{j}" for j in range(n - nfix)]
                names += [self._target_name(e) for e in elts[k + 1 :]]
        else:
            raise self.diag(t, "a loop target must be a name or a tuple of names")
        b = self.b
        vars_: list = []
        it_span = self.span(st.iter)

        def rec(k: int) -> None:
            if k == n:
                self.push()
                try:
                    if it.bind is not None:
                        self.assign_target(t, it.bind(tuple(vars_)), True)
                    elif type(t) is ast.Name:
                        self.define(t.id, vars_[0] if n == 1 else tuple(vars_))
                    else:
                        self.assign_target(t, tuple(vars_), True)
                    self.visit_body(st.body)
                finally:
                    self.pop()
                return
            start, extent, kind, step, ann, thread = loops[k]
            sv = step.value if isinstance(step, IntImm) else step
            if type(sv) is int and sv < 0:
                # TIRx's loop (the IR's, and the generated C's ``i < end; i += step``) runs while
                # its variable is below the end: Python's countdown never runs (or never stops)
                warnings.warn(
                    f"{it_span.source}:{it_span.line}:{it_span.col}: a loop with the negative step {sv} "
                    "runs while its variable is below the end, as in TIRx (not Python's countdown): "
                    "from the end or above it never runs; iterate upward and index from the end",
                    RuntimeWarning,
                    stacklevel=2,
                )
            if type(extent) is int:
                extent = lit(extent, start if isinstance(start, PrimExpr) else None, it_span)
            if type(start) is int:
                start = lit(start, extent, it_span)
            with b.for_(names[k], start, extent, kind, step, ann, thread) as v:
                vars_.append(v)
                rec(k + 1)

        self.ir_depth += 1
        try:
            rec(0)
        finally:
            self.ir_depth -= 1

    def _target_name(self, e: Any) -> str:
        if type(e) is not ast.Name:
            raise self.diag(e, "a loop target must be a name")
        return e.id

    def visit_While(self, st: ast.While) -> None:
        if st.orelse:
            raise self.diag(st.orelse[0], "while ... else is not supported in a kernel")
        cond = self.eval(st.test)
        if not isinstance(cond, PrimExpr):
            if self.python and not no_tensor_truth(self, cond, st.test):
                return  # a kernel-local def is Python: its false ``while`` never runs
            cond = host_condition(self, cond, st.test, "while")
        self.ir_depth += 1
        try:
            with self.b.while_(convert(cond)):  # any scalar, as TIRx keeps it (true when not zero)
                self.push()
                try:
                    self.visit_body(st.body)
                finally:
                    self.pop()
        finally:
            self.ir_depth -= 1

    def visit_If(self, st: ast.If) -> Spliced | None:
        """``if T.constexpr(c):`` is decided while parsing (the taken branch in its place);
        any other condition is the IR's, as in TIRx: a Python value becomes its constant
        (``if flag:`` is ``if T.bool(True):``) and both branches are built."""
        # decided while parsing: T.constexpr; a kernel-local def (Python); an inline helper's
        # branch that returns (its value is the call's: TIRx returns the first branch's
        # value whatever the condition, a wrong result tirx does not copy)
        decide = (
            self.python
            or self.is_constexpr_call(st.test)
            or (self.inline and _returns(st.body + st.orelse))
        )
        cond = self.eval(st.test)
        if type(cond) is Cell:
            cond = cond.__tirx_expr__()
        elif type(cond) is MetaVar:
            cond = cond.value
        if not isinstance(cond, PrimExpr):
            if decide:
                return Spliced(st.body if no_tensor_truth(self, cond, st.test) else st.orelse)
            cond = host_condition(self, cond, st.test, "if")
        b = self.b
        self.ir_depth += 1
        try:
            try:
                cm = b.if_(cond)
                cm.__enter__()
            except Exception as e:
                raise self.diag(st.test, e) from e
            ok = False
            try:
                self.push()
                try:
                    self.visit_body(st.body)
                finally:
                    self.pop()
                ok = True
            finally:
                if ok:
                    cm.__exit__(None, None, None)
                else:
                    cm.__exit__(*sys.exc_info())
            if st.orelse:
                orelse = st.orelse
                if len(orelse) == 1 and type(orelse[0]) is ast.If:
                    b.spans.append(self.span(orelse[0]))
                else:
                    b.spans.append(b.span)
                try:
                    with b.else_():
                        self.push()
                        try:
                            self.visit_body(orelse)
                        finally:
                            self.pop()
                finally:
                    b.spans.pop()
        finally:
            self.ir_depth -= 1
        return None

    def visit_With(self, st: ast.With) -> None:
        self._with_items(st, 0)

    def _with_items(self, st: ast.With, k: int, ir: bool = False) -> None:
        if k == len(st.items):
            self.push()
            try:
                self.visit_body(st.body)
                if ir:
                    self._end_block_bindings(st)
            finally:
                self.pop()
            return
        item = st.items[k]
        ctx = self.eval(item.context_expr)
        tc = type(ctx)
        if tc is DeviceEntrySpec or tc is AttrSpec:
            if item.optional_vars is not None:
                raise self.diag(item.optional_vars, "this with-statement binds no value")
            cm = (
                self.b.device_entry(ctx.args, ctx.attrs)
                if tc is DeviceEntrySpec
                else self.b.attr(ctx.key, ctx.value)
            )
            self.ir_depth += 1
            try:
                with cm:
                    self._with_items(st, k + 1, True)
            finally:
                self.ir_depth -= 1
            return
        if not hasattr(ctx, "__enter__"):
            raise self.diag(item.context_expr, f"{type(ctx).__name__} is not a context manager")
        if type(item.optional_vars) is ast.Name and hasattr(ctx, "var_name"):
            ctx.var_name = item.optional_vars.id  # ``with T.launch_thread(...) as tx``: the var is tx
        val = ctx.__enter__()
        try:
            if item.optional_vars is not None:
                self.assign_target(item.optional_vars, val, True)
            self._with_items(st, k + 1, ir or _is_frame(ctx))
        except BaseException:
            if not ctx.__exit__(*sys.exc_info()):
                raise
        else:
            ctx.__exit__(None, None, None)

    def _end_block_bindings(self, st: ast.With) -> None:
        """Names an IR frame's block bound again (``v = n`` before, ``v = n + 1`` inside): in
        TIRx the name then means the inner binding, which ends with the block, so a read after
        it is not well-formed. The name is marked ended in the enclosing scope: a read there
        is a located error, a new assignment binds it afresh."""
        outer = self.scopes[:-1]
        for name, val in self.scopes[-1].vars.items():
            if any(name in sc.vars for sc in outer):
                ty = getattr(val, "ty", None)
                dtype = str(ty) if isinstance(ty, PrimType) else "int32"
                outer[-1].vars[name] = EndedBinding(name, st.lineno + self.src.line_off, dtype)

    def visit_Break(self, st: Any) -> None:
        self.b.break_()

    def visit_Continue(self, st: Any) -> None:
        self.b.continue_()

    def visit_Return(self, st: ast.Return) -> None:
        val = None if st.value is None else self.eval(st.value)
        if type(val) is MetaVar:
            val = val.value
        if self.inline:
            if self.ir_depth:
                raise self.diag(
                    st, "return inside a kernel loop or branch is not supported in an inline helper"
                )
            raise _ReturnSignal(val)
        if type(val) is Buffer and isinstance(self.ret_ty, TensorType):
            val = val.data  # ``return A`` of a tensor parameter (TIRx's): its pointer
        if val is not None and self.ret_ty is not None and not isinstance(val, PrimExpr):
            val = convert(val, _Like(self.ret_ty))
        self.b.return_(val)

    def visit_Assert(self, st: ast.Assert) -> None:
        cond = self.eval(st.test)
        msg = None if st.msg is None else self.eval(st.msg)
        if not isinstance(cond, PrimExpr) and not cond:  # decided now: fails now, not on the device
            raise self.diag(st, f"assertion failed{': ' + str(msg) if msg is not None else ''}")
        # one that holds stays a statement, T.bool(True), as TIRx keeps it
        kind = "RuntimeError"
        parts: tuple[str, ...] = ("",)  # no message: TIRx's one empty part
        if (
            isinstance(msg, tuple)
            and len(msg) == 2
            and isinstance(msg[0], str)
            and isinstance(msg[1], (list, tuple))
        ):
            kind, parts = msg[0], tuple(str(x) for x in msg[1])
        elif msg is not None:
            parts = (str(msg),)
        self.b.assert_(_to_bool_expr(cond), kind, parts)


def _is_meta_instance(obj: Any) -> bool:
    """An instance of a ``@T.meta_class`` class (its fields may hold scalar cells)."""
    return bool(getattr(type(obj), "__tirx_meta_class__", False))
