"""CodeGenCUDA's expressions: ``e_<Node>`` for each expression node (``_expr`` dispatches on the
class name), casts, and the helpers only they use.

A mixin of ``CodeGenCUDA`` (``cuda.py``), split out by node family (issue #30); the state it
reads (``features``, ``bounds``, ``names``, ...) and ``ctype``/``define``/``var_name``/
``lower_call`` are CodeGenCUDA's."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

from ..ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Broadcast,
    Call,
    Div,
    FloatImm,
    GlobalVar,
    IntImm,
    Let,
    Mod,
    Mul,
    Not,
    Or,
    PointerType,
    PrimExpr,
    PrimType,
    Ramp,
    Shl,
    Shr,
    StringImm,
    Sub,
    Var,
)
from ..ir.arith import int_range
from ..ir.functor import Dispatch, Functor
from ..ir.operators import BY_NODE, C_PREC_UNARY, OPERATORS
from ..ir.types import DTYPE_NAMES, prim
from .cuda_common import _C_SCALAR, _PREC_PRIMARY, _error, _is_int32, _wide_int, fold_bool_terms

if TYPE_CHECKING:
    from ..ir import Module
    from ..ir.bounds import Bounds

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
_PREC_UNARY = C_PREC_UNARY
# C++ spelling and precedence from the one operator table (tirx/ir/operators.py)
_BIN = {o.node: (o.c_text, o.c_prec) for o in OPERATORS if o.c_text is not None and not o.unary}
_BITWISE = tuple(o.node for o in OPERATORS if o.kind == "bitwise" and not o.unary)
_NOT_C = BY_NODE[Not].c_text


# two-lane half types CUDA has a vector type for (half2, __nv_bfloat162): lane-wise helpers take
# them unpacked into a tirx_vec (tirx_unpack) and give them back packed (tirx_pack)
_PAIRS = {("float16", 2): "vec_h2", ("bfloat16", 2): "vec_bf2"}
# lane-wise comparison helpers (the "vec_lanes" prelude)
_VCMP = {LT: "tirx_vlt", LE: "tirx_vle", GT: "tirx_vgt", GE: "tirx_vge", EQ: "tirx_veq", NE: "tirx_vne"}


def _narrow_int(t: Any) -> bool:
    """8/16-bit scalar integers, which C++ promotes to int before arithmetic."""
    return isinstance(t, PrimType) and t.is_int and t.lanes == 1 and t.bits < 32


_C_FLOAT_FN = {"fmod": ("fmodf", "fmod"), "floor": ("floorf", "floor")}  # float Mod / FloorDiv


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


def _wrapping(ctype: str, bits: int, a: str, op: str, b: str) -> str:
    """``a op b`` of signed ``ctype`` computed in its unsigned type: wrapping, as the IR defines
    ``+ - *`` (C++ leaves signed overflow undefined)."""
    u = "unsigned int" if bits == 32 else "unsigned long long"
    return f"(({ctype})(({u})({a}) {op} ({u})({b})))"


class ExprMixin(Functor):
    """The expression nodes, to C++ text with its precedence."""

    if TYPE_CHECKING:  # CodeGenCUDA's (cuda.py)
        features: set[str]
        bounds: Bounds
        names: dict[Any, str]
        scalar_bufs: set
        module: Module | None
        wrap_int: bool
        _guard_subs: set[int]

        def var_name(self, v: Var) -> str: ...
        def define(self, v: Var, hint: str | None = None) -> str: ...
        def ctype(self, t: Any, what: str = "type") -> str: ...
        def lower_call(self, e: Call) -> tuple[str, int]: ...
        def func_cname(self, name: str) -> str: ...
        def is_pos(self, e: PrimExpr) -> bool: ...
        def is_nonneg(self, e: PrimExpr) -> bool: ...
        def div_may_overflow(self, e: Any) -> bool: ...
        def int_overflows(self, e: PrimExpr) -> bool: ...

    # -- expressions ----------------------------------------------------------------
    def expr(self, e: PrimExpr) -> str:
        return self._expr(e)[0]

    def wrap(self, e: PrimExpr, prec: int) -> str:
        s, p = self._expr(e)
        return s if p >= prec else f"({s})"

    _e_table = Dispatch("e_")

    def _expr(self, e: PrimExpr) -> tuple[str, int]:
        meth = self._e_table[type(e)]
        if meth is None:
            raise _error(f"cuda codegen: unsupported expression {type(e).__name__}", e)
        return meth(self, e)

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

    def _lanes_in(self, e: PrimExpr) -> str:
        """Vector ``e`` as a ``tirx_vec`` (a half2 / __nv_bfloat162 unpacked), for the lane-wise
        helpers."""
        t = cast(PrimType, e.ty)
        self.features.add("vec")
        self.ctype(t)
        pair = _PAIRS.get((t.base, t.lanes))
        if pair is None:
            return self.expr(e)
        self.features.add(pair)
        return f"tirx_unpack({self.expr(e)})"

    def _lanes_out(self, t: PrimType, s: str) -> str:
        """A lane-wise helper's ``tirx_vec`` result ``s`` as the C type of ``t`` (packed into
        half2 / __nv_bfloat162 where that is its type)."""
        pair = _PAIRS.get((t.base, t.lanes))
        if pair is None:
            return s
        self.features.update(("vec", pair))
        return f"tirx_pack({s})"

    def per_lane_call(self, fname: str, args: Any, t: PrimType, node: Any) -> str:
        """``fname(args...)`` of vector type ``t`` as TIRx (and TVM) compile an extern call of
        a vector type: the C function is called once per lane (``per_lane``)."""
        return self.per_lane(
            args, t, node, lambda xs, _tys: f"{fname}({', '.join(xs)})", f"T.{node.op.name} {fname}"
        )

    def per_lane(self, args: Any, t: PrimType, node: Any, element: Any, what: str) -> str:
        """A call of vector type ``t`` lane by lane: ``element(xs, tys)`` is one lane's C, ``xs``
        the C of that lane of each vector argument (a scalar argument as it is) and ``tys``
        their scalar types; the lanes make the result (extern calls, math ops of vectors)."""
        n = t.lanes
        self.features.add("vec")
        self.ctype(t)
        decls, parts, tys = [], [], []
        for k, a in enumerate(args):
            if self._is_vec(a.ty):
                if a.ty.lanes != n:
                    raise _error(f"{what}: argument {k + 1} has {a.ty.lanes} lanes, the result {n}", node)
                decls.append(f"const auto _a{k} = {self._lanes_in(a)};")
                parts.append(f"_a{k}.v[_l]")
                tys.append(a.ty.element)
            else:
                decls.append(f"const auto _a{k} = {self.expr(a)};")
                parts.append(f"_a{k}")
                tys.append(a.ty)
        el = self.ctype(t.element)
        loop = f"for (int _l = 0; _l < {n}; ++_l) _r.v[_l] = {element(parts, tys)};"
        body = " ".join([*decls, f"tirx_vec<{el}, {n}> _r;", loop, f"return {self._lanes_out(t, '_r')};"])
        return f"[&]() {{ {body} }}()"

    def _vec_compare(self, e: Any) -> str:
        """A comparison of vectors: a vector of bools, lane by lane. Half types and minifloats
        compare as float (exact; C++ has no minifloat comparisons), others as themselves."""
        t = cast(PrimType, e.a.ty)
        low = ("float16", "bfloat16", *_MINI_BASES)
        c = "float" if t.base in low else self.ctype(t.element)
        self.features.update(("vec", "vec_lanes"))
        return f"{_VCMP[type(e)]}<{c}>({self._lanes_in(e.a)}, {self._lanes_in(e.b)})"

    def _arith(self, e):
        op, prec = _BIN[type(e)]
        t = e.a.ty
        if type(e) in _VCMP and self._is_vec(t):
            return self._vec_compare(e), _PREC_PRIMARY
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
            return self._int_division_call("sdiv" if isinstance(e, Div) else "smod", t, e), _PREC_PRIMARY
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
        if isinstance(e, (Add, Sub, Mul)) and isinstance(t, PrimType) and t.is_bool and t.lanes == 1:
            # arithmetic of one-bit values is a bool again (C computes it in int: true + true
            # is 2): the interpreter's rule, the int result != 0
            return f"((bool)({self._binary(e, op, prec)[0]}))", _PREC_PRIMARY
        if isinstance(e, (Add, Sub, Mul, Div, Mod, Shl)) and _narrow_int(t):
            # C++ computes 8/16-bit integers in int: truncate back to the IR's dtype
            return f"(({self.ctype(t)})({self._binary(e, op, prec)[0]}))", _PREC_PRIMARY
        return self._binary(e, op, prec)

    e_Add = e_Sub = e_Mul = e_Div = e_Mod = _arith
    e_Shl = e_Shr = e_BitAnd = e_BitOr = e_BitXor = _arith
    e_LT = e_LE = e_GT = e_GE = e_EQ = e_NE = _arith

    def e_And(self, e):
        if self._is_vec(e.a.ty):
            self.features.update(("vec", "vec_lanes"))
            return f"tirx_vand({self._lanes_in(e.a)}, {self._lanes_in(e.b)})", _PREC_PRIMARY
        f = fold_bool_terms(e)  # ``T.And(T.bool(True), c)``: ``c``
        if f is not e:
            return self._expr(f)
        return self._binary(e, *_BIN[And])

    def e_Or(self, e):
        if self._is_vec(e.a.ty):
            self.features.update(("vec", "vec_lanes"))
            return f"tirx_vor({self._lanes_in(e.a)}, {self._lanes_in(e.b)})", _PREC_PRIMARY
        f = fold_bool_terms(e)
        if f is not e:
            return self._expr(f)
        return self._binary(e, *_BIN[Or])

    def e_Not(self, e):
        if self._is_vec(e.a.ty):
            self.features.update(("vec", "vec_lanes"))
            return f"tirx_vnot({self._lanes_in(e.a)})", _PREC_PRIMARY
        return f"{_NOT_C}{self.wrap(e.a, _PREC_UNARY)}", _PREC_UNARY

    def e_BitNot(self, e):
        t = e.a.ty
        if isinstance(t, PrimType) and t.is_bool:
            # a one-bit value's complement is its negation (C's ~ of a promoted bool is -1 or -2,
            # true either way): the interpreter's numpy.invert of bools
            return self.e_Not(e)
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

    def _c_float_fn(self, name: str, t: PrimType, args: list) -> str:
        """``fmod``/``floor`` of a float type, computed in float32 for the half types."""
        f32, f64 = _C_FLOAT_FN[name]
        if t.base == "float64":
            return f"{f64}({', '.join(self.expr(a) for a in args)})"
        if t.base == "float32":
            return f"{f32}({', '.join(self.expr(a) for a in args)})"
        return f"{self.ctype(t)}({f32}({', '.join('float(' + self.expr(a) + ')' for a in args)}))"

    def e_FloorDiv(self, e):
        t = e.a.ty
        if (h := self._half_float_op(t, e, "tirx_floordiv_f")) is not None:
            return h, _PREC_PRIMARY
        if isinstance(t, PrimType) and t.is_float:
            return self._c_float_fn("floor", t, [Div(e.a, e.b)]), _PREC_PRIMARY
        if t.kind == "uint" or (self.is_nonneg(e.a) and self.is_pos(e.b)):
            return self._binary(e, "/", 13)
        return self._int_division_call("floordiv", t, e), _PREC_PRIMARY

    def e_FloorMod(self, e):
        t = e.a.ty
        if (h := self._half_float_op(t, e, "tirx_floormod")) is not None:
            return h, _PREC_PRIMARY
        if isinstance(t, PrimType) and t.is_float:
            self.features.add("floordiv")
            return f"tirx_floormod({self.expr(e.a)}, {self.expr(e.b)})", _PREC_PRIMARY
        if t.kind == "uint" or (self.is_nonneg(e.a) and self.is_pos(e.b)):
            return self._binary(e, "%", 13)
        return self._int_division_call("floormod", t, e), _PREC_PRIMARY

    def _int_division_call(self, name: str, t: Any, e: Any) -> str:
        """``tirx_<name><T>(a, b)`` (floordiv, floormod, sdiv, smod: the IR's integer division
        rules); on an integer vector the ``tirx_v<name>`` helper applies it lane by lane."""
        self.features.add("floordiv")
        if self._is_vec(t):
            self.features.update(("vec", "vec_div"))
            self.ctype(t)
            return f"tirx_v{name}<{self.ctype(t.element)}, {t.lanes}>({self.expr(e.a)}, {self.expr(e.b)})"
        # explicit template argument: small int types promote to int in C++ (ambiguous otherwise)
        return f"tirx_{name}<{self.ctype(t)}>({self.expr(e.a)}, {self.expr(e.b)})"

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
            if (t.base, t.lanes) in _PAIRS:  # half2 / __nv_bfloat162: lane by lane, unpacked
                r = f"tirx_v{which}({self._lanes_in(e.a)}, {self._lanes_in(e.b)})"
                return self._lanes_out(t, r), _PREC_PRIMARY
            return f"tirx_v{which}({self.expr(e.a)}, {self.expr(e.b)})", _PREC_PRIMARY
        return f"{which}({self.expr(e.a)}, {self.expr(e.b)})", _PREC_PRIMARY

    def e_Select(self, e):
        if self._is_vec(e.cond.ty):  # a vector condition selects lane by lane
            self.features.update(("vec", "vec_lanes"))
            t = cast(PrimType, e.ty)
            r = (
                f"tirx_vselect({self._lanes_in(e.cond)}, {self._lanes_in(e.true_value)}, "
                f"{self._lanes_in(e.false_value)})"
            )
            return self._lanes_out(t, r), _PREC_PRIMARY
        return (
            f"{self.wrap(e.cond, 4)} ? {self.wrap(e.true_value, 4)} : {self.wrap(e.false_value, 3)}",
            3,
        )

    def e_Cast(self, e):
        return self.cast(e.ty, e.value), _PREC_PRIMARY

    def cast(self, to: Any, value: PrimExpr) -> str:
        fr = value.ty
        if isinstance(to, PrimType) and isinstance(fr, PrimType):
            if to == fr:  # no conversion: the value, parenthesized as the operand it now is
                return self.wrap(value, _PREC_PRIMARY)
            low = ("float16", "bfloat16", *_MINI_BASES)
            if fr.is_float and to.is_int and to.bits < 32:
                return self._float_to_narrow_int(to, value, fr.base in low)
            if fr.is_float and to.is_int and to.lanes == 1 and (to.bits == 64 or fr.base == "float64"):
                # PTX's cvt.rzi.{s,u}64 and cvt.rzi.*.f64 saturate but turn NaN into the
                # minimum; the IR says 0
                self.features.add("f2i")
                x = f"float({self.expr(value)})" if fr.base in low else self.expr(value)
                return f"tirx_f2i<{self.ctype(to)}>({x})"
            if to.lanes > 1 and fr.lanes == 1 and (to.base, to.lanes) not in _PAIRS and not to.is_minifloat:
                # a scalar cast to a vector (an offset added to a lane ramp): every lane the value
                self.features.add("vec")
                self.ctype(to)
                el = self.cast(to.element, value)
                return f"tirx_bcast<{self.ctype(to.element)}, {to.lanes}>({el})"
            if to.lanes > 1 or fr.lanes > 1:
                self.features.add("vec")
                self.ctype(to)
                # minifloats have no C++ comparisons: they convert through their constructors
                vc = "tirx_vcast"
                if fr.is_minifloat or to.is_minifloat:
                    vc = "tirx_vcast_from_mf" if fr.is_minifloat else "tirx_vcast_to_mf"
                if (fr.base, fr.lanes) in _PAIRS or (to.base, to.lanes) in _PAIRS:
                    # half2 / __nv_bfloat162 on either side: lane by lane as tirx_vec
                    r = f"{vc}<{self.ctype(to.element)}>({self._lanes_in(value)})"
                    return self._lanes_out(to, r)
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
        fr = cast(PrimType, value.ty)
        x = self._lanes_in(value) if (fr.base, fr.lanes) in _PAIRS else self.expr(value)
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

    def e_GlobalVar(self, e: GlobalVar):
        return self.func_cname(e.name), _PREC_PRIMARY
