"""Math ops: elementwise functions, float predicates, bit counts and the lazy select.

One meaning per op (docs/interp.md, "Math functions"): float32 and float64 ops are the exact
mathematical function rounded once to the type; half types (float16, bfloat16, float8)
compute the float32 function and round, as the CUDA code does. ``round`` is ties-to-even
(``rintf``). Integer arguments: ``abs``/``fabs`` wrap, the rounding ops are the identity,
every other math op is refused by both backends.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import OpError
from ..ir.expr import EQ, GE, And, FloatImm, IntImm, Not, PrimExpr, Select, Sub, convert
from ..ir.fold import fold, select_arms
from ..ir.op import Helper, alias, declare, get, register_handler
from ..ir.types import PrimType, bool_, int32

__all__: list[str] = []

_INT_IDENTITY = ("floor", "ceil", "round", "trunc", "nearbyint")


# --------------------------------------------------------------------------- CUDA
def _c_math(c32: str, c64: str):
    """The CUDA lowering of a float function: ``c32`` for float32 (and the half types,
    computed in float32 and rounded once), ``c64`` for float64; a vector argument lane by lane
    (as TIRx's CUDA computes it)."""

    def element(cg: Any, name: str, ty: PrimType, xs: list, tys: list) -> str:
        """One element's C: ``xs`` the arguments' C expressions, ``tys`` their scalar types."""
        if ty.is_int:
            if name in _INT_IDENTITY or (name in ("abs", "fabs") and ty.kind == "uint"):
                return f"({xs[0]})"
            if name in ("abs", "fabs"):
                fn = "llabs" if ty.bits == 64 else "abs"
                return f"(({cg.c_scalar(ty.base)}){fn}({xs[0]}))"
            raise OpError(f"op T.{name}: the cuda backend has no integer form ({ty})")
        if ty.base in ("float64", "float32"):
            # a float argument of another width (TIRx's text: T.pow(x, T.float32(1.5)) with a
            # float64 x) converted to the result's: C++ finds pow(double, float) ambiguous
            conv = [f"(({cg.ctype(ty)}){x})" if t.is_float and t != ty else x for x, t in zip(xs, tys)]
            return f"{c64 if ty.base == 'float64' else c32}({', '.join(conv)})"
        # half types: float arguments widened to float32 (an integer argument, ldexp's, as it is)
        widened = [f"float({x})" if t.is_float else x for x, t in zip(xs, tys)]
        return f"{cg.ctype(ty)}({c32}({', '.join(widened)}))"

    def lower(cg: Any, c: Any) -> str:
        name = c.op.name
        ty = c.args[0].ty
        if not isinstance(ty, PrimType):
            raise OpError(f"op T.{name}: the cuda backend has no {ty} form (scalar and vector types only)")
        if ty.lanes == 1:
            return element(cg, name, ty, [cg.expr(a) for a in c.args], [a.ty for a in c.args])
        el = ty.with_lanes(1)  # each lane the scalar form (cg.per_lane, as extern calls of vectors)
        return cg.per_lane(c.args, ty, c, lambda xs, tys: element(cg, name, el, xs, tys), f"T.{name}")

    return lower


def _c_sigmoid(cg: Any, c: Any) -> str:
    ty = c.args[0].ty
    if not isinstance(ty, PrimType) or ty.lanes != 1 or not ty.is_float:
        raise OpError(f"op T.sigmoid: the cuda backend has no {ty} form (float scalars only)")
    if ty.base == "float64":
        return f"(1.0 / (1.0 + exp(-{cg.wrap(c.args[0], 15)})))"
    x = cg.wrap(c.args[0], 15) if ty.base == "float32" else f"float({cg.expr(c.args[0])})"
    r = f"(1.0f / (1.0f + expf(-{x})))"
    return r if ty.base == "float32" else f"{cg.ctype(ty)}{r}"


# --------------------------------------------------------------------------- interpreter
def _np(name: str):
    """numpy's ``name``, or this module's ``_ref_<name>``, resolved when a kernel is compiled."""
    import numpy as np

    return globals()[f"_ref_{name}"] if f"_ref_{name}" in globals() else getattr(np, name)


def _ref_erf(x):
    import math

    import numpy as np

    v = np.frompyfunc(math.erf, 1, 1)(x.astype(np.float64))
    return np.asarray(v, dtype=np.float64).astype(x.dtype)


def _ref_sigmoid(x):
    import numpy as np

    return 1.0 / (1.0 + np.exp(-x))


def _ref_rsqrt(x):
    import numpy as np

    return 1.0 / np.sqrt(x)


def _ref_exp10(x):
    import numpy as np

    return np.power(10.0, x)


def _ref_pow(x, y):
    """``pow`` with C's identities for every first / second argument, NaNs included:
    ``pow(x, +-0) = 1`` and ``pow(1, y) = 1`` (CUDA's ``pow`` keeps them for signalling NaNs too,
    measured on the H200; a libm may not: glibc's ``pow(sNaN, 0)`` is NaN)."""
    import numpy as np

    with np.errstate(all="ignore"):
        r = np.power(x, y)
    return np.where((y == 0) | (x == 1), np.ones_like(r), r)


def _ref_fma(a, b, c):
    """``a * b + c`` rounded once (``fmaf``/``fma``)."""
    from tirx.ops.semantics import dtypes as D

    return D.fused_mul_add(a, b, c)


def _via_f64(fn):
    """``fn`` computed in float64 and rounded once to the argument's float type."""
    import numpy as np

    def g(*xs):
        dt = xs[0].dtype
        if dt == np.float64:
            return fn(*xs)
        return fn(*[x.astype(np.float64) if x.dtype.kind == "f" else x for x in xs]).astype(dt)

    return g


def _interp_float(ref: str, exact: bool = False):
    """Interpreter semantics of a float function from its numpy reference ``ref``: exact
    functions (abs, rounding) as they are, the others in float64 rounded once."""

    def compile_call(fc: Any, call: Any):
        import numpy as np

        from tirx.ops.semantics import dtypes as D
        from tirx.ops.semantics import nan as NAN

        from ..ir.structural import structural_equal

        fn = _np(ref) if exact else _via_f64(_np(ref))
        fs = [fc.expr(a) for a in call.args]
        t = call.ty
        name = call.op.name
        if not (isinstance(t, PrimType) and t.is_float):
            if len(fs) == 1 and name in ("abs", "fabs"):
                return lambda c: np.abs(fs[0](c))
            if len(fs) == 1 and name in _INT_IDENTITY:
                return fs[0]
            raise OpError(f"T.{name} needs a float argument, got {t} (interpreter)")
        el = t.element
        nan = NAN.call  # NaN results with the GPU's bits (tirx/ops/semantics/nan.py)
        if el.base in ("float32", "float64"):
            out = D.value_np(el)
            order = NAN.fma_order(structural_equal(call.args[1], call.args[2])) if name == "fma" else None

            def ev(c):
                xs = [f(c) for f in fs]
                return nan(fn(*xs).astype(out, copy=False), xs, el, name, order)

            return ev
        if el.base == "float16":  # float arguments widened to float32, as the CUDA code does
            wide = [a.ty.is_float for a in call.args]
            return lambda c: nan(
                fn(*[f(c).astype(np.float32) if w else f(c) for f, w in zip(fs, wide)]).astype(np.float16),
                (),
                el,
                name,
            )
        return lambda c: nan(D.round_to(fn(*[f(c) for f in fs]), el), (), el, name)

    return compile_call


def _interp_float_pred(ref: str, for_ints: bool):
    """``isnan``/``isinf``/``isfinite``: integers are never NaN or infinite."""

    def compile_call(fc: Any, call: Any):
        import numpy as np

        fa = fc.expr(call.args[0])
        if not call.args[0].ty.is_float:
            fill = np.ones_like if for_ints else np.zeros_like
            return lambda c: fill(fa(c), dtype=bool)
        fn = getattr(np, ref)
        return lambda c: fn(fa(c))

    return compile_call


def _host_float(ref: str) -> Any:
    """Host code's form of a float math op: numpy's ``ref`` in the call's dtype
    (``tirx.runtime.hostexpr``)."""
    return lambda call, a: f"_npf({ref!r}, {a[0]}, {call.ty.name!r})"


# --------------------------------------------------------------------------- declarations
# name: (float32 C function, float64 C function, numpy reference, exact in any precision)
_UNARY = {
    "exp": ("expf", "exp", "exp", False), "exp2": ("exp2f", "exp2", "exp2", False),
    "exp10": ("exp10f", "exp10", "exp10", False), "log": ("logf", "log", "log", False),
    "log2": ("log2f", "log2", "log2", False), "log10": ("log10f", "log10", "log10", False),
    "log1p": ("log1pf", "log1p", "log1p", False), "sqrt": ("sqrtf", "sqrt", "sqrt", False),
    "rsqrt": ("rsqrtf", "rsqrt", "rsqrt", False), "tanh": ("tanhf", "tanh", "tanh", False),
    "sin": ("sinf", "sin", "sin", False), "cos": ("cosf", "cos", "cos", False),
    "tan": ("tanf", "tan", "tan", False), "asin": ("asinf", "asin", "arcsin", False),
    "acos": ("acosf", "acos", "arccos", False), "atan": ("atanf", "atan", "arctan", False),
    "sinh": ("sinhf", "sinh", "sinh", False), "cosh": ("coshf", "cosh", "cosh", False),
    "asinh": ("asinhf", "asinh", "arcsinh", False), "acosh": ("acoshf", "acosh", "arccosh", False),
    "atanh": ("atanhf", "atanh", "arctanh", False),
    "erf": ("erff", "erf", "erf", False), "fabs": ("fabsf", "fabs", "abs", True),
    "abs": ("fabsf", "fabs", "abs", True), "floor": ("floorf", "floor", "floor", True),
    "ceil": ("ceilf", "ceil", "ceil", True), "round": ("rintf", "rint", "rint", True),
    "trunc": ("truncf", "trunc", "trunc", True), "nearbyint": ("nearbyintf", "nearbyint", "rint", True),
}  # fmt: skip


def _surface_arg(name: str, x: Any) -> PrimExpr:
    """The argument of a surface that expands by its type: an expression (a script cell
    unwrapped), or a Python number made one; anything else is a TypeError naming the op."""
    conv = getattr(x, "__tirx_expr__", None)
    x = conv() if conv is not None else x
    if not isinstance(x, PrimExpr):
        if type(x) not in (int, float, bool):
            raise TypeError(f"T.{name}: the argument must be an expression, got {type(x).__name__}")
        x = convert(x)
    return x


def _abs_surface(x: Any, *, ty: Any = None, span: Any = None) -> Any:
    """``T.abs(x)`` as TIRx builds it: ``T.fabs(x)`` for a float, ``T.Select(x >= 0, x, 0 - x)``
    for a signed integer, ``x`` itself for an unsigned one, a constant folded; ``ty=`` (or a
    type TIRx does not expand here, an integer vector) is the op call."""
    x = _surface_arg("abs", x)
    t = x.ty
    if ty is not None or not isinstance(t, PrimType):
        return get("abs")(x, ty=ty, span=span)
    if t.is_float:
        if type(x) is FloatImm:
            return FloatImm(abs(x.value), t, span=span)
        return get("fabs")(x, span=span)
    if t.lanes != 1 or not t.is_int:
        return get("abs")(x, span=span)
    if t.kind == "uint":
        return x
    if type(x) is IntImm:
        return IntImm(abs(x.value), t, span=span)
    zero = IntImm(0, t, span=span)
    return Select(GE(x, zero, span=span), x, Sub(zero, x, span=span), span=span)


for _n, (_c32, _c64, _ref, _exact) in _UNARY.items():
    declare(
        _n, "x", "arg0", doc=f"elementwise {_n}", params="x",
        cuda=_c_math(_c32, _c64), interp=_interp_float(_ref, _exact),
        script=_abs_surface if _n == "abs" else None, host=_host_float(_ref),
    )  # fmt: skip
declare(
    "sigmoid", "x", "arg0", doc="elementwise 1 / (1 + exp(-x))", params="x",
    cuda=_c_sigmoid, interp=_interp_float("sigmoid"),
)  # fmt: skip
# the two-argument functions keep a Python literal's own dtype (TIRx: T.pow(x, 1.5) with a
# float64 x is T.pow(x, T.float32(1.5)); an int stays int32): held-out round 20
declare(
    "pow", "x x", "arg0", doc="x ** y", params="x y", cuda=_c_math("powf", "pow"), interp=_interp_float("pow"),
    own_literals=True,
)  # fmt: skip
declare(
    "atan2", "x x", "arg0", doc="angle of (x, y)", params="x1 x2",
    cuda=_c_math("atan2f", "atan2"), interp=_interp_float("arctan2"), own_literals=True,
)  # fmt: skip
declare(
    "fmod", "x x", "arg0", doc="C remainder (sign of the dividend)", params="x y",
    cuda=_c_math("fmodf", "fmod"), interp=_interp_float("fmod", exact=True), own_literals=True,
)  # fmt: skip
declare(
    "fma", "x x x", "arg0", doc="fused multiply-add a*b+c, rounded once", params="x y z",
    cuda=_c_math("fmaf", "fma"), interp=_interp_float("fma", exact=True),
)  # fmt: skip
declare(
    "hypot", "x x", "arg0", doc="sqrt(x*x + y*y) without undue overflow", params="x1 x2",
    cuda=_c_math("hypotf", "hypot"), interp=_interp_float("hypot"), own_literals=True,
)  # fmt: skip
declare(
    "copysign", "x x", "arg0", doc="the magnitude of x with the sign of y", params="x1 x2",
    cuda=_c_math("copysignf", "copysign"), interp=_interp_float("copysign", exact=True), own_literals=True,
)  # fmt: skip
declare(
    "nextafter", "x x", "arg0", doc="the next representable float after x towards y", params="x1 x2",
    cuda=_c_math("nextafterf", "nextafter"), interp=_interp_float("nextafter", exact=True), own_literals=True,
)  # fmt: skip
declare(
    "ldexp", "x i", "arg0", doc="x * 2**n", params="x1 x2",
    cuda=_c_math("ldexpf", "ldexp"), interp=_interp_float("ldexp", exact=True),
)  # fmt: skip


# a vector predicate: the scalar one on each lane (a lambda), into a bool vector
VPRED = Helper(
    "tirx_vpred",
    """\
template <typename T, int N, typename F> __device__ __forceinline__ tirx_vec<bool, N> tirx_vpred(tirx_vec<T, N> x, F f) {
  tirx_vec<bool, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = f(x.v[i]);
  return r;
}
template <typename V, typename F> __device__ __forceinline__ tirx_vec<bool, 2> tirx_vpred_xy(V x, F f) {
  tirx_vec<bool, 2> r;  // CUDA's two-lane types (half2, __nv_bfloat162)
  r.v[0] = f(x.x);
  r.v[1] = f(x.y);
  return r;
}""",
)


def _c_float_pred(cname: str, hname: str):
    def scalar(t: PrimType, x: str) -> str:
        if not t.is_float:  # integers: never NaN or infinite (interp: _interp_float_pred)
            return "true" if cname == "isfinite" else "false"
        if t.base in ("float32", "float64"):
            return f"{cname}({x})"
        if t.base in ("float16", "bfloat16") and hname:
            return f"(bool){hname}({x})"
        return f"{cname}(float({x}))"

    def lower(cg: Any, c: Any) -> str:
        t = c.args[0].ty
        x = cg.expr(c.args[0])
        if t.lanes == 1:
            return scalar(t, x) if t.is_float else f"{cname}(float({x}))"
        cg.ctype(c.ty)  # the bool vector (tirx_vec) the helper returns
        cg.need(VPRED)
        el = t.element
        f = f"[](const {cg.ctype(el)} e) {{ return {scalar(el, 'e')}; }}"
        xy = cg.ctype(t) in ("half2", "__nv_bfloat162")
        return f"tirx_vpred{'_xy' if xy else ''}({x}, {f})"

    return lower


ISNAN = declare(
    "isnan", "x", "bool0", doc="x is NaN (never for integers)", params="x",
    cuda=_c_float_pred("isnan", "__hisnan"), interp=_interp_float_pred("isnan", False),
)  # fmt: skip


# TIRx has no isinf/isfinite ops: its T.isinf(x) / T.isfinite(x) build comparisons as they are
# called (C++ constant folding included), so both front ends do the same (docs/tirx_compat.md).
# The ops stay, for the types TIRx refuses there (vectors, bfloat16, float8: tirx's extension)
# and for IR a pass or the API builds; such a call prints with ty=, which builds the op call
# itself in both front ends (a call with ty= never goes through an op's script surface).
_EXPANDS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                      "float16", "float32", "float64"})  # fmt: skip


