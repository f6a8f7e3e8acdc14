"""CUDA handlers for the op table (``register_handler("cuda", name)``) and inline PTX.

Inline PTX is generic: ``T.ptx.asm(template, *operands, ty=...)`` and every op declared
with ``extra={"ptx": template}`` go through one emitter, so a new PTX instruction needs
only a declaration (or nothing, with ``T.ptx.asm``). The template language:

``{i}``         operand ``i`` as an input register; the constraint follows its type
                (``r`` 32-bit ints/bool, ``l`` 64-bit ints and pointers, ``f`` float32,
                ``d`` float64, ``h`` 16-bit types)
``{i:smem}``    operand ``i`` (a pointer) as a 32-bit shared-window address (``r``)
``{i:imm}``     operand ``i`` as an immediate (``n``; must be an integer literal)
``{i:out}``     operand ``i`` (a buffer element, e.g. ``acc[3]``) as a write-only output
``{i:inout}``   operand ``i`` (a buffer element) read and written (``+``)
``{out}``       the call's result (its type is the call's ``ty``; bool results are
                written as a 0/1 u32 register)
``{{`` ``}}``   literal braces; a literal ``%`` needs no escaping

Impure ops (``T.ptx.asm`` and most declared PTX ops) are ``asm volatile`` with a
``"memory"`` clobber, so the compiler neither drops nor reorders them around memory.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import OpError
from ..ir import BufferLoad, Call, IntImm, PointerType, PrimType, StringImm, VoidType
from ..ir.op import register_handler
from .cuda import _C_SCALAR, OP_FALLBACKS, CodeGenCUDA, _error

__all__ = ["asm_call", "generic_handler"]

_H = "cuda"


def _reg(name: str):
    return register_handler(_H, name)


# --------------------------------------------------------------------------- math
_F32 = {
    "exp": "expf", "exp2": "exp2f", "exp10": "exp10f", "log": "logf", "log2": "log2f", "log10": "log10f",
    "log1p": "log1pf", "sqrt": "sqrtf", "rsqrt": "rsqrtf", "tanh": "tanhf", "sin": "sinf", "cos": "cosf",
    "tan": "tanf", "asin": "asinf", "acos": "acosf", "atan": "atanf", "sinh": "sinhf", "cosh": "coshf",
    "erf": "erff", "fabs": "fabsf", "abs": "fabsf", "floor": "floorf", "ceil": "ceilf", "round": "rintf",
    "trunc": "truncf", "nearbyint": "nearbyintf", "pow": "powf", "atan2": "atan2f", "fmod": "fmodf",
    "fma": "fmaf",
}  # fmt: skip
_F64 = {k: (v[:-1] if v.endswith("f") else v) for k, v in _F32.items()}
_F64.update(fabs="fabs", abs="fabs", round="rint", erf="erf", floor="floor", ceil="ceil")


def math_call(cg: CodeGenCUDA, name: str, ty: Any, args: list) -> str:
    if not isinstance(ty, PrimType) or ty.lanes != 1:
        raise OpError(f"op T.{name}: the cuda backend has no {ty} form (scalar types only)")
    if ty.is_int:
        # the meaning the interpreter gives (tirx/interp/ops.py): rounding an integer is the
        # identity, abs of an unsigned integer too
        if name in ("floor", "ceil", "round", "trunc", "nearbyint") or (
            name in ("abs", "fabs") and ty.kind == "uint"
        ):
            return f"({cg.expr(args[0])})"
        if name in ("abs", "fabs"):
            fn = "llabs" if ty.bits == 64 else "abs"
            return f"(({_C_SCALAR[ty.base]}){fn}({cg.expr(args[0])}))"
        raise OpError(f"op T.{name}: the cuda backend has no integer form ({ty})")
    if name == "sigmoid":
        if ty.base == "float64":
            return f"(1.0 / (1.0 + exp(-{cg.wrap(args[0], 15)})))"
        x = cg.expr(args[0]) if ty.base == "float32" else f"float({cg.expr(args[0])})"
        r = f"(1.0f / (1.0f + expf(-{x if ty.base != 'float32' else cg.wrap(args[0], 15)})))"
        return r if ty.base == "float32" else f"{cg.ctype(ty)}{r}"
    if ty.base == "float64":
        return f"{_F64[name]}({', '.join(cg.expr(a) for a in args)})"
    fn = _F32[name]
    if ty.base == "float32":
        return f"{fn}({', '.join(cg.expr(a) for a in args)})"
    # fp16 / bf16 / fp8: compute in float32, round once
    return f"{cg.ctype(ty)}({fn}({', '.join('float(' + cg.expr(a) + ')' for a in args)}))"


def _math_handler(name: str):
    def h(cg: CodeGenCUDA, c: Call) -> str:
        return math_call(cg, name, c.args[0].ty, list(c.args))

    return h


for _n in (*_F32, "sigmoid"):  # the table of C names is the list of math ops handled here
    _reg(_n)(_math_handler(_n))


def _cg_math_call(self: CodeGenCUDA, name: str, ty: Any, args: list) -> str:
    return math_call(self, name, ty, args)


CodeGenCUDA._math_call = _cg_math_call


def _float_pred(cname: str, hname: str):
    def h(cg: CodeGenCUDA, c: Call) -> str:
        t = c.args[0].ty
        x = cg.expr(c.args[0])
        if t.base in ("float32", "float64"):
            return f"{cname}({x})"
        if t.base in ("float16", "bfloat16") and hname:
            return f"(bool){hname}({x})"
        return f"{cname}(float({x}))"

    return h


_reg("isnan")(_float_pred("isnan", "__hisnan"))
_reg("isinf")(_float_pred("isinf", "__hisinf"))
_reg("isfinite")(_float_pred("isfinite", ""))


def _bits_of(cg: CodeGenCUDA, x: Any, t: PrimType) -> str:
    """An 8/16-bit integer's own bits, zero-extended (a signed one would sign-extend)."""
    if t.bits in (8, 16):
        return f"({_C_SCALAR[f'uint{t.bits}']}){cg.wrap(x, 15)}"
    return cg.wrap(x, 15)


