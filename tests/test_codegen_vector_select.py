"""Vector comparisons, selects with a vector condition, vector logic and vector casts: the CUDA
compiles through NVRTC (no GPU needed) for every vector dtype, the two-lane half types
(half2 / __nv_bfloat162) included, and the interpreter computes them lane by lane as numpy
does. (TIRx compiles all of these; tirx's CUDA used to refuse `v > z` on int32x4 and a
float16x2 -> float32x2 cast.)"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hopper_util import needs_nvrtc, no_disk_cache  # noqa: F401 - no_disk_cache is autouse

import tirx

ARCH = "cuda -arch=sm_90a"
OPS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
CMP_DTYPES = [
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "float8_e4m3fn",
    "bool",
]
CAST_DTYPES = [
    "int8",
    "int32",
    "int64",
    "uint8",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "float8_e4m3fn",
    "bool",
]
N = 64


def _cmp_kernel(dt: str, lanes: int) -> str:
    """One kernel per dtype and width: for each comparison, C = select(a op b, a, b) and
    D = int32(a op b); then the vector logic of two comparisons."""
    r = f"T.Ramp(t * {lanes}, 1, {lanes})"
    outs = ", ".join(f'C_{o}: T.Tensor(({N},), "{dt}"), D_{o}: T.Tensor(({N},), "int32")' for o in OPS)
    body = [
        f"    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block={N // lanes}))",
        '    t = T.cuda.thread_idx("x")',
        f"    a = A[{r}]",
        f"    b = B[{r}]",
    ]
    for o, op in OPS.items():
        body.append(f"    C_{o}[{r}] = T.Select(a {op} b, a, b)")
        body.append(f'    D_{o}[{r}] = T.Cast("int32x{lanes}", a {op} b)')
    body.append(f'    L[{r}] = T.Cast("int32x{lanes}", T.Not(T.And(a < b, T.Or(a == b, a != b))))')
    return (
        f'@T.function\ndef cmp_{dt}_x{lanes}(A: T.Tensor(({N},), "{dt}"), B: T.Tensor(({N},), "{dt}"), '
        f'{outs}, L: T.Tensor(({N},), "int32")):\n' + "\n".join(body) + "\n"
    )


def _cast_kernel(fr: str, lanes: int) -> str:
    """One kernel per source dtype and width: A cast to every other dtype of CAST_DTYPES."""
    tos = [t for t in CAST_DTYPES if t != fr]
    r = f"T.Ramp(t * {lanes}, 1, {lanes})"
    outs = ", ".join(f'O_{t}: T.Tensor(({N},), "{t}")' for t in tos)
    body = [
        f"    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block={N // lanes}))",
        '    t = T.cuda.thread_idx("x")',
    ]
    body += [f'    O_{t}[{r}] = T.Cast("{t}x{lanes}", A[{r}])' for t in tos]
    return (
        f'@T.function\ndef cast_{fr}_x{lanes}(A: T.Tensor(({N},), "{fr}"), {outs}):\n'
        + "\n".join(body)
        + "\n"
    )


CMP_CASES = [(dt, n) for dt in CMP_DTYPES for n in (2, 4)]
CAST_CASES = [(dt, 2) for dt in CAST_DTYPES] + [(dt, 4) for dt in ("float16", "bfloat16", "int32")]


def _load_kernels() -> object:
    src = ["from tirx.script import tirx as T", ""]
    src += [_cmp_kernel(dt, n) for dt, n in CMP_CASES]
    src += [_cast_kernel(dt, n) for dt, n in CAST_CASES]
    src += [
        "@T.function",
        'def scalar_cond(A: T.Tensor((64,), "float16"), B: T.Tensor((64,), "float16"), k: T.int32):',
        "    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))",
        '    t = T.cuda.thread_idx("x")',
        "    a = A[T.Ramp(t * 2, 1, 2)]",
        "    B[T.Ramp(t * 2, 1, 2)] = T.Select(k > 0, a, T.max(a, T.Broadcast(T.float16(0), 2)))",
        "",
    ]
    d = Path(tempfile.mkdtemp(prefix="tirx_vec_select_"))
    path = d / "vec_select_kernels.py"
    path.write_text("\n".join(src))
    spec = importlib.util.spec_from_file_location("vec_select_kernels", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["vec_select_kernels"] = mod
    spec.loader.exec_module(mod)
    return mod


K = _load_kernels()


def _clean(k) -> str:
    assert len(k.cubin) > 0
    assert k.module.log == "", k.module.log
    return k.source


@needs_nvrtc
@pytest.mark.parametrize("dt,lanes", CMP_CASES, ids=[f"{d}x{n}" for d, n in CMP_CASES])
def test_vector_compare_select_compiles(dt, lanes):
    src = _clean(tirx.compile(getattr(K, f"cmp_{dt}_x{lanes}"), target=ARCH, cache=False))
    assert "tirx_vselect(" in src and "tirx_vgt<" in src and "tirx_vand(" in src
    if (dt, lanes) in (("float16", 2), ("bfloat16", 2)):
        assert "tirx_unpack(" in src and "tirx_pack(" in src  # lane by lane, not half2's all-lanes ops


@needs_nvrtc
@pytest.mark.parametrize("dt,lanes", CAST_CASES, ids=[f"{d}x{n}" for d, n in CAST_CASES])
def test_vector_cast_compiles(dt, lanes):
    _clean(tirx.compile(getattr(K, f"cast_{dt}_x{lanes}"), target=ARCH, cache=False))


@needs_nvrtc
def test_repro_int32x4_select_and_half2_cast():
    src = _clean(tirx.compile(K.cmp_int32_x4, target=ARCH, cache=False))
    assert "tirx_vselect(tirx_vgt<int>(" in src
    src = _clean(tirx.compile(K.cast_float16_x2, target=ARCH, cache=False))
    assert "tirx_vcast<float>(tirx_unpack(" in src
    src = _clean(tirx.compile(K.scalar_cond, target=ARCH, cache=False))
    assert "tirx_pack(tirx_vmax(tirx_unpack(" in src


# -- the interpreter against numpy --------------------------------------------------------
def _bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 values exactly representable in bfloat16, as its uint16 bit patterns."""
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _bf16_values(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _inputs(dt: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Arrays handed to the kernel and the values numpy compares (equal lanes included; NaN
    for the float types)."""
    if dt == "bool":
        a, b = rng.integers(0, 2, N).astype(bool), rng.integers(0, 2, N).astype(bool)
        return a, b, a, b
    if dt in ("float16", "float32", "float64", "bfloat16"):
        a = rng.integers(-8, 8, N).astype(np.float32) / 2
        b = rng.integers(-8, 8, N).astype(np.float32) / 2
        a[::7] = np.nan
        b[3::11] = np.nan
        if dt == "bfloat16":
            return _bf16_bits(a), _bf16_bits(b), a, b
        return a.astype(dt), b.astype(dt), a.astype(dt), b.astype(dt)
    info = np.iinfo(dt)
    a = rng.integers(info.min, info.max, N, dtype=dt, endpoint=True)
    b = rng.integers(info.min, info.max, N, dtype=dt, endpoint=True)
    b[::3] = a[::3]
    return a, b, a, b


NUMPY_CMP = [c for c in CMP_CASES if c[0] != "float8_e4m3fn"]
NP_OPS = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal}
NP_OPS["ne"] = np.not_equal


@pytest.mark.parametrize("dt,lanes", NUMPY_CMP, ids=[f"{d}x{n}" for d, n in NUMPY_CMP])
def test_interp_compare_select_matches_numpy(dt, lanes):
    rng = np.random.default_rng(lanes * 100 + CMP_DTYPES.index(dt))
    a, b, av, bv = _inputs(dt, rng)
    k = tirx.compile(getattr(K, f"cmp_{dt}_x{lanes}"), target="interp")
    outs = {}
    args = [a, b]
    for o in OPS:
        outs["C_" + o] = np.zeros_like(a)
        outs["D_" + o] = np.full(N, -1, np.int32)
        args += [outs["C_" + o], outs["D_" + o]]
    logic = np.full(N, -1, np.int32)
    k(*args, logic)
    for o, fn in NP_OPS.items():
        m = fn(av, bv)
        np.testing.assert_array_equal(outs["D_" + o], m.astype(np.int32), err_msg=o)
        np.testing.assert_array_equal(outs["C_" + o], np.where(m, a, b), err_msg=o)
    want = ~(np.less(av, bv) & (np.equal(av, bv) | np.not_equal(av, bv)))
    np.testing.assert_array_equal(logic, want.astype(np.int32))


def test_interp_half2_cast_matches_numpy():
    rng = np.random.default_rng(7)
    x = (rng.integers(-120, 120, N) / 4).astype(np.float16)  # exact in bfloat16 too
    x[5] = np.nan
    k = tirx.compile(K.cast_float16_x2, target="interp")
    outs = {
        t: np.zeros(N, np.uint16 if t == "bfloat16" else np.dtype(t))
        for t in CAST_DTYPES
        if t not in ("float16", "float8_e4m3fn")
    }
    outs["float8_e4m3fn"] = np.zeros(N, np.uint8)
    args = [outs[t] for t in CAST_DTYPES if t != "float16"]
    k(x, *args)
    np.testing.assert_array_equal(outs["float32"], x.astype(np.float32))
    np.testing.assert_array_equal(outs["float64"], x.astype(np.float64))
    np.testing.assert_array_equal(outs["bool"], x != 0)
    np.testing.assert_array_equal(
        _bf16_values(outs["bfloat16"])[np.isfinite(x)], x.astype(np.float32)[np.isfinite(x)]
    )
    fin = np.isfinite(x)
    np.testing.assert_array_equal(outs["int32"][fin], np.trunc(x[fin]).astype(np.int32))
    assert outs["int32"][5] == 0  # NaN -> 0, as the IR defines it
    np.testing.assert_array_equal(outs["int8"][fin], np.clip(np.trunc(x[fin]), -128, 127).astype(np.int8))
