"""The text builder's rules for statements, simple and compound.

A mixin of ``TextBuilder`` (``_transform.py``), split out by node family (issue #30);
its helpers (``err``, ``emit``, ``enter``, ``close``, ``head_span``, ...) and the
per-parse state are TextBuilder's.
"""

from __future__ import annotations

from tirx.grammar._fast import Tok
from tirx.grammar._values import _LET, _desc, _Dynamic, _LetAnnot, _Spec
from tirx.ir.buffer import Buffer
from tirx.ir.expr import BufferLoad, Call, IntImm, PrimExpr, Var, const
from tirx.ir.span import Span
from tirx.ir.stmt import REGION_KINDS as _REGION_KINDS
from tirx.ir.types import PointerType, PrimType
from tirx.surface.cells import Cell, cell_init, has_effect, new_scalar
from tirx.surface.forms import slice_ramp

_ZERO = IntImm(0)


class StmtMixin:
    """The statement rule callbacks (``*_head`` opens a frame, the block rule closes it)."""

    # ------------------------------------------------------------- simple statements
    def suite(self, c):
        return None

    def stmts(self, c):
        return None

    def store_subs(self, c):
        return c

    def slice_sub(self, c):
        colons = [x for x in c if getattr(x, "type", None) == "COLON"]  # lark's or the fast lexer's token
        parts = [x for x in c if getattr(x, "type", None) != "COLON"]
        colon = colons[0]
        span = self.tsp(colon)
        for x in parts:
            if not isinstance(x, PrimExpr) and type(x) is not int:
                raise self.err(f"a slice bound must be an integer expression, got {_desc(x)}", span)
        try:
            return slice_ramp(*parts)
        except (TypeError, ValueError) as e:
            raise self.err(str(e), span, e) from e

    def store(self, c):
        tok, idx, val, nl = c
        span = self.stmt_span(tok, nl)
        buf = self.buffer(tok)
        ind = self.indices(buf, idx, span)
        if not isinstance(val, PrimExpr) and type(val) not in (int, float, bool):
            raise self.err(f"cannot store {_desc(val)} into buffer {buf.name}", span)
        self.emit(span, self.b.store, buf, ind, val)
        return None

    def bind(self, c):
        tok, ann, val, nl = c
        span = self.stmt_span(tok, nl)
        name = self.check_new_name(tok)
        if isinstance(ann, _LetAnnot):
            ty = ann.ty
        elif ann is _LET:  # x: T.let = v: a binding of the value's own type
            ty = None
            if type(val) in (int, float, bool):
                val = self.expr(val, span)
        else:
            ty = self.as_type(ann, span, "a T.let[...] annotation")
            if isinstance(ty, PrimType):  # x: T.int32 = v: a mutable local, as the frontend's
                init = self.emit(span, cell_init, self.operand(val, span), ty)
                self.b.define(name, self.emit(span, new_scalar, self.b, name, "local", ty, init))
                return None
        if type(val) is _Spec and val.kind == "scalar":  # part: T.let = T.local_scalar(...): the cell
            self.b.define(name, self.emit(span, new_scalar, self.b, name, *val.args))
            return None
        if not isinstance(val, PrimExpr):
            if type(val) in (int, float, bool) and isinstance(ty, PrimType):
                try:
                    val = const(val, ty)
                except (TypeError, ValueError) as e:
                    raise self.err(str(e), span, e) from e
            else:
                raise self.err(f"cannot bind '{name}' to {_desc(val)}", span)
        v = self.emit(span, self.b.bind, name, val, ty)
        self.b.define(name, v)
        return None

    def assign(self, c):
        tok, val, nl = c
        self.assign_one(tok, val, self.stmt_span(tok, nl))
        return None

    def unpack(self, c):
        """``a, b = x, y`` (the frontend's syntax): the values first, then each name in order."""
        nl = c[-1]
        n = 0
        while type(c[n]) is Tok and c[n].type == "NAME":  # the targets; the values follow
            n += 1
        toks, vals = c[:n], list(c[n:-1])
        span = self.stmt_span(toks[0], nl)
        if len(vals) == 1 and type(vals[0]) is tuple:
            vals = list(vals[0])
        if len(vals) != len(toks):
            raise self.err(f"cannot unpack {len(vals)} value(s) into {len(toks)} names", span)
        for t, v in zip(toks, vals):
            self.assign_one(t, v, span)
        return None

    def assign_one(self, tok, val, span):
        b = self.b
        if self.reassign(tok, val, span):
            return
        name = self.check_new_name(tok)
        if type(val) is _Spec and val.kind in _REGION_KINDS and _REGION_KINDS[val.kind][1]:
            # tx = T.launch_thread(...): a bare region binding its var, the rest of the block inside
            b.define(name, self.enter_bare(self.region_frame(val, name), span))
            return
        if type(val) is _Spec and val.kind == "scalar":
            b.define(name, self.emit(span, new_scalar, b, name, *val.args))
            return
        if type(val) is _Spec:
            if val.kind != "bind":
                raise self.err(f"{_desc(val)} cannot be assigned to a name", span)
            buf = self.emit(span, val.args[0].emit, b, name)
            b.define(name, buf)
            return
        if type(val) is _Dynamic:  # a fresh variable in scope (TIRx prints a T.Let's binder so)
            b.define(name, val.var)
            return
        if type(val) is Buffer:  # B = A.view(4, 16): the view declared by the call, by this name too
            b.define(name, val)
            return
        if name in self.cur_mutable and (isinstance(val, PrimExpr) or type(val) in (int, float, bool)):
            # re-assigned in a nested block and read where that shows (the frontend's rule): a
            # mutable local from its first assignment
            e = self.expr(val, span)
            b.define(name, self.emit(span, new_scalar, b, name, "local", e.ty, e))
            return
        if type(val) is Var and not isinstance(val.ty, PointerType):
            b.define(name, val)  # alias = bx: the same var (no Bind), as the frontend and TIRx name it
            return
        if isinstance(val, PrimExpr) or type(val) in (int, float, bool):
            v = self.emit(span, b.bind, name, val, None)
            b.define(name, v)
            return
        raise self.err(f"cannot assign {_desc(val)} to '{name}'", span)

    def reassign(self, tok, val, span):
        """``x = v`` where ``x`` is already a name (the frontend's syntax): into a mutable local
        (``x: T.int32 = ...``, ``T.local_scalar``, or a name the frontend's rule makes one) a
        store; a scalar bound in this same block a new binding (the frontend's straight-line
        rebinding, ``x_1``). For a name bound in an enclosing block the frontend's rule decides
        from reads later in the function, which a text read once in order cannot see: the first
        such re-assignment raises ``NeedsMutableAnalysis`` and the loader reads the text again
        with the rule computed (``tirx.surface.mutable``); then it is a new binding here."""
        name = tok.value
        cur = self.b.lookup(name)
        if cur is None:
            return False
        if type(cur) is Cell:
            self.operand(val, span)
            self.emit(span, self.b.store, cur.buffer, (_ZERO,), val)
            return True
        if type(cur) is Var and not isinstance(cur.ty, PointerType) and self.b.lookup_local(name) is cur:
            if not (isinstance(val, PrimExpr) or type(val) in (int, float, bool)):
                raise self.err(f"cannot assign {_desc(val)} to '{name}'", span)
            self.b.define(name, self.emit(span, self.b.bind, name, val, None))
            return True
        if type(cur) is Var and not isinstance(cur.ty, PointerType):
            if self.mutable_by_func is None:  # the frontend's rule is needed: read the text again
                raise NeedsMutableAnalysis(
                    self.err(
                        f"'{name}' is bound outside this block: the text has no implicit mutable local "
                        f"here (Python cannot parse this text to find them); declare it as one before "
                        f"the block ({name}: T.<dtype> = ...), or bind a new name",
                        span,
                    )
                )
            if not (isinstance(val, PrimExpr) or type(val) in (int, float, bool)):
                raise self.err(f"cannot assign {_desc(val)} to '{name}'", span)
            # not a mutable local by the frontend's rule: a new binding for the rest of this block
            self.b.define(name, self.emit(span, self.b.bind, name, val, None))
            return True
        return False

    def aug_assign(self, c):
        tok, op, val, nl = c
        span = self.stmt_span(tok, nl)
        cur = self.b.lookup(tok.value)
        if type(cur) is Cell:
            old = cur.load(self.tsp(tok))
        elif type(cur) is Var and not isinstance(cur.ty, PointerType):
            old = cur
        elif cur is None:
            raise self.err(f"undefined name '{tok.value}'", self.tsp(tok))
        else:
            raise self.err(f"cannot update {_desc(cur)} with '{op.value}'", span)
        self.reassign(tok, self.bin(_plain(op), old, val), span)
        return None

    def aug_store(self, c):
        tok, idx, op, val, nl = c
        span = self.stmt_span(tok, nl)
        buf = self.buffer(tok)
        ind = self.indices(buf, idx, span)
        # A[atomic_add(c, 1)] += v evaluates its index once, as the frontend (Python) does
        ind = tuple(self.emit(span, self.b.bind, "idx", i, None) if has_effect(i) else i for i in ind)
        new = self.bin(_plain(op), BufferLoad(buf, ind, span=self.tsp(tok)), val)
        self.emit(span, self.b.store, buf, ind, new)
        return None

    def docstring(self, c):
        return None  # a string standing as a statement (a docstring): dropped, as by Python

    def exprstmt(self, c):
        val, nl = c
        span = getattr(val, "span", None) or self.tsp(nl)
        span = Span(self.src, span.line, span.col, nl.line, nl.column)
        # a class body holds only T.module_attrs (the grammar puts exprstmt there before funcdef)
        in_func = not self.class_body
        is_mattrs = type(val) is _Spec and val.kind == "stmt" and val.args[0].form == "module_attrs"
        if not in_func and not is_mattrs:  # a statement in a class body, before its functions
            raise self.err(
                "only T.module_attrs({...}) may stand in a module's class body besides functions", span
            )
        if in_func and is_mattrs:
            raise self.err("T.module_attrs belongs in the class body of a @T.ir_module", span)
        if type(val) is _Spec:
            if val.kind == "stmt":
                self.emit(span, val.args[0].emit, self.b)
            elif val.kind in ("device_entry", "attr") or val.kind in _REGION_KINDS:
                self.enter_bare(self.region_frame(val, None), span)
            else:
                raise self.err(f"{_desc(val)} cannot be used as a statement", span)
            return None
        if isinstance(val, Call):
            self.emit(span, self.b.evaluate, val)
            return None
        raise self.err(f"{_desc(val)} cannot be used as a statement (wrap it in T.evaluate(...))", span)

    def pass_stmt(self, c):
        return None

    def break_stmt(self, c):
        span = self.stmt_span(c[0], c[1])
        self.emit(span, self.b.break_)
        return None

    def continue_stmt(self, c):
        span = self.stmt_span(c[0], c[1])
        self.emit(span, self.b.continue_)
        return None

    def return_stmt(self, c):
        span = self.stmt_span(c[0], c[-1])
        val = None
        if len(c) == 3:
            val = self.expr(c[1], span, "a return value")
        self.emit(span, self.b.return_, val)
        return None

    def assert_stmt(self, c):
        span = self.stmt_span(c[0], c[-1])
        cond = self.cond(c[1], span, "assert")
        kind, msg = "RuntimeError", ("",)  # no message: TIRx's one empty part, as the frontend's
        if len(c) == 4:
            m = c[2]
            if type(m) is str:
                msg = (m,)
            elif (
                type(m) is tuple
                and len(m) == 2
                and type(m[0]) is str
                and type(m[1]) in (list, tuple)
                and all(type(x) is str for x in m[1])
            ):
                kind, msg = m[0], tuple(m[1])
            else:
                raise self.err('assert message must be ("Kind", ["message", ...]) or a string', span)
        self.emit(span, self.b.assert_, cond, kind, msg)
        return None

    # ------------------------------------------------------------- compound statements
    def for_head(self, c):
        for_tok, name_tok, spec = c
        if type(spec) is _Spec and spec.kind == "loops":
            raise self.err(
                f"{len(spec.args)} nested loops take {len(spec.args)} names: for i, j, ... in", spec.span
            )
        if type(spec) is not _Spec or spec.kind != "loop":
            raise self.err(
                f"a for loop iterates over range(...), T.serial/unroll/vectorized/parallel/thread_binding(...), got {_desc(spec)}",
                self.tsp(for_tok),
            )
        sp = spec.span
        span = Span(self.src, for_tok.line, for_tok.column, sp.end_line, sp.end_col)
        name = self.check_new_name(name_tok)
        start, extent, kind, step, ann, thread = spec.args
        v = self.enter(self.b.for_(name, start, extent, kind, step, ann, thread), span)
        self.b.define(name, v)
        return None

    def loop_targets(self, c):
        return [t for t in c if getattr(t, "type", None) == "NAME"]

    def for_heads(self, c):
        """``for i, j in T.grid(m, n):``: nested loops, one per name; the inner ones close with
        the body's block (entered as bare frames)."""
        for_tok, names, spec = c
        if type(spec) is _Spec and spec.kind == "loop":
            heads = (spec.args,)
        elif type(spec) is _Spec and spec.kind == "loops":
            heads = spec.args
        else:
            raise self.err(f"a for loop with several names iterates over T.grid(...), got {_desc(spec)}",
                           self.tsp(for_tok))  # fmt: skip
        if len(heads) != len(names):
            raise self.err(f"{len(names)} loop names for {len(heads)} loops", self.tsp(for_tok))
        sp = spec.span
        span = Span(self.src, for_tok.line, for_tok.column, sp.end_line, sp.end_col)
        for k, (tok, head) in enumerate(zip(names, heads)):
            name = self.check_new_name(tok)
            start, extent, kind, step, ann, thread = head
            cm = self.b.for_(name, start, extent, kind, step, ann, thread)
            v = self.enter(cm, span) if k == 0 else self.enter_bare(cm, span)
            self.b.define(name, v)
        return None

    def for_stmt(self, c):
        self.close()
        return None

    def while_head(self, c):
        tok, v = c
        span = self.head_span(tok, v)
        cond = self.cond(v, span, "while")
        self.enter(self.b.while_(cond), span)
        return None

    while_stmt = for_stmt

    def with_head(self, c):
        tok, spec = c[0], c[1]
        name_tok = c[3] if len(c) == 4 else None  # with ... as NAME
        span = self.tsp(tok)
        if (
            type(spec) is _Spec and spec.kind in _REGION_KINDS
        ):  # TIRx's regions (tirx/surface/region_forms.py)
            span = Span(self.src, tok.line, tok.column, spec.span.end_line, spec.span.end_col)
            binds = _REGION_KINDS[spec.kind][1]
            if binds != (name_tok is not None):
                what = "needs" if binds else "binds no value: drop"
                raise self.err(f"with T.{spec.kind}(...) {what} 'as <name>'", span)
            name = self.check_new_name(name_tok) if name_tok is not None else None
            v = self.enter(self.region_frame(spec, name), span)
            if name is not None:
                self.b.define(name, v)
            return None
        if name_tok is not None:
            raise self.err("this with-statement binds no value", self.tsp(name_tok))
        if type(spec) is not _Spec or spec.kind not in ("device_entry", "attr"):
            raise self.err(f"with takes T.device_entry(...) or T.attr(...), got {_desc(spec)}", span)
        span = Span(self.src, tok.line, tok.column, spec.span.end_line, spec.span.end_col)
        self.enter(self.region_frame(spec, None), span)
        return None

    def region_frame(self, spec, name):
        """The builder frame of a region header (``with`` or bare): a device entry, an attr, or
        one of TIRx's regions (tirx/surface/region_forms.py)."""
        if spec.kind == "device_entry":
            return self.b.device_entry(*spec.args)
        if spec.kind == "attr":
            return self.b.attr(*spec.args)
        kind, args = spec.args
        return self.b.region(kind, args, name)

    with_stmt = for_stmt

    def if_head(self, c):
        tok, v = c
        span = self.head_span(tok, v)
        cond = self.cond(v, span, "if")
        self.chains.append([])
        self.enter(self.b.if_(cond), span)
        return None

    def if_block(self, c):
        self.close()
        return None

    elif_block = if_block
    else_block = if_block

    def elif_head(self, c):
        tok, v = c
        span = self.head_span(tok, v)
        cond = self.cond(v, span, "elif")
        self.enter(self.b.else_(), span)
        self.chains[-1].append(self.open.pop())
        self.enter(self.b.if_(cond), span)
        return None

    def else_head(self, c):
        self.enter(self.b.else_(), self.tsp(c[0]))
        return None

    def if_stmt(self, c):
        chain = self.chains.pop()
        while chain:
            self.open.append(chain.pop())
            self.close()
        return None


def _plain(op):
    """The operator token of ``+=`` as ``+`` (same position), for the binary-operator rules."""
    return Tok(op.type, op.value[:-1], op.line, op.column, op.end_line, op.end_column - 1)


class NeedsMutableAnalysis(Exception):
    """Raised while reading a text that re-assigns a name bound in an enclosing block before
    the frontend's mutable-local rule was computed for it; ``error`` is the diagnostic to give
    when Python cannot parse the text to compute it."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error
