"""IR -> CUDA C++.

``generate(f_or_module)`` returns a :class:`CudaSource`: the translation unit, one
:class:`KernelInfo` per ``DeviceEntry`` function (its C parameter list and launch
configuration, which the runtime uses to check and pack arguments) and a map from
generated line numbers to IR spans (used to map NVRTC errors back to the script).

Layout of the output:

* a prelude with only what the kernels use (fixed-width typedefs, fp16/bf16/fp8
  headers, floor division helpers, vector structs, warp reductions, PTX helpers);
* prototypes of ``__device__`` helpers (module functions without a device entry that
  kernels call, or private ones), then their definitions;
* one ``extern "C" __global__`` kernel per function with a ``DeviceEntry``.

Semantics kept exactly: ``FloorDiv``/``FloorMod`` round toward negative infinity
(helpers unless the dividend is provably non-negative and the divisor positive), ``Div``/
``Mod`` truncate like C. With ``wrap_int`` (the default) signed 32/64-bit ``+ - * <<`` wrap
around as in the IR: an operation is computed in the unsigned type where the interval
analysis (``tirx.ir.bounds``) cannot prove its exact result fits, and shifts whose amount is
not provably in ``[0, bits)`` use helpers with the IR's rule (amounts are read as unsigned;
``>= bits`` gives 0, or the sign fill for ``>>``). Variable ranges come from where variables
are defined: dynamic shapes ``[0, max]``, thread/block indices from the launch
configuration (and the hardware limits), loop variables from their bounds, bindings from
their values.
"""

from __future__ import annotations

import math
import re
from typing import Any, cast

import attrs

from ..errors import DiagnosticError, OpError
from ..ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    AllocBuffer,
    And,
    Assert,
    AttrStmt,
    Bind,
    Break,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    Continue,
    DeclBuffer,
    DeviceEntry,
    Div,
    Evaluate,
    FloatImm,
    For,
    ForKind,
    Function,
    GlobalVar,
    IfThenElse,
    IntImm,
    Let,
    Mod,
    Module,
    Mul,
    Not,
    Or,
    PointerType,
    PrimExpr,
    PrimType,
    Ramp,
    Return,
    SeqStmt,
    Shl,
    Shr,
    Stmt,
    StringImm,
    Sub,
    Var,
    VoidType,
    While,
    convert,
    deep,
)
from ..ir import op as _op
from ..ir.arith import int_range, wrap
from ..ir.bounds import Bounds, local_ranges
from ..ir.op import PTX, CExpr, Helper
from ..ir.operators import BY_NODE, C_PREC_PRIMARY, C_PREC_UNARY, OPERATORS
from ..ir.stmt import DISABLE_UNROLL, PRAGMA_UNROLL, UNROLL_FACTOR
from ..ir.types import DTYPE_NAMES, prim
from ..ir.visitor import Visitor
from .asm import asm_bind, asm_call

__all__ = ["CudaSource", "KernelInfo", "KernelParam", "generate"]

BACKEND = "cuda"

# --------------------------------------------------------------------------- types
_C_SCALAR = {
    "bool": "bool",
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "int64": "int64_t",
    "uint8": "unsigned char",
    "uint16": "unsigned short",
    "uint32": "unsigned int",
    "uint64": "uint64_t",
    "float16": "half",
    "bfloat16": "__nv_bfloat16",
    "float32": "float",
    "float64": "double",
    "float8_e4m3fn": "__nv_fp8_e4m3",
    "float8_e5m2": "__nv_fp8_e5m2",
    "float8_e8m0fnu": "__nv_fp8_e8m0",
    "float6_e2m3fn": "__nv_fp6_e2m3",
    "float6_e3m2fn": "__nv_fp6_e3m2",
    "float4_e2m1fn": "__nv_fp4_e2m1",  # one element per byte, as tirx lays every minifloat out
}
# minifloats CUDA (cuda_fp8.h / cuda_fp6.h / cuda_fp4.h) has no type for: a codegen error
_NO_C_TYPE = frozenset(("float8_e3m4", "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2fnuz"))
_MINI_FEATURE = {"float8": "fp8", "float6": "fp6", "float4": "fp4"}
# CUDA's own vector types, where they exist with the natural alignment
# (others are tirx_vec<T, N>: aligned like the CUDA vector types, with elementwise operators)
_C_VECTOR = {
    ("float16", 2): "half2",
    ("bfloat16", 2): "__nv_bfloat162",
}

_KEYWORDS = set(
    [
        "alignas",
        "alignof",
        "and",
        "asm",
        "auto",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "class",
        "const",
        "constexpr",
        "const_cast",
        "continue",
        "decltype",
        "default",
        "delete",
        "do",
        "double",
        "dynamic_cast",
        "else",
        "enum",
        "explicit",
        "export",
        "extern",
        "false",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "not",
        "nullptr",
        "operator",
        "or",
        "private",
        "protected",
        "public",
        "register",
        "reinterpret_cast",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "static_assert",
        "static_cast",
        "struct",
        "switch",
        "template",
        "this",
        "throw",
        "true",
        "try",
        "typedef",
        "typeid",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "while",
        "xor",
        "threadIdx",
        "blockIdx",
        "blockDim",
        "gridDim",
        "warpSize",
        "half",
        "half2",
        "float2",
        "float4",
        "int2",
        "int4",
        "uint2",
        "uint4",
        "double2",
        "min",
        "max",
        "abs",
        "main",
        "printf",
        "memcpy",
        "int64_t",
        "uint64_t",
        "uint32_t",
        "int32_t",
    ]
)


@attrs.define
class KernelParam:
    """One C parameter of a kernel, in order."""

    kind: str  # "buffer" | "scalar" | "handle" | "dyn" | "host"
    name: str  # the IR name (for error messages)
    c_name: str
    ty: Any  # PrimType | PointerType
    var: Var
    buffer: Buffer | None = None
    written: bool = False
    align: int = 0  # required byte alignment of the data pointer (vector accesses)


@attrs.define
class KernelInfo:
    name: str  # C symbol
    func: Function
    entry: DeviceEntry
    params: list  # list[KernelParam]
    host_stmts: list  # Bind/Assert before the device entry, then maybe the Return after it (host code)
    dyn_vars: list  # list[Var]


@attrs.define
class CudaSource:
    text: str
    kernels: list  # list[KernelInfo]
    line_spans: dict  # 1-based line -> span
    features: frozenset = frozenset()

    def __str__(self) -> str:
        return self.text


def _error(msg: str, node: Any = None) -> DiagnosticError:
    span = getattr(node, "span", None)
    if span is not None:
        inner = getattr(span, "innermost", span)
        return DiagnosticError(f"{inner}: error: {msg}", span=span)
    return DiagnosticError(msg)


# --------------------------------------------------------------------------- analysis
class _Usage(Visitor):
    """Which buffers are written, widest vector access per buffer data var, used vars."""

    def __init__(self) -> None:
        self.written: set = set()
        self.align: dict = {}
        self.used_vars: set = set()
        self.calls: set = set()
        # (data var, index, bytes) of each T.is_aligned(T.address_of(X[i]), bytes) in the
        # and-chain conditions around the statement: a vector access at exactly that element
        # needs no alignment promise from the caller
        self.checked: list = []
        # int32 min / max operands and select arms, and let-bound values: for guarded_subs
        self.minmax_roots: list = []
        self.bound: dict = {}
        # data var -> widest element (bytes) of a tensor declared over it with another dtype:
        # the storage is reinterpreted (TIRx's ``T.decl_tensor(A.data, ...)``, ``A.view("uint32")``)
        self.views: dict = {}

    def visit_Var(self, v: Var) -> None:
        self.used_vars.add(v)

    def visit_Min(self, e: Any) -> None:
        if _is_int32(e.ty):
            self.minmax_roots += (e.a, e.b)
        self.generic_visit(e)

    visit_Max = visit_Min

    def visit_Select(self, e: Any) -> None:
        self.minmax_roots += (e.true_value, e.false_value)
        self.generic_visit(e)

    def visit_Bind(self, s: Any) -> None:
        self.bound[s.var] = s.value
        self.generic_visit(s)

    visit_Let = visit_Bind

    def guarded_subs(self) -> set[int]:
        """The ids of the int32 ``Sub`` nodes whose value is an operand of an int32 min / max
        or an arm of a select, directly or through let-bound variables (_P_NEG): NVVM may fold
        the subtraction's left side to 0 where tirx cannot see it (``(v - v) - t``), and ptxas
        13.0 then drops the negation inside the three-input min / max it forms."""
        out: set[int] = set()
        seen: set[int] = set()
        roots = list(self.minmax_roots)
        while roots:
            x = roots.pop()
            if id(x) in seen:
                continue
            seen.add(id(x))
            if isinstance(x, Var) and x in self.bound:
                roots.append(self.bound[x])
            elif isinstance(x, Sub) and _is_int32(x.ty):
                out.add(id(x))
        return out

    def _access(self, buf: Buffer, indices: tuple) -> None:
        self.used_vars.add(buf.data)
        lanes = 1
        for x in indices:
            if isinstance(x.ty, PrimType) and x.ty.lanes > 1:
                lanes = x.ty.lanes
        if lanes > 1 and not self._checked(buf, indices, buf.dtype.bytes * lanes):
            width = buf.dtype.bytes * lanes
            a = 1
            while a * 2 <= min(width, 16) and width % (a * 2) == 0:
                a *= 2
            self.align[buf.data] = max(self.align.get(buf.data, 0), a)

    def visit_BufferLoad(self, e: BufferLoad) -> None:
        self._access(e.buffer, e.indices)
        self.generic_visit(e)

    def visit_BufferStore(self, s: BufferStore) -> None:
        self.written.add(s.buffer.data)
        self._access(s.buffer, s.indices)
        self.generic_visit(s)

    def _checked(self, buf: Buffer, indices: tuple, width: int) -> bool:
        from ..ir.structural import structural_equal

        if len(indices) != 1 or not isinstance(indices[0], Ramp):
            return False
        base = indices[0].base
        return any(d is buf.data and n >= width and structural_equal(i, base) for d, i, n in self.checked)

    def visit_IfThenElse(self, s: Any) -> None:
        self.visit(s.cond)
        n = len(self.checked)
        self.checked += _aligned_operands(s.cond)
        self.visit(s.then_case)
        del self.checked[n:]
        self.visit(s.else_case)

    def visit_Call(self, c: Call) -> None:
        if not isinstance(c.op, GlobalVar) and c.op.traits.select:  # its arms (guarded_subs)
            self.minmax_roots += c.args[1:]
        if isinstance(c.op, GlobalVar):
            self.calls.add(c.op.name)
        elif c.op.traits.alignment_test and _is_address_of_load(c.args[0]):
            self.visit(c.args[0].args[0])  # reads the address only: not a write
            return
        else:
            # pointers handed to ops (atomics, asm, address_of) may be written
            if c.op.traits.takes_address and isinstance(c.args[0], BufferLoad):
                self.written.add(c.args[0].buffer.data)
            for a in c.args:
                if isinstance(a.ty, PointerType) and isinstance(a, Var):
                    self.written.add(a)
                elif not c.op.pure and isinstance(a, BufferLoad):
                    # inline PTX may write a buffer element operand ({i:out} / {i:inout})
                    self.written.add(a.buffer.data)
        self.generic_visit(c)

    def visit_buffer(self, b: Buffer) -> None:
        self.generic_visit(b)

    def visit_DeclBuffer(self, s: Any) -> None:
        b = s.buffer
        if cast(PointerType, b.data.ty).element != b.dtype:
            self.views[b.data] = max(self.views.get(b.data, 0), b.dtype.bytes)
        self.generic_visit(s)


