"""Generated per-op tests (issue #13): every built-in op of the op table is checked from its
declaration alone, so an op declared later is covered without touching this file.

- ``test_roundtrip``: a small kernel calls the op with arguments drawn (hypothesis) from its
  declared argument kinds (``op.args``), inside a device entry when it is ``device_only``,
  its value bound when it has one; ``tirx.loads(tirx.dumps(f))`` is structurally equal to
  ``f``, prints the same, and the op prints as ``T.<name>(``.
- For every op with both a CUDA lowering and interpreter semantics (``impl("cuda", op)``
  and ``impl("interp", op)``, not ``NoInterp``): one kernel per dtype evaluates every such
  op that accepts the dtype on edge inputs (floats: +-0, +-inf, NaN, denormals, ties 0.5 /
  1.5 / 2.5, huge and tiny values; integers: 0, +-1, min, max) and stores each result.
  The dtypes an op accepts are the ones both backends accept (and they must agree).
  ``test_differential_compiles`` compiles each kernel through NVRTC (no GPU; skipped
  without ``cuda.bindings.nvrtc``); ``test_differential_interp_vs_numpy`` runs it on the
  interpreter and checks each op that has a numpy ufunc of the same name against it;
  ``test_declared_ranges_hold`` checks its integer results against the ops' declared
  ``range``/``nonneg`` traits; ``tests/test_ops_generated_gpu.py`` runs the kernels on a
  GPU against the interpreter (ulp tolerances: ``tirx.testing.opcheck.gpu_tolerance``).

An op the generator cannot handle is listed in ``SKIP`` with the reason (and the parts it
is left out of); ``test_skip_table_names_declared_ops`` keeps that table honest.
"""

from __future__ import annotations

import contextlib
import functools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirx
from tirx.ir.expr import convert
from tirx.ir.op import NoInterp, Op, all_ops, call, impl
from tirx.ir.types import PrimType, TensorType, VoidType, as_type, int32
from tirx.surface.builder import IRBuilder, launch_args
from tirx.testing.opcheck import (
    CUDA_ULP_F32,
    EXACT_OPTS,
    FLOATS,
    INTS,
    as_dtype,
    compare,
    fmt,
    np_dtype,
    values,
)

OPS: dict[str, Op] = all_ops(builtin_only=True)

#: op -> (parts it is left out of, why). Parts: "roundtrip", "differential" (compile,
#: interpreter and GPU), "gpu" (only the GPU run).
SKIP: dict[str, tuple[frozenset[str], str]] = {
    "ptx.mapa": (
        frozenset({"differential"}),
        "needs a cluster launch and a shared-memory pointer; its value is an address",
    ),
    "cuda.ballot_sync": (
        frozenset({"differential"}),
        "its mask must include the calling lane (CUDA: undefined otherwise, an illegal instruction "
        "on the H200), which edge inputs do not; checked in tests/test_cuda_builtins.py",
    ),
    "cuda.reduce_add_sync_u32": (
        frozenset({"differential"}),
        "its mask must include the calling lane (as cuda.ballot_sync); checked in tests/test_cuda_builtins.py",
    ),
    "cuda.reduce_min_sync_u32": (
        frozenset({"differential"}),
        "its mask must include the calling lane (as cuda.ballot_sync); checked in tests/test_cuda_builtins.py",
    ),
    "cuda.trap_when_assert_failed": (
        frozenset({"differential"}),
        "edge inputs make the condition false, which aborts the kernel (the interpreter raises); "
        "checked in tests/test_cuda_builtins.py",
    ),
    "cuda.cta_reduce": (
        frozenset({"differential"}),
        "needs shared scratch of the value's dtype and a block of 32 * num_warps threads; "
        "tests/test_cta_reduce.py checks it against numpy and, on a GPU, against CUDA",
    ),
    "assume": (
        frozenset({"differential"}),
        "edge inputs make the assumption false: undefined behaviour in CUDA, an error in the "
        "interpreter; checked in tests/test_cuda_builtins.py",
    ),
    "cuda.any_sync": (
        frozenset({"differential"}),
        "its mask must include the calling lane (as cuda.ballot_sync); checked in tests/test_cuda_builtins.py",
    ),
}
# TIRx's T.gpu_* ops and LLVM vector ops (tirx/ops/gpu_generic.py, tirx/ops/vector.py)
for _n in (
    "gpu_warp_shuffle", "gpu_warp_shuffle_down", "gpu_warp_shuffle_up", "gpu_warp_shuffle_xor",
    "cuda.__shfl_sync", "cuda.__shfl_down_sync", "cuda.__shfl_up_sync", "cuda.__shfl_xor_sync",
):  # fmt: skip
    SKIP[_n] = (
        frozenset({"differential"}),
        "its mask must include the calling lane and its width be a power of two (edge inputs are "
        "neither); tests/test_ops_gpu_generic.py checks it against numpy and, on a GPU, against CUDA",
    )
