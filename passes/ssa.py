"""ConvertSSA: every var defined exactly once across the module.

- A var bound again (sequential or nested Binds, loops reusing a loop var, a Let inside
  an expression) gets a fresh Var with the same name hint at each later definition; uses
  refer to the innermost definition in scope.
- Params (and dynamic shape vars, buffer data vars) shared between functions are
  un-shared: the second function gets fresh vars and rebuilt buffers.
- A ``thread_binding`` loop var reused by several loops of one function names one hardware
  index and is kept within that function (renamed only across functions).
- Idempotent; an input that is already SSA is returned unchanged (the same object).
"""

from __future__ import annotations

from typing import Any

from tirx.ir import For, ForKind, Function, Module, Var
from tirx.passes._scoped import ScopedRewriter
from tirx.passes.infra import ModulePass

__all__ = ["ConvertSSA"]


class _SSA(ScopedRewriter):
    def __init__(self) -> None:
        super().__init__()
        self.defined: set[Var] = set()
        self.thread_vars: dict[Var, Var] = {}

    def define_var(self, v: Var, node: Any) -> Var:
        thread = isinstance(node, For) and node.kind is ForKind.THREAD_BINDING
        if thread:
            nv = self.thread_vars.get(v)
            if nv is not None:
                if self.vmap.get(v, v) is not nv:
                    self.set_var(v, nv)
                return nv
        if v not in self.defined:
            self.defined.add(v)
            nv = v
            if v in self.vmap:
                self.set_var(v, v)
        else:
            nv = Var(v.name, v.ty, span=v.span)
            self.defined.add(nv)
            self.set_var(v, nv)
        if thread:
            self.thread_vars[v] = nv
        return nv

    def function(self, f: Function) -> Function:
        self.thread_vars = {}
        return super().function(f)


class ConvertSSA(ModulePass):
    """Rename re-defined vars so every var is defined once across the module."""

    def transform_module(self, mod: Module) -> Module:
        return _SSA().module(mod)
