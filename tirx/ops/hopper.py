"""Hopper (sm_90a) ops: TMA tile copies, tensor-map prefetch and warpgroup MMA (wgmma).

TMA copies address shared memory by 32-bit shared-window addresses
(``T.cuda.cvta_generic_to_shared``), so kernels can align their tiles at run time.

``T.ptx.wgmma_mma_async(shape, dtype, T.address_of(acc[0]), desc_a, desc_b, scale_d)``
emits one warpgroup ``wgmma.mma_async.sync.aligned.<shape>.f32.<dtype>.<dtype>`` (f16/bf16
with k16; e4m3/e5m2 with k32, which PTX allows only K-major: no transpose immediates) whose
accumulator registers are the ``N/2`` consecutive float32 elements of the local array
``acc`` starting at the given element (``"+f"`` operands: the array stays in registers
when every other access to it uses constant indices). ``desc_a`` / ``desc_b`` are 64-bit
shared-memory matrix descriptors, ``scale_d`` 0 overwrites the accumulators, 1 adds.
``T.ptx.wgmma_mma_async_rs`` is the register-A form (f16/bf16, k16): A is four consecutive
uint32 elements of a local array, B a descriptor, K-major or (``trans_b=1``) N-major.
None of these has a CPU model (docs/hopper.md).
"""

from __future__ import annotations

import re
from typing import Any

from ..ir.expr import BufferLoad, Call, IntImm, StringImm
from ..ir.op import Helper, NoInterp, declare, find
from ..ir.types import PointerType, PrimType, void
from .ptx_rows import chain_alias
from .ptx_table import Operand, Row, Slot, declare_opcode, slots

__all__: list[str] = []


# T.ptx.wgmma.fence.sync.aligned() ... : the wgmma opcode of the PTX instruction table
# (tirx/ops/ptx_table.py); its printed form is TIRx's, T.ptx.wgmma("fence", "sync", "aligned", "")
_SYNC_ALIGNED = (Slot("sync", ("sync",)), Slot("aligned", ("aligned",)))
_WG_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "b1": 1}


def _wg_d(mods: dict) -> int:
    """A thread's accumulator registers: 64 x N over 128 threads, f16 packed two a register."""
    n = int(mods["shape"].split("n")[1].split("k")[0])
    return n // 4 if mods["dtype"] == "f16" else n // 2


