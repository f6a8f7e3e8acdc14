"""IR expressions evaluated on the host (launch configuration, host bindings, shape checks).

``to_python(e, names)`` prints an integer/bool expression as Python source, with IR
semantics: ``//`` and ``%`` floor (FloorDiv/FloorMod), ``Div``/``Mod`` on integers
truncate (``_tdiv``/``_tmod``).
"""

from __future__ import annotations

from typing import Any

from ..ir import (
    And,
    BitNot,
    BufferLoad,
    Call,
    Cast,
    Div,
    FloatImm,
    IntImm,
    Max,
    Min,
    Mod,
    Not,
    Or,
    PointerType,
    PrimType,
    Select,
    StringImm,
    Var,
)
from ..ir.arith import trunc_div, trunc_mod, wrap_bits
from ..ir.op import Op, impl
from ..ir.operators import OPERATORS

__all__ = ["HOST_GLOBALS", "HostExprError", "element_offset", "to_python"]


class HostExprError(ValueError):
    pass


def _hload(buf: list, i: int, name: str) -> Any:
    """An element of a tensor the host allocated (a host program's list)."""
    if not 0 <= i < len(buf):
        raise ValueError(f"host code reads {name}[{i}], outside its {len(buf)} element(s)")
    return buf[i]


def _npf(name: str, x: Any, dtype: str) -> float:
    """A float math op on the host, in the call's dtype (an op's ``host=`` form)."""
    import numpy as np

    t = np.dtype(dtype) if dtype in ("float16", "float32", "float64") else np.dtype("float64")
    with np.errstate(all="ignore"):
        return float(getattr(np, name)(t.type(x)))


def _tdiv(a: int | float, b: int | float) -> int | float:
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    return trunc_div(a, b)


def _tmap_alloc() -> Any:
    """``T.stack_alloca("tensormap", 1)`` on the host: a descriptor's storage (runtime/tma.py)."""
    from .tma import new_descriptor

    return new_descriptor()


def _tmap_encode(*args: Any, **kw: Any) -> int:
    """``T.cuda.tensormap_encode_tiled`` on the host (runtime/tma.py)."""
    from .tma import encode_tiled

    return encode_tiled(*args, **kw)


def _assume(ok: Any, text: str) -> None:
    """``T.assume(cond)`` in host code: checked, as the interpreter checks it (CUDA's
    ``__builtin_assume`` of a false condition is undefined behaviour)."""
    if not ok:
        raise ValueError(f"{text}: the assumed condition is false on the host")


HOST_GLOBALS = {
    "_assume": _assume,
    "_tdiv": _tdiv,
    "_tmod": trunc_mod,
    "_wrap": wrap_bits,
    "_hload": _hload,
    "_npf": _npf,
    "_tmap_alloc": _tmap_alloc,
    "_tmap_encode": _tmap_encode,
}

# infix nodes whose Python operator computes them (from tirx/ir/operators.py); Div (truncating
# for integers), Mod, Min, Max, And, Or and the unary nodes are spelled below
_OPS = {
    o.node: o.text
    for o in OPERATORS
    if o.py_func is not None and not o.unary and o.kind != "logic" and o.node is not Div
}


def _address(t: Any) -> bool:
    """A pointer type, or a 64-bit integer (an address held as an integer)."""
    return isinstance(t, PointerType) or (
        isinstance(t, PrimType) and t.is_int and t.bits == 64 and t.lanes == 1
    )


def _pointer_source(e: Any) -> Any:
    """The operand of ``T.reinterpret(p, ty=T.Ptr(...))`` or of a cast between pointer types,
    and of a reinterpret between a pointer and a 64-bit integer: the same address on the
    host. None for anything else."""
    t = getattr(e, "ty", None)
    if isinstance(e, Cast) and isinstance(t, PointerType):
        src = e.value
    elif (
        isinstance(e, Call) and getattr(getattr(e.op, "traits", None), "bitcast", False) and len(e.args) == 1
    ):
        src = e.args[0]
    else:
        return None
    st = getattr(src, "ty", None)
    if _address(t) and _address(st) and (isinstance(t, PointerType) or isinstance(st, PointerType)):
        return src
    return None


def element_offset(buf: Any, indices: tuple) -> Any:
    """The element offset of ``buf[indices]`` from its pointer, as an IR expression (its
    strides, or row-major over its shape, plus its ``elem_offset``)."""
    from ..ir import IntImm as _I

    strides = list(buf.strides) if buf.strides else None
    if strides is None:
        strides, acc = [], None
        for s in reversed(buf.shape):
            strides.append(_I(1, s.ty) if acc is None else acc)
            acc = s if acc is None else acc * s
        strides.reverse()
    off = buf.elem_offset if buf.elem_offset is not None else None
    for x, s in zip(indices, strides):
        term = x * s if not (isinstance(s, _I) and s.value == 1) else x
        off = term if off is None else off + term
    return off if off is not None else _I(0)


