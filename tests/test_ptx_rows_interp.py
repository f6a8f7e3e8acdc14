"""CPU semantics of the PTX table's lane-local rows (tirx/ops/ptx_semantics.py) against exact
numpy references. Each case is one kernel of 64 threads: inputs X, Y, Z (one element per
thread), a statement using the instruction, the result in ``o[0]`` stored to O.
tests/test_ptx_rows_interp_gpu.py runs the same kernels through CUDA and compares bit-exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_frontend_util import load_module

import tirx
from tirx.errors import OpError
from tirx.interp.errors import InterpError, RaceError

N = 64
_SRC = """
from tirx.script import tirx as T

@T.function
def f(X: T.Tensor(({n},), "{x}"), Y: T.Tensor(({n},), "{y}"), Z: T.Tensor(({n},), "{z}"),
      O: T.Tensor(({n},), "{o}")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block={n}))
    i = T.cuda.thread_idx("x")
    o = T.alloc_local((4,), "{o}")
    s = T.alloc_shared(({n},), "{x}")
    {body}
    O[i] = o[0]
"""


def kernel(body: str, x: str, y: str, z: str, o: str):
    return load_module(_SRC.format(n=N, body=body, x=x, y=y, z=z, o=o), "ptxinterp").f


# ------------------------------------------------------------------ exact references
def _py(a):
    return [int(v) for v in np.asarray(a).reshape(-1)]


def _wrap(vals, dt: str):
    d = np.dtype(dt)
    bits = d.itemsize * 8
    out = []
    for v in vals:
        v &= (1 << bits) - 1
        if d.kind == "i" and v >= 1 << (bits - 1):
            v -= 1 << bits
        out.append(v)
    return np.array(out, dtype=d)


def _sat(vals, dt: str):
    info = np.iinfo(dt)
    return np.array([min(max(v, info.min), info.max) for v in vals], dtype=dt)


def _bits(a, n):
    return np.ascontiguousarray(a).view(f"uint{n}")


def _nearest(v: float, cands: list[tuple[int, float]]) -> int:
    """The code of the candidate value nearest ``v`` exactly, ties to the even code."""
    from fractions import Fraction

    fv = Fraction(v)
    return min(cands, key=lambda c: (abs(Fraction(c[1]) - fv), c[0] & 1))[0]


def _bf16(x):
    """bfloat16 bit patterns (uint16) of float64 values, rounded once to nearest even."""
    out = []
    for v in np.asarray(x, dtype=np.float64).reshape(-1):
        if np.isnan(v):
            out.append(0x7FFF)
            continue
        t = int(np.float32(v).view(np.uint32)) >> 16  # within one bfloat16 step of the answer
        cands = [(b, float(_bf16_val(np.array([b]))[0])) for b in (t - 1, t, t + 1) if 0 <= b < 1 << 16]
        big = 3.3895313892515355e38 + 2.0**103  # the largest finite value plus half an ulp
        if abs(v) >= big:
            out.append(0xFF80 if v < 0 else 0x7F80)
            continue
        same_sign = [c for c in cands if np.isfinite(c[1]) and (c[0] >> 15) == int(np.signbit(v))]
        out.append(_nearest(v, same_sign))
    return np.array(out, dtype=np.uint16)


def _bf16_val(bits):
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _pack2(lo, hi, bits=16):
    """Two lanes packed (lo in the low bits); a NaN half is the GPU's canonical 0x7FFF."""
    if bits == 16:
        lo, hi = (np.where(np.isnan(v.astype(np.float32)), np.array(0x7FFF, np.uint16).view(v.dtype), v)
                  if v.dtype.kind == "f" else v for v in (lo, hi))  # fmt: skip
    return (_bits(lo, bits).astype(np.uint64) | (_bits(hi, bits).astype(np.uint64) << bits)).astype(
        f"uint{2 * bits}"
    )


def _unpack2(u, dt, bits=16):
    u = np.asarray(u).astype(np.uint64)
    m = (1 << bits) - 1
    lo = (u & m).astype(f"uint{bits}").view(dt)
    hi = ((u >> bits) & m).astype(f"uint{bits}").view(dt)
    return lo, hi


def _bfe(a, pos, ln, bits, signed):
    a &= (1 << bits) - 1
    pos, ln = pos & 255, ln & 255
    sbit = 0 if (not signed or ln == 0) else (a >> min(pos + ln - 1, bits - 1)) & 1
    return sum((((a >> (pos + i)) & 1) if (i < ln and pos + i < bits) else sbit) << i for i in range(bits))


def _prmt(a, b, c):
    src = (a & 0xFFFFFFFF) | ((b & 0xFFFFFFFF) << 32)
    d = 0
    for i in range(4):
        sel = (c >> (4 * i)) & 15
        byte = (src >> (8 * (sel & 7))) & 255
        if sel & 8:
            byte = 255 if byte & 128 else 0
        d |= byte << (8 * i)
    return d


def _lop3(a, b, c, lut):
    r = 0
    for bit in range(32):
        k = (((a >> bit) & 1) << 2) | (((b >> bit) & 1) << 1) | ((c >> bit) & 1)
        r |= ((lut >> k) & 1) << bit
    return r