def _wg_a(mods: dict) -> int:
    """A thread's A-fragment registers (the register-A forms): 64 x K over 128 threads."""
    k = int(mods["shape"].split("k")[1])
    return max(1, 64 * k // 128 * _WG_BITS[mods["atype"]] // 32)


def _wg_shapes(k: int, ns: Any = range(8, 257, 8)) -> str:
    return "|".join(f"m64n{n}k{k}" for n in ns)


def _wg_row(name: str, spec: str, a: str, extra: str) -> Row:
    """A ``wgmma.mma_async`` form, TIRx's table's: d, then A (a descriptor or registers), the B
    descriptor, the ``scale_d`` predicate and the form's immediates."""
    ops = (Operand("d", "inout", lanes=_wg_d),
           Operand("a_desc", "reg", ty="b64") if a == "ss" else Operand("a", "reg", ty="b32", lanes=_wg_a),
           Operand("b_desc", "reg", ty="b64"), Operand("scale_d", "reg", ty="pred"),
           *(Operand(x, "imm") for x in extra.split()))  # fmt: skip
    return Row(name, slots("action=mma_async sync=sync aligned=aligned " + spec), ops)


_WG_INT_N = (8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224)
_WG_FORMS = [
    ("f16", f"shape={_wg_shapes(16)} dtype=f32 atype=f16 btype=f16", "scale_a scale_b trans_a trans_b"),
    ("f16_f16acc", f"shape={_wg_shapes(16)} dtype=f16 atype=f16 btype=f16", "scale_a scale_b trans_a trans_b"),
    ("bf16", f"shape={_wg_shapes(16)} dtype=f32 atype=bf16 btype=bf16", "scale_a scale_b trans_a trans_b"),
    ("tf32", f"shape={_wg_shapes(8)} dtype=f32 atype=tf32 btype=tf32", "scale_a scale_b"),
    ("fp8", f"shape={_wg_shapes(32)} dtype=f32 atype=e4m3|e5m2 btype=e4m3|e5m2", "scale_a scale_b"),
    ("fp8_f16acc", f"shape={_wg_shapes(32)} dtype=f16 atype=e4m3|e5m2 btype=e4m3|e5m2", "scale_a scale_b"),
    ("int", f"shape={_wg_shapes(32, _WG_INT_N)} satfinite?=satfinite dtype=s32 atype=s8|u8 btype=s8|u8", ""),
    ("b1", f"shape={_wg_shapes(256, (*_WG_INT_N, 240, 256))} dtype=s32 atype=b1 btype=b1 bitop=and popc=popc", ""),
]

WGMMA = declare_opcode("wgmma", [
    Row("wgmma_fence", (Slot("action", ("fence",)), *_SYNC_ALIGNED)),
    Row("wgmma_commit_group", (Slot("action", ("commit_group",)), *_SYNC_ALIGNED)),
    Row("wgmma_wait_group", (Slot("action", ("wait_group",)), *_SYNC_ALIGNED), (Operand("n", "imm"),)),
    *(_wg_row(f"wgmma_{n}_{a}", spec, a, extra if a == "ss" else extra.replace(" trans_a", ""))
      for n, spec, extra in _WG_FORMS for a in ("ss", "rs")),
], doc="warpgroup MMA: wgmma.mma_async (descriptor or register A; TIRx's table's forms), "
       "wgmma.fence / commit_group / wait_group N (.sync.aligned)")  # fmt: skip

# the named forms kernels used before the table are aliases of its rows
chain_alias("ptx.wgmma_fence", WGMMA, ("fence", "sync", "aligned"), "wgmma.fence")
chain_alias("ptx.wgmma_commit_group", WGMMA, ("commit_group", "sync", "aligned"), "wgmma.commit_group")
chain_alias("ptx.wgmma_wait_group", WGMMA, ("wait_group", "sync", "aligned"), "wgmma.wait_group N")
# T.ptx.tma_load_2d / tma_load_2d_multicast / tma_load_3d / tma_store_2d: aliases of the TMA rows
# of the cp opcode (tirx/ops/ptx_rows.py)
# T.ptx.tma_store_commit / tma_store_wait / prefetch_tensormap: aliases of cp and prefetch rows
# (tirx/ops/ptx_rows.py)


# --------------------------------------------------------------------------- wgmma.mma_async
_SHAPE = re.compile(r"m64n(\d+)k(16|32)")
_DTYPES = {"f16": "f16", "float16": "f16", "bf16": "bf16", "bfloat16": "bf16",
           "e4m3": "e4m3", "float8_e4m3fn": "e4m3", "e5m2": "e5m2", "float8_e5m2": "e5m2"}  # fmt: skip
_K = {"f16": 16, "bf16": 16, "e4m3": 32, "e5m2": 32}  # the k of one wgmma: 32 bytes of K per row


def _shape(cg: Any, c: Any, shape: Any, pat: re.Pattern, example: str) -> tuple[int, ...]:
    """The numbers of a wgmma shape string (N first), N checked to be a multiple of 8 in 8..256."""
    name = f"T.{c.op.name}"
    m = pat.fullmatch(shape.value) if isinstance(shape, StringImm) else None
    if m is None:
        raise cg.error(f"{name}: shape must be a string like {example!r}", c)
    nums = tuple(int(g) for g in m.groups())
    if nums[0] % 8 or not 8 <= nums[0] <= 256:
        raise cg.error(f"{name}: N={nums[0]} must be a multiple of 8 in 8..256", c)
    return nums


def _c_wgmma(cg: Any, c: Any) -> str:
    name = f"T.{c.op.name}"
    shape, dt, accp, da, db, scale = c.args
    n, k = _shape(cg, c, shape, _SHAPE, "m64n256k16' (k32 for fp8")
    if not isinstance(dt, StringImm) or dt.value not in _DTYPES:
        raise cg.error(f"{name}: dtype must be 'f16', 'bf16', 'e4m3' or 'e5m2'", c)
    ab = _DTYPES[dt.value]
    if k != _K[ab]:
        raise cg.error(f"{name}: {ab} inputs take shape k{_K[ab]}, got {shape.value}", c)
    nacc = n // 2
    accs = _local_regs(cg, c, accp, "float32", nacc, "accumulator")
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
        # imm-scale-a/b 1; f16/bf16 also take imm-trans-a/b 0 (K-major); fp8 is K-major only
        + (", p, 1, 1, 0, 0;" if k == 16 else ", p, 1, 1;")
        + "\\n\\t}"
    )
    outs = ", ".join(f'"+f"({a})' for a in accs)
    ins = f'"l"((uint64_t)({cg.expr(da)})), "l"((uint64_t)({cg.expr(db)})), "r"((int)({cg.expr(scale)}))'
    return f'asm volatile("{text}" : {outs} : {ins} : "memory")'