def _is_address_of_load(e: Any) -> bool:
    return (
        isinstance(e, Call)
        and isinstance(e.op, _op.Op)
        and e.op.traits.takes_address
        and isinstance(e.args[0], BufferLoad)
    )


def _aligned_operands(cond: Any) -> list:
    """``(data var, index, bytes)`` of each 1-D element address ``T.is_aligned`` checks in the
    and-chain ``cond``."""
    out: list = []
    stack = [cond]
    while stack:
        e = stack.pop()
        if isinstance(e, And):
            stack += [e.a, e.b]
        elif (
            isinstance(e, Call)
            and isinstance(e.op, _op.Op)
            and e.op.traits.alignment_test
            and _is_address_of_load(e.args[0])
        ):
            ld, n = e.args[0].args[0], e.args[1]
            if len(ld.indices) == 1 and isinstance(n, IntImm):
                out.append((ld.buffer.data, ld.indices[0], n.value))
    return out


def _split_host(f: Function) -> tuple[list, DeviceEntry | None]:
    """Statements before the device entry, and the entry itself."""
    body = f.body
    stmts = list(body.stmts) if isinstance(body, SeqStmt) else [body]
    host: list = []
    entry = None
    ret = None
    for i, s in enumerate(stmts):
        if isinstance(s, DeviceEntry):
            entry = s
            rest = [r for r in stmts[i + 1 :] if not (isinstance(r, SeqStmt) and not r.stmts)]
            if len(rest) == 1 and isinstance(rest[0], Return) and rest[0].value is not None:
                ret = rest[0]  # the host returns a value after the launch (TIRx's `return n`)
                rest = []
            for r in rest:
                raise _error(
                    f"function {f.name}: statements after the device entry are not supported by the cuda "
                    "target (only a final `return <value computed on the host>`)",
                    r,
                )
            break
        host.append(s)
    if entry is None:
        return host, None
    for s in host:
        if type(s).__name__ == "RegionStmt":  # TIRx's host regions
            where = " outside a device entry" if s.kind == "launch_thread" else ""
            raise _error(f"T.{s.kind}{where} is not supported by the CUDA backend", s)
        if not isinstance(s, (Bind, Assert)) and not (isinstance(s, SeqStmt) and not s.stmts):
            raise _error(
                f"function {f.name}: only bindings and asserts may precede the device entry on the cuda "
                f"target, got {type(s).__name__}",
                s,
            )
    if ret is not None:
        host.append(ret)  # last of the host statements: evaluated after the launch
    return host, entry


def _contains_entry(s: Stmt) -> bool:
    class _F(Visitor):
        found = False

        def visit_DeviceEntry(self, n):
            self.found = True

    v = _F()
    v.visit(s)
    return v.found


# --------------------------------------------------------------------------- emitter
# conversions to a half type that a detour through float would round twice (the IR rounds
# once, to nearest even): float64 -> float16/bfloat16/float8, and 32/64-bit integers -> bfloat16
# (an int32 -> float16 detour is exact wherever the result is finite)
_ROUND_ONCE = {
    ("float64", "float16"): "__double2half",
    ("float64", "bfloat16"): "__double2bfloat16",
    ("float64", "float8_e4m3fn"): "__nv_fp8_e4m3",  # its double constructor rounds once
    ("float64", "float8_e5m2"): "__nv_fp8_e5m2",
    ("float64", "float8_e8m0fnu"): "__nv_fp8_e8m0",
    ("float64", "float6_e2m3fn"): "__nv_fp6_e2m3",
    ("float64", "float6_e3m2fn"): "__nv_fp6_e3m2",
    ("float64", "float4_e2m1fn"): "__nv_fp4_e2m1",
    ("int32", "bfloat16"): "__int2bfloat16_rn",
    ("uint32", "bfloat16"): "__uint2bfloat16_rn",
    ("int64", "bfloat16"): "__ll2bfloat16_rn",
    ("uint64", "bfloat16"): "__ull2bfloat16_rn",
}
_MINI_BASES = tuple(n for n in DTYPE_NAMES if prim(n).is_minifloat)
_PREC_PRIMARY = C_PREC_PRIMARY
_PREC_UNARY = C_PREC_UNARY
# C++ spelling and precedence from the one operator table (tirx/ir/operators.py)
_BIN = {o.node: (o.c_text, o.c_prec) for o in OPERATORS if o.c_text is not None and not o.unary}
_BITWISE = tuple(o.node for o in OPERATORS if o.kind == "bitwise" and not o.unary)
_NOT_C = BY_NODE[Not].c_text


def _narrow_int(t: Any) -> bool:
    """8/16-bit scalar integers, which C++ promotes to int before arithmetic."""
    return isinstance(t, PrimType) and t.is_int and t.lanes == 1 and t.bits < 32


def _wide_int(t: Any) -> bool:
    """32/64-bit scalar integers (C++ computes them in their own type)."""
    return isinstance(t, PrimType) and t.is_int and t.lanes == 1 and t.bits >= 32


# hardware limits of the launch configuration: the largest grid and block per axis
_MAX_GRID = {"x": 2**31 - 1, "y": 65535, "z": 65535}
_MAX_BLOCK = {"x": 1024, "y": 1024, "z": 64}
_MAX_CLUSTER = 16  # blocks per cluster (non-portable maximum on sm_90)

_C_FLOAT_FN = {"fmod": ("fmodf", "fmod"), "floor": ("floorf", "floor")}  # float Mod / FloorDiv


