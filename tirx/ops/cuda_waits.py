"""Grid-wide and memory waits: ``T.cuda.grid_sync()`` and ``T.cuda.wait_until(...)`` (TIRx's names).

``grid_sync`` is a barrier over every thread of the grid (what cooperative groups'
``this_grid().sync()`` is in TIRx's CUDA; tirx's needs no libcu++ headers under NVRTC). It is only
valid in a cooperative launch, so its lowering marks the
translation unit with the codegen feature ``"cooperative"``; ``tirx.runtime.cooperative``
launches such kernels with ``CU_LAUNCH_ATTRIBUTE_COOPERATIVE`` after checking that the whole
grid can be resident at once.

``wait_until(dst, ptr, condition, scope, space, ptx_type, backoff_ns)`` polls the global word
at ``ptr`` into the thread-local element ``dst`` (``ld.relaxed.<scope>.global``, a
``__nanosleep(backoff_ns)`` before each retry when it is not 0) until ``condition`` (an
expression over ``dst``) holds, then closes with one ``ld.acquire.<scope>.global`` so that
what the writers published is visible: TIRx's protocol. In a kernel, ``dst`` may be the
one-element buffer and ``condition`` a function of the value (``lambda x: x == 1``), as TIRx
takes them.
"""

from __future__ import annotations

from typing import Any

from ..errors import OpError
from ..ir.expr import BufferLoad, IntImm, PrimExpr, convert
from ..ir.op import Helper, NoInterp, declare
from ..ir.types import PointerType, PrimType, void

__all__: list[str] = []

#: the codegen feature a kernel that needs a cooperative launch carries (CudaSource.features)
COOPERATIVE_FEATURE = "cooperative"


GRID_SYNC = Helper(
    "tirx_grid_sync",
    """\
// a grid-wide barrier: valid only when every block is resident (a cooperative launch). One
// thread per block arrives on a module-global counter; the last arrival resets it and bumps
// the generation the others spin on (ld.acquire), fenced on both sides as this_grid().sync()
__device__ unsigned tirx_grid_bar[2];  // arrivals, generation
__device__ __forceinline__ void tirx_grid_sync() {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
    unsigned gen;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(gen) : "l"(&tirx_grid_bar[1]) : "memory");
    __threadfence();
    if (atomicAdd(&tirx_grid_bar[0], 1u) == blocks - 1) {
      tirx_grid_bar[0] = 0u;
      __threadfence();
      atomicAdd(&tirx_grid_bar[1], 1u);
    } else {
      unsigned now;
      do {
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(now) : "l"(&tirx_grid_bar[1]) : "memory");
      } while (now == gen);
    }
    __threadfence();
  }
  __syncthreads();
}""",
)


def _c_grid_sync(cg: Any, c: Any) -> str:
    cg.need(GRID_SYNC)
    cg.features.add(COOPERATIVE_FEATURE)  # the runtime launches the kernel cooperatively
    return "tirx_grid_sync()"


declare(
    "cuda.grid_sync", "", void, pure=False, device_only=True, convergent=True,
    doc="a barrier over every thread of the grid (cooperative groups' this_grid().sync()); the kernel "
    "is launched cooperatively (tirx.runtime.cooperative)",
    cuda=_c_grid_sync,
    interp=NoInterp("a grid-wide barrier needs every block resident at once; the interpreter runs a grid "
                    "in chunks of blocks"),
)  # fmt: skip


# --------------------------------------------------------------------------- wait_until
_SCOPES = ("cta", "cluster", "gpu", "sys")
_TYPES = ("", "b32", "b64", "u32", "u64", "s32", "s64")


def _suffix(t: PrimType) -> str:
    if t.is_int and t.bits in (32, 64):
        return f"{'u' if t.base.startswith('u') else 's'}{t.bits}"
    if t.is_float and t.bits in (32, 64):
        return f"b{t.bits}"
    return ""


def _check(c: Any, err: Any) -> tuple[PrimType, str]:
    dst, ptr = c.args[0], c.args[1]
    if not isinstance(dst, BufferLoad) or dst.buffer.scope not in ("local", ""):
        raise err(
            f"T.{c.op.name}: dst must be an element of a thread-local buffer (T.alloc_local((1,), ...))"
        )
    t = dst.ty
    if not (isinstance(ptr.ty, PointerType) and isinstance(ptr.ty.element, PrimType)):
        raise err(f"T.{c.op.name}: ptr must be a typed pointer to a global word")
    want = c.args[5].value or _suffix(ptr.ty.element)
    if not want:
        raise err(f"T.{c.op.name}: no 32- or 64-bit word at ptr ({ptr.ty.element}); give ptx_type")
    if not (isinstance(t, PrimType) and t.lanes == 1 and t.bits == int(want[1:])):
        raise err(f"T.{c.op.name}: dst ({t}) must be as wide as the {want} word")
    return t, want


