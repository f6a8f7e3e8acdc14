"""How to run TIRx's recorded CUDA of a frontend golden case beside tirx's kernel (no GPU here).

A case is runnable when TIRx's CUDA has one ``__global__`` kernel whose parameters are the
case's tensors (``X_ptr``) and scalars (by name), in some order, and tirx's kernel has a
constant launch configuration. :func:`plan` returns what the GPU test needs, or why not.
"""

from __future__ import annotations

import math
import re
from typing import Any

import attrs

_KERNEL = re.compile(r'extern "C" __global__ void (?:__launch_bounds__\([^)]*\) )?(\w+)\(([^)]*)\)\s*\{')
_PARAM = re.compile(r"^(?:const )?(?P<type>[\w: ]+?)\s*(?P<ptr>\*)?\s*(?:__restrict__\s*)?(?P<name>\w+)$")

#: dtypes the GPU comparison draws inputs for (others: the case is not run)
DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64",
)  # fmt: skip

#: C scalar types of TIRx's kernel parameters -> ctypes names
CTYPES = {
    "int": "c_int32", "unsigned": "c_uint32", "uint": "c_uint32", "int64_t": "c_int64",
    "long long": "c_int64", "uint64_t": "c_uint64", "float": "c_float", "double": "c_double",
    "bool": "c_bool", "short": "c_int16", "signed char": "c_int8", "char": "c_int8",
    "uchar": "c_uint8", "unsigned char": "c_uint8", "ushort": "c_uint16",
}  # fmt: skip


@attrs.define
class Plan:
    kernel: str  # TIRx's kernel symbol
    #: per TIRx kernel parameter: ("buffer", tirx param index) | ("scalar", index, ctypes name) |
    #: ("tensormap", name): a descriptor the host code encodes (tirx's host program computes it)
    order: list
    grid: tuple
    block: tuple
    smem: int
    host: Any = None  # args -> {name: value} of the host values (tirx's HostProgram.host_values)


def plan(case_fn: Any, cuda: str, compiled: Any) -> Plan | str:
    """A :class:`Plan` for TIRx's ``cuda`` of ``case_fn`` (tirx's kernel ``compiled``), or why not."""
    from tirx.ir import PointerType
    from tirx.runtime.kernel import _int_literal

    kernels = _KERNEL.findall(cuda)
    if len(kernels) != 1:
        return f"TIRx's CUDA has {len(kernels)} kernels"
    name, params = kernels[0]
    ks = list(compiled.kernels.values()) if hasattr(compiled, "kernels") else [compiled]
    # a function whose host code launches several kernels (tirx.runtime.kernel.HostFunction)
    ks = [x for k in ks for x in (k.kernels.values() if hasattr(k, "kernels") else [k])]
    if len(ks) != 1:
        return f"tirx made {len(ks)} kernels"
    k = ks[0]
    f = case_fn
    bufs = dict(f.buffer_map)
    by_name: dict[str, tuple] = {}
    for i, p in enumerate(f.params):
        b = bufs.get(p)
        if b is not None:
            if b.dtype.name not in DTYPES or b.strides or not all(hasattr(d, "value") for d in b.shape):
                return f"tensor {b.name}: {b.dtype.name} / symbolic shape / strides not drawn"
            by_name[f"{b.name}_ptr"] = ("buffer", i)
        elif isinstance(p.ty, PointerType):
            return f"pointer parameter {p.name}"
        else:
            by_name[p.name] = ("scalar", i)
    from tirx.ir.types import tensormap_ptr

    for v, _src in getattr(k.info, "outer", ()):  # descriptors the host encodes, by name
        if v.ty == tensormap_ptr:
            by_name[v.name] = ("tensormap", v.name)
    order = []
    for raw in filter(None, (x.strip() for x in params.split(","))):
        m = _PARAM.match(raw)
        if m is None or m.group("name") not in by_name:
            return f"TIRx kernel parameter {raw!r} is not a tensor or scalar of the case"
        kind, i = by_name[m.group("name")]
        if kind == "tensormap":
            if m.group("ptr") or not m.group("type").strip().endswith("CUtensorMap"):
                return f"TIRx kernel parameter {raw!r}: a descriptor not passed as a CUtensorMap"
            order.append(("tensormap", i))
            continue
        if kind == "buffer":
            if not m.group("ptr"):
                return f"TIRx kernel parameter {raw!r}: a tensor not passed as a pointer"
            order.append(("buffer", i))
        else:
            ct = CTYPES.get(m.group("type").strip())
            if ct is None or m.group("ptr"):
                return f"TIRx kernel parameter {raw!r}: C type not handled"
            order.append(("scalar", i, ct))
    dims = [_int_literal(c) for c in (*k.grid_code, *k.block_code, k.smem_code)]
    if None in dims:
        return "tirx's launch configuration is not constant"
    if k.cluster_code is not None or k.option_codes or k.cooperative:
        return "cluster / launch-option kernel"
    host = None
    if any(item[0] == "tensormap" for item in order):
        if not hasattr(compiled, "host_values"):
            return "a descriptor parameter without a host program"

        def host(args: list) -> dict:
            return compiled.host_values(*args)[0][1]

    return Plan(name, order, tuple(dims[:3]), tuple(dims[3:6]), dims[6], host)