class CodeGenCUDA:
    """Generates one translation unit. Op lowerings (``tirx/ops``) call back into it through
    ``expr``/``wrap``/``ctype``/``error``/``need``/``asm``... and never import it."""

    def __init__(self, restrict: bool = True, wrap_int: bool = True) -> None:
        self.restrict = restrict
        # wrap_int: signed + - * << wrap around (two's complement) as the IR defines them
        # (computed in the unsigned type where the bounds analysis cannot prove the exact
        # result fits), and shift amounts follow the IR's rule; False: plain C++ operators
        # (signed overflow and out-of-range shift amounts undefined)
        self.wrap_int = wrap_int
        self.features: set[str] = set()
        self.helpers: dict[str, Helper] = {}  # C++ helpers of the ops used, in dependency order
        self.lines: list[str] = []
        self.line_spans: dict[int, Any] = {}
        self.indent = 0
        self._last_loc: Any = None
        self._cur_span: Any = None
        self.names: dict[Any, str] = {}
        self._taken: set[str] = set()
        # value ranges of integer expressions (variables are recorded where they are defined)
        self.bounds = Bounds(call_range=self._call_range)
        self.launch_ranges: dict = {}  # op name, axis -> (lo, hi) for this kernel's launch
        self._address_arith: set = set()  # Add/Mul nodes made by flat_index (plain C++)
        self.layout_arith: set = set()  # the same, made by tirx.passes.layout for tensors with a layout
        self.buf_ptr: dict[Buffer, str] = {}
        self.scalar_bufs: set = set()
        self.view_bytes: dict = {}  # data var -> widest element of a view of another dtype over it
        self.tmem_vars: set = set()  # data vars of T.tmem declarations (no C object)
        self.dyn_smem_offset = 0
        self.in_kernel = False
        self.func: Function | None = None
        self.module: Module | None = None
        self.ret_ty: Any = None
        self._guard_subs: set[int] = set()  # ids of int32 Subs written a + tirx_neg(b) (_P_NEG)
        self._guards: dict[str, set[int]] = {}  # the same, per function of the module

    # -- names ----------------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        base = re.sub(r"[^0-9A-Za-z_]", "_", hint or "v") or "v"
        if base[0].isdigit():
            base = "v_" + base
        if base in _KEYWORDS or base.startswith("tirx_") or base.startswith("__"):
            base = base.lstrip("_") + "_"
            if base in _KEYWORDS:
                base = base + "v"
        name = base
        k = 1
        while name in self._taken:
            name = f"{base}_{k}"
            k += 1
        self._taken.add(name)
        return name

    def var_name(self, v: Var) -> str:
        n = self.names.get(v)
        if n is None:
            if v in self.tmem_vars:
                raise _error(
                    f"buffer {v.name!r} lives in tensor memory (scope 'tmem'): it has no address in the "
                    "kernel; reach it with the tcgen05 ld/st/mma instructions through a tmem address",
                    v,
                )
            raise _error(f"variable {v.name!r} is used outside of its scope (no definition reaches it)", v)
        return n

    def define(self, v: Var, hint: str | None = None) -> str:
        n = self.fresh(hint or v.name)
        self.names[v] = n
        return n

    # -- the interface op lowerings use ---------------------------------------------------
    @staticmethod
    def error(msg: str, node: Any = None) -> DiagnosticError:
        """A located error for ``node`` (raise it)."""
        return _error(msg, node)

    @staticmethod
    def c_scalar(base: str) -> str:
        """The C type of a scalar dtype name."""
        return _C_SCALAR[base]

    @staticmethod
    def add_index(a: PrimExpr, b: PrimExpr) -> PrimExpr:
        """``a + b`` folded as index arithmetic is."""
        return _add(a, b)

    def need(self, helper: Helper) -> None:
        """Emit ``helper`` (after its dependencies) in this translation unit's prelude."""
        if helper.name in self.helpers:
            if self.helpers[helper.name] is not helper:
                raise OpError(f"two different C++ helpers are named {helper.name!r}")
            return
        for d in helper.deps:
            self.need(d)
        self.helpers[helper.name] = helper

    def asm(self, c: Call, template: str, operands: list, volatile: bool) -> Any:
        """Inline PTX for ``c`` (tirx/codegen/asm.py)."""
        return asm_call(self, c, template, operands, volatile)

    def lower_call(self, e: Call) -> tuple[str, int]:
        """A call of a declared op, through its cuda implementation."""
        op = e.op
        spec = _op.impl(BACKEND, op)
        if spec is None:
            raise OpError(f"op T.{op.name} has no handler in the cuda backend")
        if isinstance(spec, PTX):
            tmpl, operands = self._ptx_template(spec, e)
            r = asm_call(self, e, tmpl, operands, volatile=not op.pure)
        elif isinstance(spec, CExpr):
            for h in spec.helpers:
                self.need(h)
            r = _fill_c(self, spec.template, e)
        else:
            r = spec(self, e)
        if isinstance(r, tuple):
            return r
        return r, _PREC_PRIMARY

    def _ptx_template(self, spec: PTX, e: Call) -> tuple[str, list]:
        if spec.template is not None:
            return spec.template, list(e.args)
        t = e.args[0] if e.args else None
        if not isinstance(t, StringImm):
            raise _error(f"T.{e.op.name}: the first argument must be the PTX template string", e)
        return t.value, list(e.args[1:])

    def _bind_asm(self, s: Bind) -> bool:
        """``x = <inline PTX with a result>``: the asm writes ``x`` directly."""
        c = cast(Call, s.value)  # the caller checked it is an op Call
        spec = _op.impl(BACKEND, c.op)
        if not isinstance(spec, PTX):
            return False
        if spec.template is None and not (c.args and isinstance(c.args[0], StringImm)):
            return False
        tmpl, operands = self._ptx_template(spec, c)
        return asm_bind(self, s, tmpl, operands, not c.op.pure)

    def _c_float_fn(self, name: str, t: PrimType, args: list) -> str:
        """``fmod``/``floor`` of a float type, computed in float32 for the half types."""
        f32, f64 = _C_FLOAT_FN[name]
        if t.base == "float64":
            return f"{f64}({', '.join(self.expr(a) for a in args)})"
        if t.base == "float32":
            return f"{f32}({', '.join(self.expr(a) for a in args)})"
        return f"{self.ctype(t)}({f32}({', '.join('float(' + self.expr(a) + ')' for a in args)}))"

    # -- output ---------------------------------------------------------------------
    def line(self, text: str, node: Any = None) -> None:
        span = getattr(node, "span", None) if node is not None else None
        if span is not None:
            self._cur_span = span
            inner = getattr(span, "innermost", span)
            loc = (inner.source, inner.line)
            if loc != self._last_loc:
                self._last_loc = loc
                self.lines.append("  " * self.indent + f"// {_comment(inner.source)}:{inner.line}")
        self.lines.append("  " * self.indent + text)
        if self._cur_span is not None:
            self.line_spans[len(self.lines)] = self._cur_span

    # -- types ----------------------------------------------------------------------
    def ctype(self, t: Any, what: str = "type") -> str:
        if isinstance(t, PrimType):
            if t.base in ("float16",):
                self.features.add("fp16")
            elif t.base == "bfloat16":
                self.features.add("bf16")
            elif t.is_minifloat:
                if t.base in _NO_C_TYPE:
                    raise _error(
                        f"cuda codegen: dtype {t} has no CUDA type (cuda_fp8.h, cuda_fp6.h and cuda_fp4.h "
                        "define e4m3, e5m2, e8m0, fp6 e2m3/e3m2 and fp4 e2m1); the interpreter runs it"
                    )
                self.features.update((_MINI_FEATURE[t.kind], "fp8", "fp16"))
            el = _C_SCALAR[t.base]
            if t.lanes == 1:
                return el
            v = _C_VECTOR.get((t.base, t.lanes))
            if v is not None:
                return v
            self.features.add("vec")
            return f"tirx_vec<{el}, {t.lanes}>"
        if isinstance(t, PointerType):
            pel = t.element
            inner = "void" if isinstance(pel, VoidType) else self.ctype(pel)
            return f"{inner}*"
        if isinstance(t, VoidType):
            return "void"
        raise _error(f"cuda codegen: {what} {t} has no C type")

    # -- expressions ----------------------------------------------------------------
    def expr(self, e: PrimExpr) -> str:
        return self._expr(e)[0]

    def wrap(self, e: PrimExpr, prec: int) -> str:
        s, p = self._expr(e)
        return s if p >= prec else f"({s})"

    def _expr(self, e: PrimExpr) -> tuple[str, int]:
        meth = getattr(self, "e_" + type(e).__name__, None)
        if meth is None:
            raise _error(f"cuda codegen: unsupported expression {type(e).__name__}", e)
        return meth(e)

    def e_Var(self, e: Var):
        if e in self.scalar_bufs:  # the data pointer of a one-element local held as a C scalar
            return f"(&{self.var_name(e)})", _PREC_PRIMARY
        return self.var_name(e), _PREC_PRIMARY

    def e_IntImm(self, e: IntImm):
        t, v = e.ty, e.value
        if t.is_bool:
            return ("true" if v else "false"), _PREC_PRIMARY
        b = t.base
        if b == "int32":
            if v == -(2**31):
                return "(-2147483647 - 1)", _PREC_PRIMARY
            return (str(v), _PREC_PRIMARY) if v >= 0 else (str(v), _PREC_UNARY)
        if b == "int64":
            if v == -(2**63):
                return "(-9223372036854775807LL - 1)", _PREC_PRIMARY
            return (f"{v}LL", _PREC_PRIMARY) if v >= 0 else (f"{v}LL", _PREC_UNARY)
        if b == "uint32":
            return f"{v}u", _PREC_PRIMARY
        if b == "uint64":
            return f"{v}ull", _PREC_PRIMARY
        return f"(({_C_SCALAR[b]}){v})", _PREC_PRIMARY

    def e_FloatImm(self, e: FloatImm):
        t, v = e.ty, e.value
        if math.isnan(v) and t.base in _NAN_AS:  # the very bits the interpreter holds (sign too)
            from ..ir.numerics import float_bits

            raw = float_bits(v, t)
            assert raw is not None  # (every dtype of _NAN_AS has its bits)
            bits = int.from_bytes(raw, "little")  # bfloat16: a float32 value
            bits = bits >> 16 if t.base == "bfloat16" else bits
            self.ctype(t)  # (the half types' header declares the __ushort_as_* intrinsics)
            return _NAN_AS[t.base].format(bits), _PREC_PRIMARY
        if math.isnan(v) or math.isinf(v):
            if t.base == "float64":
                bits64 = {
                    "nan": "0x7ff8000000000000ull",
                    "inf": "0x7ff0000000000000ull",
                    "-inf": "0xfff0000000000000ull",
                }
                return f"__longlong_as_double({bits64[_fname(v)]})", _PREC_PRIMARY
            bits32 = {"nan": "0x7fc00000", "inf": "0x7f800000", "-inf": "0xff800000"}
            f = f"__int_as_float({bits32[_fname(v)]})"
            if t.base == "float32":
                return f, _PREC_PRIMARY
            return f"{self.ctype(t)}({f})", _PREC_PRIMARY
        if t.base == "float16" and t.lanes == 1 and _f16_rounds_twice(v):
            # half(float literal) rounds twice (double -> float -> half); the constant means the
            # literal rounded once (tirx.ir.numerics), which differs near a half midpoint
            from ..ir.numerics import float_bits

            raw = float_bits(v, t)
            assert raw is not None
            self.ctype(t)
            return _NAN_AS["float16"].format(int.from_bytes(raw, "little")), _PREC_PRIMARY
        if t.base == "float64" or t.is_minifloat:  # a minifloat's double constructor rounds once
            s = repr(v)
            s = s if ("." in s or "e" in s) else s + ".0"
        else:
            s = repr(float(_to_f32(v)))
            s = (s if ("." in s or "e" in s) else s + ".0") + "f"
        neg = s.startswith("-")
        if t.base in ("float32", "float64"):
            return s, (_PREC_UNARY if neg else _PREC_PRIMARY)
        return f"{self.ctype(t)}({s})", _PREC_PRIMARY

    def e_StringImm(self, e: StringImm):
        return _c_string(e.value), _PREC_PRIMARY

    def _is_vec(self, t: Any) -> bool:
        return isinstance(t, PrimType) and t.lanes > 1

    def _binary(self, e: Any, op: str, prec: int):
        t = e.a.ty
        if isinstance(t, PrimType) and t.is_minifloat and t.lanes == 1:
            # fp8 has no arithmetic: compute in float32 and round once
            r = f"float({self.expr(e.a)}) {op} float({self.expr(e.b)})"
            if isinstance(e, (EQ, NE, LT, LE, GT, GE)):
                return r, prec
            return f"{self.ctype(t)}({r})", _PREC_PRIMARY
        if self._is_vec(e.a.ty) and (e.a.ty.lanes, e.a.ty.base) not in ((2, "float16"), (2, "bfloat16")):
            self.features.add("vec")
            self.ctype(e.a.ty)
        a, b = e.a, e.b
        if isinstance(e, (_BITWISE, EQ, NE, LT, LE, GT, GE)):
            # parenthesize non-primary operands of bitwise ops and comparisons for clarity
            lp = _PREC_UNARY if isinstance(e, _BITWISE) else prec
            return f"{self.wrap(a, lp)} {op} {self.wrap(b, lp + (0 if lp == _PREC_UNARY else 1))}", prec
        return f"{self.wrap(a, prec)} {op} {self.wrap(b, prec + 1)}", prec

    def _arith(self, e):
        op, prec = _BIN[type(e)]
        t = e.a.ty
        if isinstance(e, Mod) and isinstance(t, PrimType) and t.is_float:
            return self._c_float_fn("fmod", t, [e.a, e.b]), _PREC_PRIMARY
        if (
            isinstance(e, Div)
            and isinstance(t, PrimType)
            and t.lanes == 1
            and t.base in ("float16", "bfloat16")
        ):
            # cuda_fp16's operator/ (__hdiv) multiplies by an approximate reciprocal; the IR's
            # division rounds the quotient once (float32's IEEE division rounded to the type is)
            return f"{self.ctype(t)}(float({self.expr(e.a)}) / float({self.expr(e.b)}))", _PREC_PRIMARY
        if isinstance(e, (Div, Mod)) and self.div_may_overflow(e):
            # MIN / -1 and MIN % -1 are undefined in C++ (NVCC may fold them to anything); the
            # IR wraps the quotient (MIN) and the remainder is 0
            self.features.add("floordiv")
            name = "tirx_sdiv" if isinstance(e, Div) else "tirx_smod"
            return f"{name}<{self.ctype(t)}>({self.expr(e.a)}, {self.expr(e.b)})", _PREC_PRIMARY
        if isinstance(e, (Sub, Mul)) and _is_int32(t):
            g = self._guarded_negation(e)
            if g is not None:  # a toolchain bug: see _P_NEG
                self.features.add("neg")
                return g, _PREC_PRIMARY
        if self.wrap_int and isinstance(e, (Add, Sub, Mul, Shl, Shr)) and _wide_int(t):
            if isinstance(e, (Shl, Shr)) and not self.bounds.shift_in_range(e):
                # C++ defines only amounts in [0, bits): the IR's rule in a helper
                self.features.add("shift")
                name = "tirx_shl" if isinstance(e, Shl) else "tirx_shr"
                return f"{name}<{self.ctype(t)}>({self.expr(e.a)}, {self.expr(e.b)})", _PREC_PRIMARY
            if t.kind == "int" and self.int_overflows(e):
                return _wrapping(self.ctype(t), t.bits, self.expr(e.a), op, self.expr(e.b)), _PREC_PRIMARY
        if isinstance(e, (Add, Sub, Mul, Div, Mod, Shl)) and _narrow_int(t):
            # C++ computes 8/16-bit integers in int: truncate back to the IR's dtype
            return f"(({self.ctype(t)})({self._binary(e, op, prec)[0]}))", _PREC_PRIMARY
        return self._binary(e, op, prec)

    e_Add = e_Sub = e_Mul = e_Div = e_Mod = _arith
    e_Shl = e_Shr = e_BitAnd = e_BitOr = e_BitXor = _arith
    e_LT = e_LE = e_GT = e_GE = e_EQ = e_NE = _arith

    def e_And(self, e):
        return self._binary(e, *_BIN[And])

    def e_Or(self, e):
        return self._binary(e, *_BIN[Or])

    def e_Not(self, e):
        return f"{_NOT_C}{self.wrap(e.a, _PREC_UNARY)}", _PREC_UNARY

    def e_BitNot(self, e):
        if _narrow_int(e.a.ty):
            return f"(({self.ctype(e.a.ty)})(~{self.wrap(e.a, _PREC_UNARY)}))", _PREC_PRIMARY
        return f"~{self.wrap(e.a, _PREC_UNARY)}", _PREC_UNARY

    def _half_float_op(self, t: Any, e, fn: str) -> str | None:
        """``fn(float(a), float(b))`` rounded once to a scalar half type (float16, bfloat16,
        float8): the meaning the interpreter gives (their ops compute in float32)."""
        if isinstance(t, PrimType) and t.lanes == 1 and (t.base in ("float16", "bfloat16") or t.is_minifloat):
            self.features.add("floordiv")
            return f"{self.ctype(t)}({fn}(float({self.expr(e.a)}), float({self.expr(e.b)})))"
        return None

    def e_FloorDiv(self, e):
        t = e.a.ty
        if (h := self._half_float_op(t, e, "tirx_floordiv_f")) is not None:
            return h, _PREC_PRIMARY
        if isinstance(t, PrimType) and t.is_float:
            return self._c_float_fn("floor", t, [Div(e.a, e.b)]), _PREC_PRIMARY
        if t.kind == "uint" or (self.is_nonneg(e.a) and self.is_pos(e.b)):
            return self._binary(e, "/", 13)
        self.features.add("floordiv")
        # explicit template argument: small int types promote to int in C++ (ambiguous otherwise)
        return f"tirx_floordiv<{self.ctype(t)}>({self.expr(e.a)}, {self.expr(e.b)})", _PREC_PRIMARY

    def e_FloorMod(self, e):
        t = e.a.ty
        if (h := self._half_float_op(t, e, "tirx_floormod")) is not None:
            return h, _PREC_PRIMARY
        if isinstance(t, PrimType) and t.is_float:
            self.features.add("floordiv")
            return f"tirx_floormod({self.expr(e.a)}, {self.expr(e.b)})", _PREC_PRIMARY
        if t.kind == "uint" or (self.is_nonneg(e.a) and self.is_pos(e.b)):
            return self._binary(e, "%", 13)
        self.features.add("floordiv")
        return f"tirx_floormod<{self.ctype(t)}>({self.expr(e.a)}, {self.expr(e.b)})", _PREC_PRIMARY

    def e_Min(self, e):
        return self._minmax("min", e)

    def e_Max(self, e):
        return self._minmax("max", e)

    def _guarded_negation(self, e: Any) -> str | None:
        """An int32 ``Sub`` / ``Mul`` that is a negation, written through ``tirx_neg`` (_P_NEG);
        None for other ones. ``0 - x``, ``-1 * x``, ``x * -1`` become ``tirx_neg(x)``. Where the
        0 or -1 is not a literal but provably that value (a bound constant, a range the bounds
        analysis pins down), the C++ compiler would still see a negation: ``a - x`` becomes
        ``a + tirx_neg(x)`` and ``k * x`` ``tirx_neg(x * -k)``, equal for every ``a`` and ``k``."""
        if isinstance(e, Sub):
            if isinstance(e.a, IntImm) and e.a.value == 0:
                return f"tirx_neg({self.expr(e.b)})"
            r = self.bounds(e.a)
            if r == (0, 0) or (
                id(e) in self._guard_subs and not isinstance(e.b, IntImm) and (r is None or r[0] <= 0 <= r[1])
            ):
                # (a constant right side, or a left side that cannot be 0, is no negation to
                # NVVM either)
                return _wrapping("int", 32, self.expr(e.a), "+", f"tirx_neg({self.expr(e.b)})")
            return None
        pairs = ((e.a, e.b), (e.b, e.a))
        for k, x in pairs:
            if isinstance(k, IntImm) and k.value == -1:
                return f"tirx_neg({self.expr(x)})"
        for k, x in pairs:
            if self.bounds(k) == (-1, -1):
                minus_k = f"0u - (unsigned int)({self.expr(k)})"
                return f"tirx_neg({_wrapping('int', 32, self.expr(x), '*', minus_k)})"
        return None

    def _minmax(self, which: str, e):
        t = e.a.ty
        if isinstance(t, PrimType) and t.base in ("float16", "bfloat16") and t.lanes == 1:
            return f"__h{which}({self.expr(e.a)}, {self.expr(e.b)})", _PREC_PRIMARY
        if isinstance(t, PrimType) and t.is_minifloat and t.lanes == 1:
            return (
                f"{self.ctype(t)}(f{which}f(float({self.expr(e.a)}), float({self.expr(e.b)})))",
                _PREC_PRIMARY,
            )
        if self._is_vec(t):
            self.features.add("vec")
            self.ctype(t)
            return f"tirx_v{which}({self.expr(e.a)}, {self.expr(e.b)})", _PREC_PRIMARY
        return f"{which}({self.expr(e.a)}, {self.expr(e.b)})", _PREC_PRIMARY

    def e_Select(self, e):
        return (
            f"{self.wrap(e.cond, 4)} ? {self.wrap(e.true_value, 4)} : {self.wrap(e.false_value, 3)}",
            3,
        )

    def e_Cast(self, e):
        return self.cast(e.ty, e.value), _PREC_PRIMARY

    def cast(self, to: Any, value: PrimExpr) -> str:
        fr = value.ty
        if isinstance(to, PrimType) and isinstance(fr, PrimType):
            if to == fr:
                return self.expr(value)
            low = ("float16", "bfloat16", *_MINI_BASES)
            if fr.is_float and to.is_int and to.bits < 32:
                return self._float_to_narrow_int(to, value, fr.base in low)
            if fr.is_float and to.is_int and to.lanes == 1 and (to.bits == 64 or fr.base == "float64"):
                # PTX's cvt.rzi.{s,u}64 and cvt.rzi.*.f64 saturate but turn NaN into the
                # minimum; the IR says 0
                self.features.add("f2i")
                x = f"float({self.expr(value)})" if fr.base in low else self.expr(value)
                return f"tirx_f2i<{self.ctype(to)}>({x})"
            if to.lanes > 1 or fr.lanes > 1:
                self.features.add("vec")
                self.ctype(to)
                # minifloats have no C++ comparisons: they convert through their constructors
                vc = "tirx_vcast"
                if fr.is_minifloat or to.is_minifloat:
                    vc = "tirx_vcast_from_mf" if fr.is_minifloat else "tirx_vcast_to_mf"
                return f"{vc}<{self.ctype(to.element)}>({self.expr(value)})"
            ct = self.ctype(to)
            if to.is_bool:
                if fr.base in low:
                    return f"(float({self.expr(value)}) != 0.0f)"
                return f"({self.wrap(value, 10)} != 0)"
            if fr.base in low and to.base != "float32":
                return f"(({ct})float({self.expr(value)}))"
            once = _ROUND_ONCE.get((fr.base, to.base))
            if once is not None:  # rounded once, as the interpreter does (no detour via float)
                return f"{once}({self.expr(value)})"
            if to.base in low and fr.base != "float32":
                return f"{ct}((float){self.wrap(value, _PREC_UNARY)})"
            if to.base in low:
                return f"{ct}({self.expr(value)})"
            return f"(({ct}){self.wrap(value, _PREC_UNARY)})"
        if isinstance(to, PointerType):
            return f"(({self.ctype(to)}){self.wrap(value, _PREC_UNARY)})"
        raise _error(f"cuda codegen: cannot cast {fr} to {to}", value)

    def _float_to_narrow_int(self, to: PrimType, value: PrimExpr, low: bool) -> str:
        """float -> 8/16-bit integer as the IR defines it (truncate, saturate to the dtype, NaN
        -> 0). C++ leaves out-of-range conversions undefined, and NVCC converts through int32
        and keeps the low bits; ``(int)`` is PTX's saturating ``cvt.rzi.s32``, then a clamp."""
        lo, hi = int_range(to)
        if to.lanes == 1:
            x = f"float({self.expr(value)})" if low else self.expr(value)
            i = f"(int)({x})"
            if cast(PrimType, value.ty).base == "float64":  # cvt.rzi.s32.f64 turns NaN into INT_MIN
                self.features.add("f2i")
                i = f"tirx_f2i<int>({x})"
            return f"(({self.ctype(to)})min(max({i}, {lo}), {hi}))"
        self.features.add("vec")
        self.ctype(to)
        n = to.lanes
        x = self.expr(value)
        if low:
            x = f"tirx_vcast{'_from_mf' if cast(PrimType, value.ty).is_minifloat else ''}<float>({x})"
        i = f"tirx_vcast<int>({x})"
        clamped = f"tirx_vmin(tirx_vmax({i}, tirx_bcast<int, {n}>({lo})), tirx_bcast<int, {n}>({hi}))"
        return f"tirx_vcast<{self.ctype(to.element)}>({clamped})"

    def e_Ramp(self, e: Ramp):
        self.features.add("vec")
        el = self.ctype(cast(PrimType, e.ty).element)
        self.ctype(e.ty)
        return f"tirx_ramp<{el}, {e.lanes}>({self.expr(e.base)}, {self.expr(e.stride)})", _PREC_PRIMARY

    def e_Broadcast(self, e: Broadcast):
        t = cast(PrimType, e.ty)  # a vector of a scalar PrimType (the node's validator)
        if (t.base, t.lanes) == ("float16", 2):
            return f"__half2half2({self.expr(e.value)})", _PREC_PRIMARY
        if (t.base, t.lanes) == ("bfloat16", 2):
            return f"__bfloat162bfloat162({self.expr(e.value)})", _PREC_PRIMARY
        self.features.add("vec")
        self.ctype(t)
        return f"tirx_bcast<{self.ctype(t.element)}, {t.lanes}>({self.expr(e.value)})", _PREC_PRIMARY

    def e_Shuffle(self, e: Any):
        from .shuffle_cuda import lower_shuffle  # TIRx's T.Shuffle (tirx/ir/shuffle.py)

        return lower_shuffle(self, e), _PREC_PRIMARY

    def e_DataTypeImm(self, e: Any):
        raise _error(
            f'T.dtype("{e.value}") is not supported by the CUDA backend: a dtype value is an argument of '
            "host (packed/extern) calls in TIRx; device code takes dtypes as types (ty=)",
            e,
        )

    def e_Let(self, e: Let):
        # an immediately invoked lambda keeps the binding local to the expression
        saved = self.names.get(e.var)
        from ..ir.visitor import collect_vars

        value = self.expr(e.value)
        self.bounds.define(e.var, self.bounds(e.value))
        n = self.define(e.var)
        body = self.expr(e.body)
        unused = "" if e.var in collect_vars(e.body) else f" (void){n};"
        s = f"[&]() {{ const {self.ctype(e.var.ty)} {n} = {value};{unused} return {body}; }}()"
        if saved is not None:
            self.names[e.var] = saved
        return s, _PREC_PRIMARY

    def e_Call(self, e: Call):
        if isinstance(e.op, GlobalVar):
            if self.module is None or e.op.name not in self.module:
                raise _error(f"call of unknown function {e.op.name!r}", e)
            args = ", ".join(self.expr(a) for a in e.args)
            return f"{self.func_cname(e.op.name)}({args})", _PREC_PRIMARY
        return self.lower_call(e)

    def e_BufferLoad(self, e: BufferLoad):
        return self.access(e.buffer, e.indices, e), _PREC_PRIMARY

    def e_GlobalVar(self, e: GlobalVar):
        return self.func_cname(e.name), _PREC_PRIMARY

    # -- buffers ------------------------------------------------------------------
    def ptr_of(self, buf: Buffer) -> str:
        p = self.buf_ptr.get(buf)
        if p is not None:
            return p
        if buf.data not in self.names:
            if buf.data in self.tmem_vars:
                self.var_name(buf.data)  # raises: a tmem buffer has no pointer
            raise _error(f"buffer {buf.name} is used outside of its scope", buf)
        base = self.var_name(buf.data)
        if buf.data in self.scalar_bufs:
            return f"(&{base})"
        el = cast(PointerType, buf.data.ty).element
        if el != buf.dtype:
            return f"(({self.ctype(buf.dtype)}*){base})"
        return base

    def flat_index(self, buf: Buffer, indices: tuple, node: Any = None) -> PrimExpr:
        if len(indices) != len(buf.shape):
            raise _error(f"buffer {buf.name} has rank {len(buf.shape)}, got {len(indices)} indices", node)
        if not indices:
            idx: PrimExpr = IntImm(0)
        else:
            strides = list(buf.strides) if buf.strides else None
            if strides is None:
                strides = []
                acc: Any = 1
                for s in reversed(buf.shape[1:]):
                    acc = _mul(s, acc)
                    strides.append(acc)
                strides = [*list(reversed(strides)), 1]
            idx = None  # type: ignore[assignment]
            for x, s in zip(indices, strides):
                term = _mul(x, s)
                idx = term if idx is None else _add(idx, term)
        if buf.elem_offset is not None and not (
            isinstance(buf.elem_offset, IntImm) and buf.elem_offset.value == 0
        ):
            idx = _add(idx, buf.elem_offset)
        # the arithmetic built here is addressing, not the IR's: never wrapped (int_overflows)
        own = {id(x) for x in (*indices, *buf.shape, *(buf.strides or ()), buf.elem_offset)}
        todo = [idx]
        while todo:
            x = todo.pop()
            if id(x) in own:
                continue
            if isinstance(x, (Add, Mul)):
                self._address_arith.add(x)
                todo += (x.a, x.b)
            elif isinstance(x, (Cast, Broadcast)):
                todo.append(x.value)
            elif isinstance(x, Ramp):
                todo += (x.base, x.stride)
        return idx

    def access(self, buf: Buffer, indices: tuple, node: Any = None) -> str:
        idx = self.flat_index(buf, indices, node)
        if buf.data in self.scalar_bufs and isinstance(idx, IntImm) and idx.value == 0:
            return self.var_name(buf.data)
        ptr = self.ptr_of(buf)
        t = idx.ty
        if isinstance(t, PrimType) and t.lanes > 1:
            lanes = t.lanes
            vt = self.ctype(buf.dtype.with_lanes(lanes))
            if isinstance(idx, Ramp) and isinstance(idx.stride, IntImm) and idx.stride.value == 1:
                return f"*({vt}*)({ptr} + {self.wrap(idx.base, 12)})"
            self.features.add("vec")
            return f"tirx_gather({ptr}, {self.expr(idx)})"
        return f"{ptr}[{self.expr(idx)}]"

    def store(self, s: BufferStore) -> None:
        idx = self.flat_index(s.buffer, s.indices, s)
        t = idx.ty
        if (
            isinstance(t, PrimType)
            and t.lanes > 1
            and not (isinstance(idx, Ramp) and isinstance(idx.stride, IntImm) and idx.stride.value == 1)
        ):
            self.features.add("vec")
            ptr = self.ptr_of(s.buffer)
            self.line(f"tirx_scatter({ptr}, {self.expr(idx)}, {self.expr(s.value)});", s)
            return
        self.line(f"{self.access(s.buffer, s.indices, s)} = {self.expr(s.value)};", s)

    # -- value ranges (tirx.ir.bounds) ----------------------------------------------
    def is_pos(self, e: PrimExpr) -> bool:
        """``e`` is provably > 0 (floor division by it may use C's ``/`` and ``%``)."""
        return self.bounds.is_pos(e)

    def is_nonneg(self, e: PrimExpr) -> bool:
        """``e`` is provably >= 0."""
        return self.bounds.is_nonneg(e)

    def div_may_overflow(self, e: Any) -> bool:
        """Signed 32/64-bit integer division ``e`` may be ``MIN / -1`` (or ``MIN % -1``)."""
        t = e.a.ty
        if not (_wide_int(t) and t.kind == "int"):
            return False
        lo = int_range(t)[0]
        ra, rb = self.bounds(e.a), self.bounds(e.b)
        a_min = ra is None or ra[0] <= lo
        b_neg1 = rb is None or rb[0] <= -1 <= rb[1]
        return a_min and b_neg1

    def int_overflows(self, e: PrimExpr) -> bool:
        """Signed ``+ - * <<`` node ``e`` may leave its dtype (its C++ form would be undefined).

        Address arithmetic that ``flat_index`` adds (strides, offsets) is never wrapped: the
        IR defines an access by its indices, and a flattened offset that leaves the index
        type is wrong wrapped or not."""
        return e not in self._address_arith and e not in self.layout_arith and self.bounds.overflows(e)

    def _call_range(self, c: Call) -> tuple[int, int] | None:
        """Ranges of the thread-model ops, from the launch configuration of this kernel."""
        if c.op.traits.range is None:
            return None
        name = c.op.name
        if c.args and isinstance(c.args[0], StringImm):
            return self.launch_ranges.get((name, c.args[0].value))
        return self.launch_ranges.get((name, None))

    def _set_launch(self, entry: DeviceEntry | None, host: Bounds | None = None) -> None:
        """Ranges of the thread-model ops: from the launch configuration of the kernel
        (its expressions bounded by ``host``), capped by the hardware limits; device helpers
        (``entry`` None) get the hardware limits. A launch without a cluster is a cluster of
        one block."""

        def rng(e: Any, cap: int) -> tuple[int, int]:
            # a launch dimension: at least 1 (an empty grid launches nothing), at most cap
            r = host(e) if host is not None and e is not None else None
            if r is None:
                return 1, cap
            hi = max(1, min(r[1], cap))
            return min(max(1, r[0]), hi), hi

        dims: dict = {}
        cl = None if entry is None else (entry.cluster or (1, 1, 1))
        size = 1
        for k, ax in enumerate("xyz"):
            dims["grid." + ax] = rng(entry.grid[k] if entry else None, _MAX_GRID[ax])
            dims["block." + ax] = rng(entry.block[k] if entry else None, _MAX_BLOCK[ax])
            n = dims["cluster." + ax] = rng(convert(cl[k]) if cl else None, _MAX_CLUSTER)
            size *= n[1]
        dims["cluster.size"] = (1, min(size, _MAX_CLUSTER))
        # each op's declared range trait (tirx/ops), keyed by (op name, axis)
        lr: dict = {}
        for o in _op.all_ops().values():
            if o.traits.range is None:
                continue
            axes: tuple[str | None, ...] = tuple("xyz") if o.args == ("s",) else (None,)
            for axis in axes:
                r = o.traits.value_range(axis, dims.get)
                if r is not None:
                    lr[o.name, axis] = r
        self.launch_ranges = lr

    # -- statements -----------------------------------------------------------------
    def stmt(self, s: Stmt) -> None:
        meth = getattr(self, "s_" + type(s).__name__, None)
        if meth is None:
            raise _error(f"cuda codegen: unsupported statement {type(s).__name__}", s)
        meth(s)

    def block(self, s: Stmt) -> None:
        self.indent += 1
        self.stmt(s)
        self.indent -= 1

    def s_SeqStmt(self, s: SeqStmt) -> None:
        for x in s.stmts:
            self.stmt(x)

    def s_Bind(self, s: Bind) -> None:
        v = s.var
        if isinstance(s.value, Call) and not isinstance(s.value.op, GlobalVar) and self._bind_asm(s):
            return
        val = self.expr(s.value)
        self.bounds.define(v, self.bounds(s.value))
        n = self.define(v)
        t = self.ctype(v.ty)
        if isinstance(v.ty, PointerType):
            self.line(f"{t} const {n} = {val};", s)
        else:
            self.line(f"const {t} {n} = {val};", s)

    def s_BufferStore(self, s: BufferStore) -> None:
        self.store(s)

    def s_Evaluate(self, s: Evaluate) -> None:
        v = s.value
        if isinstance(v, Call):
            self.line(f"{self.expr(v)};", s)
        elif isinstance(v, IntImm):
            self.line(f"// evaluate {_comment(v.value)}", s)
        else:
            self.line(f"(void)({self.expr(v)});", s)

    def s_For(self, s: For) -> None:
        v = s.var
        if s.kind is ForKind.PARALLEL:
            raise _error("parallel loops are a host (CPU) construct; the cuda target has no parallel for", s)
        start, ext = s.start, s.extent
        t = self.ctype(v.ty)
        if s.kind is ForKind.THREAD_BINDING:
            tag = s.thread or ""
            m = re.fullmatch(r"(threadIdx|blockIdx)\.([xyz])", tag)
            if m is None:
                raise _error(f"thread_binding loop: unknown thread tag {tag!r}", s)
            n = self.define(v)
            level = "block" if m.group(1) == "threadIdx" else "grid"
            idx = self.launch_ranges.get((_op.find(launch=("idx", level)).name, m.group(2)))
            self.bounds.define(v, self.bounds.loop_range(v, start, ext, count=idx[1] if idx else None))
            self.line("{", s)
            self.indent += 1
            off = "" if isinstance(start, IntImm) and start.value == 0 else f"{self.wrap(start, 12)} + "
            self.line(f"const {t} {n} = {off}(({t}){tag});", s)
            self.line(f"if ({n} < {self.wrap(_add(start, ext), 10)}) {{", s)
            self.block(s.body)
            self.line("}")
            self.indent -= 1
            self.line("}")
            return
        step = s.step
        self.bounds.define(v, self.bounds.loop_range(v, start, ext, step))
        n = self.define(v)
        ann = s.annotations
        key: str = UNROLL_FACTOR
        factor: Any = ann.get(UNROLL_FACTOR) if ann else None
        full = False
        if factor is None and ann:  # TIRx's T.serial(..., unroll=True | N | False)
            key, factor = PRAGMA_UNROLL, ann.get(PRAGMA_UNROLL)
            if isinstance(factor, IntImm) and factor.ty.is_bool:
                factor = bool(factor.value)
            if factor is True:
                factor, full = None, True
            elif factor is None or factor is False:
                disabled = ann.get(DISABLE_UNROLL)
                factor = 1 if disabled is True or (isinstance(disabled, IntImm) and disabled.value) else None
        if isinstance(factor, IntImm):
            factor = factor.value
        if full:
            self.line("#pragma unroll", s)
        elif factor is not None:
            if not isinstance(factor, int) or isinstance(factor, bool) or factor < 1:
                raise _error(f"loop annotation {key!r} must be a positive int, got {factor!r}", s)
            self.line(f"#pragma unroll {factor}", s)
        elif s.kind is ForKind.UNROLLED:
            self.line("#pragma unroll", s)
        elif s.kind is ForKind.VECTORIZED:
            self.line("#pragma unroll  // vectorized", s)
        stop = ext if isinstance(start, IntImm) and start.value == 0 else _add(start, ext)
        inc = (
            f"++{n}"
            if step is None or (isinstance(step, IntImm) and step.value == 1)
            else f"{n} += {self.expr(step)}"
        )
        self.line(f"for ({t} {n} = {self.expr(start)}; {n} < {self.wrap(stop, 10)}; {inc}) {{", s)
        self.block(s.body)
        self.line("}")

    def s_While(self, s: While) -> None:
        self.line(f"while ({self.expr(s.cond)}) {{", s)
        self.block(s.body)
        self.line("}")

    def s_IfThenElse(self, s: IfThenElse) -> None:
        self.line(f"if ({self.expr(s.cond)}) {{", s)
        with self.bounds.assume(s.cond):  # e.g. `if i < n:` bounds i in the branch
            self.block(s.then_case)
        e = s.else_case
        while e is not None:
            if isinstance(e, IfThenElse):
                self.line(f"}} else if ({self.expr(e.cond)}) {{", e)
                with self.bounds.assume(e.cond):
                    self.block(e.then_case)
                e = e.else_case
            else:
                self.line("} else {")
                self.block(e)
                e = None
        self.line("}")

    def s_Break(self, s: Break) -> None:
        self.line("break;", s)

    def s_Continue(self, s: Continue) -> None:
        self.line("continue;", s)

    def s_Return(self, s: Return) -> None:
        if s.value is None or (self.in_kernel and type(s.value) is IntImm):  # TIRx's kernel ``return 0``
            self.line("return;", s)
        else:
            if self.in_kernel:
                raise _error("a kernel cannot return a value", s)
            self.line(f"return {self.expr(s.value)};", s)

    def s_Assert(self, s: Assert) -> None:
        msg = " ".join(s.message).replace("*/", "* /")
        self.line(f"if (!({self.expr(s.cond)})) {{  // assert: {s.kind}: {msg}"[:200], s)
        self.indent += 1
        self.line("__trap();")
        self.indent -= 1
        self.line("}")

    def s_RegionStmt(self, s: Any) -> None:
        """TIRx's regions: ``launch_thread`` on a ``threadIdx``/``blockIdx`` axis reads the index
        (as TIRx's CUDA does); ``device_scope`` is its body; the CPU regions have no CUDA meaning."""
        if s.kind == "device_scope":
            self.stmt(s.body)
            return
        if s.kind != "launch_thread":
            raise _error(f"T.{s.kind} is not supported by the CUDA backend (a TIRx CPU/host region)", s)
        tag = s.args[0].value
        m = re.fullmatch(r"(threadIdx|blockIdx)\.([xyz])", tag)
        if m is None:
            raise _error(f"T.launch_thread({tag!r}, ...) is not supported by the CUDA backend", s)
        v, ext = s.params[0], s.args[1]
        t = self.ctype(v.ty)
        n = self.define(v)
        level = "block" if m.group(1) == "threadIdx" else "grid"
        idx = self.launch_ranges.get((_op.find(launch=("idx", level)).name, m.group(2)))
        zero = IntImm(0, v.ty)
        self.bounds.define(v, self.bounds.loop_range(v, zero, ext, count=idx[1] if idx else None))
        self.line("{", s)
        self.indent += 1
        self.line(f"const {t} {n} = ({t}){tag};", s)
        self.stmt(s.body)
        self.indent -= 1
        self.line("}")

    def s_AttrStmt(self, s: AttrStmt) -> None:
        self.line(
            f"// attr {_comment(s.key)} = "
            + _comment(self.expr(s.value) if not isinstance(s.value, StringImm) else s.value.value),
            s,
        )
        self.line("{")
        self.block(s.body)
        self.line("}")

    def _shape_size(self, buf: Buffer, node: Any) -> int:
        n = 1
        for d in buf.shape:
            if not isinstance(d, IntImm):
                raise _error(f"allocation {buf.name}: the shape must be constant on the cuda target", node)
            n *= d.value
        return n

    def s_AllocBuffer(self, s: AllocBuffer) -> None:
        buf = s.buffer
        scope = buf.scope
        if scope == "tmem":
            # a declaration only: tensor memory is allocated by tcgen05.alloc and addressed by tmem
            # addresses, never by a pointer (every use of the buffer is an error: var_name)
            self.tmem_vars.add(buf.data)
            dims = "x".join(str(d.value) if isinstance(d, IntImm) else "n" for d in buf.shape)
            self.line(f"// {buf.name}: tensor memory, {dims} {buf.dtype}", s)
            return
        el = cast(PointerType, buf.data.ty).element
        ct = self.ctype(el if isinstance(el, PrimType) else buf.dtype)
        n = self.define(buf.data, buf.name)
        if scope == "shared.dyn":
            size: int | None = 1
            for d in buf.shape:
                size = d.value * size if isinstance(d, IntImm) and size is not None else None
                if size is None:
                    break
            self.features.add("dyn_smem")
            off = self.dyn_smem_offset
            if isinstance(el, PrimType) and el.bytes > 1 and off % el.bytes:
                off += el.bytes - off % el.bytes
            self.line(f"{ct}* const {n} = ({ct}*)(tirx_dyn_smem + {off});", s)
            if size is not None:
                nb = size * (el.bytes if isinstance(el, PrimType) else buf.dtype.bytes)
                self.dyn_smem_offset = (off + nb + 15) // 16 * 16
            return
        size = self._shape_size(buf, s)
        if scope in ("shared", "shared.static"):
            self.line(f"__shared__ __align__(16) {ct} {n}[{size}];", s)
        elif scope in ("local", "register", "local.var"):
            view = self.view_bytes.get(buf.data, 0)  # the widest element a view reinterprets it as
            if size == 1 and len(buf.shape) <= 1 and el == buf.dtype and not view:
                # a mutable scalar cell: a plain C variable
                self.scalar_bufs.add(buf.data)
                self.line(f"{ct} {n};", s)
            else:
                # 16-byte aligned when whole vectors fit: vector accesses (uint4 etc.) need it;
                # aligned for the widest element a view of another dtype reads it as
                nb = size * (el.bytes if isinstance(el, PrimType) else buf.dtype.bytes)
                a = 16 if nb % 16 == 0 else 1
                if isinstance(el, PrimType) and view > el.bytes:
                    while a < min(view, 16):
                        a *= 2
                align = f"__align__({a}) " if a > 1 else ""
                self.line(f"{align}{ct} {n}[{size}];", s)
        else:
            raise _error(
                f"allocation {buf.name}: storage scope {scope!r} is not supported by the cuda target", s
            )

    def s_DeclBuffer(self, s: DeclBuffer) -> None:
        buf = s.buffer
        if buf.data not in self.names:
            raise _error(f"decl_buffer {buf.name}: its data pointer {buf.data.name} is not defined here", s)
        # the view's name is the data pointer, cast when the element types differ
        self.line(
            _comment(f"// {buf.name}: {buf.dtype}{list(_dims(buf))} view over {self.var_name(buf.data)}"), s
        )

    def s_DeviceEntry(self, s: DeviceEntry) -> None:
        raise _error("a device entry inside a kernel is not supported (one device entry per function)", s)

    # -- functions --------------------------------------------------------------------
    def func_cname(self, name: str) -> str:
        return self._fnames[name]

    def _reset_func(self) -> None:
        self.names = {}
        self._taken = set(self._fnames.values())
        self.bounds = Bounds(call_range=self._call_range)
        self._address_arith = set()
        self._set_launch(None)
        self.buf_ptr = {}
        self.scalar_bufs = set()
        self.view_bytes = {}
        self.dyn_smem_offset = 0
        self._last_loc = None
        self._guard_subs = set()

    def gen_kernel(self, f: Function, host: list, entry: DeviceEntry) -> KernelInfo:
        self._reset_func()
        self._guard_subs = self._guards.get(f.name, set())
        self.view_bytes = self._views.get(f.name, {})
        self.func = f
        self.in_kernel = True
        use = _Usage()
        use.visit(entry)
        for h in host:
            use.visit(h)
        bufs = dict(f.buffer_map)
        params: list[KernelParam] = []
        dyn = f.dyn_vars()
        for p in f.params:
            b = bufs.get(p)
            if b is not None:
                c = self.define(p, b.name)
                params.append(
                    KernelParam(
                        "buffer", b.name, c, p.ty, p, b, written=p in use.written, align=use.align.get(p, 0)
                    )
                )
            elif isinstance(p.ty, PointerType) and p.ty.scope == "tensormap":
                # a TMA descriptor passed by value (const __grid_constant__); the body sees its address
                c = self.define(p)
                params.append(KernelParam("tensormap", p.name, c, p.ty, p))
            elif isinstance(p.ty, PointerType):
                c = self.define(p)
                params.append(KernelParam("handle", p.name, c, p.ty, p, written=True))
            else:
                c = self.define(p)
                params.append(KernelParam("scalar", p.name, c, p.ty, p))
        # host expressions (bindings, launch configuration) are evaluated with Python ints
        hb = Bounds(exact=True)
        for v in dyn:
            c = self.define(v)
            vt = cast(PrimType, v.ty)  # dynamic dims are integer PrimType variables
            self.bounds.define(v, (0, int_range(vt)[1]))
            hb.define(v, (0, int_range(vt)[1]))
            params.append(KernelParam("dyn", v.name, c, v.ty, v))
        # host bindings used on the device travel as parameters
        for h in host:
            if isinstance(h, Bind):
                hb.define(h.var, hb(h.value))
                self.bounds.define(h.var, hb.ranges.get(h.var))
                c = self.define(h.var)
                if h.var in use.used_vars:
                    params.append(KernelParam("host", h.var.name, c, h.var.ty, h.var))
        sig = []
        tmaps: dict = {}  # tensormap params: C name of the pointer -> C name of the by-value parameter
        for kp in params:
            t = self.ctype(kp.ty)
            if kp.kind == "buffer":
                el = kp.ty.element
                ct = self.ctype(el)
                const = "" if kp.written else "const "
                if self.restrict:
                    sig.append(f"{const}{ct}* __restrict__ {kp.c_name}")
                else:
                    sig.append(f"{const}{ct}* {kp.c_name}")
                if not kp.written:
                    # the body indexes through a const pointer
                    pass
            elif kp.kind == "tensormap":
                self.features.add("tensormap")
                tmaps[kp.c_name] = self.fresh(kp.c_name + "_param")
                sig.append(f"const __grid_constant__ tirx_tensormap {tmaps[kp.c_name]}")
            else:
                sig.append(f"{t} {kp.c_name}")
        self._set_launch(entry, hb)
        name = self.func_cname(f.name)
        lb = ""
        block = entry.block
        if all(isinstance(b, IntImm) for b in block):
            lb = self._kernel_qualifiers(entry, [b.value for b in block])
        fs = getattr(f, "span", None)
        self.line(f'extern "C" __global__ void {lb}{name}(', f if fs is not None else None)
        self.indent += 2
        for i, a in enumerate(sig):
            self.line(a + ("," if i + 1 < len(sig) else ") {"))
        if not sig:
            self.lines[-1] = self.lines[-1]
            self.lines.append("    ) {")
        self.indent -= 2
        self.indent += 1
        for kp in params:
            if kp.kind == "tensormap":
                ct = self.ctype(kp.ty)
                self.line(f"{ct} const {kp.c_name} = ({ct})&{tmaps[kp.c_name]};")
        self.bounds.set_buffer_ranges(local_ranges(entry.body, self.bounds))
        self.body_with_features(entry.body)
        self.indent -= 1
        self.line("}")
        self.in_kernel = False
        return KernelInfo(name, f, entry, params, host, dyn)

    def _kernel_qualifiers(self, entry: Any, block: list[int]) -> str:
        """``__launch_bounds__`` / ``__maxnreg__`` / ``__block_size__`` from the device entry's
        ``cuda.kernel_attrs`` (``T.cuda.KernelAttributes``); combinations ptxas refuses are
        errors here, not broken PTX."""
        threads = block[0] * block[1] * block[2]
        ka = entry.attrs.get("cuda.kernel_attrs") or {}
        ka = ka if hasattr(ka, "get") else {}

        def num(key: str) -> int | None:
            v = ka.get(key)
            v = getattr(v, "value", v)
            if v is None:
                return None
            if type(v) is not int or v < 0:  # TIRx's KernelAttributes take counts
                raise _error(f"cuda.kernel_attrs: {key} must be a non-negative integer, got {v!r}", entry)
            return v

        minb, maxc, nreg = (
            num("min_blocks_per_sm"),
            num("max_blocks_per_cluster"),
            num("max_registers_per_thread"),
        )
        if num("required_block_size"):
            if nreg:
                raise self.error(
                    "kernel attributes: required_block_size cannot be combined with max_registers_per_thread",
                    entry,
                )
            want = [num(f"required_block_{ax}") for ax in "xyz"]
            if want != block:
                raise self.error(
                    f"kernel attributes: required block {want} differs from the launch's {block}", entry
                )
            cl = [num(f"required_cluster_{ax}") or 1 for ax in "xyz"]
            required = f"__block_size__(({block[0]}, {block[1]}, {block[2]}), ({cl[0]}, {cl[1]}, {cl[2]})) "
            if minb or maxc:
                # TIRx writes __launch_bounds__ after it (KernelAttributes(required_block_size=True,
                # min_blocks_per_sm=...)), which ptxas refuses (.maxntid with .reqntid,
                # .maxclusterrank with .reqnctapercluster); the required block and cluster
                # already bound both, and the minimum-blocks hint changes no result: kept as a comment
                lb = (
                    f"{threads}, {minb or 1}, {maxc}"
                    if maxc
                    else f"{threads}{', ' + str(minb) if minb else ''}"
                )
                required += f"/* TIRx: __launch_bounds__({lb}) */ "
            return required
        if nreg:
            if minb or maxc:
                raise self.error(
                    "kernel attributes: max_registers_per_thread cannot be combined with launch bounds "
                    "(min_blocks_per_sm, max_blocks_per_cluster)",
                    entry,
                )
            return f"__maxnreg__({nreg}) "
        if maxc:
            return f"__launch_bounds__({threads}, {minb or 1}, {maxc}) "
        return f"__launch_bounds__({threads}{', ' + str(minb) if minb else ''}) "

    def body_with_features(self, body: Stmt) -> None:
        self.stmt(body)

    def gen_device_func(self, f: Function, proto: bool) -> str:
        self._reset_func()
        self._guard_subs = self._guards.get(f.name, set())
        self.view_bytes = self._views.get(f.name, {})
        self.func = f
        self.in_kernel = False
        bufs = dict(f.buffer_map)
        args = []
        for p in f.params:
            b = bufs.get(p)
            c = self.define(p, b.name if b is not None else None)
            args.append(f"{self.ctype(p.ty)} {c}")
        for v in f.dyn_vars():
            c = self.define(v)
            self.bounds.define(v, (0, int_range(cast(PrimType, v.ty))[1]))
            args.append(f"{self.ctype(v.ty)} {c}")
        rt = "void" if f.ret_ty is None else self.ctype(f.ret_ty)
        head = f"__device__ __forceinline__ {rt} {self.func_cname(f.name)}({', '.join(args)})"
        if proto:
            return head + ";"
        self.line(head + " {", f)
        self.bounds.set_buffer_ranges(local_ranges(f.body, self.bounds))
        self.block(f.body)
        self.line("}")
        return head

    def generate(self, obj: Function | Module) -> CudaSource:
        if isinstance(obj, Function):
            mod = Module((obj,), name=obj.name)
            single = True
        elif isinstance(obj, Module):
            mod = obj
            single = False
        else:
            raise TypeError(f"tirx.compile: expected a Function or Module, got {type(obj).__name__}")
        self.module = mod
        # C names for all functions
        self._fnames = {}
        taken: set = set()
        for f in mod.functions:
            base = re.sub(r"[^0-9A-Za-z_]", "_", f.name) or "kernel"
            if base in _KEYWORDS or base[0].isdigit():
                base = "k_" + base
            n, k = base, 1
            while n in taken:
                n, k = f"{base}_{k}", k + 1
            taken.add(n)
            self._fnames[f.name] = n
        kernels: list[tuple[Function, list, DeviceEntry]] = []
        helpers: list[Function] = []
        called: set = set()
        self._guards = {}
        self._views: dict = {}
        for f in mod.functions:
            u = _Usage()
            u.visit(f.body)
            called |= u.calls
            self._guards[f.name] = u.guarded_subs()
            self._views[f.name] = u.views
        for f in mod.functions:
            host, entry = _split_host(f)
            if entry is not None:
                if _contains_entry(entry.body):
                    raise _error(f"function {f.name}: nested device entries are not supported", entry)
                kernels.append((f, host, entry))
            elif _contains_entry(f.body):
                raise _error(
                    f"function {f.name}: the device entry must be a top-level statement of the function body",
                    f,
                )
            elif f.private or f.name in called:
                helpers.append(f)
            else:
                what = "function" if single else "module function"
                raise _error(
                    f"{what} {f.name} has no device entry: host-only functions cannot be compiled for the "
                    f"cuda target (add `T.device_entry(...)`, or use target='interp')",
                    f,
                )
        if not kernels:
            raise _error(
                "module has no kernel (no function with a device entry) to compile for the cuda target"
            )
        for f in helpers:
            self.lines.append(self.gen_device_func(f, proto=True))
        if helpers:
            self.lines.append("")
        for f in helpers:
            self.gen_device_func(f, proto=False)
            self.lines.append("")
        infos = []
        for f, host, entry in kernels:
            infos.append(self.gen_kernel(f, host, entry))
            self.lines.append("")
        prelude = _prelude(self.features, self.helpers.values())
        shift = len(prelude)
        text = "\n".join(prelude + self.lines).rstrip() + "\n"
        spans = {k + shift: v for k, v in self.line_spans.items()}
        return CudaSource(text, infos, spans, frozenset(self.features))