def _c_wait_until(cg: Any, c: Any) -> str:
    t, suffix = _check(c, lambda m: cg.error(m, c))
    scope = c.args[3].value
    bits = int(suffix[1:])
    reg, ct = ("l", "unsigned long long") if bits == 64 else ("r", "unsigned")
    ptr = cg.expr(c.args[1])
    dst = cg.expr(c.args[0])
    cond = cg.expr(c.args[2])
    back = c.args[6]
    sleep = "" if isinstance(back, IntImm) and back.value == 0 else f"__nanosleep({cg.expr(back)}); "
    cty = cg.ctype(t)
    ld = (
        f'{{ {ct} r; asm volatile("ld.relaxed.{scope}.global.{suffix} %0, [%1];" : "={reg}"(r) : "l"({ptr}) '
        f': "memory"); {dst} = *reinterpret_cast<{cty}*>(&r); }}'
    )
    acq = (
        f'{{ {ct} r; asm volatile("ld.acquire.{scope}.global.{suffix} %0, [%1];" : "={reg}"(r) : "l"({ptr}) '
        f': "memory"); }}'
    )
    return f"[&]() {{ while (!({cond})) {{ {sleep}{ld} }} {acq} }}()"


def _i_wait_until(fc: Any, call: Any):
    from tirx.ops import semantics as S

    _check(call, OpError)
    t = call.args[0].ty
    name = call.op.name
    fcond = fc.expr(call.args[2])
    fptr = fc.expr(call.args[1])
    write = S.element_writer(fc, call.args[0])
    fdst = fc.expr(call.args[0])

    def ev(c):
        import numpy as np

        ok = S.full(np.asarray(fcond(c)).astype(bool), c.N)
        if (ok | ~c.mask).all():
            return None  # already satisfied: no load
        p = fptr(c)
        view, idx = S.pointer_elements(c, p, t, f"T.{name} ptr")
        cur = S.full(np.asarray(fdst(c)), c.N)  # lanes already satisfied keep their value (no load)
        write(c, np.where(ok, cur, S.dtypes.from_storage(view[idx], t)).astype(S.dtypes.value_np(t)))
        ok2 = S.full(np.asarray(fcond(c)).astype(bool), c.N)
        S.require_true(
            c, ok2 | ok,
            f"T.{name}: {{thread}} would wait forever: the word does not satisfy the condition and the "
            "interpreter runs no other thread while one waits",
        )  # fmt: skip
        return None

    return ev


def _s_wait_until(dst: Any, ptr: Any, predicate: Any, scope: Any = "gpu", space: Any = "global",
                  ptx_type: Any = None, backoff_ns: Any = None, *, span: Any = None) -> Any:  # fmt: skip
    """TIRx's spelling: ``dst`` may be the one-element buffer, ``predicate`` a function of the value."""
    from ..ir.buffer import Buffer

    conv = getattr(dst, "__tirx_expr__", None)
    if conv is not None:
        dst = conv()
    if isinstance(dst, Buffer):
        dst = BufferLoad(dst, (convert(0),))
    elif type(dst) in (int, float, bool):  # a literal: what the printer writes for an IntImm/FloatImm dst
        dst = convert(dst)
    if not isinstance(dst, PrimExpr):
        raise TypeError(f"T.cuda.wait_until: dst must be a one-element buffer or its element, got {dst!r}")
    cond = predicate(dst) if callable(predicate) else predicate
    conv = getattr(cond, "__tirx_expr__", None)
    cond = conv() if conv is not None else cond
    return WAIT_UNTIL(dst, ptr, cond, scope, space, "" if ptx_type is None else ptx_type,
                      0 if backoff_ns is None else backoff_ns, span=span)  # fmt: skip


WAIT_UNTIL = declare(
    "cuda.wait_until", "x p b s s s i", void, pure=False, device_only=True,
    params="dst ptr condition scope space ptx_type backoff_ns",
    choices={3: _SCOPES, 4: ("global",), 5: _TYPES},
    doc="poll the global word at `ptr` into `dst` (ld.relaxed.<scope>) until `condition` holds, then one "
    "ld.acquire.<scope>; __nanosleep(backoff_ns) before each retry",
    cuda=_c_wait_until, interp=_i_wait_until, script=_s_wait_until,
)  # fmt: skip
