"""Pointer and memory ops: element addresses, bit reinterpretation, byte offsets,
alignment tests, and calls of external C/CUDA functions."""

from __future__ import annotations

import re
from typing import Any

from ..errors import OpError
from ..ir.expr import BufferLoad, IntImm, Mul, PrimExpr, StringImm, Var, binop
from ..ir.host_types import MissingType
from ..ir.op import CExpr, Helper, NoInterp, alias, declare, register_handler
from ..ir.types import PointerType, PrimType, Type, as_prim, as_type, bool_, tensormap_ptr, uint64

__all__: list[str] = []


# --------------------------------------------------------------------------- address_of
def _is_descriptor(a: Any) -> bool:
    """A TMA descriptor variable (``T.Ptr(T.TensorMap())``): ``T.address_of(A_map)`` is its
    address, a ``uint64`` as in TIRx."""
    return isinstance(a, Var) and a.ty == tensormap_ptr


def _address_of_type(args):
    a = args[0]
    if _is_descriptor(a):
        return uint64
    if not isinstance(a, BufferLoad):
        raise TypeError(
            "T.address_of takes a buffer element, e.g. T.address_of(A[i]), or a T.TensorMap descriptor"
        )
    return PointerType(a.buffer.dtype, a.buffer.scope)


def _c_address_of(cg: Any, c: Any) -> str:
    a = c.args[0]
    if _is_descriptor(a):  # the descriptor's variable holds its address (a __grid_constant__ parameter)
        return f"((unsigned long long){cg.expr(a)})"
    if not isinstance(a, BufferLoad):
        raise cg.error("T.address_of takes a buffer element, e.g. T.address_of(A[i])", c)
    idx = cg.flat_index(a.buffer, a.indices, c)
    if isinstance(idx.ty, PrimType) and idx.ty.lanes > 1:
        idx = getattr(idx, "base", None)
        if idx is None:
            raise cg.error("T.address_of of a vector gather has no single address", c)
    return f"({cg.ptr_of(a.buffer)} + {cg.wrap(idx, 12)})"


def _i_address_of(fc: Any, call: Any):
    from tirx.ops.semantics import PtrVal
    from tirx.ops.semantics import dtypes as D

    load = call.args[0]
    if _is_descriptor(load):
        raise OpError(
            "T.address_of of a TMA descriptor: the interpreter does not model T.TensorMap descriptors"
        )
    if not isinstance(load, BufferLoad):
        raise OpError("T.address_of takes a buffer element (interpreter)")
    loc = fc.locate(load.buffer, load.indices)
    itemsize = D.storage_np(load.buffer.dtype).itemsize

    def ev(c):
        mem, _v1, _full_flat, flat = loc(c)
        off = flat * itemsize
        if off.shape[0] == 1 and off.ndim == 1:
            return PtrVal(mem, int(off[0]))
        return PtrVal(mem, off)

    return ev


declare(
    "address_of",
    "x",
    _address_of_type,
    params="obj",
    doc="pointer to a buffer element, typed as the buffer's dtype",
    takes_address=True,
    cuda=_c_address_of,
    interp=_i_address_of,
)


# --------------------------------------------------------------------------- reinterpret
BITCAST = Helper(
    "tirx_bitcast",
    """\
template <typename To, typename From> __device__ __forceinline__ To tirx_bitcast(From x) {
  static_assert(sizeof(To) == sizeof(From), "reinterpret: sizes differ");
  To y;
  memcpy(&y, &x, sizeof(To));
  return y;
}""",
)
_DIRECT_BITCAST = {
    ("float32", "int32"): "__float_as_int",
    ("int32", "float32"): "__int_as_float",
    ("float32", "uint32"): "__float_as_uint",
    ("uint32", "float32"): "__uint_as_float",
    ("float64", "int64"): "__double_as_longlong",
    ("int64", "float64"): "__longlong_as_double",
    ("float16", "int16"): "__half_as_short",
    ("float16", "uint16"): "__half_as_ushort",
    ("int16", "float16"): "__short_as_half",
    ("uint16", "float16"): "__ushort_as_half",
}


def _c_reinterpret(cg: Any, c: Any) -> str:
    x = c.args[0]
    to, fr = c.ty, x.ty
    if isinstance(to, PointerType) or isinstance(fr, PointerType):
        return f"(({cg.ctype(to)}){cg.wrap(x, 15)})"
    if not (isinstance(to, PrimType) and isinstance(fr, PrimType)):
        raise cg.error(f"T.reinterpret: cannot reinterpret {fr} as {to}", c)
    if to == fr:
        return cg.expr(x)
    if to.bytes != fr.bytes:
        raise cg.error(
            f"T.reinterpret: {fr} and {to} have different sizes ({fr.bytes} vs {to.bytes} bytes)", c
        )
    direct = _DIRECT_BITCAST.get((fr.base, to.base)) if fr.lanes == to.lanes == 1 else None
    if direct:
        return f"{direct}({cg.expr(x)})"
    cg.need(BITCAST)
    # the source type named, not deduced: C promotes a narrow integer expression (``v << 1`` of
    # int16 is an ``int``), whose value converts back to the IR's type here
    return f"tirx_bitcast<{cg.ctype(to)}, {cg.ctype(fr)}>({cg.expr(x)})"