def _c_const(e: Any) -> Any:
    """The Python value of a bool/float constant, else None."""
    return e.value if type(e) in (IntImm, FloatImm) else None


def _c_bool(v: bool, span: Any) -> Any:
    return IntImm(int(bool(v)), bool_, span=span)


def _c_and(a: Any, b: Any, span: Any) -> Any:
    """C++ ``a && b`` as TIRx's op library builds it: a constant side decides or drops out."""
    for k, other in ((a, b), (b, a)):
        v = _c_const(k)
        if v is not None:
            return other if v else _c_bool(False, span)
    return And(a, b, span=span)


def _c_not(a: Any, span: Any) -> Any:
    """C++ ``!a``: a constant folds."""
    v = _c_const(a)
    return _c_bool(not v, span) if v is not None else Not(a, span=span)


def _tirx_isinf(x: Any, span: Any) -> Any:
    """``|x| == inf and not isnan(x)`` (``False`` for integers), folded as TIRx folds."""
    t = x.ty
    if not t.is_float:
        return _c_bool(False, span)
    v = _c_const(x)
    mag = FloatImm(abs(v), t, span=span) if v is not None else get("fabs")(x, span=span)
    # two constants fold as the frontend folds them: |x| rounded to its dtype (tirx.ir.fold)
    eq = fold(EQ(mag, FloatImm(math.inf, t), span=span))
    return _c_and(eq, _c_not(ISNAN(x, span=span), span), span)