declare(
    "ptx.wgmma_mma_async", "s s p i i i", void, pure=False, device_only=True,
    doc="wgmma.mma_async (shape e.g. 'm64n256k16', input dtype 'f16'|'bf16' (k16) or 'e4m3'|'e5m2' (k32), "
    "&acc[0] of a local float32 accumulator array, smem descriptor A, smem descriptor B, scale-d 0/1); "
    "fp32 accumulate",
    cuda=_c_wgmma,
)  # fmt: skip


# --------------------------------------------------------------------------- wgmma.mma_async, A in registers
_RS_SHAPE = re.compile(r"m64n(\d+)k16")


def _local_regs(cg: Any, c: Any, ptr: Any, dtype: str, count: int, what: str) -> list[str]:
    """The C lvalues of ``count`` consecutive elements of a local ``dtype`` array from
    ``T.address_of(arr[i])`` (register operands of one inline-asm statement)."""
    name = f"T.{c.op.name}"
    if not (
        isinstance(ptr, Call)
        and getattr(ptr.op, "traits", None) is not None
        and ptr.op.traits.takes_address
        and isinstance(ptr.args[0], BufferLoad)
    ):
        addr = find(takes_address=True).name
        raise cg.error(f"{name}: the {what} is T.{addr}(x[i]) of a local {dtype} array", c)
    el = ptr.args[0]
    buf = el.buffer
    if buf.dtype != PrimType(dtype) or buf.scope != "local":
        raise cg.error(f"{name}: the {what} must be a local {dtype} array", c)
    base = cg.flat_index(buf, el.indices, c)
    return [
        f"{cg.ptr_of(buf)}[{cg.expr(cg.add_index(base, IntImm(i, base.ty)) if i else base)}]"
        for i in range(count)
    ]


def _c_wgmma_rs(cg: Any, c: Any) -> str:
    name = f"T.{c.op.name}"
    shape, dt, accp, ap, db, scale, tb = c.args
    (n,) = _shape(cg, c, shape, _RS_SHAPE, "m64n128k16")
    ab = {"f16": "f16", "float16": "f16", "bf16": "bf16", "bfloat16": "bf16"}.get(
        dt.value if isinstance(dt, StringImm) else ""
    )
    if ab is None:
        raise cg.error(f"{name}: dtype must be 'f16' or 'bf16'", c)
    if not isinstance(tb, IntImm) or tb.value not in (0, 1):
        raise cg.error(f"{name}: trans_b is a constant 0 (B K-major) or 1 (B N-major)", c)
    nacc = n // 2
    accs = _local_regs(cg, c, accp, "float32", nacc, "accumulator")
    regs_a = _local_regs(cg, c, ap, "uint32", 4, "A fragment")
    d = ", ".join(f"%{i}" for i in range(nacc))
    a = ", ".join(f"%{nacc + i}" for i in range(4))
    text = (
        f"{{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %{nacc + 5}, 0;\\n\\t"
        f"wgmma.mma_async.sync.aligned.{shape.value}.f32.{ab}.{ab} {{{d}}}, {{{a}}}, %{nacc + 4}, p, 1, 1, "
        f"{tb.value};\\n\\t}}"
    )
    outs = ", ".join(f'"+f"({x})' for x in accs)
    ins = ", ".join(f'"r"({x})' for x in regs_a)
    ins += f', "l"((uint64_t)({cg.expr(db)})), "r"((int)({cg.expr(scale)}))'
    return f'asm volatile("{text}" : {outs} : {ins} : "memory")'