@_reg("popcount")
def _popcount(cg: CodeGenCUDA, c: Call) -> str:
    t = c.args[0].ty
    fn = "__popcll((unsigned long long)" if t.bits == 64 else "__popc((unsigned)"
    return f"(({_C_SCALAR[t.base]}){fn}{_bits_of(cg, c.args[0], t)}))"


@_reg("clz")
def _clz(cg: CodeGenCUDA, c: Call) -> str:
    t = c.args[0].ty
    if t.bits == 64:
        return f"(({_C_SCALAR[t.base]})__clzll((long long){cg.wrap(c.args[0], 15)}))"
    extra = 32 - t.bits
    r = f"__clz((int){_bits_of(cg, c.args[0], t)})"
    return f"(({_C_SCALAR[t.base]})({r} - {extra}))" if extra else f"(({_C_SCALAR[t.base]}){r})"


@_reg("if_then_else")
def _ite(cg: CodeGenCUDA, c: Call):
    a, b, e = c.args
    return f"{cg.wrap(a, 4)} ? {cg.wrap(b, 4)} : {cg.wrap(e, 3)}", 3


# --------------------------------------------------------------------------- pointers and bits
@_reg("address_of")
def _address_of(cg: CodeGenCUDA, c: Call) -> str:
    a = c.args[0]
    if not isinstance(a, BufferLoad):
        raise _error("T.address_of takes a buffer element, e.g. T.address_of(A[i])", c)
    idx = cg.flat_index(a.buffer, a.indices, c)
    if isinstance(idx.ty, PrimType) and idx.ty.lanes > 1:
        idx = getattr(idx, "base", None)
        if idx is None:
            raise _error("T.address_of of a vector gather has no single address", c)
    ptr = cg.ptr_of(a.buffer)
    return f"({ptr} + {cg.wrap(idx, 12)})"


