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

``CodeGenCUDA`` is split by node family (issue #30): its expressions, statements and buffers
are mixins in ``cuda_expr.py``, ``cuda_stmt.py`` and ``cuda_buffer.py``; what they share with
this module is in ``cuda_common.py``.
"""

from __future__ import annotations

import re
from typing import Any, cast

import attrs

from ..errors import DiagnosticError, OpError
from ..ir import (
    And,
    Bind,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    DeclBuffer,
    DeviceEntry,
    Function,
    GlobalVar,
    IntImm,
    Module,
    PointerType,
    PrimExpr,
    PrimType,
    Ramp,
    Stmt,
    StringImm,
    Sub,
    Var,
    VoidType,
    convert,
    deep,
)
from ..ir import op as _op
from ..ir.arith import int_range
from ..ir.bounds import Bounds, local_ranges
from ..ir.dyn_smem import DynSmem, dyn_smem_layout
from ..ir.op import PTX, CExpr, Helper
from ..ir.stmt import flat_stmts
from ..ir.types import SUBBYTE_INTS, tensormap_ptr
from ..ir.visitor import Visitor
from .asm import asm_bind, asm_call, template_outputs
from .cuda_buffer import BufferMixin, vector_alignment
from .cuda_common import _C_SCALAR, _PREC_PRIMARY, _add, _comment, _error, _is_int32, _wide_int
from .cuda_expr import ExprMixin
from .cuda_stmt import StmtMixin
from .host_split import contains_entry, host_program, is_straight_line, split_launches

__all__ = ["CudaSource", "KernelInfo", "KernelParam", "generate"]

BACKEND = "cuda"

# --------------------------------------------------------------------------- types
# minifloats CUDA (cuda_fp8.h / cuda_fp6.h / cuda_fp4.h) has no type for: a codegen error
_NO_C_TYPE = frozenset(
    ("float8_e3m4", "float8_e4m3", "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2fnuz")
)
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
    host_stmts: list  # Bind/Assert/DeclBuffer before the entry, then maybe the Return after it (host code)
    dyn_vars: list  # list[Var]
    index: int = 0  # which of the function's device entries (launched in this order)
    # host values a host program passes at the launch, in parameter order: (var, source)
    # (tirx.codegen.host_split.HostLaunch.outer); structured: the function's host code is a
    # host program (tirx.runtime.host_program) rather than straight-line
    outer: list = attrs.Factory(list)
    structured: bool = False
    #: the bytes of dynamic shared memory its ``shared.dyn`` allocations need (tirx.ir.dyn_smem),
    #: or the entry's ``cuda.smem_required`` (an SMEMPool's views) when larger; launched when
    #: the entry gives no ``dynamic_smem_bytes``; None: a size is not constant
    dyn_smem: int | None = 0


@attrs.define
class CudaSource:
    text: str
    kernels: list  # list[KernelInfo]
    line_spans: dict  # 1-based line -> span
    features: frozenset = frozenset()
    host_only: tuple = ()  # a module's public functions with no device entry (run on the CPU)

    def __str__(self) -> str:
        return self.text


# --------------------------------------------------------------------------- analysis
class _Usage(Visitor):
    """Which buffers are written, widest vector access per buffer data var, used vars."""

    def __init__(self, callee_writes: dict | None = None) -> None:
        # module function name -> indices of the pointer parameters it may write (None: any)
        self.callee_writes = callee_writes or {}
        self.written: set = set()
        # data vars a C store writes (``written`` less the ops and calls that only may write)
        self.stored: set = set()
        # data vars read by C-level loads (not an element whose address alone is taken)
        self.loaded: set = set()
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

    def close_written(self) -> None:
        """A pointer bound to another (``p = A.data``) that is written writes the other too."""
        from ..ir.visitor import collect_vars

        for got in (self.written, self.stored):
            todo = [v for v in got if v in self.bound]
            while todo:
                v = todo.pop()
                for x in collect_vars(self.bound[v]):
                    if isinstance(x.ty, PointerType) and x not in got:
                        got.add(x)
                        if x in self.bound:
                            todo.append(x)

    def pointer_roots(self, vars_: set) -> set:
        """The pointers ``vars_`` are bound from (``p = A.data``: A), through every binding."""
        from ..ir.visitor import collect_vars

        out: set = set()
        todo = list(vars_)
        seen: set = set()
        while todo:
            v = todo.pop()
            if v in seen:
                continue
            seen.add(v)
            got = (
                [x for x in collect_vars(self.bound[v]) if isinstance(x.ty, PointerType)]
                if v in self.bound
                else []
            )
            if got:
                todo += got
            else:  # a parameter, an allocation, or a pointer made from an integer: itself
                out.add(v)
        return out

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
            a = vector_alignment(buf.dtype, lanes)
            self.align[buf.data] = max(self.align.get(buf.data, 0), a)

    def visit_BufferLoad(self, e: BufferLoad) -> None:
        self.loaded.add(e.buffer.data)
        self._access(e.buffer, e.indices)
        self.generic_visit(e)

    def _address_of(self, ld: BufferLoad) -> None:
        """An element whose address alone is taken: used, not loaded."""
        self._access(ld.buffer, ld.indices)
        self.visit_buffer(ld.buffer)
        for x in ld.indices:
            self.visit(x)

    def visit_BufferStore(self, s: BufferStore) -> None:
        self.written.add(s.buffer.data)
        self.stored.add(s.buffer.data)
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
            writes = self.callee_writes.get(c.op.name)  # None: unknown, any pointer may be written
            for i, a in enumerate(c.args):
                if isinstance(a, Var) and isinstance(a.ty, PointerType) and (writes is None or i in writes):
                    self.written.add(a)
        elif c.op.traits.alignment_test and _is_address_of_load(c.args[0]):
            self._address_of(c.args[0].args[0])  # reads the address only: neither a load nor a write
            return
        else:
            # pointers handed to ops (atomics, asm, address_of) may be written
            if c.op.traits.takes_address and isinstance(c.args[0], BufferLoad):
                self.written.add(c.args[0].buffer.data)
                self._address_of(c.args[0])
                for a in c.args[1:]:
                    self.visit(a)
                return
            outs = _element_writes(c) if not c.op.pure else frozenset()
            for i, a in enumerate(c.args):
                if isinstance(a.ty, PointerType) and isinstance(a, Var):
                    self.written.add(a)
                elif isinstance(a, BufferLoad) and (outs is None or i in outs):
                    # inline PTX writes a buffer element operand it binds as {i:out} / {i:inout}
                    # (an lvalue of the asm: a C store); an op that does not say may write any
                    self.written.add(a.buffer.data)
                    if outs is not None:
                        self.stored.add(a.buffer.data)
        self.generic_visit(c)

    def visit_buffer(self, b: Buffer) -> None:
        self.generic_visit(b)

    def visit_DeclBuffer(self, s: Any) -> None:
        b = s.buffer
        if cast(PointerType, b.data.ty).element != b.dtype:
            self.views[b.data] = max(self.views.get(b.data, 0), b.dtype.bytes)
        self.generic_visit(s)


def _merged_loads_unsafe(use: _Usage, read_only: set) -> bool:
    """Whether the kernel's tensors that no C store writes must go without ``__restrict__``: it
    writes global memory and also loads global memory other than its read-only tensors.
    NVRTC 13.0 merges two loads on alternative paths (``c ? W[i] : X[j]``, or the same in an
    ``if`` / ``else``) into one load of the selected address and, when one side is a
    ``__restrict__`` pointer the C code never stores through (NVVM takes it as read-only), emits
    it ``ld.global.nc`` (the non-coherent path), sometimes scheduled above the stores before
    it: the side that reads memory the kernel writes then sees stale data (found by the
    CUDA-against-interpreter fuzz, 2026-12-07; tests/test_codegen_cuda.py). Without
    ``__restrict__`` on those pointers the merged load is a plain one; kernels that load only
    their read-only inputs keep it everywhere."""
    if not any(_is_global(v) for v in use.written):
        return False
    return any(_is_global(v) and v not in read_only for v in use.pointer_roots(use.loaded))


def _is_global(v: Any) -> bool:
    t = v.ty
    return isinstance(t, PointerType) and t.scope in ("global", "")


def _element_writes(c: Call) -> frozenset[int] | None:
    """The argument positions of an impure op's call that are buffer elements it writes, where
    its lowering says (a PTX template's ``{i:out}`` / ``{i:inout}``, the PTX table's rows);
    None: unknown, any element operand may be written."""
    if c.op.traits.atomic is not None:  # writes through its pointer; the values are values
        return frozenset()
    fn = _op.impl("writes", c.op)
    if fn is not None:
        return fn(c)
    spec = _op.impl(BACKEND, c.op)
    if isinstance(spec, PTX):
        if spec.template is not None:
            return template_outputs(cast(str, spec.for_args(len(c.args))))
        if c.args and isinstance(c.args[0], StringImm):  # T.ptx.asm: operands after the template
            return frozenset(i + 1 for i in template_outputs(c.args[0].value))
    return None


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


def _pointer_writes(mod: Any) -> dict:
    """Per module function, the indices of the pointer parameters it may write (through a
    store, an op, or a call of another function that may): a fixed point from "every pointer"
    down, so a kernel passing its read-only tensor to a reading helper keeps it ``const``."""
    ptr = {
        f.name: {i for i, p in enumerate(f.params) if isinstance(p.ty, PointerType)} for f in mod.functions
    }
    writes = {k: set(v) for k, v in ptr.items()}
    changed = True
    while changed:
        changed = False
        for f in mod.functions:
            u = _Usage(writes)
            u.visit(f.body)
            u.close_written()
            new = {i for i in ptr[f.name] if f.params[i] in u.written}
            if new != writes[f.name]:
                writes[f.name] = new
                changed = True
    return writes


def _check_host_views(f: Function, host: list, views: list, dyn: Any) -> None:
    """The host bindings that tensors declared on the host (``views``, used by the kernel)
    depend on for their pointer and shape must be computable on the host (the launcher
    evaluates them, tirx.runtime.hostexpr): a located error here, not at load time."""
    from ..ir.visitor import collect_vars
    from ..runtime.hostexpr import HostExprError, to_python

    names: dict = {v: "_" for v in (*f.params, *dyn)}
    bad: dict = {}
    for h in host:
        if isinstance(h, Bind):
            try:
                to_python(h.value, names)
                names[h.var] = "_"
            except HostExprError as e:
                bad[h.var] = (h, str(e))
    for d in views:
        b = d.buffer
        for v in (
            b.data,
            *(x for e in (*b.shape, *(b.strides or ()), b.elem_offset) for x in collect_vars(e)),
        ):
            if v in bad:
                h, why = bad[v]
                raise _error(
                    f"function {f.name}: tensor {b.name}, declared on the host, needs {v.name}, which the host "
                    f"cannot compute ({why}); declare the tensor inside the device entry instead",
                    h,
                )


# --------------------------------------------------------------------------- emitter
# hardware limits of the launch configuration: the largest grid and block per axis
_MAX_GRID = {"x": 2**31 - 1, "y": 65535, "z": 65535}
_MAX_BLOCK = {"x": 1024, "y": 1024, "z": 64}
_MAX_CLUSTER = 16  # blocks per cluster (non-portable maximum on sm_90)


class CodeGenCUDA(ExprMixin, StmtMixin, BufferMixin):
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
        self.launch_dims: dict = {}  # "block.y" -> (lo, hi) of this kernel's launch dimensions
        self._address_arith: set = set()  # Add/Mul nodes made by flat_index (plain C++)
        self.layout_arith: set = set()  # the same, made by the lower-layouts stage (emit's layout_arith)
        self.buf_ptr: dict[Buffer, str] = {}
        self.scalar_bufs: set = set()
        self.view_bytes: dict = {}  # data var -> widest element of a view of another dtype over it
        self.vec_align: dict = {}  # data var -> alignment its vector accesses need (vector_alignment)
        self.tmem_vars: set = set()  # data vars of T.tmem declarations (no C object)
        self.dyn_smem = DynSmem({}, 0)
        self.dyn_align = 16  # the dynamic shared window's declared alignment (the largest any kernel needs)
        self.in_kernel = False
        self.func: Function | None = None
        self.module: Module | None = None
        self.ret_ty: Any = None
        self._knames: set[str] = set()  # C names of a function's further kernels (f_kernel_1)
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
            return cast(str, spec.for_args(len(e.args))), list(e.args)
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
            if t.base in SUBBYTE_INTS:
                raise _error(
                    f"cuda codegen: dtype {t}: integers narrower than a byte have no CUDA type (TIRx packs "
                    "eight int4 in an int and its element stores overwrite their neighbours); keep them "
                    "packed in uint8 / uint32 and take them apart with shifts and masks"
                )
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
        if isinstance(t, PrimType) and t.lanes > 1:  # a vector: each lane is such a division
            t = t.element
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

    def block_is_1d(self) -> bool:
        """This kernel's blocks are known to be one-dimensional (``blockDim.y == blockDim.z ==
        1``): thread-model ops may then read ``threadIdx.x`` alone for the linear index."""
        d = self.launch_dims
        return d.get("block.y") == (1, 1) and d.get("block.z") == (1, 1)

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
        self.launch_dims = dims
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

    # -- functions --------------------------------------------------------------------
    def func_cname(self, name: str) -> str:
        return self._fnames[name]

    def _reset_func(self) -> None:
        self.names = {}
        self._taken = set(self._fnames.values()) | self._knames
        self.bounds = Bounds(call_range=self._call_range)
        self._address_arith = set()
        self._set_launch(None)
        self.buf_ptr = {}
        self.const_ptrs: set = set()
        self.scalar_bufs = set()
        self.view_bytes = {}
        self.dyn_smem = DynSmem({}, 0)
        self._last_loc = None
        self._guard_subs = set()

    def gen_kernel(
        self, f: Function, host: list, entry: DeviceEntry, name: str, index: int = 0, outer: Any = ()
    ) -> KernelInfo:
        self._reset_func()
        self.dyn_smem = self._dyn_smem(entry.body, entry)
        self._guard_subs = self._guards.get(f.name, set())
        self.view_bytes = self._views.get(f.name, {})
        self.vec_align = self._valign.get(f.name, {})
        self.func = f
        self.in_kernel = True
        use = _Usage(self._writes)
        use.visit(entry)
        for h in host:
            if not isinstance(h, DeclBuffer):  # a host view is used where the kernel accesses it
                use.visit(h)
        use.close_written()
        bufs = dict(f.buffer_map)
        params: list[KernelParam] = []
        dyn = f.dyn_vars()
        for p in f.params:
            b = bufs.get(p)
            if isinstance(p.ty, VoidType):  # ``Bias: T.NoneType()``: None on the host, nothing to pass
                continue
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
        # host values a host program passes at the launch (loop variables, bindings, elements
        # of tensors the host allocated: tirx.codegen.host_split)
        for v, _src in outer:
            c = self.define(v)
            if isinstance(v.ty, PrimType) and v.ty.is_int and v.ty.lanes == 1:
                hb.define(v, int_range(v.ty))
                self.bounds.define(v, int_range(v.ty))
            # a TMA descriptor the host encoded (T.stack_alloca("tensormap", 1)): by value
            kind = "tensormap" if v.ty == tensormap_ptr else "host"
            params.append(KernelParam(kind, v.name, c, v.ty, v))
        # host bindings used on the device travel as parameters
        for h in host:
            if isinstance(h, Bind):
                hb.define(h.var, hb(h.value))
                self.bounds.define(h.var, hb.ranges.get(h.var))
                c = self.define(h.var)
                if h.var in use.used_vars:
                    params.append(KernelParam("host", h.var.name, c, h.var.ty, h.var))
        # read-only tensor pointers (``const T*``): a pointer bound to one is a pointer to const too
        self.const_ptrs = {kp.var for kp in params if kp.kind == "buffer" and not kp.written}
        ro_restrict = self.restrict and not _merged_loads_unsafe(use, self.const_ptrs)
        sig = []
        tmaps: dict = {}  # tensormap params: C name of the pointer -> C name of the by-value parameter
        for kp in params:
            t = self.ctype(kp.ty)
            if kp.kind == "buffer":
                el = kp.ty.element
                ct = self.ctype(el)
                const = "" if kp.written else "const "
                if self.restrict and (ro_restrict or kp.var in use.stored):
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
        views = [h for h in host if isinstance(h, DeclBuffer) and h.buffer.data in use.used_vars]
        if views:
            _check_host_views(f, host, views, dyn)
        for h in views:
            # a tensor the host declared over a pointer it has (a parameter, a host binding):
            # the kernel addresses it through that pointer, a kernel parameter
            self.s_DeclBuffer(h)
        self.bounds.set_buffer_ranges(local_ranges(entry.body, self.bounds))
        self.body_with_features(entry.body)
        self.indent -= 1
        self.line("}")
        self.in_kernel = False
        smem = self.dyn_smem.total
        need = entry.attrs.get("cuda.smem_required")  # SMEMPool.commit(): what its views reach
        if smem is not None and isinstance(need, (int, IntImm)) and not isinstance(need, bool):
            smem = max(smem, int(need.value if isinstance(need, IntImm) else need))
        return KernelInfo(name, f, entry, params, host, dyn, index, list(outer), dyn_smem=smem)

    @staticmethod
    def _dyn_smem(body: Any, node: Any) -> DynSmem:
        try:
            return dyn_smem_layout(body)
        except ValueError as e:
            raise _error(str(e), node) from e

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
        self.dyn_smem = self._dyn_smem(f.body, f)
        self._guard_subs = self._guards.get(f.name, set())
        self.view_bytes = self._views.get(f.name, {})
        self.vec_align = self._valign.get(f.name, {})
        self.func = f
        self.in_kernel = False
        bufs = dict(f.buffer_map)
        args = []
        writes = self._writes.get(f.name, set())
        for i, p in enumerate(f.params):
            b = bufs.get(p)
            c = self.define(p, b.name if b is not None else None)
            const = ""
            if isinstance(p.ty, PointerType) and p.ty.scope != "tensormap" and i not in writes:
                const = "const "  # a pointer it only reads: a kernel's read-only tensor may be passed
                self.const_ptrs.add(p)
            args.append(f"{const}{self.ctype(p.ty)} {c}")
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

    def generate(self, obj: Function | Module, select: Any = None) -> CudaSource:
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
        kernels: list[tuple[Function, list, DeviceEntry, int, str, list, bool]] = []
        self._knames = set()  # C names of further kernels of a function (f_kernel_1)
        helpers: list[Function] = []
        host_only: list[str] = []
        called: set = set()
        self._guards = {}
        self._views: dict = {}
        self._valign: dict = {}
        self._writes = _pointer_writes(mod)
        for f in mod.functions:
            u = _Usage(self._writes)
            u.visit(f.body)
            called |= u.calls
            self._guards[f.name] = u.guarded_subs()
            self._views[f.name] = u.views
            self._valign[f.name] = u.align
        for f in mod.functions:
            structured = not is_straight_line(f) and contains_entry(f.body)
            if structured:  # host control flow around the entries: a host program runs them
                launches = [(hl.views, hl.entry, hl.outer) for hl in host_program(f)]
            else:
                launches = [(host, entry, []) for host, entry in split_launches(f)]
            for k, (host, entry, outer) in enumerate(launches):
                if contains_entry(entry.body):
                    raise _error(f"function {f.name}: nested device entries are not supported", entry)
                # a function's kernels are named as TIRx names them: f_kernel, f_kernel_1, ...
                base, j = f"{self._fnames[f.name]}_kernel", k
                name = f"{base}_{j}" if j else base
                while name in taken:
                    j += 1
                    name = f"{base}_{j}"
                taken.add(name)
                self._knames.add(name)
                kernels.append((f, host, entry, k, name, outer, structured))
            if launches or structured:
                continue
            if contains_entry(f.body):
                raise _error(
                    f"function {f.name}: the device entry must be a top-level statement of the function body",
                    f,
                )
            elif f.private or f.name in called:
                helpers.append(f)
            else:
                for r in flat_stmts(f.body):  # a TIRx host region that is no kernel (vthread, CPU regions)
                    if type(r).__name__ == "RegionStmt":
                        where = " outside a device entry" if r.kind == "launch_thread" else ""
                        tag = f"({r.args[0].value!r}, ...)" if r.kind == "launch_thread" else ""
                        raise _error(f"T.{r.kind}{tag}{where} is not supported by the CUDA backend", r)
                if not single:  # a module's host-only function (TIRx's host code): the CPU runs it
                    host_only.append(f.name)
                    continue
                raise _error(
                    f"function {f.name} has no device entry: host-only functions cannot be compiled for the "
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
        for f, host, entry, k, name, outer, structured in kernels:
            if select is not None and (f.name, k) not in select:
                continue  # another compilation group's kernel (backend_config)
            info = self.gen_kernel(f, host, entry, name, k, outer)
            info.structured = structured
            infos.append(info)
            self.lines.append("")
        prelude = _prelude(self.features, self.helpers.values(), self.dyn_align)
        shift = len(prelude)
        text = "\n".join(prelude + self.lines).rstrip() + "\n"
        spans = {k + shift: v for k, v in self.line_spans.items()}
        return CudaSource(text, infos, spans, frozenset(self.features), tuple(host_only))


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


# --------------------------------------------------------------------------- prelude
_P_TYPES = """\
typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned long long uint64_t;
typedef long long int64_t;"""

_P_VEC_DIV = "\n".join(
    f"""template <typename T, int N>