declare(
    "ptx.wgmma_mma_async_rs", "s s p p i i i", void, pure=False, device_only=True,
    params="shape dtype acc a desc_b scale_d trans_b",
    doc="wgmma.mma_async with A in registers (shape 'm64nNk16', 'f16'|'bf16', &acc[0] of a local float32 "
    "accumulator array, &a[i] of 4 consecutive local uint32 (the A fragment, 2 halves each), smem "
    "descriptor B, scale-d 0/1, trans_b 0 K-major / 1 N-major); fp32 accumulate",
    cuda=_c_wgmma_rs,
)  # fmt: skip


# --------------------------------------------------------------------------- wgmma descriptors
WGMMA_DESC = Helper(
    "tirx_wgmma_desc",
    """\
// a wgmma shared-memory matrix descriptor: start address >> 4 (bits 0-13), leading byte
// offset (16-29) and stride byte offset (32-45), both already in 16-byte units, base offset 0,
// layout type (62-63) from the swizzle mode 0 none, 1 32B, 2 64B, 3 128B
__device__ __forceinline__ void tirx_wgmma_desc(unsigned long long* desc, const void* addr, int ldo, int sdo,
                                                int swizzle) {
  unsigned long long lt = swizzle == 1 ? 3ull : swizzle == 2 ? 2ull : swizzle == 3 ? 1ull : 0ull;
  unsigned a = (unsigned)__cvta_generic_to_shared(addr);
  *desc = (unsigned long long)((a >> 4) & 0x3FFFu) | ((unsigned long long)(ldo & 0x3FFF) << 16) |
          ((unsigned long long)(sdo & 0x3FFF) << 32) | (lt << 62);
}""",
)


def _c_wgmma_desc(cg: Any, c: Any) -> str:
    d, addr, ldo, sdo, sw = c.args
    t = d.ty
    if not (isinstance(t, PointerType) and isinstance(t.element, PrimType) and t.element.bits == 64):
        raise cg.error(f"T.{c.op.name}: desc must point to a 64-bit element (a uint64 local), got {t}", c)
    if isinstance(sw, IntImm) and sw.value not in (0, 1, 2, 3):
        raise cg.error(f"T.{c.op.name}: swizzle is 0 (none), 1 (32B), 2 (64B) or 3 (128B), got {sw.value}", c)
    cg.need(WGMMA_DESC)
    args = ", ".join(cg.expr(a) for a in (ldo, sdo, sw))
    return f"tirx_wgmma_desc((unsigned long long*)({cg.expr(d)}), (const void*)({cg.expr(addr)}), {args})"


declare(
    "cuda.wgmma_encode_matrix_descriptor", "p p i i i", void, pure=False, device_only=True,
    params="desc addr ldo sdo swizzle",
    doc="write the wgmma matrix descriptor of shared address `addr` (ldo/sdo in 16-byte units, swizzle "
    "0 none / 1 32B / 2 64B / 3 128B) to *desc",
    cuda=_c_wgmma_desc, interp=NoInterp("a wgmma descriptor holds a raw shared-window address"),
)  # fmt: skip
