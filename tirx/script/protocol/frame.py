"""The frames of TIRx's builder API (``T.frame``): thin context managers over the IRBuilder.

TIRx builds IR from Python through frame objects (``with T.function_():``, ``with
T.if_(c):``, ...). Here each frame only opens the matching frame of tirx's one
:class:`~tirx.surface.builder.IRBuilder` (``function``, ``if_``/``else_``, ``for_``,
``while_``, ``module``); the builder makes every node, exactly as for ``@T.function`` code
and ``.tirx`` text, so a program built through these frames is the same IR.
"""

from __future__ import annotations

import threading
from typing import Any

from tirx.surface.builder import IRBuilder

from ...ir import GlobalVar, IfThenElse, PrimExpr, convert
from ...ir.function import Function, Module
from ...ir.span import Span
from ..parser import Cell, LoopSpec, lit

__all__ = [
    "AlreadyEmitted",
    "ElseFrame",
    "ForFrame",
    "FunctionFrame",
    "IRModuleFrame",
    "IfFrame",
    "RegionFrame",
    "StmtFrame",
    "ThenFrame",
    "WhileFrame",
]

_tls = threading.local()


def _stack() -> list:
    s = getattr(_tls, "stack", None)
    if s is None:
        s = _tls.stack = []
    return s


def innermost() -> StmtFrame | None:
    """The innermost open frame of this API in the active builder (where a concise frame is
    closed); frames left open by an abandoned builder are dropped."""
    s = _stack()
    b = IRBuilder.current() if IRBuilder.is_active() else None
    while s and s[-1].builder is not b:
        s.pop()
    return s[-1] if s else None