__device__ __forceinline__ tirx_vec<T, N> tirx_v{n}(tirx_vec<T, N> a, tirx_vec<T, N> b) {{
  tirx_vec<T, N> r;  // the scalar rule ({n}) lane by lane
  #pragma unroll
  for (int l = 0; l < N; ++l) r.v[l] = tirx_{n}<T>(a.v[l], b.v[l]);
  return r;
}}"""
    for n in ("floordiv", "floormod", "sdiv", "smod")
)

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
// (the largest power of two dividing the size, at most 16: 12-byte vectors are 4-aligned)
constexpr unsigned long long tirx_vec_align(unsigned long long n) { return (n & (~n + 1)) < 16 ? (n & (~n + 1)) : 16; }
template <typename T, int N> struct alignas(tirx_vec_align(sizeof(T) * N)) tirx_vec {
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
TIRX_VEC_BINOP(%) TIRX_VEC_BINOP(&) TIRX_VEC_BINOP(|) TIRX_VEC_BINOP(^) TIRX_VEC_BINOP(<<) TIRX_VEC_BINOP(>>)
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


_P_VEC_LANES = """\
// lane-wise comparisons of vectors (a vector of bools; C: the type the lanes compare in),
// selects with a vector condition, and logic on vectors of bools
#define TIRX_VEC_CMP(NAME, OP)                                                                \\
  template <typename C, typename T, int N>                                                     \\
  __device__ __forceinline__ tirx_vec<bool, N> NAME(tirx_vec<T, N> a, tirx_vec<T, N> b) {        \\
    tirx_vec<bool, N> r;                                                                       \\
    _Pragma("unroll") for (int i = 0; i < N; ++i) r.v[i] = (C)a.v[i] OP (C)b.v[i];               \\
    return r;                                                                                  \\
  }
