"""The well-formedness checker: scoping, SSA (optional), types, loop control, device-only ops,
pointers. It reads only the IR, so it sits in the IR layer: the IRBuilder (tirx/surface) runs
it on every finished function, and ``VerifyWellFormed`` (the pass, passes/infra.py) wraps it.

Checks, each reported as a located message (``WellFormedError``):

- every var is defined before use and used only within its scope (flat Bind scoping: a
  Bind / AllocBuffer / DeclBuffer is visible to the following statements of its enclosing
  body); buffers likewise;
- with ``require_ssa``, no var is defined twice anywhere in the module (function params
  and dynamic shape vars included). The var of a ``thread_binding`` loop may be reused by
  several such loops of one function (it names one hardware index);
- types are consistent: indices are scalar integers matching the buffer rank, conditions
  are bool, op arguments match the op's declared kinds and arity, calls of module
  functions match the callee's parameters, ``return`` matches the function's type;
- ``break`` / ``continue`` only inside a loop (a device entry starts a fresh context);
- device-only ops only inside a device entry or a ``private`` function (a device helper
  that kernels call; check ``"device_only"``: the front ends leave it to compilation, as
  TIRx loads such functions and refuses them when compiling); no device entry inside another;
- pointer types are consistent with the buffers declared over them: a buffer's data var
  points to ``void`` or to a scalar element type (any: as in TIRx, a tensor declared over
  storage of another element type reinterprets it, ``T.decl_tensor(A.data, ...)``).
"""

from __future__ import annotations

import linecache
from typing import Any

import attrs

from tirx.diagnostics import render as render_text
from tirx.errors import DiagnosticError
from tirx.ir import (
    AllocBuffer,
    Assert,
    AttrStmt,
    Bind,
    Break,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Continue,
    DeclBuffer,
    DeviceEntry,
    Evaluate,
    For,
    ForKind,
    Function,
    GlobalVar,
    IfThenElse,
    IntImm,
    Let,
    Module,
    PointerType,
    PrimType,
    RegionStmt,
    Return,
    Select,
    SeqStmt,
    Stmt,
    StringImm,
    Var,
    VoidType,
    While,
    deep,
)
from tirx.ir.expr import NODE, SEQ, BinaryOp
from tirx.ir.function import signature_parts
from tirx.ir.functor import Dispatch, Functor
from tirx.ir.types import TensorType, tensormap_ptr, uint64

# ``VerifyWellFormed`` and ``VerifyAfterEach`` (the pass and the instrument running this
# checker) live in passes/infra.py; ``tirx.passes.verify`` is this module's name there.
__all__ = ["WellFormedError", "raise_errors", "verify_well_formed"]


@attrs.frozen(slots=True)
class WellFormedError:
    """One problem: a message, the best span found (or None), the offending node, the
    name of the function it is in (None outside any) and, for checks that callers may
    leave to someone else, a short name of the check (``"device_only"``: a device-only op
    in host code, which loading accepts as TIRx does; ``"free_var"``: a var defined
    nowhere in its function, which TIRx's module check accepts (a module-level
    ``T.dynamic``); ``"callee"``: a call names no function of the module)."""

    message: str
    span: Any = None
    node: Any = attrs.field(default=None, repr=False)
    function: str | None = None
    check: str | None = None

    def __str__(self) -> str:
        return f"{self.span}: {self.message}" if self.span is not None else self.message


def pointer_compatible(ptr: Any, dtype: PrimType) -> bool:
    """Whether a buffer of ``dtype`` may be declared over a pointer of type ``ptr``."""
    if not isinstance(ptr, PointerType):
        return False
    el = ptr.element
    if isinstance(el, VoidType):
        return True
    # TIRx reinterprets the storage: a tensor of any element type may be declared over a
    # pointer to any element type (``T.decl_tensor(A_local.data, ...)``, ``A.view("uint32")``)
    return isinstance(el, PrimType)


def _descriptor(a: Any) -> bool:
    """A TMA descriptor variable (``T.Ptr(T.TensorMap())``), whose address ``T.address_of`` takes."""
    return isinstance(a, Var) and a.ty == tensormap_ptr