@_reg("reinterpret")
def _reinterpret(cg: CodeGenCUDA, c: Call) -> str:
    x = c.args[0]
    to, fr = c.ty, x.ty
    if isinstance(to, PointerType) or isinstance(fr, PointerType):
        if isinstance(to, PointerType):
            return f"(({cg.ctype(to)}){cg.wrap(x, 15)})"
        return f"(({cg.ctype(to)}){cg.wrap(x, 15)})"
    if not (isinstance(to, PrimType) and isinstance(fr, PrimType)):
        raise _error(f"T.reinterpret: cannot reinterpret {fr} as {to}", c)
    if to == fr:
        return cg.expr(x)
    if to.bytes != fr.bytes:
        raise _error(f"T.reinterpret: {fr} and {to} have different sizes ({fr.bytes} vs {to.bytes} bytes)", c)
    pair = (fr.base, to.base) if fr.lanes == to.lanes == 1 else None
    direct = {
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
    }.get(pair)
    if direct:
        return f"{direct}({cg.expr(x)})"
    cg.features.add("bitcast")
    return f"tirx_bitcast<{cg.ctype(to)}>({cg.expr(x)})"


def _extern(cg: CodeGenCUDA, c: Call) -> str:
    name = c.args[0]
    if not isinstance(name, StringImm) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_:]*", name.value):
        raise _error("T.call_extern: the first argument must name a C function", c)
    return f"{name.value}({', '.join(cg.expr(a) for a in c.args[1:])})"


_reg("call_extern")(_extern)
_reg("call_pure_extern")(_extern)


@_reg("ptr_byte_offset")
def _ptr_byte_offset(cg: CodeGenCUDA, c: Call) -> str:
    p, off = c.args
    return f"(({cg.ctype(p.ty)})((char*){cg.wrap(p, 15)} + {cg.wrap(off, 12)}))"


@_reg("is_aligned")
def _is_aligned(cg: CodeGenCUDA, c: Call) -> str:
    p, n = c.args
    if not isinstance(n, IntImm) or n.value <= 0 or n.value & (n.value - 1):
        raise _error("T.is_aligned: the alignment must be a power-of-two integer literal", c)
    return f"((((unsigned long long){cg.wrap(p, 15)}) & {n.value - 1}ULL) == 0ULL)"


# --------------------------------------------------------------------------- thread model
def _axis_arg(c: Call) -> str:
    a = c.args[0]
    if not isinstance(a, StringImm) or a.value not in ("x", "y", "z"):
        raise _error(f'T.{c.op.name} takes "x", "y" or "z"', c)
    return a.value


def _builtin_axis(var: str):
    def h(cg: CodeGenCUDA, c: Call) -> str:
        return f"((int){var}.{_axis_arg(c)})"

    return h


_reg("cuda.thread_idx")(_builtin_axis("threadIdx"))
_reg("cuda.block_idx")(_builtin_axis("blockIdx"))
_reg("cuda.block_dim")(_builtin_axis("blockDim"))
_reg("cuda.grid_dim")(_builtin_axis("gridDim"))


def _cluster_axis(prefix: str):
    def h(cg: CodeGenCUDA, c: Call) -> str:
        cg.features.add("cluster")
        return f"((int)tirx_{prefix}_{_axis_arg(c)}())"

    return h


_reg("cuda.cluster_idx")(_cluster_axis("clusterid"))
_reg("cuda.cluster_dim")(_cluster_axis("cluster_nctaid"))
_reg("cuda.block_idx_in_cluster")(_cluster_axis("cluster_ctaid"))


@_reg("cuda.cta_rank")
def _cta_rank(cg: CodeGenCUDA, c: Call) -> str:
    cg.features.add("cluster")
    return "((int)tirx_sreg_cluster_ctarank())"


@_reg("cuda.lane_id")
def _lane_id(cg: CodeGenCUDA, c: Call) -> str:
    return "((int)threadIdx.x & 31)"


@_reg("cuda.warp_id")
def _warp_id(cg: CodeGenCUDA, c: Call) -> str:
    return "__shfl_sync(0xffffffffu, (int)threadIdx.x >> 5, 0)"


_reg("cuda.cta_sync")(lambda cg, c: "__syncthreads()")
_reg("cuda.warp_sync")(lambda cg, c: "__syncwarp()")
_reg("cuda.threadfence")(lambda cg, c: "__threadfence()")


@_reg("cuda.cluster_sync")
def _cluster_sync(cg: CodeGenCUDA, c: Call) -> str:
    cg.features.add("cluster")
    return "tirx_cluster_sync()"