TIRX_VEC_CMP(tirx_vlt, <) TIRX_VEC_CMP(tirx_vle, <=) TIRX_VEC_CMP(tirx_vgt, >)
TIRX_VEC_CMP(tirx_vge, >=) TIRX_VEC_CMP(tirx_veq, ==) TIRX_VEC_CMP(tirx_vne, !=)
template <typename T, int N>
__device__ __forceinline__ tirx_vec<T, N> tirx_vselect(tirx_vec<bool, N> c, tirx_vec<T, N> a, tirx_vec<T, N> b) {
  tirx_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = c.v[i] ? a.v[i] : b.v[i];
  return r;
}
#define TIRX_VEC_LOGIC(NAME, OP)                                                                      \\
  template <int N>                                                                                      \\
  __device__ __forceinline__ tirx_vec<bool, N> NAME(tirx_vec<bool, N> a, tirx_vec<bool, N> b) {         \\
    tirx_vec<bool, N> r;                                                                                \\
    _Pragma("unroll") for (int i = 0; i < N; ++i) r.v[i] = a.v[i] OP b.v[i];                            \\
    return r;                                                                                           \\
  }
TIRX_VEC_LOGIC(tirx_vand, &&) TIRX_VEC_LOGIC(tirx_vor, ||)
template <int N> __device__ __forceinline__ tirx_vec<bool, N> tirx_vnot(tirx_vec<bool, N> a) {
  tirx_vec<bool, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = !a.v[i];
  return r;
}"""


def _p_pair(elem: str, pair: str, low: str, high: str, make: str) -> str:
    """``pair`` (half2 / __nv_bfloat162) as a two-lane tirx_vec and back, for the lane-wise helpers."""
    return f"""\
