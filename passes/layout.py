"""Address the elements of tensors that carry a layout (``tirx.ir.layout``): the backends' step.

A tensor with ``layout=`` is indexed logically (``S[i, j]``) while its element lives at the
memory offset the layout gives (``T.ComposeLayout``: XOR-swizzled). This pass rewrites
every access of such a tensor into an access of a flat view over the same pointer at that
offset, and sizes an allocation by the layout's span (a swizzled one rounded up to a whole
block of the bits the swizzle writes, as TIRx allocates), so CUDA codegen and the
interpreter need not know layouts: the compile pipeline runs it before either backend (its
``lower-layouts`` stage: ``tirx/pipeline.py``, ``tirx.passes.lowering``).
Parameters keep their logical shape (what a caller passes is checked against it); only
their accesses change. A layout with thread or tensor-memory axes cannot be addressed
element by element: its accesses raise a located ``DiagnosticError`` (as TIRx refuses them).
The result is for the backends only, not a pass users run: a parameter's flat view is used
without a declaration of its own.
"""

from __future__ import annotations

from typing import Any

from tirx.errors import DiagnosticError
from tirx.ir import (
    AllocBuffer,
    BinaryOp,
    Buffer,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    Function,
    IntImm,
    Module,
    Ramp,
    Stmt,
    convert,
)
from tirx.ir.expr import NODE, SEQ
from tirx.ir.layout import LayoutError, alloc_span, memory_offset, vector_run
from tirx.ir.visitor import Mutator

__all__ = ["has_layouts", "lower_layouts"]


def has_layouts(obj: Any) -> bool:
    """Whether any tensor defined in ``obj`` (a Function or Module) has a layout: parameters,
    allocations and views are the only places a tensor is defined, so only statements are
    walked (not expressions)."""
    todo = list(obj.functions) if isinstance(obj, Module) else [obj]
    while todo:
        x = todo.pop()
        if isinstance(x, Function):
            if any(b.layout is not None for _, b in x.buffer_map):
                return True
            todo.append(x.body)
            continue
        if isinstance(x, (AllocBuffer, DeclBuffer)) and x.buffer.layout is not None:
            return True
        for name, kind in type(x)._sfields:
            v = getattr(x, name)
            if kind is NODE and isinstance(v, Stmt):
                todo.append(v)
            elif kind is SEQ and v and isinstance(v[0], Stmt):
                todo.extend(v)
    return False


def _flat(b: Buffer, size: Any) -> Buffer:
    _check_size(b)
    return Buffer(b.name, b.data, b.dtype, (size,), (), b.elem_offset, b.align, span=b.span)


def _located(msg: str, span: Any) -> DiagnosticError:
    """``file:line:col: error: msg`` (as codegen reports), the span kept on the error."""
    if span is not None:
        return DiagnosticError(f"{getattr(span, 'innermost', span)}: error: {msg}", span=span)
    return DiagnosticError(msg)


def _check_size(b: Buffer) -> None:
    """A tensor with more elements than its layout has positions would be addressed past
    its storage (TIRx generates such accesses silently): a located error instead."""
    n = 1
    for d in b.shape:
        if not isinstance(d, IntImm):
            return
        n *= d.value
    size = b.layout.size()
    if type(size) is int and n > size:
        raise _located(
            f"tensor {b.name}: its shape {tuple(d.value for d in b.shape)} has {n} elements but its layout "
            f"places only {size}",
            b.span,
        )