def _kind_ok(kind: str, a: Any) -> bool:
    base = kind.lstrip("*").rstrip("?")
    t = a.ty
    if base == "x":
        return True
    if base == "s":
        return isinstance(a, StringImm)
    if base == "n":
        return isinstance(a, IntImm) and t.is_int
    if base == "p":
        return isinstance(t, PointerType)
    if not isinstance(t, PrimType):
        return False
    if base == "i":
        return t.is_int or t.is_bool
    if base == "f":
        return t.is_float
    if base == "b":
        return t.is_bool
    return True  # pragma: no cover


def _not_a_value(op: Any, i: int, kind: str, a: Any) -> str | None:
    """Why argument ``a`` cannot go to position ``i`` of kind ``"x"`` (any expression), read
    from the declaration: an op whose result type is its first argument's (``"arg0"``:
    ``exp``, shuffles) or a predicate of it (``"bool0"``: ``isnan``) computes on numbers, as
    do an atomic's value operands (``traits.atomic``: the pointer's index), so a string
    literal or a handle is refused there unless ``pointer_from`` declares the argument a
    pointer (``ptx.addr``). Elsewhere ``"x"`` takes anything (IKET's ``source_code``
    string, ``call_extern``'s and PTX's variadic operands)."""
    if kind.rstrip("?") != "x" or isinstance(a.ty, PrimType) or i in op.traits.pointer_from:
        return None
    if not (op.result in ("arg0", "bool0") or (op.traits.atomic is not None and i != op.traits.atomic)):
        return None
    got = f"is the string literal {a.value!r}" if isinstance(a, StringImm) else f"has type {a.ty}"
    return f"{got}, where T.{op.name} takes a number (a scalar or vector value)"


def _arg_type_ok(arg_ty: Any, param_ty: Any) -> bool:
    if arg_ty == param_ty:
        return True
    if isinstance(arg_ty, PointerType) and isinstance(param_ty, PointerType):
        return isinstance(param_ty.element, VoidType) or isinstance(arg_ty.element, VoidType)
    return False