SKIP["gpu_storage_sync"] = (
    frozenset({"differential"}),
    "a storage scope (shared, warp), not a value; checked in tests/test_ops_gpu_generic.py",
)
SKIP["gpu_thread_return"] = (
    frozenset({"differential"}),
    "ends the thread, so the ops after it would not run; checked in tests/test_ops_gpu_generic.py",
)
for _n in ("assume_always", "assume_aligned"):
    SKIP[_n] = (
        frozenset({"differential"}),
        "edge inputs make the fact false (as assume); checked in tests/test_ops_gpu_generic.py",
    )
_VECTOR_OPS = ("vector_low", "vector_high", "vector_combine")
_VECTOR_OPS += ("masked_load", "masked_store", "get_active_lane_mask")
for _n in _VECTOR_OPS:
    SKIP[_n] = (
        frozenset({"differential"} | ({"roundtrip"} if _n in ("vector_low", "vector_high") else set())),
        "an LLVM vector op on vectors (the generator draws scalars), refused by CUDA codegen; "
        "tests/test_ops_vector.py round-trips it and checks the interpreter against numpy",
    )

# TIRx's CUDA builtins that move several elements through pointers, record into profiler
# buffers, wait on memory or need a grid-wide launch (tirx/ops/cuda_convert.py, cuda_timers.py,
# cuda_waits.py, cuda_mma.py, cuda_legacy.py): the generator's one-element addresses and edge
# inputs do not fit them; tests/test_cuda_*.py check each against numpy and, on a GPU, against CUDA
for _n in ("cuda.float22half2", "cuda.float8tohalf8", "cuda.half8tofloat8", "cuda.timer_init", "cuda.timer_start",
           "cuda.timer_end", "cuda.timer_finalize", "cuda.wait_until", "cuda.grid_sync", "cuda.mma_fill",
           "cuda.mma_store", "s_tir.cp_async_raw", "cuda.bmma_sync", "ptx_legacy.mma", "ptx_legacy.ldmatrix"):  # fmt: skip
    SKIP[_n] = (
        frozenset({"differential"}),
        "moves several elements through a pointer, records, waits, needs a cooperative launch or has more "
        "operands than the generator's buffers (bmma_sync, ptx_legacy.*: refused by both backends); "
        "checked in tests/test_cuda_convert.py, test_cuda_timers_waits.py, test_cuda_fragments.py",
    )

SKIP["cuda.runtime_instr_desc"] = (
    frozenset({"differential"}),
    "reads a 32-bit descriptor through a pointer into the generator's element-typed buffers "
    "(misaligned for narrow dtypes); tests/test_tcgen05.py checks it against TIRx's values",
)

for _n in ("cuda.tcgen05_encode_instr_descriptor", "cuda.tcgen05_encode_instr_descriptor_block_scaled"):
    SKIP[_n] = (
        frozenset({"differential"}),
        "folded to a constant when the kernel is built (dtype/shape options, no array operand); "
        "tests/test_tcgen05.py checks every combination against TIRx's recorded values",
    )

