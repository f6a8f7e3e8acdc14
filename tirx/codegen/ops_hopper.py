"""CUDA handlers for Hopper (sm_90a) ops that need more than a PTX template.

``T.ptx.wgmma_mma_async(shape, dtype, T.address_of(acc[0]), desc_a, desc_b, scale_d)``
emits one warpgroup ``wgmma.mma_async.sync.aligned.<shape>.f32.<dtype>.<dtype>`` whose
accumulator registers are the ``N/2`` consecutive float32 elements of the local array
``acc`` starting at the given element (``"+f"`` operands: the array stays in registers
when every other access to it uses constant indices). ``desc_a`` / ``desc_b`` are 64-bit
shared-memory matrix descriptors, ``scale_d`` 0 overwrites the accumulators, 1 adds.

The other Hopper ops (TMA loads/stores, tensor-map prefetch, mbarrier by 32-bit address)
are template ops declared in ``tirx/ir/ops_builtin.py``; ``docs/hopper.md`` lists them.
"""

from __future__ import annotations

import re

from ..ir import BufferLoad, Call, IntImm, PrimType, StringImm
from ..ir.op import register_handler
from .cuda import CodeGenCUDA, _add, _error

__all__: list[str] = []

_SHAPE = re.compile(r"m64n(\d+)k16")
_DTYPES = {"f16": "f16", "float16": "f16", "bf16": "bf16", "bfloat16": "bf16"}


@register_handler("cuda", "ptx.wgmma_mma_async")
def _wgmma(cg: CodeGenCUDA, c: Call) -> str:
    shape, dt, accp, da, db, scale = c.args
    if not isinstance(shape, StringImm) or not _SHAPE.fullmatch(shape.value):
        raise _error("T.ptx.wgmma_mma_async: shape must be a string like 'm64n256k16'", c)
    n = int(_SHAPE.fullmatch(shape.value).group(1))
    if n % 8 or not 8 <= n <= 256:
        raise _error(f"T.ptx.wgmma_mma_async: N={n} must be a multiple of 8 in 8..256", c)
    if not isinstance(dt, StringImm) or dt.value not in _DTYPES:
        raise _error("T.ptx.wgmma_mma_async: dtype must be 'f16' or 'bf16'", c)
    ab = _DTYPES[dt.value]
    if not (isinstance(accp, Call) and accp.op.name == "address_of" and isinstance(accp.args[0], BufferLoad)):
        raise _error("T.ptx.wgmma_mma_async: the accumulator is T.address_of(acc[i]) of a local array", c)
    el = accp.args[0]
    buf = el.buffer
    if buf.dtype != PrimType("float32") or buf.scope != "local":
        raise _error("T.ptx.wgmma_mma_async: the accumulator must be a local float32 array", c)
    base = cg.flat_index(buf, el.indices, c)
    nacc = n // 2
    accs = []
    for i in range(nacc):
        idx = _add(base, IntImm(i, base.ty)) if i else base
        accs.append(f"{cg.ptr_of(buf)}[{cg.expr(idx)}]")
    regs = ", ".join(f"%{i}" for i in range(nacc))
    text = (
        "{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %"
        + str(nacc + 2)
        + ", 0;\\n\\t"
        + f"wgmma.mma_async.sync.aligned.{shape.value}.f32.{ab}.{ab} "
        + "{"
        + regs
        + "}, %"
        + str(nacc)
        + ", %"
        + str(nacc + 1)
        + ", p, 1, 1, 0, 0;\\n\\t}"
    )
    outs = ", ".join(f'"+f"({a})' for a in accs)
    ins = f'"l"((uint64_t)({cg.expr(da)})), "l"((uint64_t)({cg.expr(db)})), "r"((int)({cg.expr(scale)}))'
    return f'asm volatile("{text}" : {outs} : {ins} : "memory")'