def _dims(buf: Buffer):
    for d in buf.shape:
        yield d.value if isinstance(d, IntImm) else getattr(d, "name", "?")


def _fname(v: float) -> str:
    if math.isnan(v):
        return "nan"
    return "inf" if v > 0 else "-inf"


# a constant from its bits, per dtype (a NaN: a conversion on the GPU would canonicalize it;
# a float16 literal that half(float) would round twice)
_NAN_AS = {
    "float64": "__longlong_as_double({:#018x}ull)",
    "float32": "__int_as_float({:#010x})",
    "float16": "__ushort_as_half((unsigned short){:#06x})",
    "bfloat16": "__ushort_as_bfloat16((unsigned short){:#06x})",
}


def _f16_rounds_twice(v: float) -> bool:
    """Whether ``half(float(v))`` differs from ``v`` rounded to float16 once."""
    import numpy as np

    with np.errstate(all="ignore"):
        return bool(np.float16(v).view(np.uint16) != np.float16(np.float32(v)).view(np.uint16))


def _to_f32(v: float) -> float:
    import struct

    try:
        return struct.unpack("f", struct.pack("f", v))[0]
    except OverflowError:
        return v


def _comment(s: Any) -> str:
    """Text safe inside a ``//`` comment: no line break can end the comment and no trailing
    backslash can splice the next line into it (names and source paths come from users)."""
    s = str(s)
    if s.isascii() and s.isprintable() and "\\" not in s:
        return s
    out = []
    for ch in s:
        o = ord(ch)
        if ch == "\\" or o < 32 or o >= 127:
            out.append(f"\\x{o:02x}" if o < 256 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}")
        else:
            out.append(ch)
    return "".join(out)