SKIP["cuda.tensormap_encode_tiled"] = (
    frozenset({"roundtrip", "differential"}),
    "host-side, with TIRx's keyword options after 4 * rank + 1 operands (the generator draws neither); "
    "round-tripped in tests/test_cuda_launch_attrs.py and tests/data/tirx_golden/frontend/cuda_tensormap.py",
)

# NVSHMEM ops (tirx/ops/nvshmem.py): building them needs NVSHMEM's headers and device library,
# running them a bootstrapped job; tests/test_nvshmem.py checks codegen, the build and the
# interpreter (one PE and N simulated PEs), tests/test_nvshmem_gpu.py runs them on a GPU
for _n in [n for n in OPS if n.startswith("nvshmem.")]:
    SKIP[_n] = (
        frozenset({"differential"}),
        "an NVSHMEM op (needs NVSHMEM to build and a bootstrapped job to run); checked in tests/test_nvshmem.py",
    )

# The PTX instruction table's opcodes take their forms from their rows, not from op.args:
# tests/test_ptx_table.py round-trips every row and compiles every form. The differential
# calls an op with no arguments, which only an opcode with a bare no-operand row accepts
# (T.ptx.elect_sync()).
from tirx.ops.ptx_table import opcodes as _ptx_opcodes  # noqa: E402

for _n, _opc in _ptx_opcodes().items():
    _parts = {"roundtrip"} | (
        set() if any(r.bare and not r.operands for r in _opc.rows) else {"differential"}
    )
    _old = SKIP.get(_n)
    SKIP[_n] = (
        frozenset(_parts | (_old[0] if _old else set())),
        (_old[1] + "; " if _old else "")
        + "a PTX table opcode, covered row by row by tests/test_ptx_table.py",
    )


def skipped(name: str, part: str) -> bool:
    s = SKIP.get(name)
    return s is not None and part in s[0]


def test_skip_table_names_declared_ops():
    parts = {"roundtrip", "differential", "gpu"}
    assert set(SKIP) <= set(OPS), f"SKIP names undeclared ops: {sorted(set(SKIP) - set(OPS))}"
    for name, (ps, why) in SKIP.items():
        assert ps and ps <= parts and why, name


# ----------------------------------------------------------------------------- round trip
_RT_DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int64", "int8", "uint32", "uint64")
_RT_TY = ("float32", "int32", "uint64", "float16", "bool", "int8")
_AXES = ("x", "y", "z")


def _kinds(op: Op, n_var: int, n_opt: int) -> list[str]:
    """The base kinds of one call: required ones, ``n_opt`` optional ones, ``n_var``
    repetitions of a variadic one."""
    out = []
    for k in op.args:
        base = k.lstrip("*").rstrip("?")
        if k.startswith("*"):
            out += [base] * n_var
        elif k.endswith("?"):
            if n_opt > 0:
                out.append(base)
                n_opt -= 1
        else:
            out.append(base)
    return out


def _rt_arg(
    kind: str, data: Any, bufs: dict, scalars: dict, element: bool = False, choices: Any = None
) -> Any:
    """A value of argument kind ``kind`` (one of ``choices`` when the op declares them);
    ``element``: a buffer element (``takes_address``)."""
    if choices:
        return data.draw(st.sampled_from(choices), label="choice")
    j = data.draw(st.integers(0, 7), label="index")
    if element:
        return data.draw(st.sampled_from((bufs["A"], bufs["F"], bufs["I"])), label="element")[j]
    if kind == "x":
        which = data.draw(st.sampled_from(("load", "lit", "var")), label="x form")
        A = bufs["A"]
        if which == "load":
            return A[j]
        if which == "var":
            return scalars["a"]
        lit = (
            data.draw(st.sampled_from((0.5, -2.0, 1e-3, 0.0)))
            if A.dtype.is_float
            else data.draw(st.integers(-3 if A.dtype.kind == "int" else 0, 100))
        )
        return convert(lit, A[0])
    if kind == "i":
        return data.draw(st.sampled_from((bufs["I"][j], scalars["n"], j)), label="i")
    if kind == "f":
        return data.draw(st.sampled_from((bufs["F"][j], 1.5)), label="f")
    if kind == "b":
        return bufs["I"][j] > data.draw(st.integers(-2, 2), label="b")
    if kind == "p":
        return data.draw(st.sampled_from((bufs["A"], bufs["F"], bufs["I"])), label="p").ptr_to([j])
    if kind == "s":
        return data.draw(st.sampled_from(_AXES), label="s")
    if kind == "n":
        return data.draw(st.sampled_from((0, 1, 8, 32, 64)), label="n")
    raise AssertionError(kind)