class AlreadyEmitted:
    """A receipt for a statement (or value) the builder already emitted: ``emit_`` of it
    emits nothing, so a builder call's result can be passed on without emitting it twice."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __repr__(self) -> str:
        return f"AlreadyEmitted({self.value!r})"


def check_loc(loc: Any, what: str = "loc") -> Span | None:
    """``loc=``: a :class:`tirx.ir.span.Span` (or None); the statements built get it."""
    if loc is None or isinstance(loc, Span) or hasattr(loc, "innermost"):
        return loc
    raise TypeError(f"{what} must be a tirx Span or None, got {type(loc).__name__}")


class StmtFrame:
    """Base of the frames: opens one builder frame on entry, closes it on exit.

    A frame entered through ``emit_`` (the bare-statement form, ``T.emit_(T.device_entry(...))``)
    is closed when the frame around it ends ("concise" frames)."""

    _cm: Any = None

    def __init__(self, loc: Any = None):
        self.loc = check_loc(loc)
        self.concise: list = []  # context managers opened by emit_ inside, closed at our exit
        self.entered = False

    # subclasses: return the builder context manager to open
    def _open(self, b: IRBuilder) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _value(self, entered: Any) -> Any:
        return self

    def __enter__(self) -> Any:
        if self.entered:
            raise ValueError(f"{type(self).__name__} was entered already (a frame is entered once)")
        b = IRBuilder.current()
        self.builder = b
        if self.loc is not None:
            b.spans.append(self.loc)
        try:
            cm = self._open(b)
            entered = cm.__enter__()
        finally:
            if self.loc is not None:
                b.spans.pop()
        self._cm = cm
        self.entered = True
        _stack().append(self)
        return self._value(entered)

    def __exit__(self, *exc: Any) -> Any:
        while self.concise:  # the frames emitted as statements inside: innermost first
            c = self.concise.pop()
            c.__exit__(*exc) if exc[0] is not None else c.__exit__(None, None, None)
        s = _stack()
        if s and s[-1] is self:
            s.pop()
        r = self._cm.__exit__(*exc)
        self._done(exc[0] is None)
        return r

    def _done(self, ok: bool) -> None:
        pass


class FunctionFrame(StmtFrame):
    """``with T.function_() as fn:``; ``T.func_name_``, ``T.arg_``, ``T.func_ret_type_`` inside.

    After the frame ends, ``fn.result`` is the Function (also ``IRBuilder.get()`` outside a
    module)."""

    def __init__(self, *, private: bool = False, loc: Any = None):
        super().__init__(loc)
        if not isinstance(private, bool):
            raise TypeError(f"function_: private must be a bool, got {private!r}")
        self.private = private
        self.result: Function | Module | None = None

    def _open(self, b: IRBuilder) -> Any:
        return b.function("main", private=self.private)

    def _done(self, ok: bool) -> None:
        if ok:
            b = self.builder
            self.result = b.module_funcs[-1] if b.module_funcs is not None else b.result


class IfFrame(StmtFrame):
    """``with T.if_(cond):`` holding ``with T.then_():`` and optionally ``with T.else_():``."""

    def __init__(self, condition: Any, loc: Any = None):
        super().__init__(loc)
        if type(condition) is Cell:
            condition = condition.load()
        self.condition = condition
        self.then_done = False
        self.else_done = False
        self.node: IfThenElse | None = None

    def _open(self, b: IRBuilder) -> Any:
        return b.block()

    def _value(self, fr: Any) -> Any:
        self._fr = fr
        return self

    def __exit__(self, *exc: Any) -> Any:
        r = super().__exit__(*exc)
        if exc[0] is not None:
            return r
        stmts = self._fr.stmts
        if not self.then_done:
            raise ValueError("if_: the frame needs a then_() branch (statements go in then_/else_)")
        if len(stmts) != 1 or not isinstance(stmts[0], IfThenElse):
            raise ValueError("if_: statements inside an if_ frame must be in its then_() or else_() branch")
        self.node = self.builder.emit(stmts[0])
        return r


def _parent_if(what: str) -> IfFrame:
    f = innermost()
    if type(f) is not IfFrame:
        raise ValueError(f"{what} must be directly inside a T.if_(...) frame")
    return f


class ThenFrame(StmtFrame):
    """The true branch of the enclosing ``if_``."""

    def _open(self, b: IRBuilder) -> Any:
        p = _parent_if("then_()")
        if p.then_done or p.else_done or p._fr.stmts:
            raise ValueError("then_(): an if_ frame has one then_ branch, before its else_")
        p.then_done = True
        cond = p.condition
        if not isinstance(cond, PrimExpr):
            cond = convert(bool(cond))
        return b.if_(cond)


class ElseFrame(StmtFrame):
    """The false branch of the enclosing ``if_`` (after its ``then_``)."""

    def _open(self, b: IRBuilder) -> Any:
        p = _parent_if("else_()")
        if not p.then_done:
            raise ValueError("else_(): the else branch must follow the then_() branch")
        if p.else_done:
            raise ValueError("else_(): an if_ frame has one else_ branch")
        p.else_done = True
        return b.else_()


class WhileFrame(StmtFrame):
    """``with T.while_(cond):`` (the body is built once; the loop runs in the IR)."""

    def __init__(self, condition: Any, loc: Any = None):
        super().__init__(loc)
        if type(condition) is Cell:
            condition = condition.load()
        if not isinstance(condition, PrimExpr):
            condition = convert(bool(condition))
        if not (condition.ty.is_bool if hasattr(condition.ty, "is_bool") else False):
            raise TypeError(f"while_: the condition must be a bool expression, got dtype {condition.ty}")
        self.condition = condition

    def _open(self, b: IRBuilder) -> Any:
        return b.while_(self.condition)


class _Nest:
    """Nested builder loop frames for a LoopSpec (one For per loop, outermost first)."""

    def __init__(self, b: IRBuilder, spec: LoopSpec, names: list, span: Any):
        self.b, self.spec, self.names, self.span = b, spec, names, span
        self.cms: list = []

    def __enter__(self) -> list:
        vs = []
        try:
            for k, (start, extent, kind, step, ann, thread) in enumerate(self.spec.loops):
                # literal bounds as the frontend types them (tirx/script/parser_stmt.py visit_For)
                if type(extent) is int:
                    extent = lit(extent, start if isinstance(start, PrimExpr) else None, self.span)
                if type(start) is int:
                    start = lit(start, extent, self.span)
                cm = self.b.for_(self.names[k], start, extent, kind, step, ann, thread)
                vs.append(cm.__enter__())
                self.cms.append(cm)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return vs

    def __exit__(self, *exc: Any) -> Any:
        while self.cms:
            cm = self.cms.pop()
            cm.__exit__(*exc) if exc[0] is not None else cm.__exit__(None, None, None)


def loop_names(spec: LoopSpec, names: Any) -> list[str]:
    """One name per loop: ``names`` (a str, or a sequence with at most one ``*group``)."""
    n = len(spec.loops)
    if names is None:
        if spec.names:
            return list(spec.names)
        return ["i"] if n == 1 else [f"i{k}" for k in range(n)]
    if isinstance(names, str):
        names = [names] if n == 1 else [f"{names}_{k}" for k in range(n)]
    names = list(names)
    if not all(isinstance(x, str) for x in names):
        raise TypeError(f"for_: names must be strings, got {names!r}")
    stars = [i for i, x in enumerate(names) if x.startswith("*")]
    if len(stars) > 1:
        raise ValueError("for_: names may hold at most one *starred group")
    if stars:
        k = stars[0]
        if n < len(names) - 1:
            raise ValueError(f"for_: {len(names)} names for {n} loops")
        base = names[k][1:]
        names = names[:k] + [f"{base}_{j}" for j in range(n - len(names) + 1)] + names[k + 1 :]
    if len(names) != n:
        raise ValueError(f"for_: {len(names)} names for {n} loops")
    for x in names:
        if not x.isidentifier():
            raise ValueError(f"for_: a loop name must be an identifier, got {x!r}")
    return names


class ForFrame(StmtFrame):
    """A loop nest (``range_``, ``T.serial``, ``T.grid``, ...): entering gives the loop var (one
    loop) or the tuple of vars (``frame.vars`` always holds the tuple)."""

    def __init__(self, spec: LoopSpec, names: Any = None, loc: Any = None):
        super().__init__(loc)
        if type(spec) is not LoopSpec:
            raise TypeError(f"for_: expected a loop specification, got {type(spec).__name__}")
        self.spec = spec
        self.names = loop_names(spec, names)
        self.vars: tuple = ()

    def _open(self, b: IRBuilder) -> Any:
        return _Nest(b, self.spec, self.names, self.loc or b.span)

    def _value(self, vs: Any) -> Any:
        self.vars = tuple(vs)
        if self.spec.bind is not None:
            return self.spec.bind(self.vars)
        return self.vars[0] if len(self.vars) == 1 else self.vars


class IRModuleFrame(StmtFrame):
    """A module frame: functions built inside form one Module (``m.result`` /
    ``IRBuilder.get()`` after the frame ends).

    TIRx opens it with ``T.ir_builder.ir_module()`` (``with ... as m:``); tirx also takes
    ``T.IRModuleFrame("Mod", attrs)``. As in TIRx, ``m.global_vars`` maps each function's name
    to its GlobalVar, ``m.functions`` each GlobalVar to its Function, ``m.attrs`` is the
    module's attrs, ``m.global_infos`` is empty (tirx modules hold none) and ``m.<name>`` is
    the GlobalVar of function ``name`` (for ``T.call_global_var_(m.name, [...])``)."""

    def __init__(self, name: str = "Module", attrs: Any = None, *, loc: Any = None):
        super().__init__(loc)
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"IRModuleFrame: name must be an identifier, got {name!r}")
        self.name = name
        self.init_attrs = attrs
        self.result: Module | None = None
        self._gvs: dict = {}  # name -> GlobalVar, one object per name (stable identity)

    def _open(self, b: IRBuilder) -> Any:
        if b.module_funcs is not None:
            raise ValueError("IRModuleFrame: modules do not nest")
        return b.module(self.name, self.init_attrs)

    def _done(self, ok: bool) -> None:
        if ok:
            r = self.builder.result
            assert isinstance(r, Module)  # set by IRBuilder.module when its block ends normally
            self.result = r

    def _funcs(self) -> list:
        if self.result is not None:
            return list(self.result.functions)
        b = self.__dict__.get("builder")
        if b is None or b.module_funcs is None:
            return []
        return list(b.module_funcs)

    def _gv(self, name: str) -> GlobalVar:
        gv = self._gvs.get(name)
        if gv is None:
            gv = self._gvs[name] = GlobalVar(name)
        return gv

    @property
    def global_vars(self) -> dict:
        """Each function's name -> its GlobalVar (the functions built or declared so far)."""
        return {f.name: self._gv(f.name) for f in self._funcs()}

    @property
    def functions(self) -> dict:
        """Each function's GlobalVar -> the Function."""
        return {self._gv(f.name): f for f in self._funcs()}

    @property
    def attrs(self) -> dict:
        """The module's attributes (``T.module_attrs`` / ``T.module_set_attr`` set them)."""
        if self.result is not None:
            return dict(self.result.attrs.items())
        b = self.__dict__.get("builder")
        if b is not None and b.module_attrs is not None:
            return dict(b.module_attrs)
        return dict(self.init_attrs or {})

    @property
    def global_infos(self) -> dict:
        """TIRx's global infos: a tirx Module holds none."""
        return {}

    def __getattr__(self, name: str) -> GlobalVar:
        if name.startswith("_") or name in ("builder", "name", "init_attrs", "result"):
            raise AttributeError(name)
        if any(f.name == name for f in self._funcs()):
            return self._gv(name)
        raise AttributeError(f"IRModuleFrame has no attribute {name!r} (no function {name!r} in the module)")