class _Checker(Functor):
    """The checker: a walk over one function (or each of a module's), dispatching on the
    node's class through the functor base (tirx/ir/functor.py): ``e_<Class>`` checks an
    expression (no method: its operands are checked), ``s_<Class>`` a statement (no method:
    "unknown statement")."""

    _expr_table = Dispatch("e_")
    _stmt_table = Dispatch("s_")

    def __init__(self, require_ssa: bool, module: Module | None) -> None:
        self.require_ssa = require_ssa
        self.module = module
        self.errors: list[WellFormedError] = []
        self.visible: dict[Var, int] = {}
        self.bufs: dict[Buffer, int] = {}
        self.scopes: list[tuple[list, list]] = []
        self.ever: dict[Var, Any] = {}
        self.func_defined: set[Var] = set()
        self.thread_vars: set[Var] = set()
        self.loop_depth = 0
        self.device_depth = 0
        self.stmt_stack: list[Any] = []
        self.func: Function | None = None
        self._defs: set | None = None

    # -- reporting ----------------------------------------------------------------------
    def error(self, msg: str, node: Any = None, check: str | None = None) -> None:
        span = getattr(node, "span", None)
        if span is None:
            for s in reversed(self.stmt_stack):
                if s.span is not None:
                    span = s.span
                    break
        if span is None and self.func is not None:
            span = self.func.span
        fname = self.func.name if self.func is not None else None
        where = f" (in function {fname})" if fname is not None else ""
        self.errors.append(WellFormedError(msg + where, span, node, fname, check))

    # -- scopes -------------------------------------------------------------------------
    def push(self) -> None:
        self.scopes.append(([], []))

    def pop(self) -> None:
        vs, bs = self.scopes.pop()
        for v in vs:
            n = self.visible[v] - 1
            if n:
                self.visible[v] = n
            else:
                del self.visible[v]
        for b in bs:
            n = self.bufs[b] - 1
            if n:
                self.bufs[b] = n
            else:
                del self.bufs[b]

    def define(self, v: Var, node: Any, thread: bool = False) -> None:
        if self.require_ssa:
            if v in self.ever:
                if not (thread and v in self.thread_vars):
                    self.error(f"var {v.name} is defined more than once (SSA required)", node)
            else:
                self.ever[v] = node
        if thread:
            self.thread_vars.add(v)
        self.func_defined.add(v)
        self.visible[v] = self.visible.get(v, 0) + 1
        self.scopes[-1][0].append(v)

    def define_buffer(self, b: Buffer, node: Any) -> None:
        self.bufs[b] = self.bufs.get(b, 0) + 1
        self.scopes[-1][1].append(b)

    def use(self, v: Var, node: Any) -> None:
        if v not in self.visible:
            if v in self.func_defined:
                self.error(f"var {v.name} is used outside the scope that defines it", v)
            elif v in self._all_defs():
                self.error(f"var {v.name} is used before it is defined", v)
            else:
                self.error(f"var {v.name} is undefined: used but never defined", v, "free_var")

    def _returns_tensor(self, v: Any, rt: Any) -> bool:
        """``return A`` of a tensor parameter in a function returning ``T.Tensor(...)`` (TIRx's):
        the value is the parameter's pointer, of the returned tensor's dtype and scope."""
        if type(v) is not Var or not isinstance(rt, TensorType) or self.func is None:
            return False
        t = v.ty
        return (
            isinstance(t, PointerType)
            and t.element == rt.dtype
            and t.scope == rt.scope
            and any(p is v for p, _b in self.func.buffer_map)
        )

    def _all_defs(self) -> set:
        if self._defs is None:
            from tirx.ir import post_order

            self._defs = set()
            assert self.func is not None  # uses are checked inside function()
            for n in post_order(self.func.body):
                if type(n) is Bind or type(n) is For or type(n) is Let:
                    self._defs.add(n.var)
                elif type(n) is AllocBuffer:
                    self._defs.add(n.buffer.data)
        return self._defs

    def use_buffer(self, b: Buffer, node: Any) -> None:
        if b not in self.bufs:
            self.error(f"buffer {b.name} is used outside the scope that declares it", node)

    # -- expressions --------------------------------------------------------------------
    def expr(self, e: Any) -> None:
        t = type(e)
        # the commonest nodes first, before the table (as ScopedRewriter.expr does)
        if t is Var:
            self.use(e, e)
            return
        if t is IntImm or t is StringImm:  # constants: nothing to check
            return
        if isinstance(e, BinaryOp):
            self.expr(e.a)
            self.expr(e.b)
            return
        fn = self._expr_table[t]
        if fn is not None:
            fn(self, e)
            return
        self.operands(e)  # no e_<Class>: check the operands

    def operands(self, e: Any) -> None:
        for name, kind in type(e)._sfields:
            if kind is NODE:
                v = getattr(e, name)
                if v is not None:
                    self.expr(v)
            elif kind is SEQ:
                for x in getattr(e, name):
                    self.expr(x)

    def e_BufferLoad(self, e: BufferLoad) -> None:
        if e.buffer not in self.bufs:  # (use_buffer's test, saving a call where it passes)
            self.use_buffer(e.buffer, e)
        self.indices(e.buffer, e.indices, e)

    def e_Let(self, e: Let) -> None:
        self.expr(e.value)
        self.push()
        self.define(e.var, e)
        self.expr(e.body)
        self.pop()

    def e_Select(self, e: Select) -> None:
        c = e.cond.ty
        if not (isinstance(c, PrimType) and c.is_bool):
            self.error(f"Select condition must be bool, got {c}", e)
        self.operands(e)

    def indices(self, buf: Buffer, idx: tuple, node: Any) -> None:
        if len(idx) != len(buf.shape):
            self.error(
                f"buffer {buf.name} has rank {len(buf.shape)} but is indexed with {len(idx)} indices", node
            )
        for x in idx:
            t = x.ty
            if not (isinstance(t, PrimType) and t.is_int):
                self.error(f"index into buffer {buf.name} must be an integer, got {t}", node)
            self.expr(x)

    def call(self, e: Call) -> None:
        op = e.op
        if isinstance(op, GlobalVar):
            callee = None
            if self.module is not None and op.name in self.module:
                callee = self.module[op.name]
            elif self.module is None and self.func is not None and op.name == self.func.name:
                callee = self.func  # a standalone function calling itself (a recursive @T.jit)
            if callee is None:
                self.error(f"call of unknown function {op.name}", e, "callee")
            else:
                if len(callee.params) != len(e.args):
                    self.error(
                        f"call of {op.name} passes {len(e.args)} arguments, it takes {len(callee.params)}", e
                    )
                else:
                    for i, (a, p) in enumerate(zip(e.args, callee.params)):
                        if not _arg_type_ok(a.ty, p.ty):
                            self.error(
                                f"call of {op.name}: argument {i + 1} has type {a.ty}, parameter {p.name} is {p.ty}",
                                e,
                            )
        else:
            assert self.func is not None  # expressions are checked inside function()
            if op.device_only and self.device_depth == 0 and not self.func.private:
                self.error(
                    f"device-only op T.{op.name} can only be used inside a device entry "
                    "(with T.device_entry(...)) or a private=True helper",
                    e,
                    "device_only",
                )
            lo, hi = op.arity()
            n = len(e.args)
            if n < lo or (hi is not None and n > hi):
                self.error(f"T.{op.name} takes {lo}{'' if hi == lo else '+'} arguments, got {n}", e)
            elif op.args:
                for i, a in enumerate(e.args):
                    k = op.args[i] if i < len(op.args) else op.args[-1]
                    if not _kind_ok(k, a):
                        self.error(
                            f"T.{op.name}: argument {i + 1} has type {a.ty}, which does not match kind {k!r}",
                            e,
                        )
                    elif (why := _not_a_value(op, i, k, a)) is not None:
                        self.error(f"T.{op.name}: argument {i + 1} {why}", e, "argument")
            if op.traits.takes_address and e.args and _descriptor(e.args[0]):
                # TIRx's address of a TMA descriptor variable (T.Ptr(T.TensorMap())): a uint64
                if e.ty != uint64:
                    self.error(f"T.{op.name} of a T.TensorMap descriptor is a uint64, got {e.ty}", e)
            elif op.traits.takes_address and e.args and not isinstance(e.args[0], BufferLoad):
                self.error(f"T.{op.name} takes a buffer element", e)
            elif op.traits.takes_address and not isinstance(e.ty, PointerType):
                self.error(f"T.{op.name} must have a pointer type, got {e.ty}", e)
        for a in e.args:
            self.expr(a)

    e_Call = call

    # -- statements ---------------------------------------------------------------------
    def body(self, s: Any) -> None:
        self.push()
        self.stmt(s)
        self.pop()

    def stmt(self, s: Any) -> None:
        t = type(s)
        if t is SeqStmt:  # not a statement of its own: errors are located at its members
            for x in s.stmts:
                self.stmt(x)
            return
        self.stmt_stack.append(s)
        try:
            fn = self._stmt_table[t]
            if fn is None:  # no s_<Class>
                self.error(f"unknown statement {t.__name__}", s)
            else:
                fn(self, s)
        finally:
            self.stmt_stack.pop()

    def _bool(self, e: Any, what: str, node: Any) -> None:
        t = e.ty
        if not (isinstance(t, PrimType) and t.is_bool and t.lanes == 1):
            self.error(f"{what} must be a scalar bool, got {t}", node)

    def _cond(self, e: Any, what: str, node: Any) -> None:
        """An ``if`` / ``while`` condition: a scalar of any dtype (TIRx keeps ``if x:`` on an
        integer, true when not zero)."""
        t = e.ty
        if not (isinstance(t, PrimType) and t.lanes == 1):
            self.error(f"{what} must be a scalar, got {t}", node)

    def s_Bind(self, s: Bind) -> None:
        self.expr(s.value)
        self.define(s.var, s)

    def s_BufferStore(self, s: BufferStore) -> None:
        self.use_buffer(s.buffer, s)
        self.indices(s.buffer, s.indices, s)
        self.expr(s.value)

    def s_Evaluate(self, s: Evaluate) -> None:
        self.expr(s.value)

    def s_For(self, s: For) -> None:
        self.expr(s.start)
        self.expr(s.extent)
        self.expr(s.step)
        if type(s.step) is IntImm and s.step.value == 0:
            self.error("loop step is 0: the loop never ends (its text does not load)", s)
        self.push()
        self.define(s.var, s, thread=s.kind is ForKind.THREAD_BINDING)
        self.loop_depth += 1
        self.stmt(s.body)
        self.loop_depth -= 1
        self.pop()

    def s_While(self, s: While) -> None:
        self._cond(s.cond, "while condition", s)
        self.expr(s.cond)
        self.loop_depth += 1
        self.body(s.body)
        self.loop_depth -= 1

    def s_IfThenElse(self, s: IfThenElse) -> None:
        self._cond(s.cond, "if condition", s)
        self.expr(s.cond)
        self.body(s.then_case)
        if s.else_case is not None:
            self.body(s.else_case)

    def s_Break(self, s: Break) -> None:
        if self.loop_depth == 0:
            self.error("break outside a loop", s)

    def s_Continue(self, s: Continue) -> None:
        if self.loop_depth == 0:
            self.error("continue outside a loop", s)

    def s_Return(self, s: Return) -> None:
        rt = self.func.ret_ty if self.func is not None else None
        if s.value is not None:
            self.expr(s.value)
            if rt is None:
                # TIRx's early exit ``return 0`` (an integer constant) in a function without a return
                # type: ``return;`` in a device entry, the end of the host code outside one
                if type(s.value) is not IntImm:
                    self.error("return with a value in a function without a return type", s)
            elif s.value.ty != rt and not self._returns_tensor(s.value, rt):
                self.error(f"return value has type {s.value.ty}, the function returns {rt}", s)
        elif rt is not None:
            self.error(f"return without a value in a function returning {rt}", s)

    def s_Assert(self, s: Assert) -> None:
        self._bool(s.cond, "assert condition", s)
        self.expr(s.cond)

    def s_AllocBuffer(self, s: AllocBuffer) -> None:
        b = s.buffer
        self.buffer_fields(b, s)
        self.define(b.data, s)
        self.check_pointer(b, s)
        self.define_buffer(b, s)

    def s_DeclBuffer(self, s: DeclBuffer) -> None:
        b = s.buffer
        self.use(b.data, s)
        self.buffer_fields(b, s)
        self.check_pointer(b, s)
        self.define_buffer(b, s)

    def s_DeviceEntry(self, s: DeviceEntry) -> None:
        if self.device_depth:
            self.error("device entry nested inside another device entry", s)
        for a in s.args:
            self.expr(a)
        saved = self.loop_depth
        self.loop_depth = 0
        self.device_depth += 1
        self.body(s.body)
        self.device_depth -= 1
        self.loop_depth = saved

    def s_AttrStmt(self, s: AttrStmt) -> None:
        self.expr(s.value)
        self.body(s.body)

    def s_RegionStmt(self, s: RegionStmt) -> None:  # TIRx's regions: the body sees the region's variable
        for a in s.args:
            self.expr(a)
        self.push()
        for v in s.params:
            self.define(v, s, thread=True)
        self.stmt(s.body)
        self.pop()

    def buffer_fields(self, b: Buffer, node: Any = None) -> None:
        for e in (*b.shape, *b.strides):
            self.expr(e)
        if b.elem_offset is not None:
            self.expr(b.elem_offset)
        self.extents(b, node)

    def extents(self, b: Buffer, node: Any) -> None:
        """A negative constant extent has no memory behind it: no backend can allocate or index it."""
        for i, e in enumerate(b.shape):
            if type(e) is IntImm and e.value < 0:
                self.error(
                    f"buffer {b.name} has a negative extent {e.value} in dimension {i}", node, "extent"
                )

    def check_pointer(self, b: Buffer, node: Any) -> None:
        if not pointer_compatible(b.data.ty, b.dtype):
            self.error(
                f"buffer {b.name} of dtype {b.dtype} is declared over pointer {b.data.name} of type {b.data.ty}",
                node,
            )

    # -- functions ------------------------------------------------------------------------
    def function(self, f: Function) -> None:
        self.func = f
        self._defs = None
        self.func_defined = set()
        self.thread_vars = set()
        self.loop_depth = 0
        self.device_depth = 0
        self.push()
        params = set(f.params)
        for p in f.params:
            self.define(p, f)
        for pv, b in f.buffer_map:
            if pv not in params:
                self.error(f"buffer_map names {pv.name}, which is not a parameter", f)
            if b.data is not pv:
                self.error(f"buffer {b.name} in buffer_map is not over its parameter {pv.name}", f)
            for e in signature_parts(b):
                from tirx.ir import collect_vars

                for v in collect_vars(e):
                    if v not in self.visible and v not in params:
                        self.define(v, f)
            self.extents(b, pv if getattr(pv, "span", None) is not None else f)
            self.check_pointer(b, f)
            self.define_buffer(b, f)
        self.stmt(f.body)
        rt = f.ret_ty
        if rt is not None and not isinstance(rt, VoidType) and not always_returns(f.body):
            # the caller would read a value the function never wrote (TIRx refuses it too)
            self.error(f"function {f.name} returns {rt} but can reach its end without a return", f)
        self.pop()
        self.func = None