def roundtrip_kernel(op: Op, data: Any):
    """A function that calls ``op`` once, with arguments drawn from its declared kinds."""
    dt = data.draw(st.sampled_from(_RT_DTYPES), label="dtype")
    n_var = data.draw(st.integers(0, 2), label="variadic")
    n_opt = data.draw(st.integers(0, 1), label="optional")
    ty = data.draw(st.sampled_from(_RT_TY), label="ty") if op.needs_ty else None
    bld = IRBuilder()
    with bld, bld.function("rt_" + op.name.replace(".", "_")):
        bufs = {
            "A": bld.param("A", TensorType((8,), PrimType(dt))),
            "I": bld.param("I", TensorType((8,), int32)),
            "F": bld.param("F", TensorType((8,), as_type("float32"))),
        }
        scalars = {"n": bld.param("n", int32), "a": bld.param("a", PrimType(dt))}
        where = bld.device_entry(*launch_args(1, 32)) if op.device_only else contextlib.nullcontext()
        with where:
            args = [
                _rt_arg(
                    k,
                    data,
                    bufs,
                    scalars,
                    element=op.traits.takes_address and i == 0,
                    choices=op.choices.get(i),
                )
                for i, k in enumerate(_kinds(op, n_var, n_opt))
            ]
            c = call(op, *args, ty=ty)
            if isinstance(c.ty, VoidType):
                bld.evaluate(c)
            else:
                bld.bind("r", c)
    return bld.get()