def to_python(e: Any, names: dict) -> str:
    """``e`` as Python source over ``names`` (Var -> Python name; ``("buffer", data var)`` ->
    the list holding a host-allocated tensor, read through ``_hload``)."""
    if isinstance(e, Var):
        n = names.get(e)
        if n is None:
            raise HostExprError(
                f"{e.name} is not known on the host (only parameters, shapes and host bindings are)"
            )
        return n
    if isinstance(e, IntImm):
        return repr(bool(e.value)) if e.ty.is_bool else repr(e.value)
    if isinstance(e, StringImm):  # an op's string operand (a host form reads it)
        return repr(e.value)
    if isinstance(e, FloatImm):
        return (
            repr(e.value)
            if e.value == e.value and abs(e.value) != float("inf")
            else f"float({str(e.value)!r})"
        )
    op = _OPS.get(type(e))
    if op is not None:
        return f"({to_python(e.a, names)} {op} {to_python(e.b, names)})"
    if isinstance(e, Div):
        if isinstance(e.ty, PrimType) and e.ty.is_float:
            return f"({to_python(e.a, names)} / {to_python(e.b, names)})"
        return f"_tdiv({to_python(e.a, names)}, {to_python(e.b, names)})"
    if isinstance(e, Mod):
        return f"_tmod({to_python(e.a, names)}, {to_python(e.b, names)})"
    if isinstance(e, Min):
        return f"min({to_python(e.a, names)}, {to_python(e.b, names)})"
    if isinstance(e, Max):
        return f"max({to_python(e.a, names)}, {to_python(e.b, names)})"
    if isinstance(e, And):
        return f"({to_python(e.a, names)} and {to_python(e.b, names)})"
    if isinstance(e, Or):
        return f"({to_python(e.a, names)} or {to_python(e.b, names)})"
    if isinstance(e, Not):
        return f"(not {to_python(e.a, names)})"
    if isinstance(e, BitNot):
        return f"(~{to_python(e.a, names)})"
    if isinstance(e, Select):
        return f"({to_python(e.true_value, names)} if {to_python(e.cond, names)} else {to_python(e.false_value, names)})"
    if isinstance(e, Cast) and isinstance(e.ty, PrimType):
        inner = to_python(e.value, names)
        t = e.ty
        if t.is_bool:
            return f"bool({inner})"
        if t.is_float:
            return f"float({inner})"
        return f"_wrap(int({inner}), {t.bits}, {t.kind == 'int'})"
    if isinstance(e, BufferLoad):
        n = names.get(("buffer", e.buffer.data))
        if n is not None and len(e.indices) == len(e.buffer.shape):
            return f"_hload({n}, {to_python(element_offset(e.buffer, e.indices), names)}, {e.buffer.name!r})"
        p = names.get(("device", e.buffer.data))
        if (
            p is not None
            and len(e.indices) == len(e.buffer.shape)
            and getattr(e.buffer, "layout", None) is None
            and isinstance(e.ty, PrimType)
            and e.ty.lanes == 1
        ):
            # an element of a tensor in device memory, read by a host program (host_program.py)
            off = to_python(element_offset(e.buffer, e.indices), names)
            return f"_dload(_io, {p}, {off}, {e.ty.name!r}, {e.buffer.name!r})"
        raise HostExprError(
            f"cannot read {e.buffer.name} on the host (host code reads only tensors it allocated itself)"
        )
    src = _pointer_source(e)
    if src is not None:  # an address seen as another pointer (or integer) type: the same value
        return to_python(src, names)
    if (
        isinstance(e, Call)
        and isinstance(e.op, Op)
        and e.op.traits.takes_address
        and isinstance(e.args[0], BufferLoad)
        and names.get(e.args[0].buffer.data) is not None
        and getattr(e.args[0].buffer, "layout", None) is None
    ):  # ``T.address_of(A[i, j])``: the tensor's pointer plus the element's offset, in bytes
        ld = e.args[0]
        off = to_python(element_offset(ld.buffer, ld.indices), names)
        return f"({names[ld.buffer.data]} + ({off}) * {ld.buffer.dtype.bytes})"
    host = impl("host", e.op) if isinstance(e, Call) and isinstance(e.op, Op) else None
    try:
        code = None if host is None else host(e, [to_python(a, names) for a in e.args])
    except ValueError as err:  # operands the host form refuses (host_split reports it, located)
        raise HostExprError(str(err)) from None
    if code is not None:  # the op's host form (declared with it: tirx.ir.op.declare(host=...));
        return code  # None: not for these operands
    if isinstance(e, Call) and getattr(getattr(e.op, "traits", None), "select", False):
        c, a, b = e.args
        return f"({to_python(a, names)} if {to_python(c, names)} else {to_python(b, names)})"
    what = f"T.{e.op.name}" if isinstance(e, Call) and hasattr(e.op, "name") else type(e).__name__
    raise HostExprError(f"cannot evaluate {what} on the host")
