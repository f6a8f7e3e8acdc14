"""The text builder's rules for expressions and calls.

A mixin of ``TextBuilder`` (``_transform.py``), split out by node family (issue #30);
its helpers (``err``, ``expr``, ``split_args``, ``dynamic``, ...) and the per-parse
state are TextBuilder's.
"""

from __future__ import annotations

import ast
import functools
import operator
from typing import TYPE_CHECKING, Any

from tirx.grammar._values import (
    _BINFORMS,
    _LET,
    _UNFORMS,
    _desc,
    _FuncRef,
    _Kw,
    _LetAnnot,
    _resolve_t,
    _Spec,
    _Walrus,
)
from tirx.ir import op as _opmod
from tirx.ir.buffer import Buffer
from tirx.ir.expr import (
    And,
    BitNot,
    BufferLoad,
    Call,
    Cast,
    Div,
    FloatImm,
    IntImm,
    Not,
    PrimExpr,
    Var,
    binop,
    const,
    convert,
)  # fmt: skip
from tirx.ir.fold import check_true_div
from tirx.ir.fold import neg as _neg
from tirx.ir.operators import OPERATORS
from tirx.ir.span import Span
from tirx.ir.types import PrimType, bool_, handle, handle_of, int32, int64
from tirx.surface import forms as _forms
from tirx.surface.builder import GlobalRef
from tirx.surface.cells import SCALAR_FORMS, Cell
from tirx.surface.helpers import HELPERS, lazy_select
from tirx.surface.launch_config import LAUNCH_CLASSES, LAUNCH_KEYWORDS, LaunchConfig, entry_launch

_CONSTS = {"True": True, "False": False, "None": None}

# operators by their text spelling (the token's value), from the one operator table
_BIN = {o.text: o.node for o in OPERATORS if o.text is not None and not o.unary}
_PREC = {o.text: o.prec for o in OPERATORS if o.text is not None and not o.unary}
_PREC["@"] = _PREC["*"]  # the layout DSL's axis binding (n @ T.cuda.Axis.laneid), as in Python
_CMP = frozenset(o.text for o in OPERATORS if o.assoc == "none")  # comparisons do not chain


#: a tensor's fields the text reads as the frontend does (``A.shape[0]``), and its methods that
#: build an expression (the view methods declare tensors: an assignment's, not yet the text's)
_BUFFER_FIELDS = {
    "shape": lambda b: tuple(b.shape),
    "dtype": lambda b: b.dtype,
    "ndim": lambda b: len(b.shape),
}
_BUFFER_METHODS = frozenset({"ptr_to", "access_ptr", "vload", "view", "permute", "rearrange"})
_VIEWS = frozenset({"view", "permute", "rearrange"})  # declare a tensor over the same storage
_LAYOUT_MODULES = frozenset({"tirx.surface.layout", "tirx.ir.layout"})
# Python's meaning of each infix operator, from the operator table (a chain's pair of numbers,
# the layout DSL's values); ``@`` is the layout DSL's alone
_PYFUNC = {
    o.text: o.py_func for o in OPERATORS if o.text is not None and o.py_func is not None and not o.unary
}
_PYFUNC["@"] = operator.matmul

#: the frontend's ``T`` functions the text calls by name (``T.<key>``): tirx's own code over the
#: parsed values (``_py_call`` adds the layout DSL's, imported when first named)
_PY_CALLS: dict = {**HELPERS, **SCALAR_FORMS, **{f"cuda.{k}": v for k, v in LAUNCH_CLASSES.items()}}
_PY_CALLS["ptr"] = handle_of  # TIRx's older T.ptr("float32", "shared"): the pointer type


def _py_call(rest: str):
    fn = _PY_CALLS.get(rest)
    if fn is None and (rest == "TileLayout" or rest[:12] == "cuda.layout."):
        from tirx.surface.layout import TileLayout, cuda_layout

        fn = TileLayout if rest == "TileLayout" else getattr(cuda_layout, rest[12:], None)
    return fn  # None: not one of them (an unknown T.cuda.layout.<name> is the usual "unknown name")


class _PtxRef:
    """``T.ptx["..."]`` read, before its call (a PTX instruction's chain and where it was named)."""

    __slots__ = ("chain", "span")

    def __init__(self, chain, span):
        self.chain, self.span = chain, span