def _i_reinterpret(fc: Any, call: Any):
    import numpy as np

    from tirx.ops.semantics import InterpError, PtrVal
    from tirx.ops.semantics import dtypes as D

    src, dst = call.args[0].ty, call.ty
    fa = fc.expr(call.args[0])
    if isinstance(src, PointerType) and isinstance(dst, PointerType):
        return fa
    if isinstance(src, PointerType) or isinstance(dst, PointerType):
        # only a pointer that travelled as an integer (mapa's raw address) turns back into one
        def ev_ptr(c):
            v = fa(c)
            if isinstance(v, PtrVal):
                return v
            raise InterpError(
                f"the interpreter cannot reinterpret between {src} and {dst}: raw integer addresses are not modelled"
            )

        return ev_ptr
    if src.bits * src.lanes != dst.bits * dst.lanes:
        raise OpError(f"T.reinterpret: {src} and {dst} differ in size")
    sd, dd = D.storage_np(src.element), D.storage_np(dst.element)

    def ev(c):
        x = D.to_storage(fa(c), src)
        x = np.ascontiguousarray(x, dtype=sd)
        if src.lanes == 1 and dst.lanes > 1:
            x = x.reshape(-1, 1)
        y = x.view(dd)
        if dst.lanes == 1 and y.ndim > 1:
            y = y.reshape(-1)
        return D.from_storage(y.copy(), dst)

    return ev


def _e(x: Any) -> Any:
    """A script value as an expression (a mutable scalar cell, a meta var, a buffer's data)."""
    conv = getattr(x, "__tirx_expr__", None)
    return conv() if conv is not None else x


def _s_reinterpret(*args: Any, ty: Any = None, span: Any = None, **kw: Any) -> Any:
    """``T.reinterpret(e, ty=T.Ptr(T.float32))`` or ``T.reinterpret(ptr_ty, e)``; ``x=`` is
    TIRx's name of the value."""
    if "x" in kw:
        args = (*args, kw.pop("x"))
    if kw:
        raise TypeError(f"T.reinterpret got an unexpected keyword argument {next(iter(kw))!r}")
    if (
        ty is None
        and len(args) == 2
        and (isinstance(args[0], (Type, str)) or hasattr(args[0], "__tirx_type__"))
    ):
        ty, args = args[0], (args[1],)
    if ty is None or len(args) != 1:
        raise TypeError(
            "T.reinterpret takes a value and a type: T.reinterpret(e, ty=...) or T.reinterpret(ty, e)"
        )
    return REINTERPRET(_e(args[0]), ty=as_type(ty, "T.reinterpret type"), span=span)


REINTERPRET = declare(
    "reinterpret",
    "x",
    "ty",
    params="x",
    doc="reinterpret the bits (or pointer) as ty",
    bitcast=True,
    cuda=_c_reinterpret,
    interp=_i_reinterpret,
    script=_s_reinterpret,
)


# --------------------------------------------------------------------------- extern calls
def _c_extern(cg: Any, c: Any) -> str:
    name = c.args[0]
    if not isinstance(name, StringImm) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_:]*", name.value):
        raise cg.error(f"T.{c.op.name}: the first argument must name a C function", c)
    if isinstance(c.ty, PrimType) and c.ty.lanes > 1:  # a vector result: lane by lane, as TIRx
        return cg.per_lane_call(name.value, c.args[1:], c.ty, c)
    return f"{name.value}({', '.join(cg.expr(a) for a in c.args[1:])})"


_EXTERN = NoInterp("it calls external C/CUDA code")
# Without ``ty=`` the call's type is ``T.Missing()``, as in TIRx: ``T.call_extern("f", x)`` as a
# statement builds (and prints without ``ty=``); a backend refuses a value of that type.
declare(
    "call_extern", "s *x?", MissingType(), pure=False, doc="call an external C/CUDA function by name",
    cuda=_c_extern, interp=_EXTERN,
)  # fmt: skip
declare(
    "call_pure_extern", "s *x?", MissingType(), doc="call an external side-effect-free function by name",
    cuda=_c_extern, interp=_EXTERN,
)  # fmt: skip


# --------------------------------------------------------------------------- byte offsets, alignment
def _c_ptr_byte_offset(cg: Any, c: Any) -> str:
    p, off = c.args
    return f"(({cg.ctype(c.ty)})((char*){cg.wrap(p, 15)} + {cg.wrap(off, 12)}))"  # ty= may retype it


def i_byte_offset(fc: Any, call: Any):
    """Interpreter: a pointer ``args[0]`` moved ``args[1]`` bytes (also ``T.handle_add_byte_offset``)."""
    import numpy as np

    from tirx.ops.semantics import InterpError, PtrVal

    fp, fo = fc.expr(call.args[0]), fc.expr(call.args[1])

    def ev(c):
        p, o = fp(c), fo(c)
        if not isinstance(p, PtrVal):
            raise InterpError(f"T.{call.op.name} of a value that is not a pointer")
        o = int(o[0]) if o.shape[0] == 1 else o.astype(np.int64)
        return PtrVal(p.mem, p.off + o, p.rank)

    return ev