def _shfl(fn: str):
    def h(cg: CodeGenCUDA, c: Call) -> str:
        v, lane = c.args
        t = v.ty
        if not isinstance(t, PrimType) or t.lanes != 1:
            raise OpError(f"op T.{c.op.name}: the cuda backend shuffles scalars only, got {t}")
        if t.is_bool or (t.is_int and t.bits < 32):
            return f"(({_C_SCALAR[t.base]}){fn}(0xffffffffu, (int){cg.wrap(v, 15)}, {cg.expr(lane)}))"
        return f"{fn}(0xffffffffu, {cg.expr(v)}, {cg.expr(lane)})"

    return h


_reg("cuda.shfl_sync")(_shfl("__shfl_sync"))
_reg("cuda.shfl_xor_sync")(_shfl("__shfl_xor_sync"))
_reg("cuda.shfl_down_sync")(_shfl("__shfl_down_sync"))
_reg("cuda.shfl_up_sync")(_shfl("__shfl_up_sync"))


def _warp_red(which: str):
    def h(cg: CodeGenCUDA, c: Call) -> str:
        t = c.args[0].ty
        if not isinstance(t, PrimType) or t.lanes != 1 or t.is_bool:
            raise OpError(f"op T.{c.op.name}: the cuda backend reduces numeric scalars only, got {t}")
        cg.features.add("warp")
        return f"tirx_warp_{which}({cg.expr(c.args[0])})"

    return h


_reg("cuda.warp_sum")(_warp_red("sum"))
_reg("cuda.warp_max")(_warp_red("max"))
_reg("cuda.warp_min")(_warp_red("min"))


def _atomic(kind: str):
    def h(cg: CodeGenCUDA, c: Call) -> str:
        p, v = c.args[0], c.args[1]
        t = v.ty
        el = p.ty.element
        if el != t:
            raise _error(f"T.{c.op.name}: pointer element {el} differs from value dtype {t}", c)
        ps, vs = cg.expr(p), cg.expr(v)
        if kind == "add":
            if t.base == "int64":
                cg.features.add("atomic")
                return f"tirx_atomic_add({ps}, {vs})"
            if t.base in ("int32", "uint32", "uint64", "float32", "float64", "float16", "bfloat16"):
                return f"atomicAdd({ps}, {vs})"
        elif kind in ("max", "min"):
            if t.base in ("int32", "uint32", "uint64", "int64", "float32"):
                cg.features.add("atomic")
                return f"tirx_atomic_{kind}({ps}, {vs})"
        elif kind == "exch":
            if t.base in ("int32", "uint32", "uint64", "float32"):
                return f"atomicExch({ps}, {vs})"
        elif kind == "cas" and t.base in ("int32", "uint32", "uint64", "uint16"):
            return f"atomicCAS({ps}, {vs}, {cg.expr(c.args[2])})"
        raise OpError(f"op T.{c.op.name}: the cuda backend has no {t} form")

    return h


_reg("cuda.atomic_add")(_atomic("add"))
_reg("cuda.atomic_max")(_atomic("max"))
_reg("cuda.atomic_min")(_atomic("min"))
_reg("cuda.atomic_exch")(_atomic("exch"))
_reg("cuda.atomic_cas")(_atomic("cas"))


# --------------------------------------------------------------------------- inline PTX
_PH = re.compile(r"\{\{|\}\}|\{(\w+)(?::(\w+))?\}")


def _constraint(t: Any) -> tuple[str, str]:
    """(constraint letter, C type used for the register) of a value type."""
    if isinstance(t, PointerType):
        return "l", "uint64_t"
    if not isinstance(t, PrimType) or t.lanes != 1:
        raise OpError(f"inline PTX: operands must be scalars or pointers, got {t}")
    if t.is_bool:
        return "r", "unsigned int"
    if t.base in ("float32",):
        return "f", "float"
    if t.base == "float64":
        return "d", "double"
    if t.bits == 64:
        return "l", "uint64_t"
    if t.bits == 16:
        return "h", "unsigned short"
    return "r", "unsigned int"


def _as_reg(cg: CodeGenCUDA, e: Any) -> str:
    t = e.ty
    if isinstance(t, PointerType):
        return f"(uint64_t){cg.wrap(e, 15)}"
    if t.base == "float16":
        return f"__half_as_ushort({cg.expr(e)})"
    if t.base == "bfloat16":
        return f"__bfloat16_as_ushort({cg.expr(e)})"
    if t.is_bool or (t.is_int and t.bits < 32 and t.bits != 16):
        return f"(unsigned){cg.wrap(e, 15)}"
    return cg.expr(e)