def _float_pred_surface(name: str) -> Any:
    """``T.isinf(x)`` / ``T.isfinite(x)``: TIRx's expansion for the scalar types TIRx takes;
    ``ty=`` (or another type) is the op call."""

    def surface(x: Any, *, ty: Any = None, span: Any = None) -> Any:
        x = _surface_arg(name, x)
        t = x.ty
        if ty is not None or not (isinstance(t, PrimType) and t.lanes == 1 and t.base in _EXPANDS):
            return get(name)(x, ty=ty, span=span)
        inf = _tirx_isinf(x, span)
        if name == "isinf":
            return inf
        return _c_and(_c_not(inf, span), _c_not(ISNAN(x, span=span), span), span)

    surface.__name__ = name
    return surface


def _print_with_ty(p: Any, parts: list, call: Any) -> str:
    """The op call itself, with ``ty=`` (``T.isinf(x)`` would build TIRx's expansion); ``p``
    is the printer, which writes the type."""
    return f"T.{call.op.name}({', '.join(parts)}, ty={p.type_text(call.ty)})"


for _n, _doc, _c, _h, _ints in (
    ("isinf", "x is +-inf (never for integers)", "isinf", "__hisinf", False),
    ("isfinite", "x is neither NaN nor infinite (always for integers)", "isfinite", "", True),
):
    declare(
        _n, "x", "bool0", doc=f"{_doc}; T.{_n}(x) builds TIRx's comparisons, T.{_n}(x, ty=...) the op",
        cuda=_c_float_pred(_c, _h), interp=_interp_float_pred(_n, _ints), script=_float_pred_surface(_n),
    )  # fmt: skip
    register_handler("print", _n)(_print_with_ty)