__device__ __forceinline__ tirx_vec<{elem}, 2> tirx_unpack({pair} x) {{
  tirx_vec<{elem}, 2> r;
  r.v[0] = {low}(x);
  r.v[1] = {high}(x);
  return r;
}}
__device__ __forceinline__ {pair} tirx_pack(tirx_vec<{elem}, 2> x) {{ return {make}(x.v[0], x.v[1]); }}"""


_P_VEC_H2 = _p_pair("half", "half2", "__low2half", "__high2half", "__halves2half2")
_P_VEC_BF2 = _p_pair(
    "__nv_bfloat16", "__nv_bfloat162", "__low2bfloat16", "__high2bfloat16", "__halves2bfloat162"
)


def _prelude(features: set, helpers: Any = (), dyn_align: int = 16) -> list[str]:
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
        out.append(f"extern __shared__ __align__({dyn_align}) unsigned char tirx_dyn_smem[];")
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
    if "vec_div" in features:
        out.append(_P_VEC_DIV)
    if "vec_lanes" in features:
        out.append(_P_VEC_LANES)
    if "vec_h2" in features:
        out.append(_P_VEC_H2)
    if "vec_bf2" in features:
        out.append(_P_VEC_BF2)
    out.extend(h.code for h in helpers)  # the ops' helpers, each after its dependencies
    if "tensormap" in features:
        out.append("struct __align__(64) tirx_tensormap { unsigned long long v[16]; };  // a CUtensorMap")
    text = "\n".join(out) + "\n"
    return text.split("\n")


def generate(
    obj: Function | Module, restrict: bool = True, wrap_int: bool = True, select: Any = None
) -> CudaSource:
    """Generate CUDA C++ for a Function or Module (see the module docstring): the compile
    pipeline's preparation of the IR (``sequence-effects``, then
    ``tirx.passes.lowering.prepare``: ``lower-layouts``, ``launch-thread-entries``), then
    :func:`emit`. ``select``, when given, is the set of
    ``(function name, device entry index)`` whose kernels to emit (one compilation group of
    ``backend_config``); kernel names are the same either way."""
    from tirx.passes.lowering import prepare
    from tirx.passes.sequence import SequenceEffects

    ir, layout_arith = prepare(SequenceEffects()(obj))
    return emit(ir, restrict, wrap_int, select, layout_arith)


def emit(
    obj: Function | Module,
    restrict: bool = True,
    wrap_int: bool = True,
    select: Any = None,
    layout_arith: Any = frozenset(),
) -> CudaSource:
    """The ``codegen`` stage: CUDA C++ for IR the pipeline has prepared (no tensor with a
    layout left). ``layout_arith``: the arithmetic nodes ``lower-layouts`` built (addressing,
    left unwrapped as codegen's own flattening is)."""
    return deep.call(_emit, obj, restrict, wrap_int, select, layout_arith)


def _emit(
    obj: Function | Module, restrict: bool, wrap_int: bool, select: Any, layout_arith: Any
) -> CudaSource:
    cg = CodeGenCUDA(restrict=restrict, wrap_int=wrap_int)
    cg.layout_arith = layout_arith if isinstance(layout_arith, set) else set(layout_arith)  # read only
    return cg.generate(obj, select)
