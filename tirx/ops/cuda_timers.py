"""TIRx's in-kernel profiler timers (``T.cuda.timer_init/start/end/finalize``).

A kernel records events into a global ``uint64`` buffer. ``timer_init`` gives every
(block, group) a slot stream: word 0 of the buffer is ``(num_groups << 32) | blocks``, each
thread keeps its next write position (``profiler_write_offset[0]``, a uint32 it owns) and its
tag (``profiler_tag[0] = (block * num_groups + group) << 12``). ``timer_start``/``timer_end``
(event ``e``) and ``timer_finalize`` write, when ``leader_cond`` holds,
``(timestamp << 32) | tag | e << 2 | kind`` (kind 0 start, 1 end, 3 finalize) at the write
position and advance it by ``profiler_write_stride``. The timestamp is ``%globaltimer_lo``
(nanoseconds, 32 bits) on the GPU; the interpreter uses a counter that grows by one per
event, so only the order of events means anything there.
"""

from __future__ import annotations

from typing import Any

from ..ir.op import Helper, declare
from ..ir.types import void

__all__: list[str] = []

TIMERS = Helper(
    "tirx_cuda_timers",
    """\
// TIRx's profiler timers: (timestamp << 32) | tag | event << 2 | kind records in a global uint64 buffer
__device__ __forceinline__ unsigned tirx_timer_stamp() {
  unsigned r;
  asm volatile("mov.u32 %0, %%globaltimer_lo;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void tirx_timer_init(unsigned long long* buf, unsigned long long* tag, unsigned* off,
                                                int num_groups, int group_id) {
  unsigned nblocks = gridDim.x * gridDim.y * gridDim.z;
  unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  unsigned slot = block * (unsigned)num_groups + (unsigned)group_id;
  if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0)
    buf[0] = ((unsigned long long)(unsigned)num_groups << 32) | nblocks;
  off[0] = 1 + slot;
  tag[0] = (unsigned long long)slot << 12;
}
__device__ __forceinline__ void tirx_timer_write(unsigned long long* buf, unsigned long long* tag, unsigned* off,
                                                 int stride, unsigned bits) {
  buf[off[0]] = ((unsigned long long)tirx_timer_stamp() << 32) | (tag[0] | bits);
  off[0] += stride;
}
__device__ __forceinline__ void tirx_timer_start(int ev, unsigned long long* buf, unsigned long long* tag,
                                                 unsigned* off, int stride, bool leader) {
  if (leader) tirx_timer_write(buf, tag, off, stride, (unsigned)ev << 2 | 0u);
  __threadfence_block();
}
__device__ __forceinline__ void tirx_timer_end(int ev, unsigned long long* buf, unsigned long long* tag,
                                               unsigned* off, int stride, bool leader) {
  __threadfence_block();
  if (leader) tirx_timer_write(buf, tag, off, stride, (unsigned)ev << 2 | 1u);
}
__device__ __forceinline__ void tirx_timer_finalize(unsigned long long* buf, unsigned long long* tag,
                                                    unsigned* off, int stride, bool leader) {
  __threadfence_block();
  if (leader) tirx_timer_write(buf, tag, off, stride, 3u);
}""",
)

_PTRS = ("(unsigned long long*)", "(unsigned long long*)", "(unsigned*)")


def _c_timer(fn: str, first_ptr: int):
    def lower(cg: Any, c: Any) -> str:
        cg.need(TIMERS)
        args = []
        for i, a in enumerate(c.args):
            k = i - first_ptr
            e = cg.expr(a)
            args.append(f"{_PTRS[k]}({e})" if 0 <= k < 3 else f"({e})")
        return f"{fn}({', '.join(args)})"

    return lower


#: the interpreter's clock: one tick per recorded event, shared by every run (monotone)
_CLOCK = [0]


def _slots(c: Any, p: Any, t: str, what: str):
    from tirx.ops import semantics as S

    from ..ir.types import as_type

    return S.pointer_elements(c, p, as_type(t), what)


