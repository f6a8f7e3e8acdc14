"""Where a function's host code launches its kernels: the split of a function body into host
statements and device entries, for the CUDA target.

Two shapes. *Straight-line* host code (bindings, asserts and tensor views before each device
entry, bindings and a ``return`` after the last) is evaluated by each kernel's launcher before
its launch (``split_launches``). Host code with control flow around device entries (TIRx's
``for it in range(n): with T.device_entry(...)``, an entry under a host ``if``, a mutable host
scalar, ``T.assume_aligned`` of a parameter) is a *host program* (``host_program``): the
runtime runs it (``tirx.runtime.host_program``) and launches each entry where the program
reaches it, passing the host values the entry reads (loop variables, bindings, elements of
tensors the host allocated) as kernel parameters.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..ir import (
    AllocBuffer,
    Assert,
    Bind,
    BufferLoad,
    BufferStore,
    Call,
    DeclBuffer,
    DeviceEntry,
    Evaluate,
    For,
    Function,
    IfThenElse,
    IntImm,
    Return,
    SeqStmt,
    Stmt,
    Var,
    While,
)
from ..ir.buffer import constant_offset
from ..ir.stmt import Break, Continue, ForKind, flat_stmts
from ..ir.visitor import Mutator, Visitor, collect_vars
from .cuda_common import _error

__all__ = ["HostLaunch", "contains_entry", "host_program", "is_host_call", "split_launches"]


def contains_entry(s: Stmt) -> bool:
    class _F(Visitor):
        found = False

        def visit_DeviceEntry(self, n: Any) -> None:
            self.found = True

    v = _F()
    v.visit(s)
    return v.found


def split_launches(f: Function) -> list[tuple[list, DeviceEntry]]:
    """The kernel launches of ``f`` in order: per device entry, the host statements before it
    (bindings and asserts, evaluated before that launch; tensor declarations over host
    pointers, which the kernel addresses) and the entry. The host statements
    after the last entry (bindings, then a final ``return <value>``) go with the last launch.
    ``[]`` when ``f`` has no top-level device entry. A located error when the host code is
    not straight-line (``host_program`` takes those)."""
    stmts = list(flat_stmts(f.body))
    at = [i for i, s in enumerate(stmts) if isinstance(s, DeviceEntry)]
    if not at:
        return []
    tail = [r for r in stmts[at[-1] + 1 :] if not (isinstance(r, SeqStmt) and not r.stmts)]
    after: list = []
    for k, r in enumerate(tail):
        if isinstance(r, Return) and r.value is not None and k == len(tail) - 1:
            after.append(r)  # the host returns a value after the launches (TIRx's `return n`)
        elif isinstance(r, Bind):
            after.append(r)  # a host binding for that value
        else:
            raise _error(
                f"function {f.name}: statements after the last device entry are not supported by the cuda "
                "target (the host runs bindings and asserts before each device entry; after the last, "
                "bindings and a final `return <value computed on the host>`)",
                r,
            )
    if after and not isinstance(after[-1], Return):
        after = []  # bindings nobody reads: nothing to evaluate
    host: list = []
    launches: list[tuple[list, DeviceEntry]] = []
    for s in stmts[: at[-1] + 1]:
        if isinstance(s, DeviceEntry):
            launches.append((list(host), s))
            continue
        # TIRx's host regions (a top-level launch_thread kernel is a device entry by now:
        # tirx.passes.thread_launch)
        if type(s).__name__ == "RegionStmt":
            where = " outside a device entry" if s.kind == "launch_thread" else ""
            raise _error(f"T.{s.kind}{where} is not supported by the CUDA backend", s)
        if not isinstance(s, (Bind, Assert, DeclBuffer)) and not (isinstance(s, SeqStmt) and not s.stmts):
            raise _error(
                f"function {f.name}: only bindings and asserts may precede the device entry on the cuda "
                f"target (and tensor views, T.decl_tensor, over pointers the host has), got {type(s).__name__}",
                s,
            )
        check_host_calls(f, s)
        host.append(s)
    launches[-1][0].extend(after)  # last of the host statements: evaluated after the launches
    return launches


def is_host_call(c: Any) -> bool:
    """A call host code runs as a statement: an alignment fact (``T.assume_aligned``), or an op
    with a host form (``T.cuda.tensormap_encode_tiled``: TIRx's host-encoded TMA descriptor)."""
    from ..ir.op import Op, impl

    if not (isinstance(c, Call) and isinstance(c.op, Op)):
        return False
    return c.op.traits.alignment_fact or impl("host", c.op) is not None


def check_host_calls(f: Function, s: Any) -> None:
    """A located error for a call in host statement ``s`` whose host form refuses its operands
    (``T.cuda.tensormap_encode_tiled`` into a tensor's device pointer)."""
    from ..ir.op import Op, impl

    class _F(Visitor):
        def visit_Call(self, c: Any) -> None:
            host = impl("host", c.op) if isinstance(c.op, Op) else None
            if host is not None:
                try:
                    host(c, ["_"] * len(c.args))
                except ValueError as e:
                    raise _error(f"function {f.name}: {e}", c) from e
            self.generic_visit(c)

    _F().visit(s)


def _reads_memory(s: Any) -> bool:
    class _F(Visitor):
        found = False

        def visit_BufferLoad(self, n: Any) -> None:
            self.found = True

        def visit_Call(self, c: Any) -> None:
            if getattr(getattr(c.op, "traits", None), "takes_address", False) and isinstance(c.args[0], BufferLoad):
                for x in (*c.args[0].indices, *c.args[1:]):  # an element's address reads no memory
                    self.visit(x)
                return
            self.generic_visit(c)

    v = _F()
    v.visit(s)
    return v.found


def is_straight_line(f: Function) -> bool:
    """Whether ``split_launches`` takes ``f``'s host code: device entries only at the top
    level, with only bindings, asserts and tensor views around them, none reading a tensor
    (a host program copies such an element from device memory)."""
    stmts = list(flat_stmts(f.body))
    at = [i for i, s in enumerate(stmts) if isinstance(s, DeviceEntry)]
    if not at:
        return False
    for k, s in enumerate(stmts):
        if isinstance(s, DeviceEntry) or (isinstance(s, SeqStmt) and not s.stmts):
            continue
        if not isinstance(s, DeclBuffer) and _reads_memory(s):
            return False
        if k > at[-1]:
            last = isinstance(s, Return) and s.value is not None and k == len(stmts) - 1
            if not (isinstance(s, Bind) or last):
                return False
        elif not isinstance(s, (Bind, Assert, DeclBuffer)):
            return False
    return True


@attrs.define
class HostLaunch:
    """One device entry of a host program. ``entry`` is the entry the kernel is generated
    from (reads of host-allocated tensors replaced by ``outer`` variables); ``views`` the
    tensor declarations of host code in scope there; ``outer`` the host values the entry
    reads, in parameter order: ``(var, source)``, where ``source`` is the host variable itself
    (a parameter is never one: the kernel has those) or ``(buffer, flat index)``, an element
    of a tensor the host allocated."""

    entry: DeviceEntry
    views: list
    outer: list
    source: DeviceEntry  # the entry as the function has it


#: TIRx's regions a host program runs: ``compute_scope`` / ``device_scope`` group host code
#: (a ``device_scope`` without a device entry inside is a kernel by now: tirx.passes.thread_launch),
#: ``device_context(type, id)`` names the device its launches run on (checked at the call)
HOST_REGIONS = ("compute_scope", "device_scope", "device_context")

# the loop kinds the host runs in order (a thread binding is a device loop)
_HOST_LOOPS = (ForKind.SERIAL, ForKind.UNROLLED, ForKind.VECTORIZED, ForKind.PARALLEL)


class _HostLoads(Mutator):
    """An entry with each read of a host-allocated tensor at constant indices replaced by a
    variable (the element's value at the launch, a kernel parameter)."""

    def __init__(self, fname: str, hbufs: dict) -> None:
        super().__init__()
        self.fname = fname
        self.hbufs = hbufs  # data var -> Buffer, tensors the host allocated
        self.found: dict = {}  # (buffer, flat index) -> Var

    def visit_BufferLoad(self, e: BufferLoad) -> Any:
        b = self.hbufs.get(e.buffer.data)
        if b is None:
            return self.generic_visit(e)
        flat = constant_offset(b.shape, e.indices)
        if flat is None:
            raise _error(
                f"function {self.fname}: the kernel reads {b.name}, a tensor allocated in host code, at an index "
                f"that is not a constant; pass the value as a parameter or allocate it inside the device entry",
                e,
            )
        key = (b, flat)
        v = self.found.get(key)
        if v is None:
            name = b.name if _size(b) == 1 else f"{b.name}_{flat}"
            v = self.found[key] = Var(name, b.dtype)
        return v

    def visit_BufferStore(self, s: BufferStore) -> Any:
        b = self.hbufs.get(s.buffer.data)
        if b is not None:
            raise _error(
                f"function {self.fname}: the kernel writes {b.name}, a tensor allocated in host code (host "
                f"memory, which a kernel cannot write); allocate it inside the device entry",
                s,
            )
        return self.generic_visit(s)


def _size(b: Any) -> int:
    n = 1
    for s in b.shape:
        n *= s.value
    return n


def host_program(f: Function) -> list[HostLaunch]:
    """The device entries of ``f``'s host program, in the order they appear: a located error
    for host code the host cannot run (a statement no host runs, a device loop, a tensor the
    host allocated with a shape that is not constant, an entry inside an entry)."""

    out: list[HostLaunch] = []
    # pointers of tensors in device memory that host code may read and write element by element
    # (a parameter tensor, a pointer parameter; host_program.py copies the element)
    device = {p for p in f.params} | {b.data for _p, b in f.buffer_map}

    def walk(s: Stmt | None, scope: list, hbufs: dict, views: list) -> None:
        for st in flat_stmts(s):
            if isinstance(st, DeviceEntry):
                if contains_entry(st.body):
                    raise _error(f"function {f.name}: nested device entries are not supported", st)
                out.append(_launch(f, st, scope, hbufs, views))
            elif isinstance(st, Bind):
                check_host_calls(f, st.value)
                scope.append(st.var)
            elif isinstance(st, (Assert, Return, Break, Continue)) or (isinstance(st, SeqStmt) and not st.stmts):
                pass
            elif isinstance(st, DeclBuffer):
                views.append(st)
            elif isinstance(st, AllocBuffer):
                b = st.buffer
                if not all(isinstance(x, IntImm) for x in b.shape) or _size(b) > 4096:
                    raise _error(
                        f"function {f.name}: host code allocates {b.name} with a shape that is not a small "
                        f"constant; allocate it inside a device entry",
                        st,
                    )
                hbufs[b.data] = b
            elif isinstance(st, BufferStore):
                b = st.buffer
                if b.data not in hbufs and (b.data not in device or b.layout is not None or b.scope != "global"):
                    raise _error(
                        f"function {f.name}: host code writes {b.name}, which the host cannot address (a tensor "
                        f"of a device entry's memory); write it inside a device entry",
                        st,
                    )
            elif isinstance(st, Evaluate):
                c = st.value
                check_host_calls(f, c)
                if not is_host_call(c):
                    what = f"T.{c.op.name}" if isinstance(c, Call) and hasattr(c.op, "name") else "this expression"
                    raise _error(
                        f"function {f.name}: {what} cannot run in host code (the host runs bindings, asserts, "
                        f"loops, conditions and host scalars around device entries); move it inside a device entry",
                        st,
                    )
            elif isinstance(st, For):
                if st.kind not in _HOST_LOOPS or st.thread is not None:
                    raise _error(
                        f"function {f.name}: a {st.kind.value} loop in host code cannot hold a device entry; "
                        f"use a serial loop",
                        st,
                    )
                walk(st.body, [*scope, st.var], dict(hbufs), list(views))
            elif isinstance(st, While):
                walk(st.body, list(scope), dict(hbufs), list(views))
            elif isinstance(st, IfThenElse):
                walk(st.then_case, list(scope), dict(hbufs), list(views))
                walk(st.else_case, list(scope), dict(hbufs), list(views))
            elif type(st).__name__ == "RegionStmt" and st.kind in HOST_REGIONS:
                walk(st.body, list(scope), dict(hbufs), list(views))  # groups host code (and entries)
            elif type(st).__name__ == "RegionStmt":
                where = " outside a device entry" if st.kind == "launch_thread" else ""
                raise _error(f"T.{st.kind}{where} is not supported by the CUDA backend", st)
            else:
                raise _error(
                    f"function {f.name}: {type(st).__name__} cannot run in host code around device entries",
                    st,
                )

    walk(f.body, [], {}, [])
    return out


class _BufferUses(Visitor):
    """The pointers of the tensors a statement accesses."""

    def __init__(self) -> None:
        self.data: set = set()

    def visit_BufferLoad(self, e: Any) -> None:
        self.data.add(e.buffer.data)
        self.generic_visit(e)

    visit_BufferStore = visit_BufferLoad


def _launch(f: Function, entry: DeviceEntry, scope: list, hbufs: dict, views: list) -> HostLaunch:
    sub = _HostLoads(f.name, hbufs)
    new = sub.visit(entry)
    bu = _BufferUses()
    bu.visit(new)
    used = set(collect_vars(new)) | bu.data
    for d in views:  # a view the kernel addresses reads its pointer and shape on the host side
        if d.buffer.data in used:
            used |= set(collect_vars(d.buffer))
    outer: list = [(v, v) for v in dict.fromkeys(scope) if v in used]
    outer += [(v, key) for key, v in sub.found.items()]
    return HostLaunch(new, [d for d in views if d.buffer.data in used], outer, entry)