def _c_string(s: str) -> str:
    out = []
    for ch in s:
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif o < 32 or o > 126:
            out.append(f"\\{o:03o}" if o < 256 else "?")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _mul(a: Any, b: Any) -> PrimExpr:
    if isinstance(b, int):
        if b == 1:
            return a
        b = IntImm(b, a.ty.element) if isinstance(a.ty, PrimType) else IntImm(b)
    if isinstance(b, IntImm) and b.value == 1:
        return a
    if isinstance(a, IntImm) and a.value == 1:
        return b
    if isinstance(a, IntImm) and a.value == 0 and isinstance(b.ty, PrimType) and b.ty.lanes == 1:
        return IntImm(0, b.ty) if b.ty != a.ty else a
    if isinstance(a, IntImm) and isinstance(b, IntImm) and a.ty == b.ty:
        return IntImm(wrap(a.value * b.value, a.ty), a.ty)  # the IR's wrapping product
    return _coerce(Mul, a, b)


_C_SLOT = re.compile(r"\{\{|\}\}|\{(\d+|ty)(?::(\w))?\}")


def _fill_c(cg: CodeGenCUDA, template: str, c: Call) -> str:
    """A ``CExpr`` template filled in: ``{i}`` argument i, ``{i:p}`` argument i wrapped as a
    primary expression, ``{i:s}`` a string argument's text, ``{ty}`` the result's C type."""

    def sub(m: re.Match) -> str:
        t = m.group(0)
        if t in ("{{", "}}"):
            return t[0]
        key, mod = m.group(1), m.group(2)
        if key == "ty":
            return cg.ctype(c.ty)
        i = int(key)
        if i >= len(c.args):
            raise _error(f"T.{c.op.name}: its C template uses argument {i}, the call has {len(c.args)}", c)
        a = c.args[i]
        if mod == "s":
            if not isinstance(a, StringImm):
                raise _error(f"T.{c.op.name}: argument {i + 1} must be a string literal", c)
            return a.value
        return cg.wrap(a, _PREC_PRIMARY) if mod == "p" else cg.expr(a)

    return _C_SLOT.sub(sub, template)