def _i_timer(kind: str):
    """``kind``: "init", "start", "end" or "finalize"."""

    def compile_call(fc: Any, call: Any):
        import numpy as np

        from tirx.ops import semantics as S

        name = call.op.name
        fs = [fc.expr(a) for a in call.args]
        first = 0 if kind in ("init", "finalize") else 1

        def ev(c):
            L = S.need_launch(c, name)
            vals = [f(c) for f in fs]
            buf, tag, off = vals[first : first + 3]
            tv, ti = _slots(c, tag, "uint64", f"T.{name} profiler_tag")
            ov, oi = _slots(c, off, "uint32", f"T.{name} profiler_write_offset")
            act = c.mask.copy()
            if kind == "init":
                ng = S.full(np.asarray(vals[3], dtype=np.int64), c.N)
                gid = S.full(np.asarray(vals[4], dtype=np.int64), c.N)
                slot = (L.get("bid").astype(np.int64) * ng + gid).astype(np.uint32)
                first_t = act & (L.get("bid") == 0) & (L.get("t.x") == 0)
                if first_t.any():
                    bv, bi = _slots(c, buf, "uint64", f"T.{name} profiler_buffer")
                    nb = int(np.prod(L.grid))
                    k = np.flatnonzero(first_t)
                    bv[bi[k]] = (ng[k].astype(np.uint64) << np.uint64(32)) | np.uint64(nb)
                a = np.flatnonzero(act)
                ov[oi[a]] = (slot[a] + np.uint32(1)).astype(np.uint32)
                tv[ti[a]] = slot[a].astype(np.uint64) << np.uint64(12)
                return None
            stride = S.full(np.asarray(vals[first + 3], dtype=np.int64), c.N)
            lead = act & S.full(np.asarray(vals[first + 4]).astype(bool), c.N)
            if kind == "finalize":
                bits = np.full(c.N, 3, dtype=np.uint64)
            else:
                evt = S.full(np.asarray(vals[0], dtype=np.int64), c.N).astype(np.uint64)
                bits = (evt << np.uint64(2)) | np.uint64(0 if kind == "start" else 1)
            k = np.flatnonzero(lead)
            if not len(k):
                return None
            pos = ov[oi].astype(np.int64)  # the lane's write position
            at = S.PtrVal(buf.mem, buf.off + pos * 8, buf.rank) if isinstance(buf, S.PtrVal) else buf
            bv, bi = _slots(c, at, "uint64", f"T.{name} profiler_buffer")
            for lane in k:  # lane order: each event gets its own, later, timestamp
                _CLOCK[0] += 1
                stamp = np.uint64(_CLOCK[0] & 0xFFFFFFFF) << np.uint64(32)
                bv[bi[lane]] = stamp | (tv[ti[lane]] | bits[lane])
            ov[oi[k]] = (pos[k] + stride[k]).astype(np.uint32)
            return None

        return ev

    return compile_call


_COMMON = "the profiler buffer (global uint64), the thread's tag and write offset (one-element local buffers)"
declare(
    "cuda.timer_init", "p p p i i", void, pure=False, device_only=True,
    params="profiler_buffer profiler_tag profiler_write_offset num_groups group_id",
    doc=f"start the profiler for this thread's (block, group): {_COMMON}",
    cuda=_c_timer("tirx_timer_init", 0), interp=_i_timer("init"),
)  # fmt: skip
for _k in ("start", "end"):
    declare(
        f"cuda.timer_{_k}", "i p p p i b", void, pure=False, device_only=True,
        params="event_type profiler_buffer profiler_tag profiler_write_offset profiler_write_stride leader_cond",
        doc=f"record the {_k} of event `event_type` (when leader_cond holds): {_COMMON}",
        cuda=_c_timer(f"tirx_timer_{_k}", 1), interp=_i_timer(_k),
    )  # fmt: skip
declare(
    "cuda.timer_finalize", "p p p i b", void, pure=False, device_only=True,
    params="profiler_buffer profiler_tag profiler_write_offset profiler_write_stride leader_cond",
    doc=f"record the profiler's final event (when leader_cond holds): {_COMMON}",
    cuda=_c_timer("tirx_timer_finalize", 0), interp=_i_timer("finalize"),
)  # fmt: skip