def asm_call(
    cg: CodeGenCUDA, c: Call, template: str, operands: list, volatile: bool, out_var: str | None = None
):
    """Emit ``template`` over ``operands``; returns an expression (or a statement for void)."""
    outs: list[tuple[str, str]] = []  # (constraint, lvalue)
    ins: list[tuple[str, str]] = []
    slots: dict[tuple, tuple[str, int]] = {}
    res_t = c.ty
    has_res = not isinstance(res_t, VoidType)
    res_reg = None
    if has_res:
        letter, rct = _constraint(res_t)
        res_reg = ("r", rct) if (isinstance(res_t, PrimType) and res_t.is_bool) else (letter, rct)

    def ref(key: Any, mod: str | None) -> str:
        k = (key, mod)
        if k in slots:
            kind, i = slots[k]
            return f"%{i}" if kind == "out" else f"%@{i}"
        if key == "out":
            if not has_res:
                raise _error(f"inline PTX for T.{c.op.name}: {{out}} used but the call has no result type", c)
            outs.append((f"={res_reg[0]}", "tirx_r"))
            slots[k] = ("out", len(outs) - 1)
            return f"%{len(outs) - 1}"
        try:
            i = int(key)
            e = operands[i]
        except (ValueError, IndexError):
            raise _error(
                f"inline PTX for T.{c.op.name}: placeholder {{{key}}} names no operand "
                f"(there are {len(operands)})",
                c,
            ) from None
        if mod in ("out", "inout"):
            if not isinstance(e, BufferLoad):
                raise _error(
                    f"inline PTX: operand {i} is an output ({{{i}:{mod}}}) and must be a buffer element", c
                )
            letter, _ = _constraint(e.ty)
            outs.append(("=" + letter if mod == "out" else "+" + letter, cg.expr(e)))
            slots[k] = ("out", len(outs) - 1)
            return f"%{len(outs) - 1}"
        if mod == "smem":
            if not isinstance(e.ty, PointerType):
                raise _error(f"inline PTX: operand {i} ({{{i}:smem}}) must be a pointer", c)
            ins.append(("r", f"(unsigned)__cvta_generic_to_shared({cg.expr(e)})"))
        elif mod == "imm":
            if not isinstance(e, IntImm):
                raise _error(f"inline PTX: operand {i} ({{{i}:imm}}) must be an integer literal", c)
            ins.append(("n", str(e.value)))
        elif mod is None:
            letter, _ = _constraint(e.ty)
            ins.append((letter, _as_reg(cg, e)))
        else:
            raise _error(f"inline PTX: unknown placeholder modifier {mod!r} (use smem, imm, out, inout)", c)
        slots[k] = ("in", len(ins) - 1)
        return f"%@{len(ins) - 1}"

    def sub(m: re.Match) -> str:
        t = m.group(0)
        if t == "{{":
            return "{"
        if t == "}}":
            return "}"
        return ref(m.group(1), m.group(2))

    body = _PH.sub(sub, template.replace("%", "%%"))
    # inputs are numbered after the outputs
    body = re.sub(r"%@(\d+)", lambda m: f"%{len(outs) + int(m.group(1))}", body)
    text = body.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n\\t")
    out_s = ", ".join(f'"{k}"({v})' for k, v in outs)
    in_s = ", ".join(f'"{k}"({v})' for k, v in ins)
    vol = "asm volatile" if volatile else "asm"
    parts = [f'"{text}"', out_s, in_s] + (['"memory"'] if volatile else [])
    while len(parts) > 1 and not parts[-1]:
        parts.pop()
    stmt = f"{vol}({' : '.join(p if p else '' for p in parts)})".replace(" :  : ", " : : ")
    if not has_res:
        return stmt
    rct = res_reg[1]
    if out_var is not None:
        return stmt.replace("(tirx_r)", f"({out_var})", 1), rct
    conv = "tirx_r"
    if res_t.is_bool if isinstance(res_t, PrimType) else False:
        conv = "tirx_r != 0"
    elif isinstance(res_t, PointerType):
        conv = f"({cg.ctype(res_t)})tirx_r"
    elif res_t.base == "float16":
        conv = "__ushort_as_half(tirx_r)"
    elif res_t.base == "bfloat16":
        conv = "__ushort_as_bfloat16(tirx_r)"
    elif rct != cg.ctype(res_t):
        conv = f"({cg.ctype(res_t)})tirx_r"
    return f"[&]() {{ {rct} tirx_r; {stmt}; return {conv}; }}()"