def always_returns(s: Any) -> bool:
    """Every path through ``s`` ends in a ``return`` (an ``if`` with both branches returning, a
    statement after which nothing runs); a loop's body may not run, so a loop never does."""
    t = type(s)
    if t is Return:
        return True
    if t is SeqStmt:
        return any(always_returns(m) for m in s.stmts)
    if t is IfThenElse:
        return s.else_case is not None and always_returns(s.then_case) and always_returns(s.else_case)
    if t in (For, While):
        return False
    body = getattr(s, "body", None)
    return isinstance(body, Stmt) and always_returns(body)


def verify_well_formed(ir: Any, require_ssa: bool = False) -> list[WellFormedError]:
    """Check a Function or Module; return the problems found (empty when well-formed)."""
    return deep.call(_verify, ir, require_ssa)


def _verify(ir: Any, require_ssa: bool) -> list[WellFormedError]:
    if isinstance(ir, Module):
        c = _Checker(require_ssa, ir)
        for f in ir.functions:
            c.function(f)
        return c.errors
    if isinstance(ir, Function):
        c = _Checker(require_ssa, None)
        c.function(ir)
        return c.errors
    raise TypeError(f"verify_well_formed: expected a Function or Module, got {type(ir).__name__}")


def raise_errors(
    errors: list[WellFormedError],
    header: str | None = "IR is not well-formed",
    source_text: str | None = None,
    source_name: str | None = None,
) -> None:
    """Raise a DiagnosticError for ``errors`` (located at the first; all listed).

    ``header`` prefixes the first message (None: the bare message, as the front ends
    report it). The caret snippet comes from ``source_text`` for spans in
    ``source_name`` (text given to ``tirx.loads``), else from the span's file.
    """
    first = errors[0]
    msg = first.message if header is None else f"{header}: {first.message}"

    def render(m: str, span: Any) -> str:
        inner = getattr(span, "innermost", span)
        src = getattr(inner, "source", None)
        if source_text is not None and src == source_name:
            return render_text(m, span, source_text)
        lines = linecache.getlines(src) if isinstance(src, str) else []
        return render_text(m, span, "".join(lines) if lines else None)

    lines = [render(msg, first.span)]
    for e in errors[1:]:
        lines.append(render(e.message, e.span))
    err = DiagnosticError(msg, first.span, "\n".join(lines))
    err.errors = list(errors)  # type: ignore[attr-defined]  # an extra attribute of this error only
    raise err
