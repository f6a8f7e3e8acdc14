"""CPU semantics of the PTX instruction table's exact, lane-local rows (and the warp votes).

One builder per instruction family reads the matched row's modifiers (``{slot: token}``)
and returns ``compute(ins) -> outs``: dicts of operand name -> one value per lane, in the
*token domain* of the operand's PTX type (``.u32`` a uint32 array, ``.f32`` float32,
``.bf16`` float32 holding bfloat16 values, ``.f16x2`` the packed uint32 bits, ``.pred``
bool). ``ROWS`` maps row names to builders; ``tirx/ops/ptx_table.py`` uses it for a row
without its own ``interp=``. A builder raises ``Refused(reason)`` for a modifier whose
meaning is not modelled exactly (``.approx``, directed rounding of float arithmetic);
the interpreter reports it as an ``OpError`` when the kernel is compiled.

Register operands are converted from the IR value's type to the token's: the same width
reinterprets bits (a float32 element for ``.b32``), another width converts the value
(``D.cast``). Outputs go back through ``element_writer`` the same way. Memory rows
(``ld``/``st``) read and write through pointer values; warp rows use the launch's warps.
This module imports only ``tirx.ir`` at import time (numpy lazily).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .ptx_table import register_row_semantics

__all__ = ["ROWS", "Refused", "interp_for"]


class Refused(Exception):
    """A row whose chosen modifiers have no exact CPU model (the reason says which)."""


def _np():
    import numpy as np

    return np


def _tokty(tok: str):
    from ..ir.types import as_type
    from .ptx_table import TOKEN_DTYPE

    dt = TOKEN_DTYPE.get(tok)
    if dt is None:
        raise Refused(f".{tok} registers are not modelled")
    return as_type(dt)


def _uint(bits: int):
    np = _np()
    return np.dtype(f"uint{bits}")


# ------------------------------------------------------------------ value <-> token domain
def _bits(val, ty):
    """The raw bits (unsigned ints of ty's width) of IR values of type ``ty``."""
    from tirx.ops.semantics import dtypes as D

    np = _np()
    s = np.ascontiguousarray(D.to_storage(np.asarray(val), ty))
    if s.dtype == np.bool_:
        return s.astype(np.uint8)
    return s.view(_uint(s.dtype.itemsize * 8))


def _from_bits(bits, tt):
    """Token-domain values of type ``tt`` from raw bits."""
    from tirx.ops.semantics import dtypes as D

    np = _np()
    st = D.storage_np(tt)
    b = np.ascontiguousarray(bits.astype(_uint(st.itemsize * 8)))
    return D.from_storage(b.view(st), tt)


def to_token(val, ty, tok: str):
    """IR values of type ``ty`` as the token ``tok``'s domain."""
    from tirx.ops.semantics import dtypes as D

    np = _np()
    if tok == "pred":
        return np.asarray(val) != 0
    tt = _tokty(tok)
    if ty.bits == tt.bits and not ty.is_bool:
        return _from_bits(_bits(val, ty), tt)
    return D.cast(np.asarray(val), ty, tt)


def from_token(x, tok: str | None, ty):
    """Token-domain values as IR values of the element type ``ty``."""
    from tirx.ops.semantics import dtypes as D

    np = _np()
    x = np.asarray(x)
    if tok == "pred":
        return x.astype(D.value_np(ty))
    if tok is None:  # an untyped output (mul.wide's d): x carries its numpy dtype
        if x.dtype.itemsize * 8 == ty.bits:
            return _from_bits(x.view(_uint(ty.bits)), ty)
        return x.astype(D.value_np(ty))
    tt = _tokty(tok)
    if ty.bits == tt.bits:
        return _from_bits(_bits(x, tt), ty)
    return D.cast(x, tt, ty)


# ------------------------------------------------------------------ integer helpers
def _info(tok: str) -> tuple[int, bool]:
    """(bits, signed) of an integer token."""
    bits = int("".join(ch for ch in tok if ch.isdigit()) or 0)
    return bits, tok.startswith("s")


def _py(x):
    """Exact Python ints (an object array)."""
    return _np().asarray(x).astype(object)


def _fit(v, tok: str, sat: bool = False):
    """Python-int values wrapped (or, ``sat``, clamped) into the integer token ``tok``."""
    np = _np()
    bits, signed = _info(tok)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    v = np.asarray(v, dtype=object)
    if sat:
        v = np.minimum(np.maximum(v, lo), hi)
    else:
        v = v & ((1 << bits) - 1)
        if signed:
            v = np.where(v > hi, v - (1 << bits), v)
    return np.array(v.tolist(), dtype=f"{'int' if signed else 'uint'}{bits}").reshape(v.shape)


def _ubits(x, bits: int):
    """Values as unsigned Python ints of ``bits`` bits (two's complement)."""
    return _py(x) & ((1 << bits) - 1)


def _split(x, n: int, lane_bits: int, tok: str):
    """A packed register (uint bits) as its ``n`` lanes, lane 0 in the low bits."""
    np = _np()
    u = _ubits(x, n * lane_bits)
    m = (1 << lane_bits) - 1
    return [_from_bits(np.array(((u >> (lane_bits * i)) & m).tolist(), dtype=_uint(lane_bits)), _tokty(tok))
            for i in range(n)]  # fmt: skip


def _join(lanes, lane_bits: int, tok: str):
    np = _np()
    total = 0
    for i, x in enumerate(lanes):
        total = total + (_py(_bits(x, _tokty(tok))) << (lane_bits * i))
    return np.array(np.asarray(total, dtype=object).tolist(), dtype=_uint(lane_bits * len(lanes)))


_PACKED = {"f16x2": ("f16", 2, 16), "bf16x2": ("bf16", 2, 16), "f32x2": ("f32", 2, 32),
           "u16x2": ("u16", 2, 16), "s16x2": ("s16", 2, 16)}  # fmt: skip


def _lanewise(tok: str, fn: Callable, ins: list):
    """``fn`` of the scalar lanes of packed ``tok`` operands (or of the operands), packed back."""
    if tok not in _PACKED:
        return fn(tok, *ins)
    lt, n, lb = _PACKED[tok]
    parts = [_split(x, n, lb, lt) for x in ins]
    return _join([fn(lt, *(p[i] for p in parts)) for i in range(n)], lb, lt)


# ------------------------------------------------------------------ float helpers
_FLOATS = ("f16", "bf16", "f32", "f64")
_TINY = {"f32": 1.1754944e-38}
_QNAN = {"f16": 0x7FFF, "bf16": 0x7FFF, "f32": 0x7FFFFFFF, "f64": 0x7FFFFFFFFFFFFFFF}


def _ftz(x, tok: str, on: bool):
    """Subnormal f32 values flushed to sign-preserving zero (``.ftz``)."""
    np = _np()
    if not on or tok != "f32":
        return x
    return np.where(np.abs(x) < np.float32(_TINY["f32"]), np.copysign(np.float32(0), x), x).astype(x.dtype)


def _round(x, tok: str):
    """Float64/float32 results rounded once (``.rn``) to ``tok``; NaN is the GPU's canonical NaN."""
    from tirx.ops.semantics import dtypes as D

    np = _np()
    tt = _tokty(tok)
    x = np.asarray(x)
    if tok == "bf16":
        r = D.cast(x, _tokty("f64" if x.dtype == np.float64 else "f32"), tt)
    else:
        r = x.astype(D.value_np(tt))
    nan = np.isnan(r)
    if nan.any():
        r = np.where(nan, _from_bits(np.full(r.shape, _QNAN[tok], dtype=_uint(tt.bits)), tt), r)
    return r


def _fsat(x, on: bool):
    np = _np()
    if not on:
        return x
    return np.where(np.isnan(x), 0, np.clip(x, 0, 1)).astype(x.dtype)


def _need_rn(mods: dict, what: str, default_ok: bool = True) -> None:
    r = mods.get("rnd", "")
    if r == "rn" or (r == "" and default_ok):
        return
    raise Refused(f"{what}.{r} is not modelled (only .rn rounding runs on the CPU)")


def _no(mods: dict, *names: str) -> None:
    for n in names:
        if mods.get(n):
            raise Refused(f".{mods[n]} is not modelled on the CPU")


def _f64(x):
    return _np().asarray(x, dtype=_np().float64)


# ------------------------------------------------------------------ arithmetic families
def _int_arith(op: str) -> Callable:
    def build(row: str, mods: dict) -> Callable:
        t, sat, mode = mods["type"], bool(mods.get("sat")), mods.get("mode", "lo")
        if mode == "wide":
            bits, signed = _info(t)
            wt = ("s" if signed else "u") + str(2 * bits)

            def wide(ins):
                p = _py(ins["a"]) * _py(ins["b"])
                if op == "mad":
                    p = p + _py(ins["c"])
                return {"d": _fit(p, wt)}

            return wide

        def one(tok, a, b, c=None):
            bits, _ = _info(tok)
            if op in ("add", "sub"):
                v = _py(a) + _py(b) if op == "add" else _py(a) - _py(b)
            else:
                v = _py(a) * _py(b)
                if mode == "hi":
                    v = v >> bits
                if op == "mad":
                    if mode == "lo":
                        v = _py(_fit(v, tok))
                    v = v + _py(c)
            return _fit(v, tok, sat)

        def compute(ins):
            args = [ins["a"], ins["b"]] + ([ins["c"]] if op == "mad" else [])
            return {"d": _lanewise(t, one, args)}

        return compute

    return build


def _float_arith(op: str) -> Callable:
    def build(row: str, mods: dict) -> Callable:
        from tirx.ops.semantics import dtypes as D

        np = _np()
        t = mods["type"]
        src = mods.get("btype", "")  # the mixed-precision line: a (fma: a, b) .f16/.bf16, widened exactly
        _no(mods, "oob", "relu")
        if op in ("fma", "mad"):
            _need_rn(mods, op, default_ok=False)
        else:
            _need_rn(mods, op)
        ftz, sat = bool(mods.get("ftz")), bool(mods.get("sat"))

        def one(tok, a, b, c=None):
            a, b = _ftz(a, tok, ftz), _ftz(b, tok, ftz)
            if op in ("fma", "mad"):
                c = _ftz(c, tok, ftz)
                if tok in ("f32", "f64"):
                    r = D.fused_mul_add(a, b, c)
                else:  # f16/bf16: the product is exact in float64; the sum rounded to odd, then once
                    p, c64 = _f64(a) * _f64(b), _f64(c)
                    s = p + c64
                    bb = s - p
                    r = D._round_to_odd_f64(s, (p - (s - bb)) + (c64 - bb))
            else:
                w = np.float64 if tok in ("f64", "f16", "bf16") else np.float32
                a, b = a.astype(w), b.astype(w)
                r = a + b if op == "add" else a - b if op == "sub" else a * b
            return _ftz(_fsat(_round(r, tok), sat), tok, ftz)

        def compute(ins):
            args = [ins["a"], ins["b"]] + ([ins["c"]] if op in ("fma", "mad") else [])
            if src:  # op{.rnd}{.sat}.f32.src: the 16-bit sources converted to .f32 first
                wide = 2 if op in ("fma", "mad") else 1
                args = [np.asarray(x, dtype=np.float32) if k < wide else x for k, x in enumerate(args)]
            return {"d": _lanewise(t, one, args)}

        return compute

    return build


def _minmax(op: str) -> Callable:
    def build(row: str, mods: dict) -> Callable:
        from tirx.ops.semantics import dtypes as D

        np = _np()
        t = mods["type"]
        _no(mods, "xorsign", "abs", "relu")
        ftz, nan = bool(mods.get("ftz")), bool(mods.get("nan"))

        def one(tok, *xs):
            if tok in _FLOATS:
                xs = [_ftz(x, tok, ftz) for x in xs]
                f = D.fmin if op == "min" else D.fmax
                r = xs[0]
                for x in xs[1:]:
                    r = f(r, x)
                if nan:
                    anynan = np.zeros(r.shape, bool)
                    for x in xs:
                        anynan = anynan | np.isnan(x)
                    r = np.where(anynan, np.nan, r)
                return _round(r, tok)
            f = np.minimum if op == "min" else np.maximum
            r = xs[0]
            for x in xs[1:]:
                r = f(r, x)
            return r

        def compute(ins):
            return {"d": _lanewise(t, one, [ins[k] for k in ("a", "b", "c") if k in ins])}

        return compute

    return build


def _absneg(op: str) -> Callable:
    def build(row: str, mods: dict) -> Callable:
        t, ftz = mods["type"], bool(mods.get("ftz"))

        def one(tok, a):
            if tok in _FLOATS:  # a sign-bit operation (NaN payloads kept)
                tt = _tokty(tok)
                a = _ftz(a, tok, ftz)
                b = _py(_bits(a, tt))
                sign = 1 << (tt.bits - 1)
                b = (b & (sign - 1)) if op == "abs" else (b ^ sign)
                return _from_bits(_fit(b, f"u{tt.bits}"), tt)
            v = -_py(a) if op == "neg" else abs(_py(a))
            return _fit(v, tok)

        return lambda ins: {"d": _lanewise(t, one, [ins["a"]])}

    return build


# ------------------------------------------------------------------ bit families
def _logic(op: str) -> Callable:
    def build(row: str, mods: dict) -> Callable:
        np = _np()
        t = mods["type"]
        if t == "pred":
            if op == "not":
                return lambda ins: {"d": ~ins["a"]}
            # the other pred rows are and, or, xor (cnot has no .pred)
            fn = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[op]
            return lambda ins: {"d": fn(ins["a"], ins["b"])}
        if op == "not":
            return lambda ins: {"d": ~ins["a"]}
        if op == "cnot":
            return lambda ins: {"d": (ins["a"] == 0).astype(ins["a"].dtype)}
        fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        return lambda ins: {"d": fn(ins["a"], ins["b"])}

    return build


def _shift(op: str) -> Callable:
    def build(row: str, mods: dict) -> Callable:
        t = mods["type"]
        bits, signed = _info(t)
        np = _np()

        def compute(ins):
            a, n = _py(ins["a"]), np.minimum(_py(ins["b"]), bits)
            if op == "shl":
                return {"d": _fit(a << n, t)}
            if not signed:
                a = _ubits(ins["a"], bits)
            return {"d": _fit(a >> n, t)}  # Python >> of a negative int fills with the sign

        return compute

    return build


def _bitcount(op: str) -> Callable:
    def build(row: str, mods: dict) -> Callable:
        np = _np()
        bits, _ = _info(mods["type"])

        def compute(ins):
            u = _ubits(ins["a"], bits)
            if op == "popc":
                r = [bin(v).count("1") for v in u.reshape(-1)]
            elif op == "clz":
                r = [bits - v.bit_length() for v in u.reshape(-1)]
            else:  # brev
                rev = [int(format(v, f"0{bits}b")[::-1], 2) for v in u.reshape(-1)]
                return {"d": _fit(np.array(rev, dtype=object), mods["type"].replace("b", "u"))}
            return {"d": np.array(r, dtype=np.uint32)}

        return compute

    return build


def _bfe(row: str, mods: dict) -> Callable:
    t = mods["type"]
    bits, signed = _info(t)
    np = _np()

    def one(a, pos, ln):
        a &= (1 << bits) - 1
        pos, ln = pos & 0xFF, ln & 0xFF
        sbit = 0 if (not signed or ln == 0) else (a >> min(pos + ln - 1, bits - 1)) & 1
        d = 0
        for i in range(bits):
            bit = (a >> (pos + i)) & 1 if (i < ln and pos + i < bits) else sbit
            d |= bit << i
        return d

    def compute(ins):
        a, b, c = (_py(full) for full in (ins["a"], ins["b"], ins["c"]))
        a, b, c = np.broadcast_arrays(a, b, c)
        return {"d": _fit(np.array([one(*v) for v in zip(a, b, c)], dtype=object), t)}

    return compute


def _bfi(row: str, mods: dict) -> Callable:
    t = mods["type"]
    bits, _ = _info(t)
    np = _np()

    def one(a, b, pos, ln):
        a, f = a & ((1 << bits) - 1), b & ((1 << bits) - 1)
        pos, ln = pos & 0xFF, ln & 0xFF
        for i in range(ln):
            if pos + i >= bits:
                break
            f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
        return f

    def compute(ins):
        vs = np.broadcast_arrays(*(_py(ins[k]) for k in ("a", "b", "c", "d")))
        return {"f": _fit(np.array([one(*v) for v in zip(*vs)], dtype=object), t.replace("b", "u"))}

    return compute


def _bfind(row: str, mods: dict) -> Callable:
    t = mods["type"]
    bits, signed = _info(t)
    np = _np()

    def one(a):
        if signed and a < 0:
            a = ~a
        a &= (1 << bits) - 1
        if a == 0:
            return 0xFFFFFFFF
        d = a.bit_length() - 1
        return bits - 1 - d if mods.get("shiftamt") else d

    return lambda ins: {"d": np.array([one(v) for v in _py(ins["a"]).reshape(-1)], dtype=np.uint32)}


_PRMT = {  # mode -> (byte i, selector s) -> source byte
    "f4e": lambda i, s: (s + i) & 7,
    "b4e": lambda i, s: (s - i) & 7,
    "rc8": lambda i, s: s,
    "ecl": lambda i, s: max(i, s),
    "ecr": lambda i, s: min(i, s),
    "rc16": lambda i, s: (s & 1) * 2 + (i & 1),
}


def _prmt(row: str, mods: dict) -> Callable:
    np = _np()
    mode = mods.get("mode", "")

    def one(a, b, c):
        src = (a & 0xFFFFFFFF) | ((b & 0xFFFFFFFF) << 32)
        d = 0
        for i in range(4):
            if mode:
                byte = (src >> (8 * _PRMT[mode](i, c & 3))) & 0xFF
            else:
                sel = (c >> (4 * i)) & 0xF
                byte = (src >> (8 * (sel & 7))) & 0xFF
                if sel & 8:
                    byte = 0xFF if byte & 0x80 else 0
            d |= byte << (8 * i)
        return d

    def compute(ins):
        vs = np.broadcast_arrays(*(_py(ins[k]) for k in ("a", "b", "c")))
        return {"d": np.array([one(*v) for v in zip(*vs)], dtype=np.uint32)}

    return compute


def _lop3(row: str, mods: dict) -> Callable:
    np = _np()

    def compute(ins):
        a, b, c = ins["a"], ins["b"], ins["c"]
        lut = int(np.asarray(ins["immLut"]).reshape(-1)[0]) & 0xFF
        d = np.zeros(np.broadcast_shapes(a.shape, b.shape, c.shape), dtype=np.uint32)
        for k in range(8):
            if lut >> k & 1:
                d |= (a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c)
        return {"d": d}

    return compute


# ------------------------------------------------------------------ compare and select
def _compare(cmp: str, tok: str, a, b):
    np = _np()
    if tok in _FLOATS:
        un = np.isnan(a) | np.isnan(b)
        base = cmp[:-1] if cmp.endswith("u") and cmp not in ("num",) else cmp
        if cmp == "num":
            return ~un
        if cmp == "nan":
            return un
        r = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[base]
        return (r | un) if cmp.endswith("u") else (r & ~un)
    if tok.startswith("b"):
        a, b = _ubits(a, _info(tok)[0]), _ubits(b, _info(tok)[0])
    a, b = _py(a), _py(b)
    op = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(cmp, cmp)
    if op not in ("eq", "ne", "lt", "le", "gt", "ge"):
        raise Refused(f"setp.{cmp} on integers")
    r = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]
    return np.asarray(r, dtype=bool)