def _warps(vals, fn):
    out = []
    for w in range(N // 32):
        part = vals[w * 32 : (w + 1) * 32]
        out += [fn(part, lane) for lane in range(32)]
    return out


def _dp4a(a, b, c, sa, sb):
    acc = c - (1 << 32) * (c >= 1 << 31) if (sa or sb) else c
    for k in range(4):
        x, y = (a >> (8 * k)) & 255, (b >> (8 * k)) & 255
        x -= 256 * (sa and x >= 128)
        y -= 256 * (sb and y >= 128)
        acc += x * y
    return acc & 0xFFFFFFFF


def _dp2a_lo(a, b, c):  # dp2a.lo.u32.s32: a's u16 halves times b's low s8 bytes
    acc = c - (1 << 32) * (c >= 1 << 31)
    for k in range(2):
        x, y = (a >> (16 * k)) & 0xFFFF, (b >> (8 * k)) & 255
        acc += x * (y - 256 * (y >= 128))
    return acc & 0xFFFFFFFF


def _f(op):
    """A float64 reference rounded once to float32 (exact for + - * / sqrt: 53 >= 2*24+2)."""
    return lambda x, y, z: op(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)


# (id, body, X, Y, Z, O dtypes, reference(x, y, z) -> O)
U, S, F = "uint32", "int32", "float32"
CASES = [
    ("add.u32", "T.ptx.add.u32(o[0], X[i], Y[i])", U, U, U, U, lambda x, y, z: x + y),
    ("add.sat.s32", "T.ptx.add.sat.s32(o[0], X[i], Y[i])", S, S, S, S,
     lambda x, y, z: _sat([a + b for a, b in zip(_py(x), _py(y))], S)),
    ("sub.s64", "T.ptx.sub.s64(o[0], X[i], Y[i])", "int64", "int64", S, "int64",
     lambda x, y, z: _wrap([a - b for a, b in zip(_py(x), _py(y))], "int64")),
    ("add.u16x2", "T.ptx.add.u16x2(o[0], X[i], Y[i])", U, U, U, U,
     lambda x, y, z: _pack2(*(a + b for a, b in zip(_unpack2(x, "uint16"), _unpack2(y, "uint16"))))),
    ("mul.lo.s32", "T.ptx.mul.lo.s32(o[0], X[i], Y[i])", S, S, S, S,
     lambda x, y, z: _wrap([a * b for a, b in zip(_py(x), _py(y))], S)),
    ("mul.hi.s32", "T.ptx.mul.hi.s32(o[0], X[i], Y[i])", S, S, S, S,
     lambda x, y, z: _wrap([(a * b) >> 32 for a, b in zip(_py(x), _py(y))], S)),
    ("mul.hi.u64", "T.ptx.mul.hi.u64(o[0], X[i], Y[i])", "uint64", "uint64", U, "uint64",
     lambda x, y, z: _wrap([(a * b) >> 64 for a, b in zip(_py(x), _py(y))], "uint64")),
    ("mul.wide.s32", "T.ptx.mul.wide.s32(o[0], X[i], Y[i])", S, S, S, "int64",
     lambda x, y, z: np.array([a * b for a, b in zip(_py(x), _py(y))], dtype=np.int64)),
    ("mad.lo.u32", "T.ptx.mad.lo.u32(o[0], X[i], Y[i], Z[i])", U, U, U, U,
     lambda x, y, z: _wrap([a * b + c for a, b, c in zip(_py(x), _py(y), _py(z))], U)),
    ("mad.hi.sat.s32", "T.ptx.mad.hi.sat.s32(o[0], X[i], Y[i], Z[i])", S, S, S, S,
     lambda x, y, z: _sat([((a * b) >> 32) + c for a, b, c in zip(_py(x), _py(y), _py(z))], S)),
    ("add.rn.f32", "T.ptx.add.rn.f32(o[0], X[i], Y[i])", F, F, F, F, _f(np.add)),
    ("sub.f32", "T.ptx.sub.f32(o[0], X[i], Y[i])", F, F, F, F, _f(np.subtract)),
    ("mul.rn.f64", "T.ptx.mul.rn.f64(o[0], X[i], Y[i])", "float64", "float64", F, "float64",
     lambda x, y, z: x * y),
    ("add.rn.ftz.f32", "T.ptx.add.rn.ftz.f32(o[0], X[i], Y[i])", F, F, F, F, None),
    ("add.rn.sat.f32", "T.ptx.add.rn.sat.f32(o[0], X[i], Y[i])", F, F, F, F,
     lambda x, y, z: np.clip(_f(np.add)(x, y, z), 0, 1)),
    ("fma.rn.f32", "T.ptx.fma.rn.f32(o[0], X[i], Y[i], Z[i])", F, F, F, F, None),
    # mixed precision: the .bf16/.f16 source (a 16-bit register) is widened exactly, then .f32 math
    ("add.rn.f32.bf16", "T.ptx.add.rn.f32.bf16(o[0], X[i], Y[i])", "uint16", F, F, F,
     lambda x, y, z: _f(np.add)((x.astype(np.uint32) << 16).view(np.float32), y, z)),
    ("sub.rn.sat.f32.f16", "T.ptx.sub.rn.sat.f32.f16(o[0], X[i], Y[i])", "uint16", F, F, F,
     lambda x, y, z: np.nan_to_num(np.clip(_f(np.subtract)(x.view(np.float16).astype(np.float32), y, z), 0, 1),
                                   nan=0.0)),  # .sat: NaN to +0
    ("mad.rn.f64", "T.ptx.mad.rn.f64(o[0], X[i], Y[i], Z[i])", "float64", "float64", "float64", "float64", None),
    ("add.f16", "T.ptx.add.f16(o[0], X[i], Y[i])", "float16", "float16", "float16", "float16",
     lambda x, y, z: (x.astype(np.float64) + y).astype(np.float16)),
    ("mul.rn.bf16x2", "T.ptx.mul.rn.bf16x2(o[0], X[i], Y[i])", U, U, U, U,
     lambda x, y, z: _pack2(*(_bf16(a.astype(np.float64) * b.astype(np.float64))
                             for a, b in zip(map(_bf16_val, _unpack2(x, "uint16")), map(_bf16_val, _unpack2(y, "uint16")))))),
    ("fma.rn.f16", "T.ptx.fma.rn.f16(o[0], X[i], Y[i], Z[i])", "float16", "float16", "float16", "float16",
     lambda x, y, z: np.array([float(_fr(a) * _fr(b) + _fr(c)) if np.isfinite([a, b, c]).all()
                               else float(a) * float(b) + float(c) for a, b, c in zip(x, y, z)]).astype(np.float16)),
    ("min.s32", "T.ptx.min.s32(o[0], X[i], Y[i])", S, S, S, S, lambda x, y, z: np.minimum(x, y)),
    ("max.u64", "T.ptx.max.u64(o[0], X[i], Y[i])", "uint64", "uint64", U, "uint64", lambda x, y, z: np.maximum(x, y)),
    ("min.f32", "T.ptx.min.f32(o[0], X[i], Y[i])", F, F, F, F,
     lambda x, y, z: np.where((x == 0) & (y == 0), np.where(np.signbit(x), x, y), np.fmin(x, y))),
    ("max.s16x2", "T.ptx.max.s16x2(o[0], X[i], Y[i])", U, U, U, U,
     lambda x, y, z: _pack2(*(np.maximum(a, b) for a, b in zip(_unpack2(x, "int16"), _unpack2(y, "int16"))))),
    ("abs.s32", "T.ptx.abs.s32(o[0], X[i])", S, S, S, S, lambda x, y, z: _wrap([abs(a) for a in _py(x)], S)),
    ("neg.f32", "T.ptx.neg.f32(o[0], X[i])", F, F, F, F, lambda x, y, z: -x),
    ("abs.f64", "T.ptx.abs.f64(o[0], X[i])", "float64", F, F, "float64", lambda x, y, z: np.abs(x)),
    ("neg.s64", "T.ptx.neg.s64(o[0], X[i])", "int64", S, S, "int64",
     lambda x, y, z: _wrap([-a for a in _py(x)], "int64")),
    ("and.b32", "T.ptx.and_.b32(o[0], X[i], Y[i])", U, U, U, U, lambda x, y, z: x & y),
    ("or.b64", "T.ptx.or_.b64(o[0], X[i], Y[i])", "uint64", "uint64", U, "uint64", lambda x, y, z: x | y),
    ("xor.b32", "T.ptx.xor.b32(o[0], X[i], Y[i])", U, U, U, U, lambda x, y, z: x ^ y),
    ("not.b32", "T.ptx.not_.b32(o[0], X[i])", U, U, U, U, lambda x, y, z: ~x),
    ("cnot.b32", "T.ptx.cnot.b32(o[0], X[i] % 3)", U, U, U, U, lambda x, y, z: (x % 3 == 0).astype(U)),
    ("shl.b32", "T.ptx.shl.b32(o[0], X[i], Y[i] % 40)", U, U, U, U,
     lambda x, y, z: _wrap([a << (b % 40) for a, b in zip(_py(x), _py(y))], U)),
    ("shr.s32", "T.ptx.shr.s32(o[0], X[i], Y[i] % 40)", S, U, U, S,
     lambda x, y, z: np.array([a >> min(b % 40, 32) for a, b in zip(_py(x), _py(y))], dtype=S)),
    ("shr.u64", "T.ptx.shr.u64(o[0], X[i], Y[i] % 70)", "uint64", U, U, "uint64",
     lambda x, y, z: np.array([a >> (b % 70) for a, b in zip(_py(x), _py(y))], dtype="uint64")),
    ("popc.b64", "T.ptx.popc.b64(o[0], X[i])", "uint64", U, U, U,
     lambda x, y, z: np.array([bin(a).count("1") for a in _py(x)], dtype=U)),
    ("clz.b32", "T.ptx.clz.b32(o[0], X[i] >> (Y[i] % 32))", U, U, U, U,
     lambda x, y, z: np.array([32 - (a >> (b % 32)).bit_length() for a, b in zip(_py(x), _py(y))], dtype=U)),
    ("brev.b32", "T.ptx.brev.b32(o[0], X[i])", U, U, U, U,
     lambda x, y, z: np.array([int(f"{a:032b}"[::-1], 2) for a in _py(x)], dtype=U)),
    ("bfe.s32", "T.ptx.bfe.s32(o[0], X[i], Y[i] % 40, Z[i] % 40)", S, U, U, S,
     lambda x, y, z: _wrap([_bfe(a, b % 40, c % 40, 32, True) for a, b, c in zip(_py(x), _py(y), _py(z))], S)),
    ("bfe.u64", "T.ptx.bfe.u64(o[0], X[i], Y[i] % 70, Z[i] % 70)", "uint64", U, U, "uint64",
     lambda x, y, z: _wrap([_bfe(a, b % 70, c % 70, 64, False) for a, b, c in zip(_py(x), _py(y), _py(z))],
                           "uint64")),
    ("bfi.b32", "T.ptx.bfi.b32(o[0], X[i], Y[i], Z[i] % 40, Z[i] // 64 % 40)", U, U, U, U,
     lambda x, y, z: _wrap([_bfi(a, b, c % 40, c // 64 % 40) for a, b, c in zip(_py(x), _py(y), _py(z))], U)),
    ("bfind.s32", "T.ptx.bfind.s32(o[0], X[i] >> T.Cast(\"int32\", Y[i] % 32))", S, U, U, U,
     lambda x, y, z: np.array([_bfind(a >> (b % 32), False) for a, b in zip(_py(x), _py(y))], dtype=U)),
    ("bfind.shiftamt.u32", "T.ptx.bfind.shiftamt.u32(o[0], X[i] >> (Y[i] % 32))", U, U, U, U,
     lambda x, y, z: np.array([_bfind(a >> (b % 32), True) for a, b in zip(_py(x), _py(y))], dtype=U)),
    ("prmt.b32", "T.ptx.prmt.b32(o[0], X[i], Y[i], Z[i])", U, U, U, U,
     lambda x, y, z: np.array([_prmt(a, b, c) for a, b, c in zip(_py(x), _py(y), _py(z))], dtype=U)),
    ("prmt.b32.ecl", "T.ptx.prmt.b32.ecl(o[0], X[i], Y[i], Z[i])", U, U, U, U,
     lambda x, y, z: np.array([sum(((a >> (8 * max(k, c & 3))) & 255) << (8 * k) for k in range(4))
                               for a, c in zip(_py(x), _py(z))], dtype=U)),
    ("lop3.b32", "T.ptx.lop3.b32(o[0], X[i], Y[i], Z[i], 0x96)", U, U, U, U,
     lambda x, y, z: np.array([_lop3(a, b, c, 0x96) for a, b, c in zip(_py(x), _py(y), _py(z))], dtype=U)),
    ("lop3.b32/e8", "T.ptx.lop3.b32(o[0], X[i], Y[i], Z[i], 0xE8)", U, U, U, U,
     lambda x, y, z: (x & y) | (x & z) | (y & z)),
    ("selp.u32", "T.ptx.selp.u32(o[0], X[i], Y[i], Z[i] % 2 == 0)", U, U, U, U,
     lambda x, y, z: np.where(z % 2 == 0, x, y)),
    ("setp.lt.s32", "T.ptx.setp.lt.s32(o[0], X[i], Y[i])", S, S, S, U, lambda x, y, z: (x < y).astype(U)),
    ("setp.hi.u32", "T.ptx.setp.hi.u32(o[0], X[i], Y[i])", U, U, U, U, lambda x, y, z: (x > y).astype(U)),
    ("setp.ge.and.f32", "T.ptx.setp.ge.and_.f32(o[0], X[i], Y[i], Z[i] > 0)", F, F, F, U,
     lambda x, y, z: ((x >= y) & (z > 0)).astype(U)),
    ("setp.neu.f32/pq", "T.ptx.setp.neu.f32(o[1], o[0], X[i], Y[i])", F, F, F, U,
     lambda x, y, z: (x == y).astype(U)),
    ("set.lt.u32.s32", "T.ptx.set.lt.u32.s32(o[0], X[i], Y[i])", S, S, S, U,
     lambda x, y, z: np.where(x < y, 0xFFFFFFFF, 0).astype(U)),
    ("set.gt.f32.f32", "T.ptx.set.gt.f32.f32(o[0], X[i], Y[i])", F, F, F, F,
     lambda x, y, z: (x > y).astype(F)),
    ("slct.s32.f32", "T.ptx.slct.s32.f32(o[0], X[i], Y[i], Z[i])", S, S, F, S,
     lambda x, y, z: np.where(z >= 0, x, y)),
    ("mov.b32", "T.ptx.mov.b32(o[0], X[i])", F, F, F, U, lambda x, y, z: x.view(U)),
    ("mov.b32/pack", "T.ptx.mov.b32(o[0], X[i], Y[i])", "uint16", "uint16", U, U,
     lambda x, y, z: _pack2(x, y)),
    ("mov.b64/unpack", "T.ptx.mov.b64(o[0], o[1], X[i])\n    o[0] = o[0] * T.uint32(3) + o[1]",
     "uint64", U, U, U, lambda x, y, z: ((x & 0xFFFFFFFF) * 3 + (x >> 32)).astype(U)),
    ("cvt.rni.s32.f32", "T.ptx.cvt.rni.s32.f32(o[0], X[i])", F, F, F, S, lambda x, y, z: _f2i(np.rint(x), S)),
    ("cvt.rzi.u32.f64", "T.ptx.cvt.rzi.u32.f64(o[0], X[i])", "float64", F, F, U,
     lambda x, y, z: _f2i(np.trunc(x), U)),
    ("cvt.rmi.s64.f32", "T.ptx.cvt.rmi.s64.f32(o[0], X[i])", F, F, F, "int64", lambda x, y, z: _f2i(np.floor(x), "int64")),
    ("cvt.rpi.s16.f32", "T.ptx.cvt.rpi.s16.f32(o[0], X[i])", F, F, F, "int16", lambda x, y, z: _f2i(np.ceil(x), "int16")),
    ("cvt.sat.s16.s32", "T.ptx.cvt.sat.s16.s32(o[0], X[i])", S, S, S, "int16", lambda x, y, z: _sat(_py(x), "int16")),
    ("cvt.u16.u32", "T.ptx.cvt.u16.u32(o[0], X[i])", U, U, U, "uint16", lambda x, y, z: x.astype("uint16")),
    ("cvt.s64.s32", "T.ptx.cvt.s64.s32(o[0], X[i])", S, S, S, "int64", lambda x, y, z: x.astype("int64")),
    ("cvt.sat.u32.s64", "T.ptx.cvt.sat.u32.s64(o[0], X[i])", "int64", S, S, U, lambda x, y, z: _sat(_py(x), U)),
    ("cvt.rn.f32.s32", "T.ptx.cvt.rn.f32.s32(o[0], X[i])", S, S, S, F, lambda x, y, z: x.astype(F)),
    ("cvt.rn.f32.u64", "T.ptx.cvt.rn.f32.u64(o[0], X[i])", "uint64", S, S, F,
     lambda x, y, z: np.array([_exact_f32(a) for a in _py(x)], dtype=F)),
    ("cvt.rn.f16.f32", "T.ptx.cvt.rn.f16.f32(o[0], X[i])", F, F, F, "float16", lambda x, y, z: x.astype(np.float16)),
    ("cvt.f32.f16", "T.ptx.cvt.f32.f16(o[0], X[i])", "float16", F, F, F, lambda x, y, z: x.astype(F)),
    ("cvt.rn.f32.f64", "T.ptx.cvt.rn.f32.f64(o[0], X[i])", "float64", F, F, F, lambda x, y, z: x.astype(F)),
    ("cvt.rn.bf16x2.f32", "T.ptx.cvt.rn.bf16x2.f32(o[0], X[i], Y[i])", F, F, F, U,
     lambda x, y, z: _pack2(_bf16(y), _bf16(x))),
    ("cvt.rn.f16x2.f32", "T.ptx.cvt.rn.f16x2.f32(o[0], X[i], Y[i])", F, F, F, U,
     lambda x, y, z: _pack2(y.astype(np.float16), x.astype(np.float16))),
    ("cvt.rn.satfinite.e4m3x2.f32", "T.ptx.cvt.rn.satfinite.e4m3x2.f32(o[0], X[i], Y[i])", F, F, F, "uint16",
     lambda x, y, z: _pack2(_e4m3(y), _e4m3(x), 8)),
    ("cvt.rn.satfinite.e5m2x2.f32", "T.ptx.cvt.rn.satfinite.e5m2x2.f32(o[0], X[i], Y[i])", F, F, F, "uint16",
     lambda x, y, z: _pack2(_e5m2(y), _e5m2(x), 8)),
    ("dp4a.s32.u32", "T.ptx.dp4a.s32.u32(o[0], X[i], Y[i], Z[i])", U, U, U, U,
     lambda x, y, z: np.array([_dp4a(a, b, c, True, False) for a, b, c in zip(_py(x), _py(y), _py(z))], dtype=U)),
    ("dp4a.u32.u32", "T.ptx.dp4a.u32.u32(o[0], X[i], Y[i], Z[i])", U, U, U, U,
     lambda x, y, z: np.array([_dp4a(a, b, c, False, False) for a, b, c in zip(_py(x), _py(y), _py(z))], dtype=U)),
    ("dp2a.lo.u32.s32", "T.ptx.dp2a.lo.u32.s32(o[0], X[i], Y[i], Z[i])", U, U, U, U,
     lambda x, y, z: np.array([_dp2a_lo(a, b, c) for a, b, c in zip(_py(x), _py(y), _py(z))], dtype=U)),
    ("sad.s32", "T.ptx.sad.s32(o[0], X[i], Y[i], Z[i])", S, S, S, S,
     lambda x, y, z: _wrap([c + abs(a - b) for a, b, c in zip(_py(x), _py(y), _py(z))], S)),
    ("shf.l.clamp.b32", "T.ptx.shf.l.clamp.b32(o[0], X[i], Y[i], Z[i] % 40)", U, U, U, U,
     lambda x, y, z: _wrap([((b << 32 | a) << min(c % 40, 32)) >> 32 for a, b, c in zip(_py(x), _py(y), _py(z))], U)),
    ("shf.r.wrap.b32", "T.ptx.shf.r.wrap.b32(o[0], X[i], Y[i], Z[i])", U, U, U, U,
     lambda x, y, z: _wrap([(b << 32 | a) >> (c & 31) for a, b, c in zip(_py(x), _py(y), _py(z))], U)),
    ("bmsk.clamp.b32", "T.ptx.bmsk.clamp.b32(o[0], X[i] % 40, Y[i] % 40)", U, U, U, U,
     lambda x, y, z: _wrap([((1 << min(b % 40, 32)) - 1) << min(a % 40, 32) for a, b in zip(_py(x), _py(y))], U)),
    ("mul24.hi.s32", "T.ptx.mul24.hi.s32(o[0], X[i], Y[i])", S, S, S, S,
     lambda x, y, z: _wrap([(_s24(a) * _s24(b)) >> 16 for a, b in zip(_py(x), _py(y))], S)),
    ("mad24.lo.u32", "T.ptx.mad24.lo.u32(o[0], X[i], Y[i], Z[i])", U, U, U, U,
     lambda x, y, z: _wrap([(a & 0xFFFFFF) * (b & 0xFFFFFF) + c for a, b, c in zip(_py(x), _py(y), _py(z))], U)),
    ("testp.subnormal.f32", "T.ptx.testp.subnormal.f32(o[0], X[i])", F, F, F, U,
     lambda x, y, z: ((x != 0) & (np.abs(x) < np.finfo(np.float32).tiny)).astype(U)),
    ("testp.finite.f64", "T.ptx.testp.finite.f64(o[0], X[i])", "float64", F, F, U,
     lambda x, y, z: np.isfinite(x).astype(U)),
    ("rcp.rn.f32", "T.ptx.rcp.rn.f32(o[0], X[i])", F, F, F, F, lambda x, y, z: (1.0 / x.astype(np.float64)).astype(F)),
    ("sqrt.rn.f64", "T.ptx.sqrt.rn.f64(o[0], T.abs(X[i]))", "float64", F, F, "float64",
     lambda x, y, z: np.sqrt(np.abs(x))),
    ("ld.global.u32", "T.ptx.ld.global_.u32(o[0], X.ptr_to([63 - i]))", U, U, U, U, lambda x, y, z: x[::-1]),
    ("ld.v2.u32", "T.ptx.ld.v2.u32(o[1], o[2], X.ptr_to([i // 2 * 2]))\n    o[0] = o[1] * T.uint32(5) + o[2]",
     U, U, U, U, lambda x, y, z: np.repeat(x[0::2] * 5 + x[1::2], 2)),
    ("ld.global.v4.f32", "T.ptx.ld.global_.v4.f32(o[0], o[1], o[2], o[3], X.ptr_to([i // 4 * 4]))\n"
     "    o[0] = o[0] + o[3]", F, F, F, F, lambda x, y, z: np.repeat(x[0::4] + x[3::4], 4)),
    ("st.shared.u32", "T.ptx.st.shared.u32(s.ptr_to([63 - i]), X[i])\n    T.cuda.cta_sync()\n    o[0] = s[i]",
     U, U, U, U, lambda x, y, z: x[::-1]),
    ("st.v2.b32", "if i % 2 == 0:\n        T.ptx.st.v2.b32(s.ptr_to([i]), Y[i], X[i])\n    T.cuda.cta_sync()\n"
     "    o[0] = s[i]", U, U, U, U, lambda x, y, z: np.where(np.arange(N) % 2 == 0, y, np.roll(x, 1))),
    ("vote.sync.ballot.b32", "T.ptx.vote_sync.ballot.b32(o[0], X[i] % 3 == 0, 0xFFFFFFFF)", U, U, U, U,
     lambda x, y, z: np.array(_warps(x, lambda p, k: sum(1 << j for j in range(32) if p[j] % 3 == 0)), dtype=U)),
    ("vote.sync.any.pred", "T.ptx.vote_sync.any.pred(o[0], X[i] % 61 == 0, 0xFFFFFFFF)", U, U, U, U,
     lambda x, y, z: np.array(_warps(x, lambda p, k: int(any(v % 61 == 0 for v in p))), dtype=U)),
    ("redux.sync.min.s32", "T.ptx.redux_sync.min.s32(o[0], X[i], 0xFFFFFFFF)", S, S, S, S,
     lambda x, y, z: np.array(_warps(x, lambda p, k: p.min()), dtype=S)),
    ("redux.sync.xor.b32", "T.ptx.redux_sync.xor.b32(o[0], X[i], T.uint32(0x55555555) << T.uint32(i % 2))", U, U, U, U,
     lambda x, y, z: np.array(_warps(x, lambda p, k: np.bitwise_xor.reduce(p[k % 2 :: 2])), dtype=U)),
    ("match.any.sync.b32", "T.ptx.match.any.sync.b32(o[0], X[i] % 4, 0xFFFFFFFF)", U, U, U, U,
     lambda x, y, z: np.array(_warps(x, lambda p, k: sum(1 << j for j in range(32) if p[j] % 4 == p[k] % 4)), dtype=U)),
    ("activemask.b32", "T.ptx.activemask.b32(o[0])", U, U, U, U, lambda x, y, z: np.full(N, 0xFFFFFFFF, dtype=U)),
]  # fmt: skip


def _fr(v):
    from fractions import Fraction

    return Fraction(float(v))


def _s24(a):
    a &= 0xFFFFFF
    return a - (1 << 24) * (a >= 1 << 23)


def _bfi(a, b, pos, ln):
    for k in range(ln):
        if pos + k >= 32:
            break
        b = (b & ~(1 << (pos + k))) | (((a >> k) & 1) << (pos + k))
    return b & 0xFFFFFFFF


def _bfind(a, shiftamt):
    if a < 0:
        a = ~a
    if a == 0:
        return 0xFFFFFFFF
    d = a.bit_length() - 1
    return 31 - d if shiftamt else d


def _f2i(r, dt):
    info = np.iinfo(dt)
    out = [
        0 if np.isnan(v) else info.min if v <= info.min else info.max if v >= info.max else int(v) for v in r
    ]
    return np.array(out, dtype=dt)


def _exact_f32(a: int) -> np.float32:
    """The float32 nearest the integer ``a`` (ties to even), decided exactly."""
    f = np.float32(float(a))  # within one float32 step of the answer
    cands = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    cands = [c for c in cands if np.isfinite(c)]
    best = min(cands, key=lambda c: (abs(_fr(c) - a), int(np.float32(c).view(np.uint32)) & 1))
    return np.float32(best)


def _f8_codes(ebits: int, mbits: int, ieee: bool) -> list[tuple[int, float]]:
    """(code, value) of every finite code of a float8 format (e4m3fn: no inf, S.1111.111 NaN)."""
    bias = (1 << (ebits - 1)) - 1
    out = []
    for code in range(256):
        s, e, m = code >> 7, (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
        if (ieee and e == (1 << ebits) - 1) or (not ieee and e == (1 << ebits) - 1 and m == (1 << mbits) - 1):
            continue
        mag = m * 2.0 ** (1 - bias - mbits) if e == 0 else (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
        out.append((code, -mag if s else mag))
    return out


_E4M3, _E5M2 = _f8_codes(4, 3, False), _f8_codes(5, 2, True)


def _f8(x, codes, big):
    """.satfinite float8 codes: nearest even, beyond the largest finite value (and inf) clamped."""
    vals = np.clip(np.asarray(x, dtype=np.float64), -big, big)
    return np.array([_nearest(float(v), [c for c in codes if (c[0] >> 7) == int(np.signbit(v))]) for v in vals],
                    dtype=np.uint8)  # fmt: skip


def _e4m3(x):
    return _f8(x, _E4M3, 448.0)


def _e5m2(x):
    return _f8(x, _E5M2, 57344.0)


# ------------------------------------------------------------------ inputs
def inputs(case, seed: int = 0):
    """Random inputs with the edge values of each dtype mixed in (no NaN: the GPU's NaN
    payloads are canonical, not compared here)."""
    rng = np.random.default_rng(seed)
    with np.errstate(all="ignore"):
        return _inputs(case, rng)


def _inputs(case, rng):
    out = []
    for k, dt in enumerate(case[2:5]):
        d = np.dtype(dt)
        if d.kind in "iu":
            info = np.iinfo(d)
            a = rng.integers(info.min, info.max, N, dtype=d, endpoint=True)
            edge = np.array([0, 1, info.max, info.min, info.max - 1, 2, 3, 255, 128], dtype=object)
            edge = np.array([int(v) for v in edge if info.min <= v <= info.max], dtype=d)
            a[k : k + len(edge)] = edge
            a[20:28] = a[20:28] % 300  # small values too (shift amounts, bytes)
        else:
            a = (rng.standard_normal(N) * rng.choice([1e-3, 1.0, 1e3, 3e5], N)).astype(d)
            edge = [
                0.0,
                -0.0,
                1.0,
                2.5,
                -2.5,
                0.5,
                1.5,
                -1.5,
                1e-40,
                -3e-39,
                65504.0,
                70000.0,
                np.inf,
                -np.inf,
            ]
            a[3 * k : 3 * k + len(edge)] = np.array(edge, dtype=np.float64).astype(d)
        out.append(a)
    return out


def run_interp(case, seed: int = 0):
    f = kernel(case[1], *case[2:6])
    x, y, z = inputs(case, seed)
    o = np.zeros(N, dtype=case[5])
    tirx.compile(f, target="interp")(x.copy(), y.copy(), z.copy(), o)
    return (x, y, z), o


_IDS = [c[0] for c in CASES]
#: cases whose instruction needs sm_100 (the GPU comparison skips them on an older device)
SM100 = {"add.rn.f32.bf16", "sub.rn.sat.f32.f16"}


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_row_on_the_interpreter_matches_numpy(case):
    (x, y, z), o = run_interp(case)
    ref = case[6]
    if ref is None:
        return  # checked by the dedicated tests below (and against the GPU)
    with np.errstate(all="ignore"):
        want = np.asarray(ref(x, y, z)).astype(case[5])
    if o.dtype.kind == "f":  # a NaN result (inf - inf) is the GPU's canonical NaN; compare NaN-ness
        both = np.isnan(o) & np.isnan(want)
        o, want = np.where(both, 0, o).astype(o.dtype), np.where(both, 0, want).astype(o.dtype)
    np.testing.assert_array_equal(o.view(f"uint{o.itemsize * 8}"), want.view(f"uint{o.itemsize * 8}"))


def test_fma_rounds_once():
    (x, y, z), o = run_interp(next(c for c in CASES if c[0] == "fma.rn.f32"))
    want = [np.float32(float(_fr(a) * _fr(b) + _fr(c))) if np.isfinite([a, b, c]).all() else o[k]
            for k, (a, b, c) in enumerate(zip(x, y, z))]  # fmt: skip
    np.testing.assert_array_equal(o, np.array(want, dtype=np.float32))


def test_ftz_flushes_subnormal_inputs_and_results():
    (x, y, _), o = run_interp(next(c for c in CASES if c[0] == "add.rn.ftz.f32"))
    tiny = np.float32(1.1754944e-38)
    fx = np.where(np.abs(x) < tiny, np.copysign(np.float32(0), x), x)
    fy = np.where(np.abs(y) < tiny, np.copysign(np.float32(0), y), y)
    r = fx + fy
    r = np.where(np.abs(r) < tiny, np.copysign(np.float32(0), r), r)
    np.testing.assert_array_equal(o.view(np.uint32), r.astype(np.float32).view(np.uint32))
    assert (x == np.float32(1e-40)).any() or (y == np.float32(1e-40)).any()


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.integers(0, 255))
def test_lop3_is_the_lookup_table_of_its_three_inputs(a, b, lut):
    f = kernel(f"T.ptx.lop3.b32(o[0], X[i], Y[i], Z[i], {lut})", U, U, U, U)
    x = np.full(N, a, np.uint32)
    y = np.full(N, b, np.uint32)
    z = np.arange(N, dtype=np.uint32) * np.uint32(0x9E3779B9)
    o = np.zeros(N, np.uint32)
    tirx.compile(f, target="interp")(x, y, z, o)
    assert [int(v) for v in o] == [_lop3(a, b, int(c), lut) for c in z]


@settings(max_examples=40, deadline=None)
@given(st.integers(2**24, 2**64 - 1))
def test_int_to_float_rounds_once_to_nearest_even(a):
    f = kernel("T.ptx.cvt.rn.f32.u64(o[0], X[i])", "uint64", U, U, F)
    lo = a & ~((1 << max(a.bit_length() - 25, 0)) - 1)  # a and its tie point with the float32 below
    x = np.array([a, lo, lo | (1 << max(a.bit_length() - 26, 0))] * (N // 3) + [a] * (N % 3), dtype=np.uint64)
    o = np.zeros(N, np.float32)
    tirx.compile(f, target="interp")(x, np.zeros(N, np.uint32), np.zeros(N, np.uint32), o)
    np.testing.assert_array_equal(o, np.array([_exact_f32(int(v)) for v in x], dtype=np.float32))


@pytest.mark.parametrize("body,why", [
    ("T.ptx.rcp.approx.f32(o[0], X[i])", "approx"),
    ("T.ptx.sqrt.approx.ftz.f32(o[0], X[i])", "approx"),
    ("T.ptx.add.rz.f32(o[0], X[i], Y[i])", ".rz"),
    ("T.ptx.cvt.rz.f16.f32(o[0], X[i])", ".rn"),
    ("T.ptx.ex2.approx.f32(o[0], X[i])", "no CPU model"),
])  # fmt: skip
def test_inexact_forms_are_refused_with_a_reason(body, why):
    f = kernel(body, F, F, F, F if "f16" not in body else "float16")
    with pytest.raises(OpError, match=why.replace(".", r"\.")):
        tirx.compile(f, target="interp")(*[np.ones(N, np.float32)] * 3, np.zeros(N, np.float32))


def test_a_raw_shared_address_is_refused_for_ld():
    f = kernel("T.ptx.ld.shared.u32(o[0], T.uint32(0))", U, U, U, U)
    with pytest.raises(OpError, match="pointer"):
        tirx.compile(f, target="interp")(*[np.ones(N, np.uint32)] * 4)


def test_activemask_in_a_branch_is_the_branch_lanes():
    # CPU only: a GPU may run a short branch predicated, with every lane active
    body = "if i % 3 != 1:\n        T.ptx.activemask.b32(o[0])\n    else:\n        o[0] = T.uint32(7)"
    f = kernel(body, U, U, U, U)
    o = np.zeros(N, np.uint32)
    tirx.compile(f, target="interp")(*[np.zeros(N, np.uint32)] * 3, o)
    branch = sum(1 << j for j in range(32) if j % 3 != 1)
    want = [7 if k % 3 == 1 else branch if k < 32 else sum(1 << j for j in range(32) if (j + 32) % 3 != 1)
            for k in range(N)]  # fmt: skip
    assert [int(v) for v in o] == want


def test_ld_shared_of_unwritten_memory_is_a_race_error():
    f = kernel("T.ptx.ld.shared.v2.u32(o[0], o[1], s.ptr_to([i // 2 * 2]))", U, U, U, U)
    with pytest.raises(RaceError, match="no thread wrote"):
        tirx.compile(f, target="interp")(*[np.ones(N, np.uint32)] * 4)


def test_redux_mask_without_the_calling_lane_is_an_error():
    f = kernel("T.ptx.redux_sync.add.u32(o[0], X[i], 1)", U, U, U, U)
    with pytest.raises(InterpError, match=r"T\.ptx\.redux\.sync\.add\.u32: the mask of .* own lane"):
        tirx.compile(f, target="interp")(*[np.ones(N, np.uint32)] * 4)


def test_covered_rows_are_counted():
    from tirx.ops import ptx_table
    from tirx.ops.ptx_semantics import ROWS

    rows = [r for o in ptx_table.opcodes().values() for r in o.rows]
    names = {r.name for r in rows}
    assert set(ROWS) <= names  # every semantics names a row of the table
    assert len(ROWS) >= 60


def test_f8_pairs_from_half_pairs_are_the_f32_pairs_narrowed():
    # cvt.rn.satfinite.e4m3x2.f16x2 d, a: each half of a to one byte of d, as the .f32 pair form
    # (upper operand to the upper byte) narrows the same values
    f = kernel(
        "T.ptx.cvt.rn.satfinite.e4m3x2.f16x2(o[0], X[i])\n    "
        "T.ptx.cvt.rn.satfinite.e4m3x2.f32(o[1], T.Cast('float32', T.reinterpret(T.Cast('uint16', X[i] >> "
        "T.uint32(16)), ty='float16')), T.Cast('float32', T.reinterpret(T.Cast('uint16', X[i]), ty='float16')))\n"
        "    o[0] = o[0] - o[1]",
        U, U, U, "uint16",
    )  # fmt: skip
    h = (np.random.default_rng(3).standard_normal(2 * N) * 300).astype(np.float16)
    h[:6] = [np.inf, -np.inf, 0.0, -0.0, 448.0, 500.0]
    x = h.view(np.uint32).copy()
    o = np.full(N, 7, np.uint16)
    tirx.compile(f, target="interp")(x, np.zeros(N, np.uint32), np.zeros(N, np.uint32), o)
    assert (o == 0).all(), o
    want = [int(_e4m3([v])[0]) for v in h[1::2].astype(np.float64)]
    f2 = kernel("T.ptx.cvt.rn.satfinite.e4m3x2.f16x2(o[0], X[i])", U, U, U, "uint16")
    tirx.compile(f2, target="interp")(x, np.zeros(N, np.uint32), np.zeros(N, np.uint32), o)
    assert [int(v) >> 8 for v in o] == want