def _add(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    if isinstance(b, IntImm) and b.value == 0:
        return a
    if isinstance(a, IntImm) and a.value == 0:
        return b
    if isinstance(a, IntImm) and isinstance(b, IntImm) and a.ty == b.ty:
        return IntImm(wrap(a.value + b.value, a.ty), a.ty)  # the IR's wrapping sum
    return _coerce(Add, a, b)


def _coerce(cls, a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """Index arithmetic across int dtypes: widen to the wider one (int64 beats int32)."""
    ta, tb = a.ty, b.ty
    if ta == tb:
        return cls(a, b)
    if isinstance(ta, PrimType) and isinstance(tb, PrimType):
        if ta.lanes > 1 or tb.lanes > 1:
            # vector index times a scalar stride
            el_a, el_b = ta.element, tb.element
            wide = el_a if el_a.bits >= el_b.bits else el_b
            lanes = max(ta.lanes, tb.lanes)
            a2 = a if el_a == wide else Cast(wide.with_lanes(ta.lanes), a)
            b2 = b if el_b == wide else Cast(wide.with_lanes(tb.lanes), b)
            if cast(PrimType, a2.ty).lanes == 1:
                a2 = Broadcast(a2, lanes)
            if cast(PrimType, b2.ty).lanes == 1:
                b2 = Broadcast(b2, lanes)
            if isinstance(a2, Ramp) and isinstance(b2, Broadcast) and cls is Mul:
                return Ramp(Mul(a2.base, b2.value), Mul(a2.stride, b2.value), lanes)
            if isinstance(a2, Ramp) and isinstance(b2, Broadcast) and cls is Add:
                return Ramp(Add(a2.base, b2.value), a2.stride, lanes)
            if isinstance(b2, Ramp) and isinstance(a2, Broadcast) and cls is Add:
                return Ramp(Add(a2.value, b2.base), b2.stride, lanes)
            return cls(a2, b2)
        wide = ta if ta.bits >= tb.bits else tb
        if isinstance(a, IntImm):
            a = IntImm(a.value, wide)
        elif ta != wide:
            a = Cast(wide, a)
        if isinstance(b, IntImm):
            b = IntImm(b.value, wide)
        elif tb != wide:
            b = Cast(wide, b)
        return cls(a, b)
    return cls(a, b)


def _wrapping(ctype: str, bits: int, a: str, op: str, b: str) -> str:
    """``a op b`` of signed ``ctype`` computed in its unsigned type: wrapping, as the IR defines
    ``+ - *`` (C++ leaves signed overflow undefined)."""
    u = "unsigned int" if bits == 32 else "unsigned long long"
    return f"(({ctype})(({u})({a}) {op} ({u})({b})))"


def _is_int32(t: Any) -> bool:
    return isinstance(t, PrimType) and t.kind == "int" and t.bits == 32 and t.lanes == 1


# --------------------------------------------------------------------------- prelude
_P_TYPES = """\
typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned long long uint64_t;
typedef long long int64_t;"""

_P_FLOORDIV = """\
// signed division and modulo as the IR defines them: truncating, MIN / -1 wraps to MIN and
// MIN % -1 is 0 (both undefined in C++); b == -1 is the only divisor that can overflow
template <typename T> __device__ __forceinline__ T tirx_sdiv(T a, T b) {
  return b == T(-1) ? tirx_neg(a) : T(a / b);
}
template <typename T> __device__ __forceinline__ T tirx_smod(T a, T b) {
  return b == T(-1) ? T(0) : T(a % b);
}
// floor division and modulo (round toward negative infinity), as in Python
template <typename T> __device__ __forceinline__ T tirx_floordiv(T a, T b) {
  if (b == T(-1)) return tirx_neg(a);  // exact, and MIN wraps to MIN
  T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <typename T> __device__ __forceinline__ T tirx_floormod(T a, T b) {
  if (b == T(-1)) return T(0);
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
__device__ __forceinline__ float tirx_floordiv_f(float a, float b) { return floorf(a / b); }
__device__ __forceinline__ float tirx_floormod(float a, float b) { return a - floorf(a / b) * b; }
__device__ __forceinline__ double tirx_floormod(double a, double b) { return a - floor(a / b) * b; }"""

_P_NEG = """\
// -a, wrapping. ptxas of CUDA 13.0 drops a plain int32 negation that feeds a three-input
// integer min / max it forms (VIMNMX3): min(min(-s, i), 0) ran as min(s, i, 0), also where
// the min came from a comparison and select (docs/cuda.md, "Known limits"). For int the
// negation is a not + add in inline PTX, which reaches the SASS as a negation.
template <typename T> __device__ __forceinline__ T tirx_neg(T a) { return T(0ull - (unsigned long long)a); }
template <> __device__ __forceinline__ int tirx_neg<int>(int a) {
  int r;
  asm("{\\n\\t.reg .b32 t;\\n\\tnot.b32 t, %1;\\n\\tadd.s32 %0, t, 1;\\n\\t}" : "=r"(r) : "r"(a));
  return r;
}"""

_P_SHIFT = """\
// shifts as the IR defines them for any amount: it is read as unsigned, and amounts of the
// width or more give 0 (<<) or the sign fill (>>); << wraps around (two's complement)
template <typename T> struct tirx_uint;
template <> struct tirx_uint<int> { typedef unsigned int t; static const bool sign = true; };
template <> struct tirx_uint<unsigned int> { typedef unsigned int t; static const bool sign = false; };
template <> struct tirx_uint<long long> { typedef unsigned long long t; static const bool sign = true; };
template <> struct tirx_uint<unsigned long long> { typedef unsigned long long t; static const bool sign = false; };
template <typename T> __device__ __forceinline__ T tirx_shl(T a, T b) {
  typedef typename tirx_uint<T>::t U;
  return (U)b < (U)(sizeof(T) * 8) ? (T)((U)a << (U)b) : (T)0;
}
template <typename T> __device__ __forceinline__ T tirx_shr(T a, T b) {
  typedef typename tirx_uint<T>::t U;
  const T fill = tirx_uint<T>::sign ? (T)(a >> (sizeof(T) * 8 - 1)) : (T)0;
  return (U)b < (U)(sizeof(T) * 8) ? (T)(a >> (U)b) : fill;
}"""

_P_F2I = """\
// float -> integer as the IR defines it: truncate, saturate, NaN -> 0 (PTX gives the
// minimum for NaN in 64-bit and f64 conversions)
template <typename To, typename From> __device__ __forceinline__ To tirx_f2i(From x) {
  return x != x ? (To)0 : (To)x;
}"""

_P_VEC = """\
// N-lane vectors without a CUDA vector type: elementwise operators, aligned for wide accesses
template <typename T, int N> struct alignas(sizeof(T) * N <= 16 ? sizeof(T) * N : 16) tirx_vec {
  T v[N];
  __device__ __forceinline__ T& operator[](int i) { return v[i]; }
  __device__ __forceinline__ const T& operator[](int i) const { return v[i]; }
};
#define TIRX_VEC_BINOP(OP)                                                                  \\
  template <typename T, int N>                                                              \\
  __device__ __forceinline__ tirx_vec<T, N> operator OP(tirx_vec<T, N> a, tirx_vec<T, N> b) { \\
    tirx_vec<T, N> r;                                                                       \\
    _Pragma("unroll") for (int i = 0; i < N; ++i) r.v[i] = a.v[i] OP b.v[i];                \\
    return r;                                                                               \\
  }
TIRX_VEC_BINOP(+) TIRX_VEC_BINOP(-) TIRX_VEC_BINOP(*) TIRX_VEC_BINOP(/)
template <typename T, int N> __device__ __forceinline__ tirx_vec<T, N> tirx_bcast(T x) {
  tirx_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = x;
  return r;
}
template <typename T, int N> __device__ __forceinline__ tirx_vec<T, N> tirx_ramp(T base, T stride) {
  tirx_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = base + (T)i * stride;
  return r;
}
template <typename T, typename I, int N>
__device__ __forceinline__ tirx_vec<T, N> tirx_gather(const T* p, tirx_vec<I, N> idx) {
  tirx_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = p[idx.v[i]];
  return r;
}
template <typename T, typename I, int N>
__device__ __forceinline__ void tirx_scatter(T* p, tirx_vec<I, N> idx, tirx_vec<T, N> x) {
#pragma unroll
  for (int i = 0; i < N; ++i) p[idx.v[i]] = x.v[i];
}
template <typename To, typename T, int N> __device__ __forceinline__ tirx_vec<To, N> tirx_vcast(tirx_vec<T, N> x) {
  tirx_vec<To, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i)  // float -> integer: NaN -> 0, as the IR defines it
    r.v[i] = ((To)0.5 == (To)0 && x.v[i] != x.v[i]) ? (To)0 : (To)x.v[i];
  return r;
}
template <typename To, typename T, int N> __device__ __forceinline__ tirx_vec<To, N> tirx_vcast_from_mf(tirx_vec<T, N> x) {
  tirx_vec<To, N> r;  // a minifloat (fp8/fp6/fp4) source: exact in float, then as a scalar cast
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = (To)(float)x.v[i];
  return r;
}
template <typename To, typename T, int N> __device__ __forceinline__ tirx_vec<To, N> tirx_vcast_to_mf(tirx_vec<T, N> x) {
  tirx_vec<To, N> r;  // a minifloat destination: its constructor rounds once
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = To(x.v[i]);
  return r;
}
template <typename T, int N> __device__ __forceinline__ tirx_vec<T, N> tirx_vmin(tirx_vec<T, N> a, tirx_vec<T, N> b) {
  tirx_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = a.v[i] < b.v[i] ? a.v[i] : b.v[i];
  return r;
}
template <typename T, int N> __device__ __forceinline__ tirx_vec<T, N> tirx_vmax(tirx_vec<T, N> a, tirx_vec<T, N> b) {
  tirx_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = a.v[i] > b.v[i] ? a.v[i] : b.v[i];
  return r;
}"""


def _prelude(features: set, helpers: Any = ()) -> list[str]:
    out = ["// generated by tirx (CUDA backend)", _P_TYPES]
    if "fp16" in features or "bf16" in features or "fp8" in features:
        out.append("#include <cuda_fp16.h>")
    if "bf16" in features or "fp8" in features:
        out.append("#include <cuda_bf16.h>")
    if "fp8" in features:
        out.append("#include <cuda_fp8.h>")
    if "fp6" in features:
        out.append("#include <cuda_fp6.h>")
    if "fp4" in features:
        out.append("#include <cuda_fp4.h>")
    if "dyn_smem" in features:
        out.append("extern __shared__ __align__(16) unsigned char tirx_dyn_smem[];")
    if "neg" in features or "floordiv" in features:  # the division helpers negate too
        out.append(_P_NEG)
    if "floordiv" in features:
        out.append(_P_FLOORDIV)
    if "shift" in features:
        out.append(_P_SHIFT)
    if "f2i" in features:
        out.append(_P_F2I)
    if "vec" in features:
        out.append(_P_VEC)
    out.extend(h.code for h in helpers)  # the ops' helpers, each after its dependencies
    if "tensormap" in features:
        out.append("struct __align__(64) tirx_tensormap { unsigned long long v[16]; };  // a CUtensorMap")
    text = "\n".join(out) + "\n"
    return text.split("\n")


def generate(obj: Function | Module, restrict: bool = True, wrap_int: bool = True) -> CudaSource:
    """Generate CUDA C++ for a Function or Module (see the module docstring)."""
    return deep.call(_generate, obj, restrict, wrap_int)


def _generate(obj: Function | Module, restrict: bool, wrap_int: bool) -> CudaSource:
    from tirx.passes.layout import lower_layouts  # tensors with a layout: flat accesses at its offsets

    cg = CodeGenCUDA(restrict=restrict, wrap_int=wrap_int)
    obj = lower_layouts(obj, cg.layout_arith)
    return cg.generate(obj)