def unwrap(x: Any) -> Any:
    """A script value as an IR value: a mutable scalar reads its element."""
    if type(x) is Cell:
        return x.load()
    if isinstance(x, AlreadyEmitted):
        return x.value
    return x


class RegionFrame(StmtFrame):
    """TIRx's region statements (``with T.launch_thread("threadIdx.x", n) as v:``, ...): a
    ``RegionStmt`` built by ``IRBuilder.region``. Entering gives the bound variable, or ``()``
    for a region that binds none. In ``@T.function`` code the variable is named after the
    ``as`` target; here it is ``var_name`` (default ``v``, as TIRx names it)."""

    #: written as a statement in ``@T.function`` code, the rest of the block goes inside, as TIRx
    #: enters a frame statement (the parser reads this mark: it cannot import this module)
    bare_region = True

    def __init__(self, kind: str, args: tuple, var: Any = None, loc: Any = None):
        super().__init__(loc)
        self.kind = kind
        self.args = args
        self.var = var  # the Var to bind (body_params=), or None: a fresh one named var_name
        self.var_name: str | None = None

    def _open(self, b: IRBuilder) -> Any:
        return b.region(self.kind, self.args, self.var if self.var is not None else self.var_name)

    def _value(self, v: Any) -> Any:
        return () if v is None else v