#: the value given to every dynamic dimension (a multiple of the usual tile sizes, small)
SYMBOL_VALUE = 128
#: the most elements the drawn tensors hold together when scalar symbols may shrink them
MAX_ELEMENTS = 1 << 20


def random_inputs(f: Any, seed: int, torch: Any) -> list:
    """Fresh inputs for ``f``'s parameters: random tensors on the GPU, fixed scalars. A dynamic
    dimension (``n`` of ``T.Tensor((n,), ...)``) is ``SYMBOL_VALUE``, and so is a scalar
    parameter that names one; a dimension that is an expression of them is its value. A scalar
    integer parameter a tensor's shape names (``B`` of ``T.Tensor((B, H, D), ...)``, the LLM
    kernels' style) is a symbol too, halved from ``SYMBOL_VALUE`` down to 16 while the tensors
    would hold more than ``MAX_ELEMENTS`` elements together (the interpreter runs them)."""
    import numpy as np

    from tirx.ir.fold import fold
    from tirx.ir.visitor import Mutator, collect_vars

    g = np.random.default_rng(seed)
    bufs = dict(f.buffer_map)
    syms = set(f.dyn_vars()) if hasattr(f, "dyn_vars") else set()
    from tirx.ir import IntImm, const

    named = {v for b in bufs.values() for d in b.shape for v in collect_vars(d)}
    scalars = {
        p
        for p in f.params
        if p not in bufs and p in named and getattr(p.ty, "is_int", False) and p not in syms
    }
    value = {v: SYMBOL_VALUE for v in syms}

    class _Sub(Mutator):
        def visit_Var(self, v: Any) -> Any:
            return const(value[v], v.ty) if v in value else v

    def dim(d: Any) -> int:
        if isinstance(d, IntImm):
            return int(d.value)
        v = fold(_Sub().visit(d))
        if not isinstance(v, IntImm):
            raise ValueError(f"dimension {d} is not a constant once its symbols are {SYMBOL_VALUE}")
        return int(v.value)

    x = SYMBOL_VALUE
    while True:
        value.update({v: x for v in scalars})
        total = sum(math.prod(dim(d) for d in b.shape) for b in bufs.values())
        if not scalars or total <= MAX_ELEMENTS or x <= 16:
            break
        x //= 2

    out: list = []
    for p in f.params:
        b = bufs.get(p)
        if b is None:
            t = p.ty
            if not hasattr(t, "is_bool"):  # a parameter specialized away (T.void): None
                out.append(None)
                continue
            out.append(True if t.is_bool else value.get(p, 3) if t.is_int else 1.5)
            continue
        shape = tuple(dim(d) for d in b.shape)
        dt = b.dtype.name
        if dt == "bool":
            x = torch.from_numpy(g.integers(0, 2, shape).astype(np.bool_))
        elif dt.startswith(("int", "uint")):
            x = torch.from_numpy(g.integers(0, 100, shape).astype(dt))
        else:
            x = torch.from_numpy(g.standard_normal(shape).astype(np.float32)).to(getattr(torch, dt))
        out.append(x.cuda())
    return out


def bits(x: Any, torch: Any) -> Any:
    """A tensor's elements as integers of its width (NaNs made one pattern)."""
    if x.dtype.is_floating_point:
        x = torch.where(torch.isnan(x), torch.full_like(x, float("nan")), x)
    w = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
    return x.contiguous().view(w).cpu().numpy()


def launch_tirx_cuda(p: Plan, cuda: str, args: list, name: str) -> None:
    """Compile TIRx's ``cuda`` with NVRTC for this GPU and launch its kernel as ``p`` says on
    ``args`` (torch tensors and scalars in tirx's parameter order); the caller waits for it."""
    import ctypes

    from tirx_golden_cuda_util import cccl_include, nvrtc_source

    from tirx.runtime import driver as drv
    from tirx.runtime.nvrtc import compile_source

    res = compile_source(nvrtc_source(cuda), drv.device_arch(0), name=name, options=(f"-I{cccl_include()}",))
    _mod, fn = drv.load_function(res.cubin, p.kernel, 0)
    if p.smem > 48 * 1024 - drv.func_attribute(fn, "CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES"):
        drv.set_max_dynamic_smem(fn, p.smem)  # a window past 48 KiB (with the static arrays) opts in
    host = p.host(args) if p.host is not None else {}
    # each parameter's value in its own buffer, kernelParams an array of their addresses (the
    # driver reads the sizes from the kernel: a CUtensorMap is 128 bytes by value)
    objs: list = []
    for item in p.order:
        if item[0] == "buffer":
            objs.append(ctypes.c_void_p(args[item[1]].data_ptr()))
        elif item[0] == "tensormap":
            objs.append((ctypes.c_char * 128).from_buffer_copy(bytes(host[item[1]])))
        else:
            objs.append(getattr(ctypes, item[2])(args[item[1]]))
    ptrs = (ctypes.c_void_p * max(len(objs), 1))(*[ctypes.addressof(o) for o in objs])
    drv.check(
        drv.driver().cuLaunchKernel(fn, *p.grid, *p.block, p.smem, 0, ctypes.addressof(ptrs), 0),
        "cuLaunchKernel",
    )