def _boolop(mods: dict, p, c):
    np = _np()
    op = mods.get("boolop")
    if not op:
        return p
    return {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[op](p, c)


def _setp(row: str, mods: dict) -> Callable:
    t, cmp = mods["type"], mods["cmp"]
    ftz = bool(mods.get("ftz"))

    def compute(ins):
        a, b = _ftz(ins["a"], t, ftz), _ftz(ins["b"], t, ftz)
        c = ins.get("c")
        if t in ("f16x2", "bf16x2"):
            (a0, a1), (b0, b1) = _split(a, 2, 16, t[:-2]), _split(b, 2, 16, t[:-2])
            return {"p": _boolop(mods, _compare(cmp, t[:-2], a0, b0), c),
                    "q": _boolop(mods, _compare(cmp, t[:-2], a1, b1), c)}  # fmt: skip
        r = _compare(cmp, t, a, b)
        return {"p": _boolop(mods, r, c), "q": _boolop(mods, ~r, c)}

    return compute


def _set(row: str, mods: dict) -> Callable:
    np = _np()
    dt, at, cmp = mods["dtype"], mods["atype"], mods["cmp"]
    ftz = bool(mods.get("ftz"))
    if (dt in _PACKED) != (at in _PACKED):
        raise Refused(f"set.{dt}.{at} (a packed result of unpacked operands) is not modelled")

    def value(tok, r):
        if tok in _FLOATS:
            return _round(np.where(r, 1.0, 0.0), tok)
        bits, _ = _info(tok)
        return _fit(np.where(r, (1 << bits) - 1, 0).astype(object), "u" + str(bits))

    def compute(ins):
        a, b, c = _ftz(ins["a"], at, ftz), _ftz(ins["b"], at, ftz), ins.get("c")
        if dt in _PACKED:
            lt = at[:-2]
            pa, pb = _split(a, 2, 16, lt), _split(b, 2, 16, lt)
            rs = [_boolop(mods, _compare(cmp, lt, x, y), c) for x, y in zip(pa, pb)]
            return {"d": _join([value(dt[:-2], r) for r in rs], 16, dt[:-2])}
        return {"d": value(dt, _boolop(mods, _compare(cmp, at, a, b), c))}

    return compute


def _selp(row: str, mods: dict) -> Callable:
    np = _np()
    return lambda ins: {"d": np.where(ins["c"], ins["a"], ins["b"])}


def _slct(row: str, mods: dict) -> Callable:
    np = _np()
    ftz = bool(mods.get("ftz"))

    def compute(ins):
        c = _ftz(ins["c"], mods["ctype"], ftz)
        return {"d": np.where(c >= 0, ins["a"], ins["b"])}

    return compute


# ------------------------------------------------------------------ mov and cvt
def _mov(row: str, mods: dict) -> Callable:
    np = _np()
    if row == "mov":
        return lambda ins: {"d": ins["a"]}
    _, way, shape = row.split("_")
    lane, count = shape.split("x")
    n, lb = int(count), _info(lane)[0]
    if way == "pack":
        return lambda ins: {"d": _join([ins[f"a{i}"] for i in range(n)], lb, lane)}

    def unpack(ins):
        parts = _split(ins["a"], n, lb, lane)
        return {f"d{i}": np.asarray(p) for i, p in enumerate(parts)}

    return unpack


_ROUNDI = {"rni": "rint", "rzi": "trunc", "rmi": "floor", "rpi": "ceil"}


def _cvt(row: str, mods: dict) -> Callable:
    from tirx.ops.semantics import dtypes as D

    np = _np()
    dt, at = mods["dtype"], mods["atype"]
    rnd, ftz, sat = mods.get("rnd", ""), bool(mods.get("ftz")), bool(mods.get("sat"))
    relu, satf = bool(mods.get("relu")), bool(mods.get("satfinite"))
    if row == "cvt_f16x2_f8x2":
        if relu:
            raise Refused("cvt.relu.f16x2 of float8 pairs is not modelled")
        f8 = "float8_e4m3fn" if at == "e4m3x2" else "float8_e5m2"

        def widen(ins):
            u = _py(ins["a"]) & 0xFFFF
            lanes = [
                D.f8_from_bits(np.array(((u >> (8 * i)) & 0xFF).tolist(), dtype=np.uint8), f8) for i in (0, 1)
            ]
            return {"d": _join([x.astype(np.float16) for x in lanes], 16, "f16")}

        return widen
    if row == "cvt_f8x2_fp16x2":  # each half of a to one byte of d (lane i -> byte i)
        f8 = "float8_e4m3fn" if dt == "e4m3x2" else "float8_e5m2"

        def narrow_pair(ins):
            out = 0
            for i, x in enumerate(_split(ins["a"], 2, 16, _PACKED[at][0])):
                x = np.asarray(x, dtype=np.float32)  # f16/bf16 values are exact in f32
                if relu:
                    x = np.where(np.isnan(x), x, np.maximum(x, np.float32(0)))
                out = out + (_py(D.f8_to_bits(D.round_f8(x, f8), f8).astype(np.uint8)) << (8 * i))
            return {"d": np.array(np.asarray(out, dtype=object).tolist(), dtype=np.uint16)}

        return narrow_pair
    if row in ("cvt_f16x2_f32", "cvt_bf16x2_f32", "cvt_f8x2_f32"):
        if rnd != "rn":
            raise Refused(f"cvt.{rnd}.{dt}.f32 is not modelled (only .rn)")
        lt = {"f16x2": "f16", "bf16x2": "bf16", "e4m3x2": "float8_e4m3fn", "e5m2x2": "float8_e5m2"}[dt]

        def narrow(x):
            x = np.asarray(x, dtype=np.float32)
            if relu:
                x = np.where(np.isnan(x), x, np.maximum(x, np.float32(0)))
            if lt.startswith("float8"):  # .satfinite: inf and overflow to the largest finite value
                return D.f8_to_bits(D.round_f8(x, lt), lt).astype(np.uint8)
            r = _round(x, lt)
            if satf:
                big = 65504.0 if lt == "f16" else 3.3895313892515355e38
                r = np.where(np.isnan(r), r, np.clip(r, -big, big)).astype(r.dtype)
            return _bits(r, _tokty(lt))

        def pack(ins):  # a goes to the upper half, b to the lower
            lb = 8 if lt.startswith("float8") else 16
            lo, hi = _py(narrow(ins["b"])), _py(narrow(ins["a"]))
            return {"d": np.array(np.asarray(lo | (hi << lb), dtype=object).tolist(), dtype=_uint(2 * lb))}

        return pack
    fd, fa = dt in _FLOATS, at in _FLOATS
    if not fd and not fa:  # integer <-> integer
        if rnd or relu or satf or ftz:
            raise Refused(f"cvt.{rnd or relu or satf or 'ftz'} between integers")
        return lambda ins: {"d": _fit(_py(ins["a"]), dt, sat)}
    if fa and not fd:  # float -> integer: round to an integer, saturate (NaN -> 0)
        if rnd not in _ROUNDI:
            raise Refused(
                f"cvt.{rnd or '(no rounding)'}.{dt}.{at}: float to integer needs .rni/.rzi/.rmi/.rpi"
            )
        fn = getattr(np, _ROUNDI[rnd])

        def f2i(ins):
            x = _ftz(ins["a"], at, ftz).astype(np.float64)
            bits, signed = _info(dt)
            lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
            r = fn(x)
            nan = np.isnan(r)
            v = [
                0 if n else (lo if y <= lo else hi if y >= hi else int(y))
                for y, n in zip(r.reshape(-1), nan.reshape(-1))
            ]
            return {"d": _fit(np.array(v, dtype=object).reshape(r.shape), dt)}

        return f2i
    if fd and not fa:  # integer -> float
        if rnd != "rn":
            raise Refused(f"cvt.{rnd or '(no rounding)'}.{dt}.{at}: only .rn runs on the CPU")
        tt, st = _tokty(dt), _tokty(at)
        return lambda ins: {"d": _fsat(_round(D.cast(ins["a"], st, tt), dt), sat)}
    # float -> float
    tt, st = _tokty(dt), _tokty(at)
    if rnd in _ROUNDI:
        if dt != at:
            raise Refused(f"cvt.{rnd}.{dt}.{at}: rounding to an integer value between float types")
        fn = getattr(np, _ROUNDI[rnd])
        return lambda ins: {"d": _ftz(_fsat(_round(fn(_ftz(ins["a"], at, ftz)), dt), sat), dt, ftz)}
    narrowing = tt.bits < st.bits or (dt == "bf16" and at == "f16") or (dt == "f16" and at == "bf16")
    if narrowing and rnd != "rn":
        raise Refused(f"cvt.{rnd or '(no rounding)'}.{dt}.{at}: only .rn runs on the CPU")
    if not narrowing and rnd:
        raise Refused(f"cvt.{rnd}.{dt}.{at}: widening takes no rounding")

    def f2f(ins):
        x = _ftz(ins["a"], at, ftz)
        if relu:
            x = np.where(np.isnan(x), x, np.maximum(x, 0)).astype(x.dtype)
        r = D.cast(np.asarray(x), st, tt)
        nan = np.isnan(r)
        r = _round(r, dt) if nan.any() else r
        if satf:
            big = {"f16": 65504.0, "bf16": 3.3895313892515355e38, "f32": 3.4028234663852886e38}.get(dt)
            if big is not None:
                r = np.where(nan, r, np.clip(r, -big, big)).astype(r.dtype)
        return {"d": _ftz(_fsat(r, sat), dt, ftz)}

    return f2f


# ------------------------------------------------------------------ dot products, rcp, sqrt
def _dp(row: str, mods: dict) -> Callable:
    np = _np()
    sa, sb = mods["atype"] == "s32", mods["btype"] == "s32"

    def parts(x, n, bits, signed):
        u = _ubits(x, 32)
        out = []
        for i in range(n):
            v = (u >> (bits * i)) & ((1 << bits) - 1)
            if signed:
                v = np.where(v >= (1 << (bits - 1)), v - (1 << bits), v)
            out.append(v)
        return out

    def compute(ins):
        if row == "dp4a":
            pa, pb = parts(ins["a"], 4, 8, sa), parts(ins["b"], 4, 8, sb)
        else:
            pa = parts(ins["a"], 2, 16, sa)
            pb = parts(ins["b"], 4, 8, sb)[(2 if mods["mode"] == "hi" else 0) :][:2]
        acc = _py(ins["c"]) if not (sa or sb) else _py(ins["c"].astype(np.int32))
        for x, y in zip(pa, pb):
            acc = acc + x * y
        return {"d": _fit(acc, "u32")}

    return compute


def _rcp_sqrt(op: str) -> Callable:
    def build(row: str, mods: dict) -> Callable:
        np = _np()
        t, rnd = mods["type"], mods["rnd"]
        if rnd == "approx":
            raise Refused(f"{op}.approx.{t} is an approximation whose result the hardware defines (use .rn)")
        _need_rn(mods, op)
        ftz = bool(mods.get("ftz"))

        def compute(ins):
            x = _ftz(ins["value"], t, ftz)
            with np.errstate(all="ignore"):
                r = np.reciprocal(x) if op == "rcp" else np.sqrt(x)
            return {"d": _ftz(_round(r, t), t, ftz)}

        return compute

    return build


def _sad(row: str, mods: dict) -> Callable:
    t = mods["type"]
    return lambda ins: {"d": _fit(_py(ins["c"]) + abs(_py(ins["a"]) - _py(ins["b"])), t)}


def _shf(row: str, mods: dict) -> Callable:
    np = _np()
    left, clamp = mods["dir"] == "l", mods["mode"] == "clamp"

    def compute(ins):
        n = _py(ins["c"]) & 0xFFFFFFFF
        n = np.minimum(n, 32) if clamp else n & 31
        ab = _ubits(ins["a"], 32) | (_ubits(ins["b"], 32) << 32)
        return {"d": _fit((ab << n) >> 32 if left else ab >> n, "u32")}

    return compute


def _bmsk(row: str, mods: dict) -> Callable:
    np = _np()
    clamp = mods["mode"] == "clamp"

    def compute(ins):
        a, b = _ubits(ins["a"], 32), _ubits(ins["b"], 32)
        a, b = (np.minimum(a, 32), np.minimum(b, 32)) if clamp else (a & 31, b & 31)
        return {"d": _fit(((1 << b) - 1) << a, "u32")}

    return compute


def _mul24(row: str, mods: dict) -> Callable:
    t, hi = mods["type"], mods["mode"] == "hi"
    if mods.get("sat"):
        raise Refused("mad24.sat is not modelled")
    signed = t == "s32"

    def low24(x):
        v = _ubits(x, 32) & 0xFFFFFF
        return v - ((v >= 0x800000) << 24) if signed else v

    def compute(ins):
        p = low24(ins["a"]) * low24(ins["b"])
        v = p >> 16 if hi else p
        if "c" in ins:
            v = _py(_fit(v, t)) + _py(ins["c"])
        return {"d": _fit(v, t)}

    return compute


def _testp(row: str, mods: dict) -> Callable:
    np = _np()
    op, t = mods["op"], mods["type"]
    tiny = np.finfo(np.float32 if t == "f32" else np.float64).tiny

    def compute(ins):
        a = ins["a"]
        fin = np.isfinite(a)
        r = {"finite": fin, "infinite": np.isinf(a), "number": ~np.isnan(a), "notanumber": np.isnan(a),
             "normal": fin & (np.abs(a) >= tiny), "subnormal": fin & (a != 0) & (np.abs(a) < tiny)}[op]  # fmt: skip
        return {"p": r}

    return compute


# ------------------------------------------------------------------ ld / st
_SPACES = ("", "global", "shared", "shared::cta")


def _memory(op: str) -> Callable:
    def build(row: str, mods: dict) -> Callable:
        t = mods["type"]
        if t == "b128":
            raise Refused(f"{op}.b128 is not modelled")
        if mods.get("space", "") not in _SPACES:
            raise Refused(
                f"{op}.{mods['space']} is not modelled (generic, .global and .shared run on the CPU)"
            )
        if mods.get("mmio"):
            raise Refused(f"{op}.mmio is not modelled")
        return lambda ins: ins  # the memory access itself is done by _mem_interp

    return build


# ------------------------------------------------------------------ warp-level rows
def _warp_rows(kind: str) -> Callable:
    def build(row: str, mods: dict) -> Callable:
        return lambda ins: ins  # done by _warp_interp

    return build


#: row name -> builder(row name, {slot: token}) -> compute({operand: value}) -> {operand: value}
ROWS: dict[str, Callable] = {
    **{f"{o}_int": _int_arith(o) for o in ("add", "sub", "mul", "mad")},
    "mul_wide": _int_arith("mul"),
    "mad_wide": _int_arith("mad"),
    **{o: _float_arith(o) for o in ("add", "sub", "mul", "fma")},
    **{f"{o}_half": _float_arith(o) for o in ("add", "sub", "mul", "fma")},
    "mad_f": _float_arith("mad"),
    **{n: _minmax(o) for o in ("min", "max") for n in (o, o + "3")},
    **{n: _absneg(o) for o in ("abs", "neg") for n in (o, o + "_f", o + "_int", o + "_half")},
    **{o: _logic(o) for o in ("and", "or", "xor", "not", "cnot")},
    "shl": _shift("shl"),
    "shr": _shift("shr"),
    **{o: _bitcount(o) for o in ("popc", "clz", "brev")},
    "bfe": _bfe,
    "bfi": _bfi,
    "bfind": _bfind,
    "prmt": _prmt,
    "lop3": _lop3,
    **{
        n: _setp
        for n in (
            "setp",
            "setp_pq",
            "setp_bool",
            "setp_bool_pq",
            "setp_half",
            "setp_half_pq",
            "setp_half_bool",
            "setp_half_bool_pq",
        )
    },
    "set": _set,
    "set_bool": _set,
    "selp": _selp,
    "slct": _slct,
    "mov": _mov,
    **{
        f"mov_{w}_{lane}x{n}": _mov
        for lane, n in (("b16", 2), ("b32", 2), ("b16", 4))
        for w in ("pack", "unpack")
    },
    **{
        n: _cvt
        for n in (
            "cvt",
            "cvt_f16x2_f32",
            "cvt_bf16x2_f32",
            "cvt_f8x2_f32",
            "cvt_f16x2_f8x2",
            "cvt_f8x2_fp16x2",
        )
    },
    "dp4a": _dp,
    "sad": _sad,
    "shf": _shf,
    "bmsk": _bmsk,
    "mul24": _mul24,
    "mad24": _mul24,
    "testp": _testp,
    "dp2a": _dp,
    "rcp": _rcp_sqrt("rcp"),
    "sqrt": _rcp_sqrt("sqrt"),
    "ld": _memory("ld"),
    "ld_vec": _memory("ld"),
    "st": _memory("st"),
    "st_vec": _memory("st"),
    **{
        n: _warp_rows(n)
        for n in (
            "activemask",
            "vote_sync",
            "vote_sync_ballot",
            "redux_sync",
            "redux_sync_bitwise",
            "match_any_sync",
            "match_all_sync",
            "match_all_sync_p",
        )
    },
}
# abs/neg rows are named abs, abs_f, abs_half, neg_int, neg, neg_half; drop names no row has
for _n in ("abs_int", "neg_f"):
    ROWS.pop(_n, None)
_MEMORY = ("ld", "ld_vec", "st", "st_vec")
_WARP = ("activemask", "vote_sync", "vote_sync_ballot", "redux_sync", "redux_sync_bitwise",
         "match_any_sync", "match_all_sync", "match_all_sync_p")  # fmt: skip


# ------------------------------------------------------------------ the interpreter glue
class _Call:
    """A matched call's operands: (name, IR operand, kind, token) in the row's layout."""

    def __init__(self, call: Any):
        from .ptx_table import _kind, _layout, _token, match

        m = match(call)
        self.m = m
        self.row = m.row
        self.mods = {sl.name: v for sl, v in zip(m.row.slots, m.mods)}
        layout = _layout(m.row, m.mods)[0]
        self.ops = []
        for k, i in enumerate(m.filled):
            od = layout[i]
            self.ops.append((od.name, m.operands[k], _kind(m.row, od, m.mods), _token(m.row, od, m.mods)))

    def compute(self, fc: Any) -> Callable:
        try:
            return ROWS[self.row.name](self.row.name, self.mods)
        except Refused as e:
            from ..errors import OpError

            raise OpError(f"the interpreter cannot run {self.what}: {e}") from None

    @property
    def what(self) -> str:
        return "T.ptx." + ".".join([self.row.mnemonic or self.m.row.name.split("_")[0]]
                                   + [v for v in self.m.mods if v])  # fmt: skip


_OUT = ("dst", "pred", "out32", "out64", "inout")


def _inputs(fc: Any, cl: _Call) -> list:
    """(name, evaluator, IR type, token) of each input register."""
    return [(n, fc.expr(e), e.ty, tok) for n, e, kind, tok in cl.ops if kind not in _OUT]


def _outputs(fc: Any, cl: _Call) -> list:
    from tirx.ops.semantics import element_writer

    return [(n, element_writer(fc, e), e.ty, tok) for n, e, kind, tok in cl.ops if kind in _OUT]


def _lane_local_interp(fc: Any, call: Any) -> Callable:
    from tirx.ops.semantics import full

    np = _np()
    cl = _Call(call)
    compute = cl.compute(fc)
    ins, outs = _inputs(fc, cl), _outputs(fc, cl)
    imm = {n for n, e, kind, tok in cl.ops if kind == "imm"}

    def ev(c):
        vals = {}
        for n, f, ty, tok in ins:
            v = full(np.asarray(f(c)), c.N)
            vals[n] = v if n in imm or tok is None else to_token(v, ty, tok)
        res = compute(vals)
        for n, w, ty, tok in outs:
            if n in res:
                w(c, full(from_token(res[n], tok, ty), c.N))
        return np.zeros(1, dtype=np.int32)

    return ev


def _address(fc: Any, e: Any) -> Callable:
    """An evaluator of an address operand as a pointer (a shared-window conversion of a
    pointer is looked through; a raw 32/64-bit address is refused)."""
    from ..ir.expr import Call as _C
    from ..ir.types import PointerType
    from .ptx_table import _shared_window

    if isinstance(e, _C) and e.op is _shared_window():  # found by its trait
        e = e.args[0]
    if not isinstance(e.ty, PointerType):
        from ..errors import OpError

        raise OpError(
            "the interpreter cannot run ld/st on a raw integer address; pass a pointer (buf.ptr_to([i]))"
        )
    return fc.expr(e)


def _mem_interp(fc: Any, call: Any) -> Callable:
    from tirx.ops.semantics import RaceError, full, pointer_elements, shared_unwritten, shared_written

    np = _np()
    cl = _Call(call)
    cl.compute(fc)  # refuses the forms not modelled
    is_ld = cl.row.name.startswith("ld")
    tok = cl.mods["type"]
    bits = _info(tok)[0] if tok[1:].isdigit() else 32
    from ..ir.types import as_type

    mt = as_type(f"uint{bits}")
    faddr = next(_address(fc, e) for n, e, kind, t in cl.ops if n == "addr")
    regs = [(n, e, t) for n, e, kind, t in cl.ops if n.startswith("d" if is_ld else "value")]
    what = cl.what
    if is_ld:
        from tirx.ops.semantics import element_writer

        ws = [(element_writer(fc, e), e.ty) for n, e, t in regs]

        def ld(c):
            p = faddr(c)
            for k, (w, ty) in enumerate(ws):
                v1, idx = pointer_elements(c, _offset(p, k * bits // 8), mt, what)
                bad = shared_unwritten(c, p.mem, mt, idx)
                if bad is not None:
                    raise RaceError(
                        f"{what}: read of shared buffer {p.mem.name} where no thread wrote, by {c.describe(bad)}"
                    )
                w(c, from_token(_from_bits(v1[idx], _tokty(tok)), tok, ty))
            return np.zeros(1, dtype=np.int32)

        return ld
    fs = [(fc.expr(e), e.ty) for n, e, t in regs]

    def st(c):
        p = faddr(c)
        for k, (f, ty) in enumerate(fs):
            v1, idx = pointer_elements(c, _offset(p, k * bits // 8), mt, what)
            b = full(_bits(to_token(full(np.asarray(f(c)), c.N), ty, tok), _tokty(tok)), c.N)
            v1[idx[c.mask]] = b[c.mask].astype(v1.dtype)
            shared_written(c, p.mem, mt, idx)
        return np.zeros(1, dtype=np.int32)

    return st


def _offset(p: Any, nbytes: int) -> Any:
    from tirx.ops.semantics import PtrVal

    if not nbytes or not isinstance(p, PtrVal):
        return p
    return PtrVal(p.mem, p.off + nbytes, p.rank)


def _warp_interp(fc: Any, call: Any) -> Callable:
    from tirx.ops.semantics import full, need_launch

    from .cuda_builtins import _warp_masks

    np = _np()
    cl = _Call(call)
    name, mods = cl.row.name, cl.mods
    ins = {n: (f, ty, tok) for n, f, ty, tok in _inputs(fc, cl)}
    outs = {n: (w, ty, tok) for n, w, ty, tok in _outputs(fc, cl)}
    what = cl.what

    def ev(c):
        if name == "activemask":
            L = need_launch(c, what[2:])
            lane = (L.get("tid") % 32).astype(np.uint64)
            warp = L.get("warp")
            m = np.ones(c.N, dtype=np.uint64) * np.uint64(0xFFFFFFFF)
            grp = c.mask
        else:
            fm = ins["membermask"][0]
            lane, warp, m = _warp_masks(c, what[2:], fm)
            lane = lane.astype(np.uint64)
            grp = c.mask & (((m >> lane) & np.uint64(1)) == 1)
        a = None
        if "a" in ins:
            f, ty, tok = ins["a"]
            a = to_token(full(np.asarray(f(c)), c.N), ty, tok)
        res = {}
        nw = int(warp.max()) + 1 if warp.size else 1
        bit = np.uint64(1) << lane
        if name == "activemask" or name.startswith("vote"):
            p = grp if a is None else (grp & a.astype(bool))
            acc = np.zeros(nw, dtype=np.uint64)
            np.bitwise_or.at(acc, warp, np.where(p, bit, np.uint64(0)))
            cnt_m = np.zeros(nw, dtype=np.uint64)
            np.bitwise_or.at(cnt_m, warp, np.where(grp, bit, np.uint64(0)))
            ballot = acc[warp] & m
            mode = mods.get("mode", "ballot")
            inm = cnt_m[warp] & m
            res["d"] = {"ballot": ballot.astype(np.uint32), "any": ballot != 0, "all": ballot == inm,
                        "uni": (ballot == 0) | (ballot == inm)}[mode]  # fmt: skip
        elif name.startswith("redux"):
            op = mods["op"]
            d = np.zeros(c.N, dtype=a.dtype)
            for k in np.flatnonzero(c.mask):
                sel = grp & (warp == warp[k]) & (((m[k] >> lane) & np.uint64(1)) == 1)
                vs = a[sel]
                if op == "add":
                    d[k] = np.asarray(int(vs.astype(object).sum()) & 0xFFFFFFFF, dtype=np.uint64).astype(
                        a.dtype
                    )
                elif op in ("min", "max"):
                    d[k] = vs.min() if op == "min" else vs.max()
                else:
                    fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
                    d[k] = fn.reduce(vs)
            res["d"] = d
        else:  # match.any / match.all
            d = np.zeros(c.N, dtype=np.uint32)
            p = np.zeros(c.N, dtype=bool)
            for k in np.flatnonzero(c.mask):
                sel = grp & (warp == warp[k]) & (((m[k] >> lane) & np.uint64(1)) == 1)
                same = sel & (a == a[k])
                if mods["mode"] == "any":
                    d[k] = int(np.bitwise_or.reduce(np.where(same, bit, np.uint64(0))))
                else:
                    p[k] = bool((same == sel).all())
                    d[k] = int(m[k]) if p[k] else 0
            res["d"], res["p"] = d, p
        for n, (w, ty, tok) in outs.items():
            if n in res:
                w(c, full(from_token(res[n], tok, ty), c.N))
        return np.zeros(1, dtype=np.int32)

    return ev


def interp_for(row_name: str) -> Callable | None:
    """The interpreter implementation ``(fc, call) -> ev`` of a table row, or None."""
    if row_name not in ROWS:
        return None
    if row_name in _MEMORY:
        return _mem_interp
    if row_name in _WARP:
        return _warp_interp
    return _lane_local_interp


register_row_semantics(interp_for)