@pytest.mark.parametrize("name", sorted(n for n in OPS if not skipped(n, "roundtrip")))
@settings(max_examples=6, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_roundtrip(name, data):
    op = OPS[name]
    f = roundtrip_kernel(op, data)
    text = tirx.dumps(f)
    assert f"T.{name}(" in text, text
    g = tirx.loads(text)
    tirx.assert_structural_equal(g, f)
    assert tirx.dumps(g) == text


# ----------------------------------------------------------------------------- differential
_F_EDGE = [
    0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 1.0, -1.0, 2.0, 0.1, -3.7, 1e-3, 7.0, 88.5,
    -103.0, 710.0, 1e10, -1e10, 2.0**23, 2.0**24 + 2, 2.0**31, 3e9, 1e19, 2.0**63, 1e30, 3e38, 1e300,
    1.1754944e-38, 1e-40, -1e-40, 1.4e-45, 5e-324, 1e-310, 6e-5, 6e-8, 65504.0, 65520.0, math.pi,
    math.inf, -math.inf, math.nan,
]  # fmt: skip
_F_PAIR = [0.0, -0.0, 0.5, -1.5, 2.5, 1.0, -1.0, 3.0, 1e-40, 1e30, 65504.0, math.inf, -math.inf, math.nan]
_I_EDGE = [0, 1, -1, 2, -2, 3, 7, 31, 32, 33, 100, -100, 127, -128, 255, 32767, -32768, 65535,
           2**31 - 1, -(2**31), 2**32 - 1, 2**63 - 1, -(2**63), 2**64 - 1]  # fmt: skip
#: int32 values for "i" positions (exponents, shuffle lanes, offsets)
_I32_EDGE = [0, 1, -1, 2, 5, 31, 32, 33, -126, 127, 128, -1000, 1000, 2**31 - 1, -(2**31)]
_BLOCK = 128
_N_LIT = 32  # "n" literal positions (a valid alignment, register count, wait depth)


def _float_lanes(dt: str) -> list[np.ndarray]:
    """X0..X3: the edge list in every position (rotated), then every (X0, X1) pair."""
    e = _F_EDGE
    x0 = e + [a for a in _F_PAIR for _ in _F_PAIR]
    x1 = e[::-1] + [b for _ in _F_PAIR for b in _F_PAIR]
    x2 = x1[7:] + x1[:7]
    x3 = x0[5:] + x0[:5]
    return [as_dtype(np.array(v, np.float64), dt) for v in (x0, x1, x2, x3)]


def _int_lanes(dt: str) -> list[np.ndarray]:
    info = np.iinfo(dt)
    vals = sorted({v % (1 << info.bits) for v in _I_EDGE})
    vals = sorted({v - (1 << info.bits) if v > info.max else v for v in vals})
    x0 = vals + [a for a in vals for _ in vals]
    x1 = vals[::-1] + [b for _ in vals for b in vals]
    x2 = x1[3:] + x1[:3]
    x3 = x0[5:] + x0[:5]
    return [np.array(v, dtype=dt) for v in (x0, x1, x2, x3)]


def _pad(x: np.ndarray, n: int) -> np.ndarray:
    return np.resize(x, n)  # repeats the edges into the padding lanes


def _lanes(dt: str | None) -> int:
    k = len(_float_lanes("float32")[0]) if dt in FLOATS or dt is None else len(_int_lanes(dt)[0])
    return -(-k // _BLOCK) * _BLOCK


class Case:
    """One op at one dtype inside a differential kernel: where its arguments come from and
    where its result (and the memory its pointer arguments reach) is stored."""

    def __init__(self, op: Op, dt: str | None):
        self.op = op
        self.dt = dt
        self.kinds = _kinds(op, 0, 0)
        # "i" positions take the dtype under test when nothing else does (popcount), else
        # they are int32 helpers (an exponent, a lane)
        self.int_typed = dt in INTS and not set(self.kinds) & {"x", "f", "p"}

    @property
    def label(self) -> str:
        return f"{self.op.name}[{self.dt}]"


def _elem_dtype(dt: str | None) -> str:
    return dt if dt is not None else "int32"


def _result_ty(op: Op, dt: str | None) -> Any:
    """``ty=`` for a ``"ty"`` result: a bitcast gets the unsigned type of the same width,
    anything else the dtype under test."""
    if not op.needs_ty:
        return None
    e = PrimType(_elem_dtype(dt))
    if op.traits.bitcast:
        return PrimType(f"uint{max(e.bits, 8)}")
    return e


def build_differential(cases: list[Case], dt: str | None, name: str):
    """``O_k[t] = op_k(X0[t], I1[t], ...)`` for every case, one thread per lane, no guard
    (convergent ops see full warps)."""
    n = _lanes(dt)
    edt = _elem_dtype(dt)
    bld = IRBuilder()
    with bld, bld.function(name):
        width = max([4, *(len(c.kinds) for c in cases)])  # one input array per argument position
        X = [bld.param(f"X{j}", TensorType((n,), PrimType(edt))) for j in range(width)]
        I32 = [bld.param(f"I{j}", TensorType((n,), int32)) for j in range(width)]
        B = [bld.param(f"B{j}", TensorType((n,), as_type("bool"))) for j in range(width)]
        ptrs = [
            bld.param(f"P{k}_{j}", TensorType((n,), PrimType(edt)))
            for k, c in enumerate(cases)
            for j, kind in enumerate(c.kinds)
            if kind == "p"
        ]
        with bld.device_entry(*launch_args(n // _BLOCK, _BLOCK)):
            t = bld.bind(
                "t", call(_launch_op("idx", "grid"), "x") * _BLOCK + call(_launch_op("idx", "block"), "x")
            )
            pi = iter(ptrs)
            for k, c in enumerate(cases):
                args = []
                for j, kind in enumerate(c.kinds):
                    element = c.op.traits.takes_address and j == 0
                    if element or kind in ("x", "f") or (kind == "i" and c.int_typed):
                        args.append(X[j][t])
                    elif kind == "i":
                        args.append(I32[j][t])
                    elif kind == "b":
                        args.append(B[j][t])
                    elif kind == "p":
                        args.append(next(pi).ptr_to([t]))
                    elif kind in ("s", "n") and j in c.op.choices:
                        args.append(c.op.choices[j][-1 if kind == "n" else 0])  # "sum", width 32
                    elif kind == "s":
                        args.append("x")
                    elif kind == "n":
                        args.append(_N_LIT)
                e = call(c.op, *args, ty=_result_ty(c.op, dt))
                if isinstance(e.ty, VoidType):
                    bld.evaluate(e)
                elif isinstance(e.ty, PrimType) and e.ty.lanes == 1:
                    bld.param(f"O{k}", TensorType((n,), e.ty))[t] = e
                else:
                    bld.bind(f"r{k}", e)
    return bld.get()


def _launch_op(kind: str, level: str) -> Op:
    """The op whose ``launch`` trait is ``(kind, level)`` (the thread model by trait)."""
    (op,) = [o for o in OPS.values() if o.traits.launch == (kind, level)]
    return op


def kernel_arrays(f: Any, dt: str | None) -> dict[str, np.ndarray]:
    """Fresh arguments for a differential kernel, by parameter name (in parameter order)."""
    n = _lanes(dt)
    edt = _elem_dtype(dt)
    xs = _float_lanes(edt) if edt in FLOATS else _int_lanes(edt)
    xs = [_pad(x, n) for x in xs]
    out = {}
    for _, buf in f.buffer_map:
        nm, bdt = buf.name, str(buf.dtype)
        j = int("".join(ch for ch in nm if ch.isdigit())[:2] or 0) if nm[0] in "XIB" else int(nm[-1])
        if nm.startswith("X"):
            out[nm] = xs[j % len(xs)].copy()
        elif nm.startswith("I"):
            out[nm] = np.roll(_pad(np.array(_I32_EDGE, np.int32), n), j)
        elif nm.startswith("B"):
            out[nm] = (np.arange(n) % (j + 2)) == 0
        elif nm.startswith("P"):
            out[nm] = xs[j % len(xs)].copy()
        else:
            out[nm] = np.zeros(n, np_dtype(bdt))
    return out


def run_interp(f: Any, dt: str | None) -> dict[str, np.ndarray]:
    arrays = kernel_arrays(f, dt)
    tirx.compile(f, target="interp")(*arrays.values())
    return arrays


_ERRORS = (RuntimeError, TypeError, ValueError, NotImplementedError)


def _differential_ops() -> list[Op]:
    """Ops with a CUDA lowering and interpreter semantics."""
    out = []
    for op in OPS.values():
        i = impl("interp", op)
        if impl("cuda", op) is not None and i is not None and not isinstance(i, NoInterp):
            out.append(op)
    return out


DIFF_OPS = [op for op in _differential_ops() if not skipped(op.name, "differential")]
DTYPES: tuple[str | None, ...] = FLOATS + INTS


def _candidates(op: Op) -> tuple[str | None, ...]:
    """The dtypes to try: every float/int type when an argument or the result is typed by
    the dtype under test, every int type when the only typed arguments are integers
    (``popcount``), else one kernel with no dtype."""
    kinds = {k.lstrip("*").rstrip("?") for k in op.args}
    if kinds & {"x", "f", "p"} or op.needs_ty:
        return DTYPES
    return INTS if "i" in kinds else (None,)


@functools.cache
def acceptance(name: str, dt: str | None) -> tuple[str | None, str | None]:
    """(why CUDA codegen refuses, why the interpreter refuses) ``name`` at ``dt`` (None: accepted)."""
    from tirx.codegen.cuda import generate

    op = OPS[name]
    try:
        f = build_differential([Case(op, dt)], dt, "probe")
    except _ERRORS as e:
        return f"build: {e}", f"build: {e}"
    why_c = why_i = None
    try:
        generate(f)
    except _ERRORS as e:
        why_c = str(e).splitlines()[0]
    try:
        run_interp(f, dt)
    except _ERRORS as e:
        why_i = str(e).splitlines()[0]
    return why_c, why_i


@functools.cache
def differential_cases() -> dict[str | None, list[Case]]:
    """Per dtype, the ops both backends accept at that dtype."""
    by_dt: dict[str | None, list[Case]] = {}
    for op in DIFF_OPS:
        for dt in _candidates(op):
            if acceptance(op.name, dt) == (None, None):
                by_dt.setdefault(dt, []).append(Case(op, dt))
    return by_dt


@functools.cache
def differential_kernel(dt: str | None) -> Any:
    return build_differential(differential_cases()[dt], dt, f"ops_{dt or 'plain'}")


def test_backends_accept_the_same_dtypes():
    """One meaning per op: CUDA codegen and the interpreter accept the same dtypes, and
    every op of the differential accepts at least one."""
    disagree = []
    for op in DIFF_OPS:
        for dt in _candidates(op):
            why_c, why_i = acceptance(op.name, dt)
            if (why_c is None) != (why_i is None):
                disagree.append(f"{op.name}[{dt}]: cuda: {why_c or 'ok'}; interp: {why_i or 'ok'}")
    assert not disagree, "\n".join(disagree)
    covered = {c.op.name for cs in differential_cases().values() for c in cs}
    assert covered == {op.name for op in DIFF_OPS}, sorted({op.name for op in DIFF_OPS} - covered)


def _dt_id(dt: str | None) -> str:
    return dt or "plain"


@pytest.mark.parametrize("dt", (*DTYPES, None), ids=_dt_id)
def test_differential_compiles(dt, monkeypatch, tmp_path):
    """CUDA codegen + NVRTC (sm_90a, to a cubin) of each dtype's kernel; no GPU needed."""
    pytest.importorskip("cuda.bindings.nvrtc")
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    k = tirx.compile(differential_kernel(dt), target="cuda -arch=sm_90a", options=EXACT_OPTS, cache=False)
    assert len(k.cubin) > 0


def _ufunc(name: str, nargs: int) -> Any:
    """numpy's ufunc of the op's name with the op's arity, if there is one (the reference)."""
    u = getattr(np, name, None)
    return u if isinstance(u, np.ufunc) and u.nin == nargs and u.nout == 1 else None


def numpy_reference(case: Case, arrays: dict[str, np.ndarray], odt: str) -> np.ndarray | None:
    """The op's numpy ufunc on the kernel's inputs, stored as ``odt``; None when the op has
    no same-named ufunc or the ufunc's result kind differs from the op's."""
    u = _ufunc(case.op.name, len(case.kinds))
    if u is None or any(k not in ("x", "f", "i") for k in case.kinds):
        return None
    dt = case.dt
    ins = [arrays[f"{'I' if k == 'i' and not case.int_typed else 'X'}{j}"] for j, k in enumerate(case.kinds)]
    with np.errstate(all="ignore"):
        if dt in FLOATS:
            # exact ops in the storage precision (float32 for half types, as CUDA computes
            # them); the others from float64, rounded once
            via = (
                "float64"
                if case.op.name in CUDA_ULP_F32
                else ("float32" if dt in ("float16", "bfloat16") else dt)
            )
            vals = [values(x, dt).astype(via) if k != "i" else x for x, k in zip(ins, case.kinds)]
            r = u(*vals)
            if odt == "bool":
                return r.astype(np.bool_) if r.dtype == np.bool_ else None
            if r.dtype.kind != "f":
                return None
            return as_dtype(r.astype(np.float64), odt)
        r = u(*ins)
        return r if r.dtype == np_dtype(odt) else None


def _ref_tolerance(name: str, dt: str) -> int:
    """numpy's float64 function rounded once vs the interpreter's: 1 ulp (2 for float64,
    whose numpy functions are not correctly rounded); exact ops bitwise."""
    if name not in CUDA_ULP_F32:
        return 0
    return 2 if dt == "float64" else 1


def results(f: Any, arrays: dict[str, np.ndarray], cases: list[Case]) -> list[tuple[Case, str, str]]:
    """(case, array name, its dtype) of every array a case writes: its output and the
    memory behind its pointer arguments."""
    bufs = {b.name: str(b.dtype) for _, b in f.buffer_map}
    out = []
    for k, c in enumerate(cases):
        for nm in (f"O{k}", *(f"P{k}_{j}" for j in range(len(c.kinds)))):
            if nm in bufs:
                out.append((c, nm, bufs[nm]))
    return out


def report(rows: list[tuple], title: str) -> str:
    lines = [
        f"{len(rows)} mismatch(es) {title}:",
        "op[dtype] | array | lane | inputs | expected | got | ulps",
    ]
    lines += [" | ".join(str(c) for c in r) for r in rows[:200]]
    return "\n".join(lines)


def mismatches(cases, f, arrays, want_of, tol_of, dt) -> list[tuple]:
    rows = []
    for c, nm, odt in results(f, arrays, cases):
        want = want_of(c, nm, odt)
        if want is None:
            continue
        got = arrays[nm]
        for k, d in compare(odt, want, got, tol_of(c, odt)):
            ins = ", ".join(fmt(arrays[f"X{j}"], k, _elem_dtype(dt)) for j in range(len(c.kinds)))
            rows.append((c.label, nm, k, ins, fmt(want, k, odt), fmt(got, k, odt), d))
    return rows


@pytest.mark.parametrize("dt", (*DTYPES, None), ids=_dt_id)
def test_differential_interp_vs_numpy(dt):
    """Each dtype's kernel runs on the interpreter (``tirx.compile(f, target="interp")``);
    every op with a same-named numpy ufunc agrees with it on the edge inputs."""
    cases = differential_cases()[dt]
    f = differential_kernel(dt)
    arrays = run_interp(f, dt)
    fresh = kernel_arrays(f, dt)

    def want(c, nm, odt):
        return numpy_reference(c, fresh, odt) if nm.startswith("O") else None

    rows = mismatches(cases, f, arrays, want, lambda c, odt: _ref_tolerance(c.op.name, odt), dt)
    assert not rows, report(rows, f"interpreter (got) vs numpy (expected), {dt}")
    checked = [c.op.name for c in cases if _ufunc(c.op.name, len(c.kinds)) is not None]
    if dt in ("float32", "float64"):
        assert len(checked) >= 10, checked  # the reference really runs


def _launch_dims(dt: str | None) -> dict[str, tuple[int, int]]:
    """The launch of every differential kernel, as ``Traits.value_range`` reads it."""
    g = _lanes(dt) // _BLOCK
    dims = {"grid.x": (g, g), "block.x": (_BLOCK, _BLOCK), "cluster.size": (1, 1)}
    for ax in "yz":
        dims["grid." + ax] = dims["block." + ax] = (1, 1)
    for ax in "xyz":
        dims["cluster." + ax] = (1, 1)
    return dims


@pytest.mark.parametrize("dt", (*DTYPES, None), ids=_dt_id)
def test_declared_ranges_hold(dt):
    """What the interpreter computes stays inside each op's declared ``range`` and
    ``nonneg`` traits (which bounds analysis and codegen rely on)."""
    cases = differential_cases()[dt]
    f = differential_kernel(dt)
    arrays = run_interp(f, dt)
    dims = _launch_dims(dt)
    bad, checked = [], 0
    for c, nm, odt in results(f, arrays, cases):
        tr = c.op.traits
        if not nm.startswith("O") or not (tr.range is not None or tr.nonneg) or odt not in INTS:
            continue
        axis = "x" if "s" in c.kinds else None
        lo, hi = tr.value_range(axis, dims.get) or (0 if tr.nonneg else None, None)
        got = arrays[nm].astype(np.int64)
        checked += 1
        if (lo is not None and got.min() < lo) or (hi is not None and got.max() > hi):
            bad.append(f"{c.label}: values {got.min()}..{got.max()}, declared {lo}..{hi}")
    assert not bad, "\n".join(bad)
    if dt is None:
        assert checked >= 8, checked  # the thread-model ops really are checked