@_reg("ptx.asm")
def _ptx_asm(cg: CodeGenCUDA, c: Call):
    tmpl = c.args[0]
    if not isinstance(tmpl, StringImm):
        raise _error("T.ptx.asm: the first argument must be the PTX template string", c)
    return asm_call(cg, c, tmpl.value, list(c.args[1:]), volatile=True)


def _template_handler(template: str, pure: bool):
    def h(cg: CodeGenCUDA, c: Call):
        return asm_call(cg, c, template, list(c.args), volatile=not pure)

    return h


def generic_handler(op: Any):
    """Handler for ops declared with ``extra={"ptx": template}`` (no Python code per op)."""
    extra = op.extra
    if isinstance(extra, dict) and isinstance(extra.get("ptx"), str):
        return _template_handler(extra["ptx"], op.pure)
    return None


def emit_asm_bind(cg: CodeGenCUDA, s: Any) -> bool:
    """``x = <asm with a result>``: declare ``x`` and let the asm write it directly."""
    c = s.value
    op = c.op
    if op.name == "ptx.asm":
        if not isinstance(c.args[0], StringImm):
            return False
        tmpl, operands, vol = c.args[0].value, list(c.args[1:]), True
    else:
        extra = op.extra
        if not (isinstance(extra, dict) and isinstance(extra.get("ptx"), str)):
            return False
        tmpl, operands, vol = extra["ptx"], list(c.args), not op.pure
    t = c.ty
    if not isinstance(t, PrimType) or t.is_bool or t.base in ("float16", "bfloat16") or t.lanes != 1:
        return False
    _, rct = _constraint(t)
    if rct != cg.ctype(t) and not (t.base in ("int32", "uint32") or (t.bits == 64 and t.is_int)):
        return False
    name = cg.define(s.var)
    stmt, _ = asm_call(cg, c, tmpl, operands, vol, out_var=name)
    cg.line(f"{cg.ctype(t)} {name};", s)
    if rct != cg.ctype(t):
        stmt = stmt.replace(f"({name})", f"(*({rct}*)&{name})", 1)
    cg.line(f"{stmt};", s)
    return True


# --------------------------------------------------------------------------- DSMEM / shared
@_reg("ptx.cvta_to_shared")
def _cvta(cg: CodeGenCUDA, c: Call) -> str:
    return f"((unsigned)__cvta_generic_to_shared({cg.expr(c.args[0])}))"


def _mapa(cg: CodeGenCUDA, c: Call, as_pointer: bool):
    x, rank = c.args
    xs = f"(uint64_t){cg.wrap(x, 15)}"  # a generic address, from a pointer or a raw uint64
    stmt = (
        f'asm volatile("mapa.u64 %0, %1, %2;" : "=l"(tirx_r) : "l"({xs}), "r"((unsigned){cg.wrap(rank, 15)}))'
    )
    conv = f"({cg.ctype(c.ty)})tirx_r" if as_pointer and isinstance(c.ty, PointerType) else "tirx_r"
    return f"[&]() {{ uint64_t tirx_r; {stmt}; return {conv}; }}()"


@_reg("ptx.map_shared_rank")
def _map_shared_rank(cg: CodeGenCUDA, c: Call) -> str:
    # generic-address mapa: the result is a generic address of the same shared location in
    # CTA `rank` of the cluster, usable by plain loads and stores
    return _mapa(cg, c, as_pointer=False)


@_reg("ptx.mapa")
def _ptx_mapa(cg: CodeGenCUDA, c: Call) -> str:
    return _mapa(cg, c, as_pointer=True)


OP_FALLBACKS["generic_handler"] = generic_handler
OP_FALLBACKS["emit_asm_bind"] = emit_asm_bind