class ExprMixin:
    """The expression and call rule callbacks."""

    if TYPE_CHECKING:  # the TextBuilder's (tirx/grammar/_transform.py)
        b: Any
        text: str
        bare_tensors: list

    # ------------------------------------------------------------- expressions
    def name(self, c):
        tok = c[0]
        n = tok.value
        if self.let_scope:
            vs = self.let_scope.get(n)
            if vs:
                return vs[-1]
        v = self.b.lookup(n)
        if v is None:
            v = self.top_vars.get(n)
        if v is None:
            if n in _CONSTS:
                return _CONSTS[n]
            raise self.err(f"undefined name '{n}'", self.tsp(tok))
        if type(v) is Buffer:
            v = v.data
            self.bare_tensors.append(v)  # a tensor's name where a value goes (keep_tensor_spelling)
        elif type(v) is Cell:  # a mutable local (x: T.int32 = ...) reads as x[0]
            v = v.load(self.tsp(tok))
        self.ln_var = v  # the last name used, for the end of a binop span
        self.ln_tok = tok
        return v

    def dotted(self, c):
        tok = c[0]
        s = tok.value
        head, _, rest = s.partition(".")
        if head == "T" and rest[:10] == "cuda.Axis.":  # a CUDA layout axis: T.cuda.Axis.laneid
            from tirx.surface.layout import CudaAxes

            try:
                return getattr(CudaAxes(), rest[10:])
            except AttributeError as e:
                raise self.err(f"unknown name {s}: {e}", self.tsp(tok), e) from e
        if head == "T":
            r = _resolve_t(rest)
            if r is not None:
                kind, val = r
                if kind == "type":
                    return val
                if kind == "spec" and val.role == "subscript":
                    return _LET  # bare T.let
                if kind in ("op", "alias"):
                    raise self.err(f"T.{rest} is an op: call it, T.{rest}(...)", self.tsp(tok))
                raise self.err(f"T.{rest} must be called: T.{rest}(...)", self.tsp(tok))
        elif head == self.module_name and "." not in rest:
            sp = self.tsp(tok)
            self.gv_refs.append((rest, sp))
            return _FuncRef(rest, sp)
        elif head == "Module" and self.module_name is None and rest == self.standalone_fname:
            return _FuncRef(rest, self.tsp(tok))  # a standalone function calling itself (TIRx's spelling)
        elif rest == "data" and isinstance(self.b.lookup(head), Buffer):
            # a buffer's backing pointer, printed as ``X.data``
            return self.b.name_data(self.b.lookup(head))
        elif rest in _BUFFER_FIELDS and isinstance(self.b.lookup(head), Buffer):
            return _BUFFER_FIELDS[rest](self.b.lookup(head))  # A.shape, A.dtype: the frontend's
        raise self.err(f"unknown name {s}", self.tsp(tok))

    def module_call(self, fname, args, span, s):
        """``Module.f(a, b)``: the frontend's direct call of a function of the module, the
        ``T.Call(Module.f, [a, b], ty=...)`` TIRx prints, its type the callee's return type
        (a function defined above it in the text: the text is read in order)."""
        fn = next((f for f in (self.b.module_funcs or ()) if f.name == fname), None)
        if fn is None:
            raise self.err(
                f"{s}(...) calls a function the text has not defined above it: define {fname} first, "
                f"or write T.Call({s}, [...], ty=...)",
                span,
            )
        pos, kw = self.split_args(args, span, s)
        if kw:
            raise self.err(f"{s} takes no keyword arguments", span)
        params = [None if p in fn.buffer_map else p.ty for p in fn.params]
        try:
            r = GlobalRef(fname, params, fn.ret_ty)(*pos)
        except (TypeError, ValueError) as e:
            raise self.err(f"{s}: {e}", span, e) from e
        return self.keep_tensor_spelling(r.with_span(span), pos, span)  # Module.f(A): A bare

    def call(self, c):
        tok = c[0]
        rpar = c[-1]
        args = c[1] if len(c) == 3 else ()
        span = Span(self.src, tok.line, tok.column, rpar.end_line, rpar.end_column)
        s = tok.value
        if tok.type == "NAME":
            if s in ("float", "int") and self.b.lookup(s) is None and not self.let_scope.get(s):
                # float("-inf"), int(3.0): Python's value of one literal (nothing else runs)
                pos, kw = self.split_args(args, span, s)
                if kw or len(pos) != 1 or type(pos[0]) not in (int, float, str, bool):
                    raise self.err(f"{s}(...) in the text takes one literal number or string", span)
                try:
                    return (float if s == "float" else int)(pos[0])
                except (TypeError, ValueError) as e:
                    raise self.err(f"{s}({pos[0]!r}): {e}", span, e) from e
            if s == "range" and self.b.lookup("range") is None:
                pos, kw = self.split_args(args, span, "range")
                return self.form_call(_forms.RANGE, pos, kw, span, "range")
            if self.b.lookup(s) is None and not self.let_scope.get(s):
                raise self.err(f"undefined name '{s}'", self.tsp(tok))
            raise self.err(f"'{s}' is not callable", self.tsp(tok))
        head, _, rest = s.partition(".")
        if s == "T.dynamic":
            return self.dynamic(args, span)
        if head == self.module_name and rest and "." not in rest:
            return self.module_call(rest, args, span, s)
        buf = self.b.lookup(head) if rest in _BUFFER_METHODS else None
        if type(buf) is Buffer:  # A.ptr_to([i]), A.view(4, 16), A.permute(1, 0): tirx's own methods
            pos, kw = self.split_args(args, span, s)
            if rest in _VIEWS:
                import tirx.surface.layout  # noqa: F401  (registers the view builder)
            try:
                if rest in _VIEWS:  # a declaration, emitted where the call stands by this builder
                    with self.b:
                        return self.emit(span, functools.partial(getattr(buf, rest), **kw), *pos)
                return getattr(buf, rest)(*pos, **kw)
            except (TypeError, ValueError, IndexError) as e:
                raise self.err(f"{s}: {e}", span, e) from e
        fn = _py_call(rest) if head == "T" else None
        if fn is not None:
            # T.cuda.LaunchConfig(...), T.local_scalar(...), T.ceildiv(...), T.TileLayout(T.S[...]):
            # tirx's own Python functions of the frontend's T, over the parsed values
            pos, kw = self.split_args(args, span, s)
            try:
                v = fn(*pos, **kw)
            except (TypeError, ValueError, AttributeError) as e:
                raise self.err(str(e) if str(e).startswith(s) else f"{s}: {e}", span, e) from e
            return _Spec("scalar", span, *v) if rest in SCALAR_FORMS else v  # a cell the name completes
        r = _resolve_t(rest) if head == "T" else None
        if r is None:
            chain = self.surface_chain(rest, tok) if head == "T" else None
            if chain is None:
                raise self.err(f"unknown name {s}", self.tsp(tok))
            pos, kw = self.split_args(args, span, s)
            if kw:
                raise self.err(f"{s} takes no keyword arguments", span)
            try:
                return chain(*pos, span=span)
            except (TypeError, ValueError) as e:
                raise self.err(str(e), span, e) from e
        kind, val = r
        fname = s
        if kind == "alias":  # T.cuda.warp_sum(x, width=16): builds its target op's call
            pos, kw = self.split_args(args, span, fname)
            for i, a in enumerate(pos):
                if not (isinstance(a, (PrimExpr, str)) or type(a) in (int, float, bool)):
                    raise self.err(f"{s}: argument {i + 1} must be an expression, got {_desc(a)}", span)
            for k, a in kw.items():
                if not (isinstance(a, (PrimExpr, str)) or type(a) in (int, float, bool)):
                    raise self.err(f"{s}: argument {k}= must be an expression, got {_desc(a)}", span)
            try:
                return self.keep_tensor_spelling(val(*pos, **kw, span=span), pos, span)
            except (TypeError, ValueError) as e:
                raise self.err(str(e), span, e) from e
        if kind == "op":
            pos, kw = self.split_args(args, span, fname)
            return self.op_call(val, pos, kw, span)
        if kind == "type":
            pos, kw = self.split_args(args, span, fname)
            return self.typed_const(val, pos, kw, span, fname)
        if kind == "spec":
            pos, kw = self.split_args(
                args, span, fname, allow_walrus=bool(val.params) and val.params[0].kind == "binding"
            )
            return self.form_call(val, pos, kw, span, fname)
        pos, kw = self.split_args(args, span, fname)
        if val in _UNFORMS:
            self.nargs(fname, pos, kw, span, 1)
            self.operand(pos[0], span)
            try:
                return _UNFORMS[val](convert(pos[0]), span=span)
            except (TypeError, ValueError) as e:
                raise self.err(str(e), span, e) from e
        if val in _BINFORMS:
            self.nargs(fname, pos, kw, span, 2)
            a, b = pos
            self.operand(a, span)
            self.operand(b, span)
            try:
                return binop(_BINFORMS[val], a, b, span)
            except (TypeError, ValueError) as e:
                raise self.err(str(e), span, e) from e
        raise self.err(f"T.{val} cannot be called here", span)  # T.let, the decorators

    def arguments(self, c):
        return c

    def kwarg(self, c):
        return _Kw(c[0], c[1])

    def walrus(self, c):
        tok, val = c
        sp = self.tsp(tok)
        e = self.expr(val, sp)
        name = self.check_new_name(tok)
        v = Var(name, e.ty, span=sp)
        self.let_scope.setdefault(name, []).append(v)
        return _Walrus(v, e, tok)

    def subscript(self, c):
        tok, idx, rsqb = c
        span = Span(self.src, tok.line, tok.column, rsqb.end_line, rsqb.end_column)
        if tok.type == "DOTTED":
            head, _, rest = tok.value.partition(".")
            r = _resolve_t(rest) if head == "T" else None
            if (
                r is not None and r[0] == "spec" and r[1].role == "subscript"
            ):  # T.let[ty]: tirx.surface.forms.LET
                try:
                    return _LetAnnot(r[1].subscript(idx[0] if len(idx) == 1 else tuple(idx), span))
                except (TypeError, ValueError) as e:
                    raise self.err(str(e), span, e) from e
            if tok.value in ("T.S", "T.R"):  # the layout DSL's specs: T.S[(4, 8) : (1, 4)]
                from tirx.surface import layout as _layout

                try:
                    return getattr(_layout, tok.value[2:])[idx[0] if len(idx) == 1 else tuple(idx)]
                except (TypeError, ValueError) as e:
                    raise self.err(f"{tok.value}[...]: {e}", span, e) from e
            if tok.value == "T.ptx":
                # T.ptx["cp.async.bulk..."]: the instruction by its text, called next (sub_call);
                # the PTX table is imported when a text first names an instruction this way
                from tirx.ops.ptx_table import instruction

                try:
                    return _PtxRef(instruction(idx[0] if len(idx) == 1 else tuple(idx)), span)
                except (TypeError, KeyError) as e:
                    raise self.err(str(e).strip("'\""), span, e) from e
            v = self.dotted([tok])  # raises the right error for unknown names
            if type(v) is tuple and len(idx) == 1 and type(idx[0]) is int:  # A.shape[0]
                if not -len(v) <= idx[0] < len(v):
                    raise self.err(f"{tok.value}[{idx[0]}]: index out of range (rank {len(v)})", span)
                return v[idx[0]]
            raise self.err(f"{tok.value} cannot be indexed", span)
        buf = self.buffer(tok)
        return BufferLoad(buf, self.indices(buf, idx, span), span=span)

    def sub_call(self, c):
        """``T.ptx["<instruction>"](...)``: the chain the text names, called with the operands."""
        ref, rpar = self.subscript(c[:3]), c[-1]
        args = c[3] if len(c) == 5 else ()
        if type(ref) is not _PtxRef:
            raise self.err(f"{_desc(ref)} is not callable", self.tsp(rpar))
        span = Span(self.src, ref.span.line, ref.span.col, rpar.end_line, rpar.end_column)
        pos, kw = self.split_args(args, span, "T.ptx[...]")
        try:
            return ref.chain(*pos, **kw, span=span)
        except (TypeError, ValueError, KeyError) as e:
            raise self.err(str(e).strip("'\""), span, e) from e

    def subs(self, c):
        return c

    def tuple(self, c):
        return tuple(c)

    def empty_tuple(self, c):
        return ()

    def list(self, c):
        return c

    def dict(self, c):
        d = {}
        for k, v in c:
            d[k] = v
        return d

    def dictitem(self, c):
        k, colon, v = c
        if type(k) is not str and type(k) is not Var:  # a Var: T.Let(body, where={v: value})
            raise self.err(f"dict keys must be string literals, got {_desc(k)}", self.tsp(colon))
        return (k, v)

    def operand(self, v, span):
        if isinstance(v, PrimExpr) or type(v) in (int, float, bool):
            return v
        raise self.err(f"expected an expression, got {_desc(v)}", span)

    def bin(self, op, a, b):
        cls = _BIN.get(op.value)
        a_ok = isinstance(a, PrimExpr) or type(a) in (int, float, bool)
        b_ok = isinstance(b, PrimExpr) or type(b) in (int, float, bool)
        if cls is None or not a_ok or not b_ok:
            r = self.layout_op(op, a, b)  # the layout DSL: n @ T.cuda.Axis.laneid, T.S[...] + 3
            if r is not None:
                return r
            if cls is None:
                raise self.err(
                    f"'{op.value}' is the layout DSL's (n @ T.cuda.Axis.<axis>): got {_desc(a)} and {_desc(b)}",
                    self.tsp(op),
                )
            side, v = ("left", a) if not a_ok else ("right", b)
            raise self.err(f"unsupported {side} operand of '{op.value}': {_desc(v)}", self.tsp(op))
        ta, tb = type(a), type(b)
        if (ta is int or ta is float) and (tb is int or tb is float):
            # two Python numbers: Python's value (2 * 8 + 1 is 17, range(4 + 4) is range(8)),
            # as TIRx and the frontend evaluate them
            try:
                return _PYFUNC[op.value](a, b)
            except (ArithmeticError, ValueError) as e:
                raise self.err(f"'{op.value}' of {a!r} and {b!r}: {e}", self.tsp(op), e) from e
        if cls is Div:
            try:
                check_true_div(a, b)  # TIRx's '/' refuses two integers (tirx/ir/fold.py)
            except TypeError as e:
                raise self.err(str(e), self.tsp(op), e) from e
        # a Python number combines with an expression as in TIRx (tirx/ir/fold.py, through
        # binop); the common case, an int32-sized int beside an int32 / int64 scalar, becomes
        # that dtype's constant here (what those rules give, minus the detour)
        ta, tb = type(a), type(b)
        if tb is int and ta is not int and isinstance(a, PrimExpr):
            t = a.ty
            if (t is int32 or t is int64) and -(1 << 31) <= b < 1 << 31:
                b = IntImm(b, t)
        elif ta is int and tb is not int and isinstance(b, PrimExpr):
            t = b.ty
            if (t is int32 or t is int64) and -(1 << 31) <= a < 1 << 31:
                a = IntImm(a, t)
        sa = a.span if type(a) is not Var and isinstance(a, PrimExpr) else None
        sb = b.span if type(b) is not Var and isinstance(b, PrimExpr) else None
        if sa is not None:
            l0, c0 = sa.line, sa.col
        else:
            l0, c0 = op.line, op.column
        if sb is not None:
            l1, c1 = sb.end_line, sb.end_col
        elif b is self.ln_var:  # the right operand is the name just read
            t = self.ln_tok
            l1, c1 = t.end_line, t.end_column
        else:
            l1, c1 = op.end_line, op.end_column
        try:
            if isinstance(a, PrimExpr) and isinstance(b, PrimExpr) and a.ty is b.ty:
                return cls(a, b, span=Span(self.src, l0, c0, l1, c1))  # what binop builds, minus its detours
            return binop(cls, a, b, Span(self.src, l0, c0, l1, c1))
        except (TypeError, ValueError) as e:
            raise self.err(str(e), self.tsp(op), e) from e

    def arith(self, c):
        if len(c) == 3:
            return self.bin(c[1], c[0], c[2])
        vals = [c[0]]
        flags: list = [None]  # per value: None, or (right operand,) for a comparison's result
        ops: list = []
        for i in range(1, len(c), 2):
            op = c[i]
            p = _PREC[op.value]
            while ops and _PREC[ops[-1].value] >= p:
                self._reduce(vals, flags, ops)
            ops.append(op)
            vals.append(c[i + 1])
            flags.append(None)
        while ops:
            self._reduce(vals, flags, ops)
        return vals[0]

    def _reduce(self, vals, flags, ops):
        op = ops.pop()
        b = vals.pop()
        fb = flags.pop()
        a = vals.pop()
        fa = flags.pop()
        is_cmp = op.value in _CMP
        if is_cmp and fa is not None and fb is None and not self._tirx_cmp_of_cmp(op, b):
            # a Python chain, 0 <= i < n: (0 <= i) and (i < n), as the frontend builds it; a pair
            # of two numbers (lo <= i < 40 <= 64) is decided, as Python decides it there
            m = fa[0]
            if type(m) in (int, float) and type(b) in (int, float):
                right = const(_PYFUNC[op.value](m, b), bool_)
            else:
                right = self.bin(op, m, b)
            try:
                vals.append(And(self.expr(a, self.tsp(op)), right, span=self.tsp(op)))
            except (TypeError, ValueError) as e:
                raise self.err(str(e), self.tsp(op), e) from e
            flags.append((b,))
            return
        if (
            is_cmp
            and (fa is not None or fb is not None)
            and not (fa is not None and fb is None and self._tirx_cmp_of_cmp(op, b))
        ):
            raise self.err("comparisons cannot be chained; parenthesize one side", self.tsp(op))
        vals.append(self.bin(op, a, b))
        flags.append((b,) if is_cmp else None)

    def layout_op(self, op, a, b):
        """An operator of the layout DSL (tirx/surface/layout.py), as the frontend evaluates it:
        either operand a layout value (a ``T.S`` / ``T.R`` spec, an axis, an offset). None when
        neither is."""
        if type(a).__module__ not in _LAYOUT_MODULES and type(b).__module__ not in _LAYOUT_MODULES:
            return None
        fn = _PYFUNC.get(op.value)
        if fn is None:
            raise self.err(
                f"'{op.value}' does not apply to layout values ({_desc(a)}, {_desc(b)})", self.tsp(op)
            )
        try:
            return fn(a, b)
        except (TypeError, ValueError) as e:
            raise self.err(f"layout '{op.value}': {e}", self.tsp(op), e) from e

    def load_slice(self, c):
        """``lo : hi`` in a subscript: a Python slice, for the layout DSL's ``T.S[shape : strides]``
        and ``T.R[extent : stride]`` (a tensor's slice is no value of the text)."""
        k = next(i for i, x in enumerate(c) if getattr(x, "type", None) == "COLON")
        lo = c[0] if k == 1 else None
        hi = c[k + 1] if len(c) > k + 1 else None
        return slice(lo, hi)

    def _tirx_cmp_of_cmp(self, op, b) -> bool:
        """TIRx's printer writes ``(a > b) == flag`` as ``a > b == flag`` (it drops the
        parentheses a comparison needs inside a comparison). Read so: an ``==`` / ``!=`` whose
        left side is a comparison and whose right side is a bool (a Python chain would compare
        the middle operand with a bool). Any other chain (``0 <= i < n``) stays an error."""
        if op.value not in ("==", "!="):
            return False
        if type(b) is bool:
            return True
        ty = getattr(b, "ty", None)
        return isinstance(ty, PrimType) and ty.is_bool and ty.lanes == 1

    test = orexpr = arith

    def ifexp(self, c):
        """``a if c else b``: a condition Python decides picks its arm (as the frontend and TIRx
        evaluate it); an IR condition is TIRx's ``T.if_then_else`` of both arms."""
        a, tok, cond, _, b = c
        if type(cond) is Cell:
            cond = cond.load()
        if type(cond) is IntImm:
            cond = bool(cond.value)
        if not isinstance(cond, PrimExpr):
            if type(cond) not in (bool, int, float):
                raise self.err(
                    f"a conditional expression's condition must be a value, got {_desc(cond)}", self.tsp(tok)
                )
            return a if cond else b
        sp = self.tsp(tok)
        try:
            return lazy_select(
                cond, a.load() if type(a) is Cell else a, b.load() if type(b) is Cell else b, sp
            )
        except (TypeError, ValueError) as e:
            raise self.err(str(e), sp, e) from e

    def not_expr(self, c):
        tok, v = c
        sp = self.tsp(tok)
        e = self.expr(v, sp)
        try:
            return Not(e, span=sp)
        except (TypeError, ValueError) as ex:
            raise self.err(str(ex), sp, ex) from ex

    def neg(self, c):
        tok, v = c
        t = type(v)
        if t is int or t is float:
            return -v
        sp = self.tsp(tok)
        e = self.expr(v, sp)
        ty = e.ty
        if not (isinstance(ty, PrimType) and not ty.is_bool):
            raise self.err(f"cannot negate an expression of dtype {ty}", sp)
        try:
            return _neg(e, sp)  # the frontend's (TIRx's) -a: a * -1, folded
        except (TypeError, ValueError) as ex:
            raise self.err(str(ex), sp, ex) from ex

    def pos(self, c):
        tok, v = c
        return self.operand(v, self.tsp(tok))

    def invert(self, c):
        tok, v = c
        sp = self.tsp(tok)
        e = self.expr(v, sp)
        try:
            return BitNot(e, span=sp)
        except (TypeError, ValueError) as ex:
            raise self.err(str(ex), sp, ex) from ex

    # ------------------------------------------------------------- calls
    def typed_const(self, ty, pos, kw, span, fname):
        if len(pos) == 1 and not kw and type(ty) is PrimType and ty.lanes == 1:
            a = pos[0]
            ta = type(a)
            try:
                if ta is float and ty.is_float:
                    return FloatImm(a, ty, span=span)
                if ta is int and ty.is_int:
                    return IntImm(a, ty, span=span)
            except (TypeError, ValueError) as e:
                raise self.err(f"{fname}: {e}", span, e) from e
        if ty is handle:  # T.handle("tensormap"), T.handle("float32", "shared"): a pointer type
            try:
                return handle_of(*pos, **kw)
            except (TypeError, ValueError) as e:
                raise self.err(f"{fname}: {e}", span, e) from e
        if not isinstance(ty, PrimType):
            raise self.err(f"{fname} is a type and cannot be called", span)
        self.nargs(fname, pos, kw, span, 1)
        a = pos[0]
        if type(a) is str:
            if ty.is_float and a in ("inf", "-inf", "nan", "+inf", "-nan", "+nan"):  # float(a): no eval
                a = float(a)
            else:
                raise self.err(f"{fname}: cannot make a constant from the string {a!r}", span)
        if isinstance(a, PrimExpr):
            return a if a.ty == ty else Cast(ty, a, span=span)
        if type(a) not in (int, float, bool):
            raise self.err(f"{fname}: expected a number, got {_desc(a)}", span)
        try:
            return const(a, ty, span=span)
        except (TypeError, ValueError) as e:
            raise self.err(f"{fname}: {e}", span, e) from e

    def form_call(self, spec, pos, kw, span, fname):
        """``T.<form>(...)``: bound, checked and built by its FormSpec (tirx/surface/forms.py)."""
        if pos and type(pos[0]) is _Walrus:  # T.Let(x := v, ...): x is visible to the end of the form
            w = pos[0]
            vs = self.let_scope.get(w.var.name)
            if vs and vs[-1] is w.var:
                vs.pop()
                if not vs:
                    del self.let_scope[w.var.name]
        if spec.role == "subscript":
            raise self.err(f"{fname} is written {fname}[...], not called", span)
        if spec.name == "device_entry" and (
            any(k in LAUNCH_KEYWORDS for k in kw) or (len(pos) == 1 and type(pos[0]) is LaunchConfig)
        ):  # launch=T.cuda.LaunchConfig(...), grid=, block=, ...: the frontend's spelling
            extra = {k: kw.pop(k) for k in [k for k in kw if k in LAUNCH_KEYWORDS]}
            try:
                values, kw = entry_launch(tuple(pos), kw, **extra)
            except (TypeError, ValueError) as e:
                raise self.err(str(e), span, e) from e
            pos = list(values)
        try:
            r = spec.call(pos, kw, span, fname)
        except (TypeError, ValueError) as e:  # FormError (a TypeError) or the node's own check
            raise self.err(str(e), span, e) from e
        if spec.role == "loop":  # a for header: (start, extent, kind, step, annotations, thread)
            return _Spec("loop", span, *r)
        if spec.role == "loops":  # T.grid: one loop per name of the header (for i, j in ...)
            return _Spec("loop", span, *r[0]) if len(r) == 1 else _Spec("loops", span, *r)
        if spec.role == "bind":  # X = T.alloc_tensor(...): a Pending the target's name completes
            return _Spec("bind", span, r)
        if spec.role == "stmt":  # T.evaluate(...), T.func_attr(...): a Pending emitted where it stands
            return _Spec("stmt", span, r)
        if spec.role == "region":  # with T.device_entry(...) / T.attr(...): the header's values
            return _Spec(spec.name, span, *r)
        if spec.name == "Call" and type(r) is Call:  # T.Call(Module.f, [A, i]): A written bare
            return self.keep_tensor_spelling(r, list(r.args), span, in_list=1)
        return r

    def surface_chain(self, rest, tok):
        """``T.ptx.fence.proxy.async_.shared__cta``: an op's script surface (its ``"script"``
        implementation, the PTX table's modifier chains) followed by attributes, as in Python."""
        parts = rest.split(".")
        for k in range(len(parts) - 1, 0, -1):
            o = _opmod.lookup(".".join(parts[:k]))
            if o is None:
                continue
            v = _opmod.impl("script", o)
            if v is None:
                return None
            try:
                for p in parts[k:]:
                    v = getattr(v, p)
            except AttributeError as e:
                raise self.err(str(e), self.tsp(tok), e) from e
            return v
        return None

    def op_call(self, o, pos, kw, span):
        ty = None
        kw = dict(kw or {})
        if "ty" in kw:
            ty = self.as_type(kw.pop("ty"), span, "a result type for ty=")
        surface = _opmod.impl("script", o)  # T.<name> as the Python frontend sees it (PTX table)
        keywords = getattr(surface, "takes_keywords", False)  # it takes keyword options itself
        for k in kw:
            if k not in o.params and not keywords:
                raise self.err(f"T.{o.name} got an unexpected keyword argument '{k}'", span)
        for i, a in enumerate(pos):
            if type(a) is Buffer and i < len(o.args) and o.args[i].strip("*?") == "p":
                continue  # a buffer where a pointer goes (TIRx's spelling): the op takes its data
            if not (isinstance(a, (PrimExpr, str)) or type(a) in (int, float, bool)):
                raise self.err(f"T.{o.name}: argument {i + 1} must be an expression, got {_desc(a)}", span)
        try:
            if surface is not None and ty is None and (not kw or keywords):
                r = surface(*pos, span=span, **kw)
            else:
                r = _opmod.call(o, *pos, ty=ty, span=span, **kw)
        except (TypeError, ValueError) as e:
            raise self.err(str(e), span, e) from e
        return self.keep_tensor_spelling(r, pos, span)

    def keep_tensor_spelling(self, r: Any, pos: Any, span: Span, in_list: int | None = None) -> Any:
        """``r`` (the call built) marked with the arguments written as a bare tensor name
        (``scratch``, not ``scratch.data``): the same IR as the Python frontend builds.
        ``in_list``: the arguments are the list given as that argument (``T.Call(f, [A, i])``)."""
        if not self.bare_tensors:  # no tensor written by its name since: nothing to keep
            return r
        if type(r) is Call and any(a is v for a in pos for v in self.bare_tensors):
            where = self.bare_tensor_args(span, pos, in_list)
            bare = [pos[i] for i in where]
            tensors = _bare_in_call(r.args, pos, where)
            if tensors:
                r = r.replace(tensor_args=tensors)
            for v in bare:  # the names this call consumed (an outer call's may still be pending)
                k = next((i for i, x in enumerate(self.bare_tensors) if x is v), None)
                if k is not None:
                    del self.bare_tensors[k]
        return r

    def bare_tensor_args(self, span: Span, pos: Any, in_list: int | None = None) -> Any:
        """The positions of ``pos`` written as a bare tensor name (``scratch``), found by
        parsing (never running) the call's own source text; ``()`` when that text is not one
        Python expression. (An alias may put the argument elsewhere in the op's call: the
        caller finds it there by identity.)"""
        lines = self.text.splitlines()[span.line - 1 : span.end_line]
        if not lines:
            return ()
        if len(lines) == 1:
            src = lines[0][span.col - 1 : span.end_col - 1]
        else:
            src = "\n".join([lines[0][span.col - 1 :], *lines[1:-1], lines[-1][: span.end_col - 1]])
        try:
            node = ast.parse(src.strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            # nested past what Python's parser takes (a call holding hundreds of nested calls):
            # the argument texts by a flat bracket scan instead
            return self._bare_by_scan(src.strip(), pos, in_list)
        if not isinstance(node, ast.Call):
            return ()
        items: list = node.args
        if in_list is not None:
            lst = node.args[in_list] if in_list < len(node.args) else None
            if not isinstance(lst, ast.List):
                return ()
            items = lst.elts
        names = [a.id if isinstance(a, ast.Name) else None for a in items]
        return self._bare_positions(names, pos)

    def _bare_positions(self, names: Any, pos: Any) -> Any:
        out = []
        for i, n in enumerate(names[: len(pos)]):
            if n is not None:
                b = self.b.lookup(n)
                if type(b) is Buffer and b.data is pos[i]:
                    out.append(i)
        return tuple(out)

    def _bare_by_scan(self, src: str, pos: Any, in_list: int | None) -> Any:
        """``bare_tensor_args`` for a call too deeply nested for ``ast.parse``: the top-level
        arguments of ``f(...)`` split at depth-1 commas (brackets and string literals tracked)."""
        args = _top_level_args(src)
        if args is None:
            return ()
        if in_list is not None:
            if in_list >= len(args) or not (args[in_list].startswith("[") and args[in_list].endswith("]")):
                return ()
            args = _top_level_args("f(" + args[in_list][1:-1] + ")") or []
        return self._bare_positions([a if a.isidentifier() else None for a in args], pos)


def _bare_in_call(args: Any, pos: Any, where: Any) -> tuple:
    """The positions of the call's ``args`` that hold the arguments written at ``pos[where]``
    as a bare tensor name. A pointer can be passed both ways in one call (``f(buf, buf_ptr)``
    with ``buf``'s data ``buf_ptr``): its k-th occurrence in ``args`` is its k-th in ``pos``
    (an alias may move arguments but keeps one pointer's occurrences in order), so only those
    written bare are marked."""
    out = []
    for v in {id(pos[i]): pos[i] for i in where}.values():
        in_pos = [i for i, a in enumerate(pos) if a is v]
        in_args = [j for j, a in enumerate(args) if a is v]
        if len(in_pos) != len(in_args):  # the op folded or repeated it: mark every occurrence
            out.extend(in_args)
            continue
        out.extend(j for i, j in zip(in_pos, in_args) if i in where)
    return tuple(sorted(out))


def _top_level_args(src: str) -> list[str] | None:
    """The argument texts of the call ``src`` (``f(a, g(b, c), "x,y")`` -> ``a``, ``g(b, c)``,
    ``"x,y"``), by one flat scan; None when ``src`` is not one call."""
    start = src.find("(")
    if start < 0 or not src.endswith(")"):
        return None
    out: list[str] = []
    depth, quote, cur, esc = 0, "", start + 1, False
    for k in range(start, len(src)):
        ch = src[k]
        if quote:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True  # the next character is escaped ("a\\" ends at its second quote)
            elif ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                if k != len(src) - 1:
                    return None
                last = src[cur:k].strip()
                if last:
                    out.append(last)
        elif ch == "," and depth == 1:
            out.append(src[cur:k].strip())
            cur = k + 1
    return out