class _Lower(Mutator):
    def __init__(self, made: set | None = None) -> None:
        super().__init__()
        self.made = made  # the address arithmetic built here (codegen never wraps it)

    def visit_buffer(self, b: Buffer) -> Buffer:  # a definition: alloc / decl (params: see lower_layouts)
        if b.layout is None:
            return super().visit_buffer(b)
        nb = self.buffer_map.get(b)
        if nb is None:
            try:
                span = convert(alloc_span(b.layout))
            except (LayoutError, ValueError) as e:  # a span past the index type
                msg = f"tensor {b.name}: its layout spans more than the index type holds ({e})"
                raise _located(msg, b.span) from None
            nb = self.buffer_map[b] = _flat(b, span)
        return nb

    def _offset(self, b: Buffer, indices: tuple, node: Any) -> tuple:
        idx = tuple(self.visit(i) for i in indices)
        last = idx[-1] if idx else None
        vec = (
            type(last) is Ramp
            and isinstance(last.stride, IntImm)
            and last.stride.value == 1
            and vector_run(b.layout, b.shape, last.base, last.lanes)
        )
        try:
            if vec:  # a run of consecutive elements stays one: a contiguous vector access
                assert isinstance(last, Ramp)  # vec is only true for a Ramp
                off = memory_offset(b.layout, (*idx[:-1], last.base), b.shape, b.name)
                off = Ramp(convert(off, last.base), convert(1, last.base), last.lanes)
                if self.made is not None:
                    _collect(off.base, {id(x) for x in (*idx, last.base, *b.shape)}, self.made)
                return (off,)
            off = memory_offset(b.layout, idx, b.shape, b.name)
        except LayoutError as e:
            raise _located(str(e), node.span or b.span) from None
        except ValueError as e:  # an extent/stride constant past the index type (IntImm range)
            raise _located(
                f"tensor {b.name}: its layout's address arithmetic does not fit the index type ({e})",
                node.span or b.span,
            ) from None
        like = idx[0] if idx else None
        try:
            off = convert(off, like) if like is not None else convert(off)
        except (TypeError, ValueError) as e:  # a constant offset past the index dtype (a huge stride)
            raise _located(
                f"tensor {b.name}: its layout puts this element at an offset the index type cannot hold ({e})",
                node.span or b.span,
            ) from None
        if self.made is not None:
            _collect(off, {id(x) for x in (*idx, *b.shape)}, self.made)
        return (off,)

    def visit_BufferLoad(self, e: BufferLoad) -> Any:
        b = e.buffer
        if b.layout is None:
            return self.generic_visit(e)
        nb = self.buffer_map.get(b) or self.visit_buffer(b)
        return BufferLoad(nb, self._offset(b, e.indices, e), span=e.span)

    def visit_BufferStore(self, s: BufferStore) -> Any:
        b = s.buffer
        if b.layout is None:
            return self.generic_visit(s)
        nb = self.buffer_map.get(b) or self.visit_buffer(b)
        return BufferStore(nb, self.visit(s.value), self._offset(b, s.indices, s), span=s.span)


def _collect(e: Any, own: set, made: set) -> None:
    """The arithmetic nodes of ``e`` above the indices and dimensions (``own``) into ``made``."""
    todo = [e]
    while todo:
        x = todo.pop()
        if id(x) in own or not isinstance(x, BinaryOp):
            continue
        made.add(x)
        todo += (x.a, x.b)


def _lower_function(f: Function, made: set | None = None) -> Function:
    m = _Lower(made)
    for _, b in f.buffer_map:  # parameters: accesses go through a flat view, the signature stays
        if b.layout is not None:
            m.buffer_map[b] = _flat(b, convert(alloc_span(b.layout)))
    body = m.visit(f.body)
    return f if body is f.body else f.replace(body=body)


def lower_layouts(obj: Any, made: set | None = None) -> Any:
    """``obj`` (a Function or Module) with every layout-carrying tensor addressed flat.
    ``made``, when given, receives the arithmetic nodes of the offsets built (addressing,
    which CUDA codegen leaves unwrapped as it does its own flattening's)."""
    if not has_layouts(obj):
        return obj
    if isinstance(obj, Module):
        funcs = tuple(_lower_function(f, made) if isinstance(f, Function) else f for f in obj.functions)
        return obj.replace(functions=funcs)
    return _lower_function(obj, made)
