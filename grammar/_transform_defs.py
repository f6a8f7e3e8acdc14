"""The text builder's rules for the file, the module class and its functions.

A mixin of ``TextBuilder`` (``_transform.py``), split out by node family (issue #30);
its helpers (``err``, ``tsp``, ``enter``, ...) and the per-parse state are TextBuilder's.
"""

from __future__ import annotations

import keyword

from tirx.grammar._values import _LET, _desc, _Dynamic, _LetAnnot, _Ret
from tirx.ir.expr import Var
from tirx.ir.node import Attrs
from tirx.ir.span import Span
from tirx.ir.types import PrimType, int32

_IMPORTS = {
    "__future__": {"annotations"},
    "tirx.script": {"tirx", "ir"},
    "tvm_tirx.script": {"tirx", "ir"},
    "tvm.script": {"tirx", "ir"},
}


class DefsMixin:
    """The ``file / module / function`` rule callbacks."""

    def start(self, c):
        try:
            return self.b.get()
        except RuntimeError as e:
            raise self.err("the text defines no function", None, e) from e

    def dyn_decl(self, c):
        tok, val, nl = c
        span = self.stmt_span(tok, nl)
        if type(val) is not _Dynamic:
            raise self.err(f"only T.dynamic(...) may be assigned before the function, got {_desc(val)}", span)
        if tok.value in self.top_vars:
            raise self.err(f"'{tok.value}' is declared twice", self.tsp(tok))
        self.top_vars[tok.value] = val.var
        return None

    def header(self, c):
        mod = c[1].value
        names = _IMPORTS.get(mod)
        if names is None or c[3].value not in names:
            raise self.err(f"unsupported import: from {mod} import {c[3].value}", self.tsp(c[0]))
        return None

    def decorator(self, c):
        at, nm = c[0], c[1]
        args = c[2] if len(c) == 4 else None
        return (nm.value, args, at, nm)

    def decorators(self, c):
        return c

    def class_open(self, c):
        decos, name_tok = c[0], c[2]
        mattrs = None
        for name, args, _at, nm in decos:
            if name not in ("T.ir_module", "I.ir_module"):
                raise self.err(f"unsupported class decorator @{name}", self.tsp(nm))
            if args:
                pos, kw = self.split_args(args, self.tsp(nm), "@" + name)
                self.nargs("@" + name, pos, kw, self.tsp(nm), 0, 0, ("attrs",))
                mattrs = kw.get("attrs")
                if not isinstance(mattrs, (dict, Attrs)):
                    raise self.err(f"@{name}: attrs= must be a dict", self.tsp(nm))
        if name_tok.value == "T":  # T.<name> would name an op, not a function of the module
            raise self.err(
                "a module cannot be named T (T.<name> names the script namespace)", self.tsp(name_tok)
            )
        if keyword.iskeyword(name_tok.value):  # None/True/False: the printer could not write it
            raise self.err(
                f"a module cannot be named {name_tok.value} (a Python keyword)", self.tsp(name_tok)
            )
        self.module_name = name_tok.value
        self.class_body = True
        self.enter(self.b.module(name_tok.value, mattrs), self.tsp(name_tok))
        return None

    def classdef(self, c):
        self.close()
        for name, span in self.gv_refs:
            if name not in self.module_fnames:
                raise self.err(f"module {self.module_name} has no function '{name}'", span)
        return None

    def func_open(self, c):
        self.class_body = False
        decos, def_tok, name_tok = c[0], c[1], c[2]
        self.cur_mutable = (self.mutable_by_func or {}).get(name_tok.value, frozenset())
        tparams = c[3] if len(c) > 3 else ()
        private = None
        persistent = False
        for name, args, at, nm in decos:
            if name not in ("T.function", "T.prim_func"):
                raise self.err(f"unsupported function decorator @{name}", self.tsp(nm))
            if private is not None:
                raise self.err("more than one function decorator", self.tsp(at))
            private = False
            if args:
                pos, kw = self.split_args(args, self.tsp(nm), "@" + name)
                self.nargs(
                    "@" + name, pos, kw, self.tsp(nm), 0, 0, ("private", "persistent", "check_well_formed")
                )
                p = kw.get("private", False)
                if type(p) is not bool:
                    raise self.err(f"@{name}: private= must be True or False", self.tsp(nm))
                private = p
                persistent = kw.get("persistent", False)
                if type(persistent) is not bool:
                    raise self.err(f"@{name}: persistent= must be True or False", self.tsp(nm))
        if private is None:
            raise self.err(f"function '{name_tok.value}' needs the @T.function decorator", self.tsp(def_tok))
        fname = name_tok.value
        self.standalone_fname = fname if self.module_name is None else None
        if self.module_name is not None:
            if fname in self.module_fnames:
                raise self.err(f"module {self.module_name} defines '{fname}' twice", self.tsp(name_tok))
            self.module_fnames.add(fname)
        span = Span(self.src, def_tok.line, def_tok.column, name_tok.end_line, name_tok.end_column)
        self.func_span = span
        self.enter(self.b.function(fname, private=private, persistent=persistent), span)
        for tok, ty in tparams:
            name = self.check_new_name(tok)
            sp = self.tsp(tok)
            t = int32 if ty is None else self.as_type(ty, sp, "a dtype")
            if not (isinstance(t, PrimType) and t.is_int and t.lanes == 1):
                raise self.err(f"shape variable '{name}' must have an integer dtype, got {t}", sp)
            self.b.define(name, Var(name, t, span=sp))
        return None

    def tparams(self, c):
        return c

    def tparam(self, c):
        return (c[0], c[1] if len(c) > 1 else None)

    def params(self, c):
        return None

    def param(self, c):
        tok, tyv = c
        sp = self.tsp(tok)
        name = self.check_new_name(tok)
        if isinstance(tyv, _LetAnnot) or tyv is _LET:
            raise self.err(f"parameter '{name}': T.let is for bindings, not parameters", sp)
        if type(tyv) is Var and any(v is tyv for v in self.top_vars.values()):
            # ``n: n`` after ``n = T.dynamic(...)`` (TIRx's spelling of a parameter that other
            # parameters' shapes use): the parameter is that variable
            self.emit(sp, self.b.param, name, tyv)
            return None
        ty = self.as_type(tyv, sp, "a parameter type (T.Tensor(...), a dtype or T.Ptr(...))")
        self.emit(sp, self.b.param, name, ty)  # void: TIRx's ``Bias: T.NoneType()`` (takes None)
        return None

    def ret(self, c):
        return _Ret(c[0])

    def funcdef(self, c):
        for x in c:
            if type(x) is _Ret:
                ty = self.as_type(x.ty, self.func_span, "a return type")
                self.b.set_ret_type(ty)
        self.close()
        return None