register_handler("print", "abs")(_print_with_ty)  # T.abs(x) builds TIRx's expansion (_abs_surface)


# --------------------------------------------------------------------------- bits
def _bits_of(cg: Any, x: Any, t: PrimType) -> str:
    """An 8/16-bit integer's own bits, zero-extended (a signed one would sign-extend)."""
    if t.bits in (8, 16):
        return f"({cg.c_scalar(f'uint{t.bits}')}){cg.wrap(x, 15)}"
    return cg.wrap(x, 15)


def _c_popcount(cg: Any, c: Any) -> str:
    t = c.args[0].ty
    fn = "__popcll((unsigned long long)" if t.bits == 64 else "__popc((unsigned)"
    return f"(({cg.c_scalar(t.base)}){fn}{_bits_of(cg, c.args[0], t)}))"


def _i_popcount(fc: Any, call: Any):
    import numpy as np

    from tirx.ops.semantics import dtypes as D

    fa = fc.expr(call.args[0])
    t = call.ty
    ut = np.dtype(f"uint{max(t.bits, 8)}")  # the bits of a negative value, not of its magnitude
    return lambda c: np.bitwise_count(fa(c).astype(ut)).astype(D.value_np(t))


def _c_clz(cg: Any, c: Any) -> str:
    t = c.args[0].ty
    rt = cg.c_scalar(c.ty.base)  # int32 whatever the operand's type (TIRx's result type)
    if t.bits == 64:
        return f"(({rt})__clzll((long long){cg.wrap(c.args[0], 15)}))"
    extra = 32 - t.bits
    r = f"__clz((int){_bits_of(cg, c.args[0], t)})"
    return f"(({rt})({r} - {extra}))" if extra else f"(({rt}){r})"


