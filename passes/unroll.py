"""UnrollLoop: loops as straight-line copies of their body (TIRx's ``tirx.UnrollLoop``).

A loop marked ``T.unroll`` (``ForKind.UNROLLED``), and with ``auto_max_step = N`` a serial
loop of at most N iterations, whose start, extent and step are constants becomes one copy of
its body per iteration, the loop variable replaced by the iteration's value and every
variable the body defines fresh in each copy (so the result stays SSA when the input is).
Inner loops are unrolled first. The options are TIRx's, read from the current
``PassContext``'s config ``"tirx.UnrollLoop"`` (``{"auto_max_step": 0, "explicit_unroll":
True}``) or given to the pass.

An ``T.unroll`` loop whose bounds are not constants is an error (as in TIRx: the copies
cannot be made). A loop whose body leaves it early (``break`` / ``continue`` of that loop) is
kept as a loop: copies in a row have nowhere to jump to. TIRx's pass copies ``range(1, 7, 2)``
six times, ignoring the step; this one follows the step.
"""

from __future__ import annotations

from typing import Any

from tirx.ir import Break, Continue, For, ForKind, Function, IntImm, PrimType, SeqStmt, Var, While
from tirx.ir.visitor import child_nodes
from tirx.passes._scoped import ScopedRewriter
from tirx.passes._util import located_error
from tirx.passes.infra import FunctionPass, PassContext

__all__ = ["UnrollLoop"]

CONFIG_KEY = "tirx.UnrollLoop"
_OPTIONS = ("auto_max_step", "explicit_unroll")


class _Copy(ScopedRewriter):
    """One iteration's copy of a body: the loop var is ``value``, every definition fresh."""

    def __init__(self, var: Var, value: IntImm) -> None:
        super().__init__()
        self.set_var(var, value)

    def define_var(self, v: Var, node: Any) -> Var:
        nv = Var(v.name, v.ty, span=v.span)
        self.set_var(v, nv)
        return nv


def _leaves_early(body: Any) -> bool:
    """Whether ``body`` has a ``break`` / ``continue`` of the loop around it (not of an inner loop)."""
    todo = [body]
    while todo:
        n = todo.pop()
        if isinstance(n, (Break, Continue)):
            return True
        if not isinstance(n, (For, While)):  # an inner loop's own break / continue stays in it
            todo.extend(child_nodes(n))
    return False


class _Unroller(ScopedRewriter):
    def __init__(self, auto_max_step: int, explicit: bool) -> None:
        super().__init__()
        self.auto_max_step = auto_max_step
        self.explicit = explicit

    def stmt_For(self, s: For) -> Any:
        s = super().stmt_For(s)  # inner loops first
        if not isinstance(s, For):
            return s
        ints = [b.value for b in (s.start, s.extent, s.step) if isinstance(b, IntImm)]
        const = len(ints) == 3
        if s.kind is ForKind.UNROLLED and self.explicit:
            if not const:
                raise located_error(
                    f"UnrollLoop: cannot unroll loop {s.var.name}: its start, extent and step must be constants",
                    s,
                )
        elif not (s.kind is ForKind.SERIAL and const and ints[1] <= self.auto_max_step):
            return s
        start, extent, step = ints
        if step <= 0 or _leaves_early(s.body):
            return s
        ty = s.var.ty
        assert isinstance(ty, PrimType)  # a loop var is an integer scalar
        copies = [_Copy(s.var, IntImm(k, ty)).body(s.body) for k in range(start, start + extent, step)]
        return SeqStmt(tuple(copies), span=s.span)


class UnrollLoop(FunctionPass):
    """Unroll ``T.unroll`` loops (and, with ``auto_max_step``, short serial loops) of constant
    bounds into copies of their body; options default to the current PassContext's
    ``"tirx.UnrollLoop"`` config."""

    name = "tirx.UnrollLoop"

    def __init__(self, auto_max_step: int | None = None, explicit_unroll: bool | None = None) -> None:
        self.auto_max_step = auto_max_step
        self.explicit_unroll = explicit_unroll

    def _options(self) -> tuple[int, bool]:
        cfg = PassContext.current().config.get(CONFIG_KEY) or {}
        if not hasattr(cfg, "get"):
            raise TypeError(f"PassContext config {CONFIG_KEY!r} must be a dict, got {type(cfg).__name__}")
        unknown = set(cfg) - set(_OPTIONS)
        if unknown:
            raise ValueError(f"PassContext config {CONFIG_KEY!r}: unknown options {sorted(unknown)}")
        n = self.auto_max_step if self.auto_max_step is not None else cfg.get("auto_max_step", 0)
        explicit = (
            self.explicit_unroll if self.explicit_unroll is not None else cfg.get("explicit_unroll", True)
        )
        if isinstance(n, IntImm):
            n = n.value
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"UnrollLoop: auto_max_step must be an int >= 0, got {n!r}")
        return n, bool(explicit.value if isinstance(explicit, IntImm) else explicit)

    def transform_function(self, func: Function, mod: Any) -> Function:
        n, explicit = self._options()
        return _Unroller(n, explicit).function(func)
