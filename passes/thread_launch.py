"""Kernels written as thread launches: ``with T.launch_thread("threadIdx.x", n) as tx:`` at the
top level of a host function is a kernel launch, as TIRx's ``SplitHostDevice`` makes it.

TIRx (like TVM before device entries) starts a kernel at each ``launch_thread`` region on a
``threadIdx``/``blockIdx`` axis in host code (at the top level, or under host loops and
conditions: launched each time the host gets there): the region and everything nested in it is the
kernel, and the extents of all ``launch_thread`` regions inside it give the launch (grid from
``blockIdx.*``, block from ``threadIdx.*``, 1 for an axis never launched). Two regions of one
axis in one kernel must have the same extent (TIRx: "Incompatible launch extents"), and an
extent is computed on the host, so it may not use a variable defined inside the kernel.

:func:`launch_thread_entries` wraps each such region in the equivalent ``DeviceEntry`` (the
region stays inside and reads the index, as it does in a device entry), so the CUDA code
generator and the interpreter see one kernel form. Functions that are device helpers (private,
or called by another function of the module) keep their regions: there ``launch_thread`` reads
the index of the kernel that called them. A region on another tag (``vthread``), or one with a
device entry inside, is left for the backends' located errors. A ``with T.device_scope():``
region in host code without a device entry inside is device code, as TIRx splits it: its body
is a kernel, launched by the ``launch_thread`` regions in it (one thread where there are none).
"""

from __future__ import annotations

import re
from typing import Any

from tirx.ir import (
    DeviceEntry,
    For,
    Function,
    GlobalVar,
    IfThenElse,
    IntImm,
    Module,
    RegionStmt,
    SeqStmt,
    While,
    convert,
)
from tirx.ir.node import Attrs
from tirx.ir.stmt import LAUNCH_FIELDS, LAUNCH_FIELDS_KEY
from tirx.ir.structural import structural_equal
from tirx.ir.visitor import Visitor, collect_vars
from tirx.passes._util import flatten, located_error, make_body

__all__ = ["launch_thread_entries"]

_TAG = re.compile(r"(threadIdx|blockIdx)\.([xyz])")


class _Launches(Visitor):
    """The ``launch_thread`` regions of one kernel (tag -> [(extent, region)]) and the
    variables defined inside it; ``ok`` is False when it cannot be a kernel launch."""

    def __init__(self) -> None:
        self.axes: dict[str, list] = {}
        self.defined: set = set()
        self.ok = True

    def visit_var_def(self, v: Any) -> None:
        self.defined.add(v)

    def visit_RegionStmt(self, s: RegionStmt) -> None:
        if s.kind == "launch_thread":
            tag = s.args[0].value
            if _TAG.fullmatch(tag) is None:
                self.ok = False
            else:
                self.axes.setdefault(tag, []).append((s.args[1], s))
        self.generic_visit(s)

    def visit_DeviceEntry(self, s: DeviceEntry) -> None:
        self.ok = False


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return a.value == b.value
    return structural_equal(a, b)


def _entry(fname: str, s: RegionStmt) -> DeviceEntry | None:
    """``s`` as the kernel it launches, or None when it is not one (left as written): a
    ``launch_thread`` nest, or a ``device_scope`` region without a device entry inside (TIRx's
    device code: its body is the kernel, launched by the ``launch_thread`` regions in it, one
    thread where there are none)."""
    if s.kind == "launch_thread":
        if _TAG.fullmatch(s.args[0].value) is None:
            return None
    elif s.kind != "device_scope":
        return None
    v = _Launches()
    v.visit(s)
    if not v.ok:
        return None
    ext: dict[str, Any] = {}
    for tag, seen in v.axes.items():
        first = seen[0][0]
        for e, region in seen[1:]:
            if not _same(first, e):
                raise located_error(
                    f"function {fname}: incompatible launch extents for {tag} in one kernel: {first} and {e} "
                    "(every launch_thread of one axis in a kernel launches the same extent)",
                    region,
                )
        inner = [x for x in collect_vars(first) if x in v.defined]
        if inner:
            raise located_error(
                f"function {fname}: the launch extent of {tag} uses {inner[0].name}, defined inside the kernel "
                "(a launch extent is computed on the host, before the kernel runs)",
                seen[0][1],
            )
        ext[tag] = first
    one = convert(1)
    values = [ext.get(f"blockIdx.{a}", one) for a in "xyz"] + [ext.get(f"threadIdx.{a}", one) for a in "xyz"]
    attrs = Attrs({"cuda.kernel_attrs": {}, LAUNCH_FIELDS_KEY: list(LAUNCH_FIELDS[:6])})
    return DeviceEntry(tuple(values), attrs, s, span=s.span)


#: TIRx's host regions, which group host code (and kernel launches): tirx.codegen.host_split
_HOST_REGIONS = ("compute_scope", "device_scope", "device_context")


def _host(fname: str, s: Any) -> Any:
    """``s``, host code, with each launch nest in it a device entry: at the top level, and under
    host control flow (a serial loop, an ``if``, a ``while``, a host region), where TIRx's host
    code launches it each time it gets there (a host program runs such a function)."""
    if isinstance(s, RegionStmt):
        if s.kind == "launch_thread":
            return _entry(fname, s) or s
        got = _entry(fname, s) if s.kind == "device_scope" else None
        if got is not None:
            return got
        if s.kind in _HOST_REGIONS:  # (a device_scope with device entries inside groups them)
            body = _host(fname, s.body)
            return s if body is s.body else s.replace(body=body)
        return s
    if isinstance(s, SeqStmt):
        stmts = [_host(fname, x) for x in s.stmts]
        return s if all(a is b for a, b in zip(stmts, s.stmts)) else s.replace(stmts=tuple(stmts))
    if isinstance(s, For) and s.thread is None:
        body = _host(fname, s.body)
        return s if body is s.body else s.replace(body=body)
    if isinstance(s, While):
        body = _host(fname, s.body)
        return s if body is s.body else s.replace(body=body)
    if isinstance(s, IfThenElse):
        then = _host(fname, s.then_case)
        other = None if s.else_case is None else _host(fname, s.else_case)
        if then is s.then_case and other is s.else_case:
            return s
        return s.replace(then_case=then, else_case=other)
    return s


def _function(f: Function) -> Function:
    stmts = flatten(f.body)
    if not any(isinstance(s, (RegionStmt, SeqStmt, For, While, IfThenElse)) for s in stmts):
        return f
    out = [_host(f.name, s) for s in stmts]
    if all(a is b for a, b in zip(out, stmts)):
        return f
    return f.with_body(make_body(out))


class _Calls(Visitor):
    def __init__(self) -> None:
        self.names: set = set()

    def visit_Call(self, c: Any) -> None:
        if isinstance(c.op, GlobalVar):
            self.names.add(c.op.name)
        self.generic_visit(c)


def launch_thread_entries(obj: Any) -> Any:
    """``obj`` (a Function or Module) with each top-level ``threadIdx``/``blockIdx``
    ``launch_thread`` nest of a host function wrapped in its ``DeviceEntry`` (see the module
    docstring); ``obj`` itself when there is none."""
    if isinstance(obj, Function):
        return obj if obj.private else _function(obj)
    if not isinstance(obj, Module):
        return obj
    calls = _Calls()
    for f in obj.functions:
        if isinstance(f, Function):
            calls.visit(f.body)
    funcs = tuple(
        _function(f) if isinstance(f, Function) and not f.private and f.name not in calls.names else f
        for f in obj.functions
    )
    if all(a is b for a, b in zip(funcs, obj.functions)):
        return obj
    return obj.replace(functions=funcs)