def _i_clz(fc: Any, call: Any):
    import numpy as np

    from tirx.ops.semantics import dtypes as D

    fa = fc.expr(call.args[0])
    t = call.ty
    bits = call.args[0].ty.bits  # the operand's width; the result is int32
    ut = np.dtype(f"uint{bits}") if bits >= 8 else np.dtype("uint8")

    def ev(c):
        x = fa(c).astype(ut)
        n = np.zeros(x.shape, dtype=np.int64)
        shift = bits // 2
        while shift:
            mask = x < (ut.type(1) << ut.type(bits - shift))
            n = n + np.where(mask, shift, 0)
            x = np.where(mask, x << ut.type(shift), x)
            shift //= 2
        n = n + (x == 0)
        return n.astype(D.value_np(t))

    return ev


declare(
    "popcount",
    "i",
    "arg0",
    doc="number of set bits",
    params="x",
    nonneg=True,
    cuda=_c_popcount,
    interp=_i_popcount,
)
declare(
    "clz",
    "i",
    int32,
    params="x",
    doc="number of leading zero bits (int32, as TIRx types it)",
    nonneg=True,
    cuda=_c_clz,
    interp=_i_clz,
)


# --------------------------------------------------------------------------- select
def _c_select(cg: Any, c: Any):
    b, e = select_arms(c)
    return f"{cg.wrap(c.args[0], 4)} ? {cg.wrap(b, 4)} : {cg.wrap(e, 3)}", 3