def _typed_ptr(ptype: Any, ptr: Any) -> Any:
    ptr = _e(ptr)
    data = getattr(ptr, "data", None)
    if data is not None and not isinstance(ptr, PrimExpr):  # a buffer: its backing pointer
        ptr = data
    pt = getattr(ptr, "ty", None)
    if not isinstance(pt, PointerType):
        raise TypeError(f"expected a pointer expression, got {ptr!r}")
    want = PointerType(as_type(ptype, "pointer element type"), pt.scope)
    return ptr if pt == want else REINTERPRET(ptr, ty=want)


def _s_ptr_byte_offset(*args: Any, ty: Any = None, span: Any = None) -> Any:
    """``T.ptr_byte_offset(ptr, nbytes)``; ``T.ptr_byte_offset(T.float32, ptr, nbytes)`` types it
    first; ``ty=T.Ptr(...)`` (TIRx's required spelling) is the result's pointer type."""
    if len(args) == 3:
        return PTR_BYTE_OFFSET(_typed_ptr(args[0], args[1]), _e(args[2]), ty=ty, span=span)
    return PTR_BYTE_OFFSET(*(_e(a) for a in args), ty=ty, span=span)


def _print_ptr_byte_offset(p: Any, parts: list, call: Any) -> str:
    """TIRx prints the result type of every ``T.ptr_byte_offset``."""
    return f"T.{call.op.name}({', '.join(parts)}, ty={p.type_text(call.ty)})"


PTR_BYTE_OFFSET = declare(
    "ptr_byte_offset",
    "p i",
    "arg0",
    params="data byte_offset",
    doc="advance a pointer by a byte offset, keeping its type",
    pointer_from=(0,),
    cuda=_c_ptr_byte_offset,
    interp=i_byte_offset,
    script=_s_ptr_byte_offset,
)
register_handler("print", "ptr_byte_offset")(_print_ptr_byte_offset)


def _tvm_access_ptr(ptype: Any, data: Any, offset: Any, extent: Any = None, rw_mask: Any = None,
                    span: Any = None) -> Any:  # fmt: skip
    """A ``ptype``-typed pointer to element ``offset`` of ``data`` (a pointer var or buffer)."""
    dt = as_prim(ptype, "T.tvm_access_ptr type")
    p = _typed_ptr(dt, data)
    off = _e(offset)
    if isinstance(off, int) and off == 0:
        return p
    return PTR_BYTE_OFFSET(
        p, binop(Mul, off, dt.bytes) if isinstance(off, PrimExpr) else off * dt.bytes, span=span
    )


alias(
    "tvm_access_ptr",
    "ptr_byte_offset",
    _tvm_access_ptr,
    doc="TVM's typed pointer to an element (ptype, data, offset)",
)


def _c_is_aligned(cg: Any, c: Any) -> str:
    p, n = c.args
    if not isinstance(n, IntImm) or n.value <= 0 or n.value & (n.value - 1):
        raise cg.error("T.is_aligned: the alignment must be a power-of-two integer literal", c)
    return f"((((unsigned long long){cg.wrap(p, 15)}) & {n.value - 1}ULL) == 0ULL)"


def _i_is_aligned(fc: Any, call: Any):
    """Every interpreter allocation starts 256-byte aligned (as cudaMalloc's do); the
    pointer's byte offset decides."""
    import numpy as np

    from tirx.ops.semantics import InterpError, PtrVal

    fp, n = fc.expr(call.args[0]), call.args[1]
    if not isinstance(n, IntImm) or n.value <= 0 or n.value & (n.value - 1) or n.value > 256:
        raise OpError("T.is_aligned: the alignment must be a power-of-two integer literal <= 256")
    m = n.value - 1

    def ev(c):
        p = fp(c)
        if not isinstance(p, PtrVal):
            raise InterpError("T.is_aligned of a value that is not a pointer")
        return np.atleast_1d((np.asarray(p.off, dtype=np.int64) & m) == 0)

    return ev


declare(
    "is_aligned",
    "p n",
    bool_,
    doc="whether a pointer's address is a multiple of n bytes (chooses a vector path at run time)",
    alignment_test=True,
    cuda=_c_is_aligned,
    interp=_i_is_aligned,
)


def _i_isnullptr(fc: Any, call: Any):
    import numpy as np

    fa = fc.expr(call.args[0])

    def ev(c):
        fa(c)  # evaluated for its errors; the interpreter's pointers always point into memory
        return np.zeros(c.N, dtype=bool)

    return ev


declare(
    "isnullptr", "p", bool_, params="x", doc="whether a pointer is null", host=lambda call, a: f"({a[0]} == 0)",
    cuda=CExpr("(({0}) == nullptr)"), interp=_i_isnullptr,
)  # fmt: skip