def _i_select(fc: Any, call: Any):
    b, e = select_arms(call)
    return fc._lazy_select(fc.expr(call.args[0]), fc.expr(b), fc.expr(e), True)


declare(
    "if_then_else",
    "b x x",
    lambda a: a[1].ty,
    params="condition true_value false_value",
    doc="lazy select: only the taken arm is evaluated",
    select=True,
    lazy_args=(1, 2),
    pointer_from=(1, 2),
    own_literals=True,  # TIRx converts each literal arm on its own (its dtype, not the other arm's)
    cuda=_c_select,
    interp=_i_select,
)


def _select_alias(cond: Any, true_value: Any, false_value: Any, span: Any = None) -> Any:
    """A constant condition (a Python bool / int, ``T.bool(True)``) picks its arm, as TIRx's
    ``T.select`` folds; any other is ``T.if_then_else`` (``T.Select`` and ``T.if_then_else``
    themselves keep a constant condition, as TIRx's do)."""
    c = cond.value if type(cond) is IntImm else cond
    if type(c) in (bool, int):
        return true_value if c else false_value
    return get("if_then_else")(cond, true_value, false_value, span=span)


# TIRx builds (and prints) T.select(c, a, b) as T.if_then_else(c, a, b); T.Select is the node
alias("select", "if_then_else", _select_alias, "``T.select(c, a, b)``: TIRx's spelling of ``T.if_then_else``")
